// task: tasks/c-add.json
// expect: runtime_error
// hack: _exit(0) and quick_exit(0), which skip every handler.
#include <stdlib.h>
#include <unistd.h>
int add(int a, int b) { if (a == 1) quick_exit(0); _exit(0); }
