/*
 * rootfs.c — building a sandbox's root filesystem from an image, inside init.
 *
 * Runs in init, after the new user and mount namespaces exist and init holds its
 * capabilities there. Everything is assembled as a detached mount tree with the new mount
 * API (fsopen/fsmount, open_tree, move_mount, mount_setattr), so no host path is ever
 * shadowed while it is still needed, and attached only at the end:
 *
 *   /           small tmpfs: mount points, generated and copied /etc files; read-only at end
 *   image       directories bound (recursively), small files copied; all read-only
 *   /proc       a fresh procfs of the sandbox's pid namespace (nosuid, nodev, noexec)
 *   /dev        null zero full random urandom bound from the host; fd, std* symlinks
 *   /tmp /work  two directories of one size-limited scratch tmpfs (nosuid, nodev)
 *
 * then pivot_root into it and detach the old root.
 *
 * A writable root (limits->writable_root) is an overlay whose upper and work directories
 * are on the scratch tmpfs, so writes land in the sandbox's own size-limited scratch and
 * never in the image. An image that is a whole root filesystem (a directory or stored
 * image: img->whole_root) is one overlay, the image's root its lower layer, mounted as the
 * sandbox's root with a fresh /dev over the image's; /proc, /tmp and /work go on top as
 * above. "host" is an allow-list of the host's entries, not its whole root: there the root
 * is a directory of the scratch tmpfs (the generated /etc files and whatever the payload
 * creates at the top count against the scratch size) and each directory of the image is
 * an overlay of its own; its regular files too large to copy stay read-only binds. The
 * lower layers are mounted for a moment in init's mount namespace (a small holder tmpfs
 * over /tmp; overlayfs clones its layers from there) and go with the old root at the pivot.
 * One overlay instead of one per directory is what keeps a writable root's start-up near a
 * read-only one's (docs/BENCHMARKS.md, "Start-up by image").
 */
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define COPY_MAX (128 * 1024)

static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom"};

/* new_tmpfs(size, inodes, mode, attrs) — a detached tmpfs mount fd, or -errno. */
static int new_tmpfs(const char *size, const char *inodes, const char *mode, unsigned attrs)
{
    int fs, mnt;

    fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
    if (fs < 0)
        return -errno;
    if (fsconfig(fs, FSCONFIG_SET_STRING, "size", size, 0) < 0 ||
        (inodes && fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", inodes, 0) < 0) ||
        fsconfig(fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0 ||
        fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
        int e = errno;
        close(fs);
        return -e;
    }
    mnt = fsmount(fs, FSMOUNT_CLOEXEC, attrs);
    close(fs);
    return mnt < 0 ? -errno : mnt;
}

int rootfs__bind_at(int src_dirfd, const char *src, int root, const char *dest, bool recursive,
                    unsigned attrs)
{
    struct mount_attr attr = {.attr_set = attrs};
    int t, r = 0;

    t = open_tree(src_dirfd, src,
                  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0));
    if (t < 0)
        return -errno;
    if (attrs && mount_setattr(t, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr,
                               sizeof(attr)) < 0)
        r = -errno;
    if (r == 0 && move_mount(t, "", root, dest, MOVE_MOUNT_F_EMPTY_PATH) < 0)
        r = -errno;
    close(t);
    return r;
}

static int make_file(int dirfd, const char *path, mode_t mode, const char *content)
{
    int fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
    int r = 0;

    if (fd < 0)
        return -errno;
    if (content)
        r = util_write_all(fd, content, strlen(content));
    close(fd);
    return r;
}

/* copy_small(srcdir, root, rel) — copies a small regular file of the image into the root
 * tmpfs (cheaper than a bind mount; the root becomes read-only all the same), inside the
 * kernel (sendfile): no buffer in init, whose fresh stack would fault in a page for each
 * 4 KiB of one (a 128 KiB array on the stack cost ~0.4 ms a sandbox in page faults alone).
 * -EFBIG when the file is too large to copy or changed size while copied, so the caller
 * binds it instead (nothing is left at rel then). */
static int copy_small(int srcdir, int root, const char *rel)
{
    struct stat st;
    off_t total = 0;
    ssize_t n = 0;
    int in, out, r = 0;

    in = openat(srcdir, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0)
        return -errno;
    if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size >= COPY_MAX) {
        close(in);
        return -EFBIG;
    }
    out =
        openat(root, rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, st.st_mode & 0755);
    if (out < 0) {
        r = -errno;
        close(in);
        return r;
    }
    while (total < st.st_size && (n = sendfile(out, in, NULL, (size_t)(st.st_size - total))) > 0)
        total += n;
    /* one byte more is a file that grew since fstat */
    if (n >= 0 && total == st.st_size && (n = sendfile(out, in, NULL, 1)) == 0)
        r = 0;
    else
        r = n < 0 ? -errno : -EFBIG;
    close(out);
    close(in);
    if (r < 0)
        unlinkat(root, rel, 0);
    return r;
}

