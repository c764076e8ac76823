/*
 * gateway.c — forwarding job requests to workers through Redis Streams (gateway.h).
 *
 * A job lives in a table keyed by its sequence number until its first answer. It is
 * reference-counted: the table holds one reference until the answer, the HTTP request one
 * until its close callback, the send queue one while the job waits in it (handed to the
 * sender while it writes the job to the broker).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <unistd.h>

#include "cluster/gateway.h"

#define BUCKETS           4096
#define CONNECT_TIMEOUT_S 2.0
#define POLL_EVERY_S      1.0
#define READ_BLOCK_MS     "500"

struct gw_job {
    uint64_t seq;
    int refs;
    bool queued, answered;
    struct gw_job *hnext, *qnext;
    struct gateway *g;
    struct http_request *r; /* NULL once its client left */
    const char *route;
    double t0;
    enum job_priority prio;
    char *body;
    size_t len;
    char ctype[128];
};

struct gw_reply {
    uint64_t seq;
    unsigned status;
    char ctype[128];
    char *body;
    size_t len;
    struct gw_reply *next;
};

struct gateway {
    struct gateway_config cfg;
    struct loop *loop;
    int efd;
    char id[64], reply_stream[96], where[320];
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct gw_job *table[BUCKETS];
    struct gw_job *qhead, **qtail;
    struct gw_reply *replies;
    uint64_t next_seq;
    bool stop;
    pthread_t sender, reader;
    bool sender_started, reader_started;
    struct gateway_stats st; /* under lock */
    char run_id[64];         /* the broker's, at the reader's last look */
};

static void job_unref(struct gw_job *j)
{
    if (--j->refs == 0) {
        free(j->body);
        free(j);
    }
}

/* queue_push(g, j) — j waits to be sent, holding a reference. Locked. */
static void queue_push(struct gateway *g, struct gw_job *j)
{
    j->refs++;
    j->queued = true;
    j->qnext = NULL;
    *g->qtail = j;
    g->qtail = &j->qnext;
}

/* table_take(g, seq) — removes and returns the job, or NULL (answered already). Locked. */
static struct gw_job *table_take(struct gateway *g, uint64_t seq)
{
    struct gw_job **pp = &g->table[seq % BUCKETS];

    for (; *pp; pp = &(*pp)->hnext)
        if ((*pp)->seq == seq) {
            struct gw_job *j = *pp;
            *pp = j->hnext;
            g->st.inflight--;
            g->st.inflight_bytes -= j->len;
            return j;
        }
    return NULL;
}

/* resend_all(g, why) — every unanswered job not already waiting to be sent is queued again
 * (the broker lost them). Locked. */
