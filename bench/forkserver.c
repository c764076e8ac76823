/*
 * forkserver: Python runs through a fork server's job, a cold sandbox and a bare fresh
 * interpreter, interleaved.
 *
 *   forkserver [-n ROUNDS] [-j THREADS]
 *
 * Two programs: `python3 -c pass`, and a HumanEval-like `python3 main.py` (a solution that
 * imports typing, then its check() with asserts). Each round runs every program on every path
 * once, in an order that rotates with the round, so that the machine's drift hits all paths
 * alike. With -j, THREADS threads each run ROUNDS rounds at once (throughput: runs per second
 * over the whole batch, per path, the paths run one after the other in batches that rotate).
 * Prints per program and path the median and p10/p90 of the wall time of a run (spawn to
 * verdict), the ratios of medians, and the load average before and after. A run that does not
 * end ok is counted and reported; its time is still a sample.
 *
 * Must be run as a program that links the sandbox: it is also the fork server's zygote.
 */
#include "sandbox/forkserver.h"
#include "sandbox/sandbox.h"

#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char humaneval[] =
    "from typing import List\n\n\n"
    "def has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
    "    for idx, elem in enumerate(numbers):\n"
    "        for idx2, elem2 in enumerate(numbers):\n"
    "            if idx != idx2:\n"
    "                distance = abs(elem - elem2)\n"
    "                if distance < threshold:\n"
    "                    return True\n"
    "    return False\n\n\n"
    "def check(candidate):\n"
    "    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True\n"
    "    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False\n"
    "    assert candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.95) == True\n"
    "    assert candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.8) == False\n"
    "    assert candidate([1.0, 2.0, 3.0, 4.0, 5.0, 2.0], 0.1) == True\n"
    "    assert candidate([1.1, 2.2, 3.1, 4.1, 5.1], 1.0) == True\n"
    "    assert candidate([1.1, 2.2, 3.1, 4.1, 5.1], 0.5) == False\n\n\n"
    "check(has_close_elements)\n";

enum path { P_BARE, P_COLD, P_FORK, P_COUNT };
static const char *const path_names[P_COUNT] = {"bare", "cold", "fork_server"};

enum prog { W_PASS, W_HUMANEVAL, W_COUNT };
static const char *const prog_names[W_COUNT] = {"python3 -c pass", "humaneval main.py"};

static struct sandbox_runtime rt;
static struct image img;
static struct forkserver *fs;
static char bare_dir[] = "/tmp/crucible-bench-fsXXXXXX";

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* run_one(w, p) — one run; its wall time in seconds, negative when it did not end ok. */
static double run_one(enum prog w, enum path p)
{
    char *pass_argv[] = {"/usr/bin/python3", "-c", "pass", NULL};
    char *he_argv[] = {"/usr/bin/python3", "main.py", NULL};
    char *const *argv = w == W_PASS ? pass_argv : he_argv;
    double t0 = now(), t;
    bool good;

    if (p == P_BARE) {
        posix_spawn_file_actions_t fa;
        pid_t pid;
        int st = -1;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addchdir_np(&fa, bare_dir);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        good = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) == 0 &&
               waitpid(pid, &st, 0) == pid && st == 0;
        posix_spawn_file_actions_destroy(&fa);
    } else {
        struct sandbox_limits lim;
        struct sandbox_proc proc = {.argv = argv, .stdin_fd = -1, .cwd = "/work"};
        struct sandbox_file f = {"main.py", -1, 0644};
        struct result res;
        sandbox_limits_default(&lim);
        if (w == W_HUMANEVAL) {
            f.fd = memfd_create("main.py", MFD_CLOEXEC);
            if (f.fd < 0 || write(f.fd, humaneval, strlen(humaneval)) < 0)
                return -1;
            lseek(f.fd, 0, SEEK_SET);
        }
        result_init(&res);
        if (p == P_COLD)
            sandbox_run(&rt, &img, &lim, &f, f.fd >= 0 ? 1 : 0, &proc, &res);
        else
            forkserver_run(fs, &lim, &f, f.fd >= 0 ? 1 : 0, &proc, &res);
        good = res.status == RESULT_OK;
        if (!good)
            fprintf(stderr, "%s %s: %s %s\n", path_names[p], prog_names[w],
                    result_status_name(res.status), res.message);
        result_release(&res);
        if (f.fd >= 0)
            close(f.fd);
    }
    t = now() - t0;
    return good ? t : -t;
}

struct worker {
    enum prog w;
    enum path p;
    int rounds, failures;
};

static void *worker_main(void *arg)
{
    struct worker *k = arg;

    for (int i = 0; i < k->rounds; i++)
        if (run_one(k->w, k->p) < 0)
            k->failures++;
    return NULL;
}

