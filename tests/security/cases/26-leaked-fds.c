/*
 * 26-leaked-fds — catalogue row 23: file descriptors leaked from the supervisor.
 *
 * expect: ok
 *
 * /proc/self/fd must list only 0, 1, 2 and the directory fd used to read it; fds 3..4095 must
 * be closed; 0-2 must be pipes, sockets or /dev/null (never a host file or directory); the cwd
 * must be /work inside the sandbox root and ".." from / must stay at / (runc CVE-2024-21626).
 */
#include "../hostile.h"

int main(void)
{
    hostile_init(15);
    DIR *d = opendir("/proc/self/fd");
    if (!d) {
        inconclusive("opendir /proc/self/fd: %s", strerror(errno));
        return hostile_finish();
    }
    int dfd = dirfd(d), extra = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        int fd = atoi(e->d_name);
        char path[64], target[512] = "";
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n > 0)
            target[n] = '\0';
        note("fd %d -> %s", fd, target);
        if (fd == dfd)
            continue;
        if (fd > 2) {
            escaped("fd %d is open: %s", fd, target);
            extra++;
        } else if (strncmp(target, "pipe:", 5) && strncmp(target, "socket:", 7) &&
                   strcmp(target, "/dev/null") && strncmp(target, "anon_inode:", 11)) {
            escaped("fd %d is %s (not a pipe, socket or /dev/null)", fd, target);
        }
    }
    closedir(d);
    if (!extra)
        contained("/proc/self/fd holds only 0-2 and the listing's own fd");
    int open_hi = 0;
    for (int fd = 3; fd < 4096; fd++)
        if (fcntl(fd, F_GETFD) >= 0)
            open_hi++;
    if (open_hi)
        escaped("%d descriptors above 2 are open", open_hi);
    else
        contained("fds 3..4095 are all closed");

    char cwd[512];
    if (!getcwd(cwd, sizeof cwd))
        escaped("getcwd failed (%s): the cwd is outside the sandbox root", strerror(errno));
    else if (strcmp(cwd, "/work"))
        escaped("cwd is %s, not /work", cwd);
    else
        contained("cwd is /work");
    char target[512];
    ssize_t n = readlink("/proc/self/cwd", target, sizeof target - 1);
    if (n > 0) {
        target[n] = '\0';
        if (strcmp(target, "/work"))
            escaped("/proc/self/cwd -> %s", target);
    }
    n = readlink("/proc/self/root", target, sizeof target - 1);
    if (n > 0) {
        target[n] = '\0';
        if (strcmp(target, "/"))
            escaped("/proc/self/root -> %s", target);
        else
            contained("/proc/self/root is /");
    }
    struct stat root, up;
    if (stat("/", &root) == 0 && stat("/../../..", &up) == 0 && root.st_ino == up.st_ino &&
        root.st_dev == up.st_dev)
        contained("/.. is / (no way above the root)");
    else
        escaped("/../../.. is not /");
    return hostile_finish();
}
