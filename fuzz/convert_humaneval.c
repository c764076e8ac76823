/* convert_humaneval.c — fuzz target: HumanEval (OpenAI) JSONL records through convert_path. */
#include "convert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_convert_file(CONVERT_HUMANEVAL, "HumanEval.jsonl", data, size);
    return 0;
}
