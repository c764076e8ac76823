/*
 * fork.c — sandbox_fork (see sandbox.h): a new sandbox whose scratch is a copy of another's.
 *
 * The child is made first, as the parent was (sandbox_create with the parent's runtime, image
 * and limits; or given made already, to sandbox_fork_into, by a pool of spare sandboxes), so the
 * parent is stopped only for the copy itself: init stops every other
 * process of the parent (sandbox__pause) and the supervisor copies the parent's scratch tmpfs
 * into the child's, from one scratch descriptor to the other (sandbox__scratch_open), then the
 * parent's processes continue — also when the copy failed.
 *
 * What is copied: the whole scratch, that is /work, /tmp and, with a writable root, the
 * overlay's upper directories (.overlay/u/N) and the "root" directory of a root assembled
 * from the host's entries. Not copied: the overlay's work directories (.overlay/w/N), which
 * hold only what overlayfs uses during one copy-up or rename and which the child's own
 * overlay made for itself at its mount. The overlay's marks are kept as they are: whiteouts
 * are character devices 0:0 (made again with mknodat), opaque directories and other overlay
 * state are "user." (or "trusted.") extended attributes, copied with every other xattr of
 * those namespaces; "security." and "system." attributes (file capabilities, POSIX ACLs) are
 * not. The child's overlay is mounted already, but nothing in it has run or looked below its
 * mount points when the copy lands in its upper directory.
 *
 * Every file keeps its mode and times; its owner is the child's user where it was the
 * parent's (the only owner a scratch can hold: see as_child). Regular files are copied by their
 * data segments (holes stay holes, so a sparse file takes no more room in the child than in the
 * parent); hard links stay hard links; symlinks, FIFOs and sockets are made again as what they
 * are, never followed or opened. Other device nodes cannot exist on a scratch (only root in the
 * host's namespace may make them) and are skipped. Both trees are walked only with lookups
 * beneath a directory that follow no symlink (openat2), as files.c does: the parent's tree was
 * written by hostile code, and is stopped but not trusted.
 *
 * What is not: a file put with SANDBOX_PUT_LOCKED is copied as a plain file of the child's user
 * (its lock is a mount in the parent's namespace, not a part of the scratch). The pages the
 * copy writes are charged to the supervisor's memory cgroup, as the kernel charges tmpfs pages
 * to whoever writes them; the child's scratch size bounds them all the same. A process of the
 * parent that had stopped itself is continued with the others.
 */
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#define FORK_DEPTH_MAX   256          /* directory levels copied (each holds two fds) */
#define XATTR_LIST_MAX_  65536        /* bytes of one file's xattr names */
#define XATTR_VALUE_MAX_ 65536        /* bytes of one xattr value */
#define OVERLAY_WORK     ".overlay/w" /* not copied: see above */

/* A hard-linked file already copied: its inode in the parent, its path in the child. */
struct link_seen {
    ino_t ino;
    char *path;
};

/* The state of one copy. */
struct copy {
    int dst_root;            /* the child's scratch (O_PATH) */
    struct link_seen *links; /* open addressing on ino; cap a power of two */
    size_t nlinks, cap;
    char path[PATH_MAX]; /* the entry being copied, relative to the scratch */
    struct errbuf *err;
};

/* fail(c, what, r) — "cannot WHAT 'path' of the parent: reason"; returns r. */
static int fail(struct copy *c, const char *what, int r)
{
    errbuf_set(c->err, "cannot %s '%.200s' of the parent: %s", what, c->path,
               r == -ENOSPC ? "the child's scratch disk is full" : strerror(-r));
    return r;
}

/* as_child(child, on) — this thread's credentials for the copy (on) or its own again. A
 * scratch tmpfs belongs to its sandbox's user namespace, where one id is mapped, the sandbox's
 * user (as root, a host uid of its own per sandbox): every inode of the parent's scratch is
 * the parent's user's, and whatever the child's scratch gets must be created as the child's
 * (sandbox__fs_ids), which also makes it the child's. Reading the parent's files whatever
 * their mode needs root's override of permissions back in the effective set, where setfsuid
 * took it from (as root only; an unprivileged supervisor owns both sides anyway). 0 or -errno. */
