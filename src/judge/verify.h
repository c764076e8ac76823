/*
 * verify.h — one solution against one task: sandboxed runs → per-test verdicts → a reward.
 *
 * The verdict rests only on evidence the supervisor owns: exit statuses, the cgroup's
 * counters, the supervisor's clocks, and (stdio) the output compared outside the sandbox
 * with an expected answer that never enters it. crucible's own failures are retried on a
 * fresh sandbox and, when they persist, end as infra_error with reward null — never as a
 * wrong answer a trainer would learn from.
 */
#ifndef CRUCIBLE_VERIFY_H
#define CRUCIBLE_VERIFY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "sandbox/image.h"
#include "sandbox/result.h"
#include "sandbox/sandbox.h"
#include "judge/task.h"

enum verdict {
    VERDICT_ACCEPTED,
    VERDICT_WRONG_ANSWER,
    VERDICT_RUNTIME_ERROR,
    VERDICT_TIMEOUT,
    VERDICT_MEMORY_LIMIT,
    VERDICT_OUTPUT_LIMIT,
    VERDICT_COMPILE_ERROR,
    VERDICT_CONSTRAINT_VIOLATION,
    VERDICT_INFRA_ERROR,
    VERDICT_NOT_RUN, /* a test's verdict only: the task ended before it ran (compile error...) */
    VERDICT_COUNT
};

enum reward_policy {
    REWARD_BINARY,   /* 1 when every test passes, else 0 (the default) */
    REWARD_FRACTION, /* passed / total; score / max_score for a task with "groups" */
};

struct pool;

struct verify_opts {
    unsigned repeats; /* runs of every test; majority verdict, flaky on disagreement */
    enum reward_policy reward;
    unsigned infra_retries;    /* fresh-sandbox retries of a run crucible failed (default 2) */
    const struct image *image; /* resolved image for tasks whose image is "host", or NULL */
    /* a server's registry: a task's image is looked up there only, never resolved as a host
     * path; NULL for the CLI (the local user's directories) */
    const struct image_registry *images;
    struct pool *pool; /* warm sandboxes to take from (crucible serve), or NULL */
    /* only accepted-or-not matters (validation's stubs): an assert task whose tests fail
     * together is not rerun test by test; the verdict goes to its first test and the others
     * are not_run */
    bool verdict_only;
    /* the solution's language, or NULL for the task's: a stdio task takes a solution in any
     * language of the table; assert and command tasks only their own (verify_language_check) */
    const struct lang *lang;
    bool writable_root; /* run with a writable root even when the task does not ask */
    /* NULL, or a live sandbox to run a command task's tests in (a session's: its files are the
     * solution; it stays alive, and `image` must be the one it was made from). Command tasks
     * only */
    struct sandbox *sandbox;
    /* NULL, or the Python fork server (pyserver.h) whose jobs run an assert task's runs in
     * Python on the host image (no compile step, no writable root); a run whose job cannot be
     * made runs cold */
    struct pyserver *pyserver;
};

struct forkserver_module;

/* verify_forkserver_preload(&n) — the modules a fork server for verify's runs preloads: the
 * Python assert harness, which every one of its jobs imports from the same file (/work's
 * copy). Static storage; n set to their count. */
const struct forkserver_module *verify_forkserver_preload(size_t *n);

struct verify_test {
    char *name; /* the task\'s, or owned (name_owned) when read from a report */
    bool name_owned;
    enum verdict verdict; /* majority over repeats */
    unsigned agree;       /* how many repeats gave that verdict */
    struct result run;    /* the last run's record */
    char why[256];        /* checker's or harness's reason when not accepted */
};

struct verify_result {
    const struct lang *lang; /* the language the solution ran as */
    enum verdict verdict;
    bool reward_null; /* infra_error: no reward at all */
    double reward;
    size_t passed, total;
    bool has_score;          /* the task has "groups" (Kattis scoring) */
    double score, max_score; /* the groups earned (every test of a group accepted), and all */
    struct verify_test *tests;
    struct result compile; /* valid when has_compile */
    bool has_compile;
    struct result command; /* command harness: the test command\'s last run */
    bool has_command;
    unsigned repeats;
    bool flaky;
    double wall_time;         /* seconds for the whole verification */
    char image[PATH_MAX + 8]; /* the image's digest, "" until it is resolved */
    char image_name[256];     /* the image the task named */
    char host_os[128];        /* for "host": the host's os-release */
    char message[512];
};

