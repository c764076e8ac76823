/*
 * api_sessions.c — fuzz target: the sessions' routes (docs/API.md, "Sessions"), checked as
 * the routes check them (api_sessions_check_body, api_sessions_check_files) without making a
 * sandbox. The input's first byte picks the request, the rest is its body:
 *
 *   0 POST /v1/sessions            2 POST .../verify        4 PUT .../files (query)
 *   1 POST .../exec                3 POST .../fork          5 GET .../files (query)
 *
 * A files request's query is the rest cut at NUL bytes: path, mode, format, list (a part
 * missing or empty is absent, but an empty path is given empty; a \x01 byte in the path
 * stands for a NUL in it, as a decoded %00 gives).
 */
#include <stdio.h>

#include "fuzz.h"
#include "library/store.h"
#include "metrics.h"
#include "sandbox/image.h"
#include "service/api_fuzz.h"
#include "service/api_sessions.h"

static struct api_sessions *sessions(void)
{
    static struct image host;
    static struct api_sessions *as;
    struct errbuf err = {{0}};

    if (!as) {
        /* crucible serve's defaults (cmd_serve.c) */
        struct api_sessions_config cfg = {.host = &host,
                                          .max_pids = 1024,
                                          .max_output_kb = 8192,
                                          .max_sessions = 64,
                                          .ttl_s = 3600,
                                          .idle_ttl_s = 600,
                                          .max_file_bytes = 64u << 20};
        struct image_registry *images;
        struct store *store = NULL;
        struct metrics *m = metrics_new();

        if (!m || image_resolve("host", &host, &err) < 0 ||
            store_open(":memory:", true, &store, &err) < 0) {
            fprintf(stderr, "fuzz: %s\n", err.msg[0] ? err.msg : "out of memory");
            abort();
        }
        if (!(images = image_registry_new(&host)) ||
            image_registry_add(images, "small=/usr", &err) < 0) {
            fprintf(stderr, "fuzz: %s\n", err.msg[0] ? err.msg : "out of memory");
            abort();
        }
        sandbox_limits_default(&cfg.defaults);
        cfg.images = images;
        cfg.store = store;
        if (!(as = api_sessions_new(&cfg, NULL, NULL, m)))
            abort();
    }
    return as;
}

/* next_part(&p, &left, &len) — the part of p up to its next NUL (NULL when none is left). */
static const char *next_part(const char **p, size_t *left, size_t *len)
{
    const char *start = *p, *z;

    if (!start)
        return NULL;
    z = memchr(start, 0, *left);
    *len = z ? (size_t)(z - start) : *left;
    if (z) {
        *p = z + 1;
        *left -= *len + 1;
    } else {
        *p = NULL;
        *left = 0;
    }
    return start;
}

static int check_files(struct api_sessions *as, bool put, const uint8_t *data, size_t size)
{
    char *copy = fuzz_strndup(data, size), *parts[4] = {NULL, NULL, NULL, NULL};
    const char *p = copy;
    size_t left = size, len = 0, path_len = 0;
    struct errbuf err = {{0}};

    for (int i = 0; i < 4; i++) {
        const char *part = next_part(&p, &left, &len);
        if (!part)
            break;
        if (i > 0 && !len)
            continue;
        parts[i] = fuzz_strndup((const uint8_t *)part, len);
        if (i == 0) {
            path_len = len;
            for (size_t k = 0; k < len; k++) /* \x01 stands for a decoded %00 */
                if (parts[0][k] == '\x01')
                    parts[0][k] = '\0';
        }
    }
    api_sessions_check_files(as, put, parts[0], path_len, parts[1], parts[2], parts[3], &err);
    for (int i = 0; i < 4; i++)
        free(parts[i]);
    free(copy);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const actions[] = {"create", "exec", "verify", "fork"};
    struct api_sessions *as = sessions();
    struct errbuf err = {{0}};
    unsigned pick;

    if (size == 0)
        return 0;
    pick = data[0] % 6;
    data++;
    size--;
    if (pick >= 4)
        return check_files(as, pick == 4, data, size);
    {
        char *body = fuzz_strndup(data, size);
        api_sessions_check_body(as, actions[pick], body, size, &err);
        free(body);
    }
    return 0;
}
