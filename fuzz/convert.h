/*
 * convert.h — the dataset-converter targets (convert_*.c, kattis_package.c): the input is
 * written where convert_path reads it, in a scratch directory made once per process (and
 * removed at exit), and every task emitted is serialised as `tasks convert` prints it.
 */
#ifndef CRUCIBLE_FUZZ_CONVERT_H
#define CRUCIBLE_FUZZ_CONVERT_H

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <unistd.h>

#include "fuzz.h"
#include "library/convert.h"

static char fuzz_scratch[256];

static int fuzz_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path); /* best effort: a scratch directory */
    return 0;
}

/* fuzz_rm_tree(path) — removes path and everything below it (symlinks not followed). */
static inline void fuzz_rm_tree(const char *path)
{
    nftw(path, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void fuzz_scratch_remove(void)
{
    if (fuzz_scratch[0])
        fuzz_rm_tree(fuzz_scratch);
}

/* fuzz_scratch_dir() — the process's scratch directory. */
static inline const char *fuzz_scratch_dir(void)
{
    if (!fuzz_scratch[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fuzz_scratch, sizeof(fuzz_scratch), "%s/crucible-fuzz.XXXXXX",
                 tmp && *tmp && strlen(tmp) < 200 ? tmp : "/tmp");
        if (!mkdtemp(fuzz_scratch)) {
            perror("fuzz: mkdtemp");
            abort();
        }
        atexit(fuzz_scratch_remove);
    }
    return fuzz_scratch;
}

/* fuzz_write(path, data, size) — the file path holding exactly data. */
static inline void fuzz_write(const char *path, const void *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size)) {
        perror("fuzz: write");
        abort();
    }
    close(fd);
}

static int fuzz_emit(json_t *task, void *arg)
{
    char *s = json_dumps(task, JSON_COMPACT);

    (void)arg;
    free(s);
    return 0;
}

/* fuzz_convert(format, path) — convert_path over path, bad records reported to /dev/null. */
static inline void fuzz_convert(enum convert_format format, const char *path)
{
    static FILE *devnull;
    struct convert_opts o = {.format = format};
    struct convert_stats st;
    struct errbuf err = {{0}};

    if (!devnull && !(devnull = fopen("/dev/null", "w")))
        abort();
    convert_path(&o, path, fuzz_emit, NULL, devnull, &st, &err);
}

/* fuzz_convert_file(format, name, data, size) — the input as the file NAME, converted. */
static inline void fuzz_convert_file(enum convert_format format, const char *name,
                                     const uint8_t *data, size_t size)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/%s", fuzz_scratch_dir(), name);
    fuzz_write(path, data, size);
    fuzz_convert(format, path);
}

#endif
