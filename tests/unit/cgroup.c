/*
 * Unit tests for src/cgroup.c against the real kernel: discovery, a group with limits,
 * attaching a process, CPU accounting, kill, wait-until-empty and removal. Skips what the
 * host does not delegate to this user.
 */
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/cgroup.h"
#include "tap.h"

static bool dir_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int main(void)
{
    struct cgroup_env env;
    struct cgroup cg;
    struct errbuf err = {{0}};
    char path[4300], buf[64];
    pid_t pid;
    int st, p[2];

    cgroup_env_init(&env);
    ok(env.nhier <= CGROUP_MAX_HIER, "discovery found %d hierarchies", env.nhier);
    for (int r = 0; r < CGROUP_RES_COUNT; r++) {
        const char *b = cgroup_env_backend(&env, (enum cgroup_res)r);
        ok(strcmp(b, "v1") == 0 || strcmp(b, "v2") == 0 || strcmp(b, "none") == 0,
           "resource %d backend is '%s'", r, b);
    }
    for (int h = 0; h < env.nhier; h++)
        ok(strstr(env.hier[h].base, "/crucible") != NULL,
           "groups live under crucible's own subtree: %s", env.hier[h].base);
    if (env.nhier == 0) {
        skip("no writable cgroup hierarchy for this user");
        return done_testing();
    }

    ok(cgroup_create(&cg, &env, 64 << 20, 16, &err) == 0, "create a group (%s)", err.msg);
    for (int h = 0; h < cg.ndirs; h++)
        ok(dir_exists(cg.dirs[h]), "group directory %s exists", cg.dirs[h]);
    if (cgroup_env_has(&env, CGROUP_RES_PIDS)) {
        snprintf(path, sizeof(path), "%s/pids.max", cg.dirs[env.res_hier[CGROUP_RES_PIDS]]);
        ok(util_read_small(path, buf, sizeof(buf)) > 0 && atoi(buf) == 16, "pids.max written");
    } else {
        skip("no pids controller");
    }

    if (pipe(p) < 0)
        return 1;
    pid = fork();
    if (pid == 0) {
        char c;
        close(p[1]);
        if (read(p[0], &c, 1) != 1) /* wait until attached */
            _exit(1);
        for (volatile unsigned long i = 0;; i++)
            ; /* burn CPU until killed */
    }
    close(p[0]);
    ok(cgroup_attach(&cg, pid, false, false) == 0, "attach a child");
    (void)!write(p[1], "x", 1);
    close(p[1]);
    if (cgroup_env_has(&env, CGROUP_RES_CPU)) {
        double cpu = 0;
        /* a busy machine may give the child little CPU at first: wait up to 5 s for 0.1 s */
        for (int k = 0; k < 100 && cpu < 0.1; k++) {
            usleep(50000);
            cpu = cgroup_cpu_usage(&cg);
        }
        ok(cpu > 0.1 && cpu < 5, "whole-group CPU time is measured (%.3f s)", cpu);
        /* Through the descriptor an exec holds: each read is afresh, not the first one cached. */
        cgroup_counters_open(&cg);
        ok(cg.cpu_fd >= 0, "the CPU counter is held open during an exec");
        double held = cgroup_cpu_usage(&cg), later = held;
        for (int k = 0; k < 100 && later <= held + 0.05; k++) {
            usleep(50000);
            later = cgroup_cpu_usage(&cg);
        }
        ok(held >= cpu && later > held + 0.05 && later < 10,
           "reads through the held counter advance (%.3f s, then %.3f s)", held, later);
        cgroup_counters_close(&cg);
        ok(cg.cpu_fd < 0 && cg.oom_fd < 0 && cg.peak_fd < 0, "an idle group holds no counter");
        ok(cgroup_cpu_usage(&cg) >= later, "read by path again once closed");
    } else {
        skip("no CPU accounting");
    }
    for (int h = 0; h < cg.ndirs; h++) {
        if (env.hier[h].version != 2)
            continue;
        snprintf(path, sizeof(path), "%s/cgroup.events", cg.dirs[h]);
        ok(util_read_small(path, buf, sizeof(buf)) > 0 && strstr(buf, "populated 1"),
           "v2 cgroup.events says populated while the child runs");
    }
    ok(cgroup_kill(&cg) == 0, "kill the group");
    waitpid(pid, &st, 0);
    ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the child died of SIGKILL");
    ok(cgroup_wait_empty(&cg, 2.0) == 0, "group is empty");
    for (int h = 0; h < cg.ndirs; h++) {
        if (env.hier[h].version != 2)
            continue;
        snprintf(path, sizeof(path), "%s/cgroup.events", cg.dirs[h]);
        ok(util_read_small(path, buf, sizeof(buf)) > 0 && strstr(buf, "populated 0"),
           "v2 cgroup.events says unpopulated after the kill");
    }
    if (cgroup_env_has(&env, CGROUP_RES_MEMORY))
        ok(cgroup_oom_kills(&cg) == 0, "no OOM kill counted");
    else
        skip("no memory controller");
    char first[4096];
    snprintf(first, sizeof(first), "%s", cg.dirs[0]);
    ok(cgroup_destroy(&cg) == 0, "destroy");
    ok(!dir_exists(first), "group directory removed");
    ok(cgroup_destroy(&cg) == 0, "destroy twice is harmless");

    /* Reclaim: groups of a crucible that died are removed; groups of live ones stay. */
    {
        char dead[4200], live[4200];
        pid_t gone = fork();
        if (gone == 0)
            _exit(0);
        waitpid(gone, NULL, 0);
        snprintf(dead, sizeof(dead), "%s/sb-%d-99", env.hier[0].base, (int)gone);
        snprintf(live, sizeof(live), "%s/sb-%d-99", env.hier[0].base, (int)getpid());
        if (mkdir(dead, 0755) == 0 && mkdir(live, 0755) == 0) {
            int n = cgroup_env_reclaim(&env);
            ok(n >= 1 && !dir_exists(dead), "reclaim: a dead owner's group is removed (%d)", n);
            ok(dir_exists(live), "reclaim: a live owner's group is kept");
            rmdir(live);
        } else {
            skip("cannot make groups to reclaim");
            skip("cannot make groups to reclaim");
            rmdir(dead);
        }
    }
    return done_testing();
}
