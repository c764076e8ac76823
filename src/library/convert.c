/*
 * convert.c — the JSON dataset converters (HumanEval, MBPP, sanitized MBPP, HumanEval-X)
 * and what every converter shares (see convert.h). Kattis packages: convert_kattis.c.
 *
 * An input file is read whole through zlib, which reads gzip and plain files alike, and
 * taken as JSONL, or as one JSON array when its first non-blank character is '['. Each
 * record goes through its format's recipe: a field map (a table of output fields, each a
 * template whose {name} parts are the record's fields, see expand()), fixed tests, and
 * for MBPP and HumanEval-X a small function for what a table cannot say. The known-issue
 * table then adds tags and notes, and the task is emitted with its keys in one order.
 *
 * The mappings follow ../shared/datasets/BASELINE.md, which ran them unsandboxed:
 * HumanEval runs prompt + canonical_solution, then test and check(entry_point); MBPP's
 * test_setup_code comes after the solution (tasks 367 and 927 build trees with the Node
 * class the solution defines), so it opens each test's code.
 */
#include "library/convert_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define INPUT_MAX ((size_t)1 << 30) /* bytes of one decompressed input file */

/* add_lf(b, s, n) — appends s with every CRLF made LF (MBPP's code uses CRLF; Python
 * reads source with universal newlines, so the program means the same). */
static void add_lf(struct convert_buf *b, const char *s, size_t n)
{
    size_t start = 0;

    for (size_t i = 0; i + 1 < n; i++) {
        if (s[i] == '\r' && s[i + 1] == '\n') {
            convert__buf_add(b, s + start, i - start);
            start = i + 1;
        }
    }
    convert__buf_add(b, s + start, n - start);
}

/* ---- templates ----------------------------------------------------------------------- */

/* An output field and its template: literal text with {spec} parts, where spec is
 *   name        the record's string field
 *   name.N      element N (a string) of an array field
 *   name:num    the task number: an integer field, or a string's text after its last '/'
 *   name:lf     a string field with its CRLF line ends made LF
 * Templates are ours, never input, so they contain no stray braces. */
struct field {
    const char *key;
    const char *tmpl;
};

/* field_text(in, spec, n, b, err) — appends the value of one {spec}. */
static int field_text(const json_t *in, const char *spec, size_t n, struct convert_buf *b,
                      struct errbuf *err)
{
    char name[64], *mod, *dot;
    const json_t *v;
    const char *s;
    char num[32];
    size_t idx = 0;

    if (n >= sizeof(name))
        return errbuf_set(err, "template field too long");
    memcpy(name, spec, n);
    name[n] = '\0';
    mod = strchr(name, ':');
    if (mod)
        *mod++ = '\0';
    dot = strchr(name, '.');
    if (dot) {
        *dot++ = '\0';
        idx = strtoul(dot, NULL, 10);
    }
    v = json_object_get(in, name);
    if (!v)
        return errbuf_set(err, "missing field '%s'", name);
    if (dot) {
        if (!json_is_array(v) || idx >= json_array_size(v))
            return errbuf_set(err, "field '%s' has no element %zu", name, idx);
        v = json_array_get(v, idx);
    }
    if (json_is_integer(v) && mod && strcmp(mod, "num") == 0) {
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        convert__buf_puts(b, num);
        return 0;
    }
    if (!json_is_string(v))
        return errbuf_set(err, "field '%s'%s%s is not a string", name, dot ? "." : "",
                          dot ? dot : "");
    s = json_string_value(v);
    n = json_string_length(v);
    if (mod && strcmp(mod, "num") == 0) {
        const char *slash = strrchr(s, '/');
        if (slash) {
            n -= (size_t)(slash + 1 - s);
            s = slash + 1;
        }
        if (n == 0)
            return errbuf_set(err, "field '%s' ('%s') has no task number", name,
                              json_string_value(v));
    }
    if (mod && strcmp(mod, "lf") == 0)
        add_lf(b, s, n);
    else
        convert__buf_add(b, s, n);
    return 0;
}

/* expand(tmpl, in, b, err) — appends the template's text for record in. */
static int expand(const char *tmpl, const json_t *in, struct convert_buf *b, struct errbuf *err)
{
    const char *p = tmpl, *open, *close;
    int e;

    while ((open = strchr(p, '{')) && (close = strchr(open, '}'))) {
        convert__buf_add(b, p, (size_t)(open - p));
        e = field_text(in, open + 1, (size_t)(close - open - 1), b, err);
        if (e)
            return e;
        p = close + 1;
    }
    convert__buf_puts(b, p);
    return b->oom ? -ENOMEM : 0;
}

