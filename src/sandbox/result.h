/*
 * result.h — the result record of one process run: the contract everything above the
 * sandbox builds on (DESIGN.md §2). The status set is closed; SANDBOX_ERROR means crucible
 * failed and is never the program's fault.
 */
#ifndef CRUCIBLE_RESULT_H
#define CRUCIBLE_RESULT_H

#include <jansson.h>
#include <stdbool.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

enum result_status {
    RESULT_OK,            /* exited 0 within all limits */
    RESULT_RUNTIME_ERROR, /* exited non-zero */
    RESULT_SIGNALED,      /* killed by a signal it did not get from us */
    RESULT_TIMEOUT,       /* CPU-time or wall-time limit hit (limit says which) */
    RESULT_MEMORY_LIMIT,  /* OOM-killed inside its own cgroup */
    RESULT_OUTPUT_LIMIT,  /* wrote more than the output cap */
    RESULT_SANDBOX_ERROR, /* crucible itself failed */
};

enum result_limit { RESULT_LIMIT_NONE, RESULT_LIMIT_CPU, RESULT_LIMIT_WALL };

struct result_stream {
    char *data; /* owned, NUL-terminated, at most the cap */
    size_t len;
    bool truncated;
};

struct result {
    enum result_status status;
    int exit_code; /* -1 when the process did not exit normally */
    int signal;    /* 0 when none */
    enum result_limit limit;
    double cpu_time;    /* seconds, whole process tree */
    double wall_time;   /* seconds */
    uint64_t memory_kb; /* peak */
    struct result_stream out, err;
    char image[PATH_MAX + 8]; /* the image's digest (struct image.digest) */
    char image_name[256];     /* the image as it was asked for ("host", "NAME:TAG", a path) */
    char host_os[128];        /* for "host": the host's os-release ("debian 12"); else "" */
    char message[512];
    bool fork_server; /* the run was a fork server's job (forkserver.h): the record says
                       * "path": "fork_server"; cold records have no "path" (unchanged) */
};

struct image;
/* result_set_image(r, img) — the record's image, image_name and host_os from img. */
void result_set_image(struct result *r, const struct image *img);

/* result_init(r) — a zeroed record (status sandbox_error until something is known). */
void result_init(struct result *r);

/* result_release(r) — frees the captured streams. */
void result_release(struct result *r);

/* result_fail(r, fmt, ...) — marks the record sandbox_error with a message. */
void result_fail(struct result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* result_status_name(s) — "ok", "runtime_error", ... */
const char *result_status_name(enum result_status s);

/* result_limit_name(l) — "cpu", "wall" or NULL. */
const char *result_limit_name(enum result_limit l);

/* result_to_json(r) — a new JSON object (caller owns the reference). Streams that are
 * not valid UTF-8 are given with each invalid byte escaped as "\xHH" text, and the exact
 * bytes in stdout_base64 / stderr_base64. NULL on allocation failure. */
json_t *result_to_json(const struct result *r);

/* RESULT_HELD_FACTOR — the most bytes a server holds at once per captured byte while it
 * answers a record: a byte that is not UTF-8 is "\\xHH" (4 bytes) plus 4/3 of base64 in the
 * JSON tree and 5 + 4/3 in its serialized text; the tree is freed before the HTTP layer
 * copies the text, so the peak is the text twice (12.7, rounded up). */
#define RESULT_HELD_FACTOR 13

/* result_held_bytes(r) — the most r's streams cost at once a server that answers r as
 * JSON (the tree and its text, then the text and the copy being sent): valid UTF-8 text
 * 1 + 2x its JSON-escaped length, other bytes RESULT_HELD_FACTOR each. */
size_t result_held_bytes(const struct result *r);

/* result_stream_cut(st, len) — keeps at most the first len bytes of a stream (the rest is
 * freed), marking it truncated when it lost any. */
void result_stream_cut(struct result_stream *st, size_t len);

/* result_text_escape(data, len) — the escaped UTF-8 form used above (malloc'd, caller frees). */
char *result_text_escape(const char *data, size_t len);
/* result_text_json(s) — s as a JSON string, its invalid UTF-8 escaped as above (messages and
 * paths quote what a sandbox or a client wrote). NULL when out of memory. */
json_t *result_text_json(const char *s);

#endif
