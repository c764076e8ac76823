/* convert_mbpp.c — fuzz target: MBPP JSONL records through convert_path (the first byte's
 * low bit turns the challenge tests on), and the whole input through convert_entry_point. */
#include "convert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *devnull;
    struct convert_opts o = {.format = CONVERT_MBPP};
    struct convert_stats st;
    struct errbuf err = {{0}};
    char path[512], name[64], *text;

    if (size < 1)
        return 0;
    o.challenge = data[0] & 1;
    text = fuzz_strndup(data + 1, size - 1);
    convert_entry_point(text, name, sizeof(name));
    free(text);
    snprintf(path, sizeof(path), "%s/mbpp.jsonl", fuzz_scratch_dir());
    fuzz_write(path, data + 1, size - 1);
    if (!devnull && !(devnull = fopen("/dev/null", "w")))
        abort();
    convert_path(&o, path, fuzz_emit, NULL, devnull, &st, &err);
    return 0;
}
