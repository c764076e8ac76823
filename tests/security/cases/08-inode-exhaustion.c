/*
 * 08-inode-exhaustion — catalogue row 7: create empty files until the inodes run out.
 *
 * expect: ok
 * run: --disk 8
 *
 * Empty files use no blocks, only inodes (kernel memory). The scratch tmpfs must bound them
 * (nr_inodes=, or a quota) so that creation fails with ENOSPC long before the program's cap
 * of 200000 files (about 190 MiB of inode and dentry cache here). Reaching the cap on an 8 MiB
 * scratch means the inode count is unbounded.
 */
#include "../hostile.h"

#define FILE_CAP 200000

int main(void)
{
    hostile_init(30);
    char path[64];
    int made, err = 0;
    double deadline = now_s() + 15;
    for (made = 0; made < FILE_CAP && now_s() < deadline; made++) {
        snprintf(path, sizeof path, "/tmp/i%d", made);
        int fd = open(path, O_CREAT | O_WRONLY | O_EXCL, 0600);
        if (fd < 0) {
            err = errno;
            break;
        }
        close(fd);
    }
    if (made >= FILE_CAP)
        escaped("%d empty files created on an 8 MiB scratch (no inode limit)", made);
    else if (err == ENOSPC || err == EDQUOT)
        contained("file creation stopped after %d files: %s", made, strerror(err));
    else if (err)
        inconclusive("file creation stopped after %d files with %s", made, strerror(err));
    else
        inconclusive("only %d files in 15 s", made);
    return hostile_finish();
}
