/*
 * api.h — the routes of `crucible serve` (docs/API.md): requests parsed and validated,
 * turned into scheduler jobs, and their results answered as JSON or streamed as NDJSON.
 * Everything here runs on the loop thread except the jobs' run functions (sandbox workers)
 * and the parsing of request bodies and the task library's work (api workers, offload.h).
 */
#ifndef CRUCIBLE_API_H
#define CRUCIBLE_API_H

#include <stdio.h>

#include "service/http.h"
#include "sandbox/image.h"
#include "metrics.h"
#include "sandbox/sandbox.h"
#include "service/scheduler.h"

struct pool;
struct offload;
struct api_sessions;
struct gateway;

struct api_config {
    const struct image *host;            /* the resolved "host" image */
    const struct image_registry *images; /* what requests and tasks may name ("host" too) */
    struct sandbox_limits limits;        /* defaults for omitted request limits */
    const char *token;                   /* bearer token, or NULL: no authentication */
    uint64_t max_pids;                   /* a job's limits.pids at most (--max-pids) */
    unsigned infra_retries;
    size_t max_batch;           /* items per batch */
    struct pool *pool;          /* warm sandboxes, or NULL */
    struct pool *run_code_pool; /* warm sandboxes with lo up, for /run_code, or NULL */
    struct pyserver *pyserver;  /* the Python fork server verifications use, or NULL: none */
    struct store *store;        /* the task library (--db), or NULL */
    uint64_t slot_memory_mb;    /* --memory / --slots: what /run_code gives a job without a limit */
    struct offload *offload;    /* the api workers: request bodies and library work */
    bool trace;                 /* per-job phase timings on stderr ($CRUCIBLE_TRACE) */
    /* Memory held for jobs (docs/API.md "Limits of the server"). */
    uint64_t max_output_kb; /* most limits.output_kb a request or task may ask (--max-output-kb) */
    uint64_t output_budget; /* bytes of answers not yet sent, all jobs (--output-budget-mb) */
    size_t max_fetch_bytes; /* fetch_files bytes read back per request (--max-fetch-mb) */
    size_t stream_buffer;   /* unsent bytes of a batch stream before its items pause */
    double stream_stall_s;  /* a batch paused that long (client not reading) is cancelled */
    /* /run_code: seconds its client waits beyond compile_timeout + run_timeout (verl: 10);
     * a request that cannot start in time to answer within that gets 504; 0: no limit. */
    double run_code_margin;
    struct api_sessions *sessions; /* the sessions' routes (/v1/sessions), or NULL: none */
    struct gateway *gateway;       /* cluster mode: job routes go to workers (gateway.h), or NULL */
};

struct api;

/* api_new(sched, metrics, cfg, log) — log gets one JSON object per line per event. */
struct api *api_new(struct sched *s, struct metrics *m, const struct api_config *cfg, FILE *log);
void api_free(struct api *a);

/* api_precheck — the server's precheck (arg: the api), on the headers alone: with a token
 * configured every route but /healthz answers 401 without the right one, before anything
 * else; then an unknown route answers 404 and a wrong method 405. api_handle only sees
 * requests it let through. */
void api_precheck(void *arg, struct http_request *r);
/* api_handle — the http_handler of the server (arg: the api). */
void api_handle(void *arg, struct http_request *r);

/* api_timeout_ms(a) — how long the loop may sleep before api_tick must run (-1: any). */
int api_timeout_ms(struct api *a);
/* api_tick(a) — resumes the batches whose clients caught up with their streams, and
 * cancels those whose clients stopped reading (--stream-stall-s). Loop thread. */
void api_tick(struct api *a);

/* api_output_take(a, bytes) — bytes of an answer not yet sent taken from the server-wide
 * output budget (--output-budget-mb) that the records of runs are counted in too: true, or false
 * when the budget has not that much room (nothing taken). api_output_give(a, bytes) gives them
 * back once the answer left (or was dropped). For answers made outside api.c (a session's
 * downloads). Any thread. */
bool api_output_take(struct api *a, uint64_t bytes);
void api_output_give(struct api *a, uint64_t bytes);

/* api_json_depth(text, len) — how deep arrays and objects nest in text (strings skipped); a
 * linear scan, so that a body nested deeper than API_JSON_DEPTH_MAX is refused before jansson
 * recurses. */
#define API_JSON_DEPTH_MAX 64 /* a task nests about 6 levels; a batch of tasks about 8 */
size_t api_json_depth(const char *text, size_t len);

/* api_only_keys(j, allowed, err) — 0 when every field of object j is in the NULL-terminated
 * list allowed, else -EINVAL with err naming the first unknown field (a typo in a request must
 * not pass silently). Shared by the routes' parsers. */
int api_only_keys(const json_t *j, const char *const *allowed, struct errbuf *err);

/* api_log(a, event, fields) — one log line {"ts", "event", ...fields}; fields is stolen. */
void api_log(struct api *a, const char *event, json_t *fields);

#endif
