// task: tasks/cpp-even.json
// expect: runtime_error
// hack: a C++ static initialiser calls exit(0) before main.
#include <cstdlib>
struct Leave { Leave() { std::exit(0); } } leave;
bool is_even(int n) { return false; }
