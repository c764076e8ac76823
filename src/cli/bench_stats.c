/*
 * bench_stats.c — samples, their summary, and the machine's description for `crucible bench`
 * (bench_stats.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli/bench_stats.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

int bench_samples_add(struct bench_samples *s, double ms)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        double *v = realloc(s->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = ms;
    return 0;
}

void bench_samples_release(struct bench_samples *s)
{
    free(s->v);
    *s = (struct bench_samples){0};
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* percentile(v, n, p) — of sorted v, interpolated between the closest ranks. */
static double percentile(const double *v, size_t n, double p)
{
    double rank = p * (double)(n - 1);
    size_t lo = (size_t)rank, hi = lo + 1 < n ? lo + 1 : lo;

    return v[lo] + (v[hi] - v[lo]) * (rank - (double)lo);
}

bool bench_summarize(struct bench_samples *s, struct bench_summary *sum)
{
    double total = 0;

    if (s->n == 0)
        return false;
    qsort(s->v, s->n, sizeof(*s->v), cmp_double);
    for (size_t i = 0; i < s->n; i++)
        total += s->v[i];
    sum->median = percentile(s->v, s->n, 0.5);
    sum->p90 = percentile(s->v, s->n, 0.9);
    sum->mean = total / (double)s->n;
    sum->n = s->n;
    return true;
}

/* proc_field(path, key, out, size) — the value of "key<spaces>: value" in a /proc file. */
static bool proc_field(const char *path, const char *key, char *out, size_t size)
{
    FILE *f = fopen(path, "re");
    size_t klen = strlen(key);
    char line[512];
    bool found = false;

    if (!f)
        return false;
    while (!found && fgets(line, sizeof(line), f)) {
        char *p = line + klen;
        if (strncmp(line, key, klen) != 0 || (*p != ' ' && *p != '\t' && *p != ':'))
            continue;
        p += strspn(p, " \t");
        if (*p++ != ':')
            continue;
        p += strspn(p, " \t");
        p[strcspn(p, "\n")] = '\0';
        snprintf(out, size, "%s", p);
        found = true;
    }
    fclose(f);
    return found;
}

/* cgroup_version() — how /sys/fs/cgroup is mounted. */
static const char *cgroup_version(void)
{
    struct statfs st;

    if (statfs("/sys/fs/cgroup", &st) < 0)
        return "none";
    if ((unsigned long)st.f_type == CGROUP2_SUPER_MAGIC)
        return "v2";
    if ((unsigned long)st.f_type != TMPFS_MAGIC)
        return "none";
    if (statfs("/sys/fs/cgroup/unified", &st) == 0 &&
        (unsigned long)st.f_type == CGROUP2_SUPER_MAGIC)
        return "hybrid";
    return "v1";
}

void bench_machine_read(struct bench_machine *m)
{
    struct utsname u;
    char mem[64];

    memset(m, 0, sizeof(*m));
    if (uname(&u) == 0)
        snprintf(m->kernel, sizeof(m->kernel), "%s %s", u.sysname, u.release);
    else
        snprintf(m->kernel, sizeof(m->kernel), "unknown");
    m->cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (!proc_field("/proc/cpuinfo", "model name", m->model, sizeof(m->model)))
        snprintf(m->model, sizeof(m->model), "unknown");
    if (proc_field("/proc/meminfo", "MemTotal", mem, sizeof(mem)))
        m->memory_mb = strtoull(mem, NULL, 10) / 1024; /* "16318432 kB" */
    snprintf(m->cgroup, sizeof(m->cgroup), "%s", cgroup_version());
    m->load[0] = m->load[1] = bench_load();
}

double bench_load(void)
{
    double l;

    return getloadavg(&l, 1) == 1 ? l : -1;
}
