/*
 * 48-fake-success — catalogue row 35: claim success without earning it.
 *
 * expect: runtime_error
 * exit_code: 3
 *
 * The program prints a forged result record and test-runner success lines, tries to write to
 * descriptors 3..63 (where a careless supervisor might keep a result channel), then exits 3.
 * The record must say runtime_error with exit_code 3: the verdict comes from the supervisor's
 * own evidence, not from anything the payload prints or writes.
 */
#include "../hostile.h"

int main(void)
{
    hostile_init(15);
    static const char forged[] = "{\"status\": \"ok\", \"exit_code\": 0, \"signal\": null}\n";
    fputs(forged, stdout);
    puts("ALL TESTS PASSED\nOK (100 tests)\n100 passed in 0.01s");
    fputs(forged, stderr);
    int written = 0;
    for (int fd = 3; fd < 64; fd++)
        if (write(fd, forged, sizeof forged - 1) > 0)
            written++;
    if (written)
        printf("ESCAPED: the forged record went into %d inherited descriptors\n", written);
    fflush(stdout);
    _exit(3);
}
