/*
 * verify.c — the verification of one solution (see verify.h for the contract).
 *
 * assert harness: every test is its own program (solution, prologue, test code) in its own
 * fresh sandbox, so no test's code is ever visible to another test's run.
 * stdio harness: one sandbox per repeat; the solution is compiled once, then runs once per
 * test with the test's input on stdin, every other process killed between tests. Expected
 * outputs stay in the supervisor.
 */
#include "verify.h"

#include "extract.h"
#include "junit.h"
#include "pool.h"

#include <errno.h>
#include <poll.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#define EXCERPT_BYTES 512

static const char *const verdict_names[VERDICT_COUNT] = {
    [VERDICT_ACCEPTED] = "accepted",
    [VERDICT_WRONG_ANSWER] = "wrong_answer",
    [VERDICT_RUNTIME_ERROR] = "runtime_error",
    [VERDICT_TIMEOUT] = "timeout",
    [VERDICT_MEMORY_LIMIT] = "memory_limit",
    [VERDICT_OUTPUT_LIMIT] = "output_limit",
    [VERDICT_COMPILE_ERROR] = "compile_error",
    [VERDICT_CONSTRAINT_VIOLATION] = "constraint_violation",
    [VERDICT_INFRA_ERROR] = "infra_error",
    [VERDICT_NOT_RUN] = "not_run",
};

const char *verdict_name(enum verdict v)
{
    return (size_t)v < VERDICT_COUNT ? verdict_names[v] : "infra_error";
}

bool reward_policy_parse(const char *name, enum reward_policy *p)
{
    if (strcmp(name, "binary") == 0)
        *p = REWARD_BINARY;
    else if (strcmp(name, "fraction") == 0)
        *p = REWARD_FRACTION;
    else
        return false;
    return true;
}

void verify_opts_default(struct verify_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->repeats = 1;
    o->reward = REWARD_BINARY;
    o->infra_retries = 2;
}

static int put_text(struct sandbox *sb, const char *dest, const char *text, size_t len, mode_t mode,
                    struct errbuf *err)
{
    return sandbox_put_data(sb, dest, text, len, mode, err);
}

/* exec_argv(sb, argv, env, stdin text, flags, res) — one process; res is result_init'ed. */
static void exec_argv(struct sandbox *sb, const char *const *argv, const char *const *env,
                      const char *in, size_t in_len, unsigned flags, struct result *res)
{
    struct sandbox_proc p = {
        .argv = (char *const *)argv, .env = (char *const *)env, .stdin_fd = -1};

    result_init(res);
    if (in && in_len) {
        p.stdin_fd = sandbox_memfd(in, in_len);
        if (p.stdin_fd < 0) {
            result_fail(res, "cannot stage stdin: %s", strerror(-p.stdin_fd));
            return;
        }
    }
    sandbox_exec(sb, &p, flags, res);
    if (p.stdin_fd >= 0)
        close(p.stdin_fd);
}

/* compile_limits(t, l) — the language's compile limits; a build step of an interpreted
 * language's command task (a syntax check, an install) gets the defaults for builds. */
static void compile_limits(const struct task *t, struct sandbox_limits *l)
{
    bool own = t->lang->compile_cpu > 0;

    *l = t->limits;
    l->cpu_time = own ? t->lang->compile_cpu : 30;
    l->wall_time = own ? t->lang->compile_wall : 60;
    l->memory_mb = own ? t->lang->compile_memory_mb : 1024;
    if (l->pids < 256)
        l->pids = 256;
    if (l->output_kb < 1024)
        l->output_kb = 1024;
}

/* run_verdict(t, tt, res, why) — one run's verdict. */
static enum verdict run_verdict(const struct task *t, const struct task_test *tt,
                                const struct result *res, char *why, size_t why_size)
{
    why[0] = '\0';
    switch (res->status) {
    case RESULT_OK:
        if (t->harness == TASK_HARNESS_STDIO && !t->judge_code &&
            !checker_compare(&t->checker, res->out.data, res->out.len, tt->expected,
                             tt->expected_len, why, why_size))
            return VERDICT_WRONG_ANSWER;
        return VERDICT_ACCEPTED;
    case RESULT_RUNTIME_ERROR:
    case RESULT_SIGNALED:
        /* A failed assertion is a wrong answer; any other crash a runtime error. The marker
         * only names the verdict: pass or fail rests on the exit status alone. */
        if (t->harness == TASK_HARNESS_ASSERT && t->lang->assert_marker && res->err.data &&
            strstr(res->err.data, t->lang->assert_marker)) {
            snprintf(why, why_size, "assertion failed");
            return VERDICT_WRONG_ANSWER;
        }
        snprintf(why, why_size, "%s", res->message[0] ? res->message : "the program failed");
        return VERDICT_RUNTIME_ERROR;
    case RESULT_TIMEOUT:
        snprintf(why, why_size, "%s", res->message);
        return VERDICT_TIMEOUT;
    case RESULT_MEMORY_LIMIT:
        snprintf(why, why_size, "%s", res->message);
        return VERDICT_MEMORY_LIMIT;
    case RESULT_OUTPUT_LIMIT:
        snprintf(why, why_size, "%s", res->message);
        return VERDICT_OUTPUT_LIMIT;
    case RESULT_SANDBOX_ERROR:
    default:
        snprintf(why, why_size, "%s", res->message);
        return VERDICT_INFRA_ERROR;
    }
}