/* set_fields(task, map, in, err) — task[key] = expand(tmpl) for every row of map. */
static int set_fields(json_t *task, const struct field *map, const json_t *in, struct errbuf *err)
{
    struct convert_buf b = {0};
    int e = 0;

    for (; map && map->key && !e; map++) {
        b.len = 0;
        e = expand(map->tmpl, in, &b, err);
        if (!e)
            e = convert__set_string(task, map->key, b.s, b.len);
    }
    convert__buf_release(&b);
    return e;
}

/* new_test(tests, name, code, n) — appends {"name": name, "code": code}. */
static int new_test(json_t *tests, const char *name, const char *code, size_t n)
{
    json_t *t = json_object();

    if (!t || convert__set_string(t, "name", name, strlen(name)) ||
        convert__set_string(t, "code", code, n) || json_array_append_new(tests, t)) {
        json_decref(t);
        return -ENOMEM;
    }
    return 0;
}

/* ---- recipes ------------------------------------------------------------------------- */

/* How one record becomes a task. */
struct recipe {
    const char *id_prefix;     /* the record's task_id must start with it and '/', or NULL */
    const struct field *map;   /* string fields; a NULL key ends it */
    const struct field *tests; /* fixed tests: {name, code template}; NULL key ends; or NULL */
    const char *tags;          /* space-separated tags every task gets */
    const char *notes;         /* a note every task gets, or NULL */
    /* prepare: adjusts the input record before the map (HumanEval-X Go and Rust) */
    int (*prepare)(json_t *in, json_t *task, struct errbuf *err);
    /* build: what the map cannot say (MBPP's test lists) */
    int (*build)(const struct convert_opts *o, const json_t *in, json_t *task, struct errbuf *err);
};

/* HumanEval: https://github.com/openai/human-eval, data/HumanEval.jsonl.gz. */
static const struct field humaneval_map[] = {
    {"id", "humaneval/{task_id:num}"},
    {"source", "humaneval"},
    {"language", "python"},
    {"harness", "assert"},
    {"entry_point", "{entry_point}"},
    {"prompt", "{prompt}"},
    {"reference", "{prompt}{canonical_solution}"},
    {NULL, NULL},
};

static const struct field humaneval_tests[] = {
    {"check", "{test}\n\ncheck({entry_point})\n"},
    {NULL, NULL},
};

/* MBPP: google-research mbpp/mbpp.jsonl. The prompt shows the first test, as the MBPP
 * paper's prompt does: it is how a model learns the function's name and signature. */
static const struct field mbpp_map[] = {
    {"id", "mbpp/{task_id:num}"},
    {"source", "mbpp"},
    {"language", "python"},
    {"harness", "assert"},
    {"prompt", "{text:lf}\nYour code should pass this test:\n{test_list.0}\n"},
    {"reference", "{code:lf}"},
    {NULL, NULL},
};

/* Sanitized MBPP: google-research mbpp/sanitized-mbpp.json. */
static const struct field mbpp_sanitized_map[] = {
    {"id", "mbpp-sanitized/{task_id:num}"},
    {"source", "mbpp-sanitized"},
    {"language", "python"},
    {"harness", "assert"},
    {"prompt", "{prompt:lf}\nYour code should pass this test:\n{test_list.0}\n"},
    {"reference", "{code:lf}"},
    {NULL, NULL},
};

/* list_tests(tests, in, key, prefix, setup, err) — one test per string of the array
 * in[key], named prefix1, prefix2, ...; its code is setup, a newline, the assert (just
 * the assert when setup is empty). A missing key is an empty list. */
static int list_tests(json_t *tests, const json_t *in, const char *key, const char *prefix,
                      const struct convert_buf *setup, struct errbuf *err)
{
    const json_t *list = json_object_get(in, key), *v;
    struct convert_buf b = {0};
    char name[64];
    size_t i;
    int e = 0;

    if (list && !json_is_array(list))
        return errbuf_set(err, "field '%s' is not an array", key);
    json_array_foreach(list, i, v)
    {
        if (!json_is_string(v)) {
            e = errbuf_set(err, "field '%s' element %zu is not a string", key, i);
            break;
        }
        b.len = 0;
        if (setup->len) {
            convert__buf_add(&b, setup->s, setup->len);
            convert__buf_puts(&b, "\n");
        }
        add_lf(&b, json_string_value(v), json_string_length(v));
        snprintf(name, sizeof(name), "%s%zu", prefix, i + 1);
        e = b.oom ? -ENOMEM : new_test(tests, name, b.s, b.len);
        if (e)
            break;
    }
    convert__buf_release(&b);
    return e;
}

/* mbpp_split_tag(n) — the upstream README's split of MBPP task numbers. */
static const char *mbpp_split_tag(json_int_t n)
{
    if (n >= 1 && n <= 10)
        return "split:prompt";
    if (n >= 11 && n <= 510)
        return "split:test";
    if (n >= 511 && n <= 600)
        return "split:validation";
    if (n >= 601 && n <= 974)
        return "split:train";
    return NULL;
}

