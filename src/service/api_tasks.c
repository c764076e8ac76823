/*
 * api_tasks.c — the task library's routes (api_tasks.h). Query parameters mirror the CLI's
 * options: tag (comma-separated, all required), source, language, id_prefix, status,
 * exclude, min_pass, max_pass, model, limit; sample adds n, seed, explore.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "service/api_tasks.h"
#include "library/rng.h"

#define MAX_QUERY_TAGS 32

struct query {
    struct store_filter f;
    const char *tags[MAX_QUERY_TAGS];
    char tagbuf[1024];
};

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
    q->f.source = http_query(r, "source");
    q->f.id_prefix = http_query(r, "id_prefix");
    if ((v = http_query(r, "language"))) {
        if (!lang_find(v))
            return bad(r, "unknown language '%s'", v);
        q->f.language = lang_find(v)->name;
    }
    if ((v = http_query(r, "model")) && !*v)
        return bad(r, "'%s' must not be empty", "model");
    q->f.model = v;
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

static unsigned db_failed(struct http_request *r, const struct errbuf *err)
{
    http_respond_error(r, 500, "internal", "%s", err->msg);
    return 500;
}

static unsigned route_list(struct store *s, struct http_request *r)
{
    struct query q;
    struct rows rs = {.list = json_array()};
    struct errbuf err = {{0}};
    const char *v;
    uint64_t u;
    unsigned st;

    if ((st = parse_query(r, &q)))
        return json_decref(rs.list), st;
    if ((v = http_query(r, "limit"))) {
        if (!util_parse_u64(v, 1, 100000, &u))
            return json_decref(rs.list),
                   bad(r, "'%s' must be a whole number from 1 to 100000", "limit");
        rs.limit = u;
    }
    if (store_list(s, &q.f, add_row, &rs, &err) < 0)
        return json_decref(rs.list), db_failed(r, &err);
    http_respond_json(
        r, 200,
        json_pack("{s:I, s:o}", "count", (json_int_t)json_array_size(rs.list), "tasks", rs.list));
    return 200;
}

static unsigned route_sample(struct store *s, struct http_request *r)
{
    struct query q;
    struct rows rs;
    struct errbuf err = {{0}};
    const char *v;
    uint64_t n = 0, seed;
    double explore = 0.2;
    unsigned st;

    if ((st = parse_query(r, &q)))
        return st;
    if (!(v = http_query(r, "n")) || !util_parse_u64(v, 1, 100000, &n))
        return bad(r, "'%s' (how many tasks) must be a whole number from 1 to 100000", "n");
    if ((v = http_query(r, "explore")) && !util_parse_double(v, 0, 1, &explore))
        return bad(r, "'%s' must be a number from 0 to 1", "explore");
    if ((v = http_query(r, "seed"))) {
        if (!util_parse_u64(v, 0, UINT64_MAX, &seed))
            return bad(r, "'%s' must be a whole number", "seed");
    } else {
        struct rng rng;
        rng_seed_from_entropy(&rng);
        seed = rng_next(&rng) >> 11; /* fits a JSON number exactly, for the answer */
    }
    if (!http_query(r, "exclude"))
        q.f.exclude_mask = 1u << STORE_BROKEN | 1u << STORE_FLAKY | 1u << STORE_WEAK_TESTS;
    rs.list = json_array();
    if (store_sample(s, &q.f, n, explore, seed, add_sampled, &rs, &err) < 0)
        return json_decref(rs.list), db_failed(r, &err);
    http_respond_json(r, 200,
                      json_pack("{s:I, s:I, s:o}", "seed", (json_int_t)seed, "count",
                                (json_int_t)json_array_size(rs.list), "tasks", rs.list));
    return 200;
}

