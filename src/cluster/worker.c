/*
 * worker.c — taking jobs from the streams, answering them, reclaiming a dead worker's jobs
 * (worker.h).
 */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/worker.h"
#include "sandbox/result.h"

#define CONNECT_TIMEOUT_S 2.0

/* A job as read from a stream: the entry's fields copied. */
struct msg {
    char stream[BROKER_STREAM_MAX], msgid[48];
    char *id, *reply, *seq, *method, *target, *ctype, *body, *key;
    size_t len;
    struct msg *next;
};

struct worker {
    struct worker_config cfg;
    char name[96], hb_key[160], at_stream[160];
    /* the streams it reads, in the order it takes jobs: its own (at_stream), then per priority
     * the streams of the images it holds and the stream of jobs any worker can run */
    char **streams;
    size_t nstreams;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool draining, failed;
    struct msg *claimed; /* reclaimed or read beyond one, waiting for a slot */
    unsigned nclaimed, busy, running_threads;
    pthread_t *slots, keeper;
    unsigned nslots;
    bool keeper_started;
    struct worker_stats st;
};

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static void msg_free(struct msg *m)
{
    if (!m)
        return;
    free(m->id);
    free(m->reply);
    free(m->seq);
    free(m->method);
    free(m->target);
    free(m->key);
    free(m->ctype);
    free(m->body);
    free(m);
}

static char *field_dup(const redisReply *f, const char *name, size_t *len)
{
    size_t n = 0;
    const char *v = broker_field(f, name, &n);
    char *s;

    if (!v)
        return NULL;
    if ((s = malloc(n + 1))) {
        memcpy(s, v, n);
        s[n] = '\0';
    }
    if (len)
        *len = n;
    return s;
}

/* msg_from_entry(stream, e) — e: [msgid, [field, value, ...]]; NULL when malformed (fields
 * nil: the entry was deleted meanwhile). */
static struct msg *msg_from_entry(const char *stream, const redisReply *e)
{
    struct msg *m;

    if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
        e->element[0]->type != REDIS_REPLY_STRING || e->element[1]->type != REDIS_REPLY_ARRAY)
        return NULL;
    if (!(m = calloc(1, sizeof(*m))))
        return NULL;
    snprintf(m->stream, sizeof(m->stream), "%s", stream);
    snprintf(m->msgid, sizeof(m->msgid), "%s", e->element[0]->str);
    m->id = field_dup(e->element[1], "id", NULL);
    m->reply = field_dup(e->element[1], "reply", NULL);
    m->seq = field_dup(e->element[1], "seq", NULL);
    m->method = field_dup(e->element[1], "method", NULL);
    if (!m->method) /* a job of a gateway older than sessions: a POST */
        m->method = strdup("POST");
    m->target = field_dup(e->element[1], "target", NULL);
    m->key = field_dup(e->element[1], "key", NULL);
    m->ctype = field_dup(e->element[1], "ctype", NULL);
    m->body = field_dup(e->element[1], "body", &m->len);
    return m;
}

/* route_allowed(method, target) — a job's request is one a gateway forwards: POST to a job
 * route, or a session's request; printable, no "..", no more than 1 KiB. */
static bool route_allowed(const char *method, const char *target)
{
    static const char *const jobs[] = {"/v1/run", "/v1/verify", "/v1/batch", "/run_code",
                                       "/v1/batch?check=1"};
    char session[BROKER_SESSION_ID_MAX];

    for (const char *p = target; *p; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
            return false;
    if (strlen(target) > 1024 || strstr(target, ".."))
        return false;
    if (strcmp(method, "POST") == 0)
        for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++)
            if (strcmp(target, jobs[i]) == 0)
                return true;
    if (strcmp(target, "/v1/sessions") == 0)
        return strcmp(method, "POST") == 0;
    return broker_session_of(target, session, sizeof(session)) &&
           (strcmp(method, "GET") == 0 || strcmp(method, "POST") == 0 ||
            strcmp(method, "PUT") == 0 || strcmp(method, "DELETE") == 0);
}

/* msg_valid(m) — what a worker trusts of an entry before acting on it: a reply stream of
 * the gateways' own prefix (never an arbitrary key), a seq, a request a gateway forwards,
 * an idempotency key of the gateways' alphabet. */
static bool msg_valid(const struct msg *m)
{
    return m->id && m->seq && m->target && m->body && m->reply &&
           strncmp(m->reply, BROKER_REPLY_STREAM, strlen(BROKER_REPLY_STREAM)) == 0 &&
           strlen(m->reply) < 200 && m->method && route_allowed(m->method, m->target) &&
           (!m->key || broker_idem_key_valid(m->key));
}

