/*
 * import.c — OCI / docker archive and directory import (see import.h).
 *
 * The staging directory tmp/import-XXXXXX holds the archive's files as s<N> (never under
 * their archive names: those are only keys), the synthesized blobs, the root being built
 * and the meta file. Commit order: blobs linked into blobs/sha256, the root renamed into
 * rootfs/, the meta file renamed into meta/ (from then on the image exists), the ref set.
 */
#include "image/import.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define JSON_FILE_MAX   (4u << 20) /* an index, manifest or config */
#define OUTER_MAX_FILES 100000u
#define LAYERS_MAX      1000u

#if defined(__x86_64__)
#define HOST_ARCH "amd64"
#elif defined(__aarch64__)
#define HOST_ARCH "arm64"
#else
#define HOST_ARCH ""
#endif

static const char MT_MANIFEST[] = "application/vnd.oci.image.manifest.v1+json";
static const char MT_CONFIG[] = "application/vnd.oci.image.config.v1+json";
static const char MT_LAYER[] = "application/vnd.oci.image.layer.v1.tar";

struct staged {
    char *name;  /* key: the archive name, canonical */
    char *alias; /* a symlink or hard link: the name it stands for */
    unsigned idx;
    uint64_t size;
    char digest[DIGEST_LEN + 1];
};

struct layer {
    char digest[DIGEST_LEN + 1];  /* of the blob as shipped */
    char diff_id[DIGEST_LEN + 1]; /* of the uncompressed tar ("" unknown) */
    const char *media_type;       /* borrowed from the manifest */
    uint64_t size;
    unsigned idx; /* staged file */
};

struct job {
    struct image_store *st;
    struct unpack_limits lim;
    char tmp[64]; /* "tmp/import-XXXXXX" relative to st->fd */
    int tmpfd;
    struct staged *files;
    size_t nfiles;
    unsigned next_idx;
    /* the image */
    json_t *manifest, *config;
    char manifest_digest[DIGEST_LEN + 1], config_digest[DIGEST_LEN + 1];
    unsigned manifest_idx, config_idx;
    struct layer layers[LAYERS_MAX];
    size_t nlayers;
};

/* canon(name, out, size) — an archive member name without leading "./" and '/'. */
static void canon(const char *name, char *out, size_t size)
{
    while (name[0] == '.' && name[1] == '/')
        name += 2;
    while (name[0] == '/')
        name++;
    snprintf(out, size, "%s", name);
}

/* find(j, name) — the staged file of archive member name, links followed (8 hops at most,
 * among members only); NULL when absent. */
static const struct staged *find(const struct job *j, const char *name)
{
    char key[PATH_MAX];

    canon(name, key, sizeof(key));
    for (int hop = 0; hop < 8; hop++) {
        const struct staged *s = NULL;
        for (size_t i = 0; i < j->nfiles && !s; i++)
            if (strcmp(j->files[i].name, key) == 0)
                s = &j->files[i];
        if (!s || !s->alias)
            return s;
        snprintf(key, sizeof(key), "%s", s->alias);
    }
    return NULL;
}

/* stage_name(idx, buf, size) — "s<idx>", a staged file's name in the staging directory. */
static void stage_name(unsigned idx, char *buf, size_t size)
{
    snprintf(buf, size, "s%u", idx);
}

