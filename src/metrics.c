/*
 * metrics.c — see metrics.h. Families and series live in small arrays searched linearly:
 * a service has tens of series, and renders them a few times a minute.
 */
#include "metrics.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind { COUNTER, GAUGE, HISTOGRAM };

static const double buckets[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                 0.1,    0.25,    0.5,    1,     2.5,    5,     10,   30,    60};
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
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
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
