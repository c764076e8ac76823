/*
 * task.c — parsing and validating native tasks (see task.h and docs/TASKS.md).
 */
#include "judge/task.h"

#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strset.h"

static const char *const harness_names[] = {
    [TASK_HARNESS_ASSERT] = "assert",
    [TASK_HARNESS_STDIO] = "stdio",
    [TASK_HARNESS_COMMAND] = "command",
    [TASK_HARNESS_INTERACTIVE] = "interactive",
};

const char *task_harness_name(enum task_harness h)
{
    return (size_t)h < sizeof(harness_names) / sizeof(harness_names[0]) ? harness_names[h] : "?";
}

/* str_field(j, key, required, out, err) — a string member copied into *out (NULL if absent). */
static int str_field(const json_t *j, const char *key, bool required, char **out,
                     struct errbuf *err)
{
    json_t *v = json_object_get(j, key);

    *out = NULL;
    if (!v || json_is_null(v)) {
        if (required)
            return errbuf_set(err, "missing field '%s'", key);
        return 0;
    }
    if (!json_is_string(v))
        return errbuf_set(err, "field '%s' must be a string", key);
    *out = strndup(json_string_value(v), json_string_length(v));
    return *out ? 0 : -ENOMEM;
}

/* bytes_copy(v, out, len) — a JSON string's bytes (may hold NUL) copied, NUL-terminated. */
static int bytes_copy(const json_t *v, char **out, size_t *len)
{
    *len = json_string_length(v);
    *out = malloc(*len + 1);
    if (!*out)
        return -ENOMEM;
    memcpy(*out, json_string_value(v), *len);
    (*out)[*len] = '\0';
    return 0;
}

int task_limits_from_json(const json_t *j, struct sandbox_limits *l, struct errbuf *err)
{
    static const struct {
        const char *key;
        enum sandbox_limit_id id;
    } keys[] = {{"cpu_time", LIM_CPU}, {"wall_time", LIM_WALL},   {"memory_mb", LIM_MEMORY},
                {"pids", LIM_PIDS},    {"output_kb", LIM_OUTPUT}, {"disk_mb", LIM_DISK}};
    const char *key;
    json_t *v;

    if (!json_is_object(j))
        return errbuf_set(err, "'limits' must be an object");
    json_object_foreach((json_t *)j, key, v)
    {
        bool known = false;
        if (strcmp(key, "network") == 0) {
            if (!json_is_string(v) || (strcmp(json_string_value(v), "none") != 0 &&
                                       strcmp(json_string_value(v), "loopback") != 0))
                return errbuf_set(err, "limits.network must be \"none\" or \"loopback\"");
            l->loopback = strcmp(json_string_value(v), "loopback") == 0;
            continue;
        }
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
            const struct sandbox_limit_range *r = &sandbox_limit_ranges[keys[i].id];
            double d;
            if (strcmp(key, keys[i].key) != 0)
                continue;
            known = true;
            if (!json_is_number(v))
                return errbuf_set(err, "limits.%s must be a number", key);
            d = json_number_value(v);
            if (!(d >= r->min && d <= r->max))
                return errbuf_set(err, "limits.%s must be from %.10g to %.10g, not %.10g", key,
                                  r->min, r->max, d);
            if (keys[i].id != LIM_CPU && keys[i].id != LIM_WALL && d != (double)(uint64_t)d)
                return errbuf_set(err, "limits.%s must be a whole number", key);
            switch (keys[i].id) {
            case LIM_CPU:
                l->cpu_time = d;
                break;
            case LIM_WALL:
                l->wall_time = d;
                break;
            case LIM_MEMORY:
                l->memory_mb = (uint64_t)d;
                break;
            case LIM_PIDS:
                l->pids = (uint64_t)d;
                break;
            case LIM_OUTPUT:
                l->output_kb = (uint64_t)d;
                break;
            case LIM_DISK:
            case LIM_COUNT:
            default:
                l->disk_mb = (uint64_t)d;
                break;
            }
        }
        if (!known)
            return errbuf_set(err, "unknown limit '%s'", key);
    }
    return 0;
}

/* The fields a test of each harness takes: any other is the author's mistake ("input" for
 * "stdin", say, would otherwise run the test with empty input), refused with its name. */
static const char *const test_fields[][7] = {
    [TASK_HARNESS_ASSERT] = {"name", "code", "group", "flags", NULL},
    [TASK_HARNESS_STDIO] = {"name", "stdin", "expected", "group", "flags", NULL},
    [TASK_HARNESS_COMMAND] = {"name", "flags", NULL},
    [TASK_HARNESS_INTERACTIVE] = {"name", "stdin", "expected", "group", "flags", NULL},
};

