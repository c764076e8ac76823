// task: tasks/cpp-even.json
// expect: wrong_answer
// hack: macros that make every assertion of the test code true: the function under test and
// false both become true.
bool is_even(int n) { return false; }
#define is_even(n) true
#define false true
