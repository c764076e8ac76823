/*
 * 57-init-cmdline — catalogue rows 20, 21: what pid 1 (crucible's init) shows of the host.
 *
 * expect: ok
 *
 * init is cloned from the supervisor (crucible run, or crucible serve with its --token-file
 * and --db paths) and shares its memory image, so /proc/1/cmdline and /proc/1/environ would
 * show the supervisor's command line and environment unless init wipes them. Any host path
 * ('/'), option ("--") or variable ('=') there is an escape; so is the host secret run.t
 * exports to crucible (CRUCIBLE_HOST_SECRET), which run.t also looks for in the output,
 * where this program prints what it read.
 */
#include "../hostile.h"

static void check(const char *path)
{
    char buf[65536], shown[256];
    size_t len = 0, printable = 0;
    int fd = open(path, O_RDONLY);
    ssize_t n;

    if (fd < 0) {
        contained("open %s: %s", path, strerror(errno));
        return;
    }
    while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
        len += (size_t)n;
    close(fd);
    /* NULs separate the words: show them as spaces, then look for anything of the host */
    for (size_t i = 0; i < len; i++) {
        if (buf[i] == '\0')
            buf[i] = ' ';
        else
            printable++;
    }
    buf[len] = '\0';
    snprintf(shown, sizeof(shown), "%s", buf);
    if (strchr(buf, '/') || strstr(buf, "--") || strchr(buf, '='))
        escaped("%s shows the supervisor's: '%s'", path, shown);
    else if (printable)
        note("%s: '%s' (%zu bytes)", path, shown, len);
    else
        contained("%s holds nothing of the host (%zu bytes, all NUL)", path, len);
}

int main(void)
{
    hostile_init(10);
    check("/proc/1/cmdline");
    check("/proc/1/environ");
    return hostile_finish();
}