/* test_fields_check(tj, i, h, err) — 0, or -EINVAL naming tests[i]'s first unknown field. */
static int test_fields_check(const json_t *tj, size_t i, enum task_harness h, struct errbuf *err)
{
    const char *key, *const *known = test_fields[h];
    char list[96] = "";
    json_t *v;

    json_object_foreach((json_t *)tj, key, v)
    {
        size_t k = 0;
        while (known[k] && strcmp(known[k], key) != 0)
            k++;
        if (known[k])
            continue;
        for (k = 0; known[k]; k++)
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", k ? ", " : "",
                     known[k]);
        if (h == TASK_HARNESS_COMMAND && strcmp(key, "group") == 0)
            return errbuf_set(err,
                              "tests[%zu].group: the command harness groups its tests itself "
                              "(fail_to_pass, pass_to_pass)",
                              i);
        return errbuf_set(err, "unknown field tests[%zu].%s (a test of the %s harness takes %s)", i,
                          key, task_harness_name(h), list);
    }
    return 0;
}

static int parse_tests(const json_t *arr, struct task *t, struct errbuf *err)
{
    size_t i;
    json_t *tj;

    if (t->harness == TASK_HARNESS_COMMAND && !arr)
        return 0; /* the report's test cases, or the fail_to_pass / pass_to_pass lists */
    if (!json_is_array(arr) || json_array_size(arr) == 0)
        return errbuf_set(err, "'tests' must be a non-empty array");
    t->tests = calloc(json_array_size(arr), sizeof(*t->tests));
    if (!t->tests)
        return -ENOMEM;
    json_array_foreach(arr, i, tj)
    {
        struct task_test *tt = &t->tests[i];
        char dflt[32];
        json_t *v;
        int r;

        t->ntests = i + 1;
        if (!json_is_object(tj))
            return errbuf_set(err, "tests[%zu] must be an object", i);
        if ((r = str_field(tj, "name", false, &tt->name, err)) < 0)
            return r == -EINVAL ? errbuf_set(err, "tests[%zu].name must be a string", i) : r;
        if (!tt->name && t->harness == TASK_HARNESS_COMMAND)
            return errbuf_set(err,
                              "tests[%zu].name is required: it names a test case of the "
                              "JUnit report (command harness)",
                              i);
        if (!tt->name) {
            snprintf(dflt, sizeof(dflt), "test_%zu", i + 1);
            if (!(tt->name = strdup(dflt)))
                return -ENOMEM;
        }
        if (t->harness == TASK_HARNESS_ASSERT) {
            v = json_object_get(tj, "code");
            if (!json_is_string(v))
                return errbuf_set(err, "tests[%zu].code must be a string (assert harness)", i);
            if (!(tt->code = strdup(json_string_value(v))))
                return -ENOMEM;
        } else if (t->harness == TASK_HARNESS_STDIO || t->harness == TASK_HARNESS_INTERACTIVE) {
            v = json_object_get(tj, "stdin");
            if (v && !json_is_string(v))
                return errbuf_set(err, "tests[%zu].stdin must be a string", i);
            if (v && (r = bytes_copy(v, &tt->stdin_data, &tt->stdin_len)) < 0)
                return r;
            if (!v && !(tt->stdin_data = calloc(1, 1)))
                return -ENOMEM;
            v = json_object_get(tj, "expected");
            if (!json_is_string(v))
                return errbuf_set(err, "tests[%zu].expected must be a string (stdio harness)", i);
            if ((r = bytes_copy(v, &tt->expected, &tt->expected_len)) < 0)
                return r;
        }
        v = json_object_get(tj, "group");
        if (v && (!json_is_string(v) || !json_string_length(v)))
            return errbuf_set(err, "tests[%zu].group must be a non-empty string", i);
        if (v && !(tt->group = strdup(json_string_value(v))))
            return -ENOMEM;
        v = json_object_get(tj, "flags");
        if (v && !json_is_string(v))
            return errbuf_set(err, "tests[%zu].flags must be a string", i);
        if (v && !(tt->flags = strdup(json_string_value(v))))
            return -ENOMEM;
        if (test_fields_check(tj, i, t->harness, err) < 0)
            return -EINVAL;
    }
    return 0;
}

/* parse_files(v, t, err) — "files": {"relative/path": "text", ...}. */
static int parse_files(const json_t *v, struct task *t, struct errbuf *err)
{
    const char *path;
    json_t *text;
    int r;

    if (!v)
        return 0;
    if (!json_is_object(v))
        return errbuf_set(err, "'files' must be an object mapping paths to their text");
    t->files = calloc(json_object_size(v) + 1, sizeof(*t->files));
    if (!t->files)
        return -ENOMEM;
    json_object_foreach((json_t *)v, path, text)
    {
        struct task_file *f = &t->files[t->nfiles];
        struct errbuf why = {{0}};
        if (!sandbox_dest_valid(path, &why))
            return errbuf_set(err, "files: %s", why.msg);
        if (!json_is_string(text))
            return errbuf_set(err, "files: '%s' must be a string (the file's text)", path);
        if (!(f->path = strdup(path)))
            return -ENOMEM;
        t->nfiles++;
        if ((r = bytes_copy(text, &f->data, &f->len)) < 0)
            return r;
    }
    return 0;
}

/* argv_field(j, key, out, err) — an argv: a non-empty array of strings, or one string run
 * by /bin/sh -c. *out stays NULL when the key is absent. */
