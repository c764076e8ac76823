/*
 * 43-hardlink — catalogue row 33: hard links to files outside the scratch.
 *
 * expect: ok
 *
 * A hard link to an image file (/etc/passwd, the set-uid /usr/bin/su) or to an O_PATH fd of
 * one must fail: the scratch is its own filesystem (EXDEV), and linkat(AT_EMPTY_PATH) needs
 * CAP_DAC_READ_SEARCH. A link that works would let a cleanup or chown of the scratch hit an
 * image file.
 */
#include "../hostile.h"

int main(void)
{
    hostile_init(15);
    static const char *const srcs[] = {"/etc/passwd", "/usr/bin/su", "/etc/hostname",
                                       "/usr/bin/env"};
    char dst[128], what[256];
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        snprintf(dst, sizeof dst, "/work/hl%zu", i);
        snprintf(what, sizeof what, "link(%s, %s)", srcs[i], dst);
        if (access(srcs[i], F_OK) < 0) {
            note("%s not in the image", srcs[i]);
            continue;
        }
        PROBE(what, link(srcs[i], dst));
        snprintf(dst, sizeof dst, "/tmp/hl%zu", i);
        snprintf(what, sizeof what, "link(%s, %s)", srcs[i], dst);
        PROBE(what, link(srcs[i], dst));
    }
    int fd = open("/etc/passwd", O_PATH);
    if (fd >= 0) {
        PROBE("linkat(O_PATH fd of /etc/passwd, AT_EMPTY_PATH)",
              linkat(fd, "", AT_FDCWD, "/work/hl-empty", AT_EMPTY_PATH));
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        PROBE("linkat(/proc/self/fd/N, AT_SYMLINK_FOLLOW)",
              linkat(AT_FDCWD, proc, AT_FDCWD, "/work/hl-proc", AT_SYMLINK_FOLLOW));
    }
    const char *sentinel = getenv("CRUCIBLE_SEC_SENTINEL");
    if (sentinel)
        PROBE("link(host sentinel)", link(sentinel, "/work/hl-sentinel"));
    return hostile_finish();
}