/* mbpp_build — tests from test_list (and challenge_test_list with --challenge), the entry
 * point, the split tag. Full MBPP's setup is test_setup_code; sanitized MBPP's is its
 * test_imports, one per line. */
static int mbpp_build(const struct convert_opts *o, const json_t *in, json_t *task,
                      struct errbuf *err)
{
    const json_t *setup = json_object_get(in, "test_setup_code");
    const json_t *imports = json_object_get(in, "test_imports");
    const json_t *list = json_object_get(in, "test_list"), *v;
    struct convert_buf sb = {0};
    json_t *tests = json_array();
    char entry[128];
    const char *split;
    size_t i;
    int e = 0;

    if (!tests)
        return -ENOMEM;
    if (json_is_string(setup)) {
        add_lf(&sb, json_string_value(setup), json_string_length(setup));
    } else if (setup && !json_is_null(setup)) {
        e = errbuf_set(err, "field 'test_setup_code' is not a string");
    }
    if (!e && json_is_array(imports)) {
        json_array_foreach(imports, i, v)
        {
            if (!json_is_string(v)) {
                e = errbuf_set(err, "field 'test_imports' element %zu is not a string", i);
                break;
            }
            if (i)
                convert__buf_puts(&sb, "\n");
            convert__buf_puts(&sb, json_string_value(v));
        }
    } else if (!e && imports && !json_is_null(imports)) {
        e = errbuf_set(err, "field 'test_imports' is not an array");
    }
    if (!e && sb.oom)
        e = -ENOMEM;
    if (!e && (!json_is_array(list) || json_array_size(list) == 0))
        e = errbuf_set(err, "field 'test_list' is not a non-empty array");
    if (!e)
        e = list_tests(tests, in, "test_list", "test_", &sb, err);
    if (!e && o->challenge)
        e = list_tests(tests, in, "challenge_test_list", "challenge_", &sb, err);
    if (!e)
        e = json_object_set(task, "tests", tests) ? -ENOMEM : 0;
    if (!e && convert_entry_point(json_string_value(json_array_get(list, 0)), entry, sizeof(entry)))
        e = convert__set_string(task, "entry_point", entry, strlen(entry));
    split = mbpp_split_tag(json_integer_value(json_object_get(in, "task_id")));
    if (!e && split)
        e = convert__add_tag(task, split);
    json_decref(tests);
    convert__buf_release(&sb);
    return e;
}

static const struct recipe humaneval_recipe = {
    .map = humaneval_map,
    .tests = humaneval_tests,
    .tags = "source:humaneval",
};

static const struct recipe mbpp_recipe = {
    .map = mbpp_map,
    .tags = "source:mbpp",
    .build = mbpp_build,
};

static const struct recipe mbpp_sanitized_recipe = {
    .map = mbpp_sanitized_map,
    .tags = "source:mbpp-sanitized",
    .build = mbpp_build,
};

/* ---- HumanEval-X --------------------------------------------------------------------- */

/* HumanEval-X (THUDM/CodeGeeX, codegeex/benchmark/humaneval-x). The program CodeGeeX runs
 * is prompt + canonical_solution + test, except:
 *   - Rust: the prompt is only the doc comment; the signature is in "declaration". The
 *     task's prompt is therefore prompt + declaration, which ends with the signature as
 *     every other language's prompt does. The tests are a #[cfg(test)] module.
 *   - Go: the test is a `go test` function (testify) and "test_setup" is the test file's
 *     package clause and imports; see go_prepare for the file layout. */
static const struct field hx_cpp_map[] = {
    {"id", "humaneval-x/cpp/{task_id:num}"},
    {"source", "humaneval-x"},
    {"language", "cpp"},
    {"harness", "assert"},
    {"prompt", "{prompt}"},
    {"reference", "{prompt}{canonical_solution}"},
    {NULL, NULL},
};

static const struct field hx_go_map[] = {
    {"id", "humaneval-x/go/{task_id:num}"},
    {"source", "humaneval-x"},
    {"language", "go"},
    {"harness", "assert"},
    {"prompt", "{prompt}"},
    {"reference", "{prompt}{canonical_solution}"},
    {"test_setup", "{test_setup}"},
    {NULL, NULL},
};

static const struct field hx_java_map[] = {
    {"id", "humaneval-x/java/{task_id:num}"},
    {"source", "humaneval-x"},
    {"language", "java"},
    {"harness", "assert"},
    {"prompt", "{prompt}"},
    {"reference", "{prompt}{canonical_solution}"},
    {NULL, NULL},
};

