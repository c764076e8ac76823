/*
 * sandbox.h — creating a sandbox, running processes in it, tearing it down.
 *
 * A sandbox is a set of namespaces (user, pid, mount, net, ipc, uts, cgroup), a cgroup and
 * a root filesystem built from an image, with a tiny init of ours as pid 1. The supervisor
 * (the caller of this API) talks to init over a socket: it hands over files and exec
 * requests, init forks each payload and reports how it ended. A one-shot run is
 * create → put files → exec (last) → destroy; sessions, warm pools and fork servers reuse
 * the same pieces with more than one exec or a sandbox made ahead of demand.
 *
 * Threading: a struct sandbox is used from one thread at a time. sandbox_runtime is
 * read-only once initialised and may be shared.
 */
#ifndef CRUCIBLE_SANDBOX_H
#define CRUCIBLE_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "sandbox/cgroup.h"
#include "sandbox/filter.h"
#include "sandbox/image.h"
#include "sandbox/result.h"
#include "util.h"

/* Limits of one sandbox; ranges in sandbox_limit_ranges (checked by callers' parsers). */
struct sandbox_limits {
    double cpu_time;    /* seconds of CPU for the whole process tree */
    double wall_time;   /* seconds of wall-clock time */
    uint64_t memory_mb; /* memory of the whole tree (cgroup), or per process (rlimit fallback) */
    uint64_t pids;      /* processes + threads */
    uint64_t output_kb; /* per stream kept; more ends the run as output_limit */
    uint64_t disk_mb;   /* scratch tmpfs (/tmp and the work directory) */
    bool loopback;      /* bring up lo inside the sandbox's own network namespace */
    bool writable_root; /* the image's directories are writable through a private overlay
                         * whose changes live in the scratch tmpfs (fixed at creation) */
};

struct sandbox_limit_range {
    const char *name; /* CLI option without dashes, also the JSON field stem */
    double min, max, def;
};

enum sandbox_limit_id { LIM_CPU, LIM_WALL, LIM_MEMORY, LIM_PIDS, LIM_OUTPUT, LIM_DISK, LIM_COUNT };
extern const struct sandbox_limit_range sandbox_limit_ranges[LIM_COUNT];

/* sandbox_limits_default(l) — the defaults of sandbox_limit_ranges. */
void sandbox_limits_default(struct sandbox_limits *l);

/* As root, sandbox k runs as host uid and gid SANDBOX_HOST_ID_BASE + (host pid of its
 * init): ids no account uses, distinct for every live sandbox. */
#define SANDBOX_HOST_ID_BASE 0x40000000u

/* Process-wide state, made once: cgroup discovery, the compiled seccomp program, the
 * identity sandboxes map to. Read-only afterwards. */
struct sandbox_runtime {
    struct cgroup_env cg;
    struct filter filter;
    bool root;       /* running as uid 0: full maps and cgroup limits */
    uid_t outer_uid; /* host uid the payload runs as */
    gid_t outer_gid;
    long ncpu;
    bool trace;    /* phase timings on stderr ($CRUCIBLE_TRACE in the CLI) */
    int cancel_fd; /* -1, or an fd that turns readable when running work must stop (a
                    * signalfd of the CLI, say): the run is killed and torn down and
                    * ends as sandbox_error "interrupted" */
    /* The supervisor's own argv and environment strings ([start, end) of each, from
     * /proc/self/stat; 0 when unknown): a sandbox's init, a copy of the supervisor's
     * memory, wipes them so its /proc/1/cmdline and environ show nothing of the host. */
    uintptr_t arg_start, arg_end, env_start, env_end;
};

/* sandbox_runtime_init(rt, err) — 0 or -errno with err set (e.g. no user namespaces). */
int sandbox_runtime_init(struct sandbox_runtime *rt, struct errbuf *err);

/* sandbox_runtime_release(rt) — frees what init made (the cgroup subtree stays). */
void sandbox_runtime_release(struct sandbox_runtime *rt);

/* sandbox_runtime_describe(rt, f) — which limits are enforced and how, one per line. */
void sandbox_runtime_describe(const struct sandbox_runtime *rt, FILE *f);

struct sandbox;

/* sandbox_create(rt, img, limits, err) — namespaces, cgroup, root filesystem, init
 * ready for requests. rt and img must outlive the sandbox. NULL with err set. */
