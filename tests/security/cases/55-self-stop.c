/*
 * 55-self-stop — catalogue rows 11 and 16: stop itself with SIGSTOP.
 *
 * expect: timeout
 * limit: wall
 * run: --wall-time 1
 * within: 6
 *
 * A stopped process uses no CPU and never exits. The wall-clock limit must still end the run as
 * timeout (wall), and the stopped process must be killed (run.t checks that nothing is left). A
 * child first stops the same way, so a supervisor that waits with WUNTRACED or freezes the
 * cgroup meets stopped tasks of both kinds.
 */
#include "../hostile.h"

int main(void)
{
    hostile_init(30);
    pid_t pid = fork();
    if (pid == 0) {
        raise(SIGSTOP);
        _exit(0);
    }
    usleep(100000);
    puts("stopping myself");
    fflush(stdout);
    raise(SIGSTOP);
    puts("ESCAPED: resumed after SIGSTOP: nothing but the limit should end this run");
    return 0;
}
