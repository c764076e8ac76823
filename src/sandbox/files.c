/*
 * files.c — a live sandbox's files, read and written by the supervisor (see files.h).
 *
 * Everything goes through one descriptor: the O_PATH fd of the sandbox's scratch tmpfs that
 * init hands the supervisor for the operation (sandbox__scratch_open), whose directories "work" and
 * "tmp" are the sandbox's /work and /tmp. Every lookup is an openat2 beneath it that refuses every
 * symlink (RESOLVE_NO_SYMLINKS, so a payload's `ln -s / /work/out` makes "/work/out/etc/passwd" an
 * ELOOP, never the host's file), magic links and mount crossings. What modifies the tree is
 * either an fd-based call on a descriptor so opened (fchown, fchmod, futimens) or a *at call
 * on one name in such a directory that never follows that name (mkdirat, renameat, unlinkat,
 * symlinkat): no path the sandbox could have touched is ever resolved by the host's rules.
 *
 * The sandbox may change its files while we work on them (background processes). The worst
 * it can achieve is that we act on another inode of its own scratch (there is nothing else
 * on that filesystem: no hard link can reach outside it), which is its business.
 *
 * Files and directories made here belong to the sandbox's user on the host (sandbox__host_uid),
 * so the payload owns what was uploaded, as if it had written it.
 */
#include "sandbox/files.h"
#include "sandbox/sandbox_int.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TAR_DEPTH_MAX 256 /* directory levels get_tar descends (each holds one fd) */
#define TAR_HEADER    512 /* bytes of the smallest tar entry */

/* ---- paths ---- */

/* A checked path: the scratch-relative form ("work/a/b", "tmp", ...), and where its last
 * component starts in it (0 when the path names /work or /tmp itself). */
struct sbpath {
    char rel[PATH_MAX + 8];
    size_t base;
};

/* components_valid(path, s, err) — s (a part of path) has no empty, "." or ".." component
 * and none longer than NAME_MAX. */
