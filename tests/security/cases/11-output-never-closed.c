/*
 * 11-output-never-closed — catalogue rows 9 and 14: a daemon keeps stdout open after main exits.
 *
 * expect: ok|timeout
 * run: --wall-time 3
 * within: 10
 *
 * main forks a child that detaches (setsid), ignores SIGHUP/SIGTERM and keeps the inherited
 * stdout and stderr open while main exits 0. crucible must not wait for EOF forever: either it
 * ends the run when main exits (ok) or at the wall deadline (timeout), and the holder must be
 * dead afterwards (run.t looks for a host process named "sec-holder"). The holder gives up
 * after 30 s by itself.
 */
#include "../hostile.h"
#include <sys/prctl.h>

int main(void)
{
    hostile_init(15);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(30);
        setsid();
        signal(SIGHUP, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        prctl(PR_SET_NAME, "sec-holder");
        for (;;)
            pause();
    }
    if (pid < 0) {
        inconclusive("fork: %s", strerror(errno));
        return hostile_finish();
    }
    usleep(100000);
    note("holder pid %d keeps stdout open; main exits 0", (int)pid);
    return hostile_finish();
}