static void resend_all(struct gateway *g)
{
    for (size_t b = 0; b < BUCKETS; b++)
        for (struct gw_job *j = g->table[b]; j; j = j->hnext)
            if (!j->queued) {
                queue_push(g, j);
                g->st.resent++;
            }
    pthread_cond_broadcast(&g->cond);
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* ---- the sender ------------------------------------------------------------------- */

static int send_job(struct gateway *g, struct broker *b, struct gw_job *j)
{
    char id[96], seq[24];
    struct errbuf err = {{0}};
    const char *argv[20];
    size_t lens[20];
    int n = 0;
    redisReply *rep;

    snprintf(seq, sizeof(seq), "%" PRIu64, j->seq);
    snprintf(id, sizeof(id), "%s:%" PRIu64, g->id, j->seq);
#define ARG(s, l) (argv[n] = (s), lens[n] = (l), n++)
#define SARG(s)   ARG((s), strlen(s))
    SARG("XADD");
    SARG(broker_job_stream(j->prio));
    SARG("*");
    SARG("id");
    SARG(id);
    SARG("reply");
    SARG(g->reply_stream);
    SARG("seq");
    SARG(seq);
    SARG("method");
    SARG("POST");
    SARG("target");
    SARG(j->route);
    SARG("ctype");
    SARG(j->ctype);
    SARG("body");
    ARG(j->body ? j->body : "", j->len);
#undef SARG
#undef ARG
    rep = broker_cmd(b, &err, n, argv, lens);
    if (!broker_reply_ok(rep)) {
        fprintf(stderr, "crucible: gateway: XADD of job %s: %s\n", id, rep ? rep->str : err.msg);
        freeReplyObject(rep);
        return -EIO;
    }
    freeReplyObject(rep);
    return 0;
}

static void *sender_main(void *arg)
{
    struct gateway *g = arg;
    struct broker *b = NULL;

    pthread_mutex_lock(&g->lock);
    while (!g->stop) {
        struct gw_job *j;
        int rc;

        if (!g->qhead) {
            pthread_cond_wait(&g->cond, &g->lock);
            continue;
        }
        if (!broker_alive(b)) {
            struct errbuf err = {{0}};
            pthread_mutex_unlock(&g->lock);
            broker_close(b);
            if (!(b = broker_connect(&g->cfg.url, CONNECT_TIMEOUT_S, &err)))
                sleep_s(0.2);
            pthread_mutex_lock(&g->lock);
            continue;
        }
        j = g->qhead;
        if (!(g->qhead = j->qnext))
            g->qtail = &g->qhead;
        j->queued = false; /* the queue's reference is the sender's now */
        if (j->answered) { /* answered while it waited to be sent again */
            job_unref(j);
            continue;
        }
        pthread_mutex_unlock(&g->lock);
        rc = send_job(g, b, j);
        pthread_mutex_lock(&g->lock);
        if (rc < 0 && !j->answered && !j->queued) { /* again, first in line, with this ref */
            j->queued = true;
            j->qnext = g->qhead;
            if (!g->qhead)
                g->qtail = &j->qnext;
            g->qhead = j;
            j = NULL;
            if (broker_alive(b)) { /* an error reply, not a lost connection: do not spin */
                pthread_mutex_unlock(&g->lock);
                sleep_s(0.5);
                pthread_mutex_lock(&g->lock);
            }
        }
        if (j)
            job_unref(j);
    }
    pthread_mutex_unlock(&g->lock);
    broker_close(b);
    return NULL;
}

/* ---- the reader ------------------------------------------------------------------- */

/* info_run_id(b, out, size) — the broker's run_id (INFO server): it changes on a restart. */
static void info_run_id(struct broker *b, char *out, size_t size)
{
    struct errbuf err = {{0}};
    redisReply *rep = broker_cmdf(b, &err, "INFO", "server", NULL);
    const char *p;

    out[0] = '\0';
    if (broker_reply_ok(rep) && rep->type == REDIS_REPLY_STRING &&
        (p = strstr(rep->str, "run_id:"))) {
        size_t n = strcspn(p + 7, "\r\n");
        if (n < size) {
            memcpy(out, p + 7, n);
            out[n] = '\0';
        }
    }
    freeReplyObject(rep);
}

static long long int_reply(struct broker *b, const char *cmd, const char *key)
{
    struct errbuf err = {{0}};
    redisReply *rep = broker_cmdf(b, &err, cmd, key, NULL);
    long long v = rep && rep->type == REDIS_REPLY_INTEGER ? rep->integer : -1;

    freeReplyObject(rep);
    return v;
}

/* poll_broker(g, b) — the broker's health and the figures of /metrics; a changed run id
 * (the broker restarted and may have lost every job) sends every unanswered job again. */
static void poll_broker(struct gateway *g, struct broker *b)
{
    struct errbuf err = {{0}};
    char run_id[64];
    long workers = 0;
    long long depth[PRIO_COUNT], pending[PRIO_COUNT], dead;
    char cursor[32] = "0";
    redisReply *rep;

    info_run_id(b, run_id, sizeof(run_id));
    do { /* SCAN the heartbeat keys: how many workers are alive */
        rep = broker_cmdf(b, &err, "SCAN", cursor, "MATCH", BROKER_WORKER_KEY "*", "COUNT", "1000",
                          NULL);
        if (!broker_reply_ok(rep) || rep->type != REDIS_REPLY_ARRAY || rep->elements != 2) {
            freeReplyObject(rep);
            workers = -1;
            break;
        }
        snprintf(cursor, sizeof(cursor), "%s", rep->element[0]->str);
        workers += (long)rep->element[1]->elements;
        freeReplyObject(rep);
    } while (strcmp(cursor, "0") != 0);
    for (int p = 0; p < PRIO_COUNT; p++) {
        const char *s = broker_job_stream((enum job_priority)p);
        depth[p] = int_reply(b, "XLEN", s);
        pending[p] = -1;
        rep = broker_cmdf(b, &err, "XPENDING", s, BROKER_GROUP, NULL);
        if (broker_reply_ok(rep) && rep->type == REDIS_REPLY_ARRAY && rep->elements >= 1 &&
            rep->element[0]->type == REDIS_REPLY_INTEGER)
            pending[p] = rep->element[0]->integer;
        freeReplyObject(rep);
    }
    dead = int_reply(b, "XLEN", BROKER_DEAD_STREAM);
    pthread_mutex_lock(&g->lock);
    if (run_id[0] && g->run_id[0] && strcmp(run_id, g->run_id) != 0) {
        fprintf(stderr,
                "crucible: gateway: the broker %s restarted; sending the %zu unanswered "
                "jobs again\n",
                g->where, g->st.inflight);
        resend_all(g);
    }
    if (run_id[0])
        snprintf(g->run_id, sizeof(g->run_id), "%s", run_id);
    g->st.workers_alive = workers;
    memcpy(g->st.depth, depth, sizeof(depth));
    memcpy(g->st.pending, pending, sizeof(pending));
    g->st.dead = dead;
    g->st.broker_up = broker_alive(b);
    pthread_mutex_unlock(&g->lock);
}

/* take_replies(g, b, rep) — the entries of an XREADGROUP answer handed to the loop, then
 * acknowledged and deleted. */
static void take_replies(struct gateway *g, struct broker *b, const redisReply *rep)
{
    struct errbuf err = {{0}};
    const redisReply *entries;
    struct gw_reply *list = NULL;
    const char **ids;
    size_t n;

    if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 1 ||
        rep->element[0]->type != REDIS_REPLY_ARRAY || rep->element[0]->elements != 2)
        return;
    entries = rep->element[0]->element[1];
    n = entries->elements;
    if (!n || !(ids = calloc(n + 3, sizeof(*ids))))
        return;
    for (size_t i = 0; i < n; i++) {
        const redisReply *e = entries->element[i], *f = e->element[1];
        const char *seq = broker_field(f, "seq", NULL), *st = broker_field(f, "status", NULL);
        const char *ct = broker_field(f, "ctype", NULL), *body;
        struct gw_reply *r;
        size_t len = 0;

        ids[i + 3] = e->element[0]->str;
        body = broker_field(f, "body", &len);
        if (!seq || !st || !(r = calloc(1, sizeof(*r))))
            continue;
        r->seq = strtoull(seq, NULL, 10);
        r->status = (unsigned)strtoul(st, NULL, 10);
        snprintf(r->ctype, sizeof(r->ctype), "%s", ct ? ct : "application/json");
        if (!(r->body = malloc(len + 1))) {
            free(r);
            continue;
        }
        memcpy(r->body, body ? body : "", len);
        r->body[len] = '\0';
        r->len = len;
        r->next = list;
        list = r;
    }
    if (list) {
        struct gw_reply *last = list;
        uint64_t one = 1;
        while (last->next)
            last = last->next;
        pthread_mutex_lock(&g->lock);
        last->next = g->replies;
        g->replies = list;
        pthread_mutex_unlock(&g->lock);
        if (write(g->efd, &one, sizeof(one)) < 0) { /* the counter is full: it is readable */
        }
    }
    ids[0] = "XACK";
    ids[1] = g->reply_stream;
    ids[2] = BROKER_REPLY_GROUP;
    freeReplyObject(broker_cmd(b, &err, (int)n + 3, ids, NULL));
    ids[1] = "XDEL";
    ids[2] = g->reply_stream;
    freeReplyObject(broker_cmd(b, &err, (int)n + 2, ids + 1, NULL));
    free(ids);
}

