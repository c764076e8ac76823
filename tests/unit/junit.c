/*
 * Unit tests for src/junit.c: reports shaped as pytest, Maven Surefire and Go's report
 * writers produce them, outcome precedence, messages, test-name matching (pytest node ids,
 * parameters, ambiguity, duplicates), and hostile or broken reports.
 */
#include "judge/junit.h"
#include "tap.h"

static struct junit_report rep;
static struct errbuf err;

static int parse(const char *xml)
{
    junit_release(&rep);
    err.msg[0] = '\0';
    return junit_parse(xml, strlen(xml), &rep, &err);
}

static const char *outcome_of(const char *test)
{
    const struct junit_case *c = junit_find(&rep, test);
    return c ? junit_outcome_name(c->outcome) : "(none)";
}

/* pytest --junitxml (xunit2): the suite wrapped in <testsuites>, classnames dotted paths. */
static const char *PYTEST =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    "<testsuites><testsuite name=\"pytest\" errors=\"1\" failures=\"1\" skipped=\"1\" "
    "tests=\"6\">\n"
    "<testcase classname=\"tests.test_calc\" name=\"test_add\" time=\"0.002\" />\n"
    "<testcase classname=\"tests.test_calc\" name=\"test_div\" time=\"0.010\">"
    "<failure message=\"ZeroDivisionError: division by zero\">def test_div():\n&gt; "
    "...</failure></testcase>\n"
    "<testcase classname=\"tests.test_calc.TestParse\" name=\"test_hex[0x1f-31]\" time=\"0\"/>\n"
    "<testcase classname=\"tests.test_calc.TestParse\" name=\"test_path[a/b::c]\"/>\n"
    "<testcase classname=\"tests.test_calc\" name=\"test_slow\"><skipped type=\"pytest.skip\" "
    "message=\"slow\"/></testcase>\n"
    "<testcase classname=\"tests.test_io\" name=\"test_add\"><error message=\"fixture "
    "'tmp' not found\"/></testcase>\n"
    "</testsuite></testsuites>\n";

/* Surefire: one <testsuite> root, type-only failures with the text as the message,
 * rerun children that are not outcomes, output captured per case. */
static const char *SUREFIRE =
    "<testsuite name=\"com.example.StackTest\" tests=\"3\" failures=\"1\">"
    "<properties><property name=\"java.version\" value=\"17\"/></properties>"
    "<testcase name=\"pushPop\" classname=\"com.example.StackTest\" time=\"0.004\">"
    "<system-out>pushed 1</system-out></testcase>"
    "<testcase name=\"emptyPop\" classname=\"com.example.StackTest\" time=\"0.001\">"
    "<failure type=\"\">\n\n  expected: &lt;null&gt; but was: &lt;3&gt;\n\tat "
    "StackTest.java:14</failure></testcase>"
    "<testcase name=\"peek\" classname=\"com.example.StackTest\">"
    "<flakyFailure message=\"first try failed\"/></testcase>"
    "</testsuite>";

/* go-junit-report / gotestsum: suites per package, no classname on some writers. */
static const char *GO =
    "<testsuites><testsuite name=\"example.com/calc\" tests=\"2\">"
    "<testcase name=\"TestAdd\" classname=\"example.com/calc\" time=\"0.000\"></testcase>"
    "<testcase name=\"TestSub\" time=\"0.010\"><failure message=\"Failed\" type=\"\">"
    "calc_test.go:12: got 1</failure></testcase></testsuite>"
    "<testsuite name=\"example.com/calc/v2\"><testcase name=\"TestAdd\" "
    "classname=\"example.com/calc/v2\"/></testsuite></testsuites>";

