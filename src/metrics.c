/*
 * metrics.c — see metrics.h. Families and series live in small arrays searched linearly:
 * a service has tens of series, and renders them a few times a minute. The process_*
 * families are read from /proc/self on each render, as the Prometheus client libraries'
 * process collector does.
 */
#include "metrics.h"

#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "commit.h" /* build/gen/commit.h: CRUCIBLE_COMMIT */
#include "version.h"

enum kind { COUNTER, GAUGE, HISTOGRAM };

/* From 100 µs (a warm sandbox's spawn) to an hour (a verification's longest wall time). */
static const double buckets[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                 0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10,
                                 30,     60,      120,    300,   600,    1800,  3600};
#define NBUCKETS (sizeof(buckets) / sizeof(buckets[0]))

struct series {
    char *labels;
    double value; /* counter, gauge; histogram: sum */
    unsigned long long count, bucket[NBUCKETS];
};

struct family {
    char *name, *help;
    enum kind kind;
    struct series *s;
    size_t n;
};

struct metrics {
    pthread_mutex_t mu;
    struct family *f;
    size_t n;
};

struct metrics *metrics_new(void)
{
    struct metrics *m = calloc(1, sizeof(*m));

    if (m)
        pthread_mutex_init(&m->mu, NULL);
    return m;
}

void metrics_free(struct metrics *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        for (size_t k = 0; k < m->f[i].n; k++)
            free(m->f[i].s[k].labels);
        free(m->f[i].s);
        free(m->f[i].name);
        free(m->f[i].help);
    }
    free(m->f);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

/* series_of(m, name, help, kind, labels) — with mu held; NULL on ENOMEM (the sample is
 * dropped: metrics never fail a request). */
static struct series *series_of(struct metrics *m, const char *name, const char *help,
                                enum kind kind, const char *labels)
{
    struct family *f = NULL;
    struct series *s;

    for (size_t i = 0; i < m->n && !f; i++)
        if (strcmp(m->f[i].name + 9, name) == 0)
            f = &m->f[i];
    if (!f) {
        struct family *nf = realloc(m->f, (m->n + 1) * sizeof(*nf));
        size_t len = strlen(name) + 10;
        if (!nf)
            return NULL;
        m->f = nf;
        f = &m->f[m->n];
        memset(f, 0, sizeof(*f));
        f->name = malloc(len);
        f->help = strdup(help);
        if (!f->name || !f->help) {
            free(f->name);
            free(f->help);
            return NULL;
        }
        snprintf(f->name, len, "crucible_%s", name);
        f->kind = kind;
        m->n++;
    }
    for (size_t k = 0; k < f->n; k++)
        if (strcmp(f->s[k].labels, labels ? labels : "") == 0)
            return &f->s[k];
    s = realloc(f->s, (f->n + 1) * sizeof(*s));
    if (!s)
        return NULL;
    f->s = s;
    s = &f->s[f->n];
    memset(s, 0, sizeof(*s));
    if (!(s->labels = strdup(labels ? labels : "")))
        return NULL;
    f->n++;
    return s;
}

void metrics_add(struct metrics *m, const char *name, const char *help, const char *labels,
                 double by)
{
    struct series *s;

    pthread_mutex_lock(&m->mu);
    if ((s = series_of(m, name, help, COUNTER, labels)))
        s->value += by;
    pthread_mutex_unlock(&m->mu);
}

void metrics_set(struct metrics *m, const char *name, const char *help, const char *labels,
                 double v)
{
    struct series *s;

    pthread_mutex_lock(&m->mu);
    if ((s = series_of(m, name, help, GAUGE, labels)))
        s->value = v;
    pthread_mutex_unlock(&m->mu);
}

void metrics_set_total(struct metrics *m, const char *name, const char *help, const char *labels,
                       double v)
{
    struct series *s;

    pthread_mutex_lock(&m->mu);
    if ((s = series_of(m, name, help, COUNTER, labels)))
        s->value = v;
    pthread_mutex_unlock(&m->mu);
}

void metrics_observe(struct metrics *m, const char *name, const char *help, const char *labels,
                     double seconds)
{
    struct series *s;

    pthread_mutex_lock(&m->mu);
    if ((s = series_of(m, name, help, HISTOGRAM, labels))) {
        s->value += seconds;
        s->count++;
        for (size_t b = 0; b < NBUCKETS; b++)
            if (seconds <= buckets[b])
                s->bucket[b]++;
    }
    pthread_mutex_unlock(&m->mu);
}