static void *reader_main(void *arg)
{
    struct gateway *g = arg;
    struct broker *b = NULL;
    double last_poll = 0;

    for (;;) {
        struct errbuf err = {{0}};
        redisReply *rep;

        pthread_mutex_lock(&g->lock);
        if (g->stop) {
            pthread_mutex_unlock(&g->lock);
            break;
        }
        pthread_mutex_unlock(&g->lock);
        if (!broker_alive(b)) {
            pthread_mutex_lock(&g->lock);
            g->st.broker_up = false;
            pthread_mutex_unlock(&g->lock);
            broker_close(b);
            if (!(b = broker_connect(&g->cfg.url, CONNECT_TIMEOUT_S, &err)) ||
                broker_ensure_group(b, g->reply_stream, BROKER_REPLY_GROUP, &err) < 0) {
                broker_close(b);
                b = NULL;
                sleep_s(0.25);
                continue;
            }
            last_poll = 0;
        }
        if (util_now() - last_poll >= POLL_EVERY_S) {
            poll_broker(g, b);
            last_poll = util_now();
        }
        rep = broker_cmdf(b, &err, "XREADGROUP", "GROUP", BROKER_REPLY_GROUP, g->id, "COUNT", "256",
                          "BLOCK", READ_BLOCK_MS, "STREAMS", g->reply_stream, ">", NULL);
        if (!rep)
            continue;
        if (rep->type == REDIS_REPLY_ERROR && strstr(rep->str, "NOGROUP")) {
            /* The broker lost its data (a restart, FLUSHALL): the jobs went with it. */
            broker_ensure_group(b, g->reply_stream, BROKER_REPLY_GROUP, &err);
            pthread_mutex_lock(&g->lock);
            resend_all(g);
            pthread_mutex_unlock(&g->lock);
        } else if (rep->type == REDIS_REPLY_ARRAY) {
            take_replies(g, b, rep);
        }
        freeReplyObject(rep);
    }
    broker_close(b);
    return NULL;
}

