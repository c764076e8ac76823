/*
 * checker.c — output checkers for the stdio harness (contracts and semantics in checker.h).
 *
 * Every comparison walks both buffers once, front to back, with cursors; nothing is copied
 * except a numeric token too long for the float checker's stack buffer. On a mismatch the
 * reason quotes short, escaped excerpts of both sides around the first difference.
 */
#include "judge/checker.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t excerpt_bytes = 40; /* input bytes quoted per side */
static const size_t context_bytes = 16; /* of them, before the first difference */

/* A quoted excerpt: "…" + excerpt_bytes escaped as \xHH + "…" + NUL fits. */
#define EXCERPT_SIZE 176
/* Numeric tokens up to this length - 1 are parsed without allocating. */
#define NUMBER_SIZE 128

static const char *const kind_names[] = {
    [CHECKER_EXACT] = "exact", [CHECKER_LINES] = "lines",   [CHECKER_TOKENS] = "tokens",
    [CHECKER_FLOAT] = "float", [CHECKER_KATTIS] = "kattis",
};

const char *checker_name(enum checker_kind k)
{
    switch (k) {
    case CHECKER_EXACT:
    case CHECKER_LINES:
    case CHECKER_TOKENS:
    case CHECKER_FLOAT:
    case CHECKER_KATTIS:
        return kind_names[k];
    default:
        return "unknown";
    }
}

/* ---- parsing the task's "checker" value ---- */

static int kind_from_name(const char *name, enum checker_kind *k)
{
    for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
        if (strcmp(name, kind_names[i]) == 0) {
            *k = (enum checker_kind)i;
            return 0;
        }
    }
    return -EINVAL;
}

