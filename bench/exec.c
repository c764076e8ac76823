/*
 * exec: the latency of one exec in a live sandbox, the way a session runs it.
 *
 *   exec [-n N] [-w WARMUP] [-i IMAGE] [-m MB] [-k KINDS] [-- PROGRAM [ARGS...]]
 *                                                                  (default: /bin/true)
 *
 * Makes one sandbox (default limits) and then, round by round so that drift on a shared
 * machine hits them alike, times (CLOCK_MONOTONIC, call to return):
 *   keep   sandbox_exec(SANDBOX_EXEC_KEEP): the payload under a keeper in a pid namespace of
 *          its own (a session's exec)
 *   plain  sandbox_exec(0): the payload a child of the sandbox's init (a pool's or a stdio
 *          harness's exec)
 *   first  the one exec of a new sandbox (SANDBOX_EXEC_LAST), as a pool's sandbox is used: its
 *          process made ahead (sandbox_prestart), then FIRST_SETTLE_MS for its creation to
 *          settle before the exec is timed, and as long again after its destruction, so that
 *          neither runs beside any kind's sample
 *   fork   fork + execve + waitpid on the host, stdio on /dev/null: the "bare
 *          fork+exec+wait", the floor the ratios are to
 *   spawn  posix_spawn + waitpid, as bench/spawn measures it (glibc's posix_spawn shares
 *          the caller's memory until the exec, as init's start of a plain payload does, so it
 *          copies no page tables and the ballast of -m does not weigh on it)
 * -k keeps only the kinds named in the comma-separated KINDS (say -k plain, to profile one
 * path alone with perf or strace; the ratios need fork among them). WARMUP untimed rounds first.
 * Prints, per kind, median, p10, p90 and mean in ms, and the ratio of each median to fork's. Every
 * run must succeed (exit status 0): any other outcome is reported and the exit status is 1. With
 * -m, the supervisor first fills MB MiB of heap of its own, as a server's memory would be: init is
 * a copy of the supervisor's memory, and a keeper a fork of init, so that is what a keeper's fork
 * copies the page tables of. Needs what the sandbox needs (root or user namespaces).
 */
#include <fcntl.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

enum { KEEP, PLAIN, FIRST, FORK, SPAWN, KINDS };
static const char *const kind_name[KINDS] = {"keep", "plain", "first", "fork", "spawn"};

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* kinds_parse(list, want) — want[k] true for each kind named in the comma-separated list,
 * false for the others; -1 on an unknown name or an empty list. */
static int kinds_parse(const char *list, bool *want)
{
    char buf[64], *save = NULL;
    int any = 0;

    snprintf(buf, sizeof(buf), "%s", list);
    for (int k = 0; k < KINDS; k++)
        want[k] = false;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < KINDS && strcmp(tok, kind_name[k]) != 0)
            k++;
        if (k == KINDS)
            return -1;
        want[k] = true;
        any = 1;
    }
    return any ? 0 : -1;
}

