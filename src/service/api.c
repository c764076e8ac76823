/*
 * api.c — routes, request validation, jobs and answers (see api.h, docs/API.md).
 *
 * A request becomes an owner with one item (run, verify, run_code) or many (batch). Each
 * item is a scheduler job; its run function works on a worker thread and leaves a JSON
 * result; its done function (loop thread) answers, streams a batch line, releases the
 * items that waited on it, and records metrics. An owner lives until its client has gone
 * (or was answered) and none of its jobs is still with the scheduler.
 */
#include "service/api.h"
#include "service/api_fuzz.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "service/api_tasks.h"
#include "judge/lang.h"
#include "sandbox/pool.h"
#include "judge/program.h"
#include "library/store.h"
#include "judge/task.h"
#include "util.h"
#include "judge/verify.h"

#define MAX_FILES    1000
#define MAX_ARGV     1024
#define MAX_DEADLINE 86400.0

struct api {
    struct sched *sched;
    struct metrics *m;
    struct api_config cfg;
    FILE *log;
};

enum kind { K_RUN, K_PROGRAM, K_VERIFY, K_RUNCODE };
static const char *const kind_names[] = {"run", "run", "verify", "run_code"};

struct owner;

struct item {
    struct job job; /* first member: a struct job * is a struct item * */
    enum kind kind;
    struct owner *owner;
    size_t index;
    /* inputs */
    const struct image *img;
    struct image own_img;
    struct sandbox_limits limits;
    char **argv;
    struct task_file *files;
    size_t nfiles;
    char *stdin_data;
    size_t stdin_len;
    const struct lang *lang;
    char *code;
    double compile_time;
    char **fetch;
    size_t nfetch;
    struct task task;
    bool has_task;
    char *program;
    char how[128];
    struct verify_opts vo;
    bool record;     /* the task came from the library: record the outcome there */
    bool recorded;   /* ... and it was (set on the worker, read in done) */
    char model[201]; /* under this model tag */
    /* batch dependencies: only earlier items */
    size_t *after;
    size_t nafter, waiting;
    bool submitted, finished, failed;
    /* output (set by the worker, or by done() when it never ran) */
    json_t *result;
    const char *status; /* for metrics: a verdict or result status name */
    bool infra;
};

struct owner {
    struct api *api;
    struct http_request *r; /* NULL once the client has gone or was answered */
    const char *route;
    bool batch, streaming;
    struct item *items;
    size_t n, outstanding, finished, reserved;
    double t0;
};

/* ---- small helpers ------------------------------------------------------------------ */

