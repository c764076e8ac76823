/*
 * keep.c — the wire between `crucible run` and `crucible keep` (keep.h), and the run's side.
 *
 * One request and one answer per connection, over a unix stream socket:
 *
 *   request  "CRK1" u32 length, then: build, digest (strings); loopback, writable root (u8);
 *            cpu and wall time (f64); memory, pids, output, disk (u64); argv, env (u32 count,
 *            strings); files (u32 count, each a destination string and a u32 mode); stdin,
 *            fork server (u8). Descriptors, with the frame's first bytes: stdin when there is one,
 * then one per file, in order. answer   "CRK1" u64 length, then 'N' and a reason (declined: nothing
 * ran), or 'R' and the result record: status, exit code, signal, limit (u32/i32), cpu and wall time
 *            (f64), peak memory (u64), stdout and stderr (u64 length, bytes, u8 truncated),
 *            image, image name, host os, message (strings), fork server (u8: "path").
 *
 * Numbers are in the machine's byte order: both ends are one build on one machine (the build
 * string is checked first). A string is a u32 length, its bytes and a NUL, and must hold no
 * other NUL.
 */
#include "cli/keep.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "commit.h" /* build/gen/commit.h: CRUCIBLE_COMMIT */
#include "version.h"

#define MAGIC "CRK1"

const char *keep_build(void)
{
    return CRUCIBLE_VERSION " " CRUCIBLE_COMMIT;
}

bool keep_socket_path(char *buf, size_t size)
{
    const char *env = getenv("CRUCIBLE_KEEP"), *xdg = getenv("XDG_RUNTIME_DIR");
    int n;

    if (env && *env)
        n = strcmp(env, "off") == 0 ? -1 : snprintf(buf, size, "%s", env);
    else if (geteuid() == 0)
        n = snprintf(buf, size, "/run/crucible/keep.sock");
    else if (xdg && xdg[0] == '/')
        n = snprintf(buf, size, "%s/crucible/keep.sock", xdg);
    else
        n = -1;
    return n > 0 && (size_t)n < size && (size_t)n < sizeof(((struct sockaddr_un *)0)->sun_path);
}

/* ---- frames ---- */

struct wbuf {
    char *p;
    size_t len, cap;
    bool oom;
};

static void put(struct wbuf *w, const void *data, size_t n)
{
    if (w->oom)
        return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->len + n)
            cap *= 2;
        char *p = realloc(w->p, cap);
        if (!p) {
            w->oom = true;
            return;
        }
        w->p = p;
        w->cap = cap;
    }
    memcpy(w->p + w->len, data, n);
    w->len += n;
}

static void put_u8(struct wbuf *w, uint8_t v)
{
    put(w, &v, sizeof(v));
}
static void put_u32(struct wbuf *w, uint32_t v)
{
    put(w, &v, sizeof(v));
}
static void put_u64(struct wbuf *w, uint64_t v)
{
    put(w, &v, sizeof(v));
}
static void put_f64(struct wbuf *w, double v)
{
    put(w, &v, sizeof(v));
}
static void put_str(struct wbuf *w, const char *s)
{
    size_t n = strlen(s);
    put_u32(w, (uint32_t)n);
    put(w, s, n + 1);
}

struct rbuf {
    const char *p;
    size_t len, off;
    bool bad;
};

static const void *get(struct rbuf *r, size_t n)
{
    const void *at;

    if (r->bad || n > r->len - r->off) {
        r->bad = true;
        return NULL;
    }
    at = r->p + r->off;
    r->off += n;
    return at;
}

static uint8_t get_u8(struct rbuf *r)
{
    const uint8_t *v = get(r, 1);
    return v ? *v : 0;
}
static uint32_t get_u32(struct rbuf *r)
{
    uint32_t v = 0;
    const void *at = get(r, sizeof(v));
    if (at)
        memcpy(&v, at, sizeof(v));
    return v;
}
static uint64_t get_u64(struct rbuf *r)
{
    uint64_t v = 0;
    const void *at = get(r, sizeof(v));
    if (at)
        memcpy(&v, at, sizeof(v));
    return v;
}
static double get_f64(struct rbuf *r)
{
    double v = 0;
    const void *at = get(r, sizeof(v));
    if (at)
        memcpy(&v, at, sizeof(v));
    return v;
}
/* A string in the frame, NUL-terminated where it lies, or NULL (r->bad). */
static const char *get_str(struct rbuf *r)
{
    uint32_t n = get_u32(r);
    const char *s = r->bad || n == UINT32_MAX ? NULL : get(r, (size_t)n + 1);

    if (s && (s[n] != '\0' || memchr(s, '\0', n))) {
        r->bad = true;
        s = NULL;
    }
    return s;
}

