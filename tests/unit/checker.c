/*
 * Unit tests for src/checker.c: parsing the task's "checker" value, then every checker kind on
 * real outputs — trailing whitespace, CRLF, trailing blank lines, missing and extra lines and
 * tokens, float tolerances, nan/inf, NUL bytes, the reasons given, and 5 MB inputs in linear time;
 * the kattis checker's flag strings and problemtools' default-validator semantics.
 */
#include "judge/checker.h"
#include "tap.h"

static const struct checker exact = {.kind = CHECKER_EXACT};
static const struct checker lines = {.kind = CHECKER_LINES};
static const struct checker tokens = {.kind = CHECKER_TOKENS};

static char why[512];

/* cmp(c, out, exp) — checker_compare on NUL-terminated strings. */
static bool cmp(const struct checker *c, const char *out, const char *exp)
{
    return checker_compare(c, out, strlen(out), exp, strlen(exp), why, sizeof(why));
}

static struct checker flt(double abs_tol, double rel_tol)
{
    struct checker c = {.kind = CHECKER_FLOAT, .abs_tol = abs_tol, .rel_tol = rel_tol};
    return c;
}

/* accept/reject — one check each, printing the reason when the verdict is wrong. */
static void accept(const struct checker *c, const char *out, const char *exp, const char *name)
{
    if (!ok(cmp(c, out, exp), "%s: %s accepts", checker_name(c->kind), name))
        diag("  reason: %s", why);
}

static void reject(const struct checker *c, const char *out, const char *exp, const char *name)
{
    ok(!cmp(c, out, exp), "%s: %s rejected", checker_name(c->kind), name);
}

/* reject_why — rejected, with a reason containing want. */
static void reject_why(const struct checker *c, const char *out, const char *exp, const char *want,
                       const char *name)
{
    bool rejected = !cmp(c, out, exp);
    if (!ok(rejected && strstr(why, want), "%s: %s rejected with '%s'", checker_name(c->kind), name,
            want))
        diag("  verdict %s, reason: %s", rejected ? "reject" : "accept", why);
}

static json_t *j(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
    if (!v)
        diag("bad test JSON %s: %s", text, e.text);
    return v;
}

static void parse_ok(const char *text, enum checker_kind kind, double abs_tol, double rel_tol)
{
    struct checker c = {.kind = CHECKER_EXACT, .abs_tol = -1, .rel_tol = -1};
    struct errbuf err = {{0}};
    json_t *v = j(text);
    int rc = checker_parse(v, &c, &err);

    if (!ok(rc == 0 && c.kind == kind && c.abs_tol == abs_tol && c.rel_tol == rel_tol,
            "parse %s -> %s abs %g rel %g", text, checker_name(kind), abs_tol, rel_tol))
        diag("  rc %d kind %s abs %g rel %g: %s", rc, checker_name(c.kind), c.abs_tol, c.rel_tol,
             err.msg);
    json_decref(v);
}

static void parse_bad(const char *text, const char *want)
{
    struct checker c;
    struct errbuf err = {{0}};
    json_t *v = j(text);
    int rc = checker_parse(v, &c, &err);

    if (!ok(rc == -EINVAL && strstr(err.msg, want), "parse %s fails naming '%s'", text, want))
        diag("  rc %d: %s", rc, err.msg);
    json_decref(v);
}

