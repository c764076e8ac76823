/*
 * sandbox_int.h — what the supervisor (sandbox.c) and init (sandbox_init.c) share: the
 * control protocol (its requests answered by init_proto.c, for a sandbox's init and a fork
 * server job's pid 1 alike) and the parameters init is cloned with. Not part of any public API.
 *
 * Protocol: a SOCK_SEQPACKET socketpair; every message is one struct ctl_msg, with up to
 * CTL_MAX_FDS file descriptors attached (SCM_RIGHTS). Exec specifications travel in a
 * sealed memfd, so argv and the environment have no size limit of their own.
 */
#ifndef CRUCIBLE_SANDBOX_INT_H
#define CRUCIBLE_SANDBOX_INT_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/time.h>

#include "sandbox/sandbox.h"

#define SANDBOX_UID   1000                /* uid and gid of the payload inside */
#define PAYLOAD_STACK ((rlim_t)256 << 20) /* the payload's RLIMIT_STACK */
#define EXEC_ARG_TOTAL                                                                             \
    ((size_t)6 << 20)                         /* execve's room for strings + pointers: 3/4 of      \
                                               * _STK_LIM, below PAYLOAD_STACK / 4 */
#define EXEC_SEARCH_LONGEST "/usr/local/bin/" /* longest search-path prefix init tries */
#define SANDBOX_HOSTNAME    "crucible"
#define CTL_MAX_FDS         6 /* a fork-server job: its control socket + CGROUP_MAX_HIER */

/* How long the supervisor waits for init: to start (READY after GO: its root filesystem and
 * namespaces set up) and to answer any one request (an exec's start, a kill, a pause, the
 * scratch). Not a limit on anything a payload does (those are the limits' and the cancel
 * fd's); only the bound after which an init that will never answer is given up on. It must
 * hold on a loaded host: with 10,000 live sessions on 2 cores, a creation waited more than
 * the 10 s this once was (mount and namespace set-up serialise on kernel locks) and failed
 * as "init did not start". A caller with a deadline of its own bounds every one of these
 * waits sooner through the sandbox's cancel fd (sandbox_set_cancel_fd), except a KEEP
 * exec's start and the kill that ends a stopped exec, which are waited for to the end. */
#define SANDBOX_INIT_WAIT_S 30.0

enum ctl_type {
    CTL_GO = 1,      /* sup → init: maps and cgroups are in place, build the sandbox */
    CTL_READY,       /* init → sup: root filesystem built, waiting for requests; fd[0] an
                      * O_PATH descriptor of the scratch tmpfs's root (init keeps its own,
                      * whose number is pid) */
    CTL_FAILED,      /* init → sup: setup failed (err, text) */
    CTL_PUT,         /* sup → init: copy fd[0] to text (relative path), mode (and
                      * SANDBOX_PUT_LOCKED: then lock it, see sandbox_put_file) */
    CTL_PUT_DONE,    /* init → sup: err == 0 or the failure (text) */
    CTL_EXEC,        /* sup → init: fd[0] spec memfd, fd[1..3] stdin, stdout, stderr;
                      * mode CTL_EXEC_KEEP: a session's exec, run under a keeper */
    CTL_STARTED,     /* init → sup: payload running (pid inside) */
    CTL_EXEC_FAIL,   /* init → sup: could not start it (err, text) */
    CTL_EXITED,      /* init → sup: payload ended (status = wait status, rusage) */
    CTL_KILLALL,     /* sup → init: kill every other process of the sandbox */
    CTL_KILLED,      /* init → sup: done, none left (err: processes that would not die) */
    CTL_GET,         /* sup → init: open text (relative path) for reading */
    CTL_GOT,         /* init → sup: fd[0] the regular file opened, or err and text */
    CTL_LOWER,       /* sup → init, before GO: fd[0] the (idmapped) lower layer of the image's
                      * directory entry number pid, for a writable root */
    CTL_KILL_EXEC,   /* sup → init: kill the latest KEEP exec (its keeper's whole namespace) */
    CTL_EXEC_KILLED, /* init → sup: done, its processes reaped (err: the keeper's wait failed) */
    CTL_PAUSE,       /* sup → init: SIGSTOP every other process, reply once all are stopped */
    CTL_RESUME,      /* sup → init: SIGCONT every other process */
    CTL_PAUSED,      /* init → sup: the answer to both (err: EBUSY, some would not stop),
                      * mode: the request's mode (a sequence number) echoed */
    CTL_SCRATCH,     /* sup → init: hand over the scratch tmpfs's root again */
    CTL_SCRATCH_FD,  /* init → sup: fd[0] the descriptor READY gave (a copy of init's) */
    CTL_PRESTART,    /* sup → init: make the next plain exec's process ahead (no reply) */
    CTL_ZYGOTE,      /* sup → init (a fork server's sandbox only): fd[0] the zygote's control
                      * socket, fd[1..3] its stdin, stdout, stderr; init starts a fresh exec
                      * of its own binary in zygote mode (forkserver.h) with the capabilities
                      * a job's set-up needs; reply CTL_STARTED (pid) or CTL_EXEC_FAIL */
    CTL_JOB,         /* sup → zygote: fd[0] the job's control socket, fd[1..] the files
                      * that join its cgroup (cgroup_open_join); status: its disk_mb;
                      * mode: CTL_JOB_LOOPBACK. The job answers on its socket as an init:
                      * CTL_READY or CTL_FAILED, then CTL_PUT, CTL_GET, one CTL_EXEC */
};
#define CTL_JOB_LOOPBACK 1u
/* The zygote's CTL_READY: status, the pages each job copies ahead; mode, CTL_ZYGOTE_SMALL_INIT
 * when its jobs' pid 1 is the small init (zygote.c, jobinit.c), not a copy of the zygote. */