static unsigned route_stats(struct store *s, struct http_request *r)
{
    struct query q;
    struct store_tally t;
    struct errbuf err = {{0}};
    unsigned code;

    if ((code = parse_query(r, &q)))
        return code;
    if (store_tally(s, &q.f, &t, &err) < 0)
        return db_failed(r, &err);
    http_respond_json(r, 200, store_tally_json(&t, q.f.model));
    return 200;
}

static unsigned route_get(struct store *s, struct http_request *r, const char *id)
{
    struct store_task row;
    struct errbuf err = {{0}};
    const char *model = http_query(r, "model");
    json_t *j;
    int rc;

    if ((rc = store_get(s, id, model && *model ? model : NULL, &row, &err)) < 0) {
        if (rc != -ENOENT)
            return db_failed(r, &err);
        http_respond_error(r, 404, "not_found", "%s", err.msg);
        return 404;
    }
    j = store_row_json(&row);
    json_object_set_new(j, "version_history", store_versions_json(s, row.id, &err));
    json_object_set_new(j, "task", store_task_body(s, row.id, row.version));
    store_task_release(&row);
    http_respond_json(r, 200, j);
    return 200;
}

/* route_import — a JSONL body: the valid tasks are committed together; bad lines are listed
 * (at most 100 of them in the answer) and counted. 400 when no line was valid. */
static unsigned route_import(struct store *s, struct http_request *r)
{
    size_t len, lineno = 0, counts[3] = {0}, nbad = 0;
    const char *body = http_body(r, &len), *p = body, *end = body + len;
    json_t *errors = json_array(), *seen = json_object();
    struct errbuf err = {{0}};
    unsigned code = 200;

    if (store_begin(s, &err) < 0) {
        json_decref(errors);
        json_decref(seen);
        return db_failed(r, &err);
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
        } else if (store_import(s, &t, &out, &err) < 0) {
            task_release(&t);
            json_decref(j);
            store_rollback(s);
            json_decref(errors);
            json_decref(seen);
            return db_failed(r, &err);
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
    if (store_commit(s, &err) < 0) {
        json_decref(errors);
        json_decref(seen);
        return db_failed(r, &err);
    }
    if (nbad && !counts[0] && !counts[1] && !counts[2])
        code = 400;
    if (!nbad && !counts[0] && !counts[1] && !counts[2]) {
        json_decref(errors);
        json_decref(seen);
        http_respond_error(r, 400, "bad_request", "the body holds no task (JSONL: one per line)");
        return 400;
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
        http_respond_json(r, code, j);
    }
    json_decref(seen);
    return code;
}

unsigned api_tasks_route(struct store *s, struct http_request *r, char *route, size_t route_size)
{
    const char *path = http_path(r), *method = http_method(r), *rest;
    bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;

    if (strncmp(path, "/v1/tasks", 9) != 0 || (path[9] != '\0' && path[9] != '/'))
        return 0;
    rest = path[9] == '/' ? path + 10 : NULL;
    snprintf(route, route_size, "/v1/tasks%s",
             !rest                         ? ""
             : strcmp(rest, "sample") == 0 ? "/sample"
             : strcmp(rest, "stats") == 0  ? "/stats"
                                           : "/{id}");
    if (!s) {
        http_respond_error(r, 404, "no_library",
                           "this server has no task library: start it with --db PATH");
        return 404;
    }
    if (!rest && post)
        return route_import(s, r);
    if (!get) {
        http_respond_error_with(r, 405, "Allow", rest ? "GET" : "GET, POST", "method_not_allowed",
                                "%s wants %s, not %s", route, rest ? "GET" : "GET or POST", method);
        return 405;
    }
    if (!rest)
        return route_list(s, r);
    if (strcmp(rest, "sample") == 0)
        return route_sample(s, r);
    if (strcmp(rest, "stats") == 0)
        return route_stats(s, r);
    if (!*rest) {
        http_respond_error(r, 404, "not_found", "GET /v1/tasks/{id} needs an id");
        return 404;
    }
    return route_get(s, r, rest);
}
