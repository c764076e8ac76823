/*
 * forward_int.h — what forward.c and batch.c share: the forwarder's state, and a verification
 * by task_id made into one a worker can run (its task inline) and recorded when answered.
 */
#ifndef CRUCIBLE_FORWARD_INT_H
#define CRUCIBLE_FORWARD_INT_H

#include <jansson.h>
#include <stdbool.h>

#include "cluster/forward.h"
#include "util.h"

struct gw_batch;

struct forward {
    struct forward_config cfg;
    struct gw_batch *paused; /* batches that stopped sending items: their client is behind */
    struct forward_stats st;
};

/* forward_key(r, &key) — the request's Idempotency-Key header (NULL when none): 0, or 400
 * when r was answered for a malformed one. */
unsigned forward_key(struct http_request *r, const char **key);

/* forward_memory_mb(req, verify) — the memory limit a run request (its "limits") or a
 * verification (its inline task's "limits") names; 0 when it names none. */
uint64_t forward_memory_mb(const json_t *req, bool verify);

struct by_id;

/* by_id_inline(store, j, &hook, image, size, err) — j, a verification naming "task_id", made
 * into one with the library's task inline ("task_id" and "model" removed); hook: what
 * by_id_record needs; image: the task's. 0, or the status to answer (400, 404, 500) with err
 * set. Any thread. */
unsigned by_id_inline(struct store *store, json_t *j, struct by_id **hook, char *image, size_t size,
                      struct errbuf *err);

/* by_id_record(hook, status, body, len, &out, &outlen) — gateway_request.rewrite: the
 * worker's verdict recorded in the library, "recorded" and "model" added (true with *out the
 * new body); status 0 records nothing. Frees hook. Loop thread. */
bool by_id_record(void *hook, unsigned status, const char *body, size_t len, char **out,
                  size_t *outlen);

#endif
