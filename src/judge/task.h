/*
 * task.h — a task in the native format (docs/TASKS.md): parsed, validated, owned.
 *
 * A task is read from one JSON object; every field is checked and a bad one is named in
 * the error. The parsed task keeps its own copies of all strings and the original JSON
 * (for the version hash and for tools that pass unknown fields through).
 */
#ifndef CRUCIBLE_TASK_H
#define CRUCIBLE_TASK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "judge/checker.h"
#include "judge/lang.h"
#include "sandbox/sandbox.h"
#include "util.h"

enum task_harness {
    TASK_HARNESS_ASSERT,
    TASK_HARNESS_STDIO,
    TASK_HARNESS_COMMAND,
    TASK_HARNESS_INTERACTIVE,
};

struct task_test {
    char *name;
    char *code;       /* assert: test code appended to the solution */
    char *stdin_data; /* stdio; interactive: the input file the interactor reads */
    size_t stdin_len;
    char *expected; /* stdio; interactive: the judge answer file */
    size_t expected_len;
    char *group; /* "group" (Kattis test data group), or command: "fail_to_pass",
                  * "pass_to_pass"; NULL when none */
    char *flags; /* "flags": replace the checker's / interactor's flags for this test, or NULL */
    struct checker checker; /* kattis checker with this test's flags (when flags is set) */
};

/* A judge program given by the task: a Kattis output validator (checker "validator") or the
 * interactor of an interactive task. */
struct task_program {
    const struct lang *lang;
    struct task_file *files; /* "files", or one file holding "code" */
    size_t nfiles;
    char *flags; /* its flags (words after the feedback directory), or NULL */
};

/* A scored group of tests (Kattis scoring): earned when all its tests pass. */
struct task_group {
    char *name;
    double score;
};

/* A file the task puts in the work directory (read-only) before the solution runs. */
struct task_file {
    char *path; /* relative, validated as sandbox_dest_valid */
    char *data;
    size_t len;
};

struct task {
    char *id;
    const struct lang *lang;
    char *prompt;      /* may be NULL */
    char *reference;   /* may be NULL */
    char *entry_point; /* may be NULL */
    char *test_setup;  /* assert harness: text before the solution (Go: package, test imports) */
    const struct lang *judge_lang; /* stdio: a checker program (special judge), or NULL */
    char *judge_code;
    struct task_program *validator; /* stdio: checker "validator"; interactive: the
                                     * interactor; NULL otherwise */
    struct task_group *groups;      /* "groups", or NULL */
    size_t ngroups;
    double max_score; /* sum of the groups' scores (> 0 when there are groups) */
    char *image;      /* "host" when absent */
    enum task_harness harness;
    struct task_test *tests;
    size_t ntests;
    struct checker checker;
    struct sandbox_limits limits; /* the defaults, overridden by the task's "limits" */
    double time_factor;    /* "time_limit": CPU limit = max(time_min, factor x reference time) */
    double time_min;       /* seconds */
    double reference_time; /* CPU seconds the reference needs per test; < 0 when unknown */
    size_t max_bytes;      /* constraint: solution size (0 = none) */
    char **forbid;         /* constraint: ERE patterns the solution must not match */
    size_t nforbid;
    struct task_file *files; /* "files": test files, fixtures, data */
    size_t nfiles;
    char *solution_file; /* command: where the solution goes (default: the language's source) */
    char **command;      /* command: the test command's argv (a string runs with /bin/sh -c) */
    char **build;        /* command: optional build step's argv, under the compile limits */
    char *report;        /* command: path of the JUnit XML report below the work directory */
    char version[17];    /* 64-bit hash of the canonical JSON, hex */
    json_t *json;        /* the task as given (owned reference) */
};

/* task_from_json(j, t, err) — validates and copies; the caller releases t even on error.
 * 0, or -EINVAL with err naming the field. */
int task_from_json(const json_t *j, struct task *t, struct errbuf *err);

/* task_files_check(t, lang, err) — t's files can all be put in the work directory beside a
 * solution in lang (NULL: the task's language; a stdio task may be solved in another): none
 * below another, none where the solution goes, nor (command harness) where the report goes,
 * nor (assert harness) where the language's harness files go, and all within the scratch disk
 * of t's limits.
 * task_from_json checks the task's own language; a caller judging a solution in another
 * language checks it before running. 0, or -EINVAL with err naming the clash. */
int task_files_check(const struct task *t, const struct lang *lang, struct errbuf *err);

/* task_release(t) — frees everything task_from_json made. */
void task_release(struct task *t);

/* task_limits_from_json(j, limits, err) — applies a "limits" object over *limits; out of
 * range, unknown keys and wrong types are errors (never clamped). */
int task_limits_from_json(const json_t *j, struct sandbox_limits *limits, struct errbuf *err);

/* task_list_load(path, tasks, n, errs) — every task of a JSONL file (a file holding one JSON
 * object spread over lines is read too). A malformed or invalid line is reported on errs as
 * "PATH:LINE: problem" and skipped; duplicate ids are reported and the later one skipped.
 * Returns the number of lines skipped, or -errno when the file cannot be read (err set).
 * *tasks is a new array the caller frees with task_list_free. */
int task_list_load(const char *path, struct task **tasks, size_t *n, FILE *errs,
                   struct errbuf *err);

/* task_list_free(tasks, n) */
void task_list_free(struct task *tasks, size_t n);

/* task_list_find(tasks, n, id) — the task with that id, or NULL. */
const struct task *task_list_find(const struct task *tasks, size_t n, const char *id);

/* task_harness_name(h) — "assert", "stdio", "command", "interactive". */
const char *task_harness_name(enum task_harness h);

#endif
