/*
 * api_fuzz.h — a route's request checking without a server: what the fuzz targets of
 * fuzz/api_*.c drive (docs/TESTING.md, "Fuzzing"). Not used by the server itself.
 */
#ifndef CRUCIBLE_API_FUZZ_H
#define CRUCIBLE_API_FUZZ_H

#include <stdbool.h>
#include <stddef.h>

#include "service/api.h"
#include "util.h"

/* api_check_request(a, route, body, len, err) — parses and validates body (len bytes and a NUL
 * after them, as http_body gives it) as the POST route would ("/v1/run", "/v1/verify", "/v1/batch",
 * "/run_code", or
 * "/v1/tasks": the import's JSONL lines, each through task_from_json and, when a has a
 * store, store_import inside a transaction that is rolled back), then frees everything:
 * nothing is reserved, submitted or committed. a needs no scheduler. 0 when the route would
 * accept the request; -EINVAL (400), -ENOENT (404), -ENOMEM / -EIO (500) with err saying
 * why, as the route would answer; -ENOTSUP for another route. */
int api_check_request(struct api *a, const char *route, const char *body, size_t len,
                      struct errbuf *err);

struct api_sessions;

/* api_sessions_check_body(as, action, body, len, err) — parses and validates body (len bytes
 * and a NUL) as the sessions' routes would: action "create" (POST /v1/sessions), "exec",
 * "verify" or "fork" (POST /v1/sessions/{id}/ACTION, for a fresh session with the server's
 * defaults), then frees everything: no session is made, nothing runs. as needs neither a
 * scheduler nor api workers. 0 when the route would accept it; -EFBIG (413), -EINVAL (400),
 * -ENOENT (404: verify's task_id), -ENOMEM / -EIO (500) with err saying why; -ENOTSUP for
 * another action. */
int api_sessions_check_body(struct api_sessions *as, const char *action, const char *body,
                            size_t len, struct errbuf *err);

/* api_sessions_check_files(as, put, path, path_len, mode, format, list, err) — the query of
 * PUT (put) or GET /v1/sessions/{id}/files checked as the route does (each value NULL when
 * absent; path_len the decoded path's length: it may hold NUL bytes). 0, or -EINVAL (400) /
 * -ENOMEM with err saying why. */
int api_sessions_check_files(struct api_sessions *as, bool put, const char *path, size_t path_len,
                             const char *mode, const char *format, const char *list,
                             struct errbuf *err);

#endif