static int as_child(struct sandbox *child, bool on)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct d[2];
    int r;

    if (!on)
        return sandbox__fs_ids(geteuid(), getegid());
    r = sandbox__fs_ids(sandbox__host_uid(child), sandbox__host_gid(child));
    if (r < 0 || !sandbox__runtime(child)->root)
        return r;
    if (syscall(SYS_capget, &h, d) < 0)
        return -errno;
    d[0].effective |= d[0].permitted & ((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
    return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

/* ---- hard links ---- */

static struct link_seen *link_find(struct copy *c, ino_t ino)
{
    if (!c->cap)
        return NULL;
    for (size_t i = (size_t)ino & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
        if (!c->links[i].path)
            return &c->links[i]; /* the free slot where it would go */
        if (c->links[i].ino == ino)
            return &c->links[i];
    }
}

/* link_add(c, ino) — remembers that the inode was copied to c->path. 0 or -ENOMEM. */
static int link_add(struct copy *c, ino_t ino)
{
    struct link_seen *slot;

    if (2 * (c->nlinks + 1) > c->cap) {
        size_t ncap = c->cap ? 2 * c->cap : 64;
        struct link_seen *old = c->links, *nv = calloc(ncap, sizeof(*nv));
        size_t ocap = c->cap;
        if (!nv)
            return -ENOMEM;
        c->links = nv;
        c->cap = ncap;
        for (size_t i = 0; i < ocap; i++)
            if (old[i].path)
                *link_find(c, old[i].ino) = old[i];
        free(old);
    }
    slot = link_find(c, ino);
    if (!(slot->path = strdup(c->path)))
        return -ENOMEM;
    slot->ino = ino;
    c->nlinks++;
    return 0;
}

static void links_free(struct copy *c)
{
    for (size_t i = 0; i < c->cap; i++)
        free(c->links[i].path);
    free(c->links);
}

/* ---- one entry ---- */

/* copy_xattrs(c, in, out) — the "user." and "trusted." attributes of in onto out. */
static int copy_xattrs(struct copy *c, int in, int out)
{
    static const char *const keep[] = {"user.", "trusted."};
    char *names, *value;
    ssize_t n;
    int r = 0;

    n = flistxattr(in, NULL, 0);
    if (n <= 0)
        return n < 0 && errno != ENOTSUP && errno != EOPNOTSUPP ? fail(c, "list xattrs of", -errno)
                                                                : 0;
    if (n > XATTR_LIST_MAX_)
        return fail(c, "copy xattrs of", -E2BIG);
    names = malloc((size_t)n + XATTR_VALUE_MAX_);
    if (!names)
        return fail(c, "copy xattrs of", -ENOMEM);
    value = names + n;
    n = flistxattr(in, names, (size_t)n);
    for (char *name = names; n > 0 && r == 0 && name < names + n; name += strlen(name) + 1) {
        bool wanted = false;
        for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
            wanted |= strncmp(name, keep[i], strlen(keep[i])) == 0;
        if (!wanted)
            continue;
        ssize_t len = fgetxattr(in, name, value, XATTR_VALUE_MAX_);
        if (len < 0)
            continue; /* removed meanwhile, or too large to be one the sandbox could set */
        if (fsetxattr(out, name, value, (size_t)len, 0) < 0)
            r = fail(c, "copy xattrs of", -errno);
    }
    free(names);
    return r;
}

/* finish(c, in, fd, st) — mode, xattrs (from in, unless -1: copied already) and times of fd
 * (its owner is the child's user already, see as_child). */
static int finish(struct copy *c, int in, int fd, const struct stat *st)
{
    struct timespec ts[2] = {st->st_atim, st->st_mtim};
    int r;

    if (fchmod(fd, st->st_mode & 07777) < 0)
        return fail(c, "set the mode of", -errno);
    if (in >= 0 && (r = copy_xattrs(c, in, fd)) < 0)
        return r;
    if (futimens(fd, ts) < 0)
        return fail(c, "set the times of", -errno);
    return 0;
}

/* copy_data(in, out, size, blocks) — in's data segments at their offsets, holes left as holes, the
 * length size. 0 or -errno. */
static int copy_data(int in, int out, off_t size, blkcnt_t blocks)
{
    off_t pos = 0;

    /* A file with no hole (its blocks cover its size) in one go, as most are. */
    if ((off_t)blocks * 512 >= size) {
        while (pos < size) {
            ssize_t n = sendfile(out, in, &pos, (size_t)(size - pos));
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                return -errno;
            if (n == 0)
                return -EIO;
        }
        return 0;
    }

    while (pos < size) {
        off_t data = lseek(in, pos, SEEK_DATA), hole;
        if (data < 0)
            break; /* ENXIO: only a hole is left */
        hole = lseek(in, data, SEEK_HOLE);
        if (hole < 0)
            return -errno;
        if (hole > size)
            hole = size;
        if (lseek(out, data, SEEK_SET) < 0)
            return -errno;
        for (off_t at = data; at < hole;) {
            ssize_t n = sendfile(out, in, &at, (size_t)(hole - at));
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                return -errno;
            if (n == 0) /* the file shrank: it cannot, the parent is stopped */
                return -EIO;
        }
        pos = hole;
    }
    return ftruncate(out, size) < 0 ? -errno : 0;
}

/* clear_for(dst, name, kind, fresh) — makes room for a new NAME of type kind (S_IFMT bits) in dst,
 * where the child may have its own entry already (a mount point, a generated file). What is
 * there stays when it is of the same kind and either a directory (merged) or a regular file
 * (rewritten in place): either may be a mount point of the child, and removing one would
 * detach what is mounted there. Another entry in the way is removed; a directory where
 * something else must go is refused. 0 (nothing there now), 1 (kept), or -errno. fresh: dst
 * is a directory this copy made, nothing to look for. */
static int clear_for(int dst, const char *name, mode_t kind, bool fresh)
{
    struct stat st;

    if (fresh) /* a directory we made: nothing can be in the way */
        return 0;
    if (fstatat(dst, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : -errno;
    if ((st.st_mode & S_IFMT) == kind && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
        return 1;
    if (S_ISDIR(st.st_mode))
        return -EISDIR;
    return unlinkat(dst, name, 0) < 0 ? -errno : 0;
}

static int copy_dir(struct copy *c, int src, int dst, size_t plen, int depth, bool fresh);

/* copy_regular(c, src, dst, name, st) — a regular file: linked to its first copy when it
 * has other names already copied, else its data. */
static int copy_regular(struct copy *c, int src, int dst, const char *name, const struct stat *st,
                        bool fresh)
{
    struct link_seen *seen = st->st_nlink > 1 ? link_find(c, st->st_ino) : NULL;
    int in, out, there, r;

    if ((there = clear_for(dst, name, S_IFREG, fresh)) < 0)
        return fail(c, "replace", there);
    if (seen && seen->path) {
        /* Both names are of the child's tree as we made it; nothing runs there yet. */
        if ((there && unlinkat(dst, name, 0) < 0) ||
            linkat(c->dst_root, seen->path, dst, name, 0) < 0)
            return fail(c, "link", -errno);
        return 0;
    }
    in = sandbox__open_beneath(src, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
    if (in < 0)
        return in == -ENOENT ? 0 : fail(c, "open", in);
    out = there ? sandbox__open_beneath(dst, name, O_WRONLY | O_TRUNC, 0)
                : sandbox__open_beneath(dst, name, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (out < 0) {
        close(in);
        return fail(c, "create", out);
    }
    r = copy_data(in, out, st->st_size, st->st_blocks);
    if (r < 0)
        r = fail(c, "copy", r);
    if (r == 0)
        r = finish(c, in, out, st);
    if (r == 0 && st->st_nlink > 1 && (r = link_add(c, st->st_ino)) < 0)
        r = fail(c, "copy", r);
    close(in);
    close(out);
    return r;
}

/* copy_node(c, src, dst, name, st) — a symlink, FIFO, socket or whiteout, made again. */
static int copy_node(struct copy *c, int src, int dst, const char *name, const struct stat *st,
                     bool fresh)
{
    struct timespec ts[2] = {st->st_atim, st->st_mtim};
    char target[PATH_MAX];
    int r;

    if ((r = clear_for(dst, name, st->st_mode & S_IFMT, fresh)) == 1)
        r = unlinkat(dst, name, 0) < 0 ? -errno : 0; /* a node of the same kind: made anew */
    if (r < 0)
        return fail(c, "replace", r);
    if (S_ISLNK(st->st_mode)) {
        ssize_t n = readlinkat(src, name, target, sizeof(target) - 1);
        if (n < 0)
            return fail(c, "read the symlink", -errno);
        target[n] = '\0';
        if (symlinkat(target, dst, name) < 0)
            return fail(c, "make the symlink", -errno);
    } else {
        if (mknodat(dst, name, st->st_mode & (S_IFMT | 0777), st->st_rdev) < 0)
            return fail(c, "make the node", -errno);
        /* Not a symlink: AT_SYMLINK_NOFOLLOW only makes sure of it. */
        if (fchmodat(dst, name, st->st_mode & 07777, AT_SYMLINK_NOFOLLOW) < 0)
            return fail(c, "set the mode of", -errno);
    }
    if (utimensat(dst, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
        return fail(c, "set the times of", -errno);
    return 0;
}

/* copy_entry(c, src, dst, name, plen, depth, fresh) — NAME of src into dst (c->path holds the
 * directory's path up to plen). */
static int copy_entry(struct copy *c, int src, int dst, const char *name, size_t plen, int depth,
                      bool fresh)
{
    size_t nlen = strlen(name), len = plen + (plen ? 1 : 0) + nlen;
    struct stat st;
    int r = 0;

    if (len >= sizeof(c->path))
        return errbuf_set(c->err, "'%.100s/%.100s' of the parent is longer than PATH_MAX", c->path,
                          name),
               -ENAMETOOLONG;
    if (plen)
        c->path[plen] = '/';
    memcpy(c->path + plen + (plen ? 1 : 0), name, nlen + 1);
    if (strcmp(c->path, OVERLAY_WORK) == 0 || fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        goto out;
    if (S_ISDIR(st.st_mode)) {
        int in, out;
        if (depth >= FORK_DEPTH_MAX) {
            errbuf_set(c->err, "cannot copy '%.200s' of the parent: more than %d directories deep",
                       c->path, FORK_DEPTH_MAX);
            r = -ELOOP;
            goto out;
        }
        int there = clear_for(dst, name, S_IFDIR, fresh);
        if (there == 0 && mkdirat(dst, name, 0700) < 0)
            there = -errno;
        if (there < 0) {
            r = fail(c, "make the directory", there);
            goto out;
        }
        in = sandbox__open_beneath(src, name, O_RDONLY | O_DIRECTORY, 0);
        out = sandbox__open_beneath(dst, name, O_RDONLY | O_DIRECTORY, 0);
        /* Its xattrs (an overlay's opaque mark) first, then its contents (the walk takes in:
         * two descriptors a level), then its mode and times, which the contents change. */
        if (in < 0 || out < 0) {
            r = fail(c, "open the directory", in < 0 ? in : out);
            if (in >= 0)
                close(in);
        } else if ((r = copy_xattrs(c, in, out)) < 0) {
            close(in);
        } else {
            r = copy_dir(c, in, out, len, depth + 1, there == 0);
        }
        if (r == 0)
            r = finish(c, -1, out, &st);
        if (out >= 0)
            close(out);
    } else if (S_ISREG(st.st_mode)) {
        r = copy_regular(c, src, dst, name, &st, fresh);
    } else if (S_ISLNK(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
               (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0))) {
        r = copy_node(c, src, dst, name, &st, fresh);
    } /* any other device: cannot be there (see above) */
out:
    c->path[plen] = '\0';
    return r;
}

/* copy_dir(c, src, dst, plen, depth, fresh) — every entry of src (consumed) into dst (the
 * caller's; fresh when this copy made it). */
static int copy_dir(struct copy *c, int src, int dst, size_t plen, int depth, bool fresh)
{
    struct dirent *d;
    DIR *dir;
    int r = 0;

    dir = fdopendir(src);
    if (!dir) {
        r = -errno;
        close(src);
        return fail(c, "read the directory", r);
    }
    while (r == 0 && (d = readdir(dir)))
        if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
            r = copy_entry(c, dirfd(dir), dst, d->d_name, plen, depth, fresh);
    closedir(dir);
    return r;
}

/* same_shape(parent, child) — what sandbox_fork_into asks of a given child: made as root or
 * not as the parent was (whose ids the copy acts as), of the parent's image, and with the
 * scratch size, root and network fixed at creation. (Its runtime may be a copy of the
 * parent's, as a pool keeps.) */
static bool same_shape(struct sandbox *parent, struct sandbox *child)
{
    const struct sandbox_limits *p = sandbox__limits(parent), *c = sandbox__limits(child);
    const struct image *pi = sandbox__image(parent), *ci = sandbox__image(child);

    return sandbox__runtime(parent)->root == sandbox__runtime(child)->root &&
           (pi == ci || strcmp(pi->digest, ci->digest) == 0) && p->disk_mb == c->disk_mb &&
           p->writable_root == c->writable_root && p->loopback == c->loopback;
}

int sandbox_fork_into(struct sandbox *parent, struct sandbox *child, struct errbuf *err)
{
    struct copy c = {.err = err, .dst_root = -1};
    struct errbuf resume_err;
    int src = -1, dst = -1, psrc, r;
    double t0 = util_now(), t_made = t0, t_stopped = t0, t_copied = t0;

    if (!same_shape(parent, child))
        return errbuf_set(err, "the child sandbox is not of the parent's image, scratch size, "
                               "root or network"),
               -EINVAL;
    /* Both scratch descriptors only for the time of the copy (sandbox__scratch_open). */
    if ((psrc = sandbox__scratch_open(parent, err)) < 0)
        return psrc;
    src = sandbox__open_beneath(psrc, ".", O_RDONLY | O_DIRECTORY, 0);
    close(psrc);
    if (src < 0)
        return errbuf_set(err, "cannot open the parent's scratch filesystem: %s", strerror(-src)),
               src;
    c.dst_root = sandbox__scratch_open(child, err);
    if (c.dst_root < 0) {
        r = c.dst_root;
        goto out;
    }
    dst = sandbox__open_beneath(c.dst_root, ".", O_RDONLY | O_DIRECTORY, 0);
    if (dst < 0) {
        r = errbuf_set(err, "cannot open the child's scratch filesystem: %s", strerror(-dst));
        goto out;
    }
    t_made = util_now();
    r = sandbox__pause(parent, true, err);
    t_stopped = util_now();
    if (r == 0 && (r = as_child(child, true)) < 0)
        errbuf_set(err, "cannot act as the child sandbox's user: %s", strerror(-r));
    if (r == 0) {
        r = copy_dir(&c, src, dst, 0, 0, false); /* takes src */
        src = -1;
    }
    if (as_child(child, false) < 0 && r == 0)
        r = errbuf_set(err, "cannot return to the supervisor's own ids");
    t_copied = util_now();
    /* Always: a failed stop may have stopped some of them. */
    if (sandbox__pause(parent, false, r < 0 ? &resume_err : err) < 0 && r == 0)
        r = -EIO;
    if (sandbox__runtime(parent)->trace)
        fprintf(stderr,
                "crucible: trace fork: opened %.3f ms, parent stopped %.3f ms (stop %.3f, "
                "copy %.3f)\n",
                (t_made - t0) * 1e3, (util_now() - t_made) * 1e3, (t_stopped - t_made) * 1e3,
                (t_copied - t_stopped) * 1e3);
out:
    links_free(&c);
    if (src >= 0)
        close(src);
    if (dst >= 0)
        close(dst);
    if (c.dst_root >= 0)
        close(c.dst_root);
    return r < 0 ? r : 0;
}

struct sandbox *sandbox_fork(struct sandbox *parent, struct errbuf *err)
{
    struct sandbox_limits limits = *sandbox__limits(parent);
    struct sandbox *child;

    child = sandbox_create(sandbox__runtime(parent), sandbox__image(parent), &limits, err);
    if (!child)
        return NULL;
    if (sandbox_fork_into(parent, child, err) < 0) {
        sandbox_destroy(child, NULL);
        return NULL;
    }
    return child;
}
