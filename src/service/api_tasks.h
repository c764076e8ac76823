/*
 * api_tasks.h — the task library over HTTP (docs/API.md, "Task library"):
 *   POST /v1/tasks         import a JSONL body   -> {new, changed, unchanged, bad, errors}
 *   GET  /v1/tasks         list, by query        -> {count, tasks: [...]}
 *   GET  /v1/tasks/sample  by pass-rate band     -> {seed, count, tasks: [...]}
 *   GET  /v1/tasks/stats   counts and histogram  -> {...}
 *   GET  /v1/tasks/{id}    one task, versions    -> {...}
 * The query is checked on the loop thread; the store work runs on an api worker (offload.h).
 */
#ifndef CRUCIBLE_API_TASKS_H
#define CRUCIBLE_API_TASKS_H

#include "service/http.h"
#include "library/store.h"

struct offload;

/* api_tasks_answered(ctx, route, status, t0) — an answer given later went out (loop thread);
 * t0: util_now() when the request was taken. Not called when the client left first. */
typedef void (*api_tasks_answered)(void *ctx, const char *route, unsigned status, double t0);

/* api_tasks_route(s, off, r, route, route_size, answered, ctx) — r's path under /v1/tasks
 * (s NULL: 404 saying the server has no library). The query is checked at once; the store
 * work (an import, a list...) runs on an api worker of off and is answered from the loop
 * later. Returns 0 when the path is not a task route; the HTTP status when r was answered
 * at once (route gets the name for metrics); -EINPROGRESS when the answer comes later, and
 * then answered(ctx, ...) once it went out. Loop thread. */
int api_tasks_route(struct store *s, struct offload *off, struct http_request *r, char *route,
                    size_t route_size, api_tasks_answered answered, void *ctx);

#endif