static void test_parse(void)
{
    struct checker c = {.kind = CHECKER_EXACT, .abs_tol = 1, .rel_tol = 1};
    struct errbuf err = {{0}};

    ok(checker_parse(NULL, &c, &err) == 0 && c.kind == CHECKER_LINES && c.abs_tol == 0,
       "parse: absent checker is lines");
    parse_ok("null", CHECKER_LINES, 0, 0);
    parse_ok("\"exact\"", CHECKER_EXACT, 0, 0);
    parse_ok("\"lines\"", CHECKER_LINES, 0, 0);
    parse_ok("\"tokens\"", CHECKER_TOKENS, 0, 0);
    parse_ok("{\"type\": \"exact\"}", CHECKER_EXACT, 0, 0);
    parse_ok("{\"type\": \"tokens\"}", CHECKER_TOKENS, 0, 0);
    parse_ok("{\"type\": \"float\", \"abs_tol\": 1e-6, \"rel_tol\": 1e-9}", CHECKER_FLOAT, 1e-6,
             1e-9);
    parse_ok("{\"type\": \"float\", \"abs_tol\": 1e-6}", CHECKER_FLOAT, 1e-6, 0);
    parse_ok("{\"type\": \"float\", \"rel_tol\": 0.001}", CHECKER_FLOAT, 0, 0.001);
    parse_ok("{\"type\": \"float\", \"abs_tol\": 1}", CHECKER_FLOAT, 1, 0);
    parse_ok("{\"type\": \"float\"}", CHECKER_FLOAT, 0, 0);
    parse_bad("\"fuzzy\"", "'fuzzy'");
    parse_bad("{\"type\": \"fuzzy\"}", "'fuzzy'");
    parse_bad("\"float\"", "abs_tol");
    parse_bad("\"Lines\"", "'Lines'");
    parse_bad("{\"type\": \"float\", \"abs_tol\": -1e-6}", "abs_tol");
    parse_bad("{\"type\": \"float\", \"rel_tol\": \"1e-6\"}", "rel_tol");
    parse_bad("{\"type\": \"float\", \"rel_tol\": null}", "rel_tol");
    parse_bad("{\"type\": \"float\", \"abs_tolerance\": 1e-6}", "abs_tolerance");
    parse_bad("{\"type\": \"lines\", \"abs_tol\": 1e-6}", "abs_tol");
    parse_bad("{\"abs_tol\": 1e-6}", "type");
    parse_bad("{\"type\": 3}", "type");
    parse_bad("42", "string or an object");
    parse_bad("\"fl\u00f6at\"", "'fl??at'");
    parse_bad("[\"lines\"]", "string or an object");

    is_str(checker_name(CHECKER_EXACT), "exact", "name of exact");
    is_str(checker_name(CHECKER_LINES), "lines", "name of lines");
    is_str(checker_name(CHECKER_TOKENS), "tokens", "name of tokens");
    is_str(checker_name(CHECKER_FLOAT), "float", "name of float");
}

static void test_exact(void)
{
    accept(&exact, "1 2\n3\n", "1 2\n3\n", "identical output");
    accept(&exact, "", "", "empty output");
    reject_why(&exact, "1 2\n3", "1 2\n3\n", "expected more", "a missing final newline");
    reject_why(&exact, "1 2\n3 \n", "1 2\n3\n", "byte 6 (line 2) differs", "a trailing space");
    reject_why(&exact, "a\r\n", "a\n", "got 'a\\r\\n', expected 'a\\n'", "CRLF");
    reject_why(&exact, "a\nb\n\n", "a\nb\n", "extra output after byte 4", "an extra blank line");
    ok(checker_compare(&exact, "a\0b", 3, "a\0b", 3, why, sizeof(why)),
       "exact: NUL bytes compare as bytes");
    ok(!checker_compare(&exact, "a\0b", 3, "a\0c", 3, why, sizeof(why)) && strstr(why, "byte 3") &&
           strstr(why, "'a\\0b'"),
       "exact: a difference after a NUL byte is found and the NUL escaped (%s)", why);
    ok(!checker_compare(&exact, "ab", 2, "ab\0", 3, why, sizeof(why)),
       "exact: a missing trailing NUL is a difference");
    reject_why(&exact, "\x01\xff", "\x01\xfe", "'\\x01\\xff'", "non-printable bytes escaped");
}

