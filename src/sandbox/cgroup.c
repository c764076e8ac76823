/*
 * cgroup.c — v2 and v1 back-ends behind cgroup.h.
 *
 * Discovery reads /proc/self/mountinfo (where each hierarchy is mounted and with which
 * controllers) and /proc/self/cgroup (where this process sits in each), so groups are
 * made below the caller's own position, as a delegated systemd unit expects.
 */
#include "sandbox/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const res_v1_controller[CGROUP_RES_COUNT] = {
    [CGROUP_RES_MEMORY] = "memory",
    [CGROUP_RES_PIDS] = "pids",
    [CGROUP_RES_CPU] = "cpuacct",
    [CGROUP_RES_KILL] = NULL,
};

static bool list_has(const char *list, const char *tok)
{
    size_t n = strlen(tok);

    for (const char *p = list; p && *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == n && strncmp(p, tok, n) == 0)
            return true;
        p = c ? c + 1 : NULL;
    }
    return false;
}

/* What discovery reads, once: /proc/self/cgroup and /proc/self/mountinfo. */
struct proc_view {
    char cgroup[4096];
    char *mountinfo; /* malloc'd, NUL-terminated */
};

/* own_path(v, ctrl, out) — this process's path in the hierarchy holding ctrl (NULL: v2). */
static bool own_path(const struct proc_view *v, const char *ctrl, char *out, size_t size)
{
    char buf[4096], *line, *save = NULL;

    snprintf(buf, sizeof(buf), "%s", v->cgroup);
    for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        if ((ctrl == NULL && c1[1] == '\0' && strncmp(line, "0:", 2) == 0) ||
            (ctrl && list_has(c1 + 1, ctrl))) {
            snprintf(out, size, "%s", c2 + 1);
            return true;
        }
    }
    return false;
}

/* mount_of(fstype, ctrl, mnt, root) — mount point and mount root of the hierarchy of
 * type fstype ("cgroup2" or "cgroup") whose super options name ctrl (v1 only). */
static bool mount_of(const struct proc_view *v, const char *fstype, const char *ctrl, char *mnt,
                     char *root, size_t size)
{
    const char *next = v->mountinfo;
    char line[4096];
    bool found = false;

    while (!found && next && *next) {
        const char *nl = strchr(next, '\n');
        size_t len = nl ? (size_t)(nl - next) : strlen(next);
        char r[1024], m[1024], type[64], opts[1024];
        char *sep;

        snprintf(line, sizeof(line), "%.*s", (int)len, next);
        next = nl ? nl + 1 : NULL;
        sep = strstr(line, " - ");
        if (!sep || sscanf(line, "%*s %*s %*s %1023s %1023s", r, m) != 2)
            continue;
        if (sscanf(sep + 3, "%63s %*s %1023s", type, opts) != 2)
            continue;
        if (strcmp(type, fstype) != 0 || strchr(m, '\\'))
            continue;
        if (ctrl && !list_has(opts, ctrl))
            continue;
        snprintf(mnt, size, "%s", m);
        snprintf(root, size, "%s", r);
        found = true;
    }
    return found;
}

/* base_dir(mnt, root, own, out) — "<mnt><own relative to root>/crucible". */
static bool base_dir(const char *mnt, const char *root, const char *own, char *out, size_t size)
{
    size_t rl = strlen(root);
    const char *rel = own;

    if (strcmp(root, "/") != 0) {
        if (strncmp(own, root, rl) != 0 || (own[rl] != '/' && own[rl] != '\0'))
            return false;
        rel = own + rl;
    }
    if (strcmp(rel, "/") == 0)
        rel = "";
    return snprintf(out, size, "%s%s/crucible", mnt, rel) < (int)size;
}

/* make_base(dir) — our subtree exists and this process may create groups in it. */
static bool make_base(const char *dir)
{
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return false;
    return access(dir, W_OK | X_OK) == 0;
}

static int add_hier(struct cgroup_env *env, int version, const char *base)
{
    for (int i = 0; i < env->nhier; i++)
        if (strcmp(env->hier[i].base, base) == 0)
            return i;
    if (env->nhier == CGROUP_MAX_HIER)
        return -1;
    env->hier[env->nhier].version = version;
    snprintf(env->hier[env->nhier].base, sizeof(env->hier[0].base), "%s", base);
    env->hier[env->nhier].resmask = 0;
    return env->nhier++;
}

