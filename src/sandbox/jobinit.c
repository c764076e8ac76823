/*
 * jobinit.c — a fork server job's small init: the job's pid 1 once it has made the job and
 * forked pid 2 (zygote.c, "a job's small init"). A static program of its own (built with musl,
 * embedded in crucible and exec'd from a memfd), so that pid 1 holds none of the zygote's memory:
 * its start costs the kernel a few pages instead of a copy of the interpreter's page tables.
 *
 * It starts with the control socket on fd 3, pid 2's go socket on fd 4, the read end of pid 2's
 * start report on fd 5, SIGCHLD blocked, and pid 2's pid as its one argument. Pid 2 reports its
 * confinement on the go socket (0, or stage << 16 | errno); then the job is READY, and its
 * requests are answered as a sandbox's init answers them (init_proto.c): puts, gets, and one
 * exec, handed to pid 2 with the request's descriptors. "--probe" only exits 0: the zygote's
 * check that the program runs here.
 */
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/errno_text.inc" /* errno_text[]: the build machine's glibc strerror texts */

enum { CTL_FD = 3, GO_FD = 4, REPORT_FD = 5 };

/* jobinit_strerror(e) — strerror as crucible's other processes (glibc) word it, so that a
 * message is the same whichever init reports it; init_proto.c's strerror in this program. */
char *jobinit_strerror(int e);
char *jobinit_strerror(int e)
{
    static char unknown[32];

    if (e >= 0 && (size_t)e < sizeof(errno_text) / sizeof(errno_text[0]) && errno_text[e])
        return (char *)errno_text[e];
    snprintf(unknown, sizeof(unknown), "Unknown error %d", e);
    return unknown;
}

/* pid 2: made ahead and confined (failure 0), or not (its failure, reported at the exec). */
struct pid2 {
    pid_t pid;
    bool gone; /* reaped before the exec request */
    int failure;
};

/* start_op — the exec request's descriptors handed to pid 2 (job_ops' start). */
static pid_t start_op(void *ctx, const struct exec_req *x, const int *fds, int *failure,
                      const char **why)
{
    struct pid2 *p2 = ctx;
    struct ctl_msg m;

    (void)x; /* pid 2 reads the spec itself */
    *failure = p2->failure;
    if (!p2->failure) {
        memset(&m, 0, sizeof(m));
        m.type = CTL_EXEC;
        if (p2->gone || sandbox__ctl_send(GO_FD, &m, fds, 4) < 0) {
            if (!p2->gone)
                kill(p2->pid, SIGKILL);
            *why = "the job's process made ahead is gone";
            return -ESRCH;
        }
        while (read(REPORT_FD, failure, sizeof(*failure)) < 0 && errno == EINTR)
            ;
    }
    close(GO_FD);
    close(REPORT_FD);
    return p2->pid;
}

static void reaped_op(void *ctx, pid_t pid)
{
    struct pid2 *p2 = ctx;
    if (pid == p2->pid)
        p2->gone = true; /* died waiting */
}

int main(int argc, char **argv)
{
    struct pid2 p2 = {0, false, 0};
    struct job_ops ops = {.start = start_op, .reaped = reaped_op, .ctx = &p2};
    sigset_t chld;
    ssize_t n;
    int sfd;

    prctl(PR_SET_DUMPABLE, 0); /* before pid 2 runs any of the job's code: at the exec request */
    if (argc == 2 && strcmp(argv[1], "--probe") == 0)
        return 0;
    prctl(PR_SET_NAME, "crucible-job");
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (argc != 2 || (p2.pid = (pid_t)atoi(argv[1])) <= 0) {
        sandbox__reply(CTL_FD, CTL_FAILED, EINVAL, "the job's init started without pid 2");
        return 1;
    }
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) {
        sandbox__reply(CTL_FD, CTL_FAILED, errno, "cannot create a signalfd in the job");
        return 1;
    }
    while ((n = read(GO_FD, &p2.failure, sizeof(p2.failure))) < 0 && errno == EINTR)
        ;
    if (n != (ssize_t)sizeof(p2.failure)) /* gone before its report (it exits when it fails to
                                           * confine itself): the exec says it is gone */
        p2.failure = 0;
    sandbox__reply(CTL_FD, CTL_READY, 0, NULL);
    sandbox__job_serve(CTL_FD, sfd, &ops);
}
