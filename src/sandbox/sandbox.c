/*
 * sandbox.c — the supervisor side of a sandbox (see sandbox.h for the contract).
 *
 * sandbox_create clones init with clone3 into fresh user, pid, mount, net, ipc and uts
 * namespaces (init adds the cgroup namespace once it sits in its group), writes the id
 * maps, attaches it to its cgroup, sends GO and waits for READY.
 *
 * sandbox_exec sends one exec request and then supervises: it drains stdout and stderr
 * into capped buffers, watches init's control socket, and wakes for the limits
 * (the wall clock, and the group's CPU time, polled no later than the earliest moment the
 * CPU limit could be reached on all cores). The verdict is computed only from what the
 * supervisor owns: the wait status init reports, the cgroup's counters and its own clock.
 *
 * Descriptors: a live sandbox holds exactly one in the supervisor, its control socket, so that
 * one server holds thousands of idle sessions under one RLIMIT_NOFILE. No pidfd: init is the
 * supervisor's child until teardown reaps it (nothing in the process waits for any child but
 * by pid, nor ignores SIGCHLD), so its pid cannot be reused before that and kill(init_pid) is
 * as exact as a pidfd; its death shows as POLLHUP on the control socket, whose other end only
 * processes of init's pid namespace ever hold (init's own copy is at 3, O_CLOEXEC in the
 * payloads, closed in the keepers), and they all die with init. No cgroup directory: it is
 * needed only for CLONE_INTO_CGROUP and closed once init is cloned. No scratch descriptor:
 * asked of init for each operation that needs it (sandbox__scratch_open).
 */
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <limits.h>
#include <stdio.h>

const struct sandbox_limit_range sandbox_limit_ranges[LIM_COUNT] = {
    [LIM_CPU] = {"cpu-time", 0.01, 3600, 10},    [LIM_WALL] = {"wall-time", 0.01, 86400, 20},
    [LIM_MEMORY] = {"memory", 8, 1 << 20, 512},  [LIM_PIDS] = {"pids", 1, 32768, 64},
    [LIM_OUTPUT] = {"output", 0, 1 << 20, 1024}, [LIM_DISK] = {"disk", 1, 1 << 20, 64},
};

struct sandbox {
    const struct sandbox_runtime *rt;
    const struct image *img;
    struct sandbox_limits limits;
    int cancel_fd; /* rt's, unless sandbox_set_cancel_fd said otherwise */
    struct cgroup cg;
    bool has_cg;
    pid_t init_pid; /* our child until teardown reaps it: see the top of the file */
    int ctl;
    /* CTL_PAUSE and CTL_RESUME carry a sequence number in mode that init's CTL_PAUSED echoes:
     * the answer sandbox__pause awaits (0: none). A late answer to one it gave up on is dropped
     * by recv_ctl, never taken for another request's reply. */
    uint32_t pause_seq, pause_awaited;
    /* The scratch tmpfs's root as READY handed it over, before any payload ran: what every
     * later copy init hands over must still be (sandbox__scratch_open). */
    bool has_scratch;
    dev_t scratch_dev;
    ino_t scratch_ino;
    uint64_t scratch_mnt;
    int scratch_in_init; /* init's descriptor number of it (READY), -1 when unknown */
    uint64_t peak_kb;    /* the most memory seen charged before a reset of the group's peak */
    bool init_reaped;
    int init_status;
    bool job;  /* a fork server's job (sandbox__job_new): its records say so */
    double t0; /* creation start, for trace() */
    /* sandbox_discard's teardown when not sandbox_destroy now (sandbox__set_discard) */
    void (*discard)(void *ctx, struct sandbox *sb);
    void *discard_ctx;
};

/* trace(sb, phase) — with rt->trace, one line per phase on stderr: milliseconds since the
 * sandbox's creation began. For finding where start-up time goes. */
static void trace(const struct sandbox *sb, const char *phase)
{
    if (sb->rt->trace)
        fprintf(stderr, "crucible: trace %8.3f ms  %s\n", (util_now() - sb->t0) * 1e3, phase);
}

void sandbox_limits_default(struct sandbox_limits *l)
{
    l->cpu_time = sandbox_limit_ranges[LIM_CPU].def;
    l->wall_time = sandbox_limit_ranges[LIM_WALL].def;
    l->memory_mb = (uint64_t)sandbox_limit_ranges[LIM_MEMORY].def;
    l->pids = (uint64_t)sandbox_limit_ranges[LIM_PIDS].def;
    l->output_kb = (uint64_t)sandbox_limit_ranges[LIM_OUTPUT].def;
    l->disk_mb = (uint64_t)sandbox_limit_ranges[LIM_DISK].def;
    l->loopback = false;
    l->writable_root = false;
}

/* own_args(rt) — where this process's argv and environment strings are (fields 48 to 51
 * of /proc/self/stat, after the command name in parentheses, which may hold anything). */
