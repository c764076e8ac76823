/*
 * offload.c — the api workers (service/offload.h) with a real loop and real threads: every
 * unit's done() comes once on the loop thread, the parse budget bounds the cost running at
 * once (a unit above it runs alone), a cancelled queued unit is never run, and offload_free
 * hands back what is still queued as cancelled.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <unistd.h>

#include "service/offload.h"
#include "tap.h"

struct unit {
    struct offload_work w; /* first member */
    struct loop *loop;
    sem_t *started, *gate; /* optional: run() says it started, then waits for the gate */
    bool ran, done, done_on_loop;
    int *pending;
};

static pthread_t loop_thread;
static atomic_size_t running_cost, max_cost;
static atomic_int running_units, max_units;

static void unit_run(struct offload_work *w)
{
    struct unit *u = (struct unit *)w;
    size_t c = atomic_fetch_add(&running_cost, w->cost) + w->cost, m;
    int n = atomic_fetch_add(&running_units, 1) + 1, mu;

    while ((m = atomic_load(&max_cost)) < c && !atomic_compare_exchange_weak(&max_cost, &m, c))
        ;
    while ((mu = atomic_load(&max_units)) < n && !atomic_compare_exchange_weak(&max_units, &mu, n))
        ;
    if (u->started)
        sem_post(u->started);
    if (u->gate)
        sem_wait(u->gate);
    usleep(20000);
    u->ran = true;
    atomic_fetch_sub(&running_units, 1);
    atomic_fetch_sub(&running_cost, w->cost);
}

static void unit_done(struct offload_work *w)
{
    struct unit *u = (struct unit *)w;

    u->done = true;
    u->done_on_loop = pthread_equal(pthread_self(), loop_thread);
    if (--*u->pending == 0)
        loop_stop(u->loop);
}

static void unit_init(struct unit *u, struct loop *l, size_t cost, int *pending)
{
    memset(u, 0, sizeof(*u));
    u->w.run = unit_run;
    u->w.done = unit_done;
    u->w.cost = cost;
    u->loop = l;
    u->pending = pending;
}

int main(void)
{
    struct loop *l = loop_new();
    struct errbuf err = {{0}};
    struct offload *o;
    struct unit u[8];
    int pending;
    bool all;

    loop_thread = pthread_self();

    /* The budget: 100 bytes; units of 60 run one at a time on 3 threads, units of 30 up to
     * 3 at once, and one of 500 alone. */
    o = offload_new(l, 3, 100, &err);
    ok(o != NULL, "offload_new: 3 threads, a budget of 100 (%s)", err.msg);
    pending = 6;
    for (int i = 0; i < 6; i++) {
        unit_init(&u[i], l, 60, &pending);
        offload_submit(o, &u[i].w);
    }
    loop_run(l, NULL, NULL, NULL);
    all = true;
    for (int i = 0; i < 6; i++)
        all &= u[i].ran && u[i].done && u[i].done_on_loop && !u[i].w.cancelled;
    ok(all, "six units ran, each done() once on the loop thread");
    ok(atomic_load(&max_cost) == 60 && atomic_load(&max_units) == 1,
       "units of 60 with a budget of 100 ran one at a time (at most %zu bytes, %d units)",
       atomic_load(&max_cost), atomic_load(&max_units));

    atomic_store(&max_cost, 0);
    atomic_store(&max_units, 0);
    pending = 7;
    for (int i = 0; i < 6; i++) {
        unit_init(&u[i], l, 30, &pending);
        offload_submit(o, &u[i].w);
    }
    unit_init(&u[6], l, 500, &pending);
    offload_submit(o, &u[6].w);
    loop_run(l, NULL, NULL, NULL);
    ok(atomic_load(&max_cost) <= 500 && atomic_load(&max_units) <= 3 && u[6].ran,
       "units of 30 share the budget and one of 500 runs alone (at most %zu bytes, %d units)",
       atomic_load(&max_cost), atomic_load(&max_units));
    offload_free(o);

    /* Cancelling: a unit queued behind a busy worker is never run; done() says cancelled. */
    {
        sem_t started, gate;
        sem_init(&started, 0, 0);
        sem_init(&gate, 0, 0);
        o = offload_new(l, 1, 0, &err);
        pending = 2;
        unit_init(&u[0], l, 1, &pending);
        u[0].started = &started;
        u[0].gate = &gate;
        unit_init(&u[1], l, 1, &pending);
        offload_submit(o, &u[0].w);
        sem_wait(&started);
        offload_submit(o, &u[1].w);
        offload_cancel(o, &u[1].w);
        sem_post(&gate);
        loop_run(l, NULL, NULL, NULL);
        ok(u[0].ran && !u[0].w.cancelled && u[0].done, "the running unit finished");
        ok(!u[1].ran && u[1].w.cancelled && u[1].done && u[1].done_on_loop,
           "the cancelled queued unit was not run; its done() came, cancelled, on the loop");

        /* offload_free: what is queued comes back cancelled, what runs finishes. */
        pending = 3;
        unit_init(&u[2], l, 1, &pending);
        u[2].started = &started;
        u[2].gate = &gate;
        unit_init(&u[3], l, 1, &pending);
        unit_init(&u[4], l, 1, &pending);
        offload_submit(o, &u[2].w);
        sem_wait(&started);
        offload_submit(o, &u[3].w);
        offload_submit(o, &u[4].w);
        sem_post(&gate);
        offload_free(o);
        ok(u[2].ran && u[2].done && !u[2].w.cancelled && !u[3].ran && u[3].done &&
               u[3].w.cancelled && !u[4].ran && u[4].done && u[4].w.cancelled,
           "offload_free: the running unit finished, the queued ones came back cancelled");
        sem_destroy(&started);
        sem_destroy(&gate);
    }
    loop_free(l);
    return done_testing();
}