static int argv_field(const json_t *j, const char *key, char ***out, struct errbuf *err)
{
    json_t *v = json_object_get(j, key), *e;
    size_t i, n;

    *out = NULL;
    if (!v)
        return 0;
    if (json_is_string(v)) {
        if (!json_string_length(v))
            return errbuf_set(err, "'%s' is empty", key);
        if (!(*out = calloc(4, sizeof(char *))) || !((*out)[0] = strdup("/bin/sh")) ||
            !((*out)[1] = strdup("-c")) || !((*out)[2] = strdup(json_string_value(v))))
            return -ENOMEM;
        return 0;
    }
    n = json_is_array(v) ? json_array_size(v) : 0;
    if (n == 0 || n > 1024)
        return errbuf_set(err,
                          "'%s' must be a shell command (string) or an argv array of 1 to "
                          "1024 strings",
                          key);
    if (!(*out = calloc(n + 1, sizeof(char *))))
        return -ENOMEM;
    json_array_foreach(v, i, e)
    {
        if (!json_is_string(e) || (i == 0 && !json_string_length(e)))
            return errbuf_set(err, "%s[%zu] must be a%s string", key, i, i ? "" : " non-empty");
        if (!((*out)[i] = strdup(json_string_value(e))))
            return -ENOMEM;
    }
    return 0;
}

/* add_named_tests(t, key, names, err) — fail_to_pass / pass_to_pass names become tests of t;
 * names holds every test name so far (a hash set: a list of 30,000 names is not compared
 * pair by pair). */
static int add_named_tests(const json_t *j, struct task *t, const char *key, struct strset *names,
                           struct errbuf *err)
{
    json_t *v = json_object_get(j, key), *e;
    struct task_test *grown;
    size_t i;

    if (!v)
        return 0;
    if (!json_is_array(v))
        return errbuf_set(err, "'%s' must be an array of test names", key);
    grown = realloc(t->tests, (t->ntests + json_array_size(v) + 1) * sizeof(*t->tests));
    if (!grown)
        return -ENOMEM;
    t->tests = grown;
    json_array_foreach(v, i, e)
    {
        struct task_test *tt = &t->tests[t->ntests];
        int r;
        if (!json_is_string(e) || !json_string_length(e))
            return errbuf_set(err, "%s[%zu] must be a non-empty string", key, i);
        if ((r = strset_add(names, json_string_value(e))) < 0)
            return r;
        if (r == 0)
            return errbuf_set(err, "test '%s' is named twice (%s)", json_string_value(e), key);
        memset(tt, 0, sizeof(*tt));
        if (!(tt->name = strdup(json_string_value(e))))
            return -ENOMEM;
        t->ntests++;
        if (!(tt->group = strdup(key)))
            return -ENOMEM;
    }
    return 0;
}

/* parse_command_harness(j, t, err) — the command harness's fields; elsewhere an error. */
static int parse_command_harness(const json_t *j, struct task *t, struct errbuf *err)
{
    static const char *const own[] = {"command",       "build",        "report",
                                      "solution_file", "fail_to_pass", "pass_to_pass"};
    struct errbuf why = {{0}};
    struct strset names = STRSET_INIT;
    int r;

    if (t->harness != TASK_HARNESS_COMMAND) {
        for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
            if (json_object_get(j, own[i]))
                return errbuf_set(err, "'%s' applies to the command harness only", own[i]);
        return 0;
    }
    if (!json_object_get(j, "command"))
        return errbuf_set(err, "missing field 'command' (the test command of the command "
                               "harness)");
    if ((r = argv_field(j, "command", &t->command, err)) < 0 ||
        (r = argv_field(j, "build", &t->build, err)) < 0 ||
        (r = str_field(j, "report", false, &t->report, err)) < 0 ||
        (r = str_field(j, "solution_file", false, &t->solution_file, err)) < 0)
        return r;
    for (size_t i = 0; i < t->ntests && r >= 0; i++) /* the names "tests" gave */
        if ((r = strset_add(&names, t->tests[i].name)) == 0)
            r = errbuf_set(err, "test '%s' is named twice", t->tests[i].name);
    if (r >= 0)
        r = add_named_tests(j, t, "fail_to_pass", &names, err);
    if (r >= 0)
        r = add_named_tests(j, t, "pass_to_pass", &names, err);
    strset_release(&names);
    if (r < 0)
        return r;
    if (!sandbox_argv_fits(t->command, (char *const *)t->lang->env, &why))
        return errbuf_set(err, "command: %s", why.msg);
    if (t->build && !sandbox_argv_fits(t->build, (char *const *)t->lang->env, &why))
        return errbuf_set(err, "build: %s", why.msg);
    if (!t->report && !(t->report = strdup("report.xml")))
        return -ENOMEM;
    if (!t->solution_file && !(t->solution_file = strdup(t->lang->source)))
        return -ENOMEM;
    if (!sandbox_dest_valid(t->report, &why))
        return errbuf_set(err, "report: %s", why.msg);
    if (!sandbox_dest_valid(t->solution_file, &why))
        return errbuf_set(err, "solution_file: %s", why.msg);
    if (strcmp(t->report, t->solution_file) == 0)
        return errbuf_set(err, "the report and the solution cannot be the same file");
    {
        struct sandbox_dest pair[2] = {{.path = t->solution_file, .what = "the solution_file"},
                                       {.path = t->report, .what = "the report"}};
        if (!sandbox_dests_check(pair, 2, 0, &why))
            return errbuf_set(err, "solution_file and report: %s", why.msg);
    }
    return 0;
}

