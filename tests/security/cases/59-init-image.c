/*
 * 59-init-image — the program the sandbox's pid 1 runs, reached from the payload.
 *
 * expect: ok
 *
 * A fork server job's pid 1 is crucible's small init, exec'd from one memfd that the zygote
 * keeps for every job (src/sandbox/zygote.c, "a job's small init"); a sandbox's pid 1 is
 * crucible's own binary. A payload that could write either would run its code as the next
 * jobs' pid 1, which holds the capabilities a job's set-up needs. Every way to the image from
 * here must be refused: /proc/1/exe opened for writing or reading, or read as a link; pid 1's
 * memory, its descriptors (listed, or guessed by number) and its mapped files.
 */
#include "../hostile.h"

int main(void)
{
    char link[256];

    hostile_init(10);
    if (getpid() == 1) {
        note("the payload is pid 1 itself: no separate init");
        return hostile_finish();
    }
    PROBE("open(/proc/1/exe, O_WRONLY)", open("/proc/1/exe", O_WRONLY));
    PROBE("open(/proc/1/exe, O_RDONLY)", open("/proc/1/exe", O_RDONLY));
    PROBE("readlink(/proc/1/exe)", readlink("/proc/1/exe", link, sizeof link));
    PROBE("open(/proc/1/mem, O_RDWR)", open("/proc/1/mem", O_RDWR));
    PROBE("open(/proc/1/fd, O_DIRECTORY)", open("/proc/1/fd", O_RDONLY | O_DIRECTORY));
    PROBE("open(/proc/1/map_files, O_DIRECTORY)",
          open("/proc/1/map_files", O_RDONLY | O_DIRECTORY));
    PROBE("open(/proc/1/root, O_DIRECTORY)", open("/proc/1/root", O_RDONLY | O_DIRECTORY));
    for (int fd = 0; fd < 32; fd++) { /* guessed, when the directory cannot be listed */
        char path[64], what[96];
        snprintf(path, sizeof path, "/proc/1/fd/%d", fd);
        snprintf(what, sizeof what, "open(%s)", path);
        PROBE(what, open(path, O_RDONLY));
    }
    return hostile_finish();
}
