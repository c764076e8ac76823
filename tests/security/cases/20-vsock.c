/*
 * 20-vsock — catalogue row 19: talk to the hypervisor host over AF_VSOCK.
 *
 * expect: ok
 *
 * This machine is a VM with virtio-vsock: an AF_VSOCK socket would reach the hypervisor host
 * (CID 2) outside any network namespace. socket(AF_VSOCK) must be refused. The program never
 * connects anywhere: creating the socket is the verdict. Other rarely needed families are listed
 * as notes (their availability is attack surface, not an escape).
 */
#include "../hostile.h"
#include <sys/socket.h>

int main(void)
{
    hostile_init(20);
    PROBE("socket(AF_VSOCK, SOCK_STREAM)", socket(AF_VSOCK, SOCK_STREAM, 0));
    PROBE("socket(AF_VSOCK, SOCK_DGRAM)", socket(AF_VSOCK, SOCK_DGRAM, 0));
    PROBE("socket(AF_VSOCK, SOCK_SEQPACKET)", socket(AF_VSOCK, SOCK_SEQPACKET, 0));
    static const struct {
        int family, type;
        const char *name;
    } others[] = {{AF_ALG, SOCK_SEQPACKET, "AF_ALG"},  {AF_KEY, SOCK_RAW, "AF_KEY"},
                  {AF_TIPC, SOCK_RDM, "AF_TIPC"},      {AF_RDS, SOCK_SEQPACKET, "AF_RDS"},
                  {AF_XDP, SOCK_RAW, "AF_XDP"},        {AF_BLUETOOTH, SOCK_RAW, "AF_BLUETOOTH"},
                  {AF_NETLINK, SOCK_RAW, "AF_NETLINK"}};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        pid_t pid = probe_fork();
        if (pid == 0) {
            int s = socket(others[i].family, others[i].type, 0);
            printf("note: socket(%s) %s%s\n", others[i].name,
                   s >= 0 ? "allowed" : "refused: ", s >= 0 ? "" : strerror(errno));
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        if (WIFSIGNALED(st))
            note("socket(%s): killed by signal %d", others[i].name, WTERMSIG(st));
    }
    return hostile_finish();
}