void api_log(struct api *a, const char *event, json_t *fields)
{
    struct timespec ts;
    char stamp[40], *line;
    struct tm tm;

    if (!a->log) {
        json_decref(fields);
        return;
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    snprintf(stamp, sizeof(stamp), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
    if (!fields)
        fields = json_object();
    json_object_set_new(fields, "ts", json_string(stamp));
    json_object_set_new(fields, "event", json_string(event));
    line = json_dumps(fields, JSON_COMPACT | JSON_SORT_KEYS);
    if (line) {
        fprintf(a->log, "%s\n", line);
        fflush(a->log);
        free(line);
    }
    json_decref(fields);
}

/* count_request(a, route, code, t0) — the metric and the log line of an answer (t0: when
 * the request arrived, 0 when it was answered at once). */
static void count_request(struct api *a, const char *route, unsigned code, double t0)
{
    char labels[160];

    snprintf(labels, sizeof(labels), "route=\"%s\",code=\"%u\"", route, code);
    metrics_add(a->m, "http_requests_total", "HTTP requests by route and status code", labels, 1);
    if (strcmp(route, "/metrics") != 0 && strcmp(route, "/healthz") != 0)
        api_log(a, "answer",
                json_pack("{s:s,s:i,s:f}", "route", route, "status", (int)code, "seconds",
                          t0 > 0 ? util_now() - t0 : 0.0));
}

/* fail(r, a, route, status, code, fmt...) — an error answer, counted. */
static void fail(struct api *a, struct http_request *r, const char *route, unsigned status,
                 const char *code, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void fail(struct api *a, struct http_request *r, const char *route, unsigned status,
                 const char *code, const char *fmt, ...)
{
    char msg[768];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    count_request(a, route, status, 0);
    if (status == 429)
        http_respond(r, status, "application/json",
                     "{\"error\":{\"code\":\"overloaded\",\"message\":\"the queue is full; "
                     "retry later\"}}\n",
                     strlen("{\"error\":{\"code\":\"overloaded\",\"message\":\"the queue is full; "
                            "retry later\"}}\n"),
                     "Retry-After", "1");
    else
        http_respond_error(r, status, code, "%s", msg);
}

static void free_strv(char **v)
{
    for (char **p = v; p && *p; p++)
        free(*p);
    free(v);
}

static void item_release(struct item *it)
{
    free_strv(it->argv);
    for (size_t i = 0; i < it->nfiles; i++) {
        free(it->files[i].path);
        free(it->files[i].data);
    }
    free(it->files);
    free(it->stdin_data);
    free(it->code);
    free_strv(it->fetch);
    if (it->has_task)
        task_release(&it->task);
    free(it->program);
    free(it->after);
    json_decref(it->result);
}

static void owner_maybe_free(struct owner *o)
{
    if (o->r || o->outstanding)
        return;
    if (o->reserved)
        sched_unreserve(o->api->sched, o->reserved);
    for (size_t i = 0; i < o->n; i++)
        item_release(&o->items[i]);
    free(o->items);
    free(o);
}

/* ---- parsing request fields ----------------------------------------------------------- */

/* SandboxFusion's "pytest" language, a run mode of /run_code and /v1/run: the code is a file
 * of pytest tests and pytest runs it, so the run's exit status is pytest's (0 every test
 * passed, 1 some failed, 2 interrupted or a collection error, 5 none collected) and its
 * output pytest's report. SandboxFusion writes the code to a temporary .py file and runs
 * `pytest FILE` there; here the file is test_main.py in the work directory, beside the
 * request's files. Not a language of the table: no task or solution is written in it. */
static const struct lang pytest_mode = {
    .name = "pytest",
    .source = "test_main.py",
    .run = (const char *const[]){"/usr/bin/python3", "-m", "pytest", "test_main.py", NULL},
    .toolchain = "/usr/lib/python3/dist-packages/pytest",
    .package = "python3-pytest",
};

/* program_language(name, err) — what runs a program of /v1/run and /run_code: a language of
 * the table or the pytest mode; NULL with err naming the known ones. */
static const struct lang *program_language(const char *name, struct errbuf *err)
{
    const struct lang *l = lang_find(name);
    char names[256];

    if (l)
        return l;
    if (strcasecmp(name, pytest_mode.name) == 0)
        return &pytest_mode;
    lang_names(names, sizeof(names));
    errbuf_set(err,
               "unknown language '%s' (known: %s; and pytest, which runs the code as a file of "
               "pytest tests)",
               name, names);
    return NULL;
}

/* solution_language(v, t, out, err) — the "language" of a verification: NULL (absent or
 * null: the task's), or a language of the table that t can take; -EINVAL with err saying
 * why not (unknown, or an assert or command task in another language). */
static int solution_language(const json_t *v, const struct task *t, const struct lang **out,
                             struct errbuf *err)
{
    char names[256];

    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return errbuf_set(err, "'language' must be a string naming the solution's language");
    if (!(*out = lang_find(json_string_value(v)))) {
        lang_names(names, sizeof(names));
        return errbuf_set(err, "unknown language '%s' (known: %s)", json_string_value(v), names);
    }
    return verify_language_check(t, *out, err);
}

/* bytes_field(v, what, out, len, err) — a string, or {"base64": "..."}. */
static int bytes_field(const json_t *v, const char *what, char **out, size_t *len,
                       struct errbuf *err)
{
    if (json_is_string(v)) {
        *len = json_string_length(v);
        *out = malloc(*len + 1);
        if (!*out)
            return errbuf_set(err, "out of memory"), -ENOMEM;
        memcpy(*out, json_string_value(v), *len + 1);
        return 0;
    }
    if (json_is_object(v) && json_object_size(v) == 1 &&
        json_is_string(json_object_get(v, "base64"))) {
        const json_t *b = json_object_get(v, "base64");
        if (util_base64_decode(json_string_value(b), json_string_length(b), out, len) < 0)
            return errbuf_set(err, "%s: not valid base64", what);
        return 0;
    }
    return errbuf_set(err, "%s must be a string or {\"base64\": \"...\"}", what);
}

/* files_field(v, it, b64_only, err) — {"path": text | {"base64"}} (run_code: base64 text). */
static int files_field(const json_t *v, struct item *it, bool b64_only, struct errbuf *err)
{
    const char *path;
    json_t *val;

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_object(v))
        return errbuf_set(err, "'files' must be an object mapping paths to contents");
    if (json_object_size(v) > MAX_FILES)
        return errbuf_set(err, "'files' has more than %d entries", MAX_FILES);
    it->files = calloc(json_object_size(v) + 1, sizeof(*it->files));
    if (!it->files)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    json_object_foreach((json_t *)v, path, val)
    {
        struct task_file *f = &it->files[it->nfiles];
        struct errbuf why = {{0}};
        char what[300];
        if (!sandbox_dest_valid(path, &why))
            return errbuf_set(err, "files: %s", why.msg);
        snprintf(what, sizeof(what), "files['%s']", path);
        if (!(f->path = strdup(path)))
            return errbuf_set(err, "out of memory"), -ENOMEM;
        it->nfiles++;
        if (b64_only) {
            if (json_is_null(val)) {
                f->data = calloc(1, 1);
                continue;
            }
            if (!json_is_string(val))
                return errbuf_set(err, "%s must be base64 text", what);
            if (util_base64_decode(json_string_value(val), json_string_length(val), &f->data,
                                   &f->len) < 0)
                return errbuf_set(err, "%s: not valid base64", what);
        } else if (bytes_field(val, what, &f->data, &f->len, err) < 0) {
            return -EINVAL;
        }
    }
    return 0;
}

/* files_check(it, source, err) — the request's files can all be put in one work directory,
 * beside the program's source (SOURCE, NULL for a command): none twice, none below another
 * file, none where the code goes. The caller's mistake, said as a 400 before any sandbox is
 * made (a failed put would be a sandbox_error, and retried). */
static int files_check(const struct item *it, const char *source, size_t source_len,
                       struct errbuf *err)
{
    struct sandbox_dest *d = calloc(it->nfiles + 1, sizeof(*d));
    struct errbuf why = {{0}};
    size_t n = 0;
    bool fine;

    if (!d)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    for (size_t i = 0; i < it->nfiles; i++)
        d[n++] = (struct sandbox_dest){.path = it->files[i].path, .len = it->files[i].len};
    if (source)
        d[n++] = (struct sandbox_dest){
            .path = source, .what = "where the program's code goes ('code')", .len = source_len};
    fine = sandbox_dests_check(d, n, it->limits.disk_mb, &why);
    free(d);
    return fine ? 0 : errbuf_set(err, "files: %s", why.msg);
}

/* only_keys(j, allowed, err) — unknown top-level fields are errors (typos must not pass). */
static int only_keys(const json_t *j, const char *const *allowed, struct errbuf *err)
{
    const char *key;
    json_t *v;

    json_object_foreach((json_t *)j, key, v)
    {
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = strcmp(*a, key) == 0;
        if (!ok)
            return errbuf_set(err, "unknown field '%s'", key);
    }
    return 0;
}

/* common_fields(a, j, it, err) — image, limits, priority, deadline_s. */
static int common_fields(struct api *a, const json_t *j, struct item *it, struct errbuf *err)
{
    const json_t *v;

    it->limits = a->cfg.limits;
    it->img = a->cfg.host;
    it->job.prio = PRIO_NORMAL;
    if ((v = json_object_get(j, "limits")) && !json_is_null(v)) {
        if (!json_is_object(v))
            return errbuf_set(err, "'limits' must be an object");
        if (task_limits_from_json(v, &it->limits, err) < 0)
            return -EINVAL;
    }
    if ((v = json_object_get(j, "image")) && !json_is_null(v)) {
        if (!json_is_string(v))
            return errbuf_set(err, "'image' must be a string");
        if (strcmp(json_string_value(v), "host") != 0) {
            if (image_resolve(json_string_value(v), &it->own_img, err) < 0)
                return -EINVAL;
            it->img = &it->own_img;
        }
    }
    if ((v = json_object_get(j, "priority")) && !json_is_null(v)) {
        if (!json_is_string(v) || !job_priority_parse(json_string_value(v), &it->job.prio))
            return errbuf_set(err, "'priority' must be \"high\", \"normal\" or \"low\"");
    }
    if ((v = json_object_get(j, "deadline_s")) && !json_is_null(v)) {
        double d = json_number_value(v);
        if (!json_is_number(v) || !(d > 0) || d > MAX_DEADLINE)
            return errbuf_set(err, "'deadline_s' must be a number of seconds in (0, %g]",
                              MAX_DEADLINE);
        it->job.deadline = util_now() + d;
    }
    it->job.memory_mb = it->limits.memory_mb;
    return 0;
}

static int parse_run(struct api *a, const json_t *j, struct item *it, bool in_batch,
                     struct errbuf *err)
{
    static const char *const keys[] = {"command",    "code",   "language", "stdin",
                                       "files",      "limits", "image",    "priority",
                                       "deadline_s", "kind",   "after",    NULL};
    const json_t *cmd = json_object_get(j, "command"), *code = json_object_get(j, "code"), *v;

    if (only_keys(j, keys, err) < 0)
        return -EINVAL;
    if (!in_batch && (json_object_get(j, "kind") || json_object_get(j, "after")))
        return errbuf_set(err, "'kind' and 'after' belong to batch items");
    if (common_fields(a, j, it, err) < 0)
        return -EINVAL;
    if ((cmd != NULL) == (code != NULL))
        return errbuf_set(err, "give either 'command' (an argv array) or 'code' with 'language'");
    if (cmd) {
        size_t i, n = json_is_array(cmd) ? json_array_size(cmd) : 0;
        json_t *e;
        if (n == 0 || n > MAX_ARGV)
            return errbuf_set(err, "'command' must be an array of 1 to %d strings", MAX_ARGV);
        if (json_object_get(j, "language"))
            return errbuf_set(err, "'language' goes with 'code', not with 'command'");
        it->kind = K_RUN;
        it->argv = calloc(n + 1, sizeof(char *));
        if (!it->argv)
            return errbuf_set(err, "out of memory"), -ENOMEM;
        json_array_foreach(cmd, i, e)
        {
            if (!json_is_string(e) || (i == 0 && !json_string_length(e)) ||
                strlen(json_string_value(e)) != json_string_length(e))
                return errbuf_set(err, "command[%zu] must be a%s string without NUL bytes", i,
                                  i ? "" : " non-empty");
            if (!(it->argv[i] = strdup(json_string_value(e))))
                return errbuf_set(err, "out of memory"), -ENOMEM;
        }
        if (!sandbox_argv_fits(it->argv, NULL, err)) {
            char msg[sizeof(err->msg)];
            snprintf(msg, sizeof(msg), "%s", err->msg);
            return errbuf_set(err, "command: %s", msg);
        }
    } else {
        v = json_object_get(j, "language");
        if (!json_is_string(code))
            return errbuf_set(err, "'code' must be a string");
        if (!json_is_string(v))
            return errbuf_set(err, "'code' needs 'language' (a string)");
        if (!(it->lang = program_language(json_string_value(v), err)))
            return -EINVAL;
        it->kind = K_PROGRAM;
        if (!(it->code = strndup(json_string_value(code), json_string_length(code))))
            return errbuf_set(err, "out of memory"), -ENOMEM;
        if (it->lang->compile_memory_mb > it->job.memory_mb && it->lang->compile)
            it->job.memory_mb = it->lang->compile_memory_mb;
    }
    if ((v = json_object_get(j, "stdin")) && !json_is_null(v) &&
        bytes_field(v, "'stdin'", &it->stdin_data, &it->stdin_len, err) < 0)
        return -EINVAL;
    if (files_field(json_object_get(j, "files"), it, false, err) < 0)
        return -EINVAL;
    return files_check(it, it->lang ? it->lang->source : NULL, it->code ? strlen(it->code) : 0,
                       err);
}

static int parse_verify(struct api *a, const json_t *j, struct item *it, bool in_batch,
                        struct errbuf *err)
{
    static const char *const keys[] = {
        "task",  "task_id", "solution", "completion", "response",   "language", "repeats", "reward",
        "model", "limits",  "image",    "priority",   "deadline_s", "kind",     "after",   NULL};
    static const char *const forms[] = {"solution", "completion", "response"};
    const json_t *task = json_object_get(j, "task"), *v, *text = NULL;
    const struct lang *lang = NULL; /* the solution's (NULL: the task's) */
    enum solution_kind sk = SOLUTION_PROGRAM;

    if (only_keys(j, keys, err) < 0)
        return -EINVAL;
    if (!in_batch && (json_object_get(j, "kind") || json_object_get(j, "after")))
        return errbuf_set(err, "'kind' and 'after' belong to batch items");
    if (json_object_get(j, "limits") || json_object_get(j, "image"))
        return errbuf_set(err, "a verification takes its limits and image from the task");
    if (common_fields(a, j, it, err) < 0)
        return -EINVAL;
    v = json_object_get(j, "model");
    if (v && (!json_is_string(v) || !json_string_length(v) || json_string_length(v) > 200))
        return errbuf_set(err, "'model' must be a string of 1 to 200 characters");
    if (v && !json_object_get(j, "task_id"))
        return errbuf_set(err, "'model' tags a verification of a library task: it needs "
                               "'task_id'");
    if (json_object_get(j, "task_id") && task)
        return errbuf_set(err, "give 'task' or 'task_id', not both");
    if ((v = json_object_get(j, "task_id"))) {
        int r;
        if (!json_is_string(v))
            return errbuf_set(err, "'task_id' must be a string");
        if (!a->cfg.store)
            return errbuf_set(err, "'task_id' needs the task library: start the server with "
                                   "--db PATH, or send the task itself as 'task'");
        if ((r = store_task_load(a->cfg.store, json_string_value(v), NULL, &it->task, err)) < 0) {
            task_release(&it->task);
            return r == -ENOENT ? -ENOENT : -EIO;
        }
        it->record = true;
        snprintf(it->model, sizeof(it->model), "%s",
                 json_is_string(json_object_get(j, "model"))
                     ? json_string_value(json_object_get(j, "model"))
                     : "default");
    } else if (!json_is_object(task)) {
        return errbuf_set(err, "'task' must be a task object (docs/TASKS.md), or give "
                               "'task_id'");
    } else if (task_from_json(task, &it->task, err) < 0) {
        char msg[sizeof(err->msg)];
        snprintf(msg, sizeof(msg), "%s", err->msg);
        task_release(&it->task);
        return errbuf_set(err, "task: %s", msg);
    }
    it->has_task = true;
    if (solution_language(json_object_get(j, "language"), &it->task, &lang, err) < 0)
        return -EINVAL;
    for (int k = 0; k < 3; k++) {
        if (!(v = json_object_get(j, forms[k])))
            continue;
        if (text)
            return errbuf_set(err, "give one of 'solution', 'completion', 'response'");
        if (!json_is_string(v))
            return errbuf_set(err, "'%s' must be a string", forms[k]);
        text = v;
        sk = (enum solution_kind)k;
    }
    if (!text)
        return errbuf_set(err, "missing 'solution' (or 'completion' / 'response')");
    it->program =
        verify_program_text(&it->task, lang, sk, json_string_value(text), it->how, sizeof(it->how));
    if (!it->program)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    verify_opts_default(&it->vo);
    it->vo.infra_retries = a->cfg.infra_retries;
    it->vo.image = a->cfg.host;
    it->vo.pool = a->cfg.pool;
    it->vo.lang = lang;
    if ((v = json_object_get(j, "repeats")) && !json_is_null(v)) {
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 100)
            return errbuf_set(err, "'repeats' must be an integer from 1 to 100");
        it->vo.repeats = (unsigned)json_integer_value(v);
    }
    if ((v = json_object_get(j, "reward")) && !json_is_null(v)) {
        if (!json_is_string(v) || !reward_policy_parse(json_string_value(v), &it->vo.reward))
            return errbuf_set(err, "'reward' must be \"binary\" or \"fraction\"");
    }
    it->kind = K_VERIFY;
    it->limits = it->task.limits;
    /* The job reserves the most its verification holds at once (verify_memory_mb). */
    it->job.memory_mb = verify_memory_mb(&it->task, lang);
    return 0;
}

/* parse_run_code — SandboxFusion's request; unknown fields are ignored there. */
static int parse_run_code(struct api *a, const json_t *j, struct item *it, struct errbuf *err)
{
    const json_t *v, *e;
    double ct = 10, rt = 10;
    size_t i;

    it->limits = a->cfg.limits; /* server defaults; run_code has its own fields */
    it->img = a->cfg.host;
    it->job.prio = PRIO_NORMAL;
    if (!json_is_string(v = json_object_get(j, "code")))
        return errbuf_set(err, "'code' must be a string");
    if (!(it->code = strndup(json_string_value(v), json_string_length(v))))
        return errbuf_set(err, "out of memory"), -ENOMEM;
    if (!json_is_string(v = json_object_get(j, "language")))
        return errbuf_set(err, "'language' must be a string");
    if (!(it->lang = program_language(json_string_value(v), err)))
        return -EINVAL;
    if ((v = json_object_get(j, "compile_timeout")) && !json_is_null(v)) {
        ct = json_number_value(v);
        if (!json_is_number(v) || !(ct > 0) || ct > sandbox_limit_ranges[LIM_CPU].max)
            return errbuf_set(err, "'compile_timeout' must be a number of seconds in (0, %g]",
                              sandbox_limit_ranges[LIM_CPU].max);
    }
    if ((v = json_object_get(j, "run_timeout")) && !json_is_null(v)) {
        rt = json_number_value(v);
        if (!json_is_number(v) || !(rt > 0) || rt > sandbox_limit_ranges[LIM_CPU].max)
            return errbuf_set(err, "'run_timeout' must be a number of seconds in (0, %g]",
                              sandbox_limit_ranges[LIM_CPU].max);
    }
    it->compile_time = ct;
    it->limits.cpu_time = rt;
    it->limits.wall_time = rt;
    if ((v = json_object_get(j, "memory_limit_MB")) && !json_is_null(v)) {
        double mb = json_number_value(v);
        if (!json_is_number(v))
            return errbuf_set(err, "'memory_limit_MB' must be a number");
        if (mb != -1) {
            if (mb < sandbox_limit_ranges[LIM_MEMORY].min ||
                mb > sandbox_limit_ranges[LIM_MEMORY].max || mb != floor(mb))
                return errbuf_set(err,
                                  "'memory_limit_MB' must be -1 or a whole number from %g "
                                  "to %g",
                                  sandbox_limit_ranges[LIM_MEMORY].min,
                                  sandbox_limit_ranges[LIM_MEMORY].max);
            it->limits.memory_mb = (uint64_t)mb;
        }
    }
    if ((v = json_object_get(j, "stdin")) && !json_is_null(v)) {
        if (!json_is_string(v))
            return errbuf_set(err, "'stdin' must be a string");
        it->stdin_len = json_string_length(v);
        if (!(it->stdin_data = strndup(json_string_value(v), it->stdin_len)))
            return errbuf_set(err, "out of memory"), -ENOMEM;
    }
    if (files_field(json_object_get(j, "files"), it, true, err) < 0 ||
        files_check(it, it->lang->source, strlen(it->code), err) < 0)
        return -EINVAL;
    if ((v = json_object_get(j, "fetch_files")) && !json_is_null(v)) {
        if (!json_is_array(v) || json_array_size(v) > MAX_FILES)
            return errbuf_set(err, "'fetch_files' must be an array of paths");
        it->fetch = calloc(json_array_size(v) + 1, sizeof(char *));
        if (!it->fetch)
            return errbuf_set(err, "out of memory"), -ENOMEM;
        json_array_foreach(v, i, e)
        {
            struct errbuf why = {{0}};
            if (!json_is_string(e) || !sandbox_dest_valid(json_string_value(e), &why))
                return errbuf_set(err, "fetch_files[%zu]: %s", i,
                                  json_is_string(e) ? why.msg : "must be a string");
            if (!(it->fetch[i] = strdup(json_string_value(e))))
                return errbuf_set(err, "out of memory"), -ENOMEM;
            it->nfetch++;
        }
    }
    it->kind = K_RUNCODE;
    it->job.memory_mb = it->limits.memory_mb;
    if (it->lang->compile && it->lang->compile_memory_mb > it->job.memory_mb)
        it->job.memory_mb = it->lang->compile_memory_mb;
    return 0;
}

/* ---- running (worker threads) ------------------------------------------------------- */

static bool interrupted(const struct sandbox_runtime *rt)
{
    uint64_t v;
    /* The cancel fd is an eventfd: peek by reading and ringing again. */
    if (rt->cancel_fd < 0 || read(rt->cancel_fd, &v, sizeof(v)) != sizeof(v))
        return false;
    (void)!write(rt->cancel_fd, &v, sizeof(v));
    return true;
}

/* run_in_sandbox(…) — sandbox_run, with a warm sandbox when one of the shape is ready. */
static void run_in_sandbox(struct item *it, const struct sandbox_runtime *rt,
                           const struct sandbox_file *files, const struct sandbox_proc *proc,
                           struct result *res)
{
    struct pool *pool = it->owner->api->cfg.pool;
    struct errbuf err = {{0}};
    struct sandbox *sb = pool_acquire(pool, rt, it->img, &it->limits, &err);

    snprintf(res->image, sizeof(res->image), "%s", it->img->digest);
    if (!sb) {
        result_fail(res, "%s", err.msg);
        return;
    }
    for (size_t i = 0; i < it->nfiles; i++)
        if (sandbox_put_file(sb, files[i].dest, files[i].fd, files[i].mode, &err) < 0) {
            result_fail(res, "%s", err.msg);
            pool_release(pool, sb);
            return;
        }
    sandbox_exec(sb, proc, SANDBOX_EXEC_LAST, res); /* final: everything is dead */
    pool_release(pool, sb);
}

static void run_command(struct item *it, const struct sandbox_runtime *rt)
{
    struct sandbox_file *files = calloc(it->nfiles + 1, sizeof(*files));
    struct sandbox_proc proc = {.argv = it->argv, .env = NULL, .stdin_fd = -1};
    struct result res;

    result_init(&res);
    for (unsigned attempt = 0; attempt <= it->vo.infra_retries; attempt++) {
        bool staged = files != NULL;
        result_release(&res);
        result_init(&res);
        for (size_t i = 0; staged && i < it->nfiles; i++) {
            files[i].dest = it->files[i].path;
            files[i].mode = 0644;
            files[i].fd = sandbox_memfd(it->files[i].data, it->files[i].len);
            staged = files[i].fd >= 0;
        }
        if (staged && it->stdin_len)
            staged = (proc.stdin_fd = sandbox_memfd(it->stdin_data, it->stdin_len)) >= 0;
        if (staged)
            run_in_sandbox(it, rt, files, &proc, &res);
        else
            result_fail(&res, "cannot stage the request's files: %s", strerror(errno));
        for (size_t i = 0; files && i < it->nfiles; i++)
            if (files[i].fd >= 0)
                close(files[i].fd);
        if (proc.stdin_fd >= 0)
            close(proc.stdin_fd);
        proc.stdin_fd = -1;
        if (res.status != RESULT_SANDBOX_ERROR || interrupted(rt))
            break;
    }
    free(files);
    it->result = result_to_json(&res);
    it->status = result_status_name(res.status);
    it->infra = res.status == RESULT_SANDBOX_ERROR;
    result_release(&res);
}

static void run_program(struct item *it, const struct sandbox_runtime *rt)
{
    struct program_spec spec = {
        .lang = it->lang,
        .code = it->code,
        .code_len = strlen(it->code),
        .stdin_data = it->stdin_data,
        .stdin_len = it->stdin_len,
        .files = it->files,
        .nfiles = it->nfiles,
        .limits = it->limits,
        .compile_time = it->compile_time,
        .fetch = (const char *const *)it->fetch,
        .nfetch = it->nfetch,
        .infra_retries = it->vo.infra_retries,
        .pool = it->owner->api->cfg.pool,
    };
    struct program_result pr;
    struct errbuf err = {{0}};

    if (it->lang == &pytest_mode && !lang_available(it->lang, it->img, &err)) {
        /* python3 -m pytest would fail as failing tests do: say it is ours */
        memset(&pr, 0, sizeof(pr));
        result_init(&pr.run);
        result_fail(&pr.run, "%s", err.msg);
    } else {
        program_run(rt, it->img, &spec, &pr);
    }
    it->infra = pr.run.status == RESULT_SANDBOX_ERROR &&
                !(pr.has_compile && pr.compile.status != RESULT_OK &&
                  pr.compile.status != RESULT_SANDBOX_ERROR);
    if (it->kind == K_PROGRAM) {
        /* The run's record, plus the compile step's; a failed compile is the answer. */
        const struct result *shown =
            pr.has_compile && pr.compile.status != RESULT_OK ? &pr.compile : &pr.run;
        it->result = result_to_json(shown);
        if (it->result) {
            json_object_set_new(it->result, "compile",
                                pr.has_compile ? result_to_json(&pr.compile) : json_null());
            if (shown == &pr.compile)
                json_object_set_new(it->result, "message",
                                    json_string("compilation failed; the program was not run"));
        }
        it->status = result_status_name(shown->status);
        if (shown == &pr.compile && shown->status != RESULT_SANDBOX_ERROR)
            it->status = "compile_error";
    } else {
        /* SandboxFusion's shape. */
        json_t *o = json_object(), *files = json_object();
        bool sandbox_err = false, failed = false;
        json_t *cr = json_null(), *rr = json_null();
        char msg[600] = "";
        const struct result *steps[2] = {
            pr.has_compile ? &pr.compile : NULL,
            pr.ran || !pr.has_compile || pr.compile.status == RESULT_OK ? &pr.run : NULL};
        for (int k = 0; k < 2; k++) {
            const struct result *s = steps[k];
            json_t *sj;
            const char *st;
            if (!s)
                continue;
            if (s->status == RESULT_SANDBOX_ERROR) {
                st = "Error";
                sandbox_err = true;
                snprintf(msg, sizeof(msg), "%s", s->message);
            } else if (s->status == RESULT_TIMEOUT) {
                st = "TimeLimitExceeded";
                failed = true;
            } else {
                st = "Finished";
                failed |= s->status != RESULT_OK;
            }
            sj = json_pack("{s:s,s:f,s:o,s:s%,s:s%}", "status", st, "execution_time", s->wall_time,
                           "return_code",
                           s->status == RESULT_SANDBOX_ERROR || s->status == RESULT_TIMEOUT
                               ? json_null()
                           : s->exit_code >= 0 ? json_integer(s->exit_code)
                                               : json_integer(-s->signal),
                           "stdout", s->out.data ? s->out.data : "", s->out.len, "stderr",
                           s->err.data ? s->err.data : "", s->err.len);
            if (k == 0)
                cr = sj;
            else
                rr = sj;
        }
        if (!steps[1] && !sandbox_err)
            failed = true; /* compile failed: no run */
        for (size_t i = 0; i < pr.nfiles; i++) {
            char *b64;
            if (!pr.files[i].data)
                continue;
            b64 = util_base64_encode(pr.files[i].data, pr.files[i].len);
            if (b64)
                json_object_set_new(files, pr.files[i].path, json_string(b64));
            free(b64);
        }
        json_object_set_new(o, "status",
                            json_string(sandbox_err ? "SandboxError"
                                        : failed    ? "Failed"
                                                    : "Success"));
        json_object_set_new(o, "message", json_string(msg));
        json_object_set_new(o, "compile_result", cr ? cr : json_null());
        json_object_set_new(o, "run_result", rr ? rr : json_null());
        json_object_set_new(o, "executor_pod_name", json_string("crucible"));
        json_object_set_new(o, "files", files);
        it->result = o;
        it->status = sandbox_err ? "SandboxError" : failed ? "Failed" : "Success";
        it->infra = sandbox_err;
    }
    program_result_release(&pr);
}

static void run_verify(struct item *it, const struct sandbox_runtime *rt)
{
    struct verify_result vr;

    verify_run(rt, &it->task, it->program, &it->vo, &vr);
    it->result = verify_result_to_json(&it->task, &vr);
    if (it->result)
        json_object_set_new(it->result, "extracted", json_string(it->how));
    if (it->record) {
        struct errbuf err = {{0}};
        bool recorded = it->recorded = store_record(it->owner->api->cfg.store, it->task.id,
                                                    it->task.version, it->model, &vr, &err) == 0;
        if (it->result) {
            json_object_set_new(it->result, "recorded", json_boolean(recorded));
            json_object_set_new(it->result, "model", json_string(it->model));
            if (!recorded)
                json_object_set_new(it->result, "record_error", json_string(err.msg));
        }
    }
    it->status = verdict_name(vr.verdict);
    it->infra = vr.verdict == VERDICT_INFRA_ERROR;
    verify_result_release(&vr);
}

static void item_run(struct job *j, const struct sandbox_runtime *rt)
{
    struct item *it = (struct item *)j;

    switch (it->kind) {
    case K_RUN:
        run_command(it, rt);
        break;
    case K_PROGRAM:
    case K_RUNCODE:
        run_program(it, rt);
        break;
    case K_VERIFY:
    default:
        run_verify(it, rt);
        break;
    }
}

/* ---- completion (loop thread) ------------------------------------------------------- */

/* not_run_result(it, why) — the record of a job that never ran (deadline, cancel). */
static void not_run_result(struct item *it, const char *why)
{
    json_decref(it->result);
    if (it->kind == K_VERIFY) {
        it->result = json_pack("{s:s,s:s,s:s,s:s,s:n,s:i,s:i,s:[],s:s}", "task_id", it->task.id,
                               "task_version", it->task.version, "language",
                               (it->vo.lang ? it->vo.lang : it->task.lang)->name, "verdict",
                               "infra_error", "reward", "passed", 0, "total", (int)it->task.ntests,
                               "tests", "message", why);
        it->status = "infra_error";
    } else if (it->kind == K_RUNCODE) {
        it->result =
            json_pack("{s:s,s:s,s:n,s:n,s:s,s:{}}", "status", "SandboxError", "message", why,
                      "compile_result", "run_result", "executor_pod_name", "crucible", "files");
        it->status = "SandboxError";
    } else {
        struct result res;
        result_init(&res);
        result_fail(&res, "%s", why);
        it->result = result_to_json(&res);
        it->status = "sandbox_error";
    }
    it->infra = true;
}

static bool item_failed(const struct item *it)
{
    if (!it->status)
        return true;
    if (it->kind == K_VERIFY)
        return strcmp(it->status, "accepted") != 0;
    if (it->kind == K_RUNCODE)
        return strcmp(it->status, "Success") != 0;
    return strcmp(it->status, "ok") != 0;
}

static void stream_line(struct owner *o, json_t *line)
{
    char *text = json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));

    json_decref(line);
    if (!text || !o->r) {
        free(text);
        return;
    }
    http_stream_write(o->r, text, strlen(text));
    http_stream_write(o->r, "\n", 1);
    free(text);
}