static void test_lines(void)
{
    accept(&lines, "1 2\n3\n", "1 2\n3\n", "identical output");
    accept(&lines, "1 2  \n3\t\n", "1 2\n3\n", "trailing spaces and tabs");
    accept(&lines, "1 2\r\n3\r\n", "1 2\n3\n", "CRLF line ends");
    accept(&lines, "1 2\n3\n", "1 2\r\n3\r\n", "CRLF in the expected output");
    accept(&lines, "x \v\f\r\n", "x\n", "every trailing whitespace byte");
    accept(&lines, "1\n2", "1\n2\n", "no final newline");
    accept(&lines, "1\n2\n\n\n", "1\n2\n", "trailing blank lines in the output");
    accept(&lines, "1\n2\n", "1\n2\n\n \n\t\n", "trailing blank lines in the expected output");
    accept(&lines, "", "\n\n", "empty output against blank lines");
    accept(&lines, "a\n\nb\n", "a\n  \nb", "a whitespace-only line equals an empty line");
    reject_why(&lines, " 1\n", "1\n", "line 1 differs at column 1", "leading whitespace");
    reject_why(&lines, "a\n\nb\n", "a\nb\n", "line 2 differs", "a blank line in the middle");
    reject_why(&lines, "1 2\n", "1  2\n", "line 1 differs at column 3", "inner whitespace");
    reject_why(&lines, "1\n2\n", "1\n2\n3\n", "missing line 3: expected '3'", "a missing line");
    reject_why(&lines, "", "hello\n", "missing line 1: expected 'hello'", "empty output");
    reject_why(&lines, "1\n2\n3\n4\n", "1\n2\n3\n", "extra output at line 4: '4'", "an extra line");
    reject_why(&lines, "x\ny\nz\n", "x\ny\nw\n",
               "line 3 differs at column 1: got 'z', expected 'w'", "a different line");
    reject_why(&lines, "yes\n", "yes.\n", "got 'yes', expected 'yes.'", "a shorter line");
    ok(!checker_compare(&lines, "a\0\n", 3, "a\n", 2, why, sizeof(why)) &&
           strstr(why, "got 'a\\0'"),
       "lines: a NUL byte is not whitespace (%s)", why);
    reject_why(&lines, "a\rb\n", "ab\n", "line 1 differs at column 2", "an inner CR");

    /* a long line differing far in: the reason points there, excerpts are cut */
    char got[301], want[301];
    memset(got, 'a', 300);
    memset(want, 'a', 300);
    got[300] = want[300] = '\0';
    got[250] = 'X';
    reject_why(&lines, got, want, "line 1 differs at column 251", "a difference at column 251");
    ok(strstr(why, "…aaaaaaaaaaaaaaaaX") && strlen(why) < 200,
       "lines: excerpts start just before the difference and are cut (%zu bytes)", strlen(why));

    char cut[38];
    ok(!checker_compare(&lines, got, 300, want, 300, cut, sizeof(cut)) &&
           strlen(cut) == strlen("line 1 differs at column 251: got '") &&
           util_utf8_valid(cut, strlen(cut)),
       "lines: a reason cut inside '…' drops the partial character ('%s')", cut);
    ok(!checker_compare(&lines, "\xc3\xa9t\xc3\xa9", 5, "ete", 3, why, sizeof(why)) &&
           strstr(why, "'\\xc3\\xa9t\\xc3\\xa9'"),
       "lines: bytes above ASCII are escaped, the reason stays ASCII (%s)", why);

    char small[16];
    ok(!checker_compare(&lines, "a", 1, "b", 1, small, sizeof(small)) && strlen(small) == 15,
       "lines: the reason is cut to why_size");
    ok(!checker_compare(&lines, "a", 1, "b", 1, NULL, 0), "lines: why may be NULL");
    ok(checker_compare(&lines, NULL, 0, "\n", 1, why, sizeof(why)), "lines: NULL empty output");
}

static void test_tokens(void)
{
    accept(&tokens, "1 2\n3", "1\t2   3\n", "tokens across different whitespace");
    accept(&tokens, "\n\n 1\r\n2\v3\f", "1 2 3", "leading whitespace, CR, VT, FF");
    accept(&tokens, "", " \n\t", "no tokens on either side");
    accept(&tokens, "a\0b c", "a\0b c", "tokens with NUL bytes");
    reject_why(&tokens, "1 23", "1 2 3", "token 2 differs", "joined tokens");
    reject_why(&tokens, "1 2 3", "1 2 3 4", "missing token 4: expected '4'", "a missing token");
    reject_why(&tokens, "1 2 3 4", "1 2 3", "extra output after token 3: '4'", "an extra token");
    reject_why(&tokens, "-0", "0", "token 1 differs", "-0 against 0");
    reject_why(&tokens, "1.0", "1", "token 1 differs", "1.0 against 1");
    reject_why(&tokens, "YES", "yes", "got 'YES', expected 'yes'", "case");
    ok(!checker_compare(&tokens, "a\0b", 3, "a b", 3, why, sizeof(why)),
       "tokens: a NUL byte does not separate tokens");
}

