/*
 * http_client.h — one HTTP/1.1 request to a crucible server over TCP, for the CLI's
 * `crucible session` (a person trying sessions by hand, a shell script). One connection per
 * request ("Connection: close"), the whole answer read into memory up to a bound; answers
 * with Content-Length, chunked, or closed by the server are all read.
 */
#ifndef CRUCIBLE_HTTP_CLIENT_H
#define CRUCIBLE_HTTP_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define HTTP_CLIENT_MAX_ANSWER ((size_t)1 << 30) /* bytes of an answer's body at most */

struct http_client_request {
    const char *host; /* numeric IPv4 address or a name getaddrinfo resolves */
    const char *port;
    const char *method;
    const char *target;       /* "/v1/sessions?x=y", already escaped */
    const char *token;        /* bearer token, or NULL */
    const char *content_type; /* of the body, or NULL */
    const void *body;
    size_t len;
    double timeout_s; /* for the whole exchange; 0: none */
};

struct http_client_answer {
    unsigned status;
    char content_type[128];
    char *body; /* NUL-terminated (not counted in len); the caller frees */
    size_t len;
};

/* http_client_do(req, ans, err) — sends req and reads the whole answer into ans. 0, or -errno
 * with err saying what failed (cannot connect, a malformed or too long answer, a timeout). */
int http_client_do(const struct http_client_request *req, struct http_client_answer *ans,
                   struct errbuf *err);

/* http_client_escape(s, out, size) — s percent-encoded for a query value (all but
 * unreserved characters and '/'); false when it does not fit in size. */
bool http_client_escape(const char *s, char *out, size_t size);

#endif