/* read_all(fd, p, n) — n bytes, or -errno (-EPIPE: the peer closed first). */
static int read_all(int fd, char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -errno : -EPIPE;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* ---- the keeper's side ---- */

void keep_request_release(struct keep_request *req)
{
    for (int i = 0; i < req->nfds; i++)
        close(req->fds[i]);
    req->nfds = 0;
    free(req->argv);
    free(req->env);
    free(req->files);
    free(req->frame);
    memset(req, 0, sizeof(*req));
    req->stdin_fd = -1;
}

/* strings(r, out) — a u32 count of strings into a NULL-terminated array of pointers into
 * the frame. 0 or -1 (malformed, or out of memory). */
static int strings(struct rbuf *r, char ***out)
{
    uint32_t n = get_u32(r);
    char **v;

    if (r->bad || n > (r->len - r->off) / 5) /* each string takes 5 bytes at least */
        return -1;
    v = calloc((size_t)n + 1, sizeof(*v));
    if (!v)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        if (!(v[i] = (char *)get_str(r))) {
            free(v);
            return -1;
        }
    *out = v;
    return 0;
}

static int parse_request(struct keep_request *req, struct rbuf *r, char *why, size_t whysize)
{
    struct sandbox_limits *l = &req->limits;
    uint32_t nfiles;
    int next = 0;

    req->build = get_str(r);
    if (!req->build || strcmp(req->build, keep_build()) != 0)
        return snprintf(why, whysize, "another build of crucible (%s; the keeper is %s)",
                        req->build ? req->build : "?", keep_build()),
               -1;
    req->digest = get_str(r);
    l->loopback = get_u8(r) != 0;
    l->writable_root = get_u8(r) != 0;
    l->cpu_time = get_f64(r);
    l->wall_time = get_f64(r);
    l->memory_mb = get_u64(r);
    l->pids = get_u64(r);
    l->output_kb = get_u64(r);
    l->disk_mb = get_u64(r);
    if (r->bad || strings(r, &req->argv) < 0 || strings(r, &req->env) < 0)
        return snprintf(why, whysize, "a malformed request"), -1;
    nfiles = get_u32(r);
    if (r->bad || nfiles > KEEP_MAX_FDS)
        return snprintf(why, whysize, "a malformed request"), -1;
    req->files = calloc(nfiles ? nfiles : 1, sizeof(*req->files));
    if (!req->files)
        return snprintf(why, whysize, "out of memory"), -1;
    for (uint32_t i = 0; i < nfiles; i++) {
        req->files[i].dest = get_str(r);
        req->files[i].mode = (mode_t)get_u32(r);
        req->files[i].fd = -1;
    }
    req->nfiles = nfiles;
    bool has_stdin = get_u8(r) != 0;
    req->fork_server = get_u8(r) != 0;
    if (r->bad || r->off != r->len || !req->argv[0])
        return snprintf(why, whysize, "a malformed request"), -1;
    if ((size_t)req->nfds != nfiles + (has_stdin ? 1 : 0))
        return snprintf(why, whysize, "a request with %d descriptors for %u files%s", req->nfds,
                        nfiles, has_stdin ? " and stdin" : ""),
               -1;
    if (has_stdin)
        req->stdin_fd = req->fds[next++];
    for (uint32_t i = 0; i < nfiles; i++)
        req->files[i].fd = req->fds[next++];
    return 0;
}

int keep_request_read(int fd, struct keep_request *req, char *why, size_t whysize)
{
    char head[8], cbuf[CMSG_SPACE(sizeof(int) * KEEP_MAX_FDS)];
    struct iovec iov = {.iov_base = head, .iov_len = sizeof(head)};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
    struct rbuf r;
    uint32_t len;
    ssize_t n;
    int e;
    memset(req, 0, sizeof(*req));
    req->stdin_fd = -1;
    memset(cbuf, 0, sizeof(cbuf));
    do
        n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_WAITALL);
    while (n < 0 && errno == EINTR);
    /* Descriptors come only with a message received: a failed call leaves the control buffer
     * as it was. */
    for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            for (int i = 0; i < k; i++) {
                int got;
                memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                if (req->nfds < KEEP_MAX_FDS)
                    req->fds[req->nfds++] = got;
                else
                    close(got);
            }
        }
    if (n != (ssize_t)sizeof(head) || (mh.msg_flags & MSG_CTRUNC)) {
        snprintf(why, whysize, "%s",
                 n < 0                       ? strerror(errno)
                 : mh.msg_flags & MSG_CTRUNC ? "too many descriptors"
                                             : "a short request");
        return -1;
    }
    memcpy(&len, head + 4, sizeof(len));
    if (memcmp(head, MAGIC, 4) != 0 || len > KEEP_REQUEST_MAX) {
        snprintf(why, whysize, "%s",
                 len > KEEP_REQUEST_MAX ? "an oversized request" : "not a request");
        return -1;
    }
    req->frame = malloc(len ? len : 1);
    if (!req->frame)
        return snprintf(why, whysize, "out of memory"), -1;
    if ((e = read_all(fd, req->frame, len)) < 0)
        return snprintf(why, whysize, "%s", e == -EPIPE ? "a short request" : strerror(-e)), -1;
    r = (struct rbuf){.p = req->frame, .len = len};
    return parse_request(req, &r, why, whysize);
}

