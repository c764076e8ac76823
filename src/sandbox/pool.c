/*
 * pool.c — see pool.h. One background thread refills the pool and destroys discarded
 * sandboxes (destroys first: they free the memory and pids the next creation needs).
 *
 * The refill for a sandbox taken waits until the job hands a sandbox back (pool_discard) or
 * POOL_REFILL_DEFER_S has passed, whichever comes first: made at once, it would run beside
 * the very job it was taken for, and a sandbox's creation slows a short job far more than
 * its CPU time explains (kernel locks and caches the two share; lowering the refill's nice
 * value did not help). Measured with `crucible bench --only bare,warm` on 2 CPUs: /bin/true
 * in a pool's sandbox took 1.88x a bare fork+exec with the refill beside it, 1.27x with the
 * refill 15 ms later. A long job's refill is not held back past the deferral.
 */
#include "sandbox/pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define POOL_REFILL_DEFER_S 0.05

struct pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool started, stop;
    struct sandbox_runtime rt; /* a copy without a cancel fd: creation is never cancelled */
    const struct image *img;
    struct sandbox_limits shape;
    unsigned target;
    unsigned deferred;  /* refills held back for jobs that took a sandbox (see the top) */
    double defer_until; /* util_now() when the held-back refills are due at the latest */
    bool prestart;      /* sandbox_prestart each one made */
    struct sandbox **ready;
    unsigned nready;
    struct sandbox **dead;
    size_t ndead, dead_cap;
    struct metrics *m;
    unsigned long long hits, misses, created, failures;
};

