/*
 * store.c — the task library in SQLite (store.h).
 *
 * Schema (version 1; PRAGMA user_version holds the version, migrations[] moves an older
 * file forward inside one transaction):
 *   tasks     (id, version)                 the current version of every task
 *   versions  (task_id, version, body, ...) every version ever imported, with its status
 *   tags      (task_id, version, tag)
 *   stats     (task_id, version, model, attempts, accepted, reward_sum, infra_errors)
 *   attempts  one row per recorded verification (the evidence behind stats)
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "library/rng.h"
#include "library/store.h"

struct store {
    sqlite3 *db;
    pthread_mutex_t lock; /* recursive: every call holds it; store_begin..commit too */
    bool in_txn;          /* a caller's store_begin is open (only its thread gets the lock) */
};

static const char *const status_names[STORE_STATUS_COUNT] = {
    "new", "valid", "broken", "flaky", "weak_tests", "no_reference",
};

static const char *const bucket_names[STORE_BUCKET_COUNT] = {
    "untried", "unsolved", "hard", "medium", "easy", "solved",
};

/* Upper bounds (exclusive) of the estimate for unsolved, hard, medium, easy. */
static const double bucket_bounds[] = {0.1, 0.4, 0.7, 0.9};

static const char *const migrations[] = {
    /* 0 -> 1 */
    "CREATE TABLE tasks (\n"
    "  id TEXT PRIMARY KEY,\n"
    "  version TEXT NOT NULL,\n"
    "  imported_at REAL NOT NULL,\n"
    "  updated_at REAL NOT NULL\n"
    ");\n"
    "CREATE TABLE versions (\n"
    "  task_id TEXT NOT NULL,\n"
    "  version TEXT NOT NULL,\n"
    "  body TEXT NOT NULL,\n"
    "  source TEXT NOT NULL,\n"
    "  language TEXT NOT NULL,\n"
    "  harness TEXT NOT NULL,\n"
    "  tags TEXT NOT NULL,\n"
    "  status TEXT NOT NULL DEFAULT 'new',\n"
    "  reason TEXT NOT NULL DEFAULT '',\n"
    "  ref_time REAL,\n"
    "  validated_at REAL,\n"
    "  created_at REAL NOT NULL,\n"
    "  PRIMARY KEY (task_id, version)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE tags (\n"
    "  task_id TEXT NOT NULL,\n"
    "  version TEXT NOT NULL,\n"
    "  tag TEXT NOT NULL,\n"
    "  PRIMARY KEY (task_id, version, tag)\n"
    ") WITHOUT ROWID;\n"
    "CREATE INDEX tags_by_tag ON tags (tag);\n"
    "CREATE TABLE stats (\n"
    "  task_id TEXT NOT NULL,\n"
    "  version TEXT NOT NULL,\n"
    "  model TEXT NOT NULL,\n"
    "  attempts INTEGER NOT NULL DEFAULT 0,\n"
    "  accepted INTEGER NOT NULL DEFAULT 0,\n"
    "  reward_sum REAL NOT NULL DEFAULT 0,\n"
    "  infra_errors INTEGER NOT NULL DEFAULT 0,\n"
    "  last_at REAL NOT NULL,\n"
    "  PRIMARY KEY (task_id, version, model)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE attempts (\n"
    "  seq INTEGER PRIMARY KEY,\n"
    "  task_id TEXT NOT NULL,\n"
    "  version TEXT NOT NULL,\n"
    "  model TEXT NOT NULL,\n"
    "  verdict TEXT NOT NULL,\n"
    "  reward REAL,\n"
    "  passed INTEGER NOT NULL,\n"
    "  total INTEGER NOT NULL,\n"
    "  flaky INTEGER NOT NULL,\n"
    "  wall_time REAL NOT NULL,\n"
    "  at REAL NOT NULL\n"
    ");\n"
    "CREATE INDEX attempts_by_task ON attempts (task_id, version);\n",
};