static int send_frame(int fd, struct wbuf *w)
{
    uint64_t len = w->len - 12;

    if (w->oom)
        return -ENOMEM;
    memcpy(w->p + 4, &len, sizeof(len));
    return util_send_all(fd, w->p, w->len);
}

static void frame_start(struct wbuf *w)
{
    put(w, MAGIC, 4);
    put_u64(w, 0); /* the length, set by send_frame */
}

int keep_decline(int fd, const char *why)
{
    struct wbuf w = {0};
    int r;

    frame_start(&w);
    put_u8(&w, 'N');
    put_str(&w, why);
    r = send_frame(fd, &w);
    free(w.p);
    return r;
}

static void put_stream(struct wbuf *w, const struct result_stream *st)
{
    put_u64(w, st->len);
    if (st->len)
        put(w, st->data, st->len);
    put_u8(w, st->truncated);
}

int keep_answer(int fd, const struct result *res)
{
    struct wbuf w = {0};
    int r;

    frame_start(&w);
    put_u8(&w, 'R');
    put_u32(&w, (uint32_t)res->status);
    put_u32(&w, (uint32_t)res->exit_code);
    put_u32(&w, (uint32_t)res->signal);
    put_u32(&w, (uint32_t)res->limit);
    put_f64(&w, res->cpu_time);
    put_f64(&w, res->wall_time);
    put_u64(&w, res->memory_kb);
    put_stream(&w, &res->out);
    put_stream(&w, &res->err);
    put_str(&w, res->image);
    put_str(&w, res->image_name);
    put_str(&w, res->host_os);
    put_str(&w, res->message);
    put_u8(&w, res->fork_server);
    r = send_frame(fd, &w);
    free(w.p);
    return r;
}

/* ---- the run's side ---- */

/* owned_socket(path, why, whysize) — the socket and its directory belong to this user, and
 * the directory is closed to others: nobody else can have put a keeper there. */
static bool owned_socket(const char *path, char *why, size_t whysize)
{
    char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
    struct stat st;
    char *slash;

    snprintf(dir, sizeof(dir), "%s", path);
    slash = strrchr(dir, '/');
    if (slash == dir)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof(dir), ".");
    if (lstat(path, &st) < 0)
        return snprintf(why, whysize, "no keeper at %s (%s)", path, strerror(errno)), false;
    if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
        return snprintf(why, whysize, "%s is not a socket of this user's", path), false;
    if (stat(dir, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022))
        return snprintf(why, whysize, "%s is not a directory only this user can write to", dir),
               false;
    return true;
}