static int ensure_groups(struct worker *w, struct broker *b, struct errbuf *err)
{
    for (size_t i = 0; i < w->nstreams; i++)
        if (broker_ensure_group(b, w->streams[i], BROKER_GROUP, err) < 0)
            return -EIO;
    return 0;
}

static void claimed_push(struct worker *w, struct msg *m)
{
    m->next = w->claimed;
    w->claimed = m;
    w->nclaimed++;
    pthread_cond_broadcast(&w->cond);
}

/* take_entries(w, rep, first) — the entries of an XREADGROUP answer ([[stream, [entry...]]...]):
 * the first returned, any more queued for the other slots (they are this worker's now). */
static struct msg *take_entries(struct worker *w, const redisReply *rep)
{
    struct msg *first = NULL;

    if (rep->type != REDIS_REPLY_ARRAY)
        return NULL;
    for (size_t s = 0; s < rep->elements; s++) {
        const redisReply *sr = rep->element[s];
        if (sr->type != REDIS_REPLY_ARRAY || sr->elements != 2)
            continue;
        for (size_t i = 0; i < sr->element[1]->elements; i++) {
            struct msg *m = msg_from_entry(sr->element[0]->str, sr->element[1]->element[i]);
            if (!m)
                continue;
            if (!first) {
                first = m;
            } else {
                pthread_mutex_lock(&w->lock);
                claimed_push(w, m);
                pthread_mutex_unlock(&w->lock);
            }
        }
    }
    return first;
}

/* read_next(w, b) — the next job: each of its streams in order (its own, then per priority
 * its images' and the common one), without waiting; then all of them, waiting up to a
 * second. NULL: none (or the connection failed). */
static struct msg *read_next(struct worker *w, struct broker *b)
{
    struct errbuf err = {{0}};
    redisReply *rep;
    struct msg *m = NULL;
    const char **argv;
    int n = 0;

    for (size_t i = 0; i < w->nstreams && !m; i++) {
        rep = broker_cmdf(b, &err, "XREADGROUP", "GROUP", BROKER_GROUP, w->name, "COUNT", "1",
                          "STREAMS", w->streams[i], ">", NULL);
        if (!rep)
            return NULL;
        if (rep->type == REDIS_REPLY_ERROR && strstr(rep->str, "NOGROUP"))
            ensure_groups(w, b, &err); /* the broker restarted empty */
        else
            m = take_entries(w, rep);
        freeReplyObject(rep);
    }
    if (m || !(argv = calloc(2 * w->nstreams + 10, sizeof(*argv))))
        return m;
    argv[n++] = "XREADGROUP";
    argv[n++] = "GROUP";
    argv[n++] = BROKER_GROUP;
    argv[n++] = w->name;
    argv[n++] = "COUNT";
    argv[n++] = "1";
    argv[n++] = "BLOCK";
    argv[n++] = "1000";
    argv[n++] = "STREAMS";
    for (size_t i = 0; i < w->nstreams; i++)
        argv[n++] = w->streams[i];
    for (size_t i = 0; i < w->nstreams; i++)
        argv[n++] = ">";
    rep = broker_cmd(b, &err, n, argv, NULL);
    free(argv);
    if (!rep)
        return NULL;
    if (rep->type == REDIS_REPLY_ERROR && strstr(rep->str, "NOGROUP"))
        ensure_groups(w, b, &err);
    else
        m = take_entries(w, rep);
    freeReplyObject(rep);
    return m;
}

/* record_session(w, b, m, ans) — a session made here (created, or forked) is pinned to this
 * worker for the gateways; a deleted one unpinned. */
static void record_session(struct worker *w, struct broker *b, const struct msg *m,
                           const struct worker_answer *ans)
{
    struct errbuf err = {{0}};
    const char *method = m->method;
    char id[BROKER_SESSION_ID_MAX], key[sizeof(id) + 32];
    size_t n = strlen(m->target);
    bool made = strcmp(method, "POST") == 0 && ans->status == 201 &&
                (strcmp(m->target, "/v1/sessions") == 0 ||
                 (n > 5 && strcmp(m->target + n - 5, "/fork") == 0));

    if (made) {
        json_t *j = json_loadb(ans->body ? ans->body : "", ans->len, 0, NULL);
        const char *s = json_string_value(json_object_get(j, "id"));
        if (s && strlen(s) < sizeof(id) && broker_idem_key_valid(s)) {
            snprintf(key, sizeof(key), BROKER_SESSION_KEY "%s", s);
            freeReplyObject(
                broker_cmdf(b, &err, "SET", key, w->name, "EX", BROKER_SESSION_S, NULL));
        }
        json_decref(j);
    } else if (strcmp(method, "DELETE") == 0 && ans->status == 200 &&
               broker_session_of(m->target, id, sizeof(id)) &&
               !strchr(m->target + strlen("/v1/sessions/"), '/')) {
        snprintf(key, sizeof(key), BROKER_SESSION_KEY "%s", id);
        freeReplyObject(broker_cmdf(b, &err, "DEL", key, NULL));
    }
}

