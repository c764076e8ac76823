/* Unit tests for src/result.c: status names, JSON form, escaping of non-UTF-8 output. */
#include "sandbox/image.h"
#include "sandbox/result.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *jstr(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

int main(void)
{
    struct result r;
    json_t *j;
    char *esc;

    is_str(result_status_name(RESULT_OK), "ok", "status name ok");
    is_str(result_status_name(RESULT_MEMORY_LIMIT), "memory_limit", "status name memory_limit");
    is_str(result_status_name(RESULT_SANDBOX_ERROR), "sandbox_error", "status name sandbox_error");
    is_str(result_status_name((enum result_status)99), "sandbox_error",
           "out of range is sandbox_error");
    is_str(result_limit_name(RESULT_LIMIT_WALL), "wall", "limit name wall");
    ok(result_limit_name(RESULT_LIMIT_NONE) == NULL, "no limit is null");

    result_init(&r);
    ok(r.status == RESULT_SANDBOX_ERROR && r.exit_code == -1, "a fresh record claims nothing");
    r.status = RESULT_TIMEOUT;
    r.limit = RESULT_LIMIT_CPU;
    r.cpu_time = 1.25;
    r.out.data = strdup("hi\n");
    r.out.len = 3;
    r.err.data = strdup("\xff\xfe"
                        "ok");
    r.err.len = 4;
    snprintf(r.image, sizeof(r.image), "host");
    j = result_to_json(&r);
    ok(j != NULL, "record encodes");
    is_str(jstr(j, "status"), "timeout", "json status");
    is_str(jstr(j, "limit"), "cpu", "json limit");
    ok(json_is_null(json_object_get(j, "exit_code")), "exit_code null when it did not exit");
    ok(json_is_null(json_object_get(j, "signal")), "signal null when none");
    is_str(jstr(j, "stdout"), "hi\n", "valid UTF-8 kept as is");
    ok(json_object_get(j, "stdout_base64") == NULL, "no base64 for valid text");
    is_str(jstr(j, "stderr"), "\\xff\\xfeok", "invalid bytes escaped, not dropped");
    is_str(jstr(j, "stderr_base64"), "//5vaw==", "exact bytes in base64");
    ok(json_real_value(json_object_get(j, "cpu_time")) == 1.25, "cpu_time in seconds");
    json_decref(j);
    snprintf(r.message, sizeof(r.message), "cannot execute '\xff'");
    j = result_to_json(&r);
    is_str(jstr(j, "message"), "cannot execute '\\xff'",
           "a message quoting invalid UTF-8 is escaped");
    json_decref(j);
    ok(json_object_get(j = result_to_json(&r), "path") == NULL,
       "a cold run's record has no \"path\" (as before fork servers)");
    json_decref(j);
    r.fork_server = true;
    j = result_to_json(&r);
    is_str(jstr(j, "path"), "fork_server", "a fork server's job says so");
    json_decref(j);
    r.fork_server = false;
    result_fail(&r, "cannot %s", "start");
    ok(r.status == RESULT_SANDBOX_ERROR && strcmp(r.message, "cannot start") == 0, "result_fail");
    result_release(&r);

    /* What a server holds to answer a record, and cutting a stream to fit. */
    result_init(&r);
    r.out.data = strdup("ab\"\n");
    r.out.len = 4;
    ok(result_held_bytes(&r) == 4 + 2 * (1 + 1 + 2 + 6), "held: text and twice its JSON form");
    r.err.data = malloc(1001);
    memset(r.err.data, 0xff, 1000);
    r.err.data[1000] = '\0';
    r.err.len = 1000;
    ok(result_held_bytes(&r) == 24 + 1000 * RESULT_HELD_FACTOR,
       "held: bytes that are not UTF-8 cost RESULT_HELD_FACTOR each");
    {
        /* the estimate bounds the real JSON: tree strings plus the serialized text */
        json_t *rj = result_to_json(&r);
        char *text = json_dumps(rj, JSON_COMPACT);
        size_t tree = json_string_length(json_object_get(rj, "stderr")) +
                      json_string_length(json_object_get(rj, "stderr_base64"));
        size_t peak = tree > strlen(text) ? tree + strlen(text) : 2 * strlen(text);
        /* the server frees the tree before the HTTP layer copies the text (api.c) */
        ok(peak <= result_held_bytes(&r) + 400,
           "held bounds the tree with its text, and the text with its copy (%zu <= %zu)", peak,
           result_held_bytes(&r) + 400);
        free(text);
        json_decref(rj);
    }
    result_stream_cut(&r.err, 10);
    ok(r.err.len == 10 && r.err.truncated && r.err.data[10] == '\0',
       "cut: 10 bytes left, truncated");
    result_stream_cut(&r.out, 10);
    ok(r.out.len == 4 && !r.out.truncated, "cut: a shorter stream is left alone");
    result_release(&r);

    {
        /* a record names its image: the digest, the name asked for, and host_os for host */
        struct image *img = calloc(1, sizeof(*img));
        result_init(&r);
        snprintf(img->name, sizeof(img->name), "py:3.12");
        snprintf(img->digest, sizeof(img->digest), "sha256:%064d", 7);
        result_set_image(&r, img);
        j = result_to_json(&r);
        ok(j && strcmp(jstr(j, "image"), img->digest) == 0 &&
               strcmp(jstr(j, "image_name"), "py:3.12") == 0 &&
               json_is_null(json_object_get(j, "host_os")),
           "image is the digest, image_name what was asked for, host_os null");
        json_decref(j);
        snprintf(img->name, sizeof(img->name), "host");
        snprintf(img->digest, sizeof(img->digest), "host");
        snprintf(img->os_release, sizeof(img->os_release), "debian 12");
        result_set_image(&r, img);
        j = result_to_json(&r);
        ok(j && strcmp(jstr(j, "host_os"), "debian 12") == 0, "host: host_os is the os-release");
        json_decref(j);
        result_release(&r);
        free(img);
    }
    esc = result_text_escape("a\0b", 3);
    is_str(esc, "a\\x00b", "NUL escaped");
    free(esc);
    esc = result_text_escape("\xc3\xa9\xc3", 3);
    is_str(esc, "\xc3\xa9\\xc3", "valid prefix kept, truncated tail escaped");
    free(esc);
    return done_testing();
}
