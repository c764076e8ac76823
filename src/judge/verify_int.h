/*
 * verify_int.h — what verify.c shares with the harnesses (verify_assert.c, verify_stdio.c,
 * verify_command.c). Not part of the module's contract (that is verify.h).
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

/* verify__exec(sb, argv, env, in, in_len, flags, res) — one process with IN on stdin; res is
 * result_init'ed here. */
void verify__exec(struct sandbox *sb, const char *const *argv, const char *const *env,
                  const char *in, size_t in_len, unsigned flags, struct result *res);

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

/* One repeat of each harness over every test of t. false when the solution did not
 * compile (vr->compile says how); every other outcome is in the tallies. */
bool verify__assert_repeat(const struct sandbox_runtime *rt, const struct image *img,
                           const struct task *t, const char *solution, const struct verify_opts *o,
                           struct verify_result *vr, struct tally *tys);
bool verify__stdio_repeat(const struct sandbox_runtime *rt, const struct image *img,
                          const struct task *t, const char *solution, const struct verify_opts *o,
                          struct verify_result *vr, struct tally *tys);
/* The command harness may discover its tests from the first report: *tys can grow. */
bool verify__command_repeat(const struct sandbox_runtime *rt, const struct image *img,
                            const struct task *t, const char *solution, const struct verify_opts *o,
                            struct verify_result *vr, struct tally **tys);

#endif
