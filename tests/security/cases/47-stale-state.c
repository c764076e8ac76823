/*
 * 47-stale-state — catalogue row 34: leave state behind for the next run.
 *
 * expect: ok
 * repeat: 2
 *
 * run.t runs this program twice in a row. Each run first checks that it starts clean (/work
 * holds only prog, /tmp is empty, no SysV queue with the stale key, no process named
 * "sec-stale", nothing listening on @crucible-sec-stale, no /dev/shm object), then plants all
 * of those: files, a SysV queue, a POSIX shm object, and a detached process (30 s cap) that
 * listens on the abstract socket. The second run must find none of them.
 */
#include "../hostile.h"
#include <stddef.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#define STALE_KEY 0x0c5ec0de

static socklen_t stale_addr(struct sockaddr_un *a)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    memcpy(a->sun_path + 1, "crucible-sec-stale", 18);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 19);
}

static int entries(const char *dir, const char *except)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            (except && !strcmp(e->d_name, except)))
            continue;
        note("%s holds %s", dir, e->d_name);
        n++;
    }
    if (d)
        closedir(d);
    return n;
}

static void check_clean(void)
{
    int n = entries("/work", "prog");
    if (n)
        escaped("/work holds %d entries from before this run", n);
    else
        contained("/work holds only prog");
    n = entries("/tmp", NULL);
    if (n)
        escaped("/tmp holds %d entries from before this run", n);
    else
        contained("/tmp is empty");
    if (msgget(STALE_KEY, 0) >= 0)
        escaped("a SysV queue from a previous run exists");
    else
        contained("no SysV queue with the stale key: %s", strerror(errno));
    int fd = shm_open("/crucible-sec-stale", O_RDONLY, 0);
    if (fd >= 0)
        escaped("a POSIX shm object from a previous run exists");
    else
        contained("no stale POSIX shm object: %s", strerror(errno));
    struct sockaddr_un a;
    socklen_t len = stale_addr(&a);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(s, (struct sockaddr *)&a, len) == 0)
        escaped("@crucible-sec-stale still answers: a process from a previous run is alive");
    else
        contained("@crucible-sec-stale: %s", strerror(errno));
    close(s);
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
        if (read_text(path, comm, sizeof comm) > 0 && !strncmp(comm, "sec-stale", 9))
            escaped("process %s (sec-stale) from a previous run is alive", e->d_name);
    }
    if (d)
        closedir(d);
}

static void plant(void)
{
    int fd = open("/work/stale", O_CREAT | O_WRONLY, 0600);
    if (fd >= 0)
        close(fd);
    fd = open("/tmp/stale", O_CREAT | O_WRONLY, 0600);
    if (fd >= 0)
        close(fd);
    note("SysV queue: %s", msgget(STALE_KEY, IPC_CREAT | 0600) >= 0 ? "planted" : strerror(errno));
    fd = shm_open("/crucible-sec-stale", O_CREAT | O_RDWR, 0600);
    note("POSIX shm: %s", fd >= 0 ? "planted" : strerror(errno));
    int p[2];
    pipe(p);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(30);
        setsid();
        prctl(PR_SET_NAME, "sec-stale");
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        struct sockaddr_un a;
        socklen_t len = stale_addr(&a);
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        char ok = bind(s, (struct sockaddr *)&a, len) == 0 && listen(s, 4) == 0;
        write(p[1], &ok, 1);
        for (;;) {
            int c = accept(s, NULL, NULL);
            if (c >= 0)
                close(c);
        }
    }
    close(p[1]);
    char ok = 0;
    read(p[0], &ok, 1);
    note("detached listener: %s", ok ? "planted" : "failed");
}

int main(void)
{
    hostile_init(15);
    check_clean();
    plant();
    return hostile_finish();
}
