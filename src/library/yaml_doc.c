/*
 * yaml_doc.c — a YAML document as jansson values (yaml_doc.h), built from libyaml's event
 * parser with an explicit stack (no recursion), scalars typed as PyYAML's safe_load does.
 */
#include "library/yaml_doc.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define YAML_DEPTH_MAX 64   /* nested collections */
#define YAML_PATH_MAX  1024 /* bytes of a dotted path kept for line numbers */

/* ---- scalars ------------------------------------------------------------------------- */

static bool word_in(const char *s, size_t n, const char *const *words)
{
    for (; *words; words++)
        if (strlen(*words) == n && memcmp(*words, s, n) == 0)
            return true;
    return false;
}

static const char *const null_words[] = {"~", "null", "Null", "NULL", NULL};
static const char *const true_words[] = {"yes",  "Yes", "YES", "true", "True",
                                         "TRUE", "on",  "On",  "ON",   NULL};
static const char *const false_words[] = {"no",    "No",  "NO",  "false", "False",
                                          "FALSE", "off", "Off", "OFF",   NULL};

static bool is_digit(char c, int base)
{
    if (base == 16)
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    return c >= '0' && c < '0' + base;
}

static int digit_value(char c)
{
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* run(s, i, n, base) — the end of a run of digits of base and '_' starting at i. */
static size_t run(const char *s, size_t i, size_t n, int base)
{
    while (i < n && (is_digit(s[i], base) || s[i] == '_'))
        i++;
    return i;
}

/* sexagesimal(s, i, n) — past ":[0-5]?[0-9]" groups (at least one) from i; 0 when none. */
static size_t sexagesimal(const char *s, size_t i, size_t n)
{
    size_t start = i;

    while (i < n && s[i] == ':') {
        size_t j = i + 1;
        if (j + 1 < n && s[j] >= '0' && s[j] <= '5' && is_digit(s[j + 1], 10))
            j += 2;
        else if (j < n && is_digit(s[j], 10))
            j += 1;
        else
            return 0;
        i = j;
    }
    return i > start ? i : 0;
}

/* digits_value(s, from, to, base, &v) — the digits in [from, to) ('_' skipped); false when
 * the value does not fit an int64. */
static bool digits_value(const char *s, size_t from, size_t to, int base, int64_t *v)
{
    *v = 0;
    for (size_t i = from; i < to; i++) {
        if (s[i] == '_')
            continue;
        if (*v > (INT64_MAX - digit_value(s[i])) / base)
            return false;
        *v = *v * base + digit_value(s[i]);
    }
    return true;
}

/* sexagesimal_value(s, from, to) — "a:b:c" as a*3600 + b*60 + c (c may have a fraction). */
static double sexagesimal_value(const char *s, size_t from, size_t to)
{
    double v = 0, part;
    char buf[64];
    size_t i = from;

    while (i < to) {
        size_t j = i, k = 0;
        while (j < to && s[j] != ':') {
            if (s[j] != '_' && k + 1 < sizeof(buf))
                buf[k++] = s[j];
            j++;
        }
        buf[k] = '\0';
        part = strtod(buf, NULL);
        v = v * 60 + part;
        i = j + 1;
    }
    return v;
}

/* plain_int(s, n) — PyYAML's int: [-+]?0b[01_]+ | [-+]?0[0-7_]+ | [-+]?(0|[1-9][0-9_]*) |
 * [-+]?0x[0-9a-fA-F_]+ | [-+]?[1-9][0-9_]*(:[0-5]?[0-9])+. A new value, or NULL. */
static json_t *plain_int(const char *s, size_t n)
{
    size_t i = 0, end;
    bool neg = false;
    int64_t v;

    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    if (i >= n || !is_digit(s[i], 10))
        return NULL;
    if (s[i] == '0' && i + 1 == n)
        return json_integer(0);
    if (s[i] == '0' && i + 1 < n && (s[i + 1] == 'b' || s[i + 1] == 'x')) {
        int base = s[i + 1] == 'b' ? 2 : 16;
        end = run(s, i + 2, n, base);
        if (end != n || end == i + 2 || !digits_value(s, i + 2, n, base, &v))
            return NULL;
        return json_integer(neg ? -v : v);
    }
    if (s[i] == '0') {
        end = run(s, i + 1, n, 8);
        if (end != n || !digits_value(s, i + 1, n, 8, &v))
            return NULL;
        return json_integer(neg ? -v : v);
    }
    end = run(s, i, n, 10);
    if (end == n) {
        if (!digits_value(s, i, n, 10, &v))
            return NULL;
        return json_integer(neg ? -v : v);
    }
    if (sexagesimal(s, end, n) == n) {
        double d = sexagesimal_value(s, i, n);
        if (d > (double)INT64_MAX)
            return NULL;
        return json_integer((json_int_t)(neg ? -d : d));
    }
    return NULL;
}

/* plain_float(s, n) — PyYAML's float: [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)? |
 * \.[0-9_]+([eE][-+][0-9]+)? | [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*. (.inf and .nan
 * match too, but stay strings.) A new value, or NULL. */
static json_t *plain_float(const char *s, size_t n)
{
    char buf[128];
    size_t i = 0, k = 0, end;
    bool sign = false;
    double v;

    if (i < n && (s[i] == '-' || s[i] == '+')) {
        sign = true;
        i++;
    }
    if (i < n && s[i] == '.') {
        if (sign || i + 1 >= n || !is_digit(s[i + 1], 10))
            return NULL;
        end = run(s, i + 1, n, 10);
    } else {
        if (i >= n || !is_digit(s[i], 10))
            return NULL;
        end = run(s, i, n, 10);
        if (end < n && s[end] == ':') {
            size_t after = sexagesimal(s, end, n);
            if (!after || after >= n || s[after] != '.' || run(s, after + 1, n, 10) != n)
                return NULL;
            v = sexagesimal_value(s, sign ? 1 : 0, n);
            return json_real(s[0] == '-' ? -v : v);
        }
        if (end >= n || s[end] != '.')
            return NULL;
        end = run(s, end + 1, n, 10);
    }
    if (end < n) {
        if ((s[end] != 'e' && s[end] != 'E') || end + 2 >= n ||
            (s[end + 1] != '-' && s[end + 1] != '+') || run(s, end + 2, n, 10) != n)
            return NULL;
        for (size_t j = end + 2; j < n; j++)
            if (s[j] == '_')
                return NULL;
    }
    for (size_t j = 0; j < n && k + 1 < sizeof(buf); j++)
        if (s[j] != '_')
            buf[k++] = s[j];
    if (k + 1 >= sizeof(buf))
        return NULL;
    buf[k] = '\0';
    v = strtod(buf, NULL);
    return isfinite(v) ? json_real(v) : NULL;
}

/* scalar_value(ev) — the JSON value of a scalar event, typed as PyYAML types it. */
static json_t *scalar_value(const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    const char *tag = (const char *)ev->data.scalar.tag;
    size_t n = ev->data.scalar.length;
    json_t *v;

    if (tag && strcmp(tag, YAML_STR_TAG) == 0)
        return json_stringn(s, n);
    if (!tag && !ev->data.scalar.plain_implicit)
        return json_stringn(s, n); /* quoted or block scalar */
    if (tag && strcmp(tag, YAML_NULL_TAG) != 0 && strcmp(tag, YAML_BOOL_TAG) != 0 &&
        strcmp(tag, YAML_INT_TAG) != 0 && strcmp(tag, YAML_FLOAT_TAG) != 0)
        return json_stringn(s, n); /* a tag we do not know: its text */
    if (n == 0 || word_in(s, n, null_words))
        return json_null();
    if (word_in(s, n, true_words))
        return json_true();
    if (word_in(s, n, false_words))
        return json_false();
    if ((v = plain_int(s, n)) || (v = plain_float(s, n)))
        return v;
    return json_stringn(s, n);
}

/* ---- the tree ------------------------------------------------------------------------ */

struct frame {
    json_t *node;   /* the open mapping or sequence (borrowed: its parent owns it) */
    bool map;       /* a mapping: the next scalar is a key when key is NULL */
    json_t *key;    /* mapping: the key waiting for its value (owned) */
    size_t index;   /* sequence: the next element's index */
    size_t pathlen; /* length of this collection's own dotted path */
};

struct builder {
    struct yaml_doc *d;
    struct frame stack[YAML_DEPTH_MAX];
    size_t depth;
    json_t *anchors; /* anchor name -> value */
    char path[YAML_PATH_MAX];
    size_t pathlen;
    struct errbuf *err;
};

/* child_path(b, f) — sets b->path to the path of f's next child; false when too long. */
static bool child_path(struct builder *b, const struct frame *f)
{
    char comp[64];
    const char *c;
    size_t cn;

    if (f->map) {
        c = json_string_value(f->key);
        cn = json_string_length(f->key);
    } else {
        cn = (size_t)snprintf(comp, sizeof(comp), "%zu", f->index);
        c = comp;
    }
    b->pathlen = f->pathlen;
    if (b->pathlen + cn + 2 > sizeof(b->path))
        return false;
    if (b->pathlen)
        b->path[b->pathlen++] = '.';
    memcpy(b->path + b->pathlen, c, cn);
    b->pathlen += cn;
    b->path[b->pathlen] = '\0';
    return true;
}

/* attach(b, v, line) — places a new value v (owned) where the document
 * expects the next node: the root, a sequence element, a mapping key (a string) or its
 * value. b->path is left as v's path. 0 or -ENOMEM. */
static int attach(struct builder *b, json_t *v, unsigned line)
{
    struct frame *f = b->depth ? &b->stack[b->depth - 1] : NULL;
    bool path_ok = true;
    int e = 0;

    if (!v)
        return -ENOMEM;
    if (f && f->map && !f->key) {
        /* a key: on_event made it a string, and refused collections as keys */
        f->key = v;
        return 0;
    }
    if (!f) {
        b->pathlen = 0;
        b->path[0] = '\0';
        json_decref(b->d->root);
        b->d->root = v;
    } else {
        path_ok = child_path(b, f);
        if (f->map) {
            e = json_object_setn_new(f->node, json_string_value(f->key), json_string_length(f->key),
                                     v);
            json_decref(f->key);
            f->key = NULL;
        } else {
            e = json_array_append_new(f->node, v);
            f->index++;
        }
        if (e)
            return -ENOMEM;
    }
    if (path_ok && json_object_set_new(b->d->lines, b->path, json_integer(line)))
        return -ENOMEM;
    return 0;
}

/* expecting_key(b) — is the next node a mapping key? A key is kept as its text whatever
 * type it would have as a value (PyYAML makes "1: a" an int key; a lookup by path wants
 * text). */
static bool expecting_key(const struct builder *b)
{
    return b->depth && b->stack[b->depth - 1].map && !b->stack[b->depth - 1].key;
}

/* remember(b, anchor, v) — keeps v under its anchor's name (when it has one). */
static int remember(struct builder *b, const yaml_char_t *anchor, json_t *v)
{
    if (!anchor)
        return 0;
    return json_object_set(b->anchors, (const char *)anchor, v) ? -ENOMEM : 0;
}

/* on_event(b, ev, &documents) — one parser event into the tree. 0, 1 at the stream's end,
 * or -errno (-EINVAL with b->err set). */
static int on_event(struct builder *b, const yaml_event_t *ev, int *documents)
{
    unsigned line = (unsigned)ev->start_mark.line + 1;
    json_t *v;
    int e;

    switch (ev->type) {
    case YAML_STREAM_END_EVENT:
        return 1;
    case YAML_DOCUMENT_START_EVENT:
        if (++*documents > 1)
            return errbuf_set(b->err, "line %u: more than one YAML document ('---'): want one",
                              line);
        return 0;
    case YAML_SCALAR_EVENT:
        if (expecting_key(b))
            v = json_stringn((const char *)ev->data.scalar.value, ev->data.scalar.length);
        else
            v = scalar_value(ev);
        if (!v)
            return -ENOMEM;
        if ((e = remember(b, ev->data.scalar.anchor, v)) < 0) {
            json_decref(v);
            return e;
        }
        return attach(b, v, line);
    case YAML_ALIAS_EVENT:
        v = json_object_get(b->anchors, (const char *)ev->data.alias.anchor);
        if (!v)
            return errbuf_set(b->err, "line %u: unknown alias '*%s'", line,
                              (const char *)ev->data.alias.anchor);
        for (size_t i = 0; i < b->depth; i++)
            if (b->stack[i].node == v)
                return errbuf_set(b->err,
                                  "line %u: alias '*%s' refers to a collection that "
                                  "contains it",
                                  line, (const char *)ev->data.alias.anchor);
        if (expecting_key(b) && !json_is_string(v))
            return errbuf_set(b->err, "line %u: alias '*%s' as a mapping key must be a string",
                              line, (const char *)ev->data.alias.anchor);
        return attach(b, json_incref(v), line);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        bool map = ev->type == YAML_MAPPING_START_EVENT;
        const yaml_char_t *anchor =
            map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
        struct frame *f;
        if (b->depth == YAML_DEPTH_MAX)
            return errbuf_set(b->err, "line %u: collections nested deeper than %d levels", line,
                              YAML_DEPTH_MAX);
        if (expecting_key(b))
            return errbuf_set(
                b->err, "line %u: a mapping or sequence as a mapping key is not supported", line);
        v = map ? json_object() : json_array();
        if (!v)
            return -ENOMEM;
        if ((e = remember(b, anchor, v)) < 0) {
            json_decref(v);
            return e;
        }
        if ((e = attach(b, v, line)) < 0)
            return e;
        f = &b->stack[b->depth++];
        memset(f, 0, sizeof(*f));
        f->node = v;
        f->map = map;
        f->pathlen = b->pathlen;
        return 0;
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        if (b->depth) {
            json_decref(b->stack[b->depth - 1].key);
            b->depth--;
        }
        return 0;
    case YAML_NO_EVENT:
    case YAML_STREAM_START_EVENT:
    case YAML_DOCUMENT_END_EVENT:
    default:
        return 0;
    }
}

int yaml_doc_parse(struct yaml_doc *d, const char *text, size_t len, struct errbuf *err)
{
    struct builder b = {.d = d, .err = err};
    yaml_parser_t parser;
    yaml_event_t ev;
    int documents = 0, e = 0;

    d->root = json_null();
    d->lines = json_object();
    b.anchors = json_object();
    if (!d->lines || !b.anchors) {
        json_decref(b.anchors);
        return -ENOMEM;
    }
    if (!yaml_parser_initialize(&parser)) {
        json_decref(b.anchors);
        return -ENOMEM;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    while (e == 0) {
        if (!yaml_parser_parse(&parser, &ev)) {
            if (parser.error == YAML_MEMORY_ERROR) {
                e = -ENOMEM;
            } else if (parser.context) {
                e = errbuf_set(err, "line %zu, column %zu: %s (%s, line %zu)",
                               parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                               parser.problem ? parser.problem : "syntax error", parser.context,
                               parser.context_mark.line + 1);
            } else {
                e = errbuf_set(err, "line %zu, column %zu: %s", parser.problem_mark.line + 1,
                               parser.problem_mark.column + 1,
                               parser.problem ? parser.problem : "syntax error");
            }
            break;
        }
        e = on_event(&b, &ev, &documents);
        yaml_event_delete(&ev);
    }
    while (b.depth)
        json_decref(b.stack[--b.depth].key);
    yaml_parser_delete(&parser);
    json_decref(b.anchors);
    return e < 0 ? e : 0;
}

void yaml_doc_release(struct yaml_doc *d)
{
    json_decref(d->root);
    json_decref(d->lines);
    d->root = d->lines = NULL;
}

json_t *yaml_doc_get(const struct yaml_doc *d, const char *path)
{
    json_t *v = d->root;
    const char *p = path;

    if (!v || !*p)
        return v;
    while (v && *p) {
        size_t n = strcspn(p, ".");
        if (!json_is_object(v))
            return NULL;
        v = json_object_getn(v, p, n);
        p += n;
        if (*p == '.')
            p++;
    }
    return v;
}

unsigned yaml_doc_line(const struct yaml_doc *d, const char *path)
{
    json_t *l = d->lines ? json_object_get(d->lines, path) : NULL;

    return l ? (unsigned)json_integer_value(l) : 0;
}