/* new_staged_fd(j, &idx, err) — a new staged file s<idx> for the caller to write (its fd). */
static int new_staged_fd(struct job *j, unsigned *idx, struct errbuf *err)
{
    char name[32];
    int fd;

    *idx = j->next_idx++;
    stage_name(*idx, name, sizeof(name));
    fd = openat(j->tmpfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return errbuf_set(err, "cannot create '%s/%s/%s': %s", j->st->dir, j->tmp, name,
                          strerror(errno)),
               -errno;
    return fd;
}

/* add_staged(j, name, alias, idx, size, digest) — records a member (copies the strings).
 * 0 or -ENOMEM. */
static int add_staged(struct job *j, const char *name, const char *alias, unsigned idx,
                      uint64_t size, const char *digest)
{
    struct staged *grown, *s;

    if (!(grown = realloc(j->files, (j->nfiles + 1) * sizeof(*grown))))
        return -ENOMEM;
    j->files = grown;
    s = &j->files[j->nfiles];
    memset(s, 0, sizeof(*s));
    s->name = strdup(name);
    s->alias = alias ? strdup(alias) : NULL;
    if (!s->name || (alias && !s->alias)) {
        free(s->name);
        free(s->alias);
        return -ENOMEM;
    }
    s->idx = idx;
    s->size = size;
    if (digest)
        snprintf(s->digest, sizeof(s->digest), "%s", digest);
    j->nfiles++;
    return 0;
}

/* link_target(entry, target, out, size) — a symlink's target as a member name: resolved
 * lexically against the link's directory (an archive's link is never followed on disk). */
static void link_target(const char *entry, const char *target, char *out, size_t size)
{
    char buf[PATH_MAX * 2];
    char *parts[512];
    int n = 0;
    const char *slash = strrchr(entry, '/');

    if (target[0] == '/')
        snprintf(buf, sizeof(buf), "%s", target);
    else
        snprintf(buf, sizeof(buf), "%.*s/%s", slash ? (int)(slash - entry) : 0, entry, target);
    for (char *save = NULL, *p = strtok_r(buf, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
        if (strcmp(p, ".") == 0)
            continue;
        if (strcmp(p, "..") == 0) {
            n = n > 0 ? n - 1 : 0;
            continue;
        }
        if (n < 512)
            parts[n++] = p;
    }
    out[0] = '\0';
    for (int i = 0, used = 0; i < n && used < (int)size; i++)
        used += snprintf(out + used, size - (size_t)used, "%s%s", i ? "/" : "", parts[i]);
}

/* stage(j, path, err) — every regular file of the archive at path into tmp, with its digest;
 * links recorded as aliases. */
static int stage(struct job *j, const char *path, struct errbuf *err)
{
    struct archive *a = archive_read_new();
    struct archive_entry *e;
    uint64_t total = 0;
    int ar, r = 0;
    char buf[65536];

    if (!a)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    archive_read_support_filter_all(a);
    archive_read_support_format_tar(a);
    if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK) {
        r = errbuf_set(err, "cannot read '%s': %s", path, archive_error_string(a));
        goto out_free;
    }
    while ((ar = archive_read_next_header(a, &e)) == ARCHIVE_OK || ar == ARCHIVE_WARN) {
        char name[PATH_MAX], target[PATH_MAX];
        mode_t type = archive_entry_filetype(e);
        if (!archive_entry_pathname(e))
            continue;
        if (j->nfiles >= OUTER_MAX_FILES) {
            r = errbuf_set(err, "'%s' has more than %u files: not an image archive", path,
                           OUTER_MAX_FILES);
            goto out_free;
        }
        canon(archive_entry_pathname(e), name, sizeof(name));
        if (archive_entry_hardlink(e)) {
            canon(archive_entry_hardlink(e), target, sizeof(target));
            r = add_staged(j, name, target, 0, 0, NULL);
        } else if (type == AE_IFLNK && archive_entry_symlink(e)) {
            link_target(name, archive_entry_symlink(e), target, sizeof(target));
            r = add_staged(j, name, target, 0, 0, NULL);
        } else if (type == AE_IFREG) {
            struct digest_ctx dg;
            char digest[DIGEST_LEN + 1];
            uint64_t size = 0;
            unsigned idx;
            la_ssize_t n;
            int fd = new_staged_fd(j, &idx, err);
            if (fd < 0) {
                r = fd;
                goto out_free;
            }
            if (digest_init(&dg) < 0) {
                close(fd);
                r = (errbuf_set(err, "out of memory"), -ENOMEM);
                goto out_free;
            }
            while ((n = archive_read_data(a, buf, sizeof(buf))) > 0) {
                total += (uint64_t)n;
                size += (uint64_t)n;
                if (total > j->lim.max_bytes) {
                    r = errbuf_set(err,
                                   "'%s' holds more than %llu bytes (--max-size): not "
                                   "imported",
                                   path, (unsigned long long)j->lim.max_bytes);
                    break;
                }
                digest_update(&dg, buf, (size_t)n);
                if ((r = util_write_all(fd, buf, (size_t)n)) < 0) {
                    errbuf_set(err, "cannot write to '%s/%s': %s", j->st->dir, j->tmp,
                               strerror(-r));
                    break;
                }
            }
            close(fd);
            if (r == 0 && n < 0)
                r = (errbuf_set(err, "cannot read '%s' in '%s': %s", name, path,
                                archive_error_string(a) ? archive_error_string(a) : "truncated"),
                     -EIO);
            digest_final(&dg, digest);
            if (r == 0)
                r = add_staged(j, name, NULL, idx, size, digest);
        }
        if (r == -ENOMEM)
            errbuf_set(err, "out of memory");
        if (r < 0)
            goto out_free;
    }
    if (ar != ARCHIVE_EOF)
        r = (errbuf_set(err, "cannot read '%s': %s", path,
                        archive_error_string(a) ? archive_error_string(a) : "truncated archive"),
             -EIO);
out_free:
    archive_read_free(a);
    return r;
}

/* load_json(j, s, what, err) — a staged file parsed (at most JSON_FILE_MAX bytes). */
static json_t *load_json(struct job *j, const struct staged *s, const char *what,
                         struct errbuf *err)
{
    char name[32], *text = NULL;
    size_t len;
    json_error_t jerr;
    json_t *v;
    int fd;

    stage_name(s->idx, name, sizeof(name));
    fd = openat(j->tmpfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 || util_read_fd(fd, &text, &len, JSON_FILE_MAX) < 0) {
        if (fd >= 0)
            close(fd);
        errbuf_set(err, "cannot read the %s '%s' (at most %u bytes)", what, s->name, JSON_FILE_MAX);
        return NULL;
    }
    close(fd);
    v = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (!v)
        errbuf_set(err, "the %s '%s' is not valid JSON: %s (line %d)", what, s->name, jerr.text,
                   jerr.line);
    return v;
}

/* blob(j, desc, what, err) — the staged blob an OCI descriptor names, its digest and size
 * checked. */
static const struct staged *blob(struct job *j, json_t *desc, const char *what, struct errbuf *err)
{
    const char *digest = json_string_value(json_object_get(desc, "digest"));
    json_t *size = json_object_get(desc, "size");
    const struct staged *s;
    char name[128];

    if (!json_is_object(desc) || !digest_valid(digest) || !json_is_integer(size)) {
        errbuf_set(err, "the %s descriptor has no valid sha256 digest and size", what);
        return NULL;
    }
    snprintf(name, sizeof(name), "blobs/sha256/%s", digest + 7);
    if (!(s = find(j, name))) {
        errbuf_set(err, "the archive lacks the %s blob '%s'", what, digest);
        return NULL;
    }
    if (strcmp(s->digest, digest) != 0) {
        errbuf_set(err, "digest mismatch: the %s blob '%s' has digest '%s'", what, digest,
                   s->digest);
        return NULL;
    }
    if ((json_int_t)s->size != json_integer_value(size)) {
        errbuf_set(err, "size mismatch: the %s blob '%s' is %llu bytes, the manifest says %lld",
                   what, digest, (unsigned long long)s->size, (long long)json_integer_value(size));
        return NULL;
    }
    return s;
}

static bool is_index_type(const char *mt)
{
    return mt && (strcmp(mt, "application/vnd.oci.image.index.v1+json") == 0 ||
                  strcmp(mt, "application/vnd.docker.distribution.manifest.list.v2+json") == 0);
}

/* platform_ok(desc) — no platform, or linux on this machine's architecture. */
static bool platform_ok(json_t *desc)
{
    json_t *p = json_object_get(desc, "platform");
    const char *os, *arch;

    if (!json_is_object(p))
        return true;
    os = json_string_value(json_object_get(p, "os"));
    arch = json_string_value(json_object_get(p, "architecture"));
    return (!os || strcmp(os, "linux") == 0) && (!arch || strcmp(arch, HOST_ARCH) == 0);
}

/* read_oci(j, index, err) — index.json → (nested index) → manifest; sets j->manifest. */
static int read_oci(struct job *j, json_t *index, int depth, struct errbuf *err)
{
    json_t *ms = json_object_get(index, "manifests"), *m, *chosen = NULL;
    const struct staged *s;
    size_t i;
    int r;

    if (!json_is_array(ms) || json_array_size(ms) == 0)
        return errbuf_set(err, "the image index lists no manifests");
    json_array_foreach(ms, i, m)
    {
        if (!chosen && platform_ok(m))
            chosen = m;
    }
    if (!chosen)
        return errbuf_set(err, "the image index has no manifest for linux/%s", HOST_ARCH);
    if (!(s = blob(j, chosen, "manifest", err)))
        return -EINVAL;
    if (is_index_type(json_string_value(json_object_get(chosen, "mediaType")))) {
        json_t *nested;
        if (depth >= 2)
            return errbuf_set(err, "image indexes nested too deep");
        if (!(nested = load_json(j, s, "image index", err)))
            return -EINVAL;
        r = read_oci(j, nested, depth + 1, err);
        json_decref(nested);
        return r;
    }
    if (!(j->manifest = load_json(j, s, "manifest", err)))
        return -EINVAL;
    snprintf(j->manifest_digest, sizeof(j->manifest_digest), "%s", s->digest);
    j->manifest_idx = s->idx;
    return 0;
}

/* oci_layers(j, err) — the manifest's config and layers, each blob checked. */
static int oci_layers(struct job *j, struct errbuf *err)
{
    json_t *layers = json_object_get(j->manifest, "layers"), *l;
    const struct staged *s;
    size_t i;

    if (!(s = blob(j, json_object_get(j->manifest, "config"), "config", err)))
        return -EINVAL;
    snprintf(j->config_digest, sizeof(j->config_digest), "%s", s->digest);
    j->config_idx = s->idx;
    if (!json_is_array(layers))
        return errbuf_set(err, "the manifest has no layers array");
    if (json_array_size(layers) > LAYERS_MAX)
        return errbuf_set(err, "the manifest has more than %u layers", LAYERS_MAX);
    json_array_foreach(layers, i, l)
    {
        struct layer *ly = &j->layers[j->nlayers];
        if (!(s = blob(j, l, "layer", err)))
            return -EINVAL;
        memset(ly, 0, sizeof(*ly));
        snprintf(ly->digest, sizeof(ly->digest), "%s", s->digest);
        ly->media_type = json_string_value(json_object_get(l, "mediaType"));
        ly->size = s->size;
        ly->idx = s->idx;
        j->nlayers++;
    }
    return 0;
}

/* write_blob(j, text, &idx, digest, err) — a blob we make (docker's synthesized manifest, a
 * directory image's config and manifest) staged like the archive's. */
static int write_blob(struct job *j, const char *text, unsigned *idx, char *digest,
                      struct errbuf *err)
{
    int fd = new_staged_fd(j, idx, err), r;

    if (fd < 0)
        return fd;
    r = util_write_all(fd, text, strlen(text));
    close(fd);
    if (r < 0)
        return errbuf_set(err, "cannot write to '%s/%s': %s", j->st->dir, j->tmp, strerror(-r)), r;
    digest_buffer(text, strlen(text), digest);
    return 0;
}

/* make_manifest(j, annotations, err) — an OCI manifest for j's config and layers, staged. */
static int make_manifest(struct job *j, json_t *annotations, struct errbuf *err)
{
    json_t *m = json_object(), *layers = json_array();
    char *text;
    uint64_t csize = 0;
    int r;

    for (size_t i = 0; i < j->nfiles; i++)
        if (j->files[i].idx == j->config_idx && !j->files[i].alias)
            csize = j->files[i].size;
    for (size_t i = 0; i < j->nlayers; i++)
        json_array_append_new(layers, json_pack("{s:s, s:s, s:I}", "mediaType", MT_LAYER, "digest",
                                                j->layers[i].digest, "size",
                                                (json_int_t)j->layers[i].size));
    json_object_set_new(m, "schemaVersion", json_integer(2));
    json_object_set_new(m, "mediaType", json_string(MT_MANIFEST));
    json_object_set_new(m, "config",
                        json_pack("{s:s, s:s, s:I}", "mediaType", MT_CONFIG, "digest",
                                  j->config_digest, "size", (json_int_t)csize));
    json_object_set_new(m, "layers", layers);
    if (annotations)
        json_object_set(m, "annotations", annotations);
    text = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text) {
        json_decref(m);
        return errbuf_set(err, "out of memory"), -ENOMEM;
    }
    r = write_blob(j, text, &j->manifest_idx, j->manifest_digest, err);
    free(text);
    j->manifest = m;
    return r;
}