struct sandbox *sandbox_create(const struct sandbox_runtime *rt, const struct image *img,
                               const struct sandbox_limits *limits, struct errbuf *err);

/* sandbox_put_file(sb, dest, fd, mode, err) — copies the contents of fd (caller keeps it)
 * to DEST below the work directory with the given mode bits. DEST must be relative, without
 * ".." or empty components; no symlink is followed inside the sandbox. 0 or -errno.
 * With SANDBOX_PUT_LOCKED in mode the file is read-only in fact, not only in its mode bits
 * (the payload owns it and could chmod it): it becomes a read-only mount of itself, so it
 * cannot be written, truncated, chmod'ed, removed or replaced, and every directory below
 * the work directory that holds it is a mount of itself too, so none can be renamed or
 * removed (a mount point cannot be) — its other entries stay as writable as before. */
#define SANDBOX_PUT_LOCKED 010000u /* mode flag, beside the permission bits (07777) */
int sandbox_put_file(struct sandbox *sb, const char *dest, int fd, mode_t mode, struct errbuf *err);

/* sandbox_put_data(sb, dest, data, len, mode, err) — sandbox_put_file from memory. */
int sandbox_put_data(struct sandbox *sb, const char *dest, const char *data, size_t len,
                     mode_t mode, struct errbuf *err);

/* sandbox_memfd(data, len) — a sealed-size memfd holding data, at offset 0 (for stdin);
 * the fd or -errno. */
int sandbox_memfd(const char *data, size_t len);

/* sandbox_get_file(sb, path, max, &data, &len, err) — reads the regular file at PATH
 * (relative to the work directory; symlinks are not followed anywhere on the way) into a
 * new NUL-terminated buffer the caller frees. -ENOENT when it does not exist, -EFBIG when
 * longer than max, -EINVAL when not a regular file; err says which. Meant for after the
 * payload ended (a report it wrote): the contents are the sandbox's, so untrusted. */
int sandbox_get_file(struct sandbox *sb, const char *path, size_t max, char **data, size_t *len,
                     struct errbuf *err);

#define SANDBOX_STDIN_MAX      ((size_t)1 << 30) /* bytes of stdin a process may be given */
#define SANDBOX_STDIN_MAX_TEXT "1 GiB"

/* What to run. argv[0] without a '/' is searched in the sandbox's PATH. stdin is copied
 * into a sealed memfd before the process starts, unless `pipes` says otherwise. */
struct sandbox_proc {
    char *const *argv; /* NULL-terminated */
    char *const *env;  /* extra "K=V" entries over the fixed environment; may be NULL */
    int stdin_fd;      /* caller keeps it; -1 for /dev/null */
    unsigned pipes;    /* SANDBOX_PROC_*_PIPE: streams connected to pipes, not copied */
    int stdout_fd;     /* with SANDBOX_PROC_STDOUT_PIPE; the caller keeps it */
    const char *cwd;   /* absolute directory to start in; NULL: the image's WorkingDir when
                        * it has one, else /work (SANDBOX_CWD_MAX bytes at most) */
};
#define SANDBOX_CWD_MAX 256

/* Pipes the supervisor made with pipe2(), for two processes that talk while they run (an
 * interactive judge). Only anonymous pipes are accepted (a FIFO of a filesystem or any
 * other file is -EINVAL): the payload gets one end of a pipe and nothing of the host behind
 * it. The caller keeps its descriptors; it must not set O_NONBLOCK on an end it shares with
 * a payload (the flag belongs to the open pipe, both sides see it). */
#define SANDBOX_PROC_STDIN_PIPE 1u /* stdin_fd: a pipe's read end, given as it is */
#define SANDBOX_PROC_STDOUT_PIPE                                                                   \
    2u /* stdout to stdout_fd, a pipe's write end; res->out stays                                  \
        * empty and the output limit does not apply to it */

#define SANDBOX_EXEC_LAST 1u /* last process: tear the sandbox down before the verdict */
/* A session's exec: the process and everything it starts live in a pid namespace of their own
 * (its pid 1 is a small keeper init forks), so a timeout, an output limit or a cancel kills
 * exactly those processes — never the sandbox, nor what earlier execs left running. When the
 * process ends by itself, what it started in the background keeps running (the keeper stays
 * as their reaper) until it ends, the session's sandbox is destroyed, or sandbox_kill_others.
 * Each keeper alive is one of the sandbox's pids (limits.pids). Not with SANDBOX_EXEC_LAST. */