/* A sandbox with the solution in place and compiled; the compile record goes to vr. */
enum box_state { BOX_READY, BOX_COMPILE_ERROR, BOX_INFRA };

static enum box_state box_open(const struct sandbox_runtime *rt, const struct verify_opts *o,
                               const struct image *img, const struct task *t, const char *program,
                               size_t program_len, struct sandbox **out, struct verify_result *vr,
                               char *why, size_t why_size)
{
    struct lang_steps steps = lang_steps(t->lang, t->harness == TASK_HARNESS_ASSERT);
    struct errbuf err = {{0}};
    struct sandbox_limits cl;
    struct sandbox *sb;

    *out = NULL;
    if (t->harness == TASK_HARNESS_COMMAND) {
        steps.source = t->solution_file;
        steps.compile = (const char *const *)t->build;
    }
    sb = pool_acquire(o->pool, rt, img, &t->limits, &err);
    if (!sb) {
        snprintf(why, why_size, "%s", err.msg);
        return BOX_INFRA;
    }
    if (put_text(sb, steps.source, program, program_len, 0644, &err) < 0)
        goto out_infra;
    for (size_t i = 0; i < t->nfiles; i++) /* the task's own files: read-only for the payload */
        if (put_text(sb, t->files[i].path, t->files[i].data, t->files[i].len, 0444, &err) < 0)
            goto out_infra;
    if (steps.compile) {
        if (vr->has_compile)
            result_release(&vr->compile);
        compile_limits(t, &cl);
        if (sandbox_set_limits(sb, &cl, &err) < 0)
            goto out_infra;
        exec_argv(sb, steps.compile, t->lang->env, NULL, 0, 0, &vr->compile);
        vr->has_compile = true;
        if (vr->compile.status == RESULT_SANDBOX_ERROR) {
            snprintf(why, why_size, "compile step: %s", vr->compile.message);
            pool_release(o->pool, sb);
            return BOX_INFRA;
        }
        if (vr->compile.status != RESULT_OK) {
            snprintf(why, why_size, "compilation failed (%s)",
                     result_status_name(vr->compile.status));
            pool_release(o->pool, sb);
            return BOX_COMPILE_ERROR;
        }
        if (sandbox_set_limits(sb, &t->limits, &err) < 0 || sandbox_kill_others(sb, &err) < 0)
            goto out_infra;
    }
    *out = sb;
    return BOX_READY;
out_infra:
    snprintf(why, why_size, "%s", err.msg);
    pool_release(o->pool, sb);
    return BOX_INFRA;
}

/* Per-test evidence over the repeats. */
struct tally {
    unsigned count[VERDICT_COUNT];
};

static void test_record(struct verify_test *vt, struct tally *ty, enum verdict v,
                        struct result *res, const char *why)
{
    ty->count[v]++;
    result_release(&vt->run);
    vt->run = *res; /* ownership of the streams moves to vt */
    result_init(res);
    if (v != VERDICT_ACCEPTED || !vt->why[0])
        snprintf(vt->why, sizeof(vt->why), "%s", why);
}

/* cancelled(rt) — the caller asked running work to stop (its cancel fd is readable):
 * a failure then is no reason to retry. */
static bool cancelled(const struct sandbox_runtime *rt)
{
    struct pollfd pf = {.fd = rt->cancel_fd, .events = POLLIN};

    return rt->cancel_fd >= 0 && poll(&pf, 1, 0) == 1;
}

/* new_token(buf, size) — 128 random bits as hex. */
static void new_token(char *buf, size_t size)
{
    unsigned char raw[16];

    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
        for (size_t i = 0; i < sizeof(raw); i++) /* not expected; still unpredictable enough */
            raw[i] = (unsigned char)(rand() ^ (int)(util_now() * 1e9) >> (i % 8));
    for (size_t i = 0; i < sizeof(raw) && 2 * i + 2 < size; i++)
        snprintf(buf + 2 * i, 3, "%02x", raw[i]);
}

/* take_token(out, token) — true when the output's last line is the token; the line (and the
 * newline before it, which the epilogue adds) is removed from the captured output. */
static bool take_token(struct result_stream *out, const char *token)
{
    size_t tl = strlen(token), len = out->len;

    if (!out->data || len < tl + 1 || out->data[len - 1] != '\n')
        return false;
    if (memcmp(out->data + len - 1 - tl, token, tl) != 0 ||
        (len > tl + 1 && out->data[len - tl - 2] != '\n'))
        return false;
    out->len = len - tl - 1;
    if (out->len > 0 && out->data[out->len - 1] == '\n')
        out->len--;
    out->data[out->len] = '\0';
    return true;
}

/* assert_program(…) — runs solution + prologue + test_code + epilogue in a fresh sandbox,
 * with infra retries; res and *v get the outcome. Returns false on a compile error. */