/* read_docker(j, list, err) — docker's manifest.json: the first image's config and layers;
 * the config file's digest checked against its name when the name is one. */
static int read_docker(struct job *j, json_t *list, struct errbuf *err)
{
    json_t *img = json_array_get(list, 0), *layers, *l;
    const char *cfg = json_string_value(json_object_get(img, "Config"));
    const struct staged *s;
    char want[DIGEST_LEN + 1];
    size_t i;

    if (!json_is_object(img) || !cfg)
        return errbuf_set(err, "manifest.json names no image config");
    if (!(s = find(j, cfg)))
        return errbuf_set(err, "the archive lacks the config '%s' manifest.json names", cfg);
    {
        const char *base = strrchr(cfg, '/') ? strrchr(cfg, '/') + 1 : cfg;
        size_t n = strspn(base, "0123456789abcdef");
        if (n == DIGEST_HEX_LEN && (base[n] == '\0' || strcmp(base + n, ".json") == 0)) {
            snprintf(want, sizeof(want), "sha256:%.64s", base);
            if (strcmp(want, s->digest) != 0)
                return errbuf_set(err, "digest mismatch: the config '%s' has digest '%s'", cfg,
                                  s->digest);
        }
    }
    snprintf(j->config_digest, sizeof(j->config_digest), "%s", s->digest);
    j->config_idx = s->idx;
    layers = json_object_get(img, "Layers");
    if (!json_is_array(layers))
        return errbuf_set(err, "manifest.json has no Layers array");
    if (json_array_size(layers) > LAYERS_MAX)
        return errbuf_set(err, "manifest.json has more than %u layers", LAYERS_MAX);
    json_array_foreach(layers, i, l)
    {
        struct layer *ly = &j->layers[j->nlayers];
        const char *name = json_string_value(l);
        if (!name || !(s = find(j, name)))
            return errbuf_set(err, "the archive lacks the layer '%s' manifest.json names",
                              name ? name : "?");
        memset(ly, 0, sizeof(*ly));
        snprintf(ly->digest, sizeof(ly->digest), "%s", s->digest);
        ly->media_type = MT_LAYER;
        ly->size = s->size;
        ly->idx = s->idx;
        j->nlayers++;
    }
    return make_manifest(j, NULL, err);
}

