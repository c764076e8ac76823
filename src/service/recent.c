/*
 * recent.c — see recent.h.
 */
#include "service/recent.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

struct entry {
    double time;
    char route[48], code[40], message[304];
    unsigned status;
};

struct recent {
    pthread_mutex_t lock;
    struct entry ring[RECENT_MAX];
    unsigned long long added; /* entries ever added: the next goes to added % RECENT_MAX */
};

struct recent *recent_new(void)
{
    struct recent *r = calloc(1, sizeof(*r));

    if (r)
        pthread_mutex_init(&r->lock, NULL);
    return r;
}

void recent_free(struct recent *r)
{
    if (!r)
        return;
    pthread_mutex_destroy(&r->lock);
    free(r);
}

void recent_add(struct recent *r, const char *route, unsigned status, const char *code,
                const char *message)
{
    struct timespec now;
    struct entry *e;

    if (!r)
        return;
    clock_gettime(CLOCK_REALTIME, &now);
    pthread_mutex_lock(&r->lock);
    e = &r->ring[r->added++ % RECENT_MAX];
    e->time = (double)now.tv_sec + now.tv_nsec / 1e9;
    e->status = status;
    snprintf(e->route, sizeof(e->route), "%s", route ? route : "");
    snprintf(e->code, sizeof(e->code), "%s", code ? code : "");
    snprintf(e->message, sizeof(e->message), "%.300s", message ? message : "");
    util_utf8_cut(e->message);
    pthread_mutex_unlock(&r->lock);
}

json_t *recent_json(struct recent *r)
{
    json_t *a = json_array();

    if (!r || !a)
        return a;
    pthread_mutex_lock(&r->lock);
    for (unsigned long long i = r->added; i > 0 && r->added - i < RECENT_MAX; i--) {
        const struct entry *e = &r->ring[(i - 1) % RECENT_MAX];
        json_array_append_new(a, json_pack("{s:f,s:s,s:i,s:s,s:s}", "time", e->time, "route",
                                           e->route, "status", (int)e->status, "code", e->code,
                                           "message", e->message));
    }
    pthread_mutex_unlock(&r->lock);
    return a;
}