static void assign(struct cgroup_env *env, int h, enum cgroup_res res)
{
    env->hier[h].resmask |= 1u << res;
    env->res_hier[res] = h;
}

static void discover_v2(struct cgroup_env *env, const struct proc_view *v)
{
    char mnt[1024], root[1024], own[1024], base[4096], path[4200], ctrls[512];
    const char *forced = getenv("CRUCIBLE_CGROUP_ROOT");
    int h;

    if (forced && *forced) {
        snprintf(base, sizeof(base), "%s", forced);
    } else {
        if (!mount_of(v, "cgroup2", NULL, mnt, root, sizeof(mnt)) ||
            !own_path(v, NULL, own, sizeof(own)))
            return;
        if (!base_dir(mnt, root, own, base, sizeof(base)))
            return;
    }
    if (!make_base(base))
        return;
    snprintf(path, sizeof(path), "%s/cgroup.kill", base);
    if (access(path, W_OK) != 0)
        return; /* kernel older than 5.14, or not ours to write */
    h = add_hier(env, 2, base);
    if (h < 0)
        return;
    assign(env, h, CGROUP_RES_CPU);
    assign(env, h, CGROUP_RES_KILL);
    snprintf(path, sizeof(path), "%s/cgroup.controllers", base);
    if (util_read_small(path, ctrls, sizeof(ctrls)) < 0)
        return;
    snprintf(path, sizeof(path), "%s/cgroup.subtree_control", base);
    for (char *p = ctrls; *p; p++)
        if (*p == ' ' || *p == '\n')
            *p = ',';
    if (list_has(ctrls, "memory") && util_write_file(path, "+memory") == 0)
        assign(env, h, CGROUP_RES_MEMORY);
    if (list_has(ctrls, "pids") && util_write_file(path, "+pids") == 0)
        assign(env, h, CGROUP_RES_PIDS);
}

static void discover_v1(struct cgroup_env *env, const struct proc_view *v, enum cgroup_res res)
{
    const char *ctrl = res_v1_controller[res];
    char mnt[1024], root[1024], own[1024], base[4096];
    int h;

    if (!ctrl || env->res_hier[res] >= 0)
        return;
    if (!mount_of(v, "cgroup", ctrl, mnt, root, sizeof(mnt)) ||
        !own_path(v, ctrl, own, sizeof(own)))
        return;
    if (!base_dir(mnt, root, own, base, sizeof(base)) || !make_base(base))
        return;
    h = add_hier(env, 1, base);
    if (h >= 0)
        assign(env, h, res);
}

void cgroup_env_init(struct cgroup_env *env)
{
    const char *v1 = getenv("CRUCIBLE_CGROUP_V1");
    struct proc_view v = {.mountinfo = NULL};
    size_t len;
    int fd;

    memset(env, 0, sizeof(*env));
    for (int r = 0; r < CGROUP_RES_COUNT; r++)
        env->res_hier[r] = -1;
    if (util_read_small("/proc/self/cgroup", v.cgroup, sizeof(v.cgroup)) < 0)
        return;
    fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    if (util_read_fd(fd, &v.mountinfo, &len, 16 << 20) < 0)
        v.mountinfo = NULL;
    close(fd);
    if (!v.mountinfo)
        return;
    discover_v2(env, &v);
    if (!v1 || strcmp(v1, "0") != 0) { /* CRUCIBLE_CGROUP_V1=0: rlimit fallbacks instead */
        discover_v1(env, &v, CGROUP_RES_MEMORY);
        discover_v1(env, &v, CGROUP_RES_PIDS);
        discover_v1(env, &v, CGROUP_RES_CPU);
    }
    free(v.mountinfo);
}

bool cgroup_env_has(const struct cgroup_env *env, enum cgroup_res res)
{
    return env->res_hier[res] >= 0;
}

const char *cgroup_env_backend(const struct cgroup_env *env, enum cgroup_res res)
{
    int h = env->res_hier[res];

    if (h < 0)
        return "none";
    return env->hier[h].version == 2 ? "v2" : "v1";
}

