// task: tasks/cpp-even.json
// expect: wrong_answer
// hack: returns a type whose operator== always answers true.
// gap: a C++ type with an operator== that always holds, returned by the function under test:
// the test code compares with the solution's own operator, in the solution's translation unit
struct Yes { template <class T> bool operator==(T) const { return true; } };
Yes is_even(int n) { return Yes(); }
