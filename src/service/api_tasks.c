/*
 * api_tasks.c — the task library's routes (api_tasks.h). Query parameters mirror the CLI's
 * options: tag (comma-separated, all required), source, language, id_prefix, status,
 * exclude, min_pass, max_pass, model, limit; sample adds n, seed, explore.
 *
 * The query is read and checked on the loop (a bad one is answered there at once); what it
 * asks of the store — an import of a whole JSONL body, a list of many rows — is a `call`
 * done on an api worker (offload.h), which leaves the answer as text for the loop to send.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "service/api_tasks.h"
#include "library/rng.h"
#include "service/offload.h"

#define MAX_QUERY_TAGS 32

struct query {
    struct store_filter f;
    const char *tags[MAX_QUERY_TAGS];
    char tagbuf[1024];
    char *owned[3]; /* copies of source, id_prefix, model: the request may go first */
};

enum call_op { OP_IMPORT, OP_LIST, OP_SAMPLE, OP_STATS, OP_MODELS, OP_GET };

/* One request's store work, on its way through an api worker. */
struct call {
    struct offload_work work; /* first member: a struct offload_work * is a struct call * */
    struct store *s;
    struct offload *off;
    struct http_request *r; /* loop thread only; NULL once the client has gone */
    enum call_op op;
    char route[32];
    struct query q;
    size_t limit;  /* list */
    uint64_t n;    /* sample */
    uint64_t seed; /* sample */
    double explore;
    char *id, *model; /* get */
    char *body;       /* import */
    size_t len;
    api_tasks_answered answered;
    void *ctx;
    double t0;
    /* Set by the worker. */
    unsigned status;
    char *text; /* the answer, JSON with a newline */
    size_t text_len;
};

/* keep(q, v) — a copy of v that q owns (NULL stays NULL; out of memory gives NULL). */
static const char *keep(struct query *q, const char *v)
{
    for (size_t i = 0; v && i < sizeof(q->owned) / sizeof(q->owned[0]); i++)
        if (!q->owned[i])
            return q->owned[i] = strdup(v);
    return NULL;
}

static void query_release(struct query *q)
{
    for (size_t i = 0; i < sizeof(q->owned) / sizeof(q->owned[0]); i++)
        free(q->owned[i]);
}

static unsigned bad(struct http_request *r, const char *fmt, const char *what)
{
    http_respond_error(r, 400, "bad_request", fmt, what);
    return 400;
}

/* parse_query(r, q) — the filter from the query string; 0, or the status of the error
 * answer already given. */
static unsigned parse_query(struct http_request *r, struct query *q)
{
    struct errbuf err = {{0}};
    const char *v;
    double d;

    memset(q, 0, sizeof(*q));
    if ((v = http_query(r, "tag")) && *v) {
        char *save = NULL;
        if (strlen(v) >= sizeof(q->tagbuf))
            return bad(r, "'%s' is too long", "tag");
        snprintf(q->tagbuf, sizeof(q->tagbuf), "%s", v);
        for (char *t = strtok_r(q->tagbuf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (q->f.ntags == MAX_QUERY_TAGS)
                return bad(r, "at most 32 tags in '%s'", "tag");
            q->tags[q->f.ntags++] = t;
        }
        q->f.tags = q->tags;
    }
    q->f.source = keep(q, http_query(r, "source"));
    q->f.id_prefix = keep(q, http_query(r, "id_prefix"));
    if ((v = http_query(r, "language"))) {
        if (!lang_find(v))
            return bad(r, "unknown language '%s'", v);
        q->f.language = lang_find(v)->name;
    }
    if ((v = http_query(r, "model")) && !*v)
        return bad(r, "'%s' must not be empty", "model");
    q->f.model = keep(q, v);
    if ((v = http_query(r, "status")) && store_status_mask_parse(v, &q->f.status_mask, &err) < 0)
        return bad(r, "status: %s", err.msg);
    if ((v = http_query(r, "exclude")) && store_status_mask_parse(v, &q->f.exclude_mask, &err) < 0)
        return bad(r, "exclude: %s", err.msg);
    q->f.min_pass = 0;
    q->f.max_pass = 1;
    if ((v = http_query(r, "min_pass"))) {
        if (!util_parse_double(v, 0, 1, &d))
            return bad(r, "'%s' must be a number from 0 to 1", "min_pass");
        q->f.band = true;
        q->f.min_pass = d;
    }
    if ((v = http_query(r, "max_pass"))) {
        if (!util_parse_double(v, 0, 1, &d))
            return bad(r, "'%s' must be a number from 0 to 1", "max_pass");
        q->f.band = true;
        q->f.max_pass = d;
    }
    if (q->f.min_pass > q->f.max_pass)
        return bad(r, "%s: min_pass is above max_pass", "band");
    return 0;
}

struct rows {
    json_t *list;
    size_t limit;
};

static int add_row(const struct store_task *row, void *arg)
{
    struct rows *rs = arg;

    if (rs->limit && json_array_size(rs->list) == rs->limit)
        return 1;
    return json_array_append_new(rs->list, store_row_json(row)) ? -ENOMEM : 0;
}

static int add_sampled(const struct store_task *row, bool explored, void *arg)
{
    json_t *j = store_row_json(row);

    json_object_set_new(j, "explore", json_boolean(explored));
    return json_array_append_new(((struct rows *)arg)->list, j) ? -ENOMEM : 0;
}

/* ---- the store work (api worker threads) -------------------------------------------- */

/* answer(c, status, j) — c's answer: j as text (the reference is stolen). */
static void answer(struct call *c, unsigned status, json_t *j)
{
    char *text =
        j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)) : NULL;
    char *line;

    json_decref(j);
    c->status = status;
    if (!text)
        return; /* c->text NULL: out of memory, said on the loop */
    c->text_len = strlen(text);
    if (!(line = realloc(text, c->text_len + 2))) {
        free(text);
        return;
    }
    line[c->text_len++] = '\n';
    line[c->text_len] = '\0';
    c->text = line;
}

