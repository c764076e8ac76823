/*
 * bench_spawn.c — the spawn-latency cases of `crucible bench` (bench.h): /bin/true run bare,
 * in a cold sandbox (through the API and as `crucible run`), in a warm one, and under
 * bubblewrap; and the child-process helpers the other cases share.
 *
 * Every sample is one run of /bin/true, timed with CLOCK_MONOTONIC from the call that starts
 * it to the moment its end is known (reaped, or its verdict final), stdio on /dev/null.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/bench.h"
#include "sandbox/pool.h"

extern char **environ;

static char *const true_argv[] = {"/bin/true", NULL};

int bench_spawn(char *const *argv, const char *cwd, const char *stdin_path, char *const *env,
                const char *err_path, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none;
    int r;

    sigemptyset(&none);
    if ((r = posix_spawnattr_init(&attr)) != 0)
        return -r;
    if ((r = posix_spawn_file_actions_init(&fa)) != 0) {
        posix_spawnattr_destroy(&attr);
        return -r;
    }
    /* the driver blocks the stop signals (it reads them from a signalfd): not the child */
    r = posix_spawnattr_setsigmask(&attr, &none);
    if (!r)
        r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    if (!r)
        r = posix_spawn_file_actions_addopen(&fa, 0, stdin_path ? stdin_path : "/dev/null",
                                             O_RDONLY, 0);
    if (!r)
        r = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (!r)
        r = posix_spawn_file_actions_addopen(&fa, 2, err_path ? err_path : "/dev/null",
                                             O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (!r && cwd)
        r = posix_spawn_file_actions_addchdir_np(&fa, cwd);
    if (!r)
        r = posix_spawnp(pid, argv[0], &fa, &attr, argv, env ? env : environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    return -r;
}

int bench_spawn_wait(char *const *argv, const char *cwd, const char *stdin_path, char *const *env,
                     const char *err_path, int *status)
{
    pid_t pid;
    int r = bench_spawn(argv, cwd, stdin_path, env, err_path, &pid);

    if (r < 0)
        return r;
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return 0;
}

bool bench_exited_ok(int status)
{
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int bench_describe_status(int status, struct errbuf *err)
{
    if (WIFSIGNALED(status))
        errbuf_set(err, "killed by signal %d", WTERMSIG(status));
    else
        errbuf_set(err, "exited with status %d", WEXITSTATUS(status));
    return 1;
}

static double now_ms(void)
{
    return util_now() * 1e3;
}

/* ---- bare: fork + execve + waitpid ------------------------------------------------------- */

struct bare {
    int devnull;
    char *const *argv;
    char *const *env; /* NULL: ours */
};

int bench_bare_open(void **state, char *const *argv, char *const *env, struct errbuf *err)
{
    struct bare *b = malloc(sizeof(*b));

    if (!b)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    b->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (b->devnull < 0) {
        int e = errno;
        free(b);
        return errbuf_set(err, "cannot open '/dev/null': %s", strerror(e)), -e;
    }
    b->argv = argv;
    b->env = env;
    *state = b;
    return 0;
}

int bench_bare_sample(void *state, double *ms, struct errbuf *err)
{
    struct bare *b = state;
    double t0 = now_ms();
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        dup2(b->devnull, 0);
        dup2(b->devnull, 1);
        dup2(b->devnull, 2);
        execve(b->argv[0], b->argv, b->env ? b->env : environ);
        _exit(127);
    }
    if (pid < 0)
        return errbuf_set(err, "fork: %s", strerror(errno)), -errno;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return errbuf_set(err, "waitpid: %s", strerror(errno)), -errno;
    *ms = now_ms() - t0;
    return bench_exited_ok(status) ? 0 : bench_describe_status(status, err);
}

void bench_bare_close(void *state)
{
    struct bare *b = state;

    close(b->devnull);
    free(b);
}

static int bare_open(const struct bench_env *env, void **state, struct errbuf *err)
{
    (void)env;
    return bench_bare_open(state, true_argv, NULL, err);
}

const struct bench_case bench_case_bare = {
    .name = "bare",
    .what = "fork+exec+wait of /bin/true in this process, no sandbox",
    .open = bare_open,
    .sample = bench_bare_sample,
    .close = bench_bare_close,
};

/* ---- bare_paused: bare after the HTTP cases' pause ----------------------------------------- */

static int bare_paused_sample(void *state, double *ms, struct errbuf *err)
{
    nanosleep(&(struct timespec){0, BENCH_HTTP_PAUSE_MS * 1000 * 1000}, NULL);
    return bench_bare_sample(state, ms, err);
}

const struct bench_case bench_case_bare_paused = {
    .name = "bare_paused",
    .what = "bare after the same untimed pause as each http request (the base http is "
            "like for like with: an idle machine wakes for both)",
    .ratio = "bare",
    .open = bare_open,
    .sample = bare_paused_sample,
    .close = bench_bare_close,
};

/* ---- cold: sandbox_run (create, run, destroy) -------------------------------------------- */

struct sb_case {
    const struct bench_env *env;
    struct sandbox_limits limits;
    struct pool *pool; /* warm only */
};

static int sb_open(const struct bench_env *env, void **state, struct errbuf *err)
{
    struct sb_case *c = calloc(1, sizeof(*c));

    if (!c)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    c->env = env;
    sandbox_limits_default(&c->limits);
    *state = c;
    return 0;
}

int bench_verdict(struct result *res, struct errbuf *err)
{
    int r = 0;

    if (res->status != RESULT_OK) {
        errbuf_set(err, "%s%s%s", result_status_name(res->status), res->message[0] ? ": " : "",
                   res->message);
        r = 1;
    }
    result_release(res);
    return r;
}

int bench_cold_run(const struct bench_env *env, const struct sandbox_limits *limits,
                   char *const *argv, double *ms, struct errbuf *err)
{
    struct sandbox_proc proc = {.argv = argv, .stdin_fd = -1};
    struct result res;
    double t0 = now_ms();

    result_init(&res);
    sandbox_run(env->rt, env->img, limits, NULL, 0, &proc, &res);
    *ms = now_ms() - t0;
    return bench_verdict(&res, err);
}

static int cold_sample(void *state, double *ms, struct errbuf *err)
{
    struct sb_case *c = state;

    return bench_cold_run(c->env, &c->limits, true_argv, ms, err);
}

static void sb_close(void *state)
{
    struct sb_case *c = state;

    if (c->pool)
        pool_free(c->pool);
    free(c);
}

const struct bench_case bench_case_cold = {
    .name = "cold",
    .what = "a sandbox created, /bin/true run, sandbox destroyed (sandbox API, in-process)",
    .ratio = "bare",
    .open = sb_open,
    .sample = cold_sample,
    .close = sb_close,
};

/* ---- warm: a pool's ready sandbox, exec to verdict ---------------------------------------- */

static int warm_open(const struct bench_env *env, void **state, struct errbuf *err)
{
    struct sb_case *c;
    int r = sb_open(env, state, err);

    if (r < 0)
        return r;
    c = *state;
    c->pool = pool_new(env->rt, env->img, &c->limits, 1, true, NULL, err);
    if (!c->pool) {
        free(c);
        return -EIO;
    }
    return 0;
}

/* wait_ready(p) — waits (10 s at most) until the pool holds a ready sandbox. */
static bool wait_ready(struct pool *p)
{
    struct pool_stats st;
    struct timespec pause = {0, 200 * 1000};

    for (int i = 0; i < 50000; i++) {
        pool_stats(p, &st);
        if (st.ready > 0)
            return true;
        nanosleep(&pause, NULL);
    }
    return false;
}

static int warm_sample(void *state, double *ms, struct errbuf *err)
{
    struct sb_case *c = state;
    struct sandbox_proc proc = {.argv = true_argv, .stdin_fd = -1};
    struct result res;
    struct sandbox *sb;
    double t0;

    if (!wait_ready(c->pool))
        return errbuf_set(err, "the pool made no sandbox in 10 s"), -ETIMEDOUT;
    t0 = now_ms();
    sb = pool_take(c->pool, c->env->img, &c->limits, -1, err);
    if (!sb)
        return -EAGAIN;
    result_init(&res);
    sandbox_exec(sb, &proc, SANDBOX_EXEC_LAST, &res);
    *ms = now_ms() - t0;
    pool_discard(c->pool, sb); /* destroyed in the background, as the service does */
    return bench_verdict(&res, err);
}

const struct bench_case bench_case_warm = {
    .name = "warm",
    .what = "a ready sandbox taken from a pool, /bin/true run to its verdict (sandbox API)",
    .ratio = "bare",
    .open = warm_open,
    .sample = warm_sample,
    .close = sb_close,
};

/* ---- processes: `crucible run` and bubblewrap ---------------------------------------------- */

#define PROC_ARGS 48

struct proc_case {
    char *argv[PROC_ARGS];
    char prog[PATH_MAX];     /* the program found in PATH (bwrap) */
    char links[8][PATH_MAX]; /* targets of the host's top-level symlinks (bwrap) */
    char **env;              /* NULL: ours */
};

static int proc_sample(void *state, double *ms, struct errbuf *err)
{
    struct proc_case *p = state;
    double t0 = now_ms();
    int status, r = bench_spawn_wait(p->argv, NULL, NULL, p->env, NULL, &status);

    if (r < 0)
        return errbuf_set(err, "cannot start '%s': %s", p->argv[0], strerror(-r)), r;
    *ms = now_ms() - t0;
    return bench_exited_ok(status) ? 0 : bench_describe_status(status, err);
}

static void proc_close(void *state)
{
    free(state);
}

static int cli_open(const struct bench_env *env, void **state, struct errbuf *err)
{
    struct proc_case *p = calloc(1, sizeof(*p));
    const char *args[] = {env->self, "run", "--cold", "--", "/bin/true", NULL};

    if (!p)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    for (size_t i = 0; args[i]; i++)
        p->argv[i] = (char *)args[i];
    *state = p;
    return 0;
}

const struct bench_case bench_case_cli = {
    .name = "cli",
    .what = "`crucible run -- /bin/true` as a process, spawn to reap (a cold sandbox)",
    .ratio = "bare",
    .open = cli_open,
    .sample = proc_sample,
    .close = proc_close,
};

/* ---- cli_kept: `crucible run` through a keeper (keep.h) ------------------------------------ */

struct kept_case {
    struct proc_case p;
    char dir[64], sock[96], var[128]; /* p.env: ours, CRUCIBLE_KEEP naming the keeper */
    pid_t keeper;
};

static void kept_close(void *state)
{
    struct kept_case *k = state;
    char path[160];

    if (k->keeper > 0) {
        kill(k->keeper, SIGTERM);
        while (waitpid(k->keeper, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    unlink(k->sock);
    snprintf(path, sizeof(path), "%s/keeper.err", k->dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/run.err", k->dir);
    unlink(path);
    rmdir(k->dir);
    free(k->p.env);
    free(k);
}

/* kept_open — a keeper of this binary's on a socket of its own (2 sandboxes kept ready), and
 * one traced run that must say it was the keeper's: a run that went cold is not this case. */
static int kept_open(const struct bench_env *env, void **state, struct errbuf *err)
{
    struct kept_case *k = calloc(1, sizeof(*k));
    const char *keep_args[] = {env->self, "keep", "--socket", NULL, "--warm", "2", NULL};
    const char *run_args[] = {env->self, "run", "--", "/bin/true", NULL};
    char path[160], line[256];
    size_t n = 0, j = 0;
    struct stat st;
    int status, r;
    bool kept = false;
    FILE *f;

    if (!k)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    snprintf(k->dir, sizeof(k->dir), "/tmp/crucible-bench-keep.XXXXXX");
    if (!mkdtemp(k->dir)) {
        free(k);
        return errbuf_set(err, "mkdtemp: %s", strerror(errno)), -errno;
    }
    snprintf(k->sock, sizeof(k->sock), "%s/keep.sock", k->dir);
    snprintf(k->var, sizeof(k->var), "CRUCIBLE_KEEP=%s", k->sock);
    while (environ[n])
        n++;
    k->p.env = calloc(n + 3, sizeof(*k->p.env)); /* ours, the keeper's socket, a trace, NULL */
    if (!k->p.env) {
        kept_close(k);
        return errbuf_set(err, "out of memory"), -ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "CRUCIBLE_KEEP=", 14) != 0 &&
            strncmp(environ[i], "CRUCIBLE_TRACE=", 15) != 0)
            k->p.env[j++] = environ[i];
    k->p.env[j] = k->var;
    keep_args[3] = k->sock;
    snprintf(path, sizeof(path), "%s/keeper.err", k->dir);
    r = bench_spawn((char *const *)keep_args, NULL, NULL, k->p.env, path, &k->keeper);
    if (r < 0) {
        kept_close(k);
        return errbuf_set(err, "cannot start the keeper: %s", strerror(-r)), r;
    }
    for (int i = 0; i < 200 && !(stat(k->sock, &st) == 0 && S_ISSOCK(st.st_mode)); i++)
        usleep(50 * 1000);
    usleep(200 * 1000); /* its pool's first sandboxes */
    for (size_t i = 0; run_args[i]; i++)
        k->p.argv[i] = (char *)run_args[i];
    k->p.env[j + 1] = (char *)"CRUCIBLE_TRACE=1";
    snprintf(path, sizeof(path), "%s/run.err", k->dir);
    r = bench_spawn_wait(k->p.argv, NULL, NULL, k->p.env, path, &status);
    k->p.env[j + 1] = NULL;
    if (r == 0 && (f = fopen(path, "r"))) {
        while (fgets(line, sizeof(line), f))
            kept = kept || strstr(line, "crucible: keeper: the run was the keeper's");
        fclose(f);
    }
    if (r < 0 || !kept) {
        kept_close(k);
        return errbuf_set(err, "a run through the keeper at %s did not reach it", k->sock),
               r < 0 ? r : -EIO;
    }
    *state = k;
    return 0;
}

const struct bench_case bench_case_cli_kept = {
    .name = "cli_kept",
    .what = "`crucible run -- /bin/true` as a process, through `crucible keep` (a ready sandbox)",
    .ratio = "bare",
    .open = kept_open,
    .sample = proc_sample, /* state: a kept_case, its proc_case first */
    .close = kept_close,
};

bool bench_which(const char *name, const char *path, char *out, size_t size)
{
    char dirs[4096];

    snprintf(dirs, sizeof(dirs), "%s", path && *path ? path : "/usr/bin:/bin");
    for (char *save, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        struct stat st;
        snprintf(out, size, "%s/%s", *d ? d : ".", name);
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return true;
    }
    return false;
}

/* bwrap_open — bubblewrap with every namespace crucible uses (--unshare-all), /usr read-only,
 * the host's top-level /bin, /lib... mirrored (symlinks as symlinks on a merged-/usr host),
 * a fresh /proc, a minimal /dev and a tmpfs /tmp: bench/run's command line. */
static int bwrap_open(const struct bench_env *env, void **state, struct errbuf *err)
{
    static const char *const top[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
    struct proc_case *p = calloc(1, sizeof(*p));
    size_t n = 0, nl = 0;

    (void)env;
    if (!p)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    if (!bench_which("bwrap", getenv("PATH"), p->prog, sizeof(p->prog))) {
        free(p);
        return errbuf_set(err, "bwrap is not installed (no 'bwrap' in PATH)"), -ENOENT;
    }
    const char *head[] = {p->prog,     "--unshare-all", "--die-with-parent",
                          "--ro-bind", "/usr",          "/usr"};
    for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
        p->argv[n++] = (char *)head[i];
    for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
        struct stat st;
        ssize_t len;
        if (lstat(top[i], &st) < 0)
            continue;
        if (S_ISLNK(st.st_mode) &&
            (len = readlink(top[i], p->links[nl], sizeof(p->links[nl]) - 1)) > 0) {
            p->links[nl][len] = '\0';
            p->argv[n++] = "--symlink";
            p->argv[n++] = p->links[nl++];
        } else if (S_ISDIR(st.st_mode)) {
            p->argv[n++] = "--ro-bind";
            p->argv[n++] = (char *)top[i];
        } else {
            continue;
        }
        p->argv[n++] = (char *)top[i];
    }
    const char *tail[] = {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "/bin/true"};
    for (size_t i = 0; i < sizeof(tail) / sizeof(tail[0]); i++)
        p->argv[n++] = (char *)tail[i];
    *state = p;
    return 0;
}

const struct bench_case bench_case_bwrap = {
    .name = "bwrap",
    .what = "bubblewrap --unshare-all, /usr read-only, /proc, /dev, /tmp: /bin/true, spawn to "
            "reap",
    .optional = true,
    .ratio = "bare",
    .open = bwrap_open,
    .sample = proc_sample,
    .close = proc_close,
};
