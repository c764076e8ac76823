/*
 * gateway.h — `crucible serve --broker`: the single node's HTTP API with its jobs run by
 * workers through Redis Streams (broker.h, docs/CLUSTER.md).
 *
 * A job route's request (/v1/run, /v1/verify, /v1/batch, /run_code) is admitted here —
 * 503 with Retry-After when the broker is unreachable or no worker is alive, 429 when
 * max_inflight requests, or max_inflight_bytes of bodies, already wait — then added to its
 * priority's stream with an id of this gateway, and answered with the status, type and body of the
 * first reply a worker writes for that id: exactly what the worker's single node answered. Later
 * replies for the same id (a reclaimed job run twice) are counted and dropped.
 *
 * Nothing admitted is lost while the gateway runs: a job stays in memory until answered;
 * when the broker comes back after losing its data (a restart without persistence: its run
 * id changed) or a job could not be added, every unanswered job is added again.
 *
 * Nor when it restarts, for clients that send an Idempotency-Key and retry: a job is admitted
 * once per key (crucible:idem:KEY), its answer kept an hour (crucible:answer:KEY, written by
 * the worker before the reply), so a retry through any gateway is answered with the kept
 * answer, or waits for the job admitted before — it is not run again.
 *
 * Sessions: POST /v1/sessions goes to any worker, which pins the new session to itself
 * (crucible:session:ID); the session's requests go to that worker's own stream; a session
 * whose worker stopped answers 410, whether the request came before or after.
 *
 * Threads: the loop's (gateway_forward, the answers), a sender (XADD) and a reader (the
 * reply stream, the broker's health, stream depths), each with its own connection.
 */
#ifndef CRUCIBLE_GATEWAY_H
#define CRUCIBLE_GATEWAY_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/broker.h"
#include "service/http.h"
#include "service/loop.h"

struct gateway_config {
    struct broker_url url;
    size_t max_inflight;       /* requests waiting for workers at most; more get 429 */
    size_t max_inflight_bytes; /* their bodies' bytes at most (0: 1 GiB); more get 429,
                                * unless nothing waits (a body alone always fits) */
    /* answered(ctx, route, status, t0) — on the loop thread, when a forwarded request's
     * answer went out (for the request counters); route is the route's path. */
    void (*answered)(void *ctx, const char *route, unsigned status, double t0);
    void *ctx;
};

struct gateway_stats {
    size_t inflight, inflight_bytes;
    uint64_t admitted, answered, duplicates, resent, refused_busy, refused_down;
    uint64_t replayed;      /* answered with the answer kept under their Idempotency-Key */
    uint64_t attached;      /* their key was admitted before: they waited for that job */
    uint64_t sessions_lost; /* a session's request whose worker had stopped: 410 */
    bool broker_up;
    long workers_alive;            /* heartbeat keys seen at the last poll; -1: unknown */
    long slots_alive;              /* the slots their heartbeats announce */
    long long depth[PRIO_COUNT];   /* XLEN of each job stream at the last poll; -1: unknown */
    long long pending[PRIO_COUNT]; /* delivered to a worker, not yet acknowledged; -1 */
    long long dead;                /* XLEN crucible:dead */
};

struct gateway;

/* gateway_new(loop, cfg, err) — starts the threads; the broker need not be up yet (the
 * gateway answers 503 until it is). NULL with err set. */
struct gateway *gateway_new(struct loop *loop, const struct gateway_config *cfg,
                            struct errbuf *err);
/* gateway_free(g) — stops the threads; unanswered requests get 503. Loop thread. */
void gateway_free(struct gateway *g);

/* What the gateway needs to know of a request it forwards (the method, path, query, content
 * type and body are taken from it as they are). */
struct gateway_request {
    const char *route;      /* for the counters: a static string ("/v1/run"...) */
    enum job_priority prio; /* its job stream */
    const char *session;    /* the session it names (sent to that session's worker), or NULL */
    const char *key;        /* its Idempotency-Key (broker_idem_key_valid), or NULL */
    bool list_sessions;     /* GET /v1/sessions: answered with the broker's session pins */
    const char *image;      /* the image it names, or NULL: placed on the workers holding it */
    uint64_t memory_mb;     /* the memory limit it names (0: none): without an image, placed on
                             * the workers whose nodes take a job of that much (place()) */
    char *body;             /* the body to send instead of the request's (malloc'd, taken), or
                             * NULL */
    size_t len;
    /* rewrite(ctx, status, body, len, &out, &outlen) — on the loop thread with the first
     * answer, before it goes out (a verification by task_id records its outcome there): true
     * with *out a malloc'd body to send instead. Called exactly once per forwarded request,
     * with status 0 and no body when it ended unanswered (the gateway stopping, or refused);
     * ctx is the hook's to free then. */
    bool (*rewrite)(void *ctx, unsigned status, const char *body, size_t len, char **out,
                    size_t *outlen);
    void *rewrite_ctx;
};

/* gateway_forward(g, r, q) — loop thread; r is answered later (or now: 429, 503, 414). */
void gateway_forward(struct gateway *g, struct http_request *r, const struct gateway_request *q);

/* A job of the gateway's own making (a batch's item, the check of a batch's items), whose
 * answer goes to a function instead of an HTTP request. */
struct gateway_job {
    const char *target;     /* "/v1/run", "/v1/verify", "/v1/batch?check=1" (copied) */
    enum job_priority prio; /* its job stream */
    const char *image;      /* placed on the workers holding it (place()), or NULL */
    uint64_t memory_mb;     /* as gateway_request's */
    const char *key;        /* its Idempotency-Key (broker_idem_key_valid), or NULL */
    char *body;             /* malloc'd, taken (also when refused) */
    size_t len;
    /* done(ctx, status, body, len) — on the loop thread, exactly once per submitted job
     * that was not dropped: with the first answer; status 0 when the gateway stopped first. */
    void (*done)(void *ctx, unsigned status, const char *body, size_t len);
    void *ctx;
};

/* gateway_submit(g, job, &seq, &code, why, size) — 0 with seq set (done comes later), or the
 * status it is refused with now, code and why saying why (503: no live worker holds its image,
 * or takes its memory; 500). Loop thread. The job is not counted against --queue: its caller
 * bounds how many it has. */
unsigned gateway_submit(struct gateway *g, struct gateway_job *job, uint64_t *seq,
                        const char **code, char *why, size_t size);

/* gateway_drop(g, seq) — done will not be called for job seq (its batch's client left); a
 * worker may still run it. Loop thread. */
void gateway_drop(struct gateway *g, uint64_t seq);

/* gateway_set_answered(g, answered, ctx) — replaces cfg.answered (set before requests). */
void gateway_set_answered(struct gateway *g,
                          void (*answered)(void *ctx, const char *route, unsigned status,
                                           double t0),
                          void *ctx);

void gateway_stats(struct gateway *g, struct gateway_stats *st);

#endif
