/*
 * api_sessions.c — the sessions' routes (api_sessions.h, docs/API.md "Sessions").
 *
 * A request is checked on the loop thread against the session table (session.h): a bad id,
 * a busy session or a bad field is answered there. What it asks of the sandbox becomes an
 * operation (struct op) that owns the session while it runs (the session's busy flag):
 * execs and verifications go to the scheduler as jobs, the rest to the api workers. When the
 * operation comes back on the loop, the session is free again, its idle clock restarts, and
 * a session deleted or expired meanwhile is destroyed then.
 *
 * A session's sandbox is taken from the spares (cfg.spares, a pool of sandboxes of a default
 * session's shape made ahead) when one fits, else made by sandbox_create on an api worker; a
 * fork's child likewise (sandbox_fork_into a spare, else sandbox_fork). It is used from whichever
 * thread runs its current operation (sandbox.h: one thread at a time, which the busy flag
 * guarantees); it is destroyed on an api worker, or on the loop when the server stops.
 */
#include "service/api_sessions.h"

#include <archive.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "judge/lang.h"
#include "judge/task.h"
#include "judge/verify.h"
#include "library/store.h"
#include "sandbox/files.h"
#include "sandbox/pool.h"
#include "service/api_fuzz.h"
#include "service/offload.h"
#include "service/session.h"
#include "util.h"

#define MAX_ARGV         1024
#define MAX_ENV          256
#define MAX_TTL_S        86400.0
#define DEFAULT_TIMEOUT  30.0
#define MAX_LIST_ENTRIES 100000
#define RETRY_AFTER      "5"
/* A session's JSON body is parsed on the loop thread (small by nature: a command, a task);
 * larger inputs go in as files (PUT .../files: raw bytes, never parsed). */
#define MAX_JSON_BODY (1u << 20)

struct api_sessions {
    struct api_sessions_config cfg;
    struct session_table *t;
    struct sched *sched;
    struct offload *off;
    struct metrics *m;
    bool stopping;
    void (*log)(void *ctx, const char *event, json_t *fields); /* or NULL */
    void *log_ctx;
    struct api_sessions_budget budget; /* take NULL: none */
    double dead_checked;               /* util_now() of reclaim_dead's last round */
};

enum op_kind {
    OP_CREATE,
    OP_FORK,
    OP_EXEC,
    OP_CODE,
    OP_VERIFY,
    OP_PUT,
    OP_PUT_TAR,
    OP_GET,
    OP_GET_TAR,
    OP_LIST,
    OP_DESTROY,
};

/* One operation on a session, from the request that asked for it to its answer. */
struct op {
    struct job job;           /* first member: execs and verifications (scheduler) */
    struct offload_work work; /* the others (api workers) */
    struct api_sessions *as;
    enum op_kind kind;
    struct session *s;      /* the session it works on (busy meanwhile); create: the new one */
    struct session *child;  /* fork: the new session (busy until the copy is made) */
    struct sandbox *sb;     /* destroy: the sandbox to destroy */
    struct http_request *r; /* loop thread only; NULL once the client has gone */
    char route[48];
    api_sessions_answered answered;
    void *ctx;
    double t0;
    bool queued; /* with the scheduler: done() will come */
    /* inputs */
    char **argv, **env, *cwd;
    char *stdin_data;
    size_t stdin_len;
    double timeout_s;
    const struct lang *lang;
    char *code;
    char *path;
    mode_t mode;
    char *body;
    size_t len;
    struct task task;
    bool has_task;
    /* outputs (worker) */
    unsigned status;
    json_t *answer; /* a JSON answer, or NULL */
    char *raw;      /* a raw answer (downloads), or NULL */
    size_t raw_len;
    uint64_t held; /* bytes of the output budget a download holds (until its answer left) */
    const char *ctype;
    const char *code_name; /* the error's code when status is not 2xx */
    struct sandbox *made;  /* create and fork */
    struct errbuf err;
    bool exec_infra;
    bool broken; /* the sandbox's init is dead (init_gone): the session is reclaimed as broken */
    struct sandbox_usage usage; /* create, fork: the new sandbox's, measured on the worker */
    bool has_usage;             /* (the session's copy is the loop's: taken in release) */
};

/* op_of_work(w) — the operation whose work member w is. */
#define op_of_work(w) ((struct op *)(void *)((char *)(w)-offsetof(struct op, work)))

/* ---- small helpers ------------------------------------------------------------------ */

