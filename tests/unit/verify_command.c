/*
 * Unit tests for the command harness of src/verify.c, with real sandboxes: a Bash test
 * runner that writes its own JUnit XML (so no test framework is needed), graded on the
 * report's cases or on fail_to_pass / pass_to_pass lists; a build step; and solutions that
 * hang, leave no report, or plant a symlink or a FIFO where the report should be.
 * (tests/e2e/92-command.t runs the same harness with pytest.)
 */
#include <stdlib.h>

#include "judge/junit.h"
#include "judge/verify_int.h"
#include "tap.h"

static struct sandbox_runtime rt;
static struct image host;
static struct verify_opts o;
static struct verify_result vr;

/* The runner sources the solution, runs each test function in a subshell and writes one
 * <testcase> per test. t_skip is reported as skipped. */
static const char *RUNNER =
    ". ./lib.sh\n"
    ". ./cases.sh\n"
    "{\n"
    "  echo '<testsuites><testsuite name=\"lib\">'\n"
    "  for t in t_add t_sub t_neg; do\n"
    "    if ( $t ) >/dev/null 2>&1; then echo \"<testcase classname=\\\"lib\\\" "
    "name=\\\"$t\\\"/>\"\n"
    "    else echo \"<testcase classname=\\\"lib\\\" name=\\\"$t\\\"><failure message=\\\"$t "
    "failed\\\">$t</failure></testcase>\"; fi\n"
    "  done\n"
    "  echo '<testcase classname=\"lib\" name=\"t_skip\"><skipped/></testcase>'\n"
    "  echo '</testsuite></testsuites>'\n"
    "} > report.xml\n";

static const char *TESTS = "t_add() { [ \"$(add 2 3)\" = 5 ]; }\n"
                           "t_sub() { [ \"$(sub 5 3)\" = 2 ]; }\n"
                           "t_neg() { [ \"$(add -1 -2)\" = -3 ]; }\n";

static const char *GOOD = "add() { echo $(( $1 + $2 )); }\nsub() { echo $(( $1 - $2 )); }\n";
static const char *BAD_SUB = "add() { echo $(( $1 + $2 )); }\nsub() { echo 0; }\n";

/* task(extra) — the command task, with extra fields merged in (a new reference consumed). */
static void task(struct task *t, json_t *extra)
{
    struct errbuf err = {{0}};
    json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:[s,s], s:{s:s, s:s}, s:{s:f, s:f}}", "id",
                          "u/cmd", "language", "bash", "harness", "command", "solution_file",
                          "lib.sh", "command", "/bin/bash", "run.sh", "files", "run.sh", RUNNER,
                          "cases.sh", TESTS, "limits", "cpu_time", 2.0, "wall_time", 10.0);
    if (extra)
        json_object_update(j, extra);
    json_decref(extra);
    if (task_from_json(j, t, &err) < 0)
        diag("bad fixture: %s", err.msg);
    json_decref(j);
}

static void run(const struct task *t, const char *solution)
{
    verify_run(&rt, t, solution, &o, &vr);
}

static const char *test_why(const char *name)
{
    for (size_t i = 0; i < vr.total; i++)
        if (strcmp(vr.tests[i].name, name) == 0)
            return vr.tests[i].why;
    return "(no such test)";
}

/* grade_big(t, rep, n) — one run of t graded on rep (verify__command_judge, as after a real
 * run), with verify_run's starting arrays: a slot per named test, or one for discovery. */
static void grade_big(const struct task *t, const struct junit_report *rep)
{
    struct tally *tys = calloc(t->ntests + 1, sizeof(*tys));
    struct result res;

    memset(&vr, 0, sizeof(vr));
    vr.total = t->ntests;
    vr.tests = calloc(t->ntests + 1, sizeof(*vr.tests));
    for (size_t i = 0; i < t->ntests; i++) {
        vr.tests[i].name = t->tests[i].name;
        result_init(&vr.tests[i].run);
    }
    result_init(&res);
    res.status = RESULT_OK;
    res.exit_code = 1;
    verify__command_judge(t, &vr, &tys, &res, rep, "");
    vr.passed = 0;
    for (size_t i = 0; i < vr.total; i++)
        vr.passed += tys[i].count[VERDICT_ACCEPTED];
    result_release(&res);
    free(tys);
}

/* big_report() — grading a 30000-case report costs a bounded number of string comparisons
 * per test (junit_probes), both when the report's cases are the tests and when the task
 * names 30000 tests: a quadratic regression shows in the count, no clock involved. */
