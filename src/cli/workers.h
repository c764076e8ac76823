/*
 * workers.h — the CLI's parallel runs (`eval`, `tasks validate`): N threads take items
 * 0..n-1 in order, each on its own sandbox runtime; the calling thread draws the progress
 * bar and hands finished items to the caller in between. SIGINT, SIGTERM and SIGHUP stop
 * it: no new item starts, and running sandboxes are interrupted (their runs end as
 * infra_error, which the caller reports as cut short).
 */
#ifndef CRUCIBLE_WORKERS_H
#define CRUCIBLE_WORKERS_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox/image.h"
#include "sandbox/sandbox.h"
#include "util.h"

struct workers_spec {
    size_t n;          /* items */
    long jobs;         /* threads (at most n are started) */
    bool quiet;        /* no progress bar (there is none either when stderr is no terminal) */
    const char *label; /* what the progress bar counts: "accepted", "valid" */
    void *ctx;
    /* work(ctx, i, rt, img) — item i on a worker thread, with the resolved "host" image;
     * true when it counts for the progress bar. */
    bool (*work)(void *ctx, size_t i, const struct sandbox_runtime *rt, const struct image *img);
    /* drain(ctx, finished) — on the calling thread, under the workers' lock, after every
     * wake-up and at the end: finished[i] says which items are done. May be NULL. */
    void (*drain)(void *ctx, const bool *finished);
};

struct workers_outcome {
    size_t done;    /* items finished */
    int signal;     /* the signal that stopped the run, or 0 */
    double seconds; /* wall time of the run */
};

/* workers_run(spec, out, err) — runs every item (or until a signal). 0, or -errno when
 * nothing could start (err set: no sandbox runtime, no memory). The signals stay blocked
 * afterwards; a caller that was stopped re-raises out->signal once it has cleaned up. */
int workers_run(const struct workers_spec *spec, struct workers_outcome *out, struct errbuf *err);

/* workers_reraise(sig) — unblocks the stop signals and dies of sig (no-op for 0). */
void workers_reraise(int sig);

#endif
