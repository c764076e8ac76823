/* Unit tests for src/library/convert.c, convert_html.c and convert_kattis.c: each dataset
 * format on small fixtures written here (never dataset text), field mapping, MBPP's setup
 * placement and entry point heuristic, bad-line reporting, duplicate ids. The Kattis
 * converter's own rules are tested in tests/unit/convert_kattis.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "library/convert.h"
#include "tap.h"

static char tmp[256];

/* mkparents(path) — makes the directories of path. */
static void mkparents(char *path)
{
    for (char *s = strchr(path + strlen(tmp) + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
}

/* put(rel, text, len) — writes tmp/rel (making its directories). */
static void put(const char *rel, const char *text, size_t len)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", tmp, rel);
    mkparents(path);
    f = fopen(path, "w");
    if (!f || fwrite(text, 1, len, f) != len || fclose(f))
        diag("cannot write %s", path);
}

static void puts_file(const char *rel, const char *text)
{
    put(rel, text, strlen(text));
}

static void put_gz(const char *rel, const char *text)
{
    char path[512];
    gzFile gz;

    snprintf(path, sizeof(path), "%s/%s", tmp, rel);
    mkparents(path);
    gz = gzopen(path, "wb");
    if (!gz || gzwrite(gz, text, (unsigned)strlen(text)) <= 0 || gzclose(gz) != Z_OK)
        diag("cannot write %s", path);
}

static int collect(json_t *task, void *arg)
{
    return json_array_append(arg, task) ? -ENOMEM : 0;
}

/* A conversion's output: the tasks, what went to the error stream, the stats. */
struct run {
    json_t *tasks;
    char *errs;
    size_t errs_len;
    struct convert_stats st;
    struct errbuf err;
    int rc;
};

static void convert(struct run *r, enum convert_format fmt, bool challenge, const char *rel)
{
    struct convert_opts o = {.format = fmt, .challenge = challenge};
    char path[512];
    FILE *errs;

    memset(r, 0, sizeof(*r));
    r->tasks = json_array();
    errs = open_memstream(&r->errs, &r->errs_len);
    snprintf(path, sizeof(path), "%s/%s", tmp, rel);
    r->rc = convert_path(&o, path, collect, r->tasks, errs, &r->st, &r->err);
    fclose(errs);
}

static void run_release(struct run *r)
{
    json_decref(r->tasks);
    free(r->errs);
}

/* str(obj, key) — a string member, "" when absent (so a failed check does not crash). */
static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));

    return s ? s : "";
}

static const json_t *test_at(const json_t *task, size_t i)
{
    return json_array_get(json_object_get(task, "tests"), i);
}

static bool has_tag(const json_t *task, const char *tag)
{
    const json_t *v;
    size_t i;

    json_array_foreach(json_object_get(task, "tags"), i, v)
    {
        if (strcmp(json_string_value(v), tag) == 0)
            return true;
    }
    return false;
}

static void test_formats(void)
{
    enum convert_format f;

    ok(convert_format_find("humaneval", &f) && f == CONVERT_HUMANEVAL, "format humaneval");
    ok(convert_format_find("mbpp", &f) && f == CONVERT_MBPP, "format mbpp");
    ok(convert_format_find("mbpp-sanitized", &f) && f == CONVERT_MBPP_SANITIZED,
       "format mbpp-sanitized");
    ok(convert_format_find("humaneval-x", &f) && f == CONVERT_HUMANEVAL_X, "format humaneval-x");
    ok(convert_format_find("kattis", &f) && f == CONVERT_KATTIS, "format kattis");
    ok(!convert_format_find("HumanEval", &f) && !convert_format_find("apps", &f),
       "unknown formats are refused");
}