static void big_report(void)
{
    size_t n = 30000, len = n * 96 + 64;
    struct junit_report rep;
    struct errbuf err = {{0}};
    char *xml = malloc(len), *p = xml;
    json_t *names = json_array();
    struct task t;

    p += sprintf(p, "<testsuites><testsuite name=\"big\">");
    for (size_t i = 0; i < n; i++) {
        char id[64];
        p += sprintf(p, "<testcase classname=\"tests.test_big\" name=\"test_%zu\"%s", i,
                     i % 10 ? "/>" : "><failure message=\"no\"/></testcase>");
        snprintf(id, sizeof(id), "tests/test_big.py::test_%zu", i);
        json_array_append_new(names, json_string(id));
    }
    sprintf(p, "</testsuite></testsuites>");
    ok(junit_parse(xml, strlen(xml), &rep, &err) == 0, "a 30000-case report (%s)", err.msg);

    task(&t, NULL);
    grade_big(&t, &rep);
    ok(vr.total == n && vr.passed == n - n / 10, "discovery: %zu tests, %zu passed", vr.total,
       vr.passed);
    ok(junit_probes(&rep) <= 4 * n, "discovery costs %lu comparisons for %zu cases (linear)",
       junit_probes(&rep), n);
    verify_result_release(&vr);
    task_release(&t);

    task(&t, json_pack("{s:o}", "fail_to_pass", names));
    ok(t.ntests == n, "a task naming 30000 tests parses");
    {
        unsigned long before = junit_probes(&rep);
        grade_big(&t, &rep);
        ok(vr.total == n && vr.passed == n - n / 10, "named: %zu tests, %zu passed", vr.total,
           vr.passed);
        ok(junit_probes(&rep) - before <= 4 * n,
           "named tests cost %lu comparisons for %zu names (linear)", junit_probes(&rep) - before,
           n);
    }
    verify_result_release(&vr);
    task_release(&t);
    junit_release(&rep);
    free(xml);
}