/* config_diff_ids(j, err) — the config's rootfs.diff_ids onto the layers (checked later). */
static int config_diff_ids(struct job *j, struct errbuf *err)
{
    json_t *ids = json_object_get(json_object_get(j->config, "rootfs"), "diff_ids"), *v;
    size_t i;

    if (!ids)
        return 0;
    if (!json_is_array(ids) || json_array_size(ids) != j->nlayers)
        return errbuf_set(err, "the config lists %zu diff_ids for %zu layers",
                          json_is_array(ids) ? json_array_size(ids) : 0, j->nlayers);
    json_array_foreach(ids, i, v)
    {
        if (!digest_valid(json_string_value(v)))
            return errbuf_set(err, "the config's diff_id %zu is not a sha256 digest", i);
        snprintf(j->layers[i].diff_id, DIGEST_LEN + 1, "%s", json_string_value(v));
    }
    return 0;
}

/* ---- applying one layer: outer reader decompresses, inner reader parses tar ---- */

struct layer_stream {
    struct archive *raw;
    struct digest_ctx dg;
    uint64_t bytes, max;
    char buf[65536];
};

/* layer_read(a, ctx, out) — the inner (tar) reader's read callback: the next decompressed
 * block of the outer reader, hashed for the diff_id and counted against the bomb cap. */
static la_ssize_t layer_read(struct archive *a, void *ctx, const void **out)
{
    struct layer_stream *s = ctx;
    la_ssize_t n = archive_read_data(s->raw, s->buf, sizeof(s->buf));

    if (n < 0) {
        archive_set_error(a, EIO, "%s",
                          archive_error_string(s->raw) ? archive_error_string(s->raw)
                                                       : "truncated layer");
        return -1;
    }
    s->bytes += (uint64_t)n;
    if (s->bytes > s->max) {
        archive_set_error(a, EFBIG,
                          "the layer decompresses to more than %llu bytes (a decompression "
                          "bomb, or raise --max-size)",
                          (unsigned long long)s->max);
        return -1;
    }
    digest_update(&s->dg, s->buf, (size_t)n);
    *out = s->buf;
    return n;
}

/* apply_layer(j, u, ly, no, err) — layer `no` (0-based) applied through u; its uncompressed
 * digest checked against ly->diff_id when the config gave one, else recorded there. */
static int apply_layer(struct job *j, struct unpack *u, struct layer *ly, size_t no,
                       struct errbuf *err)
{
    struct layer_stream *s = calloc(1, sizeof(*s));
    struct archive *tar = NULL;
    struct archive_entry *e;
    char name[32], got[DIGEST_LEN + 1];
    struct errbuf why = {{0}};
    int fd = -1, r = 0;
    la_ssize_t n;

