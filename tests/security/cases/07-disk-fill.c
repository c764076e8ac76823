/*
 * 07-disk-fill — catalogue row 6: fill the disk.
 *
 * expect: ok
 * run: --disk 16 --memory 256
 *
 * Writing to /tmp and /work must stop with ENOSPC at the 16 MiB scratch size (well before the
 * program's own cap of 256 MiB); writes to the image (/, /usr, /etc, /bin) must fail with
 * EROFS or EACCES. If /tmp and /work together hold more than the cap, that is reported as a
 * warning (tmpfs pages are still charged to the memory cgroup). The fill files are removed at
 * the end.
 */
#include "../hostile.h"

#define CAP_MB 256

static long fill(const char *path)
{
    static char chunk[1 << 20];
    memset(chunk, 'd', sizeof chunk);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd < 0) {
        contained("open %s: %s", path, strerror(errno));
        return 0;
    }
    long total = 0;
    int err = 0;
    while (total < (long)CAP_MB << 20) {
        ssize_t n = write(fd, chunk, sizeof chunk);
        if (n < 0) {
            err = errno;
            break;
        }
        total += n;
    }
    close(fd);
    if (total >= (long)CAP_MB << 20)
        escaped("%ld MiB written to %s with a 16 MiB scratch", total >> 20, path);
    else if (err == ENOSPC || err == EDQUOT || err == EFBIG)
        contained("%s stopped at %ld KiB: %s", path, total >> 10, strerror(err));
    else
        inconclusive("%s stopped at %ld KiB with %s", path, total >> 10, strerror(err));
    return total;
}

int main(void)
{
    hostile_init(20);
    long total = fill("/tmp/fill") + fill("/work/fill"); /* both kept until both are full */
    if (total > (17L << 20))
        warning("/tmp and /work hold %ld KiB together with --disk 16: the cap is per mount, "
                "not per sandbox",
                total >> 10);
    unlink("/tmp/fill");
    unlink("/work/fill");
    static const char *const image[] = {"/fill",     "/usr/fill",     "/etc/fill",
                                        "/bin/fill", "/usr/lib/fill", "/proc/fill"};
    for (size_t i = 0; i < sizeof image / sizeof image[0]; i++) {
        int fd = open(image[i], O_CREAT | O_WRONLY | O_EXCL, 0600);
        if (fd >= 0) {
            escaped("created %s in the read-only image", image[i]);
            close(fd);
            unlink(image[i]);
        } else {
            contained("create %s: %s", image[i], strerror(errno));
        }
    }
    return hostile_finish();
}
