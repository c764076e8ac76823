/* api_import.c — fuzz target: POST /v1/tasks (import) JSONL bodies: each line through
 * task_from_json and store_import (an in-memory library, rolled back). */
#include "api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_api_check("/v1/tasks", data, size);
}
