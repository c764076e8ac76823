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
#include <jansson.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <unistd.h>

#include "cluster/gateway.h"
#include "strset.h"

#define BUCKETS           4096
#define CONNECT_TIMEOUT_S 2.0
#define POLL_EVERY_S      1.0
#define READ_BLOCK_MS     "500"
#define WATCH_MAX         1024 /* attached or pinned jobs looked at per poll */
#define ADDING_STALE_S    10.0 /* an idempotency key left at "-" that long: its adder died */
#define NAMES_MAX         512  /* the images live workers hold, as a message lists them */
#define MEMS_MAX          64   /* distinct job memories of live workers' nodes, kept */

struct gw_job {
    uint64_t seq;
    int refs;
    bool queued, answered;
    bool attached; /* its key was admitted before (another gateway, an earlier run of this
                    * one): it waits for that job's answer (watch_jobs), not sent */
    bool list;     /* GET /v1/sessions: answered from the broker's session pins */
    double attached_at;
    struct gw_job *hnext, *qnext;
    struct gateway *g;
    struct http_request *r; /* NULL once its client left */
    const char *route;
    double t0;
    char *body, *target;
    size_t len;
    char method[8], ctype[128];
    char key[BROKER_IDEM_KEY_MAX + 1];   /* its Idempotency-Key, or "" */
    char session[BROKER_SESSION_ID_MAX]; /* the session it names, or "" */
    char pin[128];                       /* the worker its session lives on, once sent */
    char stream[BROKER_STREAM_MAX];      /* its job stream: its priority's, or its image's */
    bool (*rewrite)(void *ctx, unsigned status, const char *body, size_t len, char **out,
                    size_t *outlen); /* gateway_request's, until called */
    void *rewrite_ctx;
    /* a gateway_job's answer function (r is NULL then), until called or dropped */
    void (*done)(void *ctx, unsigned status, const char *body, size_t len);
    void *done_ctx;
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
    struct gateway_stats st;     /* under lock */
    struct strset images;        /* the images live workers hold (their heartbeats), under lock */
    char image_names[NAMES_MAX]; /* the same, for messages */
    uint64_t mems[MEMS_MAX]; /* the job memories of live workers' nodes, ascending, under lock */
    size_t nmems;
    char run_id[64]; /* the broker's, at the reader's last look */
};

