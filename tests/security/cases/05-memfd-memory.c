/*
 * 05-memfd-memory — catalogue row 4: hold memory in a memfd (shmem outside any mount).
 *
 * expect: memory_limit
 * run: --memory 48 --wall-time 10
 *
 * memfd pages are shmem and are charged to the writer's memory cgroup; no tmpfs size= applies.
 * The program must be OOM-killed before it has written 1 GiB.
 */
#include "../hostile.h"
#include <sys/mman.h>

#define CAP_MB 1024

int main(void)
{
    hostile_init(15);
    static char chunk[1 << 20];
    memset(chunk, 'm', sizeof chunk);
    int fd = memfd_create("hoard", 0);
    if (fd < 0) {
        note("memfd_create refused: %s", strerror(errno));
        contained("memfd_create: %s (not the OOM kill expected)", strerror(errno));
        return hostile_finish();
    }
    int mb;
    for (mb = 0; mb < CAP_MB; mb++) {
        if (write(fd, chunk, sizeof chunk) != (ssize_t)sizeof chunk) {
            contained("memfd write refused at %d MiB: %s", mb, strerror(errno));
            return hostile_finish();
        }
    }
    escaped("%d MiB held in a memfd under a 48 MiB memory limit", mb);
    return hostile_finish();
}
