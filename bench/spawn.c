/*
 * spawn: time whole-process runs of a program.
 *
 *   spawn [-n N] [-w WARMUP] [-p PAUSE_MS] [-o FILE] -- PROGRAM [ARGS...]
 *
 * Runs PROGRAM WARMUP times untimed, then N times sequentially. Each run is
 * posix_spawnp + waitpid with stdin, stdout and stderr on /dev/null; its wall
 * time (CLOCK_MONOTONIC, spawn to reap) is one sample. With -p, each run is
 * preceded by a pause of PAUSE_MS milliseconds (work the runs leave behind,
 * such as a pool's refill, is done before the next one). Prints one line:
 *
 *   median_ms=... p10_ms=... p90_ms=... mean_ms=... n=... failures=...
 *
 * A run that exits non-zero or dies from a signal counts as a failure (its
 * time is still a sample). With -o, every sample (ms, one per line) is also
 * appended to FILE so a caller can pool samples of several invocations.
 * Exit status: 0 if every timed run succeeded, 1 if some failed, 2 on usage
 * or setup errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void usage(void)
{
    fprintf(stderr,
            "usage: spawn [-n N] [-w WARMUP] [-p PAUSE_MS] [-o FILE] -- PROGRAM [ARGS...]\n");
    exit(2);
}

static long parse_count(const char *s, long min)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > 100000000L) {
        fprintf(stderr, "spawn: bad count '%s'\n", s);
        usage();
    }
    return v;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Runs argv once; returns 0 on exit status 0, 1 on other outcomes, -1 if the
 * program could not be spawned at all. Stores the wall time in *ms. */
static int run_once(char **argv, const posix_spawn_file_actions_t *fa, double *ms)
{
    pid_t pid;
    int status;
    double t0 = now_ms();
    int err = posix_spawnp(&pid, argv[0], fa, NULL, argv, environ);
    if (err != 0) {
        fprintf(stderr, "spawn: %s: %s\n", argv[0], strerror(err));
        return -1;
    }
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            perror("spawn: waitpid");
            return -1;
        }
    }
    *ms = now_ms() - t0;
    /* posix_spawnp reports exec failure as exit status 127 on glibc. */
    return (WIFEXITED(status) && WEXITSTATUS(status) == 0) ? 0 : 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Percentile of sorted samples, linear interpolation between closest ranks. */
static double percentile(const double *v, long n, double p)
{
    double rank = p * (double)(n - 1);
    long lo = (long)rank;
    long hi = lo + 1 < n ? lo + 1 : lo;
    double frac = rank - (double)lo;
    return v[lo] + (v[hi] - v[lo]) * frac;
}

int main(int argc, char **argv)
{
    long n = 100, warmup = 5, pause_ms = 0;
    const char *raw_path = NULL;
    int opt;

    while ((opt = getopt(argc, argv, "+n:w:p:o:h")) != -1) {
        switch (opt) {
        case 'n':
            n = parse_count(optarg, 1);
            break;
        case 'w':
            warmup = parse_count(optarg, 0);
            break;
        case 'p':
            pause_ms = parse_count(optarg, 0);
            break;
        case 'o':
            raw_path = optarg;
            break;
        default:
            usage();
        }
    }
    if (optind >= argc)
        usage();
    char **prog = argv + optind;

    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0 ||
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) != 0 ||
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0) != 0 ||
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0) != 0) {
        fprintf(stderr, "spawn: cannot set up file actions\n");
        return 2;
    }

    double *samples = calloc((size_t)n, sizeof(*samples));
    if (samples == NULL) {
        perror("spawn: calloc");
        return 2;
    }

    double ms;
    for (long i = 0; i < warmup; i++) {
        if (run_once(prog, &fa, &ms) < 0)
            return 2;
    }

    long failures = 0;
    double sum = 0;
    for (long i = 0; i < n; i++) {
        if (pause_ms > 0) {
            struct timespec ts = {.tv_sec = pause_ms / 1000, .tv_nsec = pause_ms % 1000 * 1000000L};
            while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
        }
        int r = run_once(prog, &fa, &samples[i]);
        if (r < 0)
            return 2;
        failures += r;
        sum += samples[i];
    }

    if (raw_path != NULL) {
        FILE *f = fopen(raw_path, "a");
        if (f == NULL) {
            fprintf(stderr, "spawn: %s: %s\n", raw_path, strerror(errno));
            return 2;
        }
        for (long i = 0; i < n; i++)
            fprintf(f, "%.6f\n", samples[i]);
        if (fclose(f) != 0) {
            fprintf(stderr, "spawn: %s: %s\n", raw_path, strerror(errno));
            return 2;
        }
    }

    qsort(samples, (size_t)n, sizeof(*samples), cmp_double);
    printf("median_ms=%.3f p10_ms=%.3f p90_ms=%.3f mean_ms=%.3f n=%ld failures=%ld\n",
           percentile(samples, n, 0.5), percentile(samples, n, 0.1), percentile(samples, n, 0.9),
           sum / (double)n, n, failures);

    free(samples);
    posix_spawn_file_actions_destroy(&fa);
    return failures ? 1 : 0;
}
