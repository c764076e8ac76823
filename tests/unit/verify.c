/*
 * Unit tests for src/verify.c with real sandboxes: each harness, checker use, reward policy,
 * repeats and flakiness, constraints, compile errors, early exits, a missing toolchain, and
 * code extraction from a response.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "judge/verify.h"

static struct sandbox_runtime rt;
static struct image host;

static void load(const char *text, struct task *t)
{
    struct errbuf err = {{0}};
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    if (task_from_json(j, t, &err) < 0)
        diag("bad fixture: %s", err.msg);
    json_decref(j);
}

static enum verdict run(const struct task *t, const char *solution, const struct verify_opts *o,
                        struct verify_result *vr)
{
    verify_run(&rt, t, solution, o, vr);
    return vr->verdict;
}

static const char *ASSERT_TASK =
    "{\"id\":\"u/add\",\"language\":\"python\",\"harness\":\"assert\",\"prompt\":\"def add(a, "
    "b):\\n\",\"tests\":[{\"name\":\"a\",\"code\":\"assert add(1, 2) == 3\"},{\"name\":\"b\","
    "\"code\":\"assert add(2, 2) == 4\"},{\"name\":\"c\",\"code\":\"assert add(0, 0) == 0\"}],"
    "\"limits\":{\"cpu_time\":1,\"wall_time\":10},\"constraints\":{\"max_bytes\":400,\"forbid\":"
    "[\"import +subprocess\"]}}";

static const char *STDIO_TASK =
    "{\"id\":\"u/sum\",\"language\":\"python\",\"harness\":\"stdio\",\"checker\":\"tokens\","
    "\"tests\":[{\"name\":\"one\",\"stdin\":\"1 2\\n\",\"expected\":\"3\\n\"},{\"name\":\"two\","
    "\"stdin\":\"5 5\\n\",\"expected\":\"10\"}],\"limits\":{\"cpu_time\":1,\"wall_time\":3}}";

int main(void)
{
    struct errbuf err = {{0}};
    struct verify_opts o;
    struct verify_result vr;
    struct task ta, ts, tc;
    char how[128], *code;
    json_t *j;

    if (sandbox_runtime_init(&rt, &err) < 0 || image_resolve("host", &host, &err) < 0) {
        skip("no sandbox runtime");
        return done_testing();
    }
    verify_opts_default(&o);
    o.image = &host;
    load(ASSERT_TASK, &ta);
    load(STDIO_TASK, &ts);

    ok(run(&ta, "def add(a, b):\n    return a + b\n", &o, &vr) == VERDICT_ACCEPTED &&
           vr.reward == 1.0 && vr.passed == 3 && !vr.reward_null,
       "assert: a correct solution is accepted with reward 1");
    j = verify_result_to_json(&ta, &vr);
    ok(j && json_is_null(json_object_get(j, "compile")) &&
           json_array_size(json_object_get(j, "tests")) == 3 &&
           strcmp(json_string_value(json_object_get(j, "task_id")), "u/add") == 0,
       "the record has the task id, per-test entries and no compile step");
    json_decref(j);
    verify_result_release(&vr);

    ok(run(&ta, "def add(a, b):\n    return a * 2 if a == b else 0\n", &o, &vr) ==
               VERDICT_WRONG_ANSWER &&
           vr.reward == 0.0 && vr.passed == 2,
       "binary reward: 2 of 3 passed is still 0");
    ok(vr.tests[0].verdict == VERDICT_WRONG_ANSWER &&
           strcmp(vr.tests[0].why, "assertion failed") == 0,
       "a failed assert is a wrong answer");
    verify_result_release(&vr);
    o.reward = REWARD_FRACTION;
    run(&ta, "def add(a, b):\n    return a * 2 if a == b else 0\n", &o, &vr);
    ok(vr.reward > 0.66 && vr.reward < 0.67, "fraction reward: 2 of 3 is 0.667");
    verify_result_release(&vr);
    o.reward = REWARD_BINARY;

    ok(run(&ta, "def add(a, b):\n    raise ValueError('no')\n", &o, &vr) == VERDICT_RUNTIME_ERROR,
       "an exception other than an assertion is a runtime error");
    verify_result_release(&vr);
    ok(run(&ta, "def add(a, b):\n    while True: pass\n", &o, &vr) == VERDICT_TIMEOUT &&
           vr.tests[0].run.limit == RESULT_LIMIT_CPU,
       "an endless loop is a timeout on the CPU limit");
    verify_result_release(&vr);
    ok(run(&ta, "import os\ndef add(a, b):\n    return 0\nos._exit(0)\n", &o, &vr) !=
               VERDICT_ACCEPTED &&
           vr.passed == 0,
       "exiting 0 before the tests run is not a pass");
    verify_result_release(&vr);
    ok(run(&ta, "def add(a, b):\n    print('noise')\n    return a + b\n", &o, &vr) ==
               VERDICT_ACCEPTED &&
           strncmp(vr.tests[0].run.out.data, "noise\n", 6) == 0 &&
           strspn(vr.tests[0].run.out.data, "noise\n") == vr.tests[0].run.out.len,
       "the solution's own output is kept, the completion token removed");
    verify_result_release(&vr);

    ok(run(&ta, "import subprocess\ndef add(a, b):\n    return a + b\n", &o, &vr) ==
               VERDICT_CONSTRAINT_VIOLATION &&
           vr.reward == 0.0 && strstr(vr.message, "forbidden"),
       "a forbidden pattern is a constraint violation");
    verify_result_release(&vr);
    code = calloc(1, 600);
    memset(code, '#', 599);
    ok(run(&ta, code, &o, &vr) == VERDICT_CONSTRAINT_VIOLATION && strstr(vr.message, "bytes"),
       "an oversized solution is a constraint violation");
    verify_result_release(&vr);
    free(code);

    ok(run(&ts, "a, b = map(int, input().split())\nprint(a + b)\n", &o, &vr) == VERDICT_ACCEPTED,
       "stdio: a correct solution is accepted (tokens checker)");
    verify_result_release(&vr);
    ok(run(&ts, "print(3)\n", &o, &vr) == VERDICT_WRONG_ANSWER && vr.passed == 1 &&
           strstr(vr.tests[1].why, "token"),
       "stdio: a wrong output is a wrong answer, with the checker's reason");
    verify_result_release(&vr);
    ok(run(&ts, "import sys\nsys.exit(3)\n", &o, &vr) == VERDICT_RUNTIME_ERROR &&
           vr.tests[0].run.exit_code == 3,
       "stdio: a non-zero exit is a runtime error");
    verify_result_release(&vr);
    /* The hog gets CPU and wall time to spare, so that on a loaded machine the memory limit,
     * not the clock, is what stops it. */
    ts.limits.cpu_time = 10;
    ts.limits.wall_time = 30;
    run(&ts, "x = bytearray(1 << 30)\n", &o, &vr);
    ts.limits.cpu_time = 1;
    ts.limits.wall_time = 3;
    if (cgroup_env_has(&rt.cg, CGROUP_RES_MEMORY))
        ok(vr.verdict == VERDICT_MEMORY_LIMIT, "stdio: a memory hog hits the memory limit (%s: %s)",
           verdict_name(vr.verdict), vr.message);
    else
        ok(vr.verdict == VERDICT_RUNTIME_ERROR, "stdio: a memory hog fails (rlimit fallback)");
    verify_result_release(&vr);

    load("{\"id\":\"u/c\",\"language\":\"c\",\"harness\":\"stdio\",\"tests\":[{\"stdin\":\"\","
         "\"expected\":\"hi\\n\"}]}",
         &tc);
    ok(run(&tc, "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n", &o, &vr) ==
               VERDICT_ACCEPTED &&
           vr.has_compile && vr.compile.status == RESULT_OK,
       "C: compiled once, then run");
    verify_result_release(&vr);
    ok(run(&tc, "int main(void) { return 0 }\n", &o, &vr) == VERDICT_COMPILE_ERROR &&
           vr.reward == 0.0 && strstr(vr.compile.err.data, "error"),
       "C: a compile error carries the compiler's message");
    verify_result_release(&vr);
    task_release(&tc);

    /* A checker program (special judge): accepts any multiple of the expected number. */
    load("{\"id\":\"u/judge\",\"language\":\"python\",\"harness\":\"stdio\",\"checker\":"
         "{\"type\":\"program\",\"language\":\"python\",\"code\":\"import sys\\nw = "
         "int(open('expected').read())\\ng = int(open('output').read())\\nif g % w:\\n    "
         "print('not a multiple')\\n    sys.exit(1)\\n\"},\"tests\":[{\"stdin\":\"3\",\"expected\":"
         "\"3\"}]}",
         &tc);
    ok(run(&tc, "print(int(input()) * 5)\n", &o, &vr) == VERDICT_ACCEPTED,
       "checker program: an answer it approves is accepted");
    verify_result_release(&vr);
    ok(run(&tc, "print(int(input()) + 1)\n", &o, &vr) == VERDICT_WRONG_ANSWER &&
           strstr(vr.tests[0].why, "not a multiple"),
       "checker program: its rejection is a wrong answer with its message");
    verify_result_release(&vr);
    free(tc.judge_code);
    tc.judge_code = strdup("import sys\nsys.exit(7)\n");
    ok(run(&tc, "print(int(input()) * 5)\n", &o, &vr) == VERDICT_INFRA_ERROR && vr.reward_null,
       "checker program: its own failure is infra_error, never the solution's fault");
    verify_result_release(&vr);
    task_release(&tc);

    o.repeats = 20;
    ok(run(&ts,
           "import os, sys\na, b = map(int, input().split())\nprint(a + b + (os.urandom(1)[0] & "
           "1))\n",
           &o, &vr) == VERDICT_WRONG_ANSWER ||
           vr.verdict == VERDICT_ACCEPTED,
       "repeats: a coin-flip solution gets a majority verdict");
    ok(vr.flaky && vr.repeats == 20, "repeats: runs that disagree are flagged flaky");
    verify_result_release(&vr);
    o.repeats = 3;
    ok(run(&ts, "a, b = map(int, input().split())\nprint(a + b)\n", &o, &vr) == VERDICT_ACCEPTED &&
           !vr.flaky && vr.tests[0].agree == 3,
       "repeats: a deterministic solution agrees with itself");
    verify_result_release(&vr);
    o.repeats = 1;

    /* A toolchain missing from the image is crucible's problem, not the solution's. */
    char root[] = "/tmp/crucible-verify-XXXXXX", bin[64], probe[600];
    if (mkdtemp(root)) {
        snprintf(bin, sizeof(bin), "%s/bin", root);
        mkdir(bin, 0755);
        struct image bare;
        if (image_resolve(root, &bare, &err) == 0) {
            char js[700];
            snprintf(js, sizeof(js),
                     "{\"id\":\"u/bare\",\"language\":\"python\",\"harness\":\"assert\","
                     "\"image\":\"%s\",\"tests\":[{\"code\":\"pass\"}]}",
                     root);
            load(js, &tc);
            ok(run(&tc, "x = 1\n", &o, &vr) == VERDICT_INFRA_ERROR && vr.reward_null &&
                   strstr(vr.message, "python"),
               "a missing toolchain is infra_error with reward null (%s)", vr.message);
            j = verify_result_to_json(&tc, &vr);
            ok(j && json_is_null(json_object_get(j, "reward")),
               "infra_error's reward is JSON null");
            json_decref(j);
            verify_result_release(&vr);
            task_release(&tc);
        }
        snprintf(probe, sizeof(probe), "%s", bin);
        rmdir(probe);
        rmdir(root);
    }

    code =
        verify_program_text(&ta, NULL, SOLUTION_COMPLETION, "    return a + b\n", how, sizeof(how));
    ok(code && strcmp(code, "def add(a, b):\n    return a + b\n") == 0,
       "completion = prompt + text");
    free(code);
    code = verify_program_text(&ta, NULL, SOLUTION_RESPONSE,
                               "Try:\n```python\ndef add(a, b):\n    return a + b\n```\n", how,
                               sizeof(how));
    ok(code && strcmp(code, "def add(a, b):\n    return a + b\n") == 0 && strstr(how, "python"),
       "response: the fenced block is extracted (%s)", how);
    free(code);

    /* A stdio task judges a solution in any language of the table (a converted Kattis or
     * Code Jam task says python; the rollout may be C++). */
    {
        struct verify_opts lo = o;
        const char *cpp = "#include <cstdio>\nint main(){long a,b;if(scanf(\"%ld %ld\",&a,&b)!=2)"
                          "return 1;printf(\"%ld\\n\",a+b);}\n";
        lo.lang = lang_find("cpp");
        ok(run(&ts, cpp, &lo, &vr) == VERDICT_ACCEPTED && vr.has_compile && vr.lang == lo.lang,
           "stdio: a C++ solution to a task written as python is compiled and accepted");
        j = verify_result_to_json(&ts, &vr);
        ok(j && strcmp(json_string_value(json_object_get(j, "language")), "cpp") == 0,
           "the record names the language the solution ran as");
        json_decref(j);
        verify_result_release(&vr);
        ok(run(&ts, cpp, &o, &vr) == VERDICT_RUNTIME_ERROR,
           "the same C++ code without its language runs as the task's (python) and fails");
        verify_result_release(&vr);
        lo.lang = lang_find("javascript");
        ok(verify_language_check(&ta, lo.lang, &err) == -EINVAL && strstr(err.msg, "assert") &&
               strstr(err.msg, "python") && strstr(err.msg, "javascript"),
           "assert task, other language: refused, saying why (%s)", err.msg);
        ok(verify_run(&rt, &ta, "function add(a, b) { return a + b; }", &lo, &vr) == -EINVAL &&
               vr.reward_null,
           "verify_run refuses it too, without a reward");
        verify_result_release(&vr);
        lo.lang = lang_find("py");
        ok(verify_language_check(&ta, lo.lang, &err) == 0,
           "assert task: its own language (by an alias) is fine");
        code = verify_program_text(&ts, lang_find("cpp"), SOLUTION_RESPONSE,
                                   "Python:\n```python\nprint(1)\n```\nC++:\n```cpp\nint "
                                   "main(){}\n```\nMore python:\n```python\nprint(2)\n```\n",
                                   how, sizeof(how));
        ok(code && strcmp(code, "int main(){}\n") == 0,
           "response: the fenced block is looked for in the solution's language (%s)", how);
        free(code);
    }

    ok(strcmp(verdict_name(VERDICT_INFRA_ERROR), "infra_error") == 0 &&
           strcmp(verdict_name(VERDICT_CONSTRAINT_VIOLATION), "constraint_violation") == 0,
       "verdict names");
    enum reward_policy p;
    ok(reward_policy_parse("fraction", &p) && p == REWARD_FRACTION && !reward_policy_parse("x", &p),
       "reward policy names");
    task_release(&ta);
    task_release(&ts);
    sandbox_runtime_release(&rt);
    return done_testing();
}
