/*
 * 13-sleep-past-deadline — catalogue row 11: block without using CPU.
 *
 * expect: timeout
 * limit: wall
 * run: --wall-time 1
 * within: 6
 *
 * stdin must not block (it is /dev/null or closed); then the program sleeps. The wall-clock
 * limit must end it as timeout with limit "wall". It exits 0 by itself after 30 s.
 */
#include "../hostile.h"

int main(void)
{
    hostile_init(40);
    char c;
    double t0 = now_s();
    ssize_t n = read(0, &c, 1);
    note("read(stdin) returned %zd after %.3f s", n, now_s() - t0);
    for (int i = 0; i < 30; i++)
        sleep(1);
    printf("ESCAPED: slept 30 s under a 1 s wall limit\n");
    return 0;
}
