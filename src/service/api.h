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

struct api_config {
    const struct image *host;     /* the resolved "host" image */
    struct sandbox_limits limits; /* defaults for omitted request limits */
    const char *token;            /* bearer token, or NULL: no authentication */
    unsigned infra_retries;
    size_t max_batch;        /* items per batch */
    struct pool *pool;       /* warm sandboxes, or NULL */
    struct store *store;     /* the task library (--db), or NULL */
    struct offload *offload; /* the api workers: request bodies and library work */
    bool trace;              /* per-job phase timings on stderr ($CRUCIBLE_TRACE) */
};

struct api;

/* api_new(sched, metrics, cfg, log) — log gets one JSON object per line per event. */
struct api *api_new(struct sched *s, struct metrics *m, const struct api_config *cfg, FILE *log);
void api_free(struct api *a);

/* api_handle — the http_handler of the server (arg: the api). */
void api_handle(void *arg, struct http_request *r);

/* api_log(a, event, fields) — one log line {"ts", "event", ...fields}; fields is stolen. */
void api_log(struct api *a, const char *event, json_t *fields);

#endif
