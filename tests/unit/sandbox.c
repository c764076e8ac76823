/*
 * Unit tests for src/sandbox.c through its API, with real namespaces: one sandbox serving
 * several processes (the basis of sessions), files put in and read back, refusals of
 * unsafe destinations, stdin, extra environment, teardown of background processes; stdin and
 * stdout connected to pipes (two sandboxes talking while they run), and what is not a pipe
 * refused.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/pool.h"
#include "sandbox/sandbox.h"
#include "tap.h"

static struct sandbox_runtime rt;
static struct image img;

static int run(struct sandbox *sb, char *const *argv, int stdin_fd, char *const *env,
               unsigned flags, struct result *res)
{
    struct sandbox_proc p = {.argv = argv, .env = env, .stdin_fd = stdin_fd};
    result_init(res);
    return sandbox_exec(sb, &p, flags, res);
}

static int tmpfile_with(const char *text)
{
    char path[] = "/tmp/crucible-test-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    unlink(path);
    (void)!write(fd, text, strlen(text));
    lseek(fd, 0, SEEK_SET);
    return fd;
}

/* One side of a conversation between two sandboxes: sandbox_exec blocks, so each runs on
 * a thread of its own. */
struct side {
    struct sandbox *sb;
    char **argv;
    int in, out;
    struct result res;
    int rc;
};

static void *side_run(void *arg)
{
    struct side *s = arg;
    struct sandbox_proc p = {.argv = s->argv,
                             .stdin_fd = s->in,
                             .stdout_fd = s->out,
                             .pipes = SANDBOX_PROC_STDIN_PIPE | SANDBOX_PROC_STDOUT_PIPE};
    result_init(&s->res);
    s->rc = sandbox_exec(s->sb, &p, SANDBOX_EXEC_LAST, &s->res);
    /* the supervisor's copy of this side's output: closed once it ended, so the other side
     * sees end of file */
    close(s->out);
    return NULL;
}

