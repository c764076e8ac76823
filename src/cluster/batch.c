/*
 * batch.c — POST /v1/batch on a gateway (forward.h): a batch split into jobs of its items.
 *
 * A batch goes through three phases:
 *   parsing   on an api worker: the body parsed, its shape checked as a node checks it (items,
 *             kinds, "after"), each item made into the request of its route (/v1/run or
 *             /v1/verify: "kind" and "after" removed, the batch's priority added), a
 *             verification by task_id given its task inline;
 *   checking  one POST /v1/batch?check=1 per image the items name, on a worker holding it:
 *             the node's own parser decides, and the first item it refuses (the lowest
 *             index) answers the batch 400 before anything runs;
 *   running   items sent as their turn comes (the items they come after succeeded), at most a
 *             window of them at a time, each answer streamed as the node's line
 *             {"index": i, "result": ...} when it comes.
 * The client leaving drops what was sent (a worker may still run it) and sends nothing more.
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/forward_int.h"
#include "service/api.h"
#include "service/offload.h"

#define IMAGE_MAX  256
#define JSON_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)) /* a node's */
#define MSG_MAX    768

struct gw_batch;

struct gw_item {
    struct gw_batch *b;
    size_t index;
    json_t *req;     /* the request sent for it, until sent */
    json_t *checked; /* the same with its "kind": what the check sends (checking only) */
    bool verify;     /* /v1/verify, else /v1/run */
    char image[IMAGE_MAX];
    uint64_t memory_mb; /* the memory limit it names (forward_memory_mb) */
    double deadline_s;  /* its own, or the batch's; counted from the request's arrival; 0: none */
    size_t *after, nafter, waiting;
    struct by_id *rec; /* a verification by task_id: recorded when answered */
    uint64_t seq;      /* while sent and unanswered */
    bool submitted, finished, failed;
    char status[32]; /* its run's status or its verdict, for the items after it */
};

/* One check: the items naming one image, sent as a batch to a worker holding it. */
struct gw_check {
    struct gw_batch *b;
    char image[IMAGE_MAX];
    uint64_t memory_mb; /* its items' largest: placed where a node takes them all */
    size_t *idx, n;     /* the batch's indices of its items */
    uint64_t seq;       /* while unanswered */
};

struct gw_batch {
    struct offload_work work; /* first member: a struct offload_work * is a struct gw_batch * */
    struct forward *fw;
    struct http_request *r; /* NULL once its client left */
    double t0;
    char *body;
    size_t len;
    char key[BROKER_IDEM_KEY_MAX + 1]; /* the batch's Idempotency-Key, or "" */
    bool parsing;
    /* set by the api worker */
    unsigned status; /* 0: parsed; else the answer's status, code and message */
    const char *code;
    char msg[MSG_MAX];
    enum job_priority prio;
    json_t *common; /* the batch's "priority" and "deadline_s" as given: each check has them */
    struct gw_item *items;
    size_t n;
    struct gw_check *checks;
    size_t nchecks;
    /* checking */
    size_t checks_left;
    unsigned check_status;   /* the worst answer so far: 0, 400, or another status */
    size_t check_index;      /* with 400: the lowest index refused (SIZE_MAX: the batch) */
    char check_code[64];     /* and its code and message */
    char check_msg[MSG_MAX]; /* (its "items[k]: " taken off) */
    /* running */
    size_t *ready, rhead, rtail;
    size_t outstanding, finished, window;
    bool paused;
    double paused_at;
    size_t paused_pending;
    struct gw_batch *pnext, *pprev; /* fw->paused */
};

static const char *const kinds_msg = "must be an object with \"kind\": \"run\" or \"verify\"";

static void batch_free(struct gw_batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        struct gw_item *it = &b->items[i];
        if (it->seq)
            gateway_drop(b->fw->cfg.gateway, it->seq);
        if (it->rec)
            by_id_record(it->rec, 0, NULL, 0, NULL, NULL);
        json_decref(it->req);
        json_decref(it->checked);
        free(it->after);
    }
    for (size_t c = 0; c < b->nchecks; c++) {
        if (b->checks[c].seq)
            gateway_drop(b->fw->cfg.gateway, b->checks[c].seq);
        free(b->checks[c].idx);
    }
    json_decref(b->common);
    free(b->checks);
    free(b->items);
    free(b->ready);
    free(b->body);
    free(b);
}

