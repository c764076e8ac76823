/*
 * bench_stats.h — what `crucible bench` reports besides its cases: samples and their summary
 * (median, p90, mean), and a description of the machine the figures come from.
 */
#ifndef CRUCIBLE_BENCH_STATS_H
#define CRUCIBLE_BENCH_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growing list of samples, in milliseconds. Zero-initialised is empty. */
struct bench_samples {
    double *v;
    size_t n, cap;
};

/* bench_samples_add(s, ms) — appends one sample. 0 or -ENOMEM. */
int bench_samples_add(struct bench_samples *s, double ms);

/* bench_samples_release(s) — frees the samples; s is empty again. */
void bench_samples_release(struct bench_samples *s);

/* The figures printed for a case (milliseconds). */
struct bench_summary {
    double median, p90, mean;
    size_t n;
};

/* bench_summarize(s, sum) — sorts s's samples and fills sum; percentiles are interpolated
 * between closest ranks (as bench/spawn does). false when s is empty. */
bool bench_summarize(struct bench_samples *s, struct bench_summary *sum);

/* The machine the figures come from. Fields that cannot be read are "unknown" or 0. */
struct bench_machine {
    char kernel[160]; /* "Linux 6.1.0-18-amd64" */
    long cpus;        /* online CPUs */
    char model[160];  /* /proc/cpuinfo's first model name */
    uint64_t memory_mb;
    char cgroup[32]; /* "v2", "v1", "hybrid" (v1 with a v2 unified tree) or "none" */
    double load[2];  /* 1-minute load average at the start and at the end of the run (-1:
                      * unknown): how much else the machine was doing */
};

/* bench_machine_read(m) — fills m from uname, sysconf, /proc and /sys/fs/cgroup; both loads
 * are the load now. */
void bench_machine_read(struct bench_machine *m);

/* bench_load() — the 1-minute load average, or -1. */
double bench_load(void);

#endif
