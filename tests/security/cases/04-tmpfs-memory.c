/*
 * 04-tmpfs-memory — catalogue row 4: hold memory as tmpfs pages in /tmp.
 *
 * expect: memory_limit
 * run: --memory 48 --disk 512 --wall-time 10
 *
 * The scratch tmpfs is large (512 MiB) but the memory cgroup is 48 MiB: tmpfs pages are charged
 * to the writer's memory cgroup, so the program must be OOM-killed long before it has written
 * 400 MiB. Reaching 400 MiB means tmpfs memory escapes the memory limit.
 */
#include "../hostile.h"

#define CAP_MB 400

int main(void)
{
    hostile_init(15);
    static char chunk[1 << 20];
    memset(chunk, 'x', sizeof chunk);
    int fd = open("/tmp/fill", O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd < 0) {
        inconclusive("open /tmp/fill: %s", strerror(errno));
        return hostile_finish();
    }
    int mb;
    for (mb = 0; mb < CAP_MB; mb++) {
        if (write(fd, chunk, sizeof chunk) != (ssize_t)sizeof chunk) {
            note("write failed at %d MiB: %s", mb, strerror(errno));
            contained("tmpfs write refused at %d MiB (an error, not the OOM kill expected)", mb);
            return hostile_finish();
        }
    }
    escaped("%d MiB of tmpfs pages held under a 48 MiB memory limit", mb);
    return hostile_finish();
}
