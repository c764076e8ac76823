/* Unit tests for src/store.c: the SQLite task library — versions, statistics, buckets,
 * filters, sampling, schema checks and concurrent writers (real SQLite files). */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "library/store.h"
#include "tap.h"

static char dir[] = "/tmp/crucible-store-XXXXXX";
static char db_path[256];

/* task_of(json, t) — parses a task for importing; 0 or -1. */
static int task_of(const char *text, struct task *t)
{
    struct errbuf err = {{0}};
    json_t *j = json_loads(text, 0, NULL);
    int r = j ? task_from_json(j, t, &err) : -1;

    json_decref(j);
    if (r < 0)
        diag("task: %s", err.msg);
    return r;
}

static int import_text(struct store *s, const char *text, enum store_import_outcome *out)
{
    struct errbuf err = {{0}};
    struct task t;
    int r = task_of(text, &t);

    if (r == 0 && (r = store_import(s, &t, out, &err)) < 0)
        diag("import: %s", err.msg);
    task_release(&t);
    return r;
}

static char *task_json(const char *id, const char *lang, const char *ref, const char *tags)
{
    char *s = NULL;
    if (asprintf(&s,
                 "{\"id\":\"%s\",\"language\":\"%s\",\"harness\":\"assert\",\"reference\":\"%s\","
                 "\"tests\":[{\"code\":\"assert f() == 1\"}],\"tags\":%s}",
                 id, lang, ref, tags) < 0)
        return NULL;
    return s;
}

/* record(s, id, accepted) — one verification of the task's current version. */
static int record(struct store *s, const char *id, const char *model, enum verdict v)
{
    struct errbuf err = {{0}};
    struct verify_result vr = {0};
    struct store_task row;
    int r;

    if ((r = store_get(s, id, NULL, &row, &err)) < 0)
        return diag("get: %s", err.msg), r;
    vr.verdict = v;
    vr.reward_null = v == VERDICT_INFRA_ERROR;
    vr.reward = v == VERDICT_ACCEPTED ? 1.0 : 0.0;
    vr.total = 1;
    vr.passed = v == VERDICT_ACCEPTED;
    r = store_record(s, row.id, row.version, model, &vr, &err);
    if (r < 0)
        diag("record: %s", err.msg);
    store_task_release(&row);
    return r;
}

static enum store_bucket bucket(struct store *s, const char *id, const char *model)
{
    struct errbuf err = {{0}};
    struct store_task row;
    enum store_bucket b;

    if (store_get(s, id, model, &row, &err) < 0)
        return STORE_BUCKET_COUNT;
    b = row.bucket;
    store_task_release(&row);
    return b;
}

struct ids {
    char list[4096];
    size_t n;
    bool all_in_band;
    double lo, hi;
    size_t explored;
};

static int collect(const struct store_task *row, void *arg)
{
    struct ids *ids = arg;
    size_t len = strlen(ids->list);
    snprintf(ids->list + len, sizeof(ids->list) - len, "%s ", row->id);
    ids->n++;
    return 0;
}

static int collect_sample(const struct store_task *row, bool explored, void *arg)
{
    struct ids *ids = arg;
    if (!explored && (row->est.mean < ids->lo || row->est.mean > ids->hi))
        ids->all_in_band = false;
    ids->explored += explored;
    return collect(row, arg);
}

/* Concurrent writers: each thread has its own handle (its own SQLite connection). */
struct writer {
    int index;
    int fails;
};

#define WRITERS 8
#define WRITES  150

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    struct errbuf err = {{0}};
    struct store *s;

    if (store_open(db_path, true, &s, &err) < 0) {
        w->fails = WRITES;
        return NULL;
    }
    for (int i = 0; i < WRITES; i++)
        if (record(s, "w/1", w->index % 2 ? "odd" : "even",
                   i % 3 == 0 ? VERDICT_ACCEPTED : VERDICT_WRONG_ANSWER) < 0)
            w->fails++;
    store_close(s);
    return NULL;
}

