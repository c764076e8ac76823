/*
 * junit.h — per-test outcomes from a JUnit XML report (the command harness).
 *
 * The format as pytest (--junitxml), Maven Surefire, gotestsum, go-junit-report, Jest and
 * most CI tools write it: <testcase classname= name= time=> anywhere under <testsuites> /
 * <testsuite>, with a <failure>, <error> or <skipped> child when the test did not pass.
 * The report comes out of the sandbox, so it is hostile input: size-capped by the caller,
 * parsed by expat with no DTD allowed (no entities, no external anything).
 */
#ifndef CRUCIBLE_JUNIT_H
#define CRUCIBLE_JUNIT_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

enum junit_outcome { JUNIT_PASSED, JUNIT_FAILED, JUNIT_ERROR, JUNIT_SKIPPED };

struct junit_case {
    char *classname; /* "" when absent */
    char *name;
    char *id; /* "classname.name", or "name" without a classname */
    enum junit_outcome outcome;
    double time;       /* seconds, 0 when absent */
    char message[256]; /* the failure's or error's message (or first text line) */
};

struct junit_index;

struct junit_report {
    struct junit_case *cases;
    size_t n;
    struct junit_index *index; /* by id and by bare name, made by junit_parse */
};

/* junit_parse(xml, len, report, err) — every test case of the report, in document order.
 * 0, or -EINVAL with err saying what is wrong (malformed XML, a DOCTYPE, a testcase without
 * a name, no <testsuite>/<testsuites>/<testcase> root); -ENOMEM. The caller releases
 * report even on error. */
int junit_parse(const char *xml, size_t len, struct junit_report *report, struct errbuf *err);

/* junit_release(report) */
void junit_release(struct junit_report *report);

/* junit_find(report, test) — the case a test name means, or NULL. A name matches a case's
 * "classname.name", its bare name when that is unique, or a pytest node id
 * ("tests/test_x.py::TestY::test_z[1]": the path part becomes "tests.test_x"). When several
 * cases match (reruns, duplicate suites), the worst outcome is the one returned. Constant
 * time on average (hash tables built by junit_parse), so grading a report is linear in it. */
const struct junit_case *junit_find(const struct junit_report *report, const char *test);

/* junit_case_counts(report, i) — true when cases[i] is a test of its own for a run that
 * names none: not skipped, and no earlier case that is not skipped has its id (reruns and
 * duplicate suites count once). Constant time on average. */
bool junit_case_counts(const struct junit_report *report, size_t i);

/* junit_probes(report) — the string comparisons junit_find and junit_case_counts have made
 * on this report: a test hook, so a test can tell linear grading from quadratic without
 * timing anything. */
unsigned long junit_probes(const struct junit_report *report);

/* junit_outcome_name(o) — "passed", "failed", "error", "skipped". */
const char *junit_outcome_name(enum junit_outcome o);

#endif
