/*
 * cgroup.h — one interface over cgroup v2 and v1 for a sandbox's resource group.
 *
 * At start-up cgroup_env_init() discovers which hierarchies the process may use and
 * assigns each resource to one back-end: v2 when its controller is enabled in the
 * subtree crucible owns, else v1 when that controller's hierarchy is writable, else
 * none (the sandbox then falls back to rlimits). A hybrid is normal: on a host whose v2
 * hierarchy has no controllers, v2 still gives whole-tree CPU accounting, cgroup.kill
 * and cgroup.events, while v1 gives memory and pids limits.
 *
 * crucible creates groups only below "<own cgroup>/crucible" in each hierarchy (or the
 * directory named by $CRUCIBLE_CGROUP_ROOT for v2) and never moves, removes or remounts
 * anything it did not create. Groups are named "sb-<pid>-<n>".
 */
#ifndef CRUCIBLE_CGROUP_H
#define CRUCIBLE_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

enum cgroup_res {
    CGROUP_RES_MEMORY, /* limit, peak, OOM-kill count */
    CGROUP_RES_PIDS,   /* pids.max (threads count) */
    CGROUP_RES_CPU,    /* whole-tree CPU time */
    CGROUP_RES_KILL,   /* atomic kill + "populated" notification (v2 core) */
    CGROUP_RES_COUNT
};

#define CGROUP_MAX_HIER 4

/* What the process may use; filled once by cgroup_env_init, then read-only. */
struct cgroup_env {
    int nhier;
    struct {
        int version;      /* 1 or 2 */
        char base[4096];  /* ".../crucible": where sandbox groups are created */
        unsigned resmask; /* bit (1 << enum cgroup_res) for each resource served here */
    } hier[CGROUP_MAX_HIER];
    int res_hier[CGROUP_RES_COUNT]; /* index into hier[], or -1 when unavailable */
};

/* One sandbox's group: a directory in each hierarchy in use. */
struct cgroup {
    const struct cgroup_env *env;
    int ndirs;
    char dirs[CGROUP_MAX_HIER][4096]; /* parallel to env->hier[]; "" when unused */
    int v2_fd;   /* O_DIRECTORY fd of the v2 group (for CLONE_INTO_CGROUP), or -1 once
                  * cgroup_close_dir_fd */
    int peak_fd; /* v2 memory.peak opened for a per-fd reset (see below), or v1
                  * memory.max_usage_in_bytes (cgroup_counters_open), or -1 */
    int cpu_fd;  /* cpu.stat or cpuacct.usage while an exec runs (cgroup_counters_open), or -1 */
    int oom_fd;  /* memory.events or memory.oom_control likewise, or -1 */
};

/* cgroup_env_init(env) — discovers hierarchies and creates the "crucible" subtree where
 * permitted. Never fails: unavailable resources get res_hier[] = -1. */
void cgroup_env_init(struct cgroup_env *env);

/* cgroup_env_reclaim(env) — removes the groups a crucible process that no longer exists
 * left behind (a crash: "sb-PID-N" with PID gone). Only empty groups go (rmdir refuses
 * others); groups of live processes are never touched. Returns how many were removed. */
int cgroup_env_reclaim(const struct cgroup_env *env);

/* cgroup_env_has(env, res) — true when the resource is enforced through a cgroup. */
bool cgroup_env_has(const struct cgroup_env *env, enum cgroup_res res);

/* cgroup_env_backend(env, res) — "v2", "v1" or "none", for `crucible run --check`. */
const char *cgroup_env_backend(const struct cgroup_env *env, enum cgroup_res res);

/* cgroup_create(cg, env, memory_bytes, pids) — makes the group and writes its limits
 * (0 = no limit). On failure nothing is left behind. 0 or -errno with err set. */
int cgroup_create(struct cgroup *cg, const struct cgroup_env *env, uint64_t memory_bytes,
                  uint64_t pids, struct errbuf *err);

/* cgroup_set_limits(cg, memory_bytes, pids, err) — changes the limits of a live group
 * (0 = leave as is). 0 or -errno with err set. */
int cgroup_set_limits(struct cgroup *cg, uint64_t memory_bytes, uint64_t pids, struct errbuf *err);

/* cgroup_close_dir_fd(cg) — closes v2_fd once nothing more is cloned into the group (a
 * sandbox's init is its only process cloned so): a live group then holds no descriptor but
 * peak_fd during an exec. Safe to call twice. */
