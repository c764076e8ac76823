/*
 * sandbox_init.c — pid 1 of a sandbox, and the launch of each payload.
 *
 * init is cloned by the supervisor straight into the new namespaces. Its phases, in
 * order (bubblewrap's discipline): the supervisor's argv and environment strings wiped
 * from its copy of memory (they are /proc/1/cmdline and environ inside) → wait for GO (the
 * supervisor has written the id maps and placed it in its cgroup) → cgroup namespace → identity →
 * hostname, loopback → root filesystem (rootfs.c) → READY → serve requests until the supervisor
 * hangs up.
 *
 * init never installs a signal handler, so no process inside can signal it (the kernel
 * drops unhandled signals sent to a namespace's init from inside); SIGCHLD is read from
 * a signalfd. It reaps every orphan, and reports only its payload's end.
 *
 * The payload child, between fork and execve: new session, stdio from the passed fds,
 * every other fd closed, cwd /work (or the image's WorkingDir, or the caller's), rlimits, all
 * capabilities dropped (bounding, ambient, effective, permitted, inheritable), no_new_privs,
 * seccomp — then execve with an environment built from scratch. A failure there is reported through
 * a CLOEXEC pipe.
 */
#include "sandbox/forkserver.h"
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/futex.h>
#include <linux/mount.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define SPAWN_STACK (256 * 1024)

static const char *const userns_limits[][2] = {
    {"/proc/sys/user/max_user_namespaces", "0"},
    {"/proc/sys/user/max_inotify_instances", "8"},
    {"/proc/sys/user/max_inotify_watches", "8192"},
};
static const char *const search_path[] = {"/usr/local/bin", "/usr/bin", "/bin"};

/* ---- init: setup ---- */

__attribute__((noreturn)) static void setup_fail(int ctl, int err, const char *text)
{
    sandbox__reply(ctl, CTL_FAILED, err, text);
    _exit(1);
}

/* raise_effective_caps() — after changing uid with KEEPCAPS, make permitted effective. */
static int raise_effective_caps(void)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct d[2];

    if (syscall(SYS_capget, &h, d) < 0)
        return -errno;
    d[0].effective = d[0].permitted;
    d[1].effective = d[1].permitted;
    return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

/* become_sandbox_user(root) — raw system calls, not glibc's wrappers: those broadcast the
 * change to every thread of the process and wait for them, and init, cloned from a
 * multi-threaded supervisor, has only the one thread the others will never answer from. */
static int become_sandbox_user(bool root)
{
    if (prctl(PR_SET_KEEPCAPS, 1) < 0)
        return -errno;
    if (root && syscall(SYS_setgroups, 0, NULL) < 0)
        return -errno;
    if (syscall(SYS_setresgid, SANDBOX_UID, SANDBOX_UID, SANDBOX_UID) < 0 ||
        syscall(SYS_setresuid, SANDBOX_UID, SANDBOX_UID, SANDBOX_UID) < 0)
        return -errno;
    return raise_effective_caps();
}

