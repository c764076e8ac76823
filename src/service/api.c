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
#include "cluster/forward.h"
#include "cluster/gateway.h"
#include "service/api_fuzz.h"

#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "service/api_sessions.h"
#include "service/api_tasks.h"
#include "service/dashboard.h"
#include "service/recent.h"
#include "service/offload.h"
#include "judge/java.h"
#include "judge/lang.h"
#include "judge/pyserver.h"
#include "sandbox/pool.h"
#include "judge/program.h"
#include "library/store.h"
#include "judge/task.h"
#include "util.h"
#include "version.h"
#include "judge/verify.h"

#define MAX_FILES        1000
#define MAX_ARGV         1024
#define MAX_DEADLINE     86400.0
#define MAX_FETCH        100 /* distinct fetch_files paths of one /run_code request */
#define FETCH_HELD       4   /* bytes held per fetched byte: base64 in the tree, its text, a copy */
#define TRIM_AFTER_BYTES (1u << 20)
/* A /v1/run or /run_code body up to this size is parsed on the loop thread, at once: two
 * hand-offs between threads cost more than the parse (docs/BENCHMARKS.md, "Where a /v1/run
 * request's time goes after an idle pause"). Larger bodies, verifications (the task
 * library), batches and a request naming a stored image (the store) go to an api worker. */
#define PARSE_ON_LOOP_MAX (16u << 10)
/* /run_code: seconds of the client's margin kept for setting up a sandbox, tearing it down and
 * sending the answer (the start deadline is that much before the client's budget runs out) */
#define RUN_CODE_RESERVE_S 2.0

struct api {
    struct sched *sched;
    struct metrics *m;
    struct api_config cfg;
    FILE *log;
    pthread_mutex_t lock;  /* held (workers and the loop) */
    uint64_t held;         /* bytes of output records taken from cfg.output_budget (output_admit) */
    struct owner *paused;  /* batches waiting for their client to read (loop thread) */
    struct forward *fw;    /* cluster mode: the routes on the gateway (cfg.gateway), or NULL */
    struct recent *recent; /* the last failures answered (GET /v1/stats), or NULL */
    double started;        /* util_now() at api_new: the uptime GET /v1/stats reports */
};

enum kind { K_RUN, K_PROGRAM, K_VERIFY, K_RUNCODE };

/* The counters a dashboard divides by or alerts on exist from the start, at 0 (api_new). */
#define HELP_EXPIRED  "jobs whose deadline passed in the queue"
#define HELP_INFRA    "jobs that ended in crucible's own failure (after retries)"
#define HELP_OVERLOAD "requests answered 429"
static const char *const kind_names[] = {"run", "run", "verify", "run_code"};

struct owner;

struct item {
    struct job job; /* first member: a struct job * is a struct item * */
    enum kind kind;
    struct owner *owner;
    size_t index;
    /* inputs */
    const struct image *img; /* the server's: registered images live as long as it */
    bool parse_on_loop;      /* parsed on the loop thread: no I/O (common_fields: -EWOULDBLOCK) */
    struct sandbox_limits limits;
    double deadline_s; /* the deadline_s the request gave (0: none), for its message */
    char **argv;
    struct task_file *files;
    size_t nfiles;
    char *stdin_data;
    size_t stdin_len;
    const struct lang *lang;
    char *code;
    double compile_time;
    char **fetch;
    char **fetch_as; /* /run_code: each fetch path as the request named it (the answer's key) */
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
    uint64_t held;     /* bytes of the output budget this item's record holds */
    char limited[300]; /* why the server cut the captured output, or "" */
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
    size_t body_bytes; /* of the request: a large one is trimmed from the heap when freed */
    double t0;
    /* batch back-pressure: items whose turn has come wait in ready[] (indices, FIFO) and
     * start while fewer than window run and the client keeps up with the stream */
    size_t *ready, rhead, rtail, window;
    bool paused;                 /* the unsent stream is over cfg.stream_buffer */
    double paused_at;            /* util_now() when it paused, or when its client last read */
    size_t paused_pending;       /* unsent bytes then */
    struct owner *pnext, *pprev; /* in api.paused while paused */
    const char *cancel_reason;   /* why the server cancelled the batch, or NULL */
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
    if (strcmp(route, "/metrics") != 0 && strcmp(route, "/healthz") != 0 &&
        strcmp(route, "/v1/stats") != 0 && strcmp(route, "/ui") != 0) /* polled: not logged */
        api_log(a, "answer",
                json_pack("{s:s,s:i,s:f}", "route", route, "status", (int)code, "seconds",
                          t0 > 0 ? util_now() - t0 : 0.0));
}

/* fail_with(a, r, route, status, header, value, code, fmt...) — an error answer
 * {"error": {code, message}}, counted under route, with one extra header when header is not
 * NULL (Allow on a 405, WWW-Authenticate on a 401, Retry-After on a 429). */
static void fail_with(struct api *a, struct http_request *r, const char *route, unsigned status,
                      const char *header, const char *value, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));
static void fail_with(struct api *a, struct http_request *r, const char *route, unsigned status,
                      const char *header, const char *value, const char *code, const char *fmt, ...)
{
    char msg[768];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    count_request(a, route, status, 0);
    recent_add(a->recent, route, status, code, msg);
    http_respond_error_with(r, status, header, value, code, "%s", msg);
}

/* fail(a, r, route, status, code, fmt...) — fail_with without an extra header. */
#define fail(a, r, route, status, code, ...)                                                       \
    fail_with(a, r, route, status, NULL, NULL, code, __VA_ARGS__)

static void free_strv(char **v)
{
    for (char **p = v; p && *p; p++)
        free(*p);
    free(v);
}

/* output_release(it) — the item's record left the server (or went into a stream whose
 * own bound counts it): its bytes go back to the output budget. */
static void output_release(struct item *it)
{
    struct api *a = it->owner->api;

    if (!it->held)
        return;
    pthread_mutex_lock(&a->lock);
    a->held -= it->held;
    pthread_mutex_unlock(&a->lock);
    it->held = 0;
}

static void item_release(struct item *it)
{
    output_release(it);
    free_strv(it->argv);
    for (size_t i = 0; i < it->nfiles; i++) {
        free(it->files[i].path);
        free(it->files[i].data);
    }
    free(it->files);
    free(it->stdin_data);
    free(it->code);
    free_strv(it->fetch);
    free_strv(it->fetch_as);
    if (it->has_task)
        task_release(&it->task);
    free(it->program);
    free(it->after);
    json_decref(it->result);
}

/* owner_unpause(o) — o leaves the paused list (no effect when not on it). */
static void owner_unpause(struct owner *o)
{
    if (!o->paused)
        return;
    if (o->pprev)
        o->pprev->pnext = o->pnext;
    else
        o->api->paused = o->pnext;
    if (o->pnext)
        o->pnext->pprev = o->pprev;
    o->pnext = o->pprev = NULL;
    o->paused = false;
}

