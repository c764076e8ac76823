/* api_run_code.c — fuzz target: POST /run_code bodies, parsed and validated as the route does. */
#include "api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_api_check("/run_code", data, size);
}