#define CTL_ZYGOTE_SMALL_INIT 1u

/* CTL_GO mode: init already sits in every group it belongs in (v1 joined by itself, v2 cloned
 * into), so it may enter its cgroup namespace during setup, off the first exec's path. Without
 * it the supervisor still attaches init by pid after GO, and init enters the namespace at its
 * first exec. */
#define CTL_GO_CGROUPS_FINAL 1u

/* CTL_EXEC mode: the payload runs under a keeper, pid 1 of a pid namespace of the exec's own,
 * forked by init. The keeper reports to init over a socket of its own; init relays
 * CTL_STARTED or CTL_EXEC_FAIL, then CTL_EXITED (where CTL_EXITED_ALONE means nothing of this
 * exec is left) to the supervisor, and keeps one keeper at a time for CTL_KILL_EXEC. */
#define CTL_EXEC_KEEP 1u
#define CTL_EXEC_LAST                                                                              \
    2u /* CTL_EXEC mode: SANDBOX_EXEC_LAST, so init makes no process ahead after it */

/* CTL_EXEC mode: the supervisor has pinned init to the CPU it sent the request from
 * (sandbox__pin_here). init runs the made-ahead process there too, each payload takes back
 * init's own CPUs before its execve, and init takes them back when the exec ends (why: the
 * affinity section of sandbox_init.c). */
#define CTL_EXEC_PINNED 4u

/* sandbox__pin_here(pid) — pid (> 0) allowed only the CPU the caller runs on now; true when it
 * is. */
bool sandbox__pin_here(pid_t pid);

#define CTL_EXITED_ALONE 1u /* CTL_EXITED mode: no other process is left in the sandbox */

struct ctl_msg {
    uint32_t type;
    int32_t err;    /* positive errno, 0 for none */
    int32_t status; /* wait status (CTL_EXITED) */
    int32_t pid;
    uint32_t mode;
    int64_t cpu_usec; /* CPU of the reaped tree, from init's RUSAGE_CHILDREN */
    int64_t maxrss_kb;
    char text[4096];
};

/* The rlimits and flags of an exec, followed in the memfd by argc + envc strings. */
struct exec_spec {
    uint32_t magic;
    uint32_t argc, envc;
    uint32_t strings_len;
    struct rlimit cpu, fsize, nofile, nproc, as, stack, core, memlock;
    char cwd[SANDBOX_CWD_MAX]; /* absolute, NUL-terminated: where the payload starts */
};
#define EXEC_SPEC_MAGIC 0x63727563u

/* Parsed exec request: pointers into the spec, read into init's reusable buffer (small
 * requests, nearly all) or mapped (larger ones). */
struct exec_req {
    struct exec_spec spec;
    char **argv;
    char **envp;
    char *strings;
    void *map; /* the spec's mapping, NULL when it is in the reusable buffer */
    size_t map_len;
    size_t vec_len; /* argv and envp share one mapping, 0 when in the reusable buffer */
};

