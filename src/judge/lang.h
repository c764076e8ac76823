/*
 * lang.h — the language table: how to compile and run each language (data, in lang.c).
 *
 * A program is written to /work/<source> in the sandbox; languages with a compile step run
 * it with their own limits before the first run. Commands are argv vectors, no shell.
 */
#ifndef CRUCIBLE_LANG_H
#define CRUCIBLE_LANG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox/image.h"
#include "util.h"

/* A file of crucible's own that a harness puts beside the program: text (len 0, its
 * "@PACKAGE@" replaced by the program's Go package) or bytes (len > 0). */
struct lang_file {
    const char *path;
    const char *data;
    size_t len;
};

struct lang {
    const char *name;                   /* canonical name, as in result records */
    const char *const *aliases;         /* other accepted names (SandboxFusion's among them) */
    const char *source;                 /* file name of the program in the work directory */
    const char *const *compile;         /* argv of the compile step, or NULL when interpreted */
    const char *const *run;             /* argv that runs the program */
    const char *const *env;             /* extra "K=V" for both steps, or NULL */
    const char *test_source;            /* assert harness: file name, when it differs from source */
    const char *const *test_compile;    /* assert harness: unit-test build step, or NULL */
    const char *const *test_run;        /* assert harness: what runs the tests, or NULL for run;
                                         * "@TESTS_OFFSET@" becomes the byte offset of the test code
                                         * in the program, "@ENTRY_POINT@" the task's entry point */
    const char *test_prologue;          /* assert harness: text between solution and test code */
    const char *test_epilogue;          /* assert harness: text after the test code */
    const struct lang_file *test_files; /* assert harness: crucible's own files (judge/harness/),
                                         * written read-only beside the program; ends with a
                                         * NULL path */
    bool test_token;                    /* assert harness: the run gets a fresh token on stdin; the
                                         * harness reads it before the solution's code runs and
                                         * prints it, on a line of its own, only when the test code
                                         * has run to its end: the test passes only with it */
    bool test_undef_macros;             /* assert harness (C, C++): the prologue starts with an
                                         * #undef of every macro the solution #defines */
    const char *assert_marker;          /* stderr text of a failed assertion (wrong_answer) */
    const char *toolchain;              /* a path in the image the toolchain needs */
    const char *package;              /* Debian package that provides it (for the error message) */
    double compile_cpu, compile_wall; /* seconds */
    uint64_t compile_memory_mb;
};

/* The source, compile and run of a harness: the assert harness may build a unit-test binary
 * (Go's `go test -c`, Rust's `rustc --test`) where the stdio harness builds a program. */
struct lang_steps {
    const char *source;
    const char *const *compile;
    const char *const *run;
};

/* lang_steps(l, for_tests) — the steps for the assert harness (for_tests) or for programs. */
struct lang_steps lang_steps(const struct lang *l, bool for_tests);

/* lang_find(name) — by canonical name or alias, case-insensitive; NULL when unknown. */
const struct lang *lang_find(const char *name);

/* lang_available(l, img, err) — true when the toolchain is present in the image; otherwise
 * err says what is missing and which package provides it. */
bool lang_available(const struct lang *l, const struct image *img, struct errbuf *err);

/* lang_names(buf, size) — "python, c, cpp, ..." for error messages. */
void lang_names(char *buf, size_t size);

#endif