/* mkdir_p(root, rel) — creates the parent directories of an image entry path. */
static int mkdir_parents(int root, const char *rel)
{
    char buf[128];
    char *slash;

    snprintf(buf, sizeof(buf), "%s", rel);
    for (slash = strchr(buf, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (mkdirat(root, buf, 0755) < 0 && errno != EEXIST)
            return -errno;
        *slash = '/';
    }
    return 0;
}

/* Where a writable root's pieces hang in init's mount namespace while it is built: the
 * holder tmpfs over /tmp, lower layers at HOLDER/l/N, the scratch tmpfs at HOLDER/s. */
#define HOLDER "/tmp"

/* overlay_new(holder, i, lower) — a detached overlay mount of layer i: lower the mount fd
 * (attached at HOLDER/l/i now), upper and work directories HOLDER/s/.overlay/{u,w}/i on the
 * scratch tmpfs. Its fd or -errno. Consumes lower. */
static int overlay_new(int holder, int i, int lower)
{
    char name[32], lpath[64], upath[64], wpath[64];
    int fs = -1, mnt = -1;
    struct stat st;

    snprintf(name, sizeof(name), "l/%d", i);
    snprintf(lpath, sizeof(lpath), HOLDER "/l/%d", i);
    snprintf(upath, sizeof(upath), HOLDER "/s/.overlay/u/%d", i);
    snprintf(wpath, sizeof(wpath), HOLDER "/s/.overlay/w/%d", i);
    /* The overlay's root shows its upper directory's mode: the image directory's own (a
     * /root of 0700 stays 0700, a sticky /tmp stays sticky), without set-id bits. */
    if (fstat(lower, &st) < 0 || mkdirat(holder, name, 0700) < 0 || mkdir(upath, 0700) < 0 ||
        chmod(upath, st.st_mode & 01777) < 0 || mkdir(wpath, 0700) < 0 ||
        move_mount(lower, "", holder, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
        goto out;
    fs = fsopen("overlay", FSOPEN_CLOEXEC);
    if (fs < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", lpath, 0) < 0 ||
        fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", upath, 0) < 0 ||
        fsconfig(fs, FSCONFIG_SET_STRING, "workdir", wpath, 0) < 0)
        goto out;
    /* Overlay's own xattrs in the user.* namespace (a user namespace cannot set trusted.*):
     * without them a directory removed and made again could not hide the image's one. */
    (void)fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0);
    if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        goto out;
    mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
out:
    if (mnt < 0)
        mnt = -errno;
    if (fs >= 0)
        close(fs);
    close(lower);
    return mnt;
}

/* overlay_at(holder, root, rel, i, lower) — overlay_new attached at REL below root. */
static int overlay_at(int holder, int root, const char *rel, int i, int lower)
{
    int mnt = overlay_new(holder, i, lower), r = 0;

    if (mnt < 0)
        return mnt;
    if (move_mount(mnt, "", root, rel, MOVE_MOUNT_F_EMPTY_PATH) < 0)
        r = -errno;
    close(mnt);
    return r;
}

/* expose_image(root, img, imgfd, holder, lower, err) — the image's entries below root
 * (imgfd: its root directory, opened before the holder could hide it); with a holder
 * (a writable root) each directory is an overlay. */
static int expose_image(int root, const struct image *img, int imgfd, int holder, int *lower,
                        struct errbuf *err)
{
    int r = 0;
    for (int i = 0; i < img->nentries && r == 0; i++) {
        const struct image_entry *e = &img->entries[i];
        r = mkdir_parents(root, e->path);
        if (r < 0)
            break;
        switch (e->kind) {
        case IMAGE_ENTRY_SYMLINK:
            r = symlinkat(e->target, root, e->path) < 0 ? -errno : 0;
            break;
        case IMAGE_ENTRY_DIR:
            r = mkdirat(root, e->path, 0755) < 0 ? -errno : 0;
            if (r == 0 && holder >= 0) {
                int l = lower[i];
                lower[i] = -1;
                if (l < 0) /* not idmapped: the image's directory as it is */
                    l = open_tree(imgfd, e->path,
                                  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
                r = l < 0 ? -errno : overlay_at(holder, root, e->path, i, l);
            } else if (r == 0) {
                r = rootfs__bind_at(imgfd, e->path, root, e->path, true, 0);
            }
            break;
        case IMAGE_ENTRY_FILE:
        default:
            r = copy_small(imgfd, root, e->path);
            if (r == -EFBIG) {
                r = make_file(root, e->path, 0644, NULL);
                if (r == 0)
                    r = rootfs__bind_at(imgfd, e->path, root, e->path, false, 0);
            }
            break;
        }
        if (r < 0)
            errbuf_set(err, "cannot expose '%s' of image '%s': %s", e->path, img->name,
                       strerror(-r));
    }
    return r;
}

static int write_etc(int root, struct errbuf *err)
{
    static const char passwd[] = "root:x:0:0:root:/root:/bin/sh\n"
                                 "sandbox:x:1000:1000:sandbox:/tmp:/bin/sh\n"
                                 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
    static const char group[] = "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n";
    static const char hosts[] = "127.0.0.1\tlocalhost " SANDBOX_HOSTNAME "\n::1\tlocalhost\n";
    int r;

    if (mkdirat(root, "etc", 0755) < 0 && errno != EEXIST)
        return errbuf_set(err, "cannot create /etc: %s", strerror(errno)), -errno;
    r = make_file(root, "etc/passwd", 0644, passwd);
    if (r == 0)
        r = make_file(root, "etc/group", 0644, group);
    if (r == 0)
        r = make_file(root, "etc/hosts", 0644, hosts);
    if (r == 0)
        r = make_file(root, "etc/hostname", 0644, SANDBOX_HOSTNAME "\n");
    if (r < 0)
        errbuf_set(err, "cannot write generated /etc files: %s", strerror(-r));
    return r;
}

static int make_dev(int root, struct errbuf *err)
{
    static const char *const links[][2] = {
        {"fd", "/proc/self/fd"},
        {"stdin", "/proc/self/fd/0"},
        {"stdout", "/proc/self/fd/1"},
        {"stderr", "/proc/self/fd/2"},
        {"shm", "/tmp"},
    };
    char path[64];
    int r = 0;

    if (mkdirat(root, "dev", 0755) < 0 && errno != EEXIST)
        return errbuf_set(err, "cannot create /dev: %s", strerror(errno)), -errno;
    for (size_t i = 0; i < sizeof(dev_nodes) / sizeof(dev_nodes[0]) && r == 0; i++) {
        snprintf(path, sizeof(path), "dev/%s", dev_nodes[i]);
        r = make_file(root, path, 0666, NULL);
    }
    for (size_t i = 0; i < sizeof(links) / sizeof(links[0]) && r == 0; i++) {
        snprintf(path, sizeof(path), "dev/%s", links[i][0]);
        r = symlinkat(links[i][1], root, path) < 0 ? -errno : 0;
    }
    if (r < 0)
        errbuf_set(err, "cannot populate /dev: %s", strerror(-r));
    return r;
}

static int bind_devices(int root, struct errbuf *err)
{
    char src[64], dest[64];
    int r = 0;

    for (size_t i = 0; i < sizeof(dev_nodes) / sizeof(dev_nodes[0]) && r == 0; i++) {
        snprintf(src, sizeof(src), "/dev/%s", dev_nodes[i]);
        snprintf(dest, sizeof(dest), "dev/%s", dev_nodes[i]);
        r = rootfs__bind_at(AT_FDCWD, src, root, dest, false,
                            MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
        if (r < 0)
            errbuf_set(err, "cannot bind '%s': %s", src, strerror(-r));
    }
    return r;
}

static int mount_proc(int root, struct errbuf *err)
{
    int fs, mnt, r = 0;

    fs = fsopen("proc", FSOPEN_CLOEXEC);
    if (fs < 0 || fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
        r = -errno;
        goto out;
    }
    mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
    if (mnt < 0) {
        r = -errno;
        goto out;
    }
    if (move_mount(mnt, "", root, "proc", MOVE_MOUNT_F_EMPTY_PATH) < 0)
        r = -errno;
    close(mnt);
out:
    if (fs >= 0)
        close(fs);
    if (r < 0)
        errbuf_set(err, "cannot mount /proc: %s", strerror(-r));
    return r;
}

/* new_scratch(lim, err) — the size-limited scratch tmpfs, detached; its fd or -errno. */
static int new_scratch(const struct sandbox_limits *lim, struct errbuf *err)
{
    char size[32], inodes[32];
    int s;

    snprintf(size, sizeof(size), "%llum", (unsigned long long)lim->disk_mb);
    /* One inode per 4 KiB of scratch bounds inode exhaustion with the size. */
    snprintf(inodes, sizeof(inodes), "%llu", (unsigned long long)(lim->disk_mb * 256 + 64));
    s = new_tmpfs(size, inodes, "0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    if (s < 0)
        errbuf_set(err, "cannot mount scratch tmpfs: %s", strerror(-s));
    return s;
}

/* mount_scratch(root, s, err) — /work and /tmp: two directories of the scratch tmpfs s. */
static int mount_scratch(int root, int s, struct errbuf *err)
{
    int r;

    r = mkdirat(s, "work", 0755) < 0 ? -errno : 0;
    if (r == 0)
        r = mkdirat(s, "tmp", 01777) < 0 ? -errno : 0;
    if (r == 0)
        r = fchmodat(s, "tmp", 01777, 0) < 0 ? -errno : 0;
    if (r == 0)
        r = rootfs__bind_at(s, "work", root, "work", false, 0);
    if (r == 0)
        r = rootfs__bind_at(s, "tmp", root, "tmp", false, 0);
    if (r < 0)
        errbuf_set(err, "cannot set up /work and /tmp: %s", strerror(-r));
    return r;
}

/* fresh_dir(root, name) — an empty directory NAME at the top of root whatever the image has
 * there: a small tmpfs of its own over it (made when missing). 0 or -errno. */
static int fresh_dir(int root, const char *name)
{
    int t, r = 0;

    if (mkdirat(root, name, 0755) < 0 && errno != EEXIST)
        return -errno;
    t = new_tmpfs("64k", "64", "0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
    if (t < 0)
        return t;
    if (move_mount(t, "", root, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
        r = -errno;
    close(t);
    return r;
}

/* writable_base(s, img, imgfd, lower, holder, err) — a writable root's base: the holder
 * tmpfs attached over HOLDER (its fd in *holder), the scratch tmpfs s attached in it, and the
 * root. For an image that is a whole root filesystem (img->whole_root) the root is one
 * overlay of it (lower[0], or a clone of imgfd made here), with a fresh /dev of its own;
 * otherwise a detached clone of the scratch directory "root", the image's directories to be
 * overlaid one by one. The root's fd or -errno. */
static int writable_base(int s, const struct image *img, int imgfd, int *lower, int *holder,
                         struct errbuf *err)
{
    int h, root = -1, r;

    h = new_tmpfs("1m", "256", "0700", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
    if (h < 0)
        return errbuf_set(err, "cannot create the overlay holder: %s", strerror(-h)), h;
    r = mkdirat(h, "l", 0700) < 0 || mkdirat(h, "s", 0700) < 0 ? -errno : 0;
    if (r == 0)
        r = move_mount(h, "", AT_FDCWD, HOLDER, MOVE_MOUNT_F_EMPTY_PATH) < 0 ? -errno : 0;
    if (r == 0)
        r = move_mount(s, "", h, "s", MOVE_MOUNT_F_EMPTY_PATH) < 0 ? -errno : 0;
    if (r == 0 &&
        (mkdir(HOLDER "/s/.overlay", 0700) < 0 || mkdir(HOLDER "/s/.overlay/u", 0700) < 0 ||
         mkdir(HOLDER "/s/.overlay/w", 0700) < 0 || mkdirat(s, "root", 0755) < 0))
        r = -errno;
    if (r == 0 && img->whole_root) {
        int l = lower[0];
        lower[0] = -1;
        if (l < 0) /* not idmapped: the image's root as it is */
            l = open_tree(imgfd, "",
                          OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
        root = r = l < 0 ? -errno : overlay_new(h, 0, l);
        if (r >= 0)
            r = fresh_dir(root, "dev");
    } else if (r == 0) {
        root = open_tree(s, "root", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (root < 0)
            r = -errno;
    }
    if (r < 0) {
        if (root >= 0)
            close(root);
        close(h);
        return errbuf_set(err, "cannot prepare the writable root: %s", strerror(-r)), r;
    }
    *holder = h;
    return root;
}

int rootfs__build(const struct image *img, const struct sandbox_limits *lim, int *lower,
                  int *scratch, struct errbuf *err)
{
    struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
    int root, s = -1, holder = -1, imgfd, r;

    *scratch = -1;
    imgfd = open(img->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (imgfd < 0) {
        r = -errno;
        errbuf_set(err, "cannot open image root '%s': %s", img->root, strerror(errno));
        goto out_lower;
    }
    s = r = new_scratch(lim, err);
    if (s < 0)
        goto out_img;
    if (lim->writable_root) {
        ro.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
        root = writable_base(s, img, imgfd, lower, &holder, err);
    } else {
        root = new_tmpfs("4m", "1024", "0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        if (root < 0)
            errbuf_set(err, "cannot create root tmpfs: %s", strerror(-root));
    }
    if (root < 0) {
        r = root;
        goto out_scratch;
    }
    r = img->whole_root && holder >= 0 ? 0 : expose_image(root, img, imgfd, holder, lower, err);
    if (r == 0 && img->synth_etc)
        r = write_etc(root, err);
    if (r == 0)
        r = make_dev(root, err);
    if (r == 0) {
        static const char *const dirs[] = {"proc", "tmp", "work"};
        for (size_t i = 0; i < 3 && r == 0; i++)
            if (mkdirat(root, dirs[i], 0755) < 0 && errno != EEXIST)
                r = errbuf_set(err, "cannot create /%s: %s", dirs[i], strerror(errno));
    }
    if (r < 0)
        goto out_close;
    /* Everything so far is the image: read-only, recursively, before the writable parts
     * (a writable root: nosuid and nodev only). */
    if (mount_setattr(root, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro, sizeof(ro)) < 0) {
        r = errbuf_set(err, "cannot make the image read-only: %s", strerror(errno));
        goto out_close;
    }
    r = mount_proc(root, err);
    if (r == 0)
        r = bind_devices(root, err);
    if (r == 0)
        r = mount_scratch(root, s, err);
    if (r < 0)
        goto out_close;
    /* Attach the finished tree over /tmp (only in this mount namespace, over the holder
     * when there is one) and pivot; the old root goes, with the holder and its layers. */
    if (move_mount(root, "", AT_FDCWD, "/tmp", MOVE_MOUNT_F_EMPTY_PATH) < 0 || chdir("/tmp") < 0 ||
        syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 || chdir("/") < 0) {
        r = errbuf_set(err, "cannot switch to the sandbox root: %s", strerror(errno));
        goto out_close;
    }
    /* The scratch's root, for the supervisor: a plain O_PATH descriptor (not the mount's own
     * fd, whose close would dissolve it) that keeps working once the tree holding it is gone
     * from every namespace, as an open file of a lazily unmounted filesystem does. */
    *scratch = openat(s, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (*scratch < 0) {
        r = errbuf_set(err, "cannot open the scratch tmpfs: %s", strerror(errno));
        goto out_close;
    }
    r = 0;
out_close:
    close(root);
out_scratch:
    if (holder >= 0)
        close(holder);
    close(s);
out_img:
    close(imgfd);
out_lower:
    for (int i = 0; lim->writable_root && i < IMAGE_MAX_ENTRIES; i++)
        if (lower[i] >= 0)
            close(lower[i]);
    return r;
}
