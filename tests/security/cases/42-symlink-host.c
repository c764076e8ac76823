/*
 * 42-symlink-host — catalogue row 32: symlinks planted for the supervisor to follow.
 *
 * expect: ok
 *
 * run.t keeps on the host an empty marker directory (CRUCIBLE_SEC_MARKER, mode 0777) and a
 * world-writable sentinel file (CRUCIBLE_SEC_SENTINEL). This program tries to write both
 * through symlinks and /proc/N/root paths, then leaves symlinks in /work and /tmp that point at
 * them, at /etc/passwd and at /etc/shadow: under the names a supervisor might read, chown or
 * clean up (prog, output, result.json, ...), and in place of /work/prog itself. run.t checks
 * afterwards that the marker is still empty and the sentinel and /etc/passwd unchanged.
 */
#include "../hostile.h"

static void try_write(const char *label, const char *path)
{
    int fd = open(path, O_CREAT | O_WRONLY | O_APPEND, 0666);
    if (fd < 0) {
        contained("%s: %s", label, strerror(errno));
        return;
    }
    ssize_t n = write(fd, "crucible-sec was here\n", 22);
    close(fd);
    note("%s: wrote %zd bytes to %s (inside the sandbox: run.t judges the host side)", label, n,
         path);
}

static void plant(const char *target, const char *link)
{
    unlink(link);
    if (symlink(target, link) == 0)
        note("planted %s -> %s", link, target);
    else
        note("symlink %s: %s", link, strerror(errno));
}

int main(void)
{
    hostile_init(15);
    const char *marker = getenv("CRUCIBLE_SEC_MARKER");
    const char *sentinel = getenv("CRUCIBLE_SEC_SENTINEL");
    if (!marker || !sentinel) {
        inconclusive("CRUCIBLE_SEC_MARKER / CRUCIBLE_SEC_SENTINEL not given");
        return hostile_finish();
    }
    struct stat st;
    if (stat(marker, &st) == 0)
        escaped("the host marker directory %s is visible inside the sandbox", marker);
    else
        contained("host marker directory not visible: %s", strerror(errno));
    if (stat(sentinel, &st) == 0)
        escaped("the host sentinel %s is visible inside the sandbox", sentinel);
    else
        contained("host sentinel not visible: %s", strerror(errno));

    char path[4096];
    snprintf(path, sizeof path, "%s/direct", marker);
    try_write("write the marker directly", path);
    plant(marker, "/work/marker-link");
    try_write("write through /work/marker-link", "/work/marker-link/via-symlink");
    plant(sentinel, "/work/sentinel-link");
    try_write("append through /work/sentinel-link", "/work/sentinel-link");
    snprintf(path, sizeof path, "/proc/1/root%s/via-proc1-root", marker);
    try_write("write via /proc/1/root", path);
    snprintf(path, sizeof path, "/proc/self/root/../../..%s/via-dotdot", marker);
    try_write("write via /proc/self/root/../..", path);
    snprintf(path, sizeof path, "/work/../../..%s/via-work-dotdot", marker);
    try_write("write via /work/../..", path);

    /* Leave traps behind for whatever reads, chowns or cleans /work and /tmp afterwards. */
    static const char *const names[] = {"output",      "stdout", "stderr", "result",
                                        "result.json", "meta",   "core",   ".crucible"};
    char link[256], target[4096];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(target, sizeof target, "%s/%s", marker, names[i]);
        snprintf(link, sizeof link, "/work/%s", names[i]);
        plant(target, link);
        snprintf(link, sizeof link, "/tmp/%s", names[i]);
        plant(sentinel, link);
    }
    plant("/etc/passwd", "/work/passwd");
    plant("/etc/shadow", "/work/shadow");
    plant(marker, "/tmp/marker");
    mkdir("/work/locked", 0700);
    plant(marker, "/work/locked/inner");
    chmod("/work/locked", 0);
    plant(sentinel, "/work/prog"); /* replace the supervisor-copied program itself */
    contained("traps planted; the host side is judged by run.t");
    return hostile_finish();
}
