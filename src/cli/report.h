/*
 * report.h — an evaluation's report as one self-contained HTML file (no script, no file or
 * address outside it): the verdict mix, pass rates per tag and per language, the slowest
 * tests, the failures grouped by their message, and, given a baseline (the records of an
 * earlier checkpoint), the tasks newly solved and newly broken. Written by
 * `crucible eval --report` and `crucible report`.
 */
#ifndef CRUCIBLE_REPORT_H
#define CRUCIBLE_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "util.h"

struct report_input {
    const char *title;
    const json_t *records;  /* verification records (an array), as eval writes them */
    const json_t *baseline; /* the earlier checkpoint's records, or NULL */
    const char *baseline_name;
    const json_t *tags; /* {task_id: [tag, ...]} (tasks without tags may be absent), or NULL */
};

/* report_html(f, in) — the report; 0, or -errno when writing failed. Every string from the
 * records is escaped: a record's text (a model's output) is never markup. */
int report_html(FILE *f, const struct report_input *in);

/* report_library_html(f, title, all, per_model) — a task library's tallies as HTML: all is
 * one tally (GET /v1/tasks/stats's shape: tasks, status, buckets, histogram, attempts),
 * per_model an array of them, each with its "model". 0, or -errno. */
int report_library_html(FILE *f, const char *title, const json_t *all, const json_t *per_model);

/* report_save(path, label, write, ctx) — path opened (close-on-exec), written by write(f, ctx)
 * and closed; a failure is told on stderr as "LABEL PATH: why". 0, or -1. */
int report_save(const char *path, const char *label, int (*write)(FILE *, const void *),
                const void *ctx);

/* report_html_write(f, in), report_library_write(f, lib) — report_html and report_library_html
 * as report_save's writers (lib: a struct report_library). */
struct report_library {
    const char *title;
    const json_t *all, *per_model;
};
int report_html_write(FILE *f, const void *in);
int report_library_write(FILE *f, const void *lib);

/* report_read_records(path, err) — the records of a results file (JSONL, as eval --out
 * writes); a new array, or NULL with err naming the file and the line at fault. */
json_t *report_read_records(const char *path, struct errbuf *err);

/* report_read_tags(path, tags, err) — adds {id: tags} of a task file (JSONL) to tags (tasks
 * without tags add nothing); 0, or -1 with err naming the first line that is not a task. */
int report_read_tags(const char *path, json_t *tags, struct errbuf *err);

#endif