int main(void)
{
    const struct junit_case *c;

    is_int(parse(PYTEST), 0, "pytest report parses");
    is_int(rep.n, 6, "pytest: every test case, in document order");
    is_str(rep.cases[0].id, "tests.test_calc.test_add", "id is classname.name");
    ok(rep.cases[1].time > 0.0099 && rep.cases[1].time < 0.0101, "time attribute read");
    is_str(outcome_of("tests.test_calc.test_div"), "failed", "a <failure> is failed");
    c = junit_find(&rep, "tests.test_calc.test_div");
    is_str(c ? c->message : NULL, "ZeroDivisionError: division by zero",
           "the failure's message attribute is kept");
    is_str(outcome_of("tests/test_calc.py::test_add"), "passed",
           "pytest node id: path and function");
    is_str(outcome_of("tests/test_calc.py::TestParse::test_hex[0x1f-31]"), "passed",
           "pytest node id: class and parameters");
    is_str(outcome_of("tests/test_calc.py::TestParse::test_path[a/b::c]"), "passed",
           "pytest node id: '::' and '/' inside parameters are left alone");
    is_str(outcome_of("tests/test_calc.py::test_slow"), "skipped", "<skipped> is skipped");
    is_str(outcome_of("tests/test_io.py::test_add"), "error", "<error> is error");
    is_str(outcome_of("test_add"), "(none)", "a bare name two cases share matches neither");
    is_str(outcome_of("test_div"), "failed", "a unique bare name matches");
    is_str(outcome_of("tests/test_calc.py::test_missing"), "(none)", "an absent test is NULL");
    is_str(outcome_of("tests/test_calc.py"), "(none)", "a file alone names no test");

    is_int(parse(SUREFIRE), 0, "Surefire report (a <testsuite> root) parses");
    is_int(rep.n, 3, "Surefire: three cases; properties and output ignored");
    is_str(outcome_of("com.example.StackTest.pushPop"), "passed", "Surefire: passing case");
    c = junit_find(&rep, "emptyPop");
    is_str(c ? c->message : NULL, "  expected: <null> but was: <3>",
           "no message attribute: the failure text's first non-empty line, entities decoded");
    is_str(outcome_of("peek"), "passed", "flakyFailure is not an outcome");

    is_int(parse(GO), 0, "go report parses");
    is_str(outcome_of("TestSub"), "failed", "a case without classname is found by name");
    c = junit_find(&rep, "TestSub");
    is_str(c ? c->id : NULL, "TestSub", "its id is the bare name");
    is_str(outcome_of("example.com/calc/v2.TestAdd"), "passed",
           "same name in two suites: the classname tells them apart");

    is_int(parse("<testsuite><testcase name=\"t\"/><testcase name=\"t\"><failure/></testcase>"
                 "<testcase name=\"t\"/></testsuite>"),
           0, "a report with a rerun test parses");
    is_str(outcome_of("t"), "failed", "reruns: the worst outcome counts");
    is_int(parse("<testcase name=\"t\"><skipped/><error message=\"boom\"/><failure/>"
                 "</testcase>"),
           0, "a <testcase> root parses");
    is_str(outcome_of("t"), "error", "several outcome children: the worst one");
    is_str(rep.n ? rep.cases[0].message : NULL, "boom", "...with its message");
    is_int(parse("<testsuites></testsuites>"), 0, "an empty suite parses");
    is_int(rep.n, 0, "...to no cases");

    /* Broken and hostile reports. */
    ok(parse("<testsuite><testcase name=\"a\"></testsuite>") == -EINVAL &&
           strstr(err.msg, "not well-formed") && strstr(err.msg, "line 1"),
       "malformed XML: an error naming the line (%s)", err.msg);
    ok(parse("") == -EINVAL, "an empty file is an error (%s)", err.msg);
    ok(parse("<html><body/></html>") == -EINVAL && strstr(err.msg, "root element"),
       "a document that is not a report is an error (%s)", err.msg);
    ok(parse("<testsuite><testcase classname=\"x\"/></testsuite>") == -EINVAL &&
           strstr(err.msg, "no name"),
       "a nameless testcase is an error (%s)", err.msg);
    ok(parse("<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b "
             "\"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]><testsuite><testcase name=\"&b;\"/>"
             "</testsuite>") == -EINVAL &&
           strstr(err.msg, "DOCTYPE"),
       "a DOCTYPE (entity expansion) is refused (%s)", err.msg);
    ok(parse("<!DOCTYPE x SYSTEM \"file:///etc/passwd\"><testsuite/>") == -EINVAL,
       "an external DTD is refused");
    ok(parse("<testsuite><testcase name=\"a\"><testcase name=\"b\"/></testcase></testsuite>") ==
           -EINVAL,
       "a testcase inside a testcase is an error");
    {
        /* Deep nesting and long names: bounded work, no crash. */
        size_t depth = 20000, len = depth * 23 + 64;
        char *deep = malloc(len), *p = deep;
        for (size_t i = 0; i < depth; i++)
            p += sprintf(p, "<testsuite>");
        p += sprintf(p, "<testcase name=\"deep\"/>");
        for (size_t i = 0; i < depth; i++)
            p += sprintf(p, "</testsuite>");
        ok(parse(deep) == 0 && rep.n == 1, "20000 nested suites parse");
        free(deep);
    }
    {
        /* Grading is linear: n cases looked up by id, by pytest node id and for discovery
         * cost a bounded number of string comparisons each (counted by junit_probes), where
         * a scan per name costs n / 2 on average. No clock involved. */
        size_t n = 30000, len = n * 96 + 64;
        char *xml = malloc(len), *p = xml, name[64];
        unsigned long lookups = 0;
        bool all = true;
        p += sprintf(p, "<testsuites><testsuite name=\"s\">");
        for (size_t i = 0; i < n; i++)
            p += sprintf(p, "<testcase classname=\"tests.test_big\" name=\"test_%zu\"%s", i,
                         i % 7 ? "/>" : "><failure message=\"no\"/></testcase>");
        sprintf(p, "</testsuite></testsuites>");
        ok(parse(xml) == 0 && rep.n == n, "a 30000-case report parses");
        is_int(junit_probes(&rep), 0, "...and no lookup has been made yet");
        for (size_t i = 0; i < n; i++) {
            const char *want = i % 7 ? "passed" : "failed";
            all &= junit_case_counts(&rep, i);
            snprintf(name, sizeof(name), "tests.test_big.test_%zu", i);
            all &= strcmp(outcome_of(name), want) == 0;
            snprintf(name, sizeof(name), "tests/test_big.py::test_%zu", i);
            all &= strcmp(outcome_of(name), want) == 0;
            snprintf(name, sizeof(name), "test_%zu", i);
            all &= strcmp(outcome_of(name), want) == 0; /* a unique bare name */
            lookups += 6; /* counts; id; node id as id, then dotted; bare name as id, then name */
        }
        ok(all, "every case is found by id, node id and bare name, and counts once");
        ok(junit_probes(&rep) <= 3 * lookups,
           "lookups stay constant-time: %lu comparisons for %lu lookups over %zu cases",
           junit_probes(&rep), lookups, n);
        free(xml);
    }
    is_int(parse("<testsuite><testcase name=\"a\"><skipped/></testcase><testcase name=\"a\"/>"
                 "<testcase name=\"a\"/><testcase name=\"b\"/></testsuite>"),
           0, "a report with a skipped case and its rerun parses");
    ok(!junit_case_counts(&rep, 0) && junit_case_counts(&rep, 1) && !junit_case_counts(&rep, 2) &&
           junit_case_counts(&rep, 3) && !junit_case_counts(&rep, 4),
       "discovery: the first case of an id that is not skipped counts, once");
    junit_release(&rep);
    return done_testing();
}