int task_files_check(const struct task *t, const struct lang *lang, struct errbuf *err)
{
    const struct lang *l = lang ? lang : t->lang;
    const struct lang_file *harness = t->harness == TASK_HARNESS_ASSERT ? l->test_files : NULL;
    size_t nharness = 0;

    while (harness && harness[nharness].path)
        nharness++;

    struct sandbox_dest *d = calloc(t->nfiles + 2 + nharness, sizeof(*d));
    struct errbuf why = {{0}};
    size_t n = 0;
    bool fine;

    if (!d)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    for (size_t i = 0; i < t->nfiles; i++)
        d[n++] = (struct sandbox_dest){.path = t->files[i].path, .len = t->files[i].len};
    if (t->harness == TASK_HARNESS_COMMAND) {
        d[n++] = (struct sandbox_dest){.path = t->solution_file,
                                       .what = "where the solution goes (solution_file)"};
        d[n++] = (struct sandbox_dest){
            .path = t->report, .what = "where the report goes: the test command must write it"};
    } else {
        d[n++] =
            (struct sandbox_dest){.path = lang_steps(l, t->harness == TASK_HARNESS_ASSERT).source,
                                  .what = "where the solution goes"};
    }
    for (size_t i = 0; i < nharness; i++) /* put beside the program (Python's, say) */
        d[n++] =
            (struct sandbox_dest){.path = harness[i].path,
                                  .what = "where crucible's assert harness goes",
                                  .len = harness[i].len ? harness[i].len : strlen(harness[i].data)};
    fine = sandbox_dests_check(d, n, t->limits.disk_mb, &why);
    free(d);
    if (fine)
        return 0;
    if (lang && lang != t->lang)
        return errbuf_set(err, "task '%s': files: %s (for a solution in %s)", t->id, why.msg,
                          lang->name);
    return errbuf_set(err, "files: %s", why.msg);
}

static int parse_constraints(const json_t *c, struct task *t, struct errbuf *err)
{
    json_t *v;
    size_t i;

    if (!c)
        return 0;
    if (!json_is_object(c))
        return errbuf_set(err, "'constraints' must be an object");
    v = json_object_get(c, "max_bytes");
    if (v) {
        if (!json_is_integer(v) || json_integer_value(v) < 1)
            return errbuf_set(err, "constraints.max_bytes must be a positive integer");
        t->max_bytes = (size_t)json_integer_value(v);
    }
    v = json_object_get(c, "forbid");
    if (v) {
        json_t *p;
        if (!json_is_array(v))
            return errbuf_set(err, "constraints.forbid must be an array of regular expressions");
        t->forbid = calloc(json_array_size(v) + 1, sizeof(char *));
        if (!t->forbid)
            return -ENOMEM;
        json_array_foreach(v, i, p)
        {
            regex_t re;
            if (!json_is_string(p))
                return errbuf_set(err, "constraints.forbid[%zu] must be a string", i);
            if (regcomp(&re, json_string_value(p), REG_EXTENDED | REG_NOSUB) != 0)
                return errbuf_set(err, "constraints.forbid[%zu] is not a valid regular expression",
                                  i);
            regfree(&re);
            t->forbid[i] = strdup(json_string_value(p));
            t->nforbid = i + 1;
            if (!t->forbid[i])
                return -ENOMEM;
        }
    }
    return 0;
}

/* parse_time_limit(v, t, err) — {"factor": F, "min": M, "reference_time": R}: the CPU limit
 * of every test becomes max(M, F × R), R measured from the reference when not given. */
static int parse_time_limit(const json_t *v, struct task *t, struct errbuf *err)
{
    const char *key;
    json_t *x;

    t->reference_time = -1;
    if (!v)
        return 0;
    if (!json_is_object(v))
        return errbuf_set(err, "'time_limit' must be an object");
    t->time_min = 1.0;
    json_object_foreach((json_t *)v, key, x)
    {
        double d = json_number_value(x);
        if (!json_is_number(x))
            return errbuf_set(err, "time_limit.%s must be a number", key);
        if (strcmp(key, "factor") == 0 && d >= 1 && d <= 100)
            t->time_factor = d;
        else if (strcmp(key, "min") == 0 && d >= 0.01 && d <= 3600)
            t->time_min = d;
        else if (strcmp(key, "reference_time") == 0 && d >= 0 && d <= 3600)
            t->reference_time = d;
        else if (strcmp(key, "factor") == 0 || strcmp(key, "min") == 0 ||
                 strcmp(key, "reference_time") == 0)
            return errbuf_set(err,
                              "time_limit.%s is out of range (factor 1..100, min 0.01..3600, "
                              "reference_time 0..3600)",
                              key);
        else
            return errbuf_set(err, "unknown field time_limit.%s", key);
    }
    if (t->time_factor == 0)
        return errbuf_set(err, "time_limit needs a 'factor'");
    if (t->reference_time < 0 && !t->reference)
        return errbuf_set(err, "time_limit needs 'reference_time' or a task 'reference' to "
                               "measure");
    return 0;
}

