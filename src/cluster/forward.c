/*
 * forward.c — the API's routes on a gateway (forward.h).
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/forward_int.h"
#include "judge/task.h"
#include "judge/verify.h"
#include "library/store.h"

#define PEEK_MAX (64u << 10) /* bodies read for their "priority" (larger: normal) */

unsigned forward_key(struct http_request *r, const char **key)
{
    *key = http_header(r, "Idempotency-Key");
    if (*key && !broker_idem_key_valid(*key)) {
        http_respond_error(r, 400, "bad_request",
                           "Idempotency-Key must be 1 to %d characters of A-Z a-z 0-9 . _ : -",
                           BROKER_IDEM_KEY_MAX);
        return 400;
    }
    return 0;
}

/* ---- a verification by task_id ------------------------------------------------------ */

struct by_id {
    struct store *store;
    char *id;
    char version[sizeof(((struct task *)0)->version)];
    char model[201];
};

static bool verdict_parse(const char *name, enum verdict *v)
{
    for (int i = 0; i < VERDICT_COUNT; i++)
        if (strcmp(verdict_name((enum verdict)i), name) == 0) {
            *v = (enum verdict)i;
            return true;
        }
    return false;
}

/* by_id_record: the figures store_record keeps; "record_error" added too when it failed. */
bool by_id_record(void *ctx, unsigned status, const char *body, size_t len, char **out,
                  size_t *outlen)
{
    struct by_id *b = ctx;
    json_t *j = status == 200 ? json_loadb(body, len, 0, NULL) : NULL, *reward;
    struct verify_result vr;
    struct errbuf err = {{0}};
    const char *verdict;
    bool recorded = false, changed = false;

    if (json_is_object(j)) {
        memset(&vr, 0, sizeof(vr));
        verdict = json_string_value(json_object_get(j, "verdict"));
        reward = json_object_get(j, "reward");
        if (!verdict || !verdict_parse(verdict, &vr.verdict)) {
            errbuf_set(&err, "the worker's answer has no verdict to record");
        } else {
            vr.reward_null = !json_is_number(reward);
            vr.reward = json_number_value(reward);
            vr.passed = (size_t)json_integer_value(json_object_get(j, "passed"));
            vr.total = (size_t)json_integer_value(json_object_get(j, "total"));
            vr.flaky = json_is_true(json_object_get(j, "flaky"));
            vr.wall_time = json_number_value(json_object_get(j, "wall_time"));
            recorded = store_record(b->store, b->id, b->version, b->model, &vr, &err) == 0;
        }
        json_object_set_new(j, "recorded", json_boolean(recorded));
        json_object_set_new(j, "model", json_string(b->model));
        if (!recorded)
            json_object_set_new(j, "record_error", json_string(err.msg));
        if ((*out = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)))) {
            *outlen = strlen(*out);
            changed = true;
        }
    }
    json_decref(j);
    free(b->id);
    free(b);
    return changed;
}

/* inline_task(t) — the task as the worker's node must see it: its JSON, with the reference
 * time the library measured (a relative time limit is then not calibrated again there). */
static json_t *inline_task(const struct task *t)
{
    json_t *task = json_deep_copy(t->json), *tl;

    if (task && t->reference_time >= 0 && json_is_object(tl = json_object_get(task, "time_limit")))
        json_object_set_new(tl, "reference_time", json_real(t->reference_time));
    return task;
}

unsigned by_id_inline(struct store *store, json_t *j, struct by_id **hook, char *image, size_t size,
                      struct errbuf *err)
{
    const json_t *id = json_object_get(j, "task_id"), *model = json_object_get(j, "model");
    struct task t;
    struct by_id *b;
    json_t *task;
    int rc;

    *hook = NULL;
    if (!store)
        return errbuf_set(err, "'task_id' needs the task library: start the gateway with --db "
                               "PATH, or send the task itself as 'task'"),
               400;
    if (!json_is_string(id) || json_object_get(j, "task"))
        return errbuf_set(err, json_is_string(id) ? "give 'task' or 'task_id', not both"
                                                  : "'task_id' must be a string"),
               400;
    if (model &&
        (!json_is_string(model) || !json_string_length(model) || json_string_length(model) > 200))
        return errbuf_set(err, "'model' must be a string of 1 to 200 characters"), 400;
    memset(&t, 0, sizeof(t));
    if ((rc = store_task_load(store, json_string_value(id), NULL, &t, err)) < 0) {
        task_release(&t);
        return rc == -ENOENT ? 404 : 500;
    }
    if (!(b = calloc(1, sizeof(*b))) || !(b->id = strdup(json_string_value(id))) ||
        !(task = inline_task(&t)) || json_object_set_new(j, "task", task) < 0) {
        if (b)
            free(b->id);
        free(b);
        task_release(&t);
        return errbuf_set(err, "out of memory"), 500;
    }
    b->store = store;
    snprintf(b->version, sizeof(b->version), "%s", t.version);
    snprintf(b->model, sizeof(b->model), "%s", model ? json_string_value(model) : "default");
    snprintf(image, size, "%s", t.image ? t.image : "host");
    /* "model" goes too: the node refuses it without a task_id */
    json_object_del(j, "task_id");
    json_object_del(j, "model");
    task_release(&t);
    *hook = b;
    return 0;
}

