/*
 * http_client.c — one HTTP/1.1 request over TCP (see http_client.h). Written for answers from
 * crucible serve: the request says "Connection: close", the answer is read to the end of the
 * connection (bounded), interim 1xx answers are skipped, then the body is taken by its
 * Content-Length, or de-chunked.
 */
#include "cli/http_client.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define HEADER_MAX (64u << 10)

bool http_client_escape(const char *s, char *out, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;

    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     strchr("-._~/", c);
        if (n + (plain ? 1 : 3) >= size)
            return false;
        if (plain) {
            out[n++] = (char)c;
        } else {
            out[n++] = '%';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        }
    }
    out[n] = '\0';
    return true;
}

/* dial(req, err) — a connected socket with the exchange's timeout, or -errno. */
static int dial(const struct http_client_request *req, struct errbuf *err)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai, *p;
    int fd = -1, r = getaddrinfo(req->host, req->port, &hints, &ai);

    if (r != 0)
        return errbuf_set(err, "cannot resolve '%s': %s", req->host, gai_strerror(r)), -EINVAL;
    for (p = ai; p; p = p->ai_next) {
        fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
        if (fd < 0)
            continue;
        if (req->timeout_s > 0) {
            struct timeval tv = {
                .tv_sec = (time_t)req->timeout_s,
                .tv_usec = (suseconds_t)((req->timeout_s - (double)(time_t)req->timeout_s) * 1e6)};
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        }
        if (connect(fd, p->ai_addr, p->ai_addrlen) == 0)
            break;
        r = -errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd < 0)
        return errbuf_set(err, "cannot connect to %s:%s: %s (is 'crucible serve' running?)",
                          req->host, req->port, strerror(r ? -r : ECONNREFUSED)),
               r ? r : -ECONNREFUSED;
    return fd;
}

/* read_all(fd, &buf, &len) — everything until the server closes, at most the bound. */
static int read_all(int fd, char **buf, size_t *len)
{
    size_t cap = 16384, n = 0;
    char *b = malloc(cap + 1);

    if (!b)
        return -ENOMEM;
    for (;;) {
        ssize_t got;
        if (n == cap) {
            char *nb;
            if (cap >= HEADER_MAX + HTTP_CLIENT_MAX_ANSWER) {
                free(b);
                return -EFBIG;
            }
            cap *= 2;
            if (!(nb = realloc(b, cap + 1))) {
                free(b);
                return -ENOMEM;
            }
            b = nb;
        }
        got = recv(fd, b + n, cap - n, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
            free(b);
            return e;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

/* header_value(head, name) — the value of header name in the header block head (lines ended
 * by CRLF), copied into out; false when absent. */
static bool header_value(const char *head, const char *name, char *out, size_t size)
{
    size_t nl = strlen(name);

    for (const char *line = strstr(head, "\r\n"); line && line[2];
         line = strstr(line + 2, "\r\n")) {
        const char *l = line + 2, *end = strstr(l, "\r\n");
        if (!end || (size_t)(end - l) <= nl || strncasecmp(l, name, nl) != 0 || l[nl] != ':')
            continue;
        l += nl + 1;
        while (*l == ' ' || *l == '\t')
            l++;
        snprintf(out, size, "%.*s", (int)(end - l), l);
        return true;
    }
    return false;
}

/* dechunk(p, n, out, outlen) — a chunked body (n bytes at p) into a new buffer; -EPROTO
 * when malformed or cut short. */
static int dechunk(const char *p, size_t n, char **out, size_t *outlen)
{
    char *b = malloc(n + 1), *end;
    size_t o = 0;

    if (!b)
        return -ENOMEM;
    for (;;) {
        const char *crlf = memmem(p, n, "\r\n", 2);
        unsigned long long size;
        if (!crlf)
            break;
        size = strtoull(p, &end, 16);
        if (end == p)
            break;
        n -= (size_t)(crlf + 2 - p);
        p = crlf + 2;
        if (size == 0) {
            b[o] = '\0';
            *out = b;
            *outlen = o;
            return 0;
        }
        if (size > n || n - size < 2)
            break;
        memcpy(b + o, p, (size_t)size);
        o += (size_t)size;
        p += size + 2;
        n -= (size_t)size + 2;
    }
    free(b);
    return -EPROTO;
}

int http_client_do(const struct http_client_request *req, struct http_client_answer *ans,
                   struct errbuf *err)
{
    char head[4096], value[64], *raw = NULL, *hdr;
    size_t raw_len = 0, hlen;
    const char *p, *body;
    int fd, r, n;

    memset(ans, 0, sizeof(ans[0]));
    n = snprintf(head, sizeof(head),
                 "%s %s HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\nContent-Length: %zu\r\n"
                 "%s%s%s%s%s%s\r\n",
                 req->method, req->target, req->host, req->port, req->len,
                 req->content_type ? "Content-Type: " : "",
                 req->content_type ? req->content_type : "", req->content_type ? "\r\n" : "",
                 req->token ? "Authorization: Bearer " : "", req->token ? req->token : "",
                 req->token ? "\r\n" : "");
    if (n < 0 || (size_t)n >= sizeof(head))
        return errbuf_set(err, "the request's target is too long"), -E2BIG;
    if ((fd = dial(req, err)) < 0)
        return fd;
    if ((r = util_send_all(fd, head, (size_t)n)) < 0 ||
        (req->len && (r = util_send_all(fd, req->body, req->len)) < 0) ||
        (r = read_all(fd, &raw, &raw_len)) < 0) {
        close(fd);
        return errbuf_set(err, "talking to %s:%s: %s", req->host, req->port, strerror(-r)), r;
    }
    close(fd);
    /* skip interim answers (100 Continue) */
    for (p = raw;;) {
        const char *end = strstr(p, "\r\n\r\n");
        unsigned status;
        if (!end || sscanf(p, "HTTP/1.%*u %u", &status) != 1) {
            free(raw);
            return errbuf_set(err, "%s:%s did not answer HTTP", req->host, req->port), -EPROTO;
        }
        if (status >= 200) {
            ans->status = status;
            hlen = (size_t)(end + 4 - p);
            body = end + 4;
            break;
        }
        p = end + 4;
    }
    if (!(hdr = strndup(p, hlen))) {
        free(raw);
        return errbuf_set(err, "out of memory"), -ENOMEM;
    }
    header_value(hdr, "Content-Type", ans->content_type, sizeof(ans->content_type));
    raw_len -= (size_t)(body - raw);
    if (header_value(hdr, "Transfer-Encoding", value, sizeof(value)) &&
        strcasecmp(value, "chunked") == 0) {
        r = dechunk(body, raw_len, &ans->body, &ans->len);
    } else {
        size_t take = raw_len;
        unsigned long long cl;
        if (header_value(hdr, "Content-Length", value, sizeof(value)) &&
            sscanf(value, "%llu", &cl) == 1 && cl < take)
            take = (size_t)cl;
        r = (ans->body = malloc(take + 1)) ? 0 : -ENOMEM;
        if (r == 0) {
            memcpy(ans->body, body, take);
            ans->body[take] = '\0';
            ans->len = take;
        }
    }
    free(hdr);
    free(raw);
    if (r < 0)
        return errbuf_set(err, "a malformed answer from %s:%s", req->host, req->port), r;
    return 0;
}
