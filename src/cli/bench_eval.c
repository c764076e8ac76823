/*
 * bench_eval.c — the throughput cases of `crucible bench` (bench.h): the bundled task set (the
 * demo's, examples/tasks.jsonl, compiled into the binary) with each task's reference, verified
 * by `crucible eval --reference -j N` (eval: its default, Python assert tests as fork-server
 * jobs; eval_cold: --no-fork-server, a fresh sandbox for every test), and the same programs run
 * as plain processes on the host, N tasks at a time (eval_unsandboxed). One sample is the wall time
 * of the whole set.
 *
 * The unsandboxed programs are what the judge runs, without the sandbox and the harness:
 *   assert   the reference followed by every test's code, as one program of the language
 *            (bench/eval-mbpp's baseline), compiled when the language compiles, run once;
 *   stdio    the reference compiled once, then run once per test with the test's stdin;
 *   command  the task's files and the reference as its solution file, the command run once.
 * Each task gets a fresh directory; output goes to /dev/null and a program counts as ok when
 * it exits 0. The set is calibrated once per run (the first open of either case): tasks whose
 * language has no toolchain here, whose reference crucible does not accept here, or which do
 * not exit 0 unsandboxed are left out of both cases, and the note says which and why.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/bench.h"
#include "image/unpack.h"
#include "judge/lang.h"

/* The demo task set, one JSON task per line (Makefile: build/gen/cli/bench_tasks.inc). */
static const char bundled_tasks[] =
#include "cli/bench_tasks.inc"
    ;

#define MAX_TASKS 64
#define MAX_ENV   512

enum harness { H_ASSERT, H_STDIO, H_COMMAND };

struct eval_task {
    json_t *task; /* the task's JSON (owned) */
    const char *id;
    const struct lang *lang;
    enum harness harness;
};

struct eval_case {
    const struct bench_env *env;
    struct eval_task tasks[MAX_TASKS];
    size_t ntasks;
    char tasks_path[PATH_MAX]; /* the set both cases run (calibrate) */
    char note_path[PATH_MAX];  /* its note */
    char out_path[PATH_MAX];
    char err_path[PATH_MAX];
    char note[1024];
    bool cold; /* eval_cold: --no-fork-server */
    /* eval_unsandboxed's run: the next task to take, failures, the first one's message */
    pthread_mutex_t lock;
    size_t next, failures;
    struct errbuf first_failure;
};

/* write_text(path, data, len) — creates or truncates path with data. 0 or -errno. */
static int write_text(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), r;

    if (fd < 0)
        return -errno;
    r = util_write_all(fd, data, len);
    if (close(fd) < 0 && r == 0)
        r = -errno;
    return r;
}

/* harness_of(name, h) — the harnesses the baseline knows. */
static bool harness_of(const char *name, enum harness *h)
{
    if (!name || strcmp(name, "assert") == 0)
        *h = H_ASSERT;
    else if (strcmp(name, "stdio") == 0)
        *h = H_STDIO;
    else if (strcmp(name, "command") == 0)
        *h = H_COMMAND;
    else
        return false;
    return true;
}

/* note_skip(c, id, why) — adds "id (why)" to the note's list of tasks left out. */
static void note_skip(struct eval_case *c, const char *id, const char *why)
{
    size_t len = strlen(c->note);

    snprintf(c->note + len, sizeof(c->note) - len, "%s%s (%s)", len ? "; " : "left out: ", id, why);
}

/* keep_task(c, t) — t (owned) kept when the baseline knows it and its toolchain is here. */
static void keep_task(struct eval_case *c, json_t *t)
{
    struct eval_task *k = &c->tasks[c->ntasks];
    const char *id = json_string_value(json_object_get(t, "id"));
    struct errbuf err = {{0}};

    k->id = id ? id : "?";
    k->lang = lang_find(json_string_value(json_object_get(t, "language")));
    if (!k->lang || !harness_of(json_string_value(json_object_get(t, "harness")), &k->harness) ||
        !json_is_string(json_object_get(t, "reference")) || c->ntasks == MAX_TASKS) {
        note_skip(c, k->id, "not a task the baseline knows how to run");
        json_decref(t);
        return;
    }
    if (!lang_available(k->lang, c->env->img, &err)) {
        note_skip(c, k->id, err.msg);
        json_decref(t);
        return;
    }
    k->task = t;
    c->ntasks++;
}

