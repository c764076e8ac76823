/* Unit tests for src/task.c: the native task format, field by field, and JSONL loading; the
 * Kattis fields: checkers kattis and validator, the interactive harness and its interactor,
 * per-test flags, groups and scores. */
#include <stdio.h>
#include <unistd.h>

#include "tap.h"
#include "judge/task.h"

static int parse(const char *text, struct task *t, struct errbuf *err)
{
    json_error_t je;
    json_t *j = json_loads(text, JSON_ALLOW_NUL, &je);
    int r = task_from_json(j, t, err);
    json_decref(j);
    return r;
}

#define BAD(json, needle, name)                                                                    \
    do {                                                                                           \
        struct task t_;                                                                            \
        struct errbuf e_ = {{0}};                                                                  \
        int r_ = parse(json, &t_, &e_);                                                            \
        if (!ok(r_ < 0 && strstr(e_.msg, needle) != NULL, "%s", name))                             \
            diag("  message: %s", e_.msg);                                                         \
        task_release(&t_);                                                                         \
    } while (0)

/* dq(text) — text with ' turned into " (static buffer): JSON fixtures without escapes. */
static const char *dq(const char *text)
{
    static char buf[4096];
    size_t i;

    for (i = 0; text[i] && i + 1 < sizeof(buf); i++)
        buf[i] = text[i] == '\'' ? '"' : text[i];
    buf[i] = '\0';
    return buf;
}

#define KT(rest)                                                                                   \
    "{'id':'k/1','language':'cpp','harness':'stdio','tests':[{'name':'a','stdin':'1\\n',"          \
    "'expected':'2\\n'" rest

#define IT(rest)                                                                                   \
    "{'id':'k/2','language':'py','harness':'interactive','tests':[{'name':'a','stdin':'fixed "     \
    "5\\n','expected':''" rest

