/* api_run.c — fuzz target: POST /v1/run bodies, parsed and validated as the route does. */
#include "api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_api_check("/v1/run", data, size);
}
