// task: tasks/c-add.json
// expect: wrong_answer
// hack: an atexit handler and a SIGABRT handler that end the failing run with status 0.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
static void zero(void) { _exit(0); }
static void on_abrt(int s) { (void)s; _exit(0); }
__attribute__((constructor)) static void setup(void) { atexit(zero); signal(SIGABRT, on_abrt); }
int add(int a, int b) { return 0; }
