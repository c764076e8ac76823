/*
 * http.c — libmicrohttpd behind the small interface of http.h.
 *
 * The daemon runs without threads of its own (MHD_USE_EPOLL): its epoll fd sits in our loop
 * and http_run() calls mhd.run(). A request whose answer is not ready is suspended; the
 * answer resumes it and is queued on the next access-handler call. Streams use a content
 * reader that suspends the connection whenever its buffer is empty. The first access-handler
 * call (headers in, no body read) runs the precheck; an answer queued there makes the daemon
 * skip the body and any "100 Continue". Connections are tracked from MHD's connection
 * notifications (struct http_conn) for the header and body timeouts and the full table.
 */
#include "service/http.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

/* libmicrohttpd is loaded when a server starts, not linked: Debian's build pulls in GnuTLS
 * and p11-kit, whose start-up would otherwise cost every `crucible run` about 2 ms. */
static struct {
    __typeof__(&MHD_add_response_header) add_response_header;
    __typeof__(&MHD_create_response_from_buffer) create_response_from_buffer;
    __typeof__(&MHD_create_response_from_callback) create_response_from_callback;
    __typeof__(&MHD_destroy_response) destroy_response;
    __typeof__(&MHD_get_connection_info) get_connection_info;
    __typeof__(&MHD_get_connection_values_n) get_connection_values_n;
    __typeof__(&MHD_get_daemon_info) get_daemon_info;
    __typeof__(&MHD_get_timeout) get_timeout;
    __typeof__(&MHD_lookup_connection_value) lookup_connection_value;
    __typeof__(&MHD_lookup_connection_value_n) lookup_connection_value_n;
    __typeof__(&MHD_queue_response) queue_response;
    __typeof__(&MHD_resume_connection) resume_connection;
    __typeof__(&MHD_run) run;
    __typeof__(&MHD_start_daemon) start_daemon;
    __typeof__(&MHD_stop_daemon) stop_daemon;
    __typeof__(&MHD_suspend_connection) suspend_connection;
} mhd;

#define MHD_SONAME "libmicrohttpd.so.12"

#define HTTP_CONN_SLACK 64

static int mhd_load(struct errbuf *err)
{
    static void *lib;
    static const char *const names[] = {"MHD_add_response_header",
                                        "MHD_create_response_from_buffer",
                                        "MHD_create_response_from_callback",
                                        "MHD_destroy_response",
                                        "MHD_get_connection_info",
                                        "MHD_get_connection_values_n",
                                        "MHD_get_daemon_info",
                                        "MHD_get_timeout",
                                        "MHD_lookup_connection_value",
                                        "MHD_lookup_connection_value_n",
                                        "MHD_queue_response",
                                        "MHD_resume_connection",
                                        "MHD_run",
                                        "MHD_start_daemon",
                                        "MHD_stop_daemon",
                                        "MHD_suspend_connection"};
    void **slots = (void **)&mhd;

    if (lib)
        return 0;
    if (!(lib = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL)))
        return errbuf_set(err, "cannot load %s (Debian package libmicrohttpd12): %s", MHD_SONAME,
                          dlerror());
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!(slots[i] = dlsym(lib, names[i]))) {
            errbuf_set(err, "%s lacks %s", MHD_SONAME, names[i]);
            dlclose(lib);
            lib = NULL;
            return -ENOENT;
        }
    return 0;
}

/* One client connection, from accept to close (MHD's socket context). While it waits for
 * the client (the headers of a request, or its body) it sits on the server's list for that
 * phase, oldest first: the sweep drops what overstayed, a full table drops the oldest one
 * still sending headers. While a request is being answered it is on no list. */
enum conn_phase { PHASE_HEADERS, PHASE_BODY, PHASE_BUSY, PHASE_DROPPED };

struct http_conn {
    struct http_server *srv;
    struct http_conn *prev, *next; /* on srv->phase_list[phase] */
    int fd;
    enum conn_phase phase;
    double since; /* when the phase began (CLOCK_MONOTONIC seconds) */
};

