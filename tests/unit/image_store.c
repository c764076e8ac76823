/* Unit tests for src/image/store.c and import.c: refs, lookups, directory and OCI imports,
 * digest checks, rm and gc; and sandbox/image.c resolving stored images for the CLI and a
 * server's registry. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/import.h"
#include "image/store.h"
#include "image_tar.h"
#include "sandbox/image.h"
#include "tap.h"

static char base[64];

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "w");

    if (f) {
        fwrite(data, 1, len, f);
        fclose(f);
    }
}

/* oci(path, layer_data, layer_len, bad) — an OCI archive of one uncompressed layer; bad
 * declares the layer with a wrong digest. Returns the manifest digest. */
static void oci(const char *path, const char *layer, size_t len, int bad, char *mdigest)
{
    char ld[DIGEST_LEN + 1], cd[DIGEST_LEN + 1], config[512], manifest[1024], index[1024];
    char name[128];
    struct tarbuf t;
    struct archive_entry *e;

    digest_buffer(layer, len, ld);
    snprintf(config, sizeof(config),
             "{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{\"Env\":[\"A=1\","
             "\"B=two\"],\"WorkingDir\":\"/w\"},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":"
             "[\"%s\"]}}",
             ld);
    digest_buffer(config, strlen(config), cd);
    snprintf(manifest, sizeof(manifest),
             "{\"schemaVersion\":2,\"config\":{\"digest\":\"%s\",\"size\":%zu},\"layers\":[{"
             "\"digest\":\"%s\",\"size\":%zu}]}",
             cd, strlen(config),
             bad ? "sha256:0000000000000000000000000000000000000000000000000000000000000000" : ld,
             len);
    digest_buffer(manifest, strlen(manifest), mdigest);
    snprintf(index, sizeof(index), "{\"manifests\":[{\"digest\":\"%s\",\"size\":%zu}]}", mdigest,
             strlen(manifest));
    tar_begin(&t, 1 << 20);
    tar_file(&t, "index.json", index);
    snprintf(name, sizeof(name), "blobs/sha256/%s", cd + 7);
    tar_file(&t, name, config);
    snprintf(name, sizeof(name), "blobs/sha256/%s", mdigest + 7);
    tar_file(&t, name, manifest);
    /* the layer is binary (NULs): written by hand */
    e = archive_entry_new();
    snprintf(name, sizeof(name), "blobs/sha256/%s", ld + 7);
    archive_entry_set_pathname(e, name);
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, (la_int64_t)len);
    archive_write_header(t.a, e);
    archive_write_data(t.a, layer, len);
    archive_entry_free(e);
    tar_end(&t);
    write_file(path, t.data, t.used);
    free(t.data);
}