/* forward_by_id(fw, r, j, q) — the task of j's task_id loaded, sent inline, its outcome
 * recorded when answered. */
static unsigned forward_by_id(struct forward *fw, struct http_request *r, json_t *j,
                              struct gateway_request *q)
{
    struct errbuf err = {{0}};
    char image[256];
    struct by_id *b;
    unsigned st = by_id_inline(fw->cfg.store, j, &b, image, sizeof(image), &err);

    if (st) {
        http_respond_error(r, st,
                           st == 400   ? "bad_request"
                           : st == 404 ? "not_found"
                                       : "internal",
                           "%s", err.msg);
        return st;
    }
    if (!(q->body = json_dumps(j, JSON_COMPACT))) {
        by_id_record(b, 0, NULL, 0, NULL, NULL);
        http_respond_error(r, 500, "internal", "out of memory");
        return 500;
    }
    q->len = strlen(q->body);
    q->image = image; /* placed on a worker holding the task's image (read at once) */
    q->memory_mb = forward_memory_mb(j, true);
    q->rewrite = by_id_record;
    q->rewrite_ctx = b;
    gateway_forward(fw->cfg.gateway, r, q);
    return 0;
}

/* ---- the routes --------------------------------------------------------------------- */

uint64_t forward_memory_mb(const json_t *req, bool verify)
{
    const json_t *limits = json_object_get(verify ? json_object_get(req, "task") : req, "limits");
    json_int_t mb = json_integer_value(json_object_get(limits, "memory_mb"));

    return mb > 0 ? (uint64_t)mb : 0;
}

struct forward *forward_new(const struct forward_config *cfg)
{
    struct forward *fw = calloc(1, sizeof(*fw));

    if (fw)
        fw->cfg = *cfg;
    return fw;
}

void forward_stats(const struct forward *fw, struct forward_stats *st)
{
    *st = fw->st;
}

void forward_free(struct forward *fw)
{
    free(fw);
}

unsigned forward_job(struct forward *fw, struct http_request *r, const char *route)
{
    struct gateway_request q = {.route = route, .prio = PRIO_NORMAL};
    bool verify = strcmp(route, "/v1/verify") == 0;
    size_t len;
    const char *body = http_body(r, &len);
    /* a verification is read whatever its size (it may name a task_id); others when small */
    json_t *j = verify || len <= PEEK_MAX ? json_loadb(body, len, 0, NULL) : NULL, *v;
    unsigned st;

    if (json_is_object(j) && json_is_string(v = json_object_get(j, "priority")))
        job_priority_parse(json_string_value(v), &q.prio);
    if (json_is_object(j)) { /* its image and memory: a run's own, a verification's task's */
        q.image =
            json_string_value(json_object_get(verify ? json_object_get(j, "task") : j, "image"));
        q.memory_mb = forward_memory_mb(j, verify);
    }
    if ((st = forward_key(r, &q.key)) != 0) {
        json_decref(j);
        return st;
    }
    if (verify && json_is_object(j) && json_object_get(j, "task_id")) {
        st = forward_by_id(fw, r, j, &q);
        json_decref(j);
        return st;
    }
    gateway_forward(fw->cfg.gateway, r, &q); /* q.image is j's: j is kept until here */
    json_decref(j);
    return 0;
}

unsigned forward_session(struct forward *fw, struct http_request *r, const char **route)
{
    static const char *const routes[] = {"/v1/sessions/{id}", "/v1/sessions/{id}/exec",
                                         "/v1/sessions/{id}/files", "/v1/sessions/{id}/fork",
                                         "/v1/sessions/{id}/verify"};
    const char *path = http_path(r), *method = http_method(r), *rest;
    char id[BROKER_SESSION_ID_MAX];
    struct gateway_request q = {.route = "/v1/sessions", .prio = PRIO_HIGH};
    unsigned st;

    *route = q.route;
    if (strcmp(path, "/v1/sessions") == 0) {
        if (strcmp(method, "GET") == 0) {
            q.list_sessions = true;
        } else if (strcmp(method, "POST") != 0) {
            http_respond_error_with(r, 405, "Allow", "GET, POST", "method_not_allowed",
                                    "/v1/sessions wants GET or POST, not %s", method);
            return 405;
        } else if ((st = forward_key(r, &q.key)) != 0) {
            return st;
        }
        gateway_forward(fw->cfg.gateway, r, &q);
        return 0;
    }
    *route = routes[0];
    if (!broker_session_of(path, id, sizeof(id))) {
        http_respond_error(r, 404, "not_found", "no session %s", path + strlen("/v1/sessions/"));
        return 404;
    }
    rest = path + strlen("/v1/sessions/") + strlen(id);
    for (size_t i = 1; i < sizeof(routes) / sizeof(routes[0]); i++)
        if (strcmp(rest, routes[i] + strlen("/v1/sessions/{id}")) == 0)
            *route = routes[i];
    q.route = *route;
    q.session = id; /* the worker's node answers what it does not serve (404, 405) */
    gateway_forward(fw->cfg.gateway, r, &q);
    return 0;
}
