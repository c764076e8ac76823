/*
 * verify_assert.c — the assert harness: every test is its own program (solution,
 * prologue, test code, epilogue) in its own fresh sandbox, so no test's code is ever
 * visible to another test's run. Interpreted languages first run all tests as one program
 * and fall back to one program per test only when that fails (to say which failed). The
 * epilogue prints a fresh token after the test code: exiting 0 before the tests end
 * (sys.exit in the solution) cannot pass.
 */
#include "judge/verify_int.h"
#include "sandbox/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

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
    for (unsigned attempt = 0; attempt <= o->infra_retries && !verify__cancelled(rt); attempt++) {
        struct sandbox *sb;
        enum box_state st =
            verify__box_open(rt, o, img, t, program, strlen(program), &sb, vr, why, why_size);
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
        verify__exec(sb, lang_steps(t->lang, true).run, env, NULL, 0, SANDBOX_EXEC_LAST, res);
        pool_release(o->pool, sb);
        if (*epi && res->status == RESULT_OK && !take_token(&res->out, token)) {
            res->status = RESULT_RUNTIME_ERROR;
            snprintf(res->message, sizeof(res->message),
                     "the program exited before the test code finished");
        }
        *v = verify__run_verdict(t, tt, res, why, why_size);
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
    verify__test_record(&vr->tests[i], ty, v, &res, why);
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
        verify__test_record(&vr->tests[0], &tys[0], v, &res, "the tests failed when run together");
        for (size_t i = 1; i < t->ntests; i++)
            tys[i].count[VERDICT_NOT_RUN]++;
        return true;
    }
    if (v != VERDICT_ACCEPTED) {
        result_release(&res);
        return false;
    }
    /* The run's streams go to the first test's record; the others share its figures. */
    verify__test_record(&vr->tests[0], &tys[0], VERDICT_ACCEPTED, &res, "");
    for (size_t i = 1; i < t->ntests; i++) {
        struct result shared = vr->tests[0].run;
        shared.out = (struct result_stream){0};
        shared.err = (struct result_stream){0};
        verify__test_record(&vr->tests[i], &tys[i], VERDICT_ACCEPTED, &shared, "");
    }
    return true;
}

bool verify__assert_repeat(const struct sandbox_runtime *rt, const struct image *img,
                           const struct task *t, const char *solution, const struct verify_opts *o,
                           struct verify_result *vr, struct tally *tys)
{
    bool settled = t->ntests > 1 && !lang_steps(t->lang, true).compile &&
                   assert_all(rt, img, t, solution, o, vr, tys);
    bool compiled = true;

    for (size_t i = 0; !settled && i < t->ntests && compiled; i++)
        compiled = assert_test(rt, img, t, solution, i, o, vr, &tys[i]);
    return compiled;
}
