/* convert_mbpp_sanitized.c — fuzz target: sanitized MBPP (a JSON array, or JSONL) through
 * convert_path. */
#include "convert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_convert_file(CONVERT_MBPP_SANITIZED, "sanitized-mbpp.json", data, size);
    return 0;
}