/* answer_error(c, status, code, msg) — the error shape every route gives. */
static void answer_error(struct call *c, unsigned status, const char *code, const char *msg)
{
    answer(c, status, json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg));
}

static void db_failed(struct call *c, const struct errbuf *err)
{
    answer_error(c, 500, "internal", err->msg);
}

static void do_list(struct call *c)
{
    struct rows rs = {.list = json_array(), .limit = c->limit};
    struct errbuf err = {{0}};

    if (store_list(c->s, &c->q.f, add_row, &rs, &err) < 0) {
        json_decref(rs.list);
        db_failed(c, &err);
        return;
    }
    answer(
        c, 200,
        json_pack("{s:I, s:o}", "count", (json_int_t)json_array_size(rs.list), "tasks", rs.list));
}

static void do_sample(struct call *c)
{
    struct rows rs = {.list = json_array()};
    struct errbuf err = {{0}};

    if (store_sample(c->s, &c->q.f, c->n, c->explore, c->seed, add_sampled, &rs, &err) < 0) {
        json_decref(rs.list);
        db_failed(c, &err);
        return;
    }
    answer(c, 200,
           json_pack("{s:I, s:I, s:o}", "seed", (json_int_t)c->seed, "count",
                     (json_int_t)json_array_size(rs.list), "tasks", rs.list));
}

static void do_stats(struct call *c)
{
    struct store_tally t;
    struct errbuf err = {{0}};

    if (store_tally(c->s, &c->q.f, &t, &err) < 0) {
        db_failed(c, &err);
        return;
    }
    answer(c, 200, store_tally_json(&t, c->q.f.model));
}

static void do_models(struct call *c)
{
    struct errbuf err = {{0}};
    json_t *models = store_models_json(c->s, &err);

    if (!models) {
        db_failed(c, &err);
        return;
    }
    answer(c, 200, json_pack("{s:o}", "models", models));
}

static void do_get(struct call *c)
{
    struct store_task row;
    struct errbuf err = {{0}};
    json_t *j;
    int rc;

    if ((rc = store_get(c->s, c->id, c->model, &row, &err)) < 0) {
        if (rc != -ENOENT)
            db_failed(c, &err);
        else
            answer_error(c, 404, "not_found", err.msg);
        return;
    }
    j = store_row_json(&row);
    json_object_set_new(j, "version_history", store_versions_json(c->s, row.id, &err));
    json_object_set_new(j, "task", store_task_body(c->s, row.id, row.version));
    store_task_release(&row);
    answer(c, 200, j);
}

/* do_import — a JSONL body: the valid tasks are committed together; bad lines are listed
 * (at most 100 of them in the answer) and counted. 400 when no line was valid. */