/* ---- the loop thread -------------------------------------------------------------- */

static void on_close(void *ctx, bool aborted)
{
    struct gw_job *j = ctx;
    struct gateway *g = j->g;

    (void)aborted;
    pthread_mutex_lock(&g->lock);
    j->r = NULL;
    job_unref(j);
    pthread_mutex_unlock(&g->lock);
}

/* on_replies — the reader's answers: the first for a job answers its request. */
static void on_replies(void *arg, uint32_t events)
{
    struct gateway *g = arg;
    struct gw_reply *list, *next;
    uint64_t n;

    (void)events;
    if (read(g->efd, &n, sizeof(n)) < 0) { /* EAGAIN: another wakeup took it */
    }
    pthread_mutex_lock(&g->lock);
    list = g->replies;
    g->replies = NULL;
    pthread_mutex_unlock(&g->lock);
    for (; list; list = next) {
        struct gw_job *j;
        next = list->next;
        pthread_mutex_lock(&g->lock);
        if ((j = table_take(g, list->seq))) {
            j->answered = true;
            g->st.answered++;
        } else {
            g->st.duplicates++;
        }
        pthread_mutex_unlock(&g->lock);
        if (j) {
            if (j->r) {
                http_respond(j->r, list->status, list->ctype, list->body, list->len, NULL, NULL);
                if (g->cfg.answered)
                    g->cfg.answered(g->cfg.ctx, j->route, list->status, j->t0);
            }
            pthread_mutex_lock(&g->lock);
            job_unref(j); /* the table's reference */
            pthread_mutex_unlock(&g->lock);
        }
        free(list->body);
        free(list);
    }
}

void gateway_forward(struct gateway *g, struct http_request *r, const char *route,
                     enum job_priority prio)
{
    const char *ct = http_header(r, "Content-Type");
    struct gw_job *j;
    bool up, full;
    long workers;
    size_t inflight, len = 0;

    http_body(r, &len);
    pthread_mutex_lock(&g->lock);
    up = g->st.broker_up;
    workers = g->st.workers_alive;
    inflight = g->st.inflight;
    full = inflight >= g->cfg.max_inflight ||
           (inflight > 0 && g->st.inflight_bytes + len > g->cfg.max_inflight_bytes);
    if (!up || workers == 0)
        g->st.refused_down++;
    else if (full)
        g->st.refused_busy++;
    pthread_mutex_unlock(&g->lock);
    if (!up) {
        http_respond_error_with(r, 503, "Retry-After", "1", "broker_unavailable",
                                "the broker %s cannot be reached; retry shortly", g->where);
        if (g->cfg.answered)
            g->cfg.answered(g->cfg.ctx, route, 503, 0);
        return;
    }
    if (workers == 0) {
        http_respond_error_with(r, 503, "Retry-After", "1", "no_workers",
                                "no worker is connected to the broker %s", g->where);
        if (g->cfg.answered)
            g->cfg.answered(g->cfg.ctx, route, 503, 0);
        return;
    }
    if (full) {
        http_respond_error_with(r, 429, "Retry-After", "1", "busy",
                                "%zu requests already wait for workers (at most --queue, and "
                                "%zu MiB of request bodies)",
                                inflight, g->cfg.max_inflight_bytes >> 20);
        if (g->cfg.answered)
            g->cfg.answered(g->cfg.ctx, route, 429, 0);
        return;
    }
    if (!(j = calloc(1, sizeof(*j)))) {
        http_respond_error(r, 500, "internal", "out of memory");
        return;
    }
    j->g = g;
    j->r = r;
    j->route = route;
    j->prio = prio;
    j->t0 = util_now();
    j->body = http_body_take(r, &j->len);
    snprintf(j->ctype, sizeof(j->ctype), "%s", ct ? ct : "application/json");
    j->refs = 2; /* the table's and the request's (queue_push adds the queue's) */
    pthread_mutex_lock(&g->lock);
    j->seq = ++g->next_seq;
    j->hnext = g->table[j->seq % BUCKETS];
    g->table[j->seq % BUCKETS] = j;
    g->st.inflight++;
    g->st.inflight_bytes += j->len;
    g->st.admitted++;
    queue_push(g, j);
    pthread_cond_signal(&g->cond);
    pthread_mutex_unlock(&g->lock);
    http_on_close(r, on_close, j);
}

