/*
 * 27-ptrace — catalogue row 24: ptrace and cross-process memory access.
 *
 * expect: ok
 *
 * PTRACE_TRACEME, PTRACE_ATTACH and PTRACE_SEIZE on a child of the prober (allowed by the
 * kernel's own rules, so only the seccomp policy can refuse), PTRACE_ATTACH on pid 1, and
 * process_vm_readv / process_vm_writev on the child must all fail.
 */
#include "../hostile.h"
#include <sys/ptrace.h>
#include <sys/uio.h>

static volatile long secret = 0x5ec2e7;

static pid_t victim(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        alarm(5);
        for (;;)
            pause();
    }
    return pid;
}

static long attach_child(int how)
{
    pid_t v = victim();
    if (v < 0)
        return -1;
    long rc = ptrace(how, v, 0, 0);
    int err = errno;
    kill(v, SIGKILL);
    waitpid(v, NULL, 0);
    errno = err;
    return rc;
}

static long vm_read_child(int write)
{
    pid_t v = victim();
    if (v < 0)
        return -1;
    long copy = 0;
    struct iovec local = {.iov_base = &copy, .iov_len = sizeof copy};
    struct iovec remote = {.iov_base = (void *)&secret, .iov_len = sizeof secret};
    long rc = write ? process_vm_writev(v, &local, 1, &remote, 1, 0)
                    : process_vm_readv(v, &local, 1, &remote, 1, 0);
    int err = errno;
    kill(v, SIGKILL);
    waitpid(v, NULL, 0);
    errno = err;
    return rc;
}

int main(void)
{
    hostile_init(20);
    PROBE("ptrace(PTRACE_TRACEME)", ptrace(PTRACE_TRACEME, 0, 0, 0));
    PROBE("ptrace(PTRACE_ATTACH, child)", attach_child(PTRACE_ATTACH));
    PROBE("ptrace(PTRACE_SEIZE, child)", attach_child(PTRACE_SEIZE));
    PROBE("ptrace(PTRACE_ATTACH, 1)", ptrace(PTRACE_ATTACH, 1, 0, 0));
    PROBE("process_vm_readv(child)", vm_read_child(0));
    PROBE("process_vm_writev(child)", vm_read_child(1));
    return hostile_finish();
}