static bool assert_program(const struct sandbox_runtime *rt, const struct image *img,
                           const struct task *t, const char *solution, const char *test_code,
                           const struct task_test *tt, const struct verify_opts *o,
                           struct verify_result *vr, struct result *res, enum verdict *v, char *why,
                           size_t why_size)
{
    const char *pro = t->lang->test_prologue ? t->lang->test_prologue : "";
    const char *epi = t->lang->test_epilogue ? t->lang->test_epilogue : "";
    const char *setup = t->test_setup ? t->test_setup : "";
    size_t len =
        strlen(setup) + strlen(solution) + strlen(pro) + strlen(test_code) + strlen(epi) + 4;
    char *program = malloc(len), token[40], token_env[64];
    const char *env[16];
    size_t nenv = 0;

    /* A fresh token per run: exiting 0 before the test code ends (sys.exit in the solution,
     * say) cannot pass, since only the epilogue prints the token. */
    new_token(token, sizeof(token));
    snprintf(token_env, sizeof(token_env), "CRUCIBLE_TEST_TOKEN=%s", token);
    for (const char *const *e = t->lang->env; e && *e && nenv < 14; e++)
        env[nenv++] = *e;
    if (*epi)
        env[nenv++] = token_env;
    env[nenv] = NULL;
    *v = VERDICT_INFRA_ERROR;
    why[0] = '\0';
    result_init(res);
    if (!program) {
        result_fail(res, "out of memory");
        snprintf(why, why_size, "out of memory");
        return true;
    }
    snprintf(program, len, "%s%s%s\n%s%s\n%s", setup, *setup ? "\n" : "", solution, pro, test_code,
             epi);
    for (unsigned attempt = 0; attempt <= o->infra_retries && !cancelled(rt); attempt++) {
        struct sandbox *sb;
        enum box_state st =
            box_open(rt, o, img, t, program, strlen(program), &sb, vr, why, why_size);
        if (st == BOX_COMPILE_ERROR) {
            free(program);
            return false;
        }
        result_release(res);
        result_init(res);
        if (st == BOX_INFRA) {
            result_fail(res, "%s", why);
            continue;
        }
        exec_argv(sb, lang_steps(t->lang, true).run, env, NULL, 0, SANDBOX_EXEC_LAST, res);
        pool_release(o->pool, sb);
        if (*epi && res->status == RESULT_OK && !take_token(&res->out, token)) {
            res->status = RESULT_RUNTIME_ERROR;
            snprintf(res->message, sizeof(res->message),
                     "the program exited before the test code finished");
        }
        *v = run_verdict(t, tt, res, why, why_size);
        if (*v != VERDICT_INFRA_ERROR)
            break;
    }
    if (*v == VERDICT_INFRA_ERROR && !why[0])
        snprintf(why, why_size, "%s", res->message);
    free(program);
    return true;
}

/* assert_test(…) — one test, one repeat. Returns false on a compile error. */
static bool assert_test(const struct sandbox_runtime *rt, const struct image *img,
                        const struct task *t, const char *solution, size_t i,
                        const struct verify_opts *o, struct verify_result *vr, struct tally *ty)
{
    struct result res;
    enum verdict v;
    char why[256];

    if (!assert_program(rt, img, t, solution, t->tests[i].code, &t->tests[i], o, vr, &res, &v, why,
                        sizeof(why)))
        return false;
    test_record(&vr->tests[i], ty, v, &res, why);
    result_release(&res);
    return true;
}

/* assert_all(…) — every test of an interpreted language in one program first: when that
 * passes (exit 0 and the token after the last test), every test passed, for the price of one
 * interpreter start. Otherwise each test runs alone to say which failed and how. Returns true
 * when the combined run settled all tests. */
static bool assert_all(const struct sandbox_runtime *rt, const struct image *img,
                       const struct task *t, const char *solution, const struct verify_opts *o,
                       struct verify_result *vr, struct tally *tys)
{
    struct task whole = *t;
    struct result res;
    enum verdict v;
    size_t len = 1;
    char *code, why[256];

    for (size_t i = 0; i < t->ntests; i++)
        len += strlen(t->tests[i].code) + 1;
    code = malloc(len);
    if (!code)
        return false;
    code[0] = '\0';
    for (size_t i = 0; i < t->ntests; i++) {
        strcat(code, t->tests[i].code);
        strcat(code, "\n");
    }
    /* the limits are per test: the combined program gets the sum */
    whole.limits.cpu_time *= (double)t->ntests;
    whole.limits.wall_time *= (double)t->ntests;
    if (whole.limits.cpu_time > sandbox_limit_ranges[LIM_CPU].max)
        whole.limits.cpu_time = sandbox_limit_ranges[LIM_CPU].max;
    if (whole.limits.wall_time > sandbox_limit_ranges[LIM_WALL].max)
        whole.limits.wall_time = sandbox_limit_ranges[LIM_WALL].max;
    assert_program(rt, img, &whole, solution, code, &t->tests[0], o, vr, &res, &v, why,
                   sizeof(why));
    free(code);
    if (v != VERDICT_ACCEPTED && v != VERDICT_INFRA_ERROR && o->verdict_only) {
        test_record(&vr->tests[0], &tys[0], v, &res, "the tests failed when run together");
        for (size_t i = 1; i < t->ntests; i++)
            tys[i].count[VERDICT_NOT_RUN]++;
        return true;
    }
    if (v != VERDICT_ACCEPTED) {
        result_release(&res);
        return false;
    }
    /* The run's streams go to the first test's record; the others share its figures. */
    test_record(&vr->tests[0], &tys[0], VERDICT_ACCEPTED, &res, "");
    for (size_t i = 1; i < t->ntests; i++) {
        struct result shared = vr->tests[0].run;
        shared.out = (struct result_stream){0};
        shared.err = (struct result_stream){0};
        test_record(&vr->tests[i], &tys[i], VERDICT_ACCEPTED, &shared, "");
    }
    return true;
}