/* write_tasks(c, path) — c's tasks as JSON lines. 0 or -errno. */
static int write_tasks(const struct eval_case *c, const char *path)
{
    FILE *out = fopen(path, "we");

    if (!out)
        return -errno;
    for (size_t i = 0; i < c->ntasks; i++) {
        char *line = json_dumps(c->tasks[i].task, JSON_COMPACT);
        if (line)
            fprintf(out, "%s\n", line);
        free(line);
    }
    return fclose(out) == 0 ? 0 : -EIO;
}

/* drop_task(c, i, why) — task i left out of the set, with why in the note. */
static void drop_task(struct eval_case *c, size_t i, const char *why)
{
    note_skip(c, c->tasks[i].id, why);
    json_decref(c->tasks[i].task);
    memmove(&c->tasks[i], &c->tasks[i + 1], (c->ntasks - i - 1) * sizeof(c->tasks[0]));
    c->ntasks--;
}

/* load_tasks(c, text) — the tasks of JSON lines (the bundled set, or the set calibrate kept). */
static void load_tasks(struct eval_case *c, const char *text)
{
    while (*text) {
        size_t len = strcspn(text, "\n");
        json_error_t jerr;
        json_t *t = len ? json_loadb(text, len, 0, &jerr) : NULL;
        if (t)
            keep_task(c, t);
        text += len + (text[len] == '\n');
    }
}

static int run_crucible_eval(struct eval_case *c, const char *tasks, struct errbuf *err);
static int host_task(struct eval_case *c, const struct eval_task *t, size_t k, struct errbuf *err);

/* verdict_of(records, id, out, size) — the verdict and message of task id's record in a file
 * of `crucible eval` records, or "no record". */
static void verdict_of(const char *records, const char *id, char *out, size_t size)
{
    FILE *f = fopen(records, "re");
    char *line = NULL;
    size_t cap = 0;

    snprintf(out, size, "no record");
    while (f && getline(&line, &cap, f) > 0) {
        json_t *r = json_loads(line, 0, NULL);
        const char *tid = json_string_value(json_object_get(r, "task_id"));
        const char *msg = json_string_value(json_object_get(r, "message"));
        if (tid && strcmp(tid, id) == 0)
            snprintf(out, size, "%s%s%.120s",
                     json_string_value(json_object_get(r, "verdict")) ?: "?",
                     msg && *msg ? ": " : "", msg ? msg : "");
        json_decref(r);
    }
    free(line);
    if (f)
        fclose(f);
}

/* calibrate(c, err) — runs the candidate tasks once each way, untimed, and keeps those both
 * runners run as they must here: crucible accepts the reference, and it exits 0 unsandboxed
 * (an unprivileged crucible's rlimit fallbacks, say, may not run a JVM). Those left out are in
 * the note. Writes the set to tasks_path and the note beside it. 0 or -errno. */
static int calibrate(struct eval_case *c, struct errbuf *err)
{
    char candidates[PATH_MAX + 32], why[512];
    int r;

    snprintf(candidates, sizeof(candidates), "%s/eval-candidates.jsonl", c->env->scratch);
    if ((r = write_tasks(c, candidates)) < 0)
        return errbuf_set(err, "cannot write '%s': %s", candidates, strerror(-r)), r;
    if ((r = run_crucible_eval(c, candidates, err)) != 0)
        return r < 0 ? r : -EIO;
    for (size_t i = c->ntasks; i-- > 0;) {
        struct errbuf herr = {{0}};
        verdict_of(c->out_path, c->tasks[i].id, why, sizeof(why) - 16);
        if (strncmp(why, "accepted", 8) != 0) {
            char what[600];
            snprintf(what, sizeof(what), "crucible here: %s", why);
            drop_task(c, i, what);
        } else if (host_task(c, &c->tasks[i], i, &herr) < 0) {
            snprintf(why, sizeof(why), "unsandboxed: %s", herr.msg);
            drop_task(c, i, why);
        }
    }
    if (c->ntasks == 0)
        return errbuf_set(err, "no task of the bundled set runs here: %s", c->note), -ENOENT;
    if ((r = write_tasks(c, c->tasks_path)) < 0 ||
        (r = write_text(c->note_path, c->note, strlen(c->note))) < 0)
        return errbuf_set(err, "cannot write in '%s': %s", c->env->scratch, strerror(-r)), r;
    return 0;
}

