/*
 * import.h — bringing images into the store: OCI image-layout tarballs, `docker save`
 * tarballs, and plain root filesystem directories.
 *
 * An archive is read once, its files staged under the store's tmp/ with their digests; the
 * manifest (OCI index.json → manifest, or docker's manifest.json, for which an OCI manifest is
 * written) names the config and the layers, and every digest and size must match before a
 * layer is read. Layers (plain, gzip, zstd, ...: libarchive detects) apply in order through
 * unpack.h into a fresh root, each one's uncompressed digest checked against the config's
 * diff_ids. Only a complete image is moved into the store; anything failing leaves no trace
 * but what gc would remove anyway (nothing, normally: the staging directory is removed).
 */
#ifndef CRUCIBLE_IMAGE_IMPORT_H
#define CRUCIBLE_IMAGE_IMPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "image/digest.h"
#include "image/store.h"
#include "image/unpack.h"
#include "util.h"

struct image_import_opts {
    const char *name;         /* "NAME[:TAG]" to point at the image, or NULL */
    struct unpack_limits lim; /* unpacked bytes and entries (0: the defaults) */
};

struct image_import_result {
    char digest[DIGEST_LEN + 1]; /* the image's manifest digest */
    char ref[IMAGE_REF_MAX];     /* the normalized name set, "" none */
    bool existed;                /* the store had it already: only the ref was set */
    const char *format;          /* "oci", "docker" or "dir" (static) */
    unsigned layers, skipped, stripped;
    uint64_t bytes, entries; /* unpacked */
};

/* image_import_archive(st, path, opts, res, err) — imports the OCI or docker tarball at path.
 * Holds the store's lock shared while it runs. 0 or -errno with err naming the problem. */
int image_import_archive(struct image_store *st, const char *path,
                         const struct image_import_opts *opts, struct image_import_result *res,
                         struct errbuf *err);

/* image_import_dir(st, dir, opts, res, err) — copies the root filesystem dir into the store
 * under the same rules as a layer (no devices, no setuid/setgid, nothing followed); the image
 * is named by a manifest carrying the digest of a sorted walk of the copy. 0 or -errno. */
int image_import_dir(struct image_store *st, const char *dir, const struct image_import_opts *opts,
                     struct image_import_result *res, struct errbuf *err);

#endif
