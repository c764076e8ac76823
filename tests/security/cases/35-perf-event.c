/*
 * 35-perf-event — catalogue rows 24 and 30: perf_event_open.
 *
 * expect: ok
 *
 * A software CPU-clock counter on the calling process is allowed by the kernel at
 * perf_event_paranoid 2, so only the seccomp policy refuses it; a hardware counter and a
 * system-wide counter are tried as well.
 */
#include "../hostile.h"
#include <linux/perf_event.h>

static long perf_open(uint32_t type, uint64_t config, pid_t pid, int cpu)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = type;
    a.config = config;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return syscall(SYS_perf_event_open, &a, pid, cpu, -1, 0);
}

int main(void)
{
    hostile_init(15);
    PROBE("perf_event_open(sw cpu-clock, self)",
          perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0, -1));
    PROBE("perf_event_open(hw cycles, self)",
          perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, -1));
    PROBE("perf_event_open(sw cpu-clock, all processes, cpu 0)",
          perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, -1, 0));
    return hostile_finish();
}
