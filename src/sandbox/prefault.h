/*
 * prefault.h — the pages a fork of this process is going to write, learned once from a trial
 * fork and copied ahead in each later fork, a run of pages per system call.
 *
 * A forked interpreter writes some hundreds of the parent's pages before a job's first test
 * (reference counts, the type cache, its allocator's pools), and each first write is a
 * copy-on-write fault. Where a fault is dear (on a paravirtualised VM measured here, a
 * copy-on-write fault cost 13.8 us, and the same copy made by madvise(MADV_POPULATE_WRITE)
 * 4.1 us), copying them in bulk is cheaper, and in a process made ahead it is off the
 * request's path altogether. The trial runs trusted code only (never a job's): what it learns
 * decides which of the job's own pages are copied, nothing else.
 */
#ifndef CRUCIBLE_PREFAULT_H
#define CRUCIBLE_PREFAULT_H

#include "util.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* At most this many pages are learned (32 MiB): a job copies no more than that ahead. */
#define PREFAULT_MAX_PAGES 8192u

struct prefault_run {
    uintptr_t start;
    size_t len; /* bytes, a multiple of the page size */
};

struct prefault {
    struct prefault_run *runs; /* ascending, disjoint, not adjacent */
    size_t nruns, npages;
};

/* prefault_learn(pf, child, err) — adds to pf the pages of this process's private writable
 * mappings that child (a fork of this process, stopped or otherwise still alive, whose
 * /proc/PID/pagemap this process may read) holds as its own anonymous copies: the pages it
 * wrote since the fork. 0 (pf may have reached PREFAULT_MAX_PAGES), or -errno with err set. */
int prefault_learn(struct prefault *pf, pid_t child, struct errbuf *err);

/* prefault_apply(pf) — in a fork: copies pf's pages now (MADV_POPULATE_WRITE per run; a run no
 * longer mapped, or a kernel without it, is skipped quietly). pf is learned once and kept for
 * the learning process's life: there is no free. */
void prefault_apply(const struct prefault *pf);

#endif
