/* junit.c — fuzz target: a JUnit XML report (it comes out of the sandbox) through
 * junit_parse, and every case looked up again by its id, its bare name and as a pytest node
 * id. */
#include <stdio.h>

#include "fuzz.h"
#include "judge/junit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct junit_report rep;
    struct errbuf err = {{0}};

    memset(&rep, 0, sizeof(rep));
    if (junit_parse((const char *)data, size, &rep, &err) == 0) {
        for (size_t i = 0; i < rep.n; i++) {
            char node[512];
            junit_find(&rep, rep.cases[i].id);
            junit_find(&rep, rep.cases[i].name);
            snprintf(node, sizeof(node), "tests/%s.py::%s", rep.cases[i].classname,
                     rep.cases[i].name);
            junit_find(&rep, node);
            junit_case_counts(&rep, i);
        }
        junit_find(&rep, "");
        junit_find(&rep, "a::b[1]");
    }
    junit_release(&rep);
    return 0;
}