static void test_float(void)
{
    struct checker abs6 = flt(1e-6, 0), rel6 = flt(0, 1e-6), both6 = flt(1e-6, 1e-6);
    struct checker zero = flt(0, 0), half = flt(0.5, 0), one = flt(1, 0);

    accept(&abs6, "0.3333333", "0.333333333", "within 1e-6 absolute");
    accept(&abs6, "0.3333343", "0.3333333", "1e-6 absolute, at the boundary");
    reject_why(&abs6, "0.334", "0.333", "token 1: 0.334 vs 0.333 beyond tolerance",
               "beyond 1e-6 absolute");
    reject_why(&abs6, "1 1.5", "1 1.0", "token 2: 1.5 vs 1.0 beyond tolerance",
               "the reason names the token");
    reject(&abs6, "1000000.5", "1000000", "a large value with absolute tolerance only");
    accept(&rel6, "1000000.5", "1000000", "within 1e-6 relative");
    reject(&rel6, "1000002", "1000000", "beyond 1e-6 relative");
    reject(&rel6, "1e-9", "0", "relative tolerance of an expected 0");
    accept(&both6, "1e-9", "0", "either tolerance: absolute near 0");
    accept(&both6, "123456789.1", "123456789", "either tolerance: relative for large values");
    reject(&both6, "123457000", "123456789", "either tolerance: beyond both");
    accept(&rel6, "-1000000.5", "-1000000", "relative tolerance of a negative value");

    accept(&zero, "-0", "0", "-0 equals 0");
    accept(&zero, "0.0", "-0.000", "0.0 equals -0.000");
    accept(&zero, "3", "3.0", "an integer-looking token equals its float");
    accept(&zero, "+5 .5 1. 1e3 1E3", "5 0.5 1 1000 1000.0", "signs, bare points, exponents");
    accept(&zero, "1e-999", "0", "underflow parses as 0");
    reject(&half, "10", "11", "integers beyond absolute 0.5");
    accept(&one, "10", "11", "integers at absolute 1 (inclusive)");
    accept(&abs6, "Case #1: 0.5000001\nCase #2: 2", "Case #1: 0.5\nCase #2: 2.0000000",
           "words and numbers mixed");
    reject_why(&abs6, "case #1: 0.5", "Case #1: 0.5", "token 1 differs", "words compare exactly");
    reject(&abs6, "abc", "1.0", "a word against a number");
    reject(&abs6, "1.0", "abc", "a number against a word");
    reject(&abs6, "5-", "5", "a number with trailing junk");
    reject(&abs6, "1,5", "1.5", "a decimal comma");
    reject(&one, "0x10", "16", "hexadecimal is not decimal");
    reject_why(&abs6, "1 2", "1 2 3", "missing token 3", "a missing number");
    reject_why(&abs6, "1 2 3", "1 2", "extra output after token 2", "an extra number");

    accept(&abs6, "nan", "nan", "identical nan");
    accept(&abs6, "inf -inf", "inf -inf", "identical inf");
    reject(&abs6, "NaN", "nan", "nan spelled differently");
    reject(&one, "nan", "1", "nan against a number");
    reject(&one, "1", "nan", "a number against nan");
    reject(&both6, "inf", "1e308", "inf against a large number");
    reject(&both6, "1e999", "inf", "overflow against inf");
    reject(&both6, "infinity", "inf", "infinity against inf");
    accept(&both6, "1e999", "1e999", "identical overflowing tokens");
    reject(&both6, "1e308", "-1e308", "a difference that overflows");

    /* buffers without a terminating NUL, exactly their length (ASan checks no read past) */
    char *o = malloc(3), *e = malloc(4);
    const struct checker *all[] = {&exact, &lines, &tokens, &abs6};
    memcpy(o, "1.5", 3);
    memcpy(e, "1.50", 4);
    for (size_t i = 0; i < 4; i++)
        ok(checker_compare(all[i], o, 3, e, 4, why, sizeof(why)) == (all[i] == &abs6),
           "%s: unterminated buffers", checker_name(all[i]->kind));
    free(o);
    free(e);

    char longnum[260];
    memcpy(longnum, "0.1", 3);
    memset(longnum + 3, '0', 250);
    memcpy(longnum + 253, "1", 2);
    accept(&abs6, longnum, "0.1", "a 254-byte number");
    reject(&zero, longnum, "0.2", "a 254-byte number, different");
}