/* ack_delete(b, stream, msgid) — an entry done with: deleted from its stream, then
 * acknowledged. In that order because the worker can die between the two (SIGKILL right after
 * its answer): an entry deleted but still pending is dropped from the pending list by the next
 * reclaim (XCLAIM or XRANGE finds it gone), while one acknowledged but not deleted would stay in
 * the stream for good, pending for nobody. */
static void ack_delete(struct broker *b, const char *stream, const char *msgid)
{
    struct errbuf err = {{0}};

    freeReplyObject(broker_cmdf(b, &err, "XDEL", stream, msgid, NULL));
    freeReplyObject(broker_cmdf(b, &err, "XACK", stream, BROKER_GROUP, msgid, NULL));
}

/* Keeps an answer under its idempotency key unless one is kept already, atomically; answers
 * nil when this one was kept, else the kept one's status, ctype and body. A job runs at least
 * once: when it ran twice (reclaimed from a worker thought dead, which was only slow), the
 * first answer kept is the job's answer everywhere, the reply stream's and a replay's alike. */
static const char keep_first_lua[] =
    "if redis.call('EXISTS', KEYS[1]) == 1 then "
    "return redis.call('HMGET', KEYS[1], 'status', 'ctype', 'body') end "
    "redis.call('HSET', KEYS[1], 'status', ARGV[1], 'ctype', ARGV[2], 'body', ARGV[3], "
    "'worker', ARGV[4]) "
    "redis.call('EXPIRE', KEYS[1], ARGV[5]) "
    "return nil";

/* keep_answer(w, b, key, ans, kept) — ans kept under key, or the answer kept before it put
 * in *kept (status, ctype, and a malloc'd copy of the body, the caller's to free). 0 when ans
 * is the job's answer, 1 when *kept is, -EIO. */
static int keep_answer(struct worker *w, struct broker *b, const char *key,
                       const struct worker_answer *ans, struct worker_answer *kept)
{
    struct errbuf err = {{0}};
    char name[BROKER_IDEM_KEY_MAX + 32], status[16];
    const char *argv[] = {
        "EVAL",  keep_first_lua, "1", name, status, ans->ctype, ans->body ? ans->body : "",
        w->name, BROKER_KEEP_S};
    size_t lens[sizeof(argv) / sizeof(argv[0])];
    redisReply *rep;
    int rc = 0;

    snprintf(name, sizeof(name), BROKER_ANSWER_KEY "%s", key);
    snprintf(status, sizeof(status), "%u", ans->status);
    for (size_t i = 0; i < sizeof(argv) / sizeof(argv[0]); i++) /* the body: its own length */
        lens[i] = i == 6 ? ans->len : strlen(argv[i]);
    if (!(rep = broker_cmd(b, &err, (int)(sizeof(argv) / sizeof(argv[0])), argv, lens)))
        return -EIO;
    if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 3 &&
        rep->element[0]->type == REDIS_REPLY_STRING &&
        rep->element[2]->type == REDIS_REPLY_STRING &&
        (kept->body = malloc(rep->element[2]->len + 1))) {
        kept->status = (unsigned)strtoul(rep->element[0]->str, NULL, 10);
        snprintf(kept->ctype, sizeof(kept->ctype), "%s",
                 rep->element[1]->type == REDIS_REPLY_STRING ? rep->element[1]->str
                                                             : "application/json");
        memcpy(kept->body, rep->element[2]->str, rep->element[2]->len);
        kept->body[rep->element[2]->len] = '\0';
        kept->len = rep->element[2]->len;
        pthread_mutex_lock(&w->lock);
        w->st.superseded++;
        pthread_mutex_unlock(&w->lock);
        fprintf(stderr,
                "crucible: worker: key %s was answered already by another run of its job: that "
                "answer is sent on, not this run's\n",
                key);
        rc = 1;
    } else if (rep->type == REDIS_REPLY_ERROR) {
        rc = -EIO;
    }
    freeReplyObject(rep);
    return rc;
}

/* finish(w, b, m, ans) — the answer kept under the job's idempotency key (when it has one:
 * a gateway that restarted finds it there; an answer kept first by another run of the job is
 * the one sent on), the session pinned (record_session), the answer on the job's reply
 * stream, then the job deleted and acknowledged (ack_delete). -EIO when the connection failed
 * before the answer was written. */