/* bare_fork(argv, devnull) — fork, execve, waitpid; 0 when it exited 0. */
static int bare_fork(char *const *argv, int devnull)
{
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
        dup2(devnull, 2);
        execv(argv[0], argv);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* bare_spawn(argv, fa) — posix_spawn, waitpid; 0 when it exited 0. */
static int bare_spawn(char *const *argv, const posix_spawn_file_actions_t *fa)
{
    extern char **environ;
    int status;
    pid_t pid;

    if (posix_spawn(&pid, argv[0], fa, NULL, argv, environ) != 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* first_ready(rt, img, lim) — a new sandbox, left FIRST_SETTLE_MS to settle (its init's process
 * made ahead, the creation's deferred work) before its first exec is timed; NULL after saying
 * why. */
#define FIRST_SETTLE_MS 5
static struct sandbox *first_ready(struct sandbox_runtime *rt, const struct image *img,
                                   const struct sandbox_limits *lim)
{
    const struct timespec settle = {0, FIRST_SETTLE_MS * 1000 * 1000};
    struct errbuf err = {{0}};
    struct sandbox *sb = sandbox_create(rt, img, lim, &err);

    if (!sb) {
        fprintf(stderr, "exec: %s\n", err.msg);
        return NULL;
    }
    (void)sandbox_prestart(sb); /* as a pool's sandbox: its exec's process made ahead */
    nanosleep(&settle, NULL);
    return sb;
}

/* first_done(sb) — destroys a sandbox of the first kind, then lets its teardown settle as
 * first_ready does, so that the next kind's sample does not run beside it. */
static void first_done(struct sandbox *sb)
{
    const struct timespec settle = {0, FIRST_SETTLE_MS * 1000 * 1000};

    sandbox_destroy(sb, NULL);
    nanosleep(&settle, NULL);
}

/* in_sandbox(sb, argv, flags) — one exec; 0 when its verdict is ok. */
static int in_sandbox(struct sandbox *sb, char *const *argv, unsigned flags)
{
    struct sandbox_proc p = {.argv = argv, .stdin_fd = -1};
    struct result res;
    int r;

    result_init(&res);
    sandbox_exec(sb, &p, flags, &res);
    r = res.status == RESULT_OK ? 0 : -1;
    if (r < 0)
        fprintf(stderr, "exec: %s: %s\n", result_status_name(res.status), res.message);
    result_release(&res);
    return r;
}

int main(int argc, char **argv)
{
    static char *def_argv[] = {"/bin/true", NULL};
    char *const *prog = def_argv;
    const char *image = "host";
    struct sandbox_runtime rt;
    struct sandbox_limits lim;
    struct errbuf err = {{0}};
    struct sandbox *sb;
    struct image img;
    long n = 200, warm = 20, ballast_mb = 0;
    bool want[KINDS] = {true, true, true, true, true};
    char *ballast = NULL;
    double *t[KINDS];
    posix_spawn_file_actions_t fa;
    int opt, failures = 0, devnull;

    while ((opt = getopt(argc, argv, "n:w:i:m:k:")) != -1) {
        if (opt == 'n')
            n = strtol(optarg, NULL, 10);
        else if (opt == 'w')
            warm = strtol(optarg, NULL, 10);
        else if (opt == 'i')
            image = optarg;
        else if (opt == 'm')
            ballast_mb = strtol(optarg, NULL, 10);
        else if (opt == 'k' && kinds_parse(optarg, want) < 0)
            return fprintf(stderr, "exec: -k takes a list of keep, plain, first, fork, spawn\n"), 2;
        else if (opt != 'k')
            return fprintf(stderr, "usage: exec [-n N] [-w WARMUP] [-i IMAGE] [-m MB] [-k KINDS] "
                                   "[-- PROGRAM...]\n"),
                   2;
    }
    if (optind < argc)
        prog = argv + optind;
    if (n < 1 || warm < 0 || ballast_mb < 0)
        return fprintf(stderr, "exec: bad count\n"), 2;
    if (ballast_mb > 0) {
        ballast = malloc((size_t)ballast_mb << 20);
        if (!ballast)
            return fprintf(stderr, "exec: cannot allocate %ld MiB\n", ballast_mb), 2;
        memset(ballast, 1, (size_t)ballast_mb << 20);
    }
    posix_spawn_file_actions_init(&fa);
    for (int fd = 0; fd < 3; fd++)
        posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", O_RDWR, 0);
    devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0 || sandbox_runtime_init(&rt, &err) < 0 || image_resolve(image, &img, &err) < 0)
        return fprintf(stderr, "exec: %s\n", err.msg), 2;
    rt.trace = getenv("CRUCIBLE_TRACE") != NULL; /* each exec's phases on stderr */
    sandbox_limits_default(&lim);
    sb = sandbox_create(&rt, &img, &lim, &err);
    if (!sb)
        return fprintf(stderr, "exec: %s\n", err.msg), 2;
    for (int k = 0; k < KINDS; k++)
        t[k] = calloc((size_t)n, sizeof(double));
    for (long i = -warm; i < n; i++) {
        for (int k = 0; k < KINDS; k++) {
            if (!want[k])
                continue;
            struct sandbox *fresh = NULL;
            if (k == FIRST && !(fresh = first_ready(&rt, &img, &lim)))
                return 2;
            double t0 = now_ms();
            int r = k == FORK    ? bare_fork(prog, devnull)
                    : k == SPAWN ? bare_spawn(prog, &fa)
                    : k == FIRST ? in_sandbox(fresh, prog, SANDBOX_EXEC_LAST)
                                 : in_sandbox(sb, prog, k == KEEP ? SANDBOX_EXEC_KEEP : 0);
            double dt = now_ms() - t0;
            if (fresh)
                first_done(fresh);
            if (i >= 0) {
                t[k][i] = dt;
                failures += r < 0;
            }
        }
    }
    sandbox_destroy(sb, NULL);
    for (int k = 0; k < KINDS; k++)
        qsort(t[k], (size_t)n, sizeof(double), cmp_double);
    for (int k = 0; k < KINDS; k++) {
        double sum = 0;
        if (!want[k])
            continue;
        for (long i = 0; i < n; i++)
            sum += t[k][i];
        printf("%-5s median_ms=%.3f p10_ms=%.3f p90_ms=%.3f mean_ms=%.3f x_fork=%.2f n=%ld\n",
               kind_name[k], t[k][n / 2], t[k][n / 10], t[k][n * 9 / 10], sum / (double)n,
               want[FORK] ? t[k][n / 2] / t[FORK][n / 2] : 0.0, n);
    }
    if (failures)
        printf("failures=%d\n", failures);
    free(ballast);
    return failures ? 1 : 0;
}
