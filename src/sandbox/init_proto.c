/*
 * init_proto.c — the requests a sandbox's init answers, shared by every init that speaks the
 * control protocol (sandbox_int.h): a sandbox's init (sandbox_init.c) and a fork server job's
 * pid 1 (zygote.c).
 *
 * The control messages (one struct ctl_msg per SOCK_SEQPACKET datagram, descriptors beside it),
 * files put into and got from the work directory (a path walked below /work without following
 * a symlink), an exec request's spec read from its memfd, and the reports of a payload's start
 * and end. None of it keeps state between requests beyond init's reusable spec buffer.
 */
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/stat.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The environment every payload starts with, under the request's own entries (which win). */
static const char *const fixed_env[] = {
    "PATH=/usr/local/bin:/usr/bin:/bin",
    "HOME=/tmp",
    "LANG=C.UTF-8",
    "LC_ALL=C.UTF-8",
    "TZ=UTC",
    "PYTHONHASHSEED=0",
    "PERL_HASH_SEED=0", /* with PERL_PERTURB_KEYS=0: Perl's hash order is the same every run */
    "PERL_PERTURB_KEYS=0",
    "PYTHONDONTWRITEBYTECODE=1",
    "TMPDIR=/tmp",
    "USER=sandbox",
    "LOGNAME=sandbox",
    "HOSTNAME=" SANDBOX_HOSTNAME,
};
_Static_assert(sizeof(fixed_env) / sizeof(fixed_env[0]) == SANDBOX_FIXED_ENV_COUNT,
               "SANDBOX_FIXED_ENV_COUNT is the number of fixed_env's entries");

const char *const *sandbox__fixed_env_list(size_t *n)
{
    *n = sizeof(fixed_env) / sizeof(fixed_env[0]);
    return fixed_env;
}

size_t sandbox__fixed_env(char *const *env, size_t *count)
{
    size_t bytes = 0;

    *count = 0;
    for (size_t i = 0; i < sizeof(fixed_env) / sizeof(fixed_env[0]); i++) {
        size_t klen = (size_t)(strchr(fixed_env[i], '=') - fixed_env[i]) + 1;
        bool overridden = false;
        for (char *const *e = env; e && *e && !overridden; e++)
            overridden = strncmp(*e, fixed_env[i], klen) == 0;
        if (!overridden) {
            bytes += strlen(fixed_env[i]) + 1;
            (*count)++;
        }
    }
    return bytes;
}

/* ---- control messages ---- */

int sandbox__ctl_send(int fd, const struct ctl_msg *msg, const int *fds, int nfds)
{
    ssize_t n = nfds > CTL_MAX_FDS ? -EINVAL : util_send_fds(fd, msg, sizeof(*msg), fds, nfds);

    if (n < 0)
        return (int)n;
    return n == (ssize_t)sizeof(*msg) ? 0 : -EPIPE;
}

int sandbox__ctl_recv(int fd, struct ctl_msg *msg, int *fds, int *nfds)
{
    char cbuf[CMSG_SPACE(sizeof(int) * CTL_MAX_FDS)];
    struct iovec iov = {.iov_base = msg, .iov_len = sizeof(*msg)};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
    int want = nfds ? *nfds : 0, got = 0;
    ssize_t n;

    do
        n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        int cnt = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        int *in = (int *)CMSG_DATA(c);
        for (int i = 0; i < cnt; i++) {
            if (got < want)
                fds[got++] = in[i];
            else
                close(in[i]);
        }
    }
    if (nfds)
        *nfds = got;
    if (n == 0)
        return -EPIPE;
    if (n != (ssize_t)sizeof(*msg) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        for (int i = 0; i < got; i++)
            close(fds[i]);
        if (nfds)
            *nfds = 0;
        return -EPROTO;
    }
    return 0;
}

void sandbox__reply(int ctl, uint32_t type, int err, const char *text)
{
    struct ctl_msg m;

    memset(&m, 0, sizeof(m));
    m.type = type;
    m.err = err;
    if (text)
        snprintf(m.text, sizeof(m.text), "%s", text);
    (void)sandbox__ctl_send(ctl, &m, NULL, 0);
}

/* ---- files in and out of the work directory, and the exec request ---- */

/* open_beneath(path, create, mode) — walks PATH below /work without following any symlink.
 * create: missing directories are made and the file is created O_EXCL for writing;
 * otherwise the existing file is opened for reading, without blocking (a FIFO does not
 * hang init) and only when it is a regular file. A new fd, or -errno. */