/* judge(…) — the task's checker program on one run's output, in a sandbox of its own (the
 * solution never sees the expected output). Returns the verdict: accepted, wrong_answer, or
 * infra_error when the checker itself fails (the task's fault, never the solution's). */
static enum verdict judge(const struct sandbox_runtime *rt, const struct verify_opts *o,
                          const struct image *img, const struct task *t, const struct task_test *tt,
                          const struct result *run, char *why, size_t why_size)
{
    struct lang_steps steps = lang_steps(t->judge_lang, false);
    struct sandbox_limits lim;
    struct errbuf err = {{0}};
    struct result res;
    struct sandbox *sb;
    enum verdict v = VERDICT_INFRA_ERROR;

    sandbox_limits_default(&lim);
    lim.disk_mb = 64 + (uint64_t)((tt->stdin_len + tt->expected_len + run->out.len) >> 20) * 2;
    if (!lang_available(t->judge_lang, img, &err) ||
        !(sb = pool_acquire(o->pool, rt, img, &lim, &err))) {
        snprintf(why, why_size, "checker program: %s", err.msg);
        return v;
    }
    if (put_text(sb, "input", tt->stdin_data, tt->stdin_len, 0644, &err) < 0 ||
        put_text(sb, "expected", tt->expected, tt->expected_len, 0644, &err) < 0 ||
        put_text(sb, "output", run->out.data ? run->out.data : "", run->out.len, 0644, &err) < 0 ||
        put_text(sb, steps.source, t->judge_code, strlen(t->judge_code), 0644, &err) < 0) {
        snprintf(why, why_size, "checker program: %s", err.msg);
        pool_release(o->pool, sb);
        return v;
    }
    if (steps.compile) {
        exec_argv(sb, steps.compile, t->judge_lang->env, NULL, 0, 0, &res);
        if (res.status != RESULT_OK) {
            snprintf(why, why_size, "checker program does not compile: %.200s",
                     res.err.data ? res.err.data : "");
            result_release(&res);
            pool_release(o->pool, sb);
            return v;
        }
        result_release(&res);
    }
    exec_argv(sb, steps.run, t->judge_lang->env, NULL, 0, SANDBOX_EXEC_LAST, &res);
    pool_release(o->pool, sb);
    if (res.status == RESULT_OK) {
        v = VERDICT_ACCEPTED;
    } else if (res.status == RESULT_RUNTIME_ERROR && (res.exit_code == 1 || res.exit_code == 2)) {
        const char *msg = res.err.len ? res.err.data : res.out.data ? res.out.data : "";
        v = VERDICT_WRONG_ANSWER;
        snprintf(why, why_size, "checker: %.*s", (int)strcspn(msg, "\n"), msg);
    } else {
        snprintf(why, why_size, "the checker program failed (%s%s%s)",
                 result_status_name(res.status), res.message[0] ? ": " : "", res.message);
    }
    result_release(&res);
    return v;
}

/* stdio_repeat(…) — every test once in one sandbox (recreated after an infra failure). */
static bool stdio_repeat(const struct sandbox_runtime *rt, const struct image *img,
                         const struct task *t, const char *solution, const struct verify_opts *o,
                         struct verify_result *vr, struct tally *tys)
{
    struct sandbox *sb = NULL;
    unsigned failures = 0;
    char why[256];
    size_t i = 0;

    while (i < t->ntests) {
        const struct task_test *tt = &t->tests[i];
        struct result res;
        enum verdict v;

        if (!sb) {
            enum box_state st =
                box_open(rt, o, img, t, solution, strlen(solution), &sb, vr, why, sizeof(why));
            if (st == BOX_COMPILE_ERROR)
                return false;
            if (st == BOX_INFRA) {
                if (++failures <= o->infra_retries && !cancelled(rt))
                    continue;
                result_init(&res);
                result_fail(&res, "%s", why);
                test_record(&vr->tests[i], &tys[i], VERDICT_INFRA_ERROR, &res, why);
                result_release(&res);
                failures = 0;
                i++;
                continue;
            }
        }
        exec_argv(sb, t->lang->run, t->lang->env, tt->stdin_data, tt->stdin_len,
                  i + 1 == t->ntests ? SANDBOX_EXEC_LAST : 0, &res);
        v = run_verdict(t, tt, &res, why, sizeof(why));
        if (v == VERDICT_ACCEPTED && t->judge_code) {
            v = judge(rt, o, img, t, tt, &res, why, sizeof(why));
            if (v == VERDICT_INFRA_ERROR) { /* the checker's failure: no retry of the solution */
                test_record(&vr->tests[i], &tys[i], v, &res, why);
                result_release(&res);
                failures = 0;
                if (++i < t->ntests && sandbox_kill_others(sb, NULL) < 0) {
                    pool_release(o->pool, sb);
                    sb = NULL;
                }
                continue;
            }
        }
        if (v == VERDICT_INFRA_ERROR ||
            (i + 1 < t->ntests && res.status != RESULT_OK && sandbox_kill_others(sb, NULL) < 0)) {
            pool_release(o->pool, sb);
            sb = NULL;
            if (v == VERDICT_INFRA_ERROR && ++failures <= o->infra_retries && !cancelled(rt)) {
                result_release(&res);
                continue;
            }
        } else if (i + 1 < t->ntests && res.status == RESULT_OK &&
                   sandbox_kill_others(sb, NULL) < 0) {
            pool_release(o->pool, sb);
            sb = NULL;
        }
        test_record(&vr->tests[i], &tys[i], v, &res, why);
        result_release(&res);
        failures = 0;
        i++;
    }
    if (sb)
        pool_release(o->pool, sb);
    return true;
}