struct http_server {
    struct MHD_Daemon *d;
    struct loop *loop;
    int epfd;
    uint16_t port;
    size_t max_body;
    http_handler handler, precheck;
    void *arg;
    struct http_request *live; /* every request not yet completed (for http_stop) */
    unsigned max_connections;
    double header_timeout, body_timeout;
    unsigned nconn;    /* open connections (dropped ones until the daemon closed them) */
    unsigned ndropped; /* ... of which dropped */
    struct http_conn *head[2], *tail[2]; /* PHASE_HEADERS, PHASE_BODY: oldest first */
    bool trim; /* a large request or answer ended: give the heap back after this run */
};

/* A request whose body and answer together reach this many bytes leaves many freed blocks
 * behind (JSON trees, copies): once it is over, the heap is trimmed (malloc_trim), so the
 * server's resident memory returns near its baseline instead of keeping its peak. */
#define HTTP_TRIM_AFTER (1u << 20)

struct http_request {
    struct http_server *srv;
    struct http_request *prev, *next; /* srv->live */
    struct MHD_Connection *conn;
    char *method, *path;
    char *body;
    size_t len, cap;
    size_t traffic; /* body bytes received and answer bytes given (HTTP_TRIM_AFTER) */
    bool too_large;
    bool handled; /* the handler has been called */
    bool http11;  /* the client speaks HTTP/1.1 (may get an interim 100) */
    bool probed;  /* the client half-closed: only a hang-up or an error means it left */
    char *direct; /* a half-closed client's answer, written by us: [doff, dlen) to go */
    size_t dlen, doff;
    bool direct_done, direct_sent; /* ... it is over; it all went out */
    bool suspended;
    int watch_fd; /* the socket, watched for the client leaving while suspended or while its
                   * body arrives (see watch_upload); -1 */
    unsigned upload_kicks; /* on_upload_gone calls */
    bool aborted;
    struct MHD_Response *resp; /* an answer waiting to be queued */
    unsigned status;
    bool streaming, stream_ended;
    char *sbuf; /* stream bytes not yet sent: [soff, slen) */
    size_t slen, soff, scap;
    void (*on_close)(void *ctx, bool aborted);
    void *close_ctx;
    bool closed; /* on_close has run */
};

static void notify_close(struct http_request *r, bool aborted)
{
    if (r->closed)
        return;
    r->closed = true;
    if (r->on_close)
        r->on_close(r->close_ctx, aborted);
}

/* ---- connections: phases, timeouts, the full table ----------------------------------- */

static void conn_unlink(struct http_conn *c)
{
    struct http_server *s = c->srv;
    int l = (int)c->phase;

    if (c->phase != PHASE_HEADERS && c->phase != PHASE_BODY)
        return;
    if (c->prev)
        c->prev->next = c->next;
    else
        s->head[l] = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        s->tail[l] = c->prev;
    c->prev = c->next = NULL;
}

/* conn_enter(c, phase) — c moves to phase, which begins now. */
static void conn_enter(struct http_conn *c, enum conn_phase phase)
{
    struct http_server *s = c->srv;

    if (c->phase == PHASE_DROPPED || c->phase == phase)
        return;
    conn_unlink(c);
    c->phase = phase;
    c->since = util_now();
    if (phase == PHASE_HEADERS || phase == PHASE_BODY) {
        int l = (int)phase;
        c->prev = s->tail[l];
        if (s->tail[l])
            s->tail[l]->next = c;
        else
            s->head[l] = c;
        s->tail[l] = c;
    }
}

/* conn_drop(c) — ends a connection that is waiting for its client: the socket is shut
 * down, which wakes the daemon, which reads end-of-file and closes it. */
static void conn_drop(struct http_conn *c)
{
    if (c->phase == PHASE_DROPPED)
        return;
    conn_unlink(c);
    c->phase = PHASE_DROPPED;
    c->srv->ndropped++;
    if (c->fd >= 0)
        (void)shutdown(c->fd, SHUT_RDWR);
}

/* conn_of(mc) — the socket context of an MHD connection (NULL before it was made). */
static struct http_conn *conn_of(struct MHD_Connection *mc)
{
    const union MHD_ConnectionInfo *ci =
        mhd.get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return ci ? ci->socket_context : NULL;
}

