/*
 * 02-thread-bomb — catalogue row 2: create threads until it fails.
 *
 * expect: ok
 * run: --pids 32 --wall-time 10
 *
 * Threads count against pids.max. pthread_create must fail (EAGAIN) long before the program's
 * own cap of 2000 threads (64 KiB stacks, so the cap costs at most 128 MiB of address space).
 * The threads sleep on a flag; exit() ends them all.
 */
#include "../hostile.h"
#include <pthread.h>
#include <stdatomic.h>

#define THREAD_CAP 2000

static atomic_int stop;

static void *idle(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        usleep(10000);
    return NULL;
}

int main(void)
{
    hostile_init(15);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    int made = 0, err = 0;
    double deadline = now_s() + 5;
    while (made < THREAD_CAP && now_s() < deadline) {
        pthread_t t;
        err = pthread_create(&t, &attr, idle, NULL);
        if (err)
            break;
        made++;
    }
    note("%d threads created", made);
    if (made >= THREAD_CAP)
        escaped("%d threads created without hitting a pids limit", made);
    else if (err == EAGAIN)
        contained("thread bomb stopped by EAGAIN after %d threads", made);
    else if (err)
        inconclusive("pthread_create failed with %s after %d threads", strerror(err), made);
    else
        inconclusive("only %d threads in 5 s", made);
    atomic_store(&stop, 1);
    int rc = hostile_finish();
    exit(rc);
}
