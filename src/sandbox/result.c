/*
 * result.c — the result record and its JSON form (see result.h).
 */
#include "sandbox/result.h"
#include "sandbox/image.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *const status_names[] = {
    [RESULT_OK] = "ok",
    [RESULT_RUNTIME_ERROR] = "runtime_error",
    [RESULT_SIGNALED] = "signaled",
    [RESULT_TIMEOUT] = "timeout",
    [RESULT_MEMORY_LIMIT] = "memory_limit",
    [RESULT_OUTPUT_LIMIT] = "output_limit",
    [RESULT_SANDBOX_ERROR] = "sandbox_error",
};

void result_init(struct result *r)
{
    memset(r, 0, sizeof(*r));
    r->status = RESULT_SANDBOX_ERROR;
    r->exit_code = -1;
}

void result_release(struct result *r)
{
    free(r->out.data);
    free(r->err.data);
    r->out.data = r->err.data = NULL;
    r->out.len = r->err.len = 0;
}

void result_fail(struct result *r, const char *fmt, ...)
{
    va_list ap;

    r->status = RESULT_SANDBOX_ERROR;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof(r->message), fmt, ap);
    va_end(ap);
}

const char *result_status_name(enum result_status s)
{
    if ((size_t)s < sizeof(status_names) / sizeof(status_names[0]))
        return status_names[s];
    return "sandbox_error";
}

const char *result_limit_name(enum result_limit l)
{
    switch (l) {
    case RESULT_LIMIT_CPU:
        return "cpu";
    case RESULT_LIMIT_WALL:
        return "wall";
    case RESULT_LIMIT_NONE:
    default:
        return NULL;
    }
}

/* utf8_seq_len(s, left) — length of the valid UTF-8 sequence at s, or 0 when invalid. */
static size_t utf8_seq_len(const unsigned char *s, size_t left)
{
    size_t n = s[0] < 0x80             ? 1
               : (s[0] & 0xe0) == 0xc0 ? 2
               : (s[0] & 0xf0) == 0xe0 ? 3
               : (s[0] & 0xf8) == 0xf0 ? 4
                                       : 0;

    if (n == 0 || n > left)
        return 0;
    return util_utf8_valid((const char *)s, n) ? n : 0;
}

char *result_text_escape(const char *data, size_t len)
{
    const unsigned char *s = (const unsigned char *)data;
    char *out = malloc(len * 4 + 1), *o = out;
    size_t i = 0;

    if (!out)
        return NULL;
    while (i < len) {
        size_t n = s[i] == 0 ? 0 : utf8_seq_len(s + i, len - i);
        if (n) {
            memcpy(o, s + i, n);
            o += n;
            i += n;
        } else {
            o += sprintf(o, "\\x%02x", s[i]);
            i++;
        }
    }
    *o = '\0';
    return out;
}

