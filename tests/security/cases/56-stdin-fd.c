/*
 * 56-stdin-fd — catalogue row 23: the descriptor behind --stdin FILE.
 *
 * expect: ok
 * run: --stdin @SENTINEL@
 *
 * run.t feeds its world-writable host sentinel file as stdin. If fd 0 is the host file itself
 * (not a pipe or a copy), the payload learns its host path and can reopen it through
 * /proc/self/fd/0 with new access modes, which the kernel grants by the file's permissions:
 * here, write access to a host file. The program only opens it for writing (it writes
 * nothing); run.t checks that the sentinel is unchanged.
 */
#include "../hostile.h"

int main(void)
{
    hostile_init(15);
    char target[4096] = "";
    ssize_t n = readlink("/proc/self/fd/0", target, sizeof target - 1);
    if (n > 0)
        target[n] = '\0';
    note("fd 0 -> %s", target);
    if (target[0] == '/' && strcmp(target, "/dev/null"))
        warning("stdin is a host file descriptor and names its host path %s", target);
    char buf[256];
    n = read(0, buf, sizeof buf - 1);
    if (n > 0) {
        buf[n] = '\0';
        note("stdin starts with: %.*s", (int)strcspn(buf, "\n"), buf);
    } else {
        inconclusive("stdin is empty (%s)", n < 0 ? strerror(errno) : "EOF");
    }
    int fd = open("/proc/self/fd/0", O_WRONLY | O_APPEND);
    if (fd >= 0) {
        escaped("reopened stdin (%s) for writing through /proc/self/fd/0", target);
        close(fd);
    } else {
        contained("reopen /proc/self/fd/0 for writing: %s", strerror(errno));
    }
    struct stat st;
    if (fstat(0, &st) == 0 && S_ISREG(st.st_mode) && fchmod(0, st.st_mode & 07777) == 0)
        escaped("fchmod on the stdin file works: the host file is the sandbox user's");
    return hostile_finish();
}
