/*
 * store.h — the content-addressed image store under crucible's state directory.
 *
 * Layout (docs/IMAGES.md), below STATE/images/:
 *   blobs/sha256/<hex>   verified blobs, each stored once: manifests, configs, layers as shipped
 *   rootfs/<hex>/        the unpacked root filesystem of the image whose manifest is <hex>
 *   meta/<hex>.json      what `image inspect` and a sandbox need of it (config Env, WorkingDir,
 *                        Cmd, layers, sizes); written last, so its presence means "imported"
 *   refs                 "NAME:TAG sha256:<hex>" lines, replaced whole (write, rename)
 *   lock, refs.lock      flock(2) files: imports hold lock shared, rm and gc exclusive;
 *                        a ref update holds refs.lock
 *   tmp/                 imports in progress (a failed one is removed; gc removes leftovers)
 * An image is named by its manifest digest; refs move freely and an image stays runnable by
 * digest until `image rm` removes it. STATE is --state-dir, else $CRUCIBLE_STATE_DIR, else
 * /var/lib/crucible for root and $XDG_STATE_HOME/crucible (~/.local/state/crucible) for others.
 */
#ifndef CRUCIBLE_IMAGE_STORE_H
#define CRUCIBLE_IMAGE_STORE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "image/digest.h"
#include "util.h"

#define IMAGE_REF_MAX 256 /* bytes of "NAME:TAG" */

struct image_store {
    char dir[PATH_MAX]; /* STATE/images */
    int fd;             /* that directory */
    int lockfd;         /* "lock" while held, else -1 */
};

struct image_ref {
    char name[IMAGE_REF_MAX]; /* "NAME:TAG" */
    char digest[DIGEST_LEN + 1];
};

/* image_store_state_dir(buf, size) — STATE: $CRUCIBLE_STATE_DIR, else the default for this
 * user. 0 or -ENAMETOOLONG / -ENOENT (no HOME for an ordinary user). */
int image_store_state_dir(char *buf, size_t size);

/* image_store_open(st, state, create, err) — the store of state directory `state` (NULL: the
 * default); with create its directories are made (0755), else a missing store is -ENOENT
 * with err saying so. 0 or -errno. */
int image_store_open(struct image_store *st, const char *state, bool create, struct errbuf *err);

/* image_store_close(st) — closes its fds (and drops the lock). */
void image_store_close(struct image_store *st);

/* image_store_lock(st, exclusive, err) — takes "lock" (waits). 0 or -errno. */
int image_store_lock(struct image_store *st, bool exclusive, struct errbuf *err);

/* image_ref_normalize(ref, out, size, err) — "NAME" or "NAME:TAG" checked and written as
 * "NAME:TAG" (tag "latest" when none). NAME: letters, digits, '.', '_', '-' in components
 * separated by '/', starting with a letter or digit; "host" is reserved. 0 or -EINVAL. */
int image_ref_normalize(const char *ref, char *out, size_t size, struct errbuf *err);

/* image_store_refs(st, &refs, &n, err) — every ref (a new array, caller frees). 0 or -errno. */
int image_store_refs(struct image_store *st, struct image_ref **refs, size_t *n,
                     struct errbuf *err);

/* image_store_set_ref(st, name, digest, err) — points normalized `name` at digest (NULL:
 * removes it), atomically under refs.lock. 0 or -errno. */
int image_store_set_ref(struct image_store *st, const char *name, const char *digest,
                        struct errbuf *err);

/* image_store_has(st, digest) — the image is fully imported (its meta file exists). */
bool image_store_has(struct image_store *st, const char *digest);

/* image_store_lookup(st, ref, digest, err) — "sha256:<hex>" of an imported image, or
 * NAME[:TAG] through the refs, into digest (DIGEST_LEN + 1). 0 or -ENOENT / -EINVAL with err
 * naming the reference. */
int image_store_lookup(struct image_store *st, const char *ref, char *digest, struct errbuf *err);

/* image_store_meta(st, digest, &text, err) — the meta JSON text of an imported image
 * (malloc'd, caller frees). 0 or -errno. */
int image_store_meta(struct image_store *st, const char *digest, char **text, struct errbuf *err);

/* image_store_rootfs(st, digest, buf, size) — the host path of its root filesystem. */
void image_store_rootfs(const struct image_store *st, const char *digest, char *buf, size_t size);

/* image_store_remove(st, ref, err) — `image rm`: NAME[:TAG] drops the ref, and the image when
 * no other ref names it; "sha256:<hex>" removes the image and every ref to it. Blobs stay
 * for gc. Takes the exclusive lock. 0 or -errno. */
int image_store_remove(struct image_store *st, const char *ref, struct errbuf *err);

struct image_gc_stats {
    unsigned blobs, rootfs, tmp; /* removed */
    uint64_t bytes;              /* of removed blobs */
};

/* image_store_gc(st, stats, err) — removes blobs no imported image uses, root filesystems
 * without a meta file (a removal or import cut short) and leftovers of imports in tmp/.
 * Takes the exclusive lock. 0 or -errno. */
int image_store_gc(struct image_store *st, struct image_gc_stats *stats, struct errbuf *err);

/* image_store__path(digest, kind, buf, size) — "blobs/sha256/<hex>", "rootfs/<hex>" or
 * "meta/<hex>.json" (kind 'b', 'r', 'm') relative to st->fd. */
void image_store__path(const char *digest, char kind, char *buf, size_t size);

#endif