/* task_set(c, err) — the set both eval cases run: made by calibrate at the first open of
 * either case, read back (tasks_path, note_path) at the others. 0 or -errno. */
static int task_set(struct eval_case *c, struct errbuf *err)
{
    char *text = NULL;
    size_t len;
    int fd = open(c->tasks_path, O_RDONLY | O_CLOEXEC), r;

    if (fd < 0) {
        load_tasks(c, bundled_tasks);
        if (c->ntasks == 0)
            return errbuf_set(err, "no task of the bundled set can run here: %s", c->note), -ENOENT;
        return calibrate(c, err);
    }
    r = util_read_fd(fd, &text, &len, 1 << 24);
    close(fd);
    if (r < 0)
        return errbuf_set(err, "cannot read '%s': %s", c->tasks_path, strerror(-r)), r;
    load_tasks(c, text);
    free(text);
    util_read_small(c->note_path, c->note, sizeof(c->note));
    return c->ntasks ? 0 : (errbuf_set(err, "the calibrated task set is empty"), -ENOENT);
}

static int eval_open(const struct bench_env *env, void **state, struct errbuf *err)
{
    struct eval_case *c = calloc(1, sizeof(*c));
    int r;

    if (!c)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    c->env = env;
    pthread_mutex_init(&c->lock, NULL);
    snprintf(c->tasks_path, sizeof(c->tasks_path), "%s/eval-tasks.jsonl", env->scratch);
    snprintf(c->out_path, sizeof(c->out_path), "%s/eval-results.jsonl", env->scratch);
    snprintf(c->err_path, sizeof(c->err_path), "%s/eval.err", env->scratch);
    snprintf(c->note_path, sizeof(c->note_path), "%s/eval-note.txt", env->scratch);
    if ((r = task_set(c, err)) < 0) {
        for (size_t i = 0; i < c->ntasks; i++)
            json_decref(c->tasks[i].task);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return r;
    }
    *state = c;
    return 0;
}