static void test_humaneval(void)
{
    struct run r;
    const json_t *t;
    const char *keys[] = {"id",     "source",    "language", "harness", "entry_point",
                          "prompt", "reference", "tests",    "tags"};
    const char *key;
    json_t *v;
    size_t i = 0;
    bool order = true;

    put_gz("he.jsonl.gz",
           "{\"task_id\": \"HumanEval/0\", \"prompt\": \"def add(a, b):\\n    "
           "\\\"\\\"\\\"Sum.\\\"\\\"\\\"\\n\", "
           "\"entry_point\": \"add\", \"canonical_solution\": \"    return a + b\\n\", "
           "\"test\": \"\\n\\ndef check(candidate):\\n    assert candidate(1, 2) == 3\\n\"}\n"
           "{\"task_id\": \"HumanEval/140\", \"prompt\": \"def f():\\n\", \"entry_point\": "
           "\"f\", \"canonical_solution\": \"    return 1\\n\", \"test\": \"def check(c): "
           "pass\\n\"}\n");
    convert(&r, CONVERT_HUMANEVAL, false, "he.jsonl.gz");
    is_int(r.rc, 0, "humaneval: converts a gzip file");
    is_int(json_array_size(r.tasks), 2, "humaneval: two tasks");
    is_int(r.st.bad, 0, "humaneval: no bad record");
    t = json_array_get(r.tasks, 0);
    is_str(str(t, "id"), "humaneval/0", "humaneval: id from task_id");
    is_str(str(t, "language"), "python", "humaneval: python");
    is_str(str(t, "harness"), "assert", "humaneval: assert harness");
    is_str(str(t, "entry_point"), "add", "humaneval: entry_point");
    is_str(str(t, "prompt"), "def add(a, b):\n    \"\"\"Sum.\"\"\"\n", "humaneval: prompt");
    is_str(str(t, "reference"), "def add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a + b\n",
           "humaneval: reference = prompt + canonical_solution");
    is_str(str(test_at(t, 0), "name"), "check", "humaneval: one test named check");
    is_str(str(test_at(t, 0), "code"),
           "\n\ndef check(candidate):\n    assert candidate(1, 2) == 3\n\n\ncheck(add)\n",
           "humaneval: test code = test + check(entry_point)");
    is_str(str(t, "source"), "humaneval", "humaneval: source");
    ok(has_tag(t, "source:humaneval"), "humaneval: source tag");
    json_object_foreach((json_t *)t, key, v)
    {
        if (i >= sizeof(keys) / sizeof(keys[0]) || strcmp(key, keys[i++]) != 0)
            order = false;
    }
    ok(order && i == sizeof(keys) / sizeof(keys[0]), "humaneval: keys in the fixed order");
    t = json_array_get(r.tasks, 1);
    ok(has_tag(t, "known-issue:reference") && json_object_get(t, "notes"),
       "humaneval: a known-issue task gets its tag and note");
    run_release(&r);

    puts_file("he-plain.jsonl", "{\"task_id\": \"HumanEval/7\", \"prompt\": \"p\", "
                                "\"entry_point\": \"g\", \"canonical_solution\": \"s\", "
                                "\"test\": \"t\"}\r\n\r\n");
    convert(&r, CONVERT_HUMANEVAL, false, "he-plain.jsonl");
    ok(r.rc == 0 && json_array_size(r.tasks) == 1 && r.st.bad == 0,
       "humaneval: a plain (not gzip) file with CRLF and a blank line");
    is_str(str(test_at(json_array_get(r.tasks, 0), 0), "code"), "t\n\ncheck(g)\n",
           "humaneval: the check call names the entry point");
    run_release(&r);
}

/* A 367-like MBPP task: the setup code needs the class the solution defines. */
static const char mbpp_fixture[] =
    "{\"text\": \"Write a function to count the nodes of a tree.\", "
    "\"code\": \"class Node:\\r\\n    def __init__(self, v):\\r\\n        self.v = v\\r\\n        "
    "self.kids = []\\r\\ndef count_nodes(n):\\r\\n    return 1 + sum(count_nodes(k) for k in "
    "n.kids)\", \"task_id\": 367, "
    "\"test_setup_code\": \"root = Node(1)\\r\\nroot.kids.append(Node(2))\", "
    "\"test_list\": [\"assert count_nodes(root) == 2\", \"assert count_nodes(Node(5)) == 1\", "
    "\"assert int(count_nodes(root)) == 2\"], "
    "\"challenge_test_list\": [\"assert count_nodes(root.kids[0]) == 1\"]}\n"
    "{\"text\": \"Lobb number.\", \"code\": \"def lobb_num(n, m):\\n    return 35\", "
    "\"task_id\": 912, \"test_setup_code\": \"\", "
    "\"test_list\": [\"assert int(lobb_num(5, 3)) == 35\"], \"challenge_test_list\": []}\n";

