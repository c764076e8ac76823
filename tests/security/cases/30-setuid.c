/*
 * 30-setuid — catalogue row 27: gain privileges through a set-user-ID binary.
 *
 * expect: ok
 * run: --file suidcopy=@SUID_COPY@
 *
 * (a) The image's own set-uid-root programs (su, mount, passwd, ...): run each with
 *     LD_SHOW_AUXV=1. The dynamic loader honours that variable only when the exec did not
 *     change credentials, so an AT_SECURE line with value 0 proves the set-uid bit was ignored,
 *     while silence means the program ran with raised privileges.
 * (b) run.t hands in, with --file, a copy of this program that it made owned by host root and
 *     mode 4755 (@SUID_COPY@). Started as "suidcopy report" it prints its effective uid, which
 *     must stay 1000.
 * (c) A chmod u+s copy made inside /work: its euid stays the payload's own; the nosuid flag of
 *     the scratch mounts is reported as a warning when missing (defence in depth).
 */
#include "../hostile.h"
#include <sys/auxv.h>
#include <sys/statvfs.h>

static int run_capture(char *const argv[], char *const envp[], char *out, size_t size)
{
    int p[2];
    if (pipe(p) < 0)
        return -1;
    pid_t pid = probe_fork();
    if (pid == 0) {
        dup2(p[1], 1);
        dup2(p[1], 2);
        close(p[0]);
        execve(argv[0], argv, envp);
        _exit(127);
    }
    close(p[1]);
    size_t got = 0;
    ssize_t n;
    while (got + 1 < size && (n = read(p[0], out + got, size - 1 - got)) > 0)
        got += (size_t)n;
    out[got] = '\0';
    close(p[0]);
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void image_suid(const char *path, const char *arg)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        note("%s not in the image", path);
        return;
    }
    if (!(st.st_mode & S_ISUID))
        note("%s is not set-uid in the image view (mode %o)", path, st.st_mode & 07777);
    char *argv[] = {(char *)path, (char *)arg, NULL};
    char *envp[] = {"LD_SHOW_AUXV=1", "PATH=/usr/bin:/bin", "LANG=C", NULL};
    static char out[16384];
    int rc = run_capture(argv, envp, out, sizeof out);
    char *sec = strstr(out, "AT_SECURE:");
    if (rc == 127 && !sec) {
        contained("%s: cannot be executed", path);
    } else if (sec) {
        int secure = atoi(sec + strlen("AT_SECURE:"));
        char *euid = strstr(out, "AT_EUID:");
        if (secure)
            escaped("%s ran in secure-exec mode", path);
        else
            contained("%s ran without privilege (AT_SECURE 0, AT_EUID %d)", path,
                      euid ? atoi(euid + 8) : -1);
    } else {
        escaped("%s ran but the loader ignored LD_SHOW_AUXV: it ran set-uid (exit %d)", path, rc);
    }
}

static void report_copy(const char *path, const char *label)
{
    char *argv[] = {(char *)path, "report", NULL};
    char *envp[] = {NULL};
    char out[256];
    int rc = run_capture(argv, envp, out, sizeof out);
    int euid = -1, secure = -1;
    if (rc != 0 || sscanf(out, "euid=%d secure=%d", &euid, &secure) != 2) {
        contained("%s: did not run (exit %d): %s", label, rc, out);
        return;
    }
    if (euid != (int)getuid())
        escaped("%s ran with euid %d (we are %d)", label, euid, (int)getuid());
    else
        contained("%s ran with our own euid %d", label, euid);
}

static void nosuid(const char *dir)
{
    struct statvfs sv;
    if (statvfs(dir, &sv) < 0)
        note("statvfs %s: %s", dir, strerror(errno));
    else if (!(sv.f_flag & ST_NOSUID))
        warning("%s is not mounted nosuid", dir);
    else
        contained("%s is mounted nosuid", dir);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "report") == 0) {
        printf("euid=%d secure=%lu\n", (int)geteuid(), getauxval(AT_SECURE));
        return 0;
    }
    hostile_init(20);
    image_suid("/usr/bin/su", "--version");
    image_suid("/usr/bin/mount", "--version");
    image_suid("/usr/bin/passwd", "--help");
    image_suid("/usr/bin/newgrp", "--help");
    image_suid("/usr/bin/sudo", "--version");

    struct stat st;
    if (stat("/work/suidcopy", &st) == 0) {
        note("/work/suidcopy: mode %o, uid %d", st.st_mode & 07777, (int)st.st_uid);
        report_copy("/work/suidcopy", "root-owned set-uid copy from --file");
    } else {
        inconclusive("/work/suidcopy missing: %s", strerror(errno));
    }

    int in = open("/proc/self/exe", O_RDONLY);
    int out = open("/tmp/suidself", O_CREAT | O_WRONLY | O_TRUNC, 0755);
    char buf[65536];
    ssize_t n;
    while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        write(out, buf, (size_t)n);
    if (out >= 0)
        close(out);
    if (chmod("/tmp/suidself", 04755) == 0)
        note("chmod u+s on /tmp/suidself accepted");
    else
        note("chmod u+s on /tmp/suidself: %s", strerror(errno));
    report_copy("/tmp/suidself", "own set-uid copy in /tmp");
    nosuid("/work");
    nosuid("/tmp");
    nosuid("/usr");
    return hostile_finish();
}