static void test_pipes(const struct sandbox_limits *lim)
{
    struct errbuf err = {{0}};
    struct side a = {0}, b = {0};
    struct sandbox *sb;
    struct result res;
    pthread_t ta, tb;
    int ab[2], ba[2], in[2], out[2], rc;
    char buf[256];
    ssize_t n;

    /* a conversation: a speaks first, b answers what it heard, a reports the answer */
    char *sa[] = {"/bin/sh", "-c", "echo ping; read x; echo \"a heard $x\" >&2", NULL};
    char *sb_[] = {"/bin/sh", "-c", "read x; echo \"pong-$x\"; read y || echo eof >&2", NULL};
    a.sb = sandbox_create(&rt, &img, lim, &err);
    b.sb = sandbox_create(&rt, &img, lim, &err);
    if (!a.sb || !b.sb || pipe2(ab, O_CLOEXEC) < 0 || pipe2(ba, O_CLOEXEC) < 0) {
        ok(0, "two sandboxes and two pipes (%s)", err.msg);
        return;
    }
    a.argv = sa;
    a.in = ba[0];
    a.out = ab[1];
    b.argv = sb_;
    b.in = ab[0];
    b.out = ba[1];
    pthread_create(&ta, NULL, side_run, &a);
    pthread_create(&tb, NULL, side_run, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    ok(a.rc == 0 && b.rc == 0 && a.res.status == RESULT_OK && b.res.status == RESULT_OK,
       "two sandboxes talk through pipes (%s / %s)", a.res.message, b.res.message);
    is_str(a.res.err.data, "a heard pong-ping\n", "each read what the other wrote");
    is_str(b.res.err.data, "eof\n", "the other's end closed: end of file");
    ok(a.res.out.len == 0 && b.res.out.len == 0, "piped stdout is not captured");
    result_release(&a.res);
    result_release(&b.res);
    close(ab[0]);
    close(ba[0]);
    sandbox_destroy(a.sb, NULL);
    sandbox_destroy(b.sb, NULL);

    /* what the payload's stdin is: a pipe, and nothing else of the host */
    sb = sandbox_create(&rt, &img, lim, &err);
    if (!sb || pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) {
        ok(0, "a sandbox and two pipes (%s)", err.msg);
        return;
    }
    (void)!write(in[1], "hello\n", 6);
    close(in[1]);
    char *cat[] = {"/bin/sh", "-c", "readlink /proc/self/fd/0 /proc/self/fd/1 | cut -c1-5; cat",
                   NULL};
    struct sandbox_proc p = {.argv = cat,
                             .stdin_fd = in[0],
                             .stdout_fd = out[1],
                             .pipes = SANDBOX_PROC_STDIN_PIPE | SANDBOX_PROC_STDOUT_PIPE};
    result_init(&res);
    rc = sandbox_exec(sb, &p, 0, &res);
    close(out[1]);
    n = read(out[0], buf, sizeof(buf) - 1);
    buf[n > 0 ? n : 0] = '\0';
    ok(rc == 0 && res.status == RESULT_OK, "stdin and stdout on pipes");
    is_str(buf, "pipe:\npipe:\nhello\n", "the payload's stdin and stdout are the pipes");
    result_release(&res);
    close(in[0]);
    close(out[0]);

    /* not a pipe, or the wrong end: the caller's mistake, nothing runs */
    {
        char fifo[] = "/tmp/crucible-fifo-XXXXXX";
        int mfd = sandbox_memfd("x", 1), file = tmpfile_with("x"), ff = -1, pp[2];
        char *t[] = {"/bin/true", NULL};
        struct sandbox_proc q = {.argv = t, .stdin_fd = mfd, .pipes = SANDBOX_PROC_STDIN_PIPE};

        result_init(&res);
        rc = sandbox_exec(sb, &q, 0, &res);
        ok(rc == -EINVAL && strstr(res.message, "stdin must be the read end of a pipe"),
           "a memfd is no pipe (%s)", res.message);
        result_release(&res);
        q.stdin_fd = file;
        result_init(&res);
        ok(sandbox_exec(sb, &q, 0, &res) == -EINVAL, "a regular file is no pipe");
        result_release(&res);
        if (mkdtemp(fifo)) {
            char path[64];
            snprintf(path, sizeof(path), "%s/f", fifo);
            if (mkfifo(path, 0600) == 0)
                ff = open(path, O_RDWR | O_CLOEXEC);
            q.stdin_fd = ff;
            result_init(&res);
            ok(ff >= 0 && sandbox_exec(sb, &q, 0, &res) == -EINVAL,
               "a named FIFO is refused: only anonymous pipes cross");
            result_release(&res);
            unlink(path);
            rmdir(fifo);
        }
        if (pipe2(pp, O_CLOEXEC) == 0) {
            q.stdin_fd = pp[1];
            result_init(&res);
            ok(sandbox_exec(sb, &q, 0, &res) == -EINVAL, "a pipe's write end is no stdin");
            result_release(&res);
            q.stdin_fd = -1;
            q.pipes = SANDBOX_PROC_STDOUT_PIPE;
            q.stdout_fd = pp[0];
            result_init(&res);
            ok(sandbox_exec(sb, &q, 0, &res) == -EINVAL &&
                   strstr(res.message, "stdout must be the write end"),
               "a pipe's read end is no stdout (%s)", res.message);
            result_release(&res);
            close(pp[0]);
            close(pp[1]);
        }
        char *e[] = {"/bin/echo", "still", NULL};
        run(sb, e, -1, NULL, SANDBOX_EXEC_LAST, &res);
        is_str(res.out.data, "still\n", "the sandbox still works after the refusals");
        result_release(&res);
        if (mfd >= 0)
            close(mfd);
        if (file >= 0)
            close(file);
        if (ff >= 0)
            close(ff);
    }
    sandbox_destroy(sb, NULL);
}

/* An image's configured environment and WorkingDir (what the image store fills from an
 * image's config): they apply under the caller's own entries and start directory. */
static void test_image_config(const struct sandbox_limits *lim)
{
    static const char cfg_env[] = "IMG_ONLY=from-image\0SHARED=image\0"
                                  "PATH=/opt/image/bin:/usr/bin:/bin\0TZ=Asia/Tokyo\0";
    struct image *cfg = malloc(sizeof(*cfg));
    struct errbuf err = {{0}};
    struct sandbox *sb;
    struct result res;
    char *show[] = {"/bin/sh", "-c", "echo \"$IMG_ONLY $SHARED $PATH $TZ $(pwd)\"", NULL};
    char *caller_env[] = {"SHARED=caller", NULL};

    *cfg = img;
    memcpy(cfg->env, cfg_env, sizeof(cfg_env));
    cfg->env_len = sizeof(cfg_env);
    snprintf(cfg->workdir, sizeof(cfg->workdir), "/tmp");
    sb = sandbox_create(&rt, cfg, lim, &err);
    ok(sb != NULL, "sandbox of an image with Env and WorkingDir (%s)", err.msg);
    if (!sb) {
        free(cfg);
        return;
    }
    run(sb, show, -1, caller_env, 0, &res);
    is_str(res.out.data, "from-image caller /opt/image/bin:/usr/bin:/bin Asia/Tokyo /tmp\n",
           "the image's Env applies over the fixed one, the caller's over the image's; "
           "WorkingDir is the start directory");
    result_release(&res);
    {
        struct sandbox_proc p = {.argv = show, .stdin_fd = -1, .cwd = "/work"};
        result_init(&res);
        sandbox_exec(sb, &p, 0, &res);
        ok(res.out.data && strstr(res.out.data, " /work\n"),
           "a caller's start directory wins over WorkingDir (%s)", res.out.data);
        result_release(&res);
        p.cwd = "relative";
        result_init(&res);
        ok(sandbox_exec(sb, &p, 0, &res) == -EINVAL && res.status == RESULT_SANDBOX_ERROR &&
               strstr(res.message, "absolute"),
           "a relative start directory is refused (%s)", res.message);
        result_release(&res);
    }
    snprintf(cfg->workdir, sizeof(cfg->workdir), "/no/such/dir");
    run(sb, show, -1, NULL, SANDBOX_EXEC_LAST, &res);
    ok(res.status == RESULT_SANDBOX_ERROR || res.status == RESULT_RUNTIME_ERROR,
       "a WorkingDir the image lacks: the exec fails, naming it (%s)", res.message);
    ok(strstr(res.message, "start directory") != NULL, "... as the start directory");
    result_release(&res);
    sandbox_destroy(sb, NULL);
    /* a truncated list (no terminating NUL within env_len) is cut at its last whole entry */
    memset(cfg->env, 'x', sizeof(cfg->env));
    memcpy(cfg->env, "A=1", 4);
    cfg->env_len = sizeof(cfg->env);
    snprintf(cfg->workdir, sizeof(cfg->workdir), "%s", "");
    char *show_a[] = {"/bin/sh", "-c", "echo \"$A\"; env | grep -c ^xxx", NULL};
    sb = sandbox_create(&rt, cfg, lim, &err);
    if (sb) {
        run(sb, show_a, -1, NULL, SANDBOX_EXEC_LAST, &res);
        is_str(res.out.data, "1\n0\n", "an unterminated entry at the end of env is left out");
        result_release(&res);
        sandbox_destroy(sb, NULL);
    } else {
        ok(0, "sandbox for the truncated env (%s)", err.msg);
    }
    free(cfg);
}

/* What a payload's own confinement looks like from inside, one line: capabilities, no_new_privs,
 * seccomp mode, the CPUs it may run on, whether it leads its session, its open fds (listed by the
 * sh's own glob, whose directory descriptor is among them: a command substitution or a pipe would
 * race with the sh closing that pipe's ends), and whether unshare is refused. */
static char *const confinement_probe[] = {
    "/bin/sh", "-c",
    "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp|Cpus_allowed_list):' /proc/self/status"
    " | tr -s '\\t\\n' '  ';"
    " [ \"$(cut -d' ' -f6 /proc/self/stat)\" = \"$$\" ] && printf 'leader ';"
    " printf 'fds:'; for f in /proc/$$/fd/*; do printf '%s,' \"${f##*/}\"; done; printf ' ';"
    " unshare -U true 2>/dev/null && echo unshared || echo refused",
    NULL};

/* own_cpus(buf, size) — "Cpus_allowed_list: <list> " as the probe prints it, for this process;
 * "" when it cannot be read. */
static void own_cpus(char *buf, size_t size)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");

    buf[0] = '\0';
    while (f && fgets(line, sizeof(line), f)) {
        char *list = line + strlen("Cpus_allowed_list:");
        if (strncmp(line, "Cpus_allowed_list:", strlen("Cpus_allowed_list:")) != 0)
            continue;
        list += strspn(list, " \t");
        list[strcspn(list, "\n")] = '\0';
        snprintf(buf, size, "Cpus_allowed_list: %s ", list);
    }
    if (f)
        fclose(f);
}

