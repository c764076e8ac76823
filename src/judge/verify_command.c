/*
 * verify_command.c — the command harness: the task's files and the solution in the work
 * directory, one run of the task's test command per repeat, judged by the JUnit report it
 * leaves there (optionally against fail_to_pass / pass_to_pass lists).
 */
#include "judge/junit.h"
#include "judge/verify_int.h"
#include "sandbox/files.h"
#include "sandbox/pool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The command harness: one run of the task's test command per repeat, judged by the
 * JUnit report it leaves in the work directory. */

#define REPORT_MAX_BYTES (16u << 20)
#define WHOLE_RUN_TEST   "(test command)" /* the one test when the report names none */

/* add_test(vr, tys, name) — a test found in the first report (no names in the task). The
 * arrays grow by doubling: their room is the smallest power of two holding vr->total (at
 * least the one slot verify_run allocates), so n tests cost O(n) copying, not O(n²). */
static int add_test(struct verify_result *vr, struct tally **tys, const char *name)
{
    size_t n = vr->total;
    struct verify_test *vt;
    struct tally *ty;

    if (n && (n & (n - 1)) == 0) { /* full: n is a power of two */
        if (!(vt = realloc(vr->tests, 2 * n * sizeof(*vt))))
            return -ENOMEM;
        vr->tests = vt;
        if (!(ty = realloc(*tys, 2 * n * sizeof(*ty))))
            return -ENOMEM;
        *tys = ty;
    }
    ty = *tys;
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

/* verify__command_judge(t, vr, tys, res, rep, report_err) — every test's verdict for one run:
 * a run stopped by a limit fails every test with that limit (its report cannot be complete);
 * no usable report fails every test as a runtime error; otherwise each test takes its case's
 * outcome, and a test missing from the report fails. Linear in the report and the tests:
 * every lookup goes through the report's index (junit_find, junit_case_counts). */
void verify__command_judge(const struct task *t, struct verify_result *vr, struct tally **tys,
                           struct result *res, const struct junit_report *rep,
                           const char *report_err)
{
    char run_why[256], why[300];
    enum verdict run_v = verify__run_verdict(t, NULL, res, run_why, sizeof(run_why));
    bool limit = res->status == RESULT_TIMEOUT || res->status == RESULT_MEMORY_LIMIT ||
                 res->status == RESULT_OUTPUT_LIMIT;
    bool all_passed = rep != NULL;

    for (size_t i = 0; rep && i < rep->n; i++)
        if (rep->cases[i].outcome != JUNIT_PASSED && rep->cases[i].outcome != JUNIT_SKIPPED)
            all_passed = false;
    if (t->ntests == 0 && vr->total == 0) {
        /* Discovery: the first run's cases are the tests (skipped ones are not counted). */
        for (size_t i = 0; rep && !limit && i < rep->n; i++)
            if (junit_case_counts(rep, i) && add_test(vr, tys, rep->cases[i].id) < 0)
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
        verify__test_record(vt, &(*tys)[i], v, &copy, why);
    }
}

/* report_before(sb, t, why) — what is at the report's path before the test command runs:
 * 0 when nothing (or no place for it), 1 when something is there already — a build step
 * (which may run the solution's code) left it, and only a report the test command writes is
 * evidence — or -errno when the sandbox could not be asked. */
static int report_before(struct sandbox *sb, const struct task *t, struct errbuf *why)
{
    struct errbuf e = {{0}};
    char *data = NULL;
    size_t len = 0;
    int r = sandbox_get_file(sb, t->report, 0, &data, &len, &e);

    free(data);
    if (r == -ENOENT || r == -ENOTDIR)
        return 0;
    if (r == 0 || r == -EFBIG || r == -EINVAL) {
        errbuf_set(why,
                   "'%.200s' existed before the test command ran (left by the build step); only a "
                   "report the test command writes is trusted",
                   t->report);
        return 1;
    }
    errbuf_set(why, "%s", e.msg);
    return r;
}

/* report_contradicts(res, rep, why) — true when the run failed (a non-zero exit, or a signal)
 * yet its report shows tests that passed and none that failed or errored. Test runners exit
 * non-zero when a test fails, so such a report is not the run's account of itself: code that
 * ran inside the test process (the solution's) wrote it, or the runner died after the
 * report was forged. Not trusted. A report with a failure stays usable: SWE-bench style
 * tasks expect other tests of the run to fail. */
static bool report_contradicts(const struct result *res, const struct junit_report *rep,
                               struct errbuf *why)
{
    bool passed = false, failed = false;

    if (res->status == RESULT_OK)
        return false;
    for (size_t i = 0; i < rep->n; i++) {
        passed |= rep->cases[i].outcome == JUNIT_PASSED;
        failed |= rep->cases[i].outcome == JUNIT_FAILED || rep->cases[i].outcome == JUNIT_ERROR;
    }
    if (!passed || failed)
        return false;
    if (res->status == RESULT_SIGNALED)
        errbuf_set(why,
                   "the test command was killed by signal %d, yet its report shows no failed "
                   "test: a report that contradicts its run is not trusted",
                   res->signal);
    else
        errbuf_set(why,
                   "the test command exited with %d, yet its report shows no failed test: a "
                   "report that contradicts its run is not trusted",
                   res->exit_code);
    return true;
}

/* What one run of the test command left to judge it by. */
struct run_report {
    char *xml; /* the report's bytes as read, or NULL */
    size_t xml_len;
    struct junit_report rep; /* parsed from xml */
    bool have;               /* rep was read, parsed and is trusted */
    struct errbuf err;       /* why there is none, when not have ("" until a reason is known) */
};

static void run_report_release(struct run_report *rr)
{
    junit_release(&rr->rep);
    free(rr->xml);
    rr->xml = NULL;
}

/* report_read(sb, t, in_session, stale, res, rr) — after the test command's run (res): when it
 * ran to its end (not stopped by a limit, whose report cannot be complete), what it left
 * running is killed first, so nothing still writes the report while it is read; then the
 * report is read (unless stale: a report_before was there, not the run's own), parsed and
 * checked against the run (report_contradicts) into rr. A failure to kill is res's
 * sandbox_error. in_session: a session's sandbox, read by the rules of files.h
 * (sandbox_file_read); else a fresh one's work directory (sandbox_get_file). */
static void report_read(struct sandbox *sb, const struct task *t, bool in_session, bool stale,
                        struct result *res, struct run_report *rr)
{
    struct errbuf err = {{0}};
    bool readable = res->status == RESULT_OK || res->status == RESULT_RUNTIME_ERROR ||
                    res->status == RESULT_SIGNALED;
    int r;

    if (readable && sandbox_kill_others(sb, &err) < 0)
        result_fail(res, "%s", err.msg);
    if (!readable || res->status == RESULT_SANDBOX_ERROR || stale)
        return;
    r = in_session
            ? sandbox_file_read(sb, t->report, REPORT_MAX_BYTES, &rr->xml, &rr->xml_len, &rr->err)
            : sandbox_get_file(sb, t->report, REPORT_MAX_BYTES, &rr->xml, &rr->xml_len, &rr->err);
    rr->have = r == 0 && junit_parse(rr->xml, rr->xml_len, &rr->rep, &rr->err) == 0 &&
               !report_contradicts(res, &rr->rep, &rr->err);
}

/* judge_run(t, vr, tys, res, rr) — the judging tail of one run: every test's verdict from res
 * and the report when there is a trusted one (verify__command_judge), then res becomes the
 * verification's command record (replacing an earlier repeat's; its streams move there, the
 * caller must not release it) and rr is released. */
static void judge_run(const struct task *t, struct verify_result *vr, struct tally **tys,
                      struct result *res, struct run_report *rr)
{
    bool usable = rr->have && res->status != RESULT_SANDBOX_ERROR;

    if (!rr->have && !rr->err.msg[0])
        snprintf(rr->err.msg, sizeof(rr->err.msg), "not read");
    verify__command_judge(t, vr, tys, res, usable ? &rr->rep : NULL, rr->err.msg);
    if (vr->has_command)
        result_release(&vr->command);
    vr->command = *res;
    vr->has_command = true;
    run_report_release(rr);
}

/* command_in_session(t, o, vr, tys) — one run of the test command in the caller's live
 * sandbox (o->sandbox: a session), which stays alive: the session's files are the solution.
 * The task's files are written over the session's; what earlier execs left running is stopped
 * (nothing may touch the report while the tests run or after); the report's path is emptied,
 * so only what this run writes is read; the build step and the test command run as KEEP
 * execs within the task's limits (the caller fits them to the session's). A run crucible
 * failed is not retried: there is no fresh sandbox with the session's state. Returns false
 * on a build error. */
static bool command_in_session(const struct task *t, const struct verify_opts *o,
                               struct verify_result *vr, struct tally **tys)
{
    struct sandbox *sb = o->sandbox;
    struct errbuf err = {{0}};
    struct run_report rr = {0};
    struct sandbox_limits cl;
    struct result res;

    result_init(&res);
    for (size_t i = 0; i < t->nfiles; i++)
        if (sandbox_file_write(sb, t->files[i].path, t->files[i].data, t->files[i].len, 0644,
                               &err) < 0) {
            result_fail(&res, "cannot write the task's file '%.200s': %s", t->files[i].path,
                        err.msg);
            goto judge;
        }
    if (sandbox_kill_others(sb, &err) < 0 ||
        sandbox_file_write(sb, t->report, "", 0, 0644, &err) < 0) {
        result_fail(&res, "%s", err.msg);
        goto judge;
    }
    if (t->build) {
        if (vr->has_compile)
            result_release(&vr->compile);
        verify__compile_limits(t, &cl);
        if (cl.memory_mb > t->limits.memory_mb) /* the session's bounds hold for builds too */
            cl.memory_mb = t->limits.memory_mb;
        if (cl.pids > t->limits.pids)
            cl.pids = t->limits.pids;
        result_init(&vr->compile);
        if (sandbox_set_limits(sb, &cl, &err) < 0) {
            result_fail(&res, "%s", err.msg);
            goto judge;
        }
        sandbox_exec_input(sb, (const char *const *)t->build, t->lang->env, NULL, 0,
                           SANDBOX_EXEC_KEEP, &vr->compile);
        vr->has_compile = true;
        if (vr->compile.status == RESULT_SANDBOX_ERROR) {
            result_fail(&res, "build step: %s", vr->compile.message);
            goto judge;
        }
        if (vr->compile.status != RESULT_OK) {
            result_release(&res);
            return false;
        }
    }
    if (sandbox_set_limits(sb, &t->limits, &err) < 0) {
        result_fail(&res, "%s", err.msg);
        goto judge;
    }
    sandbox_exec_input(sb, (const char *const *)t->command, t->lang->env, NULL, 0,
                       SANDBOX_EXEC_KEEP, &res);
    report_read(sb, t, true, false, &res, &rr);
judge:
    judge_run(t, vr, tys, &res, &rr);
    return true;
}

/* verify__command_repeat(…) — one run of the test command in a fresh sandbox (recreated after an
 * infra failure). Returns false on a build (compile) error. */
bool verify__command_repeat(const struct sandbox_runtime *rt, const struct image *img,
                            const struct task *t, const char *solution, const struct verify_opts *o,
                            struct verify_result *vr, struct tally **tys)
{
    unsigned failures = 0;

    if (o->sandbox)
        return command_in_session(t, o, vr, tys);
    for (;;) {
        struct errbuf err = {{0}};
        struct run_report rr = {0};
        struct sandbox *sb;
        struct result res;
        char why[256];
        enum box_state st =
            verify__box_open(rt, o, img, t, solution, strlen(solution), &sb, vr, why, sizeof(why));

        if (st == BOX_COMPILE_ERROR)
            return false;
        result_init(&res);
        if (st == BOX_INFRA) {
            result_fail(&res, "%s", why);
        } else {
            int stale = t->build ? report_before(sb, t, &rr.err) : 0;
            sandbox_exec_input(sb, (const char *const *)t->command, t->lang->env, NULL, 0, 0, &res);
            if (stale < 0 && res.status != RESULT_SANDBOX_ERROR)
                result_fail(&res, "cannot look for a report before the run: %s", rr.err.msg);
            /* (a run a limit stopped has its sandbox torn down already) */
            report_read(sb, t, false, stale != 0, &res, &rr);
            if (sandbox_destroy(sb, &err) < 0 && res.status != RESULT_SANDBOX_ERROR)
                result_fail(&res, "%s", err.msg);
        }
        if (res.status == RESULT_SANDBOX_ERROR && ++failures <= o->infra_retries &&
            !verify__cancelled(rt)) {
            result_release(&res);
            run_report_release(&rr);
            continue;
        }
        judge_run(t, vr, tys, &res, &rr); /* res's streams move to the record */
        return true;
    }
}