#define SANDBOX_EXEC_KEEP 2u

/* sandbox_exec(sb, proc, flags, res) — runs one process to its end and fills res (which
 * the caller has result_init'ed). Returns 0 when res holds a verdict (any status,
 * sandbox_error included), -errno only for misuse (-EINVAL: no argv, a pipes flag with an
 * fd that is no anonymous pipe's end of that direction, or KEEP with LAST; res says which). With
 * SANDBOX_EXEC_LAST every process of the sandbox is dead and its cgroup empty before res
 * is final. Two sandboxes may run their execs at the same time from two threads. */
int sandbox_exec(struct sandbox *sb, const struct sandbox_proc *proc, unsigned flags,
                 struct result *res);

/* sandbox_exec_input(sb, argv, env, in, in_len, flags, res) — sandbox_exec of argv (extra
 * environment env, may be NULL) with IN (in_len bytes; none: /dev/null) on its stdin, staged in
 * a memfd, started in /work (where the files put in are; never the image's WorkingDir). res is
 * result_init'ed here; a failure to stage stdin is res's sandbox_error. */
void sandbox_exec_input(struct sandbox *sb, const char *const *argv, const char *const *env,
                        const char *in, size_t in_len, unsigned flags, struct result *res);

/* sandbox_prestart(sb) — asks init to make the next plain exec's process now, confined
 * (capabilities dropped, no_new_privs, seccomp) and waiting, so that the exec does not pay for it:
 * for a sandbox made ahead of its one plain exec (a pool's). Init does so only while nothing runs
 * in the sandbox, and a KEEP exec kills it first. After a plain exec that is not
 * SANDBOX_EXEC_LAST and leaves nothing running, init makes the next one by itself. No reply is
 * awaited: 0 or -errno when the request could not be sent. */
int sandbox_prestart(struct sandbox *sb);

/* sandbox_set_cancel_fd(sb, fd) — the fd whose readability stops this sandbox's work (see
 * sandbox_runtime.cancel_fd); for a sandbox made ahead of time for a job not known yet. */
void sandbox_set_cancel_fd(struct sandbox *sb, int fd);

/* sandbox_set_limits(sb, limits, err) — the limits of the next execs (a compile step runs
 * with its own). Memory and pids change in the cgroup; disk and network are fixed at
 * creation and ignored here. 0 or -errno with err set. */
int sandbox_set_limits(struct sandbox *sb, const struct sandbox_limits *limits, struct errbuf *err);

/* sandbox_kill_others(sb, err) — kills every process left in the sandbox but its init
 * (background children of earlier execs), so the next exec starts alone. 0 or -errno. */
int sandbox_kill_others(struct sandbox *sb, struct errbuf *err);

/* What a live sandbox uses now, for a session's listing. Fields a host cannot measure (no
 * cgroup) are 0. */
struct sandbox_usage {
    double cpu_time;         /* CPU seconds of every process it has run, since creation */
    uint64_t memory_kb;      /* memory charged to it now (cgroup) */
    uint64_t memory_peak_kb; /* the most it was charged */
    uint64_t pids;           /* processes and threads alive, init and keepers included */
    uint64_t disk_kb;        /* used in its scratch tmpfs (/work, /tmp, a writable root's upper) */
    uint64_t disk_limit_kb;  /* the scratch's size */
};

/* sandbox_usage(sb, u) — fills u; 0 or -errno. Cheap (a few cgroup files, and one fstatfs of
 * the scratch init hands over, a round trip to it); safe while no exec runs on sb (same
 * thread rule as every call). */
int sandbox_usage(struct sandbox *sb, struct sandbox_usage *u);

/* sandbox_cpu_time(sb) — sandbox_usage's cpu_time alone: one cgroup file, no request to init
 * (what an exec checks against a session's CPU budget). */
double sandbox_cpu_time(struct sandbox *sb);

/* sandbox_alive(sb) — false once sb's init is dead (killed from outside, the OOM killer: nothing
 * can run in sb any more; only sandbox_destroy is left to do). One poll() of the control socket
 * with no wait: it does not wake init nor reap it, so it may be asked of an idle sandbox as
 * often as wanted (a session's reaper, every second). true when it cannot tell. */
