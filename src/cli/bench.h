/*
 * bench.h — the cases of `crucible bench` (cmd_bench.c drives them): each one a way to run a
 * piece of work whose wall time is one sample. The driver opens a case at the start of its
 * turn in a round, takes its samples and closes it, so that what a case keeps running (a warm
 * pool, a server) exists only during its own turn and does not weigh on the others.
 *
 * Cases, in the order they are reported:
 *   bare              fork + execve + waitpid of /bin/true in this process (bench_spawn.c)
 *   cold              a sandbox created, /bin/true run, destroyed, through the sandbox API
 *   cli               `crucible run -- /bin/true` as a whole process, spawn to reap
 *   warm              a ready sandbox of a pool taken (its first exec's process made ahead,
 *                     as `crucible serve`'s run pool does), /bin/true run to its verdict
 *   bwrap             bubblewrap with the same namespaces running /bin/true, spawn to reap
 *   python_bare       fork + execve + waitpid of python3 -c pass (bench_python.c)
 *   python_cold       python3 -c pass in a cold sandbox, through the sandbox API
 *   forkserver        python3 -c pass as a job of a Python fork server (forkserver.h)
 *   http              POST /v1/run of /bin/true to a `crucible serve` on loopback (bench_http.c)
 *   run_code          POST /run_code of a small Python program: a job of the server's Python
 *                     fork server
 *   run_code_warm     the same with "fork_server": false (python3 started in a warm sandbox)
 *   eval_unsandboxed  the bundled task set's references run as plain processes (bench_eval.c)
 *   eval              `crucible eval --reference` of the same task set
 */
#ifndef CRUCIBLE_BENCH_H
#define CRUCIBLE_BENCH_H

#include <stdbool.h>

#include "sandbox/image.h"
#include "sandbox/sandbox.h"
#include "util.h"

/* What every case may use; owned by the driver, alive for the whole run. */
struct bench_env {
    const struct sandbox_runtime *rt;
    const struct image *img; /* the host image */
    const char *self;        /* absolute path of this crucible binary */
    const char *scratch;     /* a private directory, removed by the driver at the end */
    unsigned jobs;           /* parallelism of the eval cases */
    int stop_fd;             /* readable once the run must stop (a signalfd; also the runtime's
                              * cancel_fd): cases that wait long look at it */
};

struct bench_case {
    const char *name;
    const char *what;  /* one line for people */
    bool whole;        /* one sample per round (a whole task set), not -n of them */
    bool optional;     /* when it cannot run here it is skipped with the reason, not an error */
    const char *ratio; /* the case whose median this one's is compared with, or NULL */
    /* open(env, &state, err) — ready to take samples; 0 or -errno with err set. */
    int (*open)(const struct bench_env *env, void **state, struct errbuf *err);
    /* sample(state, &ms, err) — one timed run: 0 with *ms; 1 when the work ran but did not
     * end as it must (err says how; *ms is not a sample); -errno when it cannot run. */
    int (*sample)(void *state, double *ms, struct errbuf *err);
    /* close(state) — stops and frees what open made. */
    void (*close)(void *state);
    /* note(state) — a line about what was measured (tasks left out), "" or NULL for none;
     * valid until close. May be NULL. */
    const char *(*note)(void *state);
};

extern const struct bench_case bench_case_bare, bench_case_cold, bench_case_cli,
    bench_case_cli_kept, bench_case_warm, bench_case_bwrap,
    bench_case_bare_paused; /* bench_spawn.c */

/* The untimed pause before each sample of the HTTP cases (bench_http.c: the pool refills), and
 * before each of bare_paused, which is bare under the same conditions: on an idle machine the
 * CPUs sleep, and waking them is part of every first step after the pause. */
#define BENCH_HTTP_PAUSE_MS 20
extern const struct bench_case bench_case_python_bare, bench_case_python_cold,
    bench_case_forkserver; /* bench_python.c */
extern const struct bench_case bench_case_http, bench_case_run_code,
    bench_case_run_code_warm; /* bench_http.c */
extern const struct bench_case bench_case_eval_unsandboxed, bench_case_eval,
    bench_case_eval_cold; /* bench_eval.c */

/* bench_spawn(argv, cwd, stdin_path, env, err_path, pid) — starts argv (a path, or a name
 * searched in our PATH) as a child with stdin from stdin_path (NULL: /dev/null), stdout on
 * /dev/null and stderr into err_path (NULL: /dev/null), in directory cwd (NULL: ours), with
 * environment env (NULL: ours) and no signal blocked. 0 with *pid (the caller reaps it), or
 * -errno. Thread-safe (posix_spawn). */
int bench_spawn(char *const *argv, const char *cwd, const char *stdin_path, char *const *env,
                const char *err_path, pid_t *pid);

/* bench_spawn_wait(argv, cwd, stdin_path, env, err_path, status) — bench_spawn, then waits for
 * the child: 0 with its wait status, or -errno when it could not be started. */
int bench_spawn_wait(char *const *argv, const char *cwd, const char *stdin_path, char *const *env,
                     const char *err_path, int *status);

/* bench_which(name, path, out, size) — the first executable regular file NAME in the
 * directories of path (a $PATH value; NULL or "": /usr/bin:/bin), into out. */
bool bench_which(const char *name, const char *path, char *out, size_t size);

/* bench_bare_open(state, argv, env, err), bench_bare_sample, bench_bare_close — a case's
 * functions for fork + execve (argv[0] a path; env NULL: ours) + waitpid in this process, stdio
 * on /dev/null, no sandbox: `bare`'s, and `python_bare`'s with its own argv. */
int bench_bare_open(void **state, char *const *argv, char *const *env, struct errbuf *err);
int bench_bare_sample(void *state, double *ms, struct errbuf *err);
void bench_bare_close(void *state);

/* bench_verdict(res, err) — a sample's outcome from a run's record, which it releases: 0 for
 * an ok run, 1 with err saying how it ended otherwise. */
int bench_verdict(struct result *res, struct errbuf *err);

/* bench_cold_run(env, limits, argv, ms, err) — one sandbox_run of argv in env's image (a sandbox
 * created, the run, the sandbox destroyed), timed into *ms; bench_verdict's answer. */
int bench_cold_run(const struct bench_env *env, const struct sandbox_limits *limits,
                   char *const *argv, double *ms, struct errbuf *err);

/* bench_exited_ok(status) — the wait status of a process that exited 0. */
bool bench_exited_ok(int status);

/* bench_describe_status(status, err) — "exited with status N" or "killed by signal N" in err;
 * returns 1 (a sample's "did not end as it must"). */
int bench_describe_status(int status, struct errbuf *err);

#endif