static int connect_keeper(const char *path, char *why, size_t whysize)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct ucred cred;
    socklen_t clen = sizeof(cred);
    int fd;

    if (!owned_socket(path, why, whysize))
        return -1;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return snprintf(why, whysize, "socket: %s", strerror(errno)), -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        snprintf(why, whysize, "no keeper at %s (%s)", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 || cred.uid != geteuid()) {
        snprintf(why, whysize, "the keeper at %s is not this user's", path);
        close(fd);
        return -1;
    }
    return fd;
}

static void put_request(struct wbuf *w, const struct keep_run *run)
{
    const struct sandbox_limits *l = run->limits;
    uint32_t n;

    put(w, MAGIC, 4);
    put_u32(w, 0); /* the length, below */
    put_str(w, keep_build());
    put_str(w, run->digest);
    put_u8(w, l->loopback);
    put_u8(w, l->writable_root);
    put_f64(w, l->cpu_time);
    put_f64(w, l->wall_time);
    put_u64(w, l->memory_mb);
    put_u64(w, l->pids);
    put_u64(w, l->output_kb);
    put_u64(w, l->disk_mb);
    for (n = 0; run->argv[n]; n++)
        ;
    put_u32(w, n);
    for (uint32_t i = 0; i < n; i++)
        put_str(w, run->argv[i]);
    for (n = 0; run->env && run->env[n]; n++)
        ;
    put_u32(w, n);
    for (uint32_t i = 0; i < n; i++)
        put_str(w, run->env[i]);
    put_u32(w, (uint32_t)run->nfiles);
    for (size_t i = 0; i < run->nfiles; i++) {
        put_str(w, run->files[i].dest);
        put_u32(w, (uint32_t)run->files[i].mode);
    }
    put_u8(w, run->stdin_fd >= 0);
    put_u8(w, run->fork_server);
    if (!w->oom) {
        uint32_t len = (uint32_t)(w->len - 8);
        memcpy(w->p + 4, &len, sizeof(len));
    }
}

static int send_request(int fd, const struct keep_run *run, const struct wbuf *w)
{
    int fds[KEEP_MAX_FDS], nfds = 0;
    ssize_t n;

    if (run->stdin_fd >= 0)
        fds[nfds++] = run->stdin_fd;
    for (size_t i = 0; i < run->nfiles; i++)
        fds[nfds++] = run->files[i].fd;
    n = util_send_fds(fd, w->p, w->len, fds, nfds); /* the descriptors with the first bytes */
    if (n < 0)
        return (int)n;
    return util_send_all(fd, w->p + n, w->len - (size_t)n);
}

static int get_stream(struct rbuf *r, struct result_stream *st)
{
    uint64_t n = get_u64(r);
    const char *d = r->bad ? NULL : get(r, n);

    if (!d)
        return -1;
    free(st->data);
    st->data = malloc(n + 1);
    if (!st->data)
        return -1;
    memcpy(st->data, d, n);
    st->data[n] = '\0';
    st->len = n;
    st->truncated = get_u8(r) != 0;
    return r->bad ? -1 : 0;
}

static void copy_str(char *dst, size_t size, const char *s)
{
    snprintf(dst, size, "%s", s ? s : "");
}

/* parse_answer(frame, len, res, why, whysize) — KEEP_ANSWERED or KEEP_DECLINED, or -1. */
static int parse_answer(const char *frame, size_t len, struct result *res, char *why,
                        size_t whysize)
{
    struct rbuf r = {.p = frame, .len = len};
    uint8_t kind = get_u8(&r);

    if (kind == 'N') {
        const char *s = get_str(&r);
        if (!s)
            return -1;
        snprintf(why, whysize, "the keeper declined: %s", s);
        return KEEP_DECLINED;
    }
    if (kind != 'R')
        return -1;
    res->status = (enum result_status)get_u32(&r);
    res->exit_code = (int)get_u32(&r);
    res->signal = (int)get_u32(&r);
    res->limit = (enum result_limit)get_u32(&r);
    res->cpu_time = get_f64(&r);
    res->wall_time = get_f64(&r);
    res->memory_kb = get_u64(&r);
    if (r.bad || res->status > RESULT_SANDBOX_ERROR || res->limit > RESULT_LIMIT_WALL ||
        get_stream(&r, &res->out) < 0 || get_stream(&r, &res->err) < 0)
        return -1;
    const char *image = get_str(&r), *name = get_str(&r), *os = get_str(&r), *msg = get_str(&r);
    res->fork_server = get_u8(&r) != 0;
    if (r.bad || r.off != r.len)
        return -1;
    copy_str(res->image, sizeof(res->image), image);
    copy_str(res->image_name, sizeof(res->image_name), name);
    copy_str(res->host_os, sizeof(res->host_os), os);
    copy_str(res->message, sizeof(res->message), msg);
    return KEEP_ANSWERED;
}

