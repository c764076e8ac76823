/*
 * filter.c — the seccomp policy table and its compilation (see filter.h).
 *
 * Default action: allow. Each row denies one syscall, optionally only for some argument
 * values; the action is an errno, so a program that probes for a feature sees "not
 * permitted" or "not implemented" and carries on, while the kernel surface stays closed.
 * Foreign architectures (i386 via int 0x80, x32) are killed: libseccomp's bad-arch action.
 */
#include "sandbox/filter.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

#define CLONE_NEWTIME_FLAG 0x00000080
#define READ_IMPLIES_EXEC  0x0400000

enum arg_test { ARG_ANY, ARG0_MASKED, ARG0_EQ, ARG0_NE, ARG1_LOW32 };

struct rule {
    const char *name; /* syscall name, resolved by libseccomp (absent ones are skipped) */
    int err;          /* errno returned */
    enum arg_test test;
    unsigned long long mask, value;
    const char *why; /* catalogue row */
};

static const struct rule policy[] = {
    /* 17: terminal injection; the ioctl command is compared on its low 32 bits only. */
    {"ioctl", EPERM, ARG1_LOW32, 0, TIOCSTI, "17 tty injection"},
    {"ioctl", EPERM, ARG1_LOW32, 0, TIOCLINUX, "17 tty injection"},
    /* 19: cross-sandbox channels through shared kernel objects. */
    {"flock", EPERM, ARG_ANY, 0, 0, "19 locks on shared read-only inodes"},
    {"keyctl", ENOSYS, ARG_ANY, 0, 0, "19 keyrings"},
    {"add_key", ENOSYS, ARG_ANY, 0, 0, "19 keyrings"},
    {"request_key", ENOSYS, ARG_ANY, 0, 0, "19 keyrings"},
    {"socket", EAFNOSUPPORT, ARG0_EQ, 0, AF_VSOCK, "19 vsock"},
    {"io_uring_setup", ENOSYS, ARG_ANY, 0, 0, "19/30 io_uring"},
    {"io_uring_enter", ENOSYS, ARG_ANY, 0, 0, "19/30 io_uring"},
    {"io_uring_register", ENOSYS, ARG_ANY, 0, 0, "19/30 io_uring"},
    /* 24: tracing and other processes' memory. */
    {"ptrace", EPERM, ARG_ANY, 0, 0, "24 ptrace"},
    {"process_vm_readv", EPERM, ARG_ANY, 0, 0, "24 process memory"},
    {"process_vm_writev", EPERM, ARG_ANY, 0, 0, "24 process memory"},
    {"process_madvise", EPERM, ARG_ANY, 0, 0, "24 process memory"},
    {"pidfd_getfd", EPERM, ARG_ANY, 0, 0, "24 fd theft"},
    {"kcmp", EPERM, ARG_ANY, 0, 0, "24 kernel pointer comparison"},
    /* init shares the payload's uid inside: another process's limits are off limits
     * (glibc's setrlimit passes pid 0, which stays allowed). */
    {"prlimit64", EPERM, ARG0_NE, 0, 0, "24 limits of other processes (init)"},
    {"perf_event_open", EPERM, ARG_ANY, 0, 0, "24/30 perf"},
    /* 25: mounts and namespaces. */
    {"mount", EPERM, ARG_ANY, 0, 0, "25 mount"},
    {"umount2", EPERM, ARG_ANY, 0, 0, "25 mount"},
    {"pivot_root", EPERM, ARG_ANY, 0, 0, "25 mount"},
    {"chroot", EPERM, ARG_ANY, 0, 0, "25 mount"},
    {"fsopen", EPERM, ARG_ANY, 0, 0, "25 mount API"},
    {"fsconfig", EPERM, ARG_ANY, 0, 0, "25 mount API"},
    {"fsmount", EPERM, ARG_ANY, 0, 0, "25 mount API"},
    {"fspick", EPERM, ARG_ANY, 0, 0, "25 mount API"},
    {"move_mount", EPERM, ARG_ANY, 0, 0, "25 mount API"},
    {"open_tree", EPERM, ARG_ANY, 0, 0, "25 mount API"},
    {"mount_setattr", EPERM, ARG_ANY, 0, 0, "25 mount API"},
    {"unshare", EPERM, ARG_ANY, 0, 0, "25 namespaces"},
    {"setns", EPERM, ARG_ANY, 0, 0, "25 namespaces"},
    {"clone", EPERM, ARG0_MASKED, CLONE_NEWNS, CLONE_NEWNS, "25 namespaces"},
    {"clone", EPERM, ARG0_MASKED, CLONE_NEWCGROUP, CLONE_NEWCGROUP, "25 namespaces"},
    {"clone", EPERM, ARG0_MASKED, CLONE_NEWUTS, CLONE_NEWUTS, "25 namespaces"},
    {"clone", EPERM, ARG0_MASKED, CLONE_NEWIPC, CLONE_NEWIPC, "25 namespaces"},
    {"clone", EPERM, ARG0_MASKED, CLONE_NEWUSER, CLONE_NEWUSER, "25 namespaces"},
    {"clone", EPERM, ARG0_MASKED, CLONE_NEWPID, CLONE_NEWPID, "25 namespaces"},
    {"clone", EPERM, ARG0_MASKED, CLONE_NEWNET, CLONE_NEWNET, "25 namespaces"},
    {"clone", EPERM, ARG0_MASKED, CLONE_NEWTIME_FLAG, CLONE_NEWTIME_FLAG, "25 namespaces"},
    {"clone3", ENOSYS, ARG_ANY, 0, 0, "25 clone3 args cannot be inspected; libc falls back"},
    /* 29: clocks. */
    {"settimeofday", EPERM, ARG_ANY, 0, 0, "29 clock"},
    {"clock_settime", EPERM, ARG_ANY, 0, 0, "29 clock"},
    {"clock_adjtime", EPERM, ARG_ANY, 0, 0, "29 clock"},
    {"adjtimex", EPERM, ARG_ANY, 0, 0, "29 clock"},
    /* 30: kernel attack surface. */
    {"bpf", EPERM, ARG_ANY, 0, 0, "30 bpf"},
    {"userfaultfd", EPERM, ARG_ANY, 0, 0, "30 userfaultfd"},
    {"kexec_load", EPERM, ARG_ANY, 0, 0, "30 kexec"},
    {"kexec_file_load", EPERM, ARG_ANY, 0, 0, "30 kexec"},
    {"init_module", EPERM, ARG_ANY, 0, 0, "30 modules"},
    {"finit_module", EPERM, ARG_ANY, 0, 0, "30 modules"},
    {"delete_module", EPERM, ARG_ANY, 0, 0, "30 modules"},
    {"open_by_handle_at", EPERM, ARG_ANY, 0, 0, "30 shocker"},
    {"name_to_handle_at", EPERM, ARG_ANY, 0, 0, "30 shocker"},
    {"personality", EPERM, ARG0_MASKED, READ_IMPLIES_EXEC, READ_IMPLIES_EXEC, "30 personality"},
    {"acct", EPERM, ARG_ANY, 0, 0, "30 accounting"},
    {"swapon", EPERM, ARG_ANY, 0, 0, "30 swap"},
    {"swapoff", EPERM, ARG_ANY, 0, 0, "30 swap"},
    {"reboot", EPERM, ARG_ANY, 0, 0, "30 reboot"},
    {"syslog", EPERM, ARG_ANY, 0, 0, "30 kernel log"},
    {"quotactl", EPERM, ARG_ANY, 0, 0, "30 quota"},
    {"lookup_dcookie", EPERM, ARG_ANY, 0, 0, "30 obsolete"},
    {"uselib", EPERM, ARG_ANY, 0, 0, "30 obsolete"},
    {"ustat", EPERM, ARG_ANY, 0, 0, "30 obsolete"},
    {"sysfs", EPERM, ARG_ANY, 0, 0, "30 obsolete"},
    {"_sysctl", EPERM, ARG_ANY, 0, 0, "30 obsolete"},
    {"vhangup", EPERM, ARG_ANY, 0, 0, "30 tty"},
    {"iopl", EPERM, ARG_ANY, 0, 0, "30 raw io"},
    {"ioperm", EPERM, ARG_ANY, 0, 0, "30 raw io"},
    {"fanotify_init", EPERM, ARG_ANY, 0, 0, "30 fanotify"},
    {"mbind", EPERM, ARG_ANY, 0, 0, "30 numa"},
    {"migrate_pages", EPERM, ARG_ANY, 0, 0, "30 numa"},
    {"move_pages", EPERM, ARG_ANY, 0, 0, "30 numa"},
    {"set_mempolicy", EPERM, ARG_ANY, 0, 0, "30 numa"},
    {"memfd_secret", EPERM, ARG_ANY, 0, 0, "30 secret memory"},
};