static void do_import(struct call *c)
{
    size_t lineno = 0, counts[3] = {0}, nbad = 0;
    const char *p = c->body, *end = c->body + c->len;
    json_t *errors = json_array(), *seen = json_object();
    struct errbuf err = {{0}};
    unsigned code = 200;

    if (store_begin(c->s, &err) < 0) {
        json_decref(errors);
        json_decref(seen);
        db_failed(c, &err);
        return;
    }
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char why[600] = "";
        json_error_t je;
        json_t *j = NULL;
        struct task t;
        enum store_import_outcome out;

        lineno++;
        memset(&t, 0, sizeof(t));
        if (strspn(p, " \t\r") >= n)
            goto next;
        j = json_loadb(p, n, JSON_REJECT_DUPLICATES, &je);
        if (!j) {
            snprintf(why, sizeof(why), "not valid JSON: %s", je.text);
        } else if (task_from_json(j, &t, &err) < 0) {
            snprintf(why, sizeof(why), "%s", err.msg);
        } else if (json_object_get(seen, t.id)) {
            snprintf(why, sizeof(why), "duplicate task id '%s' (line %lld has it)", t.id,
                     (long long)json_integer_value(json_object_get(seen, t.id)));
        } else if (store_import(c->s, &t, &out, &err) < 0) {
            task_release(&t);
            json_decref(j);
            store_rollback(c->s);
            json_decref(errors);
            json_decref(seen);
            db_failed(c, &err);
            return;
        } else {
            counts[out]++;
            json_object_set_new(seen, t.id, json_integer((json_int_t)lineno));
        }
        if (why[0]) {
            nbad++;
            if (json_array_size(errors) < 100)
                json_array_append_new(
                    errors, json_pack("{s:I, s:s}", "line", (json_int_t)lineno, "message", why));
        }
        task_release(&t);
        json_decref(j);
    next:
        p += n + (nl ? 1 : 0);
    }
    json_decref(seen);
    if (store_commit(c->s, &err) < 0) {
        json_decref(errors);
        db_failed(c, &err);
        return;
    }
    if (nbad && !counts[0] && !counts[1] && !counts[2])
        code = 400;
    if (!nbad && !counts[0] && !counts[1] && !counts[2]) {
        json_decref(errors);
        answer_error(c, 400, "bad_request", "the body holds no task (JSONL: one per line)");
        return;
    }
    {
        json_t *j = json_pack("{s:I, s:I, s:I, s:I, s:o}", "new", (json_int_t)counts[0], "changed",
                              (json_int_t)counts[1], "unchanged", (json_int_t)counts[2], "bad",
                              (json_int_t)nbad, "errors", errors);
        if (code == 400) { /* the error shape every route gives, plus the lines' problems */
            char msg[160];
            snprintf(msg, sizeof(msg), "no valid task in the body (%zu bad line%s, see 'errors')",
                     nbad, nbad == 1 ? "" : "s");
            json_object_set_new(j, "error",
                                json_pack("{s:s, s:s}", "code", "bad_request", "message", msg));
        }
        answer(c, code, j);
    }
}

static void call_run(struct offload_work *w)
{
    struct call *c = (struct call *)w;

    switch (c->op) {
    case OP_IMPORT:
        do_import(c);
        free(c->body); /* before the worker trims the heap */
        c->body = NULL;
        break;
    case OP_LIST:
        do_list(c);
        break;
    case OP_SAMPLE:
        do_sample(c);
        break;
    case OP_STATS:
        do_stats(c);
        break;
    case OP_MODELS:
        do_models(c);
        break;
    case OP_GET:
    default:
        do_get(c);
        break;
    }
}

/* ---- requests and answers (loop thread) --------------------------------------------- */

static void call_free(struct call *c)
{
    query_release(&c->q);
    free(c->id);
    free(c->model);
    free(c->body);
    free(c->text);
    free(c);
}

/* call_closed — the client left while its call was with an api worker. */
static void call_closed(void *ctx, bool aborted)
{
    struct call *c = ctx;

    (void)aborted;
    c->r = NULL;
    offload_cancel(c->off, &c->work);
}

/* call_done — back on the loop: the answer goes out (unless the client has gone). */
static void call_done(struct offload_work *w)
{
    struct call *c = (struct call *)w;
    struct http_request *r = c->r;
    unsigned status = c->status;

    if (r && w->cancelled) { /* the api workers stopped before running it */
        http_on_close(r, NULL, NULL);
        status = 503;
        http_respond_error(r, status, "internal", "the server is stopping");
    } else if (r) {
        http_on_close(r, NULL, NULL);
        if (c->text) {
            http_respond(r, status, "application/json", c->text, c->text_len, NULL, NULL);
        } else {
            status = 500;
            http_respond_error(r, status, "internal", "out of memory building the answer");
        }
        if (c->answered)
            c->answered(c->ctx, c->route, status, c->t0);
    }
    call_free(c);
}

/* prepare_list / _sample / _get — what the call needs from the request, read now: the
 * request's strings are not the worker's to read. 0, or the status of the answer given. */
