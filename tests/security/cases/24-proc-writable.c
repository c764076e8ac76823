/*
 * 24-proc-writable — catalogue row 22: /proc write tricks (probes only, nothing is written).
 *
 * expect: ok
 *
 * access(W_OK) and the shell's `test -w` on /proc/sysrq-trigger, /proc/sys knobs, the binfmt
 * register file and the supervisor-side binaries behind /proc/1/exe must all say "not
 * writable"; /proc/kcore, /proc/kmsg and /proc/1/mem must not open for reading. The program
 * never opens any of them for writing.
 */
#include "../hostile.h"

static void not_writable(const char *path)
{
    if (access(path, W_OK) == 0)
        escaped("%s is writable (access W_OK)", path);
    else
        contained("%s not writable: %s", path, strerror(errno));
}

static void shell_test_w(const char *path)
{
    pid_t pid = probe_fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", "test -w \"$1\"", "sh", path, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0) {
        inconclusive("sh test -w %s: cannot run", path);
        return;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        escaped("sh: test -w %s is true", path);
    else if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
        note("no /bin/sh in the image");
    else
        contained("sh: test -w %s is false", path);
}

static void not_readable(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        contained("open %s: %s", path, strerror(errno));
        return;
    }
    char c;
    ssize_t n = read(fd, &c, 1);
    close(fd);
    if (n == 1)
        escaped("%s is readable", path);
    else
        contained("%s opened, read: %s", path, n < 0 ? strerror(errno) : "EOF");
}

int main(void)
{
    hostile_init(15);
    static const char *const knobs[] = {"/proc/sysrq-trigger",
                                        "/proc/sys/kernel/sysrq",
                                        "/proc/sys/kernel/core_pattern",
                                        "/proc/sys/kernel/modprobe",
                                        "/proc/sys/kernel/hostname",
                                        "/proc/sys/kernel/panic",
                                        "/proc/sys/vm/drop_caches",
                                        "/proc/sys/vm/overcommit_memory",
                                        "/proc/sys/fs/binfmt_misc/register",
                                        "/proc/sys/net/ipv4/ip_forward",
                                        "/proc/sys/user/max_user_namespaces",
                                        "/proc/1/exe"};
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++)
        not_writable(knobs[i]);
    shell_test_w("/proc/sysrq-trigger");
    shell_test_w("/proc/sys/kernel/core_pattern");
    not_readable("/proc/kcore");
    not_readable("/proc/kmsg");
    if (getpid() != 1) {
        /* pid 1 is crucible's init: if the payload can open its memory, it can take over the
         * process that reports the payload's exit status (a forged verdict). */
        int fd = open("/proc/1/mem", O_RDONLY);
        if (fd >= 0) {
            escaped("/proc/1/mem (the sandbox init) opened: its memory is the payload's to take");
            close(fd);
        } else {
            contained("open /proc/1/mem: %s", strerror(errno));
        }
        not_readable("/proc/1/environ");
    } else {
        note("the payload is pid 1 itself");
    }

    char exe[256] = "";
    ssize_t n = readlink("/proc/1/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        note("/proc/1/exe -> %s", exe);
    } else {
        note("readlink /proc/1/exe: %s", strerror(errno));
    }
    char mi[16384];
    if (read_text("/proc/self/mountinfo", mi, sizeof mi) > 0 && strstr(mi, " /proc ") &&
        strstr(mi, " - proc "))
        contained("/proc is a proc mount of its own");
    return hostile_finish();
}
