/*
 * 54-init-tamper — catalogue rows 35 and 37: tamper with the sandbox's init (pid 1).
 *
 * expect: runtime_error
 * exit_code: 3
 *
 * pid 1 inside the sandbox is crucible's init, which reports the payload's exit status. The
 * payload tries to change it from outside its own process: lower every resource limit of pid 1
 * to 0 with prlimit(), renice it, make it the OOM victim through /proc/1/oom_score_adj, pin it to
 * one CPU, and send it every catchable signal. Whatever of this succeeds, the record must still
 * be the payload's own result (runtime_error, exit code 3), never sandbox_error: a payload that
 * can turn its failure into an infrastructure error escapes its reward. Changes that work are
 * reported as warnings (the init should not share a uid with the payload), a writable
 * oom_score_adj as an escape.
 */
#include "../hostile.h"
#include <sched.h>
#include <sys/resource.h>

int main(void)
{
    hostile_init(15);
    if (getpid() == 1) {
        note("the payload is pid 1 itself: no separate init to tamper with");
        fflush(stdout);
        _exit(3);
    }
    static const struct {
        int res;
        const char *name;
    } limits[] = {{RLIMIT_CPU, "CPU"},     {RLIMIT_NOFILE, "NOFILE"},
                  {RLIMIT_NPROC, "NPROC"}, {RLIMIT_AS, "AS"},
                  {RLIMIT_DATA, "DATA"},   {RLIMIT_STACK, "STACK"},
                  {RLIMIT_FSIZE, "FSIZE"}, {RLIMIT_SIGPENDING, "SIGPENDING"}};
    int changed = 0;
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        struct rlimit zero = {0, 0};
        if (prlimit(1, limits[i].res, &zero, NULL) == 0) {
            note("prlimit(1, RLIMIT_%s, 0) succeeded", limits[i].name);
            changed++;
        } else {
            contained("prlimit(1, RLIMIT_%s): %s", limits[i].name, strerror(errno));
        }
    }
    if (changed)
        warning("the payload lowered %d resource limits of the sandbox init (pid 1) with prlimit",
                changed);
    if (setpriority(PRIO_PROCESS, 1, 19) == 0)
        warning("the payload reniced the sandbox init (pid 1) to 19");
    else
        contained("setpriority(pid 1): %s", strerror(errno));
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    if (sched_setaffinity(1, sizeof one, &one) == 0)
        note("sched_setaffinity(pid 1) succeeded");
    int fd = open("/proc/1/oom_score_adj", O_WRONLY);
    if (fd >= 0 && write(fd, "1000", 4) == 4)
        escaped("/proc/1/oom_score_adj written: the init can be made the OOM victim");
    else
        contained("/proc/1/oom_score_adj: %s", strerror(errno));
    int sent = 0;
    for (int sig = 1; sig < 65; sig++)
        if (sig != SIGKILL && sig != SIGSTOP && kill(1, sig) == 0)
            sent++;
    note("%d signals delivered to pid 1", sent);
    hostile_finish();
    usleep(200000);
    _exit(3);
}