/* sweep(s) — drops the connections whose headers or body took longer than allowed. */
static void sweep(struct http_server *s)
{
    double now = util_now();

    while (s->head[PHASE_HEADERS] && now - s->head[PHASE_HEADERS]->since >= s->header_timeout) {
        conn_drop(s->head[PHASE_HEADERS]);
    }
    while (s->head[PHASE_BODY] && now - s->head[PHASE_BODY]->since >= s->body_timeout) {
        conn_drop(s->head[PHASE_BODY]);
    }
}

/* next_deadline_ms(s) — milliseconds until the sweep has something to drop; -1: nothing. */
static int next_deadline_ms(const struct http_server *s)
{
    double now = util_now(), left = -1;

    if (s->head[PHASE_HEADERS])
        left = s->head[PHASE_HEADERS]->since + s->header_timeout - now;
    if (s->head[PHASE_BODY]) {
        double b = s->head[PHASE_BODY]->since + s->body_timeout - now;
        if (left < 0 || b < left)
            left = b;
    }
    if (s->head[PHASE_HEADERS] == NULL && s->head[PHASE_BODY] == NULL)
        return -1;
    return left <= 0 ? 0 : (int)(left * 1000) + 1;
}

/* on_connection — MHD's connection notifications: a new connection starts in the headers
 * phase; over the total limit, the oldest connection still sending headers makes room
 * (the new one itself when every other is busy with a request). */
static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct http_server *s = cls;
    struct http_conn *c = *socket_context;

    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (!c)
            return;
        conn_unlink(c);
        s->nconn--;
        if (c->phase == PHASE_DROPPED)
            s->ndropped--;
        free(c);
        *socket_context = NULL;
        return;
    }
    if (!(c = calloc(1, sizeof(*c)))) {
        const union MHD_ConnectionInfo *ci =
            mhd.get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (ci)
            (void)shutdown(ci->connect_fd, SHUT_RDWR);
        return;
    }
    {
        const union MHD_ConnectionInfo *ci =
            mhd.get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
        c->fd = ci ? ci->connect_fd : -1;
    }
    c->srv = s;
    c->phase = PHASE_BUSY;
    *socket_context = c;
    s->nconn++;
    conn_enter(c, PHASE_HEADERS);
    if (s->nconn - s->ndropped > s->max_connections && s->head[PHASE_HEADERS]) {
        conn_drop(s->head[PHASE_HEADERS]);
    }
}

/* ---- suspended requests and clients that leave ------------------------------------------ */

static void on_client_gone(void *arg, uint32_t events);

/* watch_events(r) — what the socket of a suspended request is watched for: first the
 * client's FIN (EPOLLRDHUP), then, once it was probed, only a hang-up or an error. */
static uint32_t watch_events(const struct http_request *r)
{
    return r->probed ? 0 : EPOLLRDHUP;
}

static void suspend(struct http_request *r)
{
    const union MHD_ConnectionInfo *ci;

    if (r->suspended)
        return;
    mhd.suspend_connection(r->conn);
    r->suspended = true;
    ci = mhd.get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci && loop_add(r->srv->loop, ci->connect_fd, watch_events(r), on_client_gone, r) == 0)
        r->watch_fd = ci->connect_fd;
}

static void resume(struct http_request *r)
{
    if (!r->suspended)
        return;
    if (r->watch_fd >= 0) {
        loop_del(r->srv->loop, r->watch_fd);
        r->watch_fd = -1;
    }
    r->suspended = false;
    mhd.resume_connection(r->conn);
}

static void stream_put(struct http_request *r, const char *data, size_t len);

/* on_client_gone — the socket of a suspended request saw the client's FIN, or hung up.
 * A FIN alone may be a half-close (the client sent everything and still reads): the
 * client is probed with bytes it must accept — an interim "100 Continue" before the
 * answer began, one space (JSON whitespace) inside a stream — and a client that has
 * really gone answers them with a reset, which shows as EPOLLHUP/EPOLLERR. */
