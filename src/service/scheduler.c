/*
 * scheduler.c — priority queues, capacity and worker threads (see scheduler.h).
 *
 * One mutex guards everything; workers sleep on a condition variable and take the head of
 * the highest non-empty class when a slot is free and its memory and pids fit. The head of a class
 * is never overtaken by a later job of the same or a lower class (no starvation of big
 * jobs). Finished jobs go to a done list; an eventfd wakes the loop, which calls done().
 */
#include "service/scheduler.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "util.h"

enum { ST_QUEUED = 1, ST_RUNNING, ST_DONE };

struct worker {
    struct sched *s;
    pthread_t thread;
    struct sandbox_runtime rt; /* a copy with this worker's own cancel fd */
    struct job *job;           /* running, or NULL */
    int index;
};

struct sched {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct loop *loop;
    int done_fd; /* eventfd: the done list is not empty */
    struct job *head[PRIO_COUNT], *tail[PRIO_COUNT];
    size_t queued[PRIO_COUNT];
    size_t reserved, queue_max;
    struct job *done_head, *done_tail;
    struct worker *workers;
    unsigned slots, running, started;
    uint64_t memory_mb, memory_used;
    uint64_t pids, pids_used;
    bool stop;
    bool stopped; /* sched_stop ran (loop thread) */
};

static const char *const prio_names[PRIO_COUNT] = {"high", "normal", "low"};

const char *job_priority_name(enum job_priority p)
{
    return p < PRIO_COUNT ? prio_names[p] : "?";
}

bool job_priority_parse(const char *name, enum job_priority *p)
{
    for (int i = 0; i < PRIO_COUNT; i++)
        if (strcmp(name, prio_names[i]) == 0) {
            *p = (enum job_priority)i;
            return true;
        }
    return false;
}

static void ring(int fd)
{
    uint64_t one = 1;
    (void)!write(fd, &one, sizeof(one));
}

/* to_done(s, j, outcome) — with mu held: j joins the done list. */
static void to_done(struct sched *s, struct job *j, enum job_outcome outcome)
{
    j->outcome = outcome;
    j->state = ST_DONE;
    j->t_end = util_now();
    j->next = NULL;
    if (s->done_tail)
        s->done_tail->next = j;
    else
        s->done_head = j;
    s->done_tail = j;
    ring(s->done_fd);
}

/* unlink_queued(s, j) — with mu held: removes a queued job from its class. */
static void unlink_queued(struct sched *s, struct job *j)
{
    struct job **pp = &s->head[j->prio], *prev = NULL;

    for (; *pp; prev = *pp, pp = &(*pp)->next) {
        if (*pp == j) {
            *pp = j->next;
            if (s->tail[j->prio] == j)
                s->tail[j->prio] = prev;
            s->queued[j->prio]--;
            return;
        }
    }
}

/* pick(s) — with mu held: the next job a free slot may run, or NULL. */
static struct job *pick(struct sched *s)
{
    if (s->running >= s->slots)
        return NULL;
    for (int p = 0; p < PRIO_COUNT; p++) {
        struct job *j = s->head[p];
        if (!j)
            continue;
        if (s->memory_used + j->memory_mb > s->memory_mb || s->pids_used + j->pids > s->pids)
            return NULL; /* wait for memory or pids; nothing overtakes this head */
        s->head[p] = j->next;
        if (!s->head[p])
            s->tail[p] = NULL;
        s->queued[p]--;
        return j;
    }
    return NULL;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct sched *s = w->s;

