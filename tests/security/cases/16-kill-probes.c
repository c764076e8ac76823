/*
 * 16-kill-probes — catalogue rows 15 and 21: signal or see processes outside the sandbox.
 *
 * expect: ok
 *
 * Sends only SIGCONT (harmless) to -1, to pid 1, to the parent and to the pid of a host watcher
 * process that run.t started (CRUCIBLE_SEC_WATCHER; it runs as the sandbox's host uid when run.t
 * is root, so only the pid namespace keeps the signal away). run.t checks that the watcher
 * received nothing. Inside, the program checks that /proc lists only a handful of sandbox
 * processes and neither the watcher nor the supervisor.
 */
#include "../hostile.h"

int main(void)
{
    hostile_init(15);
    pid_t watcher = 0;
    const char *w = getenv("CRUCIBLE_SEC_WATCHER");
    if (w)
        watcher = (pid_t)atoi(w);

    errno = 0;
    int rc = kill(-1, SIGCONT);
    note("kill(-1, SIGCONT) = %d (%s)", rc, strerror(errno));
    errno = 0;
    rc = kill(1, SIGCONT);
    note("kill(1, SIGCONT) = %d (%s)", rc, strerror(errno));
    pid_t parent = getppid();
    if (parent > 0)
        note("getppid() = %d; kill(parent, SIGCONT) = %d", (int)parent, kill(parent, SIGCONT));
    else
        note("getppid() = 0: the parent is outside this pid namespace (not signalled)");
    if (watcher > 1) {
        errno = 0;
        rc = kill(watcher, SIGCONT);
        note("kill(watcher %d, SIGCONT) = %d (%s)", (int)watcher, rc, strerror(errno));
    } else {
        note("no CRUCIBLE_SEC_WATCHER given");
    }
    contained("SIGCONT probes sent; whether they left the sandbox is judged on the host");

    DIR *d = opendir("/proc");
    if (!d) {
        inconclusive("opendir /proc: %s", strerror(errno));
        return hostile_finish();
    }
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        count++;
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
        read_text(path, comm, sizeof comm);
        comm[strcspn(comm, "\n")] = '\0';
        note("visible pid %s: %s", e->d_name, comm);
        if (strcmp(comm, "sec-watcher") == 0 || strcmp(comm, "prove") == 0 ||
            strcmp(comm, "perl") == 0 || strncmp(comm, "python", 6) == 0)
            escaped("host process visible: pid %s (%s)", e->d_name, comm);
    }
    closedir(d);
    if (count > 10)
        escaped("%d processes visible in /proc: not a fresh pid namespace", count);
    else
        contained("only %d processes visible in /proc", count);
    return hostile_finish();
}