static const struct field hx_js_map[] = {
    {"id", "humaneval-x/javascript/{task_id:num}"},
    {"source", "humaneval-x"},
    {"language", "javascript"},
    {"harness", "assert"},
    {"prompt", "{prompt}"},
    {"reference", "{prompt}{canonical_solution}"},
    {NULL, NULL},
};

static const struct field hx_python_map[] = {
    {"id", "humaneval-x/python/{task_id:num}"},
    {"source", "humaneval-x"},
    {"language", "python"},
    {"harness", "assert"},
    {"prompt", "{prompt}"},
    {"reference", "{prompt}{canonical_solution}"},
    {NULL, NULL},
};

static const struct field hx_rust_map[] = {
    {"id", "humaneval-x/rust/{task_id:num}"},
    {"source", "humaneval-x"},
    {"language", "rust"},
    {"harness", "assert"},
    {"prompt", "{prompt}{declaration}"},
    {"reference", "{prompt}{declaration}{canonical_solution}"},
    {NULL, NULL},
};

static const struct field hx_tests[] = {
    {"test", "{test}"},
    {NULL, NULL},
};

/* import_path(line, &n) — the quoted path of a Go import line (`    "math"`), or NULL. */
static const char *import_path(const char *line, size_t len, size_t *n)
{
    const char *q;

    while (len && (*line == ' ' || *line == '\t')) {
        line++;
        len--;
    }
    if (len < 2 || line[0] != '"')
        return NULL;
    q = memchr(line + 1, '"', len - 1);
    if (!q)
        return NULL;
    *n = (size_t)(q - line) + 1;
    return line;
}

/* go_prepare — a Go task is run by `go test`, from one file: test_setup (package main and
 * the test's imports), the solution (which opens with its own import block), then the
 * test. Go allows several import declarations but not one package imported twice, so
 * the packages the solution's import block imports are dropped from test_setup here.
 * One prompt (Go/65) lacks the import block its solution needs; it is prepended. */
static int go_prepare(json_t *in, json_t *task, struct errbuf *err)
{
    const json_t *imp = json_object_get(in, "import"), *ts = json_object_get(in, "test_setup");
    const json_t *pr = json_object_get(in, "prompt");
    struct convert_buf b = {0};
    const char *s, *imps, *nl, *path;
    size_t n, pn;
    int e = 0;

    if (!json_is_string(imp) || !json_is_string(ts) || !json_is_string(pr))
        return errbuf_set(err, "Go records need string fields 'import', 'test_setup', 'prompt'");
    imps = json_string_value(imp);
    for (s = json_string_value(ts); *s; s = nl) {
        nl = strchr(s, '\n');
        nl = nl ? nl + 1 : s + strlen(s);
        path = import_path(s, (size_t)(nl - s), &pn);
        if (path && memmem(imps, strlen(imps), path, pn))
            continue;
        convert__buf_add(&b, s, (size_t)(nl - s));
    }
    if (!b.oom)
        e = convert__set_string(in, "test_setup", b.s, b.len);
    if (!e && !b.oom && imps[0] && strncmp(json_string_value(pr), imps, strlen(imps)) != 0) {
        b.len = 0;
        convert__buf_puts(&b, imps);
        n = strlen(imps);
        if (imps[n - 1] != '\n')
            convert__buf_puts(&b, "\n");
        convert__buf_add(&b, json_string_value(pr), json_string_length(pr));
        if (!b.oom)
            e = convert__set_string(in, "prompt", b.s, b.len);
        if (!e)
            e = convert__add_note(task, "The original prompt lacks the import block its "
                                        "solution needs (field 'import'); it was prepended.");
    }
    e = b.oom ? -ENOMEM : e;
    convert__buf_release(&b);
    return e;
}

/* Crates the Rust declarations import that are not in std. */
static const char *const rust_crates[] = {"rand", "regex", "md5"};

/* mentions(s, word) — does s contain word not inside a longer identifier? An empty word
 * (`use rand::;` imports no item) is in no text: strstr would find it at every position
 * without moving on (found by fuzz/convert_humaneval_x: the loop never ended). */
static bool mentions(const char *s, const char *word)
{
    size_t n = strlen(word);

    if (n == 0)
        return false;
    for (const char *p = s; (p = strstr(p, word)); p += n) {
        bool before = p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
        bool after = isalnum((unsigned char)p[n]) || p[n] == '_';
        if (!before && !after)
            return true;
    }
    return false;
}

/* add_code(b, s) — appends Rust source s without its comments (line comments, nested
 * block comments); string literals are copied as they are. */