static bool components_valid(const char *path, const char *s, struct errbuf *err)
{
    while (*s) {
        const char *slash = strchr(s, '/');
        size_t len = slash ? (size_t)(slash - s) : strlen(s);
        if (len == 0 || (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
            return errbuf_set(err,
                              "path '%.200s' must stay inside /work or /tmp (no '..', '.' or "
                              "empty components)",
                              path),
                   false;
        if (len > NAME_MAX)
            return errbuf_set(err, "path '%.60s...' has a name of %zu bytes: more than NAME_MAX",
                              path, len),
                   false;
        s += len;
        if (*s == '/' && !*++s)
            return errbuf_set(err, "path '%.200s' ends with '/'", path), false;
    }
    return true;
}

/* path_parse(path, p, err) — the rules of files.h. 0 or -EINVAL with err set. */
static int path_parse(const char *path, struct sbpath *p, struct errbuf *err)
{
    const char *area = "work", *rest = path;

    if (!path || !*path)
        return errbuf_set(err, "empty path");
    if (strlen(path) >= PATH_MAX)
        return errbuf_set(err, "path '%.60s...' is longer than PATH_MAX (%d bytes)", path,
                          PATH_MAX);
    if (path[0] == '/') {
        if (strncmp(path, "/work", 5) == 0 && (path[5] == '\0' || path[5] == '/'))
            rest = path + 5;
        else if (strncmp(path, "/tmp", 4) == 0 && (path[4] == '\0' || path[4] == '/'))
            area = "tmp", rest = path + 4;
        else
            return errbuf_set(err, "path '%.200s' is outside the sandbox's /work and /tmp", path);
        if (*rest == '/' && !*++rest)
            return errbuf_set(err, "path '%.200s' ends with '/'", path);
    }
    if (!components_valid(path, rest, err))
        return -EINVAL;
    snprintf(p->rel, sizeof(p->rel), "%s%s%s", area, *rest ? "/" : "", rest);
    p->base = *rest ? (size_t)(strrchr(p->rel, '/') - p->rel) + 1 : 0;
    return 0;
}

/* ---- lookups beneath the scratch ---- */

int sandbox__open_beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
    struct open_how how = {
        .flags = (uint64_t)(flags | O_CLOEXEC), .mode = mode, .resolve = RESOLVE_SCRATCH};
    int fd = -1;

    for (int tries = 0; tries < 8; tries++) {
        fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
        if (fd >= 0 || errno != EAGAIN)
            break;
    }
    return fd < 0 ? -errno : fd;
}

/* why(r) — the reason of a failed lookup or write, for messages. */
static const char *why(int r)
{
    switch (-r) {
    case ELOOP:
        return "a symlink is on the way (symlinks in the sandbox are never followed)";
    case EXDEV:
        return "a mount is on the way";
    case ENOENT:
        return "no such file or directory";
    case ENOTDIR:
        return "a component on the way is not a directory";
    case ENOSPC:
        return "scratch disk full";
    case EDQUOT:
        return "scratch disk full";
    default:
        return strerror(-r);
    }
}

/* fail(err, what, path, r) — "cannot WHAT 'PATH': reason"; returns r. */
static int fail(struct errbuf *err, const char *what, const char *path, int r)
{
    errbuf_set(err, "cannot %s '%.200s': %s", what, path, why(r));
    return r;
}

/* scratch_path(sb, path, what, need_name, p, err) — the prologue of every operation on a
 * path: PATH checked by the rules of files.h into *p (with need_name, it must name something in
 * /work or /tmp, not one of them: else -EISDIR, "cannot WHAT 'PATH': it is a directory"), then
 * the scratch fd for this one operation (init's scratch, checked: sandbox__scratch_open), which
 * the caller closes. Nothing is looked up in the scratch yet. The fd, or -errno with err set. */
static int scratch_path(struct sandbox *sb, const char *path, const char *what, bool need_name,
                        struct sbpath *p, struct errbuf *err)
{
    int r = path_parse(path, p, err);

    if (r < 0)
        return r;
    if (need_name && p->base == 0)
        return errbuf_set(err, "cannot %s '%.200s': it is a directory", what, path), -EISDIR;
    return sandbox__scratch_open(sb, err);
}

/* path_open(sb, path, flags, what, err) — scratch_path, then PATH itself opened beneath the
 * scratch with flags (no symlink or mount crossed on the way: sandbox__open_beneath); the
 * scratch fd is closed again. The fd, which the caller closes, or -errno with err set
 * ("cannot WHAT 'PATH': reason"). */
static int path_open(struct sandbox *sb, const char *path, int flags, const char *what,
                     struct errbuf *err)
{
    struct sbpath p;
    int s = scratch_path(sb, path, what, false, &p, err), fd;

    if (s < 0)
        return s;
    fd = sandbox__open_beneath(s, p.rel, flags, 0);
    close(s);
    return fd < 0 ? fail(err, what, path, fd) : fd;
}

/* as_sandbox(sb, on, path, err) — this thread creates as the sandbox's user (on) or as itself
 * again (see sandbox__fs_ids). 0 or -errno with err set. */
static int as_sandbox(struct sandbox *sb, bool on, const char *path, struct errbuf *err)
{
    int r = on ? sandbox__fs_ids(sandbox__host_uid(sb), sandbox__host_gid(sb))
               : sandbox__fs_ids(geteuid(), getegid());

    if (r < 0)
        errbuf_set(err, "cannot write '%.200s': cannot act as the sandbox's user", path);
    return r;
}

/* set_mode(fd, mode) — mode on a file we made (as the sandbox's user, so its owner already),
 * whatever the umask of our process. 0 or -errno. */
static int set_mode(int fd, mode_t mode)
{
    return fchmod(fd, mode) < 0 ? -errno : 0;
}

/* dir_step(dir, name, create) — the directory NAME in dir as a new O_PATH fd; with
 * create, made (0755, the sandbox user's) when missing. -errno otherwise. */
static int dir_step(int dir, const char *name, bool create)
{
    int fd = sandbox__open_beneath(dir, name, O_PATH | O_DIRECTORY, 0), r;

    if (fd != -ENOENT || !create)
        return fd;
    if (mkdirat(dir, name, 0700) == 0) {
        /* Whatever NAME is by now (the payload may race us), it is beneath, of the scratch. */
        fd = sandbox__open_beneath(dir, name, O_RDONLY | O_DIRECTORY, 0);
        if (fd < 0)
            return fd;
        r = set_mode(fd, 0755);
        close(fd);
        if (r < 0)
            return r;
    } else if (errno != EEXIST) {
        return -errno;
    }
    return sandbox__open_beneath(dir, name, O_PATH | O_DIRECTORY, 0);
}

/* parent_open(base, rel, create) — the directory holding rel's last component (rel is
 * relative to base, with a last component), walked one name at a time; with create, missing
 * directories are made. An O_PATH fd or -errno. */
static int parent_open(int base, const char *rel, bool create)
{
    char comp[NAME_MAX + 1];
    const char *s = rel, *slash;
    int dir = sandbox__open_beneath(base, ".", O_PATH | O_DIRECTORY, 0);

    while (dir >= 0 && (slash = strchr(s, '/'))) {
        size_t len = (size_t)(slash - s);
        if (len > NAME_MAX) {
            close(dir);
            return -ENAMETOOLONG;
        }
        memcpy(comp, s, len);
        comp[len] = '\0';
        int next = dir_step(dir, comp, create);
        close(dir);
        dir = next;
        s = slash + 1;
    }
    return dir;
}

/* ---- writing a file: a temporary name renamed over the target ---- */

/* A source of a new file's bytes: fill(fd, ctx) writes them; 0 or -errno. */
typedef int (*fill_fn)(int fd, void *ctx);

struct mem_src {
    const void *data;
    size_t len;
};

static int fill_mem(int fd, void *ctx)
{
    const struct mem_src *m = ctx;
    return util_write_all(fd, m->data, m->len);
}

/* temp_name(buf, size) — ".crucible-" and 16 random hex digits: a name for a file being written. */
static void temp_name(char *buf, size_t size)
{
    uint64_t v = 0;

    if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v))
        v = (uint64_t)util_now() * 1e9 + (uint64_t)getpid();
    snprintf(buf, size, ".crucible-%016llx", (unsigned long long)v);
}

