/*
 * recent.h — the last failures a server answered, with their messages, for the dashboard
 * (GET /v1/stats "recent_failures"): HTTP errors and jobs that ended in crucible's own
 * failure. A fixed ring: the oldest entry is overwritten; thread-safe.
 */
#ifndef CRUCIBLE_RECENT_H
#define CRUCIBLE_RECENT_H

#include <jansson.h>

#define RECENT_MAX 32 /* entries kept */

struct recent;

struct recent *recent_new(void);
void recent_free(struct recent *r);

/* recent_add(r, route, status, code, message) — one failure: the route it came on, the HTTP
 * status or 0 (a job's), a short code ("infra_error", "not_found"), its message (cut to
 * 300 bytes). Nothing is kept when r is NULL. */
void recent_add(struct recent *r, const char *route, unsigned status, const char *code,
                const char *message);

/* recent_json(r) — [{"time" (Unix seconds), "route", "status", "code", "message"}], newest
 * first; a new reference. */
json_t *recent_json(struct recent *r);

#endif