static double now_unix(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int db_error(struct store *s, int rc, const char *what, struct errbuf *err)
{
    errbuf_set(err, "task library: %s: %s", what, s ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
    return rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? -EBUSY
           : rc == SQLITE_NOMEM                     ? -ENOMEM
           : rc == SQLITE_CANTOPEN                  ? -ENOENT
                                                    : -EIO;
}

/* exec(s, sql, err) — runs statements without results. */
static int exec(struct store *s, const char *sql, struct errbuf *err)
{
    char *msg = NULL;
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);

    if (rc != SQLITE_OK) {
        errbuf_set(err, "task library: %s", msg ? msg : sqlite3_errstr(rc));
        sqlite3_free(msg);
        return rc == SQLITE_BUSY ? -EBUSY : -EIO;
    }
    return 0;
}

static int prepare(struct store *s, const char *sql, sqlite3_stmt **st, struct errbuf *err)
{
    int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
    return rc == SQLITE_OK ? 0 : db_error(s, rc, "cannot prepare a statement", err);
}

/* Bind helpers: text is copied (SQLITE_TRANSIENT) so callers' buffers may go. */
static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

/* Writes: one transaction per call unless the caller holds one (store_begin). BEGIN
 * IMMEDIATE takes the file's write lock up front, so two processes never both read, then
 * both try to write (a deadlock SQLite can only break by failing one). */
static int write_begin(struct store *s, bool *opened, struct errbuf *err)
{
    *opened = false;
    pthread_mutex_lock(&s->lock);
    if (s->in_txn)
        return 0;
    if (exec(s, "BEGIN IMMEDIATE", err) < 0) {
        pthread_mutex_unlock(&s->lock);
        return -EBUSY;
    }
    *opened = true;
    return 0;
}

static int write_end(struct store *s, bool opened, int r, struct errbuf *err)
{
    if (opened) {
        if (r == 0)
            r = exec(s, "COMMIT", err);
        if (r < 0)
            exec(s, "ROLLBACK", &(struct errbuf){{0}});
    }
    pthread_mutex_unlock(&s->lock);
    return r;
}

static int migrate(struct store *s, struct errbuf *err)
{
    sqlite3_stmt *st;
    int have, r;
    const int want = (int)(sizeof(migrations) / sizeof(migrations[0]));

    if ((r = exec(s, "BEGIN IMMEDIATE", err)) < 0)
        return r;
    if ((r = prepare(s, "PRAGMA user_version", &st, err)) < 0)
        goto out_rollback;
    have = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    if (have > want) {
        errbuf_set(err,
                   "task library: the file's schema is version %d, newer than this crucible's "
                   "(%d): use a newer crucible",
                   have, want);
        r = -EPROTO;
        goto out_rollback;
    }
    for (int v = have; v < want; v++) {
        char pragma[64];
        if ((r = exec(s, migrations[v], err)) < 0)
            goto out_rollback;
        snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v + 1);
        if ((r = exec(s, pragma, err)) < 0)
            goto out_rollback;
    }
    return exec(s, "COMMIT", err);
out_rollback:
    exec(s, "ROLLBACK", &(struct errbuf){{0}});
    return r;
}

