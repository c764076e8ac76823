/*
 * replay.c — a main() for a fuzz target built without libFuzzer: runs the target once over
 * each file named, and over every regular file in each directory named (in name order), so
 * the inputs a fuzzer once crashed on (fuzz/regress/NAME/) are replayed by `make check` with
 * whatever compiler and sanitizers the suite is built with.
 *
 * Without AddressSanitizer (whose leak checker reports at exit), each input runs twice more
 * and the heap in use (mallinfo2) must not grow from the one run to the other: a leak fails
 * the plain gcc build too. The first run is the warm-up (a target's statics, stdio buffers).
 * glibc counts chunks cached in its per-thread tcache as in use, so the process re-executes
 * itself with the tcache off (GLIBC_TUNABLES) first.
 *
 * Usage: NAME PATH...   Exits 0 after printing "NAME: N inputs"; a crash, a sanitizer
 * report or an abort inside the target is the failure; 1 on a leak; 2 when a path cannot be
 * read.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

#if defined(__SANITIZE_ADDRESS__)
#define HEAP_CHECK 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEAP_CHECK 0
#endif
#endif
#ifndef HEAP_CHECK
#define HEAP_CHECK 1
#include <malloc.h>
#endif

/* run(data, len) — the target once; the growth of the heap in use over the run (0 when the
 * heap is not checked). */
static long run(const uint8_t *data, size_t len)
{
#if HEAP_CHECK
    size_t before = mallinfo2().uordblks;
    LLVMFuzzerTestOneInput(data, len);
    return (long)(mallinfo2().uordblks - before);
#else
    LLVMFuzzerTestOneInput(data, len);
    return 0;
#endif
}

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, n;

    if (!f) {
        fprintf(stderr, "replay: cannot open '%s': %s\n", path, strerror(errno));
        return -1;
    }
    do {
        if (len == cap) {
            uint8_t *p = realloc(buf, cap = cap ? 2 * cap : 65536);
            if (!p) {
                fprintf(stderr, "replay: '%s': out of memory\n", path);
                free(buf);
                fclose(f);
                return -1;
            }
            buf = p;
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    fclose(f);
    /* A copy of exactly len bytes: reading past the input is a bug ASan should see. */
    {
        uint8_t *exact = malloc(len ? len : 1);
        if (!exact) {
            free(buf);
            return -1;
        }
        memcpy(exact, buf, len);
        free(buf);
        fprintf(stderr, "replay: %s\n", path);
        run(exact, len);
        if (HEAP_CHECK) {
            long grew = run(exact, len);
            if (grew > 0 && (grew = run(exact, len)) > 0) {
                fprintf(stderr, "replay: '%s' leaks: the heap grows by %ld bytes a run\n", path,
                        grew);
                free(exact);
                return 1;
            }
        }
        free(exact);
    }
    return 0;
}

static int not_hidden(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

int main(int argc, char **argv)
{
    const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    unsigned count = 0;
    int rc;

    if (HEAP_CHECK && argc > 0) {
        const char *t = getenv("GLIBC_TUNABLES");
        if (!t || !strstr(t, "glibc.malloc.tcache_count=0")) {
            char tunables[1024];
            snprintf(tunables, sizeof(tunables), "%s%sglibc.malloc.tcache_count=0", t ? t : "",
                     t && *t ? ":" : "");
            setenv("GLIBC_TUNABLES", tunables, 1);
            execv("/proc/self/exe", argv);
            perror("replay: re-executing with the tcache off");
            return 2;
        }
    }

    for (int i = 1; i < argc; i++) {
        struct stat st;
        struct dirent **ents;
        int n;

        if (stat(argv[i], &st) < 0) {
            fprintf(stderr, "replay: cannot stat '%s': %s\n", argv[i], strerror(errno));
            return 2;
        }
        if (!S_ISDIR(st.st_mode)) {
            if ((rc = replay_file(argv[i])) != 0)
                return rc < 0 ? 2 : 1;
            count++;
            continue;
        }
        if ((n = scandir(argv[i], &ents, not_hidden, alphasort)) < 0) {
            fprintf(stderr, "replay: cannot list '%s': %s\n", argv[i], strerror(errno));
            return 2;
        }
        for (int k = 0; k < n; k++) {
            char path[4096];
            struct stat fst;
            size_t dl = strlen(argv[i]);
            snprintf(path, sizeof(path), "%.*s/%s",
                     (int)(dl > 1 && argv[i][dl - 1] == '/' ? dl - 1 : dl), argv[i],
                     ents[k]->d_name);
            if (stat(path, &fst) == 0 && S_ISREG(fst.st_mode)) {
                if ((rc = replay_file(path)) != 0)
                    return rc < 0 ? 2 : 1;
                count++;
            }
            free(ents[k]);
        }
        free(ents);
    }
    printf("%s: %u inputs\n", name, count);
    return 0;
}
