/*
 * http.h — the HTTP/1.1 server: libmicrohttpd in external-epoll mode, driven by the loop.
 *
 * Nothing else includes microhttpd.h. A request reaches the precheck once its headers are
 * in, before any of its body is read; the precheck may answer it there (auth, routing: the
 * body is then never read, no "100 Continue" is sent, and the connection closes after the
 * answer). A request it lets through, and whose declared Content-Length is within the cap,
 * reaches the handler once, with its whole body (a body over the cap never does: 413 —
 * at once when declared, after the body when chunked; the body is never held beyond the
 * cap). The handler answers then or later — exactly one http_respond*, or a stream
 * (http_stream_begin, _write..., _end) — always on the loop thread.
 *
 * Connections: at most max_per_address from one client address (more are closed at once)
 * and max_connections in all; when the table is full a new connection makes room by
 * dropping the oldest connection still sending request headers (an idle kept-alive one
 * counts), or is itself dropped when every other one is busy with a request. A client gets
 * header_timeout_s for the headers of a request (and between kept-alive requests) and
 * body_timeout_s for its body, each counted from the start of the phase; then it is
 * dropped. A client that stops reading an answer is dropped after 120 s without progress.
 *
 * Clients that leave: while an answer is pending the connection is suspended and its
 * socket watched. A FIN alone does not end the request — HTTP/1.1 lets a client shut down
 * its sending side and wait for the answer (`nc -N`, some proxies). It is probed instead:
 * an interim "HTTP/1.1 100 Continue" before the answer began (every HTTP/1.1 client skips
 * it), or, inside a stream, a single space between lines (JSON whitespace: it leads the
 * next line). A client that has really gone answers the probe with a reset; that, or any
 * hang-up or socket error, runs the close callback with aborted=true. A half-closed
 * client gets its answer, written by this module on the socket with "Connection: close"
 * (libmicrohttpd would read the end of file first and drop it). HTTP/1.0 clients are not
 * probed: their FIN means gone.
 */
#ifndef CRUCIBLE_HTTP_H
#define CRUCIBLE_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/loop.h"
#include "util.h"

struct http_server;
struct http_request;

typedef void (*http_handler)(void *arg, struct http_request *r);

struct http_config {
    const char *host;          /* numeric IPv4 address */
    uint16_t port;             /* 0: any free port (see http_port) */
    size_t max_body;           /* bytes; larger bodies get 413 */
    unsigned max_connections;  /* in all (see above: the oldest sending headers makes room) */
    unsigned max_per_address;  /* from one client address; 0: no limit */
    unsigned header_timeout_s; /* 0: 30 */
    unsigned body_timeout_s;   /* 0: 300 */
    /* precheck(arg, r) — runs when r's headers are in (method, path, headers; no body yet);
     * it may answer r (http_respond*) to refuse it before its body is read, or leave it
     * for the handler. NULL: every request reaches the handler. */
    http_handler precheck;
};

/* http_start(loop, cfg, handler, arg, err) — listening when it returns; NULL with err set. */
struct http_server *http_start(struct loop *loop, const struct http_config *cfg,
                               http_handler handler, void *arg, struct errbuf *err);
/* http_stop(s) — closes every connection (close callbacks run, aborted) and the socket. */
void http_stop(struct http_server *s);
/* http_port(s) — the port actually bound. */
uint16_t http_port(const struct http_server *s);
/* http_timeout_ms(s) — how long the loop may sleep before the daemon needs a run (-1). */
int http_timeout_ms(struct http_server *s);
/* http_run(s) — lets the daemon do pending work (the loop calls it after each wakeup). */
void http_run(struct http_server *s);

const char *http_method(const struct http_request *r);
const char *http_path(const struct http_request *r);
/* http_header(r, name) / http_query(r, key) — NULL when absent. */
const char *http_header(const struct http_request *r, const char *name);
const char *http_query(const struct http_request *r, const char *key);
/* http_query_n(r, key, &len) — http_query with the decoded value's length: a value that
 * held an escaped NUL ("%00") is longer than its strlen. NULL when absent. */
const char *http_query_n(const struct http_request *r, const char *key, size_t *len);
/* http_query_string(r, out, size) — the query as received, re-encoded ("?a=1&b=x%20y", ""
 * when none): for passing a request on. false when it does not fit in size. */
bool http_query_string(const struct http_request *r, char *out, size_t size);
/* http_body(r, &len) — the request body, NUL-terminated ("" when none). */
const char *http_body(const struct http_request *r, size_t *len);
/* http_body_take(r, &len) — the body, NUL-terminated, now the caller's to free (NULL and 0
 * when there is none); r is left with an empty body. For work on another thread: the
 * request (and what http_body gave) is freed when its client leaves. */
char *http_body_take(struct http_request *r, size_t *len);

/* http_on_close(r, cb, ctx) — cb(ctx, aborted) runs once when the request is over: after
 * the answer went out, or when the client left first (aborted). r is invalid afterwards. */
void http_on_close(struct http_request *r, void (*cb)(void *ctx, bool aborted), void *ctx);

/* http_respond(r, status, content_type, body, len, header, value) — the whole answer; body
 * is copied. header/value: one extra header, or NULL. */
void http_respond(struct http_request *r, unsigned status, const char *content_type,
                  const char *body, size_t len, const char *header, const char *value);
/* http_respond_json(r, status, j) — j compact, with a newline; the reference is stolen. */
void http_respond_json(struct http_request *r, unsigned status, json_t *j);
/* http_respond_error(r, status, code, fmt, ...) — {"error": {"code", "message"}}. */
void http_respond_error(struct http_request *r, unsigned status, const char *code, const char *fmt,
                        ...) __attribute__((format(printf, 4, 5)));

/* http_respond_error_with(r, status, header, value, code, fmt, ...) — the same with one
 * extra header (Allow on a 405, WWW-Authenticate on a 401). */
void http_respond_error_with(struct http_request *r, unsigned status, const char *header,
                             const char *value, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Streaming (chunked): begin once, write any number of times, end once. */
void http_stream_begin(struct http_request *r, unsigned status, const char *content_type);
void http_stream_write(struct http_request *r, const char *data, size_t len);
void http_stream_end(struct http_request *r);
/* http_stream_pending(r) — bytes written to the stream and not yet sent to the client. */
size_t http_stream_pending(const struct http_request *r);
/* http_stream_abort(r) — drops what was not sent and closes the connection (a client that
 * does not read); the close callback runs now, aborted. */
void http_stream_abort(struct http_request *r);

/* http_reason(status) — "OK", "Not Found", ... for logs. */
const char *http_reason(unsigned status);

#endif
