/*
 * Unit tests for a session's execs (SANDBOX_EXEC_KEEP) and sandbox_usage, with real
 * namespaces: files and background processes persist between execs; a KEEP exec stopped by
 * its wall time, its output limit or a cancel, a fork bomb within the pids limit, and a
 * kill(-1, SIGKILL) from inside end that exec's processes and nothing else; the keeper is
 * locked down as the payload is; usage reports what a sandbox holds; an init that cannot
 * answer for 12 s is waited for; sandbox_alive notices an init killed from the host.
 *
 * Background processes are recognised by their command lines ("sleep 100N"), counted from
 * inside the sandbox (its /proc shows every process of the sandbox, and only those).
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "sandbox/sandbox_int.h"
#include "tap.h"

static struct sandbox_runtime rt;
static struct image img;

/* keep(sb, script, res) — a KEEP exec of `sh -c script`; sandbox_exec's return. */
/* open_fds() — how many descriptors this process has open. */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;

    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n - 3; /* ".", ".." and d's own */
}

static int keep(struct sandbox *sb, const char *script, struct result *res)
{
    char *argv[] = {"sh", "-c", (char *)script, NULL};
    struct sandbox_proc p = {.argv = argv, .stdin_fd = -1};

    result_init(res);
    return sandbox_exec(sb, &p, SANDBOX_EXEC_KEEP, res);
}

/* count(sb, n) — processes of the sandbox whose command line is "sleep 100N ...", counted by
 * a KEEP exec (whose own command line does not match: the pattern is written "100[N]"); -1
 * when that exec did not succeed. */
static int count(struct sandbox *sb, int n)
{
    char script[512];
    struct result res;
    int c = -1;

    snprintf(script, sizeof(script),
             "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' <$f 2>/dev/null; echo; done | "
             "grep -c '^sleep 100[%d] '",
             n);
    keep(sb, script, &res);
    if (res.status == RESULT_OK || res.status == RESULT_RUNTIME_ERROR) /* grep -c of 0: 1 */
        c = atoi(res.out.data);
    else
        diag("count exec: %s %s", result_status_name(res.status), res.message);
    result_release(&res);
    return c;
}

/* diag_output(res) — res's stdout as diagnostics, a line each. */
static void diag_output(const struct result *res)
{
    const char *p = res->out.data;

    while (p && *p) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        diag("  %.*s", len, p);
        p += len + (nl != NULL);
    }
}

/* host_parent_of(cmdline, len) — the host pid of the parent of the host's process whose
 * command line is the len bytes of cmdline (NULs included), or 0. */
static pid_t host_parent_of(const char *cmdline, size_t len)
{
    struct dirent *e;
    pid_t found = 0;
    DIR *d = opendir("/proc");

    while (d && !found && (e = readdir(d))) {
        char path[300], buf[256];
        ssize_t n;
        int fd;
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            continue;
        n = read(fd, buf, sizeof(buf));
        close(fd);
        if (n == (ssize_t)len && memcmp(buf, cmdline, len) == 0) {
            snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
            if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
                n = read(fd, buf, sizeof(buf) - 1);
                close(fd);
                buf[n > 0 ? n : 0] = '\0';
                char *rp = strrchr(buf, ')');
                int ppid = 0;
                if (rp && sscanf(rp + 1, " %*c %d", &ppid) == 1)
                    found = ppid;
            }
        }
    }
    if (d)
        closedir(d);
    return found;
}

/* host_ppid(pid) — the parent of the host's process pid, or 0. */
static pid_t host_ppid(pid_t pid)
{
    char path[64], buf[512], *rp;
    int ppid = 0, fd;
    ssize_t n;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return 0;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    if (!(rp = strrchr(buf, ')')) || sscanf(rp + 1, " %*c %d", &ppid) != 1)
        return 0;
    return ppid;
}

