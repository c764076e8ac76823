/*
 * offload.c — the api workers (see offload.h).
 *
 * One mutex guards the queue, the budget and the done list. A worker takes the head of the
 * queue when its cost fits next to the units running (or nothing runs); nothing overtakes
 * the head, so a large body is not starved by a stream of small ones. Finished units go to
 * a done list and an eventfd wakes the loop, which calls done().
 */
#include "service/offload.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

enum { W_QUEUED = 1, W_RUNNING, W_DONE };

/* After a unit of at least this cost, its thread returns free heap pages to the system:
 * jansson's many small blocks otherwise keep the peak of a large parse resident. */
static const size_t TRIM_AFTER = 1 << 20;

struct offload {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct loop *loop;
    int done_fd;
    struct offload_work *head, *tail;           /* queued */
    struct offload_work *done_head, *done_tail; /* finished, for the loop */
    size_t budget, in_flight;
    unsigned running;
    pthread_t *threads;
    unsigned started;
    bool stop;
};

static void ring(int fd)
{
    uint64_t one = 1;
    (void)!write(fd, &one, sizeof(one));
}

/* to_done(o, w) — with mu held: w joins the done list. */
static void to_done(struct offload *o, struct offload_work *w)
{
    w->state = W_DONE;
    w->next = NULL;
    if (o->done_tail)
        o->done_tail->next = w;
    else
        o->done_head = w;
    o->done_tail = w;
    ring(o->done_fd);
}

/* take(o) — with mu held: the head of the queue when its cost fits, else NULL. */
static struct offload_work *take(struct offload *o)
{
    struct offload_work *w = o->head;

    if (!w)
        return NULL;
    if (o->budget && o->running && o->in_flight + w->cost > o->budget)
        return NULL;
    o->head = w->next;
    if (!o->head)
        o->tail = NULL;
    return w;
}

static void *worker_main(void *arg)
{
    struct offload *o = arg;

    pthread_mutex_lock(&o->mu);
    for (;;) {
        struct offload_work *w = NULL;
        while (!o->stop && !(w = take(o)))
            pthread_cond_wait(&o->cv, &o->mu);
        if (!w)
            break;
        w->state = W_RUNNING;
        o->running++;
        o->in_flight += w->cost;
        pthread_mutex_unlock(&o->mu);

        w->run(w);
        if (w->cost >= TRIM_AFTER)
            malloc_trim(0);

        pthread_mutex_lock(&o->mu);
        o->running--;
        o->in_flight -= w->cost;
        to_done(o, w);
        pthread_cond_broadcast(&o->cv); /* budget freed: the head may fit now */
    }
    pthread_mutex_unlock(&o->mu);
    return NULL;
}

/* on_done(o) — loop thread: hands finished units back; done() may free them. */
static void on_done(void *arg, uint32_t events)
{
    struct offload *o = arg;
    uint64_t n;

    (void)events;
    (void)!read(o->done_fd, &n, sizeof(n));
    for (;;) {
        struct offload_work *w;
        pthread_mutex_lock(&o->mu);
        w = o->done_head;
        if (w) {
            o->done_head = w->next;
            if (!o->done_head)
                o->done_tail = NULL;
        }
        pthread_mutex_unlock(&o->mu);
        if (!w)
            break;
        w->done(w);
    }
}

struct offload *offload_new(struct loop *loop, unsigned threads, size_t budget, struct errbuf *err)
{
    struct offload *o = calloc(1, sizeof(*o));

    if (!o)
        return errbuf_set(err, "out of memory"), NULL;
    pthread_mutex_init(&o->mu, NULL);
    pthread_cond_init(&o->cv, NULL);
    o->loop = loop;
    o->budget = budget;
    o->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    o->threads = calloc(threads ? threads : 1, sizeof(*o->threads));
    if (o->done_fd < 0 || !o->threads || loop_add(loop, o->done_fd, EPOLLIN, on_done, o) < 0) {
        errbuf_set(err, "cannot set up the api workers: %s", strerror(errno));
        if (o->done_fd >= 0)
            close(o->done_fd);
        o->done_fd = -1;
        offload_free(o);
        return NULL;
    }
    for (unsigned i = 0; i < threads; i++) {
        int rc = pthread_create(&o->threads[i], NULL, worker_main, o);
        if (rc != 0) {
            errbuf_set(err, "cannot start api worker %u: %s", i, strerror(rc));
            offload_free(o);
            return NULL;
        }
        o->started++;
    }
    return o;
}

void offload_free(struct offload *o)
{
    if (!o)
        return;
    pthread_mutex_lock(&o->mu);
    o->stop = true;
    while (o->head) {
        struct offload_work *w = o->head;
        o->head = w->next;
        w->cancelled = true;
        to_done(o, w);
    }
    o->tail = NULL;
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
    for (unsigned i = 0; i < o->started; i++)
        pthread_join(o->threads[i], NULL);
    if (o->done_fd >= 0) {
        on_done(o, 0); /* the last done() calls */
        loop_del(o->loop, o->done_fd);
        close(o->done_fd);
    }
    free(o->threads);
    pthread_cond_destroy(&o->cv);
    pthread_mutex_destroy(&o->mu);
    free(o);
}

void offload_submit(struct offload *o, struct offload_work *w)
{
    pthread_mutex_lock(&o->mu);
    w->next = NULL;
    w->cancelled = false;
    if (o->stop) {
        w->cancelled = true;
        to_done(o, w);
    } else {
        w->state = W_QUEUED;
        if (o->tail)
            o->tail->next = w;
        else
            o->head = w;
        o->tail = w;
        pthread_cond_signal(&o->cv);
    }
    pthread_mutex_unlock(&o->mu);
}

void offload_cancel(struct offload *o, struct offload_work *w)
{
    pthread_mutex_lock(&o->mu);
    if (w->state == W_QUEUED) {
        struct offload_work **pp = &o->head, *prev = NULL;
        for (; *pp; prev = *pp, pp = &(*pp)->next)
            if (*pp == w) {
                *pp = w->next;
                if (o->tail == w)
                    o->tail = prev;
                break;
            }
        to_done(o, w);
        pthread_cond_broadcast(&o->cv); /* a new head may fit */
    }
    w->cancelled = true; /* running or on the done list: done() discards the result */
    pthread_mutex_unlock(&o->mu);
}