static void test_mbpp(void)
{
    struct run r;
    const json_t *t;
    char cmd[1200], prog[512];
    FILE *f;

    puts_file("mbpp.jsonl", mbpp_fixture);
    convert(&r, CONVERT_MBPP, false, "mbpp.jsonl");
    is_int(r.rc, 0, "mbpp: converts");
    is_int(json_array_size(r.tasks), 2, "mbpp: two tasks");
    t = json_array_get(r.tasks, 0);
    is_str(str(t, "id"), "mbpp/367", "mbpp: id from the integer task_id");
    is_str(str(t, "reference"),
           "class Node:\n    def __init__(self, v):\n        self.v = v\n        self.kids = []\n"
           "def count_nodes(n):\n    return 1 + sum(count_nodes(k) for k in n.kids)",
           "mbpp: reference = code, CRLF made LF");
    is_int(json_array_size(json_object_get(t, "tests")), 3,
           "mbpp: one test per test_list entry, no challenge tests by default");
    is_str(str(test_at(t, 0), "name"), "test_1", "mbpp: tests named test_1...");
    is_str(str(test_at(t, 2), "name"), "test_3", "mbpp: ... test_3");
    is_str(str(test_at(t, 0), "code"),
           "root = Node(1)\nroot.kids.append(Node(2))\nassert count_nodes(root) == 2",
           "mbpp: test_setup_code opens each test's code (so it runs after the solution)");
    is_str(str(t, "entry_point"), "count_nodes", "mbpp: entry point from test_list[0]");
    ok(strstr(str(t, "prompt"), "count the nodes") &&
           strstr(str(t, "prompt"), "assert count_nodes(root) == 2"),
       "mbpp: prompt = text and the first test");
    ok(has_tag(t, "source:mbpp") && has_tag(t, "split:test"), "mbpp: source and split tags");

    /* the real thing: solution, newline, test code runs under python3 */
    snprintf(prog, sizeof(prog), "%s/prog.py", tmp);
    f = fopen(prog, "w");
    if (f) {
        fprintf(f, "%s\n%s\n", str(t, "reference"), str(test_at(t, 0), "code"));
        fclose(f);
    }
    if (access("/usr/bin/python3", X_OK) == 0) {
        snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s", prog);
        is_int(system(cmd), 0, "mbpp: solution + newline + test code passes in python3");
    } else {
        skip("no /usr/bin/python3");
    }
    t = json_array_get(r.tasks, 1);
    is_str(str(t, "entry_point"), "lobb_num", "mbpp: 912-like int(lobb_num(...)) gives lobb_num");
    is_str(str(test_at(t, 0), "code"), "assert int(lobb_num(5, 3)) == 35",
           "mbpp: empty setup adds nothing before the assert");
    ok(has_tag(t, "split:train"), "mbpp: split:train for 601-974");
    run_release(&r);

    convert(&r, CONVERT_MBPP, true, "mbpp.jsonl");
    t = json_array_get(r.tasks, 0);
    is_int(json_array_size(json_object_get(t, "tests")), 4, "mbpp --challenge: adds challenge");
    is_str(str(test_at(t, 3), "name"), "challenge_1", "mbpp --challenge: named challenge_1");
    ok(strncmp(str(test_at(t, 3), "code"), "root = Node(1)\n", 15) == 0,
       "mbpp --challenge: challenge tests get the setup too");
    is_int(r.st.tests, 5, "mbpp --challenge: stats count the tests");
    run_release(&r);
}

static void test_entry_point(void)
{
    static const struct {
        const char *test, *want;
    } cases[] = {
        {"assert foo(1) == 2", "foo"},
        {"assert int(lobb_num(5, 3)) == 35", "lobb_num"},
        {"assert set(similar((3, 4), (5, 4))) == set((4,))", "similar"},
        {"assert sum(10,15) == 6", "sum"},
        {"assert math.isclose(area(2), 12.56, rel_tol=0.001)", "area"},
        {"assert 'f(x)' in g(1)", "g"},
        {"assert \"\"\"h(1)\"\"\" == k(2)", "k"},
        {"assert not is_odd(2)", "is_odd"},
        {"assert abs(f ( 1 ) - 2) < 1e-9", "f"},
        {"assert sorted(x.split(',')) == sorted(parse_list('a,b'))", "parse_list"},
        {"assert r'\\d(' == rx('(')", "rx"},
    };
    char out[64];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        out[0] = '\0';
        convert_entry_point(cases[i].test, out, sizeof(out));
        is_str(out, cases[i].want, cases[i].test);
    }
    ok(!convert_entry_point("assert x == 1", out, sizeof(out)), "entry point: no call, none");
    ok(!convert_entry_point("assert a_long_name(1)", out, 5), "entry point: too long for out");
    ok(!convert_entry_point(NULL, out, sizeof(out)), "entry point: NULL test");
}