static void on_client_gone(void *arg, uint32_t events)
{
    static const char interim[] = "HTTP/1.1 100 Continue\r\n\r\n";
    struct http_request *r = arg;

    if (!(events & (EPOLLHUP | EPOLLERR)) && !r->probed && r->http11) {
        r->probed = true;
        if (r->streaming) {
            stream_put(r, " ", 1); /* resumes; the watch comes back at the next suspend */
            return;
        }
        if (send(r->watch_fd, interim, sizeof(interim) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) ==
                (ssize_t)(sizeof(interim) - 1) &&
            loop_mod(r->srv->loop, r->watch_fd, watch_events(r)) == 0)
            return;
    }
    r->aborted = true;
    notify_close(r, true);
    resume(r); /* the daemon then closes the connection and frees the request */
}

/* on_upload_gone — the client hung up while its body was arriving. libmicrohttpd (0.9.75,
 * edge-triggered epoll) reads the data that came with the FIN, sees no further edge and
 * never reads the end of file: the connection and its partial body stayed until the 120 s
 * connection timeout (found by bench/soak: a partial body then an immediate close). Each
 * shutdown of our reading side wakes the daemon's epoll (a new edge), so it reads on, sees
 * the end and closes the connection (on_completed then drops this watch). The watch is
 * level-triggered: it fires again while the daemon still has data to read, at most
 * UPLOAD_KICKS times. Loop thread. */
#define UPLOAD_KICKS 256
static void on_upload_gone(void *arg, uint32_t events)
{
    struct http_request *r = arg;

    (void)events;
    (void)shutdown(r->watch_fd, SHUT_RD);
    if (++r->upload_kicks >= UPLOAD_KICKS) {
        loop_del(r->srv->loop, r->watch_fd);
        r->watch_fd = -1;
    }
}

/* watch_upload(r) — watches the socket of a request whose body is still to come. */
static void watch_upload(struct http_request *r)
{
    const union MHD_ConnectionInfo *ci;

    ci = mhd.get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci && loop_add(r->srv->loop, ci->connect_fd, EPOLLRDHUP, on_upload_gone, r) == 0)
        r->watch_fd = ci->connect_fd;
}

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct http_request *r = cls;
    size_t n;

    (void)pos;
    if (r->aborted)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    if (r->soff < r->slen) {
        n = r->slen - r->soff < max ? r->slen - r->soff : max;
        memcpy(buf, r->sbuf + r->soff, n);
        r->soff += n;
        if (r->soff == r->slen)
            r->soff = r->slen = 0;
        return (ssize_t)n;
    }
    if (r->stream_ended)
        return MHD_CONTENT_READER_END_OF_STREAM;
    suspend(r);
    return 0;
}

static enum MHD_Result queue_pending(struct http_request *r)
{
    enum MHD_Result ret = mhd.queue_response(r->conn, r->status, r->resp);

    mhd.destroy_response(r->resp);
    r->resp = NULL;
    return ret;
}

/* request_new(s, c, url, method, version) — the request whose headers just arrived; NULL
 * when out of memory. */
static struct http_request *request_new(struct http_server *s, struct MHD_Connection *c,
                                        const char *url, const char *method, const char *version)
{
    struct http_request *r = calloc(1, sizeof(*r));

    if (!r)
        return NULL;
    r->method = strdup(method);
    r->path = strdup(url);
    if (!r->method || !r->path) {
        free(r->method);
        free(r->path);
        free(r);
        return NULL;
    }
    r->srv = s;
    r->conn = c;
    r->watch_fd = -1;
    r->http11 = version && strcmp(version, "HTTP/1.1") == 0;
    r->next = s->live;
    if (s->live)
        s->live->prev = r;
    s->live = r;
    return r;
}

/* on_headers(s, r) — the first call for a request, before any of its body was read: the
 * precheck may answer at once, and so does a declared length over the cap (413). An
 * answer given here is sent without a "100 Continue", the body is never read, and the
 * connection closes after it. */
static enum MHD_Result on_headers(struct http_server *s, struct http_request *r)
{
    const char *cl = mhd.lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Length");
    struct http_conn *c = conn_of(r->conn);

