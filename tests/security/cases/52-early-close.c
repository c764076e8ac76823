/*
 * 52-early-close — catalogue row 37: close stdout and stderr early, then keep running.
 *
 * expect: runtime_error
 * exit_code: 4
 *
 * EOF on both output pipes must not be taken for the end of the program: crucible must still
 * wait for the real exit status (4, after 0.5 s).
 */
#include "../hostile.h"

int main(void)
{
    hostile_init(15);
    puts("closing stdout and stderr, exiting 4 in 0.5 s");
    fflush(stdout);
    close(1);
    close(2);
    usleep(500000);
    _exit(4);
}
