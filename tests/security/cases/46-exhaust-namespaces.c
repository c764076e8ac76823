/*
 * 46-exhaust-namespaces — catalogue row 42: exhaust namespaces and per-user kernel objects.
 *
 * expect: ok
 *
 * 300 rounds of unshare() over every namespace kind must all fail (no namespace is ever
 * created, so host limits like max_user_namespaces cannot be drained). Per-user objects that
 * other sandboxes share with this one (inotify instances: 128 per host uid here) are counted
 * and reported; the cross-sandbox effect is measured by run.t's neighbour test.
 */
#include "../hostile.h"
#include <sched.h>
#include <sys/inotify.h>

static long unshare_rounds(void)
{
    static const int flags[] = {CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWNET,    CLONE_NEWPID,
                                CLONE_NEWIPC,  CLONE_NEWUTS, CLONE_NEWCGROUP, CLONE_NEWTIME};
    int ok = 0;
    for (int round = 0; round < 300; round++)
        for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
            ok += unshare(flags[i]) == 0;
    if (ok) {
        printf("note: %d unshare() calls succeeded\n", ok);
        return ok;
    }
    return -1;
}

int main(int argc, char **argv)
{
    hostile_init(20);
    if (argc > 1 && strcmp(argv[1], "inotify-hold") == 0) {
        /* Neighbour test: hold as many inotify instances as possible for 4 s. */
        int n = 0;
        while (n < 10000 && inotify_init1(IN_CLOEXEC) >= 0)
            n++;
        printf("holding %d inotify instances (%s)\n", n, strerror(errno));
        fflush(stdout);
        sleep(4);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "inotify-one") == 0) {
        int fd = inotify_init1(IN_CLOEXEC);
        printf("inotify_init1: %s\n", fd >= 0 ? "ok" : strerror(errno));
        return fd >= 0 ? 0 : 1;
    }
    errno = 0;
    PROBE("300 rounds of unshare(every namespace)", unshare_rounds());
    int n = 0;
    while (n < 10000 && inotify_init1(IN_CLOEXEC) >= 0)
        n++;
    note("inotify instances available to one sandbox: %d (then %s)", n, strerror(errno));
    contained("no namespace could be created");
    return hostile_finish();
}
