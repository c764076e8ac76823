/*
 * broker.c — the Redis connection and stream names of cluster mode (broker.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "cluster/broker.h"

struct broker {
    redisContext *c;
    bool dead;
};

int broker_url_parse(const char *s, struct broker_url *u, struct errbuf *err)
{
    const char *p, *at, *slash, *colon, *env;
    char *end;
    size_t n;

    memset(u, 0, sizeof(*u));
    u->port = 6379;
    if (strncmp(s, "rediss://", 9) == 0)
        return errbuf_set(err,
                          "broker '%s': rediss:// (TLS) is not supported: Debian 12's hiredis "
                          "0.14 has no TLS; reach Redis over a private network or a TLS tunnel",
                          s);
    if (strncmp(s, "redis://", 8) != 0)
        return errbuf_set(err, "broker '%s': expected redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]",
                          s);
    p = s + 8;
    slash = strchr(p, '/');
    at = memrchr(p, '@', slash ? (size_t)(slash - p) : strlen(p));
    if (at) {
        const char *c = memchr(p, ':', (size_t)(at - p));
        if (!c)
            return errbuf_set(err, "broker URL: credentials are [USER]:PASSWORD@");
        if ((size_t)(c - p) >= sizeof(u->user) || (size_t)(at - c - 1) >= sizeof(u->password))
            return errbuf_set(err, "broker URL: user or password too long");
        memcpy(u->user, p, (size_t)(c - p));
        memcpy(u->password, c + 1, (size_t)(at - c - 1));
        p = at + 1;
    }
    n = slash ? (size_t)(slash - p) : strlen(p);
    colon = memrchr(p, ':', n);
    if (colon) {
        long port = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || end != p + n || port < 1 || port > 65535)
            return errbuf_set(err, "broker URL: the port must be 1..65535, not '%.*s'",
                              (int)(p + n - colon - 1), colon + 1);
        u->port = (int)port;
        n = (size_t)(colon - p);
    }
    if (n == 0 || n >= sizeof(u->host))
        return errbuf_set(err, "broker URL '%s': no host, or too long a host", s);
    memcpy(u->host, p, n);
    if (slash && slash[1]) {
        long db = strtol(slash + 1, &end, 10);
        if (*end || db < 0 || db > 1000000)
            return errbuf_set(err, "broker URL: the database must be a number, not '%s'",
                              slash + 1);
        u->db = (int)db;
    }
    if (!u->password[0] && (env = getenv("CRUCIBLE_BROKER_PASSWORD")) && *env) {
        if (strlen(env) >= sizeof(u->password))
            return errbuf_set(err, "$CRUCIBLE_BROKER_PASSWORD is too long");
        strcpy(u->password, env);
    }
    return 0;
}

void broker_url_show(const struct broker_url *u, char *out, size_t size)
{
    snprintf(out, size, "redis://%s:%d/%d", u->host, u->port, u->db);
}

struct broker *broker_connect(const struct broker_url *u, double timeout_s, struct errbuf *err)
{
    struct timeval tv = {(time_t)timeout_s, (suseconds_t)((timeout_s - (time_t)timeout_s) * 1e6)};
    struct broker *b = calloc(1, sizeof(*b));
    char where[320];
    redisReply *rep;

    broker_url_show(u, where, sizeof(where));
    if (!b) {
        errbuf_set(err, "out of memory");
        return NULL;
    }
    b->c = redisConnectWithTimeout(u->host, u->port, tv);
    if (!b->c || b->c->err) {
        errbuf_set(err, "cannot reach the broker %s: %s", where,
                   b->c ? b->c->errstr : "hiredis unavailable (Debian package libhiredis0.14)");
        broker_close(b);
        return NULL;
    }
    redisSetTimeout(b->c, tv);
    if (u->password[0]) {
        rep = u->user[0] ? broker_cmdf(b, err, "AUTH", u->user, u->password, NULL)
                         : broker_cmdf(b, err, "AUTH", u->password, NULL);
        if (!broker_reply_ok(rep)) {
            if (rep)
                errbuf_set(err, "broker %s refused the credentials: %s", where, rep->str);
            freeReplyObject(rep);
            broker_close(b);
            return NULL;
        }
        freeReplyObject(rep);
    }
    if (u->db) {
        char db[16];
        snprintf(db, sizeof(db), "%d", u->db);
        rep = broker_cmdf(b, err, "SELECT", db, NULL);
        if (!broker_reply_ok(rep)) {
            if (rep)
                errbuf_set(err, "broker %s: SELECT %s: %s", where, db, rep->str);
            freeReplyObject(rep);
            broker_close(b);
            return NULL;
        }
        freeReplyObject(rep);
    }
    return b;
}

void broker_close(struct broker *b)
{
    if (!b)
        return;
    if (b->c)
        redisFree(b->c);
    free(b);
}

bool broker_alive(const struct broker *b)
{
    return b && !b->dead;
}

redisReply *broker_cmd(struct broker *b, struct errbuf *err, int argc, const char **argv,
                       const size_t *lens)
{
    size_t own[32];
    redisReply *rep;

    if (b->dead) {
        errbuf_set(err, "the broker connection is closed");
        return NULL;
    }
    if (!lens) {
        if (argc > 32) {
            errbuf_set(err, "too many arguments");
            return NULL;
        }
        for (int i = 0; i < argc; i++)
            own[i] = strlen(argv[i]);
        lens = own;
    }
    rep = redisCommandArgv(b->c, argc, argv, lens);
    if (!rep) {
        b->dead = true;
        errbuf_set(err, "broker: %s", b->c->errstr[0] ? b->c->errstr : "connection lost");
    }
    return rep;
}

redisReply *broker_cmdf(struct broker *b, struct errbuf *err, ...)
{
    const char *argv[32];
    int argc = 0;
    va_list ap;

    va_start(ap, err);
    while (argc < 32 && (argv[argc] = va_arg(ap, const char *)))
        argc++;
    va_end(ap);
    return broker_cmd(b, err, argc, argv, NULL);
}

bool broker_reply_ok(const redisReply *rep)
{
    return rep && rep->type != REDIS_REPLY_ERROR;
}

int broker_ensure_group(struct broker *b, const char *stream, const char *group, struct errbuf *err)
{
    redisReply *rep = broker_cmdf(b, err, "XGROUP", "CREATE", stream, group, "0", "MKSTREAM", NULL);
    int rc = 0;

    if (!rep)
        return -EIO;
    if (rep->type == REDIS_REPLY_ERROR && !strstr(rep->str, "BUSYGROUP")) {
        errbuf_set(err, "XGROUP CREATE %s %s: %s", stream, group, rep->str);
        rc = -EIO;
    }
    freeReplyObject(rep);
    return rc;
}

const char *broker_job_stream(enum job_priority p)
{
    switch (p) {
    case PRIO_HIGH:
        return "crucible:jobs:high";
    case PRIO_LOW:
        return "crucible:jobs:low";
    case PRIO_NORMAL:
    case PRIO_COUNT:
    default:
        return "crucible:jobs:normal";
    }
}

const char *broker_field(const redisReply *fields, const char *name, size_t *len)
{
    if (!fields || fields->type != REDIS_REPLY_ARRAY)
        return NULL;
    for (size_t i = 0; i + 1 < fields->elements; i += 2) {
        const redisReply *k = fields->element[i], *v = fields->element[i + 1];
        if (k->type == REDIS_REPLY_STRING && strcmp(k->str, name) == 0 &&
            v->type == REDIS_REPLY_STRING) {
            if (len)
                *len = v->len;
            return v->str;
        }
    }
    return NULL;
}

bool broker_idem_key_valid(const char *k)
{
    size_t n = strlen(k);

    if (n == 0 || n > BROKER_IDEM_KEY_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == ':' || c == '-'))
            return false;
    }
    return true;
}

bool broker_session_of(const char *target, char *id, size_t size)
{
    const char *p = target + strlen("/v1/sessions/");
    size_t n;

    if (strncmp(target, "/v1/sessions/", strlen("/v1/sessions/")) != 0)
        return false;
    n = strcspn(p, "/?");
    if (n == 0 || n >= size || n >= BROKER_SESSION_ID_MAX)
        return false;
    memcpy(id, p, n);
    id[n] = '\0';
    return broker_idem_key_valid(id);
}

bool broker_image_stream(enum job_priority p, const char *image, char *out, size_t size)
{
    size_t n = strlen(image);

    if (n == 0 || n > 200)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = image[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-' || c == '/' || c == ':'))
            return false;
    }
    return (size_t)snprintf(out, size, "%s:image:%s", broker_job_stream(p), image) < size;
}

bool broker_memory_stream(enum job_priority p, uint64_t mb, char *out, size_t size)
{
    return (size_t)snprintf(out, size, "%s:memory:%" PRIu64, broker_job_stream(p), mb) < size;
}

bool broker_worker_alive(struct broker *b, const char *name)
{
    struct errbuf err = {{0}};
    char key[200];
    redisReply *rep;
    bool alive;

    snprintf(key, sizeof(key), BROKER_WORKER_KEY "%s", name);
    rep = broker_cmdf(b, &err, "EXISTS", key, NULL);
    alive = !rep || rep->type != REDIS_REPLY_INTEGER || rep->integer != 0;
    freeReplyObject(rep);
    return alive;
}