static int finish(struct worker *w, struct broker *b, const struct msg *m,
                  const struct worker_answer *ans)
{
    struct errbuf err = {{0}};
    struct worker_answer kept = {0};
    char status[16];
    redisReply *rep;
    int rc;

    if (m->key) {
        if ((rc = keep_answer(w, b, m->key, ans, &kept)) < 0)
            return -EIO;
        if (rc == 1)
            ans = &kept;
    }
    const char *argv[] = {"XADD",
                          m->reply,
                          "*",
                          "id",
                          m->id,
                          "seq",
                          m->seq,
                          "status",
                          status,
                          "ctype",
                          ans->ctype,
                          "body",
                          ans->body ? ans->body : "",
                          "worker",
                          w->name};
    size_t lens[sizeof(argv) / sizeof(argv[0])];
    int n = (int)(sizeof(argv) / sizeof(argv[0]));

    snprintf(status, sizeof(status), "%u", ans->status);
    for (int i = 0; i < n; i++) /* the answer (argv[12]) is binary-safe: its own length */
        lens[i] = i == 12 ? ans->len : strlen(argv[i]);
    record_session(w, b, m, ans);
    rep = broker_cmd(b, &err, n, argv, lens);
    free(kept.body);
    if (!rep)
        return -EIO;
    freeReplyObject(rep);
    freeReplyObject(broker_cmdf(b, &err, "EXPIRE", m->reply, BROKER_KEEP_S, NULL));
    ack_delete(b, m->stream, m->msgid);
    return broker_alive(b) ? 0 : -EIO;
}

static struct broker *connect_ready(struct worker *w)
{
    struct errbuf err = {{0}};
    struct broker *b = broker_connect(&w->cfg.url, CONNECT_TIMEOUT_S, &err);

    if (b && ensure_groups(w, b, &err) < 0) {
        broker_close(b);
        b = NULL;
    }
    return b;
}

