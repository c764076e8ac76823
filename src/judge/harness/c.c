/*
 * crucible's assert harness for C and C++ (see docs/TASKS.md, "What the assert and command
 * harnesses can and cannot prove"). crucible compiles this file beside the program (main.c or
 * main.cpp: the solution, the prologue, the test code), as C or as C++ (g++ reads .c as C++),
 * and links with -Wl,--wrap=main: the C library's start-up then calls __wrap_main below instead
 * of the test code's main, which is reached as __real_main (the linker binds that name to the
 * real main even when the solution defines a function called __real_main).
 *
 * __wrap_main reads the run's token from stdin (the assert harness gives nothing else there),
 * points fd 0 at /dev/null, keeps the token as two random shares, runs the test code's main,
 * and writes the token, on a line of its own, only when main has returned 0. exit, _exit,
 * quick_exit, abort, a signal handler, an atexit handler, a thread ending the process: every
 * other end comes without the token, and crucible fails the test.
 *
 * The prologue (lang.c) routes the test code's assert() to __crucible_assert_fail here, so a
 * solution that defines __assert_fail of its own (to make failed assertions return) changes
 * nothing; crucible also #undefs every macro the solution #defined before the test code.
 * This file makes its system calls itself (an inline syscall instruction on x86-64 and
 * aarch64): the solution, linked into the same program, may define read, write or exit.
 *
 * What it cannot stop: code of the solution that runs before main (constructors, C++ static
 * initialisers, ifunc resolvers, .preinit_array, a __libc_start_main of its own) and reads
 * stdin before this does; code that reads the process's memory; C++ operators the solution
 * overloads for the types it returns (a rigged operator==).
 */
#ifdef __cplusplus
#define CRUCIBLE_C extern "C"
#else
#define CRUCIBLE_C
#endif

#if defined(__x86_64__)
enum { SYS_READ = 0, SYS_WRITE = 1, SYS_CLOSE = 3, SYS_OPENAT = 257, SYS_DUP3 = 292,
       SYS_EXIT_GROUP = 231, SYS_GETRANDOM = 318 };
static long sys4(long n, long a, long b, long c, long d)
{
    long r;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                     : "rcx", "r11", "memory");
    return r;
}
#elif defined(__aarch64__)
enum { SYS_READ = 63, SYS_WRITE = 64, SYS_CLOSE = 57, SYS_OPENAT = 56, SYS_DUP3 = 24,
       SYS_EXIT_GROUP = 94, SYS_GETRANDOM = 278 };
static long sys4(long n, long a, long b, long c, long d)
{
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
    return x0;
}
#else /* elsewhere through the C library (which the solution could replace) */
#include <sys/syscall.h>
#include <unistd.h>
enum { SYS_READ = SYS_read, SYS_WRITE = SYS_write, SYS_CLOSE = SYS_close,
       SYS_OPENAT = SYS_openat, SYS_DUP3 = SYS_dup3, SYS_EXIT_GROUP = SYS_exit_group,
       SYS_GETRANDOM = SYS_getrandom };
static long sys4(long n, long a, long b, long c, long d)
{
    return syscall(n, a, b, c, d);
}
#endif

static void crucible_write(int fd, const char *s, unsigned long n)
{
    while (n > 0) {
        long w = sys4(SYS_WRITE, fd, (long)s, (long)n, 0);
        if (w <= 0)
            return;
        s += w;
        n -= (unsigned long)w;
    }
}

static unsigned long crucible_len(const char *s)
{
    unsigned long n = 0;
    while (s && s[n])
        n++;
    return n;
}

static void crucible_exit(int status)
{
    for (;;)
        sys4(SYS_EXIT_GROUP, status, 0, 0, 0);
}

static void crucible_wipe(volatile unsigned char *p, unsigned long n)
{
    while (n--)
        *p++ = 0;
}

/* The test code's assert() comes here (see the prologue): the message glibc writes, then the
 * end of the process, with no function of the C library involved. */
CRUCIBLE_C void __crucible_assert_fail(const char *expr, const char *file, unsigned int line,
                                       const char *func)
{
    char num[16];
    int i = 15;

    num[i] = '\0';
    do {
        num[--i] = (char)('0' + line % 10);
        line /= 10;
    } while (line && i > 0);
    crucible_write(2, "main: ", 6);
    crucible_write(2, file, crucible_len(file));
    crucible_write(2, ":", 1);
    crucible_write(2, num + i, crucible_len(num + i));
    crucible_write(2, ": ", 2);
    crucible_write(2, func, crucible_len(func));
    crucible_write(2, ": Assertion `", 13);
    crucible_write(2, expr, crucible_len(expr));
    crucible_write(2, "' failed.\n", 10);
    crucible_exit(134);
}

CRUCIBLE_C int __real_main(int argc, char **argv, char **envp);

CRUCIBLE_C int __wrap_main(int argc, char **argv, char **envp)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char buf[80], a[16], b[16];
    char line[34];
    unsigned long got = 0, s, e;
    long n, fd;
    int valid, r;

    while (got < sizeof(buf) &&
           (n = sys4(SYS_READ, 0, (long)(buf + got), (long)(sizeof(buf) - got), 0)) > 0)
        got += (unsigned long)n;
    fd = sys4(SYS_OPENAT, -100 /* AT_FDCWD */, (long)"/dev/null", 0 /* O_RDONLY */, 0);
    if (fd > 0) {
        sys4(SYS_DUP3, fd, 0, 0, 0);
        sys4(SYS_CLOSE, fd, 0, 0, 0);
    } else if (fd < 0) {
        sys4(SYS_CLOSE, 0, 0, 0, 0);
    }
    for (s = 0; s < got && buf[s] <= ' '; s++)
        ;
    for (e = got; e > s && buf[e - 1] <= ' '; e--)
        ;
    valid = e - s == 32 && sys4(SYS_GETRANDOM, (long)a, 16, 0, 0) == 16;
    for (int i = 0; valid && i < 32; i++) {
        unsigned char c = buf[s + (unsigned long)i], v;
        if (c >= '0' && c <= '9')
            v = (unsigned char)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v = (unsigned char)(c - 'a' + 10);
        else {
            valid = 0;
            break;
        }
        if (i % 2 == 0)
            b[i / 2] = (unsigned char)(v << 4);
        else
            b[i / 2] = (unsigned char)((b[i / 2] | v) ^ a[i / 2]);
    }
    crucible_wipe(buf, sizeof(buf));
    if (!valid) {
        static const char msg[] = "crucible harness: no test token on stdin\n";
        crucible_write(2, msg, sizeof(msg) - 1);
        crucible_exit(125);
    }
    r = __real_main(argc, argv, envp);
    if (r != 0)
        return r;
    line[0] = '\n';
    for (int i = 0; i < 16; i++) {
        unsigned char v = (unsigned char)(a[i] ^ b[i]);
        line[1 + 2 * i] = hex[v >> 4];
        line[2 + 2 * i] = hex[v & 15];
    }
    line[33] = '\n';
    crucible_write(1, line, sizeof(line));
    crucible_wipe((volatile unsigned char *)line, sizeof(line));
    crucible_wipe(a, sizeof(a));
    crucible_wipe(b, sizeof(b));
    return 0;
}
