/*
 * verify_stdio.c — the stdio harness: one sandbox per repeat; the solution is compiled
 * once, then runs once per test with the test's input on stdin, every other process killed
 * between tests. Expected outputs stay in the supervisor; a checker program judges in a
 * sandbox of its own, and a Kattis output validator in the validator box of the
 * verification (verify_validator.c).
 */
#include "judge/verify_int.h"
#include "sandbox/pool.h"

#include <stdio.h>
#include <string.h>

/* judge(…) — the task's checker program on one run's output, in a sandbox of its own (the
 * solution never sees the expected output). Returns the verdict: accepted, wrong_answer, or
 * infra_error when the checker itself fails (the task's fault, never the solution's). */
static enum verdict judge(const struct sandbox_runtime *rt, const struct verify_opts *o,
                          const struct image *img, const struct task *t, const struct task_test *tt,
                          const struct result *run, char *why, size_t why_size)
{
    struct lang_plan steps;
    struct sandbox_limits lim;
    struct errbuf err = {{0}};
    struct result res;
    struct sandbox *sb;
    enum verdict v = VERDICT_INFRA_ERROR;

    sandbox_limits_default(&lim);
    lim.disk_mb = 64 + (uint64_t)((tt->stdin_len + tt->expected_len + run->out.len) >> 20) * 2;
    if (lang_plan_program(t->judge_lang, false, t->judge_code, strlen(t->judge_code), &steps) < 0 ||
        lang_plan_image(t->judge_lang, img, &steps) < 0) {
        snprintf(why, why_size, "checker program: out of memory");
        return v;
    }
    if (!lang_available(t->judge_lang, img, &err) ||
        !(sb = pool_acquire(o->pool, rt, img, &lim, &err))) {
        snprintf(why, why_size, "checker program: %s", err.msg);
        lang_plan_release(&steps);
        return v;
    }
    if (verify__put_text(sb, "input", tt->stdin_data, tt->stdin_len, 0644, &err) < 0 ||
        verify__put_text(sb, "expected", tt->expected, tt->expected_len, 0644, &err) < 0 ||
        verify__put_text(sb, "output", run->out.data ? run->out.data : "", run->out.len, 0644,
                         &err) < 0 ||
        verify__put_text(sb, steps.source, t->judge_code, strlen(t->judge_code), 0644, &err) < 0) {
        snprintf(why, why_size, "checker program: %s", err.msg);
        pool_release(o->pool, sb);
        lang_plan_release(&steps);
        return v;
    }
    if (steps.compile) {
        sandbox_exec_input(sb, steps.compile, t->judge_lang->env, NULL, 0, 0, &res);
        if (res.status != RESULT_OK) {
            snprintf(why, why_size, "checker program does not compile: %.200s",
                     res.err.data ? res.err.data : "");
            result_release(&res);
            pool_release(o->pool, sb);
            lang_plan_release(&steps);
            return v;
        }
        result_release(&res);
    }
    sandbox_exec_input(sb, steps.run, t->judge_lang->env, NULL, 0, SANDBOX_EXEC_LAST, &res);
    pool_release(o->pool, sb);
    lang_plan_release(&steps);
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

/* verify__stdio_repeat(…) — every test once in one sandbox (recreated after an infra failure). */
bool verify__stdio_repeat(const struct sandbox_runtime *rt, const struct image *img,
                          const struct task *t, const char *solution, const struct verify_opts *o,
                          struct verify_result *vr, struct tally *tys, struct validator_box *vb)
{
    struct sandbox *sb = NULL;
    struct lang_plan plan = {0};
    unsigned failures = 0;
    char why[256];
    size_t i = 0;

    while (i < t->ntests) {
        const struct task_test *tt = &t->tests[i];
        struct result res;
        enum verdict v;

        switch (verify__box_next(rt, o, img, t, solution, &sb, &plan, vr, tys, &i, &failures)) {
        case BOX_NEXT_COMPILE_ERROR:
            return false;
        case BOX_NEXT_AGAIN:
            continue;
        case BOX_NEXT_READY:
        default:
            break;
        }
        sandbox_exec_input(sb, plan.run, t->lang->env, tt->stdin_data, tt->stdin_len,
                           i + 1 == t->ntests ? SANDBOX_EXEC_LAST : 0, &res);
        v = verify__run_verdict(t, tt, &res, why, sizeof(why));
        if (v == VERDICT_ACCEPTED && (t->judge_code || t->validator)) {
            if (t->validator)
                v = verify__validator_judge(rt, o, img, t, tt, &res, vb, why, sizeof(why));
            else
                v = judge(rt, o, img, t, tt, &res, why, sizeof(why));
            if (v == VERDICT_INFRA_ERROR) { /* the checker's failure: no retry of the solution */
                verify__test_record(&vr->tests[i], &tys[i], v, &res, why);
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
            if (v == VERDICT_INFRA_ERROR && ++failures <= o->infra_retries &&
                !verify__cancelled(rt)) {
                result_release(&res);
                continue;
            }
        } else if (i + 1 < t->ntests && res.status == RESULT_OK &&
                   sandbox_kill_others(sb, NULL) < 0) {
            pool_release(o->pool, sb);
            sb = NULL;
        }
        verify__test_record(&vr->tests[i], &tys[i], v, &res, why);
        result_release(&res);
        failures = 0;
        i++;
    }
    if (sb)
        pool_release(o->pool, sb);
    lang_plan_release(&plan);
    return true;
}