void cgroup_close_dir_fd(struct cgroup *cg);

/* cgroup_attach(cg, pid, skip_v1, skip_v2) — moves pid into the group's hierarchies but
 * the skipped ones (v2: cloned straight in; v1: attached itself). 0 or -errno. */
int cgroup_attach(struct cgroup *cg, pid_t pid, bool skip_v1, bool skip_v2);

/* cgroup_attach_pending(cg, skip_v1, skip_v2) — whether cgroup_attach with these skips would
 * move the process in any hierarchy: false when every group it belongs in was joined already. */
bool cgroup_attach_pending(const struct cgroup *cg, bool skip_v1, bool skip_v2);

/* cgroup_open_self_attach(cg, fds, max) — opens (O_WRONLY) the v1 "tasks" files of the
 * group's v1 hierarchies, for a child to attach itself by writing "0": moving only the
 * calling thread skips the kernel's global threadgroup lock, whose RCU grace period makes
 * an attach by pid cost milliseconds. The opener's credentials authorise the write, so a
 * child in a user namespace may use them. Returns how many were opened, or -errno (none
 * left open). Only for single-threaded children. */
int cgroup_open_self_attach(const struct cgroup *cg, int *fds, int max);

/* cgroup_open_join(cg, fds, max) — cgroup_open_self_attach, and the v2 group's cgroup.procs
 * too: for a process that cannot be cloned into the v2 group, joining by writing "0" to each
 * (a fork server's job, from inside a sandbox; the kernel checks the opener's credentials and
 * cgroup namespace). Returns how many were opened, or -errno (none left open). */
int cgroup_open_join(const struct cgroup *cg, int *fds, int max);

/* cgroup_counters_open(cg) — opens the counter files an exec reads again and again (CPU time,
 * peak memory, OOM kills), so each later read is one pread instead of a path walk, an open, two
 * reads and a close on the cgroup filesystem. A file that cannot be opened is read by path as
 * before. Held only while an exec runs: cgroup_counters_close gives them back (an idle group
 * holds no descriptor). Safe to call twice. */
void cgroup_counters_open(struct cgroup *cg);

/* cgroup_counters_close(cg) — closes what cgroup_counters_open and cgroup_memory_peak_reset
 * opened. Safe to call twice. */
void cgroup_counters_close(struct cgroup *cg);

/* cgroup_cpu_usage(cg) — CPU seconds used by the whole group, or -1 when unknown. */
double cgroup_cpu_usage(const struct cgroup *cg);

/* cgroup_memory_peak_kb(cg) — peak memory in KiB, or 0 when unknown. */
uint64_t cgroup_memory_peak_kb(const struct cgroup *cg);

/* cgroup_memory_current_kb(cg) — memory charged to the group now in KiB (v2 memory.current,
 * v1 memory.usage_in_bytes), or 0 when unknown. */
uint64_t cgroup_memory_current_kb(const struct cgroup *cg);

/* cgroup_pids_current(cg) — processes and threads in the group now (pids.current), or 0 when
 * unknown. */
uint64_t cgroup_pids_current(const struct cgroup *cg);

/* cgroup_memory_peak_reset(cg) — starts the peak anew: v1 resets max_usage_in_bytes; v2
 * (Linux 6.12 and later) resets memory.peak for the fd the group keeps open, which
 * cgroup_memory_peak_kb then reads. On an older v2 kernel the peak counts from the group's
 * creation. */
void cgroup_memory_peak_reset(struct cgroup *cg);

/* cgroup_oom_kills(cg) — number of OOM kills inside the group since it was made (0 when
 * unknown): cumulative on v1 and v2, so a caller judging one of several runs in the group
 * compares it with the count from before that run. */
uint64_t cgroup_oom_kills(const struct cgroup *cg);

/* cgroup_kill(cg) — SIGKILLs every process in the group (cgroup.kill on v2, else a walk
 * of cgroup.procs). 0 or -errno. */
int cgroup_kill(struct cgroup *cg);

/* cgroup_wait_empty(cg, timeout_s) — waits until no process is left in any hierarchy's
 * group; -ETIMEDOUT if processes remain. */
int cgroup_wait_empty(struct cgroup *cg, double timeout_s);

/* cgroup_destroy(cg) — removes the group's directories (retrying briefly while the
 * kernel finishes releasing exited tasks). Safe on a zeroed or half-made group. */
int cgroup_destroy(struct cgroup *cg);

#endif
