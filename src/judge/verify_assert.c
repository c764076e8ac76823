/*
 * verify_assert.c — the assert harness: every test is its own program (solution, prologue,
 * test code, epilogue) in its own fresh sandbox, so no test's code is ever visible to another
 * test's run. Interpreted languages first run all tests as one program and fall back to one
 * program per test only when that fails (to say which failed).
 *
 * The end-of-tests token. Solution and test code share one process, so its exit status alone
 * does not prove that the tests ran: the solution could end the process with status 0 before
 * them (sys.exit, a constructor calling exit, a thread, a signal handler...). Each run gets a
 * fresh 128-bit token on its standard input, where crucible puts nothing else: it is in no
 * file of the sandbox, no argument and no environment variable, and the program file never
 * holds it. The language's harness — crucible's own code, written beside the program
 * (judge/harness/) and run before any of the solution's — reads it, points its stdin at
 * /dev/null, and prints it, on a line of its own, only once the test code has run to its end.
 * A run passes only when it exits 0 and the last token-shaped line of its standard output is
 * that token (the last one: a solution printing guesses gains nothing). Code of the solution
 * that ends the process early has never been able to see the token; what remains is code that
 * searches its own process's memory for it, or (C, C++, Go) runs before main and reads stdin
 * first: docs/TASKS.md says, language by language, what is and is not guaranteed.
 */
#include "judge/verify_int.h"
#include "sandbox/forkserver.h"
#include "sandbox/pool.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define TOKEN_HEX 32

/* new_token(buf, size) — 128 random bits as hex. */
static void new_token(char *buf, size_t size)
{
    unsigned char raw[TOKEN_HEX / 2];

    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
        for (size_t i = 0; i < sizeof(raw); i++) /* not expected; still unpredictable enough */
            raw[i] = (unsigned char)(rand() ^ (int)(util_now() * 1e9) >> (i % 8));
    for (size_t i = 0; i < sizeof(raw) && 2 * i + 2 < size; i++)
        snprintf(buf + 2 * i, 3, "%02x", raw[i]);
}

/* token_shaped(s, n) — a line of exactly TOKEN_HEX lowercase hex digits. */
static bool token_shaped(const char *s, size_t n)
{
    if (n != TOKEN_HEX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* verify__take_token(out, token) — true when the last token-shaped line of the output is the
 * token. That line (and the empty line the harness writes before it, when there is one) is
 * removed from the captured output. */
bool verify__take_token(struct result_stream *out, const char *token)
{
    size_t len = out->data ? out->len : 0, ls = 0, le = 0;
    bool found = false;

    for (size_t i = 0; i < len;) {
        size_t e = i;
        while (e < len && out->data[e] != '\n')
            e++;
        if (token_shaped(out->data + i, e - i)) {
            ls = i;
            le = e;
            found = true;
        }
        i = e + 1;
    }
    if (!found || memcmp(out->data + ls, token, TOKEN_HEX) != 0)
        return false;
    if (le < len)
        le++; /* its newline */
    if (ls > 0 && out->data[ls - 1] == '\n' && (ls == 1 || out->data[ls - 2] == '\n'))
        ls--; /* the empty line before it */
    memmove(out->data + ls, out->data + le, len - le);
    out->len = len - (le - ls);
    out->data[out->len] = '\0';
    return true;
}

/* skip_splices(s, i) — past any backslash-newline at i (the preprocessor's line splices). */
static size_t skip_splices(const char *s, size_t i)
{
    while (s[i] == '\\' && (s[i + 1] == '\n' || (s[i + 1] == '\r' && s[i + 2] == '\n')))
        i += s[i + 1] == '\n' ? 2 : 3;
    return i;
}

/* skip_blank(s, i) — past spaces, tabs, comments and splices within a logical line. */
static size_t skip_blank(const char *s, size_t i)
{
    for (;;) {
        i = skip_splices(s, i);
        if (s[i] == ' ' || s[i] == '\t' || s[i] == '\f' || s[i] == '\v' || s[i] == '\r') {
            i++;
        } else if (s[i] == '/' && s[skip_splices(s, i + 1)] == '*') {
            i = skip_splices(s, i + 1) + 1;
            while (s[i] && !(s[i] == '*' && s[skip_splices(s, i + 1)] == '/'))
                i++;
            if (s[i])
                i = skip_splices(s, i + 1) + 1;
        } else {
            return i;
        }
    }
}

/* ident(s, i, out, size) — the identifier at i (across splices) into out; returns the index
 * after it. */
static size_t ident(const char *s, size_t i, char *out, size_t size)
{
    size_t n = 0;

    for (;;) {
        i = skip_splices(s, i);
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || (unsigned char)s[i] >= 0x80))
            break;
        if (n + 1 < size)
            out[n++] = s[i];
        i++;
    }
    out[n] = '\0';
    return i;
}

