/*
 * metrics.h — counters, gauges and histograms, rendered in the Prometheus text format.
 *
 * A family is created on first use by name (the "crucible_" prefix is added here); each
 * distinct label string ("route=\"/v1/run\",code=\"200\"", already formatted, or "") is one
 * series. Thread-safe: one mutex, held for a lookup and an add.
 */
#ifndef CRUCIBLE_METRICS_H
#define CRUCIBLE_METRICS_H

#include <jansson.h>

struct metrics;

struct metrics *metrics_new(void);
void metrics_free(struct metrics *m);

/* metrics_add(m, name, help, labels, by) — a counter (name should end in _total). */
void metrics_add(struct metrics *m, const char *name, const char *help, const char *labels,
                 double by);
/* metrics_set_total(m, name, help, labels, v) — a counter kept elsewhere, copied in. */
void metrics_set_total(struct metrics *m, const char *name, const char *help, const char *labels,
                       double v);
/* metrics_set(m, name, help, labels, v) — a gauge. */
void metrics_set(struct metrics *m, const char *name, const char *help, const char *labels,
                 double v);
/* metrics_observe(m, name, help, labels, seconds) — a histogram with buckets from 100 µs
 * to 3600 s (jobs of up to an hour land in a finite bucket). */
void metrics_observe(struct metrics *m, const char *name, const char *help, const char *labels,
                     double seconds);

/* metrics_render(m) — the exposition text (Prometheus text format 0.0.4), malloc'd (caller
 * frees); NULL on ENOMEM. After m's families: crucible_build_info{version,commit} 1 and the
 * standard process_* families (CPU seconds, resident and virtual memory, open and max fds,
 * start time, threads) read from /proc/self at the call. */
char *metrics_render(struct metrics *m);

/* metrics_json(m) — the same families as a JSON object, for scripts and the dashboard:
 * {"crucible_NAME": {"type", "help", "series": [{"labels": {k: v}, "value"}]}}; a histogram's
 * series carry "count", "sum" and "buckets": [[le, cumulative count], ...] instead of "value"
 * (le null: +Inf). New reference (caller decrefs); NULL on ENOMEM. The values are those
 * metrics_render would print at the same moment. */
json_t *metrics_json(struct metrics *m);

/* metrics_label_escape(in, out, size) — a label value with \ " and newline escaped. */
void metrics_label_escape(const char *in, char *out, unsigned long size);

#endif