static void own_args(struct sandbox_runtime *rt)
{
    char buf[2048], *p;
    unsigned long long v[4];

    if (util_read_small("/proc/self/stat", buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')))
        return;
    p++;
    for (int field = 3; field < 48 && p; field++) /* p points before field `field` */
        p = strchr(p + 1, ' ');
    if (!p || sscanf(p, " %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3]) != 4 || v[1] < v[0] ||
        v[3] < v[2])
        return;
    rt->arg_start = (uintptr_t)v[0];
    rt->arg_end = (uintptr_t)v[1];
    rt->env_start = (uintptr_t)v[2];
    rt->env_end = (uintptr_t)v[3];
}

int sandbox_runtime_init(struct sandbox_runtime *rt, struct errbuf *err)
{
    int r;

    memset(rt, 0, sizeof(*rt));
    rt->root = geteuid() == 0;
    rt->outer_uid = rt->root ? SANDBOX_HOST_ID_BASE : geteuid();
    rt->outer_gid = rt->root ? SANDBOX_HOST_ID_BASE : getegid();
    rt->cancel_fd = -1;
    rt->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (rt->ncpu < 1)
        rt->ncpu = 1;
    own_args(rt);
    signal(SIGPIPE, SIG_IGN);
    r = filter_build(&rt->filter, err);
    if (r < 0)
        return r;
    cgroup_env_init(&rt->cg);
    cgroup_env_reclaim(&rt->cg); /* what a crashed crucible left behind */
    return 0;
}

void sandbox_runtime_release(struct sandbox_runtime *rt)
{
    filter_release(&rt->filter);
}

void sandbox_runtime_describe(const struct sandbox_runtime *rt, FILE *f)
{
    const struct cgroup_env *cg = &rt->cg;
    bool mem = cgroup_env_has(cg, CGROUP_RES_MEMORY), pids = cgroup_env_has(cg, CGROUP_RES_PIDS);
    bool cpu = cgroup_env_has(cg, CGROUP_RES_CPU), kill = cgroup_env_has(cg, CGROUP_RES_KILL);

    if (rt->root)
        fprintf(f,
                "identity:   root; payload runs as uid %d inside, host uid %u + pid of its "
                "init (one per sandbox)\n",
                SANDBOX_UID, (unsigned)SANDBOX_HOST_ID_BASE);
    else
        fprintf(f,
                "identity:   unprivileged (user namespace); payload runs as uid %d inside, "
                "host uid %u\n",
                SANDBOX_UID, (unsigned)rt->outer_uid);
    fprintf(f, "namespaces: user pid mount net ipc uts cgroup\n");
    fprintf(f, "seccomp:    %zu deny rules, foreign architectures killed (%u BPF instructions)\n",
            filter_rule_count(), (unsigned)rt->filter.len);
    fprintf(f, "cpu time:   %s\n",
            cpu ? (cgroup_env_backend(cg, CGROUP_RES_CPU)[1] == '2'
                       ? "whole process tree (cgroup v2 cpu.stat) + RLIMIT_CPU per process"
                       : "whole process tree (cgroup v1 cpuacct) + RLIMIT_CPU per process")
                : "per process only (RLIMIT_CPU); tree total from reaped children");
    fprintf(f, "wall time:  supervisor's monotonic clock\n");
    fprintf(f, "memory:     %s\n",
            mem ? (cgroup_env_backend(cg, CGROUP_RES_MEMORY)[1] == '2'
                       ? "whole process tree (cgroup v2 memory.max, swap 0), OOM reported"
                       : "whole process tree (cgroup v1 memory+memsw), OOM reported")
                : "per process only (RLIMIT_AS fallback); OOM not detectable");
    fprintf(f, "pids:       %s\n",
            pids ? (cgroup_env_backend(cg, CGROUP_RES_PIDS)[1] == '2' ? "cgroup v2 pids.max"
                                                                      : "cgroup v1 pids.max")
                 : "RLIMIT_NPROC fallback (counts every process of the host uid)");
    fprintf(f, "teardown:   %s\n",
            kill ? "pid namespace + cgroup v2 cgroup.kill, waits until the group is empty"
                 : "pid namespace + kill of each listed process, waits until empty");
    fprintf(f, "output:     per-stream cap kept by the supervisor\n");
    fprintf(f, "disk:       size- and inode-limited scratch tmpfs; RLIMIT_FSIZE\n");
    for (int h = 0; h < cg->nhier; h++)
        fprintf(f, "cgroup:     v%d %s\n", cg->hier[h].version, cg->hier[h].base);
}

bool sandbox_dest_valid(const char *dest, struct errbuf *err)
{
    const char *p = dest;
    size_t total;

    if (!dest || !*dest)
        return errbuf_set(err, "empty destination path"), false;
    if (dest[0] == '/')
        return errbuf_set(err, "destination '%.200s' must be relative to the work directory", dest),
               false;
    /* "/work/DEST" with its NUL must fit PATH_MAX (the control message holds as much) */
    total = strlen(dest);
    if (total + sizeof("/work/") > PATH_MAX)
        return errbuf_set(err,
                          "destination '%.60s...' is %zu bytes long: with '/work/' it exceeds "
                          "PATH_MAX (%d bytes)",
                          dest, total, PATH_MAX),
               false;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
            return errbuf_set(err,
                              "destination '%.200s' must stay inside the work directory (no "
                              "'..', '.' or empty components)",
                              dest),
                   false;
        if (len > NAME_MAX)
            return errbuf_set(err,
                              "destination '%.60s...' has a name of %zu bytes: more than "
                              "NAME_MAX (%d bytes)",
                              dest, len, NAME_MAX),
                   false;
        p += len;
        if (*p == '/')
            p++;
        if (slash && !*p)
            return errbuf_set(err, "destination '%.200s' names a directory", dest), false;
    }
    return true;
}

/* dest_rank(c) — the end of the string first, then '/', then every other byte in order. */
static int dest_rank(unsigned char c)
{
    return c == '\0' ? 0 : c == '/' ? 1 : c + 1;
}

/* dest_cmp — byte order with '/' before every other byte, so that every path below a
 * directory 'a' ("a/...") sorts right after "a" and before siblings such as "a-b". */
static int dest_cmp(const void *pa, const void *pb)
{
    const unsigned char *a = (const unsigned char *)((const struct sandbox_dest *)pa)->path;
    const unsigned char *b = (const unsigned char *)((const struct sandbox_dest *)pb)->path;

    for (; *a && *a == *b; a++, b++)
        ;
    return dest_rank(*a) - dest_rank(*b);
}

/* slashes(s, n) — the '/' among the first n bytes of s: the directories a path needs. */
static size_t slashes(const char *s, size_t n)
{
    size_t k = 0;

    for (size_t i = 0; i < n && s[i]; i++)
        k += s[i] == '/';
    return k;
}

bool sandbox_dests_check(const struct sandbox_dest *dests, size_t n, uint64_t disk_mb,
                         struct errbuf *err)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = 0, inodes = 0;
    struct sandbox_dest *d;
    bool fine = true;

    for (size_t i = 0; i < n; i++)
        if (!sandbox_dest_valid(dests[i].path, err))
            return false;
    d = malloc((n ? n : 1) * sizeof(*d));
    if (!d)
        return errbuf_set(err, "out of memory"), false;
    memcpy(d, dests, n * sizeof(*d));
    qsort(d, n, sizeof(*d), dest_cmp);
    /* In this order a path's clash, if any, is with its neighbour: the same path, or a
     * path "X/..." right after a file X. And the paths below a directory are contiguous, so
     * a path needs new directories only past what it shares with the previous one. */
    for (size_t i = 0; i < n && fine; i++) {
        const struct sandbox_dest *a = i ? &d[i - 1] : NULL, *b = &d[i];
        size_t common = 0;
        if (a) {
            size_t la = strlen(a->path);
            while (a->path[common] && a->path[common] == b->path[common])
                common++;
            if (strcmp(a->path, b->path) == 0) {
                const struct sandbox_dest *role = a->what ? a : b;
                if (role->what)
                    errbuf_set(err, "'%.200s' is %s", a->path, role->what);
                else
                    errbuf_set(err, "'%.200s' is given twice", a->path);
                fine = false;
            } else if (common == la && b->path[la] == '/') {
                errbuf_set(err, "'%.200s' is %s, so nothing can be put below it ('%.200s')",
                           a->path, a->what ? a->what : "a file", b->path);
                fine = false;
            }
        }
        inodes += 1 + slashes(b->path, SIZE_MAX) - slashes(b->path, common);
        pages += (b->len + page - 1) / page;
    }
    free(d);
    /* The scratch tmpfs (rootfs.c): disk_mb MiB of pages, disk_mb * 256 + 64 inodes, three
     * of them its root, /work and /tmp. What does not fit would fail to be put (ENOSPC). */
    if (fine && disk_mb && pages > (disk_mb << 20) / page) {
        errbuf_set(err,
                   "the files take %zu KiB in %zu-byte pages: more than the scratch disk of "
                   "%llu MB",
                   pages * (page >> 10), page, (unsigned long long)disk_mb);
        fine = false;
    }
    if (fine && disk_mb && inodes + 3 > disk_mb * 256 + 64) {
        errbuf_set(err,
                   "the files and their directories are %zu entries: more than the %llu the "
                   "scratch disk of %llu MB holds",
                   inodes, (unsigned long long)(disk_mb * 256 + 64 - 3),
                   (unsigned long long)disk_mb);
        fine = false;
    }
    return fine;
}

bool sandbox_argv_fits(char *const *argv, char *const *env, struct errbuf *err)
{
    size_t max_str = 32 * (size_t)sysconf(_SC_PAGESIZE), count, total, prog;

    if (!argv || !argv[0])
        return errbuf_set(err, "no program to run"), false;
    /* the path execve copies too: argv[0], or the longest one the search tries */
    prog = strlen(argv[0]) + (strchr(argv[0], '/') ? 0 : strlen(EXEC_SEARCH_LONGEST));
    if (prog >= PATH_MAX)
        return errbuf_set(err, "the program's path is %zu bytes: more than PATH_MAX (%d bytes)",
                          prog, PATH_MAX),
               false;
    total = prog + 1 + sandbox__fixed_env(env, &count);
    for (int pass = 0; pass < 2; pass++) {
        char *const *v = pass ? env : argv;
        for (size_t i = 0; v && v[i]; i++) {
            size_t len = strlen(v[i]) + 1;
            if (len > max_str)
                return errbuf_set(err,
                                  "%s %zu is %zu bytes: the kernel takes at most %zu KiB per "
                                  "%s (MAX_ARG_STRLEN)",
                                  pass ? "environment entry" : "argument", i, len - 1,
                                  max_str >> 10, pass ? "entry" : "argument"),
                       false;
            total += len;
            count++;
        }
    }
    total += count * sizeof(char *);
    if (total > EXEC_ARG_TOTAL)
        return errbuf_set(err,
                          "the arguments and environment take %zu bytes: the kernel's execve "
                          "takes at most %zu MiB (E2BIG)",
                          total, EXEC_ARG_TOTAL >> 20),
               false;
    return true;
}

/* write_maps(rt, pid) — uid/gid maps of init's user namespace: in-sandbox SANDBOX_UID is
 * the outer id. As root, every sandbox gets host ids of its own (the base plus init's pid,
 * unique while the sandbox lives), so per-user kernel limits such as inotify instances
 * or RLIMIT_NPROC never couple two sandboxes; setgroups stays allowed so init can drop
 * root's groups. Unprivileged, the caller's own ids are all a user namespace may map. */
static int write_maps(const struct sandbox_runtime *rt, pid_t pid)
{
    char path[64], map[64];
    unsigned uid = (unsigned)rt->outer_uid, gid = (unsigned)rt->outer_gid;
    int r;

    if (rt->root) {
        uid = SANDBOX_HOST_ID_BASE + (unsigned)pid;
        gid = uid;
    }
    if (!rt->root) {
        snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
        r = util_write_file(path, "deny");
        if (r < 0 && r != -ENOENT)
            return r;
    }
    snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
    snprintf(map, sizeof(map), "%d %u 1\n", SANDBOX_UID, gid);
    r = util_write_file(path, map);
    if (r < 0)
        return r;
    snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
    snprintf(map, sizeof(map), "%d %u 1\n", SANDBOX_UID, uid);
    return util_write_file(path, map);
}

/* recv_ctl(sb, msg, fds, nfds, timeout_s, cancellable) — the next message from init, with any
 * fds it carries (see sandbox__ctl_recv), within a deadline; -ECANCELED when cancellable and
 * the cancel fd turns readable first. */
static int recv_ctl(struct sandbox *sb, struct ctl_msg *m, int *fds, int *nfds, double timeout_s,
                    bool cancellable)
{
    double deadline = util_now() + timeout_s;

    for (;;) {
        struct pollfd pf[2] = {{.fd = sb->ctl, .events = POLLIN},
                               {.fd = cancellable ? sb->cancel_fd : -1, .events = POLLIN}};
        int ms = (int)ceil((deadline - util_now()) * 1000);
        if (ms <= 0)
            return -ETIMEDOUT;
        int n = poll(pf, 2, ms);
        if (n < 0 && errno != EINTR)
            return -errno;
        if (n > 0 && (pf[1].revents & POLLIN))
            return -ECANCELED;
        if (n > 0) {
            int r = sandbox__ctl_recv(sb->ctl, m, fds, nfds);
            if (r == 0 && m->type == CTL_PAUSED && m->mode != sb->pause_awaited)
                continue; /* a stale answer (sandbox.c's pause_awaited) */
            return r;
        }
    }
}

/* recv_reply_fds(sb, msg, fds, nfds, timeout_s) — recv_ctl, cancellable. */
static int recv_reply_fds(struct sandbox *sb, struct ctl_msg *m, int *fds, int *nfds,
                          double timeout_s)
{
    return recv_ctl(sb, m, fds, nfds, timeout_s, true);
}

static int recv_reply(struct sandbox *sb, struct ctl_msg *m, double timeout_s)
{
    return recv_reply_fds(sb, m, NULL, NULL, timeout_s);
}

/* idmap_hold(arg) — the idmap helper's whole life: wait to be killed. */
static int idmap_hold(void *arg)
{
    (void)arg;
    for (;;)
        syscall(SYS_pause);
    return 0;
}

/* idmap_userns(id) — a user namespace mapping uid and gid 0 to host id `id` (the sandbox
 * user's), as an fd, or -errno. A helper that shares our memory (no page tables copied)
 * holds it while its maps are written; it is killed and reaped before this returns. */
static int idmap_userns(unsigned id)
{
    enum { STACK = 16384 };
    char path[64], map[32];
    int pidfd = -1, ns = -1, r = 0;
    char *stack;
    pid_t pid;

    stack =
        mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        return -errno;
    pid = clone(idmap_hold, stack + STACK, CLONE_NEWUSER | CLONE_VM | CLONE_PIDFD, NULL, &pidfd);
    if (pid < 0) {
        r = -errno;
        goto out_unmap;
    }
    snprintf(map, sizeof(map), "0 %u 1\n", id);
    snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
    r = util_write_file(path, map);
    snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
    if (r == 0)
        r = util_write_file(path, map);
    snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
    if (r == 0 && (ns = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        r = -errno;
    syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
    while (waitid(P_PIDFD, (id_t)pidfd, NULL, WEXITED | __WCLONE) < 0 && errno == EINTR)
        ;
    close(pidfd);
out_unmap:
    munmap(stack, STACK);
    return r < 0 ? r : ns;
}

/* send_lowers(sb, err) — for a writable root as root: each directory of the image as a
 * detached, read-only mount idmapped so that the image's uid and gid 0 are the sandbox
 * user's host id (copy-up keeps a file's owner, and a user namespace can own only files of
 * ids it maps), sent to init before GO. Unprivileged, init clones the directories itself
 * (only what the caller's uid owns is then writable). 0 or -errno with err set. */
static int send_lowers(struct sandbox *sb, struct errbuf *err)
{
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                          MOUNT_ATTR_NODEV};
    const struct image *img = sb->img;
    int imgfd, ns, r = 0;

    if (!sb->limits.writable_root || !sb->rt->root)
        return 0;
    ns = idmap_userns(SANDBOX_HOST_ID_BASE + (unsigned)sb->init_pid);
    if (ns < 0)
        return errbuf_set(err, "cannot make the id mapping of a writable root: %s", strerror(-ns)),
               ns;
    attr.userns_fd = (uint64_t)ns;
    imgfd = open(img->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (imgfd < 0) {
        r = -errno;
        errbuf_set(err, "cannot open image root '%s': %s", img->root, strerror(errno));
        goto out_ns;
    }
    /* An image that is a whole root filesystem is one layer (0): its root; else one per
     * directory entry, numbered as the entries are. */
    for (int i = 0; i < (img->whole_root ? 1 : img->nentries) && r == 0; i++) {
        const char *path = img->whole_root ? "" : img->entries[i].path;
        struct ctl_msg m;
        int t;
        if (!img->whole_root && img->entries[i].kind != IMAGE_ENTRY_DIR)
            continue;
        t = (int)syscall(SYS_open_tree, imgfd, path,
                         OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW |
                             (img->whole_root ? AT_EMPTY_PATH : 0));
        if (t < 0 || syscall(SYS_mount_setattr, t, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
                             sizeof(attr)) < 0) {
            r = -errno;
            errbuf_set(err, "cannot map '/%s' of image '%s' for a writable root: %s", path,
                       img->name, strerror(errno));
        } else {
            memset(&m, 0, sizeof(m));
            m.type = CTL_LOWER;
            m.pid = i;
            if ((r = sandbox__ctl_send(sb->ctl, &m, &t, 1)) < 0)
                errbuf_set(err, "cannot hand the writable root's layers to init: %s", strerror(-r));
        }
        if (t >= 0)
            close(t);
    }
    close(imgfd);
out_ns:
    close(ns);
    return r;
}

/* scratch_identity(fd, dev, ino, mnt) — the device, inode and mount id of fd. 0 or -errno. */
static int scratch_identity(int fd, dev_t *dev, ino_t *ino, uint64_t *mnt)
{
    struct statx stx;

    if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO | STATX_MNT_ID, &stx) < 0)
        return -errno;
    if (!(stx.stx_mask & STATX_MNT_ID))
        return -ENOTSUP;
    *dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
    *ino = (ino_t)stx.stx_ino;
    *mnt = stx.stx_mnt_id;
    return 0;
}

/* note_scratch(sb, fd) — remembers what READY's scratch descriptor is (fd stays the
 * caller's). A scratch whose identity cannot be known is treated as none. */
static void note_scratch(struct sandbox *sb, int fd)
{
    sb->has_scratch =
        scratch_identity(fd, &sb->scratch_dev, &sb->scratch_ino, &sb->scratch_mnt) == 0;
}

static pid_t clone_init(struct sandbox *sb)
{
    struct clone_args args;
    uint64_t flags =
        CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;

    memset(&args, 0, sizeof(args));
    if (sb->has_cg && sb->cg.v2_fd >= 0) {
        flags |= CLONE_INTO_CGROUP;
        args.cgroup = (uint64_t)sb->cg.v2_fd;
    }
    args.flags = flags;
    args.exit_signal = SIGCHLD;
    return (pid_t)syscall(SYS_clone3, &args, sizeof(args));
}

/* sandbox_alloc(rt, img, limits, err) — a struct sandbox with nothing made yet (no cgroup,
 * socket or init). NULL with err set. */
static struct sandbox *sandbox_alloc(const struct sandbox_runtime *rt, const struct image *img,
                                     const struct sandbox_limits *limits, struct errbuf *err)
{
    struct sandbox *sb = calloc(1, sizeof(*sb));

    if (!sb) {
        errbuf_set(err, "out of memory");
        return NULL;
    }
    sb->rt = rt;
    sb->cancel_fd = rt->cancel_fd;
    sb->t0 = util_now();
    sb->img = img;
    sb->limits = *limits;
    sb->ctl = -1;
    sb->scratch_in_init = -1;
    sb->init_pid = -1;
    return sb;
}

struct sandbox *sandbox_create(const struct sandbox_runtime *rt, const struct image *img,
                               const struct sandbox_limits *limits, struct errbuf *err)
{
    return sandbox__create(rt, img, limits, false, err);
}

struct sandbox *sandbox__create(const struct sandbox_runtime *rt, const struct image *img,
                                const struct sandbox_limits *limits, bool zygote,
                                struct errbuf *err)
{
    struct sandbox *sb = sandbox_alloc(rt, img, limits, err);
    struct ctl_msg m;
    int sv[2], r, attach_fds[CGROUP_MAX_HIER], nattach = 0, scratch = -1, nscratch = 1;
    bool self_attached = false, cloned_into_v2, attach_pending;

    if (!sb)
        return NULL;
    if (rt->cg.nhier > 0) {
        /* pids.max counts init too: the payload's processes get exactly limits->pids. */
        r = cgroup_create(&sb->cg, &rt->cg, limits->memory_mb << 20, limits->pids + 1, err);
        if (r < 0)
            goto out_free;
        sb->has_cg = true;
    }
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        errbuf_set(err, "cannot create control socket: %s%s", strerror(errno),
                   errno == EMFILE ? " (the descriptor limit, RLIMIT_NOFILE, is reached: one "
                                     "descriptor per live sandbox)"
                                   : "");
        goto out_cgroup;
    }
    if (sb->has_cg) {
        nattach = cgroup_open_self_attach(&sb->cg, attach_fds, CGROUP_MAX_HIER);
        if (nattach < 0)
            nattach = 0; /* fall back to attaching by pid below */
        self_attached = nattach > 0;
    }
    trace(sb, "cgroup made");
    cloned_into_v2 = sb->has_cg && sb->cg.v2_fd >= 0;
    sb->init_pid = clone_init(sb);
    if (sb->init_pid == 0) {
        struct init_params p = {.ctl_fd = sv[1],
                                .root = rt->root,
                                .img = img,
                                .limits = &sb->limits,
                                .filter = &rt->filter,
                                .nattach = nattach,
                                .rt = rt,
                                .zygote = zygote};
        memcpy(p.attach_fds, attach_fds, sizeof(attach_fds));
        sandbox__init_main(&p);
    }
    close(sv[1]);
    for (int i = 0; i < nattach; i++)
        close(attach_fds[i]);
    if (sb->has_cg)
        cgroup_close_dir_fd(&sb->cg); /* its one use, CLONE_INTO_CGROUP, is done */
    sb->ctl = sv[0];
    if (sb->init_pid < 0) {
        errbuf_set(err, "cannot create namespaces: %s%s", strerror(errno),
                   errno == EPERM || errno == ENOSPC
                       ? " (are unprivileged user namespaces enabled?)"
                       : "");
        goto out_close;
    }
    trace(sb, "cloned");
    r = write_maps(rt, sb->init_pid);
    if (r < 0) {
        errbuf_set(err, "cannot write user namespace maps: %s", strerror(-r));
        goto out_kill;
    }
    /* init keeps the default OOM score: protecting it would make the payload, which
     * inherits the score, unkillable, and an OOM kill of init is reported as memory_limit
     * all the same (the verdict reads the group's OOM counter first). */
    /* init has attached itself to its v1 groups (cheap, see cgroup_open_self_attach) and
     * was cloned into its v2 group; attaching by pid is only the fallback. GO goes first
     * so that init builds its root filesystem meanwhile. */
    r = send_lowers(sb, err);
    if (r < 0)
        goto out_kill;
    trace(sb, "lower layers sent");
    memset(&m, 0, sizeof(m));
    m.type = CTL_GO;
    attach_pending = sb->has_cg && cgroup_attach_pending(&sb->cg, self_attached, cloned_into_v2);
    if (!attach_pending)
        m.mode = CTL_GO_CGROUPS_FINAL;
    r = sandbox__ctl_send(sb->ctl, &m, NULL, 0);
    if (r == 0 && attach_pending &&
        (r = cgroup_attach(&sb->cg, sb->init_pid, self_attached, cloned_into_v2)) < 0) {
        errbuf_set(err, "cannot attach sandbox to its cgroup: %s", strerror(-r));
        goto out_kill;
    }
    if (r == 0)
        r = recv_reply_fds(sb, &m, &scratch, &nscratch, SANDBOX_INIT_WAIT_S);
    if (r < 0) {
        errbuf_set(err, "sandbox init did not start: %s", strerror(-r));
        goto out_kill;
    }
    if (m.type == CTL_READY && nscratch == 1) {
        note_scratch(sb, scratch);
        sb->scratch_in_init = m.pid;
    }
    if (nscratch == 1)
        close(scratch);
    if (m.type != CTL_READY) {
        m.text[sizeof(m.text) - 1] = '\0';
        if (m.err)
            errbuf_set(err, "sandbox setup failed: %s: %s", m.text, strerror(m.err));
        else
            errbuf_set(err, "sandbox setup failed: %s", m.text);
        goto out_kill;
    }
    trace(sb, "init ready");
    return sb;

out_kill:
    sandbox_destroy(sb, NULL);
    return NULL;
out_close:
    close(sv[0]);
out_cgroup:
    if (sb->has_cg)
        cgroup_destroy(&sb->cg);
out_free:
    free(sb);
    return NULL;
}

