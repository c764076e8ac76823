/*
 * 58-writable-root — a writable root filesystem (an overlay per image directory, its upper
 * layer in the sandbox's scratch tmpfs) used to reach the image or the host.
 *
 * expect: ok
 * run: --writable-root
 *
 * The payload may write anywhere in its root; what it must not do is reach the layers under
 * it. It reads the overlay's layer paths from /proc/self/mountinfo and tries them (they name
 * places of init's mount namespace before the pivot, gone since), tries to set overlayfs's own
 * extended attributes through the overlay (a redirect or an opaque flag the kernel would follow
 * into another lower directory), to make whiteouts and other device nodes (mknod 0:0), to
 * rename or remove the mount points, and checks that setuid bits and device nodes stay
 * powerless there (nosuid, nodev). The host side (the image unchanged byte for byte) is
 * checked by tests/e2e/41-writable-root.t.
 */
#include "../hostile.h"
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

/* layer_paths(key, out, n) — the values of "key=" in the overlay lines of mountinfo. */
static int layer_paths(const char *key, char out[][256], int n)
{
    char line[4096];
    int got = 0;
    FILE *f = fopen("/proc/self/mountinfo", "r");

    if (!f)
        return 0;
    while (got < n && fgets(line, sizeof line, f)) {
        char *p = strstr(line, " - overlay ");
        if (!p || !(p = strstr(p, key)))
            continue;
        p += strlen(key);
        size_t len = strcspn(p, ",\n ");
        if (len >= 256)
            len = 255;
        memcpy(out[got], p, len);
        out[got++][len] = '\0';
    }
    fclose(f);
    return got;
}

int main(void)
{
    char paths[16][256];
    struct statvfs sv;
    int n;

    hostile_init(20);
    if (access("/usr", W_OK) != 0)
        note("/usr is not writable (%s): crucible runs unprivileged, and the image's root-owned "
             "files are not the sandbox user's there",
             strerror(errno));
    else
        note("/usr is writable, as a writable root should be");
    static const char *const keys[] = {"lowerdir=", "upperdir=", "workdir="};
    for (size_t k = 0; k < 3; k++) {
        n = layer_paths(keys[k], paths, 16);
        if (n == 0)
            note("no %s in mountinfo", keys[k]);
        for (int i = 0; i < n; i++) {
            struct stat st;
            if (stat(paths[i], &st) == 0 && paths[i][0] && strcmp(paths[i], "/") != 0) {
                /* /tmp is the payload's own scratch: a path under it that exists is one the
                 * payload made, never a layer */
                escaped("layer path %s%s exists inside the sandbox", keys[k], paths[i]);
            } else {
                contained("layer path %s%s is not reachable (%s)", keys[k], paths[i],
                          strerror(errno));
            }
        }
    }
    /* overlayfs's private attributes, through the overlay: trusted.* needs a capability the
     * payload lacks; user.overlay.* (the names a user-namespace overlay uses, "userxattr") is
     * refused by kernels before 6.7 and stored escaped by later ones (as
     * user.overlay.overlay.*, which overlayfs does not interpret: checked on the upper layer
     * itself while this case was written), so either way no redirect or opaque flag of the
     * payload's takes effect. */
    static const char *const trusted[] = {"trusted.overlay.redirect", "trusted.overlay.opaque",
                                          "trusted.overlay.origin", "trusted.overlay.metacopy"};
    static const char *const user[] = {"user.overlay.redirect", "user.overlay.opaque",
                                       "user.overlay.origin", "user.overlay.metacopy"};
    (void)mkdir("/usr/crucible-sec-58", 0755);
    for (size_t i = 0; i < sizeof trusted / sizeof trusted[0]; i++) {
        char what[128];
        snprintf(what, sizeof what, "setxattr %s on a directory of the overlay", trusted[i]);
        PROBE(what, setxattr("/usr/crucible-sec-58", trusted[i], "/etc", 4, 0));
        snprintf(what, sizeof what, "setxattr %s on an image directory", trusted[i]);
        PROBE(what, setxattr("/usr/share", trusted[i], "y", 1, 0));
    }
    for (size_t i = 0; i < sizeof user / sizeof user[0]; i++) {
        if (setxattr("/usr/share", user[i], "/etc", 4, 0) == 0)
            contained("%s set through the overlay: stored escaped, not interpreted", user[i]);
        else
            contained("%s through the overlay: %s", user[i], strerror(errno));
    }
    struct stat before, after;
    if (stat("/usr/share/doc", &before) == 0 && stat("/usr/share/doc", &after) == 0 &&
        before.st_ino == after.st_ino && access("/usr/share/doc", R_OK) == 0)
        contained("/usr/share still shows the image's entries after the attempts");
    /* whiteouts and other devices */
    PROBE("mknod whiteout /usr/bin/crucible-sec-wh c 0 0",
          mknod("/usr/bin/crucible-sec-wh", S_IFCHR | 0600, makedev(0, 0)));
    PROBE("mknod /usr/crucible-sec-null c 1 3",
          mknod("/usr/crucible-sec-null", S_IFCHR | 0666, makedev(1, 3)));
    PROBE("mknod /usr/crucible-sec-sda b 8 0",
          mknod("/usr/crucible-sec-sda", S_IFBLK | 0600, makedev(8, 0)));
    PROBE("rename with RENAME_WHITEOUT in the overlay",
          syscall(SYS_renameat2, AT_FDCWD, "/usr/crucible-sec-58", AT_FDCWD,
                  "/usr/crucible-sec-58b", 4 /* RENAME_WHITEOUT */));
    /* the mount points themselves */
    PROBE("rename /usr", rename("/usr", "/usr2"));
    PROBE("rmdir /usr", rmdir("/usr"));
    PROBE("mount over /usr", mount("none", "/usr", "tmpfs", 0, NULL));
    PROBE("umount /usr", umount2("/usr", MNT_DETACH));
    /* setuid bits and device nodes are powerless in the writable image */
    if (statvfs("/usr", &sv) == 0 && (sv.f_flag & ST_NOSUID) && (sv.f_flag & ST_NODEV))
        contained("/usr is nosuid and nodev");
    else
        escaped("/usr is not nosuid,nodev");
    if (statvfs("/", &sv) == 0 && (sv.f_flag & ST_NOSUID) && (sv.f_flag & ST_NODEV))
        contained("/ is nosuid and nodev");
    else
        escaped("/ is not nosuid,nodev");
    /* the lower layer is read-only even where the payload owns the files */
    int fd = open("/usr/bin/env", O_WRONLY | O_APPEND);
    if (fd >= 0) {
        struct stat a, b;
        (void)!write(fd, "", 0);
        if (fstat(fd, &a) == 0 && stat("/usr/bin/env", &b) == 0 && a.st_ino == b.st_ino)
            note("/usr/bin/env opened for writing: copied up into the sandbox's own layer");
        close(fd);
    }
    return hostile_finish();
}
