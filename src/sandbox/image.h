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
#include <stddef.h>

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

#define IMAGE_ENV_MAX 8192 /* bytes of an image's configured environment */

struct image {
    char name[256];            /* as the user named it: "host", a directory, "NAME:TAG" */
    char root[PATH_MAX];       /* host path of the image root */
    char digest[PATH_MAX + 8]; /* identity reported in result records: "sha256:<hex>" for a
                                  stored image, "host", "dir:<path>" */
    char os_release[128];      /* for "host": the host's os-release ("debian 12"); else "" */
    /* From a stored image's config: "K=V\0K=V\0\0" (env_len bytes used, 0 none) applied
     * over the fixed environment unless a request sets the same name; WorkingDir the
     * initial directory when a request names none ("" = the default). */
    char env[IMAGE_ENV_MAX];
    size_t env_len;
    char workdir[256];
    bool synth_etc;  /* write passwd, group, hosts, hostname into /etc */
    bool whole_root; /* the root directory is all of the image (a directory or stored image,
                      * not "host"): a writable root is one overlay of it, not one per entry */
    int nentries;
    struct image_entry entries[IMAGE_MAX_ENTRIES];
};

/* image_resolve(name, img, err) — "host", an absolute path to a root filesystem directory,
 * or an image of the store (image/store.h: NAME[:TAG] or sha256:<hex>, in the store of
 * $CRUCIBLE_STATE_DIR or the default state directory), whose name is then `name`, digest its
 * manifest digest and env/workdir its config's. Reads the entries now, so a sandbox start
 * does no directory scans. 0 or -errno with err naming the problem. For the local user (the
 * CLI): a name that comes over the network goes through an image_registry instead. */
int image_resolve(const char *name, struct image *img, struct errbuf *err);

/* image_identify(name, img, err) — image_resolve without the entries (nentries 0): the name,
 * root, digest, os-release, Env and WorkingDir, and the same errors for a name that names
 * nothing (but not for an empty directory). Enough to name the image to a keeper (keep.h),
 * which compares digests; not enough to start a sandbox. Reads no directory.
 * image_read_entries(img, err) — then its entries, as image_resolve reads them (an empty
 * directory image is refused here). 0 or -errno with err naming the problem. */
int image_identify(const char *name, struct image *img, struct errbuf *err);
int image_read_entries(struct image *img, struct errbuf *err);

/*
 * The images a server may run: "host" and the ones its operator registered by name
 * (`crucible serve --image NAME=DIR`). A client names an image; it never gives a host path,
 * which would let it mount any directory of the server (its token file, say) as a sandbox's
 * root. Every registered image is resolved when it is registered. image_registry_find is the
 * one lookup: a name the registry does not hold is looked up in the image store (NAME[:TAG]
 * or sha256:<hex>; the state directory is fixed when the registry is made), reading the refs
 * on each lookup (a tag may move) and resolving each (name, digest) once.
 */
struct image_registry;

#define IMAGE_NAME_MAX 64 /* a registered name: [A-Za-z0-9][A-Za-z0-9._-]*, at most this long */

/* image_registry_new(host) — a registry that knows only "host" (host: the resolved host
 * image, borrowed: it must outlive the registry). NULL with errno set. */
struct image_registry *image_registry_new(const struct image *host);

/* image_registry_free(reg) — the registry and the images it resolved. */
void image_registry_free(struct image_registry *reg);

/* image_registry_add(reg, spec, err) — registers "NAME=DIR": DIR an absolute path to a root
 * filesystem directory, resolved now; NAME not "host" and not registered already.
 * 0 or -errno with err naming the problem. */
int image_registry_add(struct image_registry *reg, const char *spec, struct errbuf *err);

/* image_registry_add_file(reg, path, err) — image_registry_add for every line "NAME=DIR" of
 * the file (blank lines and lines starting with '#' skipped). 0 or -errno, err naming the
 * file and line. */
int image_registry_add_file(struct image_registry *reg, const char *path, struct errbuf *err);

/* image_registry_find_registered(reg, name) — the image registered as name ("host"
 * included), without looking in the image store: no I/O, for the service's loop thread. NULL
 * when name is not one of them (image_registry_find may still find it in the store). */
const struct image *image_registry_find_registered(const struct image_registry *reg,
                                                   const char *name);

/* image_registry_find(reg, name, err) — the image registered as name ("host" included) or
 * stored under it, or NULL with err saying why (a host path, an unknown name) and how an
 * operator registers or imports one. The image lives as long as the registry. Thread-safe
 * once the registry is built. */
const struct image *image_registry_find(const struct image_registry *reg, const char *name,
                                        struct errbuf *err);

/* image_registry_list(reg, each, arg) — each(arg, name) for every name a request may give:
 * "host", each registered NAME, each NAME:TAG of the image store (when there is one). For a
 * cluster worker's heartbeat: the images its jobs may name. Thread-safe. */
void image_registry_list(const struct image_registry *reg,
                         void (*each)(void *arg, const char *name), void *arg);

/* image_registry_names(reg, buf, size) — "host, NAME, ..." for messages. */
void image_registry_names(const struct image_registry *reg, char *buf, size_t size);

#endif
