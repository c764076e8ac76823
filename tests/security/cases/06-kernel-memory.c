/*
 * 06-kernel-memory — catalogue row 5: hold memory in kernel objects.
 *
 * expect: memory_limit|ok
 * run: --memory 32 --wall-time 10
 *
 * Phase 1 fills as many 1 MiB pipe buffers as it can (pipe pages are kernel memory charged to
 * the memory cgroup); phase 2 creates anonymous mappings until max_map_count. Contained means
 * the kernel refused (EMFILE, ENOMEM, EPERM from the per-user pipe limit) or the memory cgroup
 * OOM-killed the program: which one depends on the kernel, hence two accepted statuses.
 * Escape: 1 GiB held in pipe buffers under a 32 MiB memory limit.
 */
#include "../hostile.h"
#include <sys/mman.h>

#define PIPE_CAP (1024L << 20)

int main(void)
{
    hostile_init(15);
    static char chunk[65536];
    memset(chunk, 'p', sizeof chunk);
    long held = 0;
    int pipes = 0, setsz_refused = 0;
    double deadline = now_s() + 5;
    while (held < PIPE_CAP && now_s() < deadline) {
        int p[2];
        if (pipe2(p, O_NONBLOCK) < 0) {
            note("pipe2 refused after %d pipes: %s", pipes, strerror(errno));
            break;
        }
        pipes++;
        if (fcntl(p[1], F_SETPIPE_SZ, 1 << 20) < 0)
            setsz_refused++;
        for (;;) {
            ssize_t n = write(p[1], chunk, sizeof chunk);
            if (n <= 0)
                break;
            held += n;
        }
    }
    note("%d pipes holding %ld KiB (%d F_SETPIPE_SZ refused)", pipes, held >> 10, setsz_refused);
    if (held >= PIPE_CAP)
        escaped("%ld MiB held in pipe buffers under a 32 MiB memory limit", held >> 20);
    else
        contained("pipe buffers bounded at %ld KiB", held >> 10);

    long maps = 0;
    for (; maps < 200000; maps++) {
        int prot = (maps & 1) ? PROT_READ : PROT_NONE; /* alternate so they do not merge */
        if (mmap(NULL, 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
            break;
    }
    if (maps >= 200000)
        escaped("%ld mappings created (max_map_count not enforced?)", maps);
    else
        contained("mappings bounded at %ld: %s", maps, strerror(errno));
    return hostile_finish();
}
