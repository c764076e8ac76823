/*
 * convert.h — dataset converters: public benchmark files to native tasks (docs/TASKS.md).
 *
 * `crucible tasks convert --from FORMAT PATH` is convert_path() plus a JSONL writer. Each
 * format's field map is a table in convert.c (data, not code); what a table cannot say
 * (MBPP's test lists, the Go test layout, Kattis directories) is a small function next
 * to it.
 *
 * Errors come in two kinds. A bad input record (a line that is not JSON, a missing field,
 * a duplicate id, a Kattis problem with a non-UTF-8 file) is reported on the caller's
 * error stream as one "FILE:LINE: problem" line, skipped, and counted in stats.bad; the
 * conversion goes on. A failure to read the input at all (a missing path, an unreadable
 * file, a directory where a file is needed) stops it: convert_path returns -errno and
 * err says why.
 *
 * Single-threaded; no global state.
 */
#ifndef CRUCIBLE_CONVERT_H
#define CRUCIBLE_CONVERT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util.h"

enum convert_format {
    CONVERT_HUMANEVAL,      /* HumanEval.jsonl[.gz] (OpenAI) */
    CONVERT_MBPP,           /* mbpp.jsonl (Google Research) */
    CONVERT_MBPP_SANITIZED, /* sanitized-mbpp.json (a JSON array, or JSONL) */
    CONVERT_HUMANEVAL_X,    /* humaneval_<lang>.jsonl[.gz], or a directory of them */
    CONVERT_KATTIS,         /* a problem package directory, or a tree of them */
};

struct sandbox_runtime;
struct image;

struct convert_opts {
    enum convert_format format;
    bool challenge; /* mbpp: also challenge_test_list, as tests challenge_1, ... */
    /* kattis: time limits calibrated by running the accepted submissions (problemtools'
     * rule) in sandboxes of rt, in image (NULL: host); rt NULL turns calibration off */
    const struct sandbox_runtime *rt;
    const struct image *image;
};

struct convert_stats {
    size_t tasks; /* tasks emitted */
    size_t tests; /* tests in the emitted tasks */
    size_t bad;   /* input records skipped (each reported on the error stream) */
};

/* A task ready to print. The task is borrowed: incref it to keep it. A non-zero return
 * stops the conversion and becomes convert_path's return value. */
typedef int (*convert_emit_fn)(json_t *task, void *arg);

/* convert_format_find(name, &fmt) — "humaneval", "mbpp", "mbpp-sanitized", "humaneval-x",
 * "kattis"; false when unknown. */
bool convert_format_find(const char *name, enum convert_format *fmt);

/* convert_format_names() — "humaneval|mbpp|..." for usage and error messages. */
const char *convert_format_names(void);

/* convert_path(o, path, emit, arg, errs, stats, err) — converts everything under path,
 * calling emit once per task in input order (Kattis: sorted by path). Bad records are
 * reported on errs and counted in stats->bad. 0 when the input could be read (even with
 * bad records), the emit callback's non-zero value, or -errno with err set. stats is
 * zeroed first. */
int convert_path(const struct convert_opts *o, const char *path, convert_emit_fn emit, void *arg,
                 FILE *errs, struct convert_stats *stats, struct errbuf *err);

/* convert_entry_point(test, out, size) — the function an MBPP assert calls: the first
 * call that is not a Python builtin or keyword (`int(lobb_num(5, 3))` gives lobb_num),
 * or the first call at all when every call is a builtin name (task 126 defines `sum`).
 * Calls inside string literals and method calls (`x.join(`) do not count. false when
 * there is no call or the name does not fit in size. */
bool convert_entry_point(const char *test, char *out, size_t size);

/* convert_html_text(html, len) — a statement's text with the markup removed, crudely:
 * <head>, <script>, <style> and icon/copy-button widgets dropped, block tags turned into
 * line breaks, entities decoded, blank-line runs squeezed; <pre> keeps its whitespace and
 * TeX ($$$x$$$) is left as written. A new string (caller frees), or NULL (ENOMEM). */
char *convert_html_text(const char *html, size_t len);

#endif
