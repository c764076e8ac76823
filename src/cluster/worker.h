/*
 * worker.h — a consumer of cluster mode's job streams (broker.h, docs/CLUSTER.md): `slots`
 * threads take jobs, highest priority first, from the group "crucible-workers", have each
 * run (worker_config.run: in `crucible worker`, a request to the worker's own single node),
 * write the answer to the job's reply stream, and only then acknowledge and delete the job.
 *
 * A housekeeping thread renews the worker's heartbeat (crucible:worker:NAME, its capacity as
 * JSON, expiring after 3 heartbeats and 2 s more) and reclaims the jobs of dead workers: a job
 * pending for longer than claim_idle_s with a consumer whose heartbeat is gone is claimed (XCLAIM)
 * and run here when a slot is free, or — when it was already delivered max_attempts times, each
 * time to a worker that died — moved to crucible:dead with the reason and answered as an
 * infrastructure failure in the route's own shape (verify: verdict infra_error, reward null).
 * A live worker's long job is never taken from it.
 */
#ifndef CRUCIBLE_WORKER_H
#define CRUCIBLE_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "cluster/broker.h"

struct worker_job {
    const char *id;     /* the gateway's id of the job */
    const char *method; /* "POST", or a session's GET, PUT, DELETE */
    const char *target; /* the route with its query: "/v1/run", "/v1/sessions/ID/files?..." */
    const char *ctype;
    const char *body;
    size_t len;
};

struct worker_answer {
    unsigned status;
    char ctype[128];
    char *body; /* malloc'd; freed by the worker */
    size_t len;
};

struct worker_config {
    struct broker_url url;
    unsigned slots;            /* jobs at once */
    unsigned max_attempts;     /* deliveries to dying workers before the dead-letter stream */
    double claim_idle_s;       /* a dead worker's job is reclaimed after that long pending */
    double heartbeat_s;        /* heartbeat period (its key expires after 3) */
    const char *capacity;      /* JSON object stored in the heartbeat */
    const char *const *images; /* the images its node holds ("host" is everyone's): it also
                                * reads their streams (broker_image_stream) */
    size_t nimages;
    uint64_t job_memory_mb; /* the most memory its node takes for one job: it also reads that
                             * memory's streams (broker_memory_stream); 0: unknown */
    /* run(ctx, job, ans) — on a slot thread: 0 with ans set, or -1 when this worker cannot
     * run anything any more (its node is gone): the job is left pending for another. */
    int (*run)(void *ctx, const struct worker_job *job, struct worker_answer *ans);
    /* sessions(ctx) — the ids of the sessions its node holds (a JSON array of strings, the
     * caller's), or NULL: every few heartbeats they are pinned to this worker again when their
     * pin is missing (the broker lost its data). NULL: not asked. */
    json_t *(*sessions)(void *ctx);
    void *ctx;
};

struct worker_stats {
    uint64_t done, reclaimed, dead_lettered;
    uint64_t superseded; /* runs whose answer lost to one kept before (the job ran twice) */
    unsigned busy;
};

struct worker;

/* worker_start(cfg, err) — the threads started; the broker may be down (they reconnect). */
struct worker *worker_start(const struct worker_config *cfg, struct errbuf *err);
/* worker_name(w) — its consumer name: HOST-PID. */
const char *worker_name(const struct worker *w);
/* worker_drain(w) — takes no new job; returns once the running ones are answered and
 * acknowledged, with the heartbeat removed. */
void worker_drain(struct worker *w);
/* worker_failed(w) — true once run() answered -1 (the worker should exit). */
bool worker_failed(struct worker *w);
void worker_stats(struct worker *w, struct worker_stats *st);
void worker_free(struct worker *w);

#endif