/* verify__macro_undefs(code) — "#undef NAME\n" for every NAME the C or C++ code #defines,
 * malloc'd (NULL on ENOMEM). Placed between the solution and the test code, so that the test
 * code means what its author wrote, whatever the solution redefined (assert, true, the function
 * under test...). Directives are recognised as the preprocessor sees them: after line splices,
 * with comments as blanks, "%:" as "#", and not inside string or character literals. */
char *verify__macro_undefs(const char *code)
{
    size_t cap = 256, used = 0, i = 0;
    char *out = malloc(cap), name[256];
    bool line_start = true;

    if (!out)
        return NULL;
    out[0] = '\0';
    while (code[i]) {
        i = skip_splices(code, i);
        char c = code[i];
        if (!c)
            break;
        if (c == '\n') {
            line_start = true;
            i++;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' ||
                   (c == '/' && code[skip_splices(code, i + 1)] == '*')) {
            i = skip_blank(code, i);
        } else if (c == '/' && code[skip_splices(code, i + 1)] == '/') {
            while (code[i] && code[i] != '\n')
                i = skip_splices(code, i + 1);
        } else if (line_start &&
                   (c == '#' || (c == '%' && code[skip_splices(code, i + 1)] == ':'))) {
            i = c == '#' ? i + 1 : skip_splices(code, i + 1) + 1;
            i = ident(code, skip_blank(code, i), name, sizeof(name));
            if (strcmp(name, "define") == 0) {
                i = ident(code, skip_blank(code, i), name, sizeof(name));
                size_t need = used + strlen(name) + 9;
                if (name[0] && need >= cap) {
                    char *grown;
                    while (need >= cap)
                        cap *= 2;
                    grown = realloc(out, cap);
                    if (!grown) {
                        free(out);
                        return NULL;
                    }
                    out = grown;
                }
                if (name[0])
                    used += (size_t)snprintf(out + used, cap - used, "#undef %s\n", name);
            }
            while (code[i] && code[i] != '\n') /* the rest of the directive */
                i = skip_splices(code, i + 1);
            line_start = false;
        } else if (c == '"' || c == '\'') {
            bool raw = c == '"' && i > 0 && code[i - 1] == 'R' &&
                       (i == 1 || !(isalnum((unsigned char)code[i - 2]) || code[i - 2] == '_') ||
                        strchr("uUL8", code[i - 2]));
            line_start = false;
            if (raw) { /* C++ raw string: R"delim( ... )delim" */
                size_t d = i + 1, dl;
                while (code[d] && code[d] != '(' && d - i <= 17)
                    d++;
                dl = d - i - 1;
                i = code[d] == '(' ? d + 1 : d;
                while (code[i] &&
                       !(code[i] == ')' && strncmp(code + i + 1, code + d - dl, dl) == 0 &&
                         code[i + 1 + dl] == '"'))
                    i++;
                if (code[i])
                    i += dl + 2;
                continue;
            }
            for (i++; code[i] && code[i] != c && code[i] != '\n'; i++)
                if (code[i] == '\\' && code[i + 1])
                    i++;
            if (code[i] == c)
                i++;
        } else {
            line_start = false;
            i++;
        }
    }
    return out;
}

/* go_package(program, buf, size) — the name of the program's package clause ("main" when none
 * is found): the Go harness file must be in the same package. */
static void go_package(const char *p, char *buf, size_t size)
{
    size_t i = 0;

    for (;;) {
        while (isspace((unsigned char)p[i]))
            i++;
        if (p[i] == '/' && p[i + 1] == '/') {
            while (p[i] && p[i] != '\n')
                i++;
        } else if (p[i] == '/' && p[i + 1] == '*') {
            const char *e = strstr(p + i + 2, "*/");
            i = e ? (size_t)(e - p) + 2 : strlen(p);
        } else {
            break;
        }
    }
    snprintf(buf, size, "main");
    if (strncmp(p + i, "package", 7) == 0 && isspace((unsigned char)p[i + 7])) {
        char name[128];
        size_t j = i + 7;
        while (isspace((unsigned char)p[j]))
            j++;
        ident(p, j, name, sizeof(name));
        if (name[0])
            snprintf(buf, size, "%s", name);
    }
}

