/*
 * 12-infinite-loop — catalogue row 10: spin on the CPU.
 *
 * expect: timeout
 * limit: cpu
 * run: --cpu-time 1 --wall-time 10
 * within: 8
 *
 * The CPU-time limit must stop it as timeout with limit "cpu". SIGXCPU (the RLIMIT_CPU soft
 * limit's warning) is ignored, so the limit must be enforced for real. The program exits 0 by
 * itself after 6 s of wall time, which would be reported ok if no limit had fired.
 */
#include "../hostile.h"

int main(void)
{
    hostile_init(15);
    signal(SIGXCPU, SIG_IGN);
    burn_until(now_s() + 6);
    printf("ESCAPED: ran 6 s of CPU under a 1 s CPU limit\n");
    return 0;
}
