/*
 * bench/pid1cost — what a fork server job's pid 1 costs as a copy of the zygote, against a
 * small pid 1 made by an exec.
 *
 * Today a job's pid 1 is a fork of the zygote: the kernel copies the page tables of the
 * zygote's written memory at the fork and tears them down at pid 1's exit, although pid 1 only
 * forks pid 2 and then reaps. The alternative is a child that shares the zygote's memory until
 * it execs a small static init (clone with CLONE_VM | CLONE_VFORK, as vfork does): no copy, and
 * an exit with almost nothing to tear down. This program times both shapes side by side:
 *
 *   fork      fork, the child _exit's at once, waitpid — with MIB mebibytes of written
 *             anonymous memory in four regions (the zygote's shape: heap and arenas)
 *   exec:P    clone(CLONE_VM | CLONE_VFORK) on a small stack, the child execs P (which should
 *             exit at once), waitpid
 *
 * Usage: pid1cost [-m MIB] [-n SAMPLES] [-r ROUNDS] [PROGRAM...]
 * Prints each case's median and 10th percentile in ms, the cases alternating round by round.
 * A static program to exec: `int main(void){return 0;}` built with `musl-gcc -static` (musl's
 * start-up is a few system calls) or `gcc -static` (glibc's is not), see docs/BENCHMARKS.md.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PROGS 8

static char child_stack[64 << 10] __attribute__((aligned(16)));

static double now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* exec_child(prog) — the CLONE_VM child: execs prog, or exits 127. */
static int exec_child(void *prog)
{
    char *argv[] = {prog, NULL}, *envp[] = {NULL};

    execve(prog, argv, envp);
    _exit(127);
}

/* one_sample(prog) — ms for one child of the given shape (prog NULL: a plain fork), or -1. */
static double one_sample(const char *prog)
{
    double t0 = now_ms();
    int status;
    pid_t pid;

    if (!prog) {
        pid = fork();
        if (pid == 0)
            _exit(0);
    } else {
        pid = clone(exec_child, child_stack + sizeof(child_stack), CLONE_VM | CLONE_VFORK | SIGCHLD,
                    (void *)prog);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return -1;
    return now_ms() - t0;
}

int main(int argc, char **argv)
{
    const char *progs[MAX_PROGS + 1] = {NULL};
    long mib = 8, samples = 300, rounds = 3;
    int nprogs = 1, opt;

    while ((opt = getopt(argc, argv, "m:n:r:")) != -1) {
        char *end;
        long v = strtol(optarg, &end, 10);
        if (*end || v <= 0 || v > 100000) {
            fprintf(stderr, "pid1cost: -%c wants a positive number, not '%s'\n", opt, optarg);
            return 2;
        }
        if (opt == 'm')
            mib = v;
        else if (opt == 'n')
            samples = v;
        else if (opt == 'r')
            rounds = v;
        else
            return 2;
    }
    for (; optind < argc && nprogs <= MAX_PROGS; optind++)
        progs[nprogs++] = argv[optind];
    if (optind < argc) {
        fprintf(stderr, "pid1cost: at most %d programs\n", MAX_PROGS);
        return 2;
    }
    for (int r = 0; r < 4; r++) {
        size_t len = (size_t)mib << 18; /* a quarter of mib MiB */
        char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            fprintf(stderr, "pid1cost: cannot map %ld MiB: %s\n", mib, strerror(errno));
            return 1;
        }
        memset(p, 1, len);
    }
    printf("pid1cost: %ld MiB written, %ld samples a case, %ld rounds\n", mib, samples, rounds);
    for (long round = 1; round <= rounds; round++) {
        for (int c = 0; c < nprogs; c++) {
            double *t = calloc((size_t)samples, sizeof(*t));
            if (!t)
                return 1;
            for (long i = 0; i < samples; i++)
                if ((t[i] = one_sample(progs[c])) < 0) {
                    fprintf(stderr, "pid1cost: %s did not exit 0\n", progs[c] ? progs[c] : "fork");
                    return 1;
                }
            qsort(t, (size_t)samples, sizeof(*t), by_value);
            printf("round %ld  %-5s %-40s median %.3f ms  p10 %.3f ms\n", round,
                   progs[c] ? "exec" : "fork", progs[c] ? progs[c] : "(the parent's copy)",
                   t[samples / 2], t[samples / 10]);
            free(t);
        }
    }
    return 0;
}
