/*
 * 31-device-nodes — catalogue row 28: create or open device nodes.
 *
 * expect: ok
 *
 * mknod of character and block devices must fail everywhere; /dev must hold only null, zero,
 * full, random and urandom (plus symlinks and directories such as fd, pts, shm); host devices
 * (/dev/mem, /dev/kmsg, disks, /dev/kvm, /dev/vsock, /dev/fuse, /dev/net/tun) must not open.
 */
#include "../hostile.h"
#include <sys/sysmacros.h>

int main(void)
{
    hostile_init(15);
    PROBE("mknod /tmp/null2 c 1 3", mknod("/tmp/null2", S_IFCHR | 0666, makedev(1, 3)));
    PROBE("mknod /work/mem c 1 1", mknod("/work/mem", S_IFCHR | 0600, makedev(1, 1)));
    PROBE("mknod /tmp/vda b 253 0", mknod("/tmp/vda", S_IFBLK | 0600, makedev(253, 0)));
    PROBE("mknod /tmp/sda b 8 0", mknod("/tmp/sda", S_IFBLK | 0600, makedev(8, 0)));
    PROBE("mknod /dev/kmsg2 c 1 11", mknod("/dev/kmsg2", S_IFCHR | 0600, makedev(1, 11)));

    static const struct {
        const char *name;
        unsigned maj, min;
    } allowed[] = {
        {"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7}, {"random", 1, 8}, {"urandom", 1, 9}};
    DIR *d = opendir("/dev");
    struct dirent *e;
    int bad = 0;
    while (d && (e = readdir(d))) {
        char path[300];
        struct stat st;
        snprintf(path, sizeof path, "/dev/%s", e->d_name);
        if (lstat(path, &st) < 0 || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
            continue;
        int ok = 0;
        for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
            ok |= S_ISCHR(st.st_mode) && major(st.st_rdev) == allowed[i].maj &&
                  minor(st.st_rdev) == allowed[i].min;
        if (!ok) {
            int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
            if (fd >= 0) {
                escaped("unexpected device %s (%c %u:%u) opens", path,
                        S_ISBLK(st.st_mode) ? 'b' : 'c', major(st.st_rdev), minor(st.st_rdev));
                close(fd);
            } else {
                warning("unexpected device %s (%u:%u) is present (open: %s)", path,
                        major(st.st_rdev), minor(st.st_rdev), strerror(errno));
            }
            bad++;
        }
    }
    if (d)
        closedir(d);
    if (!bad)
        contained("/dev holds only the five allowed character devices");
    static const char *const host[] = {
        "/dev/mem",         "/dev/kmem",     "/dev/port",  "/dev/kmsg",         "/dev/vda",
        "/dev/sda",         "/dev/nvme0n1",  "/dev/kvm",   "/dev/vsock",        "/dev/vhost-vsock",
        "/dev/fuse",        "/dev/net/tun",  "/dev/loop0", "/dev/loop-control", "/dev/dri/card0",
        "/dev/userfaultfd", "/dev/cpu/0/msr"};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++) {
        int fd = open(host[i], O_RDONLY | O_NONBLOCK | O_NOCTTY);
        if (fd >= 0) {
            escaped("%s opened", host[i]);
            close(fd);
        } else {
            contained("open %s: %s", host[i], strerror(errno));
        }
    }
    char c;
    int fd = open("/dev/full", O_WRONLY);
    if (fd < 0 || write(fd, "x", 1) != -1 || errno != ENOSPC)
        inconclusive("/dev/full does not behave as /dev/full");
    if (fd >= 0)
        close(fd);
    fd = open("/dev/urandom", O_RDONLY);
    if (fd < 0 || read(fd, &c, 1) != 1)
        inconclusive("/dev/urandom is not readable");
    return hostile_finish();
}
