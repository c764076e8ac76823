/*
 * filter.c — the sandbox's seccomp program (see filter.h).
 *
 * The policy is a table (filter_policy.c); make compiles it with libseccomp once, at build
 * time (gen/filter_bpf.c writes build/gen/sandbox/filter_bpf.inc), and the program is
 * embedded here as data. So no command links libseccomp or pays for compiling the policy
 * at each start (a cold `crucible run` did both), and the program a sandbox gets does not
 * depend on the libseccomp installed where crucible runs. tests/unit/filter.c checks that
 * the embedded program is exactly what libseccomp makes of the table on the test machine.
 */
#include "sandbox/filter.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/filter_policy.h"

static const struct sock_filter program[] = {
#include "sandbox/filter_bpf.inc"
};

_Static_assert(sizeof(program) / sizeof(program[0]) <= BPF_MAXINSNS,
               "the seccomp program is too long for the kernel");

size_t filter_rule_count(void)
{
    return filter_policy_len;
}

int filter_build(struct filter *f, struct errbuf *err)
{
    (void)err;
    f->insns = program;
    f->len = (unsigned short)(sizeof(program) / sizeof(program[0]));
    return 0;
}

int filter_apply(const struct filter *f)
{
    /* the kernel copies the program and never writes to it */
    struct sock_fprog prog = {.len = f->len, .filter = (struct sock_filter *)f->insns};

    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
        return -errno;
    return 0;
}

void filter_release(struct filter *f)
{
    f->insns = NULL;
    f->len = 0;
}