/* sample(f, name, suffix, labels, extra, value) — one line: name{labels,extra} value. */
static void sample(FILE *f, const char *name, const char *suffix, const char *labels,
                   const char *extra, double value)
{
    bool any = labels[0] || extra[0];

    fprintf(f, "%s%s%s%s%s%s%s %.17g\n", name, suffix, any ? "{" : "", labels,
            labels[0] && extra[0] ? "," : "", extra, any ? "}" : "", value);
}

/* gauge(f, name, help, type, value) — a family of one unlabelled sample. */
static void gauge(FILE *f, const char *name, const char *help, const char *type, double value)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type, name, value);
}

/* render_build_info(f) — crucible_build_info{version, commit} 1 (commit left out when the
 * build did not know it). */
static void render_build_info(FILE *f)
{
    fprintf(f,
            "# HELP crucible_build_info the crucible release and commit serving (always 1)\n"
            "# TYPE crucible_build_info gauge\n"
            "crucible_build_info{version=\"%s\"%s%s%s} 1\n",
            CRUCIBLE_VERSION, CRUCIBLE_COMMIT[0] ? ",commit=\"" : "", CRUCIBLE_COMMIT,
            CRUCIBLE_COMMIT[0] ? "\"" : "");
}

/* boot_time() — seconds since the epoch when the host booted (/proc/stat btime), or -1. */
static double boot_time(void)
{
    FILE *f = fopen("/proc/stat", "re");
    char line[256];
    double t = -1;

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "btime %lf", &t) == 1)
            break;
    fclose(f);
    return t;
}

/* open_fds() — the descriptors this process holds (the listing's own not counted), or -1. */
static double open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    double n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
            n++;
    closedir(d);
    return n;
}

/* render_process(f) — the process_* families of the Prometheus client libraries, read from
 * /proc/self now; a family whose source cannot be read is left out. */
static void render_process(FILE *f)
{
    unsigned long long utime, stime, start, vsize;
    long threads, rss, tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    char buf[1024], *p = NULL;
    FILE *st = fopen("/proc/self/stat", "re");
    struct rlimit rl;
    double v, btime;
    size_t n = 0;

    if (st) {
        n = fread(buf, 1, sizeof(buf) - 1, st);
        fclose(st);
    }
    buf[n] = '\0';
    /* comm may hold spaces and parentheses: the fields start after the last ')'. Field 3
     * (state) onwards; utime 14, stime 15, num_threads 20, starttime 22, vsize 23, rss 24. */
    if ((p = strrchr(buf, ')')) && tick > 0 &&
        sscanf(p + 1,
               " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %ld %*d "
               "%llu %llu %ld",
               &utime, &stime, &threads, &start, &vsize, &rss) == 6) {
        gauge(f, "process_cpu_seconds_total", "user and system CPU time spent in seconds",
              "counter", (double)(utime + stime) / (double)tick);
        gauge(f, "process_virtual_memory_bytes", "virtual memory size in bytes", "gauge",
              (double)vsize);
        gauge(f, "process_resident_memory_bytes", "resident memory size in bytes", "gauge",
              (double)rss * (double)page);
        if ((btime = boot_time()) >= 0)
            gauge(f, "process_start_time_seconds",
                  "start time of the process since the unix epoch in seconds", "gauge",
                  btime + (double)start / (double)tick);
        gauge(f, "process_threads", "threads in the process", "gauge", (double)threads);
    }
    if ((v = open_fds()) >= 0)
        gauge(f, "process_open_fds", "open file descriptors", "gauge", v);
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        gauge(f, "process_max_fds", "the most open file descriptors (the soft limit)", "gauge",
              rl.rlim_cur == RLIM_INFINITY ? 1.8446744073709552e19 : (double)rl.rlim_cur);
}

