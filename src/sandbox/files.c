/*
 * files.c — a live sandbox's files (see files.h). Placeholder while the module is written:
 * every call answers -ENOSYS.
 */
#include <errno.h>

#include "sandbox/files.h"

int sandbox_file_write(struct sandbox *sb, const char *path, const void *data, size_t len,
                       mode_t mode, struct errbuf *err)
{
    (void)sb, (void)path, (void)data, (void)len, (void)mode;
    errbuf_set(err, "not implemented");
    return -ENOSYS;
}

int sandbox_file_read(struct sandbox *sb, const char *path, size_t max, char **data, size_t *len,
                      struct errbuf *err)
{
    (void)sb, (void)path, (void)max, (void)data, (void)len;
    errbuf_set(err, "not implemented");
    return -ENOSYS;
}

int sandbox_file_list(struct sandbox *sb, const char *path, size_t max,
                      struct sandbox_dirent **ents, size_t *n, struct errbuf *err)
{
    (void)sb, (void)path, (void)max, (void)ents, (void)n;
    errbuf_set(err, "not implemented");
    return -ENOSYS;
}

void sandbox_dirents_free(struct sandbox_dirent *ents, size_t n)
{
    (void)ents, (void)n;
}

int sandbox_file_put_tar(struct sandbox *sb, const char *dir, const void *tar, size_t len,
                         struct errbuf *err)
{
    (void)sb, (void)dir, (void)tar, (void)len;
    errbuf_set(err, "not implemented");
    return -ENOSYS;
}

int sandbox_file_get_tar(struct sandbox *sb, const char *dir, size_t max, char **tar, size_t *len,
                         struct errbuf *err)
{
    (void)sb, (void)dir, (void)max, (void)tar, (void)len;
    errbuf_set(err, "not implemented");
    return -ENOSYS;
}