    pthread_mutex_lock(&s->mu);
    for (;;) {
        struct job *j = NULL;
        while (!s->stop && !(j = pick(s)))
            pthread_cond_wait(&s->cv, &s->mu);
        if (!j)
            break;
        if (j->deadline > 0 && util_now() > j->deadline) {
            to_done(s, j, JOB_EXPIRED);
            continue;
        }
        j->state = ST_RUNNING;
        j->worker = w->index;
        j->t_start = util_now();
        w->job = j;
        s->running++;
        s->memory_used += j->memory_mb;
        s->pids_used += j->pids;
        {
            uint64_t junk;
            while (read(w->rt.cancel_fd, &junk, sizeof(junk)) > 0) /* stale cancel */
                ;
        }
        pthread_mutex_unlock(&s->mu);

        j->run(j, &w->rt);

        pthread_mutex_lock(&s->mu);
        w->job = NULL;
        s->running--;
        s->memory_used -= j->memory_mb;
        s->pids_used -= j->pids;
        to_done(s, j, j->cancel ? JOB_CANCELLED : JOB_RAN);
        pthread_cond_broadcast(&s->cv); /* capacity freed: another worker may fit its head */
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* on_done(s) — loop thread: hands finished jobs back. done() may submit or cancel. */
static void on_done(void *arg, uint32_t events)
{
    struct sched *s = arg;
    uint64_t n;

    (void)events;
    (void)!read(s->done_fd, &n, sizeof(n));
    for (;;) {
        struct job *j;
        pthread_mutex_lock(&s->mu);
        j = s->done_head;
        if (j) {
            s->done_head = j->next;
            if (!s->done_head)
                s->done_tail = NULL;
        }
        pthread_mutex_unlock(&s->mu);
        if (!j)
            break;
        j->done(j);
    }
}

struct sched *sched_new(struct loop *loop, const struct sandbox_runtime *rt, unsigned slots,
                        uint64_t memory_mb, uint64_t pids, size_t queue_max, struct errbuf *err)
{
    struct sched *s = calloc(1, sizeof(*s));

    if (!s)
        return errbuf_set(err, "out of memory"), NULL;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->loop = loop;
    s->slots = slots;
    s->memory_mb = memory_mb;
    s->pids = pids;
    s->queue_max = queue_max;
    s->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    s->workers = calloc(slots, sizeof(*s->workers));
    if (s->done_fd < 0 || !s->workers || loop_add(loop, s->done_fd, EPOLLIN, on_done, s) < 0) {
        errbuf_set(err, "cannot set up the scheduler: %s", strerror(errno));
        sched_free(s);
        return NULL;
    }
    for (unsigned i = 0; i < slots; i++) {
        struct worker *w = &s->workers[i];
        w->s = s;
        w->index = (int)i;
        w->rt = *rt;
        w->rt.cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (w->rt.cancel_fd < 0 || pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            errbuf_set(err, "cannot start worker %u: %s", i, strerror(errno));
            if (w->rt.cancel_fd >= 0)
                close(w->rt.cancel_fd);
            w->rt.cancel_fd = -1;
            sched_free(s);
            return NULL;
        }
        s->started++;
    }
    return s;
}

void sched_stop(struct sched *s)
{
    if (!s || s->stopped)
        return;
    s->stopped = true;
    pthread_mutex_lock(&s->mu);
    s->stop = true;
    for (int p = 0; p < PRIO_COUNT; p++)
        while (s->head[p]) {
            struct job *j = s->head[p];
            s->head[p] = j->next;
            to_done(s, j, JOB_CANCELLED);
        }
    for (unsigned i = 0; i < s->started; i++)
        if (s->workers[i].job) {
            s->workers[i].job->cancel = true;
            ring(s->workers[i].rt.cancel_fd);
        }
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    for (unsigned i = 0; i < s->started; i++) {
        pthread_join(s->workers[i].thread, NULL);
        close(s->workers[i].rt.cancel_fd);
    }
    if (s->done_fd >= 0) {
        on_done(s, 0); /* the last done() calls */
        loop_del(s->loop, s->done_fd);
        close(s->done_fd);
        s->done_fd = -1;
    }
}

void sched_free(struct sched *s)
{
    if (!s)
        return;
    sched_stop(s);
    free(s->workers);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

int sched_reserve(struct sched *s, size_t n)
{
    int r = 0;
    size_t used;

    pthread_mutex_lock(&s->mu);
    used = s->reserved;
    for (int p = 0; p < PRIO_COUNT; p++)
        used += s->queued[p];
    if (used + n > s->queue_max)
        r = -EAGAIN;
    else
        s->reserved += n;
    pthread_mutex_unlock(&s->mu);
    return r;
}

void sched_reserve_always(struct sched *s, size_t n)
{
    pthread_mutex_lock(&s->mu);
    s->reserved += n;
    pthread_mutex_unlock(&s->mu);
}

void sched_unreserve(struct sched *s, size_t n)
{
    pthread_mutex_lock(&s->mu);
    s->reserved -= n < s->reserved ? n : s->reserved;
    pthread_mutex_unlock(&s->mu);
}

bool sched_fits(const struct sched *s, const struct job *j)
{
    return j->memory_mb <= s->memory_mb && j->pids <= s->pids;
}

void sched_submit(struct sched *s, struct job *j)
{
    pthread_mutex_lock(&s->mu);
    if (s->reserved)
        s->reserved--;
    j->next = NULL;
    j->state = ST_QUEUED;
    j->cancel = false;
    j->t_submit = util_now();
    j->t_start = j->t_end = 0;
    j->worker = -1;
    if (s->stop) {
        to_done(s, j, JOB_CANCELLED);
    } else {
        if (s->tail[j->prio])
            s->tail[j->prio]->next = j;
        else
            s->head[j->prio] = j;
        s->tail[j->prio] = j;
        s->queued[j->prio]++;
        pthread_cond_signal(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
}

void sched_cancel(struct sched *s, struct job *j)
{
    pthread_mutex_lock(&s->mu);
    if (j->state == ST_QUEUED) {
        unlink_queued(s, j);
        to_done(s, j, JOB_CANCELLED);
    } else if (j->state == ST_RUNNING && !j->cancel) {
        j->cancel = true;
        ring(s->workers[j->worker].rt.cancel_fd);
    }
    pthread_mutex_unlock(&s->mu);
}

int sched_timeout_ms(struct sched *s)
{
    double next = 0, now = util_now();
    int ms;

    pthread_mutex_lock(&s->mu);
    for (int p = 0; p < PRIO_COUNT; p++)
        for (struct job *j = s->head[p]; j; j = j->next)
            if (j->deadline > 0 && (next == 0 || j->deadline < next))
                next = j->deadline;
    pthread_mutex_unlock(&s->mu);
    if (next == 0)
        return -1;
    ms = (int)ceil((next - now) * 1000);
    return ms < 0 ? 0 : ms;
}

void sched_tick(struct sched *s)
{
    double now = util_now();

    pthread_mutex_lock(&s->mu);
    for (int p = 0; p < PRIO_COUNT; p++) {
        struct job *j = s->head[p];
        while (j) {
            struct job *next = j->next;
            if (j->deadline > 0 && now > j->deadline) {
                unlink_queued(s, j);
                to_done(s, j, JOB_EXPIRED);
            }
            j = next;
        }
    }
    pthread_mutex_unlock(&s->mu);
}

void sched_stats(struct sched *s, struct sched_stats *st)
{
    pthread_mutex_lock(&s->mu);
    for (int p = 0; p < PRIO_COUNT; p++)
        st->queued[p] = s->queued[p];
    st->reserved = s->reserved;
    st->running = s->running;
    st->slots = s->slots;
    st->memory_used_mb = s->memory_used;
    st->memory_mb = s->memory_mb;
    st->pids_used = s->pids_used;
    st->pids = s->pids;
    pthread_mutex_unlock(&s->mu);
}