static void batch_progress(struct owner *o, size_t done_index);

static void batch_skip(struct owner *o, struct item *it, const struct item *dep)
{
    char msg[300];

    it->finished = true;
    it->failed = true;
    o->finished++;
    if (o->reserved) {
        sched_unreserve(o->api->sched, 1);
        o->reserved--;
    }
    snprintf(msg, sizeof(msg), "item %zu, which this item comes after, ended %s", dep->index,
             dep->status ? dep->status : "without a result");
    stream_line(o, json_pack("{s:i,s:b,s:{s:s,s:s}}", "index", (int)it->index, "skipped", 1,
                             "error", "code", "dependency_failed", "message", msg));
    metrics_add(o->api->m, "batch_items_skipped_total",
                "batch items skipped because an item they come after failed", "", 1);
    batch_progress(o, it->index);
}

static void submit_item(struct owner *o, struct item *it)
{
    it->submitted = true;
    o->outstanding++;
    if (o->reserved)
        o->reserved--;
    sched_submit(o->api->sched, &it->job);
}

/* batch_progress(o, i) — item i finished: release or skip the items that wait on it. */
static void batch_progress(struct owner *o, size_t done_index)
{
    const struct item *dep = &o->items[done_index];

    for (size_t k = done_index + 1; k < o->n; k++) {
        struct item *it = &o->items[k];
        bool waits = false;
        if (it->finished || it->submitted)
            continue;
        for (size_t a = 0; a < it->nafter; a++)
            waits |= it->after[a] == done_index;
        if (!waits)
            continue;
        if (dep->failed) {
            batch_skip(o, it, dep);
            continue;
        }
        if (--it->waiting == 0 && o->r)
            submit_item(o, it);
    }
    if (o->finished == o->n && o->r) {
        http_stream_end(o->r);
        api_log(o->api, "batch_done",
                json_pack("{s:i,s:f}", "items", (int)o->n, "seconds", util_now() - o->t0));
    }
}

