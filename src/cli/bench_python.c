/*
 * bench_python.c — the Python cases of `crucible bench` (bench.h): `python3 -c pass` bare, in a
 * cold sandbox, and as a job of a Python fork server, so that what a fork server saves (the
 * interpreter's start-up) is measured beside what a sandbox costs.
 *
 * Every sample is one run of `/usr/bin/python3 -c pass`, timed with CLOCK_MONOTONIC from the
 * call that starts it to the moment its end is known (reaped, or its verdict final), stdio on
 * /dev/null. The bare run gets the sandbox's fixed environment's Python-relevant part (no
 * PYTHON* variable of ours, PYTHONHASHSEED=0, LANG=C.UTF-8), so that the three start the same
 * interpreter the same way.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/bench.h"
#include "sandbox/forkserver.h"

#define PYTHON "/usr/bin/python3"

static char *const python_argv[] = {PYTHON, "-c", "pass", NULL};
static char *const python_env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
                                   "PYTHONHASHSEED=0", "HOME=/tmp", NULL};

static double now_ms(void)
{
    return util_now() * 1e3;
}

/* python_present(err) — whether the host has the interpreter these cases run. */
static bool python_present(struct errbuf *err)
{
    if (access(PYTHON, X_OK) == 0)
        return true;
    errbuf_set(err, "no %s on this host", PYTHON);
    return false;
}

/* ---- python_bare: fork + execve + waitpid of python3 -c pass ----------------------------- */

static int py_bare_open(const struct bench_env *env, void **state, struct errbuf *err)
{
    (void)env;
    if (!python_present(err))
        return -ENOENT;
    return bench_bare_open(state, python_argv, python_env, err);
}

const struct bench_case bench_case_python_bare = {
    .name = "python_bare",
    .what = "fork+exec+wait of python3 -c pass in this process, no sandbox",
    .optional = true,
    .open = py_bare_open,
    .sample = bench_bare_sample,
    .close = bench_bare_close,
};

/* ---- python_cold and forkserver: through the sandbox API -------------------------------- */

struct py_sb {
    const struct bench_env *env;
    struct sandbox_limits limits;
    struct forkserver *fs; /* forkserver only */
};

static int py_sb_open(const struct bench_env *env, void **state, struct errbuf *err)
{
    struct py_sb *c;

    if (!python_present(err))
        return -ENOENT;
    c = calloc(1, sizeof(*c));
    if (!c)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    c->env = env;
    sandbox_limits_default(&c->limits);
    *state = c;
    return 0;
}

static int py_cold_sample(void *state, double *ms, struct errbuf *err)
{
    struct py_sb *c = state;

    return bench_cold_run(c->env, &c->limits, python_argv, ms, err);
}

static void py_sb_close(void *state)
{
    struct py_sb *c = state;

    forkserver_stop(c->fs);
    free(c);
}

const struct bench_case bench_case_python_cold = {
    .name = "python_cold",
    .what = "python3 -c pass in a sandbox created for it and destroyed (sandbox API)",
    .optional = true,
    .ratio = "python_bare",
    .open = py_sb_open,
    .sample = py_cold_sample,
    .close = py_sb_close,
};

/* The fork server is started (untimed) when the case's turn begins and stopped at its end, as
 * a pool is for `warm`: its zygote's start-up is paid once, not per sample. */
static int fs_open(const struct bench_env *env, void **state, struct errbuf *err)
{
    struct py_sb *c;
    int r = py_sb_open(env, state, err);

    if (r < 0)
        return r;
    c = *state;
    c->fs = forkserver_start(env->rt, env->img, NULL, 0, err);
    if (!c->fs) {
        free(c);
        return -ENOTSUP;
    }
    return 0;
}

static int fs_sample(void *state, double *ms, struct errbuf *err)
{
    struct py_sb *c = state;
    struct sandbox_proc proc = {.argv = python_argv, .stdin_fd = -1};
    struct result res;
    double t0 = now_ms();

    result_init(&res);
    forkserver_run(c->fs, &c->limits, NULL, 0, &proc, &res);
    *ms = now_ms() - t0;
    if (res.status == RESULT_OK && !res.fork_server) {
        errbuf_set(err, "the record says it did not run as a fork server's job");
        result_release(&res);
        return 1;
    }
    return bench_verdict(&res, err);
}

const struct bench_case bench_case_forkserver = {
    .name = "forkserver",
    .what = "python3 -c pass as a job of a Python fork server (forked, isolated, run, reaped)",
    .optional = true,
    .ratio = "python_bare",
    .open = fs_open,
    .sample = fs_sample,
    .close = py_sb_close,
};