int sandbox_put_file(struct sandbox *sb, const char *dest, int fd, mode_t mode, struct errbuf *err)
{
    struct ctl_msg m;
    int r;

    if (!sandbox_dest_valid(dest, err))
        return -EINVAL;
    memset(&m, 0, sizeof(m));
    m.type = CTL_PUT;
    m.mode = mode & (07777 | SANDBOX_PUT_LOCKED);
    snprintf(m.text, sizeof(m.text), "%s", dest);
    r = sandbox__ctl_send(sb->ctl, &m, &fd, 1);
    if (r == 0)
        r = recv_reply(sb, &m, 60.0);
    if (r < 0)
        return errbuf_set(err, "cannot copy '%s' into the sandbox: %s", dest, strerror(-r)), r;
    if (m.type != CTL_PUT_DONE)
        return errbuf_set(err, "unexpected reply from sandbox init"), -EPROTO;
    if (m.err) {
        m.text[sizeof(m.text) - 1] = '\0';
        errbuf_set(err, "%s", m.text);
        return -m.err;
    }
    return 0;
}

int sandbox_memfd(const char *data, size_t len)
{
    int fd = memfd_create("crucible-data", MFD_CLOEXEC);
    int r;

    if (fd < 0)
        return -errno;
    r = util_write_all(fd, data, len);
    if (r == 0 && lseek(fd, 0, SEEK_SET) < 0)
        r = -errno;
    if (r < 0) {
        close(fd);
        return r;
    }
    return fd;
}

