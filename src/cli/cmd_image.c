/*
 * cmd_image.c — `crucible image`: the image store's commands (docs/IMAGES.md).
 *
 *   crucible image [--state-dir DIR] import [--name N:TAG] [--max-size SIZE]
 *                                           [--max-entries N] (FILE | --dir ROOTFS)
 *   crucible image [--state-dir DIR] list [--json] | inspect REF | tag REF N:TAG
 *                                    | rm REF... | gc
 * REF is NAME[:TAG] or sha256:<hex>. Exit status 0 done, 2 refused or failed (the message
 * says why).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "image/import.h"
#include "image/store.h"

#define CRUCIBLE_MANIFEST     "crucible-manifest.json" /* the standard image's package list */
#define CRUCIBLE_MANIFEST_MAX (16u << 20)

static void usage(FILE *f)
{
    fprintf(f,
            "usage: crucible image [--state-dir DIR] COMMAND\n\n"
            "  import [--name NAME[:TAG]] [--max-size SIZE] [--max-entries N] FILE\n"
            "                  an OCI image-layout or 'docker save' tarball (layers plain, gzip\n"
            "                  or zstd); every digest is checked\n"
            "  import [--name NAME[:TAG]] --dir ROOTFS\n"
            "                  a root filesystem directory, copied into the store\n"
            "  list [--json]   images, their names, digests and sizes\n"
            "  inspect REF     an image as JSON: digest, names, config, layers, sizes, and the\n"
            "                  image's %s when it has one\n"
            "  tag REF NAME[:TAG]   points NAME:TAG at REF's image (the old image stays)\n"
            "  rm REF...       NAME[:TAG] removes the name (and the image if no other name is\n"
            "                  left); sha256:<hex> removes the image and its names\n"
            "  gc              removes blobs and root filesystems no image uses\n\n"
            "REF is NAME[:TAG] (TAG defaults to latest) or sha256:<hex>. The store is\n"
            "STATE/images; STATE is --state-dir, else $CRUCIBLE_STATE_DIR, else\n"
            "/var/lib/crucible (root) or $XDG_STATE_HOME/crucible (~/.local/state/crucible).\n"
            "SIZE takes a K, M or G suffix (default 64G); --max-entries defaults to %llu.\n",
            CRUCIBLE_MANIFEST, (unsigned long long)UNPACK_MAX_ENTRIES);
}

static int fail(const struct errbuf *err)
{
    fprintf(stderr, "crucible image: %s\n", err->msg);
    return 2;
}

/* parse_size(s, &out) — bytes with an optional K, M or G suffix (powers of 1024). */
static bool parse_size(const char *s, uint64_t *out)
{
    char num[32];
    size_t len = strlen(s);
    unsigned shift = 0;

    if (len == 0 || len >= sizeof(num))
        return false;
    memcpy(num, s, len + 1);
    switch (num[len - 1]) {
    case 'K':
    case 'k':
        shift = 10;
        break;
    case 'M':
    case 'm':
        shift = 20;
        break;
    case 'G':
    case 'g':
        shift = 30;
        break;
    default:
        break;
    }
    if (shift)
        num[len - 1] = '\0';
    if (!util_parse_u64(num, 1, UINT64_MAX >> shift, out))
        return false;
    *out <<= shift;
    return true;
}

static int do_import(struct image_store *st, int argc, char **argv)
{
    struct image_import_opts o = {0};
    struct image_import_result res;
    struct errbuf err = {{0}};
    const char *dir = NULL, *file = NULL;
    int r;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (strcmp(a, "--name") == 0 && has_val) {
            o.name = argv[++i];
        } else if (strcmp(a, "--dir") == 0 && has_val) {
            dir = argv[++i];
        } else if (strcmp(a, "--max-size") == 0 && has_val) {
            if (!parse_size(argv[++i], &o.lim.max_bytes)) {
                fprintf(stderr, "crucible image: --max-size '%s' is not a size\n", argv[i]);
                return 2;
            }
        } else if (strcmp(a, "--max-entries") == 0 && has_val) {
            if (!util_parse_u64(argv[++i], 1, UINT32_MAX, &o.lim.max_entries)) {
                fprintf(stderr, "crucible image: --max-entries '%s' is not a count\n", argv[i]);
                return 2;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "crucible image import: unknown option '%s'\n", a);
            return 2;
        } else if (!file) {
            file = a;
        } else {
            fprintf(stderr, "crucible image import: one FILE at a time\n");
            return 2;
        }
    }
    if (!!dir == !!file) {
        fprintf(stderr, "crucible image import: give a FILE or --dir ROOTFS (see --help)\n");
        return 2;
    }
    r = dir ? image_import_dir(st, dir, &o, &res, &err)
            : image_import_archive(st, file, &o, &res, &err);
    if (r < 0)
        return fail(&err);
    if (res.existed)
        printf("%s already in the store", res.digest);
    else
        printf("imported %s (%s, %u layer%s, %llu bytes in %llu entries)", res.digest, res.format,
               res.layers, res.layers == 1 ? "" : "s", (unsigned long long)res.bytes,
               (unsigned long long)res.entries);
    if (res.ref[0])
        printf(" as %s", res.ref);
    putchar('\n');
    if (res.skipped)
        fprintf(stderr, "crucible image: skipped %u device nodes, fifos or sockets\n", res.skipped);
    if (res.stripped)
        fprintf(stderr, "crucible image: stripped setuid/setgid bits from %u files\n",
                res.stripped);
    return 0;
}

