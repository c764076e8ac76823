/*
 * 39-personality — catalogue row 30: personality flags that weaken the process.
 *
 * expect: ok
 *
 * READ_IMPLIES_EXEC makes every readable mapping executable; it must not take effect (the call
 * fails, or the flag does not stick). ADDR_NO_RANDOMIZE (no ASLR) is reported as a note.
 */
#include "../hostile.h"
#include <sys/personality.h>

static long set_and_check(unsigned long flag)
{
    if (personality(PER_LINUX | flag) < 0)
        return -1;
    int now = personality(0xffffffff);
    if (now >= 0 && (now & flag))
        return now;
    errno = EPERM;
    return -1; /* accepted but did not stick */
}

int main(void)
{
    hostile_init(15);
    PROBE("personality(READ_IMPLIES_EXEC)", set_and_check(READ_IMPLIES_EXEC));
    pid_t pid = probe_fork();
    if (pid == 0)
        _exit(set_and_check(ADDR_NO_RANDOMIZE) < 0 ? 0 : 1);
    int st = 0;
    waitpid(pid, &st, 0);
    note("personality(ADDR_NO_RANDOMIZE) %s",
         WIFEXITED(st) && WEXITSTATUS(st) == 1 ? "took effect" : "refused");
    return hostile_finish();
}