int main(void)
{
    struct image_store st;
    struct image_import_opts o = {0};
    struct image_import_result res;
    struct errbuf err = {{0}};
    char state[128], path[256], ref[IMAGE_REF_MAX], digest[DIGEST_LEN + 1], d1[DIGEST_LEN + 1];
    char d2[DIGEST_LEN + 1], mdigest[DIGEST_LEN + 1];
    struct image_ref *refs;
    struct image_gc_stats gc;
    struct tarbuf layer;
    struct image img;
    size_t n;

    snprintf(base, sizeof(base), "/tmp/crucible-store-XXXXXX");
    if (!mkdtemp(base))
        return 1;
    snprintf(state, sizeof(state), "%s/state", base);

    /* names */
    ok(image_ref_normalize("a/b", ref, sizeof(ref), &err) == 0 && strcmp(ref, "a/b:latest") == 0,
       "NAME means NAME:latest");
    ok(image_ref_normalize("reg.io/a/b:v1.2", ref, sizeof(ref), &err) == 0 &&
           strcmp(ref, "reg.io/a/b:v1.2") == 0,
       "NAME:TAG with '/' and '.'");
    ok(image_ref_normalize("host", ref, sizeof(ref), &err) < 0 && strstr(err.msg, "reserved"),
       "'host' is reserved");
    ok(image_ref_normalize("a//b", ref, sizeof(ref), &err) < 0, "empty component refused");
    ok(image_ref_normalize("a:b c", ref, sizeof(ref), &err) < 0, "a space refused");
    ok(image_ref_normalize("../x", ref, sizeof(ref), &err) < 0, "'..' refused");
    ok(image_ref_normalize("a:", ref, sizeof(ref), &err) < 0, "empty tag refused");

    /* the default state directory */
    setenv("CRUCIBLE_STATE_DIR", "/some/where", 1);
    ok(image_store_state_dir(path, sizeof(path)) == 0 && strcmp(path, "/some/where") == 0,
       "CRUCIBLE_STATE_DIR wins");
    unsetenv("CRUCIBLE_STATE_DIR");
    ok(image_store_state_dir(path, sizeof(path)) == 0 &&
           (geteuid() != 0 || strcmp(path, "/var/lib/crucible") == 0),
       "root's default is /var/lib/crucible (%s)", path);

    ok(image_store_open(&st, state, false, &err) == -ENOENT && strstr(err.msg, "no image store"),
       "a missing store is not made by a reader (%s)", err.msg);
    ok(image_store_open(&st, state, true, &err) == 0, "a store is made (%s)", err.msg);

    /* a directory image */
    snprintf(path, sizeof(path), "%s/dir", base);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/dir/hello", base);
    write_file(path, "hi\n", 3);
    chmod(path, 04755);
    snprintf(path, sizeof(path), "%s/dir", base);
    o.name = "t/dir:1";
    ok(image_import_dir(&st, path, &o, &res, &err) == 0 && digest_valid(res.digest) &&
           res.stripped == 1,
       "a directory imports, its setuid bit stripped (%s)", err.msg);
    snprintf(d1, sizeof(d1), "%s", res.digest);
    image_store_close(&st);
    image_store_open(&st, state, true, &err);
    ok(image_import_dir(&st, path, &o, &res, &err) == 0 && res.existed &&
           strcmp(res.digest, d1) == 0,
       "the same directory is the same image");
    ok(image_store_lookup(&st, "t/dir:1", digest, &err) == 0 && strcmp(digest, d1) == 0,
       "NAME:TAG looks up its digest");
    ok(image_store_lookup(&st, d1, digest, &err) == 0, "the digest looks up itself");
    ok(image_store_lookup(&st, "t/dir:2", digest, &err) == -ENOENT && strstr(err.msg, "t/dir:2"),
       "an unknown tag names itself (%s)", err.msg);
    snprintf(path, sizeof(path), "%s/dir/more", base);
    write_file(path, "x", 1);
    snprintf(path, sizeof(path), "%s/dir", base);
    image_store_close(&st);
    image_store_open(&st, state, true, &err);
    ok(image_import_dir(&st, path, &o, &res, &err) == 0 && strcmp(res.digest, d1) != 0,
       "a changed directory is a new image under the same name");
    snprintf(d2, sizeof(d2), "%s", res.digest);
    ok(image_store_lookup(&st, "t/dir:1", digest, &err) == 0 && strcmp(digest, d2) == 0 &&
           image_store_has(&st, d1),
       "the tag moved; the old image stays");

    /* the CLI's and a server's resolution */
    setenv("CRUCIBLE_STATE_DIR", state, 1);
    ok(image_resolve("t/dir:1", &img, &err) == 0 && strcmp(img.digest, d2) == 0 &&
           strcmp(img.name, "t/dir:1") == 0 && strstr(img.root, d2 + 7),
       "image_resolve: NAME:TAG is the stored root, named as asked, its digest (%s)", err.msg);
    ok(image_resolve(d1, &img, &err) == 0 && strcmp(img.digest, d1) == 0,
       "image_resolve: sha256:<hex> of the old image");
    ok(image_resolve("t/none", &img, &err) < 0 && strstr(err.msg, "unknown image 't/none'"),
       "image_resolve: an unknown name (%s)", err.msg);
    {
        struct image host;
        struct image_registry *reg;
        const struct image *a, *b;
        image_resolve("host", &host, &err);
        reg = image_registry_new(&host);
        a = image_registry_find(reg, "t/dir:1", &err);
        b = image_registry_find(reg, "t/dir:1", &err);
        ok(a && a == b && strcmp(a->digest, d2) == 0, "registry: a stored image, resolved once");
        ok(image_registry_find(reg, d1, &err) != NULL, "registry: by digest");
        snprintf(path, sizeof(path), "%s/images/rootfs/%s", state, d1 + 7);
        ok(!image_registry_find(reg, path, &err) && strstr(err.msg, "host path"),
           "registry: the stored root by host path is still refused");
        ok(!image_registry_find(reg, "t/nope:1", &err) && strstr(err.msg, "crucible image import"),
           "registry: an unknown name says how to import one (%s)", err.msg);
        image_store_set_ref(&st, "t/dir:1", d1, &err);
        a = image_registry_find(reg, "t/dir:1", &err);
        ok(a && strcmp(a->digest, d1) == 0, "registry: a moved tag is seen at once");
        image_registry_free(reg);
    }
    unsetenv("CRUCIBLE_STATE_DIR");

    /* an OCI archive with its config's Env and WorkingDir */
    tar_begin(&layer, 1 << 16);
    tar_dir(&layer, "bin");
    tar_file(&layer, "bin/x", "x");
    tar_end(&layer);
    snprintf(path, sizeof(path), "%s/img.tar", base);
    oci(path, layer.data, layer.used, 0, mdigest);
    o.name = "t/oci";
    ok(image_import_archive(&st, path, &o, &res, &err) == 0 && strcmp(res.digest, mdigest) == 0 &&
           strcmp(res.ref, "t/oci:latest") == 0,
       "an OCI archive imports as its manifest digest (%s)", err.msg);
    setenv("CRUCIBLE_STATE_DIR", state, 1);
    ok(image_resolve("t/oci", &img, &err) == 0 && img.env_len == 11 &&
           memcmp(img.env, "A=1\0B=two\0\0", 11) == 0 && strcmp(img.workdir, "/w") == 0,
       "the image's Env (double-NUL list) and WorkingDir fill struct image (%s)", err.msg);
    unsetenv("CRUCIBLE_STATE_DIR");
    oci(path, layer.data, layer.used, 1, mdigest);
    o.name = "t/bad";
    ok(image_import_archive(&st, path, &o, &res, &err) < 0 && strstr(err.msg, "lacks the layer"),
       "a layer declared with another digest is refused (%s)", err.msg);
    ok(image_store_lookup(&st, "t/bad", digest, &err) < 0, "  and no ref was made");
    free(layer.data);
    snprintf(path, sizeof(path), "%s/not-a-tar", base);
    write_file(path, "hello", 5);
    ok(image_import_archive(&st, path, &o, &res, &err) < 0, "a file that is no archive is refused");

    /* refs, rm, gc */
    ok(image_store_refs(&st, &refs, &n, &err) == 0 && n == 2, "two refs (%zu)", n);
    free(refs);
    ok(image_store_remove(&st, "t/oci", &err) == 0 && !image_store_has(&st, mdigest),
       "rm of the last name removes the image");
    image_store_close(&st);
    image_store_open(&st, state, false, &err);
    ok(image_store_gc(&st, &gc, &err) == 0 && gc.blobs == 3, "gc removes its 3 blobs (%u)",
       gc.blobs);
    image_store_close(&st);
    image_store_open(&st, state, false, &err);
    ok(image_store_gc(&st, &gc, &err) == 0 && gc.blobs == 0 && gc.rootfs == 0,
       "a second gc finds nothing");
    ok(image_store_has(&st, d1) && image_store_has(&st, d2), "the directory images are kept");
    image_store_close(&st);
    image_store_open(&st, state, false, &err);
    ok(image_store_remove(&st, d2, &err) == 0 && !image_store_has(&st, d2),
       "rm sha256:<hex> removes an image without names");
    image_store_close(&st);

    {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
        if (system(cmd) != 0)
            diag("cannot remove %s", base);
    }
    return done_testing();
}
