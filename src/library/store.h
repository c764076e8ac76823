/*
 * store.h — the task library: tasks, their versions, validation status and per-model
 * statistics in one SQLite file (docs/LIBRARY.md).
 *
 * A task version is the task's content hash (task.h's "version"): importing a changed task
 * adds a version and makes it current, keeping the statistics of the old one apart;
 * importing an unchanged task changes nothing. Every verification of a stored task is
 * recorded (verdict, reward, model tag) and folded into per (task, version, model)
 * counters in the same transaction, so concurrent writers — threads with their own handle
 * or other processes — lose no update (WAL, busy timeout, BEGIN IMMEDIATE).
 *
 * A handle may be used from several threads (SQLite's serialized mode); each call is one
 * transaction unless the caller brackets several with store_begin / store_commit.
 */
#ifndef CRUCIBLE_STORE_H
#define CRUCIBLE_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "library/passrate.h"
#include "judge/task.h"
#include "util.h"
#include "judge/verify.h"

#define STORE_SCHEMA_VERSION 1

/* Validation status of a task version (closed set; docs/LIBRARY.md). */
enum store_status {
    STORE_NEW,          /* imported, not validated yet */
    STORE_VALID,        /* reference accepted on every repeat, stubs rejected */
    STORE_BROKEN,       /* the reference is not accepted */
    STORE_FLAKY,        /* the reference's repeats disagree */
    STORE_WEAK_TESTS,   /* a stub or empty solution is accepted */
    STORE_NO_REFERENCE, /* nothing to validate against */
    STORE_STATUS_COUNT
};

/* Difficulty buckets, by the estimated pass rate (posterior mean). */
enum store_bucket {
    STORE_UNTRIED, /* no attempt recorded */
    STORE_UNSOLVED,
    STORE_HARD,
    STORE_MEDIUM,
    STORE_EASY,
    STORE_SOLVED,
    STORE_BUCKET_COUNT
};

struct store;

/* One task's current version with its statistics (for the model asked, or all models). */
struct store_task {
    char *id;
    char version[17];
    char *source; /* the task's "source", else the id up to its first '/' */
    char *language;
    char *harness;
    char *tags; /* JSON array text */
    enum store_status status;
    char *reason;    /* why the status, "" when none */
    double ref_time; /* CPU seconds of the reference's slowest test; < 0 unknown */
    unsigned long attempts, accepted, infra_errors; /* infra errors are not attempts */
    double reward_sum;
    struct pass_estimate est; /* 90% credible interval */
    enum store_bucket bucket;
    unsigned nversions;
};

/* Which tasks a list, sample or stats call looks at. Zero fields select everything. */
struct store_filter {
    const char *const *tags; /* a task needs every one of them */
    size_t ntags;
    const char *source;
    const char *language;
    unsigned status_mask;  /* 1 << status to keep; 0 = any */
    unsigned exclude_mask; /* 1 << status to drop */
    bool band;             /* keep only estimates (posterior mean) in [min_pass, max_pass] */
    double min_pass, max_pass;
    const char *model; /* statistics of this model tag; NULL = all models together */
    const char *id_prefix;
};

/* What importing one task did. */
enum store_import_outcome { STORE_IMPORT_NEW, STORE_IMPORT_CHANGED, STORE_IMPORT_UNCHANGED };

/* store_open(path, create, &s, err) — opens the library (creating it when create is set),
 * migrating its schema to STORE_SCHEMA_VERSION. 0, or -errno with err set: -ENOENT when it
 * does not exist and create is not set, -EPROTO for a newer schema. */
int store_open(const char *path, bool create, struct store **s, struct errbuf *err);

/* store_close(s) — NULL is fine. */
void store_close(struct store *s);

/* store_begin / store_commit / store_rollback — bracket several writes in one transaction
 * (an import of many tasks); calls inside do not open their own. */
int store_begin(struct store *s, struct errbuf *err);
int store_commit(struct store *s, struct errbuf *err);
void store_rollback(struct store *s);

/* store_import(s, t, &outcome, err) — adds t (parsed, with its JSON) as a new task, a new
 * current version of an existing one, or nothing when that version is already current. */
int store_import(struct store *s, const struct task *t, enum store_import_outcome *outcome,
                 struct errbuf *err);