/* verify_opts_default(o) — 1 repeat, binary reward, 2 infra retries. */
void verify_opts_default(struct verify_opts *o);

/* verify_any_language(t) — does t take a solution in any language of the table? stdio and
 * interactive tasks do (the solution is a program talking through its stdin and stdout);
 * assert and command tasks take only their own (their tests are code in it). */
bool verify_any_language(const struct task *t);

/* verify_memory_mb(t, lang) — the most memory a verification of t with a solution in lang
 * (NULL: the task's) holds at once, for a scheduler's reservation: a test run or a compile
 * step (the solution's, the reference's when a relative time limit is calibrated first, a
 * validator's or interactor's), plus an interactor running beside the solution. */
uint64_t verify_memory_mb(const struct task *t, const struct lang *lang);

/* verify_pids(t, lang) — the most processes a verification of t (solution in lang, NULL:
 * the task's) may hold at once, for a scheduler's reservation, each sandbox's init counted:
 * the solution's sandbox (its build steps get at least VERIFY_BUILD_PIDS), plus a
 * validator's, interactor's or judge program's sandbox, which may be alive beside it. */
#define VERIFY_BUILD_PIDS 256
uint64_t verify_pids(const struct task *t, const struct lang *lang);

/* verify_language_check(t, lang, err) — may a solution in lang (NULL: the task's) be judged
 * by t? stdio tasks take any language of the table whose source file none of their files
 * takes (task_files_check); assert and command tasks only their own (their test code is
 * written in it). 0, or -EINVAL with err saying why: the caller's
 * mistake, to answer before any run (HTTP 400, exit 2). */
int verify_language_check(const struct task *t, const struct lang *lang, struct errbuf *err);

/* verify_run(rt, t, solution, o, vr) — verifies solution (a full program in o->lang, or the
 * task's language) against t. vr is always filled (release it); returns 0, or -errno for
 * misuse (-EINVAL: a language verify_language_check refuses; vr->message says why). */
int verify_run(const struct sandbox_runtime *rt, const struct task *t, const char *solution,
               const struct verify_opts *o, struct verify_result *vr);

/* verify_calibrate(rt, t, o, seconds) — runs the task's reference once and gives the CPU
 * time of its slowest test: the base of a relative time limit ("time_limit" in the task).
 * 0, or -errno when the reference is missing or not accepted (then no relative limit). */
int verify_calibrate(const struct sandbox_runtime *rt, const struct task *t,
                     const struct verify_opts *o, double *seconds);

/* verify_result_release(vr) — frees what verify_run made. */
void verify_result_release(struct verify_result *vr);

/* verify_result_to_json(t, vr) — the verification record (DESIGN.md §2); a new reference. */
json_t *verify_result_to_json(const struct task *t, const struct verify_result *vr);

/* How a caller gives its code: a full program, a completion appended to the task's prompt
 * (HumanEval samples), or a raw model response whose last fenced block is the code. */
enum solution_kind { SOLUTION_PROGRAM, SOLUTION_COMPLETION, SOLUTION_RESPONSE };

/* verify_program_text(t, lang, kind, text, how, how_size) — the program to verify, malloc'd
 * (caller frees), with how telling what was taken; NULL on ENOMEM. lang (NULL: the task's)
 * is the solution's language: a response's fenced block is looked for in it. */
char *verify_program_text(const struct task *t, const struct lang *lang, enum solution_kind kind,
                          const char *text, char *how, size_t how_size);

/* verdict_name(v) / reward_policy_parse(name, &p) */
const char *verdict_name(enum verdict v);
bool reward_policy_parse(const char *name, enum reward_policy *p);

#endif
