/*
 * 25-sys-absent — catalogue row 22: /sys, cgroupfs and other kernel filesystems.
 *
 * expect: ok
 *
 * There must be no /sys (or an empty directory), and no sysfs, cgroup, cgroup2, debugfs,
 * tracefs, securityfs, bpf, configfs, fusectl or pstore mount anywhere in the sandbox (a
 * writable cgroupfs is the release_agent escape, CVE-2022-0492). Mounting one must fail.
 */
#include "../hostile.h"
#include <sys/mount.h>

int main(void)
{
    hostile_init(15);
    DIR *d = opendir("/sys");
    if (!d) {
        contained("/sys: %s", strerror(errno));
    } else {
        int n = 0;
        struct dirent *e;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                n++;
        closedir(d);
        if (n)
            escaped("/sys lists %d entries", n);
        else
            contained("/sys is an empty directory");
    }
    static const char *const paths[] = {"/sys/fs/cgroup", "/sys/kernel/debug",
                                        "/sys/kernel/security", "/sys/firmware",
                                        "/sys/fs/cgroup/memory/release_agent"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        struct stat st;
        if (stat(paths[i], &st) == 0)
            escaped("%s exists", paths[i]);
        else
            contained("%s: %s", paths[i], strerror(errno));
    }
    static char mi[65536];
    if (read_text("/proc/self/mountinfo", mi, sizeof mi) < 0) {
        inconclusive("cannot read mountinfo: %s", strerror(errno));
        return hostile_finish();
    }
    static const char *const kinds[] = {
        " - sysfs ", " - cgroup ",   " - cgroup2 ", " - debugfs ", " - tracefs ", " - securityfs ",
        " - bpf ",   " - configfs ", " - fusectl ", " - pstore ",  " - efivarfs "};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strstr(mi, kinds[i]))
            escaped("a%smount is present", kinds[i] + 2);
    }
    contained("mountinfo checked for kernel filesystems");
    mkdir("/tmp/cg", 0700);
    PROBE("mount cgroup v1 memory", mount("cgroup", "/tmp/cg", "cgroup", 0, "memory"));
    PROBE("mount cgroup2", mount("cgroup2", "/tmp/cg", "cgroup2", 0, NULL));
    PROBE("mount sysfs", mount("sysfs", "/tmp/cg", "sysfs", 0, NULL));
    return hostile_finish();
}