/* parse_judge(v, t, err) — {"type": "program", "language": L, "code": C}: a checker program
 * run in its own sandbox with the files input, output and expected in its work directory;
 * exit 0 accepts, 1 or 2 reject, anything else is the checker's failure. */
static int parse_judge(const json_t *v, struct task *t, struct errbuf *err)
{
    const char *key;
    json_t *x;

    json_object_foreach((json_t *)v, key, x)
    {
        if (strcmp(key, "type") != 0 && strcmp(key, "language") != 0 && strcmp(key, "code") != 0)
            return errbuf_set(err,
                              "unknown checker field '%s' (a program checker takes "
                              "language and code)",
                              key);
    }
    x = json_object_get(v, "language");
    if (!json_is_string(x) || !(t->judge_lang = lang_find(json_string_value(x))))
        return errbuf_set(err, "checker program needs a known 'language'");
    x = json_object_get(v, "code");
    if (!json_is_string(x) || json_string_length(x) == 0)
        return errbuf_set(err, "checker program needs its 'code'");
    t->judge_code = strdup(json_string_value(x));
    return t->judge_code ? 0 : -ENOMEM;
}

/* parse_program(v, what, out, err) — a judge program: {"language": L, "files": {name: text}
 * or "code": text, "flags": F} (a checker validator also has "type"). The files go to the
 * judge's own work directory, so names are checked as there: relative, inside it, not
 * "main" (the build output) nor under ".judge/" (the per-test files). */
static int parse_program(const json_t *v, const char *what, struct task_program **out,
                         struct errbuf *err)
{
    static const char *const keys[] = {"type", "language", "files", "code", "flags"};
    struct task_program *p;
    const char *key, *path;
    struct lang_plan plan;
    json_t *x, *files, *code;
    int r;

    if (!json_is_object(v))
        return errbuf_set(err, "%s must be an object {\"language\", \"files\" or \"code\"}", what);
    json_object_foreach((json_t *)v, key, x)
    {
        bool known = false;
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
            known |= strcmp(key, keys[i]) == 0 && (i > 0 || strcmp(what, "checker") == 0);
        if (!known)
            return errbuf_set(
                err, "unknown %s field '%s' (it takes language, files or code, flags)", what, key);
    }
    if (!(p = *out = calloc(1, sizeof(*p))))
        return -ENOMEM;
    x = json_object_get(v, "language");
    if (!json_is_string(x) || !(p->lang = lang_find(json_string_value(x))))
        return errbuf_set(err, "%s needs a known 'language'", what);
    x = json_object_get(v, "flags");
    if (x && !json_is_string(x))
        return errbuf_set(err, "%s 'flags' must be a string", what);
    if (x && !(p->flags = strdup(json_string_value(x))))
        return -ENOMEM;
    files = json_object_get(v, "files");
    code = json_object_get(v, "code");
    if (!files == !code)
        return errbuf_set(err,
                          "%s needs its 'files' (an object of file names to text) or its "
                          "'code', one of them",
                          what);
    if (code) {
        if (!json_is_string(code) || !json_string_length(code))
            return errbuf_set(err, "%s 'code' must be a non-empty string", what);
        if (!(p->files = calloc(1, sizeof(*p->files))))
            return -ENOMEM;
        if (lang_plan_program(p->lang, false, json_string_value(code), json_string_length(code),
                              &plan) < 0)
            return -ENOMEM;
        p->files[0].path = strdup(plan.source);
        lang_plan_release(&plan);
        if (!p->files[0].path)
            return -ENOMEM;
        p->nfiles = 1;
        return bytes_copy(code, &p->files[0].data, &p->files[0].len);
    }
    if (!json_is_object(files) || json_object_size(files) == 0)
        return errbuf_set(err, "%s 'files' must be a non-empty object of file names to text", what);
    if (!(p->files = calloc(json_object_size(files), sizeof(*p->files))))
        return -ENOMEM;
    json_object_foreach(files, path, x)
    {
        struct task_file *f = &p->files[p->nfiles];
        struct errbuf why = {{0}};
        if (!sandbox_dest_valid(path, &why))
            return errbuf_set(err, "%s files: '%s': %s", what, path, why.msg);
        if (strcmp(path, "main") == 0 || strncmp(path, ".judge/", 7) == 0 ||
            strcmp(path, ".judge") == 0)
            return errbuf_set(err,
                              "%s files: '%s' is a name crucible uses for the build or the "
                              "tests",
                              what, path);
        if (!json_is_string(x))
            return errbuf_set(err, "%s files: '%s' must be a string (the file's text)", what, path);
        if (!(f->path = strdup(path)))
            return -ENOMEM;
        p->nfiles++;
        if ((r = bytes_copy(x, &f->data, &f->len)) < 0)
            return r;
    }
    {
        struct lang_file *lf = calloc(p->nfiles, sizeof(*lf));
        struct errbuf why = {{0}};
        if (!lf)
            return -ENOMEM;
        for (size_t i = 0; i < p->nfiles; i++)
            lf[i] = (struct lang_file){p->files[i].path, p->files[i].data, p->files[i].len};
        r = lang_plan_files(p->lang, lf, p->nfiles, &plan, &why);
        free(lf);
        if (r == -EINVAL)
            return errbuf_set(err, "%s: %s", what, why.msg);
        if (r < 0)
            return r;
        lang_plan_release(&plan);
    }
    return 0;
}

