/*
 * filter.h — the sandbox's seccomp policy.
 *
 * The policy is data (a table in filter_policy.c): the syscall families of the attack
 * catalogue that a payload must never reach (namespace and mount changes, tracing, kernel
 * extension points, clock changes, keyrings, io_uring, TTY injection, cross-sandbox locks,
 * foreign architectures). It is compiled with libseccomp into a raw BPF program at build
 * time (gen/filter_bpf.c) and embedded in the binary; the sandbox child only calls
 * seccomp(2) on it, with no allocation after fork.
 */
#ifndef CRUCIBLE_FILTER_H
#define CRUCIBLE_FILTER_H

#include <linux/filter.h>
#include <stddef.h>

#include "util.h"

struct filter {
    const struct sock_filter *insns; /* the embedded program: static, never freed */
    unsigned short len;
};

/* filter_build(f, err) — points f at the program built into the binary; no work, no
 * allocation. 0 (err unused: kept for a build that may fail again). */
int filter_build(struct filter *f, struct errbuf *err);

/* filter_apply(f) — installs the program on the calling thread (no_new_privs must already
 * be set). Async-signal-safe: meant for the child between fork and execve. 0 or -errno. */
int filter_apply(const struct filter *f);

/* filter_release(f) — clears f. */
void filter_release(struct filter *f);

/* filter_rule_count() — number of rules in the policy table (for --check and tests). */
size_t filter_rule_count(void);

#endif
