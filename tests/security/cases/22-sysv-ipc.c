/*
 * 22-sysv-ipc — catalogue rows 19 and 34: SysV and POSIX IPC as a channel to the host.
 *
 * expect: ok
 *
 * run.t creates a SysV message queue, shared-memory segment and semaphore set on the host
 * with key CRUCIBLE_SEC_SYSVKEY. The sandbox's IPC namespace must not see them. The program
 * then creates objects of its own (key + 1, a POSIX shm object "/crucible-sec-posix"); run.t
 * checks that none of them appears on the host.
 */
#include "../hostile.h"
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>

static int count_lines(const char *path)
{
    char buf[8192];
    if (read_text(path, buf, sizeof buf) < 0)
        return -1;
    int n = 0;
    for (char *p = buf; *p; p++)
        n += *p == '\n';
    return n;
}

int main(void)
{
    hostile_init(15);
    const char *k = getenv("CRUCIBLE_SEC_SYSVKEY");
    if (!k) {
        inconclusive("no CRUCIBLE_SEC_SYSVKEY given");
        return hostile_finish();
    }
    key_t key = (key_t)strtol(k, NULL, 0);
    int id;
    if ((id = msgget(key, 0)) >= 0)
        escaped("host message queue key %#x visible (id %d)", (unsigned)key, id);
    else
        contained("msgget(host key): %s", strerror(errno));
    if ((id = shmget(key, 0, 0)) >= 0)
        escaped("host shared memory key %#x visible (id %d)", (unsigned)key, id);
    else
        contained("shmget(host key): %s", strerror(errno));
    if ((id = semget(key, 0, 0)) >= 0)
        escaped("host semaphore set key %#x visible (id %d)", (unsigned)key, id);
    else
        contained("semget(host key): %s", strerror(errno));
    /* Objects the host created with IPC_PRIVATE have ids, not keys: try the first few ids. */
    for (int i = 0; i < 64; i++) {
        struct msqid_ds ds;
        if (msgctl(i, IPC_STAT, &ds) == 0)
            escaped("message queue id %d visible", i);
    }
    static const char *const lists[] = {"/proc/sysvipc/msg", "/proc/sysvipc/shm",
                                        "/proc/sysvipc/sem"};
    for (int i = 0; i < 3; i++) {
        int n = count_lines(lists[i]);
        if (n > 1)
            escaped("%s lists %d objects", lists[i], n - 1);
        else
            contained("%s is empty", lists[i]);
    }
    int own = msgget(key + 1, IPC_CREAT | 0600);
    note("own message queue key %#x: %s", (unsigned)(key + 1),
         own >= 0 ? "created" : strerror(errno));
    int shm = shm_open("/crucible-sec-posix", O_CREAT | O_RDWR, 0600);
    note("own POSIX shm /crucible-sec-posix: %s", shm >= 0 ? "created" : strerror(errno));
    return hostile_finish();
}