/* Everything init needs, inherited through clone (init gets a copy of the address space). */
struct init_params {
    int ctl_fd;
    bool root; /* the supervisor is uid 0: clear supplementary groups */
    const struct image *img;
    const struct sandbox_limits *limits;
    const struct filter *filter;
    int attach_fds[CGROUP_MAX_HIER]; /* v1 "tasks" files to write "0" to (see cgroup.h) */
    int nattach;
    const struct sandbox_runtime *rt; /* the supervisor's argv and environment, to wipe */
    bool zygote; /* a fork server's sandbox: keep CAP_SYS_ADMIN and CAP_NET_ADMIN inheritable
                  * and ambient (for CTL_ZYGOTE's exec); every payload drops them all */
};

/* sandbox__fixed_env(env, &count) — bytes (with NULs) of the fixed environment entries init
 * adds to a payload whose extra entries are env (those env overrides are left out); their
 * number in *count. */
size_t sandbox__fixed_env(char *const *env, size_t *count);

/* sandbox__init_main(p) — init's whole life; never returns. */
__attribute__((noreturn)) void sandbox__init_main(const struct init_params *p);

/* sandbox__ctl_send(fd, msg, fds, nfds) / sandbox__ctl_recv(fd, msg, fds, &nfds) —
 * one message each way; 0 or -errno (-EPIPE on a closed peer). Received fds are
 * O_CLOEXEC; any beyond *nfds are closed. */
int sandbox__ctl_send(int fd, const struct ctl_msg *msg, const int *fds, int nfds);
int sandbox__ctl_recv(int fd, struct ctl_msg *msg, int *fds, int *nfds);

/* rootfs__build(img, limits, lower, scratch, err) — in init, in the new mount namespace: makes
 * the root filesystem and pivots into it; cwd is "/" afterwards. With limits->writable_root,
 * lower[i] is the lower layer of the image's entry i when it is a directory (a detached
 * mount the supervisor made, idmapped so the image's root-owned files are the sandbox
 * user's), or -1 to clone the image's directory as it is; rootfs__build closes them.
 * *scratch gets an O_PATH | O_DIRECTORY | O_CLOEXEC descriptor of the scratch tmpfs's root
 * (its directories "work" and "tmp" are /work and /tmp; "root" and ".overlay" a writable
 * root's), the caller's to close; -1 on failure. 0 or -errno with err set. */
int rootfs__build(const struct image *img, const struct sandbox_limits *limits, int *lower,
                  int *scratch, struct errbuf *err);

/* rootfs__bind_at(src_dirfd, src, root, dest, recursive, attrs) — a clone of the mount tree at
 * src (with the mounts below it when recursive), given attrs, attached at dest below root (a
 * bind mount). 0 or -errno. */
int rootfs__bind_at(int src_dirfd, const char *src, int root, const char *dest, bool recursive,
                    unsigned attrs);

/* sandbox__scratch_open(sb, err) — an O_PATH descriptor of the root of sb's scratch tmpfs
 * (the directories "work" and "tmp" are the sandbox's /work and /tmp), for one operation: the
 * caller closes it when done. An idle sandbox holds no descriptor of its scratch (one server
 * holds thousands of sessions under one descriptor limit): init keeps the scratch's root and
 * hands a copy over on request (CTL_SCRATCH), and the copy must be the very mount and inode
 * READY handed over before any payload ran (checked: device, inode and mount id), so a
 * subverted init can give nothing else. A supervisor that may read init's descriptors (root)
 * takes the copy through /proc/<init>/fd without waking init, checked alike. The descriptor
 * or -errno with err set (-ENXIO: the
 * sandbox has no scratch). Everything below it is the sandbox's, written by hostile code:
 * resolve beneath it without following symlinks (openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS). Not while an exec runs (one thread at a
 * time, as every call). */
int sandbox__scratch_open(struct sandbox *sb, struct errbuf *err);

/* What files.c and fork.c read of a sandbox (sb keeps all of it). sandbox__host_uid/gid: the
 * host ids its payload runs as, the owner of the files it makes (as root SANDBOX_HOST_ID_BASE
 * + init's pid, else the runtime's outer ids). sandbox__limits: its limits now (disk and
 * writable root fixed at creation). */
uid_t sandbox__host_uid(const struct sandbox *sb);
gid_t sandbox__host_gid(const struct sandbox *sb);
const struct sandbox_limits *sandbox__limits(const struct sandbox *sb);
const struct sandbox_runtime *sandbox__runtime(const struct sandbox *sb);
const struct image *sandbox__image(const struct sandbox *sb);

