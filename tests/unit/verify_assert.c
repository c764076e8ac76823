/*
 * Unit tests for the assert harness's pieces in src/judge/verify_assert.c that need no
 * sandbox: finding the end-of-tests token in a run's output (the last token-shaped line,
 * removed from the record), and the #undef list put between a C or C++ solution and its test
 * code (directives found as the preprocessor finds them). The harnesses themselves run for real
 * in tests/e2e/90-verify.t, 97-humaneval-x.t and the reward-hacking suite tests/hacks/.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "judge/verify_int.h"

#define TOK   "0123456789abcdef0123456789abcdef"
#define OTHER "ffffffffffffffffffffffffffffffff"

/* take(text, token, out) — verify__take_token on a copy of text; *out gets what is left. */
static bool take(const char *text, const char *token, char *out, size_t size)
{
    struct result_stream st = {0};
    bool found;

    st.len = strlen(text);
    st.data = malloc(st.len + 1);
    memcpy(st.data, text, st.len + 1);
    found = verify__take_token(&st, token);
    snprintf(out, size, "%s", st.data);
    free(st.data);
    return found;
}

/* has_undef(code, name) — the #undef list of code names name. */
static bool has_undef(const char *code, const char *name)
{
    char *u = verify__macro_undefs(code), line[128];
    bool found;

    snprintf(line, sizeof(line), "#undef %s\n", name);
    found = u && strstr(u, line) != NULL;
    free(u);
    return found;
}

int main(void)
{
    char left[256];
    char *u;

    ok(take("\n" TOK "\n", TOK, left, sizeof(left)) && strcmp(left, "") == 0,
       "token: the harness's line alone, removed with the empty line before it");
    ok(take("hello\n\n" TOK "\n", TOK, left, sizeof(left)) && strcmp(left, "hello\n") == 0,
       "token: after the tests' output, which stays as it was");
    ok(take("a\n\n" TOK "\nlater\n", TOK, left, sizeof(left)) && strcmp(left, "a\nlater\n") == 0,
       "token: output after it (destructors, buffered streams, libtest's summary) is allowed");
    ok(take("x\n" TOK, TOK, left, sizeof(left)) && strcmp(left, "x\n") == 0,
       "token: a last line without its newline");
    ok(!take("", TOK, left, sizeof(left)), "token: no output, no token");
    ok(!take("\n" OTHER "\n", TOK, left, sizeof(left)), "token: another token is not it");
    ok(!take("\n" TOK "\n" OTHER "\n", TOK, left, sizeof(left)),
       "token: the last token-shaped line counts (a solution printing guesses gains nothing)");
    ok(take("\n" OTHER "\n\n" TOK "\n", TOK, left, sizeof(left)),
       "token: token-shaped output before the harness's line is harmless");
    ok(!take("prefix " TOK "\n", TOK, left, sizeof(left)) &&
           !take("\n" TOK " \n", TOK, left, sizeof(left)),
       "token: it must be a whole line");
    ok(!take("\n0123456789ABCDEF0123456789ABCDEF\n", "0123456789ABCDEF0123456789ABCDEF", left,
             sizeof(left)),
       "token: lowercase hex only");

    ok(has_undef("#define assert(x) ((void)0)\nint f(void);\n", "assert"),
       "undefs: a plain #define");
    ok(has_undef("  #  define true 0\n", "true") && has_undef("#define\tfalse 1\n", "false"),
       "undefs: blanks around # and define");
    ok(has_undef("#\\\ndef\\\nine add(a, b) 3\n", "add"),
       "undefs: line splices inside the directive");
    ok(has_undef("%:define main hidden\n", "main"), "undefs: the %%: digraph");
    ok(has_undef("# /* c */ define /* d */ NDEBUG\n", "NDEBUG"),
       "undefs: comments in the directive");
    ok(has_undef("int x; /* ... */\n#define A 1\n#define B 2\n", "A") &&
           has_undef("int x;\n#define A 1\n#define B 2\n", "B"),
       "undefs: every #define");
    u = verify__macro_undefs("const char *s = \"\\n#define NOT 1\";\n// #define NOR 2\n"
                             "/*\n#define NEITHER 3\n*/\nint y = 1; #define LATE 4\n"
                             "auto r = R\"x(\n#define RAW 5\n)x\";\n");
    ok(u && strcmp(u, "") == 0, "undefs: none from strings, comments, raw strings or mid-line");
    free(u);
    u = verify__macro_undefs("int main(void) { return 0; }\n");
    ok(u && strcmp(u, "") == 0, "undefs: nothing to undo in code without macros");
    free(u);
    return done_testing();
}
