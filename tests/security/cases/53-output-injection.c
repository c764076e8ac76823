/*
 * 53-output-injection — catalogue rows 35 and 37: break the JSON record with the output.
 *
 * expect: runtime_error
 * exit_code: 5
 *
 * stdout and stderr carry text that closes the JSON string and adds a forged "status": "ok",
 * escape sequences, control characters, a NUL byte and invalid UTF-8. The record must stay one
 * valid JSON object (run.t parses it strictly) whose status is the program's real one:
 * runtime_error, exit code 5.
 */
#include "../hostile.h"

int main(void)
{
    hostile_init(15);
    static const char out[] = "x\"}, \"status\": \"ok\", \"exit_code\": 0, \"y\": \"\\u0000\\\"\n"
                              "\x01\x02\x1b[2J\x7f \xff\xfe \xc3\x28 \xe2\x82 \xed\xa0\x80 "
                              "\xf0\x9f\x98\x80 nul:\0:after\n"
                              "}\n{\"status\": \"ok\"}\n";
    write(1, out, sizeof out - 1);
    write(2, out, sizeof out - 1);
    _exit(5);
}
