/*
 * image_import.c — fuzz target: the image store's archive readers (image/import.h,
 * image/unpack.h). The first byte picks the path: even, the rest is an OCI or docker-save
 * tarball imported into a scratch store (then removed and garbage-collected, so every input
 * starts from an empty store); odd, the rest is one layer (any compression libarchive
 * detects) applied to an empty root. Whatever the input, nothing may be written outside the
 * scratch directory, and the store must be empty again afterwards.
 */
#include <archive.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "image/import.h"
#include "image/store.h"
#include "image/unpack.h"

static char scratch[256];

static void setup(void)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(scratch, sizeof(scratch), "%s/crucible-fuzz-image-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(scratch))
        abort();
}

static void as_archive(const uint8_t *data, size_t size)
{
    struct image_import_opts o = {.name = "fuzz/img:t", .lim = {8u << 20, 5000}};
    struct image_import_result res;
    struct image_gc_stats gc;
    struct image_store st;
    struct errbuf err = {{0}};
    char path[300], state[300];
    FILE *f;

    snprintf(path, sizeof(path), "%s/in.tar", scratch);
    snprintf(state, sizeof(state), "%s/state", scratch);
    if (!(f = fopen(path, "w")))
        abort();
    fwrite(data, 1, size, f);
    fclose(f);
    if (image_store_open(&st, state, true, &err) < 0)
        abort();
    if (image_import_archive(&st, path, &o, &res, &err) == 0 &&
        image_store_remove(&st, res.digest, &err) < 0)
        abort();
    image_store_close(&st);
    if (image_store_open(&st, state, false, &err) < 0 || image_store_gc(&st, &gc, &err) < 0)
        abort();
    image_store_close(&st);
}

static void as_layer(const uint8_t *data, size_t size)
{
    struct unpack u = {.lim = {8u << 20, 5000}};
    struct errbuf err = {{0}};
    struct archive *a = archive_read_new();
    char root[300];

    snprintf(root, sizeof(root), "%s/root", scratch);
    unpack_remove_tree(AT_FDCWD, root);
    if (!a || mkdir(root, 0755) < 0 || (u.rootfd = open(root, O_RDONLY | O_DIRECTORY)) < 0)
        abort();
    archive_read_support_filter_all(a);
    archive_read_support_format_tar(a);
    if (archive_read_open_memory(a, data, size) == ARCHIVE_OK && unpack_layer(&u, a, &err) == 0)
        unpack_finish(&u, &err);
    archive_read_free(a);
    unpack_release(&u);
    close(u.rootfd);
    unpack_remove_tree(AT_FDCWD, root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!scratch[0])
        setup();
    if (size < 1)
        return 0;
    if (data[0] & 1)
        as_layer(data + 1, size - 1);
    else
        as_archive(data + 1, size - 1);
    return 0;
}