    if (c)
        conn_enter(c, PHASE_BODY);
    if (s->precheck)
        s->precheck(s->arg, r);
    if (!r->resp && cl && strtoull(cl, NULL, 10) > s->max_body)
        http_respond_error(r, 413, "too_large", "the request body is larger than %zu bytes",
                           s->max_body);
    if (!r->resp) {
        if (cl && strtoull(cl, NULL, 10) > 0) /* a body to come: notice a client that leaves */
            watch_upload(r);
        return MHD_YES;
    }
    r->handled = true;
    if (c)
        conn_enter(c, PHASE_BUSY);
    return queue_pending(r);
}

/* on_body(s, r, data, len) — a piece of the body; one that grows past the cap (a chunked
 * body declares no length) is dropped, and the request is answered 413 once it ended. */
static enum MHD_Result on_body(struct http_server *s, struct http_request *r, const char *data,
                               size_t n)
{
    if (r->too_large)
        return MHD_YES;
    if (r->len + n > s->max_body) {
        r->too_large = true;
        free(r->body);
        r->body = NULL;
        r->len = r->cap = 0;
        return MHD_YES;
    }
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 4096;
        char *nb;
        while (cap < r->len + n + 1)
            cap *= 2;
        if (!(nb = realloc(r->body, cap)))
            return MHD_NO;
        r->body = nb;
        r->cap = cap;
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    r->traffic += n;
    r->body[r->len] = '\0';
    return MHD_YES;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *c, const char *url,
                                 const char *method, const char *version, const char *upload_data,
                                 size_t *upload_data_size, void **con_cls)
{
    struct http_server *s = cls;
    struct http_request *r = *con_cls;

    if (!r) {
        if (!(r = request_new(s, c, url, method, version)))
            return MHD_NO;
        *con_cls = r;
        return on_headers(s, r);
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        return on_body(s, r, upload_data, n);
    }
    if (!r->suspended && r->watch_fd >= 0) { /* the body is complete: the upload watch ends */
        loop_del(s->loop, r->watch_fd);
        r->watch_fd = -1;
    }
    if (r->aborted)
        return MHD_NO;
    if (r->resp)
        return queue_pending(r);
    if (!r->handled) {
        struct http_conn *hc = conn_of(c);
        if (hc)
            conn_enter(hc, PHASE_BUSY);
        r->handled = true;
        if (r->too_large)
            http_respond_error(r, 413, "too_large", "the request body is larger than %zu bytes",
                               s->max_body);
        else
            s->handler(s->arg, r);
        if (r->resp)
            return queue_pending(r);
    }
    suspend(r); /* the answer comes later */
    return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct http_request *r = *con_cls;

    (void)cls;
    if (!r)
        return;
    {
        struct http_conn *hc = conn_of(c);
        if (hc) /* a kept-alive connection waits for the next request's headers */
            conn_enter(hc, PHASE_HEADERS);
    }
    if (r->watch_fd >= 0)
        loop_del(r->srv->loop, r->watch_fd);
    if (r->prev)
        r->prev->next = r->next;
    else
        r->srv->live = r->next;
    if (r->next)
        r->next->prev = r->prev;
    notify_close(r, r->direct_done ? !r->direct_sent : toe != MHD_REQUEST_TERMINATED_COMPLETED_OK);
    if (r->traffic >= HTTP_TRIM_AFTER) /* after the daemon dropped its copy of the answer */
        r->srv->trim = true;
    if (r->resp)
        mhd.destroy_response(r->resp);
    free(r->method);
    free(r->path);
    free(r->body);
    free(r->sbuf);
    free(r->direct);
    free(r);
    *con_cls = NULL;
}

static void on_daemon(void *arg, uint32_t events)
{
    (void)events;
    http_run(arg);
}

