/*
 * 37-io-uring — catalogue rows 19 and 30: io_uring (operations invisible to seccomp).
 *
 * expect: ok
 *
 * kernel.io_uring_disabled is 0 on this host, so io_uring_setup() succeeds for anybody unless
 * the seccomp policy refuses it. It must fail.
 */
#include "../hostile.h"
#include <linux/io_uring.h>

static long setup(uint32_t flags)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = flags;
    return syscall(SYS_io_uring_setup, 4, &p);
}

int main(void)
{
    hostile_init(15);
    PROBE("io_uring_setup(4)", setup(0));
    PROBE("io_uring_setup(4, IORING_SETUP_SQPOLL)", setup(IORING_SETUP_SQPOLL));
    return hostile_finish();
}
