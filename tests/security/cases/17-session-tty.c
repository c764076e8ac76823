/*
 * 17-session-tty — catalogue rows 16 and 17: job-control signals and TTY injection.
 *
 * expect: ok
 *
 * The payload must be in its own session and process group (inside its pid namespace), so
 * kill(0, SIGSTOP) or SIGTTOU tricks cannot reach the supervisor; it must have no controlling
 * terminal; and TIOCSTI / TIOCLINUX must fail on every inherited fd, including the variant with
 * high bits set in the ioctl command (CVE-2019-10063: a filter that compares all 64 bits is
 * bypassed while the kernel uses only the low 32).
 */
#include "../hostile.h"
#include <sys/ioctl.h>

static long ioctl_raw(int fd, unsigned long cmd, void *arg)
{
    return syscall(SYS_ioctl, fd, cmd, arg);
}

int main(void)
{
    hostile_init(15);
    pid_t sid = getsid(0), pgrp = getpgrp();
    note("pid %d, session %d, process group %d", (int)getpid(), (int)sid, (int)pgrp);
    if (sid == 0)
        escaped("the session leader is outside the sandbox (session shared with the supervisor)");
    else
        contained("session leader %d is inside the sandbox", (int)sid);
    if (pgrp == 0)
        escaped("the process-group leader is outside the sandbox (kill(0, ...) reaches it)");
    else
        contained("process group %d is inside the sandbox", (int)pgrp);

    int tty = open("/dev/tty", O_RDWR);
    if (tty >= 0) {
        escaped("/dev/tty opened: the payload has a controlling terminal");
        close(tty);
    } else {
        contained("open /dev/tty: %s", strerror(errno));
    }
    for (int fd = 0; fd <= 2; fd++) {
        if (isatty(fd))
            escaped("fd %d is a terminal", fd);
        else
            contained("fd %d is not a terminal", fd);
    }
    char c = 'x';
    char what[96];
    for (int fd = 0; fd <= 2; fd++) {
        snprintf(what, sizeof what, "ioctl(%d, TIOCSTI)", fd);
        PROBE(what, ioctl_raw(fd, TIOCSTI, &c));
        snprintf(what, sizeof what, "ioctl(%d, TIOCSTI | 1 << 32)", fd);
        PROBE(what, ioctl_raw(fd, (unsigned long)TIOCSTI | (1UL << 32), &c));
        snprintf(what, sizeof what, "ioctl(%d, TIOCLINUX)", fd);
        char sub = 6; /* TIOCL_GETSHIFTSTATE: read-only */
        PROBE(what, ioctl_raw(fd, TIOCLINUX, &sub));
        snprintf(what, sizeof what, "ioctl(%d, TIOCSCTTY)", fd);
        PROBE(what, ioctl_raw(fd, TIOCSCTTY, 0));
    }
    static const char *const ttys[] = {"/dev/console", "/dev/tty0",  "/dev/tty1", "/dev/ptmx",
                                       "/dev/pts/0",   "/dev/ttyS0", "/dev/hvc0"};
    for (size_t i = 0; i < sizeof ttys / sizeof ttys[0]; i++) {
        int fd = open(ttys[i], O_RDWR | O_NOCTTY | O_NONBLOCK);
        if (fd >= 0) {
            if (isatty(fd))
                escaped("terminal %s opened", ttys[i]);
            else
                note("%s opened but is not a terminal", ttys[i]);
            close(fd);
        } else {
            contained("open %s: %s", ttys[i], strerror(errno));
        }
    }
    return hostile_finish();
}