int main(void)
{
    struct errbuf err = {{0}};
    enum store_import_outcome out;
    struct store *s;
    struct store_task row;
    struct task t;
    struct ids ids;
    char *a1, *a2, *tj;
    const char *tag_easy[] = {"easy"};

    if (!mkdtemp(dir))
        return perror("mkdtemp"), 1;
    snprintf(db_path, sizeof(db_path), "%s/lib.db", dir);

    ok(store_open(db_path, true, &s, &err) == 0, "a new library is created");
    a1 = task_json("demo/a", "python", "def f(): return 1", "[\"easy\",\"math\"]");
    a2 = task_json("demo/a", "python", "def f():\\n    return 1", "[\"easy\",\"math\"]");
    ok(import_text(s, a1, &out) == 0 && out == STORE_IMPORT_NEW, "first import: new");
    ok(import_text(s, a1, &out) == 0 && out == STORE_IMPORT_UNCHANGED,
       "the same task again: unchanged");
    for (int i = 0; i < 10; i++)
        record(s, "demo/a", NULL, VERDICT_ACCEPTED);
    ok(store_get(s, "demo/a", NULL, &row, &err) == 0 && row.attempts == 10 && row.accepted == 10,
       "10 recorded attempts on version 1");
    is_str(store_bucket_name(row.bucket), "solved", "10 of 10 accepted: solved");
    ok(row.est.mean > 0.9 && row.est.mean < 1.0, "10 of 10 is estimated below 1 (%.3f)",
       row.est.mean);
    store_task_release(&row);
    ok(import_text(s, a2, &out) == 0 && out == STORE_IMPORT_CHANGED,
       "a changed task: a new version");
    ok(store_get(s, "demo/a", NULL, &row, &err) == 0 && row.attempts == 0 && row.nversions == 2,
       "the new version starts without statistics; 2 versions kept");
    is_str(store_bucket_name(row.bucket), "untried", "the new version is untried");
    store_task_release(&row);
    ok(import_text(s, a1, &out) == 0 && out == STORE_IMPORT_CHANGED,
       "going back to the first content");
    ok(store_get(s, "demo/a", NULL, &row, &err) == 0 && row.attempts == 10,
       "the first version's statistics come back with it");
    store_task_release(&row);
    {
        json_t *v = store_versions_json(s, "demo/a", &err);
        ok(json_array_size(v) == 2, "show lists both versions");
        json_decref(v);
    }

    /* A simulated stream of verifications moves a task between buckets. */
    tj = task_json("demo/b", "python", "def f(): return 1", "[\"math\"]");
    import_text(s, tj, &out);
    free(tj);
    is_str(store_bucket_name(bucket(s, "demo/b", NULL)), "untried", "b: untried");
    for (int i = 0; i < 9; i++)
        record(s, "demo/b", "m1", VERDICT_WRONG_ANSWER);
    is_str(store_bucket_name(bucket(s, "demo/b", "m1")), "unsolved", "b: 0 of 9: unsolved");
    for (int i = 0; i < 3; i++)
        record(s, "demo/b", "m1", VERDICT_ACCEPTED);
    is_str(store_bucket_name(bucket(s, "demo/b", "m1")), "hard", "b: 3 of 12: hard");
    for (int i = 0; i < 5; i++)
        record(s, "demo/b", "m1", VERDICT_ACCEPTED);
    is_str(store_bucket_name(bucket(s, "demo/b", "m1")), "medium", "b: 8 of 17: medium");
    for (int i = 0; i < 15; i++)
        record(s, "demo/b", "m1", VERDICT_ACCEPTED);
    is_str(store_bucket_name(bucket(s, "demo/b", "m1")), "easy", "b: 23 of 32: easy");
    for (int i = 0; i < 70; i++)
        record(s, "demo/b", "m1", VERDICT_ACCEPTED);
    is_str(store_bucket_name(bucket(s, "demo/b", "m1")), "solved", "b: 93 of 102: solved");
    for (int i = 0; i < 5; i++)
        record(s, "demo/b", "m1", VERDICT_INFRA_ERROR);
    ok(store_get(s, "demo/b", "m1", &row, &err) == 0 && row.attempts == 102 &&
           row.infra_errors == 5,
       "infra errors are recorded but are not attempts");
    store_task_release(&row);
    is_str(store_bucket_name(bucket(s, "demo/b", "m2")), "untried",
           "statistics are per model: m2 has none");
    ok(store_get(s, "demo/b", NULL, &row, &err) == 0 && row.attempts == 102,
       "without a model, all models together");
    store_task_release(&row);

    /* Status and reference time. */
    ok(store_get(s, "demo/b", NULL, &row, &err) == 0, "get b");
    ok(store_set_status(s, "demo/b", row.version, STORE_BROKEN, "reference fails", 0.25, &err) == 0,
       "set a status");
    store_task_release(&row);
    ok(store_get(s, "demo/b", NULL, &row, &err) == 0 && row.status == STORE_BROKEN &&
           strcmp(row.reason, "reference fails") == 0 && row.ref_time == 0.25,
       "status, reason and reference time stored");
    store_task_release(&row);
    ok(store_set_status(s, "demo/b", "0000000000000000", STORE_VALID, "", -1, &err) == -ENOENT,
       "a status for an unknown version: ENOENT");
    ok(store_get(s, "demo/none", NULL, &row, &err) == -ENOENT && strstr(err.msg, "demo/none"),
       "an unknown id: ENOENT naming it");
    ok(store_task_load(s, "demo/a", NULL, &t, &err) == 0 && strcmp(t.id, "demo/a") == 0,
       "a stored task loads back as a task");
    task_release(&t);

    /* Filters. */
    tj = task_json("other/c", "cpp", "int f(){return 1;}", "[\"easy\"]");
    import_text(s, tj, &out);
    free(tj);
    memset(&ids, 0, sizeof(ids));
    store_list(s, &(struct store_filter){.tags = tag_easy, .ntags = 1}, collect, &ids, &err);
    is_str(ids.list, "demo/a other/c ", "filter by tag");
    memset(&ids, 0, sizeof(ids));
    store_list(s, &(struct store_filter){.source = "demo"}, collect, &ids, &err);
    is_str(ids.list, "demo/a demo/b ", "filter by source (id prefix before '/')");
    memset(&ids, 0, sizeof(ids));
    store_list(s, &(struct store_filter){.language = "cpp"}, collect, &ids, &err);
    is_str(ids.list, "other/c ", "filter by language");
    memset(&ids, 0, sizeof(ids));
    store_list(s, &(struct store_filter){.exclude_mask = 1u << STORE_BROKEN}, collect, &ids, &err);
    is_str(ids.list, "demo/a other/c ", "exclude broken");
    memset(&ids, 0, sizeof(ids));
    store_list(s, &(struct store_filter){.band = true, .min_pass = 0.8, .max_pass = 1}, collect,
               &ids, &err);
    is_str(ids.list, "demo/a demo/b ", "band 0.8-1 over all models");
    import_text(s,
                "{\"id\":\"demo/rel\",\"language\":\"python\",\"harness\":\"assert\","
                "\"reference\":\"x = 1\",\"tests\":[{\"code\":\"assert x\"}],"
                "\"time_limit\":{\"factor\":3,\"min\":1}}",
                &out);
    ok(store_task_load(s, "demo/rel", NULL, &t, &err) == 0 && t.reference_time < 0,
       "a relative time limit before validation: reference time unknown");
    ok(store_set_status(s, "demo/rel", t.version, STORE_VALID, "", 0.75, &err) == 0,
       "validation stores the reference time");
    task_release(&t);
    ok(store_task_load(s, "demo/rel", NULL, &t, &err) == 0 && t.reference_time == 0.75,
       "loaded again, the task's relative limit uses it (%.2f)", t.reference_time);
    task_release(&t);
    store_close(s);

    /* Sampling: a library of 200 tasks with known pass rates. */
    snprintf(db_path, sizeof(db_path), "%s/sample.db", dir);
    ok(store_open(db_path, true, &s, &err) == 0, "sampling library");
    store_begin(s, &err);
    for (int i = 0; i < 200; i++) {
        char id[32];
        snprintf(id, sizeof(id), "s/%03d", i);
        tj = task_json(id, "python", "def f(): return 1", "[]");
        import_text(s, tj, &out);
        free(tj);
        /* tasks 0..149: 20 attempts, i % 21 accepted; 150..199: 1 attempt or none */
        int n = i < 150 ? 20 : (i % 2);
        for (int k = 0; k < n; k++)
            record(s, id, NULL, k < (i % 21) ? VERDICT_ACCEPTED : VERDICT_WRONG_ANSWER);
    }
    ok(store_commit(s, &err) == 0, "200 tasks and their attempts in one transaction");
    {
        struct store_filter f = {.band = true, .min_pass = 0.3, .max_pass = 0.6};
        struct ids a, b, c;
        memset(&a, 0, sizeof(a));
        memset(&b, 0, sizeof(b));
        memset(&c, 0, sizeof(c));
        a.lo = b.lo = c.lo = 0.3;
        a.hi = b.hi = c.hi = 0.6;
        a.all_in_band = b.all_in_band = c.all_in_band = true;
        store_sample(s, &f, 10, 0, 42, collect_sample, &a, &err);
        store_sample(s, &f, 10, 0, 42, collect_sample, &b, &err);
        store_sample(s, &f, 10, 0, 43, collect_sample, &c, &err);
        ok(a.n == 10 && a.all_in_band && a.explored == 0, "explore 0: 10 tasks, all in the band");
        is_str(a.list, b.list, "the same seed gives the same draw");
        ok(strcmp(a.list, c.list) != 0, "another seed gives another draw");
        memset(&a, 0, sizeof(a));
        a.lo = 0.3;
        a.hi = 0.6;
        a.all_in_band = true;
        store_sample(s, &f, 10, 0.5, 7, collect_sample, &a, &err);
        ok(a.n == 10 && a.all_in_band && a.explored == 5,
           "explore 0.5: 5 exploration picks (little evidence), 5 in band (%zu)", a.explored);
        memset(&a, 0, sizeof(a));
        a.all_in_band = true;
        a.lo = 0.3;
        a.hi = 0.6;
        store_sample(s, &f, 1000, 0, 1, collect_sample, &a, &err);
        ok(a.n > 10 && a.n < 150 && a.all_in_band,
           "asking for more gives every in-band task once (%zu)", a.n);
    }
    store_close(s);

    /* Concurrent writers lose no update. */
    snprintf(db_path, sizeof(db_path), "%s/writers.db", dir);
    ok(store_open(db_path, true, &s, &err) == 0, "writers library");
    tj = task_json("w/1", "python", "def f(): return 1", "[]");
    import_text(s, tj, &out);
    free(tj);
    {
        pthread_t th[WRITERS];
        struct writer w[WRITERS];
        int fails = 0;
        for (int i = 0; i < WRITERS; i++) {
            w[i] = (struct writer){.index = i};
            pthread_create(&th[i], NULL, writer_main, &w[i]);
        }
        for (int i = 0; i < WRITERS; i++) {
            pthread_join(th[i], NULL);
            fails += w[i].fails;
        }
        is_int(fails, 0, "no writer failed");
        ok(store_get(s, "w/1", NULL, &row, &err) == 0 &&
               row.attempts == (unsigned long)WRITERS * WRITES &&
               row.accepted == (unsigned long)WRITERS * (WRITES / 3),
           "%d writers x %d: every attempt counted (%lu, %lu accepted)", WRITERS, WRITES,
           row.attempts, row.accepted);
        store_task_release(&row);
        ok(store_get(s, "w/1", "odd", &row, &err) == 0 &&
               row.attempts == (unsigned long)WRITERS / 2 * WRITES,
           "per model too");
        store_task_release(&row);
    }
    store_close(s);

    /* A file from a newer crucible, and a file that is not a library. */
    {
        sqlite3 *db;
        char bad[300];
        sqlite3_open(db_path, &db);
        sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL);
        sqlite3_close(db);
        ok(store_open(db_path, true, &s, &err) == -EPROTO && strstr(err.msg, "newer"),
           "a newer schema is refused: %s", err.msg);
        snprintf(bad, sizeof(bad), "%s/notadb", dir);
        FILE *f = fopen(bad, "w");
        fputs("this is not an SQLite file, it is long enough to have a header page......\n", f);
        fclose(f);
        ok(store_open(bad, true, &s, &err) < 0 && strstr(err.msg, "notadb"),
           "a file that is not SQLite: %s", err.msg);
        unlink(bad);
        ok(store_open("/nonexistent-dir/x.db", true, &s, &err) < 0 && strstr(err.msg, "x.db"),
           "a path that cannot be created: %s", err.msg);
        snprintf(bad, sizeof(bad), "%s/absent.db", dir);
        ok(store_open(bad, false, &s, &err) == -ENOENT && strstr(err.msg, "no task library") &&
               access(bad, F_OK) != 0,
           "without create, a missing library is an error and no file appears: %s", err.msg);
    }
    free(a1);
    free(a2);
    {
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            diag("cannot remove %s", dir);
    }
    return done_testing();
}
