/*
 * 15-double-fork-setsid — catalogue rows 13 and 14: escape accounting by reparenting.
 *
 * expect: ok
 * run: --wall-time 5
 * within: 10
 *
 * main forks; the child calls setsid() and forks again; the grandchild closes its stdio,
 * ignores SIGHUP/SIGTERM/SIGINT, names itself "sec-orphan" and sleeps (30 s at most). main
 * exits 0 at once. Nothing may outlive the run: run.t looks on the host for any process named
 * "sec-orphan" and for any leftover process of the sandbox uid.
 */
#include "../hostile.h"
#include <sys/prctl.h>

int main(void)
{
    hostile_init(15);
    int p[2];
    if (pipe(p) < 0) {
        inconclusive("pipe: %s", strerror(errno));
        return hostile_finish();
    }
    pid_t child = fork();
    if (child == 0) {
        setsid();
        pid_t grandchild = fork();
        if (grandchild == 0) {
            alarm(30);
            signal(SIGHUP, SIG_IGN);
            signal(SIGTERM, SIG_IGN);
            signal(SIGINT, SIG_IGN);
            prctl(PR_SET_NAME, "sec-orphan");
            int fd = open("/dev/null", O_RDWR);
            dup2(fd, 0);
            dup2(fd, 1);
            dup2(fd, 2);
            pid_t me = getpid();
            write(p[1], &me, sizeof me);
            close(p[1]);
            for (;;)
                pause();
        }
        _exit(grandchild > 0 ? 0 : 1);
    }
    close(p[1]);
    pid_t orphan = 0;
    if (read(p[0], &orphan, sizeof orphan) != sizeof orphan) {
        inconclusive("the grandchild did not start");
        return hostile_finish();
    }
    waitpid(child, NULL, 0);
    char path[64], ppid[32] = "?";
    snprintf(path, sizeof path, "/proc/%d/stat", (int)orphan);
    char stat[512];
    if (read_text(path, stat, sizeof stat) > 0) {
        char *r = strrchr(stat, ')');
        int pp = 0;
        if (r && sscanf(r + 2, "%*c %d", &pp) == 1)
            snprintf(ppid, sizeof ppid, "%d", pp);
    }
    note("orphan %d detached (new session), reparented to pid %s; main exits 0", (int)orphan, ppid);
    contained("the orphan's fate is checked on the host by run.t");
    return hostile_finish();
}