static void test_mbpp_sanitized(void)
{
    struct run r;
    const json_t *t;

    puts_file("san.json",
              "[{\"source_file\": \"x\", \"task_id\": 2, \"prompt\": \"Write a function to add.\", "
              "\"code\": \"def add(a, b):\\n  return a + b\", \"test_imports\": [\"import math\", "
              "\"import re\"], \"test_list\": [\"assert math.isclose(add(1, 2), 3)\", "
              "\"assert add(0, 0) == 0\"]}, "
              "{\"source_file\": \"x\", \"task_id\": 600, \"prompt\": \"Identity.\", "
              "\"code\": \"def ident(x):\\n  return x\", \"test_imports\": [], "
              "\"test_list\": [\"assert ident(1) == 1\"]}, 7]");
    convert(&r, CONVERT_MBPP_SANITIZED, false, "san.json");
    is_int(r.rc, 0, "mbpp-sanitized: converts a JSON array");
    is_int(json_array_size(r.tasks), 2, "mbpp-sanitized: two tasks");
    t = json_array_get(r.tasks, 0);
    is_str(str(t, "id"), "mbpp-sanitized/2", "mbpp-sanitized: id");
    is_str(str(t, "reference"), "def add(a, b):\n  return a + b", "mbpp-sanitized: reference");
    is_str(str(test_at(t, 0), "code"), "import math\nimport re\nassert math.isclose(add(1, 2), 3)",
           "mbpp-sanitized: test code = test_imports, newline, assert");
    is_str(str(t, "entry_point"), "add", "mbpp-sanitized: entry point past math.isclose");
    ok(strncmp(str(t, "prompt"), "Write a function to add.\n", 25) == 0,
       "mbpp-sanitized: prompt = prompt field (and the first test)");
    ok(has_tag(t, "source:mbpp-sanitized"), "mbpp-sanitized: source tag");
    t = json_array_get(r.tasks, 1);
    is_str(str(test_at(t, 0), "code"), "assert ident(1) == 1",
           "mbpp-sanitized: no imports, just the assert");
    is_int(r.st.bad, 1, "mbpp-sanitized: an item that is not an object is bad");
    ok(r.errs && strstr(r.errs, "san.json: item 3: not a JSON object"),
       "mbpp-sanitized: the bad item is named by its position");
    run_release(&r);
}

static void test_humaneval_x(void)
{
    struct run r;
    const json_t *t, *v;
    size_t i;
    int go = 0, rust = 0, js = 0;

    put_gz(
        "hx/humaneval_go.jsonl.gz",
        "{\"task_id\": \"Go/0\", \"prompt\": \"import (\\n    \\\"math\\\"\\n)\\n\\n// Abs.\\nfunc "
        "Abs(x float64) float64 {\\n\", \"import\": \"import (\\n    \\\"math\\\"\\n)\\n\", "
        "\"docstring\": \"// Abs.\\n\", \"declaration\": \"\\nfunc Abs(x float64) float64 {\\n\", "
        "\"canonical_solution\": \"    return math.Abs(x)\\n}\\n\", \"test\": \"func TestAbs(t "
        "*testing.T) {\\n    assert := assert.New(t)\\n    assert.Equal(1.0, Abs(-1))\\n}\\n\", "
        "\"test_setup\": \"package main\\n\\nimport (\\n    \\\"testing\\\"\\n    \\\"math\\\"\\n  "
        "  "
        "\\\"github.com/stretchr/testify/assert\\\"\\n)\\n\", \"example_test\": \"\"}\n"
        "{\"task_id\": \"Go/65\", \"prompt\": \"\\n// Itoa.\\nfunc Itoa(x int) string {\\n\", "
        "\"import\": \"import (\\n    \\\"strconv\\\"\\n)\", \"docstring\": \"\", "
        "\"declaration\": \"\", \"canonical_solution\": \"    return strconv.Itoa(x)\\n}\\n\", "
        "\"test\": \"func TestItoa(t *testing.T) {}\\n\", \"test_setup\": \"package main\\n\", "
        "\"example_test\": \"\"}\n");
    puts_file("hx/humaneval_rust.jsonl",
              "{\"task_id\": \"Rust/0\", \"prompt\": \"\\n/*\\n Add.\\n*/\\n\", \"declaration\": "
              "\"\\nuse std::cmp::max;\\nuse rand::Rng;\\nuse regex::Regex;\\nuse md5;\\n\\nfn "
              "add(a: i32, b: i32) -> i32{\\n\", \"canonical_solution\": \"    let re = "
              "Regex::new(\\\"x\\\"); // rand::random\\n    a + b\\n}\\n\", \"test\": "
              "\"\\n#[cfg(test)]\\nmod tests {\\n    use super::*;\\n    #[test]\\n    fn t() { "
              "assert_eq!(add(1, 2), 3); }\\n}\\n\", \"example_test\": \"\"}\n");
    puts_file("hx/humaneval_js.jsonl",
              "{\"task_id\": \"JavaScript/3\", \"prompt\": \"const f = (x) => {\\n\", "
              "\"canonical_solution\": \"  return x\\n}\\n\", \"test\": "
              "\"console.assert(f(1) === 1)\\n\", \"declaration\": \"\", \"example_test\": \"\"}\n"
              "{\"task_id\": \"Python/4\", \"prompt\": \"x\", \"canonical_solution\": \"y\", "
              "\"test\": \"z\"}\n");
    puts_file("hx/notes.txt", "not a dataset file\n");
    convert(&r, CONVERT_HUMANEVAL_X, false, "hx");
    is_int(r.rc, 0, "humaneval-x: converts a directory");
    is_int(json_array_size(r.tasks), 4, "humaneval-x: every file of the directory");
    is_int(r.st.bad, 1, "humaneval-x: a record of another language is bad");
    ok(r.errs && strstr(r.errs, "humaneval_js.jsonl:2: task_id is not 'JavaScript/N'"),
       "humaneval-x: ... and named by FILE:LINE");
    json_array_foreach(r.tasks, i, v)
    {
        const char *lang = str(v, "language");
        go += strcmp(lang, "go") == 0;
        rust += strcmp(lang, "rust") == 0;
        js += strcmp(lang, "javascript") == 0;
    }
    ok(go == 2 && rust == 1 && js == 1, "humaneval-x: language from the file name");

    t = json_array_get(r.tasks, 0);
    is_str(str(t, "id"), "humaneval-x/go/0", "humaneval-x: id humaneval-x/<lang>/N");
    is_str(str(t, "reference"),
           "import (\n    \"math\"\n)\n\n// Abs.\nfunc Abs(x float64) float64 {\n"
           "    return math.Abs(x)\n}\n",
           "humaneval-x go: reference = prompt + canonical_solution");
    is_str(str(t, "test_setup"),
           "package main\n\nimport (\n    \"testing\"\n    "
           "\"github.com/stretchr/testify/assert\"\n)\n",
           "humaneval-x go: test_setup kept, without the packages the solution imports");
    is_str(str(test_at(t, 0), "name"), "test", "humaneval-x: one test named test");
    ok(strncmp(str(test_at(t, 0), "code"), "func TestAbs", 12) == 0,
       "humaneval-x: test code = test");
    ok(has_tag(t, "runner:go-test") && json_object_get(t, "notes"),
       "humaneval-x go: runner tag and notes");
    t = json_array_get(r.tasks, 1);
    is_str(str(t, "prompt"),
           "import (\n    \"strconv\"\n)\n\n// Itoa.\nfunc Itoa(x int) string {\n",
           "humaneval-x go: a prompt without its import block gets it");

    t = json_array_get(r.tasks, 3);
    is_str(str(t, "id"), "humaneval-x/rust/0",
           "humaneval-x rust: id (files in the order cpp go "
           "java js python rust)");
    is_str(str(t, "prompt"),
           "\n/*\n Add.\n*/\n\nuse std::cmp::max;\nuse regex::Regex;\n\nfn add(a: i32, b: i32) "
           "-> i32{\n",
           "humaneval-x rust: prompt = prompt + declaration, unused crate imports dropped");
    ok(strstr(str(t, "reference"), "fn add(a: i32, b: i32) -> i32{\n    let re") != NULL,
       "humaneval-x rust: reference continues the signature");
    ok(has_tag(t, "needs:rust-crate:regex") && !has_tag(t, "needs:rust-crate:rand"),
       "humaneval-x rust: a crate used in code is needed, one named in a comment is not");
    ok(has_tag(t, "runner:rust-test"), "humaneval-x rust: runner tag");

    t = json_array_get(r.tasks, 2);
    is_str(str(t, "id"), "humaneval-x/javascript/3", "humaneval-x js: id");
    ok(has_tag(t, "needs:console-assert-fails") && strstr(str(t, "notes"), "console.assert"),
       "humaneval-x js: the console.assert caveat is recorded");
    run_release(&r);

    convert(&r, CONVERT_HUMANEVAL_X, false, "hx/humaneval_rust.jsonl");
    ok(r.rc == 0 && json_array_size(r.tasks) == 1, "humaneval-x: one file");
    run_release(&r);
    convert(&r, CONVERT_HUMANEVAL_X, false, "hx/notes.txt");
    ok(r.rc < 0 && strstr(r.err.msg, "cannot tell the language"),
       "humaneval-x: a file name without a language is an error");
    run_release(&r);
}

