/*
 * forward.h — the API's routes on a gateway (`crucible serve --broker`, docs/CLUSTER.md): what
 * each request needs before gateway.h forwards it — its stream (priority), its session's
 * worker, its Idempotency-Key — and the one thing a worker cannot do: a verification by
 * task_id, whose task and outcome live in the gateway's task library (--db). The gateway
 * loads the task, sends it inline, and records the worker's verdict in the library before it
 * answers, adding "recorded" and "model" as a single node does.
 *
 * The route calls run on the loop thread and return 0 when the request was forwarded (the
 * gateway answers it, and counts it, later), or the status it was answered with now.
 */
#ifndef CRUCIBLE_FORWARD_H
#define CRUCIBLE_FORWARD_H

#include "cluster/gateway.h"
#include "service/http.h"

struct store;
struct offload;

struct forward_config {
    struct gateway *gateway;
    struct store *store;     /* the task library (--db), or NULL */
    struct offload *offload; /* the api workers: a batch is parsed and split there */
    size_t max_batch;        /* items per batch */
    size_t stream_buffer;    /* unsent bytes of a batch stream before it stops sending items */
    double stream_stall_s;   /* a batch stopped that long (client not reading) is cancelled */
    /* answered(ctx, route, status, t0) — a batch's answer began (the gateway's own
     * cfg.answered counts the other routes). */
    void (*answered)(void *ctx, const char *route, unsigned status, double t0);
    void *ctx;
};

struct forward;

/* forward_new(cfg) — NULL when out of memory. forward_free(fw) — after the HTTP server
 * stopped (no batch is left open). */
struct forward *forward_new(const struct forward_config *cfg);
void forward_free(struct forward *fw);

/* forward_job(fw, r, route) — POST /v1/run, /v1/verify, /run_code. */
unsigned forward_job(struct forward *fw, struct http_request *r, const char *route);

/* forward_batch(fw, r) — POST /v1/batch (batch.c). The batch is parsed and split on an api
 * worker; its items are checked by workers holding their images (POST /v1/batch?check=1,
 * one check per image) — an item that does not parse answers 400 before anything runs, as
 * on a single node; then each item is a job of its own, placed by its image, sent when the
 * items it comes after succeeded (or answered skipped), a window of twice the live workers'
 * slots at a time, its line streamed as its answer comes. A by-id verification is inlined
 * and recorded as forward_job does. With an Idempotency-Key K, item i carries the key K.i:
 * the batch resent after a gateway restart runs no item twice. */
unsigned forward_batch(struct forward *fw, struct http_request *r);

/* forward_session(fw, r, &route) — a /v1/sessions request; route: its name for the counters
 * ("/v1/sessions/{id}/exec"...). */
unsigned forward_session(struct forward *fw, struct http_request *r, const char **route);

/* What the batches did (for /metrics). */
struct forward_stats {
    uint64_t batches;   /* batches whose items went to the workers (their stream began) */
    uint64_t refused;   /* batches answered 400 (or another error) before any item ran */
    uint64_t items;     /* items sent to the workers */
    uint64_t skipped;   /* items skipped: an item they come after failed */
    uint64_t cancelled; /* batches whose client left (or stalled) before the last line */
};

void forward_stats(const struct forward *fw, struct forward_stats *st);

/* forward_tick(fw) — resumes batches whose client read their stream, cancels the stalled;
 * forward_timeout_ms(fw): how soon it must run again (-1: no batch waits). Loop thread. */
void forward_tick(struct forward *fw);
int forward_timeout_ms(const struct forward *fw);

#endif