static void free_strv(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* A download's bytes in the output budget, from its answer until that left (http_on_close). */
struct held {
    struct api_sessions_budget budget;
    uint64_t bytes;
};

static void held_release(void *ctx, bool aborted)
{
    struct held *h = ctx;

    (void)aborted;
    h->budget.give(h->budget.ctx, h->bytes);
    free(h);
}

/* op_give(op, bytes) — bytes of what op holds of the output budget given back. */
static void op_give(struct op *op, uint64_t bytes)
{
    if (bytes > op->held)
        bytes = op->held;
    if (bytes)
        op->as->budget.give(op->as->budget.ctx, bytes);
    op->held -= bytes;
}

static void op_free(struct op *op)
{
    if (!op)
        return;
    op_give(op, op->held);
    free_strv(op->argv);
    free_strv(op->env);
    free(op->cwd);
    free(op->stdin_data);
    free(op->code);
    free(op->path);
    free(op->body);
    if (op->has_task)
        task_release(&op->task);
    json_decref(op->answer);
    free(op->raw);
    free(op);
}

/* parse_json(body, len, j, err) — body (len bytes and a NUL) as a JSON object; an empty body
 * is {}. -EFBIG beyond MAX_JSON_BODY. */
static int parse_json(const char *body, size_t len, json_t **j, struct errbuf *err)
{
    json_error_t je;

    if (len > MAX_JSON_BODY) {
        errbuf_set(err,
                   "a session's JSON body is at most 1 MiB (%zu bytes given): put large inputs "
                   "in as files (PUT /v1/sessions/{id}/files) and read them there",
                   len);
        return -EFBIG;
    }
    if (len == 0 || strspn(body, " \t\r\n") == len) {
        *j = json_object();
        return *j ? 0 : errbuf_set(err, "out of memory");
    }
    *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (!*j)
        return errbuf_set(err, "the body is not JSON: %s (line %d)", je.text, je.line);
    if (!json_is_object(*j)) {
        json_decref(*j);
        *j = NULL;
        return errbuf_set(err, "the body must be a JSON object");
    }
    return 0;
}

/* parse_json_body(r, j, err) — the request's body through parse_json. */
static int parse_json_body(struct http_request *r, json_t **j, struct errbuf *err)
{
    size_t len;
    const char *body = http_body(r, &len);

    return parse_json(body, len, j, err);
}

/* session_info(s, detail) — the answer describing s; detail adds the clocks, counts and
 * what its sandbox uses (the last measure when an operation runs now). */
static json_t *session_info(const struct session *s, bool detail)
{
    double now = util_now();
    json_t *j = json_object(), *img;

    if (!j)
        return NULL;
    if (strcmp(s->img->name, "host") == 0)
        img = json_string("host");
    else
        img = json_pack("{s:s,s:s}", "name", s->img->name, "digest", s->img->digest);
    json_object_set_new(j, "id", json_string(s->id));
    json_object_set_new(j, "image", img);
    json_object_set_new(j, "created_at", json_integer((json_int_t)s->created_at));
    json_object_set_new(j, "expires_at", json_integer((json_int_t)(s->created_at + s->ttl_s)));
    json_object_set_new(j, "ttl_s", json_real(s->ttl_s));
    json_object_set_new(j, "idle_ttl_s", json_real(s->idle_ttl_s));
    json_object_set_new(
        j, "limits",
        json_pack("{s:I,s:I,s:I,s:f,s:I}", "memory_mb", (json_int_t)s->limits.memory_mb, "pids",
                  (json_int_t)s->limits.pids, "disk_mb", (json_int_t)s->limits.disk_mb, "cpu_time",
                  s->limits.cpu_time, "output_kb", (json_int_t)s->limits.output_kb));
    json_object_set_new(j, "writable_root", json_boolean(s->limits.writable_root));
    json_object_set_new(j, "network", json_string(s->limits.loopback ? "loopback" : "none"));
    json_object_set_new(j, "parent", s->parent[0] ? json_string(s->parent) : json_null());
    if (!detail)
        return j;
    json_object_set_new(j, "age_s", json_real(now - s->created));
    json_object_set_new(j, "idle_s", json_real(s->busy ? 0 : now - s->last_used));
    json_object_set_new(j, "execs", json_integer((json_int_t)s->execs));
    json_object_set_new(j, "busy", json_boolean(s->busy));
    json_object_set_new(j, "usage",
                        json_pack("{s:f,s:I,s:I,s:I,s:I,s:I}", "cpu_time_s", s->usage.cpu_time,
                                  "memory_kb", (json_int_t)s->usage.memory_kb, "memory_peak_kb",
                                  (json_int_t)s->usage.memory_peak_kb, "pids",
                                  (json_int_t)s->usage.pids, "disk_kb",
                                  (json_int_t)s->usage.disk_kb, "disk_limit_kb",
                                  (json_int_t)s->usage.disk_limit_kb));
    return j;
}

static void gauges(struct api_sessions *as)
{
    metrics_set(as->m, "sessions", "live sessions", "", (double)session_count(as->t));
    if (as->cfg.spares) {
        struct pool_stats ps;
        pool_stats(as->cfg.spares, &ps);
        metrics_set(as->m, "session_spares_ready",
                    "sandboxes of a default session's shape made ahead (--session-spares)", "",
                    ps.ready);
        metrics_set_total(as->m, "session_spares_hits_total",
                          "session creates and forks that took a sandbox made ahead", "",
                          (double)ps.hits);
        metrics_set_total(as->m, "session_spares_misses_total",
                          "session creates and forks that made their sandbox on the request's "
                          "path (none ready, or another shape)",
                          "", (double)ps.misses);
    }
}

static void say(struct api_sessions *as, const char *event, json_t *fields)
{
    if (as->log)
        as->log(as->log_ctx, event, fields);
    else
        json_decref(fields);
}

static void count_reclaimed(struct api_sessions *as, const struct session *s,
                            enum session_reclaim why)
{
    char labels[40];

    say(as, "session_ended",
        json_pack("{s:s,s:s,s:f,s:I}", "id", s->id, "reason", session_reclaim_name(why), "age_s",
                  util_now() - s->created, "execs", (json_int_t)s->execs));
    snprintf(labels, sizeof(labels), "reason=\"%s\"", session_reclaim_name(why));
    metrics_add(as->m, "sessions_reclaimed_total", "sessions ended, by reason", labels, 1);
}

/* ---- destroying ---------------------------------------------------------------------- */

static void destroy_run(struct offload_work *w)
{
    struct op *op = op_of_work(w);
    struct errbuf err = {{0}};

    if (sandbox_destroy(op->sb, &err) < 0)
        fprintf(stderr, "crucible serve: destroying a session's sandbox: %s\n", err.msg);
    op->sb = NULL;
}

static void destroy_done(struct offload_work *w)
{
    struct op *op = op_of_work(w);

    if (op->sb) /* cancelled: the api workers are stopping */
        destroy_run(w);
    op_free(op);
}

/* dispose(as, sb) — sb destroyed, on an api worker (on the loop while the server stops). */
static void dispose(struct api_sessions *as, struct sandbox *sb)
{
    struct op *op;

    if (!sb)
        return;
    if (as->stopping || !(op = calloc(1, sizeof(*op)))) {
        struct errbuf err = {{0}};
        (void)sandbox_destroy(sb, &err);
        return;
    }
    op->as = as;
    op->kind = OP_DESTROY;
    op->sb = sb;
    op->work.run = destroy_run;
    op->work.done = destroy_done;
    offload_submit(as->off, &op->work);
}

/* reclaim(as, s, why) — s leaves the table now (its id answers 404); its sandbox goes now,
 * or when the operation running on it comes back. */
static void reclaim(struct api_sessions *as, struct session *s, enum session_reclaim why)
{
    session_unlink(as->t, s, why);
    count_reclaimed(as, s, why);
    gauges(as);
    if (s->busy) {
        struct op *op = s->op;
        if (op && op->queued)
            sched_cancel(as->sched, &op->job); /* its exec is killed; done() disposes */
        return;
    }
    dispose(as, s->sb);
    session_free(s);
}

/* ---- answering ------------------------------------------------------------------------ */

static void respond(struct op *op, unsigned status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* respond(op, status, code, fmt...) — an error answer; the request is over. */
static void respond(struct op *op, unsigned status, const char *code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (!op->r)
        return;
    http_on_close(op->r, NULL, NULL);
    if (status == 409 || status == 429 || status == 503)
        http_respond_error_with(op->r, status, status == 409 ? NULL : "Retry-After",
                                status == 409 ? NULL : RETRY_AFTER, code, "%s", msg);
    else
        http_respond_error(op->r, status, code, "%s", msg);
    if (op->answered)
        op->answered(op->ctx, op->route, status, op->t0);
    op->r = NULL;
}

/* answer(op) — the operation's answer as the worker left it (JSON, raw bytes or an error). */
static void answer(struct op *op)
{
    struct http_request *r = op->r;

    if (!r)
        return;
    if (op->status >= 400) {
        respond(op, op->status, op->code_name ? op->code_name : "internal", "%s", op->err.msg);
        return;
    }
    http_on_close(r, NULL, NULL);
    if (op->raw) {
        struct held *h = op->held ? malloc(sizeof(*h)) : NULL;
        if (h) { /* the answer's copy holds them until it left */
            *h = (struct held){op->as->budget, op->held};
            op->held = 0;
            http_on_close(r, held_release, h);
        }
        http_respond(r, op->status, op->ctype, op->raw, op->raw_len, NULL, NULL);
    } else if (op->answer) {
        http_respond_json(r, op->status, op->answer);
        op->answer = NULL;
    } else {
        op->status = 500;
        http_respond_error(r, 500, "internal", "out of memory building the answer");
    }
    if (op->answered)
        op->answered(op->ctx, op->route, op->status, op->t0);
    op->r = NULL;
}

/* fail_errno(op, r, what) — op's answer for a sandbox or files call that returned r: the
 * caller's mistakes are 4xx (a path refused, missing, too large), a full disk 507, and
 * anything else the server's (500; 501 while a sandbox operation is not built in). */
static void fail_errno(struct op *op, int r)
{
    switch (-r) {
    case EINVAL:
    case ELOOP:
    case EISDIR:
    case ENOTDIR:
    case EEXIST:
    case ENAMETOOLONG:
        op->status = 400;
        op->code_name = "bad_path";
        break;
    case ENOENT:
        op->status = 404;
        op->code_name = "not_found";
        break;
    case EFBIG:
    case E2BIG:
        op->status = 413;
        op->code_name = "too_large";
        break;
    case ENOSPC:
    case EDQUOT:
        op->status = 507;
        op->code_name = "disk_full";
        break;
    case ENOSYS:
        op->status = 501;
        op->code_name = "not_implemented";
        break;
    default:
        op->status = 500;
        op->code_name = "internal";
        break;
    }
    if (!op->err.msg[0])
        errbuf_set(&op->err, "%s", strerror(-r));
}

/* ---- the operations, on workers ----------------------------------------------------- */

/* init_gone(sb) — whether sb's init is dead (killed from outside, the OOM killer): a request
 * init answers whatever it finds (reading a file; its answer is not used) fails on the hung-up
 * control socket instead. Asked only after an operation failed as the server's fault, so a
 * session whose sandbox died is told from one whose exec failed for a passing reason. */
static bool init_gone(struct sandbox *sb)
{
    struct errbuf err = {{0}};
    char *data = NULL;
    size_t len = 0;
    int r = sandbox_get_file(sb, ".crucible-liveness-probe", 1, &data, &len, &err);

    free(data);
    return r == -EPIPE || r == -ECONNRESET || r == -ENOTCONN || r == -EBADF;
}

/* spare(as, s) — a sandbox made ahead for s (its image, limits and network) when one fits and
 * is ready, with s's limits applied; else NULL (the caller makes one). Worker thread. */
static struct sandbox *spare(struct api_sessions *as, const struct session *s)
{
    struct errbuf miss = {{0}};

    if (!as->cfg.spares)
        return NULL;
    return pool_take(as->cfg.spares, s->img, &s->limits, as->cfg.rt->cancel_fd, &miss);
}

static void create_run(struct offload_work *w)
{
    struct op *op = op_of_work(w);
    struct session *s = op->s;

    if (!(op->made = spare(op->as, s)))
        op->made = sandbox_create(op->as->cfg.rt, s->img, &s->limits, &op->err);
    op->has_usage = op->made && sandbox_usage(op->made, &op->usage) == 0;
}

static void fork_run(struct offload_work *w)
{
    struct op *op = op_of_work(w);
    struct sandbox *child = spare(op->as, op->child);

    if (!child) {
        op->made = sandbox_fork(op->s->sb, &op->err);
    } else if (sandbox_fork_into(op->s->sb, child, &op->err) < 0) {
        pool_discard(op->as->cfg.spares, child); /* part of a copy: only fit to go */
    } else {
        op->made = child;
    }
    op->broken = !op->made && init_gone(op->s->sb);
    op->has_usage = op->made && sandbox_usage(op->made, &op->usage) == 0;
}

/* tar_entries(tar, len) — the entries of an archive libarchive reads (for the answer). */
static long tar_entries(const void *tar, size_t len)
{
    struct archive *a = archive_read_new();
    struct archive_entry *e;
    long n = 0;

    if (!a)
        return -1;
    archive_read_support_filter_all(a);
    archive_read_support_format_tar(a);
    if (archive_read_open_memory(a, tar, len) != ARCHIVE_OK) {
        archive_read_free(a);
        return -1;
    }
    while (archive_read_next_header(a, &e) == ARCHIVE_OK)
        n++;
    archive_read_free(a);
    return n;
}

static const char *type_name(enum sandbox_file_type t)
{
    switch (t) {
    case SBF_FILE:
        return "file";
    case SBF_DIR:
        return "dir";
    case SBF_SYMLINK:
        return "symlink";
    default:
        return "other";
    }
}

/* dirent_json(e) — one entry of a listing. A name that is not UTF-8 (the session's code may
 * make any bytes a name) is given escaped (\xHH, as result records escape output) beside
 * its bytes in base64 ("name_b64"). */
static json_t *dirent_json(const struct sandbox_dirent *e)
{
    size_t len = strlen(e->name);
    json_t *j = json_pack("{s:s,s:I,s:i,s:f}", "type", type_name(e->type), "size",
                          (json_int_t)e->size, "mode", (int)e->mode, "mtime", e->mtime);

    if (!j)
        return NULL;
    if (util_utf8_valid(e->name, len)) {
        json_object_set_new(j, "name", json_stringn(e->name, len));
    } else {
        char *esc = result_text_escape(e->name, len), *b64 = util_base64_encode(e->name, len);
        json_object_set_new(j, "name", esc ? json_string(esc) : json_null());
        json_object_set_new(j, "name_b64", b64 ? json_string(b64) : json_null());
        free(esc);
        free(b64);
    }
    return j;
}

/* download_reserve(op, max) — room in the output budget for a download of at most *max bytes
 * (lowered to the budget's size), taken now so that the read itself stays within the budget;
 * false with op's 503 answer set when other answers hold it. */
static bool download_reserve(struct op *op, size_t *max)
{
    const struct api_sessions_budget *b = &op->as->budget;

    if (!b->take)
        return true;
    if (*max > b->total)
        *max = (size_t)b->total;
    if (!b->take(b->ctx, *max)) {
        op->status = 503;
        op->code_name = "output_budget";
        errbuf_set(&op->err,
                   "the server's output budget (crucible serve --output-budget-mb, %llu MB) is "
                   "held by other answers not yet sent; retry later",
                   (unsigned long long)(b->total >> 20));
        return false;
    }
    op->held = *max;
    return true;
}

static void files_run(struct offload_work *w)
{
    struct op *op = op_of_work(w);
    struct sandbox *sb = op->s->sb;
    struct sandbox_dirent *ents = NULL;
    size_t n = 0, max = op->as->cfg.max_file_bytes;
    int r;

    op->status = 200;
    if ((op->kind == OP_GET || op->kind == OP_GET_TAR) && !download_reserve(op, &max))
        return;
    switch (op->kind) {
    case OP_PUT:
        r = sandbox_file_write(sb, op->path, op->body, op->len, op->mode, &op->err);
        if (r == 0)
            op->answer = json_pack("{s:s,s:I}", "path", op->path, "size", (json_int_t)op->len);
        break;
    case OP_PUT_TAR:
        r = sandbox_file_put_tar(sb, op->path, op->body, op->len, &op->err);
        if (r == 0)
            op->answer = json_pack("{s:s,s:I}", "path", op->path, "entries",
                                   (json_int_t)tar_entries(op->body, op->len));
        if (r == -EINVAL) { /* a refused archive is the archive's fault, not the path's */
            op->status = 400;
            op->code_name = "bad_archive";
            return;
        }
        break;
    case OP_GET:
        r = sandbox_file_read(sb, op->path, max, &op->raw, &op->raw_len, &op->err);
        op->ctype = "application/octet-stream";
        break;
    case OP_GET_TAR:
        r = sandbox_file_get_tar(sb, op->path, max, &op->raw, &op->raw_len, &op->err);
        op->ctype = "application/x-tar";
        break;
    case OP_LIST:
    default:
        r = sandbox_file_list(sb, op->path, MAX_LIST_ENTRIES, &ents, &n, &op->err);
        if (r == 0) {
            json_t *arr = json_array();
            for (size_t i = 0; arr && i < n; i++)
                json_array_append_new(arr, dirent_json(&ents[i]));
            op->answer = json_pack("{s:s,s:o}", "path", op->path, "entries", arr);
            sandbox_dirents_free(ents, n);
        }
        break;
    }
    op_give(op, op->held - (r == 0 && op->raw ? op->raw_len : 0)); /* what it is, not may be */
    if (r < 0)
        fail_errno(op, r);
    op->broken = r < 0 && op->status == 500 && init_gone(sb);
}

/* exec_limits(op, l, err) — the session's limits for this exec: the wall limit is the
 * request's timeout, the CPU limit what is left of the session's CPU time. false when none
 * is left (err says so). */
static bool exec_limits(struct op *op, struct sandbox_limits *l)
{
    struct session *s = op->s;
    double left;

    *l = s->limits;
    left = s->limits.cpu_time - sandbox_cpu_time(s->sb);
    if (left < sandbox_limit_ranges[LIM_CPU].min)
        return false;
    l->cpu_time = left;
    l->wall_time = op->timeout_s;
    return true;
}

/* cpu_spent(res, s) — the record of an exec refused because the session's CPU is spent. */
static void cpu_spent(struct result *res, const struct session *s)
{
    res->status = RESULT_TIMEOUT;
    res->limit = RESULT_LIMIT_CPU;
    snprintf(res->message, sizeof(res->message),
             "the session's CPU time (limits.cpu_time, %g s for all its execs) is used up",
             s->limits.cpu_time);
}

/* run_code(op, sb, l, rt, res, compile, has_compile) — {code, language}: the code written to
 * its file in /work, compiled where the language needs it, then run; as /v1/run does, in the
 * session's sandbox and keeping what it leaves there. */
static void run_code(struct op *op, struct sandbox *sb, const struct sandbox_limits *l,
                     struct result *res, struct result *compile, bool *has_compile)
{
    struct lang_plan plan;
    struct errbuf err = {{0}};
    size_t len = strlen(op->code);

    if (lang_plan_program(op->lang, false, op->code, len, &plan) < 0 ||
        lang_plan_image(op->lang, op->s->img, &plan) < 0) {
        result_fail(res, "out of memory");
        return;
    }
    if (sandbox_file_write(sb, plan.source, op->code, len, 0644, &err) < 0) {
        result_fail(res, "cannot write the code to /work/%s: %s", plan.source, err.msg);
        goto out;
    }
    if (plan.compile) {
        struct sandbox_limits cl = *l;
        cl.cpu_time = fmin(op->lang->compile_cpu, l->cpu_time);
        cl.wall_time = fmin(2 * cl.cpu_time + 5, l->wall_time);
        if (op->lang->compile_memory_mb > cl.memory_mb)
            cl.memory_mb = op->lang->compile_memory_mb;
        if (cl.output_kb < 1024)
            cl.output_kb = 1024;
        if (sandbox_set_limits(sb, &cl, &err) < 0) {
            result_fail(res, "%s", err.msg);
            goto out;
        }
        sandbox_exec_input(sb, plan.compile, op->lang->env, NULL, 0, SANDBOX_EXEC_KEEP, compile);
        *has_compile = true;
        if (compile->status != RESULT_OK)
            goto out;
        if (sandbox_set_limits(sb, l, &err) < 0) {
            result_fail(res, "%s", err.msg);
            goto out;
        }
    }
    sandbox_exec_input(sb, plan.run, op->lang->env, op->stdin_data, op->stdin_len,
                       SANDBOX_EXEC_KEEP, res);
out:
    lang_plan_release(&plan);
}

static void exec_run(struct job *j, const struct sandbox_runtime *rt)
{
    struct op *op = (struct op *)j;
    struct session *s = op->s;
    struct sandbox *sb = s->sb;
    struct sandbox_limits l;
    struct result res, compile;
    struct errbuf err = {{0}};
    bool has_compile = false;
    const struct result *shown = &res;

    result_init(&res);
    result_init(&compile);
    result_set_image(&res, s->img);
    sandbox_set_cancel_fd(sb, rt->cancel_fd);
    if (!exec_limits(op, &l)) {
        cpu_spent(&res, s);
    } else if (sandbox_set_limits(sb, &l, &err) < 0) {
        result_fail(&res, "%s", err.msg);
    } else if (op->kind == OP_CODE) {
        run_code(op, sb, &l, &res, &compile, &has_compile);
        if (has_compile && compile.status != RESULT_OK)
            shown = &compile;
    } else {
        struct sandbox_proc proc = {
            .argv = op->argv, .env = op->env, .stdin_fd = -1, .cwd = op->cwd ? op->cwd : "/work"};
        if (op->stdin_len && (proc.stdin_fd = sandbox_memfd(op->stdin_data, op->stdin_len)) < 0)
            result_fail(&res, "cannot stage stdin: %s", strerror(-proc.stdin_fd));
        else
            (void)sandbox_exec(sb, &proc, SANDBOX_EXEC_KEEP, &res);
        if (proc.stdin_fd >= 0)
            close(proc.stdin_fd);
    }
    sandbox_set_cancel_fd(sb, op->as->cfg.rt->cancel_fd);
    op->answer = result_to_json(shown);
    if (op->answer) {
        if (op->kind == OP_CODE) {
            json_object_set_new(op->answer, "compile",
                                has_compile ? result_to_json(&compile) : json_null());
            if (shown == &compile)
                json_object_set_new(op->answer, "message",
                                    json_string("compilation failed; the program was not run"));
        }
        json_object_set_new(op->answer, "session", json_string(s->id));
    }
    op->exec_infra = shown->status == RESULT_SANDBOX_ERROR;
    op->broken = op->exec_infra && init_gone(sb);
    if (op->broken && op->answer)
        json_object_set_new(op->answer, "message",
                            json_string("the session's sandbox died (its init was killed from "
                                        "outside, or by the OOM killer); the session is "
                                        "reclaimed and its id answers 404 from now on"));
    op->status = 200;
    result_release(&res);
    result_release(&compile);
}

static void verify_job_run(struct job *j, const struct sandbox_runtime *rt)
{
    struct op *op = (struct op *)j;
    struct session *s = op->s;
    struct verify_opts vo;
    struct verify_result vr;

    /* the tests' CPU comes out of what is left of the session's (at least the least limit:
     * a session with none left times out, reward 0) */
    op->task.limits.cpu_time =
        fmax(sandbox_limit_ranges[LIM_CPU].min,
             fmin(op->task.limits.cpu_time, s->limits.cpu_time - sandbox_cpu_time(s->sb)));
    verify_opts_default(&vo);
    vo.sandbox = s->sb;
    vo.image = s->img;
    vo.infra_retries = 0; /* the session's sandbox is the only one: nothing fresh to retry on */
    sandbox_set_cancel_fd(s->sb, rt->cancel_fd);
    verify_run(rt, &op->task, "", &vo, &vr);
    sandbox_set_cancel_fd(s->sb, op->as->cfg.rt->cancel_fd);
    op->answer = verify_result_to_json(&op->task, &vr);
    if (op->answer)
        json_object_set_new(op->answer, "session", json_string(s->id));
    op->exec_infra = vr.verdict == VERDICT_INFRA_ERROR;
    op->broken = op->exec_infra && init_gone(s->sb);
    op->status = 200;
    verify_result_release(&vr);
}

/* ---- back on the loop ---------------------------------------------------------------- */

/* release(as, s, op) — op on s is over: s is free (with what op measured of its sandbox), or
 * goes now if it was reclaimed meanwhile. */
static void release(struct api_sessions *as, struct session *s, const struct op *op)
{
    bool broken = op && op->broken && op->s == s && s->reclaim == SESSION_LIVE;

    if (op && op->has_usage && op->kind != OP_FORK) {
        s->usage = op->usage;
        s->has_usage = true;
    }
    s->busy = false;
    s->op = NULL;
    s->last_used = util_now();
    if (broken) {
        reclaim(as, s, SESSION_BROKEN); /* not busy any more: goes now */
    } else if (s->reclaim != SESSION_LIVE) {
        dispose(as, s->sb);
        session_free(s);
    }
}

static void create_done(struct offload_work *w)
{
    struct op *op = op_of_work(w);
    struct api_sessions *as = op->as;
    struct session *s = op->kind == OP_FORK ? op->child : op->s;

    if (op->kind == OP_FORK)
        release(as, op->s, op);
    if (!op->made || w->cancelled || !op->r || s->reclaim != SESSION_LIVE) {
        /* no sandbox, or nobody to tell its id: the session is dropped */
        if (s->reclaim == SESSION_LIVE)
            session_unlink(as->t, s, SESSION_DELETED);
        dispose(as, op->made);
        session_free(s);
        gauges(as);
        if (w->cancelled)
            respond(op, 503, "unavailable", "the server is stopping");
        else if (!op->made)
            respond(op, 503, "sandbox_error", "cannot make the session's sandbox: %s", op->err.msg);
        op_free(op);
        return;
    }
    s->sb = op->made;
    s->usage = op->usage;
    s->has_usage = op->has_usage;
    s->busy = false;
    s->last_used = util_now();
    metrics_add(as->m, "sessions_created_total", "sessions created (forks included)", "", 1);
    gauges(as);
    say(as, "session_created",
        json_pack("{s:s,s:s,s:o,s:f}", "id", s->id, "image", s->img->name, "parent",
                  s->parent[0] ? json_string(s->parent) : json_null(), "seconds",
                  util_now() - op->t0));
    op->status = 201;
    op->answer = session_info(s, true);
    answer(op);
    op_free(op);
}

static void files_done(struct offload_work *w)
{
    struct op *op = op_of_work(w);

    release(op->as, op->s, op);
    if (w->cancelled)
        respond(op, 503, "unavailable", "the server is stopping");
    else
        answer(op);
    op_free(op);
}

static void exec_done(struct job *j)
{
    struct op *op = (struct op *)j;
    struct api_sessions *as = op->as;
    char labels[64];

    op->queued = false;
    if (j->outcome == JOB_RAN)
        op->s->execs++;
    snprintf(labels, sizeof(labels), "kind=\"%s\"", op->kind == OP_VERIFY ? "verify" : "exec");
    if (j->t_start > 0)
        metrics_observe(as->m, "session_exec_seconds",
                        "time a session's exec or verification ran on a worker", labels,
                        j->t_end - j->t_start);
    if (op->exec_infra)
        metrics_add(as->m, "infra_errors_total",
                    "jobs that ended in crucible's own failure (after retries)", "", 1);
    if (op->s->reclaim != SESSION_LIVE && op->r)
        respond(op, 404, "not_found", "session %s was %s while the exec ran", op->s->id,
                op->s->reclaim == SESSION_DELETED ? "deleted" : "reclaimed");
    else if (j->outcome == JOB_EXPIRED)
        respond(op, 503, "not_started", "no slot was free in time");
    else if (j->outcome == JOB_CANCELLED && !op->answer)
        respond(op, 503, "unavailable", "cancelled before it ran");
    else
        answer(op);
    release(as, op->s, op);
    op_free(op);
}

/* op_closed — the client left before its answer: its exec is cancelled (only that exec's
 * processes die), its queued file operation dropped; the session stays. */
static void op_closed(void *ctx, bool aborted)
{
    struct op *op = ctx;

    (void)aborted;
    op->r = NULL;
    if (op->queued)
        sched_cancel(op->as->sched, &op->job);
    else if (op->kind != OP_CREATE && op->kind != OP_FORK)
        offload_cancel(op->as->off, &op->work);
}

/* ---- requests (loop thread) ----------------------------------------------------------- */

static struct op *op_new(struct api_sessions *as, struct http_request *r, const char *route,
                         api_sessions_answered answered, void *ctx)
{
    struct op *op = calloc(1, sizeof(*op));

    if (!op)
        return NULL;
    op->as = as;
    op->r = r;
    op->answered = answered;
    op->ctx = ctx;
    op->t0 = util_now();
    op->mode = 0644;
    snprintf(op->route, sizeof(op->route), "%s", route);
    return op;
}

/* number_field(j, key, min, max, def, out, err) — an optional number in [min, max]. */
static int number_field(const json_t *j, const char *key, double min, double max, double def,
                        double *out, struct errbuf *err)
{
    const json_t *v = json_object_get(j, key);

    *out = def;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v) || !(json_number_value(v) >= min) || json_number_value(v) > max)
        return errbuf_set(err, "'%s' must be a number of seconds from %g to %g", key, min, max);
    *out = json_number_value(v);
    return 0;
}

