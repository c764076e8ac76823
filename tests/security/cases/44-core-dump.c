/*
 * 44-core-dump — catalogue row 39: crash and dump core.
 *
 * expect: signaled
 * signal: 6
 *
 * RLIMIT_CORE must be 0 (soft and hard, so it cannot be raised); a child that aborts must not
 * dump core; then the program itself aborts, which crucible reports as signaled with signal 6.
 * run.t checks that no core file appeared on the host.
 */
#include "../hostile.h"
#include <sys/prctl.h>
#include <sys/resource.h>

int main(void)
{
    hostile_init(15);
    struct rlimit rl;
    getrlimit(RLIMIT_CORE, &rl);
    note("RLIMIT_CORE soft %lld hard %lld, dumpable %d", (long long)rl.rlim_cur,
         (long long)rl.rlim_max, prctl(PR_GET_DUMPABLE));
    if (rl.rlim_cur != 0)
        escaped("RLIMIT_CORE soft limit is %lld, not 0", (long long)rl.rlim_cur);
    else
        contained("RLIMIT_CORE soft limit is 0");
    struct rlimit raise = {RLIM_INFINITY, RLIM_INFINITY};
    if (setrlimit(RLIMIT_CORE, &raise) == 0)
        escaped("RLIMIT_CORE could be raised to unlimited");
    else
        contained("raising RLIMIT_CORE: %s", strerror(errno));
    pid_t pid = probe_fork();
    if (pid == 0) {
        chdir("/tmp");
        abort();
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st) && WCOREDUMP(st))
        escaped("the aborting child dumped core");
    else
        contained("the aborting child dumped no core");
    struct stat s;
    if (stat("/tmp/core", &s) == 0 || stat("/work/core", &s) == 0)
        escaped("a core file was written");
    fflush(stdout);
    hostile_finish();
    abort();
}
