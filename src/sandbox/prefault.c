/*
 * prefault.c — the pages a fork is going to write, learned from a trial fork's page map and
 * copied ahead (see prefault.h).
 */
#include "sandbox/prefault.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* /proc/PID/pagemap's entry bits (Documentation/admin-guide/mm/pagemap.rst) */
#define PM_PRESENT        (1ULL << 63)
#define PM_FILE_OR_SHARED (1ULL << 61)
#define PM_EXCLUSIVE      (1ULL << 56)

/* The largest mapping whose page map is read. */
#define PREFAULT_MAX_SCAN ((uintptr_t)256 << 20)

struct pages {
    uintptr_t *v;
    size_t n, cap;
};

static int pages_add(struct pages *p, uintptr_t page)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 1024;
        uintptr_t *v = realloc(p->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = page;
    return 0;
}

static int cmp_page(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* scan_range(pm, start, end, psz, out) — the pages of [start, end) the child holds as its own
 * anonymous copies, from its page map pm. 0 or -errno. */
static int scan_range(int pm, uintptr_t start, uintptr_t end, size_t psz, struct pages *out)
{
    uint64_t entries[512];

    for (uintptr_t at = start; at < end && out->n < PREFAULT_MAX_PAGES;) {
        size_t want = (end - at) / psz;
        ssize_t got;

        if (want > sizeof(entries) / sizeof(entries[0]))
            want = sizeof(entries) / sizeof(entries[0]);
        got = pread(pm, entries, want * sizeof(entries[0]), (off_t)(at / psz * sizeof(entries[0])));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got < 0 ? -errno : 0;
        for (size_t i = 0; i < (size_t)got / sizeof(entries[0]); i++) {
            uint64_t e = entries[i];
            if ((e & PM_PRESENT) && (e & PM_EXCLUSIVE) && !(e & PM_FILE_OR_SHARED) &&
                out->n < PREFAULT_MAX_PAGES && pages_add(out, at + i * psz) < 0)
                return -ENOMEM;
        }
        at += (size_t)got / sizeof(entries[0]) * psz;
    }
    return 0;
}

/* runs_of(pf, p, psz) — pf's runs rebuilt from the sorted page list p (duplicates merged). */
static int runs_of(struct prefault *pf, const struct pages *p, size_t psz)
{
    struct prefault_run *runs = NULL;
    size_t n = 0, npages = 0;

    for (size_t i = 0; i < p->n; i++) {
        if (i > 0 && p->v[i] == p->v[i - 1])
            continue;
        npages++;
        if (n > 0 && runs[n - 1].start + runs[n - 1].len == p->v[i]) {
            runs[n - 1].len += psz;
            continue;
        }
        if ((n & (n - 1)) == 0) { /* n a power of two (or 0): grow */
            struct prefault_run *r = realloc(runs, (n ? n * 2 : 1) * sizeof(*r));
            if (!r) {
                free(runs);
                return -ENOMEM;
            }
            runs = r;
        }
        runs[n++] = (struct prefault_run){p->v[i], psz};
    }
    free(pf->runs);
    *pf = (struct prefault){.runs = runs, .nruns = n, .npages = npages};
    return 0;
}

int prefault_learn(struct prefault *pf, pid_t child, struct errbuf *err)
{
    size_t psz = (size_t)sysconf(_SC_PAGESIZE);
    struct pages p = {0};
    char path[64], *line = NULL;
    size_t cap = 0;
    FILE *maps;
    int pm, r = 0;

    /* what was learned before, then this child's */
    for (size_t i = 0; i < pf->nruns; i++)
        for (uintptr_t a = pf->runs[i].start; a < pf->runs[i].start + pf->runs[i].len; a += psz)
            if ((r = pages_add(&p, a)) < 0) {
                errbuf_set(err, "out of memory");
                goto out;
            }
    snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)child);
    if ((pm = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        r = -errno;
        errbuf_set(err, "cannot open %s: %s", path, strerror(errno));
        goto out;
    }
    if (!(maps = fopen("/proc/self/maps", "re"))) {
        r = -errno;
        errbuf_set(err, "cannot open /proc/self/maps: %s", strerror(errno));
        close(pm);
        goto out;
    }
    /* the parent's private writable mappings: a later fork has the same. Not those of more
     * than PREFAULT_MAX_SCAN (a sanitizer's shadow memory is terabytes of reserved space). */
    while (r == 0 && getline(&line, &cap, maps) > 0) {
        uintptr_t start, end;
        char perms[5];
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s", &start, &end, perms) != 3 ||
            perms[1] != 'w' || perms[3] != 'p' || end - start > PREFAULT_MAX_SCAN)
            continue;
        if ((r = scan_range(pm, start, end, psz, &p)) < 0)
            errbuf_set(err, "cannot read %s: %s", path, strerror(-r));
    }
    free(line);
    fclose(maps);
    close(pm);
    if (r == 0) {
        qsort(p.v, p.n, sizeof(*p.v), cmp_page);
        if ((r = runs_of(pf, &p, psz)) < 0)
            errbuf_set(err, "out of memory");
    }
out:
    free(p.v);
    return r;
}

void prefault_apply(const struct prefault *pf)
{
    for (size_t i = 0; i < pf->nruns; i++)
        if (madvise((void *)pf->runs[i].start, pf->runs[i].len, MADV_POPULATE_WRITE) < 0 &&
            errno == EINVAL)
            break; /* a kernel before 5.14: nothing can be copied ahead */
}
