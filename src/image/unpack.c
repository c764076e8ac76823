/*
 * unpack.c — safe layer extraction (see unpack.h).
 *
 * libarchive only parses; every file system change is ours, made relative to a directory fd
 * that was opened with O_NOFOLLOW one component at a time from the root. A name is created
 * with O_EXCL after whatever was there is removed, so an existing symlink is replaced, never
 * written through. Directories are kept writable (0700 added) while layers apply; their
 * archive modes are applied by unpack_finish, in the order the entries came.
 */
#include "image/unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATH_DEPTH_MAX 256

struct unpack_dirmode {
    char *path; /* relative to the root; "" the root itself */
    mode_t mode;
    uid_t uid;
    gid_t gid;
};

/* clean_path(in, out, size, err, what) — the archive name in made relative and canonical:
 * leading "./" and "/." components dropped, empty components collapsed. Refuses absolute
 * names, "..", over-long names and components. The number of components, or -EINVAL. */
static int clean_path(const char *in, char *out, size_t size, struct errbuf *err, const char *what)
{
    size_t used = 0;
    int depth = 0;
    const char *p = in;

    if (!in)
        return errbuf_set(err, "%s without a name", what);
    if (in[0] == '/')
        return errbuf_set(err, "%s '%s' is an absolute path", what, in);
    if (strlen(in) >= size)
        return errbuf_set(err, "%s '%.64s...' is longer than %zu bytes", what, in, size - 1);
    out[0] = '\0';
    while (*p) {
        size_t n = strcspn(p, "/");
        if (n == 0 || (n == 1 && p[0] == '.')) {
            /* empty or "." component */
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            return errbuf_set(err, "%s '%s' climbs out of the image with '..'", what, in);
        } else if (n > NAME_MAX) {
            return errbuf_set(err, "%s '%.64s...' has a component longer than %d bytes", what, in,
                              NAME_MAX);
        } else {
            if (++depth > PATH_DEPTH_MAX)
                return errbuf_set(err, "%s '%.64s...' is nested deeper than %d", what, in,
                                  PATH_DEPTH_MAX);
            if (used)
                out[used++] = '/';
            memcpy(out + used, p, n);
            used += n;
            out[used] = '\0';
        }
        p += n;
        if (*p == '/')
            p++;
    }
    return depth;
}

/* split(rel, &base) — cuts rel at its last '/' (rel is modified): rel becomes the parent
 * ("" for the root), *base the last component. */
static void split(char *rel, char **base)
{
    char *slash = strrchr(rel, '/');

    if (slash) {
        *slash = '\0';
        *base = slash + 1;
    } else {
        memmove(rel + 1, rel, strlen(rel) + 1);
        rel[0] = '\0';
        *base = rel + 1;
    }
}

/* open_dir(u, rel, create, what, err) — the directory rel (canonical, "" the root) opened by
 * walking from the root with O_NOFOLLOW; with create, missing components are made (0755).
 * An fd or -errno with err saying which component of `what` (the entry's name) is not a
 * directory. */
static int open_dir(struct unpack *u, const char *rel, bool create, const char *what,
                    struct errbuf *err)
{
    char comp[NAME_MAX + 1];
    const char *p = rel;
    int fd = dup(u->rootfd);

    if (fd < 0)
        return errbuf_set(err, "cannot duplicate the root fd: %s", strerror(errno)), -errno;
    while (*p) {
        size_t n = strcspn(p, "/");
        int next;
        memcpy(comp, p, n);
        comp[n] = '\0';
        next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && errno == ENOENT && create) {
            if (mkdirat(fd, comp, 0755) < 0 && errno != EEXIST) {
                int e = errno;
                close(fd);
                return errbuf_set(err, "cannot create directory '%.*s': %s", (int)(p - rel + n),
                                  rel, strerror(e)),
                       -e;
            }
            next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0) {
            int e = errno;
            close(fd);
            if (e == ELOOP || e == ENOTDIR)
                return errbuf_set(err,
                                  "path '%s' goes through '%.*s', which is a symlink or not "
                                  "a directory (an archive's links are never followed)",
                                  what, (int)(p - rel + n), rel),
                       -ELOOP;
            return errbuf_set(err, "cannot open directory '%.*s': %s", (int)(p - rel + n), rel,
                              strerror(e)),
                   -e;
        }
        close(fd);
        fd = next;
        p += n;
        if (*p == '/')
            p++;
    }
    return fd;
}