/* test_prestart(lim) — a plain exec that starts in the process made ahead (sandbox_prestart, then
 * by itself after each plain exec that leaves nothing running) is confined exactly as one started
 * at its request: compared line for line with a sandbox that never makes one ahead. */
static void test_prestart(const struct sandbox_limits *lim)
{
    char cpus[300];
    struct errbuf err = {{0}};
    struct sandbox *ahead = sandbox_create(&rt, &img, lim, &err), *plain;
    struct result ra, rp;
    char *bg[] = {"/bin/sh", "-c", "sleep 30 & echo bg", NULL};

    ok(ahead != NULL, "create a sandbox to start processes ahead in (%s)", err.msg);
    plain = sandbox_create(&rt, &img, lim, &err);
    if (!ahead || !plain)
        return;
    ok(sandbox_prestart(ahead) == 0, "ask for a process made ahead");
    own_cpus(cpus, sizeof(cpus));
    for (int k = 0; k < 3; k++) {
        run(plain, confinement_probe, -1, NULL, 0, &rp);
        run(ahead, confinement_probe, -1, NULL, 0, &ra);
        ok(ra.status == RESULT_OK && rp.status == RESULT_OK &&
               strstr(ra.out.data, "NoNewPrivs: 1") && strstr(ra.out.data, "Seccomp: 2") &&
               strstr(ra.out.data, "CapEff: 0000000000000000") && strstr(ra.out.data, "leader") &&
               strstr(ra.out.data, "refused"),
           "exec %d made ahead is confined (%s: %s)", k, result_status_name(ra.status),
           ra.out.data);
        ok(strcmp(ra.out.data, rp.out.data) == 0,
           "exec %d: the same as one started at its request (%s)", k, rp.out.data);
        /* init is pinned to this thread's CPU for a plain exec's hand-offs; the payload
         * takes back every CPU first */
        ok(cpus[0] && strstr(ra.out.data, cpus) && strstr(rp.out.data, cpus),
           "exec %d runs on every CPU the supervisor may use (%s)", k, cpus);
        result_release(&ra);
        result_release(&rp);
    }
    /* A process left running: nothing is made ahead beside it, and the next exec is still ok. */
    run(ahead, bg, -1, NULL, 0, &ra);
    ok(ra.status == RESULT_OK, "an exec leaves a process running (%s)",
       result_status_name(ra.status));
    result_release(&ra);
    run(ahead, confinement_probe, -1, NULL, 0, &ra);
    ok(ra.status == RESULT_OK && strstr(ra.out.data, "Seccomp: 2"),
       "the next exec beside it is confined too (%s)", ra.out.data);
    result_release(&ra);
    /* A KEEP exec gives up the process made ahead first: it works as before. */
    ok(sandbox_kill_others(ahead, &err) == 0, "kill what was left (%s)", err.msg);
    run(ahead, confinement_probe, -1, NULL, 0, &ra); /* ends alone: one is made ahead again */
    result_release(&ra);
    run(ahead, confinement_probe, -1, NULL, SANDBOX_EXEC_KEEP, &ra);
    ok(ra.status == RESULT_OK && strstr(ra.out.data, "Seccomp: 2") &&
           strstr(ra.out.data, "refused") && strstr(ra.out.data, cpus),
       "a KEEP exec after one was made ahead (%s: %s)", result_status_name(ra.status), ra.out.data);
    result_release(&ra);
    ok(sandbox_destroy(ahead, &err) == 0, "destroy leaves nothing (%s)", err.msg);
    sandbox_destroy(plain, NULL);
}

