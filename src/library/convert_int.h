/*
 * convert_int.h — what the converters share, implemented in convert_out.c: the state of
 * one conversion, a growable string, and the last step every task goes through. Not part
 * of the module's contract (that is convert.h). convert.c (JSON datasets, convert_path)
 * dispatches to convert_kattis.c; both use convert_out.c and nothing else of each other.
 */
#ifndef CRUCIBLE_CONVERT_INT_H
#define CRUCIBLE_CONVERT_INT_H

#include "library/convert.h"

/* One convert_path call. */
struct convert_run {
    const struct convert_opts *o;
    convert_emit_fn emit;
    void *arg;
    FILE *errs;
    struct convert_stats *st;
    json_t *seen; /* id -> "FILE:LINE" where it was first emitted */
};

/* A growable NUL-terminated string; {0} is empty. On allocation failure it sets oom and
 * ignores further appends, so callers check once at the end. */
struct convert_buf {
    char *s;
    size_t len, cap;
    bool oom;
};

void convert__buf_add(struct convert_buf *b, const char *s, size_t n);
void convert__buf_puts(struct convert_buf *b, const char *s);
void convert__buf_release(struct convert_buf *b);

/* convert__word_in(list, word, n) — is word (n bytes) one of the space-separated words of
 * list? */
bool convert__word_in(const char *list, const char *word, size_t n);

/* convert__set_string(obj, key, s, n) — obj[key] = the string s (n bytes). 0 or -ENOMEM. */
int convert__set_string(json_t *obj, const char *key, const char *s, size_t n);

/* convert__bad(r, where, fmt, ...) — reports "WHERE: message" on the error stream and
 * counts one skipped record. */
void convert__bad(struct convert_run *r, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* convert__finish(r, task, where) — the last step of every task: adds the tags and
 * notes of the known-issue table, orders the keys, rejects a duplicate id (reported,
 * counted bad) and emits. Takes ownership of task. 0, or the emit callback's value. */
int convert__finish(struct convert_run *r, json_t *task, const char *where);

/* convert__add_tag(task, tag) / convert__add_note(task, text) — append to "tags" (an
 * array) / "notes" (one string, sentences joined by a space). 0 or -ENOMEM. */
int convert__add_tag(json_t *task, const char *tag);
int convert__add_note(json_t *task, const char *text);

/* convert__kattis(r, path, err) — the Kattis converter (convert_kattis.c): a package
 * directory or a tree of them. 0, the emit value, or -errno with err set. */
int convert__kattis(struct convert_run *r, const char *path, struct errbuf *err);

#endif