/* The command harness: one run of the task's test command per repeat, judged by the
 * JUnit report it leaves in the work directory. */

#define REPORT_MAX_BYTES (16u << 20)
#define WHOLE_RUN_TEST   "(test command)" /* the one test when the report names none */

/* add_test(vr, tys, name) — a test found in the first report (no names in the task). */
static int add_test(struct verify_result *vr, struct tally **tys, const char *name)
{
    struct verify_test *vt = realloc(vr->tests, (vr->total + 1) * sizeof(*vt));
    struct tally *ty;

    if (!vt)
        return -ENOMEM;
    vr->tests = vt;
    ty = realloc(*tys, (vr->total + 1) * sizeof(*ty));
    if (!ty)
        return -ENOMEM;
    *tys = ty;
    vt = &vr->tests[vr->total];
    memset(vt, 0, sizeof(*vt));
    memset(&ty[vr->total], 0, sizeof(*ty));
    result_init(&vt->run);
    vt->verdict = VERDICT_NOT_RUN;
    if (!(vt->name = strdup(name)))
        return -ENOMEM;
    vt->name_owned = true;
    vr->total++;
    return 0;
}

static bool has_test(const struct verify_result *vr, const char *name)
{
    for (size_t i = 0; i < vr->total; i++)
        if (strcmp(vr->tests[i].name, name) == 0)
            return true;
    return false;
}

/* case_verdict(c, why) — a report's outcome as a test verdict. */
static enum verdict case_verdict(const struct junit_case *c, char *why, size_t n)
{
    switch (c->outcome) {
    case JUNIT_PASSED:
        why[0] = '\0';
        return VERDICT_ACCEPTED;
    case JUNIT_ERROR:
        snprintf(why, n, "error%s%s", c->message[0] ? ": " : "", c->message);
        return VERDICT_RUNTIME_ERROR;
    case JUNIT_SKIPPED:
        snprintf(why, n, "skipped%s%s (a named test must pass)", c->message[0] ? ": " : "",
                 c->message);
        return VERDICT_WRONG_ANSWER;
    case JUNIT_FAILED:
    default:
        snprintf(why, n, "failed%s%s", c->message[0] ? ": " : "", c->message);
        return VERDICT_WRONG_ANSWER;
    }
}

/* command_judge(t, vr, tys, res, rep, report_err) — every test's verdict for one run: a run
 * stopped by a limit fails every test with that limit (its report cannot be complete); no
 * usable report fails every test as a runtime error; otherwise each test takes its case's
 * outcome, and a test missing from the report fails. */
static void command_judge(const struct task *t, struct verify_result *vr, struct tally **tys,
                          struct result *res, const struct junit_report *rep,
                          const char *report_err)
{
    char run_why[256], why[300];
    enum verdict run_v = run_verdict(t, NULL, res, run_why, sizeof(run_why));
    bool limit = res->status == RESULT_TIMEOUT || res->status == RESULT_MEMORY_LIMIT ||
                 res->status == RESULT_OUTPUT_LIMIT;
    bool all_passed = rep != NULL;

    for (size_t i = 0; rep && i < rep->n; i++)
        if (rep->cases[i].outcome != JUNIT_PASSED && rep->cases[i].outcome != JUNIT_SKIPPED)
            all_passed = false;
    if (t->ntests == 0 && vr->total == 0) {
        /* Discovery: the first run's cases are the tests (skipped ones are not counted). */
        for (size_t i = 0; rep && !limit && i < rep->n; i++)
            if (rep->cases[i].outcome != JUNIT_SKIPPED && !has_test(vr, rep->cases[i].id) &&
                add_test(vr, tys, rep->cases[i].id) < 0)
                break;
        if (vr->total == 0 && add_test(vr, tys, WHOLE_RUN_TEST) < 0)
            return;
    }
    for (size_t i = 0; i < vr->total; i++) {
        struct verify_test *vt = &vr->tests[i];
        struct result copy = *res; /* the command's record, without its streams */
        const struct junit_case *c;
        enum verdict v;

        memset(&copy.out, 0, sizeof(copy.out));
        memset(&copy.err, 0, sizeof(copy.err));
        if (limit || run_v == VERDICT_INFRA_ERROR) {
            v = run_v;
            snprintf(why, sizeof(why), "%s", run_why);
        } else if (!rep) {
            v = VERDICT_RUNTIME_ERROR;
            if (res->exit_code > 0)
                snprintf(why, sizeof(why),
                         "no usable JUnit report (%s); the test command exited with %d", report_err,
                         res->exit_code);
            else
                snprintf(why, sizeof(why), "no usable JUnit report (%s)", report_err);
        } else if (strcmp(vt->name, WHOLE_RUN_TEST) == 0 && t->ntests == 0) {
            v = all_passed && rep->n ? VERDICT_ACCEPTED : VERDICT_WRONG_ANSWER;
            snprintf(why, sizeof(why), "%s",
                     v == VERDICT_ACCEPTED ? ""
                     : rep->n              ? "a test case did not pass"
                                           : "the report lists no test that ran");
        } else if (!(c = junit_find(rep, vt->name))) {
            v = VERDICT_WRONG_ANSWER;
            snprintf(why, sizeof(why), "not in the JUnit report");
        } else {
            v = case_verdict(c, why, sizeof(why));
        }
        test_record(vt, &(*tys)[i], v, &copy, why);
    }
}