static unsigned prepare_list(struct call *c, struct http_request *r)
{
    const char *v;
    uint64_t u;
    unsigned st;

    if ((st = parse_query(r, &c->q)))
        return st;
    if ((v = http_query(r, "limit"))) {
        if (!util_parse_u64(v, 1, 100000, &u))
            return bad(r, "'%s' must be a whole number from 1 to 100000", "limit");
        c->limit = u;
    }
    return 0;
}

static unsigned prepare_sample(struct call *c, struct http_request *r)
{
    const char *v;
    unsigned st;

    if ((st = parse_query(r, &c->q)))
        return st;
    if (!(v = http_query(r, "n")) || !util_parse_u64(v, 1, 100000, &c->n))
        return bad(r, "'%s' (how many tasks) must be a whole number from 1 to 100000", "n");
    c->explore = 0.2;
    if ((v = http_query(r, "explore")) && !util_parse_double(v, 0, 1, &c->explore))
        return bad(r, "'%s' must be a number from 0 to 1", "explore");
    if ((v = http_query(r, "seed"))) {
        if (!util_parse_u64(v, 0, UINT64_MAX, &c->seed))
            return bad(r, "'%s' must be a whole number", "seed");
    } else {
        struct rng rng;
        rng_seed_from_entropy(&rng);
        c->seed = rng_next(&rng) >> 11; /* fits a JSON number exactly, for the answer */
    }
    if (!http_query(r, "exclude"))
        c->q.f.exclude_mask = 1u << STORE_BROKEN | 1u << STORE_FLAKY | 1u << STORE_WEAK_TESTS;
    return 0;
}

static unsigned prepare_get(struct call *c, struct http_request *r, const char *id)
{
    const char *model = http_query(r, "model");

    if (!(c->id = strdup(id)) || (model && *model && !(c->model = strdup(model)))) {
        http_respond_error(r, 500, "internal", "out of memory");
        return 500;
    }
    return 0;
}

int api_tasks_route(struct store *s, struct offload *off, struct http_request *r, char *route,
                    size_t route_size, api_tasks_answered answered, void *ctx)
{
    const char *path = http_path(r), *method = http_method(r), *rest;
    bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;
    struct call *c;
    unsigned st = 0;

    if (strncmp(path, "/v1/tasks", 9) != 0 || (path[9] != '\0' && path[9] != '/'))
        return 0;
    rest = path[9] == '/' ? path + 10 : NULL;
    snprintf(route, route_size, "/v1/tasks%s",
             !rest                         ? ""
             : strcmp(rest, "sample") == 0 ? "/sample"
             : strcmp(rest, "stats") == 0  ? "/stats"
             : strcmp(rest, "models") == 0 ? "/models"
                                           : "/{id}");
    if (!s) {
        http_respond_error(r, 404, "no_library",
                           "this server has no task library: start it with --db PATH");
        return 404;
    }
    if (!rest && post) {
    } else if (!get) {
        http_respond_error_with(r, 405, "Allow", rest ? "GET" : "GET, POST", "method_not_allowed",
                                "%s wants %s, not %s", route, rest ? "GET" : "GET or POST", method);
        return 405;
    } else if (rest && !*rest) {
        http_respond_error(r, 404, "not_found", "GET /v1/tasks/{id} needs an id");
        return 404;
    }
    if (!(c = calloc(1, sizeof(*c)))) {
        http_respond_error(r, 500, "internal", "out of memory");
        return 500;
    }
    c->s = s;
    c->off = off;
    c->r = r;
    c->answered = answered;
    c->ctx = ctx;
    c->t0 = util_now();
    snprintf(c->route, sizeof(c->route), "%s", route);
    if (!rest && post) {
        c->op = OP_IMPORT;
        c->body = http_body_take(r, &c->len);
        if (!c->body && !(c->body = calloc(1, 1))) {
            http_respond_error(r, 500, "internal", "out of memory");
            st = 500;
        }
        c->work.cost = c->len;
    } else if (!rest) {
        c->op = OP_LIST;
        st = prepare_list(c, r);
    } else if (strcmp(rest, "sample") == 0) {
        c->op = OP_SAMPLE;
        st = prepare_sample(c, r);
    } else if (strcmp(rest, "stats") == 0) {
        c->op = OP_STATS;
        st = parse_query(r, &c->q);
    } else if (strcmp(rest, "models") == 0) {
        c->op = OP_MODELS;
    } else {
        c->op = OP_GET;
        st = prepare_get(c, r, rest);
    }
    if (st) {
        call_free(c);
        return (int)st;
    }
    c->work.run = call_run;
    c->work.done = call_done;
    http_on_close(r, call_closed, c);
    offload_submit(off, &c->work);
    return -EINPROGRESS;
}