/* dir_for(cg, res) — the group directory serving res, or NULL. */
static const char *dir_for(const struct cgroup *cg, enum cgroup_res res)
{
    int h = cg->env->res_hier[res];

    return h >= 0 && cg->dirs[h][0] ? cg->dirs[h] : NULL;
}

static int write_in(const char *dir, const char *file, const char *text)
{
    char path[4200];

    snprintf(path, sizeof(path), "%s/%s", dir, file);
    return util_write_file(path, text);
}

static ssize_t read_in(const char *dir, const char *file, char *buf, size_t size)
{
    char path[4200];

    snprintf(path, sizeof(path), "%s/%s", dir, file);
    return util_read_small(path, buf, size);
}

/* read_counter(fd, dir, file, buf, size) — the whole of a small counter file, NUL-terminated:
 * by one pread of fd when it is open (a cgroup file reads afresh from offset 0), else by path.
 * The length or -errno. */
static ssize_t read_counter(int fd, const char *dir, const char *file, char *buf, size_t size)
{
    if (fd >= 0) {
        ssize_t n = pread(fd, buf, size - 1, 0);
        if (n >= 0) {
            buf[n] = '\0';
            return n;
        }
    }
    return read_in(dir, file, buf, size);
}

/* open_in(dir, file, flags) — an O_CLOEXEC descriptor of dir/file, or -1. */
static int open_in(const char *dir, const char *file, int flags)
{
    char path[4200];

    snprintf(path, sizeof(path), "%s/%s", dir, file);
    return open(path, flags | O_CLOEXEC);
}

/* is_v2(cg, res) — res is served by the v2 hierarchy (dir_for(cg, res) must be non-NULL). */
static bool is_v2(const struct cgroup *cg, enum cgroup_res res)
{
    return cg->env->hier[cg->env->res_hier[res]].version == 2;
}

/* key_value(text, key) — the number after "key " on a line of a flat-keyed file. */
static uint64_t key_value(const char *text, const char *key)
{
    size_t n = strlen(key);

    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, key, n) == 0 && p[n] == ' ')
            return strtoull(p + n + 1, NULL, 10);
    return 0;
}

int cgroup_set_limits(struct cgroup *cg, uint64_t memory_bytes, uint64_t pids, struct errbuf *err)
{
    const char *d;
    char num[32];
    int r;

    if (memory_bytes && (d = dir_for(cg, CGROUP_RES_MEMORY))) {
        snprintf(num, sizeof(num), "%llu", (unsigned long long)memory_bytes);
        if (cg->env->hier[cg->env->res_hier[CGROUP_RES_MEMORY]].version == 2) {
            r = write_in(d, "memory.max", num);
            if (r == 0)
                (void)write_in(d, "memory.swap.max", "0");
        } else {
            /* v1 keeps memsw >= limit: lowering goes limit first, raising memsw first.
             * memsw is absent without swap accounting, so its failures are ignored. */
            r = write_in(d, "memory.limit_in_bytes", num);
            if (r == 0) {
                (void)write_in(d, "memory.memsw.limit_in_bytes", num);
            } else if (r == -EINVAL) {
                (void)write_in(d, "memory.memsw.limit_in_bytes", num);
                r = write_in(d, "memory.limit_in_bytes", num);
            }
        }
        if (r < 0)
            return errbuf_set(err, "cannot set memory limit in '%s': %s", d, strerror(-r)), r;
    }
    if (pids && (d = dir_for(cg, CGROUP_RES_PIDS))) {
        snprintf(num, sizeof(num), "%llu", (unsigned long long)pids);
        r = write_in(d, "pids.max", num);
        if (r < 0)
            return errbuf_set(err, "cannot set pids limit in '%s': %s", d, strerror(-r)), r;
    }
    return 0;
}