static void item_done(struct job *j)
{
    struct item *it = (struct item *)j;
    struct owner *o = it->owner;
    struct api *a = o->api;
    char labels[128];

    o->outstanding--;
    if (j->outcome == JOB_EXPIRED) {
        char why[160];
        snprintf(why, sizeof(why), "not started within its deadline (%.3g s after admission)",
                 j->deadline - j->t_submit);
        not_run_result(it, why);
        metrics_add(a->m, "jobs_expired_total", "jobs whose deadline passed in the queue", "", 1);
    } else if (j->outcome == JOB_CANCELLED) {
        if (!it->result)
            not_run_result(it, "cancelled: the client went away");
        it->status = "cancelled"; /* the client's doing: not an infrastructure error */
        it->infra = false;
    } else if (!it->result) {
        not_run_result(it, "out of memory building the result");
    }
    snprintf(labels, sizeof(labels), "kind=\"%s\",status=\"%s\"", kind_names[it->kind],
             it->status ? it->status : "none");
    metrics_add(a->m, "jobs_completed_total", "jobs finished, by kind and verdict or status",
                labels, 1);
    if (it->record && j->t_start > 0)
        metrics_add(a->m, it->recorded ? "library_recorded_total" : "library_record_errors_total",
                    it->recorded ? "verifications recorded in the task library"
                                 : "verifications the task library failed to record",
                    "", 1);
    if (it->infra)
        metrics_add(a->m, "infra_errors_total",
                    "jobs that ended in crucible's own failure (after retries)", "", 1);
    snprintf(labels, sizeof(labels), "kind=\"%s\"", kind_names[it->kind]);
    if (j->t_start > 0) {
        metrics_observe(a->m, "queue_wait_seconds", "time from admission to start", labels,
                        j->t_start - j->t_submit);
        metrics_observe(a->m, "run_seconds", "time a job ran on a worker", labels,
                        j->t_end - j->t_start);
    }
    metrics_observe(a->m, "job_seconds", "time from admission to result", labels,
                    j->t_end - j->t_submit);

    if (a->cfg.trace && j->t_start > 0) /* where a request's time goes (docs/BENCHMARKS.md) */
        fprintf(stderr,
                "crucible: trace %s item %zu: request to queue %.0f us, queue %.0f us, run %.0f "
                "us, back to the loop %.0f us\n",
                o->route, it->index, (j->t_submit - o->t0) * 1e6, (j->t_start - j->t_submit) * 1e6,
                (j->t_end - j->t_start) * 1e6, (util_now() - j->t_end) * 1e6);
    it->finished = true;
    it->failed = item_failed(it);
    o->finished++;
    if (!o->batch) {
        if (o->r) {
            count_request(a, o->route, 200, o->t0);
            http_respond_json(o->r, 200, it->result);
            it->result = NULL;
        }
    } else {
        if (o->r && j->outcome != JOB_CANCELLED) {
            json_t *line = json_pack("{s:i,s:O}", "index", (int)it->index, "result", it->result);
            stream_line(o, line);
        }
        batch_progress(o, it->index);
    }
    owner_maybe_free(o);
}

