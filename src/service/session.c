/*
 * session.c — the table of live sessions (see session.h). A hash of ids (random, so their
 * first digits are the hash) for lookups, and a list in creation order for listings and the
 * reaper's sweep. Ids come from getrandom(2): 96 bits nobody can guess, so one client cannot
 * name another's session.
 */
#include "service/session.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "util.h"

struct session_table {
    struct session **buckets;
    size_t nbuckets; /* a power of two */
    size_t count, max;
    struct session *head, *tail;
};

static const char hex[] = "0123456789abcdef";

bool session_id_valid(const char *id)
{
    if (!id || strncmp(id, "s-", 2) != 0 || strlen(id) != SESSION_ID_LEN)
        return false;
    for (size_t i = 2; i < SESSION_ID_LEN; i++)
        if (!strchr(hex, id[i]) || !id[i])
            return false;
    return true;
}

/* bucket_of(t, id) — the first eight hex digits of a valid id, masked. */
static size_t bucket_of(const struct session_table *t, const char *id)
{
    size_t h = 0;

    for (size_t i = 2; i < 10; i++)
        h = h << 4 | (size_t)(strchr(hex, id[i]) - hex);
    return h & (t->nbuckets - 1);
}

struct session_table *session_table_new(size_t max)
{
    struct session_table *t = calloc(1, sizeof(*t));
    size_t n = 64;

    if (!t)
        return NULL;
    while (n < max && n < (1u << 16))
        n <<= 1;
    t->buckets = calloc(n, sizeof(*t->buckets));
    if (!t->buckets) {
        free(t);
        return NULL;
    }
    t->nbuckets = n;
    t->max = max;
    return t;
}

void session_table_free(struct session_table *t)
{
    struct session *s, *next;

    if (!t)
        return;
    for (s = t->head; s; s = next) {
        next = s->next;
        free(s);
    }
    free(t->buckets);
    free(t);
}

/* new_id(out) — "s-" and SESSION_ID_HEX random hex digits; 0 or -EIO. */
static int new_id(char out[SESSION_ID_LEN + 1])
{
    unsigned char raw[SESSION_ID_HEX / 2];
    size_t got = 0;

    while (got < sizeof(raw)) {
        ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -EIO;
        got += (size_t)n;
    }
    out[0] = 's';
    out[1] = '-';
    for (size_t i = 0; i < sizeof(raw); i++) {
        out[2 + 2 * i] = hex[raw[i] >> 4];
        out[3 + 2 * i] = hex[raw[i] & 15];
    }
    out[SESSION_ID_LEN] = '\0';
    return 0;
}

struct session *session_new(struct session_table *t)
{
    struct session *s;
    struct timespec now;
    size_t b;

    if (t->count >= t->max) {
        errno = EAGAIN;
        return NULL;
    }
    if (!(s = calloc(1, sizeof(*s)))) {
        errno = ENOMEM;
        return NULL;
    }
    do {
        if (new_id(s->id) < 0) {
            free(s);
            errno = EIO;
            return NULL;
        }
    } while (session_find(t, s->id)); /* 2^-96: never, but a duplicate must not be */
    clock_gettime(CLOCK_REALTIME, &now);
    s->created_at = (double)now.tv_sec + now.tv_nsec / 1e9;
    s->created = s->last_used = util_now();
    b = bucket_of(t, s->id);
    s->hnext = t->buckets[b];
    t->buckets[b] = s;
    s->prev = t->tail;
    if (t->tail)
        t->tail->next = s;
    else
        t->head = s;
    t->tail = s;
    t->count++;
    return s;
}

struct session *session_find(struct session_table *t, const char *id)
{
    struct session *s;

    if (!session_id_valid(id))
        return NULL;
    for (s = t->buckets[bucket_of(t, id)]; s; s = s->hnext)
        if (strcmp(s->id, id) == 0)
            return s;
    return NULL;
}

void session_unlink(struct session_table *t, struct session *s, enum session_reclaim why)
{
    struct session **pp = &t->buckets[bucket_of(t, s->id)];

    while (*pp && *pp != s)
        pp = &(*pp)->hnext;
    if (*pp)
        *pp = s->hnext;
    if (s->prev)
        s->prev->next = s->next;
    else
        t->head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    else
        t->tail = s->prev;
    s->prev = s->next = s->hnext = NULL;
    s->reclaim = why;
    t->count--;
}

void session_free(struct session *s)
{
    free(s);
}

struct session *session_due(struct session_table *t, double now, enum session_reclaim *why)
{
    for (struct session *s = t->head; s; s = s->next) {
        if (s->busy || !s->sb)
            continue;
        if (now - s->created >= s->ttl_s) {
            *why = SESSION_TTL;
            return s;
        }
        if (now - s->last_used >= s->idle_ttl_s) {
            *why = SESSION_IDLE;
            return s;
        }
    }
    return NULL;
}

struct session *session_first(struct session_table *t)
{
    return t->head;
}

size_t session_count(const struct session_table *t)
{
    return t->count;
}

size_t session_max(const struct session_table *t)
{
    return t->max;
}

const char *session_reclaim_name(enum session_reclaim why)
{
    switch (why) {
    case SESSION_TTL:
        return "ttl";
    case SESSION_IDLE:
        return "idle";
    case SESSION_DELETED:
        return "deleted";
    case SESSION_BROKEN:
        return "broken";
    default:
        return "live";
    }
}