/* A warm sandbox is of one shape: a writable-root request never gets a read-only one, nor
 * the other way round. */
static void test_pool_shape(const struct sandbox_limits *lim)
{
    struct sandbox_limits ro = *lim, rw = *lim;
    struct errbuf err = {{0}};
    struct pool *p;
    struct sandbox *sb = NULL;

    rw.writable_root = true;
    p = pool_new(&rt, &img, &ro, 1, true, NULL, &err);
    ok(p != NULL, "a pool of read-only sandboxes (%s)", err.msg);
    if (!p)
        return;
    /* the shape is compared before anything is taken: a miss whether or not one is ready */
    sb = pool_take(p, &img, &rw, -1, &err);
    ok(!sb && strstr(err.msg, "writable or not"),
       "a writable-root request misses the read-only pool (%s)", err.msg);
    if (sb)
        pool_discard(p, sb);
    pool_free(p);
    p = pool_new(&rt, &img, &rw, 1, false, NULL, &err);
    ok(p != NULL, "a pool of writable-root sandboxes (%s)", err.msg);
    if (!p)
        return;
    sb = pool_take(p, &img, &ro, -1, &err);
    ok(!sb && strstr(err.msg, "writable or not"),
       "a read-only request misses the writable-root pool (%s)", err.msg);
    if (sb)
        pool_discard(p, sb);
    pool_free(p);
}

/* wait_ready(p, n) — whether the pool holds n ready sandboxes within 20 s. */
static bool wait_ready(struct pool *p, unsigned n)
{
    struct pool_stats st;
    struct timespec pause = {0, 10 * 1000 * 1000};

    for (int i = 0; i < 2000; i++) {
        pool_stats(p, &st);
        if (st.ready >= n)
            return true;
        nanosleep(&pause, NULL);
    }
    return false;
}

/* The refill of a taken sandbox is held back while its job runs (pool.c): it must still come,
 * whether the job hands its sandbox back or keeps it for long (a session). */
static void test_pool_refill(const struct sandbox_limits *lim)
{
    struct errbuf err = {{0}};
    struct pool *p = pool_new(&rt, &img, lim, 2, true, NULL, &err);
    struct sandbox *kept, *sb, *miss;
    struct pool_stats st;

    ok(p != NULL, "a pool of two (%s)", err.msg);
    if (!p)
        return;
    ok(wait_ready(p, 2), "it fills up");
    kept = pool_take(p, &img, lim, -1, &err);
    ok(kept != NULL, "one taken (%s)", err.msg);
    ok(wait_ready(p, 2), "refilled while the taken one is still in use");
    sb = pool_take(p, &img, lim, -1, &err);
    ok(sb != NULL, "another taken (%s)", err.msg);
    if (sb)
        pool_discard(p, sb);
    ok(wait_ready(p, 2), "refilled after it was handed back");
    pool_stats(p, &st);
    ok(st.created == 4 && st.hits == 2, "made 4, 2 hits (%llu, %llu)", st.created, st.hits);
    sb = pool_take(p, &img, lim, -1, &err);
    miss = sb ? pool_take(p, &img, lim, -1, &err) : NULL;
    struct sandbox *third = miss ? pool_take(p, &img, lim, -1, &err) : NULL;
    ok(sb && miss && !third && strstr(err.msg, "none ready"), "an emptied pool misses (%s)",
       err.msg);
    ok(wait_ready(p, 2), "an emptied pool fills up again");
    if (third)
        pool_discard(p, third);
    if (miss)
        pool_discard(p, miss);
    if (sb)
        pool_discard(p, sb);
    if (kept)
        pool_discard(p, kept);
    pool_free(p);
}