/* command_repeat(…) — one run of the test command in a fresh sandbox (recreated after an
 * infra failure). Returns false on a build (compile) error. */
static bool command_repeat(const struct sandbox_runtime *rt, const struct image *img,
                           const struct task *t, const char *solution, const struct verify_opts *o,
                           struct verify_result *vr, struct tally **tys)
{
    unsigned failures = 0;

    for (;;) {
        struct errbuf err = {{0}}, rerr = {{0}};
        struct junit_report rep = {0};
        struct sandbox *sb;
        struct result res;
        char why[256], *xml = NULL;
        size_t xml_len = 0;
        bool have_report = false;
        enum box_state st =
            box_open(rt, o, img, t, solution, strlen(solution), &sb, vr, why, sizeof(why));

        if (st == BOX_COMPILE_ERROR)
            return false;
        result_init(&res);
        if (st == BOX_INFRA) {
            result_fail(&res, "%s", why);
        } else {
            bool readable;
            exec_argv(sb, (const char *const *)t->command, t->lang->env, NULL, 0, 0, &res);
            /* A run a limit stopped has no complete report (and its sandbox is torn down);
             * otherwise nothing may still be writing the report while we read it. */
            readable = res.status == RESULT_OK || res.status == RESULT_RUNTIME_ERROR ||
                       res.status == RESULT_SIGNALED;
            if (readable && sandbox_kill_others(sb, &err) < 0)
                result_fail(&res, "%s", err.msg);
            if (readable && res.status != RESULT_SANDBOX_ERROR)
                have_report =
                    sandbox_get_file(sb, t->report, REPORT_MAX_BYTES, &xml, &xml_len, &rerr) == 0 &&
                    junit_parse(xml, xml_len, &rep, &rerr) == 0;
            if (sandbox_destroy(sb, &err) < 0 && res.status != RESULT_SANDBOX_ERROR)
                result_fail(&res, "%s", err.msg);
        }
        if (res.status == RESULT_SANDBOX_ERROR && ++failures <= o->infra_retries &&
            !cancelled(rt)) {
            result_release(&res);
            junit_release(&rep);
            free(xml);
            continue;
        }
        if (!have_report && !rerr.msg[0])
            snprintf(rerr.msg, sizeof(rerr.msg), "not read");
        command_judge(t, vr, tys, &res,
                      res.status == RESULT_SANDBOX_ERROR || !have_report ? NULL : &rep, rerr.msg);
        if (vr->has_command)
            result_release(&vr->command);
        vr->command = res; /* the streams move to the record */
        vr->has_command = true;
        junit_release(&rep);
        free(xml);
        return true;
    }
}

/* constraints_check(t, solution, why) — false when the solution breaks a constraint. */
static bool constraints_check(const struct task *t, const char *solution, char *why, size_t n)
{
    if (t->max_bytes && strlen(solution) > t->max_bytes) {
        snprintf(why, n, "solution is %zu bytes, more than the %zu allowed", strlen(solution),
                 t->max_bytes);
        return false;
    }
    for (size_t i = 0; i < t->nforbid; i++) {
        regex_t re;
        bool hit;
        if (regcomp(&re, t->forbid[i], REG_EXTENDED | REG_NOSUB | REG_NEWLINE) != 0)
            continue; /* validated at parse time */
        hit = regexec(&re, solution, 0, NULL, 0) == 0;
        regfree(&re);
        if (hit) {
            snprintf(why, n, "solution matches the forbidden pattern '%s'", t->forbid[i]);
            return false;
        }
    }
    return true;
}

/* majority(ty, agree) — the verdict most repeats gave; ties go to the worse (non-accepted,
 * then the lower-numbered failure). */
static enum verdict majority(const struct tally *ty, unsigned *agree)
{
    enum verdict best = VERDICT_INFRA_ERROR;
    unsigned n = 0;

    for (int v = VERDICT_COUNT - 1; v >= 0; v--) {
        if (ty->count[v] > n || (ty->count[v] == n && n > 0 && best == VERDICT_ACCEPTED)) {
            best = (enum verdict)v;
            n = ty->count[v];
        }
    }
    *agree = n;
    return best;
}

int verify_calibrate(const struct sandbox_runtime *rt, const struct task *t,
                     const struct verify_opts *o, double *seconds)
{
    struct verify_result vr;
    struct verify_opts ro = *o;
    struct task plain = *t;
    int r = 0;

    if (!t->reference)
        return -ENOENT;
    plain.time_factor = 0; /* the task's own limits, not relative ones */
    ro.repeats = 1;
    verify_run(rt, &plain, t->reference, &ro, &vr);
    *seconds = 0;
    for (size_t i = 0; i < vr.total; i++)
        if (vr.tests[i].run.cpu_time > *seconds)
            *seconds = vr.tests[i].run.cpu_time;
    if (vr.verdict != VERDICT_ACCEPTED)
        r = -EINVAL;
    verify_result_release(&vr);
    return r;
}

