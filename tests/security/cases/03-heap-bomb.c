/*
 * 03-heap-bomb — catalogue row 3: malloc and touch memory until death.
 *
 * expect: memory_limit
 * run: --memory 64 --wall-time 10
 *
 * The memory cgroup (with swap accounted) must OOM-kill the program inside its own cgroup and
 * crucible must report memory_limit, not a generic signal. Bound for a broken sandbox: the
 * program stops at 2 GiB (this host has 24 GiB) and exits 1 with ESCAPED.
 */
#include "../hostile.h"

#define CHUNK  (1 << 20)
#define CAP_MB 2048

int main(void)
{
    hostile_init(15);
    int mb;
    for (mb = 0; mb < CAP_MB; mb++) {
        char *p = malloc(CHUNK);
        if (!p) {
            note("malloc failed at %d MiB (an address-space limit, not the memory cgroup)", mb);
            return hostile_finish();
        }
        memset(p, 0xa5, CHUNK);
        if (mb % 256 == 0)
            note("%d MiB touched", mb);
    }
    escaped("%d MiB allocated and touched under a 64 MiB limit", mb);
    return hostile_finish();
}
