/*
 * 28-mount-ns-escape — catalogue rows 25 and 42: mount, unshare, setns, nested namespaces.
 *
 * expect: ok
 *
 * Every mount-related call (mount, remount read-write, bind, umount, pivot_root, chroot, the
 * new fsopen/open_tree API, mount_setattr), unshare() of each namespace kind, setns() into
 * pid 1's namespaces and clone()/clone3() with CLONE_NEWUSER must fail. A nested user namespace
 * would hand the payload a full capability set inside it (kernel attack surface, CVE-2022-0185).
 */
#include "../hostile.h"
#include <linux/mount.h>
#include <sched.h>
#include <sys/mount.h>

struct clone_args_v0 {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

static long raw_clone_newuser(void)
{
    long rc = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
    if (rc == 0)
        _exit(1); /* the new child: the parent reports */
    if (rc > 0)
        waitpid((pid_t)rc, NULL, 0);
    return rc;
}

static long clone3_flags(uint64_t flags)
{
    struct clone_args_v0 a = {.flags = flags, .exit_signal = SIGCHLD};
    long rc = syscall(SYS_clone3, &a, sizeof a);
    if (rc == 0)
        _exit(1);
    if (rc > 0)
        waitpid((pid_t)rc, NULL, 0);
    return rc;
}

static long setns_path(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    return setns(fd, 0);
}

int main(void)
{
    hostile_init(20);
    mkdir("/tmp/mnt", 0700);
    PROBE("mount tmpfs on /tmp/mnt", mount("none", "/tmp/mnt", "tmpfs", 0, NULL));
    PROBE("bind-mount /usr on /tmp/mnt", mount("/usr", "/tmp/mnt", NULL, MS_BIND, NULL));
    PROBE("remount / read-write", mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL));
    PROBE("remount /usr read-write", mount(NULL, "/usr", NULL, MS_REMOUNT | MS_BIND, NULL));
    PROBE("make / shared", mount(NULL, "/", NULL, MS_SHARED | MS_REC, NULL));
    PROBE("umount2 /proc", umount2("/proc", MNT_DETACH));
    PROBE("umount2 /usr", umount2("/usr", MNT_DETACH));
    PROBE("pivot_root", syscall(SYS_pivot_root, "/tmp", "/tmp/mnt"));
    PROBE("chroot /tmp", chroot("/tmp"));
    PROBE("fsopen tmpfs", syscall(SYS_fsopen, "tmpfs", 0));
    PROBE("open_tree / clone", syscall(SYS_open_tree, AT_FDCWD, "/", 1 /* OPEN_TREE_CLONE */));
    struct mount_attr attr = {.attr_clr = MOUNT_ATTR_RDONLY};
    PROBE("mount_setattr / read-write",
          syscall(SYS_mount_setattr, AT_FDCWD, "/", 0, &attr, sizeof attr));

    static const struct {
        int flag;
        const char *name;
    } ns[] = {{CLONE_NEWUSER, "USER"},     {CLONE_NEWNS, "NS"},    {CLONE_NEWNET, "NET"},
              {CLONE_NEWPID, "PID"},       {CLONE_NEWIPC, "IPC"},  {CLONE_NEWUTS, "UTS"},
              {CLONE_NEWCGROUP, "CGROUP"}, {CLONE_NEWTIME, "TIME"}};
    char what[96];
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        snprintf(what, sizeof what, "unshare(CLONE_NEW%s)", ns[i].name);
        PROBE(what, unshare(ns[i].flag));
    }
    PROBE("unshare(CLONE_NEWUSER | CLONE_NEWNS)", unshare(CLONE_NEWUSER | CLONE_NEWNS));
    static const char *const targets[] = {"mnt", "user", "net", "pid", "ipc", "uts", "cgroup"};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/1/ns/%s", targets[i]);
        snprintf(what, sizeof what, "setns(%s)", path);
        PROBE(what, setns_path(path));
    }
    char max[32];
    if (read_text("/proc/sys/user/max_user_namespaces", max, sizeof max) > 0 && atol(max) != 0)
        warning("user.max_user_namespaces is %ld inside: only seccomp stops nested user "
                "namespaces (catalogue row 25 suggests 0 as a second layer)",
                atol(max));
    PROBE("clone(CLONE_NEWUSER)", raw_clone_newuser());
    PROBE("clone3(CLONE_NEWUSER)", clone3_flags(CLONE_NEWUSER));
    PROBE("clone3(CLONE_NEWNS | CLONE_NEWPID)", clone3_flags(CLONE_NEWNS | CLONE_NEWPID));
    return hostile_finish();
}