/* parse_create(as, j, s, err) — the body of POST /v1/sessions into s. */
static int parse_create(struct api_sessions *as, const json_t *j, struct session *s,
                        struct errbuf *err)
{
    static const char *const keys[] = {"image",   "limits", "writable_root", "ttl_s", "idle_ttl_s",
                                       "network", NULL};
    static const char *const limit_keys[] = {"memory_mb", "pids",      "disk_mb",
                                             "cpu_time",  "output_kb", NULL};
    const json_t *v;

    if (api_only_keys(j, keys, err) < 0)
        return -EINVAL;
    s->img = as->cfg.host;
    s->limits = as->cfg.defaults;
    s->limits.loopback = true;
    s->limits.wall_time = sandbox_limit_ranges[LIM_WALL].max; /* each exec sets its own */
    /* cpu_time is the whole session's, all execs together: by default the most one job may
     * have (an hour), not one job's default; each exec's wall time is bounded anyway */
    s->limits.cpu_time = sandbox_limit_ranges[LIM_CPU].max;
    if ((v = json_object_get(j, "image")) && !json_is_null(v)) {
        if (!json_is_string(v))
            return errbuf_set(err, "'image' must be a string naming a registered image");
        if (!(s->img = image_registry_find(as->cfg.images, json_string_value(v), err)))
            return -EINVAL;
    }
    if ((v = json_object_get(j, "limits")) && !json_is_null(v)) {
        struct errbuf why = {{0}};
        if (!json_is_object(v))
            return errbuf_set(err, "'limits' must be an object");
        if (api_only_keys(v, limit_keys, &why) < 0)
            return errbuf_set(err,
                              "limits: %s (a session takes memory_mb, pids, disk_mb, "
                              "cpu_time and output_kb; an exec's wall time is its "
                              "timeout_s)",
                              why.msg);
        if (task_limits_from_json(v, &s->limits, err) < 0)
            return -EINVAL;
    }
    if (s->limits.pids > as->cfg.max_pids)
        return errbuf_set(err,
                          "limits.pids is %llu; this server allows at most %llu per job "
                          "(crucible serve --max-pids)",
                          (unsigned long long)s->limits.pids, (unsigned long long)as->cfg.max_pids);
    if (s->limits.output_kb > as->cfg.max_output_kb)
        return errbuf_set(err,
                          "limits.output_kb is %llu; this server captures at most %llu KB per "
                          "stream (crucible serve --max-output-kb)",
                          (unsigned long long)s->limits.output_kb,
                          (unsigned long long)as->cfg.max_output_kb);
    if ((v = json_object_get(j, "writable_root")) && !json_is_null(v)) {
        if (!json_is_boolean(v))
            return errbuf_set(err, "'writable_root' must be true or false");
        s->limits.writable_root = json_is_true(v);
    }
    if ((v = json_object_get(j, "network")) && !json_is_null(v)) {
        if (!json_is_string(v) || (strcmp(json_string_value(v), "none") != 0 &&
                                   strcmp(json_string_value(v), "loopback") != 0))
            return errbuf_set(err, "'network' must be \"none\" or \"loopback\" (the sandbox's "
                                   "own lo; a session never reaches the host's network)");
        s->limits.loopback = strcmp(json_string_value(v), "loopback") == 0;
    }
    if (number_field(j, "ttl_s", 1, MAX_TTL_S, as->cfg.ttl_s, &s->ttl_s, err) < 0 ||
        number_field(j, "idle_ttl_s", 1, MAX_TTL_S, as->cfg.idle_ttl_s, &s->idle_ttl_s, err) < 0)
        return -EINVAL;
    return 0;
}