int sandbox_put_data(struct sandbox *sb, const char *dest, const char *data, size_t len,
                     mode_t mode, struct errbuf *err)
{
    int fd = sandbox_memfd(data, len), r;

    if (fd < 0)
        return errbuf_set(err, "cannot stage '%s': %s", dest, strerror(-fd)), fd;
    r = sandbox_put_file(sb, dest, fd, mode, err);
    close(fd);
    return r;
}

int sandbox_get_file(struct sandbox *sb, const char *path, size_t max, char **data, size_t *len,
                     struct errbuf *err)
{
    struct ctl_msg m;
    struct stat st;
    int fd = -1, nfds = 1, r;

    *data = NULL;
    *len = 0;
    if (!sandbox_dest_valid(path, err))
        return -EINVAL;
    memset(&m, 0, sizeof(m));
    m.type = CTL_GET;
    snprintf(m.text, sizeof(m.text), "%s", path);
    r = sandbox__ctl_send(sb->ctl, &m, NULL, 0);
    if (r == 0)
        r = recv_reply_fds(sb, &m, &fd, &nfds, 60.0);
    if (r < 0)
        return errbuf_set(err, "cannot read '%s' from the sandbox: %s", path, strerror(-r)), r;
    if (m.type != CTL_GOT || (m.err == 0 && nfds != 1)) {
        if (nfds == 1)
            close(fd);
        return errbuf_set(err, "unexpected reply from sandbox init"), -EPROTO;
    }
    if (m.err) {
        m.text[sizeof(m.text) - 1] = '\0';
        errbuf_set(err, "%s", m.text);
        return -m.err;
    }
    /* Init checked too, but the file is the sandbox's: trust only what we see ourselves. */
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return errbuf_set(err, "'%s' is not a regular file", path), -EINVAL;
    }
    r = util_read_fd(fd, data, len, max);
    close(fd);
    if (r == -EFBIG)
        return errbuf_set(err, "'%s' is larger than %zu bytes", path, max), r;
    if (r < 0)
        return errbuf_set(err, "cannot read '%s': %s", path, strerror(-r)), r;
    return 0;
}

/* cpu_rlimit(sb) — the payload's RLIMIT_CPU soft limit, seconds: with whole-tree accounting, a
 * per-process backstop one second past the limit; without it, the limit itself (whole
 * seconds: the kernel's granularity). */
static rlim_t cpu_rlimit(const struct sandbox *sb)
{
    return (rlim_t)ceil(sb->limits.cpu_time) +
           (cgroup_env_has(&sb->rt->cg, CGROUP_RES_CPU) ? 1 : 0);
}

/* image_env_applies(entry, env) — false when the caller's env sets the name of the
 * image's "K=V" entry (the caller's value wins), true when the image's entry applies. */
static bool image_env_applies(const char *entry, char *const *env)
{
    const char *eq = strchr(entry, '=');
    size_t klen = eq ? (size_t)(eq - entry) + 1 : strlen(entry);

    for (char *const *e = env; e && *e; e++)
        if (strncmp(*e, entry, klen) == 0)
            return false;
    return eq != NULL;
}

/* image_env_next(img, e) — e when it starts a whole, NUL-terminated entry of img->env
 * (within env_len and the buffer), else NULL: the end of the list. */
static const char *image_env_next(const struct image *img, const char *e)
{
    size_t used = img->env_len < sizeof(img->env) ? img->env_len : sizeof(img->env);
    const char *end = img->env + used;

    if (e >= end || !*e || strnlen(e, (size_t)(end - e)) == (size_t)(end - e))
        return NULL;
    return e;
}

