/* Unit tests for src/metrics.c: histogram buckets past a minute (to an hour), the build info
 * gauge, and the process_* families read from /proc/self at each render. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics.h"
#include "tap.h"
#include "version.h"

/* value_of(text, prefix) — the value of the sample line starting with prefix, or -1. */
static double value_of(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);

    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, prefix, n) == 0 && p[n] == ' ')
            return strtod(p + n + 1, NULL);
    return -1;
}

int main(void)
{
    struct metrics *m = metrics_new();
    char *text, want[128];
    double fds;
    int fd;

    metrics_observe(m, "job_seconds", "time from admission to result", "kind=\"run\"", 0.002);
    metrics_observe(m, "job_seconds", "time from admission to result", "kind=\"run\"", 90);
    metrics_observe(m, "job_seconds", "time from admission to result", "kind=\"run\"", 1000);
    metrics_observe(m, "job_seconds", "time from admission to result", "kind=\"run\"", 7200);
    text = metrics_render(m);
    ok(text != NULL, "rendered");
    is_int((int)value_of(text, "crucible_job_seconds_bucket{kind=\"run\",le=\"60\"}"), 1,
           "le=60: the 2 ms job only");
    is_int((int)value_of(text, "crucible_job_seconds_bucket{kind=\"run\",le=\"120\"}"), 2,
           "le=120: the 90 s job lands in a finite bucket past a minute");
    is_int((int)value_of(text, "crucible_job_seconds_bucket{kind=\"run\",le=\"600\"}"), 2,
           "le=600: still two");
    is_int((int)value_of(text, "crucible_job_seconds_bucket{kind=\"run\",le=\"1800\"}"), 3,
           "le=1800: the 1000 s job");
    is_int((int)value_of(text, "crucible_job_seconds_bucket{kind=\"run\",le=\"3600\"}"), 3,
           "le=3600: the last finite bucket; the 2-hour job is beyond it");
    is_int((int)value_of(text, "crucible_job_seconds_bucket{kind=\"run\",le=\"+Inf\"}"), 4,
           "le=+Inf: all four");
    ok(strstr(text, "le=\"300\"") && strstr(text, "le=\"0.0001\""),
       "buckets run from 100 us through 300 s");

    snprintf(want, sizeof(want), "crucible_build_info{version=\"%s\"", CRUCIBLE_VERSION);
    ok(strstr(text, want) && strstr(text, "# TYPE crucible_build_info gauge\n"),
       "crucible_build_info with the version, a gauge");
    ok(strstr(text, "# TYPE process_cpu_seconds_total counter\n") &&
           value_of(text, "process_cpu_seconds_total") >= 0,
       "process_cpu_seconds_total, a counter");
    ok(value_of(text, "process_resident_memory_bytes") > 1 << 16,
       "process_resident_memory_bytes: this process's resident memory (%.0f)",
       value_of(text, "process_resident_memory_bytes"));
    ok(value_of(text, "process_virtual_memory_bytes") >=
           value_of(text, "process_resident_memory_bytes"),
       "process_virtual_memory_bytes at least the resident size");
    ok(value_of(text, "process_start_time_seconds") > 1e9, "process_start_time_seconds: a date");
    is_int((int)value_of(text, "process_threads"), 1, "process_threads: this test is one thread");
    ok(value_of(text, "process_max_fds") >= 64, "process_max_fds: the descriptor limit");
    fds = value_of(text, "process_open_fds");
    free(text);

    /* process_open_fds is read at each render: one more descriptor, one more counted. */
    fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    text = metrics_render(m);
    is_int((int)value_of(text, "process_open_fds"), (int)fds + 1,
           "process_open_fds counts a descriptor opened since the last render");
    free(text);
    close(fd);

    /* metrics_json: the same figures, labels parsed back (escapes too), histograms cumulative. */
    metrics_add(m, "jobs_completed_total", "jobs", "kind=\"verify\",status=\"accepted\"", 3);
    metrics_add(m, "http_requests_total", "requests", "route=\"a\\\"b\\\\c\\nd\",code=\"200\"", 2);
    metrics_set(m, "slots", "slots", "", 4);
    {
        json_t *j = metrics_json(m), *hist, *b;
        json_t *done = json_object_get(j, "crucible_jobs_completed_total");
        json_t *s0 = json_array_get(json_object_get(done, "series"), 0);
        json_t *http = json_array_get(
            json_object_get(json_object_get(j, "crucible_http_requests_total"), "series"), 0);
        ok(j && json_is_object(j), "metrics_json: an object");
        is_str(json_string_value(json_object_get(done, "type")), "counter", "a counter's type");
        ok(json_real_value(json_object_get(s0, "value")) == 3, "its value");
        is_str(json_string_value(json_object_get(json_object_get(s0, "labels"), "status")),
               "accepted", "its labels, parsed");
        is_str(json_string_value(json_object_get(json_object_get(http, "labels"), "route")),
               "a\"b\\c\nd", "a label's escapes undone (quote, backslash, newline)");
        ok(json_real_value(json_object_get(
               json_array_get(json_object_get(json_object_get(j, "crucible_slots"), "series"), 0),
               "value")) == 4,
           "a gauge without labels");
        hist = json_array_get(json_object_get(json_object_get(j, "crucible_job_seconds"), "series"),
                              0);
        is_int((int)json_integer_value(json_object_get(hist, "count")), 4, "a histogram's count");
        b = json_object_get(hist, "buckets");
        ok(json_array_size(b) == 24 && json_is_null(json_array_get(json_array_get(b, 23), 0)) &&
               json_integer_value(json_array_get(json_array_get(b, 23), 1)) == 4 &&
               json_integer_value(json_array_get(json_array_get(b, 18), 1)) == 2,
           "its buckets: cumulative, as /metrics prints them, the last one +Inf (null)");
        json_decref(j);
    }
    metrics_free(m);
    return done_testing();
}
