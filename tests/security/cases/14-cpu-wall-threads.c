/*
 * 14-cpu-wall-threads — catalogue row 12: burn CPU in parallel to finish under the wall limit.
 *
 * expect: timeout
 * limit: cpu
 * run: --cpu-time 1 --wall-time 10
 * within: 8
 *
 * Two processes with two threads each burn CPU for 2.5 s of wall time (several CPU-seconds on
 * two cores) and exit 0. CPU time must be summed over the whole sandbox, not one thread or
 * one process, so the 1 s CPU limit fires: timeout with limit "cpu".
 */
#include "../hostile.h"
#include <pthread.h>

static double until;

static void *burn(void *arg)
{
    (void)arg;
    burn_until(until);
    return NULL;
}

static void burn_two_threads(void)
{
    pthread_t t;
    pthread_create(&t, NULL, burn, NULL);
    burn_until(until);
    pthread_join(t, NULL);
}

int main(void)
{
    hostile_init(15);
    until = now_s() + 2.5;
    pid_t pid = fork();
    if (pid == 0) {
        burn_two_threads();
        _exit(0);
    }
    burn_two_threads();
    if (pid > 0)
        waitpid(pid, NULL, 0);
    printf("ESCAPED: finished about 5 CPU-seconds of work under a 1 s CPU limit\n");
    return 0;
}