/* make_spec(sb, proc) — the exec request as a memfd (see struct exec_spec). */
static int make_spec(const struct sandbox *sb, const struct sandbox_proc *proc)
{
    const struct sandbox_limits *l = &sb->limits;
    const struct cgroup_env *cg = &sb->rt->cg;
    struct exec_spec spec;
    size_t strings = 0;
    uint32_t argc = 0, envc = 0;
    int fd, r;

    memset(&spec, 0, sizeof(spec));
    for (; proc->argv[argc]; argc++)
        strings += strlen(proc->argv[argc]) + 1;
    for (; proc->env && proc->env[envc]; envc++)
        strings += strlen(proc->env[envc]) + 1;
    spec.magic = EXEC_SPEC_MAGIC;
    spec.argc = argc;
    spec.envc = envc;
    spec.cpu.rlim_cur = cpu_rlimit(sb);
    spec.cpu.rlim_max = spec.cpu.rlim_cur + 1;
    /* Twice the scratch size: a full disk is ENOSPC, as on a real machine, not SIGXFSZ. */
    spec.fsize.rlim_cur = spec.fsize.rlim_max = (rlim_t)l->disk_mb << 21;
    spec.nofile.rlim_cur = spec.nofile.rlim_max = 1024;
    spec.stack.rlim_cur = spec.stack.rlim_max = PAYLOAD_STACK;
    spec.core.rlim_cur = spec.core.rlim_max = 0;
    spec.memlock.rlim_cur = spec.memlock.rlim_max = 64 << 10;
    spec.as.rlim_cur = spec.as.rlim_max = RLIM_INFINITY;
    spec.nproc.rlim_cur = spec.nproc.rlim_max = RLIM_INFINITY;
    if (!cgroup_env_has(cg, CGROUP_RES_MEMORY))
        spec.as.rlim_cur = spec.as.rlim_max = (rlim_t)l->memory_mb << 20;
    if (!cgroup_env_has(cg, CGROUP_RES_PIDS))
        spec.nproc.rlim_cur = spec.nproc.rlim_max = (rlim_t)l->pids;
    snprintf(spec.cwd, sizeof(spec.cwd), "%s",
             proc->cwd             ? proc->cwd
             : sb->img->workdir[0] ? sb->img->workdir
                                   : "/work");
    /* The image's configured environment goes after the caller's entries, each unless the
     * caller set the same name; init adds the fixed entries that neither set. */
    for (const char *e = sb->img->env; (e = image_env_next(sb->img, e)); e += strlen(e) + 1) {
        if (!image_env_applies(e, proc->env))
            continue;
        strings += strlen(e) + 1;
        spec.envc++;
    }
    spec.strings_len = (uint32_t)strings;
    fd = memfd_create("crucible-exec", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    r = util_write_all(fd, &spec, sizeof(spec));
    for (uint32_t i = 0; r == 0 && i < argc; i++)
        r = util_write_all(fd, proc->argv[i], strlen(proc->argv[i]) + 1);
    for (uint32_t i = 0; r == 0 && i < envc; i++)
        r = util_write_all(fd, proc->env[i], strlen(proc->env[i]) + 1);
    for (const char *e = sb->img->env; r == 0 && (e = image_env_next(sb->img, e));
         e += strlen(e) + 1)
        if (image_env_applies(e, proc->env))
            r = util_write_all(fd, e, strlen(e) + 1);
    if (r < 0) {
        close(fd);
        return r;
    }
    return fd;
}

/* stdin_copy(fd) — a sealed, read-only memfd holding what fd has left to read, or -errno.
 * The payload never gets a descriptor of the caller's file: through /proc/self/fd/0 it
 * could reopen it for writing, or change its mode. */
static int stdin_copy(int fd)
{
    char buf[65536];
    size_t total = 0;
    int m, r = 0;
    ssize_t n;

    m = memfd_create("crucible-stdin", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (m < 0)
        return -errno;
    while ((n = read(fd, buf, sizeof(buf))) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            r = -errno;
            break;
        }
        total += (size_t)n;
        if (total > SANDBOX_STDIN_MAX) {
            r = -EFBIG;
            break;
        }
        if ((r = util_write_all(m, buf, (size_t)n)) < 0)
            break;
    }
    /* Sealed against any change, and mode 0400 so that reopening it for writing through
     * /proc/self/fd/0 is refused outright. */
    if (r == 0 &&
        (fcntl(m, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0 ||
         fchmod(m, 0400) < 0 || lseek(m, 0, SEEK_SET) < 0))
        r = -errno;
    if (r < 0) {
        close(m);
        return r;
    }
    return m;
}

/* A capped capture of one output stream. */
struct capture {
    int fd;
    size_t cap;
    struct result_stream *st;
    size_t alloc;
};

/* capture_read(c) — reads what is available; returns 1 at EOF, -1 past the cap, else 0. */
static int capture_read(struct capture *c)
{
    char scratch[16384];

    for (;;) {
        char *dst = scratch;
        size_t room = sizeof(scratch);
        if (c->st->len < c->cap) {
            if (c->alloc < c->cap + 1) {
                size_t want = c->alloc ? c->alloc * 2 : 16384;
                if (want > c->cap + 1)
                    want = c->cap + 1;
                char *nb = realloc(c->st->data, want);
                if (!nb)
                    return -1;
                c->st->data = nb;
                c->alloc = want;
            }
            dst = c->st->data + c->st->len;
            room = c->alloc - 1 - c->st->len;
            if (room == 0) {
                dst = scratch;
                room = sizeof(scratch);
            }
        }
        ssize_t n = read(c->fd, dst, room);
        if (n < 0)
            return errno == EINTR ? 0 : (errno == EAGAIN ? 0 : 1);
        if (n == 0)
            return 1;
        if (dst == scratch) {
            /* past the cap: keep the first bytes that still fit, note the excess */
            size_t fit = c->st->len < c->cap ? c->cap - c->st->len : 0;
            if (fit && c->st->data)
                memcpy(c->st->data + c->st->len, scratch, fit < (size_t)n ? fit : (size_t)n);
            c->st->len += fit < (size_t)n ? fit : (size_t)n;
            if ((size_t)n > fit) {
                c->st->truncated = true;
                return -1;
            }
        } else {
            c->st->len += (size_t)n;
        }
    }
}

static void capture_finish(struct capture *c)
{
    if (!c->st->data)
        c->st->data = calloc(1, 1);
    else
        c->st->data[c->st->len] = '\0';
}

/* teardown(sb) — kills init (and so the pid namespace), reaps it, and waits for the cgroup
 * to be empty. Returns 0 or -errno when processes survived. */
static int teardown(struct sandbox *sb)
{
    int r = 0;

    if (sb->init_pid > 0 && !sb->init_reaped) {
        kill(sb->init_pid, SIGKILL); /* unreaped: still our init (see the top) */
        while (waitpid(sb->init_pid, &sb->init_status, 0) < 0 && errno == EINTR)
            ;
        sb->init_reaped = true;
    }
    if (sb->has_cg) {
        cgroup_kill(&sb->cg);
        r = cgroup_wait_empty(&sb->cg, 5.0);
    }
    return r;
}

/* verdict(res, status, limits) — maps the payload's wait status onto the closed set. */
static void verdict_from_wait(struct result *res, int status)
{
    if (WIFEXITED(status)) {
        res->exit_code = WEXITSTATUS(status);
        res->status = res->exit_code == 0 ? RESULT_OK : RESULT_RUNTIME_ERROR;
    } else if (WIFSIGNALED(status)) {
        res->signal = WTERMSIG(status);
        res->status = RESULT_SIGNALED;
    }
}

/* One exec in flight: what sandbox_exec's phases share. */
struct exec_run {
    struct capture cap[2]; /* stdout, stderr: the read ends */
    int out_w, err_w;      /* write ends, handed to init */
    int stdin_fd, specfd;
    double start, cpu_base, cpu_used;
    uint64_t oom_base; /* the group's OOM-kill count before the payload started */
    bool exited, killed, init_died, interrupted;
    bool alone;                /* init saw no other process left when the payload ended */
    bool keep;                 /* SANDBOX_EXEC_KEEP */
    bool lost;                 /* a KEEP exec's start went unanswered: it may be running */
    enum result_status forced; /* a limit or failure seen by the supervisor, else RESULT_OK */
    int wait_status;
    int64_t ru_cpu_usec, ru_maxrss;
};

/* note_peak(sb) — keeps the sandbox's peak memory since creation, which the group's own peak
 * (reset at every exec) does not. */
static void note_peak(struct sandbox *sb)
{
    uint64_t kb = sb->has_cg ? cgroup_memory_peak_kb(&sb->cg) : 0;

    if (kb > sb->peak_kb)
        sb->peak_kb = kb;
}

/* pipe_end(fd, mode) — a duplicate of fd when it is an anonymous pipe's end opened for
 * mode (O_RDONLY or O_WRONLY), else -EINVAL. */
static int pipe_end(int fd, int mode)
{
    char link[64], proc[64];
    struct stat st;
    ssize_t n;
    int fl;

    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode) || (fl = fcntl(fd, F_GETFL)) < 0 ||
        (fl & O_ACCMODE) != mode || (n = readlink(proc, link, sizeof(link) - 1)) < 5 ||
        memcmp(link, "pipe:", 5) != 0)
        return -EINVAL;
    fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    return fd < 0 ? -errno : fd;
}

/* exec_prepare — pipes, stdin copy, the spec memfd, counter baselines. 0, or -1 (res set),
 * or -EINVAL when the caller's pipes are not pipes (res set). */
static int exec_prepare(struct sandbox *sb, const struct sandbox_proc *proc, struct exec_run *x,
                        struct result *res)
{
    size_t cap = sb->limits.output_kb * 1024;
    bool out_pipe = proc->pipes & SANDBOX_PROC_STDOUT_PIPE;
    int outp[2] = {-1, -1}, errp[2];