static void test_bad_lines(void)
{
    struct run r;
    struct stat st;
    char path[512];

    puts_file("bad.jsonl",
              "{\"task_id\": \"HumanEval/0\", \"prompt\": \"p\", \"entry_point\": \"f\", "
              "\"canonical_solution\": \"s\", \"test\": \"t\"}\n"
              "{\"task_id\": \"HumanEval/1\", \"prompt\": \"p\", \"entry_point\": \"f\", "
              "\"canonical_solution\": \"s\", \"test\": \"t\"}\n"
              "{\"task_id\": \"HumanEval/2\", \"prompt\": \n"
              "[1, 2]\n"
              "{\"task_id\": \"HumanEval/4\", \"prompt\": \"p\", \"entry_point\": \"f\", "
              "\"test\": \"t\"}\n"
              "{\"task_id\": \"HumanEval/0\", \"prompt\": \"p\", \"entry_point\": \"f\", "
              "\"canonical_solution\": \"s\", \"test\": \"t\"}\n"
              "{\"task_id\": \"HumanEval/6\", \"prompt\": 6, \"entry_point\": \"f\", "
              "\"canonical_solution\": \"s\", \"test\": \"t\"}\n"
              "{\"task_id\": \"HumanEval/7\", \"prompt\": \"p\", \"entry_point\": \"f\", "
              "\"canonical_solution\": \"s\", \"test\": \"t\"}\n");
    convert(&r, CONVERT_HUMANEVAL, false, "bad.jsonl");
    is_int(r.rc, 0, "bad lines: the conversion still succeeds");
    is_int(json_array_size(r.tasks), 3, "bad lines: the valid lines are converted");
    is_int(r.st.bad, 5, "bad lines: five bad records counted");
    diag("errors:\n%s", r.errs ? r.errs : "");
    ok(r.errs && strstr(r.errs, "bad.jsonl:3: not valid JSON"), "bad lines: FILE:3 invalid JSON");
    ok(r.errs && strstr(r.errs, "bad.jsonl:4: not a JSON object"), "bad lines: FILE:4 not object");
    ok(r.errs && strstr(r.errs, "bad.jsonl:5: missing field 'canonical_solution' (task_id "
                                "'HumanEval/4')"),
       "bad lines: FILE:5 names the missing field and the task");
    ok(r.errs && strstr(r.errs, "bad.jsonl:6: duplicate id 'humaneval/0' (first at "),
       "bad lines: FILE:6 duplicate id, with where it was first");
    ok(r.errs && strstr(r.errs, "bad.jsonl:7: field 'prompt' is not a string"),
       "bad lines: FILE:7 wrong field type");
    is_str(str(json_array_get(r.tasks, 2), "id"), "humaneval/7", "bad lines: later lines go on");
    run_release(&r);

    convert(&r, CONVERT_MBPP, false, "no-such-file.jsonl");
    ok(r.rc == -ENOENT && strstr(r.err.msg, "cannot open") &&
           strstr(r.err.msg, "no-such-file.jsonl"),
       "a missing file is an error naming it");
    run_release(&r);
    convert(&r, CONVERT_MBPP, false, "hx");
    ok(r.rc == -EISDIR && strstr(r.err.msg, "is a directory"), "a directory for a file format");
    run_release(&r);

    put_gz("cut.jsonl.gz", mbpp_fixture);
    snprintf(path, sizeof(path), "%s/cut.jsonl.gz", tmp);
    if (stat(path, &st) == 0 && truncate(path, st.st_size / 2) == 0) {
        convert(&r, CONVERT_MBPP, false, "cut.jsonl.gz");
        ok(r.rc == -EIO && strstr(r.err.msg, "unexpected end of file") &&
               json_array_size(r.tasks) == 0,
           "a gzip file cut short is an error, nothing converted");
        run_release(&r);
    } else {
        skip("cannot truncate the fixture");
    }
}