/* replace_file(dir, name, mode, mtime, fill, ctx) — NAME in dir becomes a new regular
 * file (mode, the sandbox user's, mtime unless NULL) with fill's bytes, atomically: written
 * under a temporary name and renamed over. A directory at NAME is -EISDIR, any other
 * non-file -EEXIST. 0 or -errno; on failure nothing is left behind. */
static int replace_file(int dir, const char *name, mode_t mode, const struct timespec *mtime,
                        fill_fn fill, void *ctx)
{
    char tmp[64];
    struct stat st;
    int fd = -EEXIST, r;

    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISDIR(st.st_mode))
            return -EISDIR;
        if (!S_ISREG(st.st_mode))
            return -EEXIST;
    } else if (errno != ENOENT) {
        return -errno;
    }
    for (int tries = 0; tries < 16 && fd == -EEXIST; tries++) {
        temp_name(tmp, sizeof(tmp));
        fd = sandbox__open_beneath(dir, tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
    }
    if (fd < 0)
        return fd;
    r = fill(fd, ctx);
    if (r == 0)
        r = set_mode(fd, mode);
    if (r == 0 && mtime) {
        struct timespec ts[2] = {*mtime, *mtime};
        if (futimens(fd, ts) < 0)
            r = -errno;
    }
    if (close(fd) < 0 && r == 0)
        r = -errno;
    if (r == 0 && renameat(dir, tmp, dir, name) < 0)
        r = -errno;
    if (r < 0)
        unlinkat(dir, tmp, 0);
    return r;
}

int sandbox_file_write(struct sandbox *sb, const char *path, const void *data, size_t len,
                       mode_t mode, struct errbuf *err)
{
    struct mem_src src = {.data = data, .len = len};
    struct sbpath p;
    int s, dir, r;

    if ((s = scratch_path(sb, path, "write", true, &p, err)) < 0)
        return s;
    if ((r = as_sandbox(sb, true, path, err)) < 0) {
        close(s);
        return r;
    }
    dir = parent_open(s, p.rel, true);
    close(s);
    r = dir < 0
            ? dir
            : replace_file(dir, p.rel + p.base, mode ? mode & 0777 : 0644, NULL, fill_mem, &src);
    if (dir >= 0)
        close(dir);
    if (as_sandbox(sb, false, path, err) < 0)
        return -EPERM;
    if (r == -EISDIR)
        return errbuf_set(err, "cannot write '%.200s': it is a directory", path), r;
    if (r == -EEXIST)
        return errbuf_set(err, "cannot write '%.200s': it exists and is not a regular file", path),
               r;
    return r < 0 ? fail(err, "write", path, r) : 0;
}

int sandbox_file_read(struct sandbox *sb, const char *path, size_t max, char **data, size_t *len,
                      struct errbuf *err)
{
    struct stat st;
    int fd, r;

    *data = NULL;
    *len = 0;
    /* Non-blocking: a FIFO the payload left there does not hang us. */
    if ((fd = path_open(sb, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, "read", err)) < 0)
        return fd;
    if (fstat(fd, &st) < 0) {
        r = -errno;
        close(fd);
        return fail(err, "read", path, r);
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        if (S_ISDIR(st.st_mode))
            return errbuf_set(err, "cannot read '%.200s': it is a directory", path), -EISDIR;
        return errbuf_set(err, "cannot read '%.200s': not a regular file", path), -EINVAL;
    }
    r = util_read_fd(fd, data, len, max);
    close(fd);
    if (r == -EFBIG)
        return errbuf_set(err, "'%.200s' is larger than %zu bytes", path, max), r;
    return r < 0 ? fail(err, "read", path, r) : 0;
}

/* ---- listing ---- */

static enum sandbox_file_type file_type(mode_t m)
{
    return S_ISREG(m) ? SBF_FILE : S_ISDIR(m) ? SBF_DIR : S_ISLNK(m) ? SBF_SYMLINK : SBF_OTHER;
}

static int dirent_cmp(const void *a, const void *b)
{
    return strcmp(((const struct sandbox_dirent *)a)->name,
                  ((const struct sandbox_dirent *)b)->name);
}

int sandbox_file_list(struct sandbox *sb, const char *path, size_t max,
                      struct sandbox_dirent **ents, size_t *n, struct errbuf *err)
{
    struct sandbox_dirent *v = NULL;
    size_t count = 0, cap = 0;
    struct dirent *d;
    DIR *dir;
    int fd, r = 0;

