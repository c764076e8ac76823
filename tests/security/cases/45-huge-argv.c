/*
 * 45-huge-argv — catalogue row 40: giant argv, environment and directory trees.
 *
 * expect: ok
 *
 * execve with an 8 MiB argv and with one 256 KiB argument must fail with E2BIG (ARG_MAX and
 * MAX_ARG_STRLEN), while a 1 MiB argv still works. The program also leaves a directory tree
 * 3000 levels deep in /work and in /tmp for the teardown to cope with.
 */
#include "../hostile.h"

static long exec_args(size_t count, size_t each)
{
    char **argv = calloc(count + 3, sizeof *argv);
    char *arg = malloc(each + 1);
    if (!argv || !arg)
        return -1;
    memset(arg, 'A', each);
    arg[each] = '\0';
    argv[0] = "/work/prog";
    argv[1] = "child";
    for (size_t i = 0; i < count; i++)
        argv[i + 2] = arg;
    char *envp[] = {NULL};
    execve("/proc/self/exe", argv, envp);
    return -1;
}

static void deep_tree(const char *base, int depth)
{
    int fd = open(base, O_RDONLY | O_DIRECTORY);
    int made = 0;
    for (; made < depth && fd >= 0; made++) {
        if (mkdirat(fd, "d", 0700) < 0)
            break;
        int next = openat(fd, "d", O_RDONLY | O_DIRECTORY);
        close(fd);
        fd = next;
    }
    if (fd >= 0)
        close(fd);
    note("%s: directory tree %d levels deep", base, made);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        size_t total = 0;
        for (int i = 0; i < argc; i++)
            total += strlen(argv[i]) + 1;
        printf("child: %d args, %zu bytes\n", argc, total);
        if (total > (2u << 20)) {
            printf("ESCAPED: execve accepted %zu bytes of arguments\n", total);
            return 1;
        }
        for (int i = 0; i < argc; i++)
            if (strlen(argv[i]) > 128 * 1024) {
                printf("ESCAPED: execve accepted a %zu-byte argument\n", strlen(argv[i]));
                return 1;
            }
        return 0;
    }
    hostile_init(20);
    PROBE("execve with 8 MiB of argv", exec_args(2048, 4096));
    PROBE("execve with one 256 KiB argument", exec_args(1, 256 * 1024));
    pid_t pid = probe_fork();
    if (pid == 0) {
        exec_args(256, 4096);
        _exit(3);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        note("execve with 1 MiB of argv works");
    else
        note("execve with 1 MiB of argv failed (status %#x)", st);
    deep_tree("/work", 3000);
    deep_tree("/tmp", 3000);
    contained("argument sizes are bounded by the kernel");
    return hostile_finish();
}
