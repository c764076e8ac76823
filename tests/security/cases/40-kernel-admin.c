/*
 * 40-kernel-admin — catalogue row 30: module loading, kexec, reboot, raw I/O, kernel log.
 *
 * expect: ok
 *
 * Every call is made with arguments that are harmless even if it were allowed (a bad reboot
 * magic, an empty module, a missing swap file): without privileges each must fail, and
 * EPERM rather than EINVAL shows that no capability is held. syslog(READ_ALL) must not hand
 * out the host's kernel log, sethostname must not work even in the sandbox's own UTS
 * namespace.
 */
#include "../hostile.h"
#include <sys/io.h>
#include <sys/klog.h>
#include <linux/reboot.h>

static long reboot_bad_magic(void)
{
    /* The kernel checks CAP_SYS_BOOT before the magic numbers: EINVAL means we hold it. */
    long rc = syscall(SYS_reboot, 0xdead, 0xbeef, LINUX_REBOOT_CMD_CAD_OFF, NULL);
    if (rc < 0 && errno == EINVAL)
        return 0;
    return rc;
}

static long read_klog(void)
{
    static char buf[4096];
    return klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof buf);
}

int main(void)
{
    hostile_init(15);
    PROBE("init_module(empty)", syscall(SYS_init_module, "", 0, ""));
    PROBE("finit_module(/dev/null)", syscall(SYS_finit_module, open("/dev/null", O_RDONLY), "", 0));
    PROBE("delete_module(crucible_none)", syscall(SYS_delete_module, "crucible_none", O_NONBLOCK));
    PROBE("kexec_load(0 segments)", syscall(SYS_kexec_load, 0, 0, NULL, 0));
    PROBE("kexec_file_load(/dev/null)",
          syscall(SYS_kexec_file_load, open("/dev/null", O_RDONLY), -1, 1, "", 0x4 /* noinitrd */));
    PROBE("reboot(bad magic)", reboot_bad_magic());
    PROBE("acct(NULL)", acct(NULL));
    PROBE("swapoff(/nonexistent)", syscall(SYS_swapoff, "/nonexistent-crucible"));
    PROBE("iopl(3)", iopl(3));
    PROBE("ioperm(0x80)", ioperm(0x80, 1, 1));
    PROBE("syslog(READ_ALL)", read_klog());
    PROBE("sethostname(crucible-x)", sethostname("crucible-x", 10));
    PROBE("setdomainname(x)", setdomainname("x", 1));
    PROBE("vhangup()", vhangup());
    return hostile_finish();
}
