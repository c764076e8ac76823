/*
 * filter_policy.h — the seccomp policy as data: one row per denied syscall (filter.h).
 *
 * Default action: allow. Each row denies one syscall, optionally only for some argument
 * values; the action is an errno, so a program that probes for a feature sees "not
 * permitted" or "not implemented" and carries on, while the kernel surface stays closed.
 * Foreign architectures (i386 via int 0x80, x32) are killed: libseccomp's bad-arch action.
 * The table is compiled with libseccomp by gen/filter_compile.c, at build time only.
 */
#ifndef CRUCIBLE_FILTER_POLICY_H
#define CRUCIBLE_FILTER_POLICY_H

#include <stddef.h>

enum filter_arg_test {
    FILTER_ARG_ANY,     /* every call */
    FILTER_ARG0_MASKED, /* (arg0 & mask) == value */
    FILTER_ARG0_EQ,     /* arg0 == value */
    FILTER_ARG0_NE,     /* arg0 != value */
    FILTER_ARG1_LOW32,  /* the low 32 bits of arg1 == value (ioctl commands) */
};

struct filter_rule {
    const char *name; /* syscall name, resolved by libseccomp (absent ones are skipped) */
    int err;          /* errno returned */
    enum filter_arg_test test;
    unsigned long long mask, value;
    const char *why; /* catalogue row */
};

extern const struct filter_rule filter_policy[];
extern const size_t filter_policy_len;

#endif