static void owner_maybe_free(struct owner *o)
{
    if (o->r || o->outstanding)
        return;
    owner_unpause(o);
    if (o->reserved)
        sched_unreserve(o->api->sched, o->reserved);
    for (size_t i = 0; i < o->n; i++)
        item_release(&o->items[i]);
    free(o->items);
    free(o->ready);
    if (o->body_bytes >= TRIM_AFTER_BYTES)
        malloc_trim(0); /* a large request's many small blocks, back to the system */
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

/* SandboxFusion's "go_test" mode: the code is a Go file of tests (package main, func TestX(t
 * *testing.T)) and `go test FILE` runs it, so the exit status is go test's (0 every test
 * passed, 1 a test failed, 1 or 2 a build error, which shows in the run's output as in
 * SandboxFusion, where there is no compile step either) and the output its report ("ok ..."
 * or "--- FAIL"). The file is main_test.go; Go runs as the go row sets it up (GOPATH mode
 * with Debian's testify, which SandboxFusion's go.mod also provides). go vet's default test
 * checks run, as in SandboxFusion's `go test` (a finding, such as a Printf verb of the wrong
 * type, fails the build: exit status 1 or 2, "[build failed]"); with the sandbox's empty build
 * cache they add seconds of CPU (docs/API.md). */
static const struct lang go_test_mode = {
    .name = "go_test",
    .source = "main_test.go",
    .run = (const char *const[]){"/usr/bin/go", "test", "main_test.go", NULL},
    .env = (const char *const[]){"GOCACHE=/tmp/go-cache", "GOPATH=/tmp/go:/usr/share/gocode",
                                 "GO111MODULE=off", "CGO_ENABLED=1", NULL},
    .toolchain = "/usr/bin/go",
    .package = "golang-go",
};

#define JUNIT_JAR "/usr/share/java/junit-platform-console-standalone.jar"

/* junit_entry(code, len, e) — the junit mode's file: PUBLICCLASS.java, else Main.java
 * (SandboxFusion's rule). The entry is never derived: the console launcher finds the tests. */
static void junit_entry(const char *code, size_t len, struct lang_entry *e)
{
    struct java_entry je;

    java_find_entry(code, len, &je);
    e->source[0] = '\0';
    if (je.public_class[0] && strlen(je.public_class) + 5 < sizeof(e->source))
        snprintf(e->source, sizeof(e->source), "%s.java", je.public_class);
    snprintf(e->entry, sizeof(e->entry), "-"); /* no main needed */
}

/* SandboxFusion's "junit" mode: the code is Java with JUnit 5 tests; every .java file of the
 * work directory (the request's files too) is compiled (a compile error is compile_error) and
 * JUnit's console launcher scans the class path and runs every test it finds: exit status 0
 * when all passed (none found is 0 too), 1 when one failed. The launcher's jar is Debian's
 * junit5 (SandboxFusion's is 1.8.2; its API jar is on the same class path). */
static const struct lang junit_mode = {
    .name = "junit",
    .source = "Main.java",
    .compile = (const char *const[]){"/bin/sh", "-c",
                                     "exec /usr/bin/javac -J-XX:-UsePerfData -J-XX:+UseSerialGC "
                                     "-encoding UTF-8 -cp .:" JUNIT_JAR " *.java",
                                     "Main.java", NULL},
    .run = (const char *const[]){"/usr/bin/java", "-XX:-UsePerfData", "-XX:+UseSerialGC", "-jar",
                                 JUNIT_JAR, "--disable-banner", "--disable-ansi-colors",
                                 "--details=tree", "--class-path", ".:" JUNIT_JAR,
                                 "--scan-class-path", NULL},
    .toolchain = JUNIT_JAR,
    .package = "junit5",
    .compile_cpu = 30,
    .compile_wall = 60,
    .compile_memory_mb = 2048,
    .entry = junit_entry,
};

/* The run modes of /run_code and /v1/run that are not languages of the table. */
static const struct lang *const run_modes[] = {&pytest_mode, &go_test_mode, &junit_mode};

/* program_language(name, err) — what runs a program of /v1/run and /run_code: a language of
 * the table or a run mode (pytest, go_test, junit); NULL with err naming the known ones and
 * saying why SandboxFusion's others are not. */
static const struct lang *program_language(const char *name, struct errbuf *err)
{
    const struct lang *l = lang_find(name);
    char names[1024];

    if (l)
        return l;
    for (size_t i = 0; i < sizeof(run_modes) / sizeof(run_modes[0]); i++)
        if (strcasecmp(name, run_modes[i]->name) == 0)
            return run_modes[i];
    lang_names(names, sizeof(names));
    errbuf_set(err,
               "unknown language '%s' (known: %s; and the test modes pytest, go_test and junit; "
               "SandboxFusion's cuda, python_gpu (a GPU), julia, swift, lean (not packaged in "
               "Debian 12), jest (Debian 12's jest does not install) and sql (no runner in "
               "SandboxFusion either) are not supported)",
               name, names);
    return NULL;
}

/* SandboxFusion's rust runner for /run_code: `rustc FILE -o test`, a debug build of edition
 * 2015, so an arithmetic overflow panics (exit status 101) where the table's optimised
 * row (-O --edition 2021, judges' way) wraps; MultiPL-E's HumanEval/129 solution passes one
 * way and fails the other (docs/DATASETS.md). /v1/run keeps the table's row. */
static const struct lang run_code_rust = {
    .name = "rust",
    .source = "main.rs",
    .compile = (const char *const[]){"/usr/bin/rustc", "-o", "main", "main.rs", NULL},
    .run = (const char *const[]){"./main", NULL},
    .toolchain = "/usr/bin/rustc",
    .package = "rustc",
    .compile_cpu = 60,
    .compile_wall = 120,
    .compile_memory_mb = 2048,
};

/* run_code_language(name, err) — what runs a /run_code program: SandboxFusion's own command
 * where it differs in outcome from the table's row (rust), else program_language's. */
static const struct lang *run_code_language(const char *name, struct errbuf *err)
{
    const struct lang *l = program_language(name, err);

    return l && strcmp(l->name, "rust") == 0 ? &run_code_rust : l;
}

/* solution_language(v, t, out, err) — the "language" of a verification: NULL (absent or
 * null: the task's), or a language of the table that t can take; -EINVAL with err saying
 * why not (unknown, or an assert or command task in another language). */
static int solution_language(const json_t *v, const struct task *t, const struct lang **out,
                             struct errbuf *err)
{
    char names[1024];

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

/* run_code_path(path) — a /run_code path in the work directory's terms: SandboxFusion takes
 * absolute paths as they are, and the sandbox's work directory is /work (the program's working
 * directory), so "/work/X" is "X" there; any other path is left for sandbox_dest_valid, which
 * refuses an absolute one (crucible writes and reads nowhere else). */
static const char *run_code_path(const char *path)
{
    return strncmp(path, "/work/", 6) == 0 ? path + 6 : path;
}

/* run_code_path_error(path, why, err) — the 400 of a /run_code path sandbox_dest_valid refused. */
static int run_code_path_error(const char *field, const char *path, const struct errbuf *why,
                               struct errbuf *err)
{
    if (path[0] == '/' && strncmp(path, "/work/", 6) != 0)
        return errbuf_set(err,
                          "%s: '%.200s' is absolute outside /work/: a /run_code path is "
                          "relative to the work directory or absolute under /work/ (where the "
                          "program runs; the sandbox has no other place for files)",
                          field, path);
    return errbuf_set(err, "%s: %s", field, why->msg);
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
        /* b64_only: /run_code's files, which may name absolute paths under /work/ */
        const char *dest = b64_only ? run_code_path(path) : path;
        if (!sandbox_dest_valid(dest, &why))
            return b64_only ? run_code_path_error("files", path, &why, err)
                            : errbuf_set(err, "files: %s", why.msg);
        snprintf(what, sizeof(what), "files['%s']", path);
        if (!(f->path = strdup(dest)))
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

int api_only_keys(const json_t *j, const char *const *allowed, struct errbuf *err)
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

/* pids_check(a, l, what, err) — limits.pids within the server's per-job cap (--max-pids). */
static int pids_check(const struct api *a, const struct sandbox_limits *l, const char *what,
                      struct errbuf *err)
{
    if (l->pids <= a->cfg.max_pids)
        return 0;
    return errbuf_set(err,
                      "%slimits.pids is %llu; this server allows at most %llu per job (its "
                      "operator sets that with 'crucible serve --max-pids N')",
                      what, (unsigned long long)l->pids, (unsigned long long)a->cfg.max_pids);
}

/* build_pids(l, lang) — what a program's sandbox may hold: the limit, at least the build
 * steps' when it compiles, and its init. */
static uint64_t build_pids(const struct sandbox_limits *l, const struct lang *lang)
{
    uint64_t pids = l->pids;

    if (lang && lang->compile && pids < VERIFY_BUILD_PIDS)
        pids = VERIFY_BUILD_PIDS;
    return pids + 1;
}

/* held_mb(bytes) — bytes in whole megabytes, rounded up (a job's reservation). */
static uint64_t held_mb(uint64_t bytes)
{
    return (bytes + (1u << 20) - 1) >> 20;
}

/* output_cap_check(a, it, whose, err) — the output a request (or its task: whose) asks to
 * capture per stream is at most what the server allows (--max-output-kb). */
static int output_cap_check(const struct api *a, const struct item *it, const char *whose,
                            struct errbuf *err)
{
    if (it->limits.output_kb <= a->cfg.max_output_kb)
        return 0;
    return errbuf_set(err,
                      "%slimits.output_kb is %llu; this server captures at most %llu KB per "
                      "stream (crucible serve --max-output-kb)",
                      whose, (unsigned long long)it->limits.output_kb,
                      (unsigned long long)a->cfg.max_output_kb);
}

/* output_reserve_mb(it, compiles) — what the output records of a run (and of its compile
 * step) hold at most while answered: both streams at the cap, RESULT_HELD_FACTOR bytes per
 * captured byte. Part of the job's memory reservation. */
static uint64_t output_reserve_mb(const struct item *it, bool compiles)
{
    uint64_t kb = 2 * it->limits.output_kb;

    if (compiles)
        kb += 2 * (it->limits.output_kb > 1024 ? it->limits.output_kb : 1024);
    return held_mb(kb * 1024 * RESULT_HELD_FACTOR);
}

/* verify_output_mb(it, lang) — output_reserve_mb for a verification's full records: the
 * compile step of the solution's language (lang, or the task's) and the test command. */
static uint64_t verify_output_mb(const struct item *it, const struct lang *lang)
{
    uint64_t kb = it->limits.output_kb > 1024 ? it->limits.output_kb : 1024, records = 0;

    records += (lang ? lang : it->task.lang)->compile != NULL;
    records += it->task.harness == TASK_HARNESS_COMMAND;
    return held_mb(records * 2 * kb * 1024 * RESULT_HELD_FACTOR);
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
        if (task_limits_from_json(v, &it->limits, err) < 0 ||
            pids_check(a, &it->limits, "", err) < 0)
            return -EINVAL;
    }
    if ((v = json_object_get(j, "image")) && !json_is_null(v)) {
        /* A registered name only: a host path would mount any directory of the server. */
        if (!json_is_string(v))
            return errbuf_set(err, "'image' must be a string naming a registered image");
        const char *name = json_string_value(v);
        if (it->parse_on_loop) { /* no I/O here: a stored image is the api worker's to find */
            if (!(it->img = image_registry_find_registered(a->cfg.images, name)))
                return -EWOULDBLOCK;
        } else if (!(it->img = image_registry_find(a->cfg.images, name, err))) {
            return -EINVAL;
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
        it->deadline_s = d;
    }
    it->job.memory_mb = it->limits.memory_mb;
    it->job.pids = build_pids(&it->limits, NULL);
    return 0;
}

/* writable_root_field(j, l, err) — a request's "writable_root" (true or false) over the
 * flag in *l (the defaults', or the task's); absent or null leaves it. 0 or -EINVAL. */
static int writable_root_field(const json_t *j, struct sandbox_limits *l, struct errbuf *err)
{
    const json_t *v = json_object_get(j, "writable_root");

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return errbuf_set(err, "'writable_root' must be true or false");
    l->writable_root = json_is_true(v);
    return 0;
}

/* fork_server_field(a, j, it, err) — "fork_server": whether the item's Python runs may be
 * jobs of the server's fork server (true, the default) or all go cold (false). */
static int fork_server_field(const struct api *a, const json_t *j, struct item *it,
                             struct errbuf *err)
{
    const json_t *v = json_object_get(j, "fork_server");

    it->vo.pyserver = a->cfg.pyserver;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return errbuf_set(err, "'fork_server' must be true or false");
    if (!json_is_true(v))
        it->vo.pyserver = NULL;
    return 0;
}

static int parse_run(struct api *a, const json_t *j, struct item *it, bool in_batch,
                     struct errbuf *err)
{
    static const char *const keys[] = {
        "command",  "code",       "language", "stdin", "files",         "limits",      "image",
        "priority", "deadline_s", "kind",     "after", "writable_root", "fork_server", NULL};
    const json_t *cmd = json_object_get(j, "command"), *code = json_object_get(j, "code"), *v;
    int rc;

    if (api_only_keys(j, keys, err) < 0)
        return -EINVAL;
    if (!in_batch && (json_object_get(j, "kind") || json_object_get(j, "after")))
        return errbuf_set(err, "'kind' and 'after' belong to batch items");
    if ((rc = common_fields(a, j, it, err)) < 0)
        return rc == -EWOULDBLOCK ? rc : -EINVAL;
    if (writable_root_field(j, &it->limits, err) < 0)
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
        if (json_object_get(j, "fork_server"))
            return errbuf_set(err, "'fork_server' goes with 'code' in Python, not with 'command'");
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
        if (fork_server_field(a, j, it, err) < 0)
            return -EINVAL;
        if (!(it->code = strndup(json_string_value(code), json_string_length(code))))
            return errbuf_set(err, "out of memory"), -ENOMEM;
        if (it->lang->compile_memory_mb > it->job.memory_mb && it->lang->compile)
            it->job.memory_mb = it->lang->compile_memory_mb;
        it->job.pids = build_pids(&it->limits, it->lang);
    }
    if ((v = json_object_get(j, "stdin")) && !json_is_null(v) &&
        bytes_field(v, "'stdin'", &it->stdin_data, &it->stdin_len, err) < 0)
        return -EINVAL;
    if (files_field(json_object_get(j, "files"), it, false, err) < 0)
        return -EINVAL;
    if (output_cap_check(a, it, "", err) < 0)
        return -EINVAL;
    it->job.memory_mb += output_reserve_mb(it, it->lang && it->lang->compile);
    return files_check(it, it->lang ? it->lang->source : NULL, it->code ? strlen(it->code) : 0,
                       err);
}

static int parse_verify(struct api *a, const json_t *j, struct item *it, bool in_batch,
                        struct errbuf *err)
{
    static const char *const keys[] = {
        "task",       "task_id", "solution", "completion",    "response",    "language",
        "repeats",    "reward",  "model",    "limits",        "image",       "priority",
        "deadline_s", "kind",    "after",    "writable_root", "fork_server", NULL};
    static const char *const forms[] = {"solution", "completion", "response"};
    const json_t *task = json_object_get(j, "task"), *v, *text = NULL;
    const struct lang *lang = NULL; /* the solution's (NULL: the task's) */
    enum solution_kind sk = SOLUTION_PROGRAM;

    if (api_only_keys(j, keys, err) < 0)
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
    if (pids_check(a, &it->task.limits, "task: ", err) < 0)
        return -EINVAL;
    {
        /* The task's image, like a request's, must be one this server registered. */
        struct errbuf why = {{0}};
        if (!image_registry_find(a->cfg.images, it->task.image, &why))
            return errbuf_set(err, "task: %s", why.msg);
    }
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
    it->vo.images = a->cfg.images;
    it->vo.pool = a->cfg.pool;
    it->vo.lang = lang;
    if (fork_server_field(a, j, it, err) < 0)
        return -EINVAL;
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
    if (writable_root_field(j, &it->task.limits, err) < 0)
        return -EINVAL;
    it->limits = it->task.limits;
    if (output_cap_check(a, it, "the task's ", err) < 0)
        return -EINVAL;
    /* The job reserves the most its verification holds at once (verify_memory_mb), and its
     * record's whole outputs: the solution's compile step and a command task's test command
     * (each test keeps 512-byte excerpts only). */
    it->job.memory_mb = verify_memory_mb(&it->task, lang) + verify_output_mb(it, lang);
    it->job.pids = verify_pids(&it->task, lang);
    return 0;
}

/* parse_run_code — SandboxFusion's request; unknown fields are ignored there. */
static int parse_run_code(struct api *a, const json_t *j, struct item *it, struct errbuf *err)
{
    const json_t *v, *e;
    double ct = 10, rt = 10;
    bool own_memory = false;
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
    if (!(it->lang = run_code_language(json_string_value(v), err)))
        return -EINVAL;
    if (fork_server_field(a, j, it, err) < 0) /* crucible's own field */
        return -EINVAL;
    /* SandboxFusion bounds neither timeout (a wall-clock wait); crucible takes up to its
     * longest wall time, a day, and holds CPU time to its own most, an hour, under it. */
    if ((v = json_object_get(j, "compile_timeout")) && !json_is_null(v)) {
        ct = json_number_value(v);
        if (!json_is_number(v) || !(ct >= sandbox_limit_ranges[LIM_WALL].min) ||
            ct > sandbox_limit_ranges[LIM_WALL].max)
            return errbuf_set(err, "'compile_timeout' must be a number of seconds from %g to %g",
                              sandbox_limit_ranges[LIM_WALL].min,
                              sandbox_limit_ranges[LIM_WALL].max);
    }
    if ((v = json_object_get(j, "run_timeout")) && !json_is_null(v)) {
        rt = json_number_value(v);
        if (!json_is_number(v) || !(rt >= sandbox_limit_ranges[LIM_WALL].min) ||
            rt > sandbox_limit_ranges[LIM_WALL].max)
            return errbuf_set(err, "'run_timeout' must be a number of seconds from %g to %g",
                              sandbox_limit_ranges[LIM_WALL].min,
                              sandbox_limit_ranges[LIM_WALL].max);
    }
    it->compile_time = fmin(ct, sandbox_limit_ranges[LIM_CPU].max);
    it->limits.cpu_time = fmin(rt, sandbox_limit_ranges[LIM_CPU].max);
    it->limits.wall_time = rt;
    /* SandboxFusion's programs may serve and call each other on 127.0.0.1 (its isolation
     * tests: a server thread and its client in one program, two such programs at once on the
     * same port): lo is up in the sandbox's own network namespace, where nothing leaves. */
    it->limits.loopback = true;
    /* The client waits compile_timeout + run_timeout + the margin (verl: requests' timeout);
     * the job must start while what it may still need (its compile step, if any, and its run)
     * fits in what is left: later it is answered 504, which verl retries, before the client
     * gives up on it and scores the test failed. */
    if (a->cfg.run_code_margin > 0)
        it->job.deadline = it->owner->t0 + a->cfg.run_code_margin - RUN_CODE_RESERVE_S +
                           (it->lang->compile ? 0 : ct);
    if ((v = json_object_get(j, "memory_limit_MB")) && !json_is_null(v)) {
        double mb = json_number_value(v);
        if (!json_is_number(v))
            return errbuf_set(err, "'memory_limit_MB' must be a number");
        /* SandboxFusion: -1 (its default) and 0 set no limit of the request's own */
        if (mb != -1 && mb != 0) {
            if (mb < sandbox_limit_ranges[LIM_MEMORY].min ||
                mb > sandbox_limit_ranges[LIM_MEMORY].max || mb != floor(mb))
                return errbuf_set(err,
                                  "'memory_limit_MB' must be -1 or 0 (no limit of the "
                                  "request's own) or a whole number from %g to %g",
                                  sandbox_limit_ranges[LIM_MEMORY].min,
                                  sandbox_limit_ranges[LIM_MEMORY].max);
            it->limits.memory_mb = (uint64_t)mb;
            own_memory = true;
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
        it->fetch_as = calloc(json_array_size(v) + 1, sizeof(char *));
        if (!it->fetch || !it->fetch_as)
            return errbuf_set(err, "out of memory"), -ENOMEM;
        json_array_foreach(v, i, e)
        {
            struct errbuf why = {{0}};
            bool again = false;
            char field[40];
            const char *path;
            if (!json_is_string(e))
                return errbuf_set(err, "fetch_files[%zu]: must be a string", i);
            path = run_code_path(json_string_value(e));
            snprintf(field, sizeof(field), "fetch_files[%zu]", i);
            if (!sandbox_dest_valid(path, &why))
                return run_code_path_error(field, json_string_value(e), &why, err);
            /* A path named twice is read once (SandboxFusion answers a map: one entry). */
            for (size_t k = 0; k < it->nfetch && !again; k++)
                again = strcmp(it->fetch[k], path) == 0;
            if (again)
                continue;
            if (it->nfetch == MAX_FETCH)
                return errbuf_set(err,
                                  "'fetch_files' names more than %d distinct paths (the most "
                                  "one request may read back)",
                                  MAX_FETCH);
            if (!(it->fetch[it->nfetch] = strdup(path)) ||
                !(it->fetch_as[it->nfetch] = strdup(json_string_value(e))))
                return errbuf_set(err, "out of memory"), -ENOMEM;
            it->nfetch++;
        }
    }
    it->kind = K_RUNCODE;
    it->job.pids = build_pids(&it->limits, it->lang);
    if (output_cap_check(a, it, "", err) < 0)
        return -EINVAL;
    {
        uint64_t held = output_reserve_mb(it, true) +
                        (it->nfetch ? held_mb((uint64_t)a->cfg.max_fetch_bytes * FETCH_HELD) : 0);
        if (!own_memory) {
            /* No limit of its own: the most this server gives a job without holding back
             * another — a slot's share of the memory running jobs may reserve (--memory /
             * --slots), less what its output holds; never below the server's default. */
            uint64_t share = a->cfg.slot_memory_mb;
            share = share > held ? share - held : 0;
            if (share > (uint64_t)sandbox_limit_ranges[LIM_MEMORY].max)
                share = (uint64_t)sandbox_limit_ranges[LIM_MEMORY].max;
            if (share > it->limits.memory_mb)
                it->limits.memory_mb = share;
        }
        it->job.memory_mb = it->limits.memory_mb;
        if (it->lang->compile && it->lang->compile_memory_mb > it->job.memory_mb)
            it->job.memory_mb = it->lang->compile_memory_mb;
        it->job.memory_mb += held;
    }
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

    result_set_image(res, it->img);
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

/* stream_text(st) — a captured stream as a JSON string: as it is (NUL bytes too) when valid
 * UTF-8, else with the invalid bytes escaped as \xHH (result_text_escape). */
static json_t *stream_text(const struct result_stream *st)
{
    const char *data = st->data ? st->data : "";
    char *esc;
    json_t *j;

    if (util_utf8_valid(data, st->len))
        return json_stringn_nocheck(data, st->len);
    esc = result_text_escape(data, st->len);
    j = esc ? json_string_nocheck(esc) : NULL;
    free(esc);
    return j;
}

/* output_admit(it, rs, n, files, nfiles) — takes what the records rs[0..n) and the fetched
 * files will hold once answered from the server-wide output budget (--output-budget-mb).
 * When the budget cannot take it all, fetched files are dropped (their err says why) and
 * then each stream is cut to its share of what is left, it->limited saying so: the server
 * never holds more than its budget for answers not yet sent. Worker thread. */
static void output_admit(struct item *it, struct result *const *rs, size_t n,
                         struct program_file *files, size_t nfiles)
{
    struct api *a = it->owner->api;
    uint64_t need = 0, avail, share;

    for (size_t i = 0; i < n; i++)
        need += result_held_bytes(rs[i]);
    for (size_t i = 0; i < nfiles; i++)
        need += files[i].data ? (uint64_t)files[i].len * FETCH_HELD : 0;
    pthread_mutex_lock(&a->lock);
    avail = a->cfg.output_budget > a->held ? a->cfg.output_budget - a->held : 0;
    if (need > avail) {
        need = 0;
        for (size_t i = 0; i < nfiles; i++)
            if (files[i].data) {
                free(files[i].data);
                files[i].data = NULL;
                files[i].len = 0;
                snprintf(files[i].err, sizeof(files[i].err),
                         "not returned: the server's output budget is in use by other answers "
                         "(crucible serve --output-budget-mb)");
            }
        share = n ? avail / (RESULT_HELD_FACTOR * 2 * n) : 0;
        for (size_t i = 0; i < n; i++) {
            result_stream_cut(&rs[i]->out, share);
            result_stream_cut(&rs[i]->err, share);
            need += result_held_bytes(rs[i]);
        }
        snprintf(it->limited, sizeof(it->limited),
                 "output cut to %llu bytes per stream: the server holds at most %llu MB of "
                 "answers not yet sent (crucible serve --output-budget-mb), and %llu MB of it "
                 "was in use",
                 (unsigned long long)share, (unsigned long long)(a->cfg.output_budget >> 20),
                 (unsigned long long)((a->cfg.output_budget - avail) >> 20));
    }
    a->held += need;
    it->held += need;
    pthread_mutex_unlock(&a->lock);
}

bool api_output_take(struct api *a, uint64_t bytes)
{
    bool ok;

    pthread_mutex_lock(&a->lock);
    ok = a->cfg.output_budget >= a->held && a->cfg.output_budget - a->held >= bytes;
    if (ok)
        a->held += bytes;
    pthread_mutex_unlock(&a->lock);
    return ok;
}

void api_output_give(struct api *a, uint64_t bytes)
{
    pthread_mutex_lock(&a->lock);
    a->held -= bytes < a->held ? bytes : a->held;
    pthread_mutex_unlock(&a->lock);
}

/* note_limited(it) — the record says when output_admit cut it ("output_limited"). */
static void note_limited(struct item *it)
{
    if (it->limited[0] && it->result)
        json_object_set_new(it->result, "output_limited", json_string(it->limited));
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
    output_admit(it, (struct result *[]){&res}, 1, NULL, 0);
    it->result = result_to_json(&res);
    note_limited(it);
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
        .fetch_max_total = it->owner->api->cfg.max_fetch_bytes,
        .infra_retries = it->vo.infra_retries,
        .pyserver = it->vo.pyserver,
        .pool =
            it->kind == K_RUNCODE ? it->owner->api->cfg.run_code_pool : it->owner->api->cfg.pool,
    };
    struct program_result pr;
    struct errbuf err = {{0}};

    if (!lang_available(it->lang, it->img, &err)) {
        /* a missing toolchain is ours, not the program's (python3 -m pytest would fail as
         * failing tests do): say which package provides it */
        memset(&pr, 0, sizeof(pr));
        result_init(&pr.run);
        result_fail(&pr.run, "%s", err.msg);
    } else {
        program_run(rt, it->img, &spec, &pr);
    }
    if (pr.has_compile)
        output_admit(it, (struct result *[]){&pr.run, &pr.compile}, 2, pr.files, pr.nfiles);
    else
        output_admit(it, (struct result *[]){&pr.run}, 1, pr.files, pr.nfiles);
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
        note_limited(it);
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
            } else if (s->status == RESULT_OUTPUT_LIMIT) {
                /* SandboxFusion reads a program's output only once it has exited: output
                 * past what its pipes buffer blocks the program until run_timeout, and the
                 * answer is TimeLimitExceeded with the output so far. crucible answers the
                 * same status (never "Finished" with return code 0 in a "Failed" answer),
                 * and its message says what happened. */
                st = "TimeLimitExceeded";
                failed = true;
                if (!msg[0])
                    snprintf(msg, sizeof(msg),
                             "%s: the output went over its limit of %llu KiB per stream (it "
                             "was cut there and the program stopped)",
                             k == 0 ? "compile" : "run",
                             (unsigned long long)(k == 0 && it->limits.output_kb < 1024
                                                      ? 1024
                                                      : it->limits.output_kb));
            } else {
                st = "Finished";
                failed |= s->status != RESULT_OK;
            }
            /* SandboxFusion's streams are text: bytes that are not UTF-8 escaped as \xHH (a
             * "s%" of them would fail the whole pack: a null result, the output lost) */
            sj = json_pack("{s:s,s:f,s:o,s:o,s:o}", "status", st, "execution_time", s->wall_time,
                           "return_code",
                           s->status == RESULT_SANDBOX_ERROR || s->status == RESULT_TIMEOUT ||
                                   s->status == RESULT_OUTPUT_LIMIT
                               ? json_null()
                           : s->exit_code >= 0 ? json_integer(s->exit_code)
                                               : json_integer(-s->signal),
                           "stdout", stream_text(&s->out), "stderr", stream_text(&s->err));
            if (k == 0)
                cr = sj;
            else
                rr = sj;
        }
        if (!steps[1] && !sandbox_err)
            failed = true; /* compile failed: no run */
        /* SandboxFusion leaves a file it could not read out of "files"; crucible does too,
         * and says why in "fetch_errors" (path -> message; absent when none failed). */
        json_t *ferrs = json_object();
        for (size_t i = 0; i < pr.nfiles; i++) {
            char *b64;
            /* keyed by the path as the request named it ("/work/out.txt" stays so) */
            const char *key = i < it->nfetch && it->fetch_as && it->fetch_as[i] ? it->fetch_as[i]
                                                                                : pr.files[i].path;
            if (!pr.files[i].data) {
                if (ferrs && key)
                    json_object_set_new(ferrs, key, result_text_json(pr.files[i].err));
                continue;
            }
            b64 = util_base64_encode(pr.files[i].data, pr.files[i].len);
            free(pr.files[i].data); /* one copy at a time */
            pr.files[i].data = NULL;
            if (b64 && key)
                json_object_set_new(files, key, json_string_nocheck(b64));
            else if (ferrs && key)
                json_object_set_new(ferrs, key, json_string("out of memory"));
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
        if (ferrs && json_object_size(ferrs))
            json_object_set_new(o, "fetch_errors", ferrs);
        else
            json_decref(ferrs);
        it->result = o;
        note_limited(it);
        it->status = sandbox_err ? "SandboxError" : failed ? "Failed" : "Success";
        it->infra = sandbox_err;
    }
    program_result_release(&pr);
}

static void run_verify(struct item *it, const struct sandbox_runtime *rt)
{
    struct verify_result vr;

    verify_run(rt, &it->task, it->program, &it->vo, &vr);
    {
        struct result *full[2];
        size_t n = 0;
        if (vr.has_compile)
            full[n++] = &vr.compile;
        if (vr.has_command)
            full[n++] = &vr.command;
        output_admit(it, full, n, NULL, 0);
    }
    it->result = verify_result_to_json(&it->task, &vr);
    note_limited(it);
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

/* dump_line(j, &len) — j's compact JSON and a newline, in a buffer of exactly that size
 * (json_dumps grows its buffer by doubling and then copies it: three times a big record's
 * text at once). NULL on failure. j is left alone. */
static char *dump_line(const json_t *j, size_t *len)
{
    const size_t flags = JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9);
    size_t n = j ? json_dumpb(j, NULL, 0, flags) : 0;
    char *text = n ? malloc(n + 2) : NULL;

    if (!text || json_dumpb(j, text, n, flags) != n) {
        free(text);
        return NULL;
    }
    text[n] = '\n';
    text[n + 1] = '\0';
    *len = n + 1;
    return text;
}

static void stream_line(struct owner *o, json_t *line)
{
    size_t len;
    char *text = dump_line(line, &len);

    json_decref(line);
    if (text && o->r)
        http_stream_write(o->r, text, len);
    free(text);
}

static void submit_item(struct owner *o, struct item *it);

/* batch_feed(o) — starts the batch's ready items while fewer than its window run, unless
 * the client is behind on the stream (more than --stream-buffer-mb unsent): then the batch
 * pauses, and api_tick resumes it when the client has read (or cancels it). */
static void batch_feed(struct owner *o)
{
    struct api *a = o->api;

    while (o->r && !o->paused && o->rhead < o->rtail && o->outstanding < o->window) {
        if (http_stream_pending(o->r) > a->cfg.stream_buffer) {
            o->paused = true;
            o->paused_at = util_now();
            o->paused_pending = http_stream_pending(o->r);
            o->pprev = NULL;
            o->pnext = a->paused;
            if (a->paused)
                a->paused->pprev = o;
            a->paused = o;
            metrics_add(a->m, "batches_paused_total",
                        "times a batch stopped starting items: its client was behind on the "
                        "stream",
                        "", 1);
            return;
        }
        struct item *it = &o->items[o->ready[o->rhead++]];
        if (!it->submitted && !it->finished)
            submit_item(o, it);
    }
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
        if (--it->waiting == 0)
            o->ready[o->rtail++] = k;
    }
    batch_feed(o);
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
        /* The deadline_s the request gave, as given: a difference of timestamps would show
         * how long its body took to parse too (0.301 s seen under ASan); /run_code's own
         * deadline is the one counted from the request's arrival. A batch item submitted only when
         * its dependencies finished may have expired before it was submitted. */
        double within = it->deadline_s > 0 ? it->deadline_s : j->deadline - o->t0;
        snprintf(why, sizeof(why),
                 "not started within its deadline (%.3g s after the request arrived)",
                 within > 0 ? within : 0.0);
        not_run_result(it, why);
        metrics_add(a->m, "jobs_expired_total", HELP_EXPIRED, "", 1);
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
    if (it->infra) {
        metrics_add(a->m, "infra_errors_total", HELP_INFRA, "", 1);
        recent_add(a->recent, o->route, 0, it->status,
                   json_string_value(json_object_get(it->result, "message")));
    }
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
        if (o->r && it->kind == K_RUNCODE && j->outcome == JOB_EXPIRED) {
            /* a gateway's timeout: SandboxFusion clients (verl) retry 504, and only 504 */
            count_request(a, o->route, 504, o->t0);
            http_respond_error(o->r, 504, "not_started",
                               "no slot was free in time to run the code within the client's "
                               "budget (compile_timeout + run_timeout + %g s); retry",
                               a->cfg.run_code_margin);
        } else if (o->r) {
            /* the text, then the tree freed before the HTTP layer takes its copy */
            size_t len;
            char *text = dump_line(it->result, &len);
            count_request(a, o->route, 200, o->t0);
            json_decref(it->result);
            it->result = NULL;
            if (text)
                http_respond(o->r, 200, "application/json", text, len, NULL, NULL);
            else
                http_respond_error(o->r, 500, "internal", "out of memory");
            free(text);
        }
    } else {
        if (o->r && j->outcome != JOB_CANCELLED) {
            /* the line takes the record (no second tree); the stream's bound counts it now */
            json_t *line = json_pack("{s:i,s:o}", "index", (int)it->index, "result", it->result);
            it->result = NULL;
            stream_line(o, line);
        }
        output_release(it);
        batch_progress(o, it->index);
    }
    owner_maybe_free(o);
}