static void *slot_main(void *arg)
{
    struct worker *w = arg;
    struct broker *b = NULL;

    for (;;) {
        struct worker_answer ans = {0};
        struct worker_job job;
        struct msg *m = NULL;
        int rc;

        pthread_mutex_lock(&w->lock);
        if (w->draining || w->failed) {
            pthread_mutex_unlock(&w->lock);
            break;
        }
        if ((m = w->claimed)) {
            w->claimed = m->next;
            w->nclaimed--;
        }
        pthread_mutex_unlock(&w->lock);
        if (!broker_alive(b)) {
            broker_close(b);
            if (!(b = connect_ready(w))) {
                if (m) {
                    pthread_mutex_lock(&w->lock);
                    claimed_push(w, m);
                    pthread_mutex_unlock(&w->lock);
                }
                sleep_s(0.25);
                continue;
            }
        }
        if (!m && !(m = read_next(w, b)))
            continue;
        if (!msg_valid(m)) { /* not a job a gateway wrote: dropped, with a line */
            fprintf(stderr, "crucible: worker: entry %s of %s is not a job; deleted\n", m->msgid,
                    m->stream);
            ack_delete(b, m->stream, m->msgid);
            msg_free(m);
            continue;
        }
        pthread_mutex_lock(&w->lock);
        w->busy++;
        pthread_mutex_unlock(&w->lock);
        job = (struct worker_job){
            m->id, m->method, m->target, m->ctype ? m->ctype : "application/json", m->body, m->len};
        rc = w->cfg.run(w->cfg.ctx, &job, &ans);
        if (rc == 0) {
            /* The answer is written before the job is acknowledged; a lost connection is
             * retried with the answer kept (a broker that lost the job meanwhile has the
             * gateway send it again, and the gateway drops the second answer). */
            for (int tries = 0; finish(w, b, m, &ans) < 0 && tries < 120; tries++) {
                broker_close(b);
                while (!(b = connect_ready(w)))
                    sleep_s(0.5);
            }
        }
        free(ans.body);
        msg_free(m);
        pthread_mutex_lock(&w->lock);
        w->busy--;
        if (rc == 0)
            w->st.done++;
        else
            w->failed = true;
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
    }
    broker_close(b);
    pthread_mutex_lock(&w->lock);
    w->running_threads--;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* ---- housekeeping: heartbeat, reclaim, dead letters ---------------------------------- */

/* infra_answer(target, body, why, ans) — what a single node answers for a job that could
 * not be run, in the route's shape (docs/API.md): verify a record with verdict infra_error
 * and reward null, /run_code SandboxFusion's SandboxError, /v1/run a sandbox_error record. */
static void infra_answer(const char *target, const char *body, size_t len, const char *why,
                         struct worker_answer *ans)
{
    json_t *j = NULL, *req = json_loadb(body ? body : "", len, 0, NULL);

    ans->status = 200;
    snprintf(ans->ctype, sizeof(ans->ctype), "application/json");
    if (strcmp(target, "/v1/verify") == 0) {
        json_t *t = req ? json_object_get(req, "task_id") : NULL;
        if (!json_is_string(t) && req && json_is_object(json_object_get(req, "task")))
            t = json_object_get(json_object_get(req, "task"), "id");
        j = json_pack("{s:O?,s:s,s:n,s:i,s:i,s:[],s:s}", "task_id", json_is_string(t) ? t : NULL,
                      "verdict", "infra_error", "reward", "passed", 0, "total", 0, "tests",
                      "message", why);
    } else if (strcmp(target, "/run_code") == 0) {
        j = json_pack("{s:s,s:s,s:n,s:n,s:s,s:{}}", "status", "SandboxError", "message", why,
                      "compile_result", "run_result", "executor_pod_name", "crucible", "files");
    } else if (strcmp(target, "/v1/run") == 0) {
        struct result res;
        result_init(&res);
        result_fail(&res, "%s", why);
        j = result_to_json(&res);
    } else {
        ans->status = 500;
        j = json_pack("{s:{s:s,s:s}}", "error", "code", "infra_error", "message", why);
    }
    ans->body = j ? json_dumps(j, JSON_COMPACT) : NULL;
    ans->len = ans->body ? strlen(ans->body) : 0;
    json_decref(j);
    json_decref(req);
}

/* dead_letter(w, b, stream, msgid, deliveries) — the entry copied to crucible:dead with the
 * reason, answered as an infrastructure failure, acknowledged and deleted. */
static void dead_letter(struct worker *w, struct broker *b, const char *stream, const char *msgid,
                        long long deliveries)
{
    struct errbuf err = {{0}};
    redisReply *rep = broker_cmdf(b, &err, "XRANGE", stream, msgid, msgid, NULL);
    struct msg *m = NULL;
    char why[256], dl[24];

    if (broker_reply_ok(rep) && rep->type == REDIS_REPLY_ARRAY && rep->elements == 1)
        m = msg_from_entry(stream, rep->element[0]);
    freeReplyObject(rep);
    snprintf(dl, sizeof(dl), "%lld", deliveries);
    snprintf(why, sizeof(why),
             "the job was delivered to %lld workers that each stopped before answering it "
             "(a job that takes down its worker); it was moved to " BROKER_DEAD_STREAM,
             deliveries);
    if (m && msg_valid(m)) {
        struct worker_answer ans = {0};
        const char *argv[] = {"XADD",   BROKER_DEAD_STREAM, "*",       "id",     m->id,   "reply",
                              m->reply, "target",           m->target, "body",   m->body, "stream",
                              stream,   "deliveries",       dl,        "reason", why,     "by",
                              w->name};
        size_t lens[sizeof(argv) / sizeof(argv[0])];
        int n = (int)(sizeof(argv) / sizeof(argv[0]));
        for (int i = 0; i < n; i++)
            lens[i] = strlen(argv[i]);
        lens[10] = m->len;
        freeReplyObject(broker_cmd(b, &err, n, argv, lens));
        infra_answer(m->target, m->body, m->len, why, &ans);
        finish(w, b, m, &ans);
        free(ans.body);
        fprintf(stderr, "crucible: worker: job %s (%s) moved to " BROKER_DEAD_STREAM ": %s\n",
                m->id, m->target, why);
    } else {
        ack_delete(b, stream, msgid);
    }
    msg_free(m);
    pthread_mutex_lock(&w->lock);
    w->st.dead_lettered++;
    pthread_mutex_unlock(&w->lock);
}

/* reclaim(w, b) — the pending jobs of dead workers, per stream. */
static void reclaim(struct worker *w, struct broker *b)
{
    struct errbuf err = {{0}};
    char idle[24];

    snprintf(idle, sizeof(idle), "%lld", (long long)(w->cfg.claim_idle_s * 1000));
    for (size_t k = 1; k < w->nstreams; k++) { /* not its own: nobody else can run those */
        const char *s = w->streams[k];
        redisReply *rep =
            broker_cmdf(b, &err, "XPENDING", s, BROKER_GROUP, "IDLE", idle, "-", "+", "64", NULL);
        if (!broker_reply_ok(rep) || rep->type != REDIS_REPLY_ARRAY) {
            freeReplyObject(rep);
            continue;
        }
        for (size_t i = 0; i < rep->elements; i++) {
            const redisReply *e = rep->element[i];
            const char *msgid, *consumer;
            long long deliveries;
            unsigned room;
            if (e->type != REDIS_REPLY_ARRAY || e->elements != 4)
                continue;
            msgid = e->element[0]->str;
            consumer = e->element[1]->str;
            deliveries = e->element[3]->integer;
            if (strcmp(consumer, w->name) == 0 || broker_worker_alive(b, consumer))
                continue;
            if (deliveries >= (long long)w->cfg.max_attempts) {
                dead_letter(w, b, s, msgid, deliveries);
                continue;
            }
            pthread_mutex_lock(&w->lock);
            room = w->draining ? 0 : w->cfg.slots - w->busy - w->nclaimed;
            pthread_mutex_unlock(&w->lock);
            if (room == 0 || room > w->cfg.slots)
                continue; /* busy: another worker, or this one later, takes it */
            redisReply *c =
                broker_cmdf(b, &err, "XCLAIM", s, BROKER_GROUP, w->name, idle, msgid, NULL);
            if (broker_reply_ok(c) && c->type == REDIS_REPLY_ARRAY && c->elements == 1) {
                struct msg *m = msg_from_entry(s, c->element[0]);
                if (m) {
                    fprintf(stderr,
                            "crucible: worker: took job %s over from %s, which stopped (delivery "
                            "%lld)\n",
                            m->id ? m->id : "?", consumer, deliveries + 1);
                    pthread_mutex_lock(&w->lock);
                    claimed_push(w, m);
                    w->st.reclaimed++;
                    pthread_mutex_unlock(&w->lock);
                } else { /* deleted meanwhile: nothing to run */
                    freeReplyObject(broker_cmdf(b, &err, "XACK", s, BROKER_GROUP, msgid, NULL));
                }
            }
            freeReplyObject(c);
        }
        freeReplyObject(rep);
    }
}

#define SWEEP_EVERY 10 /* heartbeats between two sweeps of acknowledged entries */

/* sweep(w, b) — entries of the streams that were delivered (at or before the group's last
 * delivered id) and are no longer pending were acknowledged: their job is done, and a worker
 * deletes an entry before it acknowledges it (ack_delete), so one still in its stream is a
 * leftover (seen once in 97-cluster.t after a worker was SIGKILLed, cause not found). Deleted,
 * with a line, so that the streams hold only jobs waiting or running. */
static void sweep(struct worker *w, struct broker *b)
{
    struct errbuf err = {{0}};

    for (size_t k = 0; k < w->nstreams; k++) {
        const char *s = w->streams[k], *last = NULL;
        redisReply *groups = broker_cmdf(b, &err, "XINFO", "GROUPS", s, NULL), *range = NULL;
        size_t deleted = 0;

        if (broker_reply_ok(groups) && groups->type == REDIS_REPLY_ARRAY)
            for (size_t g = 0; g < groups->elements && !last; g++) {
                const char *name = broker_field(groups->element[g], "name", NULL);
                if (name && strcmp(name, BROKER_GROUP) == 0)
                    last = broker_field(groups->element[g], "last-delivered-id", NULL);
            }
        if (last)
            range = broker_cmdf(b, &err, "XRANGE", s, "-", last, "COUNT", "64", NULL);
        for (size_t i = 0;
             broker_reply_ok(range) && range->type == REDIS_REPLY_ARRAY && i < range->elements;
             i++) {
            const redisReply *e = range->element[i];
            redisReply *p;
            if (e->type != REDIS_REPLY_ARRAY || e->elements < 1 ||
                e->element[0]->type != REDIS_REPLY_STRING)
                continue;
            p = broker_cmdf(b, &err, "XPENDING", s, BROKER_GROUP, e->element[0]->str,
                            e->element[0]->str, "1", NULL);
            if (broker_reply_ok(p) && p->type == REDIS_REPLY_ARRAY && p->elements == 0) {
                redisReply *d = broker_cmdf(b, &err, "XDEL", s, e->element[0]->str, NULL);
                if (broker_reply_ok(d) && d->type == REDIS_REPLY_INTEGER && d->integer == 1)
                    deleted++;
                freeReplyObject(d);
            }
            freeReplyObject(p);
        }
        if (deleted)
            fprintf(stderr,
                    "crucible: worker: deleted %zu acknowledged entr%s left in %s (jobs already "
                    "answered)\n",
                    deleted, deleted == 1 ? "y" : "ies", s);
        freeReplyObject(range);
        freeReplyObject(groups);
    }
}

#define REPIN_EVERY 5 /* heartbeats between two looks at the node's sessions */

/* repin(w, b) — the node's sessions pinned to this worker where their pin is missing. */
static void repin(struct worker *w, struct broker *b)
{
    struct errbuf err = {{0}};
    json_t *ids = w->cfg.sessions ? w->cfg.sessions(w->cfg.ctx) : NULL, *id;
    size_t i;

    json_array_foreach(ids, i, id)
    {
        char key[BROKER_SESSION_ID_MAX + 32];
        if (!json_is_string(id) || !broker_idem_key_valid(json_string_value(id)) ||
            strlen(json_string_value(id)) >= BROKER_SESSION_ID_MAX)
            continue;
        snprintf(key, sizeof(key), BROKER_SESSION_KEY "%s", json_string_value(id));
        freeReplyObject(
            broker_cmdf(b, &err, "SET", key, w->name, "NX", "EX", BROKER_SESSION_S, NULL));
    }
    json_decref(ids);
}

static void heartbeat(struct worker *w, struct broker *b)
{
    struct errbuf err = {{0}};
    char ttl[24];
    double t = 3 * w->cfg.heartbeat_s;

    snprintf(ttl, sizeof(ttl), "%lld",
             (long long)(t * 1000) < 1000 ? 1000LL : (long long)(t * 1000));
    freeReplyObject(broker_cmdf(b, &err, "SET", w->hb_key, w->cfg.capacity ? w->cfg.capacity : "{}",
                                "PX", ttl, NULL));
}

/* error_answer(ans, status, code, message) — an error in the API's shape. */
static void error_answer(struct worker_answer *ans, unsigned status, const char *code,
                         const char *message)
{
    json_t *j = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", message);

    ans->status = status;
    snprintf(ans->ctype, sizeof(ans->ctype), "application/json");
    ans->body = j ? json_dumps(j, JSON_COMPACT) : NULL;
    ans->len = ans->body ? strlen(ans->body) : 0;
    json_decref(j);
}

/* hand_back(w, b) — jobs claimed but not started go back to their streams (added anew,
 * the old entry acknowledged and deleted), for the workers that stay; a session's request
 * cannot go elsewhere (the session lives here) and is answered 503. */
static void hand_back(struct worker *w, struct broker *b)
{
    struct errbuf err = {{0}};
    struct msg *m;

    pthread_mutex_lock(&w->lock);
    while ((m = w->claimed)) {
        w->claimed = m->next;
        w->nclaimed--;
        pthread_mutex_unlock(&w->lock);
        if (msg_valid(m) && strcmp(m->stream, w->at_stream) == 0) {
            struct worker_answer ans = {0};
            error_answer(&ans, 503, "worker_stopping",
                         "the worker holding this session is stopping; the session ends with it");
            finish(w, b, m, &ans);
            free(ans.body);
            msg_free(m);
            pthread_mutex_lock(&w->lock);
            continue;
        }
        if (msg_valid(m)) {
            const char *argv[20];
            size_t lens[20];
            int n = 0;
#define ARG(v, l) (argv[n] = (v), lens[n] = (l), n++)
#define SARG(v)   ARG((v), strlen(v))
            SARG("XADD");
            SARG(m->stream);
            SARG("*");
            SARG("id");
            SARG(m->id);
            SARG("reply");
            SARG(m->reply);
            SARG("seq");
            SARG(m->seq);
            SARG("method");
            SARG(m->method);
            SARG("target");
            SARG(m->target);
            SARG("ctype");
            SARG(m->ctype ? m->ctype : "application/json");
            if (m->key) {
                SARG("key");
                SARG(m->key);
            }
            SARG("body");
            ARG(m->body, m->len);
#undef SARG
#undef ARG
            redisReply *rep = broker_cmd(b, &err, n, argv, lens);
            if (m->key && broker_reply_ok(rep) && rep->type == REDIS_REPLY_STRING) {
                /* the key names the new entry: a gateway attached to it must not think it lost */
                char name[BROKER_IDEM_KEY_MAX + 32], where[BROKER_STREAM_MAX + 64];
                snprintf(name, sizeof(name), BROKER_IDEM_KEY "%s", m->key);
                snprintf(where, sizeof(where), "%s %s", m->stream, rep->str);
                freeReplyObject(
                    broker_cmdf(b, &err, "SET", name, where, "XX", "EX", BROKER_KEEP_S, NULL));
            }
            freeReplyObject(rep);
        }
        ack_delete(b, m->stream, m->msgid);
        msg_free(m);
        pthread_mutex_lock(&w->lock);
    }
    pthread_mutex_unlock(&w->lock);
}

static void *keeper_main(void *arg)
{
    struct worker *w = arg;
    struct broker *b = NULL;
    unsigned long beats = 0;

    for (;;) {
        struct timespec until;
        bool draining;

        if (!broker_alive(b)) {
            broker_close(b);
            b = connect_ready(w);
        }
        pthread_mutex_lock(&w->lock);
        draining = w->draining || w->failed;
        pthread_mutex_unlock(&w->lock);
        if (b && !draining) {
            heartbeat(w, b);
            reclaim(w, b);
            if (beats % SWEEP_EVERY == SWEEP_EVERY - 1)
                sweep(w, b);
            if (beats++ % REPIN_EVERY == 0)
                repin(w, b);
        }
        pthread_mutex_lock(&w->lock);
        if (w->draining || w->failed) {
            /* the slots stop taking jobs; wait for the running ones, then leave */
            while (w->running_threads > 0)
                pthread_cond_wait(&w->cond, &w->lock);
            pthread_mutex_unlock(&w->lock);
            if (b) {
                struct errbuf err = {{0}};
                hand_back(w, b);
                freeReplyObject(broker_cmdf(b, &err, "DEL", w->hb_key, w->at_stream, NULL));
            }
            break;
        }
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)w->cfg.heartbeat_s;
        until.tv_nsec += (long)((w->cfg.heartbeat_s - (time_t)w->cfg.heartbeat_s) * 1e9);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->cond, &w->lock, &until);
        pthread_mutex_unlock(&w->lock);
    }
    broker_close(b);
    return NULL;
}