int verify_run(const struct sandbox_runtime *rt, const struct task *task, const char *solution,
               const struct verify_opts *o, struct verify_result *vr)
{
    struct task relative;
    const struct task *t = task;
    struct errbuf err = {{0}};
    struct image *own = NULL;
    const struct image *img = o->image;
    struct tally *tys;
    double t0 = util_now();
    char why[512];

    memset(vr, 0, sizeof(*vr));
    vr->repeats = o->repeats ? o->repeats : 1;
    vr->total = t->ntests;
    vr->tests = calloc(t->ntests + 1, sizeof(*vr->tests));
    tys = calloc(t->ntests + 1, sizeof(*tys));
    if (!vr->tests || !tys) {
        free(tys);
        vr->verdict = VERDICT_INFRA_ERROR;
        vr->reward_null = true;
        snprintf(vr->message, sizeof(vr->message), "out of memory");
        return 0;
    }
    for (size_t i = 0; i < t->ntests; i++) {
        vr->tests[i].name = t->tests[i].name;
        vr->tests[i].verdict = VERDICT_NOT_RUN;
        result_init(&vr->tests[i].run);
    }
    if (!constraints_check(t, solution, why, sizeof(why))) {
        vr->verdict = VERDICT_CONSTRAINT_VIOLATION;
        snprintf(vr->message, sizeof(vr->message), "%s", why);
        goto out;
    }
    if (!img || strcmp(t->image, "host") != 0) {
        own = calloc(1, sizeof(*own));
        if (!own || image_resolve(t->image, own, &err) < 0) {
            vr->verdict = VERDICT_INFRA_ERROR;
            vr->reward_null = true;
            snprintf(vr->message, sizeof(vr->message), "%s", own ? err.msg : "out of memory");
            goto out;
        }
        img = own;
    }
    if (!lang_available(t->lang, img, &err)) {
        vr->verdict = VERDICT_INFRA_ERROR;
        vr->reward_null = true;
        snprintf(vr->message, sizeof(vr->message), "%s", err.msg);
        goto out;
    }
    if (t->time_factor > 0) {
        /* EvalPlus-style: the limit scales with what the reference needs. */
        double ref = t->reference_time, lim;
        if (ref < 0 && verify_calibrate(rt, t, o, &ref) < 0) {
            vr->verdict = VERDICT_INFRA_ERROR;
            vr->reward_null = true;
            snprintf(vr->message, sizeof(vr->message),
                     "cannot calibrate the relative time limit: the task's reference is not "
                     "accepted");
            goto out;
        }
        lim = t->time_factor * ref;
        if (lim < t->time_min)
            lim = t->time_min;
        if (lim > sandbox_limit_ranges[LIM_CPU].max)
            lim = sandbox_limit_ranges[LIM_CPU].max;
        relative = *t;
        relative.limits.cpu_time = lim;
        if (relative.limits.wall_time < 2 * lim + 1)
            relative.limits.wall_time = 2 * lim + 1;
        t = &relative;
    }
    for (unsigned rep = 0; rep < vr->repeats; rep++) {
        bool compiled = true;
        if (t->harness == TASK_HARNESS_STDIO) {
            compiled = stdio_repeat(rt, img, t, solution, o, vr, tys);
        } else if (t->harness == TASK_HARNESS_COMMAND) {
            compiled = command_repeat(rt, img, t, solution, o, vr, &tys);
        } else {
            bool settled = t->ntests > 1 && !lang_steps(t->lang, true).compile &&
                           assert_all(rt, img, t, solution, o, vr, tys);
            for (size_t i = 0; !settled && i < t->ntests && compiled; i++)
                compiled = assert_test(rt, img, t, solution, i, o, vr, &tys[i]);
        }
        if (!compiled) {
            vr->verdict = VERDICT_COMPILE_ERROR;
            snprintf(vr->message, sizeof(vr->message), "compilation failed");
            goto out;
        }
    }
    /* Aggregate: majority per test, then the task. */
    vr->verdict = VERDICT_ACCEPTED;
    for (size_t i = 0; i < vr->total; i++) {
        struct verify_test *vt = &vr->tests[i];
        unsigned kinds = 0;
        vt->verdict = majority(&tys[i], &vt->agree);
        for (int v = 0; v < VERDICT_COUNT; v++)
            kinds += tys[i].count[v] > 0;
        if (kinds > 1)
            vr->flaky = true;
        if (vt->verdict == VERDICT_ACCEPTED)
            vr->passed++;
        else if (vr->verdict == VERDICT_ACCEPTED || vt->verdict == VERDICT_INFRA_ERROR)
            vr->verdict = vt->verdict; /* the first failure names the task, infra wins */
    }
    if (vr->verdict == VERDICT_INFRA_ERROR) {
        vr->reward_null = true;
        if (cancelled(rt))
            snprintf(vr->message, sizeof(vr->message), "interrupted before the tests finished");
        else {
            const char *cause = "";
            for (size_t i = 0; i < vr->total && !cause[0]; i++)
                if (vr->tests[i].verdict == VERDICT_INFRA_ERROR)
                    cause = vr->tests[i].why;
            snprintf(vr->message, sizeof(vr->message),
                     "no reward is given: a test could not be judged (%u retries): %s",
                     o->infra_retries, cause);
        }
    }
out:
    if (!vr->reward_null) {
        if (vr->verdict == VERDICT_ACCEPTED)
            vr->reward = 1.0;
        else if (o->reward == REWARD_FRACTION && vr->verdict != VERDICT_COMPILE_ERROR &&
                 vr->verdict != VERDICT_CONSTRAINT_VIOLATION && vr->total)
            vr->reward = (double)vr->passed / (double)vr->total;
        else
            vr->reward = 0.0;
    }
    vr->wall_time = util_now() - t0;
    free(tys);
    free(own);
    return 0;
}