/* names_of(refs, n, digest) — a JSON array of the refs naming digest. */
static json_t *names_of(const struct image_ref *refs, size_t n, const char *digest)
{
    json_t *a = json_array();

    for (size_t i = 0; i < n; i++)
        if (strcmp(refs[i].digest, digest) == 0)
            json_array_append_new(a, json_string(refs[i].name));
    return a;
}

static int do_list(struct image_store *st, int argc, char **argv)
{
    bool as_json = argc > 1 && strcmp(argv[1], "--json") == 0;
    struct errbuf err = {{0}};
    struct image_ref *refs;
    json_t *out = json_array();
    size_t n;
    int fd;

    if (image_store_refs(st, &refs, &n, &err) < 0)
        return fail(&err);
    fd = openat(st->fd, "meta", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        DIR *d = fdopendir(fd);
        struct dirent *de;
        while (d && (de = readdir(d))) {
            char digest[DIGEST_LEN + 8], *text;
            json_t *meta;
            if (strlen(de->d_name) != DIGEST_HEX_LEN + 5)
                continue;
            snprintf(digest, sizeof(digest), "sha256:%.64s", de->d_name);
            if (image_store_meta(st, digest, &text, &err) < 0)
                continue;
            meta = json_loads(text, 0, NULL);
            free(text);
            if (!meta)
                continue;
            json_array_append_new(out, json_pack("{s:s, s:o, s:O, s:O, s:O}", "digest", digest,
                                                 "names", names_of(refs, n, digest), "size",
                                                 json_object_get(meta, "size"), "imported",
                                                 json_object_get(meta, "imported"), "format",
                                                 json_object_get(meta, "format")));
            json_decref(meta);
        }
        if (d)
            closedir(d);
        else
            close(fd);
    }
    free(refs);
    if (as_json) {
        json_dumpf(out, stdout, JSON_INDENT(2));
        putchar('\n');
    } else {
        size_t i;
        json_t *img;
        printf("%-40s %-19s %12s  %s\n", "NAME", "DIGEST", "SIZE", "IMPORTED");
        json_array_foreach(out, i, img)
        {
            json_t *names = json_object_get(img, "names"), *nm;
            const char *dg = json_string_value(json_object_get(img, "digest"));
            const char *when = json_string_value(json_object_get(img, "imported"));
            long long size = (long long)json_integer_value(json_object_get(img, "size"));
            size_t k;
            if (json_array_size(names) == 0)
                printf("%-40s %.19s %12lld  %s\n", "<none>", dg, size, when ? when : "");
            json_array_foreach(names, k, nm)
            {
                printf("%-40s %.19s %12lld  %s\n", json_string_value(nm), dg, size,
                       when ? when : "");
            }
        }
    }
    json_decref(out);
    return 0;
}

/* read_crucible_manifest(st, digest) — the image's crucible-manifest.json at its root, parsed,
 * or NULL (absent, not a regular file, not JSON). Opened without following a link. */
