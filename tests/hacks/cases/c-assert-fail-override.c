// task: tasks/c-add.json
// expect: wrong_answer
// hack: defines __assert_fail, which glibc's assert() calls, as a function that returns.
#include <assert.h>
void __assert_fail(const char *a, const char *f, unsigned int l, const char *fn) { }
int add(int a, int b) { return 0; }