static void eval_close(void *state)
{
    struct eval_case *c = state;

    for (size_t i = 0; i < c->ntasks; i++)
        json_decref(c->tasks[i].task);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static const char *eval_note(void *state)
{
    struct eval_case *c = state;

    return c->note;
}

/* ---- eval_unsandboxed ---------------------------------------------------------------------- */

/* One task's run on the host: its directory and the environment its steps get. */
struct host_run {
    const struct eval_task *t;
    char dir[PATH_MAX];
    char *env[MAX_ENV + 1]; /* ours, then the language's "K=V" */
    struct errbuf err;
};

/* The sandbox's PATH (sandbox_init.c), for the programs the baseline runs by name. */
#define SANDBOX_PATH "/usr/local/bin:/usr/bin:/bin"

/* The environment of a program on the host: the sandbox's fixed one (sandbox_init.c) where it
 * makes sense outside one, so that both runners start the same programs the same way. */
static const char *const host_env[] = {
    "PATH=" SANDBOX_PATH,
    "HOME=/tmp",
    "LANG=C.UTF-8",
    "LC_ALL=C.UTF-8",
    "TZ=UTC",
    "TMPDIR=/tmp",
    "PYTHONHASHSEED=0",
    "PYTHONDONTWRITEBYTECODE=1",
    NULL,
};

/* host_step(h, argv, stdin_path) — one step in h->dir; 0, or -1 with h->err set. A program
 * named without a '/' is looked for in the sandbox's PATH, not ours: the same program. */
static int host_step(struct host_run *h, char *const *argv, const char *stdin_path)
{
    char prog[PATH_MAX], *args[64];
    size_t n = 0;
    int status, r;

    if (!strchr(argv[0], '/')) {
        if (!bench_which(argv[0], SANDBOX_PATH, prog, sizeof(prog)))
            return errbuf_set(&h->err, "%s: no '%s' in %s", h->t->id, argv[0], SANDBOX_PATH), -1;
        args[n++] = prog;
        while (argv[n] && n < 63) {
            args[n] = argv[n];
            n++;
        }
        args[n] = NULL;
        argv = args;
    }
    r = bench_spawn_wait(argv, h->dir, stdin_path, h->env, NULL, &status);

    if (r < 0)
        return errbuf_set(&h->err, "%s: cannot start '%s': %s", h->t->id, argv[0], strerror(-r)),
               -1;
    if (!bench_exited_ok(status)) {
        bench_describe_status(status, &h->err);
        char why[sizeof(h->err.msg)];
        snprintf(why, sizeof(why), "%s", h->err.msg);
        return errbuf_set(&h->err, "%s: '%s' %s", h->t->id, argv[0], why), -1;
    }
    return 0;
}

/* host_file(h, name, data, len) — writes dir/name, making its parent directories. */
static int host_file(struct host_run *h, const char *name, const char *data, size_t len)
{
    char path[PATH_MAX];
    int r;

    if (snprintf(path, sizeof(path), "%s/%s", h->dir, name) >= (int)sizeof(path) ||
        strstr(name, "..") || name[0] == '/')
        return errbuf_set(&h->err, "%s: bad file name '%s'", h->t->id, name), -1;
    for (char *s = path + strlen(h->dir) + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    if ((r = write_text(path, data, len)) < 0)
        return errbuf_set(&h->err, "cannot write '%s': %s", path, strerror(-r)), -1;
    return 0;
}

/* program_text(t) — the program a task's reference makes (see the top of the file); malloc'd. */
static char *program_text(const struct eval_task *t)
{
    const char *ref = json_string_value(json_object_get(t->task, "reference"));
    size_t len = strlen(ref) + 2, n = 0, i;
    json_t *test;
    char *text;

    if (t->harness == H_ASSERT)
        json_array_foreach(json_object_get(t->task, "tests"), i, test) len +=
            strlen(json_string_value(json_object_get(test, "code")) ?: "") + 1;
    if (!(text = malloc(len)))
        return NULL;
    n += (size_t)sprintf(text, "%s\n", ref);
    if (t->harness == H_ASSERT)
        json_array_foreach(json_object_get(t->task, "tests"), i, test) n += (size_t)sprintf(
            text + n, "%s\n", json_string_value(json_object_get(test, "code")) ?: "");
    return text;
}

/* run_program(h) — an assert or stdio task: its program, compiled, run (per test for stdio). */
static int run_program(struct host_run *h)
{
    const struct eval_task *t = h->t;
    char *text = program_text(t), stdin_path[PATH_MAX + 16];
    struct lang_plan plan = {0};
    json_t *test;
    size_t i;
    int r = -1;

    if (!text || lang_plan_program(t->lang, false, text, strlen(text), &plan) < 0) {
        errbuf_set(&h->err, "out of memory");
        goto out_free;
    }
    if (host_file(h, plan.source, text, strlen(text)) < 0 ||
        (plan.compile && host_step(h, (char *const *)plan.compile, NULL) < 0))
        goto out_plan;
    if (t->harness == H_ASSERT) {
        r = host_step(h, (char *const *)plan.run, NULL);
        goto out_plan;
    }
    snprintf(stdin_path, sizeof(stdin_path), "%s/.stdin", h->dir);
    json_array_foreach(json_object_get(t->task, "tests"), i, test)
    {
        const char *in = json_string_value(json_object_get(test, "stdin")) ?: "";
        if (host_file(h, ".stdin", in, strlen(in)) < 0 ||
            host_step(h, (char *const *)plan.run, stdin_path) < 0)
            goto out_plan;
    }
    r = 0;
out_plan:
    lang_plan_release(&plan);
out_free:
    free(text);
    return r;
}

/* run_command(h) — a command task: its files, the reference as the solution file, the command. */
static int run_command(struct host_run *h)
{
    json_t *task = h->t->task, *files = json_object_get(task, "files"), *cmd, *v;
    const char *name, *ref = json_string_value(json_object_get(task, "reference"));
    const char *sol = json_string_value(json_object_get(task, "solution_file"));
    char *argv[64];
    size_t i;

    json_object_foreach(files, name, v)
    {
        const char *data = json_string_value(v) ?: "";
        if (host_file(h, name, data, strlen(data)) < 0)
            return -1;
    }
    if (!sol)
        return errbuf_set(&h->err, "%s: no solution_file", h->t->id), -1;
    if (host_file(h, sol, ref, strlen(ref)) < 0)
        return -1;
    cmd = json_object_get(task, "command");
    if (json_array_size(cmd) == 0 || json_array_size(cmd) >= 64)
        return errbuf_set(&h->err, "%s: no command this baseline can run", h->t->id), -1;
    json_array_foreach(cmd, i, v) argv[i] = (char *)(json_string_value(v) ?: "");
    argv[json_array_size(cmd)] = NULL;
    return host_step(h, argv, NULL);
}

/* host_task(c, t, err) — one task in a fresh directory, removed after. 0 or -1 with err. */
static int host_task(struct eval_case *c, const struct eval_task *t, size_t k, struct errbuf *err)
{
    struct host_run *h = calloc(1, sizeof(*h));
    size_t n = 0;
    int r;

    if (!h)
        return errbuf_set(err, "out of memory"), -1;
    h->t = t;
    for (const char *const *e = host_env; *e; e++)
        h->env[n++] = (char *)*e;
    for (const char *const *e = t->lang->env; e && *e && n < MAX_ENV; e++)
        h->env[n++] = (char *)*e;
    snprintf(h->dir, sizeof(h->dir), "%s/host-%zu", c->env->scratch, k);
    unpack_remove_tree(AT_FDCWD, h->dir);
    if (mkdir(h->dir, 0700) < 0) {
        errbuf_set(&h->err, "cannot make '%s': %s", h->dir, strerror(errno));
        r = -1;
    } else {
        r = t->harness == H_COMMAND ? run_command(h) : run_program(h);
    }
    unpack_remove_tree(AT_FDCWD, h->dir);
    if (r < 0)
        errbuf_set(err, "%s", h->err.msg);
    free(h);
    return r;
}

/* host_worker(c) — takes tasks until none is left (one of -j threads). */
static void *host_worker(void *arg)
{
    struct eval_case *c = arg;

    for (;;) {
        struct errbuf err = {{0}};
        size_t k;
        pthread_mutex_lock(&c->lock);
        k = c->next++;
        pthread_mutex_unlock(&c->lock);
        if (k >= c->ntasks)
            return NULL;
        if (host_task(c, &c->tasks[k], k, &err) < 0) {
            pthread_mutex_lock(&c->lock);
            if (c->failures++ == 0)
                c->first_failure = err;
            pthread_mutex_unlock(&c->lock);
        }
    }
}

static int unsandboxed_sample(void *state, double *ms, struct errbuf *err)
{
    struct eval_case *c = state;
    unsigned nthreads = c->env->jobs < c->ntasks ? c->env->jobs : (unsigned)c->ntasks;
    pthread_t th[64];
    unsigned started = 0;
    double t0 = util_now();

    c->next = c->failures = 0;
    for (; started < nthreads && started < 64; started++)
        if (pthread_create(&th[started], NULL, host_worker, c) != 0)
            break;
    if (started == 0)
        return errbuf_set(err, "cannot start a thread"), -EAGAIN;
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    *ms = (util_now() - t0) * 1e3;
    if (c->failures)
        return errbuf_set(err, "%zu of %zu tasks failed, first: %s", c->failures, c->ntasks,
                          c->first_failure.msg),
               1;
    return 0;
}

const struct bench_case bench_case_eval_unsandboxed = {
    .name = "eval_unsandboxed",
    .what = "the bundled tasks' references run as plain processes on the host, -j at a time",
    .whole = true,
    .open = eval_open,
    .sample = unsandboxed_sample,
    .close = eval_close,
    .note = eval_note,
};

/* ---- eval: `crucible eval --reference` ------------------------------------------------------- */

/* count_accepted(path) — records of path whose verdict is accepted, or -errno. */
static long count_accepted(const char *path)
{
    FILE *f = fopen(path, "re");
    char *line = NULL;
    size_t cap = 0;
    long n = 0;

    if (!f)
        return -errno;
    while (getline(&line, &cap, f) > 0)
        n += strstr(line, "\"verdict\":\"accepted\"") != NULL;
    free(line);
    fclose(f);
    return n;
}

/* run_crucible_eval(c, tasks, err) — `crucible eval --reference` of a task file, records in
 * out_path: 0 when it exited 0, 1 when not (err says how), -errno when it could not start. */
static int run_crucible_eval(struct eval_case *c, const char *tasks, struct errbuf *err)
{
    char jobs[16];
    char *argv[] = {(char *)c->env->self,
                    "eval",
                    "--tasks",
                    (char *)tasks,
                    "--reference",
                    "-j",
                    jobs,
                    "--quiet",
                    "--out",
                    c->out_path,
                    c->cold ? "--no-fork-server" : NULL,
                    NULL};
    int status, r;

    snprintf(jobs, sizeof(jobs), "%u", c->env->jobs);
    r = bench_spawn_wait(argv, NULL, NULL, NULL, c->err_path, &status);
    if (r < 0)
        return errbuf_set(err, "cannot start 'crucible eval': %s", strerror(-r)), r;
    if (!bench_exited_ok(status)) {
        bench_describe_status(status, err);
        char why[sizeof(err->msg)];
        snprintf(why, sizeof(why), "%s", err->msg);
        char msg[512] = "";
        util_read_small(c->err_path, msg, sizeof(msg));
        msg[strcspn(msg, "\n")] = '\0';
        return errbuf_set(err, "'crucible eval' %s: %s", why, msg), 1;
    }
    return 0;
}

static int eval_sample(void *state, double *ms, struct errbuf *err)
{
    struct eval_case *c = state;
    double t0 = util_now();
    long accepted;
    int r = run_crucible_eval(c, c->tasks_path, err);

    *ms = (util_now() - t0) * 1e3;
    if (r != 0)
        return r;
    if ((accepted = count_accepted(c->out_path)) != (long)c->ntasks)
        return errbuf_set(err, "%ld of %zu references accepted", accepted, c->ntasks), 1;
    return 0;
}

static int eval_cold_open(const struct bench_env *env, void **state, struct errbuf *err)
{
    int r = eval_open(env, state, err);

    if (r == 0)
        ((struct eval_case *)*state)->cold = true;
    return r;
}

const struct bench_case bench_case_eval_cold = {
    .name = "eval_cold",
    .what = "eval with --no-fork-server: every test in a fresh sandbox",
    .whole = true,
    .ratio = "eval_unsandboxed",
    .open = eval_cold_open,
    .sample = eval_sample,
    .close = eval_close,
    .note = eval_note,
};

const struct bench_case bench_case_eval = {
    .name = "eval",
    .what = "`crucible eval --reference -j N` of the bundled tasks (Python assert tests as "
            "fork-server jobs, the rest in a fresh sandbox each)",
    .whole = true,
    .ratio = "eval_unsandboxed",
    .open = eval_open,
    .sample = eval_sample,
    .close = eval_close,
    .note = eval_note,
};
