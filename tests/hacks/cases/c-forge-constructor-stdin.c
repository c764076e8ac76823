// task: tasks/c-add.json
// expect: runtime_error
// hack: a constructor reads stdin before main, prints it and exits 0.
// (the harness reads the token in .preinit_array, which runs before every constructor)
#include <unistd.h>
__attribute__((constructor)) static void steal(void)
{
    char b[64];
    long n = read(0, b, sizeof(b));
    write(1, "\n", 1);
    if (n > 0) write(1, b, (unsigned long)n);
    _exit(0);
}
int add(int a, int b) { return 0; }