int main(void)
{
    struct errbuf err = {{0}};
    struct task t, swe, built;
    json_t *j;

    if (sandbox_runtime_init(&rt, &err) < 0 || image_resolve("host", &host, &err) < 0) {
        skip("no sandbox runtime");
        return done_testing();
    }
    verify_opts_default(&o);
    o.image = &host;
    task(&t, NULL);

    run(&t, GOOD);
    ok(vr.verdict == VERDICT_ACCEPTED && vr.total == 3 && vr.passed == 3 && vr.reward == 1.0,
       "a correct solution: every case of the report passes (%s, %zu/%zu)",
       verdict_name(vr.verdict), vr.passed, vr.total);
    ok(vr.total == 3 && strcmp(vr.tests[0].name, "lib.t_add") == 0 &&
           strcmp(vr.tests[2].name, "lib.t_neg") == 0,
       "the tests are the report's cases, in order, skipped ones left out");
    j = verify_result_to_json(&t, &vr);
    ok(j && json_is_object(json_object_get(j, "test_command")) &&
           json_integer_value(json_object_get(json_object_get(j, "test_command"), "exit_code")) ==
               0,
       "the record carries the test command's own result");
    json_decref(j);
    verify_result_release(&vr);

    run(&t, BAD_SUB);
    ok(vr.verdict == VERDICT_WRONG_ANSWER && vr.passed == 2 && vr.reward == 0.0,
       "a failing case is a wrong answer");
    is_str(test_why("lib.t_sub"), "failed: t_sub failed", "with the report's message");
    verify_result_release(&vr);
    o.reward = REWARD_FRACTION;
    run(&t, BAD_SUB);
    ok(vr.reward > 0.66 && vr.reward < 0.67, "fraction reward: 2 of 3 cases");
    verify_result_release(&vr);
    o.reward = REWARD_BINARY;

    /* SWE-bench grading: only the named tests count, and each must be in the report. */
    task(&swe, json_pack("{s:[s], s:[s,s]}", "fail_to_pass", "lib.t_sub", "pass_to_pass", "t_add",
                         "lib.t_neg"));
    run(&swe, GOOD);
    ok(vr.verdict == VERDICT_ACCEPTED && vr.total == 3,
       "fail_to_pass and pass_to_pass all pass: accepted (%s)", verdict_name(vr.verdict));
    verify_result_release(&vr);
    run(&swe, BAD_SUB);
    ok(vr.verdict == VERDICT_WRONG_ANSWER && vr.passed == 2 &&
           vr.tests[0].verdict == VERDICT_WRONG_ANSWER,
       "a fail_to_pass test still failing: wrong answer");
    verify_result_release(&vr);
    task_release(&swe);
    task(&swe,
         json_pack("{s:[s], s:[s]}", "fail_to_pass", "lib.t_gone", "pass_to_pass", "lib.t_skip"));
    run(&swe, GOOD);
    is_str(test_why("lib.t_gone"), "not in the JUnit report", "a named test missing: fails");
    ok(strstr(test_why("lib.t_skip"), "skipped") != NULL, "a named test skipped: fails (%s)",
       test_why("lib.t_skip"));
    ok(vr.verdict == VERDICT_WRONG_ANSWER && vr.passed == 0, "...so the task is a wrong answer");
    verify_result_release(&vr);
    task_release(&swe);

    /* No usable report. */
    run(&t, "exit 0\n");
    ok(vr.verdict == VERDICT_RUNTIME_ERROR && vr.total == 1 &&
           strstr(vr.tests[0].why, "no usable JUnit report"),
       "exiting before the tests run leaves no report: runtime error (%s)", vr.tests[0].why);
    verify_result_release(&vr);
    run(&t, "ln -s /etc/passwd report.xml; exit 0\n");
    ok(vr.verdict == VERDICT_RUNTIME_ERROR && strstr(vr.tests[0].why, "not a regular file"),
       "a symlink planted as the report is not followed (%s)", vr.tests[0].why);
    verify_result_release(&vr);
    run(&t, "mkfifo report.xml; exit 0\n");
    ok(vr.verdict == VERDICT_RUNTIME_ERROR && vr.wall_time < 9,
       "a FIFO as the report neither hangs nor passes (%s)", vr.tests[0].why);
    verify_result_release(&vr);
    run(&t, "echo '<testsuite><testcase name=' > report.xml; exit 0\n");
    ok(vr.verdict == VERDICT_RUNTIME_ERROR && strstr(vr.tests[0].why, "not well-formed"),
       "a malformed report: runtime error naming the problem (%s)", vr.tests[0].why);
    verify_result_release(&vr);
    run(&t, "while :; do :; done\n");
    ok(vr.verdict == VERDICT_TIMEOUT && vr.tests[0].verdict == VERDICT_TIMEOUT,
       "a hanging solution: timeout (%s)", vr.tests[0].why);
    verify_result_release(&vr);

    /* A report is evidence only when this run wrote it and agrees with it. */
    {
        const char *forged = "echo '<testsuite><testcase classname=\"lib\" name=\"t_add\"/>"
                             "<testcase classname=\"lib\" name=\"t_sub\"/><testcase "
                             "classname=\"lib\" name=\"t_neg\"/></testsuite>' > report.xml\n";
        char sol[512];
        snprintf(sol, sizeof(sol), "%sexit 1\n", forged);
        run(&t, sol);
        ok(vr.verdict == VERDICT_RUNTIME_ERROR && strstr(vr.tests[0].why, "contradicts"),
           "a report of passes from a run that exited 1 is not trusted (%s)", vr.tests[0].why);
        verify_result_release(&vr);
        snprintf(sol, sizeof(sol), "%skill -9 $$\n", forged);
        run(&t, sol);
        ok(vr.verdict == VERDICT_RUNTIME_ERROR && strstr(vr.tests[0].why, "signal 9"),
           "...nor one from a run that was killed (%s)", vr.tests[0].why);
        verify_result_release(&vr);
        /* Run as the build step, the solution leaves a report; sourced by the tests, it
         * ends the runner with status 0 before the runner writes one. */
        task(&built, json_pack("{s:[s,s]}", "build", "/bin/bash", "lib.sh"));
        snprintf(sol, sizeof(sol), "if [ ! -e built ]; then touch built\n%selse exit 0; fi\n",
                 forged);
        run(&built, sol);
        ok(vr.verdict == VERDICT_RUNTIME_ERROR && strstr(vr.tests[0].why, "existed before"),
           "a report the build step left is not read (%s)", vr.tests[0].why);
        verify_result_release(&vr);
        task_release(&built);
    }

    /* A build step runs under the compile limits; its failure is a compile error. */
    task(&built, json_pack("{s:[s,s,s]}", "build", "/bin/bash", "-n", "lib.sh"));
    run(&built, GOOD);
    ok(vr.verdict == VERDICT_ACCEPTED && vr.has_compile && vr.compile.status == RESULT_OK,
       "build step passes, tests run (%s)", verdict_name(vr.verdict));
    verify_result_release(&vr);
    run(&built, "add() { echo $(( $1 + $2 ));\n");
    ok(vr.verdict == VERDICT_COMPILE_ERROR && vr.compile.err.data &&
           strstr(vr.compile.err.data, "syntax"),
       "a build failure is a compile error with the tool's message");
    verify_result_release(&vr);
    task_release(&built);

    o.repeats = 2;
    run(&t, GOOD);
    ok(vr.verdict == VERDICT_ACCEPTED && !vr.flaky && vr.total == 3 && vr.tests[1].agree == 2,
       "repeats: each run of the command is judged; the cases agree");
    verify_result_release(&vr);
    o.repeats = 1;

    task_release(&t);
    big_report();
    sandbox_runtime_release(&rt);
    return done_testing();
}
