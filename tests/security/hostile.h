/*
 * hostile.h — shared helpers for the hostile programs of crucible's security suite.
 *
 * Every program in tests/security/cases/ attempts one attack from the catalogue
 * (research/isolation-anchors.md §3) from inside the sandbox and reports on stdout:
 *
 *   contained: WHAT (why)     the attempt was refused
 *   ESCAPED: WHAT (detail)    the attempt got through; run.t fails the case on this word
 *   note: ...                 context for a human reading the record
 *   warning: ...              a missing defence in depth that is not an escape by itself;
 *                             run.t shows these lines as TAP diagnostics
 *
 * hostile_finish() exits 0 when every attempt was contained, 1 when one escaped and 2 when a
 * check could not be made (a probe hung or died of an unexpected signal).
 *
 * Seccomp may answer a denied syscall with an errno or by killing the process with SIGSYS.
 * PROBE() therefore runs each attempt in a forked child, so both answers count as "contained"
 * and the case's own status stays deterministic. Every program also arms alarm() at start so
 * that it ends by itself even if the sandbox fails to stop it (bounded damage on a broken
 * sandbox).
 *
 * The programs are built statically (Makefile: cc -O1 -static -pthread -w) and copied into the
 * sandbox as /work/prog; they include this header by relative path.
 */
#ifndef CRUCIBLE_HOSTILE_H
#define CRUCIBLE_HOSTILE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int hostile__escaped;
static int hostile__contained;
static int hostile__errors;

static inline void hostile__vsay(const char *tag, const char *fmt, va_list ap)
{
    fputs(tag, stdout);
    vprintf(fmt, ap);
    putchar('\n');
    fflush(stdout);
}

/* contained(fmt, ...) — one attempt was refused. */
static inline void contained(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void contained(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hostile__vsay("contained: ", fmt, ap);
    va_end(ap);
    hostile__contained++;
}

/* escaped(fmt, ...) — one attempt got through; the program will exit 1. */
static inline void escaped(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void escaped(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hostile__vsay("ESCAPED: ", fmt, ap);
    va_end(ap);
    hostile__escaped++;
}

/* note(fmt, ...) — context only, no verdict. */
static inline void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hostile__vsay("note: ", fmt, ap);
    va_end(ap);
}

/* warning(fmt, ...) — a missing layer of defence; no verdict, but run.t reports it. */
static inline void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hostile__vsay("warning: ", fmt, ap);
    va_end(ap);
}

/* inconclusive(fmt, ...) — a check could not be made; the program will exit 2. */
static inline void inconclusive(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void inconclusive(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hostile__vsay("inconclusive: ", fmt, ap);
    va_end(ap);
    hostile__errors++;
}

/* hostile_init(cap) — line-buffered output and a hard cap of cap seconds on this process. */
static inline void hostile_init(unsigned cap_seconds)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    alarm(cap_seconds);
}

/* hostile_finish() — the summary line and the exit status described at the top. */
static inline int hostile_finish(void)
{
    printf("summary: %d contained, %d escaped, %d inconclusive\n", hostile__contained,
           hostile__escaped, hostile__errors);
    fflush(stdout);
    if (hostile__escaped)
        return 1;
    return hostile__errors ? 2 : 0;
}

/* expect_fail(what, rc) — rc is a syscall result in this process: < 0 is contained. */
static inline void expect_fail(const char *what, long rc)
{
    if (rc < 0)
        contained("%s: %s", what, strerror(errno));
    else
        escaped("%s succeeded (returned %ld)", what, rc);
}

/* Child side of PROBE(): report and leave with 0 (refused) or 1 (succeeded). */
static inline void hostile__probe_child_exit(const char *what, long rc, int err)
{
    if (rc < 0) {
        printf("contained: %s: %s\n", what, strerror(err));
        fflush(stdout);
        _exit(0);
    }
    printf("ESCAPED: %s succeeded (returned %ld)\n", what, rc);
    fflush(stdout);
    _exit(1);
}

/* probe_fork() — fork for one probe; the child gets a 5 s cap. -1 on failure. */
static inline pid_t probe_fork(void)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0)
        alarm(5);
    return pid;
}

/*
 * probe_wait(what, pid) — collect a probe child and count its verdict: exit 0 contained,
 * exit 1 escaped, SIGSYS contained (seccomp kill), anything else inconclusive.
 * Returns 1 if the probe escaped, else 0.
 */
static inline int probe_wait(const char *what, pid_t pid)
{
    int st;
    if (pid < 0) {
        inconclusive("%s: cannot fork the probe: %s", what, strerror(errno));
        return 0;
    }
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            inconclusive("%s: waitpid: %s", what, strerror(errno));
            return 0;
        }
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        hostile__contained++;
        return 0;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 1) {
        hostile__escaped++;
        return 1;
    }
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS) {
        contained("%s: killed by SIGSYS (seccomp)", what);
        return 0;
    }
    if (WIFSIGNALED(st))
        inconclusive("%s: probe died of signal %d", what, WTERMSIG(st));
    else
        inconclusive("%s: probe exited %d", what, WEXITSTATUS(st));
    return 0;
}

/*
 * PROBE(what, expr) — evaluate the syscall expression expr in a child; a result < 0 is
 * contained, anything else escaped, a SIGSYS death contained.
 */
#define PROBE(what, expr)                                                                          \
    do {                                                                                           \
        pid_t probe_pid_ = probe_fork();                                                           \
        if (probe_pid_ == 0) {                                                                     \
            errno = 0;                                                                             \
            long probe_rc_ = (long)(expr);                                                         \
            hostile__probe_child_exit((what), probe_rc_, errno);                                   \
        }                                                                                          \
        probe_wait((what), probe_pid_);                                                            \
    } while (0)

/* now_s() — CLOCK_MONOTONIC in seconds. */
static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* read_text(path, buf, size) — read up to size-1 bytes, NUL-terminated; bytes read or -1. */
static inline ssize_t read_text(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got + 1 < size) {
        ssize_t n = read(fd, buf + got, size - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    int saved = errno;
    close(fd);
    errno = saved;
    buf[got] = '\0';
    return (ssize_t)got;
}

/* status_field(name, out, size) — the value of "name:" in /proc/self/status; 0 or -1. */
static inline int status_field(const char *name, char *out, size_t size)
{
    static char buf[8192];
    if (read_text("/proc/self/status", buf, sizeof buf) < 0)
        return -1;
    size_t len = strlen(name);
    for (char *line = buf; line && *line;
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, name, len) == 0 && line[len] == ':') {
            char *v = line + len + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            size_t n = strcspn(v, "\n");
            if (n >= size)
                n = size - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return 0;
        }
    }
    return -1;
}

/* burn_until(t) — spin on the CPU until CLOCK_MONOTONIC reaches t. */
static inline void burn_until(double t)
{
    volatile unsigned long x = 0;
    while (now_s() < t)
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
}

/* route_probe(what, dotted) — does any route lead to this IPv4 address? A UDP connect()
 * only looks the route up and sends nothing, so even a broken sandbox emits no traffic to
 * an address that is not this machine's. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
static inline void route_probe(const char *what, const char *dotted)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(9)};
    int s = socket(AF_INET, SOCK_DGRAM, 0);

    inet_pton(AF_INET, dotted, &a.sin_addr);
    if (s < 0) {
        contained("%s: socket: %s", what, strerror(errno));
        return;
    }
    if (connect(s, (struct sockaddr *)&a, sizeof a) == 0)
        escaped("%s: a route to %s exists", what, dotted);
    else
        contained("%s: %s", what, strerror(errno));
    close(s);
}

#endif