static unsigned bad_request(struct http_request *r, const char *code, const struct errbuf *err)
{
    http_respond_error(r, 400, code, "%s", err->msg);
    return 400;
}

/* bad_body(r, rc, err) — the answer to a body parse_json_body refused (rc): 413 or 400. */
static unsigned bad_body(struct http_request *r, int rc, const struct errbuf *err)
{
    if (rc != -EFBIG)
        return bad_request(r, "bad_request", err);
    http_respond_error(r, 413, "too_large", "%s", err->msg);
    return 413;
}

/* route_create — POST /v1/sessions. */
static int route_create(struct api_sessions *as, struct http_request *r, const char *route,
                        api_sessions_answered answered, void *ctx)
{
    struct errbuf err = {{0}};
    struct session *s;
    struct op *op;
    json_t *j;

    int rc;

    if ((rc = parse_json_body(r, &j, &err)) < 0)
        return (int)bad_body(r, rc, &err);
    if (!(s = session_new(as->t))) {
        json_decref(j);
        if (errno == EAGAIN) {
            metrics_add(as->m, "sessions_refused_total", "session creations answered 429", "", 1);
            http_respond_error_with(r, 429, "Retry-After", RETRY_AFTER, "too_many_sessions",
                                    "this server holds at most %zu sessions (crucible serve "
                                    "--max-sessions); delete one or retry later",
                                    session_max(as->t));
            return 429;
        }
        http_respond_error(r, 500, "internal", "cannot make a session: %s", strerror(errno));
        return 500;
    }
    s->busy = true;
    if (parse_create(as, j, s, &err) < 0 || !(op = op_new(as, r, route, answered, ctx))) {
        json_decref(j);
        session_unlink(as->t, s, SESSION_DELETED);
        session_free(s);
        if (!err.msg[0]) {
            http_respond_error(r, 500, "internal", "out of memory");
            return 500;
        }
        return (int)bad_request(r, "bad_request", &err);
    }
    json_decref(j);
    op->kind = OP_CREATE;
    op->s = s;
    op->work.run = create_run;
    op->work.done = create_done;
    http_on_close(r, op_closed, op);
    offload_submit(as->off, &op->work);
    return -EINPROGRESS;
}