/* The keeper of a running "sleep 1010", killed from the host as the OOM killer would. */
static void *kill_keeper(void *arg)
{
    static const char cmd[] = "sleep\0"
                              "1010";
    pid_t keeper = 0;

    for (int i = 0; i < 1000 && !keeper; i++) {
        keeper = host_parent_of(cmd, sizeof(cmd));
        if (!keeper)
            usleep(10000);
    }
    *(pid_t *)arg = keeper;
    if (keeper > 0)
        kill(keeper, SIGKILL);
    return NULL;
}

/* init_of(sb) — sb's init as the host sees it: the parent of the keeper of a background sleep
 * started for this, or 0. */
static pid_t init_of(struct sandbox *sb)
{
    static const char cmd[] = "sleep\0"
                              "1011";
    struct result res;
    pid_t keeper = 0;

    keep(sb, "sleep 1011 </dev/null >/dev/null 2>&1 &", &res);
    result_release(&res);
    for (int i = 0; i < 1000 && !keeper; i++) {
        keeper = host_parent_of(cmd, sizeof(cmd));
        if (!keeper)
            usleep(10000);
    }
    return keeper > 0 ? host_ppid(keeper) : 0;
}

static void *continue_later(void *arg)
{
    sleep(12);
    kill(*(pid_t *)arg, SIGCONT);
    return NULL;
}

/* test_init_slow(sb, init) — an init that cannot answer for 12 s (stopped, as a loaded host's
 * scheduler might leave it) is waited for: more than the 10 s the supervisor once gave it,
 * within SANDBOX_INIT_WAIT_S. */
static void test_init_slow(struct sandbox *sb, pid_t init)
{
    struct errbuf err = {{0}};
    pthread_t t;

    if (kill(init, SIGSTOP) < 0 || pthread_create(&t, NULL, continue_later, &init) != 0) {
        ok(false, "init stopped for a while (%s)", strerror(errno));
        kill(init, SIGCONT);
        return;
    }
    ok(sandbox_kill_others(sb, &err) == 0,
       "a request to an init stopped for 12 s is answered once it runs again (%s)", err.msg);
    pthread_join(t, NULL);
}

/* test_init_killed(sb, init) — sb's init killed from the host (as an admin or the OOM killer
 * would): sandbox_alive turns false without any request to sb. */
static void test_init_killed(struct sandbox *sb, pid_t init)
{
    ok(sandbox_alive(sb), "sandbox_alive before the kill");
    kill(init, SIGKILL);
    for (int i = 0; i < 1000 && sandbox_alive(sb); i++) /* a liveness bound: 10 s */
        usleep(10000);
    ok(!sandbox_alive(sb), "sandbox_alive is false once its init was killed");
}

static void set_wall_output(struct sandbox *sb, double wall, uint64_t output_kb)
{
    struct sandbox_limits lim;
    struct errbuf err = {{0}};

    sandbox_limits_default(&lim);
    lim.wall_time = wall;
    lim.output_kb = output_kb;
    if (sandbox_set_limits(sb, &lim, &err) < 0)
        diag("set limits: %s", err.msg);
}

