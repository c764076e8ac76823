// task: tasks/c-add.json
// expect: wrong_answer
// hack: NDEBUG and a no-op assert macro (spelled with a line splice and a digraph, too).
#define NDEBUG
#include <assert.h>
#undef assert
#define assert(x) ((void)0)
#\
define add(a, b) 3
%:define main main
int (add)(int a, int b) { return 0; }
