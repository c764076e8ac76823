/*
 * junit.c — JUnit XML reports into per-test outcomes, with expat (see junit.h).
 *
 * After parsing, two open-addressing hash tables index the cases: by id (each slot the
 * worst case of that id, and the first of that id that is not skipped) and by bare name
 * (the case and how many share the name). A report of n cases graded against n names then
 * costs O(n) comparisons, where a scan per name cost n² (30,000 cases: ~20 s of CPU).
 */
#include "judge/junit.h"

#include <errno.h>
#include <expat.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define MAX_CASES 100000 /* a report listing more is not a test run we can judge */

struct parse_state {
    XML_Parser parser;
    struct junit_report *report;
    size_t alloc;
    struct junit_case *open; /* the <testcase> being read, or NULL */
    int outcome_depth;       /* depth of the open <failure>/<error>/<skipped>, or 0 */
    int depth;
    bool saw_root;    /* a testsuites/testsuite/testcase element was the document's root */
    bool text_wanted; /* collecting the failure's text: it had no message attribute */
    size_t text_len;
    int err; /* first error: -EINVAL / -ENOMEM */
    char why[256];
};

static void fail(struct parse_state *ps, int err, const char *why)
{
    if (!ps->err) {
        ps->err = err;
        snprintf(ps->why, sizeof(ps->why), "%s", why);
    }
    XML_StopParser(ps->parser, XML_FALSE);
}

static const char *attr(const XML_Char **atts, const char *key)
{
    for (size_t i = 0; atts[i]; i += 2)
        if (strcmp(atts[i], key) == 0)
            return atts[i + 1];
    return NULL;
}

/* Outcomes by severity: a case with several outcome children keeps the worst. */
static int severity(enum junit_outcome o)
{
    static const int rank[] = {
        [JUNIT_PASSED] = 0, [JUNIT_SKIPPED] = 1, [JUNIT_FAILED] = 2, [JUNIT_ERROR] = 3};
    return rank[o];
}

static void open_case(struct parse_state *ps, const XML_Char **atts)
{
    struct junit_report *r = ps->report;
    const char *name = attr(atts, "name"), *cls = attr(atts, "classname"), *t = attr(atts, "time");
    struct junit_case *c;

    if (!name || !name[0]) {
        fail(ps, -EINVAL, "a <testcase> has no name");
        return;
    }
    if (!cls)
        cls = "";
    if (r->n == MAX_CASES) {
        fail(ps, -EINVAL, "more than 100000 test cases");
        return;
    }
    if (r->n == ps->alloc) {
        size_t na = ps->alloc ? ps->alloc * 2 : 64;
        struct junit_case *nc = realloc(r->cases, na * sizeof(*nc));
        if (!nc) {
            fail(ps, -ENOMEM, "out of memory");
            return;
        }
        r->cases = nc;
        ps->alloc = na;
    }
    c = &r->cases[r->n];
    memset(c, 0, sizeof(*c));
    c->name = strdup(name);
    c->classname = strdup(cls);
    c->id = malloc(strlen(cls) + strlen(name) + 2);
    if (!c->name || !c->classname || !c->id) {
        free(c->name);
        free(c->classname);
        free(c->id);
        fail(ps, -ENOMEM, "out of memory");
        return;
    }
    if (cls[0])
        sprintf(c->id, "%s.%s", cls, name);
    else
        strcpy(c->id, name);
    if (t) {
        char *end;
        double v = strtod(t, &end);
        c->time = end != t && v >= 0 && v < 1e9 ? v : 0;
    }
    r->n++;
    ps->open = c;
}