/* owner_closed — the client went away (aborted) or its answer went out. */
static void owner_closed(void *ctx, bool aborted)
{
    struct owner *o = ctx;

    o->r = NULL;
    if (aborted) {
        for (size_t i = 0; i < o->n; i++) {
            struct item *it = &o->items[i];
            if (it->submitted && !it->finished)
                sched_cancel(o->api->sched, &it->job);
        }
        if (o->batch && o->finished < o->n) {
            metrics_add(o->api->m, "batches_cancelled_total",
                        "batches whose client went away before the last item", "", 1);
            api_log(o->api, "batch_cancelled",
                    json_pack("{s:i,s:i}", "items", (int)o->n, "finished", (int)o->finished));
        }
    }
    owner_maybe_free(o);
}

/* ---- routes ------------------------------------------------------------------------- */

static struct owner *owner_new(struct api *a, struct http_request *r, const char *route, size_t n)
{
    struct owner *o = calloc(1, sizeof(*o));

    if (!o)
        return NULL;
    o->items = calloc(n ? n : 1, sizeof(*o->items));
    if (!o->items) {
        free(o);
        return NULL;
    }
    o->api = a;
    o->r = r;
    o->route = route;
    o->n = n;
    o->t0 = util_now();
    for (size_t i = 0; i < n; i++) {
        struct item *it = &o->items[i];
        it->owner = o;
        it->index = i;
        it->job.run = item_run;
        it->job.done = item_done;
        it->job.ctx = it;
        verify_opts_default(&it->vo);
        it->vo.infra_retries = a->cfg.infra_retries;
    }
    return o;
}

