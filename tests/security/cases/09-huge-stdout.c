/*
 * 09-huge-stdout — catalogue row 8: write far more than the output cap to stdout.
 *
 * expect: output_limit
 * run: --output 64 --wall-time 10
 *
 * crucible must keep at most 64 KiB of stdout, flag it truncated and end the run as
 * output_limit without blocking. The program stops by itself after 256 MiB or 8 s.
 */
#include "../hostile.h"

int main(void)
{
    hostile_init(15);
    static char line[1 << 16];
    memset(line, 'x', sizeof line);
    line[sizeof line - 1] = '\n';
    long total = 0;
    double deadline = now_s() + 8;
    while (total < (256L << 20) && now_s() < deadline) {
        ssize_t n = write(1, line, sizeof line);
        if (n < 0)
            break;
        total += n;
    }
    fprintf(stderr, "wrote %ld bytes\n", total);
    return 0;
}