/* owner_closed — the client went away (aborted) or its answer went out. */
static void owner_closed(void *ctx, bool aborted)
{
    struct owner *o = ctx;

    o->r = NULL;
    owner_unpause(o);
    if (aborted) {
        for (size_t i = 0; i < o->n; i++) {
            struct item *it = &o->items[i];
            if (it->submitted && !it->finished) {
                sched_cancel(o->api->sched, &it->job);
            } else if (!it->submitted && !it->finished) {
                /* never started (a batch's window, or waiting on an item): cancelled too */
                char labels[64];
                snprintf(labels, sizeof(labels), "kind=\"%s\",status=\"cancelled\"",
                         kind_names[it->kind]);
                metrics_add(o->api->m, "jobs_completed_total",
                            "jobs finished, by kind and verdict or status", labels, 1);
            }
        }
        if (o->batch && o->finished < o->n) {
            metrics_add(o->api->m, "batches_cancelled_total",
                        "batches whose client went away before the last item", "", 1);
            api_log(o->api, "batch_cancelled",
                    json_pack("{s:i,s:i,s:s}", "items", (int)o->n, "finished", (int)o->finished,
                              "reason",
                              o->cancel_reason ? o->cancel_reason : "the client went away"));
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
    o->ready = calloc(n ? n : 1, sizeof(*o->ready));
    if (!o->items || !o->ready) {
        free(o->items);
        free(o->ready);
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

/* items_fit(a, r, route, o) — every item of o fits one of this server's slots (memory,
 * processes); else r is answered 400 naming the first that does not, and o discarded. */
static bool items_fit(struct api *a, struct http_request *r, const char *route, struct owner *o)
{
    struct sched_stats st;

    sched_stats(a->sched, &st);
    for (size_t i = 0; i < o->n; i++)
        if (!sched_fits(a->sched, &o->items[i].job)) {
            const struct job *j = &o->items[i].job;
            char who[40];
            snprintf(who, sizeof(who), o->batch ? "items[%zu]:" : "the request", i);
            if (j->memory_mb > st.memory_mb)
                fail(a, r, route, 400, "bad_request",
                     "%s needs %llu MB of memory; this server runs jobs of at most %llu MB", who,
                     (unsigned long long)j->memory_mb, (unsigned long long)st.memory_mb);
            else
                fail(a, r, route, 400, "bad_request",
                     "%s needs %llu processes; this server runs jobs of at most %llu (crucible "
                     "serve --pids)",
                     who, (unsigned long long)j->pids, (unsigned long long)st.pids);
            owner_discard(o);
            return false;
        }
    return true;
}

/* check_only(a, r, route, o) — POST /v1/batch?check=1: the batch was parsed and fits; it is
 * answered so, and nothing runs (a gateway checks a batch before it splits it: cluster/). */
static void check_only(struct api *a, struct http_request *r, const char *route, struct owner *o)
{
    char body[96];

    if (!items_fit(a, r, route, o))
        return;
    snprintf(body, sizeof(body), "{\"valid\":true,\"items\":%zu}", o->n);
    count_request(a, route, 200, o->t0);
    http_respond(r, 200, "application/json", body, strlen(body), NULL, NULL);
    owner_discard(o);
}

/* admit(a, r, route, o) — reserves room for o's items and submits those that can start. */
static void admit(struct api *a, struct http_request *r, const char *route, struct owner *o)
{
    struct sched_stats st;

    if (!items_fit(a, r, route, o))
        return;
    sched_stats(a->sched, &st);
    if (!o->batch && o->items[0].kind == K_RUNCODE) {
        /* /run_code never answers 429 (SandboxFusion's clients score it a failed test): a
         * full queue waits, bounded by the job's start deadline (504) and the connections */
        if (sched_reserve(a->sched, 1) < 0)
            sched_reserve_always(a->sched, 1);
    } else if (sched_reserve(a->sched, o->n) < 0) {
        metrics_add(a->m, "rejected_overload_total", HELP_OVERLOAD, "", 1);
        fail_with(a, r, route, 429, "Retry-After", "1", "overloaded",
                  "the queue is full; retry later");
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
    if (!o->batch) {
        submit_item(o, &o->items[0]);
        return;
    }
    /* A batch runs a window of items at a time (twice the slots: the workers stay busy),
     * so that a client behind on the stream holds back what starts next. */
    o->window = 2 * (size_t)(st.slots ? st.slots : 1);
    for (size_t i = 0; i < o->n; i++)
        if (o->items[i].waiting == 0)
            o->ready[o->rtail++] = i;
    batch_feed(o);
    if (o->n == 0)
        http_stream_end(r);
}

/* ---- parsing a request body (api worker threads) ------------------------------------- */

/* A request body on its way through an api worker: taken from the request on the loop,
 * parsed there into an owner with its items (or an error answer), handed back to the loop
 * to be admitted or answered. Nothing the worker touches belongs to the loop. */
struct parsing {
    struct offload_work work; /* first member: a struct offload_work * is a struct parsing * */
    struct api *a;
    struct http_request *r; /* loop thread only; NULL once the client has gone */
    const char *route;
    int kind; /* enum kind, or ROUTE_BATCH */
    char *body;
    size_t len;
    double t0;
    bool on_loop; /* parsed on the loop thread (PARSE_ON_LOOP_MAX) */
    /* Set by the parse. */
    bool needs_io;    /* on_loop only: the parse needs I/O, so an api worker does it */
    struct owner *o;  /* parsed, ready to admit (status 0) */
    unsigned status;  /* else the error answer */
    const char *code; /* "bad_request", "not_found", "internal" */
    char msg[768];
};

enum { ROUTE_BATCH = -3 };

/* parsing_fail(p, status, code, fmt...) — the worker's result is an error answer. */
static void parsing_fail(struct parsing *p, unsigned status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void parsing_fail(struct parsing *p, unsigned status, const char *code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(p->msg, sizeof(p->msg), fmt, ap);
    va_end(ap);
    p->status = status;
    p->code = code;
}

size_t api_json_depth(const char *text, size_t len)
{
    size_t depth = 0, deepest = 0;
    bool in_string = false;

    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest)
                deepest = depth;
        } else if ((c == ']' || c == '}') && depth) {
            depth--;
        }
    }
    return deepest;
}

/* parse_body(p) — the body as a JSON object, or NULL with p's error answer set. Frees the
 * body text (the tree holds what is needed). Worker thread. */
static json_t *parse_body(struct parsing *p)
{
    json_error_t je;
    json_t *j;

    if (api_json_depth(p->body, p->len) > API_JSON_DEPTH_MAX) {
        parsing_fail(p, 400, "bad_request",
                     "the body nests arrays and objects deeper than %d levels", API_JSON_DEPTH_MAX);
        return NULL;
    }
    j = json_loadb(p->body, p->len, JSON_REJECT_DUPLICATES, &je);
    if (!p->on_loop) { /* on the loop it is kept for an api worker's parse (needs_io) */
        free(p->body);
        p->body = NULL;
    }
    if (!j) {
        parsing_fail(p, 400, "bad_request", "the body is not valid JSON: %s (line %d, column %d)",
                     je.text, je.line, je.column);
        return NULL;
    }
    if (!json_is_object(j)) {
        json_decref(j);
        parsing_fail(p, 400, "bad_request", "the body must be a JSON object");
        return NULL;
    }
    return j;
}

/* parse_single(p) — the one item of /v1/run, /v1/verify or /run_code. Worker thread. */
static void parse_single(struct parsing *p)
{
    json_t *j = parse_body(p);
    struct errbuf err = {{0}};
    struct api *a = p->a;
    struct owner *o;
    int rc;

    if (!j)
        return;
    o = owner_new(a, NULL, p->route, 1);
    if (!o) {
        json_decref(j);
        parsing_fail(p, 500, "internal", "out of memory");
        return;
    }
    o->t0 = p->t0; /* deadlines count from the request's arrival, not from its parsing */
    o->items[0].parse_on_loop = p->on_loop;
    if (p->kind == K_VERIFY)
        rc = parse_verify(a, j, &o->items[0], false, &err);
    else if (p->kind == K_RUNCODE)
        rc = parse_run_code(a, j, &o->items[0], &err);
    else
        rc = parse_run(a, j, &o->items[0], false, &err);
    json_decref(j);
    if (rc == -EWOULDBLOCK) { /* on the loop: an api worker parses it again */
        p->needs_io = true;
        owner_discard(o);
        return;
    }
    if (rc < 0) {
        parsing_fail(p,
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
    p->o = o;
}

/* parse_batch(p) — the items of /v1/batch. Worker thread. */
static void parse_batch(struct parsing *p)
{
    json_t *j = parse_body(p), *items, *v;
    struct errbuf err = {{0}};
    struct api *a = p->a;
    struct item common;
    struct owner *o;
    size_t n, i, *seen_by;

    if (!j)
        return;
    items = json_object_get(j, "items");
    {
        static const char *const keys[] = {"items", "priority", "deadline_s", NULL};
        if (api_only_keys(j, keys, &err) < 0) {
            parsing_fail(p, 400, "bad_request", "%s", err.msg);
            json_decref(j);
            return;
        }
    }
    n = json_is_array(items) ? json_array_size(items) : 0;
    if (!json_is_array(items) || n > a->cfg.max_batch) {
        parsing_fail(p, 400, "bad_request", "'items' must be an array of at most %zu items",
                     a->cfg.max_batch);
        json_decref(j);
        return;
    }
    memset(&common, 0, sizeof(common));
    if (common_fields(a, j, &common, &err) < 0) {
        parsing_fail(p, 400, "bad_request", "%s", err.msg);
        json_decref(j);
        return;
    }
    o = owner_new(a, NULL, p->route, n);
    if (!o) {
        json_decref(j);
        parsing_fail(p, 500, "internal", "out of memory");
        return;
    }
    o->t0 = p->t0; /* deadlines count from the request's arrival, not from its parsing */
    o->batch = true;
    seen_by = calloc(n + 1, sizeof(*seen_by));
    if (!seen_by) {
        json_decref(j);
        owner_discard(o);
        parsing_fail(p, 500, "internal", "out of memory");
        return;
    }
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
            if (!json_object_get(v, "deadline_s")) {
                it->job.deadline = common.job.deadline;
                it->deadline_s = common.deadline_s;
            }
            after = json_object_get(v, "after");
            if (after && !json_is_array(after)) {
                errbuf_set(&err, "'after' must be an array of earlier item indices");
                rc = -EINVAL;
            } else if (after && json_array_size(after)) {
                size_t most = json_array_size(after) < i ? json_array_size(after) : i;
                it->after = calloc(most + 1, sizeof(size_t));
                json_array_foreach(after, k, e)
                {
                    json_int_t x = json_is_integer(e) ? json_integer_value(e) : -1;
                    bool seen = false;
                    if (x < 0 || (size_t)x >= i) {
                        errbuf_set(&err,
                                   "after[%zu] must be the index of an earlier item (0 to %zu), "
                                   "not %s",
                                   k, i ? i - 1 : 0,
                                   !json_is_integer(e) ? "a non-integer"
                                   : (size_t)x == i    ? "the item itself"
                                   : x < 0             ? "a negative number"
                                                       : "a later item");
                        rc = -EINVAL;
                        break;
                    }
                    /* a repeated index is one dependency: the item waits for one completion
                     * (seen[x] holds the last item that named x, plus one) */
                    seen = seen_by[x] == i + 1;
                    seen_by[x] = i + 1;
                    if (it->after && !seen)
                        it->after[it->nafter++] = (size_t)x;
                }
                it->waiting = it->nafter;
            }
        }
        if (rc < 0) {
            parsing_fail(p, 400, "bad_request", "items[%zu]: %s", i, err.msg);
            json_decref(j);
            free(seen_by);
            owner_discard(o);
            return;
        }
    }
    json_decref(j);
    free(seen_by);
    p->o = o;
}

static void parsing_run(struct offload_work *w)
{
    struct parsing *p = (struct parsing *)w;

    if (p->kind == ROUTE_BATCH)
        parse_batch(p);
    else
        parse_single(p);
}

/* parsing_closed — the client left while its body was with an api worker. Loop thread. */
static void parsing_closed(void *ctx, bool aborted)
{
    struct parsing *p = ctx;

    (void)aborted;
    p->r = NULL;
    offload_cancel(p->a->cfg.offload, &p->work);
}

/* query_true(r, key) — the query names key without "0" or "false" as its value. */
static bool query_true(const struct http_request *r, const char *key)
{
    const char *v = http_query(r, key);

    return v && strcmp(v, "0") != 0 && strcmp(v, "false") != 0;
}

/* parsing_done — back on the loop: admit the parsed owner, give the error answer, or (the
 * client gone) discard what was parsed. */
static void parsing_done(struct offload_work *w)
{
    struct parsing *p = (struct parsing *)w;
    struct http_request *r = p->r;
    struct api *a = p->a;

    if (r)
        http_on_close(r, NULL, NULL);
    if (!r || w->cancelled) {
        if (p->o)
            owner_discard(p->o);
        if (r) /* the api workers stopped before parsing it: the server is stopping */
            fail(a, r, p->route, 503, "internal", "the server is stopping");
    } else if (!p->o) {
        fail(a, r, p->route, p->status ? p->status : 500, p->code ? p->code : "internal", "%s",
             p->status ? p->msg : "the request was not parsed");
    } else {
        p->o->r = r;
        p->o->t0 = p->t0;
        p->o->body_bytes = p->len;
        if (p->kind == ROUTE_BATCH && query_true(r, "check"))
            check_only(a, r, p->route, p->o);
        else
            admit(a, r, p->route, p->o);
    }
    free(p->body);
    free(p);
}

/* add_name(arr, name) — image_registry_list's callback for /healthz. */
static void add_name(void *arr, const char *name)
{
    json_array_append_new(arr, json_string(name));
}

/* parse_here(p) — a small /v1/run or /run_code body parsed on the loop thread
 * (PARSE_ON_LOOP_MAX): true when that settled it (p->o, or the error answer), false when an
 * api worker must parse it: a larger body, a verification, a batch, or a stored image. */
static bool parse_here(struct parsing *p)
{
    if ((p->kind != K_RUN && p->kind != K_RUNCODE) || p->len > PARSE_ON_LOOP_MAX)
        return false;
    p->on_loop = true;
    parse_single(p);
    p->on_loop = false;
    if (!p->needs_io)
        return true;
    p->needs_io = false;
    return false;
}

/* route_parse(a, r, route, kind) — hands the body to an api worker, or parses a small one
 * here (PARSE_ON_LOOP_MAX); the answer comes from parsing_done. Loop thread. */
static void route_parse(struct api *a, struct http_request *r, const char *route, int kind)
{
    struct parsing *p = calloc(1, sizeof(*p));

    if (!p) {
        fail(a, r, route, 500, "internal", "out of memory");
        return;
    }
    p->a = a;
    p->r = r;
    p->route = route;
    p->kind = kind;
    p->t0 = util_now();
    p->body = http_body_take(r, &p->len);
    if (!p->body && !(p->body = calloc(1, 1))) {
        free(p);
        fail(a, r, route, 500, "internal", "out of memory");
        return;
    }
    p->work.run = parsing_run;
    p->work.done = parsing_done;
    p->work.cost = p->len;
    if (parse_here(p)) {
        parsing_done(&p->work);
        return;
    }
    http_on_close(r, parsing_closed, p);
    offload_submit(a->cfg.offload, &p->work);
}

static void route_healthz(struct api *a, struct http_request *r)
{
    struct sched_stats st;
    size_t q = 0;

    sched_stats(a->sched, &st);
    for (int p = 0; p < PRIO_COUNT; p++)
        q += st.queued[p];
    count_request(a, "/healthz", 200, 0);
    if (a->cfg.gateway) { /* a gateway is healthy while it runs; what it can do is said */
        struct gateway_stats g;
        gateway_stats(a->cfg.gateway, &g);
        http_respond_json(r, 200,
                          json_pack("{s:s,s:s,s:b,s:I,s:I}", "status", "ok", "role", "gateway",
                                    "broker", g.broker_up, "workers", (json_int_t)g.workers_alive,
                                    "inflight", (json_int_t)g.inflight));
        return;
    }
    {
        json_t *h =
            json_pack("{s:s,s:i,s:i,s:i,s:I}", "status", "ok", "slots", (int)st.slots, "running",
                      (int)st.running, "queued", (int)q, "job_memory_mb", (json_int_t)st.memory_mb);
        json_t *images = http_query(r, "images") ? json_array() : NULL;
        if (images) { /* asked for (a cluster worker does): the image store is read */
            image_registry_list(a->cfg.images, add_name, images);
            json_object_set_new(h, "images", images);
        }
        http_respond_json(r, 200, h);
    }
}

/* gateway_metrics(a) — cluster mode's figures: the broker, the streams, the workers. */
static void gateway_metrics(struct api *a)
{
    struct gateway_stats g;
    struct forward_stats fs;

    gateway_stats(a->cfg.gateway, &g);
    metrics_set(a->m, "cluster_broker_up", "1 while the gateway reaches the broker", "",
                g.broker_up);
    metrics_set(a->m, "cluster_workers", "workers with a live heartbeat (-1: unknown)", "",
                (double)g.workers_alive);
    metrics_set(a->m, "cluster_inflight", "requests admitted and not yet answered", "",
                (double)g.inflight);
    metrics_set(a->m, "cluster_inflight_bytes", "their request bodies, held until answered", "",
                (double)g.inflight_bytes);
    metrics_set_total(a->m, "cluster_admitted_total", "job requests put on the broker", "",
                      (double)g.admitted);
    metrics_set_total(a->m, "cluster_answered_total", "job requests answered by a worker", "",
                      (double)g.answered);
    metrics_set_total(a->m, "cluster_duplicate_answers_total",
                      "answers dropped: the job was answered already (run twice after a takeover "
                      "or a resend)",
                      "", (double)g.duplicates);
    metrics_set_total(a->m, "cluster_resent_total",
                      "jobs put on the broker again (it lost them, or an add failed)", "",
                      (double)g.resent);
    metrics_set_total(a->m, "cluster_replayed_total",
                      "job requests answered with the answer kept under their Idempotency-Key", "",
                      (double)g.replayed);
    metrics_set_total(a->m, "cluster_attached_total",
                      "job requests whose Idempotency-Key was admitted before: they waited for "
                      "that job instead of running again",
                      "", (double)g.attached);
    metrics_set_total(a->m, "cluster_sessions_lost_total",
                      "session requests answered 410: the session's worker had stopped", "",
                      (double)g.sessions_lost);
    metrics_set_total(a->m, "cluster_refused_total", "job requests refused: 429 busy",
                      "reason=\"busy\"", (double)g.refused_busy);
    metrics_set_total(a->m, "cluster_refused_total",
                      "job requests refused: 503 broker or workers down", "reason=\"unavailable\"",
                      (double)g.refused_down);
    for (int p = 0; p < PRIO_COUNT; p++) {
        char labels[48];
        snprintf(labels, sizeof(labels), "priority=\"%s\"",
                 job_priority_name((enum job_priority)p));
        metrics_set(a->m, "cluster_stream_depth", "entries in a job stream (waiting or running)",
                    labels, (double)g.depth[p]);
        metrics_set(a->m, "cluster_stream_pending",
                    "jobs of a stream delivered to a worker, not yet acknowledged", labels,
                    (double)g.pending[p]);
    }
    metrics_set(a->m, "cluster_dead_letters",
                "entries of crucible:dead (jobs that took down workers)", "", (double)g.dead);
    metrics_set(a->m, "cluster_slots", "the slots the live workers' heartbeats announce", "",
                (double)g.slots_alive);
    forward_stats(a->fw, &fs);
    metrics_set_total(a->m, "cluster_batches_total",
                      "batches split across the workers (their stream began)", "",
                      (double)fs.batches);
    metrics_set_total(a->m, "cluster_batches_refused_total",
                      "batches answered with an error before any item ran (a 400 of the check)", "",
                      (double)fs.refused);
    metrics_set_total(a->m, "cluster_batch_items_total", "batch items sent to the workers", "",
                      (double)fs.items);
    metrics_set_total(a->m, "cluster_batch_items_skipped_total",
                      "batch items skipped because an item they come after failed", "",
                      (double)fs.skipped);
    metrics_set_total(a->m, "cluster_batches_cancelled_total",
                      "batches whose client went away before the last line", "",
                      (double)fs.cancelled);
}

/* refresh_gauges(a) — the gauges and copied counters read at the moment of an answer
 * (/metrics, /v1/stats). */
static void refresh_gauges(struct api *a)
{
    struct sched_stats st;

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
    metrics_set(a->m, "pids_reserved", "processes reserved by running jobs", "",
                (double)st.pids_used);
    metrics_set(a->m, "pids_budget", "processes running jobs may reserve in all (--pids)", "",
                (double)st.pids);
    pthread_mutex_lock(&a->lock);
    metrics_set(a->m, "output_held_bytes",
                "output records held for answers not yet sent (of --output-budget-mb)", "",
                (double)a->held);
    pthread_mutex_unlock(&a->lock);
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
    if (a->cfg.pyserver) {
        struct pyserver_stats ps;
        pyserver_stats(a->cfg.pyserver, &ps);
        metrics_set(
            a->m, "fork_server_running",
            "1 while the Python fork server runs (started by the first Python run that can use it)",
            "", ps.running);
        metrics_set_total(a->m, "fork_server_starts_total", "Python fork servers started", "",
                          (double)ps.starts);
        metrics_set_total(a->m, "fork_server_failures_total",
                          "Python fork servers that failed to make a job (their run went cold)", "",
                          (double)ps.failures);
    }
    if (a->cfg.gateway)
        gateway_metrics(a);
}

static void route_metrics(struct api *a, struct http_request *r)
{
    char *text;

    refresh_gauges(a);
    count_request(a, "/metrics", 200, 0);
    text = metrics_render(a->m);
    if (!text) {
        fail(a, r, "/metrics", 500, "internal", "out of memory");
        return;
    }
    http_respond(r, 200, "text/plain; version=0.0.4; charset=utf-8", text, strlen(text), NULL,
                 NULL);
    free(text);
}

/* route_stats(a, r) — GET /v1/stats: the figures of /metrics as JSON (metrics_json), the
 * recent failures, and what the dashboard needs to know of the server. */
static void route_stats(struct api *a, struct http_request *r)
{
    json_t *j;

    refresh_gauges(a);
    count_request(a, "/v1/stats", 200, 0);
    j = json_pack("{s:s,s:s,s:f,s:f,s:b,s:b,s:o,s:o}", "role", a->cfg.gateway ? "gateway" : "node",
                  "version", CRUCIBLE_VERSION, "time", (double)time(NULL), "uptime_s",
                  util_now() - a->started, "library", a->cfg.store != NULL, "charts",
                  dashboard_has_charts() != 0, "metrics", metrics_json(a->m), "recent_failures",
                  recent_json(a->recent));
    if (!j) {
        fail(a, r, "/v1/stats", 500, "internal", "out of memory");
        return;
    }
    http_respond_json(r, 200, j);
}

/* route_asset(a, r, asset) — one of the dashboard's files. The page may show text from
 * requests (failure messages): its policy allows scripts and styles of this server only. */
static void route_asset(struct api *a, struct http_request *r, const struct dashboard_asset *f)
{
    count_request(a, "/ui", 200, 0);
    http_respond(r, 200, f->content_type, f->data, f->len, "Content-Security-Policy",
                 "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                 "frame-ancestors 'none'");
}

/* authorized(a, r) — the bearer token, compared in constant time. */
static bool authorized(const struct api *a, const struct http_request *r)
{
    const char *h = http_header(r, "Authorization");
    size_t tl, hl;
    unsigned char diff = 0;

    if (!a->cfg.token)
        return true;
    if (!h || strncasecmp(h, "Bearer ", 7) != 0) /* the scheme is case-insensitive */
        return false;
    h += 7;
    tl = strlen(a->cfg.token);
    hl = strlen(h);
    for (size_t i = 0; i < tl; i++)
        diff |= (unsigned char)(a->cfg.token[i] ^ (i < hl ? h[i] : 0));
    return diff == 0 && hl == tl;
}

/* The routes outside /v1/tasks (api_tasks.c routes those). kind: -1 healthz (open without
 * a token), -2 metrics, -4 stats, ROUTE_BATCH (-3), else enum kind. The dashboard's files
 * (dashboard_asset) are open without a token too: they hold no data. */
static const struct route {
    const char *path, *method;
    int kind;
} routes[] = {
    {"/v1/run", "POST", K_RUN},
    {"/v1/verify", "POST", K_VERIFY},
    {"/v1/batch", "POST", ROUTE_BATCH},
    {"/run_code", "POST", K_RUNCODE},
    {"/healthz", "GET", -1},
    {"/metrics", "GET", -2},
    {"/v1/stats", "GET", -4},
};

static bool is_tasks_path(const char *path)
{
    return strncmp(path, "/v1/tasks", 9) == 0 && (path[9] == '\0' || path[9] == '/');
}

/* route_find(path) — the route of a path outside /v1/tasks, or NULL. */
static const struct route *route_find(const char *path)
{
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        if (strcmp(path, routes[i].path) == 0)
            return &routes[i];
    return NULL;
}

/* refuse(a, r) — answers 401, 404 or 405 when r may not go on (in that order: without the
 * token nothing about the routes is told); true when it answered. A 401 carries the bearer
 * challenge of RFC 6750 (error="invalid_token" when a bearer token was given and is wrong;
 * none when no credentials were, or another scheme), a 405 the methods the route takes. */
static bool refuse(struct api *a, struct http_request *r)
{
    const char *path = http_path(r), *method = http_method(r);
    const char *auth = http_header(r, "Authorization");
    const struct route *rt = route_find(path);
    const struct dashboard_asset *asset = dashboard_asset(path);

    if (asset) {
        if (strcmp(method, "GET") == 0)
            return false;
        fail_with(a, r, "/ui", 405, "Allow", "GET", "method_not_allowed", "%s wants GET, not %s",
                  path, method);
        return true;
    }
    if (!(rt && rt->kind == -1) && !authorized(a, r)) {
        bool bearer = auth && strncasecmp(auth, "Bearer ", 7) == 0;
        fail_with(a, r,
                  rt                        ? rt->path
                  : is_tasks_path(path)     ? "/v1/tasks"
                  : api_sessions_path(path) ? "/v1/sessions"
                                            : "other",
                  401, "WWW-Authenticate",
                  bearer ? "Bearer realm=\"crucible\", error=\"invalid_token\""
                         : "Bearer realm=\"crucible\"",
                  "unauthorized", "missing or wrong bearer token (Authorization: Bearer ...)");
        return true;
    }
    if (is_tasks_path(path) || (a->cfg.sessions && api_sessions_path(path)))
        return false; /* api_tasks_route and api_sessions_route answer their own 404 and 405 */
    if (a->cfg.gateway && api_sessions_path(path))
        return false; /* forward_session answers */
    if (!rt) {
        fail(a, r, "other", 404, "not_found", "no route %s %s (see docs/API.md)", method, path);
        return true;
    }
    if (strcmp(method, rt->method) != 0) {
        fail_with(a, r, rt->path, 405, "Allow", rt->method, "method_not_allowed",
                  "%s wants %s, not %s", rt->path, rt->method, method);
        return true;
    }
    return false;
}

void api_precheck(void *arg, struct http_request *r)
{
    struct api *a = arg;
    char route[48];
    int st;

    if (refuse(a, r) || !a->cfg.sessions)
        return;
    if ((st = api_sessions_precheck(a->cfg.sessions, r, route, sizeof(route))) > 0)
        count_request(a, route, (unsigned)st, 0);
}

/* tasks_answered — a task-library answer given from an api worker's result went out. */
static void tasks_answered(void *ctx, const char *route, unsigned status, double t0)
{
    count_request(ctx, route, status, t0);
}

void api_handle(void *arg, struct http_request *r)
{
    struct api *a = arg;
    const char *path = http_path(r);
    const struct route *rt = route_find(path);
    const struct dashboard_asset *asset = dashboard_asset(path);
    char route[32];
    int st;

    if (refuse(a, r)) /* api_precheck refused it already, unless it was not installed */
        return;
    if (asset) {
        route_asset(a, r, asset);
        return;
    }
    if (is_tasks_path(path)) {
        st = api_tasks_route(a->cfg.store, a->cfg.offload, r, route, sizeof(route), tasks_answered,
                             a);
        if (st > 0)
            count_request(a, route, (unsigned)st, 0);
        return;
    }
    if (a->cfg.gateway && api_sessions_path(path)) {
        const char *sroute;
        if ((st = (int)forward_session(a->fw, r, &sroute)) > 0)
            count_request(a, sroute, (unsigned)st, 0);
        return;
    }
    if (a->cfg.sessions && api_sessions_path(path)) {
        char sroute[48];
        st = api_sessions_route(a->cfg.sessions, r, sroute, sizeof(sroute), tasks_answered, a);
        if (st > 0)
            count_request(a, sroute, (unsigned)st, 0);
        return;
    }
    switch (rt->kind) {
    case -1:
        route_healthz(a, r);
        return;
    case -2:
        route_metrics(a, r);
        return;
    case -4:
        route_stats(a, r);
        return;
    default: /* a body to parse: on an api worker, or a worker of the cluster */
        if (a->fw) {
            st = rt->kind == ROUTE_BATCH ? (int)forward_batch(a->fw, r)
                                         : (int)forward_job(a->fw, r, rt->path);
            if (st > 0)
                count_request(a, rt->path, (unsigned)st, 0);
        } else
            route_parse(a, r, rt->path, rt->kind);
        return;
    }
}

int api_timeout_ms(struct api *a)
{
    int sessions = a->cfg.sessions ? api_sessions_timeout_ms(a->cfg.sessions) : -1;

    int batches = a->fw ? forward_timeout_ms(a->fw) : -1;

    if (a->paused)
        return 100;
    return sessions < 0 || (batches >= 0 && batches < sessions) ? batches : sessions;
}

void api_tick(struct api *a)
{
    struct owner *o, *next;
    double now = util_now();

    if (a->cfg.sessions)
        api_sessions_tick(a->cfg.sessions);
    if (a->fw)
        forward_tick(a->fw);
    for (o = a->paused; o; o = next) {
        next = o->pnext;
        size_t pending = o->r ? http_stream_pending(o->r) : 0;
        if (!o->r) {
            owner_unpause(o);
        } else if (pending <= a->cfg.stream_buffer) {
            owner_unpause(o);
            batch_feed(o);
        } else if (pending < o->paused_pending) { /* it reads, slowly: not stalled */
            o->paused_pending = pending;
            o->paused_at = now;
        } else if (now - o->paused_at > a->cfg.stream_stall_s) {
            o->cancel_reason = "the client did not read the stream for --stream-stall-s seconds";
            http_stream_abort(o->r); /* owner_closed: unpaused, items cancelled */
        }
    }
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
    a->recent = recent_new();
    a->started = util_now();
    if (m) { /* none where requests are only checked (api_fuzz.h) */
        metrics_add(m, "jobs_expired_total", HELP_EXPIRED, "", 0);
        metrics_add(m, "infra_errors_total", HELP_INFRA, "", 0);
        metrics_add(m, "rejected_overload_total", HELP_OVERLOAD, "", 0);
    }
    pthread_mutex_init(&a->lock, NULL);
    if (cfg->gateway) {
        struct forward_config fc = {.gateway = cfg->gateway,
                                    .store = cfg->store,
                                    .offload = cfg->offload,
                                    .max_batch = cfg->max_batch,
                                    .stream_buffer = cfg->stream_buffer,
                                    .stream_stall_s = cfg->stream_stall_s,
                                    .answered = tasks_answered,
                                    .ctx = a};
        gateway_set_answered(cfg->gateway, tasks_answered, a);
        if (!(a->fw = forward_new(&fc))) {
            pthread_mutex_destroy(&a->lock);
            recent_free(a->recent);
            free(a);
            return NULL;
        }
    }
    return a;
}

void api_free(struct api *a)
{
    if (!a)
        return;
    forward_free(a->fw);
    recent_free(a->recent);
    pthread_mutex_destroy(&a->lock);
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

int api_check_request(struct api *a, const char *route, const char *body, size_t len,
                      struct errbuf *err)
{
    const struct route *rt = route_find(route);
    struct parsing p = {.a = a, .route = route, .len = len, .t0 = util_now()};

    if (strcmp(route, "/v1/tasks") == 0)
        return check_import(a, body, len, err);
    if (!rt || (rt->kind < 0 && rt->kind != ROUTE_BATCH))
        return errbuf_set(err, "no route POST %s to check", route), -ENOTSUP;
    /* What the loop or an api worker does with the body (parse_body frees it when not on the
     * loop), minus the admission. */
    if (!(p.body = malloc(len + 1)))
        return errbuf_set(err, "out of memory"), -ENOMEM;
    memcpy(p.body, body, len);
    p.body[len] = '\0';
    p.kind = rt->kind;
    if (!parse_here(&p))
        parsing_run(&p.work);
    free(p.body);
    if (!p.o)
        return errbuf_set(err, "%s", p.msg), p.status >= 500 ? -EIO : -EINVAL;
    owner_discard(p.o);
    return 0;
}