    *ents = NULL;
    *n = 0;
    if ((fd = path_open(sb, path, O_RDONLY | O_DIRECTORY, "list", err)) < 0)
        return fd;
    dir = fdopendir(fd);
    if (!dir) {
        r = -errno;
        close(fd);
        return fail(err, "list", path, r);
    }
    while ((errno = 0, d = readdir(dir))) {
        struct stat st;
        if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
            continue;
        if (fstatat(dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue; /* removed meanwhile */
        if (count == max) {
            errbuf_set(err, "'%.200s' has more than %zu entries", path, max);
            r = -E2BIG;
            break;
        }
        if (count == cap) {
            size_t nc = cap ? cap * 2 : 32;
            struct sandbox_dirent *nv = realloc(v, nc * sizeof(*v));
            if (!nv) {
                errbuf_set(err, "out of memory");
                r = -ENOMEM;
                break;
            }
            v = nv;
            cap = nc;
        }
        v[count] = (struct sandbox_dirent){
            .name = strdup(d->d_name),
            .type = file_type(st.st_mode),
            .size = (uint64_t)st.st_size,
            .mode = st.st_mode & 07777,
            .mtime = (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9,
        };
        if (!v[count].name) {
            errbuf_set(err, "out of memory");
            r = -ENOMEM;
            break;
        }
        count++;
    }
    if (r == 0 && errno)
        r = fail(err, "list", path, -errno);
    closedir(dir);
    if (r < 0) {
        sandbox_dirents_free(v, count);
        return r;
    }
    if (count)
        qsort(v, count, sizeof(*v), dirent_cmp);
    *ents = v;
    *n = count;
    return 0;
}

void sandbox_dirents_free(struct sandbox_dirent *ents, size_t n)
{
    for (size_t i = 0; ents && i < n; i++)
        free(ents[i].name);
    free(ents);
}

/* ---- tar in ---- */

/* One entry of an archive being put, as checked in the first pass. */
struct tar_item {
    char *path; /* normalised: no leading "./", no trailing '/' */
    mode_t type;
    mode_t mode;
};

/* tar_open(tar, len, err) — a reader of the archive in memory (plain tar, or compressed), or
 * NULL with err set. */
static struct archive *tar_open(const void *tar, size_t len, struct errbuf *err)
{
    struct archive *a = archive_read_new();

    if (!a)
        return errbuf_set(err, "out of memory"), NULL;
    archive_read_support_filter_all(a);
    archive_read_support_format_tar(a);
    if (archive_read_open_memory(a, tar, len) != ARCHIVE_OK) {
        errbuf_set(err, "not a tar archive: %s",
                   archive_error_string(a) ? archive_error_string(a) : "unreadable");
        archive_read_free(a);
        return NULL;
    }
    return a;
}

/* tar_name(raw, out, err) — out is raw normalised ("./a/b/" → "a/b"); an empty out is the
 * archive's root itself (skipped). false with err when the name is refused. */
static bool tar_name(const char *raw, char *out, size_t size, struct errbuf *err)
{
    const char *s = raw;
    size_t n;

    if (!raw || !*raw)
        return errbuf_set(err, "an archive entry has no name"), false;
    if (raw[0] == '/')
        return errbuf_set(err, "archive entry '%.200s' has an absolute path", raw), false;
    while (s[0] == '.' && s[1] == '/')
        for (s += 2; *s == '/';)
            s++;
    if (strcmp(s, ".") == 0)
        s = "";
    n = strlen(s);
    if (n >= size)
        return errbuf_set(err, "archive entry '%.60s...' has a path longer than PATH_MAX", raw),
               false;
    memcpy(out, s, n + 1);
    if (n && out[n - 1] == '/')
        out[n - 1] = '\0';
    if (!*out)
        return true;
    if (!components_valid(raw, out, err)) {
        errbuf_set(err,
                   "archive entry '%.200s' leaves the directory or has an empty, '.' or "
                   "'..' component",
                   raw);
        return false;
    }
    return true;
}

/* tar_item_check(e, it, err) — the kind, bits and name rules of files.h for one entry. */
static bool tar_item_check(struct archive_entry *e, struct tar_item *it, char *name, size_t size,
                           struct errbuf *err)
{
    const char *raw = archive_entry_pathname(e);
    mode_t type = archive_entry_filetype(e);
    mode_t mode = archive_entry_perm(e);

    if (!tar_name(raw, name, size, err))
        return false;
    if (archive_entry_hardlink(e))
        return errbuf_set(err, "archive entry '%.200s' is a hard link (refused)", raw), false;
    if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
        return errbuf_set(err,
                          "archive entry '%.200s' is a %s (only files, directories and "
                          "symlinks are accepted)",
                          raw,
                          type == AE_IFCHR || type == AE_IFBLK ? "device node"
                          : type == AE_IFIFO                   ? "FIFO"
                          : type == AE_IFSOCK                  ? "socket"
                                                               : "special file"),
               false;
    if (mode & (S_ISUID | S_ISGID))
        return errbuf_set(err, "archive entry '%.200s' has a setuid or setgid bit (refused)", raw),
               false;
    if (type == AE_IFLNK) {
        const char *t = archive_entry_symlink(e);
        if (!t || !*t || strlen(t) >= PATH_MAX)
            return errbuf_set(err, "archive entry '%.200s' is a symlink without a valid target",
                              raw),
                   false;
    }
    if (type == AE_IFREG && archive_entry_size(e) < 0)
        return errbuf_set(err, "archive entry '%.200s' has no size", raw), false;
    it->type = type;
    it->mode = mode & (type == AE_IFDIR ? 01777 : 0777);
    return true;
}

static int item_cmp(const void *a, const void *b)
{
    return strcmp(((const struct tar_item *)a)->path, ((const struct tar_item *)b)->path);
}

static void items_free(struct tar_item *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].path);
    free(v);
}

/* tar_clear(dest, items, n, sorted, err) — what makes an archive refused as a whole beyond
 * its single entries: a path given twice, a path through a symlink or file of the archive,
 * or through something in the destination (dest: an O_PATH fd, or -1 when it does not exist
 * yet) that is not a directory, or an entry whose kind clashes with what it would replace (a
 * directory over a file, a file over a directory). */
static bool tar_clear(int dest, const struct tar_item *items, size_t n, struct tar_item *sorted,
                      struct errbuf *err)
{
    char buf[PATH_MAX];