static void load(const char *when)
{
    double l[3];

    if (getloadavg(l, 3) == 3)
        printf("load average %s: %.2f %.2f %.2f\n", when, l[0], l[1], l[2]);
}

int main(int argc, char **argv)
{
    struct errbuf err = {{0}};
    int rounds = 40, threads = 1, opt, fd;
    static double t[W_COUNT][P_COUNT][10000];
    int failures[W_COUNT][P_COUNT] = {{0}};

    if (argc == 2 && strcmp(argv[1], FORKSERVER_ZYGOTE_ARG) == 0)
        return forkserver_zygote_main(argc, argv);
    while ((opt = getopt(argc, argv, "n:j:")) != -1) {
        if (opt == 'n')
            rounds = atoi(optarg);
        else if (opt == 'j')
            threads = atoi(optarg);
        else
            return 2;
    }
    if (rounds < 1 || rounds > 10000 || threads < 1 || threads > 64)
        return 2;
    if (sandbox_runtime_init(&rt, &err) < 0 || image_resolve("host", &img, &err) < 0 ||
        !(fs = forkserver_start(&rt, &img, NULL, 0, &err))) {
        fprintf(stderr, "forkserver: %s\n", err.msg);
        return 2;
    }
    if (!mkdtemp(bare_dir))
        return 2;
    {
        char path[64];
        snprintf(path, sizeof(path), "%s/main.py", bare_dir);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, humaneval, strlen(humaneval)) < 0)
            return 2;
        close(fd);
    }
    load("before");
    for (int w = 0; w < W_COUNT; w++)
        for (int p = 0; p < P_COUNT; p++)
            run_one(w, p); /* warm-up, untimed */
    if (threads == 1) {
        for (int i = 0; i < rounds; i++)
            for (int w = 0; w < W_COUNT; w++)
                for (int k = 0; k < P_COUNT; k++) {
                    int p = (k + i) % P_COUNT;
                    double s = run_one(w, p);
                    if (s < 0)
                        failures[w][p]++;
                    t[w][p][i] = s < 0 ? -s : s;
                }
        for (int w = 0; w < W_COUNT; w++) {
            double med[P_COUNT];
            printf("%s (%d rounds, interleaved):\n", prog_names[w], rounds);
            for (int p = 0; p < P_COUNT; p++) {
                qsort(t[w][p], rounds, sizeof(double), cmp_double);
                med[p] = t[w][p][rounds / 2];
                printf("  %-12s median %7.2f ms  p10 %7.2f  p90 %7.2f  failures %d\n",
                       path_names[p], med[p] * 1e3, t[w][p][rounds / 10] * 1e3,
                       t[w][p][rounds * 9 / 10] * 1e3, failures[w][p]);
            }
            printf("  ratios of medians: cold/bare %.2fx, fork_server/bare %.2fx, "
                   "cold/fork_server %.2fx\n",
                   med[P_COLD] / med[P_BARE], med[P_FORK] / med[P_BARE], med[P_COLD] / med[P_FORK]);
        }
    } else {
        /* throughput: batches of THREADS threads x ROUNDS runs, paths rotating per batch */
        for (int w = 0; w < W_COUNT; w++) {
            double rate[P_COUNT] = {0};
            int batches = 3;
            for (int b = 0; b < batches; b++)
                for (int k = 0; k < P_COUNT; k++) {
                    int p = (k + b) % P_COUNT;
                    struct worker ws[64];
                    pthread_t tid[64];
                    double t0 = now();
                    for (int i = 0; i < threads; i++) {
                        ws[i] = (struct worker){(enum prog)w, (enum path)p, rounds, 0};
                        pthread_create(&tid[i], NULL, worker_main, &ws[i]);
                    }
                    for (int i = 0; i < threads; i++) {
                        pthread_join(tid[i], NULL);
                        failures[w][p] += ws[i].failures;
                    }
                    rate[p] += (double)(threads * rounds) / (now() - t0) / batches;
                }
            printf("%s (-j %d, %d runs per thread, 3 batches per path):\n", prog_names[w], threads,
                   rounds);
            for (int p = 0; p < P_COUNT; p++)
                printf("  %-12s %7.1f runs/s  failures %d\n", path_names[p], rate[p],
                       failures[w][p]);
            printf("  fork_server/bare throughput %.2fx, fork_server/cold %.2fx\n",
                   rate[P_FORK] / rate[P_BARE], rate[P_FORK] / rate[P_COLD]);
        }
    }
    load("after");
    forkserver_stop(fs);
    {
        char path[64];
        snprintf(path, sizeof(path), "%s/main.py", bare_dir);
        unlink(path);
        rmdir(bare_dir);
    }
    return 0;
}
