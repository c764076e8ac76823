/*
 * verify.c — the verification of one solution (see verify.h for the contract): the
 * constraints, the repeats and their majority, relative time limits, the reward, the
 * record; and the pieces every harness shares (verify_int.h). The harnesses themselves:
 * verify_assert.c, verify_stdio.c, verify_command.c.
 */
#include "judge/verify.h"
#include "judge/pyserver.h"
#include "sandbox/forkserver.h"

#include "judge/extract.h"
#include "judge/verify_int.h"
#include "sandbox/pool.h"

#include <errno.h>
#include <poll.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* ---- what the harnesses share (verify_int.h) ---- */

int verify__put_text(struct sandbox *sb, const char *dest, const char *text, size_t len,
                     mode_t mode, struct errbuf *err)
{
    return sandbox_put_data(sb, dest, text, len, mode, err);
}

/* verify__compile_limits(t, l) — the language's compile limits; a build step of an interpreted
 * language's command task (a syntax check, an install) gets the defaults for builds. */
void verify__compile_limits(const struct task *t, struct sandbox_limits *l)
{
    bool own = t->lang->compile_cpu > 0;

    *l = t->limits;
    l->cpu_time = own ? t->lang->compile_cpu : 30;
    l->wall_time = own ? t->lang->compile_wall : 60;
    l->memory_mb = own ? t->lang->compile_memory_mb : 1024;
    if (l->pids < VERIFY_BUILD_PIDS)
        l->pids = VERIFY_BUILD_PIDS;
    if (l->output_kb < 1024)
        l->output_kb = 1024;
}

