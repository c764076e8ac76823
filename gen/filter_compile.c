/*
 * filter_compile.c — the seccomp policy compiled with libseccomp (filter_compile.h).
 *
 * Only the native architecture: i386 and x32 calls hit the bad-arch action (kill). The
 * child sets no_new_privs itself, so the program does not ask for it.
 */
#include "filter_compile.h"

#include <errno.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sandbox/filter_policy.h"

static int add_rule(scmp_filter_ctx ctx, const struct filter_rule *r)
{
    int nr = seccomp_syscall_resolve_name(r->name);

    if (nr == __NR_SCMP_ERROR)
        return 0; /* not on this architecture */
    switch (r->test) {
    case FILTER_ARG0_MASKED:
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(r->err), nr, 1,
                                SCMP_A0(SCMP_CMP_MASKED_EQ, r->mask, r->value));
    case FILTER_ARG0_NE:
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(r->err), nr, 1, SCMP_A0(SCMP_CMP_NE, r->value));
    case FILTER_ARG0_EQ:
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(r->err), nr, 1, SCMP_A0(SCMP_CMP_EQ, r->value));
    case FILTER_ARG1_LOW32:
        /* The kernel reads the ioctl command as 32 bits: compare only those, so high
         * bits cannot smuggle a denied command past the filter (CVE-2019-10063). */
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(r->err), nr, 1,
                                SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, r->value));
    case FILTER_ARG_ANY:
    default:
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(r->err), nr, 0);
    }
}

int filter_compile(struct sock_filter **insns, size_t *count, struct errbuf *err)
{
    scmp_filter_ctx ctx;
    char *buf = NULL;
    size_t len = 0;
    int r, memfd = -1;

    *insns = NULL;
    *count = 0;
    ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        return errbuf_set(err, "cannot initialise seccomp filter"), -ENOMEM;
    /* Only the native architecture: i386 and x32 calls hit the bad-arch action. */
    r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    if (r == 0)
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0); /* the child sets it itself */
    /* The syscall numbers as a binary tree, not a list. Each process that loads the program
     * pays for it in the kernel: the JIT, and the cache of always-allowed syscalls, which
     * runs the program once per syscall number; a tree's short paths make that 2.3x faster
     * (0.25 -> 0.11 ms a load on the VM of docs/BENCHMARKS.md, for 140 instructions against
     * the list's 123), and the calls it checks by argument take a few comparisons. */
    if (r == 0)
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    for (size_t i = 0; r == 0 && i < filter_policy_len; i++) {
        r = add_rule(ctx, &filter_policy[i]);
        if (r < 0)
            errbuf_set(err, "cannot add seccomp rule for '%s': %s", filter_policy[i].name,
                       strerror(-r));
    }
    if (r < 0) {
        if (!err || !err->msg[0])
            errbuf_set(err, "cannot configure seccomp filter: %s", strerror(-r));
        goto out_release;
    }
    memfd = memfd_create("crucible-seccomp", MFD_CLOEXEC);
    if (memfd < 0) {
        r = -errno;
        errbuf_set(err, "cannot create memfd for seccomp filter: %s", strerror(errno));
        goto out_release;
    }
    r = seccomp_export_bpf(ctx, memfd);
    if (r < 0) {
        errbuf_set(err, "cannot export seccomp filter: %s", strerror(-r));
        goto out_close;
    }
    if (lseek(memfd, 0, SEEK_SET) < 0 || (r = util_read_fd(memfd, &buf, &len, 1 << 20)) < 0) {
        r = r < 0 ? r : -errno;
        errbuf_set(err, "cannot read back seccomp filter: %s", strerror(-r));
        goto out_close;
    }
    if (len == 0 || len % sizeof(struct sock_filter) != 0 ||
        len / sizeof(struct sock_filter) > BPF_MAXINSNS) {
        free(buf);
        r = -EINVAL;
        errbuf_set(err, "seccomp filter has an invalid size (%zu bytes)", len);
        goto out_close;
    }
    *insns = (struct sock_filter *)buf;
    *count = len / sizeof(struct sock_filter);
    r = 0;
out_close:
    close(memfd);
out_release:
    seccomp_release(ctx);
    return r;
}