static void owner_discard(struct owner *o)
{
    o->r = NULL;
    owner_maybe_free(o);
}

/* admit(a, r, route, o) — reserves room for o's items and submits those that can start. */
static void admit(struct api *a, struct http_request *r, const char *route, struct owner *o)
{
    struct sched_stats st;

    sched_stats(a->sched, &st);
    for (size_t i = 0; i < o->n; i++)
        if (!sched_fits(a->sched, o->items[i].job.memory_mb)) {
            char who[40];
            snprintf(who, sizeof(who), o->batch ? "items[%zu]" : "the request", i);
            fail(a, r, route, 400, "bad_request",
                 "%s needs %llu MB of memory; this server runs jobs of at most %llu MB", who,
                 (unsigned long long)o->items[i].job.memory_mb, (unsigned long long)st.memory_mb);
            owner_discard(o);
            return;
        }
    if (sched_reserve(a->sched, o->n) < 0) {
        metrics_add(a->m, "rejected_overload_total", "requests answered 429", "", 1);
        fail(a, r, route, 429, "overloaded", "the queue is full");
        owner_discard(o);
        return;
    }
    o->reserved = o->n;
    http_on_close(r, owner_closed, o);
    if (o->batch) {
        http_stream_begin(r, 200, "application/x-ndjson");
        o->streaming = true;
        count_request(a, route, 200, 0);
    }
    for (size_t i = 0; i < o->n; i++)
        if (o->items[i].waiting == 0)
            submit_item(o, &o->items[i]);
    if (o->batch && o->n == 0)
        http_stream_end(r);
}

static json_t *parse_body(struct api *a, struct http_request *r, const char *route)
{
    size_t len;
    const char *body = http_body(r, &len);
    json_error_t je;
    json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);

    if (!j) {
        fail(a, r, route, 400, "bad_request", "the body is not valid JSON: %s (line %d, column %d)",
             je.text, je.line, je.column);
        return NULL;
    }
    if (!json_is_object(j)) {
        json_decref(j);
        fail(a, r, route, 400, "bad_request", "the body must be a JSON object");
        return NULL;
    }
    return j;
}