static int open_beneath(const char *path, bool create, mode_t mode)
{
    char buf[4096], *comp, *next;
    struct stat st;
    int dir, fd;

    snprintf(buf, sizeof(buf), "%s", path);
    dir = open("/work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0)
        return -errno;
    for (comp = buf; (next = strchr(comp, '/')); comp = next + 1) {
        int sub;
        *next = '\0';
        if (create && mkdirat(dir, comp, 0755) < 0 && errno != EEXIST) {
            int e = errno;
            close(dir);
            return -e;
        }
        sub = openat(dir, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(dir);
        if (sub < 0)
            return errno == ENOTDIR || errno == ELOOP ? -ENOTDIR : -errno;
        dir = sub;
    }
    if (create)
        fd = openat(dir, comp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
    else
        fd = openat(dir, comp, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    close(dir);
    if (fd < 0)
        return errno == ELOOP ? -EINVAL : -errno;
    if (!create && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        return -EINVAL;
    }
    return fd;
}

/* self_mount(dir, name, attrs, recursive) — mounts the entry NAME of DIR onto itself: a
 * clone of the mount tree there (with the mounts below it when recursive), given attrs,
 * moved onto the same place. 0 or -errno. */
static int self_mount(int dir, const char *name, unsigned attrs, bool recursive)
{
    struct mount_attr attr = {.attr_set = attrs};
    int t, r = 0;

    t = (int)syscall(SYS_open_tree, dir, name,
                     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW |
                         (recursive ? AT_RECURSIVE : 0));
    if (t < 0)
        return -errno;
    if (attrs && syscall(SYS_mount_setattr, t, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
        r = -errno;
    if (r == 0 && syscall(SYS_move_mount, t, "", dir, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
        r = -errno;
    close(t);
    return r;
}

/* mount_root(dir, name) — whether NAME in DIR is the root of a mount (locked already). */
static bool mount_root(int dir, const char *name)
{
    struct statx sx;

    /* the system call, not libc's statx: a fork server job's small init is built with a libc
     * that has none (musl 1.2.3) */
    return syscall(SYS_statx, dir, name, AT_SYMLINK_NOFOLLOW, 0, &sx) == 0 &&
           (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
           (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

/* lock_path(path) — makes the regular file PATH (below /work, put just now) read-only in
 * fact. Mode bits cannot do it: the payload runs as the uid that owns the file (the only
 * uid mapped), so it could chmod the file back, rewrite it, or unlink and recreate it, and
 * rename the directory that holds it. So:
 *   - every directory on the way below /work is bound onto itself (with the mounts already
 *     in it) unless it is a mount already: a mount point cannot be renamed or removed, so
 *     the path to the file stays what it is; the directory stays writable (a solution or a
 *     build may add files beside the tests, as before);
 *   - the file is bound onto itself read-only (nosuid, nodev): writes, truncation, chmod,
 *     chown, utimes and xattrs fail with EROFS; unlink and rename fail with EBUSY, and so does
 *     renaming another file over it; a hard link to it crosses mounts (EXDEV).
 * The payload cannot undo any of it: it has no capabilities and seccomp refuses every mount
 * call. Everything is resolved with O_NOFOLLOW, after each new mount again, so the next
 * step works on the mount just made. Cost, measured on a 2-core VM: 14 to 27 µs per file on
 * top of a put's ~100 µs, and about 1 µs per mount when the mount namespace goes with the
 * sandbox. 0 or -errno. */
static int lock_path(const char *path)
{
    char buf[4096], *comp, *next;
    struct stat st;
    int dir, r = 0;

    snprintf(buf, sizeof(buf), "%s", path);
    dir = open("/work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0)
        return -errno;
    for (comp = buf; (next = strchr(comp, '/')); comp = next + 1) {
        int sub;
        *next = '\0';
        if (!mount_root(dir, comp) && (r = self_mount(dir, comp, 0, true)) < 0)
            break;
        sub = openat(dir, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(dir);
        if (sub < 0)
            return -errno;
        dir = sub;
    }
    if (r == 0 && fstatat(dir, comp, &st, AT_SYMLINK_NOFOLLOW) < 0)
        r = -errno;
    else if (r == 0 && !S_ISREG(st.st_mode))
        r = -EINVAL;
    if (r == 0 && !mount_root(dir, comp))
        r = self_mount(dir, comp, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false);
    close(dir);
    return r;
}

/* copy_by_buffer(dst, src) — src's bytes from its offset on, written to dst through a buffer.
 * 0 or -errno. Apart from copy_into: its buffer's stack pages are touched only when it runs. */
__attribute__((noinline)) static int copy_by_buffer(int dst, int src)
{
    char buf[65536];
    ssize_t n;
    int r = 0;

    while ((n = read(src, buf, sizeof(buf))) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if ((r = util_write_all(dst, buf, (size_t)n)) < 0)
            break;
    }
    return r;
}

/* copy_into(dst, src) — src's bytes from its offset on, written to dst: by sendfile, without a
 * buffer of ours (a job's reaper is a fork, and every page of a 64 KiB buffer on its stack was a
 * page fault of each job's), or through one where src cannot be sent (a pipe). 0 or -errno. */
static int copy_into(int dst, int src)
{
    bool sent = false;

    for (;;) {
        ssize_t n = sendfile(dst, src, NULL, (size_t)1 << 30);
        if (n > 0) {
            sent = true;
            continue;
        }
        if (n == 0)
            return 0;
        if (errno == EINTR)
            continue;
        if (!sent && (errno == EINVAL || errno == ENOSYS))
            return copy_by_buffer(dst, src);
        return -errno;
    }
}

void sandbox__handle_put(int ctl, const struct ctl_msg *req, const int *fds, int nfds)
{
    struct errbuf err = {{0}};
    int src, dst, r;

    if (nfds != 1) {
        sandbox__reply(ctl, CTL_PUT_DONE, EPROTO, "malformed put request");
        return;
    }
    src = fds[0];
    dst = open_beneath(req->text, true, req->mode);
    if (dst < 0) {
        errbuf_set(&err, "cannot create '%s' in the work directory: %s", req->text, strerror(-dst));
        sandbox__reply(ctl, CTL_PUT_DONE, -dst, err.msg);
        return;
    }
    r = copy_into(dst, src);
    if (r == 0 && fchmod(dst, req->mode & 07777) < 0)
        r = -errno;
    close(dst);
    if (r < 0) {
        errbuf_set(&err, "cannot write '%s' in the work directory: %s", req->text,
                   r == -ENOSPC ? "scratch disk full" : strerror(-r));
        sandbox__reply(ctl, CTL_PUT_DONE, -r, err.msg);
        return;
    }
    if ((req->mode & SANDBOX_PUT_LOCKED) && (r = lock_path(req->text)) < 0) {
        errbuf_set(&err, "cannot make '%s' read-only: %s", req->text, strerror(-r));
        sandbox__reply(ctl, CTL_PUT_DONE, -r, err.msg);
        return;
    }
    sandbox__reply(ctl, CTL_PUT_DONE, 0, NULL);
}

void sandbox__handle_get(int ctl, const struct ctl_msg *req)
{
    struct errbuf err = {{0}};
    struct ctl_msg m;
    int fd = open_beneath(req->text, false, 0);

    if (fd < 0) {
        errbuf_set(&err, "cannot read '%s' in the work directory: %s", req->text,
                   fd == -EINVAL ? "not a regular file" : strerror(-fd));
        sandbox__reply(ctl, CTL_GOT, -fd, err.msg);
        return;
    }
    memset(&m, 0, sizeof(m));
    m.type = CTL_GOT;
    (void)sandbox__ctl_send(ctl, &m, &fd, 1);
    close(fd);
}

/* A request of up to SPEC_INLINE bytes with up to VEC_INLINE argv and envp entries is read into
 * one buffer init maps once and reuses for every exec: no mmap and munmap per exec (each munmap
 * flushes the TLB, which is costly in a VM). Init is single-threaded and a keeper is a copy of
 * its memory, so no request is overwritten while still in use. */
#define SPEC_INLINE ((size_t)64 << 10)
#define VEC_INLINE  ((size_t)2048)

void sandbox__exec_req_release(struct exec_req *x)
{
    if (x->argv && x->vec_len)
        munmap(x->argv, x->vec_len);
    if (x->map)
        munmap(x->map, x->map_len);
}

/* spec_buffer() — init's reusable request buffer (SPEC_INLINE bytes, then VEC_INLINE
 * pointers), mapped at its first use; NULL when it cannot be mapped (requests are then mapped
 * one by one). mmap, not malloc: see sandbox__parse_spec. */
static char *spec_buffer(void)
{
    static char *buf;

    if (!buf) {
        void *m = mmap(NULL, SPEC_INLINE + VEC_INLINE * sizeof(char *), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        buf = m == MAP_FAILED ? NULL : m;
    }
    return buf;
}

/* spec_read(memfd, size, x) — the spec's bytes: copied into the reusable buffer when they fit,
 * else mapped (x->map). NULL with errno set on failure. */
static char *spec_read(int memfd, size_t size, struct exec_req *x)
{
    char *buf = size <= SPEC_INLINE ? spec_buffer() : NULL;
    char *map;

    if (buf) {
        if (pread(memfd, buf, size, 0) != (ssize_t)size) {
            errno = EPROTO;
            return NULL;
        }
        return buf;
    }
    map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, memfd, 0);
    if (map == MAP_FAILED)
        return NULL;
    x->map = map;
    x->map_len = size;
    return map;
}

int sandbox__parse_spec(int memfd, struct exec_req *x)
{
    struct stat st;
    char *map, *p, *end;
    size_t nenv, nvec;

    if (fstat(memfd, &st) < 0 || (size_t)st.st_size < sizeof(struct exec_spec))
        return -EPROTO;
    if (!(map = spec_read(memfd, (size_t)st.st_size, x)))
        return -errno;
    memcpy(&x->spec, map, sizeof(x->spec));
    if (x->spec.magic != EXEC_SPEC_MAGIC || x->spec.argc == 0 ||
        x->spec.strings_len != (size_t)st.st_size - sizeof(x->spec) ||
        !memchr(x->spec.cwd, '\0', sizeof(x->spec.cwd)) || x->spec.cwd[0] != '/')
        return -EPROTO;
    x->strings = map + sizeof(x->spec);
    end = x->strings + x->spec.strings_len;
    nenv = sizeof(fixed_env) / sizeof(fixed_env[0]);
    nvec = (size_t)x->spec.argc + 1 + x->spec.envc + nenv + 1;
    /* mmap, not malloc: init is cloned from a process whose other threads may have held
     * malloc's locks at that moment (no atfork handlers run for clone3). */
    if (!x->map && nvec <= VEC_INLINE) {
        x->argv = (char **)(map + SPEC_INLINE);
        memset(x->argv, 0, nvec * sizeof(char *)); /* the holes below are NULL, as in a mapping */
    } else {
        x->vec_len = nvec * sizeof(char *);
        x->argv =
            mmap(NULL, x->vec_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (x->argv == MAP_FAILED) {
            x->argv = NULL;
            return -ENOMEM;
        }
    }
    x->envp = x->argv + x->spec.argc + 1;
    p = x->strings;
    for (uint32_t i = 0; i < x->spec.argc + x->spec.envc; i++) {
        char *nul = memchr(p, '\0', (size_t)(end - p));
        if (!nul)
            return -EPROTO;
        if (i < x->spec.argc)
            x->argv[i] = p;
        else
            x->envp[i - x->spec.argc] = p;
        p = nul + 1;
    }
    /* The fixed entries come after the caller's, so a caller cannot override PATH etc.
     * with a duplicate that some programs would read first. */
    for (size_t i = 0; i < nenv; i++) {
        const char *k = fixed_env[i];
        size_t klen = (size_t)(strchr(k, '=') - k) + 1;
        bool overridden = false;
        for (uint32_t j = 0; j < x->spec.envc; j++)
            overridden |= strncmp(x->envp[j], k, klen) == 0;
        if (!overridden)
            x->envp[x->spec.envc + i] = (char *)k;
    }
    /* compact the NULL holes left by overridden fixed entries */
    size_t w = 0;
    for (size_t i = 0; i < x->spec.envc + nenv; i++)
        if (x->envp[i])
            x->envp[w++] = x->envp[i];
    x->envp[w] = NULL;
    return 0;
}

/* ---- a payload's start and end, reported ---- */

static const char *stage_name(int stage)
{
    static const char *const names[] = {"",
                                        "set up stdio",
                                        "close fds",
                                        "enter the start directory",
                                        "set rlimits",
                                        "drop capabilities",
                                        "set no_new_privs",
                                        "apply seccomp",
                                        "execute"};
    return stage > 0 && stage < 9 ? names[stage] : "start";
}

/* sandbox__spawn_report(pid, x, failure, m) — m for the supervisor once the payload's process pid
 * has called execve (failure 0: CTL_STARTED) or failed (CTL_EXEC_FAIL saying why; it is reaped).
 * Returns pid, or 0 when it did not start. */
pid_t sandbox__spawn_report(pid_t pid, const struct exec_req *x, int failure, struct ctl_msg *m)
{
    memset(m, 0, sizeof(*m));
    m->type = CTL_EXEC_FAIL;
    if (failure) {
        int stage = failure >> 16;
        m->err = failure & 0xffff;
        if (stage == 8)
            snprintf(m->text, sizeof(m->text), "cannot execute '%s': %s", x->argv[0],
                     strerror(m->err));
        else if (stage == 3)
            snprintf(m->text, sizeof(m->text), "cannot enter the start directory '%s': %s",
                     x->spec.cwd, strerror(m->err));
        else
            snprintf(m->text, sizeof(m->text), "cannot %s for the payload: %s", stage_name(stage),
                     strerror(m->err));
        waitpid(pid, NULL, 0);
        return 0;
    }
    m->type = CTL_STARTED;
    m->pid = pid;
    return pid;
}

void sandbox__exited_msg(struct ctl_msg *m, int status, pid_t pid)
{
    struct rusage ru;

    getrusage(RUSAGE_CHILDREN, &ru);
    memset(m, 0, sizeof(*m));
    m->type = CTL_EXITED;
    m->status = status;
    m->pid = pid;
    m->cpu_usec = (int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec +
                  (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
    m->maxrss_kb = ru.ru_maxrss;
}

bool sandbox__none_left(void)
{
    siginfo_t si;

    memset(&si, 0, sizeof(si));
    return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 && errno == ECHILD;
}

void sandbox__report_exited(int fd, int status, pid_t pid)
{
    struct ctl_msg m;

    sandbox__exited_msg(&m, status, pid);
    if (sandbox__none_left())
        m.mode = CTL_EXITED_ALONE;
    (void)sandbox__ctl_send(fd, &m, NULL, 0);
}

/* ---- a fork server job's pid 1: its requests until the supervisor hangs up ---- */

/* job_exec(ctl, fds, nfds, ops) — CTL_EXEC in a fork server job: the spec read, pid 2 started
 * by ops, its start reported as init reports one. The payload's pid, or 0 when it did not
 * start. */
static pid_t job_exec(int ctl, const int *fds, int nfds, const struct job_ops *ops)
{
    struct exec_req x;
    struct ctl_msg m;
    const char *why = "cannot start the payload";
    int failure = 0;
    pid_t pid;

    memset(&x, 0, sizeof(x));
    if (nfds != 4 || sandbox__parse_spec(fds[0], &x) < 0) {
        sandbox__exec_req_release(&x);
        sandbox__reply(ctl, CTL_EXEC_FAIL, EPROTO, "malformed exec request");
        return 0;
    }
    pid = ops->start(ops->ctx, &x, fds, &failure, &why);
    if (pid < 0) {
        sandbox__reply(ctl, CTL_EXEC_FAIL, -pid, why);
        pid = 0;
    } else {
        pid = sandbox__spawn_report(pid, &x, failure, &m);
        (void)sandbox__ctl_send(ctl, &m, NULL, 0);
    }
    sandbox__exec_req_release(&x);
    return pid;
}

void sandbox__job_serve(int ctl, int sfd, const struct job_ops *ops)
{
    pid_t payload = 0;
    bool started = false;

    for (;;) {
        struct pollfd pf[2] = {{.fd = ctl, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
        struct ctl_msg m;
        int fds[CTL_MAX_FDS], nfds = CTL_MAX_FDS, status;
        pid_t pid;

        if (poll(pf, 2, -1) < 0 && errno != EINTR)
            _exit(1);
        if (pf[1].revents) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof(si)) > 0)
                ;
            while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
                if (payload && pid == payload) {
                    payload = 0;
                    sandbox__report_exited(ctl, status, pid);
                } else {
                    ops->reaped(ops->ctx, pid);
                }
            }
        }
        if (!pf[0].revents)
            continue;
        if (sandbox__ctl_recv(ctl, &m, fds, &nfds) < 0)
            _exit(0); /* the supervisor is done: our exit ends the namespace */
        m.text[sizeof(m.text) - 1] = '\0';
        switch (m.type) {
        case CTL_PUT:
            sandbox__handle_put(ctl, &m, fds, nfds);
            break;
        case CTL_GET:
            sandbox__handle_get(ctl, &m);
            break;
        case CTL_EXEC:
            if (started)
                sandbox__reply(ctl, CTL_EXEC_FAIL, EBUSY, "a fork server's job runs one exec");
            else
                started = (payload = job_exec(ctl, fds, nfds, ops)) > 0;
            break;
        default:
            sandbox__reply(ctl, CTL_FAILED, ENOTSUP, "not supported in a fork server's job");
            break;
        }
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
    }
}
