// task: tasks/c-add.json
// expect: accepted
// hack: none: a correct solution with macros of its own and its own use of assert; they are
// #undef'd before the test code, which must still pass.
#include <assert.h>
#define ADD(a, b) ((a) + (b))
#define TRUE 1
int add(int a, int b)
{
    assert(TRUE);
    return ADD(a, b);
}