/* huge(count, len, spaces) — the numbers 0.5 .. count-0.5, one a line, in a new buffer of
 * *len bytes; with spaces, each line has trailing spaces. */
static char *huge(unsigned long count, size_t *len, bool spaces)
{
    char *buf = malloc(count * 16);
    size_t n = 0;

    for (unsigned long i = 0; buf && i < count; i++)
        n += (size_t)sprintf(buf + n, spaces ? "%lu.5   \n" : "%lu.5\n", i);
    *len = n;
    return buf;
}

static void test_huge(void)
{
    size_t ol, el;
    char *out = huge(600000, &ol, true), *exp = huge(600000, &el, false);
    struct checker abs6 = flt(1e-6, 0);
    double t0, dt;

    if (!out || !exp) {
        skip("out of memory");
        goto out_free;
    }
    t0 = util_now();
    diag("huge: %zu and %zu bytes", ol, el);
    ok(checker_compare(&lines, out, ol, exp, el, why, sizeof(why)), "huge: 5 MB lines match");
    ok(checker_compare(&tokens, out, ol, exp, el, why, sizeof(why)), "huge: 5 MB tokens match");
    ok(checker_compare(&abs6, out, ol, exp, el, why, sizeof(why)), "huge: 5 MB floats match");
    ok(checker_compare(&exact, exp, el, exp, el, why, sizeof(why)), "huge: 5 MB exact match");
    exp[el - 2] = '6'; /* the last number: ...5 -> ...6 */
    ok(!checker_compare(&abs6, out, ol, exp, el, why, sizeof(why)) && strstr(why, "token "),
       "huge: a difference in the last of 5 MB of numbers (%s)", why);
    ok(!checker_compare(&lines, out, ol, exp, el, why, sizeof(why)) && strstr(why, "line "),
       "huge: the same difference by lines (%s)", why);
    ok(!checker_compare(&exact, exp, el, out, ol, why, sizeof(why)), "huge: exact difference");
    memset(out, ' ', ol);
    ok(checker_compare(&lines, out, ol, "", 0, why, sizeof(why)) &&
           checker_compare(&tokens, out, ol, "", 0, why, sizeof(why)),
       "huge: 5 MB of spaces is no output");
    memset(out, 'x', ol);
    memset(exp, 'x', el < ol ? el : ol);
    ok(!checker_compare(&lines, out, ol, exp, el < ol ? el : ol, why, sizeof(why)),
       "huge: one 5 MB line against a shorter one (%s)", why);
    dt = util_now() - t0;
    ok(dt < 3.0, "huge: all of it in %.3f s", dt);
out_free:
    free(out);
    free(exp);
}

/* kat(flags) — the kattis checker of a flag string (which must parse). */
static struct checker kat(const char *flags)
{
    struct checker c;
    struct errbuf err = {{0}};
    if (checker_kattis_flags(flags, &c, &err) < 0)
        diag("bad flags '%s': %s", flags, err.msg);
    return c;
}

static void kattis_flags_bad(const char *flags, const char *want)
{
    struct checker c;
    struct errbuf err = {{0}};
    int rc = checker_kattis_flags(flags, &c, &err);

    if (!ok(rc == -EINVAL && strstr(err.msg, want), "kattis flags '%s' refused naming '%s'", flags,
            want))
        diag("  rc %d: %s", rc, err.msg);
}