struct worker *worker_start(const struct worker_config *cfg, struct errbuf *err)
{
    struct worker *w = calloc(1, sizeof(*w));
    char host[64] = "";

    if (!w || !(w->slots = calloc(cfg->slots, sizeof(*w->slots)))) {
        free(w);
        errbuf_set(err, "out of memory");
        return NULL;
    }
    w->cfg = *cfg;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    gethostname(host, sizeof(host) - 1);
    snprintf(w->name, sizeof(w->name), "%.60s-%d", host, (int)getpid());
    snprintf(w->hb_key, sizeof(w->hb_key), BROKER_WORKER_KEY "%s", w->name);
    snprintf(w->at_stream, sizeof(w->at_stream), BROKER_AT_STREAM "%s", w->name);
    if (!(w->streams = calloc(1 + PRIO_COUNT * (cfg->nimages + 2), sizeof(*w->streams)))) {
        free(w->slots);
        free(w);
        errbuf_set(err, "out of memory");
        return NULL;
    }
    w->streams[w->nstreams++] = strdup(w->at_stream);
    for (int p = 0; p < PRIO_COUNT; p++) {
        char s[BROKER_STREAM_MAX];
        for (size_t i = 0; i < cfg->nimages; i++)
            if (strcmp(cfg->images[i], "host") != 0 &&
                broker_image_stream((enum job_priority)p, cfg->images[i], s, sizeof(s)))
                w->streams[w->nstreams++] = strdup(s);
        if (cfg->job_memory_mb &&
            broker_memory_stream((enum job_priority)p, cfg->job_memory_mb, s, sizeof(s)))
            w->streams[w->nstreams++] = strdup(s);
        w->streams[w->nstreams++] = strdup(broker_job_stream((enum job_priority)p));
    }
    for (size_t i = 0; i < w->nstreams; i++)
        if (!w->streams[i]) {
            errbuf_set(err, "out of memory");
            worker_free(w);
            return NULL;
        }
    for (unsigned i = 0; i < cfg->slots; i++) {
        if (pthread_create(&w->slots[i], NULL, slot_main, w) != 0)
            break;
        w->nslots++;
    }
    w->running_threads = w->nslots;
    if (w->nslots != cfg->slots || pthread_create(&w->keeper, NULL, keeper_main, w) != 0) {
        errbuf_set(err, "worker: cannot start its threads");
        worker_drain(w);
        worker_free(w);
        return NULL;
    }
    w->keeper_started = true;
    return w;
}

const char *worker_name(const struct worker *w)
{
    return w->name;
}

void worker_drain(struct worker *w)
{
    pthread_mutex_lock(&w->lock);
    w->draining = true;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    for (unsigned i = 0; i < w->nslots; i++)
        pthread_join(w->slots[i], NULL);
    w->nslots = 0;
    if (w->keeper_started)
        pthread_join(w->keeper, NULL);
    w->keeper_started = false;
}

bool worker_failed(struct worker *w)
{
    bool f;

    pthread_mutex_lock(&w->lock);
    f = w->failed;
    pthread_mutex_unlock(&w->lock);
    return f;
}

void worker_stats(struct worker *w, struct worker_stats *st)
{
    pthread_mutex_lock(&w->lock);
    *st = w->st;
    st->busy = w->busy;
    pthread_mutex_unlock(&w->lock);
}

void worker_free(struct worker *w)
{
    struct msg *m;

    if (!w)
        return;
    while ((m = w->claimed)) {
        w->claimed = m->next;
        msg_free(m);
    }
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    for (size_t i = 0; i < w->nstreams; i++)
        free(w->streams[i]);
    free(w->streams);
    free(w->slots);
    free(w);
}