/* substitute(text, key, value) — text with every key replaced by value, malloc'd. */
static char *substitute(const char *text, const char *key, const char *value)
{
    size_t kl = strlen(key), vl = strlen(value), n = 0, len;
    char *out, *o;

    for (const char *p = strstr(text, key); p; p = strstr(p + kl, key))
        n++;
    len = strlen(text) + n * vl + 1;
    out = malloc(len);
    if (!out)
        return NULL;
    o = out;
    for (const char *p = text, *q; (q = strstr(p, key)) || *p; p = q + kl) {
        if (!q) {
            strcpy(o, p);
            o += strlen(p);
            break;
        }
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        memcpy(o, value, vl);
        o += vl;
    }
    *o = '\0';
    return out;
}

/* An assert run's program and what goes with it: the harness's files, the argv, the token. */
struct assert_run {
    char *program;
    size_t tests_offset;     /* where the test code's part (prologue on) starts */
    char *texts[4];          /* the harness's text files, @PACKAGE@ replaced */
    struct task_file *files; /* the task's files, then the harness's */
    struct task task;        /* the task, with those files */
    const char *argv[32];
    char offset_arg[32];
    char token[TOKEN_HEX + 2]; /* the token and its newline, as given on stdin */
};

/* run_prepare(r, t, solution, test_code) — 0, or -ENOMEM (release r either way). */
static int run_prepare(struct assert_run *r, const struct task *t, const char *solution,
                       const char *test_code)
{
    const struct lang *l = t->lang;
    const char *pro = l->test_prologue ? l->test_prologue : "";
    const char *epi = l->test_epilogue ? l->test_epilogue : "";
    const char *setup = t->test_setup ? t->test_setup : "";
    const char *const *run = lang_steps(l, true).run;
    char *undefs = l->test_undef_macros ? verify__macro_undefs(solution) : strdup("");
    size_t len, n = 0, nf = 0;

    memset(r, 0, sizeof(*r));
    r->task = *t;
    if (!undefs)
        return -ENOMEM;
    len = strlen(setup) + strlen(solution) + strlen(undefs) + strlen(pro) + strlen(test_code) +
          strlen(epi) + 4;
    r->program = malloc(len);
    if (!r->program) {
        free(undefs);
        return -ENOMEM;
    }
    snprintf(r->program, len, "%s%s%s\n", setup, *setup ? "\n" : "", solution);
    r->tests_offset = strlen(r->program);
    snprintf(r->program + r->tests_offset, len - r->tests_offset, "%s%s%s\n%s", undefs, pro,
             test_code, epi);
    free(undefs);
    for (const struct lang_file *f = l->test_files; f && f->path; f++)
        nf++;
    if (nf) {
        char pkg[128];
        go_package(r->program, pkg, sizeof(pkg));
        r->files = malloc((t->nfiles + nf) * sizeof(*r->files));
        if (!r->files)
            return -ENOMEM;
        if (t->nfiles)
            memcpy(r->files, t->files, t->nfiles * sizeof(*r->files));
        for (size_t i = 0; i < nf; i++) {
            const struct lang_file *f = &l->test_files[i];
            struct task_file *tf = &r->files[t->nfiles + i];
            tf->path = (char *)f->path;
            tf->data = (char *)f->data;
            tf->len = f->len;
            if (!f->len && i < sizeof(r->texts) / sizeof(r->texts[0])) {
                if (!(r->texts[i] = substitute(f->data, "@PACKAGE@", pkg)))
                    return -ENOMEM;
                tf->data = r->texts[i];
                tf->len = strlen(r->texts[i]);
            }
        }
        r->task.files = r->files;
        r->task.nfiles = t->nfiles + nf;
    }
    snprintf(r->offset_arg, sizeof(r->offset_arg), "%zu", r->tests_offset);
    for (; run[n] && n + 1 < sizeof(r->argv) / sizeof(r->argv[0]); n++)
        r->argv[n] = strcmp(run[n], "@TESTS_OFFSET@") == 0  ? r->offset_arg
                     : strcmp(run[n], "@ENTRY_POINT@") == 0 ? (t->entry_point ? t->entry_point : "")
                                                            : run[n];
    r->argv[n] = NULL;
    return 0;
}