/* sandbox__fs_ids(uid, gid) — this thread's filesystem ids (setfsuid, setfsgid; the other
 * threads keep theirs). A scratch tmpfs belongs to its sandbox's user namespace, where only
 * the sandbox's user is mapped: the host's root cannot create anything there (EOVERFLOW), so
 * the supervisor creates as the sandbox's host uid (sandbox__host_uid), which also makes the
 * payload the owner, and drops root's override of permissions while it does; then back with
 * (geteuid(), getegid()). 0, or -EPERM when the ids did not change. */
int sandbox__fs_ids(uid_t uid, gid_t gid);

/* sandbox__pause(sb, stop, err) — stop (SIGSTOP) every process of sb but its init and wait
 * until each is stopped, or (stop false) continue them all (SIGCONT). Also continues what a
 * process of the sandbox had stopped itself. 0 or -errno with err set. */
int sandbox__pause(struct sandbox *sb, bool stop, struct errbuf *err);

/* How every lookup in a sandbox's scratch resolves: beneath the given directory, following no
 * symlink or magic link and crossing no mount — the tree is the payload's, hostile. */
#define RESOLVE_SCRATCH                                                                            \
    (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)

/* sandbox__open_beneath(dirfd, rel, flags, mode) — openat2 of rel below dirfd with
 * RESOLVE_SCRATCH (O_CLOEXEC added); the fd or -errno. A rename elsewhere in the tree may make
 * the kernel answer EAGAIN: retried a few times. (files.c; fork.c uses it too.) */
int sandbox__open_beneath(int dirfd, const char *rel, int flags, mode_t mode);

/* What init's payload set-up is made of, shared with a fork server's jobs (zygote.c), which
 * run in processes that are not init's but confine themselves the same way. */

/* sandbox__parse_spec(memfd, x) — reads an exec request; 0 or -errno. Release with
 * sandbox__exec_req_release. Uses a buffer of the process's own, reused: one at a time. */
int sandbox__parse_spec(int memfd, struct exec_req *x);
void sandbox__exec_req_release(struct exec_req *x);
/* sandbox__payload_io(x, stdio) — stdio, fds ≥ 3 close-on-exec, cwd, umask, rlimits; 0 or the
 * stage that failed (errno set). */
int sandbox__payload_io(const struct exec_req *x, const int *stdio);
/* sandbox__payload_confine(filter, filtered) — capabilities dropped, no_new_privs, the seccomp
 * filter (unless filtered); 0 or the stage that failed (errno set). */
int sandbox__payload_confine(const struct filter *filter, bool filtered);
/* sandbox__payload_execve(x) — execve with init's search path; returns only on failure. */
void sandbox__payload_execve(const struct exec_req *x);
/* sandbox__spawn_report(pid, x, failure, m) — m for the supervisor once pid has run execve
 * (failure 0: CTL_STARTED) or failed (stage << 16 | errno: CTL_EXEC_FAIL, pid reaped). */
pid_t sandbox__spawn_report(pid_t pid, const struct exec_req *x, int failure, struct ctl_msg *m);
/* sandbox__reply(fd, type, err, text) — a reply of init's (or a zygote's) on fd: a ctl_msg of
 * this type, errno and text (NULL: none); a failure to send is the supervisor's to notice. */
void sandbox__reply(int fd, uint32_t type, int err, const char *text);

/* sandbox__exited_msg(m, status, pid) — m made CTL_EXITED for payload pid, just reaped by the
 * pid 1 of its pid namespace with wait status status: the CPU time and peak RSS of every child
 * that pid 1 has reaped so far (the payload's descendants included). */
void sandbox__exited_msg(struct ctl_msg *m, int status, pid_t pid);

/* sandbox__none_left() — the calling pid 1 has no child left, exited or not. Every process of
 * the namespace is its child once its parent is gone (orphans are reparented to pid 1 before
 * their parent can be reaped), so none left means no process left in the namespace. */
bool sandbox__none_left(void);

/* sandbox__report_exited(fd, status, pid) — CTL_EXITED on fd for the end of payload pid (wait
 * status), by the pid 1 of its pid namespace (a keeper, a fork server job's reaper): as
 * sandbox__exited_msg makes it, and CTL_EXITED_ALONE when sandbox__none_left. */
