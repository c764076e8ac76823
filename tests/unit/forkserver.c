/*
 * forkserver.c — the Python fork server: jobs run as python3 runs in a cold sandbox (the same
 * verdict, field by field, for a set of programs run both ways), and nothing one job does is
 * visible to the next (each property: job 1 changes it, job 2 checks it).
 *
 * This binary is also the zygote: the fork server re-executes its supervisor's own binary.
 */
#include "sandbox/forkserver.h"
#include "sandbox/sandbox.h"
#include "tap.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static struct sandbox_runtime rt;
static struct image img;
static struct forkserver *fs;

/* One program: files (main.py and the harness's module), argv, stdin. */
struct prog {
    const char *name;
    const char *main_py; /* put as main.py when not NULL */
    const char *argv[8];
    const char *stdin_text;
};

static int memfd_of(const char *s)
{
    int fd = memfd_create("t", MFD_CLOEXEC);

    if (fd >= 0 && s && write(fd, s, strlen(s)) != (ssize_t)strlen(s)) {
        close(fd);
        return -1;
    }
    if (fd >= 0)
        lseek(fd, 0, SEEK_SET);
    return fd;
}

/* run(p, lim, fork_server, res) — p in a cold sandbox or a fork server's job. */
static void run(const struct prog *p, const struct sandbox_limits *lim, bool fork_server,
                struct result *res)
{
    struct sandbox_file files[1];
    size_t nfiles = 0;
    struct sandbox_proc proc = {.argv = (char *const *)p->argv, .stdin_fd = -1, .cwd = "/work"};

    result_init(res);
    if (p->main_py) {
        files[0] = (struct sandbox_file){"main.py", memfd_of(p->main_py), 0644};
        nfiles = 1;
    }
    if (p->stdin_text)
        proc.stdin_fd = memfd_of(p->stdin_text);
    if (fork_server)
        forkserver_run(fs, lim, files, nfiles, &proc, res);
    else
        sandbox_run(&rt, &img, lim, files, nfiles, &proc, res);
    if (nfiles)
        close(files[0].fd);
    if (proc.stdin_fd >= 0)
        close(proc.stdin_fd);
}

/* same(p, lim) — p both ways: status, exit code, signal, limit, stdout, stderr, truncation. */
static void same(const struct prog *p, const struct sandbox_limits *lim)
{
    struct result cold, fork;
    bool eq;

    run(p, lim, false, &cold);
    run(p, lim, true, &fork);
    eq = cold.status == fork.status && cold.exit_code == fork.exit_code &&
         cold.signal == fork.signal && cold.limit == fork.limit &&
         cold.out.len == fork.out.len && memcmp(cold.out.data, fork.out.data, cold.out.len) == 0 &&
         cold.err.len == fork.err.len && memcmp(cold.err.data, fork.err.data, cold.err.len) == 0 &&
         cold.out.truncated == fork.out.truncated && cold.err.truncated == fork.err.truncated &&
         fork.fork_server && !cold.fork_server;
    if (!ok(eq, "same verdict both ways: %s (%s)", p->name, result_status_name(fork.status))) {
        diag("cold: %s exit %d sig %d msg '%s'\n--- out\n%s\n--- err\n%s",
             result_status_name(cold.status), cold.exit_code, cold.signal, cold.message,
             cold.out.data, cold.err.data);
        diag("fork: %s exit %d sig %d msg '%s'\n--- out\n%s\n--- err\n%s",
             result_status_name(fork.status), fork.exit_code, fork.signal, fork.message,
             fork.out.data, fork.err.data);
    }
    result_release(&cold);
    result_release(&fork);
}

#define PY(...)                                                                                    \
    {                                                                                              \
        "/usr/bin/python3", __VA_ARGS__, NULL                                                      \
    }

int main(int argc, char **argv)
{
    struct errbuf err = {{0}};
    struct sandbox_limits lim;

    if (argc == 2 && strcmp(argv[1], FORKSERVER_ZYGOTE_ARG) == 0)
        return forkserver_zygote_main(argc, argv);
    if (sandbox_runtime_init(&rt, &err) < 0 || image_resolve("host", &img, &err) < 0) {
        diag("%s", err.msg);
        skip("sandbox runtime unavailable");
        return done_testing();
    }
    fs = forkserver_start(&rt, &img, &err);
    if (!ok(fs != NULL, "fork server started (%s)", err.msg))
        return done_testing();
    sandbox_limits_default(&lim);
    lim.wall_time = 10;
    lim.cpu_time = 5;

    {
        struct prog p = {"print", NULL, PY("-c", "print('hi')"), NULL};
        same(&p, &lim);
    }
    forkserver_stop(fs);
    sandbox_runtime_release(&rt);
    return done_testing();
}