static void route_single(struct api *a, struct http_request *r, const char *route, enum kind k)
{
    json_t *j = parse_body(a, r, route);
    struct errbuf err = {{0}};
    struct owner *o;
    int rc;

    if (!j)
        return;
    o = owner_new(a, r, route, 1);
    if (!o) {
        json_decref(j);
        fail(a, r, route, 500, "internal", "out of memory");
        return;
    }
    if (k == K_VERIFY)
        rc = parse_verify(a, j, &o->items[0], false, &err);
    else if (k == K_RUNCODE)
        rc = parse_run_code(a, j, &o->items[0], &err);
    else
        rc = parse_run(a, j, &o->items[0], false, &err);
    json_decref(j);
    if (rc < 0) {
        fail(a, r, route,
             rc == -ENOMEM || rc == -EIO ? 500
             : rc == -ENOENT             ? 404
                                         : 400,
             rc == -ENOMEM || rc == -EIO ? "internal"
             : rc == -ENOENT             ? "not_found"
                                         : "bad_request",
             "%s", err.msg);
        owner_discard(o);
        return;
    }
    admit(a, r, route, o);
}

static void route_batch(struct api *a, struct http_request *r, const char *route)
{
    json_t *j = parse_body(a, r, route), *items, *v;
    struct errbuf err = {{0}};
    struct item common;
    struct owner *o;
    size_t n, i;

    if (!j)
        return;
    items = json_object_get(j, "items");
    {
        static const char *const keys[] = {"items", "priority", "deadline_s", NULL};
        if (only_keys(j, keys, &err) < 0) {
            fail(a, r, route, 400, "bad_request", "%s", err.msg);
            json_decref(j);
            return;
        }
    }
    n = json_is_array(items) ? json_array_size(items) : 0;
    if (!json_is_array(items) || n > a->cfg.max_batch) {
        fail(a, r, route, 400, "bad_request", "'items' must be an array of at most %zu items",
             a->cfg.max_batch);
        json_decref(j);
        return;
    }
    memset(&common, 0, sizeof(common));
    if (common_fields(a, j, &common, &err) < 0) {
        fail(a, r, route, 400, "bad_request", "%s", err.msg);
        json_decref(j);
        return;
    }
    o = owner_new(a, r, route, n);
    if (!o) {
        json_decref(j);
        fail(a, r, route, 500, "internal", "out of memory");
        return;
    }
    o->batch = true;
    json_array_foreach(items, i, v)
    {
        struct item *it = &o->items[i];
        const json_t *kind = json_object_get(v, "kind"), *after, *e;
        int rc;
        size_t k;
        if (!json_is_object(v) || !json_is_string(kind)) {
            errbuf_set(&err, "must be an object with \"kind\": \"run\" or \"verify\"");
            rc = -EINVAL;
        } else if (strcmp(json_string_value(kind), "run") == 0) {
            rc = parse_run(a, v, it, true, &err);
        } else if (strcmp(json_string_value(kind), "verify") == 0) {
            rc = parse_verify(a, v, it, true, &err);
        } else {
            errbuf_set(&err, "unknown kind '%s' (run or verify)", json_string_value(kind));
            rc = -EINVAL;
        }
        if (rc == 0) {
            /* The batch's priority and deadline apply unless the item sets its own. */
            if (!json_object_get(v, "priority"))
                it->job.prio = common.job.prio;
            if (!json_object_get(v, "deadline_s"))
                it->job.deadline = common.job.deadline;
            after = json_object_get(v, "after");
            if (after && !json_is_array(after)) {
                errbuf_set(&err, "'after' must be an array of earlier item indices");
                rc = -EINVAL;
            } else if (after && json_array_size(after)) {
                it->after = calloc(json_array_size(after), sizeof(size_t));
                json_array_foreach(after, k, e)
                {
                    json_int_t x = json_is_integer(e) ? json_integer_value(e) : -1;
                    if (x < 0 || (size_t)x >= i) {
                        errbuf_set(&err, "after[%zu] must be the index of an earlier item", k);
                        rc = -EINVAL;
                        break;
                    }
                    if (it->after)
                        it->after[it->nafter++] = (size_t)x;
                }
                it->waiting = it->nafter;
            }
        }
        if (rc < 0) {
            fail(a, r, route, 400, "bad_request", "items[%zu]: %s", i, err.msg);
            json_decref(j);
            owner_discard(o);
            return;
        }
    }
    json_decref(j);
    admit(a, r, route, o);
}

static void route_healthz(struct api *a, struct http_request *r)
{
    struct sched_stats st;
    size_t q = 0;

    sched_stats(a->sched, &st);
    for (int p = 0; p < PRIO_COUNT; p++)
        q += st.queued[p];
    count_request(a, "/healthz", 200, 0);
    http_respond_json(r, 200,
                      json_pack("{s:s,s:i,s:i,s:i}", "status", "ok", "slots", (int)st.slots,
                                "running", (int)st.running, "queued", (int)q));
}

static void route_metrics(struct api *a, struct http_request *r)
{
    struct sched_stats st;
    char *text;

    sched_stats(a->sched, &st);
    for (int p = 0; p < PRIO_COUNT; p++) {
        char labels[40];
        snprintf(labels, sizeof(labels), "priority=\"%s\"",
                 job_priority_name((enum job_priority)p));
        metrics_set(a->m, "queue_depth", "jobs waiting for a slot, by priority", labels,
                    (double)st.queued[p]);
    }
    metrics_set(a->m, "queue_reserved", "batch items admitted, waiting on earlier items", "",
                (double)st.reserved);
    metrics_set(a->m, "jobs_running", "jobs running on a worker", "", st.running);
    metrics_set(a->m, "slots", "CPU slots (concurrent jobs)", "", st.slots);
    metrics_set(a->m, "memory_reserved_bytes", "memory reserved by running jobs", "",
                (double)st.memory_used_mb * 1048576.0);
    if (a->cfg.pool) {
        struct pool_stats ps;
        pool_stats(a->cfg.pool, &ps);
        metrics_set(a->m, "pool_ready", "warm sandboxes ready", "", ps.ready);
        metrics_set(a->m, "pool_target", "warm sandboxes the pool keeps ready", "", ps.target);
        metrics_set_total(a->m, "pool_hits_total", "jobs that took a warm sandbox", "",
                          (double)ps.hits);
        metrics_set_total(a->m, "pool_misses_total",
                          "sandboxes created on a job's path (none ready, or another shape)", "",
                          (double)ps.misses);
        metrics_set_total(a->m, "pool_create_failures_total", "warm sandboxes that failed to start",
                          "", (double)ps.create_failures);
    }
    count_request(a, "/metrics", 200, 0);
    text = metrics_render(a->m);
    if (!text) {
        fail(a, r, "/metrics", 500, "internal", "out of memory");
        return;
    }
    http_respond(r, 200, "text/plain; version=0.0.4", text, strlen(text), NULL, NULL);
    free(text);
}

/* authorized(a, r) — the bearer token, compared in constant time. */
static bool authorized(const struct api *a, const struct http_request *r)
{
    const char *h = http_header(r, "Authorization");
    size_t tl, hl;
    unsigned char diff = 0;

    if (!a->cfg.token)
        return true;
    if (!h || strncmp(h, "Bearer ", 7) != 0)
        return false;
    h += 7;
    tl = strlen(a->cfg.token);
    hl = strlen(h);
    for (size_t i = 0; i < tl; i++)
        diff |= (unsigned char)(a->cfg.token[i] ^ (i < hl ? h[i] : 0));
    return diff == 0 && hl == tl;
}

