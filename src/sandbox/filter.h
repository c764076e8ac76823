/*
 * filter.h — the sandbox's seccomp policy.
 *
 * The policy is data (a table in filter.c): the syscall families of the attack catalogue
 * that a payload must never reach (namespace and mount changes, tracing, kernel extension
 * points, clock changes, keyrings, io_uring, TTY injection, cross-sandbox locks, foreign
 * architectures). It is compiled once, in the supervisor, with libseccomp into a raw BPF
 * program; the sandbox child only calls seccomp(2) on it, with no allocation after fork.
 */
#ifndef CRUCIBLE_FILTER_H
#define CRUCIBLE_FILTER_H

#include <linux/filter.h>
#include <stddef.h>

#include "util.h"

struct filter {
    struct sock_filter *insns; /* owned; freed by filter_release */
    unsigned short len;
};

/* filter_build(f, err) — compiles the policy. 0 or -errno with err set. */
int filter_build(struct filter *f, struct errbuf *err);

/* filter_apply(f) — installs the program on the calling thread (no_new_privs must already
 * be set). Async-signal-safe: meant for the child between fork and execve. 0 or -errno. */
int filter_apply(const struct filter *f);

/* filter_release(f) — frees the program. */
void filter_release(struct filter *f);

/* filter_rule_count() — number of rules in the policy table (for --check and tests). */
size_t filter_rule_count(void);

#endif