static void add_code(struct convert_buf *b, const char *s)
{
    int depth = 0;

    while (*s) {
        if (depth) {
            if ((s[0] == '*' && s[1] == '/') || (s[0] == '/' && s[1] == '*')) {
                depth += s[0] == '/' ? 1 : -1;
                s += 2;
            } else {
                s++;
            }
        } else if (s[0] == '/' && s[1] == '*') {
            depth = 1;
            s += 2;
        } else if (s[0] == '/' && s[1] == '/') {
            s += strcspn(s, "\n");
        } else if (*s == '"') {
            const char *q = s + 1;
            while (*q && *q != '"')
                q += q[0] == '\\' && q[1] ? 2 : 1;
            q += *q ? 1 : 0;
            convert__buf_add(b, s, (size_t)(q - s));
            s = q;
        } else {
            convert__buf_add(b, s++, 1);
        }
    }
    convert__buf_puts(b, "\n");
}

/* rust_prepare — every Rust declaration imports rand, regex and md5, which are not in
 * std, so none would build with plain rustc. A `use` line of such a crate is kept only
 * when the canonical solution or the test, comments aside, names the crate or the
 * imported item (5 of 164 tasks); those tasks are tagged needs:rust-crate:NAME. */
static int rust_prepare(json_t *in, json_t *task, struct errbuf *err)
{
    const json_t *decl = json_object_get(in, "declaration");
    const char *sol = json_string_value(json_object_get(in, "canonical_solution"));
    const char *test = json_string_value(json_object_get(in, "test"));
    struct convert_buf b = {0}, code = {0};
    const char *s, *nl;
    char tag[64], item[64];
    int e = 0;

    if (!json_is_string(decl) || !sol || !test)
        return errbuf_set(err, "Rust records need string fields 'declaration', "
                               "'canonical_solution', 'test'");
    add_code(&code, sol);
    add_code(&code, test);
    for (s = json_string_value(decl); *s && !e && !code.oom; s = nl) {
        const char *crate = NULL, *last;
        size_t n = 0;
        nl = strchr(s, '\n');
        nl = nl ? nl + 1 : s + strlen(s);
        for (size_t i = 0; i < sizeof(rust_crates) / sizeof(rust_crates[0]); i++) {
            n = strlen(rust_crates[i]);
            if (strncmp(s, "use ", 4) == 0 && strncmp(s + 4, rust_crates[i], n) == 0 &&
                (s[4 + n] == ':' || s[4 + n] == ';')) {
                crate = rust_crates[i];
                break;
            }
        }
        if (crate) {
            /* the imported item: the last path segment (`Rng` of `use rand::Rng;`) */
            last = s + 4;
            for (const char *c = s + 4; c < nl && *c != ';'; c++)
                if (*c == ':')
                    last = c + 1;
            n = strcspn(last, ";\n");
            snprintf(item, sizeof(item), "%.*s", (int)(n < 63 ? n : 63), last);
            if (!mentions(code.s, crate) && !mentions(code.s, item))
                continue;
            snprintf(tag, sizeof(tag), "needs:rust-crate:%s", crate);
            e = convert__add_tag(task, tag);
        }
        convert__buf_add(&b, s, (size_t)(nl - s));
    }
    if (!e)
        e = b.oom || code.oom ? -ENOMEM : convert__set_string(in, "declaration", b.s, b.len);
    convert__buf_release(&b);
    convert__buf_release(&code);
    return e;
}

/* The six HumanEval-X files. */
static const struct hx_lang {
    const char *file; /* humaneval_<file>.jsonl[.gz] */
    struct recipe recipe;
} hx_langs[] = {
    {"cpp",
     {.id_prefix = "CPP", .map = hx_cpp_map, .tests = hx_tests, .tags = "source:humaneval-x"}},
    {"go",
     {.id_prefix = "Go",
      .map = hx_go_map,
      .tests = hx_tests,
      .tags = "source:humaneval-x runner:go-test needs:go-module:github.com/stretchr/testify",
      .notes = "Go: run with `go test` on one file main_test.go = test_setup + \"\\n\" + "
               "solution + \"\\n\" + tests[0].code, in a module that requires "
               "github.com/stretchr/testify; test_setup omits the packages the solution's "
               "own import block imports. The solution's imports may still be incomplete or "
               "unused (Go rejects both): fix them first (goimports, or as CodeGeeX does).",
      .prepare = go_prepare}},
    {"java",
     {.id_prefix = "Java", .map = hx_java_map, .tests = hx_tests, .tags = "source:humaneval-x"}},
    {"js",
     {.id_prefix = "JavaScript",
      .map = hx_js_map,
      .tests = hx_tests,
      .tags = "source:humaneval-x needs:console-assert-fails",
      .notes = "The tests use console.assert, which in Node only prints: the harness must "
               "make a failed assertion fail the run (or treat stderr output as failure)."}},
    {"python",
     {.id_prefix = "Python",
      .map = hx_python_map,
      .tests = hx_tests,
      .tags = "source:humaneval-x"}},
    {"rust",
     {.id_prefix = "Rust",
      .map = hx_rust_map,
      .tests = hx_tests,
      .tags = "source:humaneval-x runner:rust-test",
      .notes = "Rust: the test is a #[cfg(test)] module and the program has no main: build "
               "solution + \"\\n\" + tests[0].code with `rustc --test` (or cargo test) and run "
               "the test binary.",
      .prepare = rust_prepare}},
};

