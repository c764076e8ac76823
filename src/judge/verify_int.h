/*
 * verify_int.h — what verify.c shares with the harnesses (verify_assert.c, verify_stdio.c,
 * verify_command.c, verify_interactive.c) and the Kattis validators (verify_validator.c).
 * Not part of the module's contract (that is verify.h).
 *
 * Every harness fills one repeat of a verification: per test, one verdict into its tally
 * (verify__test_record); verify.c then takes the majority over the repeats.
 */
#ifndef CRUCIBLE_VERIFY_INT_H
#define CRUCIBLE_VERIFY_INT_H

#include "judge/verify.h"

/* Per-test evidence over the repeats: how often each verdict was seen. */
struct tally {
    unsigned count[VERDICT_COUNT];
};

/* verify__put_text(sb, dest, text, len, mode, err) — a file in the work directory. */
int verify__put_text(struct sandbox *sb, const char *dest, const char *text, size_t len,
                     mode_t mode, struct errbuf *err);

/* verify__compile_limits(t, l) — the limits of t's compile (or build) step. */
void verify__compile_limits(const struct task *t, struct sandbox_limits *l);

/* verify__run_verdict(t, tt, res, why, why_size) — one run's verdict (tt: the stdio test
 * whose expected output the built-in checker compares, or NULL). */
enum verdict verify__run_verdict(const struct task *t, const struct task_test *tt,
                                 const struct result *res, char *why, size_t why_size);

/* A sandbox with the solution in place and compiled; the compile record goes to vr. */
enum box_state { BOX_READY, BOX_COMPILE_ERROR, BOX_INFRA };

/* verify__box_open(rt, o, img, t, program, len, &sb, vr, why, why_size) — a sandbox from
 * o's pool (or new) with the program and the task's files in place, compiled when the
 * language compiles. BOX_READY gives *sb (the caller releases it to o->pool). */
enum box_state verify__box_open(const struct sandbox_runtime *rt, const struct verify_opts *o,
                                const struct image *img, const struct task *t, const char *program,
                                size_t program_len, struct sandbox **out, struct verify_result *vr,
                                char *why, size_t why_size);

/* verify__box_open_plan(…, plan, …) — verify__box_open that also gives the steps it used
 * (the run step with the entry the program's text names: Java's main class). The caller
 * releases *plan (lang_plan_release) whatever the outcome. */
enum box_state verify__box_open_plan(const struct sandbox_runtime *rt, const struct verify_opts *o,
                                     const struct image *img, const struct task *t,
                                     const char *program, size_t program_len, struct sandbox **out,
                                     struct lang_plan *plan, struct verify_result *vr, char *why,
                                     size_t why_size);

/* What verify__box_next left the caller of a per-test loop to do. */
enum box_next {
    BOX_NEXT_READY,         /* *sb is ready for test *i */
    BOX_NEXT_COMPILE_ERROR, /* the solution does not compile (plan released) */
    BOX_NEXT_AGAIN,         /* loop again: after a retry, or test *i recorded as infra_error
                             * and *i advanced */
};

/* verify__box_next(rt, o, img, t, solution, &sb, plan, vr, tys, &i, &failures) — for loops
 * that run test after test in one sandbox of the solution (stdio, interactive): when *sb is
 * NULL, opens one (plan gets its steps), retrying crucible's failures up to o->infra_retries
 * before test *i is recorded as infra_error. */
enum box_next verify__box_next(const struct sandbox_runtime *rt, const struct verify_opts *o,
                               const struct image *img, const struct task *t, const char *solution,
                               struct sandbox **sb, struct lang_plan *plan,
                               struct verify_result *vr, struct tally *tys, size_t *i,
                               unsigned *failures);

/* verify__test_record(vt, ty, v, res, why) — counts v for the test and keeps res as its
 * last run (res's streams move to vt; res is left empty). */
void verify__test_record(struct verify_test *vt, struct tally *ty, enum verdict v,
                         struct result *res, const char *why);

/* verify__cancelled(rt) — the caller asked running work to stop: no retry then. */
bool verify__cancelled(const struct sandbox_runtime *rt);

/* verify__take_token(out, token) — true when the last line of the output made of 32
 * lowercase hex digits is the token (the assert harness's proof that the test code ran to its
 * end); that line is removed from the captured output. */
bool verify__take_token(struct result_stream *out, const char *token);

/* verify__macro_undefs(code) — "#undef NAME\n" for every macro the C or C++ code #defines
 * (malloc'd; NULL on ENOMEM): put between a solution and its test code. */
char *verify__macro_undefs(const char *code);

/* ---- Kattis output validators and interactors (verify_validator.c) ---- */