static void test_html(void)
{
    static const char html[] =
        "<html><head><title>T</title><style>p { x: 1 }</style></head>\n<body>\n"
        "<h1>Sum&nbsp;It</h1><p>Add   <b>two</b>\n numbers &le; 10&#33; &amp; &#x263A;"
        "</p><ul><li>one</li><li>two</li></ul><script>var a = '<p>';</script>"
        "<div class=\"sample-header\">Sample Input <i class=\"material-icons grey\">save_alt</i>"
        "<span class=\"x copy-popup\">Copied!</span></div><pre>\n1 2\n  3\n</pre>"
        "<!-- a <p> comment --><p>$$$x \\le y$$$ &bogus; done</p></body></html>";
    char *t = convert_html_text(html, strlen(html));

    is_str(t,
           "Sum It\n\nAdd two numbers \xe2\x89\xa4 10! & \xe2\x98\xba\n\n- one\n- two\n\nSample "
           "Input\n\n1 2\n  3\n\n$$$x \\le y$$$ &bogus; done\n",
           "html: text, entities, lists, pre kept, widgets/scripts/comments dropped");
    free(t);
}

static void test_kattis(void)
{
    static const char statement[] =
        "<html><body><h1>P One</h1><p>Read numbers.</p><h3>Limits</h3><p>Time limit: 20 "
        "seconds per test set.<br/>Time limit: 30 seconds.<br/>Memory limit: 1 GB.</p>"
        "</body></html>";
    struct run r;
    const json_t *t, *c;

    puts_file("kt/2020/a/one/problem.yaml", "name: One\n"
                                            "output_validator_flags: float_tolerance 1e-4\n");
    puts_file("kt/2020/a/one/problem_statement/problem.html", statement);
    puts_file("kt/2020/a/one/data/sample/1.in", "2\n1 2\n");
    puts_file("kt/2020/a/one/data/sample/1.ans", "Case #1: 3\n");
    puts_file("kt/2020/a/one/data/secret/subtask2/1.in", "3\n");
    puts_file("kt/2020/a/one/data/secret/subtask2/1.ans", "6\n");
    puts_file("kt/2020/a/one/data/secret/subtask1/1.in", "1\n");
    puts_file("kt/2020/a/one/data/secret/subtask1/1.ans", "2\n");
    puts_file("kt/2020/a/one/data/secret/testdata.yaml", "on_reject: break\n");
    puts_file("kt/2019/two/problem.yaml", "validator_flags: case_sensitive\n"
                                          "limits:\n  time_limit: 3\n  memory: 256\n");
    puts_file("kt/2019/two/data/secret/a.in", "x\n");
    puts_file("kt/2019/two/data/secret/a.ans", "y\n");
    puts_file("kt/2021/bad/problem.yaml", "name: Bad\n");
    put("kt/2021/bad/data/secret/1.in", "\xff\xfe\n", 3);
    puts_file("kt/2021/bad/data/secret/1.ans", "ok\n");
    puts_file("kt/2021/custom/problem.yaml", "validation: custom\n");
    puts_file("kt/2021/custom/data/secret/1.in", "1\n");
    puts_file("kt/2021/custom/data/secret/1.ans", "1\n");
    puts_file("kt/2022/flags/problem.yaml", "validator_flags: float_tolerance x\n");
    puts_file("kt/2022/flags/data/secret/1.in", "1\n");
    puts_file("kt/2022/flags/data/secret/1.ans", "1\n");

    convert(&r, CONVERT_KATTIS, false, "kt");
    is_int(r.rc, 0, "kattis: converts a tree");
    is_int(json_array_size(r.tasks), 2, "kattis: two good packages");
    is_int(r.st.bad, 3, "kattis: non-UTF-8, custom validation without a validator, bad flags");
    diag("errors:\n%s", r.errs ? r.errs : "");
    ok(r.errs && strstr(r.errs, "data/secret/1.in: not valid UTF-8; problem "
                                "'kattis/2021/bad' skipped"),
       "kattis: the non-UTF-8 file and its problem are named");
    ok(r.errs && strstr(r.errs, "asks for a custom output validator but output_validators/ has "
                                "none; problem 'kattis/2021/custom' skipped"),
       "kattis: custom validation without a validator is refused, saying so");
    ok(r.errs && strstr(r.errs, "problem.yaml:1: default validator flag 'float_tolerance' wants "
                                "a number after it, got 'x'"),
       "kattis: a bad default-validator flag is refused with problem.yaml's line");
    ok(r.errs && strstr(r.errs, "kattis/2019/two: pass-fail, default validator, 1 test"),
       "kattis: each converted package gets a line on the error stream");
    t = json_array_get(r.tasks, 0);
    is_str(str(t, "id"), "kattis/2019/two", "kattis: id = relative path, packages sorted");
    c = json_object_get(t, "checker");
    ok(c && strcmp(str(c, "type"), "kattis") == 0 && strcmp(str(c, "flags"), "case_sensitive") == 0,
       "kattis: the default validator, its flags from validator_flags");
    ok(json_integer_value(json_object_get(json_object_get(t, "limits"), "cpu_time")) == 10 &&
           json_integer_value(json_object_get(json_object_get(t, "limits"), "memory_mb")) == 256 &&
           has_tag(t, "time-limit:default"),
       "kattis: memory from problem.yaml; a legacy limits.time_limit is ignored (as problemtools)");
    ok(strstr(str(t, "notes"), "problemtools ignores it") != NULL,
       "kattis: ... and the task says so");
    ok(json_object_get(t, "prompt") == NULL && json_object_get(t, "reference") == NULL,
       "kattis: no statement, no prompt; no accepted submission, no reference");
    t = json_array_get(r.tasks, 1);
    is_str(str(t, "id"), "kattis/2020/a/one", "kattis: nested id");
    is_str(str(t, "language"), "python", "kattis: python");
    is_str(str(t, "harness"), "stdio", "kattis: stdio");
    is_int(json_array_size(json_object_get(t, "tests")), 3, "kattis: one test per .in");
    is_str(str(test_at(t, 0), "name"), "sample/1", "kattis: test names sorted: sample/1");
    is_str(str(test_at(t, 1), "name"), "secret/subtask1/1", "kattis: secret/subtask1/1");
    is_str(str(test_at(t, 2), "name"), "secret/subtask2/1", "kattis: secret/subtask2/1");
    is_str(str(test_at(t, 0), "stdin"), "2\n1 2\n", "kattis: stdin from .in");
    is_str(str(test_at(t, 0), "expected"), "Case #1: 3\n", "kattis: expected from .ans");
    c = json_object_get(t, "checker");
    ok(c && strcmp(str(c, "type"), "kattis") == 0 &&
           strcmp(str(c, "flags"), "float_tolerance 1e-4") == 0,
       "kattis: the Code Jam archive's output_validator_flags in a legacy problem.yaml");
    is_str(str(t, "prompt"),
           "P One\n\nRead numbers.\n\nLimits\n\nTime limit: 20 seconds per test set.\nTime limit: "
           "30 seconds.\nMemory limit: 1 GB.\n",
           "kattis: prompt = the statement as text");
    ok(json_integer_value(json_object_get(json_object_get(t, "limits"), "cpu_time")) == 30 &&
           json_integer_value(json_object_get(json_object_get(t, "limits"), "memory_mb")) == 1024 &&
           json_integer_value(json_object_get(json_object_get(t, "limits"), "output_kb")) == 8192 &&
           has_tag(t, "time-limit:statement"),
       "kattis: time limit from the statement (the largest), memory and output problemtools' "
       "defaults");
    ok(has_tag(t, "source:kattis") && strcmp(str(t, "source"), "kattis") == 0, "kattis: source");
    is_int(r.st.tests, 4, "kattis: stats count the tests");
    run_release(&r);

    convert(&r, CONVERT_KATTIS, false, "kt/2020/a/one/");
    ok(r.rc == 0 && json_array_size(r.tasks) == 1 &&
           strcmp(str(json_array_get(r.tasks, 0), "id"), "kattis/one") == 0,
       "kattis: one package, id from its directory name");
    run_release(&r);
    convert(&r, CONVERT_KATTIS, false, "kt/2020/a/one/problem.yaml");
    ok(r.rc == -ENOTDIR, "kattis: a file is not a package");
    run_release(&r);
    convert(&r, CONVERT_KATTIS, false, "hx");
    ok(r.rc == -ENOENT && strstr(r.err.msg, "no problem package"),
       "kattis: a tree without packages is an error");
    run_release(&r);

    /* Symlinks in a tree of packages: one to a package is that package; one to anything else
     * is never searched (the fuzzer's tree had one to '/', and the search walked the host). */
    {
        char link[600], target[600];
        puts_file("kl/real/problem.yaml", "name: Real\n");
        puts_file("kl/real/data/secret/1.in", "1\n");
        puts_file("kl/real/data/secret/1.ans", "1\n");
        puts_file("kl/sub/notes.txt", "a directory of the tree with a link back up in it\n");
        puts_file("kl-outside/linked/problem.yaml", "name: Linked\n");
        puts_file("kl-outside/linked/data/secret/1.in", "2\n");
        puts_file("kl-outside/linked/data/secret/1.ans", "2\n");
        puts_file("kl-outside/nested/deeper/problem.yaml", "name: Deeper\n");
        puts_file("kl-outside/nested/deeper/data/secret/1.in", "3\n");
        puts_file("kl-outside/nested/deeper/data/secret/1.ans", "3\n");
        const char *const links[][2] = {{"kl/to-package", "../kl-outside/linked"},
                                        {"kl/to-dir", "../kl-outside/nested"},
                                        {"kl/to-root", "/"},
                                        {"kl/sub/up", ".."}};
        for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
            snprintf(link, sizeof(link), "%s/%s", tmp, links[i][0]);
            snprintf(target, sizeof(target), "%s", links[i][1]);
            if (symlink(target, link) < 0)
                diag("symlink %s: %s", link, strerror(errno));
        }
        convert(&r, CONVERT_KATTIS, false, "kl");
        ok(r.rc == 0 && json_array_size(r.tasks) == 2,
           "kattis: a tree with links converts its package and the one a link leads to (%d, %zu "
           "tasks)",
           r.rc, json_array_size(r.tasks));
        ok(json_array_size(r.tasks) == 2 &&
               strcmp(str(json_array_get(r.tasks, 0), "id"), "kattis/real") == 0 &&
               strcmp(str(json_array_get(r.tasks, 1), "id"), "kattis/to-package") == 0,
           "kattis: ... named by their paths in the tree");
        ok(!r.errs || !strstr(r.errs, "deeper"),
           "kattis: a link to a directory that is not a package is not searched");
        run_release(&r);
    }
}

static int stop_after_one(json_t *task, void *arg)
{
    (void)task;
    return ++*(int *)arg >= 1 ? -EPIPE : 0;
}

static void test_emit_stop(void)
{
    struct convert_opts o = {.format = CONVERT_MBPP};
    struct convert_stats st;
    struct errbuf err = {{0}};
    char path[512];
    int n = 0;

    snprintf(path, sizeof(path), "%s/mbpp.jsonl", tmp);
    is_int(convert_path(&o, path, stop_after_one, &n, NULL, &st, &err), -EPIPE,
           "an emit failure stops the conversion and is returned");
    is_int(n, 1, "... after the first task");
}

int main(void)
{
    char cmd[300];

    snprintf(tmp, sizeof(tmp), "%s/crucible-convert.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp)) {
        printf("Bail out! cannot make a temporary directory\n");
        return 1;
    }
    test_formats();
    test_humaneval();
    test_mbpp();
    test_entry_point();
    test_mbpp_sanitized();
    test_humaneval_x();
    test_bad_lines();
    test_html();
    test_kattis();
    test_emit_stop();
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        diag("cannot remove %s", tmp);
    return done_testing();
}