/* ---- records and files --------------------------------------------------------------- */

/* convert_record(r, rc, in, where) — one input record through its recipe; a bad record
 * is reported and skipped. 0, the emit value, or -ENOMEM. */
static int convert_record(struct convert_run *r, const struct recipe *rc, json_t *in,
                          const char *where)
{
    struct errbuf err = {{0}};
    const json_t *tid = json_object_get(in, "task_id");
    char idtext[160] = "";
    json_t *task, *tests = NULL;
    const char *p;
    int e = 0;

    if (json_is_string(tid))
        snprintf(idtext, sizeof(idtext), " (task_id '%s')", json_string_value(tid));
    else if (json_is_integer(tid))
        snprintf(idtext, sizeof(idtext), " (task_id %" JSON_INTEGER_FORMAT ")",
                 json_integer_value(tid));
    if (rc->id_prefix) {
        size_t n = strlen(rc->id_prefix);
        if (!json_is_string(tid) || strncmp(json_string_value(tid), rc->id_prefix, n) != 0 ||
            json_string_value(tid)[n] != '/') {
            convert__bad(r, where, "task_id is not '%s/N', not a task of this file%s; skipped",
                         rc->id_prefix, idtext);
            return 0;
        }
    }
    task = json_object();
    if (!task)
        return -ENOMEM;
    if (rc->prepare)
        e = rc->prepare(in, task, &err);
    if (!e)
        e = set_fields(task, rc->map, in, &err);
    if (!e && rc->tests) {
        struct convert_buf b = {0};
        tests = json_array();
        e = tests ? json_object_set_new(task, "tests", tests) : -ENOMEM;
        for (const struct field *t = rc->tests; !e && t->key; t++) {
            b.len = 0;
            e = expand(t->tmpl, in, &b, &err);
            if (!e)
                e = new_test(tests, t->key, b.s, b.len);
        }
        convert__buf_release(&b);
    }
    if (!e && rc->build)
        e = rc->build(r->o, in, task, &err);
    for (p = rc->tags; !e && p && *p; p += strspn(p, " ")) {
        char tag[128];
        size_t n = strcspn(p, " ");
        snprintf(tag, sizeof(tag), "%.*s", (int)n, p);
        e = convert__add_tag(task, tag);
        p += n;
    }
    if (!e && rc->notes)
        e = convert__add_note(task, rc->notes);
    if (e) {
        json_decref(task);
        if (e == -ENOMEM)
            return e;
        convert__bad(r, where, "%s%s; skipped", err.msg, idtext);
        return 0;
    }
    return convert__finish(r, task, where);
}

/* read_input(path, &buf, &len, err) — the whole file, gunzipped when it is gzip. */
static int read_input(const char *path, char **buf, size_t *len, struct errbuf *err)
{
    struct convert_buf b = {0};
    struct stat st;
    char chunk[65536];
    gzFile gz;
    int fd, n, e = 0, zerr;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        e = -errno;
        errbuf_set(err, "cannot open '%s': %s", path, strerror(-e));
        return e;
    }
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        errbuf_set(err, "'%s' is a directory, want a file", path);
        return -EISDIR;
    }
    gz = gzdopen(fd, "rb");
    if (!gz) {
        close(fd);
        errbuf_set(err, "cannot read '%s': out of memory", path);
        return -ENOMEM;
    }
    while ((n = gzread(gz, chunk, sizeof(chunk))) > 0) {
        if (b.len + (size_t)n > INPUT_MAX) {
            errbuf_set(err, "'%s' is larger than %zu bytes", path, INPUT_MAX);
            e = -EFBIG;
            break;
        }
        convert__buf_add(&b, chunk, (size_t)n);
    }
    if (!e) {
        /* a gzip stream cut short reads as end of file, with Z_BUF_ERROR */
        const char *msg = gzerror(gz, &zerr), *colon = strstr(msg, ": ");
        if (strncmp(msg, "<fd:", 4) == 0 && colon)
            msg = colon + 2; /* gzdopen names the file "<fd:N>" */
        if (n < 0 || zerr == Z_BUF_ERROR) {
            e = zerr == Z_ERRNO ? -errno : -EIO;
            errbuf_set(err, "cannot read '%s': %s", path, zerr == Z_ERRNO ? strerror(errno) : msg);
        }
    }
    gzclose(gz);
    if (!e && b.oom) {
        errbuf_set(err, "cannot read '%s': out of memory", path);
        e = -ENOMEM;
    }
    if (!e && !b.s)
        convert__buf_add(&b, "", 0);
    if (e) {
        convert__buf_release(&b);
        return e;
    }
    *buf = b.s;
    *len = b.len;
    return 0;
}

