/*
 * 29-capabilities — catalogue row 26: the privilege posture of the payload.
 *
 * expect: ok
 *
 * /proc/self/status must show uid and gid 1000, every capability set empty (inheritable,
 * permitted, effective, bounding, ambient), NoNewPrivs 1 and Seccomp 2 (filter mode); capget()
 * must agree; setuid(0)/setgid(0)/setgroups must fail; no finite hard rlimit may be raised; the
 * hostname must be "crucible".
 */
#include "../hostile.h"
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>

int main(void)
{
    hostile_init(15);
    static const char *const sets[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"};
    char v[128];
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        if (status_field(sets[i], v, sizeof v) < 0)
            inconclusive("%s missing from /proc/self/status", sets[i]);
        else if (strtoull(v, NULL, 16) != 0)
            escaped("%s is %s, not empty", sets[i], v);
        else
            contained("%s is empty", sets[i]);
    }
    static const char *const expected[][2] = {{"NoNewPrivs", "1"},
                                              {"Seccomp", "2"},
                                              {"Uid", "1000\t1000\t1000\t1000"},
                                              {"Gid", "1000\t1000\t1000\t1000"}};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        if (status_field(expected[i][0], v, sizeof v) < 0)
            inconclusive("%s missing from /proc/self/status", expected[i][0]);
        else if (strcmp(v, expected[i][1]))
            escaped("%s is \"%s\", expected \"%s\"", expected[i][0], v, expected[i][1]);
        else
            contained("%s is %s", expected[i][0], v);
    }
    if (status_field("Groups", v, sizeof v) == 0)
        note("supplementary groups: \"%s\"", v);
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[2] = {{0}};
    if (syscall(SYS_capget, &h, d) == 0) {
        if (d[0].effective | d[0].permitted | d[1].effective | d[1].permitted)
            escaped("capget reports capabilities");
        else
            contained("capget: no capabilities");
    }
    if (prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) == 1)
        escaped("CAP_SYS_ADMIN is in the bounding set");
    char map[256];
    if (read_text("/proc/self/uid_map", map, sizeof map) > 0)
        note("uid_map: %s", map);
    if (read_text("/proc/self/gid_map", map, sizeof map) > 0)
        note("gid_map: %s", map);
    PROBE("setuid(0)", setuid(0));
    PROBE("setgid(0)", setgid(0));
    PROBE("setgroups(0)", setgroups(0, NULL));
    PROBE("setresuid(0, 0, 0)", setresuid(0, 0, 0));
    gid_t g = 0;
    PROBE("setgroups({0})", setgroups(1, &g));
    static const struct {
        int res;
        const char *name;
    } limits[] = {{RLIMIT_CPU, "RLIMIT_CPU"},       {RLIMIT_FSIZE, "RLIMIT_FSIZE"},
                  {RLIMIT_NOFILE, "RLIMIT_NOFILE"}, {RLIMIT_CORE, "RLIMIT_CORE"},
                  {RLIMIT_NPROC, "RLIMIT_NPROC"},   {RLIMIT_STACK, "RLIMIT_STACK"}};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        struct rlimit rl;
        char what[64];
        if (getrlimit(limits[i].res, &rl) < 0 || rl.rlim_max == RLIM_INFINITY)
            continue;
        rl.rlim_max = rl.rlim_max + 1;
        rl.rlim_cur = rl.rlim_max;
        snprintf(what, sizeof what, "raise the hard %s", limits[i].name);
        PROBE(what, setrlimit(limits[i].res, &rl));
    }
    struct utsname u;
    if (uname(&u) == 0 && strcmp(u.nodename, "crucible") == 0)
        contained("hostname is crucible (own UTS namespace)");
    else
        escaped("hostname is \"%s\", not crucible", u.nodename);
    return hostile_finish();
}
