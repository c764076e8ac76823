/*
 * 38-open-by-handle — catalogue row 30: open_by_handle_at ("shocker").
 *
 * expect: ok
 *
 * A file handle names an inode on the whole filesystem, bypassing the mount tree: with
 * CAP_DAC_READ_SEARCH the payload could open host files under a bind mount. Both a genuine
 * handle (for /usr, from name_to_handle_at) and a forged one (inode 2, the root of the
 * filesystem behind /usr) must be refused.
 */
#include "../hostile.h"

struct handle {
    struct file_handle fh;
    unsigned char bytes[128];
};

static long open_real(void)
{
    struct handle h;
    int mount_id;
    h.fh.handle_bytes = sizeof h.bytes;
    if (name_to_handle_at(AT_FDCWD, "/usr", &h.fh, &mount_id, 0) < 0) {
        printf("note: name_to_handle_at /usr: %s\n", strerror(errno));
        return -1;
    }
    int mfd = open("/usr", O_RDONLY | O_DIRECTORY);
    return open_by_handle_at(mfd, &h.fh, O_RDONLY);
}

static long open_forged(void)
{
    struct handle h;
    memset(&h, 0, sizeof h);
    h.fh.handle_type = 1; /* FILEID_INO32_GEN */
    h.fh.handle_bytes = 8;
    uint32_t ino_gen[2] = {2, 0};
    memcpy(h.fh.f_handle, ino_gen, sizeof ino_gen);
    int mfd = open("/usr", O_RDONLY | O_DIRECTORY);
    return open_by_handle_at(mfd, &h.fh, O_RDONLY);
}

int main(void)
{
    hostile_init(15);
    PROBE("open_by_handle_at(handle of /usr)", open_real());
    PROBE("open_by_handle_at(forged inode 2)", open_forged());
    return hostile_finish();
}