/* convert_file(r, path, rc, err) — every record of one input file. */
static int convert_file(struct convert_run *r, const char *path, const struct recipe *rc,
                        struct errbuf *err)
{
    char *buf, *line, *end, where[4200];
    size_t len, lineno = 0, skip;
    json_error_t jerr;
    json_t *in;
    int e;

    e = read_input(path, &buf, &len, err);
    if (e)
        return e;
    skip = strspn(buf, " \t\r\n");
    if (skip < len && buf[skip] == '[') {
        /* one JSON array of records */
        json_t *all = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr), *v;
        size_t i;
        free(buf);
        if (!all || !json_is_array(all)) {
            if (all)
                snprintf(jerr.text, sizeof(jerr.text), "not an array");
            snprintf(where, sizeof(where), "%s:%d", path, jerr.line);
            convert__bad(r, where, "not a valid JSON array: %s (column %d); nothing converted",
                         jerr.text, jerr.column);
            json_decref(all);
            return 0;
        }
        e = 0;
        json_array_foreach(all, i, v)
        {
            snprintf(where, sizeof(where), "%s: item %zu", path, i + 1);
            if (!json_is_object(v))
                convert__bad(r, where, "not a JSON object; skipped");
            else
                e = convert_record(r, rc, v, where);
            if (e)
                break;
        }
        json_decref(all);
        return e;
    }
    for (line = buf; line < buf + len && !e; line = end + 1) {
        size_t n;
        end = memchr(line, '\n', (size_t)(buf + len - line));
        if (!end)
            end = buf + len;
        lineno++;
        n = (size_t)(end - line);
        if (n && line[n - 1] == '\r')
            n--;
        if (strspn(line, " \t\r") >= n)
            continue;
        snprintf(where, sizeof(where), "%s:%zu", path, lineno);
        in = json_loadb(line, n, JSON_REJECT_DUPLICATES, &jerr);
        if (!in) {
            convert__bad(r, where, "not valid JSON: %s (column %d); line skipped", jerr.text,
                         jerr.column);
            continue;
        }
        if (!json_is_object(in))
            convert__bad(r, where, "not a JSON object; line skipped");
        else
            e = convert_record(r, rc, in, where);
        json_decref(in);
    }
    free(buf);
    return e;
}

/* hx_find(base) — the HumanEval-X language a file name stands for, or NULL. */
static const struct hx_lang *hx_find(const char *base)
{
    for (size_t i = 0; i < sizeof(hx_langs) / sizeof(hx_langs[0]); i++) {
        size_t n = strlen(hx_langs[i].file);
        if (strncmp(base, "humaneval_", 10) == 0 && strncmp(base + 10, hx_langs[i].file, n) == 0 &&
            (strcmp(base + 10 + n, ".jsonl") == 0 || strcmp(base + 10 + n, ".jsonl.gz") == 0))
            return &hx_langs[i];
    }
    return NULL;
}

/* convert_humaneval_x(r, path, err) — one humaneval_<lang>.jsonl[.gz], or a directory:
 * every such file in it, in the table's order. */
static int convert_humaneval_x(struct convert_run *r, const char *path, struct errbuf *err)
{
    const struct hx_lang *hx;
    const char *base = strrchr(path, '/');
    char file[4200];
    struct stat st;
    int e, found = 0;

    if (stat(path, &st) < 0) {
        e = -errno;
        errbuf_set(err, "cannot open '%s': %s", path, strerror(-e));
        return e;
    }
    if (!S_ISDIR(st.st_mode)) {
        hx = hx_find(base ? base + 1 : path);
        if (!hx)
            return errbuf_set(err,
                              "cannot tell the language of '%s' (want a file named "
                              "humaneval_<cpp|go|java|js|python|rust>.jsonl[.gz])",
                              path);
        return convert_file(r, path, &hx->recipe, err);
    }
    for (size_t i = 0; i < sizeof(hx_langs) / sizeof(hx_langs[0]); i++) {
        static const char *const exts[] = {".jsonl.gz", ".jsonl"};
        for (size_t k = 0; k < 2; k++) {
            snprintf(file, sizeof(file), "%s/humaneval_%s%s", path, hx_langs[i].file, exts[k]);
            if (stat(file, &st) < 0)
                continue;
            found++;
            e = convert_file(r, file, &hx_langs[i].recipe, err);
            if (e)
                return e;
            break;
        }
    }
    if (!found) {
        errbuf_set(err, "no humaneval_<lang>.jsonl[.gz] file in '%s'", path);
        return -ENOENT;
    }
    return 0;
}

