/*
 * image_tar.h — building tar archives in memory for the image unit tests (libarchive's
 * writer): tar_begin, tar_file / tar_dir / tar_link / tar_hardlink / tar_special, tar_end.
 */
#ifndef CRUCIBLE_TEST_IMAGE_TAR_H
#define CRUCIBLE_TEST_IMAGE_TAR_H

#include <archive.h>
#include <archive_entry.h>
#include <stdlib.h>
#include <string.h>

struct tarbuf {
    struct archive *a;
    char *data;
    size_t cap, used;
};

static inline void tar_begin(struct tarbuf *t, size_t cap)
{
    t->cap = cap;
    t->data = calloc(1, cap);
    t->used = 0;
    t->a = archive_write_new();
    archive_write_set_format_pax_restricted(t->a);
    archive_write_set_bytes_in_last_block(t->a, 1);
    archive_write_open_memory(t->a, t->data, t->cap, &t->used);
}

static inline void tar_entry(struct tarbuf *t, const char *name, mode_t type, mode_t perm,
                             const char *data, const char *link, int hard)
{
    struct archive_entry *e = archive_entry_new();
    size_t len = data ? strlen(data) : 0;

    archive_entry_set_pathname(e, name);
    archive_entry_set_filetype(e, type);
    archive_entry_set_perm(e, perm);
    archive_entry_set_size(e, type == AE_IFREG && !hard ? (la_int64_t)len : 0);
    if (link && hard)
        archive_entry_set_hardlink(e, link);
    else if (link)
        archive_entry_set_symlink(e, link);
    archive_write_header(t->a, e);
    if (len && !hard)
        archive_write_data(t->a, data, len);
    archive_entry_free(e);
}

#define tar_file(t, name, data)        tar_entry(t, name, AE_IFREG, 0644, data, NULL, 0)
#define tar_mode(t, name, data, perm)  tar_entry(t, name, AE_IFREG, perm, data, NULL, 0)
#define tar_dir(t, name)               tar_entry(t, name, AE_IFDIR, 0755, NULL, NULL, 0)
#define tar_link(t, name, target)      tar_entry(t, name, AE_IFLNK, 0777, NULL, target, 0)
#define tar_hardlink(t, name, target)  tar_entry(t, name, AE_IFREG, 0644, NULL, target, 1)
#define tar_special(t, name, type)     tar_entry(t, name, type, 0644, NULL, NULL, 0)

/* tar_end(t) — closes the writer; t->data / t->used hold the archive (caller frees data). */
static inline void tar_end(struct tarbuf *t)
{
    archive_write_close(t->a);
    archive_write_free(t->a);
}

#endif