int cgroup_create(struct cgroup *cg, const struct cgroup_env *env, uint64_t memory_bytes,
                  uint64_t pids, struct errbuf *err)
{
    static unsigned counter; /* shared by threads: only touched atomically */
    unsigned n = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
    int r;

    memset(cg, 0, sizeof(*cg));
    cg->env = env;
    cg->v2_fd = -1;
    cg->peak_fd = -1;
    cg->cpu_fd = -1;
    cg->oom_fd = -1;
    for (int h = 0; h < env->nhier; h++) {
        snprintf(cg->dirs[h], sizeof(cg->dirs[h]), "%s/sb-%d-%u", env->hier[h].base, (int)getpid(),
                 n);
        if (mkdir(cg->dirs[h], 0755) < 0) {
            r = -errno;
            errbuf_set(err, "cannot create cgroup '%s': %s", cg->dirs[h], strerror(errno));
            cg->dirs[h][0] = '\0';
            goto out_destroy;
        }
        cg->ndirs = h + 1;
        if (env->hier[h].version == 2) {
            cg->v2_fd = open(cg->dirs[h], O_DIRECTORY | O_RDONLY | O_CLOEXEC);
            if (cg->v2_fd < 0) {
                r = -errno;
                errbuf_set(err, "cannot open cgroup '%s': %s", cg->dirs[h], strerror(errno));
                goto out_destroy;
            }
        }
    }
    r = cgroup_set_limits(cg, memory_bytes, pids, err);
    if (r < 0)
        goto out_destroy;
    return 0;

out_destroy:
    cgroup_destroy(cg);
    return r;
}

/* open_joins(cg, fds, max, v2) — the files a process writes "0" into to join cg: every v1
 * hierarchy's "tasks", and (v2) the v2 group's "cgroup.procs". The count, or -errno. */
static int open_joins(const struct cgroup *cg, int *fds, int max, bool v2)
{
    char path[4200];
    int n = 0;

    for (int h = 0; h < cg->ndirs; h++) {
        bool v1 = cg->env->hier[h].version == 1;
        if (!cg->dirs[h][0] || (!v1 && !v2))
            continue;
        snprintf(path, sizeof(path), "%s/%s", cg->dirs[h], v1 ? "tasks" : "cgroup.procs");
        if (n == max || (fds[n] = open(path, O_WRONLY | O_CLOEXEC)) < 0) {
            int e = n == max ? E2BIG : errno;
            while (n > 0)
                close(fds[--n]);
            return -e;
        }
        n++;
    }
    return n;
}

int cgroup_open_self_attach(const struct cgroup *cg, int *fds, int max)
{
    return open_joins(cg, fds, max, false);
}

int cgroup_open_join(const struct cgroup *cg, int *fds, int max)
{
    return open_joins(cg, fds, max, true);
}

int cgroup_attach(struct cgroup *cg, pid_t pid, bool skip_v1, bool skip_v2)
{
    char num[32];
    int r;

    snprintf(num, sizeof(num), "%d", (int)pid);
    for (int h = 0; h < cg->ndirs; h++) {
        int v = cg->env->hier[h].version;
        if (!cg->dirs[h][0] || (skip_v2 && v == 2) || (skip_v1 && v == 1))
            continue;
        r = write_in(cg->dirs[h], "cgroup.procs", num);
        if (r < 0)
            return r;
    }
    return 0;
}

void cgroup_counters_open(struct cgroup *cg)
{
    const char *d;

    if ((d = dir_for(cg, CGROUP_RES_CPU)) && cg->cpu_fd < 0)
        cg->cpu_fd = open_in(d, is_v2(cg, CGROUP_RES_CPU) ? "cpu.stat" : "cpuacct.usage", O_RDONLY);
    if (!(d = dir_for(cg, CGROUP_RES_MEMORY)))
        return;
    if (cg->oom_fd < 0)
        cg->oom_fd = open_in(
            d, is_v2(cg, CGROUP_RES_MEMORY) ? "memory.events" : "memory.oom_control", O_RDONLY);
    /* v1's peak is reset by writing "0" to the file it is read from: one descriptor for both.
     * v2's is opened by the reset itself (the reset holds for that descriptor only). */
    if (!is_v2(cg, CGROUP_RES_MEMORY) && cg->peak_fd < 0)
        cg->peak_fd = open_in(d, "memory.max_usage_in_bytes", O_RDWR);
}

void cgroup_counters_close(struct cgroup *cg)
{
    int *fds[] = {&cg->cpu_fd, &cg->oom_fd, &cg->peak_fd};

    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
}