int sandbox__loopback_up(void)
{
    struct ifreq ifr;
    int s, r = 0;

    s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -errno;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
    if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
        r = -errno;
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (r == 0 && ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
        r = -errno;
    close(s);
    return r;
}

/* drop_bounding_set() — empties the bounding set; init does it once after setup, so
 * every payload inherits an empty one (the permitted set of init is not affected). */
static int drop_bounding_set(void)
{
    for (int c = 0; c <= 63; c++)
        if (prctl(PR_CAPBSET_DROP, c) < 0 && errno != EINVAL)
            return -errno;
    return 0;
}

/* sandbox__drop_all_caps() — the payload's remaining sets: ambient, effective, permitted,
 * inheritable. */
int sandbox__drop_all_caps(void)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct d[2];

    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return -errno;
    memset(d, 0, sizeof(d));
    return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

/* What the payload child reads from, and writes its failure to: it shares init's memory
 * (CLONE_VM | CLONE_VFORK) until execve. */
struct spawn_args {
    const struct init_params *p;
    const struct exec_req *x;
    const int *stdio;
    bool filtered; /* seccomp is in place already (a keeper applied it): not once more */
    int failure;   /* stage << 16 | errno, or 0 when execve succeeded */
};

/* ---- CPU affinity: the requester's CPU during a plain exec's start and end ----
 *
 * A plain exec is a chain of hand-offs: the supervisor's request wakes init, init wakes the
 * payload's process, the payload's end wakes init, init's report wakes the supervisor. The
 * kernel wakes a sleeping task on the CPU it last ran on when that CPU is idle, so the chain
 * went back and forth between CPUs, and on a virtual machine waking an idle CPU costs a
 * round trip through the hypervisor (on the 2-CPU VM of docs/BENCHMARKS.md, 0.14 ms from a
 * request's send to init's receipt, against 0.02 ms for a pipe round trip between busy CPUs).
 * A bare fork keeps the child on the parent's CPU while the parent waits.
 * So the supervisor pins init to its own CPU for the exec (CTL_EXEC_PINNED), init pins the
 * made-ahead process there before waking it, and the payload takes back init's CPUs before
 * its execve: it runs where the waiting supervisor freed a CPU, and may go anywhere after. */

static cpu_set_t init_cpus;  /* init's CPUs as cloned (the supervisor's) */
static bool init_cpus_known; /* init_cpus was read */

/* cpus_restore() — the calling process back on init_cpus (a payload before its execve, init
 * when a pinned exec ends). Quietly nothing on failure: the process then keeps the one CPU,
 * which changes nothing but how fast it may run. */
static void cpus_restore(void)
{
    if (init_cpus_known)
        (void)sched_setaffinity(0, sizeof(init_cpus), &init_cpus);
}

/* cpus_unpin(pinned) — init back on init_cpus when *pinned (its exec was pinned and has ended),
 * which it then clears. Called before the exec's last report: the supervisor may pin init for
 * its next exec as soon as it has the report, and this must not undo that. */
static void cpus_unpin(bool *pinned)
{
    if (*pinned) {
        cpus_restore();
        *pinned = false;
    }
}

bool sandbox__pin_here(pid_t pid)
{
    int cpu = sched_getcpu();
    cpu_set_t one;

    if (cpu < 0 || cpu >= CPU_SETSIZE || pid <= 0)
        return false;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(pid, sizeof(one), &one) == 0;
}

/* sandbox__payload_io(x, stdio) — the payload's request-dependent steps: stdio from the three fds,
 * every other fd to close at execve, the start directory, umask, rlimits. 0, or the stage that
 * failed (errno set). */
int sandbox__payload_io(const struct exec_req *x, const int *stdio)
{
    if (dup2(stdio[0], 0) < 0 || dup2(stdio[1], 1) < 0 || dup2(stdio[2], 2) < 0)
        return 1;
    if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
        return 2; /* every fd but 0-2 closes at execve */
    if (chdir(x->spec.cwd) < 0)
        return 3;
    umask(022); /* not the supervisor's (a user's 077 or 002 would change every file mode) */
    if (setrlimit(RLIMIT_CPU, &x->spec.cpu) < 0 || setrlimit(RLIMIT_FSIZE, &x->spec.fsize) < 0 ||
        setrlimit(RLIMIT_NOFILE, &x->spec.nofile) < 0 ||
        setrlimit(RLIMIT_STACK, &x->spec.stack) < 0 || setrlimit(RLIMIT_CORE, &x->spec.core) < 0 ||
        setrlimit(RLIMIT_MEMLOCK, &x->spec.memlock) < 0 ||
        (x->spec.as.rlim_cur != RLIM_INFINITY && setrlimit(RLIMIT_AS, &x->spec.as) < 0) ||
        (x->spec.nproc.rlim_cur != RLIM_INFINITY && setrlimit(RLIMIT_NPROC, &x->spec.nproc) < 0))
        return 4;
    return 0;
}

/* sandbox__payload_confine(p, filtered) — what no request changes: every capability dropped,
 * no_new_privs, the seccomp filter (unless filtered: a keeper applied it). 0, or the stage that
 * failed (errno set). */
int sandbox__payload_confine(const struct filter *filter, bool filtered)
{
    int e;

    if ((e = sandbox__drop_all_caps()) < 0) {
        errno = -e;
        return 5;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return 6;
    if (!filtered && (e = filter_apply(filter)) < 0) {
        errno = -e;
        return 7;
    }
    return 0;
}

/* sandbox__payload_execve(x) — execve of argv[0], a bare name searched for in search_path. Returns
 * only on failure, errno set (the first error that is not ENOENT). */
void sandbox__payload_execve(const struct exec_req *x)
{
    char path[4096];
    int first = ENOENT;

    if (strchr(x->argv[0], '/')) {
        execve(x->argv[0], x->argv, x->envp);
        return;
    }
    for (size_t i = 0; i < sizeof(search_path) / sizeof(search_path[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", search_path[i], x->argv[0]);
        execve(path, x->argv, x->envp);
        if (errno != ENOENT && first == ENOENT)
            first = errno;
    }
    errno = first;
}

/* payload_child — the payload between clone and execve. It runs on its own stack in init's
 * address space while init waits (vfork semantics, as posix_spawn does, so no page table is
 * copied): it may change only what is its own — fds, cwd, limits, credentials, filters —
 * and must not allocate. A failure is left in args->failure for init to report. */
static int payload_child(void *arg)
{
    struct spawn_args *a = arg;
    sigset_t none;
    int stage;

    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setsid();
    cpus_restore(); /* init may be pinned for this exec */
    stage = sandbox__payload_io(a->x, a->stdio);
    if (!stage)
        stage = sandbox__payload_confine(a->p->filter, a->filtered);
    if (!stage) {
        sandbox__payload_execve(a->x);
        stage = 8;
    }
    a->failure = stage << 16 | (errno & 0xffff);
    _exit(127);
}

/* ---- the next plain exec's process, made ahead ---- */

/* A plain exec's process made before its request, while init is idle: it shares init's memory
 * and descriptor table (CLONE_VM | CLONE_FILES: no page table copied), runs on a stack of its
 * own, and has already done what no request changes — a new session, every capability dropped,
 * no_new_privs, the seccomp filter loaded (the kernel compiles each filter it is given; about
 * 0.25 ms a time on this machine) — then waits on a futex. A request has it take a copy of the
 * descriptor table for itself, then stdio, start directory, rlimits and execve; init waits for the
 * execve as vfork waits (CLONE_CHILD_CLEARTID: the kernel clears tid and wakes init when the
 * process lets go of init's memory, at its execve or its exit).
 *
 * One is made only when init has no other child (on CTL_PRESTART, or after a plain exec that
 * was not the last and left nothing running), and it is killed before any KEEP exec: no process
 * of the sandbox ever runs beside it, so none can signal it, stop it or change its limits before
 * it becomes the payload. Init is single-threaded: one at a time. */
struct prespawn {
    pid_t pid;              /* 0: none */
    int tid;                /* its tid until it lets go of init's memory, then 0 (futex) */
    int ready;              /* 1 once its request-independent steps are done (futex) */
    int go;                 /* 1: a request is in args; 2: exit (futex) */
    struct spawn_args args; /* the request, and a failure's stage and errno */
    char *stack;
    bool again; /* the running exec was plain and not the last: make the next when it ends */
};

static long futex(int *word, int op, int val, const struct timespec *timeout)
{
    return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

/* prespawn_child — the made-ahead process: confine, wait for a request, then run it. */
static int prespawn_child(void *arg)
{
    struct prespawn *ps = arg;
    struct spawn_args *a = &ps->args;
    sigset_t none;
    int stage;

    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setsid();
    stage = sandbox__payload_confine(a->p->filter, false);
    if (stage)
        a->failure = stage << 16 | (errno & 0xffff);
    __atomic_store_n(&ps->ready, 1, __ATOMIC_SEQ_CST);
    futex(&ps->ready, FUTEX_WAKE, 1, NULL);
    if (stage)
        _exit(127);
    while (__atomic_load_n(&ps->go, __ATOMIC_SEQ_CST) == 0)
        futex(&ps->go, FUTEX_WAIT, 0, NULL);
    if (__atomic_load_n(&ps->go, __ATOMIC_SEQ_CST) != 1)
        _exit(0);
    /* From here init waits: a descriptor table of our own (a copy of the shared one, where the
     * request's fds are), then the same steps as payload_child. */
    stage = 1;
    cpus_restore(); /* pinned by init for the request, if the request was */
    if (syscall(SYS_close_range, ~0U, ~0U, CLOSE_RANGE_UNSHARE) == 0) {
        stage = sandbox__payload_io(a->x, a->stdio);
        if (!stage) {
            sandbox__payload_execve(a->x);
            stage = 8;
        }
    }
    a->failure = stage << 16 | (errno & 0xffff);
    _exit(127);
}

/* prespawn_wait_tid(ps) — until the made-ahead process has let go of init's memory. */
static void prespawn_wait_tid(struct prespawn *ps)
{
    const struct timespec tick = {0, 20 * 1000 * 1000};
    int t;

    while ((t = __atomic_load_n(&ps->tid, __ATOMIC_SEQ_CST)) != 0)
        futex(&ps->tid, FUTEX_WAIT, t, &tick);
}

/* prespawn_drop(ps) — kills and reaps the made-ahead process, if any. */
static void prespawn_drop(struct prespawn *ps)
{
    if (ps->pid <= 0)
        return;
    kill(ps->pid, SIGKILL);
    while (waitpid(ps->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    ps->pid = 0;
}

/* prespawn_make(ps, p) — makes the next plain exec's process when init has no child at all;
 * quietly none when it cannot (the exec then starts as before). Returns once the process is
 * confined and waiting. */
static void prespawn_make(struct prespawn *ps, const struct init_params *p)
{
    const struct timespec tick = {0, 20 * 1000 * 1000};
    pid_t pid;

    if (ps->pid > 0 || !sandbox__none_left())
        return;
    if (!ps->stack) {
        void *m = mmap(NULL, SPAWN_STACK, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (m == MAP_FAILED)
            return;
        ps->stack = m;
    }
    memset(&ps->args, 0, sizeof(ps->args));
    ps->args.p = p;
    ps->ready = ps->go = 0;
    pid = clone(prespawn_child, ps->stack + SPAWN_STACK,
                CLONE_VM | CLONE_FILES | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD, ps,
                &ps->tid, NULL, &ps->tid);
    if (pid < 0)
        return;
    ps->pid = pid;
    while (!__atomic_load_n(&ps->ready, __ATOMIC_SEQ_CST) &&
           __atomic_load_n(&ps->tid, __ATOMIC_SEQ_CST))
        futex(&ps->ready, FUTEX_WAIT, 0, &tick);
    if (ps->args.failure || !__atomic_load_n(&ps->ready, __ATOMIC_SEQ_CST)) {
        prespawn_wait_tid(ps);
        prespawn_drop(ps);
    }
}

/* prespawn_run(ps, x, stdio, pinned) — hands the request to the made-ahead process (first
 * pinned to init's CPU when init is pinned for this exec) and waits until it has called execve
 * or failed; a->failure then says which (as spawn_payload's child does). Returns its pid; ps
 * holds none afterwards. */
static pid_t prespawn_run(struct prespawn *ps, const struct exec_req *x, const int *stdio,
                          bool pinned)
{
    pid_t pid = ps->pid;

    if (pinned)
        (void)sandbox__pin_here(pid);
    ps->args.x = x;
    ps->args.stdio = stdio;
    __atomic_store_n(&ps->go, 1, __ATOMIC_SEQ_CST);
    futex(&ps->go, FUTEX_WAKE, 1, NULL);
    prespawn_wait_tid(ps);
    ps->pid = 0;
    return pid;
}

/* spawn_payload(p, x, stdio, filtered, m) — starts the payload of x with stdio (three fds) and
 * fills m for the supervisor: CTL_STARTED with its pid, or CTL_EXEC_FAIL saying why. Returns
 * the pid, or 0 when it did not start. Runs in init, or in a KEEP exec's keeper. */
static pid_t spawn_payload(const struct init_params *p, const struct exec_req *x, const int *stdio,
                           bool filtered, struct ctl_msg *m)
{
    static char *stack; /* the payload child's, reused for every exec */
    struct spawn_args a = {.p = p, .x = x, .stdio = stdio, .filtered = filtered};
    pid_t pid;

    memset(m, 0, sizeof(*m));
    m->type = CTL_EXEC_FAIL;
    if (!stack) {
        stack = mmap(NULL, SPAWN_STACK, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED) {
            stack = NULL;
            m->err = errno;
            snprintf(m->text, sizeof(m->text), "cannot allocate a stack in init");
            return 0;
        }
    }
    /* Returns once the child has called execve successfully or exited. */
    pid = clone(payload_child, stack + SPAWN_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
    if (pid < 0) {
        m->err = errno;
        snprintf(m->text, sizeof(m->text), "cannot start the payload");
        return 0;
    }
    return sandbox__spawn_report(pid, x, a.failure, m);
}

/* handle_exec — starts the payload (in the made-ahead process when there is one); returns its
 * pid, or 0 after reporting a failure. *pinned: the supervisor pinned init for this exec
 * (cleared when the exec ends here). */
static pid_t handle_exec(const struct init_params *p, const int *fds, int nfds, struct prespawn *ps,
                         bool *pinned)
{
    struct exec_req x;
    struct ctl_msg m;
    pid_t pid = 0;

    memset(&x, 0, sizeof(x));
    if (nfds != 4 || sandbox__parse_spec(fds[0], &x) < 0) {
        memset(&m, 0, sizeof(m));
        m.type = CTL_EXEC_FAIL;
        m.err = EPROTO;
        snprintf(m.text, sizeof(m.text), "malformed exec request");
    } else if (ps->pid > 0) {
        pid = prespawn_run(ps, &x, fds + 1, *pinned); /* first: it sets ps->args.failure */
        pid = sandbox__spawn_report(pid, &x, ps->args.failure, &m);
    } else {
        pid = spawn_payload(p, &x, fds + 1, false, &m);
    }
    if (!pid)
        cpus_unpin(pinned); /* the exec ends here */
    sandbox__ctl_send(p->ctl_fd, &m, NULL, 0);
    sandbox__exec_req_release(&x);
    return pid;
}

/* ---- KEEP execs: a keeper per exec ---- */

/* The latest KEEP exec's keeper, as init sees it. Keepers of earlier execs are plain
 * children of init by then, reaped silently when their namespace empties. */
struct keeper {
    pid_t pid;    /* 0 once reaped or killed */
    int sock;     /* init's end of the keeper's report socket, -1 once closed */
    bool started; /* the keeper reported CTL_STARTED */
};

static void keeper_close(struct keeper *k)
{
    if (k->sock >= 0)
        close(k->sock);
    k->sock = -1;
}

/* keeper_main(p, x, stdio, report) — the keeper's whole life. It is pid 1 of a pid namespace
 * of its own, a child of init, holding a copy of init's memory. It locks itself down as far as
 * the payload (no capabilities, no_new_privs, the seccomp filter, which the payload then
 * inherits instead of applying again), keeps only the report socket, starts the payload as
 * init does, reports on REPORT (CTL_STARTED or CTL_EXEC_FAIL, then CTL_EXITED with the wait
 * status and the rusage of what it reaped, CTL_EXITED_ALONE when nothing of the exec is left),
 * and then reaps whatever the exec left running until its namespace is empty. Nothing inside
 * can signal it (the kernel drops signals to a namespace's init from within unless it handles
 * them, and it handles none) nor trace it (not dumpable, as init); when it dies, however it
 * dies, the kernel kills everything in its namespace. */
__attribute__((noreturn)) static void
keeper_main(const struct init_params *p, const struct exec_req *x, const int *stdio, int report)
{
    static const int std[3] = {0, 1, 2};
    struct ctl_msg m;
    pid_t payload, pid;
    int status = 0, r;

    prctl(PR_SET_NAME, "crucible-keep");
    /* Only the report socket (as fd 3, where init's control socket was) and the payload's
     * stdio (as 0 to 2) stay open. The fds received are all above 3. */
    if (dup2(report, 3) < 0 || dup2(stdio[0], 0) < 0 || dup2(stdio[1], 1) < 0 ||
        dup2(stdio[2], 2) < 0)
        _exit(1);
    syscall(SYS_close_range, 4, ~0U, 0);
    report = 3;
    r = sandbox__drop_all_caps();
    if (r == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        r = -errno;
    if (r == 0)
        r = filter_apply(p->filter);
    if (r < 0) {
        memset(&m, 0, sizeof(m));
        m.type = CTL_EXEC_FAIL;
        m.err = -r;
        snprintf(m.text, sizeof(m.text), "cannot lock down the exec's keeper: %s", strerror(-r));
        payload = 0;
    } else {
        payload = spawn_payload(p, x, std, true, &m);
    }
    sandbox__ctl_send(report, &m, NULL, 0);
    syscall(SYS_close_range, 0, 2, 0);
    if (!payload)
        _exit(0);
    while ((pid = waitpid(-1, &status, 0)) != payload)
        if (pid < 0 && errno != EINTR)
            _exit(1); /* cannot be: the payload is our child until reaped */
    sandbox__report_exited(report, status, payload);
    close(report);
    while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
        ;
    _exit(0);
}

/* handle_exec_keep(p, fds, nfds, k) — a KEEP exec: forks its keeper into a new pid namespace
 * (a plain fork by raw clone: glibc's fork would run atfork handlers whose locks another
 * thread of the supervisor may have held when init was cloned). The keeper reports the
 * start, then the end, through k->sock; init relays both (keeper_relay). Returns the keeper's
 * pid (the exec is running), or 0 after reporting a failure. */
static pid_t handle_exec_keep(const struct init_params *p, const int *fds, int nfds,
                              struct keeper *k)
{
    struct exec_req x;
    int sv[2];
    pid_t pid;

    /* From here the latest KEEP exec is this one, started or not: a CTL_KILL_EXEC meant for
     * it must never reach an earlier exec's processes. */
    keeper_close(k);
    k->pid = 0;
    memset(&x, 0, sizeof(x));
    if (nfds != 4 || sandbox__parse_spec(fds[0], &x) < 0) {
        sandbox__exec_req_release(&x);
        sandbox__reply(p->ctl_fd, CTL_EXEC_FAIL, EPROTO, "malformed exec request");
        return 0;
    }
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        int e = errno;
        sandbox__exec_req_release(&x);
        sandbox__reply(p->ctl_fd, CTL_EXEC_FAIL, e, "cannot create the exec's report socket");
        return 0;
    }
    pid = (pid_t)syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, 0, NULL, NULL, 0);
    if (pid == 0) {
        close(sv[0]);
        keeper_main(p, &x, fds + 1, sv[1]);
    }
    close(sv[1]);
    sandbox__exec_req_release(&x);
    if (pid < 0) {
        int e = errno;
        close(sv[0]);
        sandbox__reply(p->ctl_fd, CTL_EXEC_FAIL, e, "cannot start the exec's keeper");
        return 0;
    }
    k->pid = pid;
    k->sock = sv[0];
    k->started = false;
    return pid;
}

/* keeper_relay(ctl, k, payload) — passes the keeper's next report on to the supervisor; a
 * CTL_EXEC_FAIL or CTL_EXITED ends the exec (*payload = 0). At the end of the socket (the
 * keeper closed it after CTL_EXITED, or died) it is closed here; a keeper that died before
 * reporting the end is reported when it is reaped (keeper_reaped). */
static void keeper_relay(int ctl, struct keeper *k, pid_t *payload)
{
    struct ctl_msg m;

    if (sandbox__ctl_recv(k->sock, &m, NULL, NULL) < 0) {
        keeper_close(k);
        return;
    }
    if (*payload != k->pid)
        return; /* the exec was ended already (killed): nothing more to say */
    if (m.type == CTL_STARTED) {
        k->started = true;
    } else if (m.type == CTL_EXEC_FAIL || m.type == CTL_EXITED) {
        *payload = 0;
    } else {
        return;
    }
    sandbox__ctl_send(ctl, &m, NULL, 0);
}

/* keeper_reaped(ctl, k, payload, status) — the latest keeper is gone. What it reported and
 * init has not read yet is relayed first; when its exec had not ended by then, the keeper's
 * own death is the exec's end (an OOM kill, say: everything in its namespace died with it). */
static void keeper_reaped(int ctl, struct keeper *k, pid_t *payload, int status)
{
    while (k->sock >= 0 && *payload == k->pid) {
        struct pollfd pf = {.fd = k->sock, .events = POLLIN};
        if (poll(&pf, 1, 0) <= 0)
            break;
        keeper_relay(ctl, k, payload);
    }
    if (*payload == k->pid) {
        struct ctl_msg m;
        memset(&m, 0, sizeof(m));
        /* A keeper killed by a signal before its report of the start came in (an OOM kill,
         * a kill from outside) ended the exec the way a killed payload would: the payload
         * may well have started in that window, and nothing of crucible failed. The
         * supervisor hears of a start first, as it always does. */
        if (!k->started && WIFSIGNALED(status)) {
            m.type = CTL_STARTED;
            m.pid = k->pid;
            sandbox__ctl_send(ctl, &m, NULL, 0);
            memset(&m, 0, sizeof(m));
            k->started = true;
        }
        if (k->started) {
            m.type = CTL_EXITED;
            m.status = status;
            m.mode = CTL_EXITED_ALONE;
        } else {
            m.type = CTL_EXEC_FAIL;
            m.err = ECHILD;
            snprintf(m.text, sizeof(m.text), "the exec's keeper ended before the payload started");
        }
        sandbox__ctl_send(ctl, &m, NULL, 0);
        *payload = 0;
    }
    keeper_close(k);
    k->pid = 0;
}

/* kill_exec(ctl, k, payload) — CTL_KILL_EXEC: SIGKILL to the latest KEEP exec's keeper, which
 * takes its whole pid namespace with it (what the exec started, and nothing else), reaped
 * before the confirmation. Whatever the exec reports no longer goes out. */
static void kill_exec(int ctl, struct keeper *k, pid_t *payload)
{
    int err = 0;

    if (k->pid > 0) {
        if (*payload == k->pid)
            *payload = 0;
        kill(k->pid, SIGKILL);
        while (waitpid(k->pid, NULL, 0) < 0)
            if (errno != EINTR) {
                err = errno;
                break;
            }
        keeper_close(k);
        k->pid = 0;
    }
    sandbox__reply(ctl, CTL_EXEC_KILLED, err, NULL);
}

/* reap(ctl, payload, k) — reaps every exited child; reports the payload's end (a KEEP exec's
 * through its keeper: keeper_reaped). */
static void reap(int ctl, pid_t *payload, struct keeper *k, struct prespawn *ps, bool *pinned)
{
    struct ctl_msg m;
    bool ended = false;
    int status;
    pid_t pid;

    memset(&m, 0, sizeof(m));
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (ps->pid > 0 && pid == ps->pid) {
            ps->pid = 0; /* killed from outside while it waited: the next exec starts as before */
        } else if (k->pid > 0 && pid == k->pid) {
            keeper_reaped(ctl, k, payload, status);
        } else if (pid == *payload) {
            sandbox__exited_msg(&m, status, pid);
            *payload = 0;
            ended = true;
        }
    }
    if (!ended)
        return;
    if (sandbox__none_left()) /* the supervisor may take the verdict as final without a kill */
        m.mode = CTL_EXITED_ALONE;
    cpus_unpin(pinned);
    sandbox__ctl_send(ctl, &m, NULL, 0);
    if ((m.mode & CTL_EXITED_ALONE) && ps->again)
        prespawn_make(ps, ps->args.p); /* after the report: off this exec's path */
}

/* kill_all(ctl, payload, k) — SIGKILL to every process of the namespace but init (what
 * kill(-1) means for a namespace's init: keepers and everything in their namespaces too),
 * then reap them all and confirm. */
static void kill_all(int ctl, pid_t *payload, struct keeper *k, struct prespawn *ps)
{
    int tries = 0;

    ps->pid = 0; /* killed and reaped below with the rest */
    keeper_close(k);
    k->pid = 0;
    kill(-1, SIGKILL);
    while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
        if (++tries > 100000)
            break;
    *payload = 0;
    sandbox__reply(ctl, CTL_KILLED, errno == ECHILD ? 0 : errno, NULL);
}

/* in_vfork(pid, tid) — whether the thread sleeps in the kernel's clone, uninterruptibly:
 * the parent of a vfork waiting for its child to execute or exit. It runs no code of its own
 * until then, and a stopped child never does: stopped as far as a pause goes (dash starts
 * its commands with vfork; without this, a payload that runs commands in a loop could never
 * be paused, its fork refused). */
static bool in_vfork(const char *pid, const char *tid)
{
    char path[96], buf[64];
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%s/task/%s/wchan", pid, tid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return false;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return strcmp(buf, "kernel_clone") == 0 || strcmp(buf, "_do_fork") == 0 ||
           strcmp(buf, "do_fork") == 0;
}

/* task_running(pid, tid) — whether the thread's state in /proc (the sandbox's own) is other
 * than stopped or dead (a vfork's parent counts as stopped: in_vfork). Raw reads into a stack
 * buffer: init must not allocate. */
static bool task_running(const char *pid, const char *tid)
{
    char path[96], buf[512], *paren;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%s/task/%s/stat", pid, tid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false; /* gone */
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    paren = strrchr(buf, ')');
    if (!paren || paren[1] != ' ')
        return false;
    if (paren[2] == 'D' && in_vfork(pid, tid))
        return false;
    return !strchr("TtZX", paren[2]);
}

/* proc_any(dirfd, each, arg) — calls each(name, arg) for every numeric entry of a /proc
 * directory, through getdents64 (no opendir: no allocation); stops when it returns true.
 * Whether one did. */
static bool proc_any(int dirfd, bool (*each)(const char *, const void *), const void *arg)
{
    char buf[4096];
    long n;

    while ((n = syscall(SYS_getdents64, dirfd, buf, sizeof(buf))) > 0) {
        for (long off = 0; off < n;) {
            struct proc_dirent {
                uint64_t d_ino;
                int64_t d_off;
                unsigned short d_reclen;
                unsigned char d_type;
                char d_name[];
            } *d = (struct proc_dirent *)(buf + off);
            off += d->d_reclen;
            if (d->d_name[0] >= '0' && d->d_name[0] <= '9' && each(d->d_name, arg))
                return true;
        }
    }
    return false;
}

static bool thread_running(const char *tid, const void *pid)
{
    return task_running(pid, tid);
}

static bool process_running(const char *pid, const void *unused)
{
    char path[64];
    bool running;
    int fd;

    (void)unused;
    if (strcmp(pid, "1") == 0)
        return false; /* init itself */
    snprintf(path, sizeof(path), "/proc/%s/task", pid);
    fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return false;
    running = proc_any(fd, thread_running, pid);
    close(fd);
    return running;
}

/* pause_all(ctl) — SIGSTOP to every process of the namespace but init (kill(-1) from a
 * namespace's init; processes of nested pid namespaces, an exec's keeper included, get it
 * too: SIGSTOP from an ancestor namespace cannot be ignored) until every thread of them shows
 * stopped, for a bounded time (a process forking meanwhile has its child stopped in the next
 * round). Replies CTL_PAUSED, err EBUSY when some did not stop. CTL_RESUME's SIGCONT needs
 * no wait. */
static void pause_all(int ctl, uint32_t seq)
{
    /* well within the supervisor's wait (sandbox__pause: SANDBOX_INIT_WAIT_S), however loaded
     * the machine */
    double deadline = util_now() + 5.0;
    struct ctl_msg m;
    int err = EBUSY;

    for (int round = 0; round < 2000 && util_now() < deadline; round++) {
        int fd;
        kill(-1, SIGSTOP);
        fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
            err = errno;
            break;
        }
        bool running = proc_any(fd, process_running, NULL);
        close(fd);
        if (!running) {
            err = 0;
            break;
        }
        usleep(500);
    }
    memset(&m, 0, sizeof(m));
    m.type = CTL_PAUSED;
    m.err = err;
    m.mode = seq; /* the request's: sandbox.c drops a late answer by it */
    (void)sandbox__ctl_send(ctl, &m, NULL, 0);
}

/* wipe_supervisor_args(rt) — init is a copy of the supervisor's memory, and the kernel shows
 * the argv and environment strings of that memory as /proc/1/cmdline and /proc/1/environ to
 * everything in the sandbox: the server's command line (its token file, host paths) and
 * environment. Zeroing them in init's copy (the supervisor's own stay) leaves both empty:
 * a few kilobytes of memset, no exec of a separate init binary. */
/* ---- a fork server's zygote ---- */

/* The capabilities a fork server's job needs for its own set-up (zygote.c: namespaces, its
 * scratch and /proc mounts, loopback). Inheritable and ambient in a fork server's init, set
 * before the bounding set goes (which would forbid it), so that they survive the zygote's
 * execve as a non-root user; every payload's sandbox__drop_all_caps empties both sets. */
static const int zygote_caps[] = {CAP_SYS_ADMIN, CAP_NET_ADMIN};

static int zygote_caps_keep(void)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct d[2];

    if (syscall(SYS_capget, &h, d) < 0)
        return -errno;
    for (size_t i = 0; i < sizeof(zygote_caps) / sizeof(zygote_caps[0]); i++)
        d[zygote_caps[i] / 32].inheritable |= 1u << (zygote_caps[i] % 32);
    if (syscall(SYS_capset, &h, d) < 0)
        return -errno;
    for (size_t i = 0; i < sizeof(zygote_caps) / sizeof(zygote_caps[0]); i++)
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, zygote_caps[i], 0, 0) < 0)
            return -errno;
    return 0;
}

/* handle_zygote(p, fds, nfds) — CTL_ZYGOTE: a fresh exec of init's own binary (the
 * supervisor's, /proc/self/exe) as FORKSERVER_ZYGOTE_ARG, with fds[0] as its fd 3 and
 * fds[1..3] as its stdio, the fixed environment, in "/", its own session. Not a copy of
 * init's memory beyond the exec: nothing of the supervisor reaches it. Init reaps it as any
 * orphan when it ends. */
static void handle_zygote(const struct init_params *p, const int *fds, int nfds)
{
    static char *const argv[] = {"crucible-zygote", FORKSERVER_ZYGOTE_ARG, NULL};
    char *env[SANDBOX_FIXED_ENV_COUNT + 1];
    size_t nfixed;
    const char *const *fixed = sandbox__fixed_env_list(&nfixed);
    struct ctl_msg m;
    sigset_t none;
    pid_t pid;

    if (!p->zygote || nfds != 4) {
        sandbox__reply(p->ctl_fd, CTL_EXEC_FAIL, EPROTO, "not a fork server's sandbox");
        return;
    }
    pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
    if (pid < 0) {
        sandbox__reply(p->ctl_fd, CTL_EXEC_FAIL, errno, "cannot start the zygote");
        return;
    }
    if (pid == 0) {
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        setsid();
        cpus_restore(); /* its jobs are made on every CPU init may use */
        if (dup2(fds[1], 0) < 0 || dup2(fds[2], 1) < 0 || dup2(fds[3], 2) < 0 ||
            dup2(fds[0], 3) < 0 || chdir("/") < 0)
            _exit(127);
        syscall(SYS_close_range, 4, ~0U, 0);
        for (size_t i = 0; i < nfixed; i++)
            env[i] = (char *)fixed[i];
        env[nfixed] = NULL;
        execve("/proc/self/exe", argv, env);
        _exit(127);
    }
    memset(&m, 0, sizeof(m));
    m.type = CTL_STARTED;
    m.pid = pid;
    (void)sandbox__ctl_send(p->ctl_fd, &m, NULL, 0);
}

static void wipe_supervisor_args(const struct sandbox_runtime *rt)
{
    if (!rt)
        return;
    if (rt->arg_start && rt->arg_end > rt->arg_start)
        memset((void *)rt->arg_start, 0, rt->arg_end - rt->arg_start);
    if (rt->env_start && rt->env_end > rt->env_start)
        memset((void *)rt->env_start, 0, rt->env_end - rt->env_start);
}

void sandbox__init_main(const struct init_params *params)
{
    struct init_params self = *params;
    const struct init_params *p = &self;
    struct errbuf err = {{0}};
    struct ctl_msg m;
    sigset_t chld;
    int ctl = p->ctl_fd, sfd, r, devnull;
    pid_t payload = 0; /* the running exec's payload, or its keeper (KEEP); 0: none */
    struct keeper keep = {.pid = 0, .sock = -1};
    struct prespawn pre = {.pid = 0};
    bool pinned = false;          /* the running exec's request came with CTL_EXEC_PINNED */
    bool cgns = false;            /* entered once every attach is done: at setup when GO says so
                                   * (CTL_GO_CGROUPS_FINAL), else at the first exec */
    int lower[IMAGE_MAX_ENTRIES]; /* a writable root's lower layers (CTL_LOWER) */
    int attach_err = 0;
    int scratch = -1; /* the scratch tmpfs's root, handed to the supervisor with READY and
                       * again on each CTL_SCRATCH: the supervisor keeps no copy while idle.
                       * O_CLOEXEC, closed in every keeper, and init is not dumpable, so no
                       * process of the sandbox can reach it through init. */

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_NAME, "crucible-init");
    init_cpus_known = sched_getaffinity(0, sizeof(init_cpus), &init_cpus) == 0;
    wipe_supervisor_args(p->rt);
    /* No handler may survive from the supervisor (a sanitizer's, say): the kernel delivers
     * a signal sent from inside the namespace to its init only when init handles it. */
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            signal(sig, sig == SIGPIPE ? SIG_IGN : SIG_DFL);
    /* Join the v1 groups first, so everything init does is accounted there. */
    for (int i = 0; i < p->nattach; i++)
        if (write(p->attach_fds[i], "0", 1) != 1)
            attach_err = errno;
    /* Nothing of the supervisor's but the control socket stays open in init. */
    devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0 ||
        dup2(ctl, 3) < 0)
        _exit(1);
    ctl = self.ctl_fd = 3;
    syscall(SYS_close_range, 4, ~0U, 0);

    for (int i = 0; i < IMAGE_MAX_ENTRIES; i++)
        lower[i] = -1;
    for (;;) {
        int fd = -1, nfd = 1;
        if (sandbox__ctl_recv(ctl, &m, &fd, &nfd) < 0)
            _exit(1); /* the supervisor went away before we started */
        if (m.type == CTL_GO) {
            cgns = (m.mode & CTL_GO_CGROUPS_FINAL) != 0; /* to enter below */
            break;
        }
        if (m.type != CTL_LOWER || nfd != 1 || m.pid < 0 || m.pid >= IMAGE_MAX_ENTRIES ||
            lower[m.pid] >= 0)
            _exit(1);
        lower[m.pid] = fd;
    }
    /* Only now, with the id maps written (an unprivileged supervisor needs our /proc files
     * to be its own for that), does init stop being ptrace-able or readable through /proc. */
    prctl(PR_SET_DUMPABLE, 0);
    if (attach_err)
        setup_fail(ctl, attach_err, "cannot join the sandbox cgroup");
    if ((r = become_sandbox_user(p->root)) < 0)
        setup_fail(ctl, -r, "cannot switch to the sandbox user");
    if (sethostname(SANDBOX_HOSTNAME, strlen(SANDBOX_HOSTNAME)) < 0 ||
        setdomainname(SANDBOX_HOSTNAME, strlen(SANDBOX_HOSTNAME)) < 0)
        setup_fail(ctl, errno, "cannot set the hostname");
    if (p->limits->loopback && (r = sandbox__loopback_up()) < 0)
        setup_fail(ctl, -r, "cannot bring up the loopback interface");
    if ((r = rootfs__build(p->img, p->limits, lower, &scratch, &err)) < 0)
        setup_fail(ctl, -r, err.msg);

    /* Per-user-namespace kernel limits. No nested user namespaces: a second layer behind
     * seccomp. inotify instances and watches are also charged to the owner of this
     * namespace (the supervisor's uid) in the parent, a pool every sandbox shares: cap
     * what one sandbox may take from it. */
    for (size_t i = 0; i < sizeof(userns_limits) / sizeof(userns_limits[0]); i++)
        if ((r = util_write_file(userns_limits[i][0], userns_limits[i][1])) < 0)
            setup_fail(ctl, -r, userns_limits[i][0]);
    if (cgns && unshare(CLONE_NEWCGROUP) < 0)
        setup_fail(ctl, errno, "cannot create cgroup namespace");
    if (p->zygote && (r = zygote_caps_keep()) < 0)
        setup_fail(ctl, -r, "cannot keep the fork server's capabilities");
    if ((r = drop_bounding_set()) < 0)
        setup_fail(ctl, -r, "cannot drop the capability bounding set");
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0)
        setup_fail(ctl, errno, "cannot create signalfd in init");
    memset(&m, 0, sizeof(m));
    m.type = CTL_READY;
    m.pid = scratch; /* where init keeps it, for the supervisor's /proc shortcut */
    if (sandbox__ctl_send(ctl, &m, &scratch, 1) < 0)
        _exit(1);

    for (;;) {
        struct pollfd pf[3] = {{.fd = ctl, .events = POLLIN},
                               {.fd = sfd, .events = POLLIN},
                               {.fd = keep.sock, .events = POLLIN}};
        if (poll(pf, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            _exit(1);
        }
        /* The keeper's reports before its death, so its end is read before it is reaped. */
        if (keep.sock >= 0 && pf[2].revents)
            keeper_relay(ctl, &keep, &payload);
        if (pf[1].revents) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof(si)) > 0)
                ;
            reap(ctl, &payload, &keep, &pre, &pinned);
        }
        if (pf[0].revents) {
            int fds[CTL_MAX_FDS], nfds = CTL_MAX_FDS;
            if (sandbox__ctl_recv(ctl, &m, fds, &nfds) < 0)
                _exit(0); /* supervisor gone: our exit ends the namespace */
            switch (m.type) {
            case CTL_PUT:
                sandbox__handle_put(ctl, &m, fds, nfds);
                break;
            case CTL_GET:
                m.text[sizeof(m.text) - 1] = '\0';
                sandbox__handle_get(ctl, &m);
                break;
            case CTL_KILLALL:
                kill_all(ctl, &payload, &keep, &pre);
                break;
            case CTL_KILL_EXEC:
                kill_exec(ctl, &keep, &payload);
                break;
            case CTL_PAUSE:
                pause_all(ctl, m.mode);
                break;
            case CTL_SCRATCH:
                memset(&m, 0, sizeof(m));
                m.type = CTL_SCRATCH_FD;
                sandbox__ctl_send(ctl, &m, &scratch, 1);
                break;
            case CTL_RESUME: {
                struct ctl_msg done = {.type = CTL_PAUSED, .mode = m.mode};
                kill(-1, SIGCONT);
                (void)sandbox__ctl_send(ctl, &done, NULL, 0);
                break;
            }
            case CTL_EXEC:
                if (payload) {
                    sandbox__reply(ctl, CTL_EXEC_FAIL, EBUSY, "a process is already running");
                } else if (!cgns && unshare(CLONE_NEWCGROUP) < 0) {
                    sandbox__reply(ctl, CTL_EXEC_FAIL, errno, "cannot create cgroup namespace");
                } else {
                    cgns = true;
                    pre.args.p = p;
                    pre.again = !(m.mode & (CTL_EXEC_KEEP | CTL_EXEC_LAST));
                    pinned = (m.mode & CTL_EXEC_PINNED) != 0;
                    if (m.mode & CTL_EXEC_KEEP)
                        prespawn_drop(&pre); /* nothing may run beside one */
                    payload = (m.mode & CTL_EXEC_KEEP) ? handle_exec_keep(p, fds, nfds, &keep)
                                                       : handle_exec(p, fds, nfds, &pre, &pinned);
                }
                break;
            case CTL_ZYGOTE:
                handle_zygote(p, fds, nfds);
                break;
            case CTL_PRESTART:
                if (!payload)
                    prespawn_make(&pre, p);
                break;
            default:
                break;
            }
            for (int i = 0; i < nfds; i++)
                close(fds[i]);
        }
        if (!payload) /* an exec ended other than by reap or a failed start (a kill) */
            cpus_unpin(&pinned);
    }
}