void gateway_set_answered(struct gateway *g,
                          void (*answered)(void *ctx, const char *route, unsigned status,
                                           double t0),
                          void *ctx)
{
    g->cfg.answered = answered;
    g->cfg.ctx = ctx;
}

void gateway_stats(struct gateway *g, struct gateway_stats *st)
{
    pthread_mutex_lock(&g->lock);
    *st = g->st;
    pthread_mutex_unlock(&g->lock);
}

struct gateway *gateway_new(struct loop *loop, const struct gateway_config *cfg, struct errbuf *err)
{
    struct gateway *g = calloc(1, sizeof(*g));
    char host[64] = "";
    unsigned char rnd[4] = {0};

    if (!g) {
        errbuf_set(err, "out of memory");
        return NULL;
    }
    g->cfg = *cfg;
    if (!g->cfg.max_inflight_bytes)
        g->cfg.max_inflight_bytes = (size_t)1 << 30;
    g->loop = loop;
    g->qtail = &g->qhead;
    g->efd = -1;
    g->st.workers_alive = -1;
    for (int p = 0; p < PRIO_COUNT; p++)
        g->st.depth[p] = g->st.pending[p] = -1;
    g->st.dead = -1;
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
    gethostname(host, sizeof(host) - 1);
    if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) < 0) { /* the pid alone names it then */
    }
    snprintf(g->id, sizeof(g->id), "%.40s-%d-%02x%02x%02x%02x", host, (int)getpid(), rnd[0], rnd[1],
             rnd[2], rnd[3]);
    snprintf(g->reply_stream, sizeof(g->reply_stream), BROKER_REPLY_STREAM "%s", g->id);
    broker_url_show(&cfg->url, g->where, sizeof(g->where));
    if ((g->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
        loop_add(loop, g->efd, EPOLLIN, on_replies, g) < 0) {
        errbuf_set(err, "gateway: eventfd: %s", strerror(errno));
        gateway_free(g);
        return NULL;
    }
    if (pthread_create(&g->sender, NULL, sender_main, g) != 0) {
        errbuf_set(err, "gateway: cannot start a thread");
        gateway_free(g);
        return NULL;
    }
    g->sender_started = true;
    if (pthread_create(&g->reader, NULL, reader_main, g) != 0) {
        errbuf_set(err, "gateway: cannot start a thread");
        gateway_free(g);
        return NULL;
    }
    g->reader_started = true;
    return g;
}

void gateway_free(struct gateway *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->lock);
    g->stop = true;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
    if (g->sender_started)
        pthread_join(g->sender, NULL);
    if (g->reader_started)
        pthread_join(g->reader, NULL);
    while (g->qhead) {
        struct gw_job *j = g->qhead;
        g->qhead = j->qnext;
        job_unref(j);
    }
    for (size_t b = 0; b < BUCKETS; b++)
        while (g->table[b]) {
            struct gw_job *j = g->table[b];
            g->table[b] = j->hnext;
            if (j->r) /* http_stop ran first (cmd_serve): this does not happen there */
                http_respond_error(j->r, 503, "stopping", "the gateway is stopping");
            job_unref(j);
        }
    while (g->replies) {
        struct gw_reply *r = g->replies;
        g->replies = r->next;
        free(r->body);
        free(r);
    }
    if (g->efd >= 0) {
        loop_del(g->loop, g->efd);
        close(g->efd);
    }
    pthread_cond_destroy(&g->cond);
    pthread_mutex_destroy(&g->lock);
    free(g);
}
