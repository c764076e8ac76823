/* extract.c — fuzz target: a model response through extract_code. The first byte picks the
 * language preference (none, an alias, or a name of no language). */
#include "fuzz.h"
#include "judge/extract.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const langs[] = {NULL,   "python", "cpp",     "c", "java",   "js",  "go",
                                        "rust", "sh",     "Python3", "",  "kotlin", "c++", "py"};
    char how[128], *resp, *code;

    if (size < 1)
        return 0;
    resp = fuzz_strndup(data + 1, size - 1);
    code = extract_code(resp, langs[data[0] % (sizeof(langs) / sizeof(langs[0]))], how,
                        data[0] & 0x80 ? sizeof(how) : 8);
    if (!code)
        abort(); /* only ENOMEM may give NULL */
    free(code);
    free(resp);
    return 0;
}