static void test_lockdown(struct sandbox *sb)
{
    struct result res;

    /* the exec's keeper (and any other left) as the payload sees it */
    keep(sb,
         "for d in /proc/[0-9]*; do [ \"$(cat $d/comm 2>/dev/null)\" = crucible-keep ] && "
         "grep -E '^(CapEff|CapPrm|NoNewPrivs|Seccomp):' $d/status; done; true",
         &res);
    ok(res.status == RESULT_OK && strstr(res.out.data, "CapEff:\t0000000000000000") &&
           strstr(res.out.data, "CapPrm:\t0000000000000000") &&
           strstr(res.out.data, "NoNewPrivs:\t1") && strstr(res.out.data, "Seccomp:\t2") &&
           !strstr(res.out.data, "Seccomp:\t0") && !strstr(res.out.data, "NoNewPrivs:\t0"),
       "keepers run without capabilities, with no_new_privs and seccomp");
    if (res.status != RESULT_OK || !strstr(res.out.data, "Seccomp:\t2")) {
        diag("%s:", result_status_name(res.status));
        diag_output(&res);
    }
    result_release(&res);
    keep(sb, "cat /proc/self/status | grep -E '^(CapEff|Seccomp):'", &res);
    ok(res.status == RESULT_OK && strstr(res.out.data, "CapEff:\t0000000000000000") &&
           strstr(res.out.data, "Seccomp:\t2"),
       "the payload of a KEEP exec is filtered and has no capabilities");
    result_release(&res);
    keep(sb,
         "for d in /proc/[0-9]*; do [ \"$(cat $d/comm 2>/dev/null)\" = crucible-keep ] || "
         "continue; ls $d/fd >/dev/null 2>&1 && echo fds; cat $d/environ >/dev/null 2>&1 && "
         "echo environ; head -c 1 $d/mem >/dev/null 2>&1 && echo mem; done; echo end",
         &res);
    ok(res.status == RESULT_OK && strcmp(res.out.data, "end\n") == 0,
       "a payload cannot open a keeper's fds, environment or memory");
    diag_output(&res);
    result_release(&res);
    keep(sb, "echo $$", &res);
    ok(res.status == RESULT_OK && strcmp(res.out.data, "2\n") == 0,
       "the payload is pid 2 of its own pid namespace, its keeper pid 1");
    diag_output(&res);
    result_release(&res);
}