bool sandbox_alive(const struct sandbox *sb);

/* sandbox_fork(parent, err) — a new sandbox made as the parent was (runtime, image, limits,
 * writable root) whose scratch (/work, /tmp, a writable root's changes) is a copy of the
 * parent's at the moment of the call; processes are not copied. The parent's processes are
 * stopped (SIGSTOP) for the time of the copy and continued after, so the copy is one
 * consistent state; the parent is otherwise unchanged. Symlinks, FIFOs and sockets are copied
 * as what they are, never followed or opened; ownership and modes are kept. The copy counts
 * against the child's disk limit (the same size as the parent's, so it fits). NULL with err. */
struct sandbox *sandbox_fork(struct sandbox *parent, struct errbuf *err);

/* sandbox_fork_into(parent, child, err) — sandbox_fork's copy into a child the caller made
 * ahead (a spare from a pool, so that creation is off the request's path): child must be
 * fresh — made by sandbox_create and given nothing since but sandbox_set_limits and
 * sandbox_set_cancel_fd, no file put, no exec — and of the parent's runtime (or a copy of it,
 * as a pool keeps), image, scratch size, writable root and network (checked: -EINVAL
 * otherwise, nothing copied). 0, or -errno
 * with err set; either way the child stays the caller's, and after a failure it holds part of
 * a copy and is only fit to be destroyed. */
int sandbox_fork_into(struct sandbox *parent, struct sandbox *child, struct errbuf *err);

/* sandbox_destroy(sb) — kills everything, waits for the cgroup to empty, removes it.
 * Returns 0, or -errno when something could not be cleaned (logged in err if given). */
int sandbox_destroy(struct sandbox *sb, struct errbuf *err);

/* sandbox_discard(sb) — sb is done with and nothing more is wanted of it (its outcome read):
 * sandbox_destroy now, or later by whoever made it (a fork server tears its jobs down on a
 * thread of its own, off the caller's path). Teardown failures are not reported (use
 * sandbox_destroy for that). NULL is a no-op. */
void sandbox_discard(struct sandbox *sb);

/* sandbox_run(rt, img, limits, files, nfiles, proc, res) — the one-shot path. */
struct sandbox_file {
    const char *dest;
    int fd;
    mode_t mode;
};
int sandbox_run(const struct sandbox_runtime *rt, const struct image *img,
                const struct sandbox_limits *limits, const struct sandbox_file *files,
                size_t nfiles, const struct sandbox_proc *proc, struct result *res);

/* sandbox_dest_valid(dest, err) — the DEST rule of sandbox_put_file, for early checks: also
 * no component longer than NAME_MAX and the whole "/work/DEST" within PATH_MAX. */
bool sandbox_dest_valid(const char *dest, struct errbuf *err);

/* A destination and what it is for, for sandbox_dests_check's messages. */
struct sandbox_dest {
    const char *path;
    const char *what; /* NULL for a file; else e.g. "where the solution goes" */
    size_t len;       /* bytes it will hold (0 when not known yet) */
};

/* sandbox_dests_check(dests, n, disk_mb, err) — destinations that can all be put in one work
 * directory: each valid (sandbox_dest_valid), none given twice, none below another (a file
 * 'a' leaves no room for a file 'a/b'), and (disk_mb > 0) all of them, with the directories
 * they need, within the pages and inodes of a scratch disk of disk_mb MB. Checked up front
 * so that a caller's impossible set of files is the caller's error, not a failed put (a
 * sandbox_error, retried). O(n log n) compares. false with err naming the problem (without
 * a prefix: callers add "files: " or the like). */
bool sandbox_dests_check(const struct sandbox_dest *dests, size_t n, uint64_t disk_mb,
                         struct errbuf *err);

/* sandbox_argv_fits(argv, env, err) — whether the kernel's execve will take argv and env
 * (plus the sandbox's fixed environment) in the payload: every string within MAX_ARG_STRLEN
 * (32 pages), the program's path within PATH_MAX, and all of them with their pointers
 * within the 6 MiB the kernel allows the payload's stack. A command beyond that is the
 * caller's error (execve would fail with E2BIG); check it before running. An interpreter a
 * script's "#!" line adds is not counted: exec reports that case as the program's. */
bool sandbox_argv_fits(char *const *argv, char *const *env, struct errbuf *err);

#endif