int main(void)
{
    struct errbuf err = {{0}};
    struct sandbox_limits lim;
    struct sandbox *sb;
    struct result res;
    int fd;

    if (sandbox_runtime_init(&rt, &err) < 0 || image_resolve("host", &img, &err) < 0) {
        diag("%s", err.msg);
        skip("sandbox runtime unavailable");
        return done_testing();
    }
    sandbox_limits_default(&lim);
    lim.wall_time = 10;

    ok(sandbox_dest_valid("a/b.txt", &err), "nested relative destination is valid");
    ok(!sandbox_dest_valid("/etc/x", &err) && strstr(err.msg, "relative"), "absolute refused");
    ok(!sandbox_dest_valid("../x", &err), "'..' refused");
    ok(!sandbox_dest_valid("a/../../x", &err), "inner '..' refused");
    ok(!sandbox_dest_valid("a//b", &err), "empty component refused");
    ok(!sandbox_dest_valid("a/", &err), "directory-looking destination refused");
    ok(!sandbox_dest_valid("", &err), "empty destination refused");
    {
        char longname[300], longpath[4200];
        memset(longname, 'n', 256);
        longname[256] = '\0';
        ok(!sandbox_dest_valid(longname, &err) && strstr(err.msg, "NAME_MAX"),
           "a name over NAME_MAX refused (%.80s)", err.msg);
        longname[255] = '\0';
        ok(sandbox_dest_valid(longname, &err), "a name of NAME_MAX bytes is fine");
        for (size_t i = 0; i < sizeof(longpath) - 1; i += 2)
            longpath[i] = 'd', longpath[i + 1] = '/';
        longpath[4089] = '\0'; /* "/work/" + 4089 + NUL = PATH_MAX */
        longpath[4088] = 'f';
        ok(sandbox_dest_valid(longpath, &err), "'/work/' + path within PATH_MAX is fine (%s)",
           err.msg);
        longpath[4089] = 'f';
        longpath[4090] = '\0';
        ok(!sandbox_dest_valid(longpath, &err) && strstr(err.msg, "PATH_MAX"),
           "one byte more is refused (%.80s)", err.msg);
    }
    {
        struct sandbox_dest ok1[] = {{"a-b", NULL, 0},
                                     {"a/b", NULL, 0},
                                     {"a/c/d", NULL, 0},
                                     {"b", NULL, 0},
                                     {"ab/x", NULL, 0}};
        struct sandbox_dest clash[] = {
            {"a/b/c", NULL, 0}, {"a-b", NULL, 0}, {"x", NULL, 0}, {"a/b", NULL, 0}};
        struct sandbox_dest twice[] = {
            {"x/y", NULL, 0}, {"main.py", "where the code goes", 0}, {"main.py", NULL, 0}};
        ok(sandbox_dests_check(ok1, 5, 0, &err), "files in shared directories fit (%s)", err.msg);
        ok(!sandbox_dests_check(clash, 4, 0, &err) &&
               strcmp(err.msg, "'a/b' is a file, so nothing can be put below it ('a/b/c')") == 0,
           "a file where another needs a directory is named (%s)", err.msg);
        ok(!sandbox_dests_check(twice, 3, 0, &err) &&
               strcmp(err.msg, "'main.py' is where the code goes") == 0,
           "a file where a reserved path is says what that path is for (%s)", err.msg);
        twice[1].what = NULL;
        ok(!sandbox_dests_check(twice, 3, 0, &err) && strstr(err.msg, "given twice"),
           "the same file twice (%s)", err.msg);
    }

    sb = sandbox_create(&rt, &img, &lim, &err);
    ok(sb != NULL, "create a sandbox (%s)", err.msg);
    if (!sb)
        return done_testing();

    fd = tmpfile_with("print('from file')\n");
    ok(sandbox_put_file(sb, "pkg/main.py", fd, 0640, &err) == 0, "put a nested file (%s)", err.msg);
    ok(sandbox_put_file(sb, "pkg/main.py", fd, 0640, &err) < 0,
       "putting the same path twice fails");
    close(fd);

    char *a1[] = {"/bin/sh", "-c", "stat -c %a pkg/main.py; python3 pkg/main.py; echo state > kept",
                  NULL};
    run(sb, a1, -1, NULL, 0, &res);
    ok(res.status == RESULT_OK, "first process ok (%s)", res.message);
    is_str(res.out.data, "640\nfrom file\n", "mode bits kept and the file runs");
    result_release(&res);

    char *a2[] = {"/bin/cat", "kept", NULL};
    run(sb, a2, -1, NULL, 0, &res);
    is_str(res.out.data, "state\n", "the work directory persists between processes");
    result_release(&res);

    char *a3[] = {"/bin/ln", "-s", "/etc", "link", NULL};
    run(sb, a3, -1, NULL, 0, &res);
    result_release(&res);
    fd = tmpfile_with("x");
    ok(sandbox_put_file(sb, "link/evil", fd, 0644, &err) < 0 && strstr(err.msg, "link/evil"),
       "a symlink planted by the payload is not followed (%s)", err.msg);
    ok(sandbox_put_file(sb, "link", fd, 0644, &err) < 0, "nor overwritten");
    close(fd);

    /* Reading files back (a report the payload wrote): only regular files below /work. */
    {
        char *data;
        size_t len;
        char *mk[] = {"/bin/sh", "-c",
                      "mkdir -p out && printf '<r/>' > out/report.xml && mkfifo fifo && "
                      "ln -s /etc/passwd passwd && ln -s out outlink && "
                      "head -c 70000 /dev/zero > big",
                      NULL};
        run(sb, mk, -1, NULL, 0, &res);
        ok(res.status == RESULT_OK, "payload wrote files to read back (%s)", res.err.data);
        result_release(&res);
        ok(sandbox_get_file(sb, "out/report.xml", 4096, &data, &len, &err) == 0 && len == 4 &&
               strcmp(data, "<r/>") == 0,
           "get a file the payload wrote (%s)", err.msg);
        free(data);
        ok(sandbox_get_file(sb, "kept", 4096, &data, &len, &err) == 0 && len == 6, "get kept");
        free(data);
        ok(sandbox_get_file(sb, "missing.xml", 4096, &data, &len, &err) == -ENOENT &&
               data == NULL && strstr(err.msg, "missing.xml"),
           "a missing file is ENOENT (%s)", err.msg);
        ok(sandbox_get_file(sb, "fifo", 4096, &data, &len, &err) == -EINVAL,
           "a FIFO is refused without blocking (%s)", err.msg);
        ok(sandbox_get_file(sb, "passwd", 4096, &data, &len, &err) == -EINVAL,
           "a symlink out of the sandbox is not followed (%s)", err.msg);
        ok(sandbox_get_file(sb, "outlink/report.xml", 4096, &data, &len, &err) < 0,
           "nor a symlinked directory (%s)", err.msg);
        ok(sandbox_get_file(sb, "out", 4096, &data, &len, &err) == -EINVAL,
           "a directory is refused (%s)", err.msg);
        ok(sandbox_get_file(sb, "big", 65536, &data, &len, &err) == -EFBIG && data == NULL,
           "a file over the cap is refused (%s)", err.msg);
        ok(sandbox_get_file(sb, "../etc/passwd", 4096, &data, &len, &err) == -EINVAL,
           "a path with '..' is refused before reaching init");
    }

    fd = tmpfile_with("line one\nline two\n");
    char *a4[] = {"/usr/bin/wc", "-l", NULL};
    run(sb, a4, fd, NULL, 0, &res);
    is_str(res.out.data, "2\n", "stdin is fed from the caller's fd");
    result_release(&res);
    close(fd);

    char *env[] = {"GREETING=hello", "PATH=/bin", NULL};
    char *a5[] = {"/bin/sh", "-c", "echo $GREETING $PATH $HOME", NULL};
    run(sb, a5, -1, env, 0, &res);
    is_str(res.out.data, "hello /bin /tmp\n", "extra environment, caller may override PATH");
    result_release(&res);

    char *a6[] = {"no-such-program", NULL};
    run(sb, a6, -1, NULL, 0, &res);
    ok(res.status == RESULT_RUNTIME_ERROR && res.exit_code == 127 &&
           strstr(res.message, "cannot execute 'no-such-program'"),
       "a missing program is reported (%s)", res.message);
    result_release(&res);

    /* A background process outlives its parent: the next exec still works, and the last
     * one tears everything down. */
    char *a7[] = {"/bin/sh", "-c", "sleep 100 & echo started", NULL};
    run(sb, a7, -1, NULL, 0, &res);
    ok(res.status == RESULT_OK && res.wall_time < 0.9,
       "returns while a background child runs (%.3f s)", res.wall_time);
    result_release(&res);
    char *a8[] = {"/bin/sh", "-c", "ps -e -o comm= | grep -c sleep", NULL};
    run(sb, a8, -1, NULL, SANDBOX_EXEC_LAST, &res);
    is_str(res.out.data, "1\n", "the background child was still there");
    result_release(&res);
    ok(sandbox_destroy(sb, &err) == 0, "destroy leaves nothing (%s)", err.msg);

    char *a9[] = {"/bin/echo", "one-shot", NULL};
    struct sandbox_proc p = {.argv = a9, .stdin_fd = -1};
    result_init(&res);
    sandbox_run(&rt, &img, &lim, NULL, 0, &p, &res);
    ok(res.status == RESULT_OK && strcmp(res.out.data, "one-shot\n") == 0, "sandbox_run one-shot");
    ok(res.wall_time > 0 && res.wall_time < 5, "wall time measured (%.4f s)", res.wall_time);
    result_release(&res);

    /* The first exec already runs in the sandbox's cgroup namespace (entered during setup, or
     * at the first exec when init was attached by pid): every path of its groups is "/". */
    char *cgns[] = {"/bin/sh", "-c",
                    "grep -c . /proc/self/cgroup; grep -vc ':/$' /proc/self/cgroup", NULL};
    p.argv = cgns;
    result_init(&res);
    sandbox_run(&rt, &img, &lim, NULL, 0, &p, &res);
    ok(res.out.data && atoi(res.out.data) > 0 && strstr(res.out.data, "\n0\n"),
       "a first exec sees only its own cgroup namespace's root (%s)", res.out.data);
    result_release(&res);
    p.argv = a9;

    /* One sandbox, several processes: a process the memory limit killed does not make the
     * next ones memory_limit (the group's OOM counter is cumulative), and a memory_kb
     * reported afterwards is the new process's own peak. */
    if (cgroup_env_has(&rt.cg, CGROUP_RES_MEMORY)) {
        struct sandbox_limits ml = lim;
        ml.memory_mb = 64;
        sb = sandbox_create(&rt, &img, &ml, &err);
        ok(sb != NULL, "create a 64 MB sandbox (%s)", err.msg);
        char *hog[] = {"/usr/bin/python3", "-c", "b = bytearray(512 << 20)", NULL};
        char *small[] = {"/bin/sh", "-c", "echo fine", NULL};
        run(sb, hog, -1, NULL, 0, &res);
        ok(res.status == RESULT_MEMORY_LIMIT, "a 512 MB allocation: memory_limit (%s, %s)",
           result_status_name(res.status), res.message);
        result_release(&res);
        for (int k = 0; k < 2; k++) {
            run(sb, small, -1, NULL, 0, &res);
            ok(res.status == RESULT_OK && strcmp(res.out.data, "fine\n") == 0,
               "a later small process in the same sandbox is ok (%s: %s)",
               result_status_name(res.status), res.message);
            ok(res.memory_kb < 32 * 1024, "...with its own peak, not the hog's (%llu KB)",
               (unsigned long long)res.memory_kb);
            result_release(&res);
        }
        run(sb, hog, -1, NULL, SANDBOX_EXEC_LAST, &res);
        ok(res.status == RESULT_MEMORY_LIMIT, "a second hog is memory_limit again (%s)",
           result_status_name(res.status));
        result_release(&res);
        sandbox_destroy(sb, NULL);
    } else {
        skip("no memory cgroup: OOM counters not used");
    }

    /* SIGXCPU is a timeout only when the CPU limit was reached: a program may raise it. */
    char *xcpu[] = {"/bin/sh", "-c", "kill -XCPU $$", NULL};
    p.argv = xcpu;
    result_init(&res);
    sandbox_run(&rt, &img, &lim, NULL, 0, &p, &res);
    ok(res.status == RESULT_SIGNALED && res.signal == SIGXCPU && res.limit == RESULT_LIMIT_NONE,
       "a self-sent SIGXCPU is signaled, not a timeout (%s, signal %d: %s)",
       result_status_name(res.status), res.signal, res.message);
    result_release(&res);
    {
        struct sandbox_limits cl = lim;
        cl.cpu_time = 0.5;
        char *spin[] = {"/bin/sh", "-c", "while :; do :; done", NULL};
        p.argv = spin;
        result_init(&res);
        sandbox_run(&rt, &img, &cl, NULL, 0, &p, &res);
        ok(res.status == RESULT_TIMEOUT && res.limit == RESULT_LIMIT_CPU,
           "a real CPU limit is still a timeout (%s, %.2f s)", result_status_name(res.status),
           res.cpu_time);
        result_release(&res);
    }

    /* SANDBOX_PUT_LOCKED: read-only in fact, though the payload owns the file. Each attempt
     * prints one word; only "refused" is right for the locked file and its directories. */
    sb = sandbox_create(&rt, &img, &lim, &err);
    ok(sandbox_put_data(sb, "tests/sub/t.py", "orig\n", 5, 0444 | SANDBOX_PUT_LOCKED, &err) == 0 &&
           sandbox_put_data(sb, "tests/h.py", "help\n", 5, 0444 | SANDBOX_PUT_LOCKED, &err) == 0 &&
           sandbox_put_data(sb, "top.txt", "top\n", 4, 0444 | SANDBOX_PUT_LOCKED, &err) == 0 &&
           sandbox_put_data(sb, "tests/mine.txt", "mine\n", 5, 0644, &err) == 0,
       "put locked files, nested and at the top, and a plain one beside them (%s)", err.msg);
    {
        char *tamper[] = {
            "/bin/sh", "-c",
            "t() { if eval \"$1\" 2>/dev/null; then echo \"ESCAPED $1\"; else echo refused; fi; }\n"
            "t 'chmod 644 tests/sub/t.py'\n"
            "t 'echo x > tests/sub/t.py'\n"
            "t 'echo x >> top.txt'\n"
            "t 'rm -f tests/sub/t.py'\n"
            "t 'mv top.txt top2.txt'\n"
            "t 'echo n > n; mv -f n tests/h.py'\n"
            "t 'mv tests tests2'\n"
            "t 'mv tests/sub tests/sub2'\n"
            "t 'rmdir tests/sub'\n"
            "t 'ln top.txt hard'\n"
            "t 'touch -m -d 2001-01-01 top.txt'\n"
            "cat tests/sub/t.py tests/h.py top.txt\n"
            "echo more >> tests/mine.txt && cat tests/mine.txt && echo new > tests/new && "
            "chmod 600 tests/mine.txt && echo plain-writable\n",
            NULL};
        run(sb, tamper, -1, NULL, SANDBOX_EXEC_LAST, &res);
        is_str(res.out.data,
               "refused\nrefused\nrefused\nrefused\nrefused\nrefused\nrefused\nrefused\nrefused\n"
               "refused\nrefused\norig\nhelp\ntop\nmine\nmore\nplain-writable\n",
               "a locked file cannot be chmod'ed, written, removed, renamed or replaced, its "
               "directories not renamed or removed; plain files beside it stay writable");
        result_release(&res);
    }
    sandbox_destroy(sb, NULL);

    /* Files that would not fit the scratch disk are refused up front, to the page and to the
     * inode (directories included), as the kernel then agrees when they are put. */
    {
        struct {
            int n, dirs;
            size_t len;
            bool fits;
        } trials[] = {{256, 0, 4096, true}, {257, 0, 4096, false}, {317, 0, 0, true},
                      {318, 0, 0, false},   {158, 1, 1, true},     {159, 1, 1, false}};
        struct sandbox_limits dl = lim;
        dl.disk_mb = 1;
        for (size_t k = 0; k < sizeof(trials) / sizeof(trials[0]); k++) {
            int n = trials[k].n, put = 0;
            struct sandbox_dest *d = calloc((size_t)n, sizeof(*d));
            char(*names)[32] = calloc((size_t)n, 32), *data = calloc(1, trials[k].len + 1);
            bool fits;
            for (int i = 0; i < n; i++) {
                snprintf(names[i], 32, trials[k].dirs ? "d%d/f" : "f%d", i);
                d[i] = (struct sandbox_dest){.path = names[i], .len = trials[k].len};
            }
            fits = sandbox_dests_check(d, (size_t)n, 1, &err);
            sb = sandbox_create(&rt, &img, &dl, &err);
            while (put < n &&
                   sandbox_put_data(sb, names[put], data, trials[k].len, 0644, &err) == 0)
                put++;
            ok(fits == trials[k].fits && (put == n) == fits,
               "1 MB disk, %d files of %zu bytes%s: %s, and the kernel agrees", n, trials[k].len,
               trials[k].dirs ? " in a directory each" : "", fits ? "fits" : "refused");
            sandbox_destroy(sb, NULL);
            free(d);
            free(names);
            free(data);
        }
        struct sandbox_dest one = {.path = "big", .len = (1 << 20) + 1};
        ok(!sandbox_dests_check(&one, 1, 1, &err) && strstr(err.msg, "scratch disk of 1 MB"),
           "the message names the disk (%s)", err.msg);
    }

    /* What execve takes is checked before running, to the byte (the same argv the kernel
     * then accepts or refuses), and an E2BIG at exec time is the caller's program, not a
     * sandbox_error. */
    {
        size_t nargs = 63, chunk = 100000, lo = 0, hi = chunk;
        char **big = calloc(nargs + 2, sizeof(char *));
        big[0] = "/bin/true";
        for (size_t i = 1; i <= nargs; i++) {
            big[i] = malloc(chunk + 1);
            memset(big[i], 'a', chunk);
            big[i][chunk] = '\0';
        }
        while (lo < hi) { /* the longest last argument that fits */
            size_t mid = (lo + hi + 1) / 2;
            big[nargs][mid] = '\0';
            bool fits = sandbox_argv_fits(big, NULL, &err);
            big[nargs][mid] = 'a';
            if (fits)
                lo = mid;
            else
                hi = mid - 1;
        }
        ok(lo > 0 && lo < chunk, "63 arguments of 100 kB reach the 6 MiB limit (last fits at %zu)",
           lo);
        sb = sandbox_create(&rt, &img, &lim, &err);
        big[nargs][lo] = '\0';
        run(sb, big, -1, NULL, 0, &res);
        ok(res.status == RESULT_OK, "the longest argv sandbox_argv_fits accepts runs (%s: %s)",
           result_status_name(res.status), res.message);
        result_release(&res);
        big[nargs][lo] = 'a';
        big[nargs][lo + 1] = '\0';
        ok(!sandbox_argv_fits(big, NULL, &err) && strstr(err.msg, "E2BIG"),
           "one byte more does not fit (%s)", err.msg);
        run(sb, big, -1, NULL, 0, &res);
        ok(res.status == RESULT_RUNTIME_ERROR && res.exit_code == 127 &&
               strstr(res.message, "Argument list too long"),
           "...and the kernel agrees; run anyway, it is the program's runtime_error, exit 127, "
           "not a sandbox_error (%s: %s)",
           result_status_name(res.status), res.message);
        result_release(&res);
        char *huge = malloc(128 * 1024 + 1);
        memset(huge, 'h', 128 * 1024);
        huge[128 * 1024] = '\0';
        char *one[] = {"/bin/echo", huge, NULL};
        ok(!sandbox_argv_fits(one, NULL, &err) && strstr(err.msg, "MAX_ARG_STRLEN"),
           "one argument of 128 KiB (with its NUL, over MAX_ARG_STRLEN) does not fit (%.90s)",
           err.msg);
        huge[128 * 1024 - 1] = '\0';
        ok(sandbox_argv_fits(one, NULL, &err), "one byte less fits (%.90s)", err.msg);
        free(huge);
        char *path_env[] = {"PATH=/bin", NULL};
        char *rel[] = {"true", NULL};
        ok(sandbox_argv_fits(rel, path_env, &err), "a small command fits");
        sandbox_destroy(sb, NULL);
        for (size_t i = 1; i <= nargs; i++)
            free(big[i]);
        free(big);
    }

    lim.disk_mb = 1;
    char *a10[] = {"/bin/sh", "-c", "for i in 1 2 3; do head -c 600000 /dev/zero > f$i; done",
                   NULL};
    p.argv = a10;
    result_init(&res);
    sandbox_run(&rt, &img, &lim, NULL, 0, &p, &res);
    ok(strstr(res.err.data, "No space left") != NULL, "scratch is size-limited (%s)", res.err.data);
    result_release(&res);
    lim.disk_mb = 64;
    test_pipes(&lim);
    test_image_config(&lim);
    test_pool_shape(&lim);
    test_pool_refill(&lim);
    test_prestart(&lim);
    sandbox_runtime_release(&rt);
    return done_testing();
}