static json_t *read_crucible_manifest(struct image_store *st, const char *digest)
{
    char rel[256], *text = NULL;
    size_t len;
    json_t *v = NULL;
    int fd;

    image_store__path(digest, 'r', rel, sizeof(rel));
    strncat(rel, "/" CRUCIBLE_MANIFEST, sizeof(rel) - strlen(rel) - 1);
    fd = openat(st->fd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    if (util_read_fd(fd, &text, &len, CRUCIBLE_MANIFEST_MAX) == 0)
        v = json_loadb(text, len, 0, NULL);
    free(text);
    close(fd);
    return v;
}

static int do_inspect(struct image_store *st, int argc, char **argv)
{
    struct errbuf err = {{0}};
    char digest[DIGEST_LEN + 1], root[PATH_MAX + 128], *text;
    struct image_ref *refs;
    json_t *meta, *cm;
    size_t n;

    if (argc != 2) {
        fprintf(stderr, "crucible image inspect: give one REF\n");
        return 2;
    }
    if (image_store_lookup(st, argv[1], digest, &err) < 0 ||
        image_store_meta(st, digest, &text, &err) < 0)
        return fail(&err);
    meta = json_loads(text, 0, NULL);
    free(text);
    if (!meta) {
        fprintf(stderr, "crucible image: the meta file of '%s' is not JSON\n", digest);
        return 2;
    }
    if (image_store_refs(st, &refs, &n, &err) < 0) {
        json_decref(meta);
        return fail(&err);
    }
    json_object_set_new(meta, "names", names_of(refs, n, digest));
    free(refs);
    image_store_rootfs(st, digest, root, sizeof(root));
    json_object_set_new(meta, "rootfs", json_string(root));
    cm = read_crucible_manifest(st, digest);
    json_object_set_new(meta, "manifest", cm ? cm : json_null());
    json_dumpf(meta, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
    putchar('\n');
    json_decref(meta);
    return 0;
}

static int do_tag(struct image_store *st, int argc, char **argv)
{
    struct errbuf err = {{0}};
    char digest[DIGEST_LEN + 1], name[IMAGE_REF_MAX];

    if (argc != 3) {
        fprintf(stderr, "crucible image tag: give REF and NAME[:TAG]\n");
        return 2;
    }
    if (image_ref_normalize(argv[2], name, sizeof(name), &err) < 0 ||
        image_store_lock(st, false, &err) < 0 ||
        image_store_lookup(st, argv[1], digest, &err) < 0 ||
        image_store_set_ref(st, name, digest, &err) < 0)
        return fail(&err);
    printf("%s -> %s\n", name, digest);
    return 0;
}

static int do_rm(struct image_store *st, int argc, char **argv)
{
    struct errbuf err = {{0}};
    int rc = 0;

    if (argc < 2) {
        fprintf(stderr, "crucible image rm: give at least one REF\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        if (image_store_remove(st, argv[i], &err) < 0)
            rc = fail(&err);
        else
            printf("removed %s\n", argv[i]);
    }
    return rc;
}

static int do_gc(struct image_store *st)
{
    struct errbuf err = {{0}};
    struct image_gc_stats s;

    if (image_store_gc(st, &s, &err) < 0)
        return fail(&err);
    printf("removed %u blobs (%llu bytes), %u root filesystems, %u leftovers of imports\n", s.blobs,
           (unsigned long long)s.bytes, s.rootfs, s.tmp);
    return 0;
}

int cmd_image(int argc, char **argv)
{
    const char *state = NULL, *sub;
    struct image_store st;
    struct errbuf err = {{0}};
    int i = 1, rc;
    bool create;

    while (i < argc && argv[i][0] == '-') {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(argv[i], "--state-dir") == 0 && i + 1 < argc) {
            state = argv[i + 1];
            i += 2;
            continue;
        }
        fprintf(stderr, "crucible image: unknown option '%s' (see --help)\n", argv[i]);
        return 2;
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    sub = argv[i];
    /* --state-dir may follow the command too ("crucible image import --state-dir D ..."):
     * taken out here, so that each command sees only its own options */
    for (int k = i + 1, w = i + 1; k <= argc; k++) {
        if (k < argc && strcmp(argv[k], "--state-dir") == 0) {
            if (k + 1 >= argc) {
                fprintf(stderr, "crucible image: --state-dir needs a directory\n");
                return 2;
            }
            state = argv[++k];
            continue;
        }
        if (k == argc) {
            argc = w;
            break;
        }
        argv[w++] = argv[k];
    }
    for (int k = i + 1; k < argc; k++)
        if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
            usage(stdout);
            return 0;
        }
    create = strcmp(sub, "import") == 0;
    if (strcmp(sub, "import") != 0 && strcmp(sub, "list") != 0 && strcmp(sub, "inspect") != 0 &&
        strcmp(sub, "tag") != 0 && strcmp(sub, "rm") != 0 && strcmp(sub, "gc") != 0) {
        fprintf(stderr, "crucible image: unknown command '%s' (see --help)\n", sub);
        return 2;
    }
    if (image_store_open(&st, state, create, &err) < 0) {
        if (strcmp(sub, "list") == 0 && strstr(err.msg, "no image store")) {
            printf(argc > i + 1 && strcmp(argv[i + 1], "--json") == 0
                       ? "[]\n"
                       : "NAME                                     DIGEST              "
                         "        SIZE  IMPORTED\n");
            return 0;
        }
        return fail(&err);
    }
    argc -= i;
    argv += i;
    if (strcmp(sub, "import") == 0)
        rc = do_import(&st, argc, argv);
    else if (strcmp(sub, "list") == 0)
        rc = do_list(&st, argc, argv);
    else if (strcmp(sub, "inspect") == 0)
        rc = do_inspect(&st, argc, argv);
    else if (strcmp(sub, "tag") == 0)
        rc = do_tag(&st, argc, argv);
    else if (strcmp(sub, "rm") == 0)
        rc = do_rm(&st, argc, argv);
    else
        rc = do_gc(&st);
    image_store_close(&st);
    return rc;
}