int store_open(const char *path, bool create, struct store **out, struct errbuf *err)
{
    struct store *s = calloc(1, sizeof(*s));
    int rc, r;

    *out = NULL;
    pthread_mutexattr_t ma;

    *out = NULL;
    if (!create && access(path, F_OK) != 0) {
        free(s);
        return errbuf_set(err, "no task library at '%s' (crucible tasks import --db creates one)",
                          path),
               -ENOENT;
    }
    if (!s)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&s->lock, &ma);
    pthread_mutexattr_destroy(&ma);
    rc = sqlite3_open_v2(
        path, &s->db,
        SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_FULLMUTEX, NULL);
    if (rc != SQLITE_OK) {
        errbuf_set(err, "cannot open the task library '%s': %s", path,
                   s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
        r = -ENOENT;
        goto out_free;
    }
    sqlite3_busy_timeout(s->db, 30000);
    sqlite3_extended_result_codes(s->db, 0);
    /* journal_mode answers with a row; exec ignores it. A file that is not SQLite fails here. */
    if ((r = exec(s, "PRAGMA journal_mode = WAL", err)) < 0 ||
        (r = exec(s, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON", err)) < 0) {
        struct errbuf e2;
        errbuf_set(&e2, "cannot open the task library '%s': %s", path, err->msg);
        *err = e2;
        goto out_free;
    }
    if ((r = migrate(s, err)) < 0)
        goto out_free;
    *out = s;
    return 0;
out_free:
    sqlite3_close(s->db);
    pthread_mutex_destroy(&s->lock);
    free(s);
    return r;
}

void store_close(struct store *s)
{
    if (!s)
        return;
    sqlite3_close(s->db);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

int store_begin(struct store *s, struct errbuf *err)
{
    pthread_mutex_lock(&s->lock);
    if (exec(s, "BEGIN IMMEDIATE", err) < 0) {
        pthread_mutex_unlock(&s->lock);
        return -EBUSY;
    }
    s->in_txn = true;
    return 0;
}

int store_commit(struct store *s, struct errbuf *err)
{
    int r = exec(s, "COMMIT", err);

    if (r < 0)
        exec(s, "ROLLBACK", &(struct errbuf){{0}});
    s->in_txn = false;
    pthread_mutex_unlock(&s->lock);
    return r;
}

void store_rollback(struct store *s)
{
    exec(s, "ROLLBACK", &(struct errbuf){{0}});
    s->in_txn = false;
    pthread_mutex_unlock(&s->lock);
}

/* source_of(t) — the task's "source" field, else its id up to the first '/', malloc'd. */
static char *source_of(const struct task *t)
{
    const json_t *v = json_object_get(t->json, "source");
    const char *slash;

    if (json_is_string(v))
        return strdup(json_string_value(v));
    slash = strchr(t->id, '/');
    return slash ? strndup(t->id, (size_t)(slash - t->id)) : strdup("");
}

int store_import(struct store *s, const struct task *t, enum store_import_outcome *outcome,
                 struct errbuf *err)
{
    sqlite3_stmt *st = NULL;
    char *body = NULL, *source = NULL, *tags = NULL, current[17] = "";
    bool opened, exists = false;
    double now = now_unix();
    int r, rc;

    body = json_dumps(t->json, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    source = source_of(t);
    tags = json_object_get(t->json, "tags")
               ? json_dumps(json_object_get(t->json, "tags"), JSON_COMPACT)
               : strdup("[]");
    if (!body || !source || !tags) {
        r = (errbuf_set(err, "out of memory"), -ENOMEM);
        goto out_free;
    }
    if ((r = write_begin(s, &opened, err)) < 0)
        goto out_free;
    if ((r = prepare(s, "SELECT version FROM tasks WHERE id = ?", &st, err)) < 0)
        goto out_end;
    bind_text(st, 1, t->id);
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        snprintf(current, sizeof(current), "%s", col_text(st, 0));
        exists = true;
    } else if (rc != SQLITE_DONE) {
        r = db_error(s, rc, "cannot read a task", err);
        goto out_end;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (exists && strcmp(current, t->version) == 0) {
        *outcome = STORE_IMPORT_UNCHANGED;
        goto out_end;
    }
    *outcome = exists ? STORE_IMPORT_CHANGED : STORE_IMPORT_NEW;
    /* A version imported before (then replaced) comes back with its status and stats. */
    if ((r = prepare(s,
                     "INSERT OR IGNORE INTO versions (task_id, version, body, source, language, "
                     "harness, tags, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                     &st, err)) < 0)
        goto out_end;
    bind_text(st, 1, t->id);
    bind_text(st, 2, t->version);
    bind_text(st, 3, body);
    bind_text(st, 4, source);
    bind_text(st, 5, t->lang->name);
    bind_text(st, 6, task_harness_name(t->harness));
    bind_text(st, 7, tags);
    sqlite3_bind_double(st, 8, now);
    if ((rc = sqlite3_step(st)) != SQLITE_DONE) {
        r = db_error(s, rc, "cannot add a task version", err);
        goto out_end;
    }
    sqlite3_finalize(st);
    st = NULL;
    if ((r = prepare(s, "INSERT OR IGNORE INTO tags (task_id, version, tag) VALUES (?, ?, ?)", &st,
                     err)) < 0)
        goto out_end;
    {
        json_t *tj = json_object_get(t->json, "tags"), *e;
        size_t i;
        json_array_foreach(tj, i, e)
        {
            if (!json_is_string(e))
                continue;
            sqlite3_reset(st);
            bind_text(st, 1, t->id);
            bind_text(st, 2, t->version);
            bind_text(st, 3, json_string_value(e));
            if ((rc = sqlite3_step(st)) != SQLITE_DONE) {
                r = db_error(s, rc, "cannot add a tag", err);
                goto out_end;
            }
        }
    }
    sqlite3_finalize(st);
    st = NULL;
    if ((r = prepare(s,
                     "INSERT INTO tasks (id, version, imported_at, updated_at) VALUES (?, ?, ?, ?) "
                     "ON CONFLICT (id) DO UPDATE SET version = excluded.version, "
                     "updated_at = excluded.updated_at",
                     &st, err)) < 0)
        goto out_end;
    bind_text(st, 1, t->id);
    bind_text(st, 2, t->version);
    sqlite3_bind_double(st, 3, now);
    sqlite3_bind_double(st, 4, now);
    if ((rc = sqlite3_step(st)) != SQLITE_DONE)
        r = db_error(s, rc, "cannot add a task", err);
out_end:
    sqlite3_finalize(st);
    r = write_end(s, opened, r, err);
out_free:
    free(body);
    free(source);
    free(tags);
    return r;
}

json_t *store_task_body(struct store *s, const char *id, const char *version)
{
    sqlite3_stmt *st;
    json_t *j = NULL;

    pthread_mutex_lock(&s->lock);
    if (sqlite3_prepare_v2(s->db,
                           version ? "SELECT body FROM versions WHERE task_id = ?1 AND version = ?2"
                                   : "SELECT v.body FROM tasks t JOIN versions v ON v.task_id = "
                                     "t.id AND v.version = t.version WHERE t.id = ?1",
                           -1, &st, NULL) != SQLITE_OK) {
        pthread_mutex_unlock(&s->lock);
        return NULL;
    }
    bind_text(st, 1, id);
    if (version)
        bind_text(st, 2, version);
    if (sqlite3_step(st) == SQLITE_ROW)
        j = json_loads(col_text(st, 0), 0, NULL);
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->lock);
    return j;
}

int store_task_load(struct store *s, const char *id, const char *version, struct task *t,
                    struct errbuf *err)
{
    sqlite3_stmt *st;
    json_t *j;
    double ref = -1;
    int r;

    memset(t, 0, sizeof(*t));
    j = store_task_body(s, id, version);
    if (!j)
        return errbuf_set(err, "no task '%s'%s%s in the library", id, version ? " version " : "",
                          version ? version : ""),
               -ENOENT;
    r = task_from_json(j, t, err);
    json_decref(j);
    if (r < 0)
        return r;
    pthread_mutex_lock(&s->lock);
    if (prepare(s, "SELECT ref_time FROM versions WHERE task_id = ? AND version = ?", &st, err) ==
        0) {
        bind_text(st, 1, t->id);
        bind_text(st, 2, t->version);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
            ref = sqlite3_column_double(st, 0);
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&s->lock);
    if (t->time_factor > 0 && t->reference_time < 0 && ref >= 0)
        t->reference_time = ref;
    return 0;
}

int store_record(struct store *s, const char *id, const char *version, const char *model,
                 const struct verify_result *vr, struct errbuf *err)
{
    sqlite3_stmt *st = NULL;
    bool opened, infra = vr->verdict == VERDICT_INFRA_ERROR;
    double now = now_unix();
    int r, rc;

    if (!model || !*model)
        model = "default";
    if ((r = write_begin(s, &opened, err)) < 0)
        return r;
    if ((r = prepare(s,
                     "INSERT INTO attempts (task_id, version, model, verdict, reward, passed, "
                     "total, flaky, wall_time, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     &st, err)) < 0)
        goto out_end;
    bind_text(st, 1, id);
    bind_text(st, 2, version);
    bind_text(st, 3, model);
    bind_text(st, 4, verdict_name(vr->verdict));
    if (vr->reward_null)
        sqlite3_bind_null(st, 5);
    else
        sqlite3_bind_double(st, 5, vr->reward);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)vr->passed);
    sqlite3_bind_int64(st, 7, (sqlite3_int64)vr->total);
    sqlite3_bind_int(st, 8, vr->flaky);
    sqlite3_bind_double(st, 9, vr->wall_time);
    sqlite3_bind_double(st, 10, now);
    if ((rc = sqlite3_step(st)) != SQLITE_DONE) {
        r = db_error(s, rc, "cannot record a verification", err);
        goto out_end;
    }
    sqlite3_finalize(st);
    st = NULL;
    if ((r = prepare(s,
                     "INSERT INTO stats (task_id, version, model, attempts, accepted, reward_sum, "
                     "infra_errors, last_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
                     "ON CONFLICT (task_id, version, model) DO UPDATE SET "
                     "attempts = attempts + ?4, accepted = accepted + ?5, "
                     "reward_sum = reward_sum + ?6, infra_errors = infra_errors + ?7, "
                     "last_at = ?8",
                     &st, err)) < 0)
        goto out_end;
    bind_text(st, 1, id);
    bind_text(st, 2, version);
    bind_text(st, 3, model);
    sqlite3_bind_int(st, 4, infra ? 0 : 1);
    sqlite3_bind_int(st, 5, vr->verdict == VERDICT_ACCEPTED);
    sqlite3_bind_double(st, 6, vr->reward_null ? 0.0 : vr->reward);
    sqlite3_bind_int(st, 7, infra ? 1 : 0);
    sqlite3_bind_double(st, 8, now);
    if ((rc = sqlite3_step(st)) != SQLITE_DONE)
        r = db_error(s, rc, "cannot update the statistics", err);
out_end:
    sqlite3_finalize(st);
    return write_end(s, opened, r, err);
}

int store_set_status(struct store *s, const char *id, const char *version, enum store_status status,
                     const char *reason, double ref_time, struct errbuf *err)
{
    sqlite3_stmt *st = NULL;
    bool opened;
    int r, rc;

    if ((r = write_begin(s, &opened, err)) < 0)
        return r;
    if ((r = prepare(s,
                     "UPDATE versions SET status = ?, reason = ?, ref_time = ?, validated_at = ? "
                     "WHERE task_id = ? AND version = ?",
                     &st, err)) < 0)
        goto out_end;
    bind_text(st, 1, status_names[status]);
    bind_text(st, 2, reason ? reason : "");
    if (ref_time >= 0)
        sqlite3_bind_double(st, 3, ref_time);
    else
        sqlite3_bind_null(st, 3);
    sqlite3_bind_double(st, 4, now_unix());
    bind_text(st, 5, id);
    bind_text(st, 6, version);
    if ((rc = sqlite3_step(st)) != SQLITE_DONE)
        r = db_error(s, rc, "cannot set a task's status", err);
    else if (sqlite3_changes(s->db) == 0)
        r = (errbuf_set(err, "no task '%s' version %s in the library", id, version), -ENOENT);
out_end:
    sqlite3_finalize(st);
    return write_end(s, opened, r, err);
}

enum store_bucket store_bucket_of(const struct pass_estimate *est, unsigned long attempts)
{
    if (attempts == 0)
        return STORE_UNTRIED;
    for (size_t i = 0; i < sizeof(bucket_bounds) / sizeof(bucket_bounds[0]); i++)
        if (est->mean < bucket_bounds[i])
            return (enum store_bucket)(STORE_UNSOLVED + i);
    return STORE_SOLVED;
}

/* The row query: the current version of every task, its statistics summed over the models
 * asked for (?1 NULL = all), and how many versions it has. Filters that SQL does well
 * (source, language, tags, id prefix) are bound; the rest are checked on the row. */
static const char row_sql[] =
    "SELECT t.id, t.version, v.source, v.language, v.harness, v.tags, v.status, v.reason, "
    "  v.ref_time, "
    "  COALESCE(SUM(s.attempts), 0), COALESCE(SUM(s.accepted), 0), "
    "  COALESCE(SUM(s.infra_errors), 0), COALESCE(SUM(s.reward_sum), 0), "
    "  (SELECT COUNT(*) FROM versions w WHERE w.task_id = t.id) "
    "FROM tasks t JOIN versions v ON v.task_id = t.id AND v.version = t.version "
    "LEFT JOIN stats s ON s.task_id = t.id AND s.version = t.version "
    "  AND (?1 IS NULL OR s.model = ?1) "
    "WHERE (?2 IS NULL OR v.source = ?2) AND (?3 IS NULL OR v.language = ?3) "
    "  AND (?4 IS NULL OR t.id = ?4) "
    "  AND (?5 IS NULL OR substr(t.id, 1, length(?5)) = ?5) "
    "  AND (SELECT COUNT(*) FROM json_each(?6) f WHERE f.value NOT IN "
    "       (SELECT tag FROM tags g WHERE g.task_id = t.id AND g.version = t.version)) = 0 "
    "GROUP BY t.id ORDER BY t.id";

static void row_from(sqlite3_stmt *st, struct store_task *row)
{
    const char *status = col_text(st, 6);

    row->id = (char *)col_text(st, 0);
    snprintf(row->version, sizeof(row->version), "%s", col_text(st, 1));
    row->source = (char *)col_text(st, 2);
    row->language = (char *)col_text(st, 3);
    row->harness = (char *)col_text(st, 4);
    row->tags = (char *)col_text(st, 5);
    if (!store_status_parse(status, &row->status))
        row->status = STORE_NEW;
    row->reason = (char *)col_text(st, 7);
    row->ref_time = sqlite3_column_type(st, 8) == SQLITE_NULL ? -1 : sqlite3_column_double(st, 8);
    row->attempts = (unsigned long)sqlite3_column_int64(st, 9);
    row->accepted = (unsigned long)sqlite3_column_int64(st, 10);
    row->infra_errors = (unsigned long)sqlite3_column_int64(st, 11);
    row->reward_sum = sqlite3_column_double(st, 12);
    row->nversions = (unsigned)sqlite3_column_int(st, 13);
    pass_estimate(row->accepted, row->attempts, 0.9, &row->est);
    row->bucket = store_bucket_of(&row->est, row->attempts);
}

static bool row_kept(const struct store_filter *f, const struct store_task *row)
{
    if (f->status_mask && !(f->status_mask & (1u << row->status)))
        return false;
    if (f->exclude_mask & (1u << row->status))
        return false;
    if (f->band && (row->est.mean < f->min_pass || row->est.mean > f->max_pass))
        return false;
    return true;
}

/* rows(s, f, id, st, err) — the row statement with the filter bound. */
static int rows(struct store *s, const struct store_filter *f, const char *id, sqlite3_stmt **st,
                struct errbuf *err)
{
    json_t *tags = json_array();
    char *tags_text;
    int r;

    for (size_t i = 0; f && i < f->ntags; i++)
        json_array_append_new(tags, json_string(f->tags[i]));
    tags_text = json_dumps(tags, JSON_COMPACT);
    json_decref(tags);
    if (!tags_text)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    if ((r = prepare(s, row_sql, st, err)) < 0) {
        free(tags_text);
        return r;
    }
    bind_text(*st, 1, f && f->model && *f->model ? f->model : NULL);
    bind_text(*st, 2, f ? f->source : NULL);
    bind_text(*st, 3, f ? f->language : NULL);
    bind_text(*st, 4, id);
    bind_text(*st, 5, f ? f->id_prefix : NULL);
    bind_text(*st, 6, tags_text);
    free(tags_text);
    return 0;
}

int store_list(struct store *s, const struct store_filter *f,
               int (*each)(const struct store_task *row, void *arg), void *arg, struct errbuf *err)
{
    static const struct store_filter none;
    sqlite3_stmt *st;
    int r, rc;

    if (!f)
        f = &none;
    pthread_mutex_lock(&s->lock);
    if ((r = rows(s, f, NULL, &st, err)) < 0) {
        pthread_mutex_unlock(&s->lock);
        return r;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct store_task row = {0};
        row_from(st, &row);
        if (row_kept(f, &row) && (r = each(&row, arg)) != 0)
            break;
    }
    if (r == 0 && rc != SQLITE_DONE)
        r = db_error(s, rc, "cannot list tasks", err);
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->lock);
    return r;
}

int store_get(struct store *s, const char *id, const char *model, struct store_task *row,
              struct errbuf *err)
{
    struct store_filter f = {.model = model};
    sqlite3_stmt *st;
    int r, rc;

    memset(row, 0, sizeof(*row));
    pthread_mutex_lock(&s->lock);
    if ((r = rows(s, &f, id, &st, err)) < 0) {
        pthread_mutex_unlock(&s->lock);
        return r;
    }
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        row_from(st, row);
        row->id = strdup(row->id);
        row->source = strdup(row->source);
        row->language = strdup(row->language);
        row->harness = strdup(row->harness);
        row->tags = strdup(row->tags);
        row->reason = strdup(row->reason);
        if (!row->id || !row->source || !row->language || !row->harness || !row->tags ||
            !row->reason) {
            store_task_release(row);
            r = (errbuf_set(err, "out of memory"), -ENOMEM);
        }
    } else if (rc == SQLITE_DONE) {
        r = (errbuf_set(err, "no task '%s' in the library", id), -ENOENT);
    } else {
        r = db_error(s, rc, "cannot read a task", err);
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->lock);
    return r;
}

void store_task_release(struct store_task *row)
{
    free(row->id);
    free(row->source);
    free(row->language);
    free(row->harness);
    free(row->tags);
    free(row->reason);
    memset(row, 0, sizeof(*row));
}

static json_t *versions_json(struct store *s, const char *id, struct errbuf *err);

json_t *store_versions_json(struct store *s, const char *id, struct errbuf *err)
{
    json_t *j;

    pthread_mutex_lock(&s->lock);
    j = versions_json(s, id, err);
    pthread_mutex_unlock(&s->lock);
    return j;
}

json_t *store_models_json(struct store *s, struct errbuf *err)
{
    sqlite3_stmt *st;
    json_t *out = json_array();
    int rc = SQLITE_DONE;

    if (!out)
        return errbuf_set(err, "out of memory"), NULL;
    pthread_mutex_lock(&s->lock);
    if (prepare(s,
                "SELECT model, COUNT(*), SUM(attempts), SUM(accepted) FROM stats "
                "GROUP BY model ORDER BY model",
                &st, err) < 0) {
        pthread_mutex_unlock(&s->lock);
        json_decref(out);
        return NULL;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        json_array_append_new(out, json_pack("{s:s,s:I,s:I,s:I}", "model", col_text(st, 0), "tasks",
                                             (json_int_t)sqlite3_column_int64(st, 1), "attempts",
                                             (json_int_t)sqlite3_column_int64(st, 2), "accepted",
                                             (json_int_t)sqlite3_column_int64(st, 3)));
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        db_error(s, rc, "cannot list the models", err);
        json_decref(out);
        out = NULL;
    }
    pthread_mutex_unlock(&s->lock);
    return out;
}

static json_t *versions_json(struct store *s, const char *id, struct errbuf *err)
{
    sqlite3_stmt *st, *ss;
    json_t *out = json_array();
    int rc;

    if (!out)
        return errbuf_set(err, "out of memory"), NULL;
    if (prepare(s,
                "SELECT v.version, v.status, v.reason, v.ref_time, v.created_at, "
                "  v.version = (SELECT version FROM tasks WHERE id = v.task_id) "
                "FROM versions v WHERE v.task_id = ? ORDER BY v.created_at DESC, v.version",
                &st, err) < 0) {
        json_decref(out);
        return NULL;
    }
    if (prepare(s,
                "SELECT model, attempts, accepted, reward_sum, infra_errors FROM stats "
                "WHERE task_id = ? AND version = ? ORDER BY model",
                &ss, err) < 0) {
        sqlite3_finalize(st);
        json_decref(out);
        return NULL;
    }
    bind_text(st, 1, id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *v = json_object(), *models = json_object();
        json_object_set_new(v, "version", json_string(col_text(st, 0)));
        json_object_set_new(v, "current", json_boolean(sqlite3_column_int(st, 5)));
        json_object_set_new(v, "status", json_string(col_text(st, 1)));
        json_object_set_new(v, "reason", json_string(col_text(st, 2)));
        json_object_set_new(v, "ref_time",
                            sqlite3_column_type(st, 3) == SQLITE_NULL
                                ? json_null()
                                : json_real(sqlite3_column_double(st, 3)));
        json_object_set_new(v, "imported_at", json_real(sqlite3_column_double(st, 4)));
        sqlite3_reset(ss);
        bind_text(ss, 1, id);
        bind_text(ss, 2, col_text(st, 0));
        while (sqlite3_step(ss) == SQLITE_ROW) {
            struct pass_estimate e;
            unsigned long n = (unsigned long)sqlite3_column_int64(ss, 1),
                          a = (unsigned long)sqlite3_column_int64(ss, 2);
            json_t *m = json_object();
            pass_estimate(a, n, 0.9, &e);
            json_object_set_new(m, "attempts", json_integer((json_int_t)n));
            json_object_set_new(m, "accepted", json_integer((json_int_t)a));
            json_object_set_new(m, "mean_reward",
                                n ? json_real(sqlite3_column_double(ss, 3) / (double)n)
                                  : json_null());
            json_object_set_new(m, "infra_errors", json_integer(sqlite3_column_int64(ss, 4)));
            json_object_set_new(m, "pass_rate", json_real(e.mean));
            json_object_set_new(m, "bucket", json_string(bucket_names[store_bucket_of(&e, n)]));
            json_object_set_new(models, col_text(ss, 0), m);
        }
        json_object_set_new(v, "models", models);
        json_array_append_new(out, v);
    }
    sqlite3_finalize(ss);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        db_error(s, rc, "cannot read a task's versions", err);
        json_decref(out);
        return NULL;
    }
    return out;
}

/* Rounds for JSON: estimates to 4 places, seconds to microseconds. */
static json_t *real4(double x)
{
    return json_real(round(x * 1e4) / 1e4);
}

json_t *store_row_json(const struct store_task *row)
{
    json_t *o = json_object(), *tags = json_loads(row->tags, 0, NULL);

    json_object_set_new(o, "id", json_string(row->id));
    json_object_set_new(o, "version", json_string(row->version));
    json_object_set_new(o, "status", json_string(status_names[row->status]));
    if (row->reason && *row->reason)
        json_object_set_new(o, "reason", json_string(row->reason));
    json_object_set_new(o, "source", json_string(row->source));
    json_object_set_new(o, "language", json_string(row->language));
    json_object_set_new(o, "harness", json_string(row->harness));
    json_object_set_new(o, "tags", tags ? tags : json_array());
    json_object_set_new(o, "attempts", json_integer((json_int_t)row->attempts));
    json_object_set_new(o, "accepted", json_integer((json_int_t)row->accepted));
    json_object_set_new(o, "infra_errors", json_integer((json_int_t)row->infra_errors));
    json_object_set_new(o, "mean_reward",
                        row->attempts ? real4(row->reward_sum / (double)row->attempts)
                                      : json_null());
    json_object_set_new(o, "pass_rate", real4(row->est.mean));
    json_object_set_new(o, "pass_rate_lo", real4(row->est.lo));
    json_object_set_new(o, "pass_rate_hi", real4(row->est.hi));
    json_object_set_new(o, "bucket", json_string(bucket_names[row->bucket]));
    json_object_set_new(o, "ref_time",
                        row->ref_time >= 0 ? json_real(round(row->ref_time * 1e6) / 1e6)
                                           : json_null());
    json_object_set_new(o, "versions", json_integer(row->nversions));
    return o;
}

static int tally_row(const struct store_task *row, void *arg)
{
    struct store_tally *t = arg;

    t->tasks++;
    t->by_status[row->status]++;
    t->by_bucket[row->bucket]++;
    t->attempts += row->attempts;
    t->accepted += row->accepted;
    t->infra_errors += row->infra_errors;
    if (row->attempts)
        t->hist[row->est.mean >= 1 ? 9 : (int)(row->est.mean * 10)]++;
    return 0;
}

int store_tally(struct store *s, const struct store_filter *f, struct store_tally *t,
                struct errbuf *err)
{
    memset(t, 0, sizeof(*t));
    return store_list(s, f, tally_row, t, err);
}

json_t *store_tally_json(const struct store_tally *t, const char *model)
{
    json_t *j = json_object(), *st = json_object(), *bk = json_object(), *h = json_array();

    for (int i = 0; i < STORE_STATUS_COUNT; i++)
        json_object_set_new(st, status_names[i], json_integer((json_int_t)t->by_status[i]));
    for (int i = 0; i < STORE_BUCKET_COUNT; i++)
        json_object_set_new(bk, bucket_names[i], json_integer((json_int_t)t->by_bucket[i]));
    for (int i = 0; i < 10; i++)
        json_array_append_new(h, json_pack("{s:f, s:f, s:I}", "lo", i / 10.0, "hi", (i + 1) / 10.0,
                                           "tasks", (json_int_t)t->hist[i]));
    json_object_set_new(j, "tasks", json_integer((json_int_t)t->tasks));
    json_object_set_new(j, "status", st);
    json_object_set_new(j, "buckets", bk);
    json_object_set_new(j, "histogram", h);
    json_object_set_new(j, "attempts", json_integer((json_int_t)t->attempts));
    json_object_set_new(j, "accepted", json_integer((json_int_t)t->accepted));
    json_object_set_new(j, "infra_errors", json_integer((json_int_t)t->infra_errors));
    if (model)
        json_object_set_new(j, "model", json_string(model));
    return j;
}

/* A sampling candidate: the row copied out of the statement. */
struct candidate {
    struct store_task row;
    bool explore;
};

struct collect {
    struct candidate *v;
    size_t n, cap;
    const struct store_filter *f;
};

static int collect_row(const struct store_task *row, void *arg)
{
    struct collect *c = arg;
    const struct store_filter *f = c->f;
    bool in_band =
        row->attempts > 0 && row->est.mean >= f->min_pass && row->est.mean <= f->max_pass;
    bool explore = !in_band && row->attempts < STORE_EXPLORE_ATTEMPTS &&
                   row->est.hi >= f->min_pass && row->est.lo <= f->max_pass;
    struct candidate *cd;

    if (!in_band && !explore)
        return 0;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        struct candidate *v = realloc(c->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        c->v = v;
        c->cap = cap;
    }
    cd = &c->v[c->n];
    memset(cd, 0, sizeof(*cd));
    cd->row = *row;
    cd->row.id = strdup(row->id);
    cd->row.source = strdup(row->source);
    cd->row.language = strdup(row->language);
    cd->row.harness = strdup(row->harness);
    cd->row.tags = strdup(row->tags);
    cd->row.reason = strdup(row->reason);
    cd->explore = explore;
    c->n++;
    if (!cd->row.id || !cd->row.source || !cd->row.language || !cd->row.harness || !cd->row.tags ||
        !cd->row.reason)
        return -ENOMEM;
    return 0;
}

/* draw(rng, v, lo, hi, k) — moves k random members of v[lo..hi) to its front part
 * (a partial Fisher–Yates shuffle); returns how many were moved. */
static size_t draw(struct rng *rng, struct candidate *v, size_t lo, size_t hi, size_t k)
{
    size_t n = hi - lo;

    if (k > n)
        k = n;
    for (size_t i = 0; i < k; i++) {
        size_t j = lo + i + (size_t)rng_below(rng, n - i);
        struct candidate tmp = v[lo + i];
        v[lo + i] = v[j];
        v[j] = tmp;
    }
    return k;
}

int store_sample(struct store *s, const struct store_filter *f, size_t n, double explore,
                 uint64_t seed, int (*each)(const struct store_task *row, bool explored, void *arg),
                 void *arg, struct errbuf *err)
{
    struct store_filter g = *f;
    struct collect c = {.f = f};
    struct rng rng;
    size_t nband = 0, nexp, take_exp, take_band;
    int r;

    if (!f->band) {
        g.min_pass = 0;
        g.max_pass = 1;
        c.f = &g;
    }
    g.band = false; /* the band is applied by collect_row, with the exploration rule */
    r = store_list(s, &g, collect_row, &c, err);
    if (r == -ENOMEM)
        errbuf_set(err, "out of memory");
    if (r < 0)
        goto out;
    /* In-band candidates first, exploration candidates after, each part in id order (the
     * order store_list gives), so the draw depends only on the library, filter and seed. */
    {
        struct candidate *v = c.n ? malloc(c.n * sizeof(*v)) : NULL;
        size_t k = 0;
        if (c.n && !v) {
            r = (errbuf_set(err, "out of memory"), -ENOMEM);
            goto out;
        }
        for (int part = 0; part < 2; part++)
            for (size_t i = 0; i < c.n; i++)
                if (c.v[i].explore == (part == 1))
                    v[k++] = c.v[i];
        for (size_t i = 0; i < c.n; i++)
            nband += !c.v[i].explore;
        free(c.v);
        c.v = v;
    }
    nexp = c.n - nband;
    rng_seed(&rng, seed);
    take_exp = (size_t)floor(explore * (double)n + 0.5);
    if (take_exp > nexp)
        take_exp = nexp;
    take_band = draw(&rng, c.v, 0, nband, n - take_exp);
    if (take_band + take_exp < n && explore > 0) /* too few in band: explore more */
        take_exp = n - take_band < nexp ? n - take_band : nexp;
    take_exp = draw(&rng, c.v, nband, c.n, take_exp);
    for (size_t i = 0; i < take_band && r == 0; i++)
        r = each(&c.v[i].row, false, arg);
    for (size_t i = 0; i < take_exp && r == 0; i++)
        r = each(&c.v[nband + i].row, true, arg);
out:
    for (size_t i = 0; i < c.n; i++) {
        free(c.v[i].row.id);
        free(c.v[i].row.source);
        free(c.v[i].row.language);
        free(c.v[i].row.harness);
        free(c.v[i].row.tags);
        free(c.v[i].row.reason);
    }
    free(c.v);
    return r;
}

const char *store_status_name(enum store_status st)
{
    return (unsigned)st < STORE_STATUS_COUNT ? status_names[st] : "?";
}

bool store_status_parse(const char *name, enum store_status *st)
{
    for (int i = 0; i < STORE_STATUS_COUNT; i++)
        if (strcmp(name, status_names[i]) == 0) {
            *st = (enum store_status)i;
            return true;
        }
    return false;
}

const char *store_bucket_name(enum store_bucket b)
{
    return (unsigned)b < STORE_BUCKET_COUNT ? bucket_names[b] : "?";
}

int store_status_mask_parse(const char *list, unsigned *mask, struct errbuf *err)
{
    char *copy = strdup(list), *save = NULL;

    *mask = 0;
    if (!copy)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    if (strcmp(list, "none") == 0) {
        free(copy);
        return 0;
    }
    for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        enum store_status st;
        if (!store_status_parse(w, &st)) {
            errbuf_set(err,
                       "unknown task status '%s' (new, valid, broken, flaky, weak_tests, "
                       "no_reference)",
                       w);
            free(copy);
            return -EINVAL;
        }
        *mask |= 1u << st;
    }
    free(copy);
    if (!*mask)
        return errbuf_set(err, "empty status list"), -EINVAL;
    return 0;
}
