/*
 * 21-abstract-unix — catalogue row 19: reach host services over UNIX sockets.
 *
 * expect: ok
 *
 * Abstract UNIX socket names are scoped by network namespace, not by the filesystem. run.t
 * listens on the abstract name in CRUCIBLE_SEC_ABSTRACT on the host and checks it received no
 * connection; this program must get ECONNREFUSED. Well-known host socket paths (systemd,
 * D-Bus, docker, containerd, the session's own machinery) must not be reachable either.
 */
#include "../hostile.h"
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

static void try_unix(const char *label, const char *name, int abstract)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    size_t n = strlen(name);
    if (n > sizeof a.sun_path - 2)
        n = sizeof a.sun_path - 2;
    memcpy(a.sun_path + (abstract ? 1 : 0), name, n);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (abstract ? 1 : 0));
    if (!abstract)
        len = sizeof a;
    for (int type = SOCK_STREAM; type <= SOCK_DGRAM; type++) {
        int s = socket(AF_UNIX, type, 0);
        if (s < 0) {
            contained("%s: socket: %s", label, strerror(errno));
            return;
        }
        if (connect(s, (struct sockaddr *)&a, len) == 0) {
            escaped("%s: connected to %s%s (%s)", label, abstract ? "@" : "", name,
                    type == SOCK_STREAM ? "stream" : "dgram");
            close(s);
            return;
        }
        int err = errno;
        close(s);
        if (err != EPROTOTYPE) {
            contained("%s: %s", label, strerror(err));
            return;
        }
    }
    contained("%s: wrong socket type only", label);
}

int main(void)
{
    hostile_init(15);
    const char *name = getenv("CRUCIBLE_SEC_ABSTRACT");
    if (name)
        try_unix("host abstract socket", name, 1);
    else
        inconclusive("no CRUCIBLE_SEC_ABSTRACT given");
    try_unix("abstract @/org/freedesktop/systemd1/notify", "/org/freedesktop/systemd1/notify", 1);
    static const char *const paths[] = {"/run/systemd/private",
                                        "/run/systemd/journal/socket",
                                        "/run/systemd/notify",
                                        "/run/dbus/system_bus_socket",
                                        "/var/run/dbus/system_bus_socket",
                                        "/run/docker.sock",
                                        "/var/run/docker.sock",
                                        "/run/containerd/containerd.sock",
                                        "/dev/log",
                                        "/tmp/.X11-unix/X0"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        try_unix(paths[i], paths[i], 0);
    /* Bind an abstract name of our own: run.t's stale-state and host checks never see it. */
    struct sockaddr_un own = {.sun_family = AF_UNIX};
    memcpy(own.sun_path + 1, "crucible-sec-inside", 19);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s >= 0 &&
        bind(s, (struct sockaddr *)&own, offsetof(struct sockaddr_un, sun_path) + 20) == 0)
        note("bound @crucible-sec-inside inside the sandbox");
    return hostile_finish();
}