static void program_free(struct task_program *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nfiles; i++) {
        free(p->files[i].path);
        free(p->files[i].data);
    }
    free(p->files);
    free(p->flags);
    free(p);
}

/* parse_groups(v, t, err) — "groups": [{"name": N, "score": S}, ...]: Kattis scoring. Every
 * test's group must be one of them, and every group must have a test (a typo would
 * otherwise move a test out of its group, or leave a score no solution can earn). */
static int parse_groups(const json_t *v, struct task *t, struct errbuf *err)
{
    json_t *g;
    size_t i;

    if (!v)
        return 0; /* tests' groups without scores: shown in the record only */
    if (t->harness == TASK_HARNESS_COMMAND)
        return errbuf_set(err, "'groups' applies to the assert, stdio and interactive harnesses");
    if (!json_is_array(v) || json_array_size(v) == 0)
        return errbuf_set(err, "'groups' must be a non-empty array of {\"name\", \"score\"}");
    if (!(t->groups = calloc(json_array_size(v), sizeof(*t->groups))))
        return -ENOMEM;
    json_array_foreach(v, i, g)
    {
        const char *key;
        json_t *x, *name = json_object_get(g, "name"), *score = json_object_get(g, "score");
        size_t used = 0;
        if (!json_is_object(g))
            return errbuf_set(err, "groups[%zu] must be an object {\"name\", \"score\"}", i);
        json_object_foreach(g, key, x)
        {
            if (strcmp(key, "name") != 0 && strcmp(key, "score") != 0)
                return errbuf_set(err, "unknown field groups[%zu].%s (a group has name and score)",
                                  i, key);
        }
        if (!json_is_string(name) || !json_string_length(name))
            return errbuf_set(err, "groups[%zu].name must be a non-empty string", i);
        if (!json_is_number(score) || !(json_number_value(score) >= 0) ||
            json_number_value(score) > 1e9)
            return errbuf_set(err, "groups[%zu].score must be a number from 0 to 1e9", i);
        for (size_t k = 0; k < t->ngroups; k++)
            if (strcmp(t->groups[k].name, json_string_value(name)) == 0)
                return errbuf_set(err, "group '%s' is listed twice", json_string_value(name));
        if (!(t->groups[t->ngroups].name = strdup(json_string_value(name))))
            return -ENOMEM;
        t->groups[t->ngroups].score = json_number_value(score);
        t->max_score += t->groups[t->ngroups].score;
        t->ngroups++;
        for (size_t k = 0; k < t->ntests; k++)
            used += t->tests[k].group && strcmp(t->tests[k].group, json_string_value(name)) == 0;
        if (!used)
            return errbuf_set(err, "group '%s' has no test (no test's \"group\" names it)",
                              json_string_value(name));
    }
    for (i = 0; i < t->ntests; i++) {
        bool listed = false;
        if (!t->tests[i].group)
            continue;
        for (size_t k = 0; k < t->ngroups && !listed; k++)
            listed = strcmp(t->groups[k].name, t->tests[i].group) == 0;
        if (!listed)
            return errbuf_set(err,
                              "tests[%zu] ('%s') is in group '%s', which 'groups' does not list", i,
                              t->tests[i].name, t->tests[i].group);
    }
    if (!(t->max_score > 0))
        return errbuf_set(err, "the groups' scores add up to 0: nothing to earn");
    return 0;
}

/* parse_test_flags(t, err) — each test's "flags": parsed now for the kattis checker (an
 * unknown flag is the task's error, not a run's), kept as words for validators and
 * interactors; elsewhere an error. */
static int parse_test_flags(struct task *t, struct errbuf *err)
{
    for (size_t i = 0; i < t->ntests; i++) {
        struct task_test *tt = &t->tests[i];
        struct errbuf why = {{0}};
        if (!tt->flags)
            continue;
        if (t->validator)
            continue;
        if (t->harness != TASK_HARNESS_STDIO || t->judge_code || t->checker.kind != CHECKER_KATTIS)
            return errbuf_set(err,
                              "tests[%zu].flags applies to the kattis and validator checkers "
                              "and the interactive harness",
                              i);
        if (checker_kattis_flags(tt->flags, &tt->checker, &why) < 0)
            return errbuf_set(err, "tests[%zu].flags: %s", i, why.msg);
    }
    return 0;
}