/* verify__run_verdict(t, tt, res, why) — one run's verdict. */
enum verdict verify__run_verdict(const struct task *t, const struct task_test *tt,
                                 const struct result *res, char *why, size_t why_size)
{
    why[0] = '\0';
    switch (res->status) {
    case RESULT_OK:
        if (t->harness == TASK_HARNESS_STDIO && !t->judge_code && !t->validator &&
            !checker_compare(tt->flags ? &tt->checker : &t->checker, res->out.data, res->out.len,
                             tt->expected, tt->expected_len, why, why_size))
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

enum box_state verify__box_open(const struct sandbox_runtime *rt, const struct verify_opts *o,
                                const struct image *img, const struct task *t, const char *program,
                                size_t program_len, struct sandbox **out, struct verify_result *vr,
                                char *why, size_t why_size)
{
    struct lang_plan plan;
    enum box_state st =
        verify__box_open_plan(rt, o, img, t, program, program_len, out, &plan, vr, why, why_size);

    lang_plan_release(&plan);
    return st;
}

enum box_state verify__box_open_plan(const struct sandbox_runtime *rt, const struct verify_opts *o,
                                     const struct image *img, const struct task *t,
                                     const char *program, size_t program_len, struct sandbox **out,
                                     struct lang_plan *plan, struct verify_result *vr, char *why,
                                     size_t why_size)
{
    struct errbuf err = {{0}};
    struct sandbox_limits cl;
    struct sandbox *sb;
    bool on_fork_server = false;

    *out = NULL;
    if (t->harness == TASK_HARNESS_COMMAND) {
        memset(plan, 0, sizeof(*plan));
        plan->source = t->solution_file;
        plan->compile = (const char *const *)t->build;
        plan->run = t->lang->run;
    } else if (lang_plan_program(t->lang, t->harness == TASK_HARNESS_ASSERT, program, program_len,
                                 plan) < 0 ||
               lang_plan_image(t->lang, img, plan) < 0) {
        snprintf(why, why_size, "out of memory");
        return BOX_INFRA;
    }
    sb = NULL;
    if (o->pyserver && t->harness == TASK_HARNESS_ASSERT && !plan->compile &&
        !t->limits.writable_root && strcmp(t->lang->name, "python") == 0) {
        struct forkserver *fs = pyserver_get(o->pyserver, img);
        /* one exec: assert_program's. A job the fork server could not make is crucible's
         * failure, not the run's: this run goes cold, the next gets a new fork server */
        if (fs && !(sb = forkserver_job(fs, &t->limits, &err))) {
            pyserver_failed(o->pyserver, fs, err.msg);
            err.msg[0] = '\0';
        } else if (sb) {
            sandbox_set_cancel_fd(sb, rt->cancel_fd); /* the caller's, not the fork server's */
            on_fork_server = true;
        }
    }
    if (!sb)
        sb = pool_acquire(o->pool, rt, img, &t->limits, &err);
    if (!sb) {
        snprintf(why, why_size, "%s", err.msg);
        return BOX_INFRA;
    }
    if (verify__put_text(sb, plan->source, program, program_len, 0644, &err) < 0)
        goto out_infra;
    /* The task's own files, read-only in fact; then the harness's, but not on a fork server,
     * whose jobs have the harness imported (its source and compiled form would be 36 KB and
     * 62 KB copied for nothing, and a round trip to the job, per run) */
    for (size_t i = 0; i < t->nfiles; i++)
        if (!(on_fork_server && lang_cold_only_file(t->lang, t->files[i].path)) &&
            verify__put_text(sb, t->files[i].path, t->files[i].data, t->files[i].len,
                             0444 | SANDBOX_PUT_LOCKED, &err) < 0)
            goto out_infra;
    if (plan->compile) {
        if (vr->has_compile)
            result_release(&vr->compile);
        verify__compile_limits(t, &cl);
        if (sandbox_set_limits(sb, &cl, &err) < 0)
            goto out_infra;
        sandbox_exec_input(sb, plan->compile, t->lang->env, NULL, 0, 0, &vr->compile);
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

enum box_next verify__box_next(const struct sandbox_runtime *rt, const struct verify_opts *o,
                               const struct image *img, const struct task *t, const char *solution,
                               struct sandbox **sb, struct lang_plan *plan,
                               struct verify_result *vr, struct tally *tys, size_t *i,
                               unsigned *failures)
{
    struct result res;
    enum box_state st;
    char why[256];

    if (*sb)
        return BOX_NEXT_READY;
    lang_plan_release(plan);
    st = verify__box_open_plan(rt, o, img, t, solution, strlen(solution), sb, plan, vr, why,
                               sizeof(why));
    if (st == BOX_COMPILE_ERROR) {
        lang_plan_release(plan);
        return BOX_NEXT_COMPILE_ERROR;
    }
    if (st == BOX_READY)
        return BOX_NEXT_READY;
    if (++*failures <= o->infra_retries && !verify__cancelled(rt))
        return BOX_NEXT_AGAIN;
    result_init(&res);
    result_fail(&res, "%s", why);
    verify__test_record(&vr->tests[*i], &tys[*i], VERDICT_INFRA_ERROR, &res, why);
    result_release(&res);
    *failures = 0;
    ++*i;
    return BOX_NEXT_AGAIN;
}

void verify__test_record(struct verify_test *vt, struct tally *ty, enum verdict v,
                         struct result *res, const char *why)
{
    ty->count[v]++;
    result_release(&vt->run);
    vt->run = *res; /* ownership of the streams moves to vt */
    result_init(res);
    /* Only excerpts of a test's output reach the record: keeping each test's whole output
     * until the last test ran held up to 2 x output_kb per test. */
    result_stream_cut(&vt->run.out, EXCERPT_BYTES);
    result_stream_cut(&vt->run.err, EXCERPT_BYTES);
    if (v != VERDICT_ACCEPTED || !vt->why[0])
        snprintf(vt->why, sizeof(vt->why), "%s", why);
}

/* verify__cancelled(rt) — the caller asked running work to stop (its cancel fd is readable):
 * a failure then is no reason to retry. */
bool verify__cancelled(const struct sandbox_runtime *rt)
{
    struct pollfd pf = {.fd = rt->cancel_fd, .events = POLLIN};

    return rt->cancel_fd >= 0 && poll(&pf, 1, 0) == 1;
}

/* ---- the verification ---- */

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

/* score_groups(t, vr) — Kattis scoring: a group earns its score when every one of its tests
 * was accepted; the score is the sum of what the groups earned. */
static void score_groups(const struct task *t, struct verify_result *vr)
{
    vr->score = 0;
    for (size_t g = 0; g < t->ngroups; g++) {
        bool all = true;
        for (size_t i = 0; i < t->ntests && i < vr->total; i++)
            if (t->tests[i].group && strcmp(t->tests[i].group, t->groups[g].name) == 0 &&
                vr->tests[i].verdict != VERDICT_ACCEPTED)
                all = false;
        if (all)
            vr->score += t->groups[g].score;
    }
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
    ro.lang = NULL; /* the reference is in the task's language */
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

/* at_least(mb, l) — mb raised to l's compile memory when l compiles. */
static uint64_t at_least(uint64_t mb, const struct lang *l)
{
    return l && l->compile && l->compile_memory_mb > mb ? l->compile_memory_mb : mb;
}

uint64_t verify_memory_mb(const struct task *t, const struct lang *lang)
{
    uint64_t mb = t->limits.memory_mb;

    mb = at_least(mb, lang ? lang : t->lang);
    if (t->time_factor > 0 && t->reference_time < 0)
        mb = at_least(mb, t->lang); /* the reference, compiled and run first */
    if (t->validator) {
        mb = at_least(mb, t->validator->lang);
        /* an interactor runs beside the solution; an output validator after it */
        uint64_t run = t->harness == TASK_HARNESS_INTERACTIVE
                           ? t->limits.memory_mb + VERIFY_VALIDATION_MEMORY_MB
                           : VERIFY_VALIDATION_MEMORY_MB;
        if (mb < run)
            mb = run;
    }
    return mb;
}

uint64_t verify_pids(const struct task *t, const struct lang *lang)
{
    uint64_t pids = t->limits.pids;

    if ((lang ? lang : t->lang)->compile || t->lang->compile || t->time_factor > 0 ||
        t->harness == TASK_HARNESS_COMMAND)
        pids = pids < VERIFY_BUILD_PIDS ? VERIFY_BUILD_PIDS : pids; /* build steps */
    pids += 1;                                                      /* its init */
    if (t->validator || t->judge_code)
        pids += VERIFY_BUILD_PIDS + 1; /* the judge's own sandbox, beside it */
    return pids;
}

bool verify_any_language(const struct task *t)
{
    return t->harness == TASK_HARNESS_STDIO || t->harness == TASK_HARNESS_INTERACTIVE;
}

int verify_language_check(const struct task *t, const struct lang *lang, struct errbuf *err)
{
    if (!lang || lang == t->lang)
        return 0;
    if (verify_any_language(t))
        return task_files_check(t, lang, err); /* its files must leave room for this source */
    errbuf_set(err,
               "task '%s' is a%s %s task in %s: its tests are %s code, so the solution must be "
               "%s, not %s (only stdio and interactive tasks take a solution in any language)",
               t->id, t->harness == TASK_HARNESS_ASSERT ? "n" : "", task_harness_name(t->harness),
               t->lang->name, t->lang->name, t->lang->name, lang->name);
    return -EINVAL;
}

int verify_run(const struct sandbox_runtime *rt, const struct task *task, const char *solution,
               const struct verify_opts *o, struct verify_result *vr)
{
    struct task relative, in_lang, writable;
    const struct task *t = task;
    struct errbuf err = {{0}};
    struct image *own = NULL;
    const struct image *img = o->image;
    struct tally *tys;
    struct validator_box vb = {0};
    double t0 = util_now();
    char why[512];

    memset(vr, 0, sizeof(*vr));
    vb.what = t->harness == TASK_HARNESS_INTERACTIVE ? "interactor" : "output validator";
    vr->lang = t->lang;
    if (verify_language_check(t, o->lang, &err) < 0) {
        vr->verdict = VERDICT_INFRA_ERROR;
        vr->reward_null = true;
        snprintf(vr->message, sizeof(vr->message), "%s", err.msg);
        return -EINVAL;
    }
    if (o->lang && o->lang != t->lang) {
        /* a stdio task: the same tests, the solution's own compile and run steps */
        in_lang = *t;
        in_lang.lang = o->lang;
        t = &in_lang;
        vr->lang = o->lang;
    }
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
    if (o->sandbox && t->harness != TASK_HARNESS_COMMAND) {
        vr->verdict = VERDICT_INFRA_ERROR;
        vr->reward_null = true;
        snprintf(vr->message, sizeof(vr->message),
                 "only a command task's tests run in a live sandbox");
        goto out;
    }
    if (!o->sandbox && !constraints_check(t, solution, why, sizeof(why))) {
        vr->verdict = VERDICT_CONSTRAINT_VIOLATION;
        snprintf(vr->message, sizeof(vr->message), "%s", why);
        goto out;
    }
    if (o->sandbox) {
        /* the live sandbox's image: nothing else is resolved */
        if (!img) {
            vr->verdict = VERDICT_INFRA_ERROR;
            vr->reward_null = true;
            snprintf(vr->message, sizeof(vr->message), "no image given for the live sandbox");
            goto out;
        }
    } else if (o->images) {
        if (!(img = image_registry_find(o->images, t->image, &err))) {
            vr->verdict = VERDICT_INFRA_ERROR;
            vr->reward_null = true;
            snprintf(vr->message, sizeof(vr->message), "%s", err.msg);
            goto out;
        }
    } else if (!img || strcmp(t->image, "host") != 0) {
        own = calloc(1, sizeof(*own));
        if (!own || image_resolve(t->image, own, &err) < 0) {
            vr->verdict = VERDICT_INFRA_ERROR;
            vr->reward_null = true;
            snprintf(vr->message, sizeof(vr->message), "%s", own ? err.msg : "out of memory");
            goto out;
        }
        img = own;
    }
    snprintf(vr->image, sizeof(vr->image), "%s", img->digest);
    snprintf(vr->image_name, sizeof(vr->image_name), "%s", t->image);
    snprintf(vr->host_os, sizeof(vr->host_os), "%s", img->os_release);
    if (o->writable_root && !t->limits.writable_root) {
        writable = *t;
        writable.limits.writable_root = true;
        t = &writable;
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
        if (ref < 0 && verify_calibrate(rt, task, o, &ref) < 0) {
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
            compiled = verify__stdio_repeat(rt, img, t, solution, o, vr, tys, &vb);
        } else if (t->harness == TASK_HARNESS_INTERACTIVE) {
            compiled = verify__interactive_repeat(rt, img, t, solution, o, vr, tys, &vb);
        } else if (t->harness == TASK_HARNESS_COMMAND) {
            compiled = verify__command_repeat(rt, img, t, solution, o, vr, &tys);
        } else {
            compiled = verify__assert_repeat(rt, img, t, solution, o, vr, tys);
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
    score_groups(t, vr);
    if (vr->verdict == VERDICT_INFRA_ERROR) {
        vr->reward_null = true;
        if (verify__cancelled(rt))
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
    verify__validator_close(o, &vb);
    if (t->ngroups) {
        vr->has_score = true;
        vr->max_score = t->max_score;
    }
    if (!vr->reward_null) {
        if (vr->verdict == VERDICT_ACCEPTED)
            vr->reward = 1.0;
        else if (o->reward == REWARD_FRACTION && vr->verdict != VERDICT_COMPILE_ERROR &&
                 vr->verdict != VERDICT_CONSTRAINT_VIOLATION && t->ngroups)
            vr->reward = vr->score / vr->max_score;
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
    json_object_set_new(o, "language", json_string((vr->lang ? vr->lang : t->lang)->name));
    json_object_set_new(o, "verdict", json_string(verdict_name(vr->verdict)));
    json_object_set_new(o, "reward", vr->reward_null ? json_null() : json_real(vr->reward));
    json_object_set_new(o, "passed", json_integer((json_int_t)vr->passed));
    json_object_set_new(o, "total", json_integer((json_int_t)vr->total));
    if (vr->has_score) {
        json_object_set_new(o, "score", json_real(vr->score));
        json_object_set_new(o, "max_score", json_real(vr->max_score));
    }
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
        if (r->fork_server) /* as the run record: only a fork server's job says which path */
            json_object_set_new(tj, "path", json_string("fork_server"));
        if (vt->why[0]) {
            char *esc = result_text_escape(vt->why, strlen(vt->why));
            json_object_set_new(tj, "why", json_string(esc ? esc : ""));
            free(esc);
        }
        json_array_append_new(tests, tj);
    }
    json_object_set_new(o, "tests", tests);
    json_object_set_new(o, "wall_time", seconds(vr->wall_time));
    json_object_set_new(o, "image", vr->image[0] ? result_text_json(vr->image) : json_null());
    json_object_set_new(o, "image_name",
                        result_text_json(vr->image_name[0] ? vr->image_name : t->image));
    json_object_set_new(o, "host_os", vr->host_os[0] ? result_text_json(vr->host_os) : json_null());
    {
        char *esc = result_text_escape(vr->message, strlen(vr->message));
        json_object_set_new(o, "message", json_string(esc ? esc : ""));
        free(esc);
    }
    return o;
}

char *verify_program_text(const struct task *t, const struct lang *lang, enum solution_kind kind,
                          const char *text, char *how, size_t how_size)
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
        return extract_code(text, (lang ? lang : t->lang)->name, how, how_size);
    case SOLUTION_PROGRAM:
    default:
        snprintf(how, how_size, "full program");
        return strdup(text);
    }
}