static void *pool_main(void *arg)
{
    struct pool *p = arg;

    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (p->ndead) {
            struct sandbox *sb = p->dead[--p->ndead];
            pthread_mutex_unlock(&p->mu);
            sandbox_destroy(sb, NULL);
            pthread_mutex_lock(&p->mu);
            continue;
        }
        if (p->stop)
            break;
        if (p->deferred && util_now() >= p->defer_until)
            p->deferred = 0;
        if (p->nready + p->deferred < p->target) {
            struct errbuf err = {{0}};
            struct sandbox *sb;
            double t0 = util_now();
            pthread_mutex_unlock(&p->mu);
            sb = sandbox_create(&p->rt, p->img, &p->shape, &err);
            if (sb && p->prestart)
                (void)sandbox_prestart(sb); /* its one exec's process, made here too */
            if (p->m && sb)
                metrics_observe(p->m, "sandbox_create_seconds",
                                "time to create a sandbox (warm pool)", "", util_now() - t0);
            pthread_mutex_lock(&p->mu);
            if (!sb) {
                p->failures++;
                /* Do not spin on a host that cannot create sandboxes right now. */
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_sec += 1;
                pthread_cond_timedwait(&p->cv, &p->mu, &ts);
                continue;
            }
            if (p->stop) {
                p->dead[p->ndead++] = sb; /* room: dead_cap > target */
                continue;
            }
            p->ready[p->nready++] = sb;
            p->created++;
            continue;
        }
        if (p->deferred) {
            struct timespec ts;
            double left = p->defer_until - util_now();
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += (time_t)left;
            ts.tv_nsec += (long)((left - (double)(time_t)left) * 1e9);
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&p->cv, &p->mu, &ts);
            continue;
        }
        pthread_cond_wait(&p->cv, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

struct pool *pool_new(const struct sandbox_runtime *rt, const struct image *img,
                      const struct sandbox_limits *shape, unsigned target, bool prestart,
                      struct metrics *m, struct errbuf *err)
{
    struct pool *p = calloc(1, sizeof(*p));

    if (!p)
        return errbuf_set(err, "out of memory"), NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->rt = *rt;
    p->rt.cancel_fd = -1;
    p->img = img;
    p->shape = *shape;
    p->target = target;
    p->prestart = prestart;
    p->m = m;
    p->ready = calloc(target + 1, sizeof(*p->ready));
    p->dead_cap = 64 + target;
    p->dead = calloc(p->dead_cap, sizeof(*p->dead));
    if (!p->ready || !p->dead || pthread_create(&p->thread, NULL, pool_main, p) != 0) {
        errbuf_set(err, "cannot start the warm pool");
        free(p->ready);
        free(p->dead);
        free(p);
        return NULL;
    }
    p->started = true;
    return p;
}

void pool_free(struct pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    while (p->nready) {
        if (p->ndead == p->dead_cap) {
            pthread_mutex_unlock(&p->mu);
            sandbox_destroy(p->ready[--p->nready], NULL);
            pthread_mutex_lock(&p->mu);
            continue;
        }
        p->dead[p->ndead++] = p->ready[--p->nready];
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    free(p->ready);
    free(p->dead);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

struct sandbox *pool_take(struct pool *p, const struct image *img,
                          const struct sandbox_limits *limits, int cancel_fd, struct errbuf *err)
{
    struct sandbox *sb = NULL;

    if (img != p->img && strcmp(img->digest, p->img->digest) != 0) {
        errbuf_set(err, "another image");
    } else if (limits->disk_mb != p->shape.disk_mb || limits->loopback != p->shape.loopback ||
               limits->writable_root != p->shape.writable_root) {
        errbuf_set(err, "another scratch size, network or root (writable or not)");
    } else {
        pthread_mutex_lock(&p->mu);
        if (p->nready) {
            sb = p->ready[--p->nready];
            p->deferred++; /* its refill: when a job hands one back, or soon */
            p->defer_until = util_now() + POOL_REFILL_DEFER_S;
        }
        pthread_cond_signal(&p->cv); /* refill (a miss: at once) */
        pthread_mutex_unlock(&p->mu);
        if (!sb)
            errbuf_set(err, "none ready");
    }
    if (sb && !sandbox_alive(sb)) { /* its init died while it waited (killed from outside) */
        errbuf_set(err, "the ready sandbox had died");
        pool_discard(p, sb);
        sb = NULL;
    }
    if (sb)
        sandbox_set_cancel_fd(sb, cancel_fd);
    if (sb && sandbox_set_limits(sb, limits, err) < 0) {
        pool_discard(p, sb);
        sb = NULL;
    }
    pthread_mutex_lock(&p->mu);
    if (sb)
        p->hits++;
    else
        p->misses++;
    pthread_mutex_unlock(&p->mu);
    return sb;
}

void pool_discard(struct pool *p, struct sandbox *sb)
{
    sandbox_set_cancel_fd(sb, -1); /* the job's cancel fd is not ours to watch any more */
    pthread_mutex_lock(&p->mu);
    if (p->ndead == p->dead_cap) {
        size_t cap = p->dead_cap * 2;
        struct sandbox **nd = realloc(p->dead, cap * sizeof(*nd));
        if (!nd) {
            pthread_mutex_unlock(&p->mu);
            sandbox_destroy(sb, NULL); /* no room to defer: do it here */
            return;
        }
        p->dead = nd;
        p->dead_cap = cap;
    }
    p->dead[p->ndead++] = sb;
    if (p->deferred)
        p->deferred--; /* a job is done: one held-back refill may go */
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void pool_stats(struct pool *p, struct pool_stats *st)
{
    pthread_mutex_lock(&p->mu);
    st->ready = p->nready;
    st->target = p->target;
    st->hits = p->hits;
    st->misses = p->misses;
    st->created = p->created;
    st->create_failures = p->failures;
    pthread_mutex_unlock(&p->mu);
}

struct sandbox *pool_acquire(struct pool *p, const struct sandbox_runtime *rt,
                             const struct image *img, const struct sandbox_limits *limits,
                             struct errbuf *err)
{
    struct errbuf miss = {{0}};
    struct sandbox *sb = p ? pool_take(p, img, limits, rt->cancel_fd, &miss) : NULL;

    return sb ? sb : sandbox_create(rt, img, limits, err);
}

void pool_release(struct pool *p, struct sandbox *sb)
{
    if (p)
        pool_discard(p, sb);
    else
        sandbox_discard(sb);
}