bool cgroup_attach_pending(const struct cgroup *cg, bool skip_v1, bool skip_v2)
{
    for (int h = 0; h < cg->ndirs; h++) {
        int v = cg->env->hier[h].version;
        if (cg->dirs[h][0] && !(skip_v2 && v == 2) && !(skip_v1 && v == 1))
            return true;
    }
    return false;
}

double cgroup_cpu_usage(const struct cgroup *cg)
{
    const char *d = dir_for(cg, CGROUP_RES_CPU);
    char buf[1024];

    if (!d)
        return -1;
    if (is_v2(cg, CGROUP_RES_CPU)) {
        if (read_counter(cg->cpu_fd, d, "cpu.stat", buf, sizeof(buf)) < 0)
            return -1;
        return (double)key_value(buf, "usage_usec") / 1e6;
    }
    if (read_counter(cg->cpu_fd, d, "cpuacct.usage", buf, sizeof(buf)) < 0)
        return -1;
    return (double)strtoull(buf, NULL, 10) / 1e9;
}

uint64_t cgroup_memory_peak_kb(const struct cgroup *cg)
{
    const char *d = dir_for(cg, CGROUP_RES_MEMORY);
    char buf[64];
    ssize_t n;

    if (!d)
        return 0;
    if (cg->peak_fd >= 0) {
        n = pread(cg->peak_fd, buf, sizeof(buf) - 1, 0);
        if (n <= 0)
            return 0;
        buf[n] = '\0';
    } else if (read_in(d,
                       cg->env->hier[cg->env->res_hier[CGROUP_RES_MEMORY]].version == 2
                           ? "memory.peak"
                           : "memory.max_usage_in_bytes",
                       buf, sizeof(buf)) < 0) {
        return 0;
    }
    return strtoull(buf, NULL, 10) / 1024;
}

uint64_t cgroup_memory_current_kb(const struct cgroup *cg)
{
    const char *d = dir_for(cg, CGROUP_RES_MEMORY);
    char buf[64];

    if (!d || read_in(d,
                      cg->env->hier[cg->env->res_hier[CGROUP_RES_MEMORY]].version == 2
                          ? "memory.current"
                          : "memory.usage_in_bytes",
                      buf, sizeof(buf)) < 0)
        return 0;
    return strtoull(buf, NULL, 10) / 1024;
}

uint64_t cgroup_pids_current(const struct cgroup *cg)
{
    const char *d = dir_for(cg, CGROUP_RES_PIDS);
    char buf[64];

    if (!d || read_in(d, "pids.current", buf, sizeof(buf)) < 0)
        return 0;
    return strtoull(buf, NULL, 10);
}

void cgroup_memory_peak_reset(struct cgroup *cg)
{
    const char *d = dir_for(cg, CGROUP_RES_MEMORY);
    char path[4200];

    if (!d)
        return;
    if (!is_v2(cg, CGROUP_RES_MEMORY)) {
        if (cg->peak_fd < 0 || pwrite(cg->peak_fd, "0", 1, 0) != 1)
            (void)write_in(d, "memory.max_usage_in_bytes", "0");
        return;
    }
    /* v2: a write to memory.peak resets the peak seen through that one fd (6.12+). The
     * fd stays open until cgroup_counters_close; a kernel that refuses the write keeps the
     * group-lifetime peak read by path. */
    if (cg->peak_fd < 0) {
        snprintf(path, sizeof(path), "%s/memory.peak", d);
        cg->peak_fd = open(path, O_RDWR | O_CLOEXEC);
        if (cg->peak_fd < 0)
            return;
    }
    if (pwrite(cg->peak_fd, "reset\n", 6, 0) != 6) {
        close(cg->peak_fd);
        cg->peak_fd = -1;
    }
}

void cgroup_close_dir_fd(struct cgroup *cg)
{
    if (cg->v2_fd >= 0) {
        close(cg->v2_fd);
        cg->v2_fd = -1;
    }
}

