/*
 * broker.h — crucible's use of Redis in cluster mode (docs/CLUSTER.md): the broker's URL, a
 * connection, and the names and fields of the streams gateways and workers share.
 *
 * Streams (all under the "crucible:" prefix):
 *   crucible:jobs:high|normal|low  jobs, one stream per priority class, read by the consumer
 *                                  group "crucible-workers"; fields: id, reply, seq, method,
 *                                  target (path and query), ctype, body, and key (an
 *                                  Idempotency-Key) when the client gave one
 *   crucible:replies:GATEWAY       a gateway's answers, read by its own group "gateway";
 *                                  fields: id, status, ctype, body, worker
 *   crucible:dead                  jobs that took down max_attempts workers; the job's fields
 *                                  and reason, deliveries, stream
 *   crucible:jobs:PRIO:image:NAME  jobs that need image NAME, read by the workers holding it
 *   crucible:jobs:at:WORKER        jobs for one worker alone (a session's requests: the session
 *                                  lives on that worker's node), read by the same group
 * Keys:
 *   crucible:worker:NAME           a live worker's heartbeat (a JSON capacity, expiring when the
 *                                  worker stops renewing it)
 *   crucible:session:ID            the worker that holds session ID
 *   crucible:idem:KEY              a job admitted with Idempotency-Key KEY: "STREAM MSGID", or
 *                                  "-" while it is being added
 *   crucible:answer:KEY            its answer (hash: status, ctype, body, worker), kept an hour
 *
 * A connection is one hiredis context, used by one thread at a time. A command that fails
 * on the connection (reset, timeout, server gone) answers NULL and the connection is dead
 * from then on (broker_alive: false); the caller reconnects. An error reply of the server
 * (WRONGTYPE, NOGROUP...) is a reply, not a dead connection.
 */
#ifndef CRUCIBLE_BROKER_H
#define CRUCIBLE_BROKER_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "service/scheduler.h"
#include "util.h"

#define BROKER_GROUP        "crucible-workers"
#define BROKER_REPLY_GROUP  "gateway"
#define BROKER_DEAD_STREAM  "crucible:dead"
#define BROKER_WORKER_KEY   "crucible:worker:"
#define BROKER_REPLY_STREAM "crucible:replies:"
#define BROKER_AT_STREAM    "crucible:jobs:at:"
#define BROKER_SESSION_KEY  "crucible:session:"
#define BROKER_IDEM_KEY     "crucible:idem:"
#define BROKER_ANSWER_KEY   "crucible:answer:"
#define BROKER_KEEP_S       "3600"   /* an answer, an idempotency key, a reply stream */
#define BROKER_SESSION_S    "604800" /* a session's pin: the node reaps sessions sooner */

struct broker_url {
    char host[256];
    int port;
    int db;
    char user[128];     /* "" with a password alone: AUTH password */
    char password[256]; /* "": no AUTH */
};

/* broker_url_parse(s, u, err) — redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]; the password may
 * also come from $CRUCIBLE_BROKER_PASSWORD, so that it stays out of the process list.
 * rediss:// (TLS) is refused with the reason: Debian 12's hiredis has no TLS. */
int broker_url_parse(const char *s, struct broker_url *u, struct errbuf *err);
/* broker_url_show(u, out, size) — redis://HOST:PORT/DB, no credentials: for logs. */
void broker_url_show(const struct broker_url *u, char *out, size_t size);

struct broker;

/* broker_connect(u, timeout_s, err) — connected, authenticated, the database selected;
 * commands time out after timeout_s (a blocking read asks for less). NULL with err set. */
struct broker *broker_connect(const struct broker_url *u, double timeout_s, struct errbuf *err);
void broker_close(struct broker *b);
bool broker_alive(const struct broker *b);

/* broker_cmd(b, err, argc, argv, lens) — one command; the reply (freeReplyObject), or NULL
 * with err set when the connection failed (b is dead). lens NULL: strlen of each. */
redisReply *broker_cmd(struct broker *b, struct errbuf *err, int argc, const char **argv,
                       const size_t *lens);
/* broker_cmdf(b, err, arg, ...) — the same with NUL-terminated arguments ending with NULL. */
redisReply *broker_cmdf(struct broker *b, struct errbuf *err, ...) __attribute__((sentinel));

/* broker_reply_ok(rep) — the reply is not an error reply (and not NULL). */
bool broker_reply_ok(const redisReply *rep);
/* broker_ensure_group(b, stream, group, err) — XGROUP CREATE ... 0 MKSTREAM, "exists" being
 * fine: 0, or -EIO with err set. */
int broker_ensure_group(struct broker *b, const char *stream, const char *group,
                        struct errbuf *err);

/* broker_worker_alive(b, name) — the worker's heartbeat key exists; true when unsure (the
 * command failed): a worker is never declared dead on a broker's hiccup. */
bool broker_worker_alive(struct broker *b, const char *name);

/* broker_job_stream(p) — "crucible:jobs:high"... */
const char *broker_job_stream(enum job_priority p);

#define BROKER_SESSION_ID_MAX 80
#define BROKER_IDEM_KEY_MAX   128

/* broker_session_of(target, id, size) — the session a request target names
 * ("/v1/sessions/ID", "/v1/sessions/ID/exec?..."): true with id set, when ID is one of
 * broker_idem_key_valid's alphabet and fits. */
bool broker_session_of(const char *target, char *id, size_t size);
/* broker_idem_key_valid(k) — 1..BROKER_IDEM_KEY_MAX bytes of [A-Za-z0-9._:-]: an
 * Idempotency-Key, or a session id, that may become part of a key's name. */
bool broker_idem_key_valid(const char *k);

#define BROKER_STREAM_MAX 320

/* broker_image_stream(p, image, out, size) — "crucible:jobs:normal:image:NAME": the jobs of
 * priority p that name an image other than "host", read only by the workers whose node holds
 * it (their heartbeat's "images"). false when image is not a name (an image name or NAME:TAG:
 * letters, digits, '.', '_', '-', '/', ':') or does not fit. */
bool broker_image_stream(enum job_priority p, const char *image, char *out, size_t size);

/* broker_memory_stream(p, mb, out, size) — "crucible:jobs:normal:memory:MB": the jobs of
 * priority p that need more memory than some live worker's node takes for one job, read only
 * by the workers whose node takes jobs of exactly MB (their heartbeat's "job_memory_mb"; the
 * gateway picks the smallest that fits). false when it does not fit. */
bool broker_memory_stream(enum job_priority p, uint64_t mb, char *out, size_t size);

/* broker_field(fields, name, &len) — a stream entry's field value (fields: the entry's array
 * of name, value, ...), or NULL. */
const char *broker_field(const redisReply *fields, const char *name, size_t *len);

#endif
