/*
 * kattis.h — the pieces of the Kattis converter (convert_kattis.c) that follow rules of
 * problemtools (github.com/Kattis/problemtools: verifyproblem.py, metadata.py, judge/,
 * config/ (problem.yaml, testdata.yaml, languages.yaml), support/default_grader): reading a package
 * without leaving it, the language of a program, the test-data tree with its testdata.yaml
 * settings, the scores of a scoring problem as task groups, validator flags and time limits.
 *
 * Each piece is pure apart from reading the package, and reports what it refuses in err
 * as one line naming the file (and line) at fault. Single-threaded; no global state.
 */
#ifndef CRUCIBLE_KATTIS_H
#define CRUCIBLE_KATTIS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "util.h"

/* ---- the package: files read beneath its directory (kattis_data.c) --------------------- */

/* A package directory. Every path is relative to it and resolved beneath it (openat2
 * RESOLVE_BENEATH): a symlink is followed when it stays inside the package; one that
 * leaves it, an absolute one (problemtools wants relative links) and a loop are errors. */
struct kattis_pkg {
    int dirfd;          /* O_PATH of the directory */
    const char *dir;    /* as given (borrowed), for messages */
    unsigned stand_ins; /* git symlink stand-ins followed by kattis_pkg_read */
    char stand_in[160]; /* the first of them, for messages */
};

/* kattis_pkg_open(p, dir, err) — 0 or -errno with err naming dir. */
int kattis_pkg_open(struct kattis_pkg *p, const char *dir, struct errbuf *err);

/* kattis_pkg_close(p) */
void kattis_pkg_close(struct kattis_pkg *p);

/* kattis_pkg_stat(p, rel, &st, err) — stat of rel (symlinks followed beneath the package).
 * 0; -ENOENT when absent (err not set); -EXDEV (leaves the package or is absolute), -ELOOP
 * or another -errno with err saying so and naming rel. */
int kattis_pkg_stat(const struct kattis_pkg *p, const char *rel, struct stat *st,
                    struct errbuf *err);

/* kattis_pkg_read(p, rel, max, &buf, &len, err) — the whole regular file rel,
 * NUL-terminated (caller frees). A file that is a git symlink stand-in (what git checks out
 * for a symlink where it makes none, core.symlinks=false: a short text without a newline
 * naming a relative path) whose path leads to a file in the package is followed as the
 * symlink it stands for, under the same rules, and counted in p->stand_ins. 0, -ENOENT (err
 * not set), -EFBIG (over max bytes), or -errno; err names rel unless -ENOENT. */
int kattis_pkg_read(struct kattis_pkg *p, const char *rel, size_t max, char **buf, size_t *len,
                    struct errbuf *err);

/* kattis_pkg_list(p, rel, &names, &n, err) — a directory's entries in byte order (the
 * order of Python's sorted(os.listdir)), "." entries and hidden names left out (problemtools
 * refuses names starting with "."). *names is a new array of new strings (free each and
 * it). 0, -ENOENT/-ENOTDIR (err not set) or -errno with err. */
int kattis_pkg_list(const struct kattis_pkg *p, const char *rel, char ***names, size_t *n,
                    struct errbuf *err);

/* kattis_names_free(names, n) */
void kattis_names_free(char **names, size_t n);

/* ---- languages (kattis_lang.c) ---------------------------------------------------------- */

/* A row of problemtools' languages.yaml: what files make a program in it, and crucible's
 * language for it (src/judge/lang.c), NULL when crucible lacks it. */
struct kattis_lang {
    const char *id;       /* problemtools' id: "cpp", "python3", ... */
    const char *name;     /* problemtools' name: "C++" */
    const char *crucible; /* crucible's language, or NULL */
    int priority;         /* tie-breaker of detection */
    const char *files;    /* space-separated globs */
    bool python2_gate;    /* *.py counts only with a #!...python2 first line (Python 2) */
};

/* One file of a program, for language detection. */
struct kattis_file {
    const char *name; /* path within the program ("validate.cc", "lib/x.h") */
    const char *text; /* content (NUL-terminated), or NULL */
};

