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

#define LANG_NAME_MAX 256 /* file and class names a plan derives */

/* What a language may derive from a program's text (lang.entry): the file the program must
 * be written to and the entry the run step must name. */
struct lang_entry {
    char source[LANG_NAME_MAX]; /* "" for the row's own source */
    char entry[LANG_NAME_MAX];  /* "" when the text declares no entry point */
};

/* A file of a program or a harness: crucible's own harness files (text, len 0, whose
 * "@PACKAGE@" becomes the program's Go package; or bytes, len > 0), or one file of a
 * multi-file program such as a Kattis output validator (validate.cc + validate.h; len its
 * size). */
struct lang_file {
    const char *path;
    const char *data;
    size_t len;
};

/* What a row adds to its steps when the image provides it (the standard image's prebuilt Rust
 * crates). Libraries a row may link wherever they exist (C++'s OpenSSL) or a jar on its class
 * path are the row's own steps instead, the same on the host. Applied by lang_plan_image for images
 * other than `host` (the host keeps the row's plain steps, whatever it has installed). */
struct lang_extra {
    const char *needs;               /* an absolute path in the image (links followed inside
                                      * the image); the extra applies when it exists; NULL
                                      * ends the list */
    const char *const *compile_args; /* appended to the compile step (programs and tests) */
    const char *const *run_args;     /* inserted after the run step's argv[0] */
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
    const char *const *extensions; /* file names of the language's sources (multi-file programs) */
    bool compile_all;              /* the compile step takes every source file, not one */
    const char *entry_arg;         /* the run argv element naming the entry (Java: "Main") */
    /* entry(code, len, e) — derives the file name and the entry from the text (Java: the
     * public class and the class with main), or NULL when the row's names always hold. */
    void (*entry)(const char *code, size_t len, struct lang_entry *e);
    const char *no_entry; /* the compile error when entry finds no entry point (a line of text
                           * without quotes), or NULL for Java's */
    const struct lang_extra *extras; /* optional additions by image content, or NULL */
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

/* The steps for one program, with the names its text gives (lang.entry) and its files. */
struct lang_plan {
    const char *source;         /* the file the program is written to (single programs) */
    const char *const *compile; /* NULL when the language does not compile */
    const char *const *run;
    char **owned; /* what lang_plan_release frees */
    size_t nowned;
};

/* lang_plan_program(l, for_tests, code, len, p) — the steps for one program text: lang_steps
 * with the file name and entry the language derives from the text (Java: `public class
 * Different` is written to Different.java and run as Different). A Java program declaring no
 * main gets a compile step that fails after javac, saying so (a compile error, not a run
 * that cannot start). for_tests (the assert harness): only the file name is derived; the run
 * step is the language's, since the entry point is the test code's. 0 or -ENOMEM. */
int lang_plan_program(const struct lang *l, bool for_tests, const char *code, size_t len,
                      struct lang_plan *p);

/* lang_plan_files(l, files, n, p, err) — the steps for a program of several files: the
 * language's sources are those whose names end in one of its extensions; the main file is
 * the one named main.* (any case), else the first in byte order (problemtools' rule).
 * Languages with compile_all compile every source, others the main file; interpreters run
 * the main file; Java runs the class with main found in the sources. 0, or -EINVAL (err
 * says why: no source of the language) or -ENOMEM. p->source is the main file. */
int lang_plan_files(const struct lang *l, const struct lang_file *files, size_t n,
                    struct lang_plan *p, struct errbuf *err);

/* lang_plan_image(l, img, p) — adds to a plan made by lang_plan_program or lang_plan_files for
 * row l what l->extras ask for and image img provides (Rust: the prebuilt crates). Nothing for
 * `host` or a row without extras. The image is the operator's and read-only to sandboxes, so
 * its content decides; a sandbox never writes to it. 0 or -ENOMEM (the plan is then
 * released). */
int lang_plan_image(const struct lang *l, const struct image *img, struct lang_plan *p);

/* lang_plan_release(p) */
void lang_plan_release(struct lang_plan *p);

/* lang_find(name) — by canonical name or alias, case-insensitive; NULL when unknown. */
const struct lang *lang_find(const char *name);

/* lang_find_by_file(name) — the first language of the table one of whose extensions ends the
 * file name `name` (a path or a base name; case-sensitive: ".C" is C++, ".R" and ".r" are
 * both R), with something before it; NULL when none does. */
const struct lang *lang_find_by_file(const char *name);

/* lang_available(l, img, err) — true when the toolchain is present in the image (for a
 * directory image, symbolic links resolved inside it, as in the sandbox); otherwise err says
 * what is missing and which package provides it. */
bool lang_available(const struct lang *l, const struct image *img, struct errbuf *err);

/* lang_names(buf, size) — "python, c, cpp, ..." for error messages. */
void lang_names(char *buf, size_t size);

/* lang_cold_only_file(l, path) — path is one of l's test files that only a fresh interpreter
 * reads (Python's harness and its compiled form): a fork server's job, whose interpreter has
 * the harness imported already (the zygote preloads it), need not be given them. */
bool lang_cold_only_file(const struct lang *l, const char *path);
#endif
