/* kattis_yaml.c — fuzz target: a problem.yaml or testdata.yaml through yaml_doc_parse, with
 * the lookups the Kattis converter makes; and the same text as a .timelimit file and as a
 * validator flag string (the other small texts a package gives). */
#include "fuzz.h"
#include "library/kattis.h"
#include "library/yaml_doc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const paths[] = {"",
                                        "name",
                                        "type",
                                        "limits.time_limit",
                                        "limits.time_multipliers.ac_to_time_limit",
                                        "limits.memory",
                                        "validation",
                                        "validator_flags",
                                        "grading.on_reject",
                                        "range",
                                        "grader_flags",
                                        "output_validator_flags",
                                        "a.b.c.d.e"};
    struct yaml_doc d = {0};
    struct errbuf err = {{0}};
    char *text = fuzz_strndup(data, size), *joined;
    double secs;

    if (yaml_doc_parse(&d, text, size, &err) == 0)
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
            yaml_doc_get(&d, paths[i]);
            yaml_doc_line(&d, paths[i]);
        }
    yaml_doc_release(&d);
    yaml_doc_release(&d); /* the header allows it */
    kattis_timelimit_parse(text, &secs);
    kattis_flags_check(text, &err);
    joined = kattis_flags_join(text, "case_sensitive");
    free(joined);
    free(text);
    return 0;
}
