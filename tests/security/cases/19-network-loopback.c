/*
 * 19-network-loopback — catalogue row 18 with --network loopback.
 *
 * expect: ok
 * run: --network loopback
 *
 * lo must be up and private to the sandbox: binding the very port on which the host listens
 * (CRUCIBLE_SEC_PORT) must succeed (a shared network namespace would answer EADDRINUSE), a
 * connection to it reaches the sandbox's own listener, and no other interface exists.
 */
#include "../hostile.h"
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

int main(void)
{
    hostile_init(20);
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct ifreq ifr = {0};
    strcpy(ifr.ifr_name, "lo");
    if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0 || !(ifr.ifr_flags & IFF_UP)) {
        inconclusive("lo is not up with --network loopback");
        return hostile_finish();
    }
    close(s);
    char ifs[512] = "";
    if (read_text("/proc/net/dev", ifs, sizeof ifs) > 0) {
        char *line = strchr(ifs, '\n');
        line = line ? strchr(line + 1, '\n') : NULL;
        while (line && *++line) {
            char name[32] = "";
            sscanf(line, " %31[^:]", name);
            if (name[0] && strcmp(name, "lo") != 0)
                escaped("network interface %s present", name);
            line = strchr(line, '\n');
        }
    }

    int port = getenv("CRUCIBLE_SEC_PORT") ? atoi(getenv("CRUCIBLE_SEC_PORT")) : 0;
    if (port <= 0) {
        inconclusive("no CRUCIBLE_SEC_PORT given");
        return hostile_finish();
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (bind(l, (struct sockaddr *)&a, sizeof a) < 0) {
        if (errno == EADDRINUSE)
            escaped("port %d is taken: the loopback is the host's", port);
        else
            inconclusive("bind 127.0.0.1:%d: %s", port, strerror(errno));
        return hostile_finish();
    }
    listen(l, 4);
    contained("bound 127.0.0.1:%d although the host listens there: loopback is private", port);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(c, (struct sockaddr *)&a, sizeof a) == 0 && accept(l, NULL, NULL) >= 0)
        contained("connection to 127.0.0.1:%d reached the sandbox's own listener", port);
    else
        inconclusive("loopback connection to own listener failed: %s", strerror(errno));

    route_probe("route to the metadata address", "169.254.169.254");
    return hostile_finish();
}