    memcpy(sorted, items, n * sizeof(*items));
    qsort(sorted, n, sizeof(*sorted), item_cmp);
    for (size_t i = 1; i < n; i++)
        if (strcmp(sorted[i - 1].path, sorted[i].path) == 0)
            return errbuf_set(err, "archive entry '%.200s' is given twice", sorted[i].path), false;
    for (size_t i = 0; i < n; i++) {
        const char *p = items[i].path;
        for (const char *slash = strchr(p, '/'); slash; slash = strchr(slash + 1, '/')) {
            struct tar_item key = {.path = buf}, *hit;
            memcpy(buf, p, (size_t)(slash - p));
            buf[slash - p] = '\0';
            hit = bsearch(&key, sorted, n, sizeof(*sorted), item_cmp);
            if (hit && hit->type != AE_IFDIR)
                return errbuf_set(err,
                                  "archive entry '%.200s' goes through '%.200s', a %s of "
                                  "the archive",
                                  p, hit->path, hit->type == AE_IFLNK ? "symlink" : "file"),
                       false;
        }
        if (dest < 0)
            continue;
        /* The destination as it is now: its parent must be a directory or not exist (the
         * lookup stops with ELOOP or ENOTDIR at the first symlink or file on the way). */
        const char *last = strrchr(p, '/');
        int dir;
        if (last) {
            memcpy(buf, p, (size_t)(last - p));
            buf[last - p] = '\0';
            dir = sandbox__open_beneath(dest, buf, O_PATH | O_DIRECTORY, 0);
        } else {
            dir = sandbox__open_beneath(dest, ".", O_PATH | O_DIRECTORY, 0);
        }
        if (dir == -ENOENT)
            continue;
        if (dir < 0)
            return errbuf_set(err, "archive entry '%.200s' cannot be put: %s", p, why(dir)), false;
        struct stat st;
        int there = fstatat(dir, last ? last + 1 : p, &st, AT_SYMLINK_NOFOLLOW);
        close(dir);
        if (there == 0 && S_ISDIR(st.st_mode) != (items[i].type == AE_IFDIR))
            return errbuf_set(err, "archive entry '%.200s' would replace a %s", p,
                              S_ISDIR(st.st_mode) ? "directory with a non-directory"
                                                  : "non-directory with a directory"),
                   false;
    }
    return true;
}

/* tar_check(sb, tar, len, dest, &items, &n, err) — the first pass: every entry read and
 * checked, the whole archive's size bounded by the scratch's (a compressed archive is not
 * expanded past what could be kept). 0 or -errno with err naming the entry. */
static int tar_check(struct sandbox *sb, const void *tar, size_t len, int dest,
                     struct tar_item **out, size_t *out_n, struct errbuf *err)
{
    const struct sandbox_limits *lim = sandbox__limits(sb);
    uint64_t room = lim->disk_mb << 20, inodes = lim->disk_mb * 256 + 64, total = 0;
    struct tar_item *v = NULL, *sorted = NULL;
    size_t n = 0, cap = 0;
    struct archive_entry *e;
    struct archive *a;
    char name[PATH_MAX];
    int ar, r = 0;