static int route_list(struct api_sessions *as, struct http_request *r)
{
    json_t *arr = json_array();

    for (struct session *s = session_first(as->t); arr && s; s = s->next)
        if (s->sb)
            json_array_append_new(arr, session_info(s, false));
    http_respond_json(r, 200,
                      json_pack("{s:o,s:I,s:I}", "sessions", arr ? arr : json_array(), "count",
                                (json_int_t)session_count(as->t), "max",
                                (json_int_t)session_max(as->t)));
    return 200;
}

/* strv_field(v, what, err) — an array of strings without NUL bytes, as a NULL-terminated
 * vector; NULL with err set. */
static char **strv_field(const json_t *v, const char *what, size_t max, struct errbuf *err)
{
    size_t i, n = json_array_size(v);
    json_t *e;
    char **out;

    if (!json_is_array(v) || n == 0 || n > max) {
        errbuf_set(err, "'%s' must be an array of 1 to %zu strings, or a shell string", what, max);
        return NULL;
    }
    if (!(out = calloc(n + 1, sizeof(*out)))) {
        errbuf_set(err, "out of memory");
        return NULL;
    }
    json_array_foreach(v, i, e)
    {
        if (!json_is_string(e) || (i == 0 && !json_string_length(e)) ||
            strlen(json_string_value(e)) != json_string_length(e)) {
            errbuf_set(err, "%s[%zu] must be a%s string without NUL bytes", what, i,
                       i ? "" : " non-empty");
            free_strv(out);
            return NULL;
        }
        if (!(out[i] = strdup(json_string_value(e)))) {
            errbuf_set(err, "out of memory");
            free_strv(out);
            return NULL;
        }
    }
    return out;
}

/* exec_command(cmd, op, err) — 'command' into op->argv: an argv array, or a shell string run
 * by /bin/sh -c. 0 or -errno with err set. */
static int exec_command(const json_t *cmd, struct op *op, struct errbuf *err)
{
    if (json_is_string(cmd)) {
        if (strlen(json_string_value(cmd)) != json_string_length(cmd) || !json_string_length(cmd))
            return errbuf_set(err, "'command' must be a non-empty string without NUL bytes");
        if (!(op->argv = calloc(4, sizeof(char *))) || !(op->argv[0] = strdup("/bin/sh")) ||
            !(op->argv[1] = strdup("-c")) || !(op->argv[2] = strdup(json_string_value(cmd))))
            return errbuf_set(err, "out of memory"), -ENOMEM;
    } else if (!(op->argv = strv_field(cmd, "command", MAX_ARGV, err))) {
        return -EINVAL;
    }
    op->kind = OP_EXEC;
    return 0;
}

/* exec_code(j, code, op, err) — 'code' and 'language' into op (a language the session's image
 * can run); 'cwd' and 'env' do not go with them. 0 or -errno with err set. */
static int exec_code(const json_t *j, const json_t *code, struct op *op, struct errbuf *err)
{
    const json_t *v = json_object_get(j, "language");
    char names[1024];

    if (json_object_get(j, "cwd") || json_object_get(j, "env"))
        return errbuf_set(err, "'cwd' and 'env' go with 'command'; 'code' runs in /work");
    if (!json_is_string(code))
        return errbuf_set(err, "'code' must be a string");
    if (!json_is_string(v))
        return errbuf_set(err, "'code' needs 'language' (a string)");
    if (!(op->lang = lang_find(json_string_value(v)))) {
        lang_names(names, sizeof(names));
        return errbuf_set(err, "unknown language '%s' (known: %s)", json_string_value(v), names);
    }
    if (!lang_available(op->lang, op->s->img, err))
        return -EINVAL;
    if (!(op->code = strndup(json_string_value(code), json_string_length(code))))
        return errbuf_set(err, "out of memory"), -ENOMEM;
    op->kind = OP_CODE;
    return 0;
}

/* exec_cwd_env(j, op, err) — 'cwd' (an absolute directory) and 'env' (names to strings) into
 * op->cwd and op->env ("K=V" strings), when given. 0 or -errno with err set. */
static int exec_cwd_env(const json_t *j, struct op *op, struct errbuf *err)
{
    const json_t *v;
    const char *key;
    json_t *val;
    size_t n = 0;

    if ((v = json_object_get(j, "cwd")) && !json_is_null(v)) {
        if (!json_is_string(v) || json_string_value(v)[0] != '/' ||
            strlen(json_string_value(v)) != json_string_length(v) ||
            json_string_length(v) >= SANDBOX_CWD_MAX)
            return errbuf_set(err, "'cwd' must be an absolute directory of fewer than %d bytes",
                              SANDBOX_CWD_MAX);
        if (!(op->cwd = strdup(json_string_value(v))))
            return errbuf_set(err, "out of memory"), -ENOMEM;
    }
    if (!(v = json_object_get(j, "env")) || json_is_null(v))
        return 0;
    if (!json_is_object(v) || json_object_size(v) > MAX_ENV)
        return errbuf_set(err, "'env' must be an object of at most %d names and values", MAX_ENV);
    if (!(op->env = calloc(json_object_size(v) + 1, sizeof(char *))))
        return errbuf_set(err, "out of memory"), -ENOMEM;
    json_object_foreach((json_t *)v, key, val)
    {
        if (!*key || strchr(key, '=') || !json_is_string(val) ||
            strlen(json_string_value(val)) != json_string_length(val))
            return errbuf_set(err,
                              "env['%.100s']: a name without '=' and a string value without NUL "
                              "bytes",
                              key);
        if (asprintf(&op->env[n], "%s=%s", key, json_string_value(val)) < 0) {
            op->env[n] = NULL;
            return errbuf_set(err, "out of memory"), -ENOMEM;
        }
        n++;
    }
    return 0;
}

/* exec_stdin(j, op, err) — 'stdin' (text) or 'stdin_b64' (bytes, base64) into op->stdin_data,
 * when given. 0 or -errno with err set. */
