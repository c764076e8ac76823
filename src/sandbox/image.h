/*
 * image.h — environment images: what a sandbox sees as its read-only root filesystem.
 *
 * An image is a host directory (its root) and the top-level entries of it that are
 * exposed: "host" is the host itself with /usr, the /bin /lib* /sbin links or directories,
 * and an allow-list of /etc entries (never shadow files, keys or credentials); a root
 * filesystem directory given by absolute path exposes every top-level entry it has.
 * rootfs.c turns an image into mounts; this module only decides what is exposed.
 */
#ifndef CRUCIBLE_IMAGE_H
#define CRUCIBLE_IMAGE_H

#include <limits.h>
#include <stdbool.h>

#include "util.h"

#define IMAGE_MAX_ENTRIES 64

enum image_entry_kind {
    IMAGE_ENTRY_DIR,     /* bind the directory (recursively), read-only */
    IMAGE_ENTRY_FILE,    /* bind the file, read-only */
    IMAGE_ENTRY_SYMLINK, /* recreate the symlink with the same target */
};

struct image_entry {
    char path[128]; /* relative to the image root, e.g. "usr", "etc/ld.so.cache" */
    enum image_entry_kind kind;
    char target[256]; /* for symlinks */
};

struct image {
    char name[256];            /* as the user named it: "host" or the directory */
    char root[PATH_MAX];       /* host path of the image root */
    char digest[PATH_MAX + 8]; /* identity reported in result records */
    bool synth_etc;            /* write passwd, group, hosts, hostname into /etc */
    int nentries;
    struct image_entry entries[IMAGE_MAX_ENTRIES];
};

/* image_resolve(name, img, err) — "host" or an absolute path to a root filesystem
 * directory. Reads the entries now, so a sandbox start does no directory scans.
 * 0 or -errno with err naming the problem. */
int image_resolve(const char *name, struct image *img, struct errbuf *err);

#endif
