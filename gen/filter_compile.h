/*
 * filter_compile.h — the seccomp policy (src/sandbox/filter_policy.c) compiled with
 * libseccomp into a raw BPF program. Used at build time by gen/filter_bpf.c, whose output
 * src/sandbox/filter.c embeds, and by tests/unit/filter.c to check that the embedded
 * program is what libseccomp makes of the policy here and now. Not linked into crucible.
 */
#ifndef CRUCIBLE_FILTER_COMPILE_H
#define CRUCIBLE_FILTER_COMPILE_H

#include <linux/filter.h>
#include <stddef.h>

#include "util.h"

/* filter_compile(&insns, &len, err) — the program, malloc'd (the caller frees), and its
 * instruction count. 0 or -errno with err set. */
int filter_compile(struct sock_filter **insns, size_t *len, struct errbuf *err);

#endif