void verify_result_release(struct verify_result *vr)
{
    for (size_t i = 0; vr->tests && i < vr->total; i++) {
        result_release(&vr->tests[i].run);
        if (vr->tests[i].name_owned)
            free(vr->tests[i].name);
    }
    free(vr->tests);
    if (vr->has_compile)
        result_release(&vr->compile);
    if (vr->has_command)
        result_release(&vr->command);
    memset(vr, 0, sizeof(*vr));
}

/* seconds(x) — a time rounded to microseconds, as in result records. */
static json_t *seconds(double x)
{
    return json_real((double)(long long)(x * 1e6 + 0.5) / 1e6);
}

/* excerpt(s) — the first EXCERPT_BYTES of a stream as JSON text (invalid UTF-8 escaped). */
static json_t *excerpt(const struct result_stream *st)
{
    size_t n = st->len < EXCERPT_BYTES ? st->len : EXCERPT_BYTES;
    char *esc = result_text_escape(st->data ? st->data : "", n);
    json_t *j = esc ? json_string(esc) : NULL;

    free(esc);
    return j ? j : json_string("");
}

json_t *verify_result_to_json(const struct task *t, const struct verify_result *vr)
{
    json_t *o = json_object(), *tests = json_array();

    if (!o || !tests) {
        json_decref(o);
        json_decref(tests);
        return NULL;
    }
    json_object_set_new(o, "task_id", json_string(t->id));
    json_object_set_new(o, "task_version", json_string(t->version));
    json_object_set_new(o, "verdict", json_string(verdict_name(vr->verdict)));
    json_object_set_new(o, "reward", vr->reward_null ? json_null() : json_real(vr->reward));
    json_object_set_new(o, "passed", json_integer((json_int_t)vr->passed));
    json_object_set_new(o, "total", json_integer((json_int_t)vr->total));
    json_object_set_new(o, "repeats", json_integer(vr->repeats));
    json_object_set_new(o, "flaky", json_boolean(vr->flaky));
    json_object_set_new(o, "compile", vr->has_compile ? result_to_json(&vr->compile) : json_null());
    if (vr->has_command)
        json_object_set_new(o, "test_command", result_to_json(&vr->command));
    for (size_t i = 0; i < vr->total; i++) {
        const struct verify_test *vt = &vr->tests[i];
        const struct result *r = &vt->run;
        json_t *tj = json_object();
        const char *lim = result_limit_name(r->limit);
        json_object_set_new(tj, "name", json_string(vt->name));
        if (i < t->ntests && t->tests[i].group)
            json_object_set_new(tj, "group", json_string(t->tests[i].group));
        json_object_set_new(tj, "verdict", json_string(verdict_name(vt->verdict)));
        json_object_set_new(tj, "agree", json_integer(vt->agree));
        json_object_set_new(tj, "status",
                            vt->verdict == VERDICT_NOT_RUN
                                ? json_null()
                                : json_string(result_status_name(r->status)));
        json_object_set_new(tj, "exit_code",
                            r->exit_code >= 0 ? json_integer(r->exit_code) : json_null());
        json_object_set_new(tj, "signal", r->signal ? json_integer(r->signal) : json_null());
        json_object_set_new(tj, "limit", lim ? json_string(lim) : json_null());
        json_object_set_new(tj, "cpu_time", seconds(r->cpu_time));
        json_object_set_new(tj, "wall_time", seconds(r->wall_time));
        json_object_set_new(tj, "memory_kb", json_integer((json_int_t)r->memory_kb));
        json_object_set_new(tj, "stdout", excerpt(&r->out));
        json_object_set_new(tj, "stderr", excerpt(&r->err));
        if (vt->why[0]) {
            char *esc = result_text_escape(vt->why, strlen(vt->why));
            json_object_set_new(tj, "why", json_string(esc ? esc : ""));
            free(esc);
        }
        json_array_append_new(tests, tj);
    }
    json_object_set_new(o, "tests", tests);
    json_object_set_new(o, "wall_time", seconds(vr->wall_time));
    {
        char *esc = result_text_escape(vr->message, strlen(vr->message));
        json_object_set_new(o, "message", json_string(esc ? esc : ""));
        free(esc);
    }
    return o;
}

char *verify_program_text(const struct task *t, enum solution_kind kind, const char *text,
                          char *how, size_t how_size)
{
    char *out;
    size_t n;

    switch (kind) {
    case SOLUTION_COMPLETION:
        n = (t->prompt ? strlen(t->prompt) : 0) + strlen(text) + 1;
        out = malloc(n);
        if (out)
            snprintf(out, n, "%s%s", t->prompt ? t->prompt : "", text);
        snprintf(how, how_size,
                 t->prompt ? "prompt + completion" : "completion (task has no prompt)");
        return out;
    case SOLUTION_RESPONSE:
        return extract_code(text, t->lang->name, how, how_size);
    case SOLUTION_PROGRAM:
    default:
        snprintf(how, how_size, "full program");
        return strdup(text);
    }
}