static void test_kattis(void)
{
    struct checker dflt = kat(""), cs = kat("case_sensitive"), sp = kat("space_change_sensitive");
    struct checker ft = kat("float_tolerance 0.5"), fa = kat("float_absolute_tolerance 0.5");
    struct checker fa1 = kat("float_absolute_tolerance 0.1"),
                   fr = kat("float_relative_tolerance 0.1");
    struct checker fr01 = kat("float_relative_tolerance 0.01");
    struct checker all = kat("  case_sensitive\tspace_change_sensitive\nfloat_tolerance 0.5 ");
    struct checker c;
    struct errbuf err = {{0}};
    json_t *v;

    /* flags */
    ok(dflt.kind == CHECKER_KATTIS && !dflt.case_sensitive && !dflt.space_change_sensitive &&
           dflt.abs_tol < 0 && dflt.rel_tol < 0,
       "kattis: no flags is case-insensitive, space-insensitive, without float tolerance");
    ok(all.case_sensitive && all.space_change_sensitive && all.abs_tol == 0.5 && all.rel_tol == 0.5,
       "kattis: flags separated by any whitespace; float_tolerance sets both tolerances");
    c = kat("float_absolute_tolerance 0.5 float_tolerance 1e-3 float_relative_tolerance 2");
    ok(c.abs_tol == 1e-3 && c.rel_tol == 2, "kattis: a later tolerance flag overrides an earlier");
    kattis_flags_bad("case_sensitive casesensitive", "casesensitive");
    kattis_flags_bad("float_tolerance", "float_tolerance");
    kattis_flags_bad("float_tolerance abc", "not 'abc'");
    kattis_flags_bad("float_relative_tolerance nan", "not 'nan'");
    kattis_flags_bad("float_absolute_tolerance 1e999", "not '1e999'");
    kattis_flags_bad("float_tolerance case_sensitive", "not 'case_sensitive'");
    parse_ok("\"kattis\"", CHECKER_KATTIS, -1, -1);
    parse_ok("{\"type\": \"kattis\"}", CHECKER_KATTIS, -1, -1);
    parse_ok("{\"type\": \"kattis\", \"flags\": \"float_tolerance 1e-6\"}", CHECKER_KATTIS, 1e-6,
             1e-6);
    parse_bad("{\"type\": \"kattis\", \"flags\": \"float_tolerance 1e-6 ignore_case\"}",
              "ignore_case");
    parse_bad("{\"type\": \"kattis\", \"flags\": 3}", "'flags' must be a string");
    parse_bad("{\"type\": \"kattis\", \"abs_tol\": 0.1}", "abs_tol");
    parse_bad("{\"type\": \"float\", \"flags\": \"case_sensitive\"}", "flags");
    v = j("{\"type\": \"kattis\", \"flags\": \"case_sensitive space_change_sensitive\"}");
    ok(checker_parse(v, &c, &err) == 0 && c.case_sensitive && c.space_change_sensitive,
       "kattis: the checker object's flags are parsed");
    json_decref(v);

    /* tokens and case */
    accept(&dflt, "hello world\n", "hello world\n", "the same text");
    accept(&dflt, "  HeLLo\n\n\tWORLD", "hello world\n", "other case and whitespace");
    reject_why(&dflt, "hello there\n", "hello world\n", "token 2 differs", "kattis");
    reject_why(&cs, "hello\n", "Hello\n", "case_sensitive", "kattis");
    accept(&cs, "Hello\n", "Hello\n", "case_sensitive, same case");
    accept(&dflt, "\xc3\xa9t\xc3\xa9\n", "\xc3\xa9t\xc3\xa9\n", "UTF-8 bytes");
    reject(&dflt, "\xc3\xa9\n", "\xc3\x89\n",
           "non-ASCII letters compare bytewise (no case folding)");
    reject_why(&dflt, "", "HelloWorld!\n", "output ends empty", "kattis");
    reject_why(&dflt, "\n\n\n", "HelloWorld!\n", "whitespace only", "kattis");
    reject_why(&dflt, "Hello\n", "Hello World!\n", "output ends early; expected token 2", "kattis");
    reject_why(&dflt, "HelloWorld!checkthat\n", "HelloWorld!\n", "token 1 differs", "kattis");
    reject_why(&dflt, "a b\nc d\n", "a b\nc\n", "extra output after token 3 (output line 2)",
               "kattis");
    accept(&dflt, "", "", "empty against empty");
    accept(&dflt, " \n", "\n\n", "whitespace against whitespace");
    reject_why(&dflt, "1\n2\n4\n", "1\n2\n3\n", "output line 3, answer line 3", "kattis");
    {
        static const char out[] = "a\0b", exp[] = "a\0c";
        ok(!checker_compare(&dflt, out, 3, exp, 3, why, sizeof(why)),
           "kattis: a token compares past a NUL byte (%s)", why);
    }

    /* space_change_sensitive */
    accept(&sp, "hello\nworld\n", "hello\nworld\n", "space_change_sensitive, same layout");
    reject_why(&sp, "hello\nworld", "hello\nworld\n",
               "whitespace differs at the end (output line 2, answer line 2)", "kattis");
    reject_why(&sp, "hello\nworld\n\n", "hello\nworld\n", "space_change_sensitive", "kattis");
    reject_why(&sp, "hello  world\n", "hello world\n", "whitespace differs before token 2",
               "kattis");
    reject(&sp, " hello world\n", "hello world\n", "space_change_sensitive, leading space");
    reject(&sp, "hello world\r\n", "hello world\n", "space_change_sensitive, CRLF");
    accept(&sp, "HELLO world\n", "hello world\n", "space_change_sensitive alone ignores case");
    accept(&dflt, "hello world\r\n", "hello world\n", "CRLF without space_change_sensitive");

    /* floats */
    reject(&dflt, "1.0\n", "1\n", "no tolerance: 1.0 is not 1");
    accept(&fa, "1.4\n", "1\n", "float_absolute_tolerance 0.5: 1.4 for 1");
    reject_why(&fa1, "1.4\n", "1\n", "beyond tolerance", "kattis");
    accept(&fr, "105\n", "100\n", "float_relative_tolerance 0.1: 105 for 100");
    reject(&fr01, "105\n", "100\n", "float_relative_tolerance 0.01: 105 for 100");
    reject(&fr01, "1\n", "0\n", "relative tolerance around a zero answer");
    accept(&ft, "1.1\n", "1\n", "float_tolerance 0.5: 1.1 for 1");
    reject(&ft, "1.50001\n", "1\n", "float_tolerance 0.5: 1.50001 for 1");
    accept(&all, "PI is 3.14\n", "PI is 3.14\n", "all flags, same text");
    reject(&all, "PI is 2.0", "PI is 1.0", "all flags, 2.0 for 1.0");
    c = kat("float_tolerance 1e-9");
    accept(&c, "2.0e2 0.0314\n", "200 3.14000000e-2\n", "any formatting of a float token");
    accept(&c, "0x10\n", "16\n", "a hex float is a float (strtod)");
    reject_why(&c, "abc\n", "1.5\n", "expected a number like '1.5', got 'abc'", "kattis");
    reject(&c, "1.5x\n", "1.5\n", "a number with a suffix is no float");
    reject(&c, "nan\n", "1\n", "nan is no float");
    reject(&c, "inf\n", "1e308\n", "inf is no float");
    reject(&ft, "0\n", "inf\n", "an answer 'inf' is a string token");
    accept(&ft, "INF\n", "inf\n", "... compared case-insensitively");
    accept(&ft, "YES 1.2\n", "yes 1\n", "with tolerances, other tokens are strings still");
    reject(&ft, "1 2\n", "1\n", "trailing output with tolerances");
    c = kat("float_absolute_tolerance 0.5 float_tolerance 0");
    reject(&c, "1.4\n", "1\n", "a later float_tolerance 0 overrides");
    c = kat("float_tolerance -1");
    reject(&c, "1.0\n", "1\n", "a negative tolerance leaves floats off");
    c = kat("float_absolute_tolerance -1 float_relative_tolerance 0.5");
    accept(&c, "1.4\n", "1\n", "a negative absolute tolerance, the relative one applies");
}

int main(void)
{
    test_parse();
    test_exact();
    test_lines();
    test_tokens();
    test_float();
    test_huge();
    test_kattis();
    return done_testing();
}
