/*
 * 41-seccomp-arch — catalogue row 31: bypass the seccomp filter through another ABI.
 *
 * expect: ok
 *
 * A 64-bit process can still enter the kernel through "int $0x80" with i386 syscall numbers
 * (this kernel has IA32 emulation), and through x32 numbers (bit 30 set). A filter that does
 * not check the architecture reads i386 numbers as x86_64 ones: i386 getpid (20) looks like
 * writev, i386 keyctl (288) like accept4, i386 ptrace (26) like msync. The filter must reject
 * every non-x86_64 call (errno or SIGSYS); an answer with our pid or a key id is an escape.
 * A SIGSEGV from int $0x80 means the kernel has no i386 entry at all (contained).
 */
#include "../hostile.h"

static long int80(long nr, long a, long b, long c)
{
    long ret;
    __asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
    if (ret < 0 && ret > -4096) {
        errno = (int)-ret;
        return -1;
    }
    return ret;
}

static long i386_getpid_matches(void)
{
    long rc = int80(20, 0, 0, 0);
    if (rc >= 0 && rc != getpid()) {
        printf("note: i386 syscall 20 returned %ld, not our pid\n", rc);
        return rc;
    }
    return rc;
}

static void segv_means_no_ia32(int sig)
{
    (void)sig;
    static const char msg[] = "contained: int $0x80 faulted (no i386 entry)\n";
    write(1, msg, sizeof msg - 1);
    _exit(0);
}

#define PROBE_INT80(what, expr)                                                                    \
    do {                                                                                           \
        pid_t p_ = probe_fork();                                                                   \
        if (p_ == 0) {                                                                             \
            signal(SIGSEGV, segv_means_no_ia32);                                                   \
            errno = 0;                                                                             \
            long rc_ = (expr);                                                                     \
            hostile__probe_child_exit((what), rc_, errno);                                         \
        }                                                                                          \
        probe_wait((what), p_);                                                                    \
    } while (0)

int main(void)
{
    hostile_init(15);
    PROBE_INT80("int $0x80 getpid (20)", i386_getpid_matches());
    PROBE_INT80("int $0x80 keyctl(GET_KEYRING_ID, process, create) (288)",
                int80(288, 0, -2 /* KEY_SPEC_PROCESS_KEYRING */, 1));
    PROBE_INT80("int $0x80 ptrace(TRACEME) (26)", int80(26, 0, 0, 0));
    PROBE_INT80("int $0x80 unshare(CLONE_NEWUSER) (310)", int80(310, 0x10000000, 0, 0));
    PROBE_INT80("int $0x80 personality(READ_IMPLIES_EXEC) (136)", int80(136, 0x0400000, 0, 0));
    PROBE("x32 getpid (0x40000000 | 39)", syscall(0x40000000 | 39));
    PROBE("x32 keyctl (0x40000000 | 250)", syscall(0x40000000 | 250, 0, -2, 1));
    PROBE("x32 unshare (0x40000000 | 272)", syscall(0x40000000 | 272, 0x10000000));
    PROBE("syscall number 0x40000000 | 157 (x32 prctl)", syscall(0x40000000 | 157, 38, 1, 0, 0, 0));
    return hostile_finish();
}