/* store_task_load(s, id, version, t, err) — parses a stored version (NULL = the current
 * one) into t (release with task_release). When the version has a measured reference time
 * and the task asks for a relative time limit, t->reference_time is set from it, so the
 * limit needs no new calibration. -ENOENT when there is no such task. */
int store_task_load(struct store *s, const char *id, const char *version, struct task *t,
                    struct errbuf *err);

/* store_record(s, id, version, model, vr, err) — records one verification of a stored
 * task (model NULL or "" = "default") and updates its counters atomically. */
int store_record(struct store *s, const char *id, const char *version, const char *model,
                 const struct verify_result *vr, struct errbuf *err);

/* store_set_status(s, id, version, status, reason, ref_time, err) — a validation's outcome
 * (ref_time < 0: unknown). */
int store_set_status(struct store *s, const char *id, const char *version, enum store_status status,
                     const char *reason, double ref_time, struct errbuf *err);

/* store_list(s, f, each, arg, err) — calls each for every matching task in id order; a
 * non-zero return from each stops the walk and is returned. The row is valid during the
 * call only. */
int store_list(struct store *s, const struct store_filter *f,
               int (*each)(const struct store_task *row, void *arg), void *arg, struct errbuf *err);

/* store_get(s, id, model, row, err) — one task's row (release with store_task_release);
 * -ENOENT when absent. */
int store_get(struct store *s, const char *id, const char *model, struct store_task *row,
              struct errbuf *err);
void store_task_release(struct store_task *row);

/* store_versions_json(s, id, err) — the task's versions, newest first, each with its
 * status and statistics per model: a new JSON array, or NULL (err set). */
json_t *store_versions_json(struct store *s, const char *id, struct errbuf *err);

/* store_models_json(s, err) — the models with recorded verifications, by name:
 * [{"model", "tasks" (task versions it attempted), "attempts", "accepted"}]; a new reference,
 * or NULL with err set. */
json_t *store_models_json(struct store *s, struct errbuf *err);

/* store_task_body(s, id, version) — a version's task JSON (NULL version = current): a new
 * reference, or NULL when absent. */
json_t *store_task_body(struct store *s, const char *id, const char *version);

/* store_sample(s, f, n, explore, seed, each, arg, err) — draws up to n distinct tasks:
 * tried tasks whose estimate lies in the filter's band, and, for a share `explore` of the
 * draw (more when too few are in the band, none when explore is 0), tasks with little
 * evidence (fewer than STORE_EXPLORE_ATTEMPTS attempts, untried ones included) whose 90%
 * interval still overlaps the band. each gets the row and whether it was an exploration
 * pick. The same library, filter and seed give the same draw. */
#define STORE_EXPLORE_ATTEMPTS 8
int store_sample(struct store *s, const struct store_filter *f, size_t n, double explore,
                 uint64_t seed, int (*each)(const struct store_task *row, bool explored, void *arg),
                 void *arg, struct errbuf *err);

/* Counts over the tasks a filter selects (`tasks stats`, GET /v1/tasks/stats). */
struct store_tally {
    size_t tasks, by_status[STORE_STATUS_COUNT], by_bucket[STORE_BUCKET_COUNT];
    size_t hist[10]; /* tried tasks by estimate, in tenths */
    unsigned long attempts, accepted, infra_errors;
};

/* store_tally(s, f, t, err) — fills t. 0 or -errno. */
int store_tally(struct store *s, const struct store_filter *f, struct store_tally *t,
                struct errbuf *err);

/* store_tally_json(t, model) — {tasks, status, buckets, histogram, attempts, ...}: new. */
json_t *store_tally_json(const struct store_tally *t, const char *model);

/* store_row_json(row) — the row as the JSON object that `--json` and the HTTP routes give. */
json_t *store_row_json(const struct store_task *row);

/* store_bucket_of(est, attempts) — the difficulty bucket of an estimate. */
enum store_bucket store_bucket_of(const struct pass_estimate *est, unsigned long attempts);

/* Names of statuses and buckets; _parse gives false for an unknown name. */
const char *store_status_name(enum store_status st);
bool store_status_parse(const char *name, enum store_status *st);
const char *store_bucket_name(enum store_bucket b);

/* store_status_mask_parse(list, &mask, err) — "broken,flaky" (or "none") as a mask. */
int store_status_mask_parse(const char *list, unsigned *mask, struct errbuf *err);

#endif