static void unpause(struct gw_batch *b)
{
    if (!b->paused)
        return;
    if (b->pprev)
        b->pprev->pnext = b->pnext;
    else
        b->fw->paused = b->pnext;
    if (b->pnext)
        b->pnext->pprev = b->pprev;
    b->paused = false;
    b->pnext = b->pprev = NULL;
}

static void answered(struct gw_batch *b, unsigned status)
{
    if (b->fw->cfg.answered)
        b->fw->cfg.answered(b->fw->cfg.ctx, "/v1/batch", status, b->t0);
}

/* fail_now(b, status, code, fmt...) — the batch answered with an error before it streamed;
 * b freed. Loop thread. */
static void fail_now(struct gw_batch *b, unsigned status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fail_now(struct gw_batch *b, unsigned status, const char *code, const char *fmt, ...)
{
    char msg[MSG_MAX + 64];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (b->r) {
        b->fw->st.refused++;
        http_on_close(b->r, NULL, NULL);
        if (status == 503)
            http_respond_error_with(b->r, status, "Retry-After", "1", code, "%s", msg);
        else
            http_respond_error(b->r, status, code, "%s", msg);
        answered(b, status);
    }
    batch_free(b);
}

/* ---- parsing (an api worker) ------------------------------------------------------- */

static int parse_fail(struct gw_batch *b, unsigned status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int parse_fail(struct gw_batch *b, unsigned status, const char *code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(b->msg, sizeof(b->msg), fmt, ap);
    va_end(ap);
    b->status = status;
    b->code = code;
    return -EINVAL;
}

/* parse_after(b, i, after) — item i's "after": earlier indices, one dependency each, as a node
 * reads them (its messages too). */
static int parse_after(struct gw_batch *b, size_t i, const json_t *after)
{
    struct gw_item *it = &b->items[i];
    const json_t *e;
    size_t k;

    if (!after)
        return 0;
    if (!json_is_array(after))
        return parse_fail(b, 400, "bad_request",
                          "items[%zu]: 'after' must be an array of earlier item indices", i);
    if (!json_array_size(after))
        return 0;
    if (!(it->after = calloc(json_array_size(after), sizeof(size_t))))
        return parse_fail(b, 500, "internal", "out of memory");
    json_array_foreach(after, k, e)
    {
        json_int_t x = json_is_integer(e) ? json_integer_value(e) : -1;
        bool seen = false;
        if (x < 0 || (size_t)x >= i)
            return parse_fail(b, 400, "bad_request",
                              "items[%zu]: after[%zu] must be the index of an earlier item (0 to "
                              "%zu), not %s",
                              i, k, i ? i - 1 : 0,
                              !json_is_integer(e) ? "a non-integer"
                              : (size_t)x == i    ? "the item itself"
                              : x < 0             ? "a negative number"
                                                  : "a later item");
        for (size_t a = 0; a < it->nafter; a++)
            seen |= it->after[a] == (size_t)x;
        if (!seen)
            it->after[it->nafter++] = (size_t)x;
    }
    it->waiting = it->nafter;
    return 0;
}

/* parse_item(b, i, v, common) — item i made into its route's request. */
static int parse_item(struct gw_batch *b, size_t i, json_t *v, const json_t *common)
{
    struct gw_item *it = &b->items[i];
    const json_t *kind = json_object_get(v, "kind"), *img, *d;
    struct errbuf err = {{0}};
    const char *key;
    json_t *x;
    unsigned st;

    it->b = b;
    it->index = i;
    snprintf(it->image, sizeof(it->image), "host");
    if (!json_is_object(v) || !json_is_string(kind))
        return parse_fail(b, 400, "bad_request", "items[%zu]: %s", i, kinds_msg);
    if (strcmp(json_string_value(kind), "verify") == 0)
        it->verify = true;
    else if (strcmp(json_string_value(kind), "run") != 0)
        return parse_fail(b, 400, "bad_request", "items[%zu]: unknown kind '%s' (run or verify)", i,
                          json_string_value(kind));
    if (parse_after(b, i, json_object_get(v, "after")) < 0)
        return -EINVAL;
    if (!(it->req = json_copy(v)))
        return parse_fail(b, 500, "internal", "out of memory");
    json_object_del(it->req, "kind");
    json_object_del(it->req, "after");
    json_object_foreach((json_t *)common, key, x)
    { /* the batch's, unless the item's own */
        if (!json_object_get(it->req, key))
            json_object_set(it->req, key, x);
    }
    if (it->verify && json_object_get(it->req, "task_id")) {
        if ((st = by_id_inline(b->fw->cfg.store, it->req, &it->rec, it->image, sizeof(it->image),
                               &err)))
            return parse_fail(b, st,
                              st == 400   ? "bad_request"
                              : st == 404 ? "not_found"
                                          : "internal",
                              "items[%zu]: %s", i, err.msg);
    } else {
        img = json_object_get(it->verify ? json_object_get(it->req, "task") : it->req, "image");
        if (json_is_string(img))
            snprintf(it->image, sizeof(it->image), "%s", json_string_value(img));
    }
    it->memory_mb = forward_memory_mb(it->req, it->verify);
    d = json_object_get(it->req, "deadline_s");
    if (json_is_number(d) && json_number_value(d) > 0)
        it->deadline_s = json_number_value(d);
    if (!(it->checked = json_copy(it->req)) ||
        json_object_set_new(it->checked, "kind", json_string(it->verify ? "verify" : "run")) < 0)
        return parse_fail(b, 500, "internal", "out of memory");
    return 0;
}

/* group(b) — the checks: the items grouped by image (one check naming no item when there is
 * none: the batch's own fields are checked still). */
static int group(struct gw_batch *b)
{
    if (!(b->checks = calloc(b->n ? b->n : 1, sizeof(*b->checks))))
        return parse_fail(b, 500, "internal", "out of memory");
    if (!b->n) {
        b->nchecks = 1;
        b->checks[0].b = b;
        snprintf(b->checks[0].image, IMAGE_MAX, "host");
        return 0;
    }
    for (size_t i = 0; i < b->n; i++) {
        struct gw_check *c = NULL;
        for (size_t k = 0; k < b->nchecks && !c; k++)
            if (strcmp(b->checks[k].image, b->items[i].image) == 0)
                c = &b->checks[k];
        if (!c) {
            c = &b->checks[b->nchecks++];
            c->b = b;
            snprintf(c->image, IMAGE_MAX, "%s", b->items[i].image);
            if (!(c->idx = calloc(b->n, sizeof(size_t))))
                return parse_fail(b, 500, "internal", "out of memory");
        }
        c->idx[c->n++] = i;
        if (b->items[i].memory_mb > c->memory_mb)
            c->memory_mb = b->items[i].memory_mb;
    }
    return 0;
}

static void parse_batch(struct offload_work *w)
{
    static const char *const keys[] = {"items", "priority", "deadline_s", NULL};
    struct gw_batch *b = (struct gw_batch *)w;
    json_error_t jerr;
    json_t *j = NULL, *items, *v, *common;
    struct errbuf err = {{0}};
    size_t i;

    /* a node's checks and messages (api.c parse_body) */
    if (api_json_depth(b->body, b->len) > API_JSON_DEPTH_MAX)
        parse_fail(b, 400, "bad_request", "the body nests arrays and objects deeper than %d levels",
                   API_JSON_DEPTH_MAX);
    else if (!(j = json_loadb(b->body, b->len, JSON_REJECT_DUPLICATES, &jerr)))
        parse_fail(b, 400, "bad_request", "the body is not valid JSON: %s (line %d, column %d)",
                   jerr.text, jerr.line, jerr.column);
    free(b->body);
    b->body = NULL;
    if (!j)
        return;
    items = json_object_get(j, "items");
    if (!json_is_object(j)) {
        parse_fail(b, 400, "bad_request", "the body must be a JSON object");
    } else if (api_only_keys(j, keys, &err) < 0) {
        parse_fail(b, 400, "bad_request", "%s", err.msg);
    } else if (!json_is_array(items) || json_array_size(items) > b->fw->cfg.max_batch) {
        parse_fail(b, 400, "bad_request", "'items' must be an array of at most %zu items",
                   b->fw->cfg.max_batch);
    } else if (b->key[0] &&
               strlen(b->key) + 1 + (size_t)snprintf(NULL, 0, "%zu", json_array_size(items)) >
                   BROKER_IDEM_KEY_MAX) {
        parse_fail(b, 400, "bad_request",
                   "Idempotency-Key: item i of a batch carries KEY.i, at most %d characters: this "
                   "key is too long for %zu items",
                   BROKER_IDEM_KEY_MAX, json_array_size(items));
    } else if (!(b->common = common = json_object())) {
        parse_fail(b, 500, "internal", "out of memory");
    } else {
        /* the batch's priority and deadline, as given (the check's node judges them) */
        if ((v = json_object_get(j, "priority")) && !json_is_null(v))
            json_object_set(common, "priority", v);
        if ((v = json_object_get(j, "deadline_s")) && !json_is_null(v))
            json_object_set(common, "deadline_s", v);
        if (json_is_string(v = json_object_get(j, "priority")))
            job_priority_parse(json_string_value(v), &b->prio);
        b->n = json_array_size(items);
        b->items = calloc(b->n ? b->n : 1, sizeof(*b->items));
        b->ready = calloc(b->n ? b->n : 1, sizeof(*b->ready));
        if (!b->items || !b->ready) {
            parse_fail(b, 500, "internal", "out of memory");
        } else {
            json_array_foreach(items, i, v)
            {
                if (parse_item(b, i, v, common) < 0)
                    break;
            }
            if (!b->status)
                group(b);
        }
    }
    json_decref(j);
}

/* ---- running ----------------------------------------------------------------------- */

/* stream_line(b, line) — one line of the answer (line taken). */
static void stream_line(struct gw_batch *b, json_t *line)
{
    char *s = line ? json_dumps(line, JSON_FLAGS) : NULL;

    if (s && b->r) {
        size_t n = strlen(s);
        s[n] = '\n'; /* the terminator becomes the line's end */
        http_stream_write(b->r, s, n + 1);
    }
    free(s);
    json_decref(line);
}

/* result_line(b, index, body, len) — {"index": i, "result": BODY}, BODY a worker's record. */
static void result_line(struct gw_batch *b, size_t index, const char *body, size_t len)
{
    char head[48];
    int n = snprintf(head, sizeof(head), "{\"index\":%zu,\"result\":", index);

    while (len && (body[len - 1] == '\n' || body[len - 1] == ' '))
        len--;
    if (!b->r)
        return;
    http_stream_write(b->r, head, (size_t)n);
    http_stream_write(b->r, body, len);
    http_stream_write(b->r, "}\n", 2);
}

static void item_finish(struct gw_item *it);

static void feed(struct gw_batch *b);

/* progress(b, done) — item done finished: the items after it released, or skipped. */
static void progress(struct gw_batch *b, size_t done)
{
    const struct gw_item *dep = &b->items[done];

    for (size_t k = done + 1; k < b->n; k++) {
        struct gw_item *it = &b->items[k];
        bool waits = false;
        if (!it->nafter || it->finished || it->submitted)
            continue;
        for (size_t a = 0; a < it->nafter; a++)
            waits |= it->after[a] == done;
        if (!waits)
            continue;
        if (dep->failed) {
            char msg[300];
            snprintf(msg, sizeof(msg), "item %zu, which this item comes after, ended %s",
                     dep->index, dep->status[0] ? dep->status : "without a result");
            stream_line(b, json_pack("{s:I,s:b,s:{s:s,s:s}}", "index", (json_int_t)k, "skipped", 1,
                                     "error", "code", "dependency_failed", "message", msg));
            it->failed = true;
            b->fw->st.skipped++;
            item_finish(it);
            continue;
        }
        if (--it->waiting == 0)
            b->ready[b->rtail++] = k;
    }
}

/* item_finish(it) — its line written: the batch moves on; the stream ends after the last. */
static void item_finish(struct gw_item *it)
{
    struct gw_batch *b = it->b;

    it->finished = true;
    b->finished++;
    progress(b, it->index);
    if (b->finished == b->n && b->r)
        http_stream_end(b->r); /* on_close frees b */
}

/* item_answer — a worker's answer to item it (status 0: the gateway stopped). */
static void item_answer(void *ctx, unsigned status, const char *body, size_t len)
{
    struct gw_item *it = ctx;
    struct gw_batch *b = it->b;
    char *out = NULL;
    size_t outlen = 0;
    json_t *j, *e;

    it->seq = 0;
    b->outstanding--;
    if (it->rec) {
        if (by_id_record(it->rec, status, body, len, &out, &outlen)) {
            body = out;
            len = outlen;
        }
        it->rec = NULL;
    }
    j = status ? json_loadb(body, len, 0, NULL) : NULL;
    if (status == 200 && json_is_object(j)) {
        const char *s = json_string_value(json_object_get(j, it->verify ? "verdict" : "status"));
        snprintf(it->status, sizeof(it->status), "%s", s ? s : "");
        it->failed = !s || strcmp(s, it->verify ? "accepted" : "ok") != 0;
        result_line(b, it->index, body, len); /* the worker's text as it wrote it */
    } else {
        e = json_object_get(j, "error");
        it->failed = true;
        snprintf(it->status, sizeof(it->status), "with HTTP status %u", status);
        stream_line(b, json_is_object(e)
                           ? json_pack("{s:I,s:I,s:O}", "index", (json_int_t)it->index, "status",
                                       (json_int_t)status, "error", e)
                           : json_pack("{s:I,s:I,s:{s:s,s:s}}", "index", (json_int_t)it->index,
                                       "status", (json_int_t)status, "error", "code", "internal",
                                       "message",
                                       status ? "the worker's answer was not JSON"
                                              : "the gateway stopped before the item ran"));
    }
    json_decref(j);
    free(out);
    item_finish(it);
    feed(b);
}

/* send_item(b, it) — the item's request sent, its deadline what is left of it. */
static void send_item(struct gw_batch *b, struct gw_item *it)
{
    char key[BROKER_IDEM_KEY_MAX + 1], why[MSG_MAX];
    const char *code = "internal";
    struct gateway_job job = {.target = it->verify ? "/v1/verify" : "/v1/run",
                              .prio = b->prio,
                              .image = strcmp(it->image, "host") ? it->image : NULL,
                              .memory_mb = it->memory_mb,
                              .done = item_answer,
                              .ctx = it};
    unsigned st;

    it->submitted = true;
    if (it->deadline_s > 0) {
        double left = it->deadline_s - (util_now() - b->t0);
        json_object_set_new(it->req, "deadline_s", json_real(left > 1e-3 ? left : 1e-3));
    }
    if (b->key[0]) {
        snprintf(key, sizeof(key), "%s.%zu", b->key, it->index);
        job.key = key;
    }
    job.body = json_dumps(it->req, JSON_FLAGS);
    job.len = job.body ? strlen(job.body) : 0;
    json_decref(it->req);
    it->req = NULL;
    st = job.body ? gateway_submit(b->fw->cfg.gateway, &job, &it->seq, &code, why, sizeof(why))
                  : (snprintf(why, sizeof(why), "out of memory"), 500);
    if (st == 0) {
        b->outstanding++;
        b->fw->st.items++;
        return;
    }
    if (it->rec) {
        by_id_record(it->rec, 0, NULL, 0, NULL, NULL);
        it->rec = NULL;
    }
    it->failed = true;
    snprintf(it->status, sizeof(it->status), "with HTTP status %u", st);
    stream_line(b, json_pack("{s:I,s:I,s:{s:s,s:s}}", "index", (json_int_t)it->index, "status",
                             (json_int_t)st, "error", "code", code, "message", why));
    item_finish(it);
}

/* feed(b) — sends the ready items while fewer than the window wait, unless the client is
 * behind on the stream: then b pauses until forward_tick sees it read. */
static void feed(struct gw_batch *b)
{
    while (b->r && !b->paused && b->rhead < b->rtail && b->outstanding < b->window) {
        struct gw_item *it;
        if (http_stream_pending(b->r) > b->fw->cfg.stream_buffer) {
            b->paused = true;
            b->paused_at = util_now();
            b->paused_pending = http_stream_pending(b->r);
            b->pprev = NULL;
            b->pnext = b->fw->paused;
            if (b->fw->paused)
                b->fw->paused->pprev = b;
            b->fw->paused = b;
            return;
        }
        it = &b->items[b->ready[b->rhead++]];
        if (!it->submitted && !it->finished)
            send_item(b, it); /* may finish the batch: b->r is then NULL after on_close */
    }
}

static void on_close(void *ctx, bool aborted)
{
    struct gw_batch *b = ctx;

    (void)aborted;
    b->r = NULL;
    if (b->finished < b->n)
        b->fw->st.cancelled++;
    unpause(b);
    batch_free(b); /* what was sent is dropped: its answers are not waited for */
}

/* run(b) — the checks passed: the answer's stream begins, the first items go. */
static void run(struct gw_batch *b)
{
    struct gateway_stats st;

    gateway_stats(b->fw->cfg.gateway, &st);
    b->window = st.slots_alive > 0 ? 2 * (size_t)st.slots_alive : 2;
    b->fw->st.batches++;
    http_stream_begin(b->r, 200, "application/x-ndjson");
    answered(b, 200);
    http_on_close(b->r, on_close, b);
    for (size_t i = 0; i < b->n; i++)
        if (b->items[i].waiting == 0)
            b->ready[b->rtail++] = i;
    if (b->n == 0) {
        http_stream_end(b->r);
        return;
    }
    feed(b);
}

/* ---- checking ---------------------------------------------------------------------- */

/* check_answer — a worker's verdict on one check's items. */
static void check_answer(void *ctx, unsigned status, const char *body, size_t len)
{
    struct gw_check *c = ctx;
    struct gw_batch *b = c->b;
    json_t *j = status ? json_loadb(body, len, 0, NULL) : NULL;
    const char *code = json_string_value(json_object_get(json_object_get(j, "error"), "code"));
    const char *msg = json_string_value(json_object_get(json_object_get(j, "error"), "message"));
    size_t k = SIZE_MAX;
    int used = 0;

    c->seq = 0;
    b->checks_left--;
    if (status == 0) {
        status = 503;
        code = "stopping";
        msg = "the gateway is stopping";
    }
    if (status != 200 && (!code || !msg)) {
        code = "internal";
        msg = "a worker's answer to the batch's check was not JSON";
    }
    if (status == 400 && msg && sscanf(msg, "items[%zu]: %n", &k, &used) == 1 && used > 0 &&
        k < c->n) {
        k = c->idx[k];
        msg += used;
    } else {
        k = SIZE_MAX;
    }
    /* keep the worst: another status over a 400, a 400 of the batch over an item's, the
     * lowest item */
    if (status != 200 && b->check_status != status &&
        (b->check_status == 0 || b->check_status == 400)) {
        b->check_status = status;
        b->check_index = k;
        snprintf(b->check_code, sizeof(b->check_code), "%s", code);
        snprintf(b->check_msg, sizeof(b->check_msg), "%s", msg);
    } else if (status == 400 && b->check_status == 400 &&
               (k == SIZE_MAX ? b->check_index != SIZE_MAX : k < b->check_index)) {
        b->check_index = k;
        snprintf(b->check_code, sizeof(b->check_code), "%s", code);
        snprintf(b->check_msg, sizeof(b->check_msg), "%s", msg);
    }
    json_decref(j);
    if (b->checks_left)
        return;
    if (b->check_status == 400 && b->check_index != SIZE_MAX)
        fail_now(b, 400, b->check_code, "items[%zu]: %s", b->check_index, b->check_msg);
    else if (b->check_status)
        fail_now(b, b->check_status, b->check_code, "%s", b->check_msg);
    else
        run(b);
}

/* check(b) — one check sent per image (or the batch answered now: no worker holds one). */
static void check(struct gw_batch *b)
{
    for (size_t c = 0; c < b->nchecks; c++) {
        struct gw_check *ck = &b->checks[c];
        json_t *items = json_array(), *body;
        char why[MSG_MAX];
        const char *code = "internal";
        struct gateway_job job = {.target = "/v1/batch?check=1",
                                  .prio = b->prio,
                                  .image = strcmp(ck->image, "host") ? ck->image : NULL,
                                  .memory_mb = ck->memory_mb,
                                  .done = check_answer,
                                  .ctx = ck};
        unsigned st;

        for (size_t k = 0; items && k < ck->n; k++) {
            struct gw_item *it = &b->items[ck->idx[k]];
            json_array_append_new(items, it->checked);
            it->checked = NULL;
        }
        if ((body = items ? json_copy(b->common) : NULL))
            json_object_set_new(body, "items", items);
        else
            json_decref(items);
        job.body = body ? json_dumps(body, JSON_FLAGS) : NULL;
        job.len = job.body ? strlen(job.body) : 0;
        json_decref(body);
        st = job.body ? gateway_submit(b->fw->cfg.gateway, &job, &ck->seq, &code, why, sizeof(why))
                      : (snprintf(why, sizeof(why), "out of memory"), 500);
        if (st) {
            for (size_t k = 0; k < c; k++) /* those sent: their answers are not waited for */
                if (b->checks[k].seq) {
                    gateway_drop(b->fw->cfg.gateway, b->checks[k].seq);
                    b->checks[k].seq = 0;
                }
            fail_now(b, st, code, "%s", why);
            return;
        }
        b->checks_left++;
    }
}

/* ---- the request ------------------------------------------------------------------- */

static void parsed(struct offload_work *w)
{
    struct gw_batch *b = (struct gw_batch *)w;

    b->parsing = false;
    if (!b->r || w->cancelled) {
        if (b->r)
            fail_now(b, 503, "stopping", "the gateway is stopping");
        else
            batch_free(b);
        return;
    }
    http_on_close(b->r, NULL, NULL);
    if (b->status) {
        fail_now(b, b->status, b->code, "%s", b->msg);
        return;
    }
    http_on_close(b->r, on_close, b); /* checks under way: the client may leave */
    check(b);
}

/* parsing_closed — the client left while its batch was parsed. */
static void parsing_closed(void *ctx, bool aborted)
{
    struct gw_batch *b = ctx;

    (void)aborted;
    b->r = NULL;
    offload_cancel(b->fw->cfg.offload, &b->work);
}

unsigned forward_batch(struct forward *fw, struct http_request *r)
{
    struct gw_batch *b = calloc(1, sizeof(*b));
    const char *key;
    unsigned st;

    if (!b) {
        http_respond_error(r, 500, "internal", "out of memory");
        return 500;
    }
    if ((st = forward_key(r, &key)) != 0) {
        free(b);
        return st;
    }
    b->fw = fw;
    b->r = r;
    b->t0 = util_now();
    b->prio = PRIO_NORMAL;
    b->parsing = true;
    snprintf(b->key, sizeof(b->key), "%s", key ? key : "");
    if (!(b->body = http_body_take(r, &b->len)) && !(b->body = calloc(1, 1))) {
        free(b);
        http_respond_error(r, 500, "internal", "out of memory");
        return 500;
    }
    b->work.run = parse_batch;
    b->work.done = parsed;
    b->work.cost = b->len;
    http_on_close(r, parsing_closed, b);
    offload_submit(fw->cfg.offload, &b->work);
    return 0;
}

void forward_tick(struct forward *fw)
{
    struct gw_batch *b, *next;
    double now = util_now();

    for (b = fw->paused; b; b = next) {
        size_t pending;
        next = b->pnext;
        pending = b->r ? http_stream_pending(b->r) : 0;
        if (!b->r) {
            unpause(b);
        } else if (pending <= fw->cfg.stream_buffer) {
            unpause(b);
            feed(b);
        } else if (pending < b->paused_pending) { /* it reads, slowly: not stalled */
            b->paused_pending = pending;
            b->paused_at = now;
        } else if (now - b->paused_at > fw->cfg.stream_stall_s) {
            http_stream_abort(b->r); /* on_close: unpaused, freed */
        }
    }
}

int forward_timeout_ms(const struct forward *fw)
{
    return fw->paused ? 100 : -1;
}