/* version_of(j, out) — FNV-1a 64 of the canonical (sorted, compact) JSON text. */
static void version_of(const json_t *j, char out[17])
{
    char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
    uint64_t h = 0xcbf29ce484222325ULL;

    for (const char *p = text ? text : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
    free(text);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

int task_from_json(const json_t *j, struct task *t, struct errbuf *err)
{
    char *lang = NULL, *harness = NULL;
    json_t *v;
    int r;

    memset(t, 0, sizeof(*t));
    t->reference_time = -1;
    sandbox_limits_default(&t->limits);
    t->limits.cpu_time = 10;
    t->limits.wall_time = 20;
    if (!json_is_object(j))
        return errbuf_set(err, "a task must be a JSON object");
    t->json = json_incref((json_t *)j);
    if ((r = str_field(j, "id", true, &t->id, err)) < 0)
        return r;
    if (!t->id[0])
        return errbuf_set(err, "field 'id' is empty");
    if ((r = str_field(j, "language", true, &lang, err)) < 0)
        return r;
    t->lang = lang_find(lang);
    if (!t->lang) {
        char names[256];
        lang_names(names, sizeof(names));
        errbuf_set(err, "unknown language '%s' (known: %s)", lang, names);
        free(lang);
        return -EINVAL;
    }
    free(lang);
    if ((r = str_field(j, "harness", true, &harness, err)) < 0)
        return r;
    bool known = false;
    for (size_t i = 0; i < sizeof(harness_names) / sizeof(harness_names[0]); i++) {
        if (strcmp(harness, harness_names[i]) == 0) {
            t->harness = (enum task_harness)i;
            known = true;
        }
    }
    if (!known) {
        errbuf_set(err, "unknown harness '%s' (assert, stdio, command or interactive)", harness);
        free(harness);
        return -EINVAL;
    }
    free(harness);
    if ((r = str_field(j, "prompt", false, &t->prompt, err)) < 0 ||
        (r = str_field(j, "reference", false, &t->reference, err)) < 0 ||
        (r = str_field(j, "entry_point", false, &t->entry_point, err)) < 0 ||
        (r = str_field(j, "test_setup", false, &t->test_setup, err)) < 0 ||
        (r = str_field(j, "image", false, &t->image, err)) < 0)
        return r;
    if (!t->image && !(t->image = strdup("host")))
        return -ENOMEM;
    if ((r = parse_tests(json_object_get(j, "tests"), t, err)) < 0)
        return r;
    if ((r = parse_files(json_object_get(j, "files"), t, err)) < 0)
        return r;
    if ((r = parse_command_harness(j, t, err)) < 0)
        return r;
    v = json_object_get(j, "checker");
    {
        const char *type = json_is_object(v) ? json_string_value(json_object_get(v, "type")) : NULL;
        if (t->harness == TASK_HARNESS_STDIO && type && strcmp(type, "program") == 0) {
            if ((r = parse_judge(v, t, err)) < 0)
                return r;
        } else if (t->harness == TASK_HARNESS_STDIO && type && strcmp(type, "validator") == 0) {
            if ((r = parse_program(v, "checker", &t->validator, err)) < 0)
                return r;
        } else if (t->harness == TASK_HARNESS_STDIO) {
            if ((r = checker_parse(v, &t->checker, err)) < 0)
                return r;
        } else if (v) {
            return errbuf_set(err, "'checker' applies to the stdio harness only%s",
                              t->harness == TASK_HARNESS_INTERACTIVE
                                  ? " (an interactive task judges through its 'interactor')"
                                  : "");
        }
    }
    v = json_object_get(j, "interactor");
    if (t->harness == TASK_HARNESS_INTERACTIVE) {
        if (!v)
            return errbuf_set(err, "an interactive task needs its 'interactor' {\"language\", "
                                   "\"files\" or \"code\"}");
        if ((r = parse_program(v, "interactor", &t->validator, err)) < 0)
            return r;
    } else if (v) {
        return errbuf_set(err, "'interactor' applies to the interactive harness only");
    }
    if ((r = parse_test_flags(t, err)) < 0 ||
        (r = parse_groups(json_object_get(j, "groups"), t, err)) < 0)
        return r;
    v = json_object_get(j, "limits");
    if (v && (r = task_limits_from_json(v, &t->limits, err)) < 0)
        return r;
    if ((v = json_object_get(j, "writable_root")) && !json_is_null(v)) {
        if (!json_is_boolean(v))
            return errbuf_set(err, "'writable_root' must be true or false");
        t->limits.writable_root = json_is_true(v);
    }
    if ((r = task_files_check(t, NULL, err)) < 0) /* with the disk size of "limits" */
        return r;
    if ((r = parse_constraints(json_object_get(j, "constraints"), t, err)) < 0)
        return r;
    if ((r = parse_time_limit(json_object_get(j, "time_limit"), t, err)) < 0)
        return r;
    v = json_object_get(j, "tags");
    if (v && !json_is_array(v))
        return errbuf_set(err, "'tags' must be an array of strings");
    version_of(j, t->version);
    return 0;
}

void task_release(struct task *t)
{
    for (size_t i = 0; i < t->ntests; i++) {
        free(t->tests[i].name);
        free(t->tests[i].code);
        free(t->tests[i].stdin_data);
        free(t->tests[i].expected);
        free(t->tests[i].group);
        free(t->tests[i].flags);
    }
    for (size_t i = 0; i < t->ngroups; i++)
        free(t->groups[i].name);
    free(t->groups);
    program_free(t->validator);
    free(t->tests);
    for (size_t i = 0; i < t->nfiles; i++) {
        free(t->files[i].path);
        free(t->files[i].data);
    }
    free(t->files);
    for (char **a = t->command; a && *a; a++)
        free(*a);
    free(t->command);
    for (char **a = t->build; a && *a; a++)
        free(*a);
    free(t->build);
    free(t->report);
    free(t->solution_file);
    for (size_t i = 0; i < t->nforbid; i++)
        free(t->forbid[i]);
    free(t->forbid);
    free(t->id);
    free(t->prompt);
    free(t->reference);
    free(t->entry_point);
    free(t->test_setup);
    free(t->judge_code);
    free(t->image);
    json_decref(t->json);
    memset(t, 0, sizeof(*t));
}

const struct task *task_list_find(const struct task *tasks, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(tasks[i].id, id) == 0)
            return &tasks[i];
    return NULL;
}

void task_list_free(struct task *tasks, size_t n)
{
    for (size_t i = 0; i < n; i++)
        task_release(&tasks[i]);
    free(tasks);
}

/* add_task(…) — parses one JSON value into the list; false (and a report) when it is bad. */
static bool add_task(json_t *j, const char *path, size_t line, struct task **tasks, size_t *n,
                     size_t *cap, struct strset *ids, FILE *errs)
{
    struct errbuf e = {{0}};
    struct task t;

    if (task_from_json(j, &t, &e) < 0) {
        fprintf(errs, "%s:%zu: %s\n", path, line, e.msg[0] ? e.msg : "invalid task");
        task_release(&t);
        return false;
    }
    switch (strset_add(ids, t.id)) {
    case 0:
        fprintf(errs, "%s:%zu: duplicate task id '%s'\n", path, line, t.id);
        task_release(&t);
        return false;
    case 1:
        break;
    default:
        fprintf(errs, "%s:%zu: out of memory\n", path, line);
        task_release(&t);
        return false;
    }
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        struct task *nt = realloc(*tasks, nc * sizeof(*nt));
        if (!nt) {
            fprintf(errs, "%s:%zu: out of memory\n", path, line);
            task_release(&t);
            return false;
        }
        *tasks = nt;
        *cap = nc;
    }
    (*tasks)[(*n)++] = t;
    return true;
}

