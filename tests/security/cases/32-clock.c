/*
 * 32-clock — catalogue row 29: set the system clock.
 *
 * expect: ok
 *
 * Each attempt uses a harmless value (the current time, the current tick) so that even on a
 * broken sandbox the host clock does not move by more than microseconds: clock_settime,
 * settimeofday, adjtimex and clock_adjtime with ADJ_TICK must all fail with EPERM (or be
 * killed by seccomp).
 */
#include "../hostile.h"
#include <sys/time.h>
#include <sys/timex.h>

static long set_realtime_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return clock_settime(CLOCK_REALTIME, &ts);
}

static long settimeofday_now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return settimeofday(&tv, NULL);
}

static long adjtimex_same_tick(int use_clock_adjtime)
{
    struct timex tx = {.modes = 0};
    if (adjtimex(&tx) < 0)
        return -1;
    long tick = tx.tick;
    memset(&tx, 0, sizeof tx);
    tx.modes = ADJ_TICK;
    tx.tick = tick;
    return use_clock_adjtime ? clock_adjtime(CLOCK_REALTIME, &tx) : adjtimex(&tx);
}

int main(void)
{
    hostile_init(15);
    struct timex tx = {.modes = 0};
    note("adjtimex read-only query: %d", adjtimex(&tx));
    PROBE("clock_settime(CLOCK_REALTIME, now)", set_realtime_now());
    PROBE("settimeofday(now)", settimeofday_now());
    PROBE("adjtimex(ADJ_TICK, current tick)", adjtimex_same_tick(0));
    PROBE("clock_adjtime(CLOCK_REALTIME, ADJ_TICK, current tick)", adjtimex_same_tick(1));
    return hostile_finish();
}