static int exec_stdin(const json_t *j, struct op *op, struct errbuf *err)
{
    const json_t *v;

    if (json_object_get(j, "stdin") && json_object_get(j, "stdin_b64"))
        return errbuf_set(err, "give 'stdin' or 'stdin_b64', not both");
    if ((v = json_object_get(j, "stdin")) && !json_is_null(v)) {
        if (!json_is_string(v))
            return errbuf_set(err, "'stdin' must be a string (or give 'stdin_b64')");
        op->stdin_len = json_string_length(v);
        if (!(op->stdin_data = malloc(op->stdin_len + 1)))
            return errbuf_set(err, "out of memory"), -ENOMEM;
        memcpy(op->stdin_data, json_string_value(v), op->stdin_len + 1);
    }
    if ((v = json_object_get(j, "stdin_b64")) && !json_is_null(v)) {
        if (!json_is_string(v) || util_base64_decode(json_string_value(v), json_string_length(v),
                                                     &op->stdin_data, &op->stdin_len) < 0)
            return errbuf_set(err, "'stdin_b64' must be base64 text");
    }
    return 0;
}

/* exec_schedule(j, op, err) — 'timeout_s' (within what is left of the session's ttl; default
 * DEFAULT_TIMEOUT or that) and 'priority' into op, and what the exec's job needs of the
 * scheduler's memory and pids. 0 or -errno with err set. */
static int exec_schedule(const json_t *j, struct op *op, struct errbuf *err)
{
    struct session *s = op->s;
    double left = s->ttl_s - (util_now() - s->created);
    const json_t *v;

    if (left < sandbox_limit_ranges[LIM_WALL].min)
        return errbuf_set(err, "the session's ttl has run out");
    op->timeout_s = fmin(DEFAULT_TIMEOUT, left);
    if ((v = json_object_get(j, "timeout_s")) && !json_is_null(v)) {
        if (!json_is_number(v) || !(json_number_value(v) >= sandbox_limit_ranges[LIM_WALL].min) ||
            json_number_value(v) > left)
            return errbuf_set(err,
                              "'timeout_s' must be a number of seconds from %g to %.0f (what is "
                              "left of the session's ttl)",
                              sandbox_limit_ranges[LIM_WALL].min, floor(left));
        op->timeout_s = json_number_value(v);
    }
    op->job.prio = PRIO_NORMAL;
    if ((v = json_object_get(j, "priority")) && !json_is_null(v)) {
        if (!json_is_string(v) || !job_priority_parse(json_string_value(v), &op->job.prio))
            return errbuf_set(err, "'priority' must be \"high\", \"normal\" or \"low\"");
    }
    op->job.memory_mb = s->limits.memory_mb;
    if (op->lang && op->lang->compile && op->lang->compile_memory_mb > op->job.memory_mb)
        op->job.memory_mb = op->lang->compile_memory_mb;
    op->job.pids = s->limits.pids + 2; /* its init and the exec's keeper */
    return 0;
}

/* parse_exec(as, j, op, err) — the body of POST .../exec into op: what to run ('command', or
 * 'code' with 'language'), where and with what ('cwd', 'env', stdin), for how long and how
 * urgently. The first problem found is the answer. 0 or -errno with err set. */
static int parse_exec(struct api_sessions *as, const json_t *j, struct op *op, struct errbuf *err)
{
    static const char *const keys[] = {"command", "code",      "language",  "cwd",      "env",
                                       "stdin",   "stdin_b64", "timeout_s", "priority", NULL};
    const json_t *cmd = json_object_get(j, "command"), *code = json_object_get(j, "code");
    int r;

    (void)as;
    if (api_only_keys(j, keys, err) < 0)
        return -EINVAL;
    if ((cmd != NULL) == (code != NULL))
        return errbuf_set(err, "give either 'command' (an argv array or a shell string) or "
                               "'code' with 'language'");
    if ((r = cmd ? exec_command(cmd, op, err) : exec_code(j, code, op, err)) < 0)
        return r;
    if (cmd && json_object_get(j, "language"))
        return errbuf_set(err, "'language' goes with 'code', not with 'command'");
    if ((r = exec_cwd_env(j, op, err)) < 0)
        return r;
    if (op->argv && !sandbox_argv_fits(op->argv, op->env, err)) {
        char msg[sizeof(err->msg)];
        snprintf(msg, sizeof(msg), "%s", err->msg);
        return errbuf_set(err, "command: %s", msg);
    }
    if ((r = exec_stdin(j, op, err)) < 0)
        return r;
    return exec_schedule(j, op, err);
}

/* parse_verify(as, j, op, err) — the body of POST .../verify: a command-harness task. */
static int parse_verify(struct api_sessions *as, const json_t *j, struct op *op, struct errbuf *err)
{
    static const char *const keys[] = {"task", "task_id", "priority", NULL};
    const json_t *task = json_object_get(j, "task"), *v;
    int r;

    if (api_only_keys(j, keys, err) < 0)
        return -EINVAL;
    if ((task != NULL) == (json_object_get(j, "task_id") != NULL))
        return errbuf_set(err, "give 'task' (a task object) or 'task_id'");
    if ((v = json_object_get(j, "task_id"))) {
        if (!json_is_string(v))
            return errbuf_set(err, "'task_id' must be a string");
        if (!as->cfg.store)
            return errbuf_set(err, "'task_id' needs the task library: start the server with "
                                   "--db PATH, or send the task itself as 'task'");
        r = store_task_load(as->cfg.store, json_string_value(v), NULL, &op->task, err);
        op->has_task = true;
        if (r < 0)
            return r == -ENOENT ? -ENOENT : -EIO;
    } else {
        struct errbuf why = {{0}};
        op->has_task = true;
        if (!json_is_object(task))
            return errbuf_set(err, "'task' must be a task object (docs/TASKS.md)");
        if (task_from_json(task, &op->task, &why) < 0)
            return errbuf_set(err, "task: %s", why.msg);
    }
    if (op->task.harness != TASK_HARNESS_COMMAND)
        return errbuf_set(err, "task: a session verifies a task of the 'command' harness (its "
                               "test command runs over the session's files); this one is not");
    if (op->task.time_factor > 0)
        return errbuf_set(err, "task: a relative time limit (time_limit) needs a run of the "
                               "task's reference in a fresh sandbox; give absolute limits");
    /* The tests run within the session's bounds, whatever the task asks. */
    if (op->task.limits.memory_mb > op->s->limits.memory_mb)
        op->task.limits.memory_mb = op->s->limits.memory_mb;
    if (op->task.limits.pids > op->s->limits.pids)
        op->task.limits.pids = op->s->limits.pids;
    if (op->task.limits.output_kb > op->s->limits.output_kb)
        op->task.limits.output_kb = op->s->limits.output_kb;
    op->job.prio = PRIO_NORMAL;
    if ((v = json_object_get(j, "priority")) && !json_is_null(v)) {
        if (!json_is_string(v) || !job_priority_parse(json_string_value(v), &op->job.prio))
            return errbuf_set(err, "'priority' must be \"high\", \"normal\" or \"low\"");
    }
    op->kind = OP_VERIFY;
    op->job.memory_mb = op->s->limits.memory_mb;
    op->job.pids = op->s->limits.pids + 2;
    return 0;
}

/* submit_job(as, r, op) — an exec or verification to the scheduler; 0, or the status of the
 * answer given (400 when it can never run here, 429 when the queue is full). */
static unsigned submit_job(struct api_sessions *as, struct http_request *r, struct op *op)
{
    op->job.run = op->kind == OP_VERIFY ? verify_job_run : exec_run;
    op->job.done = exec_done;
    op->job.ctx = op;
    if (!sched_fits(as->sched, &op->job)) {
        http_respond_error(r, 400, "bad_request",
                           "this exec needs %llu MB and %llu processes; this server runs jobs "
                           "of less (crucible serve --memory, --pids)",
                           (unsigned long long)op->job.memory_mb, (unsigned long long)op->job.pids);
        return 400;
    }
    if (sched_reserve(as->sched, 1) < 0) {
        metrics_add(as->m, "rejected_overload_total", "requests answered 429", "", 1);
        http_respond_error_with(r, 429, "Retry-After", "1", "overloaded",
                                "the queue is full; retry later");
        return 429;
    }
    op->queued = true;
    sched_submit(as->sched, &op->job);
    return 0;
}

/* files_args(path, path_len, mode, format, list, op, put, err) — a files request's query
 * parameters (each NULL when absent; path_len the decoded path's length) into op. */
static int files_args(const char *path, size_t path_len, const char *mode, const char *format,
                      const char *list, struct op *op, bool put, struct errbuf *err)
{
    uint64_t m;

    if (!path || !*path)
        return errbuf_set(err, "missing ?path= (a path in /work or /tmp, or relative to /work)");
    if (strlen(path) != path_len)
        return errbuf_set(err, "path: a NUL byte (%%00) cannot be in a path");
    if (!util_utf8_valid(path, path_len))
        return errbuf_set(err, "path: not UTF-8 (paths are named in JSON answers; reach a file "
                               "with another name through a tar of its directory)");
    if (!(op->path = strdup(path)))
        return errbuf_set(err, "out of memory"), -ENOMEM;
    if (format && strcmp(format, "tar") != 0)
        return errbuf_set(err, "format must be 'tar' (or absent: one file's bytes)");
    if (list && strcmp(list, "1") != 0 && strcmp(list, "0") != 0)
        return errbuf_set(err, "list must be 1 or 0");
    if (put) {
        if (list && strcmp(list, "1") == 0)
            return errbuf_set(err, "list=1 goes with GET");
        if (mode) {
            char *end;
            errno = 0;
            m = strtoull(mode, &end, 8);
            if (!*mode || *end || errno || m > 0777)
                return errbuf_set(err, "mode must be octal permission bits from 0 to 0777 "
                                       "(e.g. 0755)");
            op->mode = (mode_t)m;
        }
        op->kind = format ? OP_PUT_TAR : OP_PUT;
    } else {
        if (mode)
            return errbuf_set(err, "mode goes with PUT");
        if (format && list && strcmp(list, "1") == 0)
            return errbuf_set(err, "give list=1 or format=tar, not both");
        op->kind = format ? OP_GET_TAR : list && strcmp(list, "1") == 0 ? OP_LIST : OP_GET;
    }
    return 0;
}

