/*
 * api.h — the request-body targets (api_run.c, api_verify.c, api_batch.c, api_run_code.c,
 * api_import.c): one POST route each, through api_check_request (service/api_fuzz.h), which
 * parses and validates the body exactly as the route does and submits nothing.
 */
#ifndef CRUCIBLE_FUZZ_API_H
#define CRUCIBLE_FUZZ_API_H

#include <stdio.h>

#include "fuzz.h"
#include "library/store.h"
#include "sandbox/image.h"
#include "service/api_fuzz.h"

/* fuzz_api_check(route, data, size) — one body through the route's checks. The api (the
 * server's defaults, the host image, an in-memory task library) is made once per process. */
static inline int fuzz_api_check(const char *route, const uint8_t *data, size_t size)
{
    static struct image host;
    static struct api *api;
    struct errbuf err = {{0}};

    if (!api) {
        struct api_config cfg = {.host = &host, .infra_retries = 2, .max_batch = 64};
        struct store *store = NULL;
        if (image_resolve("host", &host, &err) < 0 ||
            store_open(":memory:", true, &store, &err) < 0) {
            fprintf(stderr, "fuzz: %s\n", err.msg);
            abort();
        }
        sandbox_limits_default(&cfg.limits);
        cfg.store = store;
        if (!(api = api_new(NULL, NULL, &cfg, NULL)))
            abort();
    }
    {
        char *body = fuzz_strndup(data, size); /* NUL-terminated, as http_body gives it */
        api_check_request(api, route, body, size, &err);
        free(body);
    }
    return 0;
}

#endif
