/*
 * 18-network-none — catalogue row 18: reach the network with the default --network none.
 *
 * expect: ok
 *
 * Tries the host's TCP listener on 127.0.0.1 (port from CRUCIBLE_SEC_PORT; run.t checks that it
 * received no connection), ::1, and raw/packet sockets; for addresses off this machine (the
 * cloud metadata address, a documentation address standing for the internet) it only asks
 * whether a route exists (route_probe sends nothing). Every attempt must fail; a connection
 * that is merely pending after 1 s also counts as an escape.
 */
#include "../hostile.h"
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

static void try_connect(const char *what, int family, const void *addr, socklen_t len)
{
    int s = socket(family, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (s < 0) {
        contained("%s: socket: %s", what, strerror(errno));
        return;
    }
    if (connect(s, addr, len) == 0) {
        escaped("%s: connected", what);
    } else if (errno == EINPROGRESS) {
        struct pollfd p = {.fd = s, .events = POLLOUT};
        int err = 0;
        socklen_t el = sizeof err;
        if (poll(&p, 1, 1000) == 1 && getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el) == 0 &&
            err == 0)
            escaped("%s: connected", what);
        else if (err)
            contained("%s: %s", what, strerror(err));
        else
            escaped("%s: still pending after 1 s (a route exists)", what);
    } else {
        contained("%s: %s", what, strerror(errno));
    }
    close(s);
}

int main(void)
{
    hostile_init(20);
    char ifs[512] = "";
    if (read_text("/proc/net/dev", ifs, sizeof ifs) > 0) {
        char *line = strchr(ifs, '\n');
        line = line ? strchr(line + 1, '\n') : NULL;
        while (line && *++line) {
            char name[32] = "";
            sscanf(line, " %31[^:]", name);
            if (name[0] && strcmp(name, "lo") != 0)
                escaped("network interface %s present", name);
            else if (name[0])
                note("interface lo present");
            line = strchr(line, '\n');
        }
    }
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s >= 0) {
        struct ifreq ifr = {0};
        strcpy(ifr.ifr_name, "lo");
        if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0)
            note("lo is %s", (ifr.ifr_flags & IFF_UP) ? "up" : "down");
        close(s);
    }

    int port = getenv("CRUCIBLE_SEC_PORT") ? atoi(getenv("CRUCIBLE_SEC_PORT")) : 9;
    struct sockaddr_in v4 = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &v4.sin_addr);
    try_connect("TCP 127.0.0.1 (host listener)", AF_INET, &v4, sizeof v4);
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
    inet_pton(AF_INET6, "::1", &v6.sin6_addr);
    try_connect("TCP [::1] (host listener port)", AF_INET6, &v6, sizeof v6);
    route_probe("route to the metadata address", "169.254.169.254");
    route_probe("default route (internet)", "192.0.2.1");
    PROBE("socket(AF_PACKET, SOCK_RAW)", socket(AF_PACKET, SOCK_RAW, htons(0x0003)));
    PROBE("socket(AF_INET, SOCK_RAW, ICMP)", socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
    return hostile_finish();
}