/* files_query(r, op, put, err) — path, mode, list and format of a files request. */
static int files_query(struct http_request *r, struct op *op, bool put, struct errbuf *err)
{
    size_t path_len = 0;
    const char *path = http_query_n(r, "path", &path_len);

    return files_args(path, path_len, http_query(r, "mode"), http_query(r, "format"),
                      http_query(r, "list"), op, put, err);
}

bool api_sessions_path(const char *path)
{
    return strncmp(path, "/v1/sessions", 12) == 0 && (path[12] == '\0' || path[12] == '/');
}

static unsigned not_allowed(struct http_request *r, const char *route, const char *allow,
                            const char *method)
{
    http_respond_error_with(r, 405, "Allow", allow, "method_not_allowed", "%s wants %s, not %s",
                            route, allow, method);
    return 405;
}

/* A route below /v1/sessions/{id}: its name, the methods it takes (the 405's Allow header) and
 * how a request for it becomes an operation: prepare checks the request and fills op (0), or
 * answers it and gives the HTTP status; parse, when not NULL, is the JSON body's parser that
 * prepare uses. */
struct session_action {
    const char *name;
    const char *allow;
    unsigned (*prepare)(struct api_sessions *as, struct http_request *r, struct op *op,
                        const struct session_action *a);
    int (*parse)(struct api_sessions *as, const json_t *j, struct op *op, struct errbuf *err);
};

static unsigned prepare_files(struct api_sessions *as, struct http_request *r, struct op *op,
                              const struct session_action *a);
static unsigned prepare_fork(struct api_sessions *as, struct http_request *r, struct op *op,
                             const struct session_action *a);
static unsigned prepare_job(struct api_sessions *as, struct http_request *r, struct op *op,
                            const struct session_action *a);

static const struct session_action session_actions[] = {
    {"exec", "POST", prepare_job, parse_exec},
    {"files", "GET, PUT", prepare_files, NULL},
    {"fork", "POST", prepare_fork, NULL},
    {"verify", "POST", prepare_job, parse_verify},
};

/* action_find(name) — the session_actions entry of that name, or NULL. */
static const struct session_action *action_find(const char *name)
{
    for (size_t i = 0; i < sizeof(session_actions) / sizeof(session_actions[0]); i++)
        if (strcmp(session_actions[i].name, name) == 0)
            return &session_actions[i];
    return NULL;
}

/* method_in(allow, method) — whether method is one of allow's (", "-separated). */
static bool method_in(const char *allow, const char *method)
{
    size_t len = strlen(method);

    for (const char *p = allow; p; p = strchr(p, ','), p = p ? p + 2 : NULL)
        if (strncmp(p, method, len) == 0 && (p[len] == '\0' || p[len] == ','))
            return true;
    return false;
}

/* route_resolve(as, r, route, route_size, &a, &s) — r's route (named in route for the metrics)
 * and the session it names. An HTTP status when r was answered (no such route or session, a
 * wrong method); 1 for /v1/sessions itself (r not answered); 0 with *a (NULL for the session
 * itself, else its action: exec, files, fork or verify) and *s set. */
static int route_resolve(struct api_sessions *as, struct http_request *r, char *route,
                         size_t route_size, const struct session_action **a, struct session **s)
{
    const char *path = http_path(r), *method = http_method(r), *rest, *slash;
    char id[SESSION_ID_LEN + 8];

    *a = NULL;
    if (path[12] == '\0' || strcmp(path + 12, "/") == 0) {
        snprintf(route, route_size, "/v1/sessions");
        if (strcmp(method, "POST") == 0 || strcmp(method, "GET") == 0)
            return 1;
        return (int)not_allowed(r, route, "GET, POST", method);
    }
    rest = path + 13;
    slash = strchr(rest, '/');
    snprintf(id, sizeof(id), "%.*s", (int)(slash ? (size_t)(slash - rest) : strlen(rest)), rest);
    if (slash && !(*a = action_find(slash + 1))) {
        snprintf(route, route_size, "other");
        http_respond_error(r, 404, "not_found",
                           "no route %s %s (a session has exec, files, fork and verify)", method,
                           util_utf8_valid(path, strlen(path)) ? path : "(not UTF-8)");
        return 404;
    }
    snprintf(route, route_size, "/v1/sessions/{id}%s%s", *a ? "/" : "", *a ? (*a)->name : "");
    /* the method first: a wrong one is wrong whatever the id */
    if (!method_in(*a ? (*a)->allow : "GET, DELETE", method))
        return (int)not_allowed(r, route, *a ? (*a)->allow : "GET, DELETE", method);
    if (!(*s = session_find(as->t, id)) || !(*s)->sb) {
        http_respond_error(r, 404, "not_found",
                           session_id_valid(id) ? "no session %s (never made, deleted, or "
                                                  "reclaimed after its ttl or idle ttl)"
                                                : "no session '%.40s' (an id is s- and 24 hex "
                                                  "digits)",
                           util_utf8_valid(id, strlen(id)) ? id : "(not UTF-8)");
        return 404;
    }
    return 0;
}

/* refuse_busy(r, s) — the 409 of an operation asked while another runs on s. */
static unsigned refuse_busy(struct http_request *r, const struct session *s)
{
    http_respond_error(r, 409, "session_busy",
                       "session %s is running another operation (one at a time: an exec, a "
                       "file operation, a fork or a verification)",
                       s->id);
    return 409;
}

int api_sessions_precheck(struct api_sessions *as, struct http_request *r, char *route,
                          size_t route_size)
{
    const struct session_action *a;
    struct session *s = NULL;
    int st;

    if (!api_sessions_path(http_path(r)))
        return 0;
    st = route_resolve(as, r, route, route_size, &a, &s);
    if (st == 0 && a && s->busy)
        return (int)refuse_busy(r, s);
    return st > 1 ? st : 0;
}

/* prepare_files(as, r, op, a) — GET or PUT .../files: the query into op, and a PUT's body
 * taken (raw bytes). 0, or the status r was answered with. */
static unsigned prepare_files(struct api_sessions *as, struct http_request *r, struct op *op,
                              const struct session_action *a)
{
    struct errbuf err = {{0}};
    bool put = strcmp(http_method(r), "PUT") == 0;

    (void)as, (void)a;
    if (files_query(r, op, put, &err) < 0)
        return bad_request(r, err.msg[0] == 'o' ? "bad_request" : "bad_path", &err);
    if (put) {
        op->body = http_body_take(r, &op->len);
        if (!op->body && !(op->body = calloc(1, 1))) {
            http_respond_error(r, 500, "internal", "out of memory");
            return 500;
        }
        op->work.cost = op->len;
    }
    return 0;
}

/* fork_child(as, r, j, s, &c) — the new session a fork of s makes (busy until the copy is made;
 * its ttls from j, else s's), in the table. 0, or the status r was answered with (429 when
 * the table is full). */
static unsigned fork_child(struct api_sessions *as, struct http_request *r, const json_t *j,
                           const struct session *s, struct session **child)
{
    static const char *const keys[] = {"ttl_s", "idle_ttl_s", NULL};
    struct errbuf err = {{0}};
    struct session *c;

    if (api_only_keys(j, keys, &err) < 0)
        return bad_request(r, "bad_request", &err);
    if (!(c = session_new(as->t))) {
        if (errno != EAGAIN) {
            http_respond_error(r, 500, "internal", "cannot make a session");
            return 500;
        }
        http_respond_error_with(r, 429, "Retry-After", RETRY_AFTER, "too_many_sessions",
                                "this server holds at most %zu sessions (crucible serve "
                                "--max-sessions)",
                                session_max(as->t));
        return 429;
    }
    c->img = s->img;
    c->limits = s->limits;
    snprintf(c->parent, sizeof(c->parent), "%s", s->id);
    c->busy = true;
    if (number_field(j, "ttl_s", 1, MAX_TTL_S, s->ttl_s, &c->ttl_s, &err) < 0 ||
        number_field(j, "idle_ttl_s", 1, MAX_TTL_S, s->idle_ttl_s, &c->idle_ttl_s, &err) < 0) {
        session_unlink(as->t, c, SESSION_DELETED);
        session_free(c);
        return bad_request(r, "bad_request", &err);
    }
    *child = c;
    return 0;
}

/* prepare_fork(as, r, op, a) — POST .../fork: the child session made in the table. 0, or the
 * status r was answered with. */