/* kattis_lang_detect(files, n) — the language of a program as problemtools detects it:
 * for each language, the files that match its globs count (a *.py file counts for Python 2
 * only with a #!...python2 first line); most matches wins, ties go to the higher priority.
 * NULL when no file matches any language. */
const struct kattis_lang *kattis_lang_detect(const struct kattis_file *files, size_t n);

/* kattis_lang_by_crucible(name) — the row whose crucible language is name, or NULL. */
const struct kattis_lang *kattis_lang_by_crucible(const char *name);

/* ---- flags (kattis_lang.c) -------------------------------------------------------------- */

/* kattis_flags_check(flags, err) — validates a flag string for problemtools' default
 * output validator: case_sensitive, space_change_sensitive, float_relative_tolerance E,
 * float_absolute_tolerance E, float_tolerance E (E a number; the validator gives a judge
 * error otherwise). 0 or -EINVAL with err naming the flag. */
int kattis_flags_check(const char *flags, struct errbuf *err);

/* kattis_flags_join(a, b) — the tokens of a then b, separated by single spaces (how
 * problemtools passes problem.yaml's validator_flags and testdata.yaml's
 * output_validator_flags: split, concatenated). A new string, NULL on ENOMEM. */
char *kattis_flags_join(const char *a, const char *b);

/* ---- time limits (kattis_lang.c) -------------------------------------------------------- */

/* kattis_time_limit_round(slowest, multiplier, resolution) — problemtools' time limit from
 * the slowest accepted run: max(1, ceil(slowest x multiplier / resolution)) x resolution. */
double kattis_time_limit_round(double slowest, double multiplier, double resolution);

/* kattis_timelimit_parse(text, &seconds) — a .timelimit file: one positive number (blank
 * around it allowed). false when it is not. */
bool kattis_timelimit_parse(const char *text, double *seconds);

/* ---- test data (kattis_data.c) ---------------------------------------------------------- */

/* A group's grading, from its effective testdata.yaml (scoring problems). */
struct kattis_grading {
    bool on_reject_break; /* on_reject: break (problemtools' default) */
    double accept_score, reject_score;
    double range_min, range_max; /* range; -inf/+inf when absent */
    enum { KATTIS_SUM, KATTIS_AVG, KATTIS_MIN, KATTIS_MAX } score; /* grader_flags */
    bool always_accept;                                            /* grader_flags always_accept */
    bool any_accepted;  /* grader_flags accept_if_any_accepted */
    bool ignore_sample; /* grader_flags ignore_sample */
};

/* A test group: data/ or a directory below it. */
struct kattis_group {
    char *name;     /* path under data/: "" (data/ itself), "sample", "secret/group1" */
    json_t *config; /* effective testdata.yaml: its own keys over its parent's (problemtools'
                     * inheritance), problem.yaml's legacy grading over both, defaults */
    json_t *origin; /* config key -> where it was set ("data/secret/testdata.yaml:3") */
    char *flags;    /* output_validator_flags, normalised (kattis_flags_join) */
    struct kattis_grading grading;
    size_t *items; /* children in problemtools' order: KATTIS_ITEM_GROUP | group index,
                    * or a test index */
    size_t nitems;
};

#define KATTIS_ITEM_GROUP ((size_t)1 << (sizeof(size_t) * 8 - 1))

/* A test case: a .in and an .ans of the same name in one directory. */
struct kattis_test {
    char *name; /* path under data/ without extension: "secret/group1/01" */
    char *in;   /* package-relative paths: "data/secret/group1/01.in" */
    char *ans;
    size_t group; /* the group it is in */
};

/* What problem.yaml says that the test data's rules depend on. */
struct kattis_data_opts {
    bool scoring;         /* a scoring problem (scores matter, scoring keys allowed) */
    bool interactive;     /* an interactive problem (.interaction samples allowed) */
    const json_t *legacy; /* legacy problem.yaml's grading: accept_score, reject_score,
                           * range, on_reject override every group (or NULL) */
    unsigned legacy_line; /* its line in problem.yaml, for messages */
};

