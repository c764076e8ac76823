/*
 * 50-argv-env-injection — catalogue row 38: smuggle options and environment.
 *
 * expect: ok
 * args: --pids 1 --memory 1 -- --json '$(touch /tmp/pwned)' ';id' "a b"
 *
 * The words after "./prog" look like crucible options and shell syntax; they must reach the
 * program verbatim (crucible parses nothing after "--" and runs no shell), the limits must not
 * change (fork still works, so --pids 1 was not applied), and host variables that run.t sets
 * (LD_PRELOAD-like: LD_LIBRARY_PATH, PYTHONPATH, BASH_ENV, ENV, CRUCIBLE_HOST_SECRET) must
 * not be in the environment.
 */
#include "../hostile.h"

int main(int argc, char **argv)
{
    hostile_init(15);
    static const char *const want[] = {
        "--pids", "1", "--memory", "1", "--", "--json", "$(touch /tmp/pwned)", ";id", "a b"};
    int n = (int)(sizeof want / sizeof want[0]);
    if (argc - 1 != n) {
        escaped("got %d arguments, expected %d", argc - 1, n);
    } else {
        int same = 1;
        for (int i = 0; i < n; i++)
            if (strcmp(argv[i + 1], want[i])) {
                escaped("argument %d is \"%s\", expected \"%s\"", i + 1, argv[i + 1], want[i]);
                same = 0;
            }
        if (same)
            contained("all %d arguments arrived verbatim", n);
    }
    struct stat st;
    if (stat("/tmp/pwned", &st) == 0)
        escaped("a shell ran the $(...) argument");
    static const char *const bad[] = {
        "LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONPATH",   "BASH_ENV",
        "ENV",        "PERL5LIB",        "NODE_OPTIONS", "CRUCIBLE_HOST_SECRET"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (getenv(bad[i]))
            escaped("%s is set in the sandbox", bad[i]);
        else
            contained("%s is not set", bad[i]);
    }
    pid_t a = fork(), b = a == 0 ? -1 : fork();
    if (a == 0 || b == 0)
        _exit(0);
    if (a < 0 || b < 0)
        escaped("fork fails: --pids 1 after -- was applied");
    else
        contained("fork works: the option-like words were not applied");
    while (wait(NULL) > 0)
        ;
    return hostile_finish();
}
