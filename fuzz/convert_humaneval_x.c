/* convert_humaneval_x.c — fuzz target: HumanEval-X JSONL records through convert_path. The
 * first byte picks the language (the file name convert_path tells it from); the rest is the
 * file. */
#include "convert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const files[] = {"humaneval_cpp.jsonl",    "humaneval_go.jsonl",
                                        "humaneval_java.jsonl",   "humaneval_js.jsonl",
                                        "humaneval_python.jsonl", "humaneval_rust.jsonl"};

    if (size < 1)
        return 0;
    fuzz_convert_file(CONVERT_HUMANEVAL_X, files[data[0] % 6], data + 1, size - 1);
    return 0;
}
