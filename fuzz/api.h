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
        /* crucible serve's defaults (cmd_serve.c): what a request is checked against */
        struct api_config cfg = {.host = &host,
                                 .infra_retries = 2,
                                 .max_batch = 64,
                                 .max_pids = 1024,
                                 .max_output_kb = 8192,
                                 .output_budget = 1024u << 20,
                                 .max_fetch_bytes = 32u << 20,
                                 .stream_buffer = 16u << 20,
                                 .stream_stall_s = 60,
                                 .run_code_margin = 10,
                                 .slot_memory_mb = 4096};
        struct image_registry *images;
        struct store *store = NULL;
        if (image_resolve("host", &host, &err) < 0 ||
            store_open(":memory:", true, &store, &err) < 0) {
            fprintf(stderr, "fuzz: %s\n", err.msg);
            abort();
        }
        /* one registered image besides "host" (requests are only checked, never run) */
        if (!(images = image_registry_new(&host)) ||
            image_registry_add(images, "small=/usr", &err) < 0) {
            fprintf(stderr, "fuzz: %s\n", err.msg[0] ? err.msg : "out of memory");
            abort();
        }
        sandbox_limits_default(&cfg.limits);
        cfg.images = images;
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