void api_handle(void *arg, struct http_request *r)
{
    static const struct {
        const char *path, *method;
        int kind; /* -1 healthz, -2 metrics, -3 batch, else enum kind */
    } routes[] = {
        {"/v1/run", "POST", K_RUN}, {"/v1/verify", "POST", K_VERIFY},
        {"/v1/batch", "POST", -3},  {"/run_code", "POST", K_RUNCODE},
        {"/healthz", "GET", -1},    {"/metrics", "GET", -2},
    };
    struct api *a = arg;
    const char *path = http_path(r), *method = http_method(r);
    char route[32];
    unsigned status;

    if (strncmp(path, "/v1/tasks", 9) == 0 && (path[9] == '\0' || path[9] == '/')) {
        if (!authorized(a, r)) {
            fail(a, r, "/v1/tasks", 401, "unauthorized",
                 "missing or wrong bearer token (Authorization: Bearer ...)");
            return;
        }
        if ((status = api_tasks_route(a->cfg.store, r, route, sizeof(route))))
            count_request(a, route, status, 0);
        return;
    }

    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        if (strcmp(path, routes[i].path) != 0)
            continue;
        if (strcmp(method, routes[i].method) != 0) {
            fail(a, r, routes[i].path, 405, "method_not_allowed", "%s wants %s, not %s",
                 routes[i].path, routes[i].method, method);
            return;
        }
        if (routes[i].kind != -1 && !authorized(a, r)) {
            fail(a, r, routes[i].path, 401, "unauthorized",
                 "missing or wrong bearer token (Authorization: Bearer ...)");
            return;
        }
        switch (routes[i].kind) {
        case -1:
            route_healthz(a, r);
            return;
        case -2:
            route_metrics(a, r);
            return;
        case -3:
            route_batch(a, r, routes[i].path);
            return;
        default:
            route_single(a, r, routes[i].path, (enum kind)routes[i].kind);
            return;
        }
    }
    fail(a, r, "other", 404, "not_found", "no route %s %s (see docs/API.md)", method, path);
}

struct api *api_new(struct sched *s, struct metrics *m, const struct api_config *cfg, FILE *log)
{
    struct api *a = calloc(1, sizeof(*a));

    if (!a)
        return NULL;
    a->sched = s;
    a->m = m;
    a->cfg = *cfg;
    a->log = log;
    return a;
}

void api_free(struct api *a)
{
    free(a);
}

/* ---- request checking without a server (api_fuzz.h; the fuzz targets) ------------- */

/* check_import(a, body, len, err) — route_import's per-line work, rolled back. */
static int check_import(struct api *a, const char *body, size_t len, struct errbuf *err)
{
    const char *p = body, *end = body + len;
    size_t good = 0, bad = 0;
    json_t *seen = json_object();
    int rc = 0;

    if (!seen)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    if (a->cfg.store && store_begin(a->cfg.store, err) < 0) {
        json_decref(seen);
        return -EIO;
    }
    while (p < end && rc == 0) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        enum store_import_outcome out;
        struct errbuf why = {{0}};
        json_error_t je;
        struct task t;
        json_t *j = NULL;

        memset(&t, 0, sizeof(t));
        if (n > strspn(p, " \t\r")) { /* as route_import: blank lines are skipped */
            if (!(j = json_loadb(p, n, JSON_REJECT_DUPLICATES, &je)) ||
                task_from_json(j, &t, &why) < 0 || json_object_get(seen, t.id)) {
                bad++;
            } else if (a->cfg.store && store_import(a->cfg.store, &t, &out, err) < 0) {
                rc = -EIO;
            } else {
                good++;
                json_object_set_new(seen, t.id, json_true());
            }
            task_release(&t);
            json_decref(j);
        }
        p += n + (nl ? 1 : 0);
    }
    if (a->cfg.store)
        store_rollback(a->cfg.store);
    json_decref(seen);
    if (rc == 0 && !good)
        rc = errbuf_set(err, bad ? "no valid task in the body" : "the body holds no task");
    return rc;
}

/* check_batch(a, j, &o, err) — route_batch's parsing of the items into a new owner *o
 * (the caller discards it, even on error); nothing is admitted. */
static int check_batch(struct api *a, const json_t *j, struct owner **op, struct errbuf *err)
{
    static const char *const keys[] = {"items", "priority", "deadline_s", NULL};
    const json_t *items = json_object_get(j, "items"), *v;
    struct item common;
    struct owner *o;
    size_t n, i;

    if (only_keys(j, keys, err) < 0)
        return -EINVAL;
    n = json_is_array(items) ? json_array_size(items) : 0;
    if (!json_is_array(items) || n > a->cfg.max_batch)
        return errbuf_set(err, "'items' must be an array of at most %zu items", a->cfg.max_batch);
    memset(&common, 0, sizeof(common));
    if (common_fields(a, j, &common, err) < 0)
        return -EINVAL;
    if (!(*op = o = owner_new(a, NULL, "/v1/batch", n)))
        return errbuf_set(err, "out of memory"), -ENOMEM;
    o->batch = true;
    json_array_foreach(items, i, v)
    {
        struct item *it = &o->items[i];
        const json_t *kind = json_object_get(v, "kind"), *after, *e;
        struct errbuf why = {{0}};
        int rc;
        size_t k;
        if (!json_is_object(v) || !json_is_string(kind))
            rc = errbuf_set(&why, "must be an object with \"kind\": \"run\" or \"verify\"");
        else if (strcmp(json_string_value(kind), "run") == 0)
            rc = parse_run(a, v, it, true, &why);
        else if (strcmp(json_string_value(kind), "verify") == 0)
            rc = parse_verify(a, v, it, true, &why);
        else
            rc = errbuf_set(&why, "unknown kind '%s' (run or verify)", json_string_value(kind));
        after = json_object_get(v, "after");
        if (rc == 0 && after && !json_is_array(after))
            rc = errbuf_set(&why, "'after' must be an array of earlier item indices");
        json_array_foreach(rc == 0 ? after : NULL, k, e)
        {
            json_int_t x = json_is_integer(e) ? json_integer_value(e) : -1;
            if (x < 0 || (size_t)x >= i) {
                rc = errbuf_set(&why, "after[%zu] must be the index of an earlier item", k);
                break;
            }
        }
        if (rc < 0) {
            errbuf_set(err, "items[%zu]: %s", i, why.msg);
            return rc;
        }
    }
    return 0;
}

int api_check_request(struct api *a, const char *route, const char *body, size_t len,
                      struct errbuf *err)
{
    static const struct {
        const char *path;
        int kind; /* -3 batch, else enum kind */
    } routes[] = {
        {"/v1/run", K_RUN}, {"/v1/verify", K_VERIFY}, {"/run_code", K_RUNCODE}, {"/v1/batch", -3}};
    struct owner *o = NULL;
    json_error_t je;
    json_t *j;
    int rc = -ENOTSUP, kind = 0;

    if (strcmp(route, "/v1/tasks") == 0)
        return check_import(a, body, len, err);
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        if (strcmp(route, routes[i].path) == 0)
            kind = routes[i].kind, rc = 0;
    if (rc < 0)
        return errbuf_set(err, "no route POST %s to check", route), -ENOTSUP;
    if (!(j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je)))
        return errbuf_set(err, "the body is not valid JSON: %s (line %d, column %d)", je.text,
                          je.line, je.column);
    if (!json_is_object(j)) {
        json_decref(j);
        return errbuf_set(err, "the body must be a JSON object");
    }
    if (kind == -3) {
        rc = check_batch(a, j, &o, err);
    } else if (!(o = owner_new(a, NULL, route, 1))) {
        errbuf_set(err, "out of memory");
        rc = -ENOMEM;
    } else if (kind == K_VERIFY) {
        rc = parse_verify(a, j, &o->items[0], false, err);
    } else if (kind == K_RUNCODE) {
        rc = parse_run_code(a, j, &o->items[0], err);
    } else {
        rc = parse_run(a, j, &o->items[0], false, err);
    }
    json_decref(j);
    if (o)
        owner_discard(o);
    return rc;
}
