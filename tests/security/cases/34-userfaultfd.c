/*
 * 34-userfaultfd — catalogue row 30: userfaultfd, a staple of kernel exploit races.
 *
 * expect: ok
 *
 * userfaultfd() must fail with and without UFFD_USER_MODE_ONLY (the kernel allows the latter
 * to unprivileged users, so only the seccomp policy can refuse it), and /dev/userfaultfd must
 * not exist.
 */
#include "../hostile.h"
#include <linux/userfaultfd.h>

int main(void)
{
    hostile_init(15);
    PROBE("userfaultfd(O_CLOEXEC)", syscall(SYS_userfaultfd, O_CLOEXEC));
    PROBE("userfaultfd(UFFD_USER_MODE_ONLY)",
          syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY));
    PROBE("open /dev/userfaultfd", open("/dev/userfaultfd", O_RDWR));
    return hostile_finish();
}