/* shown(dst, s) — s for an error message: at most 64 bytes, printable ASCII ('?' for others). */
static const char *shown(char dst[72], const char *s)
{
    size_t i;

    for (i = 0; s[i] && i < 64; i++)
        dst[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    dst[i] = '\0';
    return dst;
}

static int parse_tolerance(const char *key, const json_t *v, double *out, struct errbuf *err)
{
    double d;

    if (!json_is_number(v))
        return errbuf_set(err, "checker '%s' must be a number", key);
    d = json_number_value(v);
    if (!isfinite(d) || d < 0)
        return errbuf_set(err, "checker '%s' must be a non-negative number, not %g", key, d);
    *out = d;
    return 0;
}

/* flag_number(word, &v) — problemtools' test for a float: the whole word read by strtod in
 * the C locale (decimal, exponent, hex; "inf" and "nan" read but refused) to a finite value. */
static bool flag_number(const char *word, size_t n, double *v);

int checker_kattis_flags(const char *flags, struct checker *c, struct errbuf *err)
{
    const char *p = flags ? flags : "";
    char word[72], value[72];

    memset(c, 0, sizeof(*c));
    c->kind = CHECKER_KATTIS;
    c->abs_tol = -1;
    c->rel_tol = -1;
    for (;;) {
        size_t n, vn;
        double d;
        p += strspn(p, " \t\n\r\v\f");
        if (!*p)
            return 0;
        n = strcspn(p, " \t\n\r\v\f");
        snprintf(word, sizeof(word), "%.*s", (int)(n < 64 ? n : 64), p);
        if (n == 14 && memcmp(p, "case_sensitive", n) == 0) {
            c->case_sensitive = true;
        } else if (n == 22 && memcmp(p, "space_change_sensitive", n) == 0) {
            c->space_change_sensitive = true;
        } else if ((n == 24 && memcmp(p, "float_absolute_tolerance", n) == 0) ||
                   (n == 24 && memcmp(p, "float_relative_tolerance", n) == 0) ||
                   (n == 15 && memcmp(p, "float_tolerance", n) == 0)) {
            const char *q = p + n + strspn(p + n, " \t\n\r\v\f");
            vn = strcspn(q, " \t\n\r\v\f");
            if (!vn)
                return errbuf_set(err, "kattis checker flag '%s' needs a number after it", word);
            if (!flag_number(q, vn, &d)) {
                char shownv[72];
                snprintf(value, sizeof(value), "%.*s", (int)(vn < 64 ? vn : 64), q);
                return errbuf_set(err, "kattis checker flag '%s' needs a number after it, not '%s'",
                                  word, shown(shownv, value));
            }
            if (n != 24 || p[6] == 'a')
                c->abs_tol = d;
            if (n != 24 || p[6] == 'r')
                c->rel_tol = d;
            p = q + vn;
            continue;
        } else {
            char shownw[72];
            return errbuf_set(err,
                              "unknown kattis checker flag '%s' (known: case_sensitive, "
                              "space_change_sensitive, float_tolerance, float_absolute_tolerance, "
                              "float_relative_tolerance)",
                              shown(shownw, word));
        }
        p += n;
    }
}

int checker_parse(const json_t *j, struct checker *c, struct errbuf *err)
{
    const char *type, *key;
    char name[72];
    json_t *v;

    memset(c, 0, sizeof(*c));
    c->kind = CHECKER_LINES;
    if (!j || json_is_null(j))
        return 0;
    if (json_is_string(j)) {
        type = json_string_value(j);
        if (strcmp(type, "float") == 0)
            return errbuf_set(err, "checker 'float' needs its tolerances: use {\"type\": "
                                   "\"float\", \"abs_tol\": A, \"rel_tol\": R}");
        if (kind_from_name(type, &c->kind) < 0)
            return errbuf_set(err,
                              "unknown checker '%s' (expected exact, lines, tokens, float or "
                              "kattis)",
                              shown(name, type));
        if (c->kind == CHECKER_KATTIS)
            return checker_kattis_flags(NULL, c, err);
        return 0;
    }
    if (!json_is_object(j))
        return errbuf_set(err, "checker must be a string or an object");
    type = json_string_value(json_object_get(j, "type"));
    if (!type)
        return errbuf_set(err, "checker object needs a string 'type'");
    if (kind_from_name(type, &c->kind) < 0)
        return errbuf_set(err,
                          "unknown checker type '%s' (expected exact, lines, tokens, float, "
                          "kattis, validator or program)",
                          shown(name, type));
    if (c->kind == CHECKER_KATTIS) {
        json_t *flags = json_object_get(j, "flags");
        json_object_foreach((json_t *)j, key, v)
        {
            if (strcmp(key, "type") != 0 && strcmp(key, "flags") != 0)
                return errbuf_set(err,
                                  "unknown checker field '%s' (the kattis checker takes 'flags')",
                                  shown(name, key));
        }
        if (flags && !json_is_string(flags))
            return errbuf_set(err, "checker 'flags' must be a string");
        return checker_kattis_flags(json_string_value(flags), c, err);
    }
    /* jansson iterates only non-const objects; nothing here modifies j. */
    json_object_foreach((json_t *)j, key, v)
    {
        int rc;
        if (strcmp(key, "type") == 0)
            continue;
        if (strcmp(key, "abs_tol") != 0 && strcmp(key, "rel_tol") != 0)
            return errbuf_set(err, "unknown checker field '%s'", shown(name, key));
        if (c->kind != CHECKER_FLOAT)
            return errbuf_set(err, "checker field '%s' applies only to type 'float'", key);
        rc = parse_tolerance(key, v, key[0] == 'a' ? &c->abs_tol : &c->rel_tol, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ---- reasons ---- */

/* utf8_cut(s) — drops a multi-byte sequence left incomplete at the end of s by truncation,
 * so that a cut reason stays valid UTF-8 (it may end up in JSON). */
static void utf8_cut(char *s)
{
    size_t n = strlen(s), i = n, need;
    unsigned char lead;

    while (i > 0 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
        i--;
    if (i == 0 || (unsigned char)s[i - 1] < 0xc0)
        return;
    lead = (unsigned char)s[i - 1];
    need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    if (n - (i - 1) < need)
        s[i - 1] = '\0';
}

static bool fail(char *why, size_t why_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail(char *why, size_t why_size, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (!why || !why_size)
        return false;
    va_start(ap, fmt);
    n = vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n >= why_size)
        utf8_cut(why);
    return false;
}

/* excerpt(dst, s, len, at) — quotes s around offset at (from up to context_bytes before it,
 * excerpt_bytes in all), escaping bytes outside printable ASCII; "…" marks cut ends. */
static const char *excerpt(char dst[EXCERPT_SIZE], const char *s, size_t len, size_t at)
{
    size_t from = at > context_bytes ? at - context_bytes : 0;
    size_t to = len - from > excerpt_bytes ? from + excerpt_bytes : len;
    char *p = dst;

    if (from > 0)
        p += sprintf(p, "…");
    for (size_t i = from; i < to; i++) {
        unsigned char b = (unsigned char)s[i];
        switch (b) {
        case '\n':
            p += sprintf(p, "\\n");
            break;
        case '\t':
            p += sprintf(p, "\\t");
            break;
        case '\r':
            p += sprintf(p, "\\r");
            break;
        case '\0':
            p += sprintf(p, "\\0");
            break;
        case '\\':
            p += sprintf(p, "\\\\");
            break;
        default:
            if (b >= 0x20 && b < 0x7f)
                *p++ = (char)b;
            else
                p += sprintf(p, "\\x%02x", b);
        }
    }
    if (to < len)
        p += sprintf(p, "…");
    *p = '\0';
    return dst;
}

static size_t first_difference(const char *a, const char *b, size_t n)
{
    size_t i = 0;

    while (n - i >= 4096 && memcmp(a + i, b + i, 4096) == 0)
        i += 4096;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

/* ---- exact ---- */

static bool compare_exact(const char *out, size_t out_len, const char *exp, size_t exp_len,
                          char *why, size_t why_size)
{
    size_t n = out_len < exp_len ? out_len : exp_len;
    size_t at = first_difference(out, exp, n), line = 1;
    char g[EXCERPT_SIZE], w[EXCERPT_SIZE];

    if (at == n && out_len == exp_len)
        return true;
    for (const char *p = exp; (p = memchr(p, '\n', (size_t)(exp + at - p))); p++)
        line++;
    if (at < n)
        return fail(why, why_size, "byte %zu (line %zu) differs: got '%s', expected '%s'", at + 1,
                    line, excerpt(g, out, out_len, at), excerpt(w, exp, exp_len, at));
    if (out_len < exp_len)
        return fail(why, why_size, "output ends at byte %zu (line %zu), expected more: '%s'", at,
                    line, excerpt(w, exp, exp_len, at));
    return fail(why, why_size, "extra output after byte %zu (line %zu): '%s'", at, line,
                excerpt(g, out, out_len, at));
}

/* ---- lines ---- */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* A cursor over the lines of s[0, end), end being where only whitespace follows. */
struct line_cursor {
    const char *s;
    size_t end, pos;
};

static void line_cursor_init(struct line_cursor *lc, const char *s, size_t len)
{
    lc->s = s;
    lc->end = len;
    while (lc->end > 0 && is_space(s[lc->end - 1]))
        lc->end--;
    lc->pos = 0;
}

/* line_next(lc, &start, &len) — the next line without its trailing whitespace; false at the
 * end. The last byte before lc->end is never whitespace, so no empty line is made up there. */
static bool line_next(struct line_cursor *lc, size_t *start, size_t *len)
{
    const char *nl;
    size_t n;

    if (lc->pos >= lc->end)
        return false;
    nl = memchr(lc->s + lc->pos, '\n', lc->end - lc->pos);
    n = nl ? (size_t)(nl - (lc->s + lc->pos)) : lc->end - lc->pos;
    *start = lc->pos;
    lc->pos += nl ? n + 1 : n;
    while (n > 0 && is_space(lc->s[*start + n - 1]))
        n--;
    *len = n;
    return true;
}

static bool compare_lines(const char *out, size_t out_len, const char *exp, size_t exp_len,
                          char *why, size_t why_size)
{
    struct line_cursor o, e;
    char g[EXCERPT_SIZE], w[EXCERPT_SIZE];

    line_cursor_init(&o, out, out_len);
    line_cursor_init(&e, exp, exp_len);
    for (size_t line = 1;; line++) {
        size_t os = 0, ol = 0, es = 0, el = 0, at;
        bool have_o = line_next(&o, &os, &ol), have_e = line_next(&e, &es, &el);

        if (!have_o && !have_e)
            return true;
        if (!have_o)
            return fail(why, why_size, "missing line %zu: expected '%s'", line,
                        excerpt(w, exp + es, el, 0));
        if (!have_e)
            return fail(why, why_size, "extra output at line %zu: '%s'", line,
                        excerpt(g, out + os, ol, 0));
        at = first_difference(out + os, exp + es, ol < el ? ol : el);
        if (at < ol || at < el)
            return fail(why, why_size, "line %zu differs at column %zu: got '%s', expected '%s'",
                        line, at + 1, excerpt(g, out + os, ol, at), excerpt(w, exp + es, el, at));
    }
}

/* ---- tokens and float ---- */

struct token_cursor {
    const char *s;
    size_t len, pos;
};

static bool token_next(struct token_cursor *tc, const char **tok, size_t *len)
{
    size_t start;

    while (tc->pos < tc->len && is_space(tc->s[tc->pos]))
        tc->pos++;
    if (tc->pos >= tc->len)
        return false;
    start = tc->pos;
    while (tc->pos < tc->len && !is_space(tc->s[tc->pos]))
        tc->pos++;
    *tok = tc->s + start;
    *len = tc->pos - start;
    return true;
}

static bool is_number_byte(char c)
{
    return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E';
}

/* token_number(t, n, &v) — true when t is a finite decimal number in its entirety. */
static bool token_number(const char *t, size_t n, double *v)
{
    char small[NUMBER_SIZE], *buf = small, *end;
    bool whole;

    for (size_t i = 0; i < n; i++)
        if (!is_number_byte(t[i]))
            return false;
    if (n >= sizeof(small) && !(buf = malloc(n + 1)))
        return false; /* out of memory: compared byte for byte instead */
    memcpy(buf, t, n);
    buf[n] = '\0';
    *v = strtod(buf, &end);
    whole = n > 0 && end == buf + n && isfinite(*v);
    if (buf != small)
        free(buf);
    return whole;
}

static bool compare_tokens(const struct checker *c, const char *out, size_t out_len,
                           const char *exp, size_t exp_len, char *why, size_t why_size)
{
    struct token_cursor o = {out, out_len, 0}, e = {exp, exp_len, 0};
    char g[EXCERPT_SIZE], w[EXCERPT_SIZE];

    for (size_t k = 1;; k++) {
        const char *ot = NULL, *et = NULL;
        size_t ol = 0, el = 0, at;
        bool have_o = token_next(&o, &ot, &ol), have_e = token_next(&e, &et, &el);
        double a, b, d;

        if (!have_o && !have_e)
            return true;
        if (!have_o)
            return fail(why, why_size, "missing token %zu: expected '%s'", k,
                        excerpt(w, et, el, 0));
        if (!have_e)
            return fail(why, why_size, "extra output after token %zu: '%s'", k - 1,
                        excerpt(g, ot, ol, 0));
        at = first_difference(ot, et, ol < el ? ol : el);
        if (at == ol && ol == el)
            continue;
        if (c->kind == CHECKER_FLOAT && token_number(ot, ol, &a) && token_number(et, el, &b)) {
            d = fabs(a - b);
            if (d <= c->abs_tol || d <= c->rel_tol * fabs(b))
                continue;
            return fail(why, why_size,
                        "token %zu: %s vs %s beyond tolerance (abs error %.3g, rel error %.3g; "
                        "abs_tol %g, rel_tol %g)",
                        k, excerpt(g, ot, ol, 0), excerpt(w, et, el, 0), d,
                        b != 0 ? d / fabs(b) : INFINITY, c->abs_tol, c->rel_tol);
        }
        return fail(why, why_size, "token %zu differs: got '%s', expected '%s'", k,
                    excerpt(g, ot, ol, at), excerpt(w, et, el, at));
    }
}

/* ---- kattis: problemtools' default output validator ---- */

static bool flag_number(const char *word, size_t n, double *v)
{
    char small[NUMBER_SIZE], *buf = small, *end;
    bool whole;

    if (n == 0 || memchr(word, '\0', n))
        return false;
    if (n >= sizeof(small) && !(buf = malloc(n + 1)))
        return false; /* out of memory: compared as a string instead */
    memcpy(buf, word, n);
    buf[n] = '\0';
    *v = strtod(buf, &end);
    whole = end == buf + n && isfinite(*v);
    if (buf != small)
        free(buf);
    return whole;
}

/* A cursor over one side that counts lines, for the reasons. */
struct kattis_side {
    const char *s;
    size_t len, pos, line;
};

/* kattis_space(k, &start, &n) — the run of whitespace at the cursor, consumed. */
static void kattis_space(struct kattis_side *k, size_t *start, size_t *n)
{
    *start = k->pos;
    while (k->pos < k->len && is_space(k->s[k->pos]))
        k->line += k->s[k->pos++] == '\n';
    *n = k->pos - *start;
}

/* kattis_token(k, &tok, &n) — the token at the cursor (after kattis_space), or false. */
static bool kattis_token(struct kattis_side *k, const char **tok, size_t *n)
{
    size_t start = k->pos;

    while (k->pos < k->len && !is_space(k->s[k->pos]))
        k->pos++;
    *tok = k->s + start;
    *n = k->pos - start;
    return *n > 0;
}

static bool ascii_case_equal(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x >= 'A' && x <= 'Z')
            x = (unsigned char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = (unsigned char)(y - 'A' + 'a');
        if (x != y)
            return false;
    }
    return true;
}

/* compare_kattis — see checker.h. Both sides are read as alternating runs of whitespace and
 * tokens; with space_change_sensitive each run of whitespace must equal the answer's. */
static bool compare_kattis(const struct checker *c, const char *out, size_t out_len,
                           const char *exp, size_t exp_len, char *why, size_t why_size)
{
    struct kattis_side o = {out, out_len, 0, 1}, e = {exp, exp_len, 0, 1};
    bool floats = c->abs_tol >= 0 || c->rel_tol >= 0;
    char g[EXCERPT_SIZE], w[EXCERPT_SIZE];

    for (size_t k = 1;; k++) {
        size_t os, on, es, en, ol, el;
        const char *ot, *et;
        double a, b, d;
        bool have_o, have_e;

        size_t oline = o.line, eline = e.line;

        kattis_space(&o, &os, &on);
        kattis_space(&e, &es, &en);
        if (c->space_change_sensitive && (on != en || memcmp(out + os, exp + es, on) != 0)) {
            size_t at = first_difference(out + os, exp + es, on < en ? on : en);
            char where[48];
            if (e.pos == e.len)
                snprintf(where, sizeof(where), "at the end");
            else
                snprintf(where, sizeof(where), "before token %zu", k);
            return fail(why, why_size,
                        "whitespace differs %s (output line %zu, answer line %zu): got '%s', "
                        "expected '%s' (space_change_sensitive)",
                        where, oline, eline, excerpt(g, out + os, on, at),
                        excerpt(w, exp + es, en, at));
        }
        have_e = kattis_token(&e, &et, &el);
        have_o = kattis_token(&o, &ot, &ol);
        if (!have_e && !have_o)
            return true;
        if (!have_e)
            return fail(why, why_size, "extra output after token %zu (output line %zu): '%s'",
                        k - 1, o.line, excerpt(g, ot, ol, 0));
        if (!have_o)
            return fail(why, why_size, "output ends %s; expected token %zu (answer line %zu): '%s'",
                        k == 1 ? (out_len ? "with whitespace only" : "empty") : "early", k, e.line,
                        excerpt(w, et, el, 0));
        if (floats && flag_number(et, el, &b)) {
            if (!flag_number(ot, ol, &a))
                return fail(why, why_size,
                            "token %zu (output line %zu): expected a number like '%s', got '%s'", k,
                            o.line, excerpt(w, et, el, 0), excerpt(g, ot, ol, 0));
            d = fabs(a - b);
            if (d <= c->abs_tol || d <= c->rel_tol * fabs(b))
                continue;
            return fail(why, why_size,
                        "token %zu (output line %zu): %s vs %s beyond tolerance (abs error %.3g, "
                        "rel error %.3g; float_absolute_tolerance %g, float_relative_tolerance "
                        "%g)",
                        k, o.line, excerpt(g, ot, ol, 0), excerpt(w, et, el, 0), d,
                        b != 0 ? d / fabs(b) : INFINITY, c->abs_tol, c->rel_tol);
        }
        if (ol == el &&
            (c->case_sensitive ? memcmp(ot, et, ol) == 0 : ascii_case_equal(ot, et, ol)))
            continue;
        {
            size_t at = first_difference(ot, et, ol < el ? ol : el);
            return fail(why, why_size,
                        "token %zu differs (output line %zu, answer line %zu): got '%s', "
                        "expected '%s'%s",
                        k, o.line, e.line, excerpt(g, ot, ol, at), excerpt(w, et, el, at),
                        c->case_sensitive ? " (case_sensitive)" : "");
        }
    }
}

bool checker_compare(const struct checker *c, const char *out, size_t out_len, const char *exp,
                     size_t exp_len, char *why, size_t why_size)
{
    if (why && why_size)
        why[0] = '\0';
    if (!out) {
        out = "";
        out_len = 0;
    }
    if (!exp) {
        exp = "";
        exp_len = 0;
    }
    switch (c->kind) {
    case CHECKER_EXACT:
        return compare_exact(out, out_len, exp, exp_len, why, why_size);
    case CHECKER_LINES:
        return compare_lines(out, out_len, exp, exp_len, why, why_size);
    case CHECKER_TOKENS:
    case CHECKER_FLOAT:
        return compare_tokens(c, out, out_len, exp, exp_len, why, why_size);
    case CHECKER_KATTIS:
        return compare_kattis(c, out, out_len, exp, exp_len, why, why_size);
    default:
        return fail(why, why_size, "unknown checker kind %d", (int)c->kind);
    }
}