static void test_kattis_fields(void)
{
    struct task t;
    struct errbuf err = {{0}};

    ok(parse(dq(KT(",'flags':'float_tolerance 0.5'},{'name':'b','stdin':'','expected':'',"
                   "'group':'secret/g1'}],'checker':{'type':'kattis','flags':'case_sensitive'}}")),
             &t, &err) == 0,
       "kattis checker with flags, a test's own flags and group (%s)", err.msg);
    ok(t.checker.kind == CHECKER_KATTIS && t.checker.case_sensitive &&
           t.tests[0].checker.kind == CHECKER_KATTIS && !t.tests[0].checker.case_sensitive &&
           t.tests[0].checker.abs_tol == 0.5 && !t.tests[1].flags,
       "a test's flags replace the checker's");
    is_str(t.tests[1].group, "secret/g1", "a test's group is kept");
    ok(t.ngroups == 0 && t.max_score == 0, "groups without 'groups': no scores");
    task_release(&t);
    BAD(dq(KT("}],'checker':{'type':'kattis','flags':'float_tolerance'}}")),
        "'float_tolerance' needs a number", "kattis checker: a bad flag is a parse error");
    BAD(dq(KT(",'flags':'case_sensitive foo'}],'checker':'kattis'}")),
        "tests[0].flags: unknown "
        "kattis checker flag 'foo'",
        "a test's unknown kattis flag is named");
    BAD(dq(KT(",'flags':'case_sensitive'}],'checker':'tokens'}")),
        "tests[0].flags applies to the kattis and validator checkers",
        "flags with a checker that takes none");
    BAD(dq(KT(",'group':''}]}")), "tests[0].group must be a non-empty string", "empty group");

    /* validator */
    ok(parse(dq(KT(",'flags':'x y'}],'checker':{'type':'validator','language':'c++','files':{"
                   "'validate.cc':'#include \\\"validate.h\\\"\\nint main(){return 42;}',"
                   "'validate.h':'','sub/data.txt':'1'},'flags':'float_tolerance 1e-6'}}")),
             &t, &err) == 0,
       "checker validator with files (%s)", err.msg);
    ok(t.validator && t.validator->nfiles == 3 && strcmp(t.validator->lang->name, "cpp") == 0 &&
           strcmp(t.validator->flags, "float_tolerance 1e-6") == 0 &&
           strcmp(t.tests[0].flags, "x y") == 0,
       "the validator's language, files, flags and the test's flags are kept");
    task_release(&t);
    ok(parse(dq(KT("}],'checker':{'type':'validator','language':'python','code':'import "
                   "sys\\nsys.exit(42)'}}")),
             &t, &err) == 0 &&
           t.validator->nfiles == 1 && strcmp(t.validator->files[0].path, "main.py") == 0,
       "checker validator with code: written as the language's source (%s)", err.msg);
    task_release(&t);
    ok(parse(dq(KT("}],'checker':{'type':'validator','language':'java','code':'public class "
                   "V { public static void main(String[] a) { System.exit(42); } }'}}")),
             &t, &err) == 0 &&
           strcmp(t.validator->files[0].path, "V.java") == 0,
       "a Java validator's code goes to the file its public class names (%s)", err.msg);
    task_release(&t);
    BAD(dq(KT("}],'checker':{'type':'validator','language':'cpp','files':{'validate.h':''}}}")),
        "checker: no cpp source among its files", "validator files without a source");
    BAD(dq(KT("}],'checker':{'type':'validator','language':'cpp'}}")), "needs its 'files'",
        "validator without files or code");
    BAD(dq(KT("}],'checker':{'type':'validator','language':'cpp','code':'x','files':{'a.cc':''}"
              "}}")),
        "one of them", "validator with both files and code");
    BAD(dq(KT("}],'checker':{'type':'validator','language':'cobol','code':'x'}}")),
        "needs a known 'language'", "validator in an unknown language");
    BAD(dq(KT("}],'checker':{'type':'validator','language':'cpp','files':{'../x.cc':''}}}")),
        "'../x.cc'", "validator file outside the work directory");
    BAD(dq(KT("}],'checker':{'type':'validator','language':'cpp','files':{'main':'','a.cc':''}}"
              "}")),
        "'main' is a name crucible uses", "validator file named like the build output");
    BAD(dq(KT("}],'checker':{'type':'validator','language':'cpp','code':'x','args':'1'}}")),
        "unknown checker field 'args'", "validator with an unknown field");
    BAD(dq(KT("}],'checker':{'type':'validator','language':'cpp','code':'x','flags':1}}")),
        "'flags' must be a string", "validator flags not a string");

    /* interactive */
    ok(parse(dq(IT(",'flags':'f'},{'name':'b','stdin':'fixed 1\\n','expected':'','group':'g'}],"
                   "'interactor':{'language':'cpp','files':{'validate.cc':'','validate.h':''}},"
                   "'groups':[{'name':'g','score':30}]}")),
             &t, &err) == 0,
       "an interactive task (%s)", err.msg);
    ok(t.harness == TASK_HARNESS_INTERACTIVE && t.validator && t.validator->nfiles == 2 &&
           t.tests[0].stdin_len == 8 && strcmp(t.tests[0].flags, "f") == 0,
       "interactor, test input, flags");
    ok(t.ngroups == 1 && t.max_score == 30 && strcmp(t.groups[0].name, "g") == 0,
       "groups and the maximum score");
    is_str(task_harness_name(t.harness), "interactive", "harness name");
    task_release(&t);
    BAD(dq(IT("}]}")), "needs its 'interactor'", "interactive without an interactor");
    BAD(dq(IT("}],'interactor':{'language':'py','code':'x'},'checker':'tokens'}")),
        "through its 'interactor'", "interactive with a checker");
    BAD(dq(IT("}],'interactor':{'type':'validator','language':'py','code':'x'}}")),
        "unknown interactor field 'type'", "an interactor has no type");
    BAD(dq(KT("}],'interactor':{'language':'py','code':'x'}}")),
        "'interactor' applies to the interactive harness only", "interactor on a stdio task");

    /* groups */
    BAD(dq(KT(",'group':'g1'}],'groups':[{'name':'g1','score':10},{'name':'g2','score':5}]}")),
        "group 'g2' has no test", "a group without tests");
    BAD(dq(KT(",'group':'g1'},{'name':'b','stdin':'','expected':'','group':'g3'}],'groups':[{"
              "'name':'g1','score':10}]}")),
        "in group 'g3', which 'groups' does not list", "a test in an unlisted group");
    BAD(dq(KT(",'group':'g1'}],'groups':[{'name':'g1','score':-1}]}")),
        "groups[0].score must be a number", "a negative score");
    BAD(dq(KT(",'group':'g1'}],'groups':[{'name':'g1','score':0}]}")), "add up to 0",
        "scores adding up to 0");
    BAD(dq(KT(",'group':'g1'}],'groups':[{'name':'g1','score':1},{'name':'g1','score':1}]}")),
        "listed twice", "a group listed twice");
    BAD(dq(KT(",'group':'g1'}],'groups':[{'name':'g1','points':1}]}")),
        "unknown field groups[0].points", "a group with an unknown field");
    BAD(dq(KT("}],'groups':{}}")), "'groups' must be a non-empty array", "groups not an array");
    ok(parse(dq(KT(",'group':'g1'},{'name':'s','stdin':'','expected':''}],'groups':[{'name':"
                   "'g1','score':2.5}]}")),
             &t, &err) == 0 &&
           t.max_score == 2.5,
       "a test without a group beside scored groups (%s)", err.msg);
    task_release(&t);
}

