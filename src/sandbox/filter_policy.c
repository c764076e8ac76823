/*
 * filter_policy.c — the seccomp policy table (filter_policy.h), the one source of the
 * program that filter.c embeds: gen/filter_bpf compiles it with libseccomp at build time.
 */
#include "sandbox/filter_policy.h"

#include <errno.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

#define CLONE_NEWTIME_FLAG 0x00000080
#define READ_IMPLIES_EXEC  0x0400000

const struct filter_rule filter_policy[] = {
    /* 17: terminal injection; the ioctl command is compared on its low 32 bits only. */
    {"ioctl", EPERM, FILTER_ARG1_LOW32, 0, TIOCSTI, "17 tty injection"},
    {"ioctl", EPERM, FILTER_ARG1_LOW32, 0, TIOCLINUX, "17 tty injection"},
    /* 19: cross-sandbox channels through shared kernel objects. */
    {"flock", EPERM, FILTER_ARG_ANY, 0, 0, "19 locks on shared read-only inodes"},
    {"keyctl", ENOSYS, FILTER_ARG_ANY, 0, 0, "19 keyrings"},
    {"add_key", ENOSYS, FILTER_ARG_ANY, 0, 0, "19 keyrings"},
    {"request_key", ENOSYS, FILTER_ARG_ANY, 0, 0, "19 keyrings"},
    {"socket", EAFNOSUPPORT, FILTER_ARG0_EQ, 0, AF_VSOCK, "19 vsock"},
    {"io_uring_setup", ENOSYS, FILTER_ARG_ANY, 0, 0, "19/30 io_uring"},
    {"io_uring_enter", ENOSYS, FILTER_ARG_ANY, 0, 0, "19/30 io_uring"},
    {"io_uring_register", ENOSYS, FILTER_ARG_ANY, 0, 0, "19/30 io_uring"},
    /* 24: tracing and other processes' memory. */
    {"ptrace", EPERM, FILTER_ARG_ANY, 0, 0, "24 ptrace"},
    {"process_vm_readv", EPERM, FILTER_ARG_ANY, 0, 0, "24 process memory"},
    {"process_vm_writev", EPERM, FILTER_ARG_ANY, 0, 0, "24 process memory"},
    {"process_madvise", EPERM, FILTER_ARG_ANY, 0, 0, "24 process memory"},
    {"pidfd_getfd", EPERM, FILTER_ARG_ANY, 0, 0, "24 fd theft"},
    {"kcmp", EPERM, FILTER_ARG_ANY, 0, 0, "24 kernel pointer comparison"},
    /* init shares the payload's uid inside: another process's limits are off limits
     * (glibc's setrlimit passes pid 0, which stays allowed). */
    {"prlimit64", EPERM, FILTER_ARG0_NE, 0, 0, "24 limits of other processes (init)"},
    {"perf_event_open", EPERM, FILTER_ARG_ANY, 0, 0, "24/30 perf"},
    /* 25: mounts and namespaces. */
    {"mount", EPERM, FILTER_ARG_ANY, 0, 0, "25 mount"},
    {"umount2", EPERM, FILTER_ARG_ANY, 0, 0, "25 mount"},
    {"pivot_root", EPERM, FILTER_ARG_ANY, 0, 0, "25 mount"},
    {"chroot", EPERM, FILTER_ARG_ANY, 0, 0, "25 mount"},
    {"fsopen", EPERM, FILTER_ARG_ANY, 0, 0, "25 mount API"},
    {"fsconfig", EPERM, FILTER_ARG_ANY, 0, 0, "25 mount API"},
    {"fsmount", EPERM, FILTER_ARG_ANY, 0, 0, "25 mount API"},
    {"fspick", EPERM, FILTER_ARG_ANY, 0, 0, "25 mount API"},
    {"move_mount", EPERM, FILTER_ARG_ANY, 0, 0, "25 mount API"},
    {"open_tree", EPERM, FILTER_ARG_ANY, 0, 0, "25 mount API"},
    {"mount_setattr", EPERM, FILTER_ARG_ANY, 0, 0, "25 mount API"},
    {"unshare", EPERM, FILTER_ARG_ANY, 0, 0, "25 namespaces"},
    {"setns", EPERM, FILTER_ARG_ANY, 0, 0, "25 namespaces"},
    {"clone", EPERM, FILTER_ARG0_MASKED, CLONE_NEWNS, CLONE_NEWNS, "25 namespaces"},
    {"clone", EPERM, FILTER_ARG0_MASKED, CLONE_NEWCGROUP, CLONE_NEWCGROUP, "25 namespaces"},
    {"clone", EPERM, FILTER_ARG0_MASKED, CLONE_NEWUTS, CLONE_NEWUTS, "25 namespaces"},
    {"clone", EPERM, FILTER_ARG0_MASKED, CLONE_NEWIPC, CLONE_NEWIPC, "25 namespaces"},
    {"clone", EPERM, FILTER_ARG0_MASKED, CLONE_NEWUSER, CLONE_NEWUSER, "25 namespaces"},
    {"clone", EPERM, FILTER_ARG0_MASKED, CLONE_NEWPID, CLONE_NEWPID, "25 namespaces"},
    {"clone", EPERM, FILTER_ARG0_MASKED, CLONE_NEWNET, CLONE_NEWNET, "25 namespaces"},
    {"clone", EPERM, FILTER_ARG0_MASKED, CLONE_NEWTIME_FLAG, CLONE_NEWTIME_FLAG, "25 namespaces"},
    {"clone3", ENOSYS, FILTER_ARG_ANY, 0, 0, "25 clone3 args cannot be inspected; libc falls back"},
    /* 29: clocks. */
    {"settimeofday", EPERM, FILTER_ARG_ANY, 0, 0, "29 clock"},
    {"clock_settime", EPERM, FILTER_ARG_ANY, 0, 0, "29 clock"},
    {"clock_adjtime", EPERM, FILTER_ARG_ANY, 0, 0, "29 clock"},
    {"adjtimex", EPERM, FILTER_ARG_ANY, 0, 0, "29 clock"},
    /* 30: kernel attack surface. */
    {"bpf", EPERM, FILTER_ARG_ANY, 0, 0, "30 bpf"},
    {"userfaultfd", EPERM, FILTER_ARG_ANY, 0, 0, "30 userfaultfd"},
    {"kexec_load", EPERM, FILTER_ARG_ANY, 0, 0, "30 kexec"},
    {"kexec_file_load", EPERM, FILTER_ARG_ANY, 0, 0, "30 kexec"},
    {"init_module", EPERM, FILTER_ARG_ANY, 0, 0, "30 modules"},
    {"finit_module", EPERM, FILTER_ARG_ANY, 0, 0, "30 modules"},
    {"delete_module", EPERM, FILTER_ARG_ANY, 0, 0, "30 modules"},
    {"open_by_handle_at", EPERM, FILTER_ARG_ANY, 0, 0, "30 shocker"},
    {"name_to_handle_at", EPERM, FILTER_ARG_ANY, 0, 0, "30 shocker"},
    {"personality", EPERM, FILTER_ARG0_MASKED, READ_IMPLIES_EXEC, READ_IMPLIES_EXEC,
     "30 personality"},
    {"acct", EPERM, FILTER_ARG_ANY, 0, 0, "30 accounting"},
    {"swapon", EPERM, FILTER_ARG_ANY, 0, 0, "30 swap"},
    {"swapoff", EPERM, FILTER_ARG_ANY, 0, 0, "30 swap"},
    {"reboot", EPERM, FILTER_ARG_ANY, 0, 0, "30 reboot"},
    {"syslog", EPERM, FILTER_ARG_ANY, 0, 0, "30 kernel log"},
    {"quotactl", EPERM, FILTER_ARG_ANY, 0, 0, "30 quota"},
    {"lookup_dcookie", EPERM, FILTER_ARG_ANY, 0, 0, "30 obsolete"},
    {"uselib", EPERM, FILTER_ARG_ANY, 0, 0, "30 obsolete"},
    {"ustat", EPERM, FILTER_ARG_ANY, 0, 0, "30 obsolete"},
    {"sysfs", EPERM, FILTER_ARG_ANY, 0, 0, "30 obsolete"},
    {"_sysctl", EPERM, FILTER_ARG_ANY, 0, 0, "30 obsolete"},
    {"vhangup", EPERM, FILTER_ARG_ANY, 0, 0, "30 tty"},
    {"iopl", EPERM, FILTER_ARG_ANY, 0, 0, "30 raw io"},
    {"ioperm", EPERM, FILTER_ARG_ANY, 0, 0, "30 raw io"},
    {"fanotify_init", EPERM, FILTER_ARG_ANY, 0, 0, "30 fanotify"},
    {"mbind", EPERM, FILTER_ARG_ANY, 0, 0, "30 numa"},
    {"migrate_pages", EPERM, FILTER_ARG_ANY, 0, 0, "30 numa"},
    {"move_pages", EPERM, FILTER_ARG_ANY, 0, 0, "30 numa"},
    {"set_mempolicy", EPERM, FILTER_ARG_ANY, 0, 0, "30 numa"},
    {"memfd_secret", EPERM, FILTER_ARG_ANY, 0, 0, "30 secret memory"},
};

const size_t filter_policy_len = sizeof(filter_policy) / sizeof(filter_policy[0]);
