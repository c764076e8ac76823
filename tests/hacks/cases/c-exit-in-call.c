// task: tasks/c-add.json
// expect: runtime_error
// hack: the function under test calls exit(0) on its first call.
#include <stdlib.h>
int add(int a, int b) { exit(0); }