char *metrics_render(struct metrics *m)
{
    static const char *const kinds[] = {"counter", "gauge", "histogram"};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    if (!f)
        return NULL;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->n; i++) {
        const struct family *fam = &m->f[i];
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", fam->name, fam->help, fam->name,
                kinds[fam->kind]);
        for (size_t k = 0; k < fam->n; k++) {
            const struct series *s = &fam->s[k];
            if (fam->kind != HISTOGRAM) {
                sample(f, fam->name, "", s->labels, "", s->value);
                continue;
            }
            for (size_t b = 0; b < NBUCKETS; b++) {
                char le[32];
                snprintf(le, sizeof(le), "le=\"%g\"", buckets[b]);
                sample(f, fam->name, "_bucket", s->labels, le, (double)s->bucket[b]);
            }
            sample(f, fam->name, "_bucket", s->labels, "le=\"+Inf\"", (double)s->count);
            sample(f, fam->name, "_sum", s->labels, "", s->value);
            sample(f, fam->name, "_count", s->labels, "", (double)s->count);
        }
    }
    pthread_mutex_unlock(&m->mu);
    render_build_info(f);
    render_process(f);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* labels_json(labels) — a series' label string (k="v",k2="v2", values escaped as
 * metrics_label_escape does) as an object; NULL on ENOMEM or a string this file did not
 * write. */
static json_t *labels_json(const char *labels)
{
    json_t *o = json_object();
    const char *p = labels;
    char key[64], *val = malloc(strlen(labels) + 1);

    if (!o || !val)
        goto bad;
    while (*p) {
        size_t k = 0, v = 0;
        while (*p && *p != '=' && k + 1 < sizeof(key))
            key[k++] = *p++;
        key[k] = '\0';
        if (p[0] != '=' || p[1] != '"')
            goto bad;
        for (p += 2; *p && *p != '"'; p++) {
            if (*p == '\\' && p[1]) {
                p++;
                val[v++] = *p == 'n' ? '\n' : *p;
            } else {
                val[v++] = *p;
            }
        }
        val[v] = '\0';
        if (*p != '"' || json_object_set_new(o, key, json_string(val)) < 0)
            goto bad;
        if (*++p == ',')
            p++;
    }
    free(val);
    return o;
bad:
    free(val);
    json_decref(o);
    return NULL;
}

/* series_json(kind, s) — one series as metrics_json describes it. */
static json_t *series_json(enum kind kind, const struct series *s)
{
    json_t *o = json_object(), *b;

    if (!o || json_object_set_new(o, "labels", labels_json(s->labels)) < 0)
        goto bad;
    if (kind != HISTOGRAM) {
        if (json_object_set_new(o, "value", json_real(s->value)) < 0)
            goto bad;
        return o;
    }
    if (!(b = json_array()) || json_object_set_new(o, "buckets", b) < 0 ||
        json_object_set_new(o, "count", json_integer((json_int_t)s->count)) < 0 ||
        json_object_set_new(o, "sum", json_real(s->value)) < 0)
        goto bad;
    for (size_t i = 0; i < NBUCKETS; i++)
        if (json_array_append_new(b, json_pack("[f,I]", buckets[i], (json_int_t)s->bucket[i])) < 0)
            goto bad;
    if (json_array_append_new(b, json_pack("[n,I]", (json_int_t)s->count)) < 0)
        goto bad;
    return o;
bad:
    json_decref(o);
    return NULL;
}

json_t *metrics_json(struct metrics *m)
{
    static const char *const kinds[] = {"counter", "gauge", "histogram"};
    json_t *all = json_object();

    if (!all)
        return NULL;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->n; i++) {
        const struct family *fam = &m->f[i];
        json_t *series = json_array();
        if (!series || json_object_set_new(all, fam->name,
                                           json_pack("{s:s,s:s,s:o}", "type", kinds[fam->kind],
                                                     "help", fam->help, "series", series)) < 0)
            goto bad;
        for (size_t k = 0; k < fam->n; k++)
            if (json_array_append_new(series, series_json(fam->kind, &fam->s[k])) < 0)
                goto bad;
    }
    pthread_mutex_unlock(&m->mu);
    return all;
bad:
    pthread_mutex_unlock(&m->mu);
    json_decref(all);
    return NULL;
}

void metrics_label_escape(const char *in, char *out, unsigned long size)
{
    size_t o = 0;

    for (; *in && o + 3 < size; in++) {
        if (*in == '\\' || *in == '"') {
            out[o++] = '\\';
            out[o++] = *in;
        } else if (*in == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else {
            out[o++] = *in;
        }
    }
    out[o] = '\0';
}