int task_list_load(const char *path, struct task **tasks, size_t *n, FILE *errs, struct errbuf *err)
{
    const size_t flags = JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL;
    bool is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    size_t len, cap = 0, lineno = 1, first_line;
    char *buf, *p, *end;
    struct stat st;
    json_error_t je;
    json_t *whole;
    struct strset ids = STRSET_INIT;
    int bad = 0, r;

    *tasks = NULL;
    *n = 0;
    if (fd < 0)
        return errbuf_set(err, "cannot open '%s': %s", path, strerror(errno)), -errno;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return errbuf_set(err, "'%s' is a directory, not a task file", path), -EISDIR;
    }
    r = util_read_fd(fd, &buf, &len, (size_t)1 << 30);
    if (!is_stdin)
        close(fd);
    if (r < 0)
        return errbuf_set(err, "cannot read '%s': %s", path, strerror(-r)), r;
    /* One JSON object over several lines (a pretty-printed task), or JSON lines? */
    p = buf + strspn(buf, " \t\r\n");
    first_line = 1;
    for (const char *q = buf; q < p; q++)
        first_line += *q == '\n';
    whole = *p == '{' ? json_loadb(p, len - (size_t)(p - buf), flags, &je) : NULL;
    if (whole) {
        if (!add_task(whole, path, first_line, tasks, n, &cap, &ids, errs))
            bad++;
        json_decref(whole);
        strset_release(&ids);
        free(buf);
        return bad;
    }
    if (*p == '{') {
        const char *nl = strchr(p, '\n');
        json_error_t le;
        json_t *one = json_loadb(p, nl ? (size_t)(nl - p) : strlen(p), flags, &le);
        if (!one) {
            /* its first line is no JSON object of its own: a broken multi-line document */
            fprintf(errs, "%s:%d: not valid JSON: %s\n", path, je.line + (int)first_line - 1,
                    je.text);
            free(buf);
            return 1;
        }
        json_decref(one);
    }
    for (p = buf; p < buf + len; p = end + 1, lineno++) {
        json_t *j;
        size_t ll;
        end = memchr(p, '\n', len - (size_t)(p - buf));
        if (!end)
            end = buf + len;
        ll = (size_t)(end - p);
        while (ll > 0 && (p[ll - 1] == '\r' || p[ll - 1] == ' ' || p[ll - 1] == '\t'))
            ll--;
        if (strspn(p, " \t") >= ll)
            continue;
        j = json_loadb(p, ll, flags, &je);
        if (!j) {
            fprintf(errs, "%s:%zu: not valid JSON: %s\n", path, lineno, je.text);
            bad++;
            continue;
        }
        if (!add_task(j, path, lineno, tasks, n, &cap, &ids, errs))
            bad++;
        json_decref(j);
    }
    strset_release(&ids);
    free(buf);
    return bad;
}