int main(void)
{
    struct task t;
    struct errbuf err = {{0}};
    char path[] = "/tmp/crucible-tasks-XXXXXX";
    struct task *list;
    size_t n;
    FILE *f, *errs;
    char *errtext = NULL;
    size_t errlen = 0;
    int fd;

    ok(parse("{\"id\":\"a/1\",\"language\":\"py\",\"harness\":\"assert\",\"reference\":\"x=1\","
             "\"tests\":[{\"code\":\"assert x==1\"}],\"limits\":{\"cpu_time\":1.5,\"memory_mb\":"
             "128,\"network\":\"loopback\"},\"constraints\":{\"max_bytes\":100,\"forbid\":"
             "[\"import +os\"]},\"tags\":[\"x\"]}",
             &t, &err) == 0,
       "a full assert task parses (%s)", err.msg);
    is_str(t.lang->name, "python", "alias py is python");
    is_str(t.tests[0].name, "test_1", "unnamed tests are numbered");
    ok(t.limits.cpu_time == 1.5 && t.limits.memory_mb == 128 && t.limits.loopback,
       "limits applied");
    ok(t.max_bytes == 100 && t.nforbid == 1, "constraints kept");
    is_str(t.image, "host", "image defaults to host");
    ok(strlen(t.version) == 16, "version is a 64-bit hex hash");
    char v1[17];
    memcpy(v1, t.version, 17);
    task_release(&t);
    ok(parse("{\"tags\":[\"x\"],\"constraints\":{\"forbid\":[\"import +os\"],\"max_bytes\":100},"
             "\"limits\":{\"network\":\"loopback\",\"memory_mb\":128,\"cpu_time\":1.5},\"tests\":"
             "[{\"code\":\"assert x==1\"}],\"reference\":\"x=1\",\"harness\":\"assert\","
             "\"language\":\"py\",\"id\":\"a/1\"}",
             &t, &err) == 0 &&
           strcmp(t.version, v1) == 0,
       "the version ignores key order");
    task_release(&t);
    ok(parse("{\"id\":\"a/1\",\"language\":\"py\",\"harness\":\"assert\",\"reference\":\"x=2\","
             "\"tests\":[{\"code\":\"assert x==1\"}],\"limits\":{\"cpu_time\":1.5,\"memory_mb\":"
             "128,\"network\":\"loopback\"},\"constraints\":{\"max_bytes\":100,\"forbid\":"
             "[\"import +os\"]},\"tags\":[\"x\"]}",
             &t, &err) == 0 &&
           strcmp(t.version, v1) != 0,
       "a changed task has another version");
    task_release(&t);

    ok(parse("{\"id\":\"s\",\"language\":\"c\",\"harness\":\"stdio\",\"checker\":{\"type\":"
             "\"float\",\"abs_tol\":1e-6},\"tests\":[{\"name\":\"n\",\"stdin\":\"1\\u0000 2\","
             "\"expected\":\"3\"}]}",
             &t, &err) == 0,
       "a stdio task parses (%s)", err.msg);
    ok(t.checker.kind == CHECKER_FLOAT && t.checker.abs_tol == 1e-6, "float checker");
    ok(t.tests && t.tests[0].stdin_len == 4 && t.tests[0].stdin_data[1] == 0,
       "stdin keeps NUL bytes");
    task_release(&t);

    BAD("[1]", "JSON object", "not an object");
    BAD("{\"language\":\"py\",\"harness\":\"assert\",\"tests\":[{\"code\":\"\"}]}", "'id'",
        "missing id");
    BAD("{\"id\":\"x\",\"language\":\"cobol\",\"harness\":\"assert\",\"tests\":[{\"code\":\"\"}]}",
        "unknown language 'cobol'", "unknown language");
    BAD("{\"id\":\"x\",\"language\":\"py\",\"harness\":\"magic\",\"tests\":[{\"code\":\"\"}]}",
        "unknown harness 'magic'", "unknown harness");
    BAD("{\"id\":\"x\",\"language\":\"py\",\"harness\":\"assert\",\"tests\":[]}", "non-empty",
        "no tests");
    BAD("{\"id\":\"x\",\"language\":\"py\",\"harness\":\"assert\",\"tests\":[{\"stdin\":\"\"}]}",
        "tests[0].code", "assert test without code");
    BAD("{\"id\":\"x\",\"language\":\"py\",\"harness\":\"stdio\",\"tests\":[{\"stdin\":\"\"}]}",
        "tests[0].expected", "stdio test without expected");
    BAD("{\"id\":\"x\",\"language\":\"py\",\"harness\":\"assert\",\"tests\":[{\"code\":\"\"}],"
        "\"limits\":{\"cpu_time\":-1}}",
        "limits.cpu_time", "negative limit");
    BAD("{\"id\":\"x\",\"language\":\"py\",\"harness\":\"assert\",\"tests\":[{\"code\":\"\"}],"
        "\"limits\":{\"memory_mb\":1e12}}",
        "limits.memory_mb", "absurd limit");
    BAD("{\"id\":\"x\",\"language\":\"py\",\"harness\":\"assert\",\"tests\":[{\"code\":\"\"}],"
        "\"limits\":{\"pids\":2.5}}",
        "whole number", "fractional pids");
    BAD("{\"id\":\"x\",\"language\":\"py\",\"harness\":\"assert\",\"tests\":[{\"code\":\"\"}],"
        "\"limits\":{\"gpu\":1}}",
        "unknown limit 'gpu'", "unknown limit");
    BAD("{\"id\":\"x\",\"language\":\"py\",\"harness\":\"stdio\",\"tests\":[{\"expected\":\"\"}],"
        "\"checker\":\"fuzzy\"}",
        "fuzzy", "unknown checker");
    BAD("{\"id\":\"x\",\"language\":\"py\",\"harness\":\"assert\",\"tests\":[{\"code\":\"\"}],"
        "\"constraints\":{\"forbid\":[\"(\"]}}",
        "regular expression", "bad forbid pattern");

    /* The command harness. */
#define CMD "{\"id\":\"c\",\"language\":\"python\",\"harness\":\"command\","
    ok(parse(CMD "\"command\":\"pytest -q --junitxml=r.xml\",\"files\":{\"tests/test_a.py\":"
                 "\"import a\"},\"solution_file\":\"a.py\",\"report\":\"r.xml\",\"fail_to_pass\":"
                 "[\"tests/test_a.py::test_x\"],\"pass_to_pass\":[\"test_y\"]}",
             &t, &err) == 0,
       "a command task parses (%s)", err.msg);
    ok(t.command && strcmp(t.command[0], "/bin/sh") == 0 && strcmp(t.command[1], "-c") == 0 &&
           strcmp(t.command[2], "pytest -q --junitxml=r.xml") == 0 && !t.command[3],
       "a string command runs with /bin/sh -c");
    ok(t.nfiles == 1 && strcmp(t.files[0].path, "tests/test_a.py") == 0 && t.files[0].len == 8,
       "files kept");
    ok(t.ntests == 2 && strcmp(t.tests[0].group, "fail_to_pass") == 0 &&
           strcmp(t.tests[1].name, "test_y") == 0 && strcmp(t.tests[1].group, "pass_to_pass") == 0,
       "fail_to_pass and pass_to_pass become the named tests");
    is_str(t.solution_file, "a.py", "solution_file");
    is_str(t.report, "r.xml", "report");
    task_release(&t);
    ok(parse(CMD "\"command\":[\"python3\",\"-m\",\"pytest\"]}", &t, &err) == 0 && t.ntests == 0 &&
           strcmp(t.command[2], "pytest") == 0 && strcmp(t.report, "report.xml") == 0 &&
           strcmp(t.solution_file, "main.py") == 0,
       "defaults: no named tests (the report's), report.xml, the language's file (%s)", err.msg);
    task_release(&t);
    BAD(CMD "\"reference\":\"\"}", "missing field 'command'", "command harness without a command");
    BAD(CMD "\"command\":[]}", "argv array", "an empty argv");
    BAD(CMD "\"command\":[\"\"]}", "command[0] must be a non-empty string", "an empty program");
    BAD(CMD "\"command\":[\"x\", 3]}", "command[1]", "a number in argv");
    BAD(CMD "\"command\":\"x\",\"build\":7}", "'build'", "a bad build step");
    BAD(CMD "\"command\":\"x\",\"report\":\"../r.xml\"}", "report", "a report outside /work");
    BAD(CMD "\"command\":\"x\",\"solution_file\":\"/etc/passwd\"}", "solution_file",
        "an absolute solution file");
    BAD(CMD "\"command\":\"x\",\"files\":{\"a/../../b\":\"\"}}", "files: destination 'a/../../b'",
        "a file escaping the work directory");
    BAD(CMD "\"command\":\"x\",\"files\":{\"a\":1}}", "must be a string",
        "a file that is not text");
    BAD(CMD "\"command\":\"x\",\"files\":[]}", "'files' must be an object", "files not an object");
    BAD(CMD "\"command\":\"x\",\"files\":{\"report.xml\":\"<x/>\"}}", "where the report goes",
        "a task cannot ship the report");
    BAD(CMD "\"command\":\"x\",\"files\":{\"main.py\":\"\"}}", "where the solution goes",
        "a task file cannot replace the solution");
    BAD(CMD "\"command\":\"x\",\"report\":\"s.py\",\"solution_file\":\"s.py\"}", "same file",
        "report and solution the same");
    BAD(CMD "\"command\":\"x\",\"fail_to_pass\":[\"a\"],\"pass_to_pass\":[\"a\"]}", "named twice",
        "a test in both lists");
    BAD(CMD "\"command\":\"x\",\"fail_to_pass\":\"a\"}", "array of test names",
        "fail_to_pass not an array");
    BAD(CMD "\"command\":\"x\",\"tests\":[{\"code\":\"\"}]}", "tests[0].name is required",
        "command tests are names");
    BAD("{\"id\":\"x\",\"language\":\"py\",\"harness\":\"assert\",\"tests\":[{\"code\":\"\"}],"
        "\"fail_to_pass\":[\"a\"]}",
        "command harness only", "fail_to_pass on an assert task");

    /* Files that cannot all be put are the task's mistake, said when it is read (before,
     * every verification of it was an infra_error). */
    BAD(CMD "\"command\":\"x\",\"files\":{\"tests\":\"\",\"tests/test_a.py\":\"\"}}",
        "'tests' is a file, so nothing can be put below it ('tests/test_a.py')",
        "a file where another file needs a directory");
    BAD(CMD "\"command\":\"x\",\"files\":{\"main.py/x\":\"\"}}",
        "'main.py' is where the solution goes (solution_file), so nothing can be put below it",
        "a file below the solution");
    BAD(CMD "\"command\":\"x\",\"solution_file\":\"out\",\"report\":\"out/r.xml\"}",
        "solution_file and report: 'out' is the solution_file", "a report below the solution");
    BAD("{\"id\":\"x\",\"language\":\"py\",\"harness\":\"stdio\",\"tests\":[{\"expected\":\"\"}],"
        "\"files\":{\"main.py\":\"print(1)\"}}",
        "files: 'main.py' is where the solution goes", "a stdio task's file named as its solution");
    BAD("{\"id\":\"x\",\"language\":\"go\",\"harness\":\"assert\",\"tests\":[{\"code\":\"\"}],"
        "\"files\":{\"main_test.go\":\"\"}}",
        "files: 'main_test.go' is where the solution goes",
        "an assert task's file named as its test program (Go: main_test.go)");
    BAD("{\"id\":\"x\",\"language\":\"python\",\"harness\":\"assert\",\"tests\":[{\"code\":"
        "\"\"}],\"files\":{\"_crucible_harness.py\":\"X = 1\"}}",
        "files: '_crucible_harness.py' is where crucible's assert harness goes",
        "an assert task's file named as the harness (a fork server's job would not see it, a "
        "cold run would fail to put the harness)");
    {
        char name[300], json[512];
        memset(name, 'n', 256);
        name[256] = '\0';
        snprintf(json, sizeof(json), CMD "\"command\":\"x\",\"files\":{\"d/%s\":\"\"}}", name);
        BAD(json, "more than NAME_MAX (255 bytes)", "a file name over NAME_MAX");
    }
    {
        size_t big = 200 * 1024;
        char *json = malloc(big + 256), *p = json;
        p += sprintf(p, CMD "\"command\":[\"python3\",\"");
        memset(p, 'a', big);
        p += big;
        sprintf(p, "\"]}");
        BAD(json, "command: argument 1 is 204800 bytes", "a command argument execve would refuse");
        free(json);
    }
    ok(parse("{\"id\":\"x\",\"language\":\"py\",\"harness\":\"stdio\",\"tests\":"
             "[{\"expected\":\"\"}],\"files\":{\"main.c\":\"data\"}}",
             &t, &err) == 0,
       "a stdio task may ship a file another language would use (%s)", err.msg);
    ok(task_files_check(&t, t.lang, &err) == 0, "...fine for a Python solution");
    ok(task_files_check(&t, lang_find("c"), &err) < 0 &&
           strstr(err.msg, "'main.c' is where the solution goes") && strstr(err.msg, "in c"),
       "...but not for a C one, said before running (%s)", err.msg);
    task_release(&t);
#undef CMD

    fd = mkstemp(path);
    f = fdopen(fd, "w");
    fputs(
        "{\"id\":\"a\",\"language\":\"py\",\"harness\":\"assert\",\"tests\":[{\"code\":\"\"}]}\n"
        "not json\n"
        "\n"
        "{\"id\":\"a\",\"language\":\"py\",\"harness\":\"assert\",\"tests\":[{\"code\":\"\"}]}\n"
        "{\"id\":\"b\",\"language\":\"bash\",\"harness\":\"assert\",\"tests\":[{\"code\":\"\"}]}\n",
        f);
    fclose(f);
    errs = open_memstream(&errtext, &errlen);
    ok(task_list_load(path, &list, &n, errs, &err) == 2 && n == 2,
       "a JSONL file: 2 good tasks, 2 bad lines");
    fclose(errs);
    ok(strstr(errtext, ":2: not valid JSON") != NULL, "a malformed line is named by number");
    ok(strstr(errtext, ":4: duplicate task id 'a'") != NULL, "a duplicate id is named");
    ok(task_list_find(list, n, "b") != NULL && task_list_find(list, n, "zz") == NULL, "find");
    task_list_free(list, n);
    free(errtext);
    unlink(path);
    ok(task_list_load("/nonexistent/tasks.jsonl", &list, &n, stderr, &err) < 0 &&
           strstr(err.msg, "/nonexistent/tasks.jsonl"),
       "a missing file is an error naming it");
    test_kattis_fields();
    ok(parse(dq("{'id':'w','language':'python','harness':'assert','tests':[{'code':'pass'}]}"), &t,
             &err) == 0 &&
           !t.limits.writable_root,
       "writable_root defaults to false (read-only image)");
    task_release(&t);
    ok(parse(dq("{'id':'w','language':'python','harness':'assert','writable_root':true,"
                "'limits':{'disk_mb':8},'tests':[{'code':'pass'}]}"),
             &t, &err) == 0 &&
           t.limits.writable_root && t.limits.disk_mb == 8,
       "writable_root: true is the task's, beside its limits (%s)", err.msg);
    task_release(&t);
    ok(parse(dq("{'id':'w','language':'python','harness':'assert','writable_root':'yes',"
                "'tests':[{'code':'pass'}]}"),
             &t, &err) < 0 &&
           strstr(err.msg, "'writable_root' must be true or false"),
       "writable_root that is not a boolean is refused (%s)", err.msg);
    task_release(&t);
    /* A test's fields are its harness's; a misspelt one would run the test without it. */
    BAD(dq("{'id':'s','language':'python','harness':'stdio','tests':[{'stdin':'1','expected':'1'},"
           "{'input':'2\\n','expected':'2'}]}"),
        "unknown field tests[1].input (a test of the stdio harness takes name, stdin, "
        "expected, group, flags)",
        "a stdio test's 'input' (for 'stdin') is refused, naming the fields it takes");
    BAD(dq("{'id':'a','language':'python','harness':'assert','tests':[{'code':'pass',"
           "'stdin':'x'}]}"),
        "unknown field tests[0].stdin (a test of the assert harness takes name, code, group, "
        "flags)",
        "an assert test's 'stdin' is refused");
    BAD(dq("{'id':'c','language':'python','harness':'command','command':'true',"
           "'tests':[{'name':'t','group':'g'}]}"),
        "tests[0].group: the command harness groups its tests itself",
        "a command test's 'group' is refused with the harness's reason");
    ok(parse(dq("{'id':'i','language':'python','harness':'interactive','interactor':"
                "{'language':'python','code':'pass'},'tests':[{'name':'n','stdin':'1',"
                "'expected':'','group':'g','flags':'f'}]}"),
             &t, &err) == 0,
       "every field an interactive test takes is accepted (%s)", err.msg);
    task_release(&t);
    return done_testing();
}