static unsigned prepare_fork(struct api_sessions *as, struct http_request *r, struct op *op,
                             const struct session_action *a)
{
    struct errbuf err = {{0}};
    json_t *j = NULL;
    unsigned st;
    int rc = parse_json_body(r, &j, &err);

    (void)a;
    if (rc < 0)
        return bad_body(r, rc, &err);
    st = fork_child(as, r, j, op->s, &op->child);
    if (!st)
        op->kind = OP_FORK;
    json_decref(j);
    return st;
}

/* prepare_job(as, r, op, a) — POST .../exec or .../verify: the JSON body parsed into op by
 * a->parse (an unknown task_id is a 404, a library that failed a 500). 0, or the status r was
 * answered with. */
static unsigned prepare_job(struct api_sessions *as, struct http_request *r, struct op *op,
                            const struct session_action *a)
{
    struct errbuf err = {{0}};
    json_t *j = NULL;
    unsigned st = 0;
    int rc = parse_json_body(r, &j, &err);

    if (rc == 0)
        rc = a->parse(as, j, op, &err);
    json_decref(j);
    if (rc == -EFBIG) {
        st = bad_body(r, rc, &err);
    } else if (rc == -ENOENT) {
        http_respond_error(r, 404, "not_found", "%s", err.msg);
        st = 404;
    } else if (rc == -EIO) {
        http_respond_error(r, 500, "internal", "%s", err.msg);
        st = 500;
    } else if (rc < 0) {
        st = bad_request(r, "bad_request", &err);
    }
    return st;
}

/* route_session(as, r, s) — GET or DELETE of the session itself; the status answered. */
static int route_session(struct api_sessions *as, struct http_request *r, struct session *s)
{
    if (strcmp(http_method(r), "DELETE") == 0) {
        json_t *gone = json_pack("{s:s,s:b}", "id", s->id, "deleted", 1);
        reclaim(as, s, SESSION_DELETED); /* s may be freed */
        http_respond_json(r, 200, gone);
        return 200;
    }
    s->last_used = util_now();
    if (!s->busy && sandbox_usage(s->sb, &s->usage) == 0)
        s->has_usage = true;
    http_respond_json(r, 200, session_info(s, true));
    return 200;
}

/* op_start(as, r, op) — a prepared operation owns its session and goes to the scheduler (execs
 * and verifications) or the api workers; -EINPROGRESS, or the status r was answered with. */
static int op_start(struct api_sessions *as, struct http_request *r, struct op *op)
{
    struct session *s = op->s;
    unsigned st;

    s->busy = true;
    s->op = op;
    if (op->kind == OP_EXEC || op->kind == OP_CODE || op->kind == OP_VERIFY) {
        if ((st = submit_job(as, r, op))) {
            s->busy = false;
            s->op = NULL;
            op_free(op);
            return (int)st;
        }
    } else {
        op->work.run = op->kind == OP_FORK ? fork_run : files_run;
        op->work.done = op->kind == OP_FORK ? create_done : files_done;
        offload_submit(as->off, &op->work);
    }
    http_on_close(r, op_closed, op);
    return -EINPROGRESS;
}

int api_sessions_route(struct api_sessions *as, struct http_request *r, char *route,
                       size_t route_size, api_sessions_answered answered, void *ctx)
{
    const struct session_action *a;
    struct session *s = NULL;
    struct op *op;
    unsigned st;
    int rc;

    if (!api_sessions_path(http_path(r)))
        return 0;
    if ((rc = route_resolve(as, r, route, route_size, &a, &s)) > 1)
        return rc;
    if (rc == 1)
        return strcmp(http_method(r), "POST") == 0 ? route_create(as, r, route, answered, ctx)
                                                   : route_list(as, r);
    if (!a)
        return route_session(as, r, s);
    s->last_used = util_now();
    if (s->busy)
        return (int)refuse_busy(r, s);
    if (!(op = op_new(as, r, route, answered, ctx))) {
        http_respond_error(r, 500, "internal", "out of memory");
        return 500;
    }
    op->s = s;
    if ((st = a->prepare(as, r, op, a))) {
        op_free(op);
        return (int)st;
    }
    return op_start(as, r, op);
}

/* ---- checking without a server (api_fuzz.h) ------------------------------------------ */

int api_sessions_check_body(struct api_sessions *as, const char *action, const char *body,
                            size_t len, struct errbuf *err)
{
    static const char *const fork_keys[] = {"ttl_s", "idle_ttl_s", NULL};
    /* the session an exec, a verification or a fork would name: a fresh one, not in the
     * table, with the server's defaults */
    struct session s = {.img = as->cfg.host,
                        .limits = as->cfg.defaults,
                        .ttl_s = as->cfg.ttl_s,
                        .idle_ttl_s = as->cfg.idle_ttl_s};
    struct op *op = NULL;
    json_t *j = NULL;
    double ttl;
    int rc;

    s.created = s.last_used = util_now();
    if ((rc = parse_json(body, len, &j, err)) < 0)
        return rc == -EFBIG ? rc : -EINVAL;
    if (strcmp(action, "create") == 0) {
        rc = parse_create(as, j, &s, err) < 0 ? -EINVAL : 0;
    } else if (strcmp(action, "fork") == 0) {
        rc = api_only_keys(j, fork_keys, err) < 0 ||
                     number_field(j, "ttl_s", 1, MAX_TTL_S, s.ttl_s, &ttl, err) < 0 ||
                     number_field(j, "idle_ttl_s", 1, MAX_TTL_S, s.idle_ttl_s, &ttl, err) < 0
                 ? -EINVAL
                 : 0;
    } else if (strcmp(action, "exec") == 0 || strcmp(action, "verify") == 0) {
        if (!(op = op_new(as, NULL, action, NULL, NULL))) {
            json_decref(j);
            return errbuf_set(err, "out of memory"), -ENOMEM;
        }
        op->s = &s;
        rc = action[0] == 'e' ? parse_exec(as, j, op, err) : parse_verify(as, j, op, err);
        if (rc < 0 && rc != -ENOENT && rc != -EIO && rc != -ENOMEM)
            rc = -EINVAL;
        op_free(op);
    } else {
        rc = (errbuf_set(err, "no session action '%s' to check", action), -ENOTSUP);
    }
    json_decref(j);
    return rc;
}

int api_sessions_check_files(struct api_sessions *as, bool put, const char *path, size_t path_len,
                             const char *mode, const char *format, const char *list,
                             struct errbuf *err)
{
    struct op *op = op_new(as, NULL, "files", NULL, NULL);
    int rc;

    if (!op)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    rc = files_args(path, path_len, mode, format, list, op, put, err);
    op_free(op);
    return rc < 0 ? (rc == -ENOMEM ? rc : -EINVAL) : 0;
}

/* ---- lifecycle ----------------------------------------------------------------------- */

struct api_sessions *api_sessions_new(const struct api_sessions_config *cfg, struct sched *sched,
                                      struct offload *off, struct metrics *m)
{
    struct api_sessions *as = calloc(1, sizeof(*as));

    if (!as)
        return NULL;
    as->cfg = *cfg;
    as->sched = sched;
    as->off = off;
    as->m = m;
    if (!(as->t = session_table_new(cfg->max_sessions))) {
        free(as);
        return NULL;
    }
    gauges(as);
    metrics_add(m, "sessions_created_total", "sessions created (forks included)", "", 0);
    return as;
}

void api_sessions_set_log(struct api_sessions *as,
                          void (*log)(void *ctx, const char *event, json_t *fields), void *ctx)
{
    as->log = log;
    as->log_ctx = ctx;
}

void api_sessions_set_output_budget(struct api_sessions *as, const struct api_sessions_budget *b)
{
    as->budget = *b;
}

void api_sessions_stop(struct api_sessions *as)
{
    if (as)
        as->stopping = true;
}

void api_sessions_free(struct api_sessions *as)
{
    struct session *s, *next;

    if (!as)
        return;
    as->stopping = true;
    for (s = session_first(as->t); s; s = next) {
        next = s->next;
        session_unlink(as->t, s, SESSION_DELETED);
        dispose(as, s->sb); /* on this thread: the server is stopping */
        session_free(s);
    }
    session_table_free(as->t);
    free(as);
}

/* reclaim_dead(as, now) — idle sessions whose sandbox died while nobody used them (its init
 * killed from outside, the OOM killer) reclaimed as broken, so that their listing and GET
 * stop saying live and their next exec is a 404, not an infra_error. At most once a second
 * (the tick comes after every round of the loop): one poll() per idle session then
 * (sandbox_alive), nothing sent to the sandboxes; a busy session's operation finds out
 * itself (init_gone). Loop thread, from the tick. */
static void reclaim_dead(struct api_sessions *as, double now)
{
    struct session *s, *next;

    if (now - as->dead_checked < 1.0)
        return;
    as->dead_checked = now;
    for (s = session_first(as->t); s; s = next) {
        next = s->next;
        if (!s->busy && s->sb && !sandbox_alive(s->sb))
            reclaim(as, s, SESSION_BROKEN); /* s is freed */
    }
}

int api_sessions_timeout_ms(struct api_sessions *as)
{
    return session_count(as->t) ? 1000 : -1;
}

void api_sessions_tick(struct api_sessions *as)
{
    enum session_reclaim why;
    struct session *s;
    double now = util_now();

    while ((s = session_due(as->t, now, &why)))
        reclaim(as, s, why);
    reclaim_dead(as, now);
}