    if (out_pipe) {
        outp[1] = pipe_end(proc->stdout_fd, O_WRONLY);
        if (outp[1] < 0) {
            result_fail(res, "stdout must be the write end of a pipe: %s", strerror(-outp[1]));
            return -EINVAL;
        }
    } else if (pipe2(outp, O_CLOEXEC) < 0) {
        result_fail(res, "cannot create output pipes: %s", strerror(errno));
        return -1;
    }
    if (pipe2(errp, O_CLOEXEC) < 0) {
        result_fail(res, "cannot create output pipes: %s", strerror(errno));
        if (outp[0] >= 0)
            close(outp[0]);
        close(outp[1]);
        return -1;
    }
    if (outp[0] >= 0)
        fcntl(outp[0], F_SETFL, O_NONBLOCK);
    fcntl(errp[0], F_SETFL, O_NONBLOCK);
    x->cap[0] = (struct capture){.fd = outp[0], .cap = cap, .st = &res->out};
    x->cap[1] = (struct capture){.fd = errp[0], .cap = cap, .st = &res->err};
    x->out_w = outp[1];
    x->err_w = errp[1];
    if (proc->pipes & SANDBOX_PROC_STDIN_PIPE) {
        x->stdin_fd = pipe_end(proc->stdin_fd, O_RDONLY);
        if (x->stdin_fd < 0) {
            result_fail(res, "stdin must be the read end of a pipe: %s", strerror(-x->stdin_fd));
            x->stdin_fd = -1;
            return -EINVAL;
        }
    } else {
        x->stdin_fd = proc->stdin_fd >= 0 ? stdin_copy(proc->stdin_fd)
                                          : open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    if (x->stdin_fd < 0) {
        int e = proc->stdin_fd >= 0 ? -x->stdin_fd : errno;
        result_fail(res, "cannot prepare stdin: %s",
                    e == EFBIG ? "larger than " SANDBOX_STDIN_MAX_TEXT : strerror(e));
        x->stdin_fd = -1;
        return -1;
    }
    x->specfd = make_spec(sb, proc);
    if (x->specfd < 0) {
        result_fail(res, "cannot build exec request: %s", strerror(-x->specfd));
        x->specfd = -1;
        return -1;
    }
    if (sb->has_cg) {
        /* The group's counters are cumulative over every exec of the sandbox (a stdio
         * harness runs each test in the same one): this exec is judged on what changes
         * from here, so a test OOM-killed earlier does not make later tests memory_limit. */
        cgroup_counters_open(&sb->cg);     /* read again and again until the verdict */
        note_peak(sb);                     /* what the reset is about to forget */
        cgroup_memory_peak_reset(&sb->cg); /* the peak starts with the payload */
        x->cpu_base = cgroup_cpu_usage(&sb->cg);
        x->oom_base = cgroup_oom_kills(&sb->cg);
    }
    return 0;
}

/* exec_start(sb, x, flags, res) — hands the request to init and waits until the payload runs. 0
 * when it does; -1 when it could not start (res says why: the caller's program or our failure). */
static int exec_start(struct sandbox *sb, struct exec_run *x, unsigned flags, struct result *res)
{
    int fds[4] = {x->specfd, x->stdin_fd, x->out_w, x->err_w};
    struct ctl_msg m;
    int r;

    memset(&m, 0, sizeof(m));
    m.type = CTL_EXEC;
    if (flags & SANDBOX_EXEC_KEEP)
        m.mode = CTL_EXEC_KEEP;
    if (flags & SANDBOX_EXEC_LAST)
        m.mode |= CTL_EXEC_LAST;
    /* init on this thread's CPU for a plain exec's hand-offs (sandbox_int.h); not a KEEP
     * exec, whose keeper and background processes outlive it */
    if (!(flags & SANDBOX_EXEC_KEEP) && sandbox__pin_here(sb->init_pid))
        m.mode |= CTL_EXEC_PINNED;
    x->start = util_now();
    trace(sb, "exec request");
    r = sandbox__ctl_send(sb->ctl, &m, fds, 4);
    close(x->out_w);
    close(x->err_w);
    x->out_w = x->err_w = -1;
    /* A KEEP exec's start is waited for even when cancelled (the supervision that follows
     * sees the cancel at once), so that an exec is never left running unknown to us. */
    if (r == 0)
        r = recv_ctl(sb, &m, NULL, NULL, SANDBOX_INIT_WAIT_S, !x->keep);
    if (r < 0) {
        result_fail(res, "sandbox init did not answer: %s", strerror(-r));
        x->lost = x->keep;
        return -1;
    }
    m.text[sizeof(m.text) - 1] = '\0';
    if (m.type == CTL_EXEC_FAIL) {
        /* A program that does not exist or cannot be executed is the caller's to fix;
         * anything else that stops the start is ours. */
        if (m.err == ENOENT || m.err == EACCES || m.err == ENOEXEC || m.err == ENOTDIR ||
            m.err == E2BIG || m.err == ENAMETOOLONG || m.err == ELOOP) {
            res->status = RESULT_RUNTIME_ERROR;
            res->exit_code = 127;
            if (m.err == E2BIG) /* what sandbox_argv_fits cannot see: a "#!" interpreter's */
                snprintf(res->message, sizeof(res->message),
                         "%.300s (the arguments and environment exceed what the kernel's "
                         "execve takes)",
                         m.text);
            else
                snprintf(res->message, sizeof(res->message), "%s", m.text);
        } else if (m.err == EAGAIN) {
            /* No process could be made: the sandbox's pids are all taken, which only its own
             * processes can do (a live sandbox's background processes of earlier execs
             * count). The caller's, not an infrastructure failure to retry. */
            res->status = RESULT_RUNTIME_ERROR;
            res->exit_code = 127;
            snprintf(res->message, sizeof(res->message),
                     "%.100s: the sandbox's pids limit (%llu) is reached by processes still "
                     "running in it (such as background processes of earlier execs); nothing "
                     "more can start until they end (a session can be forked: a fork copies "
                     "the files, not the processes)",
                     m.text, (unsigned long long)sb->limits.pids);
        } else {
            result_fail(res, "%s", m.text);
        }
        return -1;
    }
    if (m.type != CTL_STARTED) {
        result_fail(res, "unexpected reply from sandbox init (type %u)", m.type);
        return -1;
    }
    trace(sb, "payload started");
    return 0;
}

/* exec_supervise — until the payload ends or a limit ends it: drains output, watches
 * init, the clock, the group's CPU time and the caller's cancel fd. */
static void exec_supervise(struct sandbox *sb, struct exec_run *x, struct result *res)
{
    const struct sandbox_limits *l = &sb->limits;
    bool cpu_accounted = sb->has_cg && cgroup_env_has(&sb->rt->cg, CGROUP_RES_CPU);
    double wall_deadline = x->start + l->wall_time;
    struct ctl_msg m;

    while (!x->exited && !x->killed) {
        struct pollfd pf[4] = {{.fd = x->cap[0].fd, .events = POLLIN},
                               {.fd = x->cap[1].fd, .events = POLLIN},
                               {.fd = sb->ctl, .events = POLLIN},
                               {.fd = sb->cancel_fd, .events = POLLIN}};
        double wait = wall_deadline - util_now();
        if (cpu_accounted) {
            /* the earliest moment the CPU limit could be reached on every core */
            double soonest = (l->cpu_time - x->cpu_used) / (double)sb->rt->ncpu;
            if (soonest < 0.002)
                soonest = 0.002;
            if (soonest < wait)
                wait = soonest;
        }
        if (wait < 0)
            wait = 0;
        if (poll(pf, 4, (int)ceil(wait * 1000)) < 0 && errno != EINTR) {
            result_fail(res, "poll failed: %s", strerror(errno));
            x->killed = true;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (x->cap[i].fd < 0 || !pf[i].revents)
                continue;
            int c = capture_read(&x->cap[i]);
            if (c == 1) {
                close(x->cap[i].fd);
                x->cap[i].fd = -1;
            } else if (c < 0) {
                x->forced = RESULT_OUTPUT_LIMIT;
                x->killed = true;
            }
        }
        /* A report first (init may report and die), then its end: init's death closes the
         * socket's last other end (see the top of the file). */
        if (pf[2].revents & POLLIN) {
            int rr = sandbox__ctl_recv(sb->ctl, &m, NULL, NULL);
            if (rr == 0 && m.type == CTL_EXITED) {
                x->exited = true;
                x->alone = (m.mode & CTL_EXITED_ALONE) != 0;
                x->wait_status = m.status;
                x->ru_cpu_usec = m.cpu_usec;
                x->ru_maxrss = m.maxrss_kb;
            } else if (rr < 0 && rr != -EINTR && rr != -EAGAIN) {
                x->init_died = x->killed = true;
            }
        } else if (pf[2].revents & (POLLHUP | POLLERR)) {
            x->init_died = x->killed = true;
        }
        if (pf[3].revents & POLLIN)
            x->interrupted = x->killed = true;
        if (!x->exited && !x->killed && util_now() >= wall_deadline) {
            x->forced = RESULT_TIMEOUT;
            res->limit = RESULT_LIMIT_WALL;
            x->killed = true;
        }
        if (cpu_accounted) {
            x->cpu_used = cgroup_cpu_usage(&sb->cg) - x->cpu_base;
            if (!x->exited && !x->killed && x->cpu_used >= l->cpu_time) {
                x->forced = RESULT_TIMEOUT;
                res->limit = RESULT_LIMIT_CPU;
                x->killed = true;
            }
        }
    }
    res->wall_time = util_now() - x->start;
    trace(sb, "payload ended");
}

/* exec_drain — what the processes left in the pipes: to EOF when everything is dead (EOF
 * is then certain), else only what is already there, since a background process of a
 * session may hold a pipe open. */
static void exec_drain(struct exec_run *x, bool torn_down)
{
    for (int i = 0; i < 2; i++) {
        struct capture *c = &x->cap[i];
        while (c->fd >= 0) {
            struct pollfd pf = {.fd = c->fd, .events = POLLIN};
            if (poll(&pf, 1, torn_down ? 1000 : 0) <= 0)
                break;
            int rr = capture_read(c);
            if (rr < 0 && x->forced == RESULT_OK)
                x->forced = RESULT_OUTPUT_LIMIT;
            if (rr != 0)
                break;
        }
    }
}

/* The kernel checks RLIMIT_CPU against CPU time counted in scheduler ticks; rusage reports
 * the precise time, which on a busy VM falls short of it (by 3% seen idle, 11% at a load of
 * 10 on 2 cores). A process the rlimit ended shows at least this share of it; a program that
 * sends itself SIGXCPU early does not. */
#define CPU_RLIMIT_SHARE 0.5

/* exec_verdict — usage counters and the status, by precedence: our own failure, then the
 * limits, then how the program ended. */
static void exec_verdict(struct sandbox *sb, struct exec_run *x, struct result *res)
{
    const struct sandbox_limits *l = &sb->limits;
    double cpu = sb->has_cg ? cgroup_cpu_usage(&sb->cg) : -1;

    res->cpu_time = cpu >= 0 ? cpu - x->cpu_base : (double)x->ru_cpu_usec / 1e6;
    if (res->cpu_time < 0)
        res->cpu_time = 0;
    res->memory_kb = sb->has_cg ? cgroup_memory_peak_kb(&sb->cg) : 0;
    if (sb->has_cg) {
        if (res->memory_kb > sb->peak_kb) /* note_peak's, from the value just read */
            sb->peak_kb = res->memory_kb;
    }
    if (res->memory_kb == 0)
        res->memory_kb = (uint64_t)x->ru_maxrss;
    if (x->exited)
        verdict_from_wait(res, x->wait_status);
    if (x->interrupted) {
        result_fail(res, x->keep ? "interrupted: the exec was stopped and its processes killed"
                                 : "interrupted: the run was stopped and its sandbox torn down");
    } else if (x->forced == RESULT_SANDBOX_ERROR) {
        result_fail(res, "processes survived the sandbox teardown");
    } else if (sb->has_cg && cgroup_oom_kills(&sb->cg) > x->oom_base) {
        res->status = RESULT_MEMORY_LIMIT;
        snprintf(res->message, sizeof(res->message), "memory limit of %llu MB exceeded",
                 (unsigned long long)l->memory_mb);
    } else if (x->forced == RESULT_TIMEOUT || res->cpu_time >= l->cpu_time ||
               (res->status == RESULT_SIGNALED && res->signal == SIGXCPU &&
                res->cpu_time >= CPU_RLIMIT_SHARE * (double)cpu_rlimit(sb))) {
        /* Only a limit that was reached is a timeout. SIGXCPU alone proves nothing (a
         * program may send it to itself): it counts only from a run that used a good part
         * of the RLIMIT_CPU that sends it (whole seconds, at least the limit). */
        res->status = RESULT_TIMEOUT;
        if (res->limit == RESULT_LIMIT_NONE)
            res->limit = RESULT_LIMIT_CPU;
        if (res->limit == RESULT_LIMIT_WALL)
            snprintf(res->message, sizeof(res->message), "wall time limit of %g s exceeded",
                     l->wall_time);
        else
            snprintf(res->message, sizeof(res->message), "CPU time limit of %g s exceeded",
                     l->cpu_time);
    } else if (x->forced == RESULT_OUTPUT_LIMIT || res->out.truncated || res->err.truncated) {
        res->status = RESULT_OUTPUT_LIMIT;
        snprintf(res->message, sizeof(res->message), "output limit of %llu KB exceeded",
                 (unsigned long long)l->output_kb);
    } else if (x->init_died) {
        result_fail(res, "sandbox init died unexpectedly");
    } else if (!x->exited) {
        result_fail(res, "the process was lost");
    }
}

/* exec_kill(sb) — ends a KEEP exec that a limit or a cancel stopped: init kills its keeper,
 * and with it every process the exec started (nothing else), and confirms once they are
 * reaped. A report of the exec's end that crossed the request is passed over. Not
 * cancellable (the cancel fd may be what stopped it); 0 or -errno when init did not answer. */
static int exec_kill(struct sandbox *sb)
{
    double deadline = util_now() + SANDBOX_INIT_WAIT_S;
    struct ctl_msg m;
    int r;

    memset(&m, 0, sizeof(m));
    m.type = CTL_KILL_EXEC;
    if ((r = sandbox__ctl_send(sb->ctl, &m, NULL, 0)) < 0)
        return r;
    for (;;) {
        struct pollfd pf = {.fd = sb->ctl, .events = POLLIN};
        int ms = (int)ceil((deadline - util_now()) * 1000);
        if (ms <= 0)
            return -ETIMEDOUT;
        if (poll(&pf, 1, ms) < 0 && errno != EINTR)
            return -errno;
        if (!pf.revents)
            continue;
        if ((r = sandbox__ctl_recv(sb->ctl, &m, NULL, NULL)) < 0)
            return r;
        if (m.type == CTL_EXEC_KILLED)
            return m.err ? -m.err : 0;
    }
}

int sandbox_exec(struct sandbox *sb, const struct sandbox_proc *proc, unsigned flags,
                 struct result *res)
{
    struct exec_run x = {
        .cap = {{.fd = -1, .st = &res->out}, {.fd = -1, .st = &res->err}},
        .out_w = -1,
        .err_w = -1,
        .stdin_fd = -1,
        .specfd = -1,
        .forced = RESULT_OK,
        .keep = (flags & SANDBOX_EXEC_KEEP) != 0,
    };
    bool started = false, torn_down;