struct kattis_data {
    struct kattis_group *groups; /* [0] is data/ */
    size_t ngroups;
    struct kattis_test *tests; /* depth first, as problemtools judges them */
    size_t ntests;
    char **samples; /* data/sample files the statement shows: "1.in" or "1.interaction",
                     * as problemtools lists them (an .interaction hides its .in) */
    size_t nsamples;
};

#define KATTIS_TESTS_MAX 10000 /* test cases in one package */
#define KATTIS_DEPTH_MAX 16    /* directory levels under data/ */

/* kattis_data_load(p, o, d, err) — data/ of the package: groups and tests in problemtools'
 * order (entries of each directory sorted by name; a directory is a group, an .ans with
 * its .in a test), each group's testdata.yaml settings inherited as problemtools inherits
 * them. Refused (-EINVAL, err says why and where), as problemtools refuses them: no
 * data/secret; anything but data/sample and data/secret at the top; an .in without its
 * .ans or the reverse; a group without tests (but data/sample); a testdata.yaml that is
 * not a mapping or has a bad value; grading: custom; ignore_sample below data/ or with
 * on_reject: break; output_validator_args (problemtools does not pass them). Refused
 * besides: a symlink that leaves the package, an absolute or looping one, a directory
 * link back to a directory it is in, more than KATTIS_TESTS_MAX tests or
 * KATTIS_DEPTH_MAX levels. Release d even on error. */
int kattis_data_load(struct kattis_pkg *p, const struct kattis_data_opts *o, struct kattis_data *d,
                     struct errbuf *err);

/* kattis_data_release(d) */
void kattis_data_release(struct kattis_data *d);

/* ---- scores as task groups (kattis_data.c) ---------------------------------------------- */

/* One test of the task: a test case, or a copy of one (see kattis_plan). */
struct kattis_plan_test {
    size_t test;       /* index in kattis_data.tests */
    const char *group; /* the task group it belongs to (a kattis_plan group name), or NULL */
    bool copy;         /* a second run of the test for a later group */
};

struct kattis_plan_group {
    char *name;
    double score;
};

/* The tests and groups of a task that judges as problemtools does. */
struct kattis_plan {
    struct kattis_plan_test *tests; /* in the order to run */
    size_t ntests;
    struct kattis_plan_group *groups; /* scoring problems; none when no score can be earned */
    size_t ngroups;
    size_t dropped;   /* test cases whose result problemtools ignores (left out) */
    size_t copies;    /* tests that are copies */
    double max_score; /* sum of the groups' scores */
    double range_max; /* data/'s range maximum (problemtools' full score); inf if none */
    char note[512];   /* what the plan did that a reader should know, or "" */
};

/* kattis_plan_make(d, scoring, pl, err) — the task's tests and groups, such that
 * "a group earns its score when all its tests pass; the task's score is the sum" gives the
 * score problemtools' default grader gives, for every outcome of the tests, and "accepted
 * when every test passes" its verdict (for scoring problems, full marks).
 *
 * Each test case earns its group's accept_score (reject_score must be 0); a group adds its
 * children's scores (sum), or gives min / max / avg of them, after judging them in order
 * until one is rejected (on_reject: break). Under "break", a later child's score counts only
 * when every earlier child was accepted: its group then also needs the earlier children's
 * tests, which are run again as copies ("NAME@GROUP") when they belong to another group.
 * ignore_sample leaves data/sample out; in a pass-fail problem a group whose verdict never
 * counts (always_accept) is left out. What cannot be expressed (min or max over children
 * that score apart, avg under break, a verdict that is "any child accepted" deciding
 * whether a later child is judged, negative scores, copies that would double the tests)
 * is -EINVAL with err naming the group. Release pl even on error. */
int kattis_plan_make(const struct kattis_data *d, bool scoring, struct kattis_plan *pl,
                     struct errbuf *err);

/* kattis_plan_release(pl) */
void kattis_plan_release(struct kattis_plan *pl);

#endif
