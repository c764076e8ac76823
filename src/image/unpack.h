/*
 * unpack.h — applying image layers (tar streams) to a root filesystem being built, safely.
 *
 * Every path is resolved component by component from the root's directory fd with
 * O_NOFOLLOW: nothing an archive made (a symlink, a hard link) is ever followed, and no entry
 * can name a place outside the root. Layers apply in order with the OCI rules: a file
 * ".wh.NAME" deletes NAME of the lower layers, ".wh..wh..opq" empties its directory of them.
 * Neutralised: setuid and setgid bits (stripped), device nodes, fifos and sockets (skipped,
 * counted). Refused (the whole import fails): absolute paths, "..", a path through a symlink
 * or a non-directory, a relative symlink climbing out of the root, a hard link to anything
 * its own layer did not create, more entries or bytes than the limits allow.
 */
#ifndef CRUCIBLE_IMAGE_UNPACK_H
#define CRUCIBLE_IMAGE_UNPACK_H

#include <stdbool.h>
#include <stdint.h>

#include "strset.h"
#include "util.h"

struct archive;

struct unpack_limits {
    uint64_t max_bytes;   /* bytes written into the root filesystem, all layers together */
    uint64_t max_entries; /* archive entries, all layers together */
};

#define UNPACK_MAX_BYTES   (64ULL << 30) /* default: 64 GiB */
#define UNPACK_MAX_ENTRIES 2000000ULL    /* default */

struct unpack_dirmode; /* a directory's final mode, applied by unpack_finish */

/* One root filesystem being built. Zero-initialise, then set rootfd and lim. */
struct unpack {
    int rootfd; /* borrowed: the root directory, opened O_DIRECTORY */
    struct unpack_limits lim;
    uint64_t bytes, entries; /* used so far */
    unsigned skipped;        /* device nodes, fifos and sockets left out */
    unsigned stripped;       /* entries that lost a setuid or setgid bit */
    bool chown;              /* keep the archive's owners (only root can) */
    struct strset layer;     /* paths the current layer created */
    struct unpack_dirmode *dirs;
    size_t ndirs, capdirs;
};

/* unpack_layer(u, a, err) — extracts every entry of the open tar reader a (positioned at its
 * first header) into u->rootfd. 0 or -errno with err naming the entry and the rule it broke;
 * the root is then half-built and the caller discards it. */
int unpack_layer(struct unpack *u, struct archive *a, struct errbuf *err);

/* unpack_finish(u, err) — gives directories their final modes and owners (they stay
 * writable to the builder until then). 0 or -errno. */
int unpack_finish(struct unpack *u, struct errbuf *err);

/* unpack_release(u) — frees what u holds (not rootfd). */
void unpack_release(struct unpack *u);

/* unpack_remove_tree(dirfd, name) — removes dirfd/name and, for a directory, everything below
 * it, never following a symlink; a missing name is success. 0 or -errno. */
int unpack_remove_tree(int dirfd, const char *name);

#endif