struct http_server *http_start(struct loop *loop, const struct http_config *cfg,
                               http_handler handler, void *arg, struct errbuf *err)
{
    struct http_server *s = calloc(1, sizeof(*s));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(cfg->port)};
    const union MHD_DaemonInfo *di;

    if (!s)
        return errbuf_set(err, "out of memory"), NULL;
    if (mhd_load(err) < 0) {
        free(s);
        return NULL;
    }
    if (inet_pton(AF_INET, cfg->host, &sa.sin_addr) != 1) {
        errbuf_set(err, "'%s' is not an IPv4 address", cfg->host);
        free(s);
        return NULL;
    }
    s->loop = loop;
    s->max_body = cfg->max_body;
    s->handler = handler;
    s->precheck = cfg->precheck;
    s->arg = arg;
    s->max_connections = cfg->max_connections ? cfg->max_connections : 1;
    s->header_timeout = cfg->header_timeout_s ? cfg->header_timeout_s : 30;
    s->body_timeout = cfg->body_timeout_s ? cfg->body_timeout_s : 300;
    /* The daemon's own table is larger than ours by HTTP_CONN_SLACK: connections dropped to
     * make room stay in it until its next run closes them. Over it the daemon stops
     * accepting for a moment (the backlog waits) instead of refusing. */
    s->d = mhd.start_daemon(
        MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, cfg->port, NULL, NULL, on_access, s,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_CONNECTION_LIMIT,
        s->max_connections + HTTP_CONN_SLACK, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        cfg->max_per_address, MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120, MHD_OPTION_END);
    if (!s->d) {
        errbuf_set(err, "cannot listen on %s:%u: %s", cfg->host, cfg->port, strerror(errno));
        free(s);
        return NULL;
    }
    di = mhd.get_daemon_info(s->d, MHD_DAEMON_INFO_EPOLL_FD);
    s->epfd = di ? di->epoll_fd : -1;
    di = mhd.get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : cfg->port;
    if (s->epfd < 0 || loop_add(loop, s->epfd, EPOLLIN, on_daemon, s) < 0) {
        errbuf_set(err, "cannot watch the HTTP daemon");
        mhd.stop_daemon(s->d);
        free(s);
        return NULL;
    }
    return s;
}

void http_stop(struct http_server *s)
{
    if (!s)
        return;
    /* The daemon refuses to stop while connections are suspended: every pending request
     * ends as if its client had gone, and the daemon closes it on its next run. */
    for (struct http_request *r = s->live; r; r = r->next) {
        r->aborted = true;
        notify_close(r, true);
        resume(r);
    }
    mhd.run(s->d);
    loop_del(s->loop, s->epfd);
    mhd.stop_daemon(s->d);
    free(s);
}

uint16_t http_port(const struct http_server *s)
{
    return s->port;
}

int http_timeout_ms(struct http_server *s)
{
    MHD_UNSIGNED_LONG_LONG ms;
    int mine = next_deadline_ms(s), theirs;

    if (mhd.get_timeout(s->d, &ms) != MHD_YES)
        theirs = -1;
    else
        theirs = ms > 60000 ? 60000 : (int)ms;
    if (mine < 0)
        return theirs;
    return theirs < 0 || mine < theirs ? mine : theirs;
}

void http_run(struct http_server *s)
{
    sweep(s);
    mhd.run(s->d);
    if (s->trim) {
        s->trim = false;
        malloc_trim(0);
    }
}

const char *http_method(const struct http_request *r)
{
    return r->method;
}

const char *http_path(const struct http_request *r)
{
    return r->path;
}