uint64_t cgroup_oom_kills(const struct cgroup *cg)
{
    const char *d = dir_for(cg, CGROUP_RES_MEMORY);
    char buf[1024];

    if (!d)
        return 0;
    if (is_v2(cg, CGROUP_RES_MEMORY)) {
        if (read_counter(cg->oom_fd, d, "memory.events", buf, sizeof(buf)) < 0)
            return 0;
        return key_value(buf, "oom_kill");
    }
    if (read_counter(cg->oom_fd, d, "memory.oom_control", buf, sizeof(buf)) < 0)
        return 0;
    return key_value(buf, "oom_kill");
}

/* procs_empty(dir) — true when the group's cgroup.procs lists no process. */
/* group_empty(cg, h) — no process left in the group of hierarchy h: v2 says so in
 * cgroup.events ("populated 0", which also covers descendants), v1 by an empty
 * cgroup.procs. */
static bool group_empty(const struct cgroup *cg, int h)
{
    char buf[256];

    if (cg->env->hier[h].version == 2 &&
        read_in(cg->dirs[h], "cgroup.events", buf, sizeof(buf)) > 0)
        return strstr(buf, "populated 0") != NULL;
    return read_in(cg->dirs[h], "cgroup.procs", buf, sizeof(buf)) <= 0;
}

/* kill_listed(dir) — SIGKILL each pid in cgroup.procs (v1 has no cgroup.kill). The pids
 * are read from a file only the supervisor can write, so they are trustworthy. */
static void kill_listed(const char *dir)
{
    char path[4200], line[64];
    FILE *f;

    snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
    f = fopen(path, "re");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        long pid = strtol(line, NULL, 10);
        if (pid > 1)
            kill((pid_t)pid, SIGKILL);
    }
    fclose(f);
}

int cgroup_kill(struct cgroup *cg)
{
    const char *d = dir_for(cg, CGROUP_RES_KILL);

    if (d && write_in(d, "cgroup.kill", "1") == 0)
        return 0;
    for (int h = 0; h < cg->ndirs; h++)
        if (cg->dirs[h][0])
            kill_listed(cg->dirs[h]);
    return 0;
}

int cgroup_wait_empty(struct cgroup *cg, double timeout_s)
{
    double deadline = util_now() + timeout_s;
    struct timespec nap = {0, 200000};

    for (;;) {
        bool empty = true;
        for (int h = 0; h < cg->ndirs && empty; h++)
            if (cg->dirs[h][0] && !group_empty(cg, h))
                empty = false;
        if (empty)
            return 0;
        if (util_now() > deadline)
            return -ETIMEDOUT;
        cgroup_kill(cg);
        nanosleep(&nap, NULL);
        if (nap.tv_nsec < 20000000)
            nap.tv_nsec *= 2;
    }
}

int cgroup_destroy(struct cgroup *cg)
{
    int result = 0;

    if (cg->v2_fd >= 0) {
        close(cg->v2_fd);
        cg->v2_fd = -1;
    }
    cgroup_counters_close(cg);
    for (int h = cg->ndirs - 1; h >= 0; h--) {
        struct timespec nap = {0, 100000};
        int tries = 0;
        if (!cg->dirs[h][0])
            continue;
        while (rmdir(cg->dirs[h]) < 0) {
            if (errno == ENOENT)
                break;
            if (errno != EBUSY || ++tries > 200) {
                result = -errno;
                break;
            }
            nanosleep(&nap, NULL);
        }
        cg->dirs[h][0] = '\0';
    }
    cg->ndirs = 0;
    return result;
}

int cgroup_env_reclaim(const struct cgroup_env *env)
{
    int removed = 0;

    for (int h = 0; h < env->nhier; h++) {
        DIR *d = opendir(env->hier[h].base);
        struct dirent *e;
        if (!d)
            continue;
        while ((e = readdir(d))) {
            char path[4400];
            unsigned n;
            int pid;
            if (sscanf(e->d_name, "sb-%d-%u", &pid, &n) != 2 || pid <= 0)
                continue;
            if (kill(pid, 0) == 0 || errno != ESRCH)
                continue; /* its owner lives (or is not ours to judge) */
            snprintf(path, sizeof(path), "%s/%s", env->hier[h].base, e->d_name);
            if (rmdir(path) == 0)
                removed++;
        }
        closedir(d);
    }
    return removed;
}