    a = tar_open(tar, len, err);
    if (!a)
        return -EINVAL;
    while ((ar = archive_read_next_header(a, &e)) == ARCHIVE_OK || ar == ARCHIVE_WARN) {
        struct tar_item it;
        if (!tar_item_check(e, &it, name, sizeof(name), err)) {
            r = -EINVAL;
            break;
        }
        if (it.type == AE_IFREG)
            total += (uint64_t)archive_entry_size(e);
        if (total > room || n + 1 > inodes) {
            errbuf_set(err, "the archive holds more than the scratch disk of %llu MB",
                       (unsigned long long)lim->disk_mb);
            r = -ENOSPC;
            break;
        }
        if (!*name)
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            struct tar_item *nv = realloc(v, nc * sizeof(*v));
            if (!nv) {
                r = -ENOMEM;
                errbuf_set(err, "out of memory");
                break;
            }
            v = nv;
            cap = nc;
        }
        it.path = strdup(name);
        if (!it.path) {
            r = -ENOMEM;
            errbuf_set(err, "out of memory");
            break;
        }
        v[n++] = it;
        /* The data is skipped without being kept: what is written is read in pass two. */
        if (archive_read_data_skip(a) != ARCHIVE_OK) {
            ar = ARCHIVE_FATAL;
            break;
        }
    }
    if (r == 0 && ar != ARCHIVE_EOF) {
        errbuf_set(err, "not a valid tar archive: %s",
                   archive_error_string(a) ? archive_error_string(a) : "truncated");
        r = -EINVAL;
    }
    archive_read_free(a);
    if (r == 0) {
        sorted = malloc((n ? n : 1) * sizeof(*sorted));
        if (!sorted)
            r = -ENOMEM, errbuf_set(err, "out of memory");
        else if (!tar_clear(dest, v, n, sorted, err))
            r = -EINVAL;
        free(sorted);
    }
    if (r < 0) {
        items_free(v, n);
        return r;
    }
    *out = v;
    *out_n = n;
    return 0;
}

static int fill_archive(int fd, void *ctx)
{
    struct archive *a = ctx;
    char buf[65536];
    la_ssize_t n;

    while ((n = archive_read_data(a, buf, sizeof(buf))) > 0) {
        int r = util_write_all(fd, buf, (size_t)n);
        if (r < 0)
            return r;
    }
    return n < 0 ? -EIO : 0;
}

/* tar_put_one(dest, a, e, name) — one checked entry written below dest. 0 or -errno. */
static int tar_put_one(int dest, struct archive *a, struct archive_entry *e, const char *path)
{
    const char *last = strrchr(path, '/');
    const char *name = last ? last + 1 : path;
    mode_t type = archive_entry_filetype(e);
    int dir, r = 0;

    dir = parent_open(dest, path, true);
    if (dir < 0)
        return dir;
    if (type == AE_IFDIR) {
        int fd = dir_step(dir, name, true);
        r = fd < 0 ? fd : 0;
        if (fd >= 0)
            close(fd);
    } else if (type == AE_IFREG) {
        struct timespec mt = {.tv_sec = archive_entry_mtime(e),
                              .tv_nsec = archive_entry_mtime_nsec(e)};
        r = replace_file(dir, name, archive_entry_perm(e) & 0777, &mt, fill_archive, a);
    } else {
        char tmp[64];
        temp_name(tmp, sizeof(tmp));
        if (symlinkat(archive_entry_symlink(e), dir, tmp) < 0)
            r = -errno;
        else if (renameat(dir, tmp, dir, name) < 0) {
            r = -errno;
            unlinkat(dir, tmp, 0);
        }
    }
    close(dir);
    return r;
}

static int tar_write(int s, const struct sbpath *p, const char *dirpath, int *dest_fd,
                     const void *tar, size_t len, const struct tar_item *items, size_t n,
                     struct errbuf *err);

int sandbox_file_put_tar(struct sandbox *sb, const char *dirpath, const void *tar, size_t len,
                         struct errbuf *err)
{
    struct tar_item *items = NULL;
    struct sbpath p;
    size_t n = 0;
    int s, dest, r;

    if ((s = scratch_path(sb, dirpath, "unpack into", false, &p, err)) < 0)
        return s;
    dest = sandbox__open_beneath(s, p.rel, O_PATH | O_DIRECTORY, 0);
    if (dest < 0 && dest != -ENOENT) {
        close(s);
        return fail(err, "unpack into", dirpath, dest);
    }
    /* Pass one: everything checked, nothing written. */
    r = tar_check(sb, tar, len, dest, &items, &n, err);
    if (r < 0)
        goto out;
    if ((r = as_sandbox(sb, true, dirpath, err)) < 0)
        goto out;
    r = tar_write(s, &p, dirpath, &dest, tar, len, items, n, err);
    if (as_sandbox(sb, false, dirpath, err) < 0 && r == 0)
        r = -EPERM;
out:
    items_free(items, n);
    if (dest >= 0)
        close(dest);
    close(s);
    return r;
}

/* tar_write(s, p, dirpath, &dest, tar, len, items, n, err) — pass two of sandbox_file_put_tar, as
 * the sandbox's user: the destination made when missing (*dest), the entries written in the
 * archive's order, then the directories' modes. 0 or -errno with err set. */
static int tar_write(int s, const struct sbpath *p, const char *dirpath, int *dest_fd,
                     const void *tar, size_t len, const struct tar_item *items, size_t n,
                     struct errbuf *err)
{
    struct archive_entry *e;
    struct archive *a;
    char name[PATH_MAX];
    int dest = *dest_fd, r = 0, ar;