    if (!s || digest_init(&s->dg) < 0) {
        free(s);
        return errbuf_set(err, "out of memory"), -ENOMEM;
    }
    s->max = u->lim.max_bytes + 1024 * (u->lim.max_entries + 2);
    stage_name(ly->idx, name, sizeof(name));
    fd = openat(j->tmpfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    s->raw = archive_read_new();
    tar = archive_read_new();
    if (fd < 0 || !s->raw || !tar) {
        r = (errbuf_set(err, "cannot open layer %zu: %s", no + 1, strerror(errno)), -EIO);
        goto out_free;
    }
    archive_read_support_filter_all(s->raw);
    archive_read_support_format_raw(s->raw);
    archive_read_support_format_tar(tar);
    if (archive_read_open_fd(s->raw, fd, 65536) != ARCHIVE_OK ||
        archive_read_next_header(s->raw, &e) != ARCHIVE_OK) {
        r = (errbuf_set(err, "layer %zu (%s) cannot be read: %s", no + 1, ly->digest,
                        archive_error_string(s->raw) ? archive_error_string(s->raw) : "empty"),
             -EIO);
        goto out_free;
    }
    if (archive_read_open(tar, s, NULL, layer_read, NULL) != ARCHIVE_OK) {
        r = (errbuf_set(err, "layer %zu (%s) is not a tar archive: %s", no + 1, ly->digest,
                        archive_error_string(tar) ? archive_error_string(tar) : "unknown format"),
             -EINVAL);
        goto out_free;
    }
    if ((r = unpack_layer(u, tar, &why)) < 0) {
        errbuf_set(err, "layer %zu (%s): %s", no + 1, ly->digest, why.msg);
        goto out_free;
    }
    for (const void *rest; (n = layer_read(tar, s, &rest)) > 0;) /* the rest, for the diff_id */
        ;
    if (n < 0) {
        r = (errbuf_set(err, "layer %zu (%s): %s", no + 1, ly->digest, archive_error_string(tar)),
             -EIO);
        goto out_free;
    }
    digest_final(&s->dg, got);
    if (ly->diff_id[0] && strcmp(got, ly->diff_id) != 0) {
        r = errbuf_set(err,
                       "digest mismatch: layer %zu (%s) unpacks to '%s', the config's "
                       "diff_id is '%s'",
                       no + 1, ly->digest, got, ly->diff_id);
        goto out_free;
    }
    snprintf(ly->diff_id, sizeof(ly->diff_id), "%s", got);
out_free:
    if (tar)
        archive_read_free(tar);
    if (s->raw)
        archive_read_free(s->raw);
    if (fd >= 0)
        close(fd);
    digest_release(&s->dg);
    free(s);
    return r;
}

/* ---- commit ---- */

/* link_blob(j, idx, digest, err) — staged file idx hard-linked into blobs/ (kept if there). */
static int link_blob(struct job *j, unsigned idx, const char *digest, struct errbuf *err)
{
    char from[32], to[128];

    stage_name(idx, from, sizeof(from));
    image_store__path(digest, 'b', to, sizeof(to));
    if (linkat(j->tmpfd, from, j->st->fd, to, 0) < 0 && errno != EEXIST)
        return errbuf_set(err, "cannot store blob '%s': %s", digest, strerror(errno)), -errno;
    return 0;
}

/* config_field(config, key) — config.config[key] (a new reference), or JSON null. */
static json_t *config_field(json_t *config, const char *key)
{
    json_t *v = json_object_get(json_object_get(config, "config"), key);

    return v && !json_is_null(v) ? json_incref(v) : json_null();
}

/* commit(j, u, res, format, err) — blobs, root, meta, in that order. */
static int commit(struct job *j, struct unpack *u, struct image_import_result *res,
                  const char *format, struct errbuf *err)
{
    char rel[128], src[128], stamp[32];
    json_t *meta, *layers = json_array(), *wd;
    time_t now = time(NULL);
    struct tm tm;
    char *text;
    int r;

    if ((r = link_blob(j, j->manifest_idx, j->manifest_digest, err)) < 0 ||
        (r = link_blob(j, j->config_idx, j->config_digest, err)) < 0)
        return r;
    for (size_t i = 0; i < j->nlayers; i++) {
        if ((r = link_blob(j, j->layers[i].idx, j->layers[i].digest, err)) < 0)
            return r;
        json_array_append_new(
            layers,
            json_pack("{s:s, s:s, s:I, s:s}", "digest", j->layers[i].digest, "diff_id",
                      j->layers[i].diff_id, "size", (json_int_t)j->layers[i].size, "media_type",
                      j->layers[i].media_type ? j->layers[i].media_type : MT_LAYER));
    }
    snprintf(src, sizeof(src), "%s/rootfs", j->tmp);
    image_store__path(j->manifest_digest, 'r', rel, sizeof(rel));
    if (renameat(j->st->fd, src, j->st->fd, rel) < 0 && errno != EEXIST && errno != ENOTEMPTY)
        return errbuf_set(err, "cannot move the image into '%s/%s': %s", j->st->dir, rel,
                          strerror(errno)),
               -errno;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
    wd = json_object_get(json_object_get(j->config, "config"), "WorkingDir");
    meta = json_pack(
        "{s:s, s:s, s:s, s:o, s:o, s:s, s:o, s:o, s:I, s:I, s:s, s:O}", "digest",
        j->manifest_digest, "config", j->config_digest, "format", format, "layers", layers, "env",
        config_field(j->config, "Env"), "workdir", json_is_string(wd) ? json_string_value(wd) : "",
        "cmd", config_field(j->config, "Cmd"), "entrypoint", config_field(j->config, "Entrypoint"),
        "size", (json_int_t)u->bytes, "entries", (json_int_t)u->entries, "imported", stamp,
        "annotations",
        json_object_get(j->manifest, "annotations") ? json_object_get(j->manifest, "annotations")
                                                    : json_null());
    if (!meta)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    json_object_set(meta, "architecture",
                    json_object_get(j->config, "architecture") ?: json_null());
    json_object_set(meta, "os", json_object_get(j->config, "os") ?: json_null());
    json_object_set(meta, "created", json_object_get(j->config, "created") ?: json_null());
    text = json_dumps(meta, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(meta);
    if (!text)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    snprintf(src, sizeof(src), "%s/meta", j->tmp);
    {
        int fd = openat(j->st->fd, src, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        r = fd < 0 ? -errno : util_write_all(fd, text, strlen(text));
        if (fd >= 0)
            close(fd);
    }
    free(text);
    image_store__path(j->manifest_digest, 'm', rel, sizeof(rel));
    if (r < 0 || renameat(j->st->fd, src, j->st->fd, rel) < 0)
        return errbuf_set(err, "cannot write '%s/%s': %s", j->st->dir, rel,
                          strerror(r < 0 ? -r : errno)),
               -EIO;
    res->bytes = u->bytes;
    res->entries = u->entries;
    res->skipped = u->skipped;
    res->stripped = u->stripped;
    return 0;
}

/* ---- the job ---- */

/* job_start(j, st, o, res, err) — limits, the ref checked, the shared lock, the staging
 * directory. 0 or -errno. */
static int job_start(struct job *j, struct image_store *st, const struct image_import_opts *o,
                     struct image_import_result *res, struct errbuf *err)
{
    int r;

    memset(j, 0, sizeof(*j));
    memset(res, 0, sizeof(*res));
    j->st = st;
    j->tmpfd = -1;
    j->lim = o->lim;
    if (!j->lim.max_bytes)
        j->lim.max_bytes = UNPACK_MAX_BYTES;
    if (!j->lim.max_entries)
        j->lim.max_entries = UNPACK_MAX_ENTRIES;
    if (o->name && (r = image_ref_normalize(o->name, res->ref, sizeof(res->ref), err)) < 0)
        return r;
    if ((r = image_store_lock(st, false, err)) < 0)
        return r;
    for (int tries = 0; tries < 100; tries++) {
        snprintf(j->tmp, sizeof(j->tmp), "tmp/import-%d-%ld-%d", (int)getpid(), (long)time(NULL),
                 tries);
        if (mkdirat(st->fd, j->tmp, 0700) == 0)
            break;
        if (errno != EEXIST)
            return errbuf_set(err, "cannot create '%s/%s': %s", st->dir, j->tmp, strerror(errno)),
                   -errno;
    }
    j->tmpfd = openat(st->fd, j->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (j->tmpfd < 0)
        return errbuf_set(err, "cannot open '%s/%s': %s", st->dir, j->tmp, strerror(errno)), -errno;
    return 0;
}

/* job_end(j) — frees j's contents and removes its staging directory (what commit moved out
 * of it stays). */
static void job_end(struct job *j)
{
    for (size_t i = 0; i < j->nfiles; i++) {
        free(j->files[i].name);
        free(j->files[i].alias);
    }
    free(j->files);
    json_decref(j->manifest);
    json_decref(j->config);
    if (j->tmpfd >= 0) {
        close(j->tmpfd);
        unpack_remove_tree(j->st->fd, j->tmp);
    }
}

/* build(j, res, format, err) — the root from the layers, then commit and ref. */
static int build(struct job *j, struct image_import_result *res, const char *format,
                 struct errbuf *err)
{
    struct unpack u = {0};
    char rel[128];
    int r, rootfd;

    snprintf(res->digest, sizeof(res->digest), "%s", j->manifest_digest);
    res->format = format;
    res->layers = (unsigned)j->nlayers;
    if (image_store_has(j->st, j->manifest_digest)) {
        res->existed = true;
        return res->ref[0] ? image_store_set_ref(j->st, res->ref, j->manifest_digest, err) : 0;
    }
    if (mkdirat(j->tmpfd, "rootfs", 0755) < 0)
        return errbuf_set(err, "cannot create the root in '%s/%s': %s", j->st->dir, j->tmp,
                          strerror(errno)),
               -errno;
    snprintf(rel, sizeof(rel), "rootfs");
    rootfd = openat(j->tmpfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (rootfd < 0)
        return errbuf_set(err, "cannot open the root: %s", strerror(errno)), -errno;
    u.rootfd = rootfd;
    u.lim = j->lim;
    u.chown = geteuid() == 0;
    r = 0;
    for (size_t i = 0; i < j->nlayers && r == 0; i++)
        r = apply_layer(j, &u, &j->layers[i], i, err);
    if (r == 0)
        r = unpack_finish(&u, err);
    if (r == 0 && u.ndirs == 0)
        fchmod(rootfd, 0755);
    close(rootfd);
    if (r == 0)
        r = commit(j, &u, res, format, err);
    unpack_release(&u);
    if (r == 0 && res->ref[0])
        r = image_store_set_ref(j->st, res->ref, j->manifest_digest, err);
    return r;
}

int image_import_archive(struct image_store *st, const char *path,
                         const struct image_import_opts *opts, struct image_import_result *res,
                         struct errbuf *err)
{
    struct job *j = malloc(sizeof(*j));
    const struct staged *s;
    const char *format;
    struct errbuf why = {{0}};
    json_t *top;
    int r;

    if (!j)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    if ((r = job_start(j, st, opts, res, err)) < 0)
        goto out_end;
    if ((r = stage(j, path, err)) < 0)
        goto out_end;
    if ((s = find(j, "index.json"))) {
        format = "oci";
        if (!(top = load_json(j, s, "image index", err))) {
            r = -EINVAL;
            goto out_end;
        }
        r = read_oci(j, top, 0, &why);
        json_decref(top);
        if (r == 0)
            r = oci_layers(j, &why);
    } else if ((s = find(j, "manifest.json"))) {
        format = "docker";
        if (!(top = load_json(j, s, "docker manifest", err))) {
            r = -EINVAL;
            goto out_end;
        }
        r = json_is_array(top) ? read_docker(j, top, &why)
                               : errbuf_set(&why, "manifest.json is not a list of images");
        json_decref(top);
    } else {
        r = errbuf_set(err,
                       "'%s' is neither an OCI image layout (no index.json) nor a 'docker save' "
                       "archive (no manifest.json)",
                       path);
        goto out_end;
    }
    if (r < 0) {
        errbuf_set(err, "'%s': %s", path, why.msg);
        goto out_end;
    }
    for (size_t i = 0; i < j->nfiles && !j->config; i++)
        if (!j->files[i].alias && j->files[i].idx == j->config_idx)
            j->config = load_json(j, &j->files[i], "image config", err);
    if (!j->config || !json_is_object(j->config)) {
        r = j->config ? errbuf_set(err, "the image config is not a JSON object") : -EINVAL;
        goto out_end;
    }
    if ((r = config_diff_ids(j, &why)) < 0) {
        errbuf_set(err, "'%s': %s", path, why.msg);
        goto out_end;
    }
    r = build(j, res, format, &why);
    if (r < 0)
        errbuf_set(err, "'%s': %s", path, why.msg);
out_end:
    job_end(j);
    free(j);
    return r;
}

/* ---- directories ---- */

struct walk {
    struct job *j;
    struct unpack *u;
    struct digest_ctx tree;
};

/* cmp_names — qsort order of names: bytewise, so a walk's order is the same everywhere. */
static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* copy_file(w, sfd, dfd, name, st, rel, err) — one regular file copied and hashed. */
static int copy_file(struct walk *w, int sfd, int dfd, const char *name, const struct stat *st,
                     const char *rel, struct errbuf *err)
{
    int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    int out = -1, r = 0;
    struct digest_ctx dg;
    char buf[65536], digest[DIGEST_LEN + 1];
    ssize_t n;

    if (in < 0)
        return errbuf_set(err, "cannot open '%s': %s", rel, strerror(errno)), -errno;
    if (st->st_size < 0 || (uint64_t)st->st_size > w->u->lim.max_bytes - w->u->bytes) {
        close(in);
        return errbuf_set(err,
                          "'%s' takes the image past its unpacked-size limit of %llu bytes "
                          "(--max-size)",
                          rel, (unsigned long long)w->u->lim.max_bytes),
               -EFBIG;
    }
    out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0 || digest_init(&dg) < 0) {
        r = (errbuf_set(err, "cannot create '%s': %s", rel, strerror(errno)), -EIO);
        goto out_close;
    }
    while ((n = read(in, buf, sizeof(buf))) > 0) {
        w->u->bytes += (uint64_t)n;
        if (w->u->bytes > w->u->lim.max_bytes) {
            r = (errbuf_set(err, "'%s' grew past the unpacked-size limit while copied", rel),
                 -EFBIG);
            break;
        }
        digest_update(&dg, buf, (size_t)n);
        if ((r = util_write_all(out, buf, (size_t)n)) < 0) {
            errbuf_set(err, "cannot write '%s': %s", rel, strerror(-r));
            break;
        }
    }
    if (r == 0 && n < 0)
        r = (errbuf_set(err, "cannot read '%s': %s", rel, strerror(errno)), -EIO);
    digest_final(&dg, digest);
    digest_update(&w->tree, digest, DIGEST_LEN);
    if (r == 0) {
        if (w->u->chown && fchown(out, st->st_uid, st->st_gid) < 0)
            r = (errbuf_set(err, "cannot set the owner of '%s': %s", rel, strerror(errno)), -EIO);
        fchmod(out, st->st_mode & 01777);
    }
out_close:
    if (out >= 0)
        close(out);
    close(in);
    return r;
}

/* walk_dir(w, sfd, dfd, rel, depth, err) — sfd's entries in name order into dfd, each
 * recorded in the tree digest as "path\0kind mode uid gid\0" plus content or target. */
static int walk_dir(struct walk *w, int sfd, int dfd, const char *rel, int depth,
                    struct errbuf *err)
{
    DIR *d;
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int r = 0, dupfd;

    if (depth > 256)
        return errbuf_set(err, "'%s' is nested deeper than 256", rel);
    if ((dupfd = dup(sfd)) < 0 || !(d = fdopendir(dupfd))) {
        if (dupfd >= 0)
            close(dupfd);
        return errbuf_set(err, "cannot read '%s': %s", rel[0] ? rel : ".", strerror(errno)), -errno;
    }
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (n == cap) {
            char **grown = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*grown));
            if (!grown) {
                r = -ENOMEM;
                break;
            }
            names = grown;
        }
        if (!(names[n] = strdup(de->d_name))) {
            r = -ENOMEM;
            break;
        }
        n++;
    }
    closedir(d);
    if (r == 0)
        qsort(names, n, sizeof(*names), cmp_names);
    for (size_t i = 0; i < n && r == 0; i++) {
        char path[PATH_MAX], head[PATH_MAX + 64];
        struct stat st;
        snprintf(path, sizeof(path), "%s%s%s", rel, rel[0] ? "/" : "", names[i]);
        if (++w->u->entries > w->u->lim.max_entries) {
            r = errbuf_set(err, "the directory has more than %llu entries (--max-entries)",
                           (unsigned long long)w->u->lim.max_entries);
            break;
        }
        if (fstatat(sfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
            r = (errbuf_set(err, "cannot stat '%s': %s", path, strerror(errno)), -errno);
            break;
        }
        if (st.st_mode & 06000)
            w->u->stripped++;
        st.st_mode &= ~(mode_t)06000;
        if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) {
            w->u->skipped++;
            continue;
        }
        snprintf(head, sizeof(head), "%s%c%c %o %u %u%c", path, 0,
                 S_ISREG(st.st_mode)   ? 'f'
                 : S_ISDIR(st.st_mode) ? 'd'
                                       : 'l',
                 (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid, (unsigned)st.st_gid, 0);
        digest_update(&w->tree, head, strlen(path) + 1 + strlen(head + strlen(path) + 1) + 1);
        if (S_ISREG(st.st_mode)) {
            r = copy_file(w, sfd, dfd, names[i], &st, path, err);
        } else if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            ssize_t len = readlinkat(sfd, names[i], target, sizeof(target) - 1);
            if (len < 0) {
                r = (errbuf_set(err, "cannot read symlink '%s': %s", path, strerror(errno)),
                     -errno);
                break;
            }
            target[len] = '\0';
            digest_update(&w->tree, target, (size_t)len + 1);
            if (symlinkat(target, dfd, names[i]) < 0)
                r = (errbuf_set(err, "cannot create symlink '%s': %s", path, strerror(errno)),
                     -errno);
            else if (w->u->chown &&
                     fchownat(dfd, names[i], st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
                r = (errbuf_set(err, "cannot set the owner of '%s': %s", path, strerror(errno)),
                     -EIO);
        } else {
            int s2, d2;
            if (mkdirat(dfd, names[i], 0700) < 0) {
                r = (errbuf_set(err, "cannot create '%s': %s", path, strerror(errno)), -errno);
                break;
            }
            s2 = openat(sfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            d2 = openat(dfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (s2 < 0 || d2 < 0)
                r = (errbuf_set(err, "cannot open '%s': %s", path, strerror(errno)), -errno);
            else
                r = walk_dir(w, s2, d2, path, depth + 1, err);
            if (r == 0) {
                if ((w->u->chown && fchown(d2, st.st_uid, st.st_gid) < 0) ||
                    fchmod(d2, st.st_mode & 01777) < 0)
                    r = (errbuf_set(err, "cannot set the owner or mode of '%s': %s", path,
                                    strerror(errno)),
                         -EIO);
            }
            if (s2 >= 0)
                close(s2);
            if (d2 >= 0)
                close(d2);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (r == -ENOMEM)
        errbuf_set(err, "out of memory");
    return r;
}

int image_import_dir(struct image_store *st, const char *dir, const struct image_import_opts *opts,
                     struct image_import_result *res, struct errbuf *err)
{
    struct job *j = malloc(sizeof(*j));
    struct unpack u = {0};
    struct walk w = {0};
    char tree[DIGEST_LEN + 1], *text;
    json_t *config = NULL, *ann = NULL;
    int r, sfd = -1, rootfd = -1;

    if (!j)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    if ((r = job_start(j, st, opts, res, err)) < 0)
        goto out_end;
    sfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sfd < 0) {
        r = (errbuf_set(err, "cannot open directory '%s': %s", dir, strerror(errno)), -errno);
        goto out_end;
    }
    if (mkdirat(j->tmpfd, "rootfs", 0755) < 0 ||
        (rootfd = openat(j->tmpfd, "rootfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        r = (errbuf_set(err, "cannot create the root: %s", strerror(errno)), -errno);
        goto out_end;
    }
    u.rootfd = rootfd;
    u.lim = j->lim;
    u.chown = geteuid() == 0;
    w.j = j;
    w.u = &u;
    if (digest_init(&w.tree) < 0) {
        r = (errbuf_set(err, "out of memory"), -ENOMEM);
        goto out_end;
    }
    r = walk_dir(&w, sfd, rootfd, "", 0, err);
    digest_final(&w.tree, tree);
    if (r < 0)
        goto out_end;
    if (u.entries == 0) {
        r = (errbuf_set(err, "directory '%s' is empty", dir), -ENOENT);
        goto out_end;
    }
    config = json_pack("{s:s, s:s, s:{}, s:{s:s, s:[]}}", "architecture", HOST_ARCH, "os", "linux",
                       "config", "rootfs", "type", "layers", "diff_ids");
    text = config ? json_dumps(config, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (!text) {
        r = (errbuf_set(err, "out of memory"), -ENOMEM);
        goto out_end;
    }
    r = write_blob(j, text, &j->config_idx, j->config_digest, err);
    if (r == 0)
        r = add_staged(j, "config", NULL, j->config_idx, strlen(text), j->config_digest);
    free(text);
    j->config = config;
    config = NULL;
    if (r < 0)
        goto out_end;
    ann = json_pack("{s:s}", "org.crucible.rootfs.digest", tree);
    if ((r = make_manifest(j, ann, err)) < 0)
        goto out_end;
    snprintf(res->digest, sizeof(res->digest), "%s", j->manifest_digest);
    res->format = "dir";
    if (image_store_has(st, j->manifest_digest)) {
        res->existed = true;
        if (res->ref[0])
            r = image_store_set_ref(st, res->ref, j->manifest_digest, err);
        goto out_end;
    }
    close(rootfd);
    rootfd = -1;
    if ((r = commit(j, &u, res, "dir", err)) == 0 && res->ref[0])
        r = image_store_set_ref(st, res->ref, j->manifest_digest, err);
out_end:
    json_decref(ann);
    json_decref(config);
    unpack_release(&u);
    if (rootfd >= 0)
        close(rootfd);
    if (sfd >= 0)
        close(sfd);
    job_end(j);
    free(j);
    return r;
}