static void XMLCALL on_start(void *data, const XML_Char *el, const XML_Char **atts)
{
    struct parse_state *ps = data;
    enum junit_outcome o;

    ps->depth++;
    if (ps->depth == 1) {
        if (strcmp(el, "testsuites") && strcmp(el, "testsuite") && strcmp(el, "testcase")) {
            fail(ps, -EINVAL, "the root element is not <testsuites>, <testsuite> or <testcase>");
            return;
        }
        ps->saw_root = true;
    }
    if (strcmp(el, "testcase") == 0) {
        if (ps->open) {
            fail(ps, -EINVAL, "a <testcase> inside a <testcase>");
            return;
        }
        open_case(ps, atts);
        return;
    }
    if (!ps->open || ps->outcome_depth)
        return;
    if (strcmp(el, "failure") == 0)
        o = JUNIT_FAILED;
    else if (strcmp(el, "error") == 0)
        o = JUNIT_ERROR;
    else if (strcmp(el, "skipped") == 0)
        o = JUNIT_SKIPPED;
    else
        return; /* system-out, properties, flakyFailure, rerunFailure...: not an outcome */
    if (severity(o) <= severity(ps->open->outcome))
        return;
    ps->open->outcome = o;
    ps->outcome_depth = ps->depth;
    {
        const char *msg = attr(atts, "message");
        if (!msg || !msg[0])
            msg = attr(atts, "type");
        snprintf(ps->open->message, sizeof(ps->open->message), "%s", msg ? msg : "");
        ps->text_wanted = !msg || !msg[0];
        ps->text_len = 0;
    }
}

static void XMLCALL on_end(void *data, const XML_Char *el)
{
    struct parse_state *ps = data;

    if (ps->outcome_depth == ps->depth) {
        ps->outcome_depth = 0;
        ps->text_wanted = false;
    }
    if (strcmp(el, "testcase") == 0)
        ps->open = NULL;
    ps->depth--;
}

/* The first line of an outcome element's text, when it has no message attribute. */
static void XMLCALL on_text(void *data, const XML_Char *s, int len)
{
    struct parse_state *ps = data;
    char *m;
    size_t room;

    if (!ps->text_wanted || !ps->open || len <= 0)
        return;
    m = ps->open->message;
    room = sizeof(ps->open->message) - 1 - ps->text_len;
    for (int i = 0; i < len && room; i++) {
        if (s[i] == '\n' || s[i] == '\r') {
            if (ps->text_len) {
                ps->text_wanted = false;
                break;
            }
            continue; /* leading blank lines */
        }
        m[ps->text_len++] = s[i];
        room--;
    }
    m[ps->text_len] = '\0';
}

/* A report has no business declaring a DTD: refusing one rules out entity expansion. */
static void XMLCALL on_doctype(void *data, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int has_internal)
{
    (void)name, (void)sysid, (void)pubid, (void)has_internal;
    fail(data, -EINVAL, "the report declares a DOCTYPE");
}

/* One slot of an index table: a key (a case's id or name, owned by the case) and the
 * cases it stands for; key NULL marks an empty slot. */
struct index_slot {
    const char *key;
    size_t worst;   /* by id: the case with the worst outcome; by name: the first */
    size_t counted; /* by id: the first case not skipped, or SIZE_MAX */
    size_t n;       /* cases with this key */
};

struct junit_index {
    struct index_slot *by_id, *by_name;
    size_t cap; /* a power of two, at least twice the cases */
    uint64_t key[2];
    unsigned long probes;
};

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static void sip_round(uint64_t v[4])
{
    v[0] += v[1];
    v[1] = ROTL(v[1], 13) ^ v[0];
    v[0] = ROTL(v[0], 32);
    v[2] += v[3];
    v[3] = ROTL(v[3], 16) ^ v[2];
    v[0] += v[3];
    v[3] = ROTL(v[3], 21) ^ v[0];
    v[2] += v[1];
    v[1] = ROTL(v[1], 17) ^ v[2];
    v[2] = ROTL(v[2], 32);
}

/* hash_str(key, s) — SipHash-2-4 of s under a per-report random key. The report is the
 * sandbox's: with an unkeyed hash a solution could write ids that all collide and make
 * the lookups quadratic again; it cannot aim at a key it never sees. */
