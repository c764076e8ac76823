/*
 * scheduler.h — the service's scheduler: priority classes, a bounded queue, capacity, deadlines,
 * and the worker threads that run jobs.
 *
 * A job is owned by whoever submits it. The scheduler only links it into its queue, runs
 * job->run on a worker thread when a CPU slot is free and its memory and pids fit next to
 * the jobs running, and then hands it back through job->done on the loop thread — exactly once per
 * submitted job, whether it ran, expired before starting, or was cancelled. Admission is
 * separate from submission: a request first reserves room for all of its jobs (or gets
 * -EAGAIN: answer 429), so a batch whose items wait on each other is never half-admitted.
 */
#ifndef CRUCIBLE_SCHEDULER_H
#define CRUCIBLE_SCHEDULER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/loop.h"
#include "sandbox/sandbox.h"

enum job_priority { PRIO_HIGH, PRIO_NORMAL, PRIO_LOW, PRIO_COUNT };

enum job_outcome {
    JOB_RAN,       /* run() was called (and returned) */
    JOB_EXPIRED,   /* its deadline passed before a slot was free */
    JOB_CANCELLED, /* cancelled before it started, or while it ran (run() saw its sandbox go) */
};

struct job {
    /* Set by the submitter. */
    enum job_priority prio;
    double deadline;    /* util_now() time by which it must have started; 0: none */
    uint64_t memory_mb; /* reserved while it runs */
    uint64_t pids;      /* reserved while it runs: every process its sandboxes may hold at once */
    /* run(job, rt) — on a worker thread; rt's cancel_fd turns readable on cancellation. */
    void (*run)(struct job *j, const struct sandbox_runtime *rt);
    /* done(job) — on the loop thread; the scheduler is finished with the job. */
    void (*done)(struct job *j);
    void *ctx;
    /* Set by the scheduler. */
    enum job_outcome outcome;
    double t_submit, t_start, t_end; /* util_now() times; t_start is 0 when it never ran */
    /* Private. */
    struct job *next;
    int state;
    int worker;
    bool cancel;
};

struct sched_stats {
    size_t queued[PRIO_COUNT];
    size_t reserved; /* admitted, not yet submitted (batch items waiting on others) */
    unsigned running, slots;
    uint64_t memory_used_mb, memory_mb;
    uint64_t pids_used, pids;
};

struct sched;

/* sched_new(loop, rt, slots, memory_mb, pids, queue_max, err) — starts `slots` workers, each
 * with its own copy of rt (own cancel fd). memory_mb and pids: the node's budgets for
 * running jobs (a job starts only when both fit). */
struct sched *sched_new(struct loop *loop, const struct sandbox_runtime *rt, unsigned slots,
                        uint64_t memory_mb, uint64_t pids, size_t queue_max, struct errbuf *err);

/* sched_stop(s) — cancels what runs, waits for the workers; queued jobs get done() with
 * JOB_CANCELLED first. The workers' runtimes stay allocated until sched_free: sandboxes
 * their jobs made refer to them, and a pool may still be destroying those in the
 * background (free the pools between the two). Loop thread; a second call does nothing. */
void sched_stop(struct sched *s);
/* sched_free(s) — sched_stop if not done yet, then the memory. */
void sched_free(struct sched *s);

/* sched_reserve(s, n) — room for n more jobs in the queue: 0, or -EAGAIN when full. */
int sched_reserve(struct sched *s, size_t n);
/* sched_reserve_always(s, n) — room for n more jobs even past the queue's bound, for jobs
 * whose clients would rather wait than be refused (/run_code: SandboxFusion's clients score a
 * 429 as a failed test) and that carry a start deadline. What bounds them is the number of
 * connections the server accepts, each waiting on one such job. */
void sched_reserve_always(struct sched *s, size_t n);
/* sched_unreserve(s, n) — gives back reservations that will not be submitted. */
void sched_unreserve(struct sched *s, size_t n);

/* sched_fits(s, j) — whether j (its memory_mb and pids) can ever run here. */
bool sched_fits(const struct sched *s, const struct job *j);

/* sched_submit(s, j) — queues j on one reservation (loop thread). */
void sched_submit(struct sched *s, struct job *j);

/* sched_cancel(s, j) — a queued job leaves the queue (done: JOB_CANCELLED); a running one
 * has its sandbox torn down. No effect on a job already done. Loop thread. */
void sched_cancel(struct sched *s, struct job *j);

/* sched_timeout_ms(s) — until the next queued deadline, for loop_run (-1: none). */
int sched_timeout_ms(struct sched *s);
/* sched_tick(s) — expires queued jobs past their deadline. Loop thread. */
void sched_tick(struct sched *s);

void sched_stats(struct sched *s, struct sched_stats *st);

const char *job_priority_name(enum job_priority p);
/* job_priority_parse(name, &p) — "high", "normal", "low". */
bool job_priority_parse(const char *name, enum job_priority *p);

#endif
