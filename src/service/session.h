/*
 * session.h — the daemon's table of live sessions (docs/API.md, "Sessions"): a session is one
 * sandbox kept alive between requests, named by a random id, with a time to live, an idle
 * time to live and a busy flag (at most one operation runs on its sandbox at a time).
 *
 * The table only keeps the books: ids, lookup, the count bounded by a maximum, and which
 * sessions are due for reclamation. Making, using and destroying the sandboxes is the
 * routes' work (api_sessions.c), on worker threads. Everything here runs on the loop thread.
 */
#ifndef CRUCIBLE_SESSION_H
#define CRUCIBLE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox/sandbox.h"

#define SESSION_ID_HEX 24                   /* random hex digits after "s-" */
#define SESSION_ID_LEN (2 + SESSION_ID_HEX) /* "s-" + hex */

/* Why a session ended: SESSION_BROKEN when its sandbox's init died under it (killed from
 * outside, the OOM killer): nothing can run there any more. */
enum session_reclaim { SESSION_LIVE, SESSION_TTL, SESSION_IDLE, SESSION_DELETED, SESSION_BROKEN };

struct session {
    char id[SESSION_ID_LEN + 1];
    char parent[SESSION_ID_LEN + 1]; /* the session it was forked from, or "" */
    struct sandbox *sb;              /* NULL while being made */
    const struct image *img;         /* the server's registry's: lives as long as the server */
    struct sandbox_limits limits;    /* cpu_time: for all execs together; wall_time unused */
    double created_at;               /* unix seconds (the answer's) */
    double created, last_used;       /* util_now() times: ttl and idle are counted from these */
    double ttl_s, idle_ttl_s;
    uint64_t execs;
    bool busy;                    /* an operation owns sb (and it is not in the table's reach) */
    enum session_reclaim reclaim; /* != LIVE: out of the table, destroyed once not busy */
    struct sandbox_usage usage;   /* the last measured (while not busy) */
    bool has_usage;
    void *op;                    /* the running operation, while busy (api_sessions.c's) */
    struct session *hnext;       /* hash chain */
    struct session *prev, *next; /* the table's list, oldest first */
};

struct session_table;

/* session_table_new(max) — an empty table holding at most max sessions. NULL on ENOMEM. */
struct session_table *session_table_new(size_t max);

/* session_table_free(t) — frees the table and the sessions still in it; their sandboxes are
 * the caller's to have destroyed first. */
void session_table_free(struct session_table *t);

/* session_new(t, err) — a new session with a fresh random id, linked in the table (sb NULL,
 * times from now). NULL with errno EAGAIN when the table holds max already, ENOMEM, or EIO
 * when no random id could be had. */
struct session *session_new(struct session_table *t);

/* session_find(t, id) — the live session of that id, or NULL (also for a malformed id). */
struct session *session_find(struct session_table *t, const char *id);

/* session_unlink(t, s, why) — takes s out of the table (its id answers 404 from now on) and
 * marks why. The caller owns s then, and frees it with session_free once its sandbox is gone. */
void session_unlink(struct session_table *t, struct session *s, enum session_reclaim why);

/* session_free(s) — frees an unlinked session (not its sandbox). */
void session_free(struct session *s);

/* session_due(t, now) — a session whose ttl or idle time has run out and that is not busy,
 * with *why set (SESSION_TTL or SESSION_IDLE), or NULL. O(sessions). */
struct session *session_due(struct session_table *t, double now, enum session_reclaim *why);

/* session_first(t) / s->next — the sessions, oldest first. */
struct session *session_first(struct session_table *t);

/* session_count(t) / session_max(t) */
size_t session_count(const struct session_table *t);
size_t session_max(const struct session_table *t);

/* session_id_valid(id) — "s-" and SESSION_ID_HEX lowercase hex digits. */
bool session_id_valid(const char *id);

/* session_reclaim_name(why) — "ttl", "idle", "deleted", "broken" (metrics' reason label). */
const char *session_reclaim_name(enum session_reclaim why);

#endif
