/*
 * Unit tests for src/filter.c: the embedded program is what libseccomp makes of the policy
 * table here and now (gen/filter_compile.c), and, applied in a forked child, it denies
 * what it must and allows ordinary work. Each probe runs in its own child so a kill by
 * the bad-architecture action is observed from outside.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <linux/filter.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "filter_compile.h"
#include "sandbox/filter.h"
#include "tap.h"

static struct filter f;

/* probe(fn) — runs fn under the filter in a child; returns the child's wait status. */
static int probe(int (*fn)(void))
{
    int st;
    pid_t pid = fork();

    if (pid == 0) {
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        if (filter_apply(&f) < 0)
            _exit(200);
        _exit(fn());
    }
    waitpid(pid, &st, 0);
    return st;
}

#define EXPECT_ERRNO(call, e) return (call) < 0 && errno == (e) ? 0 : 1

static int p_ptrace(void)
{
    EXPECT_ERRNO(syscall(SYS_ptrace, 0, 0, 0, 0), EPERM);
}
static int p_vsock(void)
{
    EXPECT_ERRNO(socket(40, SOCK_STREAM, 0), EAFNOSUPPORT);
}
static int p_inet_ok(void)
{
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    return s >= 0 ? 0 : 1;
}
static int p_unshare(void)
{
    EXPECT_ERRNO(unshare(CLONE_NEWUSER), EPERM);
}
static int p_clone_ns(void)
{
    EXPECT_ERRNO(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0), EPERM);
}
static int p_clone3(void)
{
    EXPECT_ERRNO(syscall(SYS_clone3, NULL, 0), ENOSYS);
}
static int p_fork_ok(void)
{
    pid_t p = fork();
    if (p == 0)
        _exit(7);
    int st;
    waitpid(p, &st, 0);
    return p > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 7 ? 0 : 1;
}
static int p_mount(void)
{
    EXPECT_ERRNO(syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, 0), EPERM);
}
static int p_io_uring(void)
{
    EXPECT_ERRNO(syscall(SYS_io_uring_setup, 1, NULL), ENOSYS);
}
static int p_bpf(void)
{
    EXPECT_ERRNO(syscall(SYS_bpf, 0, NULL, 0), EPERM);
}
static int p_keyctl(void)
{
    EXPECT_ERRNO(syscall(SYS_keyctl, 0, 0, 0, 0, 0), ENOSYS);
}
static int p_tiocsti(void)
{
    EXPECT_ERRNO(ioctl(0, TIOCSTI, "x"), EPERM);
}
static int p_tiocsti_high(void)
{
    /* CVE-2019-10063: the command with high bits set is still TIOCSTI to the kernel */
    EXPECT_ERRNO(syscall(SYS_ioctl, 0, 0xffffffff00000000UL | TIOCSTI, "x"), EPERM);
}
static int p_settime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    EXPECT_ERRNO(clock_settime(CLOCK_REALTIME, &ts), EPERM);
}
static int p_personality(void)
{
    EXPECT_ERRNO(syscall(SYS_personality, 0x0400000), EPERM);
}
static int p_x32(void)
{
    EXPECT_ERRNO(syscall(0x40000000 | SYS_getpid), ENOSYS);
}
static int p_prlimit_other(void)
{
    struct rlimit rl = {0, 0};
    EXPECT_ERRNO(syscall(SYS_prlimit64, getppid(), RLIMIT_NOFILE, &rl, NULL), EPERM);
}
static int p_prlimit_self(void)
{
    struct rlimit rl;
    return getrlimit(RLIMIT_NOFILE, &rl) == 0 && setrlimit(RLIMIT_NOFILE, &rl) == 0 ? 0 : 1;
}
static int p_i386(void)
{
    long ret;
    /* int 0x80 enters the i386 table: the filter's arch check must kill the process. */
    __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20) : "memory");
    return 3;
}

/* unfiltered_i386_faults() — whether int 0x80 without any filter fails to return (the
 * kernel's i386 system call entry is disabled: it faults, SIGSEGV, which a sanitizer's handler
 * may turn into an exit of its own). p_i386 returns 3 only when the call came back. */
static bool unfiltered_i386_faults(void)
{
    int st;
    pid_t pid = fork();

    if (pid == 0)
        _exit(p_i386());
    waitpid(pid, &st, 0);
    return !(WIFEXITED(st) && WEXITSTATUS(st) == 3);
}

int main(void)
{
    struct errbuf err = {{0}};
    int st;

    ok(filter_build(&f, &err) == 0, "the embedded program is there (%s)", err.msg);
    ok(f.len > 10 && f.len < BPF_MAXINSNS, "program has %u instructions", f.len);

    struct sock_filter *fresh = NULL;
    size_t fresh_len = 0;
    ok(filter_compile(&fresh, &fresh_len, &err) == 0, "libseccomp compiles the policy (%s)",
       err.msg);
    is_int(fresh_len, f.len, "the embedded program has as many instructions as libseccomp's");
    ok(fresh && fresh_len == f.len && memcmp(fresh, f.insns, fresh_len * sizeof(*fresh)) == 0,
       "and is identical to it, instruction for instruction");
    free(fresh);
    ok(filter_rule_count() >= 40, "policy has %zu rules", filter_rule_count());

    st = probe(p_ptrace);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "ptrace denied with EPERM");
    st = probe(p_vsock);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "AF_VSOCK socket denied");
    st = probe(p_inet_ok);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "AF_INET socket allowed (the netns has no route)");
    st = probe(p_unshare);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "unshare denied");
    st = probe(p_clone_ns);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "clone with CLONE_NEWUSER denied");
    st = probe(p_clone3);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "clone3 is ENOSYS (libc falls back)");
    st = probe(p_fork_ok);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "plain fork still works");
    st = probe(p_mount);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "mount denied");
    st = probe(p_io_uring);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "io_uring_setup is ENOSYS");
    st = probe(p_bpf);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "bpf denied");
    st = probe(p_keyctl);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "keyctl is ENOSYS");
    st = probe(p_tiocsti);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "TIOCSTI denied");
    st = probe(p_tiocsti_high);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "TIOCSTI with high bits set denied");
    st = probe(p_settime);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "clock_settime denied");
    st = probe(p_personality);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "personality(READ_IMPLIES_EXEC) denied");
    st = probe(p_x32);
    ok((WIFEXITED(st) && WEXITSTATUS(st) == 0) || (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS),
       "x32 syscall number does not run");
    st = probe(p_prlimit_other);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "prlimit on another process denied");
    st = probe(p_prlimit_self);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "getrlimit/setrlimit on itself allowed");
    /* A kernel may have its i386 entry turned off (ia32_emulation=0 on the command line, or
     * IA32_EMULATION_DEFAULT_DISABLED): int 0x80 then faults (SIGSEGV) before any filter sees
     * it. Learn which from an unfiltered child; the filter must kill the call either way. */
    if (unfiltered_i386_faults()) {
        st = probe(p_i386);
        ok(!(WIFEXITED(st) && WEXITSTATUS(st) == 3),
           "i386 syscall via int 0x80 does not run (this kernel's i386 entry is off: it faults)");
    } else {
        st = probe(p_i386);
        ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
           "i386 syscall via int 0x80 is killed (SIGSYS)");
    }
    filter_release(&f);
    ok(f.insns == NULL && f.len == 0, "release clears the program");
    return done_testing();
}
