/*
 * netns_pool.h — network namespaces a fork server's zygote keeps for the next job.
 *
 * Making a network namespace and tearing one down are among the dearest steps of a job:
 * setup_net at the clone, cleanup_net and an expedited RCU grace period in a kernel worker
 * after the job (measured: a sixth of an unsandboxed fork server's time on MBPP). A job
 * without loopback cannot change its namespace — it has no capability, so no interface goes
 * up, no address, route or rule is added, no sysctl written — and what it can do leaves a
 * trace the pool checks: a socket still open (sockstat's "used"), a packet tried or sent (the
 * SNMP counters of snmp, netstat and snmp6). So a namespace goes back to the pool only when
 * its job's pid 1 is reaped (every process of the job gone) and this state is exactly what
 * it was when the namespace was new; otherwise it is dropped, and the next job gets a new one.
 * Jobs never share one at the same time, and loopback jobs always get a new one.
 *
 * Single-threaded, zygote-only: entering a kept namespace moves the calling process into it
 * until netns_pool_leave.
 */
#ifndef CRUCIBLE_SANDBOX_NETNS_POOL_H
#define CRUCIBLE_SANDBOX_NETNS_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define NETNS_POOL_MAX 32 /* namespaces tracked: of live jobs and kept idle */

struct netns_entry {
    int fd;      /* the namespace (an nsfs fd), -1: unused entry */
    pid_t job;   /* the job's pid 1 that holds it, 0: idle */
    char *state; /* its state when new (see the top of this file) */
    size_t len;
};

struct netns_pool {
    int own; /* the zygote's own network namespace, -1: no pool (every job gets a new one) */
    struct netns_entry e[NETNS_POOL_MAX];
};

/* netns_pool_init(p) — an empty pool; without the zygote's own namespace at hand, one that
 * keeps nothing. */
void netns_pool_init(struct netns_pool *p);

/* netns_pool_enter(p) — before a job's clone: moves the caller into an idle kept namespace or,
 * none idle, a new one whose state is recorded; returns its entry, or -1 when neither could be
 * had (the pool is full, or there is none: the clone makes the job's own, CLONE_NEWNET). */
int netns_pool_enter(struct netns_pool *p);

/* netns_pool_leave(p) — after the clone: the caller back in its own namespace; a caller that
 * cannot go back ends (_exit), as it must not make its next job in another's namespace. */
void netns_pool_leave(struct netns_pool *p);

/* netns_pool_track(p, pid, entry) — the job whose pid 1 is pid holds the namespace of entry
 * (from netns_pool_enter); pid <= 0 (the clone failed): it stays idle. */
void netns_pool_track(struct netns_pool *p, pid_t pid, int entry);

/* netns_pool_ended(p, pid) — pid was reaped: its namespace kept for the next job if its state
 * is unchanged, dropped otherwise. Any other pid: nothing. */
void netns_pool_ended(struct netns_pool *p, pid_t pid);

#endif
