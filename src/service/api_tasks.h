/*
 * api_tasks.h — the task library over HTTP (docs/API.md, "Task library"):
 *   POST /v1/tasks          import a JSONL body            -> {new, changed, unchanged, bad,
 * errors} GET  /v1/tasks          list, filtered by query         -> {count, tasks: [...]} GET
 * /v1/tasks/sample   draw by pass-rate band          -> {seed, count, tasks: [...]} GET
 * /v1/tasks/stats    counts, buckets, histogram      -> {...} GET  /v1/tasks/{id}     one task with
 * its versions      -> {...} Runs on the loop thread; every answer is given before it returns.
 */
#ifndef CRUCIBLE_API_TASKS_H
#define CRUCIBLE_API_TASKS_H

#include "service/http.h"
#include "library/store.h"

/* api_tasks_route(s, r, route, route_size) — answers r when its path is under /v1/tasks
 * (s NULL: 404 saying the server has no library). Returns the HTTP status it answered
 * with, or 0 when the path is not a task route; route gets the name for metrics. */
unsigned api_tasks_route(struct store *s, struct http_request *r, char *route, size_t route_size);

#endif