size_t filter_rule_count(void)
{
    return sizeof(policy) / sizeof(policy[0]);
}

static int add_rule(scmp_filter_ctx ctx, const struct rule *r)
{
    int nr = seccomp_syscall_resolve_name(r->name);

    if (nr == __NR_SCMP_ERROR)
        return 0; /* not on this architecture */
    switch (r->test) {
    case ARG0_MASKED:
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(r->err), nr, 1,
                                SCMP_A0(SCMP_CMP_MASKED_EQ, r->mask, r->value));
    case ARG0_NE:
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(r->err), nr, 1, SCMP_A0(SCMP_CMP_NE, r->value));
    case ARG0_EQ:
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(r->err), nr, 1, SCMP_A0(SCMP_CMP_EQ, r->value));
    case ARG1_LOW32:
        /* The kernel reads the ioctl command as 32 bits: compare only those, so high
         * bits cannot smuggle a denied command past the filter (CVE-2019-10063). */
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(r->err), nr, 1,
                                SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, r->value));
    case ARG_ANY:
    default:
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(r->err), nr, 0);
    }
}

int filter_build(struct filter *f, struct errbuf *err)
{
    scmp_filter_ctx ctx;
    char *buf = NULL;
    size_t len = 0;
    int r, memfd = -1;

    memset(f, 0, sizeof(*f));
    ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        return errbuf_set(err, "cannot initialise seccomp filter"), -ENOMEM;
    /* Only the native architecture: i386 and x32 calls hit the bad-arch action. */
    r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    if (r == 0)
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0); /* the child sets it itself */
    for (size_t i = 0; r == 0 && i < filter_rule_count(); i++) {
        r = add_rule(ctx, &policy[i]);
        if (r < 0)
            errbuf_set(err, "cannot add seccomp rule for '%s': %s", policy[i].name, strerror(-r));
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
    f->insns = (struct sock_filter *)buf;
    f->len = (unsigned short)(len / sizeof(struct sock_filter));
    r = 0;
out_close:
    close(memfd);
out_release:
    seccomp_release(ctx);
    return r;
}

int filter_apply(const struct filter *f)
{
    struct sock_fprog prog = {.len = f->len, .filter = f->insns};

    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
        return -errno;
    return 0;
}

void filter_release(struct filter *f)
{
    free(f->insns);
    f->insns = NULL;
    f->len = 0;
}