static uint64_t hash_str(const uint64_t key[2], const char *s)
{
    uint64_t v[4] = {key[0] ^ 0x736f6d6570736575ull, key[1] ^ 0x646f72616e646f6dull,
                     key[0] ^ 0x6c7967656e657261ull, key[1] ^ 0x7465646279746573ull};
    size_t len = strlen(s), i;
    uint64_t m;

    for (i = 0; i + 8 <= len; i += 8) {
        memcpy(&m, s + i, 8); /* little-endian hosts: the byte order of the reference */
        v[3] ^= m;
        sip_round(v);
        sip_round(v);
        v[0] ^= m;
    }
    m = (uint64_t)len << 56;
    for (size_t k = 0; i + k < len; k++)
        m |= (uint64_t)(unsigned char)s[i + k] << (8 * k);
    v[3] ^= m;
    sip_round(v);
    sip_round(v);
    v[0] ^= m;
    v[2] ^= 0xff;
    for (int r = 0; r < 4; r++)
        sip_round(v);
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* slot_of(ix, table, key) — the slot holding key, or the empty slot where it would go. */
static struct index_slot *slot_of(struct junit_index *ix, struct index_slot *table, const char *key)
{
    size_t k = hash_str(ix->key, key) & (ix->cap - 1);

    while (table[k].key) {
        ix->probes++;
        if (strcmp(table[k].key, key) == 0)
            break;
        k = (k + 1) & (ix->cap - 1);
    }
    return &table[k];
}

/* build_index(report) — both tables, in one pass over the cases. 0 or -ENOMEM. */
static int build_index(struct junit_report *report)
{
    struct junit_index *ix = calloc(1, sizeof(*ix));

    if (!ix)
        return -ENOMEM;
    if (getrandom(ix->key, sizeof(ix->key), 0) != (ssize_t)sizeof(ix->key)) {
        /* no entropy source: still unpredictable enough from outside the sandbox */
        ix->key[0] = (uint64_t)(uintptr_t)ix ^ (uint64_t)(util_now() * 1e9);
        ix->key[1] = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull;
    }
    ix->cap = 16;
    while (ix->cap < 2 * report->n)
        ix->cap *= 2;
    ix->by_id = calloc(ix->cap, sizeof(*ix->by_id));
    ix->by_name = calloc(ix->cap, sizeof(*ix->by_name));
    report->index = ix;
    if (!ix->by_id || !ix->by_name)
        return -ENOMEM;
    for (size_t i = 0; i < report->n; i++) {
        const struct junit_case *c = &report->cases[i];
        struct index_slot *s = slot_of(ix, ix->by_id, c->id);
        if (!s->key)
            *s = (struct index_slot){.key = c->id, .worst = i, .counted = SIZE_MAX};
        else if (severity(c->outcome) > severity(report->cases[s->worst].outcome))
            s->worst = i;
        if (s->counted == SIZE_MAX && c->outcome != JUNIT_SKIPPED)
            s->counted = i;
        s->n++;
        s = slot_of(ix, ix->by_name, c->name);
        if (!s->key)
            *s = (struct index_slot){.key = c->name, .worst = i};
        s->n++;
    }
    ix->probes = 0; /* building is linear by construction; lookups are what tests count */
    return 0;
}

int junit_parse(const char *xml, size_t len, struct junit_report *report, struct errbuf *err)
{
    struct parse_state ps;
    enum XML_Status st;

    memset(report, 0, sizeof(*report));
    memset(&ps, 0, sizeof(ps));
    if (len > INT_MAX)
        return errbuf_set(err, "the report is too large"), -EINVAL;
    ps.parser = XML_ParserCreate(NULL);
    if (!ps.parser)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    ps.report = report;
    XML_SetUserData(ps.parser, &ps);
    XML_SetElementHandler(ps.parser, on_start, on_end);
    XML_SetCharacterDataHandler(ps.parser, on_text);
    XML_SetStartDoctypeDeclHandler(ps.parser, on_doctype);
    st = XML_Parse(ps.parser, xml, (int)len, XML_TRUE);
    if (st != XML_STATUS_OK && !ps.err) {
        ps.err = -EINVAL;
        snprintf(ps.why, sizeof(ps.why), "not well-formed XML at line %lu: %s",
                 (unsigned long)XML_GetCurrentLineNumber(ps.parser),
                 XML_ErrorString(XML_GetErrorCode(ps.parser)));
    }
    if (!ps.err && !ps.saw_root) {
        ps.err = -EINVAL;
        snprintf(ps.why, sizeof(ps.why), "the report is empty");
    }
    XML_ParserFree(ps.parser);
    if (!ps.err && build_index(report) < 0) {
        ps.err = -ENOMEM;
        snprintf(ps.why, sizeof(ps.why), "out of memory");
    }
    if (ps.err)
        errbuf_set(err, "%s", ps.why);
    return ps.err;
}

void junit_release(struct junit_report *report)
{
    for (size_t i = 0; i < report->n; i++) {
        free(report->cases[i].name);
        free(report->cases[i].classname);
        free(report->cases[i].id);
    }
    free(report->cases);
    if (report->index) {
        free(report->index->by_id);
        free(report->index->by_name);
        free(report->index);
    }
    memset(report, 0, sizeof(*report));
}

/* node_id_to_dotted(test, out) — "a/b/test_x.py::C::f[p::q]" → "a.b.test_x.C.f[p::q]": the
 * path before the first "::" loses ".py" and turns '/' into '.', then the "::" between
 * class and function parts (not inside a [parameter]) become '.'. */
static char *node_id_to_dotted(const char *test)
{
    const char *sep = strstr(test, "::");
    char *out, *o;
    const char *p;
    int brackets = 0;

    if (!sep)
        return NULL;
    out = malloc(strlen(test) + 1);
    if (!out)
        return NULL;
    o = out;
    for (p = test; p < sep; p++)
        *o++ = *p == '/' ? '.' : *p;
    if (o - out >= 3 && memcmp(o - 3, ".py", 3) == 0)
        o -= 3;
    for (p = sep; *p; p++) {
        if (*p == '[')
            brackets++;
        else if (*p == ']' && brackets)
            brackets--;
        if (!brackets && p[0] == ':' && p[1] == ':') {
            *o++ = '.';
            p++;
            continue;
        }
        *o++ = *p;
    }
    *o = '\0';
    return out;
}

static const struct junit_case *worse(const struct junit_case *a, const struct junit_case *b)
{
    if (!a || (b && severity(b->outcome) > severity(a->outcome)))
        return b;
    return a;
}

/* by_id(report, id) — the worst case with that id, or NULL. */
static const struct junit_case *by_id(const struct junit_report *report, const char *id)
{
    const struct index_slot *s;

    if (!report->index || !report->n)
        return NULL;
    s = slot_of(report->index, report->index->by_id, id);
    return s->key ? &report->cases[s->worst] : NULL;
}

const struct junit_case *junit_find(const struct junit_report *report, const char *test)
{
    const struct junit_case *hit;
    const struct index_slot *s;
    char *dotted = node_id_to_dotted(test);

    hit = worse(by_id(report, test), dotted ? by_id(report, dotted) : NULL);
    free(dotted);
    if (hit || !report->index || !report->n)
        return hit;
    /* A bare name stands for a case only when no other case has it. */
    s = slot_of(report->index, report->index->by_name, test);
    return s->key && s->n == 1 ? &report->cases[s->worst] : NULL;
}

bool junit_case_counts(const struct junit_report *report, size_t i)
{
    const struct index_slot *s;

    if (i >= report->n || !report->index)
        return false;
    s = slot_of(report->index, report->index->by_id, report->cases[i].id);
    return s->key && s->counted == i;
}

unsigned long junit_probes(const struct junit_report *report)
{
    return report->index ? report->index->probes : 0;
}

const char *junit_outcome_name(enum junit_outcome o)
{
    static const char *const names[] = {[JUNIT_PASSED] = "passed",
                                        [JUNIT_FAILED] = "failed",
                                        [JUNIT_ERROR] = "error",
                                        [JUNIT_SKIPPED] = "skipped"};
    return names[o];
}