static void run_release(struct assert_run *r)
{
    free(r->program);
    for (size_t i = 0; i < sizeof(r->texts) / sizeof(r->texts[0]); i++)
        free(r->texts[i]);
    free(r->files);
}

/* assert_program(…) — runs solution + prologue + test_code + epilogue in a fresh sandbox,
 * with infra retries; res and *v get the outcome. Returns false on a compile error. */
static bool assert_program(const struct sandbox_runtime *rt, const struct image *img,
                           const struct task *t, const char *solution, const char *test_code,
                           const struct task_test *tt, const struct verify_opts *o,
                           struct verify_result *vr, struct result *res, enum verdict *v, char *why,
                           size_t why_size)
{
    struct assert_run r;
    bool token = t->lang->test_token;

    *v = VERDICT_INFRA_ERROR;
    why[0] = '\0';
    result_init(res);
    if (run_prepare(&r, t, solution, test_code) < 0) {
        run_release(&r);
        result_fail(res, "out of memory");
        snprintf(why, why_size, "out of memory");
        return true;
    }
    for (unsigned attempt = 0; attempt <= o->infra_retries && !verify__cancelled(rt); attempt++) {
        struct sandbox *sb;
        enum box_state st = verify__box_open(rt, o, img, &r.task, r.program, strlen(r.program), &sb,
                                             vr, why, why_size);
        if (st == BOX_COMPILE_ERROR) {
            run_release(&r);
            return false;
        }
        result_release(res);
        result_init(res);
        if (st == BOX_INFRA) {
            result_fail(res, "%s", why);
            continue;
        }
        /* A fresh token per run, on stdin: see the top of this file. */
        if (token) {
            new_token(r.token, sizeof(r.token));
            r.token[TOKEN_HEX] = '\n';
            r.token[TOKEN_HEX + 1] = '\0';
        }
        sandbox_exec_input(sb, r.argv, t->lang->env, token ? r.token : NULL,
                           token ? TOKEN_HEX + 1 : 0, SANDBOX_EXEC_LAST, res);
        pool_release(o->pool, sb);
        if (token && res->status == RESULT_OK && !verify__take_token(&res->out, r.token)) {
            res->status = RESULT_RUNTIME_ERROR;
            snprintf(res->message, sizeof(res->message),
                     "the program exited before the test code finished");
        }
        *v = verify__run_verdict(t, tt, res, why, why_size);
        if (*v != VERDICT_INFRA_ERROR)
            break;
    }
    if (*v == VERDICT_INFRA_ERROR && !why[0])
        snprintf(why, why_size, "%s", res->message);
    run_release(&r);
    return true;
}

/* assert_test(…) — one test, one repeat. Returns false on a compile error. */
static bool assert_test(const struct sandbox_runtime *rt, const struct image *img,
                        const struct task *t, const char *solution, size_t i,
                        const struct verify_opts *o, struct verify_result *vr, struct tally *ty)
{
    struct result res;
    enum verdict v;
    char why[256];

    if (!assert_program(rt, img, t, solution, t->tests[i].code, &t->tests[i], o, vr, &res, &v, why,
                        sizeof(why)))
        return false;
    verify__test_record(&vr->tests[i], ty, v, &res, why);
    result_release(&res);
    return true;
}

/* assert_all(…) — every test of an interpreted language in one program first: when that
 * passes (exit 0 and the token after the last test), every test passed, for the price of one
 * interpreter start. Otherwise each test runs alone to say which failed and how. Returns true
 * when the combined run settled all tests. */
static bool assert_all(const struct sandbox_runtime *rt, const struct image *img,
                       const struct task *t, const char *solution, const struct verify_opts *o,
                       struct verify_result *vr, struct tally *tys)
{
    struct task whole = *t;
    struct result res;
    enum verdict v;
    size_t len = 1;
    char *code, why[256];