/* await(fd, stop_fd, limits) — waits for the answer to be readable. The stop fd turning
 * readable tells the keeper (our half of the connection closed: its cancel) and leaves a few
 * seconds for its answer; so does a keeper silent well past the wall-time limit. 0, or -1
 * when no answer came. */
static int await(int fd, int stop_fd, const struct sandbox_limits *l)
{
    struct timespec now;
    double deadline;
    bool stopped = false;

    clock_gettime(CLOCK_MONOTONIC, &now);
    deadline = (double)now.tv_sec + now.tv_nsec / 1e9 + l->wall_time + 30;
    for (;;) {
        struct pollfd pf[2] = {{.fd = fd, .events = POLLIN}, {.fd = stop_fd, .events = POLLIN}};
        double left;
        int r;

        clock_gettime(CLOCK_MONOTONIC, &now);
        left = deadline - ((double)now.tv_sec + now.tv_nsec / 1e9);
        if (left <= 0) {
            if (stopped)
                return -1;
            shutdown(fd, SHUT_WR); /* the keeper's cancel */
            stopped = true;
            deadline += 5;
            continue;
        }
        r = poll(pf, stopped || stop_fd < 0 ? 1 : 2, (int)(left * 1000) + 1);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r > 0 && pf[0].revents)
            return 0;
        if (r > 0 && !stopped && (pf[1].revents & POLLIN)) {
            shutdown(fd, SHUT_WR);
            stopped = true;
            clock_gettime(CLOCK_MONOTONIC, &now);
            deadline = (double)now.tv_sec + now.tv_nsec / 1e9 + 5;
        }
    }
}

enum keep_outcome keep_try(const char *path, const struct keep_run *run, int stop_fd,
                           struct result *res, char *why, size_t whysize)
{
    struct wbuf w = {0};
    char head[12], *frame = NULL;
    uint64_t len;
    int fd, r;

    if (run->nfiles + (run->stdin_fd >= 0) > KEEP_MAX_FDS)
        return snprintf(why, whysize, "more files than one request carries"), KEEP_DECLINED;
    put_request(&w, run);
    if (w.oom || w.len - 8 > KEEP_REQUEST_MAX) {
        free(w.p);
        return snprintf(why, whysize, "the request is too large for a keeper"), KEEP_DECLINED;
    }
    fd = connect_keeper(path, why, whysize);
    if (fd < 0) {
        free(w.p);
        return KEEP_DECLINED;
    }
    r = send_request(fd, run, &w);
    free(w.p);
    if (r < 0) {
        /* Nothing of a request cut short runs: the keeper reads it whole first. */
        snprintf(why, whysize, "cannot send the run to the keeper: %s", strerror(-r));
        close(fd);
        return KEEP_DECLINED;
    }
    if (await(fd, stop_fd, run->limits) < 0 || read_all(fd, head, sizeof(head)) < 0 ||
        memcmp(head, MAGIC, 4) != 0) {
        close(fd);
        result_fail(res, "the keeper at %s did not answer", path);
        return KEEP_FAILED;
    }
    memcpy(&len, head + 4, sizeof(len));
    /* At most both streams at the output limit, and the record's strings. */
    if (len > 2 * (run->limits->output_kb * 1024 + 1) + (1u << 20) ||
        !(frame = malloc(len ? len : 1)) || read_all(fd, frame, len) < 0 ||
        (r = parse_answer(frame, len, res, why, whysize)) < 0) {
        free(frame);
        close(fd);
        result_fail(res, "the keeper at %s answered with a malformed record", path);
        return KEEP_FAILED;
    }
    free(frame);
    close(fd);
    return (enum keep_outcome)r;
}
