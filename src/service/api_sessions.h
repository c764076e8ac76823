/*
 * api_sessions.h — the sessions' routes (docs/API.md, "Sessions"): stateful sandboxes a client
 * creates, runs commands in, reads and writes files of, forks, verifies and deletes.
 *
 *   POST   /v1/sessions                create            -> 201 session info
 *   GET    /v1/sessions                list              -> {sessions, count, max}
 *   GET    /v1/sessions/{id}           info and usage    -> session info
 *   DELETE /v1/sessions/{id}           delete            -> {id, deleted}
 *   POST   /v1/sessions/{id}/exec      a command or code -> a result record (as /v1/run's)
 *   PUT    /v1/sessions/{id}/files     upload (raw, or a tar with format=tar)
 *   GET    /v1/sessions/{id}/files     download (raw, a listing with list=1, a tar)
 *   POST   /v1/sessions/{id}/fork      a copy of its files -> 201 session info
 *   POST   /v1/sessions/{id}/verify    a task's tests over its files -> a verification record
 *
 * Requests are checked on the loop thread. What touches a sandbox runs elsewhere: execs and
 * verifications are scheduler jobs (a priority, a slot, memory and pids like any job), the
 * rest (creating, forking, files, destroying) runs on the api workers (offload.h). At most one
 * operation runs per session; another gets 409. A reaper (api_sessions_tick) reclaims
 * sessions whose ttl or idle ttl ran out.
 */
#ifndef CRUCIBLE_API_SESSIONS_H
#define CRUCIBLE_API_SESSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h"
#include "sandbox/image.h"
#include "sandbox/sandbox.h"
#include "service/http.h"
#include "service/scheduler.h"

struct offload;
struct pool;
struct store;

struct api_sessions_config {
    const struct sandbox_runtime *rt;    /* the server's: outlives every session */
    const struct image *host;            /* the "host" image */
    const struct image_registry *images; /* what a session may name */
    struct sandbox_limits defaults;      /* a session's limits when the request omits them */
    uint64_t max_pids;                   /* limits.pids at most (--max-pids) */
    uint64_t max_output_kb;              /* limits.output_kb at most (--max-output-kb) */
    size_t max_sessions;                 /* --max-sessions */
    double ttl_s, idle_ttl_s;            /* defaults (--session-ttl, --session-idle-ttl) */
    size_t max_file_bytes;               /* most bytes a download or a tar of one answer holds */
    struct store *store;                 /* the task library for verify's task_id, or NULL */
    struct pool *spares; /* sandboxes made ahead (pool.h) of a default session's shape, or NULL:
                          * a create or fork of a session of that shape takes one */
};

/* api_sessions_answered(ctx, route, status, t0) — an answer given later went out. */
typedef void (*api_sessions_answered)(void *ctx, const char *route, unsigned status, double t0);

struct api_sessions;

/* api_sessions_new(cfg, sched, off, m) — an empty session table. NULL on ENOMEM. */
struct api_sessions *api_sessions_new(const struct api_sessions_config *cfg, struct sched *sched,
                                      struct offload *off, struct metrics *m);

/* api_sessions_set_log(as, log, ctx) — log(ctx, event, fields) gets one line per session
 * made ("session_created") and ended ("session_ended": reason, age, execs); fields is
 * stolen. The server's api_log, once the api exists. */
void api_sessions_set_log(struct api_sessions *as,
                          void (*log)(void *ctx, const char *event, json_t *fields), void *ctx);

/* The server-wide budget of answers not yet sent (--output-budget-mb; api_output_take and
 * api_output_give): a download (GET .../files, one file or a tar) holds its bytes in it from
 * the read until its answer left, and is answered 503 (Retry-After) when the budget has no room
 * for the most it may be. Without one, downloads are bounded by max_file_bytes alone. */
struct api_sessions_budget {
    uint64_t total; /* the budget's size (a download is at most that, or max_file_bytes) */
    bool (*take)(void *ctx, uint64_t bytes);
    void (*give)(void *ctx, uint64_t bytes);
    void *ctx;
};

/* api_sessions_set_output_budget(as, b) — b is copied; the server's api, once it exists. */
void api_sessions_set_output_budget(struct api_sessions *as, const struct api_sessions_budget *b);

/* api_sessions_stop(as) — the server is stopping: from now on sessions are destroyed on the
 * loop thread, not handed to the api workers (which are going away). Call before http_stop. */
void api_sessions_stop(struct api_sessions *as);

/* api_sessions_free(as) — destroys every session's sandbox (blocking) and frees the table.
 * After the scheduler and the api workers have stopped. */
void api_sessions_free(struct api_sessions *as);

/* api_sessions_path(path) — is path /v1/sessions or below it? */
bool api_sessions_path(const char *path);

/* api_sessions_route(as, r, route, route_size, answered, ctx) — as api_tasks_route: 0 when
 * path is not a session route; the HTTP status when r was answered at once (route names it
 * for metrics); -EINPROGRESS when the answer comes later, then answered(ctx, ...) once it
 * went out. Loop thread. */
int api_sessions_route(struct api_sessions *as, struct http_request *r, char *route,
                       size_t route_size, api_sessions_answered answered, void *ctx);

/* api_sessions_precheck(as, r, route, route_size) — on the headers alone (http.h's precheck):
 * answers a request that cannot go on — no such route or session, a wrong method, a busy
 * session — before its body is read (an upload to a bad id is not read at all). The status
 * answered, or 0 when r goes on to api_sessions_route. Loop thread. */
int api_sessions_precheck(struct api_sessions *as, struct http_request *r, char *route,
                          size_t route_size);

/* api_sessions_timeout_ms(as) — how long the loop may sleep before the reaper must look
 * (-1: no session). api_sessions_tick(as) — reclaims what ran out; sets the gauges. */
int api_sessions_timeout_ms(struct api_sessions *as);
void api_sessions_tick(struct api_sessions *as);

#endif