/* ---- the module's entry points ------------------------------------------------------- */

static const struct {
    const char *name;
    enum convert_format fmt;
} format_names[] = {
    {"humaneval", CONVERT_HUMANEVAL},
    {"mbpp", CONVERT_MBPP},
    {"mbpp-sanitized", CONVERT_MBPP_SANITIZED},
    {"humaneval-x", CONVERT_HUMANEVAL_X},
    {"kattis", CONVERT_KATTIS},
};

bool convert_format_find(const char *name, enum convert_format *fmt)
{
    for (size_t i = 0; name && i < sizeof(format_names) / sizeof(format_names[0]); i++) {
        if (strcmp(name, format_names[i].name) == 0) {
            *fmt = format_names[i].fmt;
            return true;
        }
    }
    return false;
}

const char *convert_format_names(void)
{
    return "humaneval|mbpp|mbpp-sanitized|humaneval-x|kattis";
}

int convert_path(const struct convert_opts *o, const char *path, convert_emit_fn emit, void *arg,
                 FILE *errs, struct convert_stats *stats, struct errbuf *err)
{
    struct convert_run r = {.o = o, .emit = emit, .arg = arg, .errs = errs, .st = stats};
    int e;

    memset(stats, 0, sizeof(*stats));
    r.seen = json_object();
    if (!r.seen) {
        errbuf_set(err, "out of memory");
        return -ENOMEM;
    }
    switch (o->format) {
    case CONVERT_HUMANEVAL:
        e = convert_file(&r, path, &humaneval_recipe, err);
        break;
    case CONVERT_MBPP:
        e = convert_file(&r, path, &mbpp_recipe, err);
        break;
    case CONVERT_MBPP_SANITIZED:
        e = convert_file(&r, path, &mbpp_sanitized_recipe, err);
        break;
    case CONVERT_HUMANEVAL_X:
        e = convert_humaneval_x(&r, path, err);
        break;
    case CONVERT_KATTIS:
        e = convert__kattis(&r, path, err);
        break;
    default:
        e = errbuf_set(err, "unknown format");
        break;
    }
    if (e == -ENOMEM && !err->msg[0])
        errbuf_set(err, "out of memory");
    json_decref(r.seen);
    return e;
}

/* ---- the MBPP entry point ------------------------------------------------------------ */

/* Names a test may call that are not the task's function. */
static const char python_builtins[] =
    "abs all any bin bool bytearray bytes chr complex dict divmod enumerate filter float "
    "frozenset hash hex id int isinstance iter len list map max min next oct ord pow print "
    "range repr reversed round set sorted str sum tuple type zip";
static const char python_keywords[] =
    "and assert await elif else False for if in is lambda None not or True while yield";

bool convert_entry_point(const char *test, char *out, size_t size)
{
    const char *p = test, *first = NULL;
    size_t first_n = 0;

    if (!test)
        return false;
    while (*p) {
        if (*p == '"' || *p == '\'') {
            /* a string literal (prefixes such as r or b were read as a name before it) */
            char q = *p;
            if (p[1] == q && p[2] == q) {
                const char *close = p + 3;
                while (*close && !(close[0] == q && close[1] == q && close[2] == q))
                    close += close[0] == '\\' && close[1] ? 2 : 1;
                p = *close ? close + 3 : close;
            } else {
                p++;
                while (*p && *p != q && *p != '\n')
                    p += p[0] == '\\' && p[1] ? 2 : 1;
                if (*p)
                    p++;
            }
            continue;
        }
        if (isdigit((unsigned char)*p)) {
            while (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
                p++;
            continue;
        }
        if (isalpha((unsigned char)*p) || *p == '_') {
            const char *name = p, *before = p, *after;
            size_t n;
            while (isalnum((unsigned char)*p) || *p == '_')
                p++;
            n = (size_t)(p - name);
            while (before > test && (before[-1] == ' ' || before[-1] == '\t'))
                before--;
            after = p + strspn(p, " \t");
            if (*after != '(' || (before > test && before[-1] == '.') ||
                convert__word_in(python_keywords, name, n))
                continue;
            if (!convert__word_in(python_builtins, name, n)) {
                first = name;
                first_n = n;
                break;
            }
            if (!first) {
                first = name;
                first_n = n;
            }
            continue;
        }
        p++;
    }
    if (!first || first_n >= size)
        return false;
    memcpy(out, first, first_n);
    out[first_n] = '\0';
    return true;
}
