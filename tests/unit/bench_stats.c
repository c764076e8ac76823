/* Unit tests for src/cli/bench_stats.c: the summary of samples (median and p90 interpolated
 * between closest ranks, mean, count), growth past the first allocation, and the machine's
 * description read from this host. */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "cli/bench_stats.h"
#include "tap.h"

static int near(double a, double b)
{
    return fabs(a - b) < 1e-9;
}

int main(void)
{
    static const double ten[] = {7, 3, 10, 1, 9, 2, 8, 5, 4, 6};
    struct bench_samples s = {0};
    struct bench_summary sum = {0};
    struct bench_machine m;

    ok(!bench_summarize(&s, &sum), "no samples: no summary");

    bench_samples_add(&s, 4.25);
    ok(bench_summarize(&s, &sum) && sum.n == 1 && near(sum.median, 4.25) && near(sum.p90, 4.25) &&
           near(sum.mean, 4.25),
       "one sample: it is the median, the p90 and the mean");
    bench_samples_release(&s);
    ok(s.n == 0 && s.v == NULL, "release empties");

    for (size_t i = 0; i < 10; i++)
        bench_samples_add(&s, ten[i]);
    ok(bench_summarize(&s, &sum), "ten samples: a summary");
    /* sorted 1..10: median between ranks 4 and 5 (5 and 6); p90 at rank 8.1: 9 + 0.1 * (10 - 9) */
    if (!ok(near(sum.median, 5.5) && near(sum.p90, 9.1) && near(sum.mean, 5.5) && sum.n == 10,
            "1..10 unsorted: median 5.5, p90 9.1, mean 5.5"))
        diag("  median %g p90 %g mean %g n %zu", sum.median, sum.p90, sum.mean, sum.n);
    ok(s.v[0] == 1 && s.v[9] == 10, "the samples are left sorted");
    bench_samples_release(&s);

    for (int i = 999; i >= 0; i--)
        if (bench_samples_add(&s, i) < 0)
            break;
    ok(s.n == 1000 && bench_summarize(&s, &sum) && near(sum.median, 499.5) &&
           near(sum.p90, 899.1) && sum.p90 >= sum.median,
       "1000 samples (past several reallocations): median 499.5, p90 899.1");
    bench_samples_release(&s);

    bench_machine_read(&m);
    ok(strncmp(m.kernel, "Linux ", 6) == 0 && m.kernel[6], "kernel: '%s'", m.kernel);
    ok(m.cpus == sysconf(_SC_NPROCESSORS_ONLN) && m.cpus >= 1, "cpus: %ld", m.cpus);
    ok(m.model[0] != '\0', "cpu model: '%s'", m.model);
    ok(m.memory_mb > 0, "memory: %llu MiB", (unsigned long long)m.memory_mb);
    ok(strcmp(m.cgroup, "v2") == 0 || strcmp(m.cgroup, "v1") == 0 ||
           strcmp(m.cgroup, "hybrid") == 0 || strcmp(m.cgroup, "none") == 0,
       "cgroup: '%s'", m.cgroup);
    ok(m.load[0] >= 0 && m.load[0] == m.load[1] && bench_load() >= 0, "load average: %.2f",
       m.load[0]);
    return done_testing();
}
