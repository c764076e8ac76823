/*
 * 10-stderr-flood — catalogue rows 8 and 37: a flood of one-byte writes to stderr.
 *
 * expect: output_limit
 * run: --output 64 --wall-time 10
 *
 * Millions of tiny writes must neither stall the supervisor nor grow its buffer: stderr is
 * capped at 64 KiB, flagged truncated, and the run ends as output_limit. The program stops by
 * itself after 8 s.
 */
#include "../hostile.h"

int main(void)
{
    hostile_init(15);
    long total = 0;
    double deadline = now_s() + 8;
    while (now_s() < deadline) {
        for (int i = 0; i < 4096; i++) {
            if (write(2, "e", 1) == 1)
                total++;
        }
    }
    printf("wrote %ld one-byte records\n", total);
    return 0;
}