int main(void)
{
    struct errbuf err = {{0}};
    struct sandbox_limits lim;
    struct sandbox_usage u;
    struct sandbox *sb;
    struct result res;
    struct stat st;
    bool cg_mem, cg_pids;
    int r, cancel[2], fds0, sfd;

    if (sandbox_runtime_init(&rt, &err) < 0 || image_resolve("host", &img, &err) < 0) {
        diag("%s", err.msg);
        skip("sandbox runtime unavailable");
        return done_testing();
    }
    cg_mem = cgroup_env_has(&rt.cg, CGROUP_RES_MEMORY);
    cg_pids = cgroup_env_has(&rt.cg, CGROUP_RES_PIDS);
    sandbox_limits_default(&lim);
    lim.wall_time = 10;
    fds0 = open_fds();
    sb = sandbox_create(&rt, &img, &lim, &err);
    if (!ok(sb != NULL, "sandbox created (%s)", err.msg))
        return done_testing();
    is_int(open_fds() - fds0, 1, "an idle sandbox holds one descriptor (its control socket)");
    sfd = sandbox__scratch_open(sb, &err);
    ok(sfd >= 0 && fstat(sfd, &st) == 0 && S_ISDIR(st.st_mode),
       "init hands over a descriptor of the scratch tmpfs's root (%s)", err.msg);
    if (sfd >= 0)
        close(sfd);
    sfd = sandbox__scratch_open(sb, &err);
    ok(sfd >= 0, "and again (%s)", err.msg);
    if (sfd >= 0)
        close(sfd);

    /* State: a file and a background process of exec 1. */
    keep(sb, "echo hello > /work/state; sleep 1001 </dev/null >/dev/null 2>&1 & echo started",
         &res);
    ok(res.status == RESULT_OK && strcmp(res.out.data, "started\n") == 0,
       "exec 1 starts a background process and ends (%s %s)", result_status_name(res.status),
       res.message);
    result_release(&res);
    keep(sb, "cat /work/state", &res);
    ok(res.status == RESULT_OK && strcmp(res.out.data, "hello\n") == 0,
       "exec 2 reads the file exec 1 wrote");
    result_release(&res);
    is_int(count(sb, 1), 1, "exec 1's background process is alive in exec 3");
    {
        const char *argv[] = {"sh", "-c", "cat; echo \" $X $(pwd)\"", NULL};
        const char *env[] = {"X=x", NULL};
        sandbox_exec_input(sb, argv, env, "in", 2, SANDBOX_EXEC_KEEP, &res);
        ok(res.status == RESULT_OK && strcmp(res.out.data, "in x /work\n") == 0,
           "a KEEP exec gets its stdin, environment and start directory");
        diag_output(&res);
        result_release(&res);
    }

    /* A background process that keeps the exec's stdout open does not hold the exec. */
    keep(sb, "sleep 1005 & echo done", &res);
    ok(res.status == RESULT_OK && strcmp(res.out.data, "done\n") == 0,
       "an exec whose background child holds its stdout ends with its output (%s)", res.message);
    result_release(&res);
    is_int(count(sb, 5), 1, "that child is still running afterwards");

    /* Wall time: the exec and its own background children die, nothing else. */
    set_wall_output(sb, 1, 1024);
    keep(sb, "sleep 1002 </dev/null >/dev/null 2>&1 & echo before; sleep 1003", &res);
    ok(res.status == RESULT_TIMEOUT && res.limit == RESULT_LIMIT_WALL &&
           strcmp(res.out.data, "before\n") == 0,
       "a KEEP exec past its wall time is a timeout with its output (%s: %s)",
       result_status_name(res.status), res.message);
    result_release(&res);
    set_wall_output(sb, 10, 1024);
    is_int(count(sb, 2), 0, "its background child died with it");
    is_int(count(sb, 3), 0, "its payload died");
    is_int(count(sb, 1), 1, "exec 1's background process survived the timeout");

    /* Output limit, likewise. */
    set_wall_output(sb, 10, 16);
    keep(sb, "sleep 1004 </dev/null >/dev/null 2>&1 & yes", &res);
    ok(res.status == RESULT_OUTPUT_LIMIT, "a KEEP exec past its output limit is output_limit (%s)",
       result_status_name(res.status));
    result_release(&res);
    set_wall_output(sb, 10, 1024);
    is_int(count(sb, 4), 0, "its background child died with it");
    is_int(count(sb, 1), 1, "exec 1's background process survived the output limit");

    /* A fork bomb within the pids limit ends with its exec; the session goes on. */
    set_wall_output(sb, 2, 1024);
    keep(sb, "f() { f & f & wait; }; f 2>/dev/null & sleep 1006", &res);
    ok(res.status == RESULT_TIMEOUT, "a fork bomb in a KEEP exec ends as a timeout (%s: %s)",
       result_status_name(res.status), res.message);
    result_release(&res);
    set_wall_output(sb, 10, 1024);
    keep(sb, "echo alive", &res);
    ok(res.status == RESULT_OK && strcmp(res.out.data, "alive\n") == 0,
       "the next exec runs after the fork bomb (%s)", res.message);
    result_release(&res);
    is_int(count(sb, 6), 0, "the fork bomb's exec is gone");
    is_int(count(sb, 1), 1, "exec 1's background process survived the fork bomb");

    /* kill(-1, SIGKILL) reaches only the exec's own namespace. */
    keep(sb, "sleep 1007 </dev/null >/dev/null 2>&1 & kill -9 -1; echo survived", &res);
    ok(res.status == RESULT_OK && strcmp(res.out.data, "survived\n") == 0,
       "kill(-1, SIGKILL) in a KEEP exec spares its caller and the keeper (%s: %s)",
       result_status_name(res.status), res.message);
    result_release(&res);
    is_int(count(sb, 7), 0, "it killed the exec's own background child");
    is_int(count(sb, 1), 1, "it did not reach exec 1's background process");
    is_int(count(sb, 5), 1, "nor another earlier one");

    /* Every pid /proc lists (the sandbox's outer numbers) means something else, or nothing,
     * in the exec's own namespace; a pidfd of another namespace's process signals nothing. */
    keep(sb,
         "for p in /proc/[0-9]*; do n=${p#/proc/}; [ $n = $$ ] || kill -9 $n 2>/dev/null; "
         "done; if command -v python3 >/dev/null; then python3 -c '\n"
         "import os, signal\n"
         "ns = os.readlink(\"/proc/self/ns/pid\")\n"
         "hit = 0\n"
         "for n in os.listdir(\"/proc\"):\n"
         "    if not n.isdigit(): continue\n"
         "    try:\n"
         "        if os.readlink(\"/proc/\" + n + \"/ns/pid\") == ns: continue\n"
         "    except OSError: pass\n"
         "    try: fd = os.open(\"/proc/\" + n, os.O_RDONLY | os.O_DIRECTORY)\n"
         "    except OSError: continue\n"
         "    try: signal.pidfd_send_signal(fd, signal.SIGKILL); hit += 1\n"
         "    except OSError: pass\n"
         "print(\"signalled\", hit)'; fi; echo survived",
         &res);
    /* Processes of the exec's own namespace are skipped but its keeper (which one cannot
     * tell from another's: its /proc entries are closed): signalling it is allowed and the
     * kernel drops the signal, so one hit at most. */
    ok(res.status == RESULT_OK && strstr(res.out.data, "survived") &&
           (!strstr(res.out.data, "signalled") || strstr(res.out.data, "signalled 0\n") ||
            strstr(res.out.data, "signalled 1\n")),
       "kill of every pid in /proc, and pidfds of /proc entries, reach nothing outside the "
       "exec (%s)",
       result_status_name(res.status));
    diag_output(&res);
    result_release(&res);
    is_int(count(sb, 1), 1, "exec 1's background process survived them");
    is_int(count(sb, 5), 1, "and the other one");

    /* A keeper killed from outside (as by the OOM killer) ends its exec, nothing more. */
    {
        char *argv[] = {"sleep", "1010", NULL};
        struct sandbox_proc p = {.argv = argv, .stdin_fd = -1};
        pthread_t th;
        pid_t killed = 0;
        if (pthread_create(&th, NULL, kill_keeper, &killed) == 0) {
            result_init(&res);
            sandbox_exec(sb, &p, SANDBOX_EXEC_KEEP, &res);
            pthread_join(th, NULL);
            ok(killed > 0 && res.status == RESULT_SIGNALED && res.signal == SIGKILL,
               "a KEEP exec whose keeper is killed ends as killed by SIGKILL (%s %s)",
               result_status_name(res.status), res.message);
            result_release(&res);
            is_int(count(sb, 1), 1, "exec 1's background process survived the keeper's death");
        }
    }

    /* A cancel stops the exec, not the session. */
    if (pipe(cancel) == 0) {
        (void)!write(cancel[1], "x", 1);
        sandbox_set_cancel_fd(sb, cancel[0]);
        keep(sb, "sleep 1008", &res);
        sandbox_set_cancel_fd(sb, -1);
        ok(res.status == RESULT_SANDBOX_ERROR && strstr(res.message, "interrupted"),
           "a cancelled KEEP exec is interrupted (%s)", res.message);
        result_release(&res);
        close(cancel[0]);
        close(cancel[1]);
        is_int(count(sb, 8), 0, "the cancelled exec's process is gone");
        is_int(count(sb, 1), 1, "exec 1's background process survived the cancel");
    }

    /* Misuse and failures. */
    {
        char *argv[] = {"/no/such/program", NULL};
        struct sandbox_proc p = {.argv = argv, .stdin_fd = -1};
        result_init(&res);
        sandbox_exec(sb, &p, SANDBOX_EXEC_KEEP, &res);
        ok(res.status == RESULT_RUNTIME_ERROR && res.exit_code == 127 &&
               strstr(res.message, "cannot execute"),
           "a KEEP exec of a missing program is the program's error (%s)", res.message);
        result_release(&res);
        result_init(&res);
        r = sandbox_exec(sb, &p, SANDBOX_EXEC_KEEP | SANDBOX_EXEC_LAST, &res);
        ok(r == -EINVAL && strstr(res.message, "cannot be the last"),
           "KEEP with LAST is refused (%s)", res.message);
        result_release(&res);
    }
    test_lockdown(sb);
    {
        char *argv[] = {"sh", "-c", "echo plain", NULL};
        struct sandbox_proc p = {.argv = argv, .stdin_fd = -1};
        result_init(&res);
        sandbox_exec(sb, &p, 0, &res);
        ok(res.status == RESULT_OK && strcmp(res.out.data, "plain\n") == 0,
           "a plain exec runs beside keepers (%s)", res.message);
        result_release(&res);
    }

    /* Usage. */
    keep(sb, "head -c 1048576 /dev/zero > /work/big", &res);
    ok(res.status == RESULT_OK, "a 1 MB file written");
    result_release(&res);
    r = sandbox_usage(sb, &u);
    ok(r == 0, "sandbox_usage answers (%d)", r);
    ok(u.disk_kb >= 1024 && u.disk_limit_kb == lim.disk_mb * 1024, "disk used %llu KiB of %llu KiB",
       (unsigned long long)u.disk_kb, (unsigned long long)u.disk_limit_kb);
    if (cg_mem)
        ok(u.memory_kb >= 1024 && u.memory_peak_kb >= u.memory_kb,
           "memory %llu KiB (the tmpfs file is charged), peak %llu KiB",
           (unsigned long long)u.memory_kb, (unsigned long long)u.memory_peak_kb);
    else
        skip("no memory cgroup");
    if (cg_pids)
        ok(u.pids >= 5, "pids %llu: init, two keepers, two sleeps at least",
           (unsigned long long)u.pids);
    else
        skip("no pids cgroup");
    ok(u.cpu_time > 0 || !cgroup_env_has(&rt.cg, CGROUP_RES_CPU), "cpu %.3f s", u.cpu_time);

    /* kill_others still clears every exec's leftovers; destroy cleans everything. */
    ok(sandbox_kill_others(sb, &err) == 0, "kill_others (%s)", err.msg);
    if (cg_pids) {
        sandbox_usage(sb, &u);
        ok(u.pids == 1, "only init is left (%llu pids)", (unsigned long long)u.pids);
    }
    is_int(count(sb, 1), 0, "exec 1's background process is gone after kill_others");
    is_int(count(sb, 5), 0, "and the other one");
    keep(sb, "sleep 1009 </dev/null >/dev/null 2>&1 &", &res);
    ok(res.status == RESULT_OK, "a KEEP exec after kill_others");
    result_release(&res);
    ok(sandbox_usage(sb, &u) == 0, "usage measured");
    is_int(open_fds() - fds0, 1, "after execs and a usage, still one descriptor");
    ok(sandbox_alive(sb), "sandbox_alive: an idle sandbox with a keeper alive is alive");
    ok(sandbox_destroy(sb, &err) == 0, "destroy with a keeper alive (%s)", err.msg);

    /* A writable root: its scratch descriptor and a KEEP exec in it. */
    lim.writable_root = true;
    sb = sandbox_create(&rt, &img, &lim, &err);
    if (ok(sb != NULL, "sandbox with a writable root (%s)", err.msg)) {
        sfd = sandbox__scratch_open(sb, &err);
        ok(sfd >= 0, "it has a scratch too (%s)", err.msg);
        if (sfd >= 0)
            close(sfd);
        keep(sb,
             "head -c 1048576 /dev/zero > /opt-new-file 2>/dev/null || "
             "head -c 1048576 /dev/zero > /work/f",
             &res);
        ok(res.status == RESULT_OK, "a KEEP exec in it (%s)", res.message);
        result_release(&res);
        ok(sandbox_usage(sb, &u) == 0 && u.disk_kb >= 1024, "its usage counts the write (%llu)",
           (unsigned long long)u.disk_kb);
        pid_t init = init_of(sb);
        if (ok(init > 1 && init != getpid(), "the sandbox's init found on the host (%d)",
               (int)init)) {
            test_init_slow(sb, init);
            test_init_killed(sb, init);
        }
        ok(sandbox_destroy(sb, &err) == 0, "a sandbox whose init died is destroyed (%s)", err.msg);
    }
    sandbox_runtime_release(&rt);
    return done_testing();
}