    if (dest < 0) {
        int parent = parent_open(s, p->rel, true);
        dest = parent < 0 ? parent : dir_step(parent, p->rel + p->base, true);
        if (parent >= 0)
            close(parent);
        if (dest < 0)
            return fail(err, "create", dirpath, dest);
        *dest_fd = dest;
    }
    /* Pass two: the same entries, in the archive's order, written. */
    a = tar_open(tar, len, err);
    if (!a)
        return -EINVAL;
    while ((ar = archive_read_next_header(a, &e)) == ARCHIVE_OK || ar == ARCHIVE_WARN) {
        struct tar_item it;
        if (!tar_item_check(e, &it, name, sizeof(name), err)) { /* the same bytes as before */
            r = -EINVAL;
            break;
        }
        if (!*name)
            continue;
        r = tar_put_one(dest, a, e, name);
        if (r < 0) {
            errbuf_set(err, "cannot put archive entry '%.200s': %s", name, why(r));
            break;
        }
    }
    if (r == 0 && ar != ARCHIVE_EOF)
        r = errbuf_set(err, "not a valid tar archive: %s",
                       archive_error_string(a) ? archive_error_string(a) : "truncated");
    archive_read_free(a);
    /* Directory modes last, so that a read-only directory of the archive could be filled. */
    for (size_t i = 0; r == 0 && i < n; i++) {
        if (items[i].type != AE_IFDIR)
            continue;
        int fd = sandbox__open_beneath(dest, items[i].path, O_RDONLY | O_DIRECTORY, 0);
        if (fd >= 0) {
            if (fchmod(fd, items[i].mode) < 0)
                r = fail(err, "set the mode of", items[i].path, -errno);
            close(fd);
        }
    }
    return r;
}

/* ---- tar out ---- */

/* The archive being made, in memory, bounded. */
struct tar_out {
    struct archive *a;
    struct archive_entry *e;
    char *data;
    size_t len, cap, max;
    bool over;
    char path[PATH_MAX];
    char link[PATH_MAX]; /* a symlink's target */
    char buf[65536];     /* a file's data on its way: here, not on the stack of a recursion */
    struct errbuf *err;
};

static la_ssize_t tar_out_write(struct archive *a, void *ctx, const void *buf, size_t n)
{
    struct tar_out *t = ctx;

    if (t->len + n > t->max) {
        t->over = true;
        archive_set_error(a, EFBIG, "archive larger than the maximum");
        return -1;
    }
    if (t->len + n > t->cap) {
        size_t nc = t->cap ? t->cap : 65536;
        while (nc < t->len + n)
            nc *= 2;
        if (nc > t->max)
            nc = t->max;
        char *nd = realloc(t->data, nc);
        if (!nd) {
            archive_set_error(a, ENOMEM, "out of memory");
            return -1;
        }
        t->data = nd;
        t->cap = nc;
    }
    memcpy(t->data + t->len, buf, n);
    t->len += n;
    return (la_ssize_t)n;
}

/* tar_out_fail(t) — the error of a failed archive write. */
static int tar_out_fail(struct tar_out *t)
{
    if (t->over)
        return errbuf_set(t->err, "the archive is larger than %zu bytes", t->max), -EFBIG;
    errbuf_set(t->err, "cannot write the archive: %s",
               archive_error_string(t->a) ? archive_error_string(t->a) : "unknown error");
    return -EIO;
}