static char *base64(const char *data, size_t len)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *s = (const unsigned char *)data;
    char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;

    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < len ? (unsigned)s[i + 1] << 8 : 0) |
                     (i + 2 < len ? s[i + 2] : 0);
        *o++ = tbl[v >> 18 & 63];
        *o++ = tbl[v >> 12 & 63];
        *o++ = i + 1 < len ? tbl[v >> 6 & 63] : '=';
        *o++ = i + 2 < len ? tbl[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

/* set_stream(obj, key, stream) — stdout/stderr as text; exact bytes too when not UTF-8
 * (or holding NUL bytes, which JSON strings from C cannot carry faithfully). */
static int set_stream(json_t *obj, const char *key, const struct result_stream *st)
{
    const char *data = st->data ? st->data : "";
    char b64key[32];
    int r;

    if (util_utf8_valid(data, st->len) && memchr(data, '\0', st->len) == NULL)
        return json_object_set_new(obj, key, json_stringn(data, st->len));
    /* One form at a time: its buffer is freed once the tree has its copy (the escaped
     * text alone is 4x the bytes; big output must not be built twice over). */
    char *esc = result_text_escape(data, st->len), *b64;
    if (!esc)
        return -1;
    r = json_object_set_new(obj, key, json_string_nocheck(esc));
    free(esc);
    if (r < 0 || !(b64 = base64(data, st->len)))
        return -1;
    snprintf(b64key, sizeof(b64key), "%s_base64", key);
    r = json_object_set_new(obj, b64key, json_string_nocheck(b64));
    free(b64);
    return r;
}

/* stream_held(st) — result_held_bytes for one stream. */
static size_t stream_held(const struct result_stream *st)
{
    const unsigned char *s = (const unsigned char *)st->data;
    size_t text = 0;

    if (!s || !st->len)
        return 0;
    if (!util_utf8_valid(st->data, st->len) || memchr(s, '\0', st->len))
        return st->len * RESULT_HELD_FACTOR;
    for (size_t i = 0; i < st->len; i++)
        text += s[i] < 0x20 ? 6 : s[i] == '"' || s[i] == '\\' ? 2 : 1;
    return st->len + 2 * text;
}

size_t result_held_bytes(const struct result *r)
{
    return stream_held(&r->out) + stream_held(&r->err);
}

void result_stream_cut(struct result_stream *st, size_t len)
{
    char *shrunk;

    if (!st->data || st->len <= len)
        return;
    st->len = len;
    st->data[len] = '\0';
    st->truncated = true;
    if ((shrunk = realloc(st->data, len + 1))) /* the memory goes back, not just the length */
        st->data = shrunk;
}

json_t *result_text_json(const char *s)
{
    json_t *j;
    char *esc;

    if (util_utf8_valid(s, strlen(s)))
        return json_string(s);
    esc = result_text_escape(s, strlen(s));
    j = esc ? json_string(esc) : NULL;
    free(esc);
    return j;
}

void result_set_image(struct result *r, const struct image *img)
{
    snprintf(r->image, sizeof(r->image), "%s", img->digest);
    snprintf(r->image_name, sizeof(r->image_name), "%s", img->name);
    snprintf(r->host_os, sizeof(r->host_os), "%s", img->os_release);
}

json_t *result_to_json(const struct result *r)
{
    json_t *o = json_object();
    const char *lim = result_limit_name(r->limit);
    int e = 0;

    if (!o)
        return NULL;
    e |= json_object_set_new(o, "status", json_string(result_status_name(r->status)));
    e |= json_object_set_new(o, "exit_code",
                             r->exit_code >= 0 ? json_integer(r->exit_code) : json_null());
    e |= json_object_set_new(o, "signal", r->signal ? json_integer(r->signal) : json_null());
    e |= json_object_set_new(o, "limit", lim ? json_string(lim) : json_null());
    e |=
        json_object_set_new(o, "cpu_time", json_real((double)(long long)(r->cpu_time * 1e6) / 1e6));
    e |= json_object_set_new(o, "wall_time",
                             json_real((double)(long long)(r->wall_time * 1e6) / 1e6));
    e |= json_object_set_new(o, "memory_kb", json_integer((json_int_t)r->memory_kb));
    e |= set_stream(o, "stdout", &r->out);
    e |= set_stream(o, "stderr", &r->err);
    e |= json_object_set_new(o, "stdout_truncated", json_boolean(r->out.truncated));
    e |= json_object_set_new(o, "stderr_truncated", json_boolean(r->err.truncated));
    e |= json_object_set_new(o, "image", result_text_json(r->image));
    e |= json_object_set_new(o, "image_name", result_text_json(r->image_name));
    e |= json_object_set_new(o, "host_os",
                             r->host_os[0] ? result_text_json(r->host_os) : json_null());
    e |= json_object_set_new(o, "message", result_text_json(r->message));
    if (r->fork_server)
        e |= json_object_set_new(o, "path", json_string("fork_server"));
    if (e) {
        json_decref(o);
        return NULL;
    }
    return o;
}