const char *http_header(const struct http_request *r, const char *name)
{
    return mhd.lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *http_query(const struct http_request *r, const char *key)
{
    return mhd.lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *http_query_n(const struct http_request *r, const char *key, size_t *len)
{
    const char *v = NULL;

    *len = 0;
    if (mhd.lookup_connection_value_n(r->conn, MHD_GET_ARGUMENT_KIND, key, strlen(key), &v, len) !=
        MHD_YES)
        return NULL;
    return v;
}

struct query_out {
    char *out;
    size_t size, used;
    bool overflow;
};

static void query_put(struct query_out *q, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";

    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
        if (q->used + (plain ? 1 : 3) >= q->size) {
            q->overflow = true;
            return;
        }
        if (plain) {
            q->out[q->used++] = (char)c;
        } else {
            q->out[q->used++] = '%';
            q->out[q->used++] = hex[c >> 4];
            q->out[q->used++] = hex[c & 15];
        }
    }
}

static enum MHD_Result query_one(void *cls, enum MHD_ValueKind kind, const char *key,
                                 size_t key_size, const char *value, size_t value_size)
{
    struct query_out *q = cls;

    (void)kind;
    if (q->used + 1 >= q->size) {
        q->overflow = true;
        return MHD_NO;
    }
    q->out[q->used] = q->used == 0 ? '?' : '&';
    q->used++;
    query_put(q, key, key_size);
    if (value) {
        if (q->used + 1 < q->size)
            q->out[q->used++] = '=';
        query_put(q, value, value_size);
    }
    return q->overflow ? MHD_NO : MHD_YES;
}

bool http_query_string(const struct http_request *r, char *out, size_t size)
{
    struct query_out q = {out, size, 0, false};

    if (size == 0)
        return false;
    mhd.get_connection_values_n(r->conn, MHD_GET_ARGUMENT_KIND, query_one, &q);
    out[q.used < size ? q.used : size - 1] = '\0';
    return !q.overflow;
}

const char *http_body(const struct http_request *r, size_t *len)
{
    *len = r->len;
    return r->body ? r->body : "";
}

char *http_body_take(struct http_request *r, size_t *len)
{
    char *body = r->body;

    *len = r->len;
    r->body = NULL;
    r->len = r->cap = 0;
    return body;
}

void http_on_close(struct http_request *r, void (*cb)(void *ctx, bool aborted), void *ctx)
{
    r->on_close = cb;
    r->close_ctx = ctx;
}

/* set_response(r, status, resp) — the answer to queue; resumes a suspended request. */
static void set_response(struct http_request *r, unsigned status, struct MHD_Response *resp)
{
    if (!resp || r->resp || r->streaming) {
        if (resp)
            mhd.destroy_response(resp);
        return;
    }
    mhd.add_response_header(resp, "Server", "crucible");
    r->status = status;
    r->resp = resp;
    resume(r);
}

/* on_direct_writable — writes what is left of a half-closed client's answer; once it is out
 * (or the client turned out to have gone), the daemon is told to close the connection. */
static void on_direct_writable(void *arg, uint32_t events)
{
    struct http_request *r = arg;
    bool sent;

    while (r->doff < r->dlen) {
        ssize_t n =
            send(r->watch_fd, r->direct + r->doff, r->dlen - r->doff, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            r->doff += (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !(events & EPOLLERR))
            return; /* the rest when the socket is writable again */
        break;
    }
    sent = r->doff == r->dlen;
    free(r->direct);
    r->direct = NULL;
    r->direct_done = true;
    r->direct_sent = sent; /* on_completed tells the close callback (not now: the caller of
                            * http_respond may be the owner the callback frees) */
    r->aborted = true; /* on_access refuses: the daemon closes the connection, sending nothing */
    resume(r);
}

/* respond_direct(r, ...) — the answer of a half-closed (probed) client, written here rather
 * than by the daemon: libmicrohttpd 0.9.75 reads the client's end of file as soon as the
 * connection is resumed and closes it as aborted, racing its own answer (with three
 * half-closed clients at once about one answer in ten was lost). So the whole answer, with
 * "Connection: close", goes out on the socket from the loop; false when r is not such a
 * request (the daemon answers). */
static bool respond_direct(struct http_request *r, unsigned status, const char *content_type,
                           const char *body, size_t len, const char *header, const char *value)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f;
    int fd = r->watch_fd;

    if (!r->probed || !r->suspended || fd < 0 || r->resp || r->streaming || r->direct)
        return false;
    if (!(f = open_memstream(&buf, &size)))
        return false;
    fprintf(f, "HTTP/1.1 %u %s\r\nServer: crucible\r\nConnection: close\r\n", status,
            http_reason(status));
    if (content_type)
        fprintf(f, "Content-Type: %s\r\n", content_type);
    if (header)
        fprintf(f, "%s: %s\r\n", header, value);
    fprintf(f, "Content-Length: %zu\r\n\r\n", len);
    fwrite(body, 1, len, f);
    if (fclose(f) != 0 || !buf) {
        free(buf);
        return false;
    }
    loop_del(r->srv->loop, fd);
    if (loop_add(r->srv->loop, fd, EPOLLOUT, on_direct_writable, r) < 0) {
        free(buf);
        r->watch_fd = -1;
        return false;
    }
    r->direct = buf;
    r->dlen = size;
    r->doff = 0;
    r->status = status;
    on_direct_writable(r, 0);
    return true;
}

void http_respond(struct http_request *r, unsigned status, const char *content_type,
                  const char *body, size_t len, const char *header, const char *value)
{
    struct MHD_Response *resp;

    r->traffic += len;
    if (respond_direct(r, status, content_type, body, len, header, value))
        return;
    resp = mhd.create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (resp && content_type)
        mhd.add_response_header(resp, "Content-Type", content_type);
    if (resp && header)
        mhd.add_response_header(resp, header, value);
    set_response(r, status, resp);
}

/* respond_json(r, status, j, header, value) — http_respond_json with one extra header (or
 * NULL); j's reference is stolen. */
static void respond_json(struct http_request *r, unsigned status, json_t *j, const char *header,
                         const char *value)
{
    char *text =
        j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)) : NULL;

    json_decref(j);
    if (!text) {
        static const char oom[] =
            "{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}\n";
        http_respond(r, 500, "application/json", oom, sizeof(oom) - 1, NULL, NULL);
        return;
    }
    {
        size_t n = strlen(text);
        char *line = realloc(text, n + 2);
        if (line) {
            text = line;
            text[n++] = '\n';
            text[n] = '\0';
        }
        http_respond(r, status, "application/json", text, n, header, value);
    }
    free(text);
}