void sandbox__report_exited(int fd, int status, pid_t pid);

/* What a fork server job's pid 1 does at its one exec request, and with a child it reaps other
 * than the payload: the zygote's copy of the interpreter (zygote.c) and the small init
 * (jobinit.c) start pid 2 in their own ways. */
struct job_ops {
    /* start(ctx, x, fds, &failure, &why): pid 2 running request x (fds: the spec's memfd, then
     * stdin, stdout, stderr; the caller's), its start report read into failure (0, or
     * stage << 16 | errno); its pid, or -errno with why set when it could not be started */
    pid_t (*start)(void *ctx, const struct exec_req *x, const int *fds, int *failure,
                   const char **why);
    void (*reaped)(void *ctx, pid_t pid);
    void *ctx;
};

/* sandbox__job_serve(ctl, sfd, ops) — a fork server job's pid 1 after READY: puts, gets and one
 * exec on ctl, its children reaped as sfd (a signalfd of SIGCHLD) says, the payload's end
 * reported (sandbox__report_exited). Exits when the supervisor hangs up: the namespace ends. */
__attribute__((noreturn)) void sandbox__job_serve(int ctl, int sfd, const struct job_ops *ops);

/* sandbox__drop_all_caps() — ambient, effective, permitted and inheritable sets emptied. */
int sandbox__drop_all_caps(void);
/* sandbox__loopback_up() — brings up lo in the caller's network namespace. 0 or -errno. */
int sandbox__loopback_up(void);
/* sandbox__handle_put(ctl, req, fds, nfds) / sandbox__handle_get(ctl, req) — CTL_PUT (its one
 * descriptor, the file's content) and CTL_GET below the caller's /work, answered on ctl. */
void sandbox__handle_put(int ctl, const struct ctl_msg *req, const int *fds, int nfds);
void sandbox__handle_get(int ctl, const struct ctl_msg *req);
/* How many entries the fixed environment has (init_proto.c checks it at compile time). */
#define SANDBOX_FIXED_ENV_COUNT 13

/* sandbox__fixed_env_list(&n) — the fixed environment entries ("K=V"), n of them. */
const char *const *sandbox__fixed_env_list(size_t *n);

/* sandbox__create(rt, img, limits, zygote, err) — sandbox_create; with zygote, a fork server's
 * sandbox (init_params.zygote). */
struct sandbox *sandbox__create(const struct sandbox_runtime *rt, const struct image *img,
                                const struct sandbox_limits *limits, bool zygote,
                                struct errbuf *err);

/* sandbox__zygote_start(sb, fds, pid, err) — CTL_ZYGOTE with fds (socket, stdin, stdout,
 * stderr; the caller keeps them); *pid its pid inside. 0 or -errno with err set. */
int sandbox__zygote_start(struct sandbox *sb, const int fds[4], pid_t *pid, struct errbuf *err);

/* sandbox__job_new(rt, img, limits, peer, attach, nattach, err) — a sandbox with no init of
 * its own: its cgroup (made here) and a control socket whose other end (*peer) and the
 * group's v1 "tasks" files (attach, *nattach of them) the caller hands to a fork server's
 * zygote and then closes. The job answers on the socket as an init; sandbox__job_ready waits
 * for its READY; then sandbox_put_file, sandbox_get_file, one sandbox_exec (LAST) and
 * sandbox_destroy work as on any sandbox (teardown kills the job's cgroup). NULL with err. */
struct sandbox *sandbox__job_new(const struct sandbox_runtime *rt, const struct image *img,
                                 const struct sandbox_limits *limits, int *peer, int *attach,
                                 int *nattach, struct errbuf *err);
int sandbox__job_ready(struct sandbox *sb, struct errbuf *err);

/* sandbox__set_discard(sb, discard, ctx) — sandbox_discard(sb) calls discard(ctx, sb), which
 * owns sb from then on (it must destroy it), instead of destroying it. */
void sandbox__set_discard(struct sandbox *sb, void (*discard)(void *ctx, struct sandbox *sb),
                          void *ctx);

/* sandbox__job_idle(sb) — true while a job made ahead (READY, nothing asked of it since) can
 * still be used: its socket is open at the other end and holds no message it did not ask
 * for. False once its pid 1 has ended (a zygote that died takes its jobs with it). */
bool sandbox__job_idle(struct sandbox *sb);

#endif