int unpack_remove_tree(int at, const char *name)
{
    struct stat st;
    struct dirent *de;
    DIR *d;
    int fd, r = 0;

    if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : -errno;
    if (!S_ISDIR(st.st_mode))
        return unlinkat(at, name, 0) < 0 && errno != ENOENT ? -errno : 0;
    fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if ((st.st_mode & 0700) != 0700)
        fchmod(fd, (st.st_mode & 07777) | 0700); /* an ordinary user's read-only directory */
    if (!(d = fdopendir(fd))) {
        close(fd);
        return -errno;
    }
    while (r == 0 && (de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        r = unpack_remove_tree(dirfd(d), de->d_name);
    }
    closedir(d);
    if (r == 0 && unlinkat(at, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        r = -errno;
    return r;
}

/* join(parent, base, out, size) — "parent/base" or "base" for the root. */
static void join(const char *parent, const char *base, char *out, size_t size)
{
    if (parent[0])
        snprintf(out, size, "%s/%s", parent, base);
    else
        snprintf(out, size, "%s", base);
}

/* mark_layer(u, rel) — rel and its ancestors are this layer's: an opaque marker keeps them
 * (an ancestor is kept as a directory, emptied of what lower layers put in it). 0 or -ENOMEM. */
static int mark_layer(struct unpack *u, const char *rel)
{
    char path[PATH_MAX];

    snprintf(path, sizeof(path), "%s", rel);
    for (char *slash = strrchr(path, '/');; slash = strrchr(path, '/')) {
        int r = strset_add(&u->layer, path);
        if (r < 0)
            return r;
        if (r == 0 || !slash) /* known already: so are its ancestors */
            return 0;
        *slash = '\0';
    }
}

/* hide_lower(u, fd, rel, depth) — removes from directory fd (rel below the root; fd is
 * consumed) every entry this layer did not make, and does the same inside the directories it
 * did make or pass through. 0 or -errno. */
static int hide_lower(struct unpack *u, int fd, const char *rel, int depth)
{
    char path[PATH_MAX + NAME_MAX + 2];
    struct dirent *de;
    struct stat st;
    DIR *d;
    int r = 0;

    if (depth > PATH_DEPTH_MAX || !(d = fdopendir(fd))) {
        close(fd);
        return depth > PATH_DEPTH_MAX ? -ELOOP : -errno;
    }
    while (r == 0 && (de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        join(rel, de->d_name, path, sizeof(path));
        if (!strset_has(&u->layer, path)) {
            r = unpack_remove_tree(dirfd(d), de->d_name);
        } else if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                   S_ISDIR(st.st_mode)) {
            int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            r = sub < 0 ? -errno : hide_lower(u, sub, path, depth + 1);
        }
    }
    closedir(d);
    return r;
}

/* whiteout(u, parent, base, err) — ".wh..wh..opq" in parent empties it of what lower layers
 * made; ".wh.NAME" removes NAME unless this layer made it. Other ".wh..wh." names (aufs's
 * bookkeeping) are ignored. */
static int whiteout(struct unpack *u, const char *parent, const char *base, struct errbuf *err)
{
    char path[PATH_MAX + NAME_MAX + 2];
    int fd, r = 0;

    if (strcmp(base, ".wh..wh..opq") == 0) {
        fd = open_dir(u, parent, true, parent, err);
        if (fd < 0)
            return fd;
        r = hide_lower(u, fd, parent, 0);
        if (r < 0)
            return errbuf_set(err, "cannot empty opaque directory '%s': %s", parent, strerror(-r)),
                   r;
        return 0;
    }
    if (strncmp(base, ".wh..wh.", 8) == 0 || base[4] == '\0')
        return 0;
    join(parent, base + 4, path, sizeof(path));
    if (strset_has(&u->layer, path))
        return 0;
    fd = open_dir(u, parent, false, parent, err);
    if (fd == -ENOENT)
        return 0; /* nothing below to hide */
    if (fd < 0)
        return fd;
    r = unpack_remove_tree(fd, base + 4);
    close(fd);
    if (r < 0)
        return errbuf_set(err, "cannot apply whiteout of '%s': %s", path, strerror(-r)), r;
    return 0;
}

/* symlink_escapes(parent_depth, target) — a relative target that climbs above the root
 * from a link whose directory is parent_depth components deep. */
static bool symlink_escapes(int parent_depth, const char *target)
{
    int depth = parent_depth;
    const char *p = target;

    if (target[0] == '/')
        return false; /* resolved inside the sandbox's own root at run time */
    while (*p) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (--depth < 0)
                return true;
        } else if (n > 0 && !(n == 1 && p[0] == '.')) {
            depth++;
        }
        p += n;
        if (*p == '/')
            p++;
    }
    return false;
}

/* remember_dir(u, rel, mode, uid, gid) — a directory's final mode and owner, for
 * unpack_finish. 0 or -ENOMEM. */
static int remember_dir(struct unpack *u, const char *rel, mode_t mode, uid_t uid, gid_t gid)
{
    if (u->ndirs == u->capdirs) {
        size_t cap = u->capdirs ? 2 * u->capdirs : 256;
        struct unpack_dirmode *grown = realloc(u->dirs, cap * sizeof(*grown));
        if (!grown)
            return -ENOMEM;
        u->dirs = grown;
        u->capdirs = cap;
    }
    if (!(u->dirs[u->ndirs].path = strdup(rel)))
        return -ENOMEM;
    u->dirs[u->ndirs].mode = mode;
    u->dirs[u->ndirs].uid = uid;
    u->dirs[u->ndirs].gid = gid;
    u->ndirs++;
    return 0;
}

/* write_data(u, a, fd, name, size, err) — the entry's data into fd, sparse holes kept, the
 * file made `size` long (its header's size; 0 when not set). Holes count
 * against the byte limit as data does: a file's logical size is what a copy of it takes. */
static int write_data(struct unpack *u, struct archive *a, int fd, const char *name,
                      la_int64_t size, struct errbuf *err)
{
    const void *buf;
    size_t len;
    la_int64_t off, end = 0;
    uint64_t written = 0;
    int r;

    while ((r = archive_read_data_block(a, &buf, &len, &off)) == ARCHIVE_OK) {
        if (off < 0 || (uint64_t)off > u->lim.max_bytes - u->bytes ||
            len > u->lim.max_bytes - u->bytes - (uint64_t)off)
            return errbuf_set(err,
                              "'%s' takes the image past its unpacked-size limit of %llu bytes "
                              "(--max-size)",
                              name, (unsigned long long)u->lim.max_bytes),
                   -EFBIG;
        for (size_t done = 0; done < len;) {
            ssize_t w = pwrite(fd, (const char *)buf + done, len - done, off + (off_t)done);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return errbuf_set(err, "cannot write '%s': %s", name, strerror(errno)), -EIO;
            done += (size_t)w;
        }
        written += len;
        if (off + (la_int64_t)len > end)
            end = off + (la_int64_t)len;
    }
    if (r != ARCHIVE_EOF)
        return errbuf_set(err, "cannot read '%s' from the layer: %s", name,
                          archive_error_string(a) ? archive_error_string(a) : "truncated"),
               -EIO;
    if (size > end && (uint64_t)size <= u->lim.max_bytes - u->bytes)
        end = size; /* a trailing hole */
    if (ftruncate(fd, end) < 0)
        return errbuf_set(err, "cannot size '%s': %s", name, strerror(errno)), -EIO;
    u->bytes += (uint64_t)end > written ? (uint64_t)end : written;
    return 0;
}

/* sys_failed(err, what, name) — errno's failure of WHAT on NAME as "WHAT 'NAME': reason";
 * -errno. */
static int sys_failed(struct errbuf *err, const char *what, const char *name)
{
    int e = errno;

    errbuf_set(err, "%s '%s': %s", what, name, strerror(e));
    return -e;
}

/* What entry() knows of the entry it is making, for the one function per kind below. */
struct made {
    int pfd;          /* the parent directory */
    const char *base; /* the name in it */
    const char *full; /* the path in the image, for messages */
    mode_t mode;      /* permission bits, set-id bits already stripped */
    uid_t uid;
    gid_t gid;
};

/* make_hardlink(u, m, hardlink, err) — a hard link to a file its own layer made. */
static int make_hardlink(struct unpack *u, const struct made *m, const char *hardlink,
                         struct errbuf *err)
{
    char lrel[PATH_MAX], *lbase;
    struct stat st;
    int tdepth, tfd, r;

    tdepth = clean_path(hardlink, lrel, sizeof(lrel), err, "hard link target");
    if (tdepth <= 0)
        return tdepth < 0 ? tdepth : errbuf_set(err, "hard link '%s' to the image root", m->full);
    if (!strset_has(&u->layer, lrel))
        return errbuf_set(err,
                          "hard link '%s' points to '%s', which its own layer did not create "
                          "(links across layers or out of the image are refused)",
                          m->full, hardlink);
    split(lrel, &lbase);
    if ((tfd = open_dir(u, lrel, false, hardlink, err)) < 0)
        return tfd;
    if (fstatat(tfd, lbase, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(st.st_mode)) {
        close(tfd);
        return errbuf_set(err, "hard link '%s' points to '%s', which is not a file", m->full,
                          hardlink);
    }
    r = linkat(tfd, lbase, m->pfd, m->base, 0) < 0 ? -errno : 0;
    close(tfd);
    if (r < 0)
        errbuf_set(err, "cannot link '%s' to '%s': %s", m->full, hardlink, strerror(-r));
    return r;
}

/* make_regular(u, a, e, m, err) — a regular file with the entry's data, owner and mode. */
static int make_regular(struct unpack *u, struct archive *a, struct archive_entry *e,
                        const struct made *m, struct errbuf *err)
{
    int fd, r;

    fd = openat(m->pfd, m->base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return sys_failed(err, "cannot create", m->full);
    r = write_data(u, a, fd, m->full, archive_entry_size_is_set(e) ? archive_entry_size(e) : 0,
                   err);
    if (r == 0 && u->chown && fchown(fd, m->uid, m->gid) < 0)
        r = sys_failed(err, "cannot set the owner of", m->full);
    /* after fchown, which clears set-id bits anyway */
    if (r == 0 && fchmod(fd, m->mode) < 0)
        r = sys_failed(err, "cannot set the mode of", m->full);
    close(fd);
    return r;
}

/* make_symlink(u, m, depth, target, err) — a symlink whose target stays inside the image
 * (depth: how deep the link's own path is). */
static int make_symlink(struct unpack *u, const struct made *m, int depth, const char *target,
                        struct errbuf *err)
{
    if (!target || !*target)
        return errbuf_set(err, "symlink '%s' has no target", m->full);
    if (symlink_escapes(depth - 1, target))
        return errbuf_set(err, "symlink '%s' points outside the image root ('%s')", m->full,
                          target);
    if (symlinkat(target, m->pfd, m->base) < 0)
        return sys_failed(err, "cannot create symlink", m->full);
    if (u->chown && fchownat(m->pfd, m->base, m->uid, m->gid, AT_SYMLINK_NOFOLLOW) < 0)
        return sys_failed(err, "cannot set the owner of", m->full);
    return 0;
}

/* make_dir(u, m, exists, err) — a directory (made unless it exists already, a later layer
 * changing its mode and owner), left writable to the builder until unpack_finish gives it
 * the mode and owner remembered here. */
static int make_dir(struct unpack *u, const struct made *m, bool exists, struct errbuf *err)
{
    if (!exists && mkdirat(m->pfd, m->base, 0700) < 0)
        return sys_failed(err, "cannot create directory", m->full);
    if (remember_dir(u, m->full, m->mode, m->uid, m->gid) < 0)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    if (fchmodat(m->pfd, m->base, m->mode | 0700, 0) < 0)
        return sys_failed(err, "cannot set the mode of", m->full);
    return 0;
}

/* entry(u, a, e, err) — one archive entry: checked against the limits and the image root,
 * a whiteout applied, set-id bits stripped, devices skipped, whatever was at its path
 * before replaced (but a directory by a directory), then made by its kind's function. */
static int entry(struct unpack *u, struct archive *a, struct archive_entry *e, struct errbuf *err)
{
    char rel[PATH_MAX], *base, full[PATH_MAX];
    mode_t type = archive_entry_filetype(e);
    const char *hardlink = archive_entry_hardlink(e);
    struct made m = {.mode = archive_entry_perm(e) & 07777,
                     .uid = (uid_t)archive_entry_uid(e),
                     .gid = (gid_t)archive_entry_gid(e)};
    bool dir_exists = false;
    struct stat st;
    int depth, r;

    if (++u->entries > u->lim.max_entries)
        return errbuf_set(err, "the image has more than %llu entries (--max-entries)",
                          (unsigned long long)u->lim.max_entries),
               -E2BIG;
    depth = clean_path(archive_entry_pathname(e), rel, sizeof(rel), err, "entry");
    if (depth < 0)
        return depth;
    if (depth == 0) {
        if (type == AE_IFDIR) /* the root itself: its mode and owner */
            return remember_dir(u, "", m.mode & ~(mode_t)06000, m.uid, m.gid) < 0 ? -ENOMEM : 0;
        return errbuf_set(err, "entry '%s' names the image root but is not a directory",
                          archive_entry_pathname(e));
    }
    snprintf(full, sizeof(full), "%s", rel);
    split(rel, &base);
    if (strncmp(base, ".wh.", 4) == 0)
        return whiteout(u, rel, base, err);
    if (m.mode & 06000) {
        m.mode &= ~(mode_t)06000;
        u->stripped++;
    }
    if (!hardlink && type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK) {
        u->skipped++; /* device nodes, fifos, sockets: never made in an image */
        return 0;
    }
    if (!hardlink && type == AE_IFREG && archive_entry_size_is_set(e) &&
        (uint64_t)archive_entry_size(e) > u->lim.max_bytes - u->bytes)
        return errbuf_set(err,
                          "'%s' (%lld bytes) takes the image past its unpacked-size limit of "
                          "%llu bytes (--max-size)",
                          full, (long long)archive_entry_size(e),
                          (unsigned long long)u->lim.max_bytes),
               -EFBIG;
    m.pfd = open_dir(u, rel, true, full, err);
    if (m.pfd < 0)
        return m.pfd;
    m.base = base;
    m.full = full;
    r = 0;
    if (fstatat(m.pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        dir_exists = S_ISDIR(st.st_mode) && type == AE_IFDIR && !hardlink;
        if (!dir_exists && (r = unpack_remove_tree(m.pfd, base)) < 0)
            errbuf_set(err, "cannot replace '%s': %s", full, strerror(-r));
    }
    if (r == 0) {
        if (hardlink)
            r = make_hardlink(u, &m, hardlink, err);
        else if (type == AE_IFREG)
            r = make_regular(u, a, e, &m, err);
        else if (type == AE_IFLNK)
            r = make_symlink(u, &m, depth, archive_entry_symlink(e), err);
        else
            r = make_dir(u, &m, dir_exists, err);
    }
    if (r == 0 && mark_layer(u, full) < 0)
        r = (errbuf_set(err, "out of memory"), -ENOMEM);
    close(m.pfd);
    return r;
}

int unpack_layer(struct unpack *u, struct archive *a, struct errbuf *err)
{
    struct archive_entry *e;
    int r = 0, ar;

    strset_release(&u->layer);
    while ((ar = archive_read_next_header(a, &e)) == ARCHIVE_OK || ar == ARCHIVE_WARN) {
        if ((r = entry(u, a, e, err)) < 0)
            break;
    }
    if (r == 0 && ar != ARCHIVE_EOF)
        r = (errbuf_set(err, "cannot read the layer: %s",
                        archive_error_string(a) ? archive_error_string(a)
                                                : "truncated or corrupt archive"),
             -EIO);
    strset_release(&u->layer);
    return r;
}

int unpack_finish(struct unpack *u, struct errbuf *err)
{
    struct strset seen = STRSET_INIT;
    int r = 0;

    /* the last entry for a path wins; children before parents (entries came parents first),
     * so an ordinary user's read-only parent does not stop a child's chmod */
    for (size_t i = u->ndirs; r == 0 && i-- > 0;) {
        struct unpack_dirmode *d = &u->dirs[i];
        int fd, added = strset_add(&seen, d->path);
        if (added < 0) {
            r = (errbuf_set(err, "out of memory"), -ENOMEM);
            break;
        }
        if (added == 0)
            continue;
        fd = open_dir(u, d->path, false, d->path, err);
        if (fd == -ENOENT || fd == -ELOOP)
            continue; /* removed or replaced by a later layer */
        if (fd < 0) {
            r = fd;
            break;
        }
        if ((u->chown && fchown(fd, d->uid, d->gid) < 0) || fchmod(fd, d->mode) < 0) {
            r = errbuf_set(err, "cannot set the owner or mode of '%s': %s", d->path,
                           strerror(errno));
            r = -EIO;
        }
        close(fd);
    }
    strset_release(&seen);
    return r;
}

void unpack_release(struct unpack *u)
{
    for (size_t i = 0; i < u->ndirs; i++)
        free(u->dirs[i].path);
    free(u->dirs);
    u->dirs = NULL;
    u->ndirs = u->capdirs = 0;
    strset_release(&u->layer);
}
