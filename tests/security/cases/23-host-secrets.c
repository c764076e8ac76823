/*
 * 23-host-secrets — catalogue rows 20, 21 and 38: read host secrets and the answer key.
 *
 * expect: ok
 *
 * /etc/shadow and friends, root's home, host home directories, the answer-key file run.t keeps
 * on the host (CRUCIBLE_SEC_ANSWER) and the host environment (run.t exports
 * CRUCIBLE_HOST_SECRET) must all be out of reach: no CRUCIBLE_HOST_* or login-shell variable may
 * be in the environment (variables crucible adds with fixed values are listed as notes), the
 * documented ones must have their documented values, and no readable /proc/PID/environ may hold
 * the host secret. LD_PRELOAD-style variables are checked by 50-argv-env-injection.
 */
#include "../hostile.h"

extern char **environ;

static void try_read(const char *path)
{
    char buf[64];
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        contained("open %s: %s", path, strerror(errno));
        return;
    }
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    if (n > 0)
        escaped("read %zd bytes of %s", n, path);
    else
        contained("%s opened but empty or unreadable", path);
}

static void try_list(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        contained("opendir %s: %s", path, strerror(errno));
        return;
    }
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    if (n)
        escaped("%s lists %d entries", path, n);
    else
        contained("%s is empty", path);
}

static void scan_environ_files(void)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int read_ok = 0;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300];
        static char buf[65536];
        snprintf(path, sizeof path, "/proc/%s/environ", e->d_name);
        ssize_t n = read_text(path, buf, sizeof buf);
        if (n < 0)
            continue;
        read_ok++;
        for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
            if (strncmp(buf + i, "CRUCIBLE_HOST_SECRET", 20) == 0)
                escaped("%s holds the host secret", path);
    }
    if (d)
        closedir(d);
    contained("no readable /proc/*/environ (%d read) holds CRUCIBLE_HOST_SECRET", read_ok);
}

int main(void)
{
    hostile_init(15);
    static const char *const files[] = {"/etc/shadow",
                                        "/etc/gshadow",
                                        "/etc/shadow-",
                                        "/etc/sudoers",
                                        "/etc/ssh/ssh_host_rsa_key",
                                        "/etc/ssh/ssh_host_ed25519_key",
                                        "/root/.bash_history",
                                        "/root/.ssh/id_rsa",
                                        "/root/.ssh/authorized_keys",
                                        "/var/lib/cloud/instance/user-data.txt",
                                        "/proc/kcore"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        try_read(files[i]);
    try_list("/root");
    try_list("/home");
    const char *answer = getenv("CRUCIBLE_SEC_ANSWER");
    if (answer)
        try_read(answer);
    else
        inconclusive("no CRUCIBLE_SEC_ANSWER given");

    /* Names that only the host side has: run.t exports CRUCIBLE_HOST_* into crucible's own
     * environment, and a login shell or sudo leaves the others. Any of them here is a leak. */
    static const char *const host_only[] = {"CRUCIBLE_HOST_",
                                            "SHLVL=",
                                            "OLDPWD=",
                                            "SSH_AUTH_SOCK=",
                                            "SSH_CONNECTION=",
                                            "SUDO_USER=",
                                            "SUDO_COMMAND=",
                                            "MAIL=",
                                            "XDG_RUNTIME_DIR=",
                                            "DBUS_SESSION_BUS_ADDRESS=",
                                            "_="};
    static const char *const documented[] = {
        "PATH=", "HOME=", "LANG=", "TZ=", "PYTHONHASHSEED=", "CRUCIBLE_SEC_"};
    int leaked = 0;
    for (char **e = environ; *e; e++) {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(*e, "="), *e);
        int host = 0, doc = 0;
        for (size_t i = 0; i < sizeof host_only / sizeof host_only[0]; i++)
            host |= strncmp(*e, host_only[i], strlen(host_only[i])) == 0;
        for (size_t i = 0; i < sizeof documented / sizeof documented[0]; i++)
            doc |= strncmp(*e, documented[i], strlen(documented[i])) == 0;
        if (host) {
            escaped("environment variable %s came in from the host", name);
            leaked++;
        } else if (!doc) {
            note("extra environment variable set by crucible: %s", *e);
        }
    }
    if (!leaked)
        contained("no host-only environment variable in the sandbox");
    static const char *const fixed[][2] = {{"PATH", "/usr/local/bin:/usr/bin:/bin"},
                                           {"HOME", "/tmp"},
                                           {"LANG", "C.UTF-8"},
                                           {"TZ", "UTC"},
                                           {"PYTHONHASHSEED", "0"}};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        const char *v = getenv(fixed[i][0]);
        if (!v || strcmp(v, fixed[i][1]))
            inconclusive("%s is %s, the contract says %s", fixed[i][0], v ? v : "unset",
                         fixed[i][1]);
    }
    scan_environ_files();
    return hostile_finish();
}