static void job_unref(struct gw_job *j)
{
    if (--j->refs == 0) {
        if (j->rewrite) /* never answered */
            j->rewrite(j->rewrite_ctx, 0, NULL, 0, NULL, NULL);
        free(j->body);
        free(j->target);
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

/* table_find(g, seq) — the unanswered job, or NULL. Locked. */
static struct gw_job *table_find(struct gateway *g, uint64_t seq)
{
    for (struct gw_job *j = g->table[seq % BUCKETS]; j; j = j->hnext)
        if (j->seq == seq)
            return j;
    return NULL;
}

/* resend_all(g, why) — every unanswered job not already waiting to be sent is queued again
 * (the broker lost them, and the idempotency keys and session pins with them). Locked. */
static void resend_all(struct gateway *g)
{
    for (size_t b = 0; b < BUCKETS; b++)
        for (struct gw_job *j = g->table[b]; j; j = j->hnext)
            if (!j->queued) {
                j->attached = false;
                queue_push(g, j);
                g->st.resent++;
            }
    pthread_cond_broadcast(&g->cond);
}

/* requeue(g, seq) — an attached job whose first admission was lost is sent by this gateway
 * after all. Locked. */
static void requeue(struct gateway *g, uint64_t seq)
{
    struct gw_job *j = table_find(g, seq);

    if (j && j->attached && !j->queued) {
        j->attached = false;
        queue_push(g, j);
        g->st.resent++;
        pthread_cond_broadcast(&g->cond);
    }
}

/* reply_new(seq, status, ctype, body, len) — an answer for job seq, its body copied; NULL
 * when out of memory. */
static struct gw_reply *reply_new(uint64_t seq, unsigned status, const char *ctype,
                                  const char *body, size_t len)
{
    struct gw_reply *r = calloc(1, sizeof(*r));

    if (!r || !(r->body = malloc(len + 1))) {
        free(r);
        return NULL;
    }
    memcpy(r->body, body ? body : "", len);
    r->body[len] = '\0';
    r->len = len;
    r->seq = seq;
    r->status = status;
    snprintf(r->ctype, sizeof(r->ctype), "%s", ctype ? ctype : "application/json");
    return r;
}

/* replies_push(g, list) — answers (a list linked by next) handed to the loop thread. Any
 * thread, unlocked. */
static void replies_push(struct gateway *g, struct gw_reply *list)
{
    struct gw_reply *last = list;
    uint64_t one = 1;

    if (!list)
        return;
    while (last->next)
        last = last->next;
    pthread_mutex_lock(&g->lock);
    last->next = g->replies;
    g->replies = list;
    pthread_mutex_unlock(&g->lock);
    if (write(g->efd, &one, sizeof(one)) < 0) { /* the counter is full: it is readable */
    }
}

/* reply_local(g, seq, status, ctype, body, len) — an answer the gateway makes itself (a stored
 * answer, a session's error) handed to the loop thread as a worker's would be (out of memory:
 * the request waits for its client to give up). Any thread, unlocked. */
static void reply_local(struct gateway *g, uint64_t seq, unsigned status, const char *ctype,
                        const char *body, size_t len)
{
    replies_push(g, reply_new(seq, status, ctype, body, len));
}

/* reply_error(g, seq, status, code, fmt, ...) — reply_local of an error in the API's shape. */
static void reply_error(struct gateway *g, uint64_t seq, unsigned status, const char *code,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void reply_error(struct gateway *g, uint64_t seq, unsigned status, const char *code,
                        const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    json_t *j;
    char *s;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    j = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg);
    s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    if (s)
        reply_local(g, seq, status, "application/json", s, strlen(s));
    free(s);
    json_decref(j);
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* ---- the sender ------------------------------------------------------------------- */

/* stored_answer(g, b, seq, key) — the answer kept under an idempotency key, if any, given
 * to the job seq: 1 when it was, 0 when there is none, -EIO when the connection failed. */
static int stored_answer(struct gateway *g, struct broker *b, uint64_t seq, const char *key)
{
    struct errbuf err = {{0}};
    char name[BROKER_IDEM_KEY_MAX + 32];
    redisReply *rep;
    const char *st, *ct, *body;
    size_t len = 0;
    int rc = 0;

    snprintf(name, sizeof(name), BROKER_ANSWER_KEY "%s", key);
    if (!(rep = broker_cmdf(b, &err, "HGETALL", name, NULL)))
        return -EIO;
    if (rep->type == REDIS_REPLY_ARRAY && rep->elements >= 2 &&
        (st = broker_field(rep, "status", NULL)) && (body = broker_field(rep, "body", &len))) {
        ct = broker_field(rep, "ctype", NULL);
        reply_local(g, seq, (unsigned)strtoul(st, NULL, 10), ct ? ct : "application/json", body,
                    len);
        pthread_mutex_lock(&g->lock);
        g->st.replayed++;
        pthread_mutex_unlock(&g->lock);
        rc = 1;
    }
    freeReplyObject(rep);
    return rc;
}

/* claim_key(g, b, j) — a job with an idempotency key: answered now when its answer is kept
 * (1), attached to the job admitted before under that key (1), or this gateway's to send (0:
 * the key now names it). -EIO when the connection failed. */
static int claim_key(struct gateway *g, struct broker *b, struct gw_job *j)
{
    struct errbuf err = {{0}};
    char name[BROKER_IDEM_KEY_MAX + 32];
    redisReply *rep;
    int rc;

    if ((rc = stored_answer(g, b, j->seq, j->key)) != 0)
        return rc;
    snprintf(name, sizeof(name), BROKER_IDEM_KEY "%s", j->key);
    if (!(rep = broker_cmdf(b, &err, "SET", name, "-", "NX", "EX", BROKER_KEEP_S, NULL)))
        return -EIO;
    rc = rep->type == REDIS_REPLY_NIL ? 1 : broker_reply_ok(rep) ? 0 : -EIO;
    freeReplyObject(rep);
    if (rc == 1) {
        pthread_mutex_lock(&g->lock);
        j->attached = true;
        j->attached_at = util_now();
        g->st.attached++;
        pthread_mutex_unlock(&g->lock);
    }
    return rc;
}

/* route_session(g, b, j, stream, size) — a session's request goes to the stream of the
 * worker holding the session: 0 with stream set; 1 when it was answered here instead (no
 * such session: 404; its worker is gone: 410); -EIO. */
static int route_session(struct gateway *g, struct broker *b, struct gw_job *j, char *stream,
                         size_t size)
{
    struct errbuf err = {{0}};
    char name[BROKER_SESSION_ID_MAX + 32], worker[128];
    redisReply *rep;

    snprintf(name, sizeof(name), BROKER_SESSION_KEY "%s", j->session);
    if (!(rep = broker_cmdf(b, &err, "GET", name, NULL)))
        return -EIO;
    if (rep->type != REDIS_REPLY_STRING || rep->len >= sizeof(worker)) {
        freeReplyObject(rep);
        reply_error(g, j->seq, 404, "not_found", "no session %s", j->session);
        return 1;
    }
    snprintf(worker, sizeof(worker), "%s", rep->str);
    freeReplyObject(rep);
    if (!broker_worker_alive(b, worker)) {
        pthread_mutex_lock(&g->lock);
        g->st.sessions_lost++;
        pthread_mutex_unlock(&g->lock);
        reply_error(g, j->seq, 410, "session_lost",
                    "session %s lived on worker %s, which stopped: the session is gone", j->session,
                    worker);
        return 1;
    }
    pthread_mutex_lock(&g->lock);
    snprintf(j->pin, sizeof(j->pin), "%s", worker);
    pthread_mutex_unlock(&g->lock);
    snprintf(stream, size, BROKER_AT_STREAM "%s", worker);
    return 0;
}

/* list_sessions(g, b, j) — GET /v1/sessions: the sessions pinned in the broker, each with its
 * worker and whether that worker is alive. 0, or -EIO. */
static int list_sessions(struct gateway *g, struct broker *b, struct gw_job *j)
{
    struct errbuf err = {{0}};
    char cursor[32] = "0";
    json_t *arr = json_array(), *out;
    char *s;

    do {
        redisReply *rep = broker_cmdf(b, &err, "SCAN", cursor, "MATCH", BROKER_SESSION_KEY "*",
                                      "COUNT", "1000", NULL);
        if (!rep) {
            json_decref(arr);
            return -EIO;
        }
        if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2) {
            freeReplyObject(rep);
            break;
        }
        snprintf(cursor, sizeof(cursor), "%s", rep->element[0]->str);
        for (size_t i = 0; i < rep->element[1]->elements; i++) {
            const char *key = rep->element[1]->element[i]->str;
            redisReply *w = broker_cmdf(b, &err, "GET", key, NULL);
            if (w && w->type == REDIS_REPLY_STRING)
                json_array_append_new(
                    arr, json_pack("{s:s,s:s,s:b}", "id", key + strlen(BROKER_SESSION_KEY),
                                   "worker", w->str, "alive", broker_worker_alive(b, w->str)));
            freeReplyObject(w);
        }
        freeReplyObject(rep);
    } while (strcmp(cursor, "0") != 0);
    out = json_pack("{s:o,s:I,s:n}", "sessions", arr, "count", (json_int_t)json_array_size(arr),
                    "max");
    s = out ? json_dumps(out, JSON_COMPACT) : NULL;
    if (s)
        reply_local(g, j->seq, 200, "application/json", s, strlen(s));
    else
        reply_error(g, j->seq, 500, "internal", "out of memory");
    free(s);
    json_decref(out);
    return 0;
}

/* send_job(g, b, j, stream) — XADD of the job; its key (if any) then names the entry. */
static int send_job(struct gateway *g, struct broker *b, struct gw_job *j, const char *stream)
{
    char id[96], seq[24];
    struct errbuf err = {{0}};
    const char *argv[24];
    size_t lens[24];
    int n = 0;
    redisReply *rep;

    snprintf(seq, sizeof(seq), "%" PRIu64, j->seq);
    snprintf(id, sizeof(id), "%s:%" PRIu64, g->id, j->seq);
#define ARG(s, l) (argv[n] = (s), lens[n] = (l), n++)
#define SARG(s)   ARG((s), strlen(s))
    SARG("XADD");
    SARG(stream);
    SARG("*");
    SARG("id");
    SARG(id);
    SARG("reply");
    SARG(g->reply_stream);
    SARG("seq");
    SARG(seq);
    SARG("method");
    SARG(j->method);
    SARG("target");
    SARG(j->target);
    SARG("ctype");
    SARG(j->ctype);
    if (j->key[0]) {
        SARG("key");
        SARG(j->key);
    }
    SARG("body");
    ARG(j->body ? j->body : "", j->len);
#undef SARG
#undef ARG
    rep = broker_cmd(b, &err, n, argv, lens);
    if (!broker_reply_ok(rep) || rep->type != REDIS_REPLY_STRING) {
        fprintf(stderr, "crucible: gateway: XADD of job %s: %s\n", id, rep ? rep->str : err.msg);
        freeReplyObject(rep);
        return -EIO;
    }
    if (j->key[0]) { /* a gateway attached to this key can now tell a lost job from a slow one */
        char name[BROKER_IDEM_KEY_MAX + 32], where[BROKER_STREAM_MAX + 64];
        snprintf(name, sizeof(name), BROKER_IDEM_KEY "%s", j->key);
        snprintf(where, sizeof(where), "%s %s", stream, rep->str);
        freeReplyObject(broker_cmdf(b, &err, "SET", name, where, "EX", BROKER_KEEP_S, NULL));
    }
    freeReplyObject(rep);
    return 0;
}

/* dispatch(g, b, j) — what the sender does with a job: answer it from the broker (a session
 * list, a kept answer, a session that is not there), attach it to an earlier admission of its
 * key, or add it to its stream. 0 when done, -EIO to try again. */
static int dispatch(struct gateway *g, struct broker *b, struct gw_job *j)
{
    char stream[BROKER_STREAM_MAX];
    int rc;

    if (j->list)
        return list_sessions(g, b, j);
    if (j->key[0] && (rc = claim_key(g, b, j)) != 0)
        return rc < 0 ? rc : 0;
    snprintf(stream, sizeof(stream), "%s", j->stream);
    if (j->session[0] && (rc = route_session(g, b, j, stream, sizeof(stream))) != 0)
        return rc < 0 ? rc : 0;
    return send_job(g, b, j, stream);
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
        rc = dispatch(g, b, j);
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

/* mems_add(mems, &n, mb) — mb added to the ascending set mems (MEMS_MAX at most). */
static void mems_add(uint64_t *mems, size_t *n, uint64_t mb)
{
    size_t i = 0;

    while (i < *n && mems[i] < mb)
        i++;
    if ((i < *n && mems[i] == mb) || *n == MEMS_MAX)
        return;
    memmove(mems + i + 1, mems + i, (*n - i) * sizeof(*mems));
    mems[i] = mb;
    (*n)++;
}

/* heartbeat_capacity(b, keys, set, &slots, mems, &nmems) — the "images" of the heartbeats
 * named by keys added to set, their "slots" to slots, their "job_memory_mb" to mems. */
static void heartbeat_capacity(struct broker *b, const redisReply *keys, struct strset *set,
                               long *slots, uint64_t *mems, size_t *nmems)
{
    struct errbuf err = {{0}};
    const char **argv = calloc(keys->elements + 1, sizeof(*argv));
    redisReply *rep;

    if (!argv || !keys->elements) {
        free(argv);
        return;
    }
    argv[0] = "MGET";
    for (size_t i = 0; i < keys->elements; i++)
        argv[i + 1] = keys->element[i]->str;
    rep = broker_cmd(b, &err, (int)keys->elements + 1, argv, NULL);
    free(argv);
    if (rep && rep->type == REDIS_REPLY_ARRAY)
        for (size_t i = 0; i < rep->elements; i++) {
            json_t *hb, *img;
            size_t k;
            if (rep->element[i]->type != REDIS_REPLY_STRING ||
                !(hb = json_loadb(rep->element[i]->str, rep->element[i]->len, 0, NULL)))
                continue;
            if (json_integer_value(json_object_get(hb, "slots")) > 0)
                *slots += (long)json_integer_value(json_object_get(hb, "slots"));
            if (json_integer_value(json_object_get(hb, "job_memory_mb")) > 0)
                mems_add(mems, nmems,
                         (uint64_t)json_integer_value(json_object_get(hb, "job_memory_mb")));
            json_array_foreach(json_object_get(hb, "images"), k, img)
            {
                if (json_is_string(img))
                    strset_add(set, json_string_value(img));
            }
            json_decref(hb);
        }
    freeReplyObject(rep);
}

/* poll_broker(g, b) — the broker's health and the figures of /metrics; a changed run id
 * (the broker restarted and may have lost every job) sends every unanswered job again. */
static void poll_broker(struct gateway *g, struct broker *b)
{
    struct errbuf err = {{0}};
    char run_id[64];
    long workers = 0, slots = 0;
    uint64_t mems[MEMS_MAX];
    size_t nmems = 0;
    long long depth[PRIO_COUNT], pending[PRIO_COUNT], dead;
    char cursor[32] = "0";
    struct strset images = STRSET_INIT;
    redisReply *rep;

    info_run_id(b, run_id, sizeof(run_id));
    do { /* SCAN the heartbeat keys: how many workers are alive, and the images they hold */
        rep = broker_cmdf(b, &err, "SCAN", cursor, "MATCH", BROKER_WORKER_KEY "*", "COUNT", "1000",
                          NULL);
        if (!broker_reply_ok(rep) || rep->type != REDIS_REPLY_ARRAY || rep->elements != 2) {
            freeReplyObject(rep);
            workers = -1;
            break;
        }
        snprintf(cursor, sizeof(cursor), "%s", rep->element[0]->str);
        workers += (long)rep->element[1]->elements;
        heartbeat_capacity(b, rep->element[1], &images, &slots, mems, &nmems);
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
    if (workers >= 0) {
        g->st.slots_alive = slots;
        memcpy(g->mems, mems, nmems * sizeof(*mems));
        g->nmems = nmems;
        size_t used = 0;
        strset_release(&g->images);
        g->images = images;
        images = (struct strset)STRSET_INIT;
        g->image_names[0] = '\0';
        for (size_t i = 0; i < g->images.cap; i++)
            if (g->images.slot[i] && used < sizeof(g->image_names))
                used += (size_t)snprintf(g->image_names + used, sizeof(g->image_names) - used,
                                         "%s%s", used ? ", " : "", g->images.slot[i]);
    }
    memcpy(g->st.depth, depth, sizeof(depth));
    memcpy(g->st.pending, pending, sizeof(pending));
    g->st.dead = dead;
    g->st.broker_up = broker_alive(b);
    pthread_mutex_unlock(&g->lock);
    strset_release(&images);
}

/* unwatch(g, seq) — the job was answered by the watcher: not watched again meanwhile. */
static void unwatch(struct gateway *g, uint64_t seq)
{
    struct gw_job *j;

    pthread_mutex_lock(&g->lock);
    if ((j = table_find(g, seq))) {
        j->attached = false;
        j->pin[0] = '\0';
    }
    pthread_mutex_unlock(&g->lock);
}

struct watched {
    uint64_t seq;
    double attached_at;
    char name[BROKER_IDEM_KEY_MAX + 1]; /* the key of an attached job, or a pinned job's worker */
};

/* watch_attached(g, b, w) — a job attached to an earlier admission of its key: answered
 * when that job's answer is kept; sent by this gateway when that job was lost (its key
 * expired or went with the broker's data, its entry deleted without an answer, or its
 * adder died before adding it). */
static void watch_attached(struct gateway *g, struct broker *b, const struct watched *w)
{
    struct errbuf err = {{0}};
    char name[BROKER_IDEM_KEY_MAX + 32], stream[BROKER_STREAM_MAX];
    const char *msgid;
    redisReply *rep;
    bool lost = false;

    if (stored_answer(g, b, w->seq, w->name) != 0) {
        unwatch(g, w->seq);
        return;
    }
    snprintf(name, sizeof(name), BROKER_IDEM_KEY "%s", w->name);
    if (!(rep = broker_cmdf(b, &err, "GET", name, NULL)))
        return;
    if (rep->type == REDIS_REPLY_NIL) {
        lost = true;
    } else if (rep->type == REDIS_REPLY_STRING && strcmp(rep->str, "-") == 0) {
        lost = util_now() - w->attached_at > ADDING_STALE_S;
    } else if (rep->type == REDIS_REPLY_STRING && (msgid = strchr(rep->str, ' ')) &&
               (size_t)(msgid - rep->str) < sizeof(stream)) { /* "STREAM MSGID" */
        memcpy(stream, rep->str, (size_t)(msgid - rep->str));
        stream[msgid++ - rep->str] = '\0';
        redisReply *e = broker_cmdf(b, &err, "XRANGE", stream, msgid, msgid, NULL);
        /* the entry is deleted after the answer is kept: look for the answer again */
        if (e && e->type == REDIS_REPLY_ARRAY && e->elements == 0) {
            if (stored_answer(g, b, w->seq, w->name) == 0)
                lost = true;
            else
                unwatch(g, w->seq);
        }
        freeReplyObject(e);
    }
    freeReplyObject(rep);
    if (lost) {
        freeReplyObject(broker_cmdf(b, &err, "DEL", name, NULL));
        pthread_mutex_lock(&g->lock);
        requeue(g, w->seq);
        pthread_mutex_unlock(&g->lock);
    }
}

/* watch_jobs(g, b) — the jobs that wait on something other than the reply stream: attached
 * ones (watch_attached), and sessions' requests on the stream of one worker, answered 410 when
 * that worker stopped (its stream is deleted: nobody else reads it). */
static void watch_jobs(struct gateway *g, struct broker *b)
{
    struct watched *att = calloc(WATCH_MAX, sizeof(*att)), *pin = calloc(WATCH_MAX, sizeof(*pin));
    size_t na = 0, np = 0;

    if (!att || !pin) {
        free(att);
        free(pin);
        return;
    }
    pthread_mutex_lock(&g->lock);
    for (size_t k = 0; k < BUCKETS; k++)
        for (struct gw_job *j = g->table[k]; j; j = j->hnext) {
            if (j->attached && !j->queued && na < WATCH_MAX) {
                att[na].seq = j->seq;
                att[na].attached_at = j->attached_at;
                snprintf(att[na++].name, sizeof(att[0].name), "%s", j->key);
            } else if (j->pin[0] && !j->queued && np < WATCH_MAX) {
                pin[np].seq = j->seq;
                snprintf(pin[np++].name, sizeof(pin[0].name), "%s", j->pin);
            }
        }
    pthread_mutex_unlock(&g->lock);
    for (size_t i = 0; i < na; i++)
        watch_attached(g, b, &att[i]);
    for (size_t i = 0; i < np; i++) {
        struct errbuf err = {{0}};
        char stream[BROKER_STREAM_MAX];
        if (broker_worker_alive(b, pin[i].name))
            continue;
        snprintf(stream, sizeof(stream), BROKER_AT_STREAM "%s", pin[i].name);
        freeReplyObject(broker_cmdf(b, &err, "DEL", stream, NULL));
        unwatch(g, pin[i].seq);
        pthread_mutex_lock(&g->lock);
        g->st.sessions_lost++;
        pthread_mutex_unlock(&g->lock);
        reply_error(g, pin[i].seq, 410, "session_lost",
                    "the worker %s holding this session stopped before answering; the session is "
                    "gone",
                    pin[i].name);
    }
    free(att);
    free(pin);
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
        if (!seq || !st ||
            !(r = reply_new(strtoull(seq, NULL, 10), (unsigned)strtoul(st, NULL, 10), ct, body,
                            len)))
            continue;
        r->next = list;
        list = r;
    }
    replies_push(g, list);
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
            watch_jobs(g, b);
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
            char *out = NULL;
            size_t outlen = 0;
            if (j->rewrite &&
                j->rewrite(j->rewrite_ctx, list->status, list->body, list->len, &out, &outlen)) {
                free(list->body);
                list->body = out;
                list->len = outlen;
            }
            j->rewrite = NULL; /* called once */
            if (j->done) {
                void (*done)(void *, unsigned, const char *, size_t) = j->done;
                j->done = NULL;
                done(j->done_ctx, list->status, list->body, list->len);
            } else if (j->r) {
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

/* place(g, q, stream, size, held) — a job naming an image goes to that image's stream, for the
 * workers holding it (their heartbeats): the name as given, or NAME:latest as an image store
 * names it. 0 with stream set; 503 with held naming the images live workers do hold. */
static unsigned place(struct gateway *g, enum job_priority prio, const char *image, char *stream,
                      size_t size, char held[NAMES_MAX])
{
    char latest[BROKER_STREAM_MAX];
    const char *name = NULL;

    if (strcmp(image, "host") == 0)
        return 0;
    snprintf(latest, sizeof(latest), "%s:latest", image);
    pthread_mutex_lock(&g->lock);
    if (strset_has(&g->images, image))
        name = image;
    else if (!strchr(image, ':') && strset_has(&g->images, latest))
        name = latest;
    if (name && broker_image_stream(prio, name, stream, size)) {
        pthread_mutex_unlock(&g->lock);
        return 0;
    }
    snprintf(held, NAMES_MAX, "%s", g->image_names[0] ? g->image_names : "nothing known yet");
    g->st.refused_down++;
    pthread_mutex_unlock(&g->lock);
    return 503;
}

/* place_memory(g, prio, mb, stream, size, &most) — a job without an image that names a memory
 * limit of mb MB: on the common stream when every live worker's node takes it, else on the
 * stream of the smallest job memory that does (broker_memory_stream). 0 with stream set or
 * left; 503 with most the largest job memory of a live worker when none takes it. */
static unsigned place_memory(struct gateway *g, enum job_priority prio, uint64_t mb, char *stream,
                             size_t size, uint64_t *most)
{
    unsigned st = 0;

    pthread_mutex_lock(&g->lock);
    if (g->nmems && mb > g->mems[0]) {
        size_t k = 0;
        while (k < g->nmems && g->mems[k] < mb)
            k++;
        if (k < g->nmems) {
            broker_memory_stream(prio, g->mems[k], stream, size);
        } else {
            *most = g->mems[g->nmems - 1];
            g->st.refused_down++;
            st = 503;
        }
    }
    pthread_mutex_unlock(&g->lock);
    return st;
}

/* admission(g, len, &inflight, &up) — 0 when a request of len bytes may be forwarded now,
 * else the status it is refused with (503: no broker, !up, or no worker; 429: too much in
 * flight). */
static unsigned admission(struct gateway *g, size_t len, size_t *inflight, bool *up)
{
    unsigned st = 0;
    bool full;

    pthread_mutex_lock(&g->lock);
    *inflight = g->st.inflight;
    *up = g->st.broker_up;
    full = *inflight >= g->cfg.max_inflight ||
           (*inflight > 0 && g->st.inflight_bytes + len > g->cfg.max_inflight_bytes);
    if (!*up || g->st.workers_alive == 0) {
        g->st.refused_down++;
        st = 503;
    } else if (full) {
        g->st.refused_busy++;
        st = 429;
    }
    pthread_mutex_unlock(&g->lock);
    return st;
}

void gateway_forward(struct gateway *g, struct http_request *r, const struct gateway_request *q)
{
    const char *ct = http_header(r, "Content-Type"), *route = q->route;
    char query[4096], stream[BROKER_STREAM_MAX], held[NAMES_MAX];
    struct gw_job *j = NULL;
    uint64_t most = 0;
    bool up;
    size_t inflight, len = q->body ? q->len : 0;
    unsigned st;

    if (!q->body)
        http_body(r, &len);
    snprintf(stream, sizeof(stream), "%s", broker_job_stream(q->prio));
    st = admission(g, len, &inflight, &up);
    if (st == 503 && !up)
        http_respond_error_with(r, 503, "Retry-After", "1", "broker_unavailable",
                                "the broker %s cannot be reached; retry shortly", g->where);
    else if (st == 503)
        http_respond_error_with(r, 503, "Retry-After", "1", "no_workers",
                                "no worker is connected to the broker %s", g->where);
    else if (st == 429)
        http_respond_error_with(r, 429, "Retry-After", "1", "busy",
                                "%zu requests already wait for workers (at most --queue, and "
                                "%zu MiB of request bodies)",
                                inflight, g->cfg.max_inflight_bytes >> 20);
    else if (q->image && (st = place(g, q->prio, q->image, stream, sizeof(stream), held)))
        http_respond_error_with(r, 503, "Retry-After", "1", "no_worker_for_image",
                                "no live worker holds image '%s' (they hold: %s)", q->image, held);
    else if ((!q->image || strcmp(q->image, "host") == 0) && q->memory_mb &&
             (st = place_memory(g, q->prio, q->memory_mb, stream, sizeof(stream), &most)))
        http_respond_error_with(r, 503, "Retry-After", "1", "no_worker_for_memory",
                                "no live worker takes a job of %" PRIu64
                                " MB of memory (the most one takes: %" PRIu64 " MB)",
                                q->memory_mb, most);
    else if (!http_query_string(r, query, sizeof(query)) && (st = 414))
        http_respond_error(r, 414, "uri_too_long", "the query is over %zu bytes", sizeof(query));
    else if ((!(j = calloc(1, sizeof(*j))) ||
              !(j->target = malloc(strlen(http_path(r)) + strlen(query) + 1))) &&
             (st = 500))
        http_respond_error(r, 500, "internal", "out of memory");
    if (st) {
        if (j)
            free(j);
        if (q->rewrite)
            q->rewrite(q->rewrite_ctx, 0, NULL, 0, NULL, NULL);
        free(q->body);
        if (g->cfg.answered)
            g->cfg.answered(g->cfg.ctx, route, st, 0);
        return;
    }
    strcpy(j->target, http_path(r));
    strcat(j->target, query);
    snprintf(j->method, sizeof(j->method), "%s", http_method(r));
    snprintf(j->stream, sizeof(j->stream), "%s", stream);
    snprintf(j->key, sizeof(j->key), "%s", q->key ? q->key : "");
    snprintf(j->session, sizeof(j->session), "%s", q->session ? q->session : "");
    j->list = q->list_sessions;
    j->rewrite = q->rewrite;
    j->rewrite_ctx = q->rewrite_ctx;
    j->g = g;
    j->r = r;
    j->route = route;
    j->t0 = util_now();
    if (q->body) {
        j->body = q->body;
        j->len = q->len;
    } else {
        j->body = http_body_take(r, &j->len);
    }
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

unsigned gateway_submit(struct gateway *g, struct gateway_job *job, uint64_t *seq,
                        const char **code, char *why, size_t size)
{
    char stream[BROKER_STREAM_MAX], held[NAMES_MAX];
    struct gw_job *j;
    uint64_t most = 0;

    snprintf(stream, sizeof(stream), "%s", broker_job_stream(job->prio));
    if (job->image && place(g, job->prio, job->image, stream, sizeof(stream), held)) {
        snprintf(why, size, "no live worker holds image '%s' (they hold: %s)", job->image, held);
        *code = "no_worker_for_image";
        free(job->body);
        return 503;
    }
    if ((!job->image || strcmp(job->image, "host") == 0) && job->memory_mb &&
        place_memory(g, job->prio, job->memory_mb, stream, sizeof(stream), &most)) {
        snprintf(why, size,
                 "no live worker takes a job of %" PRIu64
                 " MB of memory (the most one takes: %" PRIu64 " MB)",
                 job->memory_mb, most);
        *code = "no_worker_for_memory";
        free(job->body);
        return 503;
    }
    if (!(j = calloc(1, sizeof(*j))) || !(j->target = strdup(job->target))) {
        free(j);
        free(job->body);
        snprintf(why, size, "out of memory");
        *code = "internal";
        return 500;
    }
    snprintf(j->method, sizeof(j->method), "POST");
    snprintf(j->stream, sizeof(j->stream), "%s", stream);
    snprintf(j->key, sizeof(j->key), "%s", job->key ? job->key : "");
    snprintf(j->ctype, sizeof(j->ctype), "application/json");
    j->done = job->done;
    j->done_ctx = job->ctx;
    j->g = g;
    j->route = "/v1/batch";
    j->t0 = util_now();
    j->body = job->body;
    j->len = job->len;
    j->refs = 1; /* the table's (queue_push adds the queue's) */
    pthread_mutex_lock(&g->lock);
    *seq = j->seq = ++g->next_seq;
    j->hnext = g->table[j->seq % BUCKETS];
    g->table[j->seq % BUCKETS] = j;
    g->st.inflight++;
    g->st.inflight_bytes += j->len;
    g->st.admitted++;
    queue_push(g, j);
    pthread_cond_signal(&g->cond);
    pthread_mutex_unlock(&g->lock);
    return 0;
}

void gateway_drop(struct gateway *g, uint64_t seq)
{
    struct gw_job *j;

    pthread_mutex_lock(&g->lock);
    if ((j = table_find(g, seq)))
        j->done = NULL;
    pthread_mutex_unlock(&g->lock);
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
            if (j->done)
                j->done(j->done_ctx, 0, NULL, 0);
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
    strset_release(&g->images);
    pthread_cond_destroy(&g->cond);
    pthread_mutex_destroy(&g->lock);
    free(g);
}
