/*
 * program.h — one program of a language in the table, run once: written to the work
 * directory with any extra files, compiled under its own limits, run with stdin, and files
 * read back afterwards. What `POST /v1/run {code, language}` and `POST /run_code` execute.
 */
#ifndef CRUCIBLE_PROGRAM_H
#define CRUCIBLE_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox/image.h"
#include "judge/lang.h"
#include "sandbox/result.h"
#include "sandbox/sandbox.h"
#include "judge/task.h"

struct pool;
struct pyserver;

struct program_spec {
    const struct lang *lang;
    const char *code;
    size_t code_len;
    const char *stdin_data; /* may be NULL */
    size_t stdin_len;
    const struct task_file *files; /* put before compiling (mode 0644) */
    size_t nfiles;
    struct sandbox_limits limits; /* the run's */
    double compile_time;          /* CPU seconds for the compile step; 0: the language's */
    const char *const *fetch;     /* paths to read back after the run */
    size_t nfetch;
    size_t fetch_max_total; /* bytes read back in all (each file: at most 8 MiB); 0: no cap */
    unsigned infra_retries; /* fresh-sandbox retries of crucible's own failures */
    struct pool *pool;      /* warm sandboxes to take from, or NULL */
    /* NULL, or the Python fork server (pyserver.h) whose job runs a Python program on the host
     * image (no writable root); a job it cannot make sends the program to the pool */
    struct pyserver *pyserver;
};

struct program_file {
    char *path;
    char *data; /* NULL when it could not be read (err says why) */
    size_t len;
    char err[160];
};

struct program_result {
    bool has_compile;
    struct result compile;
    bool ran;          /* false when compilation failed or crucible did */
    struct result run; /* valid when ran; otherwise status sandbox_error with the message */
    struct program_file *files;
    size_t nfiles;
};

/* program_run(rt, img, spec, out) — out is always filled (release it). */
void program_run(const struct sandbox_runtime *rt, const struct image *img,
                 const struct program_spec *spec, struct program_result *out);

void program_result_release(struct program_result *r);

#endif