    int prep;

    if (!proc || !proc->argv || !proc->argv[0])
        return -EINVAL;
    result_set_image(res, sb->img);
    res->fork_server = sb->job;
    if ((flags & SANDBOX_EXEC_KEEP) && (flags & SANDBOX_EXEC_LAST)) {
        result_fail(res, "a KEEP exec cannot be the last one (SANDBOX_EXEC_LAST)");
        return -EINVAL;
    }
    if (proc->cwd && (proc->cwd[0] != '/' || strlen(proc->cwd) >= SANDBOX_CWD_MAX)) {
        result_fail(res, "the start directory '%s' must be an absolute path under %d bytes",
                    proc->cwd, SANDBOX_CWD_MAX);
        return -EINVAL;
    }
    trace(sb, "exec called");
    prep = exec_prepare(sb, proc, &x, res);
    if (prep == 0 && exec_start(sb, &x, flags, res) == 0) {
        started = true;
        exec_supervise(sb, &x, res);
    }
    /* A KEEP exec stopped by a limit or a cancel takes only its own processes with it; the
     * sandbox goes only when init does not answer (or died). */
    if (x.keep && ((x.killed && !x.init_died) || x.lost)) {
        if (exec_kill(sb) == 0) {
            x.killed = false;
            trace(sb, "exec killed");
        } else if (started) {
            x.forced = RESULT_SANDBOX_ERROR;
        } else {
            x.killed = true; /* lost and init still silent: the sandbox goes */
        }
    }
    /* The last exec must leave nothing running before its verdict is final; when init
     * saw no process left, that holds already and teardown waits for sandbox_destroy. */
    torn_down = x.killed || ((flags & SANDBOX_EXEC_LAST) && !(x.exited && x.alone));
    if (torn_down) {
        if (teardown(sb) < 0 && started)
            x.forced = RESULT_SANDBOX_ERROR;
        trace(sb, "torn down");
    }
    if (started) {
        /* A KEEP exec's processes are reaped or left running by now: what they wrote is in
         * the pipes already, and one left running may hold them open (or be handed them by a
         * hostile process): read what is there, wait for no end. */
        exec_drain(&x, !x.keep && (torn_down || (x.exited && x.alone)));
        exec_verdict(sb, &x, res);
    }
    for (int i = 0; i < 2; i++) {
        capture_finish(&x.cap[i]);
        if (x.cap[i].fd >= 0)
            close(x.cap[i].fd);
    }
    if (x.out_w >= 0)
        close(x.out_w);
    if (x.err_w >= 0)
        close(x.err_w);
    if (x.specfd >= 0)
        close(x.specfd);
    if (x.stdin_fd >= 0)
        close(x.stdin_fd);
    if (sb->has_cg)
        cgroup_counters_close(&sb->cg); /* no descriptor kept while idle */
    trace(sb, "verdict");
    return prep == -EINVAL ? -EINVAL : 0;
}

void sandbox_exec_input(struct sandbox *sb, const char *const *argv, const char *const *env,
                        const char *in, size_t in_len, unsigned flags, struct result *res)
{
    struct sandbox_proc p = {
        .argv = (char *const *)argv, .env = (char *const *)env, .stdin_fd = -1, .cwd = "/work"};

    result_init(res);
    if (in && in_len) {
        p.stdin_fd = sandbox_memfd(in, in_len);
        if (p.stdin_fd < 0) {
            result_fail(res, "cannot stage stdin: %s", strerror(-p.stdin_fd));
            return;
        }
    }
    sandbox_exec(sb, &p, flags, res);
    if (p.stdin_fd >= 0)
        close(p.stdin_fd);
}

int sandbox_prestart(struct sandbox *sb)
{
    struct ctl_msg m;

    memset(&m, 0, sizeof(m));
    m.type = CTL_PRESTART;
    return sandbox__ctl_send(sb->ctl, &m, NULL, 0);
}

void sandbox_set_cancel_fd(struct sandbox *sb, int fd)
{
    sb->cancel_fd = fd;
}

int sandbox_set_limits(struct sandbox *sb, const struct sandbox_limits *limits, struct errbuf *err)
{
    bool loopback = sb->limits.loopback;
    uint64_t disk = sb->limits.disk_mb;
    int r;

    /* A session sets its limits before every exec, mostly to what they were: the group's
     * files are written only when memory or pids change (two writes saved per exec). */
    if (sb->has_cg &&
        (limits->memory_mb != sb->limits.memory_mb || limits->pids != sb->limits.pids) &&
        (r = cgroup_set_limits(&sb->cg, limits->memory_mb << 20, limits->pids + 1, err)) < 0)
        return r;
    sb->limits = *limits;
    sb->limits.loopback = loopback;
    sb->limits.disk_mb = disk;
    return 0;
}

int sandbox_kill_others(struct sandbox *sb, struct errbuf *err)
{
    struct ctl_msg m;
    int r;

    memset(&m, 0, sizeof(m));
    m.type = CTL_KILLALL;
    r = sandbox__ctl_send(sb->ctl, &m, NULL, 0);
    if (r == 0)
        r = recv_reply(sb, &m, SANDBOX_INIT_WAIT_S);
    if (r == 0 && m.type != CTL_KILLED)
        r = -EPROTO;
    if (r == 0 && m.err)
        r = -m.err;
    if (r < 0)
        errbuf_set(err, "cannot clear the sandbox's processes: %s", strerror(-r));
    return r;
}

void sandbox__set_discard(struct sandbox *sb, void (*discard)(void *ctx, struct sandbox *sb),
                          void *ctx)
{
    sb->discard = discard;
    sb->discard_ctx = ctx;
}

void sandbox_discard(struct sandbox *sb)
{
    if (sb && sb->discard)
        sb->discard(sb->discard_ctx, sb);
    else if (sb)
        sandbox_destroy(sb, NULL);
}

int sandbox_destroy(struct sandbox *sb, struct errbuf *err)
{
    int r = 0, r2;

    if (!sb)
        return 0;
    r = teardown(sb);
    if (r < 0)
        errbuf_set(err, "processes survived the sandbox teardown");
    if (sb->ctl >= 0)
        close(sb->ctl);
    if (sb->has_cg) {
        r2 = cgroup_destroy(&sb->cg);
        if (r2 < 0 && r == 0) {
            r = r2;
            errbuf_set(err, "cannot remove the sandbox cgroup: %s", strerror(-r2));
        }
    }
    trace(sb, "destroyed");
    free(sb);
    return r;
}

int sandbox_run(const struct sandbox_runtime *rt, const struct image *img,
                const struct sandbox_limits *limits, const struct sandbox_file *files,
                size_t nfiles, const struct sandbox_proc *proc, struct result *res)
{
    struct errbuf err = {{0}};
    struct sandbox *sb;
    int r;

    result_set_image(res, img);
    sb = sandbox_create(rt, img, limits, &err);
    if (!sb) {
        result_fail(res, "%s", err.msg);
        return 0;
    }
    for (size_t i = 0; i < nfiles; i++) {
        r = sandbox_put_file(sb, files[i].dest, files[i].fd, files[i].mode, &err);
        if (r < 0) {
            result_fail(res, "%s", err.msg);
            sandbox_destroy(sb, NULL);
            return 0;
        }
    }
    sandbox_exec(sb, proc, SANDBOX_EXEC_LAST, res);
    err.msg[0] = '\0';
    if (sandbox_destroy(sb, &err) < 0 && res->status != RESULT_SANDBOX_ERROR)
        result_fail(res, "%s", err.msg);
    return 0;
}

int sandbox__zygote_start(struct sandbox *sb, const int fds[4], pid_t *pid, struct errbuf *err)
{
    struct ctl_msg m;
    int r;

    memset(&m, 0, sizeof(m));
    m.type = CTL_ZYGOTE;
    r = sandbox__ctl_send(sb->ctl, &m, fds, 4);
    if (r == 0)
        r = recv_reply(sb, &m, SANDBOX_INIT_WAIT_S);
    if (r < 0)
        return errbuf_set(err, "sandbox init did not answer: %s", strerror(-r)), r;
    m.text[sizeof(m.text) - 1] = '\0';
    if (m.type != CTL_STARTED)
        return errbuf_set(err, "cannot start the zygote: %s: %s", m.text, strerror(m.err)),
               m.err ? -m.err : -EPROTO;
    *pid = m.pid;
    return 0;
}

struct sandbox *sandbox__job_new(const struct sandbox_runtime *rt, const struct image *img,
                                 const struct sandbox_limits *limits, int *peer, int *attach,
                                 int *nattach, struct errbuf *err)
{
    struct sandbox *sb = sandbox_alloc(rt, img, limits, err);
    int sv[2], r;

    if (!sb)
        return NULL;
    /* init_pid stays -1: the job's pid 1 is the zygote's child, killed with the group */
    sb->job = true;
    *nattach = 0;
    if (rt->cg.nhier > 0) {
        r = cgroup_create(&sb->cg, &rt->cg, limits->memory_mb << 20, limits->pids + 1, err);
        if (r < 0)
            goto out_free;
        sb->has_cg = true;
        cgroup_close_dir_fd(&sb->cg);
        r = cgroup_open_join(&sb->cg, attach, CGROUP_MAX_HIER);
        if (r <= 0) {
            errbuf_set(err, "cannot open the job's cgroup to join: %s", strerror(-r));
            for (int i = 0; i < r; i++)
                close(attach[i]);
            goto out_cgroup;
        }
        *nattach = r;
    }
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        errbuf_set(err, "cannot create control socket: %s", strerror(errno));
        for (int i = 0; i < *nattach; i++)
            close(attach[i]);
        goto out_cgroup;
    }
    sb->ctl = sv[0];
    *peer = sv[1];
    return sb;

out_cgroup:
    if (sb->has_cg)
        cgroup_destroy(&sb->cg);
out_free:
    free(sb);
    return NULL;
}

