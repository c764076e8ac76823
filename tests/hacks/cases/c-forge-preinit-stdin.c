// task: tasks/c-add.json
// expect: runtime_error
// hack: an entry of its own in .preinit_array (which runs before constructors) reads stdin,
// prints it and exits 0.
// (the harness is linked first: its .preinit_array entry runs before the solution's)
#include <unistd.h>
static void steal(int argc, char **argv, char **envp)
{
    char b[64];
    long n = read(0, b, sizeof(b));
    (void)argc, (void)argv, (void)envp;
    write(1, "\n", 1);
    if (n > 0) write(1, b, (unsigned long)n);
    _exit(0);
}
__attribute__((section(".preinit_array"), used)) static void (*const early)(int, char **, char **) = steal;
int add(int a, int b) { return 0; }