void http_respond_json(struct http_request *r, unsigned status, json_t *j)
{
    respond_json(r, status, j, NULL, NULL);
}

void http_respond_error(struct http_request *r, unsigned status, const char *code, const char *fmt,
                        ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    respond_json(r, status, json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg), NULL,
                 NULL);
}

void http_respond_error_with(struct http_request *r, unsigned status, const char *header,
                             const char *value, const char *code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    respond_json(r, status, json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg),
                 header, value);
}

void http_stream_begin(struct http_request *r, unsigned status, const char *content_type)
{
    struct MHD_Response *resp;

    if (r->resp || r->streaming)
        return;
    resp = mhd.create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_reader, r, NULL);
    if (resp && content_type)
        mhd.add_response_header(resp, "Content-Type", content_type);
    set_response(r, status, resp);
    r->streaming = resp != NULL;
}

void http_stream_write(struct http_request *r, const char *data, size_t len)
{
    if (!r->streaming || r->stream_ended || r->aborted)
        return;
    r->traffic += len;
    stream_put(r, data, len);
}

/* stream_put(r, data, len) — bytes for the stream, sent as soon as the client takes them. */
static void stream_put(struct http_request *r, const char *data, size_t len)
{
    if (r->soff) { /* drop what was already sent */
        memmove(r->sbuf, r->sbuf + r->soff, r->slen - r->soff);
        r->slen -= r->soff;
        r->soff = 0;
    }
    if (r->slen + len > r->scap) {
        size_t cap = r->scap ? r->scap : 4096;
        char *nb;
        while (cap < r->slen + len)
            cap *= 2;
        if (!(nb = realloc(r->sbuf, cap)))
            return;
        r->sbuf = nb;
        r->scap = cap;
    }
    memcpy(r->sbuf + r->slen, data, len);
    r->slen += len;
    resume(r);
}

size_t http_stream_pending(const struct http_request *r)
{
    return r->slen - r->soff;
}

void http_stream_abort(struct http_request *r)
{
    const union MHD_ConnectionInfo *ci;

    if (!r->streaming || r->aborted)
        return;
    r->aborted = true;
    free(r->sbuf);
    r->sbuf = NULL;
    r->slen = r->soff = r->scap = 0;
    /* The client is not reading: its socket may never turn writable again, so the reader
     * would not run to end the stream. A shut-down socket fails the daemon's next send. */
    ci = mhd.get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci)
        shutdown(ci->connect_fd, SHUT_RDWR);
    notify_close(r, true);
    resume(r);
}

void http_stream_end(struct http_request *r)
{
    if (!r->streaming || r->stream_ended)
        return;
    r->stream_ended = true;
    resume(r);
}

const char *http_reason(unsigned status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 413:
        return "Payload Too Large";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    default:
        return "";
    }
}