int sandbox__job_ready(struct sandbox *sb, struct errbuf *err)
{
    struct ctl_msg m;
    int r = recv_reply(sb, &m, SANDBOX_INIT_WAIT_S);

    if (r < 0)
        return errbuf_set(err, "the fork server's job did not start: %s", strerror(-r)), r;
    m.text[sizeof(m.text) - 1] = '\0';
    if (m.type != CTL_READY)
        return errbuf_set(err, "the fork server's job failed to start: %s: %s", m.text,
                          strerror(m.err)),
               m.err ? -m.err : -EPROTO;
    trace(sb, "job ready");
    return 0;
}

bool sandbox__job_idle(struct sandbox *sb)
{
    struct pollfd pf = {.fd = sb->ctl, .events = POLLIN};

    return sb->ctl >= 0 && poll(&pf, 1, 0) == 0;
}

int sandbox__scratch_open(struct sandbox *sb, struct errbuf *err)
{
    struct ctl_msg m;
    int fd = -1, nfds = 1, r;
    dev_t dev;
    ino_t ino;
    uint64_t mnt;

    if (!sb->has_scratch)
        return errbuf_set(err, "the sandbox's scratch filesystem is not available"), -ENXIO;
    /* The shortcut: init's own descriptor, reopened through /proc (a system call, where the
     * request is two context switches and waits for init to be scheduled). /proc/<init_pid>
     * is our init's while it is unreaped (see the top); reading another process's fds needs
     * ptrace rights over it, which root has and an unprivileged supervisor has not over its
     * non-dumpable init. Whatever the path gives is checked as init's answer would be. */
    if (sb->rt->root && sb->scratch_in_init >= 0 && !sb->init_reaped) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)sb->init_pid, sb->scratch_in_init);
        fd = open(path, O_PATH | O_CLOEXEC);
        if (fd >= 0 && scratch_identity(fd, &dev, &ino, &mnt) == 0 && dev == sb->scratch_dev &&
            ino == sb->scratch_ino && mnt == sb->scratch_mnt)
            return fd;
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    memset(&m, 0, sizeof(m));
    m.type = CTL_SCRATCH;
    r = sandbox__ctl_send(sb->ctl, &m, NULL, 0);
    if (r == 0)
        r = recv_reply_fds(sb, &m, &fd, &nfds, SANDBOX_INIT_WAIT_S);
    if (r == 0 && (m.type != CTL_SCRATCH_FD || nfds != 1))
        r = -EPROTO;
    /* init runs beside hostile code: take only the very mount and inode it gave at READY. */
    if (r == 0 && (r = scratch_identity(fd, &dev, &ino, &mnt)) == 0 &&
        (dev != sb->scratch_dev || ino != sb->scratch_ino || mnt != sb->scratch_mnt))
        r = -EPROTO;
    if (r < 0) {
        if (nfds == 1 && fd >= 0)
            close(fd);
        return errbuf_set(err, "cannot reach the sandbox's scratch filesystem: %s",
                          r == -EPROTO ? "init handed over something else" : strerror(-r)),
               r;
    }
    return fd;
}

uid_t sandbox__host_uid(const struct sandbox *sb)
{
    return sb->rt->root ? (uid_t)(SANDBOX_HOST_ID_BASE + (unsigned)sb->init_pid)
                        : sb->rt->outer_uid;
}

gid_t sandbox__host_gid(const struct sandbox *sb)
{
    return sb->rt->root ? (gid_t)(SANDBOX_HOST_ID_BASE + (unsigned)sb->init_pid)
                        : sb->rt->outer_gid;
}

const struct sandbox_limits *sandbox__limits(const struct sandbox *sb)
{
    return &sb->limits;
}

const struct sandbox_runtime *sandbox__runtime(const struct sandbox *sb)
{
    return sb->rt;
}

const struct image *sandbox__image(const struct sandbox *sb)
{
    return sb->img;
}

int sandbox__fs_ids(uid_t uid, gid_t gid)
{
    syscall(SYS_setfsgid, gid);
    syscall(SYS_setfsuid, uid);
    /* An invalid id changes nothing and returns the current one. */
    if ((gid_t)syscall(SYS_setfsgid, (gid_t)-1) != gid ||
        (uid_t)syscall(SYS_setfsuid, (uid_t)-1) != uid)
        return -EPERM;
    return 0;
}

int sandbox__pause(struct sandbox *sb, bool stop, struct errbuf *err)
{
    double deadline = util_now() + SANDBOX_INIT_WAIT_S;
    struct ctl_msg m;
    int r;

    memset(&m, 0, sizeof(m));
    m.type = stop ? CTL_PAUSE : CTL_RESUME;
    if (++sb->pause_seq == 0) /* 0 means none awaited */
        sb->pause_seq = 1;
    m.mode = sb->pause_awaited = sb->pause_seq;
    r = sandbox__ctl_send(sb->ctl, &m, NULL, 0);
    /* What an earlier exec's end left on the socket, if anything, is not the answer, nor is
     * a late answer to an earlier pause or resume (recv_ctl drops those). */
    while (r == 0) {
        r = recv_reply(sb, &m, deadline - util_now());
        if (r < 0 || m.type == CTL_PAUSED)
            break;
    }
    sb->pause_awaited = 0;
    if (r == 0 && m.err)
        r = -m.err;
    if (r < 0)
        errbuf_set(err, "cannot %s the sandbox's processes: %s", stop ? "stop" : "continue",
                   r == -EBUSY ? "some would not stop" : strerror(-r));
    return r;
}

double sandbox_cpu_time(struct sandbox *sb)
{
    double cpu = sb->has_cg ? cgroup_cpu_usage(&sb->cg) : -1;

    return cpu > 0 ? cpu : 0;
}

bool sandbox_alive(const struct sandbox *sb)
{
    struct pollfd pf = {.fd = sb->ctl, .events = 0};

    if (sb->init_reaped || sb->ctl < 0)
        return false;
    /* init's death hangs the socket up: the other end is held only inside its pid namespace,
     * which dies with it (see the top of the file). POLLHUP is reported without asking. */
    while (poll(&pf, 1, 0) < 0)
        if (errno != EINTR)
            return true;
    return !(pf.revents & (POLLHUP | POLLERR | POLLNVAL));
}

int sandbox_usage(struct sandbox *sb, struct sandbox_usage *u)
{
    struct statfs fs;
    double cpu;
    int s, r;

    *u = (struct sandbox_usage){0};
    if (sb->has_cg) {
        cpu = cgroup_cpu_usage(&sb->cg);
        u->cpu_time = cpu > 0 ? cpu : 0;
        u->memory_kb = cgroup_memory_current_kb(&sb->cg);
        note_peak(sb);
        u->pids = cgroup_pids_current(&sb->cg);
    }
    u->memory_peak_kb = sb->peak_kb > u->memory_kb ? sb->peak_kb : u->memory_kb;
    if ((s = sandbox__scratch_open(sb, NULL)) < 0)
        return s;
    /* The scratch tmpfs's own counters: its pages in use (files, directories, a writable
     * root's upper layer) and its size, whatever the sandbox did to its names. */
    r = fstatfs(s, &fs) < 0 ? -errno : 0;
    close(s);
    if (r < 0)
        return r;
    u->disk_kb = (uint64_t)(fs.f_blocks - fs.f_bfree) * (uint64_t)fs.f_bsize / 1024;
    u->disk_limit_kb = (uint64_t)fs.f_blocks * (uint64_t)fs.f_bsize / 1024;
    return 0;
}
