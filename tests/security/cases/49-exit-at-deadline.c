/*
 * 49-exit-at-deadline — catalogue row 36: exceed the CPU limit and exit cleanly at once.
 *
 * expect: timeout
 * limit: cpu
 * run: --cpu-time 1 --wall-time 10
 * within: 8
 *
 * Two threads burn CPU until the process has used 1.3 s of CPU time (about 0.65 s of wall time
 * on two cores), then it calls _exit(0) immediately, racing a supervisor that samples usage.
 * The limit was exceeded, so timeout must win over the clean exit.
 */
#include "../hostile.h"
#include <pthread.h>
#include <sys/resource.h>

static double cpu_used(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static void *burn(void *arg)
{
    (void)arg;
    burn_until(now_s() + 5);
    return NULL;
}

int main(void)
{
    hostile_init(15);
    pthread_t t;
    pthread_create(&t, NULL, burn, NULL);
    double stop = now_s() + 5;
    while (cpu_used() < 1.3 && now_s() < stop)
        burn_until(now_s() + 0.005);
    printf("used %.2f s of CPU, exiting 0\n", cpu_used());
    fflush(stdout);
    _exit(0);
}