/* tar_header(t, st, type, size, link) — the header of the entry at t->path. */
static int tar_header(struct tar_out *t, const struct stat *st, mode_t type, int64_t size,
                      const char *link)
{
    struct archive_entry *e = t->e;

    archive_entry_clear(e);
    archive_entry_set_pathname(e, t->path);
    archive_entry_set_filetype(e, type);
    archive_entry_set_perm(e, st->st_mode & 07777);
    archive_entry_set_uid(e, SANDBOX_UID); /* ids as the sandbox sees them */
    archive_entry_set_gid(e, SANDBOX_UID);
    archive_entry_set_mtime(e, st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
    archive_entry_set_size(e, size);
    if (link)
        archive_entry_set_symlink(e, link);
    if (archive_write_header(t->a, e) < ARCHIVE_WARN)
        return tar_out_fail(t);
    return 0;
}

static int tar_walk(struct tar_out *t, int dirfd, size_t plen, int depth);

/* tar_entry(t, dirfd, name, plen, depth) — the entry NAME of dirfd (t->path holds its path
 * up to plen), and what is below it. Entries that change kind or vanish while we look are
 * skipped: the sandbox's processes may be working on them. */
static int tar_entry(struct tar_out *t, int dirfd, const char *name, size_t plen, int depth)
{
    size_t nlen = strlen(name), len = plen + (plen ? 1 : 0) + nlen;
    char *buf = t->buf, *link = t->link;
    struct stat st;
    int fd, r = 0;

    if (len >= sizeof(t->path))
        return errbuf_set(t->err, "'%.100s/%.100s' is longer than PATH_MAX", t->path, name),
               -ENAMETOOLONG;
    if (plen)
        t->path[plen] = '/';
    memcpy(t->path + plen + (plen ? 1 : 0), name, nlen + 1);
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        goto out;
    if (S_ISLNK(st.st_mode)) {
        ssize_t n = readlinkat(dirfd, name, link, sizeof(t->link) - 1);
        if (n >= 0) {
            link[n] = '\0';
            r = tar_header(t, &st, AE_IFLNK, 0, link);
        }
    } else if (S_ISDIR(st.st_mode)) {
        if (depth >= TAR_DEPTH_MAX) {
            errbuf_set(t->err, "'%.200s' is more than %d directories deep", t->path, TAR_DEPTH_MAX);
            r = -ELOOP;
            goto out;
        }
        fd = sandbox__open_beneath(dirfd, name, O_RDONLY | O_DIRECTORY, 0);
        if (fd < 0)
            goto out;
        r = tar_header(t, &st, AE_IFDIR, 0, NULL);
        if (r == 0)
            r = tar_walk(t, fd, len, depth + 1); /* takes fd */
        else
            close(fd);
    } else if (S_ISREG(st.st_mode)) {
        fd = sandbox__open_beneath(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
            if (fd >= 0)
                close(fd);
            goto out;
        }
        if ((uint64_t)st.st_size > t->max) {
            close(fd);
            t->over = true;
            r = tar_out_fail(t);
            goto out;
        }
        r = tar_header(t, &st, AE_IFREG, st.st_size, NULL);
        /* As many bytes as the header says: a file that shrinks meanwhile is padded with
         * zeros by libarchive, one that grows is cut. */
        for (off_t left = st.st_size; r == 0 && left > 0;) {
            ssize_t n = read(fd, buf, sizeof(t->buf));
            if (n <= 0)
                break;
            if ((off_t)n > left)
                n = (ssize_t)left;
            if (archive_write_data(t->a, buf, (size_t)n) < 0)
                r = tar_out_fail(t);
            left -= n;
        }
        close(fd);
    } /* FIFOs, sockets and anything else: skipped */
out:
    t->path[plen] = '\0';
    return r;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* tar_walk(t, fd, plen, depth) — the entries of directory fd (consumed), by name. */
static int tar_walk(struct tar_out *t, int fd, size_t plen, int depth)
{
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *d;
    DIR *dir = fdopendir(fd);
    int r = 0;

    if (!dir) {
        close(fd);
        return errbuf_set(t->err, "cannot read directory '%.200s': %s", t->path, strerror(errno)),
               -EIO;
    }
    while ((d = readdir(dir))) {
        if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
            continue;
        /* Every entry takes a header: a directory of a million names is refused before
         * its names are kept. */
        if ((t->len + (n + 1) * TAR_HEADER) > t->max) {
            t->over = true;
            r = tar_out_fail(t);
            break;
        }
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 32;
            char **nv = realloc(names, nc * sizeof(*nv));
            if (!nv) {
                errbuf_set(t->err, "out of memory");
                r = -ENOMEM;
                break;
            }
            names = nv;
            cap = nc;
        }
        if (!(names[n] = strdup(d->d_name))) {
            errbuf_set(t->err, "out of memory");
            r = -ENOMEM;
            break;
        }
        n++;
    }
    if (r == 0 && n)
        qsort(names, n, sizeof(*names), name_cmp);
    for (size_t i = 0; r == 0 && i < n; i++)
        r = tar_entry(t, dirfd(dir), names[i], plen, depth);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    closedir(dir);
    return r;
}

int sandbox_file_get_tar(struct sandbox *sb, const char *dirpath, size_t max, char **tar,
                         size_t *len, struct errbuf *err)
{
    struct tar_out *t;
    int fd, r;

    *tar = NULL;
    *len = 0;
    if ((fd = path_open(sb, dirpath, O_RDONLY | O_DIRECTORY, "archive", err)) < 0)
        return fd;
    t = calloc(1, sizeof(*t));
    if (t) {
        t->max = max;
        t->err = err;
        t->a = archive_write_new();
        t->e = archive_entry_new();
    }
    if (!t || !t->a || !t->e) {
        close(fd);
        errbuf_set(err, "out of memory");
        r = -ENOMEM;
        goto out;
    }
    if (archive_write_set_format_pax_restricted(t->a) != ARCHIVE_OK ||
        archive_write_add_filter_none(t->a) != ARCHIVE_OK ||
        archive_write_set_bytes_in_last_block(t->a, 1) != ARCHIVE_OK ||
        archive_write_open(t->a, t, NULL, tar_out_write, NULL) != ARCHIVE_OK) {
        close(fd);
        r = tar_out_fail(t);
        goto out;
    }
    r = tar_walk(t, fd, 0, 0);
    if (archive_write_close(t->a) != ARCHIVE_OK && r == 0)
        r = tar_out_fail(t);
out:
    if (t && t->e)
        archive_entry_free(t->e);
    if (t && t->a)
        archive_write_free(t->a);
    if (t && r == 0) {
        *tar = t->data ? t->data : calloc(1, 1);
        *len = t->len;
        if (!*tar)
            r = -ENOMEM;
    } else if (t) {
        free(t->data);
    }
    free(t);
    return r;
}
