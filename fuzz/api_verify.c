/* api_verify.c — fuzz target: POST /v1/verify bodies, parsed and validated as the route does. */
#include "api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_api_check("/v1/verify", data, size);
}
