/*
 * api_fuzz.h — a route's request checking without a server: what the fuzz targets of
 * fuzz/api_*.c drive (docs/TESTING.md, "Fuzzing"). Not used by the server itself.
 */
#ifndef CRUCIBLE_API_FUZZ_H
#define CRUCIBLE_API_FUZZ_H

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

#endif
