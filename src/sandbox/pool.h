/*
 * pool.h — warm sandboxes: created ahead of demand for one shape (image, scratch size,
 * network) and refilled in the background, each used by exactly one job and then
 * destroyed — in the background too, so neither creation nor teardown is on a request's
 * path. A sandbox is never reused: what one job left behind cannot reach the next.
 */
#ifndef CRUCIBLE_POOL_H
#define CRUCIBLE_POOL_H

#include <stdbool.h>

#include "sandbox/image.h"
#include "metrics.h"
#include "sandbox/sandbox.h"

struct pool;

/* pool_new(rt, img, shape, target, prestart, m, err) — keeps `target` sandboxes of the shape
 * ready (target 0: a pool that only destroys). prestart: each is also given its first plain
 * exec's process ahead (sandbox_prestart), for a pool whose sandboxes run plain execs; not for
 * one whose sandboxes run KEEP execs (a session's), which would only kill it. m (may be NULL)
 * gets the pool's metrics. */
struct pool *pool_new(const struct sandbox_runtime *rt, const struct image *img,
                      const struct sandbox_limits *shape, unsigned target, bool prestart,
                      struct metrics *m, struct errbuf *err);

/* pool_free(p) — stops refilling, destroys every ready sandbox and waits for the
 * background destroys to finish. */
void pool_free(struct pool *p);

/* pool_take(p, img, limits, cancel_fd, err) — a ready sandbox with these limits and cancel
 * fd applied, or NULL (a miss: other image, scratch size or network, none ready, or the one
 * ready had died while it waited — it is discarded; err says which). */
struct sandbox *pool_take(struct pool *p, const struct image *img,
                          const struct sandbox_limits *limits, int cancel_fd, struct errbuf *err);

/* pool_discard(p, sb) — hands a used sandbox to the background for destruction. */
void pool_discard(struct pool *p, struct sandbox *sb);

/* pool_acquire(p, rt, img, limits, err) — from the pool when it has one of this shape (with
 * rt's cancel fd), otherwise created now with rt. p may be NULL. NULL with err set. */
struct sandbox *pool_acquire(struct pool *p, const struct sandbox_runtime *rt,
                             const struct image *img, const struct sandbox_limits *limits,
                             struct errbuf *err);

/* pool_release(p, sb) — destroyed in the background (p), or sandbox_discard'ed (p NULL: now,
 * or in the background by a fork server for its job), errors ignored: for callers whose
 * verdict is already final (SANDBOX_EXEC_LAST, or given up). */
void pool_release(struct pool *p, struct sandbox *sb);

struct pool_stats {
    unsigned ready, target;
    unsigned long long hits, misses, created, create_failures;
};
void pool_stats(struct pool *p, struct pool_stats *st);

#endif