/* The validator's sandbox: made and compiled once per verification, serving every test. */
struct validator_box {
    const char *what;      /* "output validator" or "interactor", for messages */
    struct sandbox *sb;    /* NULL until ready (or after a failure of crucible's) */
    struct lang_plan plan; /* its steps (valid when planned) */
    bool planned;
    bool broken; /* the validator cannot run (does not compile...): the task's fault */
    char why[256];
    size_t seq;    /* tests staged so far: .judge/<seq>/ */
    size_t staged; /* bytes of test files on its disk since the last cleanup */
};

/* How a validator's run ended (problemtools' exit codes). */
enum validator_exit {
    VALIDATOR_ACCEPTED, /* exit 42 */
    VALIDATOR_REJECTED, /* exit 43 */
    VALIDATOR_FAILED,   /* any other exit, a signal, a limit: the task's fault */
    VALIDATOR_OURS,     /* sandbox_error: crucible's failure, retried */
};

/* Kattis' validation memory: an output validator's or interactor's run (problemtools). */
#define VERIFY_VALIDATION_MEMORY_MB 1024

/* verify__validator_limits(t, l) — problemtools' validation limits: 60 s of CPU (120 s wall),
 * 1024 MiB, 8 MiB of output; scratch room for the largest test's files. */
void verify__validator_limits(const struct task *t, struct sandbox_limits *l);

/* verify__validator_ready(rt, o, img, t, vb) — vb's sandbox made and the validator compiled
 * (with retries of crucible's failures), unless it is already. 0, or -1 with vb->why. */
int verify__validator_ready(const struct sandbox_runtime *rt, const struct verify_opts *o,
                            const struct image *img, const struct task *t,
                            struct validator_box *vb);

/* verify__validator_stage(tt, vb, &n, err) — the test's input and answer in .judge/<n>/, with
 * an empty .judge/<n>/feedback/. 0 or -errno (err set). */
int verify__validator_stage(const struct task_test *tt, struct validator_box *vb, size_t *n,
                            struct errbuf *err);

/* verify__validator_argv(t, tt, vb, n) — `RUN input answer feedback_dir/ FLAGS...` (the test's
 * flags, else the validator's); free with verify__validator_argv_free; NULL on ENOMEM. */
char **verify__validator_argv(const struct task *t, const struct task_test *tt,
                              const struct validator_box *vb, size_t n);
void verify__validator_argv_free(const struct validator_box *vb, char **argv);

/* verify__validator_message(vb, n, out, size) — feedback/judgemessage.txt of test n as one
 * line ("" when there is none). Its text is the validator's, read as untrusted bytes. */
void verify__validator_message(struct validator_box *vb, size_t n, char *out, size_t size);

/* verify__validator_exit(res) — what the validator's run says. */
enum validator_exit verify__validator_exit(const struct result *res);

/* verify__validator_failure(what, res, msg, why, size) — "the interactor failed (exit 1): …" */
void verify__validator_failure(const char *what, const struct result *res, const char *msg,
                               char *why, size_t why_size);

/* verify__validator_judge(…, run, vb, why, why_size) — the output validator on a stdio run's
 * output: accepted, wrong_answer (why: judgemessage.txt), or infra_error. */
enum verdict verify__validator_judge(const struct sandbox_runtime *rt, const struct verify_opts *o,
                                     const struct image *img, const struct task *t,
                                     const struct task_test *tt, const struct result *run,
                                     struct validator_box *vb, char *why, size_t why_size);

/* verify__validator_close(o, vb) — its sandbox released and its plan freed. */
void verify__validator_close(const struct verify_opts *o, struct validator_box *vb);

/* One repeat of each harness over every test of t. false when the solution did not
 * compile (vr->compile says how); every other outcome is in the tallies. The stdio and
 * interactive harnesses judge with vb (the task's validator or interactor, shared by the
 * repeats). */
bool verify__assert_repeat(const struct sandbox_runtime *rt, const struct image *img,
                           const struct task *t, const char *solution, const struct verify_opts *o,
                           struct verify_result *vr, struct tally *tys);
bool verify__stdio_repeat(const struct sandbox_runtime *rt, const struct image *img,
                          const struct task *t, const char *solution, const struct verify_opts *o,
                          struct verify_result *vr, struct tally *tys, struct validator_box *vb);
bool verify__interactive_repeat(const struct sandbox_runtime *rt, const struct image *img,
                                const struct task *t, const char *solution,
                                const struct verify_opts *o, struct verify_result *vr,
                                struct tally *tys, struct validator_box *vb);
/* The command harness may discover its tests from the first report: *tys can grow. */
bool verify__command_repeat(const struct sandbox_runtime *rt, const struct image *img,
                            const struct task *t, const char *solution, const struct verify_opts *o,
                            struct verify_result *vr, struct tally **tys);

/* verify__command_judge(t, vr, tys, res, rep, report_err) — the command harness's grading of
 * one run (rep NULL: no usable report, report_err says why); see verify_command.c. */
struct junit_report;
void verify__command_judge(const struct task *t, struct verify_result *vr, struct tally **tys,
                           struct result *res, const struct junit_report *rep,
                           const char *report_err);

#endif