    for (size_t i = 0; i < t->ntests; i++)
        len += strlen(t->tests[i].code) + 1;
    code = malloc(len);
    if (!code)
        return false;
    code[0] = '\0';
    for (size_t i = 0; i < t->ntests; i++) {
        strcat(code, t->tests[i].code);
        strcat(code, "\n");
    }
    /* the limits are per test: the combined program gets the sum */
    whole.limits.cpu_time *= (double)t->ntests;
    whole.limits.wall_time *= (double)t->ntests;
    if (whole.limits.cpu_time > sandbox_limit_ranges[LIM_CPU].max)
        whole.limits.cpu_time = sandbox_limit_ranges[LIM_CPU].max;
    if (whole.limits.wall_time > sandbox_limit_ranges[LIM_WALL].max)
        whole.limits.wall_time = sandbox_limit_ranges[LIM_WALL].max;
    assert_program(rt, img, &whole, solution, code, &t->tests[0], o, vr, &res, &v, why,
                   sizeof(why));
    free(code);
    if (v != VERDICT_ACCEPTED && v != VERDICT_INFRA_ERROR && o->verdict_only) {
        verify__test_record(&vr->tests[0], &tys[0], v, &res, "the tests failed when run together");
        for (size_t i = 1; i < t->ntests; i++)
            tys[i].count[VERDICT_NOT_RUN]++;
        return true;
    }
    if (v != VERDICT_ACCEPTED) {
        result_release(&res);
        return false;
    }
    /* The run's streams go to the first test's record; the others share its figures. */
    verify__test_record(&vr->tests[0], &tys[0], VERDICT_ACCEPTED, &res, "");
    for (size_t i = 1; i < t->ntests; i++) {
        struct result shared = vr->tests[0].run;
        shared.out = (struct result_stream){0};
        shared.err = (struct result_stream){0};
        verify__test_record(&vr->tests[i], &tys[i], VERDICT_ACCEPTED, &shared, "");
    }
    return true;
}

bool verify__assert_repeat(const struct sandbox_runtime *rt, const struct image *img,
                           const struct task *t, const char *solution, const struct verify_opts *o,
                           struct verify_result *vr, struct tally *tys)
{
    bool settled = t->ntests > 1 && !lang_steps(t->lang, true).compile &&
                   assert_all(rt, img, t, solution, o, vr, tys);
    bool compiled = true;

    for (size_t i = 0; !settled && i < t->ntests && compiled; i++)
        compiled = assert_test(rt, img, t, solution, i, o, vr, &tys[i]);
    return compiled;
}

/* The harness's warm-up (forkserver_module): a small task's assert test run through it as a
 * job runs one (argv, a token on stdin, the program in a file), in the fork server's trial. */
static const char harness_warmup[] =
    "import os, sys\n"
    "r, w = os.pipe()\n"
    "os.write(w, b'%032x\\n' % 0)\n"
    "os.close(w)\n"
    "os.dup2(r, 0)\n"
    "os.close(r)\n"
    "sol = b'def add(a, b):\\n    return a + b\\n'\n"
    "tests = b'assert add(1, 2) == 3\\nassert add([1], [2]) == [1, 2]\\nassert add(\"a\", "
    "\"b\") != \"ba\"\\n'\n"
    "f = os.memfd_create('main.py')\n"
    "os.write(f, sol + tests)\n"
    "sys.argv = ['-c', '/proc/self/fd/%d' % f, str(len(sol)), 'add']\n"
    "import _crucible_harness\n"
    "_crucible_harness._crucible_main()\n";

/* Python's harness modules as a fork server preloads them (verify_forkserver_preload): the
 * text files of the row's harness whose names end in ".py" (its compiled form is for the cold
 * path), with the path a job would import them from, in its start directory /work. */
static struct forkserver_module preload_mods[4];
static char preload_files[4][96];
static size_t preload_count;
static char preload_names[4][64];

static void preload_init(void)
{
    const struct lang *py = lang_find("python");

    for (const struct lang_file *f = py ? py->test_files : NULL;
         f && f->path && preload_count < sizeof(preload_mods) / sizeof(preload_mods[0]); f++) {
        size_t len = strlen(f->path);
        if (f->len || len < 4 || len - 3 >= sizeof(preload_names[0]) ||
            strcmp(f->path + len - 3, ".py") != 0 || strchr(f->path, '/'))
            continue;
        snprintf(preload_names[preload_count], sizeof(preload_names[0]), "%.*s", (int)(len - 3),
                 f->path);
        snprintf(preload_files[preload_count], sizeof(preload_files[0]), "/work/%s", f->path);
        preload_mods[preload_count] = (struct forkserver_module){
            preload_names[preload_count], preload_files[preload_count], f->data,
            strcmp(preload_names[preload_count], "_crucible_harness") == 0 ? harness_warmup : NULL};
        preload_count++;
    }
}

const struct forkserver_module *verify_forkserver_preload(size_t *n)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, preload_init);
    *n = preload_count;
    return preload_mods;
}
