/*
 * offload.h — the api workers: a few threads that take the heavy part of a request off the
 * event loop (parsing a large JSON body, a task-library import or query) and hand the result
 * back to the loop, as the scheduler hands back finished jobs. They are not the scheduler's
 * sandbox slots: a request is parsed here before it is ever admitted there.
 *
 * The bytes of work in flight are bounded server-wide (the parse budget): a unit waits in
 * the queue until its cost fits next to what runs, so N large bodies are not expanded into
 * memory at once. A unit costing more than the whole budget runs alone. After a unit whose
 * cost is large, its thread gives freed heap memory back to the system (malloc_trim).
 *
 * A unit is owned by whoever submits it. run() is called on an api worker thread, at most
 * once; done() on the loop thread, exactly once per submitted unit, whether it ran or was
 * cancelled first (then `cancelled` is set and run() was not called). Nothing run() does
 * may touch the HTTP request, the scheduler or the metrics: those belong to the loop.
 */
#ifndef CRUCIBLE_OFFLOAD_H
#define CRUCIBLE_OFFLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "service/loop.h"
#include "util.h"

struct offload_work {
    /* Set by the submitter. */
    void (*run)(struct offload_work *w);  /* api worker thread */
    void (*done)(struct offload_work *w); /* loop thread; may free w */
    size_t cost;                          /* bytes counted against the budget while it runs */
    /* Set by offload_cancel (loop thread), read by done(). */
    bool cancelled;
    /* Private. */
    struct offload_work *next;
    int state;
};

struct offload;

/* offload_new(loop, threads, budget, err) — starts `threads` api workers; budget: bytes of
 * work running at once (0: no bound). NULL with err set. */
struct offload *offload_new(struct loop *loop, unsigned threads, size_t budget, struct errbuf *err);

/* offload_free(o) — waits for what runs; queued units get done() cancelled. Loop thread. */
void offload_free(struct offload *o);

/* offload_submit(o, w) — queues w (loop thread). */
void offload_submit(struct offload *o, struct offload_work *w);

/* offload_cancel(o, w) — w will not be run if it has not started; done() still comes, with
 * w->cancelled set (a unit already running finishes first). Loop thread, before done(). */
void offload_cancel(struct offload *o, struct offload_work *w);

#endif
