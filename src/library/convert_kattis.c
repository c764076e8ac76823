/*
 * convert_kattis.c — Kattis / problemtools problem packages to native tasks (convert.h),
 * judged as problemtools' verifyproblem judges them.
 *
 * A package is a directory with problem.yaml and data/ (github.com/Kattis/problemtools;
 * both the legacy layout and the 2023-07 draft). PATH is one package or a tree of them; a
 * package's id is kattis/ + its path relative to PATH (the directory's own name when PATH
 * is the package), packages in byte order of their paths.
 *
 * The task (docs/DATASETS.md, "Kattis"): harness stdio, or interactive for interactive
 * problems; one test per test case of data/sample and data/secret in problemtools' order
 * (kattis_data_load), each carrying its output-validator flags where they differ from the
 * task's, and for scoring problems its group (kattis_plan_make); checker "kattis" (the
 * default validator and its flags) or "validator" (the package's output validator, in a
 * language crucible has), or the validator as "interactor"; limits from .timelimit,
 * problem.yaml, or a calibration that runs the accepted submissions as problemtools does;
 * the reference is one accepted submission. Whatever the task format cannot judge as
 * problemtools would (multi-pass, submit-answer, custom graders, validators crucible
 * cannot run, ...) makes the package a bad record: reported, skipped, never approximated.
 * Every converted package gets one line on the error stream saying what was made of it.
 */
#include "library/convert_int.h"
#include "library/kattis.h"
#include "library/yaml_doc.h"

#include "judge/lang.h"
#include "judge/task.h"
#include "judge/verify.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define KATTIS_DEPTH      16                /* directory levels searched for packages */
#define KATTIS_FILE_MAX   ((size_t)1 << 30) /* bytes of one .in or .ans */
#define KATTIS_DATA_MAX   ((size_t)2 << 30) /* bytes of all test files of a package */
#define KATTIS_YAML_MAX   ((size_t)1 << 20) /* bytes of problem.yaml or a statement */
#define PROGRAM_FILE_MAX  ((size_t)1 << 20) /* bytes of one file of a validator or submission */
#define PROGRAM_FILES_MAX 64                /* files in one program */
#define SAMPLE_MAX        ((size_t)1 << 16) /* bytes of a sample shown in a prompt */
#define CPU_TIME_MAX      3600.0            /* seconds, as the sandbox's range */
#define CPU_TIME_DEFAULT  10.0              /* when nothing gives a limit: the sandbox's default */
#define MEMORY_MB_DEFAULT 1024              /* problemtools' config/problem.yaml limits.memory */
#define OUTPUT_MB_DEFAULT 8                 /* ... limits.output (MiB) */
#define MEMORY_MB_MAX     1048576.0
#define CALIBRATE_CPU     60.0 /* per-test CPU seconds for accepted submissions calibrating */
/* Paths longer than PATH_MAX - PATH_SLACK are refused, never truncated: the slack is room
 * for what is appended to a package path ("/problem.yaml"). */
#define PATH_SLACK 64

/* The languages a reference is chosen in, most preferred first (then by file name). */
static const char *const reference_order[] = {"python", "cpp",  "c",         "java",
                                              "go",     "rust", "javascript"};

/* Where a time limit came from (the tag time-limit:NAME). */
static const char *const origin_names[] = {"timelimit-file", "problem.yaml", "calibrated",
                                           "statement", "default"};
enum origin { FROM_FILE, FROM_YAML, FROM_CALIBRATION, FROM_STATEMENT, FROM_DEFAULT };

/* A program of the package: an output validator or a submission. */
struct program {
    char *rel;                      /* package-relative path: a file or a directory */
    const struct kattis_lang *lang; /* as problemtools detects it, or NULL */
    json_t *files;                  /* name within the program -> text */
    bool dir;                       /* a directory (names of files matter), not one file */
    char *why;                      /* why it cannot be used (not UTF-8, too big...), or NULL */
};

/* One package being converted. */
struct package {
    struct convert_run *r;
    const char *dir, *id;
    struct kattis_pkg pkg;
    struct yaml_doc yaml;
    bool legacy, scoring, interactive;
    const char *legacy_flags; /* problem.yaml validator_flags (legacy) */
    struct program validator; /* rel NULL: the default validator */
    struct kattis_data data;
    struct kattis_plan plan;
    enum origin origin;   /* of the time limit */
    struct program *subs; /* submissions/accepted, in name order */
    size_t nsubs;
    json_t *task;
    struct errbuf err;
};

/* ---- helpers ------------------------------------------------------------------------- */

/* refuse(k, fmt, ...) — k->err = the reason the package is skipped; returns -EINVAL. */
static int refuse(struct package *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(struct package *k, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(k->err.msg, sizeof(k->err.msg), fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/* at(k, path, buf, size) — "problem.yaml:LINE" for the value at path, written into buf. */
static const char *at(const struct package *k, const char *path, char *buf, size_t size)
{
    unsigned line = yaml_doc_line(&k->yaml, path);

    if (line)
        snprintf(buf, size, "problem.yaml:%u", line);
    else
        snprintf(buf, size, "problem.yaml");
    return buf;
}

/* yaml_text(k, path, &s) — a string of problem.yaml (NULL when absent or null); -EINVAL
 * when it is something else. */
static int yaml_text(struct package *k, const char *path, const char **s)
{
    json_t *v = yaml_doc_get(&k->yaml, path);
    char w[64];

    *s = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return refuse(k, "%s: '%s' must be a string", at(k, path, w, sizeof(w)), path);
    *s = json_string_value(v);
    return 0;
}

/* yaml_number(k, path, min, max, &x) — a number of problem.yaml in [min, max] (a numeric
 * string too: pydantic's lax mode takes it). 1 when present, 0 when absent, -EINVAL. */
static int yaml_number(struct package *k, const char *path, double min, double max, double *x)
{
    json_t *v = yaml_doc_get(&k->yaml, path);
    char w[64], *end;

    if (!v || json_is_null(v))
        return 0;
    if (json_is_number(v)) {
        *x = json_number_value(v);
    } else if (json_is_string(v)) {
        *x = strtod(json_string_value(v), &end);
        if (end == json_string_value(v) || *end)
            return refuse(k, "%s: '%s' must be a number", at(k, path, w, sizeof(w)), path);
    } else {
        return refuse(k, "%s: '%s' must be a number", at(k, path, w, sizeof(w)), path);
    }
    if (!isfinite(*x) || *x < min || *x > max)
        return refuse(k, "%s: '%s' must be between %g and %g, not %g", at(k, path, w, sizeof(w)),
                      path, min, max, *x);
    return 1;
}

/* exists(k, rel) — does rel exist beneath the package (-errno when it cannot be told)? */
static int exists(struct package *k, const char *rel, struct stat *st)
{
    int e = kattis_pkg_stat(&k->pkg, rel, st, &k->err);

    return e == 0 ? 1 : e == -ENOENT ? 0 : e;
}

/* set_number(obj, key, v) — obj[key] = v, an integer when v is whole. */
static int set_number(json_t *obj, const char *key, double v)
{
    json_t *j = v < 1e15 && v == (double)(json_int_t)v ? json_integer((json_int_t)v) : json_real(v);

    return j && json_object_set_new(obj, key, j) == 0 ? 0 : -ENOMEM;
}

static void program_release(struct program *p)
{
    free(p->rel);
    json_decref(p->files);
    free(p->why);
    memset(p, 0, sizeof(*p));
}

/* ---- problem.yaml -------------------------------------------------------------------- */

/* problem_yaml(k) — reads and parses problem.yaml; the format version, type and validation
 * kind. 0 or -EINVAL (k->err says why) or -ENOMEM. */
static int problem_yaml(struct package *k)
{
    static const char *const types[] = {"pass-fail", "scoring", "multi-pass", "interactive",
                                        "submit-answer"};
    bool has[5] = {false};
    const char *s;
    char *text, w[64];
    size_t len;
    struct errbuf yerr;
    json_t *v;
    int e;

    e = kattis_pkg_read(&k->pkg, "problem.yaml", KATTIS_YAML_MAX, &text, &len, &k->err);
    if (e == -ENOENT)
        return refuse(k, "no problem.yaml");
    if (e < 0)
        return e == -ENOMEM ? e : -EINVAL;
    e = yaml_doc_parse(&k->yaml, text, len, &yerr);
    free(text);
    if (e == -EINVAL)
        return refuse(k, "problem.yaml: %s", yerr.msg);
    if (e < 0)
        return e;
    if (json_is_null(k->yaml.root)) {
        json_decref(k->yaml.root);
        if (!(k->yaml.root = json_object()))
            return -ENOMEM;
    }
    if (!json_is_object(k->yaml.root))
        return refuse(k, "problem.yaml: must be a mapping");

    if ((e = yaml_text(k, "problem_format_version", &s)) < 0)
        return e;
    if (!s || strcmp(s, "legacy") == 0)
        k->legacy = true;
    else if (strcmp(s, "2023-07-draft") != 0 && strcmp(s, "2023-07") != 0)
        return refuse(k,
                      "%s: problem_format_version '%s' is not one problemtools knows "
                      "(legacy, 2023-07-draft)",
                      at(k, "problem_format_version", w, sizeof(w)), s);

    if (k->legacy) {
        /* legacy: type pass-fail | scoring; validation: default | custom [interactive] [score] */
        const char *p;
        if ((e = yaml_text(k, "type", &s)) < 0)
            return e;
        if (s && strcmp(s, "pass-fail") != 0 && strcmp(s, "scoring") != 0)
            return refuse(k, "%s: type '%s': a legacy package is pass-fail or scoring",
                          at(k, "type", w, sizeof(w)), s);
        k->scoring = s && strcmp(s, "scoring") == 0;
        if ((e = yaml_text(k, "validation", &s)) < 0)
            return e;
        p = s ? s : "default";
        p += strspn(p, " ");
        if (strncmp(p, "default", 7) == 0 && p[7 + strspn(p + 7, " ")] == '\0') {
            /* the default validator */
        } else if (strncmp(p, "custom", 6) == 0 && (p[6] == '\0' || p[6] == ' ')) {
            p += 6;
            for (;;) {
                size_t n;
                p += strspn(p, " ");
                if (!*p)
                    break;
                n = strcspn(p, " ");
                if (n == 11 && strncmp(p, "interactive", n) == 0)
                    k->interactive = true;
                else if (n == 5 && strncmp(p, "score", n) == 0)
                    return refuse(k,
                                  "%s: validation: custom score (the validator writes each "
                                  "test's score) is not supported: task groups only score "
                                  "whole tests",
                                  at(k, "validation", w, sizeof(w)));
                else
                    return refuse(k, "%s: validation '%s': unknown parameter '%.*s'",
                                  at(k, "validation", w, sizeof(w)), s, (int)n, p);
                p += n;
            }
        } else {
            return refuse(k, "%s: validation '%s' must be 'default' or 'custom [interactive]'",
                          at(k, "validation", w, sizeof(w)), s);
        }
        if ((e = yaml_text(k, "validator_flags", &k->legacy_flags)) < 0)
            return e;
        if (!k->legacy_flags) {
            /* not a problemtools key, but what Google's Code Jam conversion writes */
            if ((e = yaml_text(k, "output_validator_flags", &k->legacy_flags)) < 0)
                return e;
        }
        if ((e = yaml_text(k, "grading.objective", &s)) < 0)
            return e;
        if (s && strcmp(s, "min") == 0 && k->scoring)
            return refuse(k,
                          "%s: grading.objective min (lower scores are better) cannot be "
                          "expressed by task groups",
                          at(k, "grading.objective", w, sizeof(w)));
        if ((e = yaml_text(k, "grading.on_reject", &s)) < 0)
            return e;
        if (s && strcmp(s, "first_error") != 0 && strcmp(s, "worst_error") != 0 &&
            strcmp(s, "grade") != 0)
            return refuse(k, "%s: grading.on_reject '%s' is not first_error, worst_error or grade",
                          at(k, "grading.on_reject", w, sizeof(w)), s);
        return 0;
    }

    /* 2023-07: type is a string or a list of them */
    if (yaml_doc_get(&k->yaml, "validation") || yaml_doc_get(&k->yaml, "validator_flags"))
        return refuse(k,
                      "%s: 'validation' and 'validator_flags' are legacy keys: a 2023-07 package "
                      "has output_validator/ and testdata.yaml's output_validator_flags "
                      "(problemtools refuses them)",
                      at(k, yaml_doc_get(&k->yaml, "validation") ? "validation" : "validator_flags",
                         w, sizeof(w)));
    v = yaml_doc_get(&k->yaml, "type");
    if (v && !json_is_null(v)) {
        json_t *list = json_is_array(v) ? v : NULL;
        size_t n = list ? json_array_size(list) : 1;
        for (size_t i = 0; i < n; i++) {
            json_t *t = list ? json_array_get(list, i) : v;
            size_t j;
            if (!json_is_string(t))
                return refuse(k, "%s: type must be a string or a list of strings",
                              at(k, "type", w, sizeof(w)));
            for (j = 0; j < 5 && strcmp(types[j], json_string_value(t)) != 0; j++)
                ;
            if (j == 5)
                return refuse(k,
                              "%s: unknown type '%s' (pass-fail, scoring, multi-pass, "
                              "interactive, submit-answer)",
                              at(k, "type", w, sizeof(w)), json_string_value(t));
            has[j] = true;
        }
    } else {
        has[0] = true;
    }
    if (has[0] && has[1])
        return refuse(k, "%s: type is both pass-fail and scoring", at(k, "type", w, sizeof(w)));
    if (has[2])
        return refuse(k,
                      "%s: type multi-pass (the validator runs the submission again on input "
                      "it makes) is not supported by crucible's harnesses",
                      at(k, "type", w, sizeof(w)));
    if (has[4])
        return refuse(k,
                      "%s: type submit-answer (answers submitted instead of a program) is "
                      "not supported",
                      at(k, "type", w, sizeof(w)));
    k->scoring = has[1];
    k->interactive = has[3];
    return 0;
}

/* ---- programs ------------------------------------------------------------------------ */

/* program_add_file(k, p, rel, name) — one file of a program: its text in p->files. */
static int program_add_file(struct package *k, struct program *p, const char *rel, const char *name)
{
    char *buf;
    size_t len;
    int e;

    if (json_object_size(p->files) >= PROGRAM_FILES_MAX) {
        if (!p->why && asprintf(&p->why, "more than %d files", PROGRAM_FILES_MAX) < 0)
            return p->why = NULL, -ENOMEM; /* undefined after a failed asprintf */
        return 0;
    }
    e = kattis_pkg_read(&k->pkg, rel, PROGRAM_FILE_MAX, &buf, &len, &k->err);
    if (e == -ENOMEM)
        return e;
    if (e < 0)
        return -EINVAL; /* a symlink out of the package, a loop: the package is refused */
    if (!util_utf8_valid(buf, len) || memchr(buf, '\0', len)) {
        free(buf);
        if (!p->why && asprintf(&p->why, "'%s' is not UTF-8 text", rel) < 0)
            return p->why = NULL, -ENOMEM;
        return 0;
    }
    e = json_object_set_new(p->files, name, json_stringn(buf, len)) ? -ENOMEM : 0;
    free(buf);
    return e;
}

/* program_add_dir(k, p, rel, prefix, depth) — every file below rel. */
static int program_add_dir(struct package *k, struct program *p, const char *rel,
                           const char *prefix, int depth)
{
    char **names;
    size_t n;
    int e;

    if (depth > 4)
        return refuse(k, "'%s': a program nested deeper than 4 directories", rel);
    e = kattis_pkg_list(&k->pkg, rel, &names, &n, &k->err);
    if (e < 0)
        return e == -ENOMEM ? e : -EINVAL;
    for (size_t i = 0; i < n && !e; i++) {
        char path[PATH_MAX], name[PATH_MAX];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", rel, names[i]);
        snprintf(name, sizeof(name), "%s%s%s", prefix, prefix[0] ? "/" : "", names[i]);
        if ((e = kattis_pkg_stat(&k->pkg, path, &st, &k->err)) < 0)
            break;
        if (S_ISDIR(st.st_mode))
            e = program_add_dir(k, p, path, name, depth + 1);
        else if (S_ISREG(st.st_mode))
            e = program_add_file(k, p, path, name);
    }
    kattis_names_free(names, n);
    return e == -ENOENT ? -EINVAL : e;
}

/* program_load(k, p, rel) — the program at rel (a file, or a directory of files) and its
 * language as problemtools detects it. A directory with an executable 'build' script is a
 * program crucible cannot build (p->why says so). 0, -EINVAL (k->err) or -ENOMEM; on an error
 * p is released (its callers count only the programs that loaded: a half-loaded one was
 * leaked, found by fuzz/kattis_package). */
static int program_load(struct package *k, struct program *p, const char *rel)
{
    struct kattis_file files[PROGRAM_FILES_MAX];
    struct stat st;
    const char *name;
    json_t *text;
    size_t n = 0;
    int e;

    memset(p, 0, sizeof(*p));
    if (!(p->rel = strdup(rel)) || !(p->files = json_object())) {
        e = -ENOMEM;
        goto out_release;
    }
    if ((e = kattis_pkg_stat(&k->pkg, rel, &st, &k->err)) < 0) {
        e = e == -ENOMEM ? e : -EINVAL;
        goto out_release;
    }
    p->dir = S_ISDIR(st.st_mode);
    if (p->dir) {
        char build[PATH_MAX];
        snprintf(build, sizeof(build), "%s/build", rel);
        if (kattis_pkg_stat(&k->pkg, build, &st, &k->err) == 0 && S_ISREG(st.st_mode) &&
            (st.st_mode & 0111)) {
            if (asprintf(&p->why, "'%s' is built by its own 'build' script", rel) < 0) {
                p->why = NULL;
                e = -ENOMEM;
                goto out_release;
            }
            return 0;
        }
        e = program_add_dir(k, p, rel, "", 0);
    } else {
        const char *base = strrchr(rel, '/');
        e = program_add_file(k, p, rel, base ? base + 1 : rel);
    }
    if (e < 0)
        goto out_release;
    json_object_foreach(p->files, name, text)
    {
        files[n].name = name;
        files[n].text = json_string_value(text);
        n++;
    }
    p->lang = kattis_lang_detect(files, n);
    return 0;

out_release:
    program_release(p);
    return e;
}

/* program_json(p, type, flags, directory) — {["type",] "language", "code" or "files",
 * "flags"}: "code" for a one-file program, "files" (names kept) for a directory (even of
 * one file). A new object, NULL on ENOMEM. */
static json_t *program_json(const struct program *p, const char *type, const char *flags,
                            bool directory)
{
    json_t *o = json_object();

    if (!o || (type && json_object_set_new(o, "type", json_string(type))) ||
        json_object_set_new(o, "language", json_string(p->lang->crucible)))
        goto out_fail;
    if (!directory && json_object_size(p->files) == 1) {
        void *it = json_object_iter(p->files);
        if (json_object_set(o, "code", json_object_iter_value(it)))
            goto out_fail;
    } else if (json_object_set(o, "files", p->files)) {
        goto out_fail;
    }
    if (json_object_set_new(o, "flags", json_string(flags)))
        goto out_fail;
    return o;
out_fail:
    json_decref(o);
    return NULL;
}

/* validator(k) — the output validator problemtools would use: the default one, or the
 * package's program (output_validators/ in legacy packages, output_validator/ in 2023-07
 * ones). 0, -EINVAL (refused, k->err says why) or -ENOMEM. */
static int validator(struct package *k)
{
    const char *dirname = k->legacy ? "output_validators" : "output_validator";
    const char *other = k->legacy ? "output_validator" : "output_validators";
    char **names = NULL, rel[PATH_MAX];
    struct program found[8];
    size_t n = 0, nfound = 0;
    bool custom, loose_files = false;
    struct stat st;
    const char *validation = NULL;
    int e;

    if ((e = exists(k, other, &st)) < 0)
        return -EINVAL;
    if (e && S_ISDIR(st.st_mode))
        return refuse(k,
                      "%s/ is where the %s layout keeps output validators; this package is %s, "
                      "so problemtools would not look there and would judge with the default "
                      "validator instead",
                      other, k->legacy ? "2023-07" : "legacy", k->legacy ? "legacy" : "2023-07");
    for (const char *const *d = (const char *const[]){"graders", "include", NULL}; *d; d++) {
        if ((e = kattis_pkg_list(&k->pkg, *d, &names, &n, &k->err)) < 0 && e != -ENOENT &&
            e != -ENOTDIR)
            return e == -ENOMEM ? e : -EINVAL;
        kattis_names_free(names, n);
        if (n && strcmp(*d, "graders") == 0)
            return refuse(k, "graders/: a custom grader program is not supported (task groups "
                             "can only add up whole-test scores)");
        if (n)
            return refuse(k, "include/: files added to every submission are not supported by "
                             "the stdio harness");
        names = NULL;
        n = 0;
    }

    e = kattis_pkg_list(&k->pkg, dirname, &names, &n, &k->err);
    if (e < 0 && e != -ENOENT && e != -ENOTDIR)
        return e == -ENOMEM ? e : -EINVAL;
    e = 0;
    /* 2023-07 puts the validator's files right in output_validator/ (one program) */
    for (size_t i = 0; !k->legacy && i < n; i++) {
        snprintf(rel, sizeof(rel), "%s/%s", dirname, names[i]);
        if (kattis_pkg_stat(&k->pkg, rel, &st, &k->err) == 0 && S_ISREG(st.st_mode))
            loose_files = true;
    }
    if (loose_files) {
        e = program_load(k, &found[0], dirname);
        nfound = e == 0 && (found[0].lang || found[0].why) ? 1 : 0;
        if (e == 0 && !nfound)
            program_release(&found[0]);
    } else {
        for (size_t i = 0; i < n && nfound < 8; i++) {
            snprintf(rel, sizeof(rel), "%s/%s", dirname, names[i]);
            if ((e = program_load(k, &found[nfound], rel)) < 0)
                break;
            if (found[nfound].lang || found[nfound].why)
                nfound++;
            else
                program_release(&found[nfound]);
        }
    }
    kattis_names_free(names, n);
    if (e < 0)
        goto out;

    if (k->legacy) {
        if ((e = yaml_text(k, "validation", &validation)) < 0)
            goto out;
        custom = validation && strncmp(validation + strspn(validation, " "), "custom", 6) == 0;
        if (!custom && nfound) {
            e = refuse(k,
                       "%s/ has validator programs but problem.yaml says validation: "
                       "default (problemtools refuses the package)",
                       dirname);
            goto out;
        }
    } else {
        custom = nfound > 0;
    }
    if (k->interactive && !nfound) {
        e = refuse(k, "an interactive problem needs its interactor in %s/, and there is none",
                   dirname);
        goto out;
    }
    if (custom && !nfound) {
        e = refuse(k, "problem.yaml asks for a custom output validator but %s/ has none", dirname);
        goto out;
    }
    if (nfound > 1 && !k->legacy) {
        e = refuse(k, "%s/ holds %zu programs: a 2023-07 package has one output validator", dirname,
                   nfound);
        goto out;
    }
    if (!custom)
        goto out;
    if (found[0].why) {
        e = refuse(k, "output validator %s: %s", found[0].rel, found[0].why);
        goto out;
    }
    if (!found[0].lang->crucible) {
        char names_buf[128];
        lang_names(names_buf, sizeof(names_buf));
        e = refuse(k, "output validator %s is %s, which crucible cannot run (it runs %s)",
                   found[0].rel, found[0].lang->name, names_buf);
        goto out;
    }
    if (k->scoring && !k->legacy) {
        e = refuse(k, "a 2023-07 scoring problem's output validator may award scores of its own "
                      "(score.txt), which task groups cannot carry");
        goto out;
    }
    k->validator = found[0];
    memset(&found[0], 0, sizeof(found[0]));
out:
    for (size_t i = 0; i < nfound; i++)
        program_release(&found[i]);
    if (!e && nfound > 1 && k->validator.rel) {
        char note[512];
        snprintf(note, sizeof(note),
                 "%s/ holds %zu validator programs; problemtools uses the first, %s.", dirname,
                 nfound, k->validator.rel);
        e = convert__add_note(k->task, note);
    }
    return e;
}

/* ---- the statement ------------------------------------------------------------------- */

/* statement_pick(k, &rel, &kind) — the statement problemtools would render in English (or
 * the first language there is): statement/problem.LANG.{md,tex} (2023-07), or
 * problem_statement/problem[.LANG].tex (legacy; .html too, as Code Jam's archive has).
 * rel is "" when there is none. */
static int statement_pick(struct package *k, char *rel, size_t size, const char **kind)
{
    static const char *const kinds_new[] = {"md", "tex"};
    static const char *const kinds_old[] = {"tex", "html"};
    const char *dir = k->legacy ? "problem_statement" : "statement";
    const char *const *kinds = k->legacy ? kinds_old : kinds_new;
    char **names = NULL;
    size_t n = 0;
    int e, best = INT_MAX;

    rel[0] = '\0';
    e = kattis_pkg_list(&k->pkg, dir, &names, &n, &k->err);
    if (e == -ENOENT || e == -ENOTDIR)
        return 0;
    if (e < 0)
        return e == -ENOMEM ? e : -EINVAL;
    for (size_t i = 0; i < n; i++) {
        const char *nm = names[i], *dot1, *ext;
        int rank;
        size_t langlen = 0;
        if (strncmp(nm, "problem.", 8) != 0)
            continue;
        ext = strrchr(nm, '.') + 1;
        dot1 = nm + 7;
        if (ext - 1 > dot1)
            langlen = (size_t)(ext - 1 - (dot1 + 1));
        if (!langlen && !k->legacy)
            continue; /* 2023-07 statements name their language */
        for (rank = 0; rank < 2 && strcmp(ext, kinds[rank]) != 0; rank++)
            ;
        if (rank == 2)
            continue;
        /* English first (legacy problem.tex is English), then other languages by name */
        if (rank + (langlen == 0 || (langlen == 2 && strncmp(dot1 + 1, "en", 2) == 0)
                        ? 0
                        : 10 + (int)i * 2) <
            best) {
            best = rank + (langlen == 0 || (langlen == 2 && strncmp(dot1 + 1, "en", 2) == 0)
                               ? 0
                               : 10 + (int)i * 2);
            snprintf(rel, size, "%s/%s", dir, nm);
            *kind = kinds[rank];
        }
    }
    kattis_names_free(names, n);
    return 0;
}

/* statement_limits(text, &cpu) — the largest "Time limit: N second(s)" of a statement's
 * text (0 when absent): the Code Jam archive's statements say so, their problem.yaml not. */
static void statement_limits(const char *text, double *cpu)
{
    static const char key[] = "Time limit:";

    *cpu = 0;
    for (const char *p = text; (p = strcasestr(p, key)); p++) {
        char *e;
        double v = strtod(p + strlen(key), &e);
        if (e == p + strlen(key) || !isfinite(v) || v <= 0)
            continue;
        e += strspn(e, " ");
        if (strncasecmp(e, "second", 6) == 0 && v > *cpu)
            *cpu = v;
    }
}

/* fence(b, text) — text in a ``` block, ending with a newline. */
static void fence(struct convert_buf *b, const char *text, size_t len)
{
    convert__buf_puts(b, "```\n");
    convert__buf_add(b, text, len);
    if (len && text[len - 1] != '\n')
        convert__buf_puts(b, "\n");
    convert__buf_puts(b, "```\n");
}

/* samples(k, b) — data/sample as problemtools' statements show it (numbered samples,
 * an interaction as its '>' (written) and '<' (read) lines). */
static int samples(struct package *k, struct convert_buf *b)
{
    for (size_t i = 0; i < k->data.nsamples; i++) {
        const char *nm = k->data.samples[i];
        char rel[PATH_MAX], head[160];
        char *in = NULL, *ans = NULL;
        size_t in_len, ans_len;
        int e;
        bool inter = strlen(nm) > 12 && strcmp(nm + strlen(nm) - 12, ".interaction") == 0;
        snprintf(rel, sizeof(rel), "data/sample/%s", nm);
        e = kattis_pkg_read(&k->pkg, rel, SAMPLE_MAX, &in, &in_len, &k->err);
        if (!e && !inter) {
            snprintf(rel, sizeof(rel), "data/sample/%.*s.ans", (int)(strlen(nm) - 3), nm);
            e = kattis_pkg_read(&k->pkg, rel, SAMPLE_MAX, &ans, &ans_len, &k->err);
        }
        if (e == -EFBIG) {
            /* the statement shows it; a prompt names it */
            snprintf(head, sizeof(head), "\nSample %zu: data/sample/%s (too large to show)\n",
                     i + 1, nm);
            convert__buf_puts(b, head);
            free(in);
            free(ans);
            continue;
        }
        if (e < 0) {
            free(in);
            free(ans);
            return e == -ENOMEM ? e : -EINVAL;
        }
        if (!util_utf8_valid(in, in_len) || (ans && !util_utf8_valid(ans, ans_len))) {
            free(in);
            free(ans);
            return refuse(k, "data/sample/%s: not valid UTF-8", nm);
        }
        if (inter) {
            snprintf(head, sizeof(head),
                     "\nSample Interaction %zu (lines starting with '>' are written by your "
                     "program, those starting with '<' are what it reads)\n",
                     i + 1);
            convert__buf_puts(b, head);
            fence(b, in, in_len);
        } else {
            snprintf(head, sizeof(head), "\nSample Input %zu\n", i + 1);
            convert__buf_puts(b, head);
            fence(b, in, in_len);
            snprintf(head, sizeof(head), "Sample Output %zu\n", i + 1);
            convert__buf_puts(b, head);
            fence(b, ans, ans_len);
        }
        free(in);
        free(ans);
    }
    return 0;
}

/* prompt(k, &text, &statement_cpu) — the statement as the model's prompt: Markdown and
 * TeX as written with the samples after them (problemtools renders them so), HTML as text
 * (the Code Jam pages have their samples in them). NULL text when there is no statement. */
static int prompt(struct package *k, char **text, double *statement_cpu)
{
    struct convert_buf b = {0};
    const char *kind = NULL, *name;
    char rel[PATH_MAX], *buf;
    size_t len;
    int e;

    *text = NULL;
    *statement_cpu = 0;
    if ((e = statement_pick(k, rel, sizeof(rel), &kind)) < 0)
        return e;
    if (!rel[0])
        return 0;
    if ((e = kattis_pkg_read(&k->pkg, rel, KATTIS_YAML_MAX, &buf, &len, &k->err)) < 0)
        return e == -ENOMEM ? e : -EINVAL;
    if (!util_utf8_valid(buf, len)) {
        free(buf);
        return refuse(k, "%s: not valid UTF-8", rel);
    }
    if (strcmp(kind, "html") == 0) {
        *text = convert_html_text(buf, len);
        free(buf);
        if (!*text)
            return -ENOMEM;
        statement_limits(*text, statement_cpu);
        return 0;
    }
    /* a Markdown statement has no title of its own: problemtools takes problem.yaml's name */
    name = json_string_value(yaml_doc_get(&k->yaml, "name.en"));
    if (!name)
        name = json_string_value(yaml_doc_get(&k->yaml, "name"));
    if (strcmp(kind, "md") == 0 && name) {
        convert__buf_puts(&b, "# ");
        convert__buf_puts(&b, name);
        convert__buf_puts(&b, "\n\n");
    }
    convert__buf_add(&b, buf, len);
    statement_limits(buf, statement_cpu);
    free(buf);
    if (b.len && b.s[b.len - 1] != '\n')
        convert__buf_puts(&b, "\n");
    if ((e = samples(k, &b)) < 0) {
        convert__buf_release(&b);
        return e;
    }
    if (b.oom) {
        convert__buf_release(&b);
        return -ENOMEM;
    }
    *text = b.s;
    return 0;
}

/* ---- tests --------------------------------------------------------------------------- */

/* test_flags(k, t) — the output-validator flags of data test t (a new string). */
static char *test_flags(const struct package *k, size_t t)
{
    return kattis_flags_join(k->legacy_flags, k->data.groups[k->data.tests[t].group].flags);
}

/* tests(k, &flags) — the task's tests from the plan, with their files, groups and flags;
 * flags is set to the flags most tests have (the checker's), the others carry their own.
 * 0, -EINVAL (k->err) or -ENOMEM. */
static int tests(struct package *k, char **common)
{
    json_t *list = json_array(), *counts = json_object(), *ins = NULL, *anss = NULL;
    size_t total = 0, max_ans = 0;
    long best = -1;
    char **flags = NULL;
    bool *used = NULL;
    double output_mb = OUTPUT_MB_DEFAULT;
    int e = 0;

    *common = NULL;
    if (!list || !counts || json_object_set_new(k->task, "tests", list)) {
        json_decref(counts);
        return -ENOMEM;
    }
    if (!(flags = calloc(k->data.ntests, sizeof(*flags))) || !(ins = json_array()) ||
        !(anss = json_array())) {
        e = -ENOMEM;
        goto out;
    }
    /* every test case's files and flags, read once (copies share them) */
    if (!(used = calloc(k->data.ntests + 1, sizeof(*used)))) {
        e = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < k->plan.ntests; i++)
        used[k->plan.tests[i].test] = true;
    for (size_t t = 0; t < k->data.ntests && !e; t++) {
        const struct kattis_test *kt = &k->data.tests[t];
        const char *files[2] = {kt->in, kt->ans};
        if (!used[t]) {
            if (json_array_append_new(ins, json_null()) || json_array_append_new(anss, json_null()))
                e = -ENOMEM;
            continue;
        }
        for (int f = 0; f < 2 && !e; f++) {
            char *buf;
            size_t len;
            e = kattis_pkg_read(&k->pkg, files[f], KATTIS_FILE_MAX, &buf, &len, &k->err);
            if (e < 0) {
                e = e == -ENOMEM ? e : -EINVAL;
                break;
            }
            total += len;
            if (f == 1 && len > max_ans)
                max_ans = len;
            if (!util_utf8_valid(buf, len)) {
                free(buf);
                e = refuse(k, "%s: not valid UTF-8", files[f]);
                break;
            }
            if (total > KATTIS_DATA_MAX) {
                free(buf);
                e = refuse(k, "the test files add up to more than %zu MiB", KATTIS_DATA_MAX >> 20);
                break;
            }
            e = json_array_append_new(f ? anss : ins, json_stringn(buf, len)) ? -ENOMEM : 0;
            free(buf);
        }
        if (!e && !(flags[t] = test_flags(k, t)))
            e = -ENOMEM;
    }
    if (e)
        goto out;
    /* problemtools: an answer file larger than the output limit is an error */
    if ((e = yaml_number(k, "limits.output", 0.001, 1024, &output_mb)) < 0)
        goto out;
    e = 0;
    if ((double)max_ans > output_mb * 1048576)
        e = refuse(k,
                   "an answer file (%zu bytes) is larger than the output limit (%g MiB): "
                   "problemtools refuses it",
                   max_ans, output_mb);
    if (e)
        goto out;

    /* the checker's flags: those of most tests (the first such, on a tie) */
    for (size_t i = 0; i < k->plan.ntests; i++) {
        const char *f = flags[k->plan.tests[i].test];
        json_t *c = json_object_get(counts, f);
        json_int_t n = c ? json_integer_value(c) + 1 : 1;
        if (json_object_set_new(counts, f, json_integer(n))) {
            e = -ENOMEM;
            goto out;
        }
    }
    for (size_t i = 0; i < k->plan.ntests; i++) {
        const char *f = flags[k->plan.tests[i].test];
        long n = (long)json_integer_value(json_object_get(counts, f));
        if (n > best) {
            best = n;
            *common = (char *)f;
        }
    }
    if (!(*common = strdup(*common ? *common : ""))) {
        e = -ENOMEM;
        goto out;
    }

    for (size_t i = 0; i < k->plan.ntests && !e; i++) {
        const struct kattis_plan_test *pt = &k->plan.tests[i];
        const struct kattis_test *kt = &k->data.tests[pt->test];
        json_t *t = json_object();
        char name[PATH_MAX * 2];
        if (pt->copy)
            snprintf(name, sizeof(name), "%s@%s", kt->name, pt->group);
        else
            snprintf(name, sizeof(name), "%s", kt->name);
        if (!t || json_array_append_new(list, t) ||
            json_object_set_new(t, "name", json_string(name)) ||
            json_object_set(t, "stdin", json_array_get(ins, pt->test)) ||
            json_object_set(t, "expected", json_array_get(anss, pt->test)) ||
            (pt->group && json_object_set_new(t, "group", json_string(pt->group))) ||
            (strcmp(flags[pt->test], *common) != 0 &&
             json_object_set_new(t, "flags", json_string(flags[pt->test]))))
            e = -ENOMEM;
    }
out:
    for (size_t t = 0; flags && t < k->data.ntests; t++)
        free(flags[t]);
    free(flags);
    free(used);
    json_decref(ins);
    json_decref(anss);
    json_decref(counts);
    if (e) {
        free(*common);
        *common = NULL;
    }
    return e;
}

/* check_default_flags(k) — every test's flags are ones the default validator takes. */
static int check_default_flags(struct package *k)
{
    struct errbuf ferr;

    if (kattis_flags_check(k->legacy_flags, &ferr) < 0) {
        char w[64];
        return refuse(k, "%s: %s",
                      at(k,
                         yaml_doc_get(&k->yaml, "validator_flags") ? "validator_flags"
                                                                   : "output_validator_flags",
                         w, sizeof(w)),
                      ferr.msg);
    }
    for (size_t g = 0; g < k->data.ngroups; g++) {
        if (kattis_flags_check(k->data.groups[g].flags, &ferr) < 0) {
            const char *w = json_string_value(
                json_object_get(k->data.groups[g].origin, "output_validator_flags"));
            return refuse(k, "%s: %s", w ? w : "data/testdata.yaml", ferr.msg);
        }
    }
    return 0;
}

/* ---- submissions, the reference, the time limit --------------------------------------- */

/* submissions(k) — submissions/accepted: the one-file programs among them (a directory is a
 * program of several files, which a task's solution cannot be). */
static int submissions(struct package *k)
{
    char **names = NULL, rel[PATH_MAX];
    size_t n = 0;
    int e;

    e = kattis_pkg_list(&k->pkg, "submissions/accepted", &names, &n, &k->err);
    if (e == -ENOENT || e == -ENOTDIR)
        return 0;
    if (e < 0)
        return e == -ENOMEM ? e : -EINVAL;
    if (n && !(k->subs = calloc(n, sizeof(*k->subs)))) {
        kattis_names_free(names, n);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n && !e; i++) {
        struct stat st;
        snprintf(rel, sizeof(rel), "submissions/accepted/%s", names[i]);
        if ((e = kattis_pkg_stat(&k->pkg, rel, &st, &k->err)) < 0)
            break;
        if (!S_ISREG(st.st_mode))
            continue;
        if ((e = program_load(k, &k->subs[k->nsubs], rel)) < 0)
            break;
        k->nsubs++;
    }
    kattis_names_free(names, n);
    return e < 0 ? (e == -ENOMEM ? e : -EINVAL) : 0;
}

/* usable(s) — can crucible run this submission? */
static bool usable(const struct program *s)
{
    return s->lang && s->lang->crucible && !s->why && json_object_size(s->files) == 1;
}

static const char *sub_code(const struct program *s)
{
    return json_string_value(json_object_iter_value(json_object_iter(s->files)));
}

/* reference(k, ok) — the reference: of the usable accepted submissions (and, when ok is
 * given, those it marks), the first in reference_order's languages, then by file name. */
static const struct program *reference(const struct package *k, const bool *ok)
{
    for (size_t l = 0; l < sizeof(reference_order) / sizeof(reference_order[0]); l++)
        for (size_t i = 0; i < k->nsubs; i++)
            if (usable(&k->subs[i]) && (!ok || ok[i]) &&
                strcmp(k->subs[i].lang->crucible, reference_order[l]) == 0)
                return &k->subs[i];
    return NULL;
}

/* calibrate(k, &seconds, ok, which, size, why, why_size) — problemtools' way to a time
 * limit: run every usable accepted submission (under a generous limit) and take the slowest
 * test of the slowest one. 1 with seconds and which set; 0 when no submission could be
 * measured (why says so; a note on the task names each submission that failed); -ENOMEM.
 * ok[i] marks the submissions that were accepted. */
static int calibrate(struct package *k, double *seconds, bool *ok, char *which, size_t size,
                     char *why, size_t why_size)
{
    const struct convert_opts *o = k->r->o;
    json_t *copy = json_deep_copy(k->task), *limits;
    struct errbuf terr = {{0}};
    struct task t;
    char note[1024];
    int found = 0, e = 0;

    memset(&t, 0, sizeof(t));
    *seconds = 0;
    limits = copy ? json_object_get(copy, "limits") : NULL;
    if (!copy || !limits || set_number(limits, "cpu_time", CALIBRATE_CPU) ||
        set_number(limits, "wall_time", 2 * CALIBRATE_CPU)) {
        json_decref(copy);
        return -ENOMEM;
    }
    json_object_del(copy, "reference");
    snprintf(why, why_size, "no accepted submission was accepted in calibration");
    if (task_from_json(copy, &t, &terr) < 0) {
        snprintf(why, why_size, "calibration could not run (the task does not load: %s)", terr.msg);
        goto out;
    }
    for (size_t i = 0; i < k->nsubs && !e; i++) {
        struct verify_opts vo;
        struct verify_result vr;
        double slowest = 0;
        if (!usable(&k->subs[i]))
            continue;
        verify_opts_default(&vo);
        vo.lang = lang_find(k->subs[i].lang->crucible);
        vo.image = o->image;
        memset(&vr, 0, sizeof(vr));
        if (verify_run(o->rt, &t, sub_code(&k->subs[i]), &vo, &vr) < 0 ||
            vr.verdict != VERDICT_ACCEPTED) {
            snprintf(note, sizeof(note),
                     "Calibration: %s was not accepted (%s%s%.200s), so it does not count.",
                     k->subs[i].rel, verdict_name(vr.verdict), vr.message[0] ? ": " : "",
                     vr.message);
            e = convert__add_note(k->task, note);
            verify_result_release(&vr);
            continue;
        }
        for (size_t j = 0; j < vr.total; j++)
            if (vr.tests[j].run.cpu_time > slowest)
                slowest = vr.tests[j].run.cpu_time;
        verify_result_release(&vr);
        ok[i] = true;
        if (!found || slowest > *seconds) {
            *seconds = slowest;
            snprintf(which, size, "%s", k->subs[i].rel);
        }
        found = 1;
    }
out:
    task_release(&t);
    json_decref(copy);
    return e < 0 ? e : found;
}

/* limits(k, statement_cpu, ok, summary) — the task's limits, the time limit's origin
 * tagged and noted: .timelimit, 2023-07 limits.time_limit, calibration, the statement, or
 * the default. 0, -EINVAL (k->err) or -ENOMEM. */
static int limits(struct package *k, double statement_cpu, bool *ok, char *summary, size_t size)
{
    json_t *lim = json_object();
    double cpu = 0, mem = MEMORY_MB_DEFAULT, out = OUTPUT_MB_DEFAULT, mult, res = 1, slowest;
    enum origin from = FROM_DEFAULT;
    char note[1024], tag[64], which[PATH_MAX] = "", why[600] = "", *text;
    struct stat st;
    size_t len;
    int e;

    if (!lim || json_object_set_new(k->task, "limits", lim))
        return -ENOMEM;
    if ((e = yaml_number(k, "limits.memory", 8, MEMORY_MB_MAX, &mem)) < 0 ||
        (e = yaml_number(k, "limits.output", 0.001, 1024, &out)) < 0)
        return e;
    if (k->legacy) {
        mult = 5;
        if ((e = yaml_number(k, "limits.time_multiplier", 0.001, 1000, &mult)) < 0)
            return e;
    } else {
        mult = 2;
        if ((e = yaml_number(k, "limits.time_multipliers.ac_to_time_limit", 0.001, 1000, &mult)) <
                0 ||
            (e = yaml_number(k, "limits.time_resolution", 0.001, 60, &res)) < 0)
            return e;
    }
    if ((e = exists(k, ".timelimit", &st)) < 0)
        return -EINVAL;
    if (e && S_ISREG(st.st_mode)) {
        if ((e = kattis_pkg_read(&k->pkg, ".timelimit", 4096, &text, &len, &k->err)) < 0)
            return e == -ENOMEM ? e : -EINVAL;
        if (!kattis_timelimit_parse(text, &cpu) || cpu > CPU_TIME_MAX) {
            free(text);
            return refuse(k, ".timelimit: want one number of seconds (at most %g)", CPU_TIME_MAX);
        }
        free(text);
        from = FROM_FILE;
        snprintf(note, sizeof(note), "Time limit %g s from the package's .timelimit file.", cpu);
    } else if (!k->legacy && yaml_doc_get(&k->yaml, "limits.time_limit")) {
        if ((e = yaml_number(k, "limits.time_limit", 0.001, CPU_TIME_MAX, &cpu)) < 0)
            return e;
        from = FROM_YAML;
        snprintf(note, sizeof(note), "Time limit %g s from problem.yaml limits.time_limit.", cpu);
    } else {
        if (k->legacy && yaml_doc_get(&k->yaml, "limits.time_limit") &&
            (e = convert__add_note(k->task, "problem.yaml's limits.time_limit is not a legacy "
                                            "key: problemtools ignores it, and so does this "
                                            "conversion.")) < 0)
            return e;
        e = 0;
        if (k->r->o->rt && reference(k, NULL))
            e = calibrate(k, &slowest, ok, which, sizeof(which), why, sizeof(why));
        if (e < 0)
            return e;
        if (e == 1) {
            cpu = kattis_time_limit_round(slowest, mult, res);
            from = FROM_CALIBRATION;
            snprintf(note, sizeof(note),
                     "Time limit %g s calibrated as problemtools does: %g x %.3f s (the slowest "
                     "test of the slowest accepted submission, %s), rounded up to a multiple of "
                     "%g s.",
                     cpu, mult, slowest, which, res);
        } else if (statement_cpu > 0 && statement_cpu <= CPU_TIME_MAX) {
            cpu = statement_cpu;
            from = FROM_STATEMENT;
            snprintf(note, sizeof(note), "Time limit %g s from the statement's \"Time limit\".",
                     cpu);
        } else {
            if (!reference(k, NULL))
                snprintf(why, sizeof(why), "no accepted submission crucible can run");
            else if (!k->r->o->rt)
                snprintf(why, sizeof(why), "calibration was off (--no-calibrate)");
            cpu = CPU_TIME_DEFAULT;
            from = FROM_DEFAULT;
            snprintf(note, sizeof(note),
                     "Time limit %g s is crucible's default: no .timelimit, no time_limit in "
                     "problem.yaml, and %s.",
                     cpu, why);
        }
    }
    if (set_number(lim, "cpu_time", cpu) || set_number(lim, "wall_time", 2 * cpu + 1) ||
        set_number(lim, "memory_mb", floor(mem)) || set_number(lim, "output_kb", ceil(out * 1024)))
        return -ENOMEM;
    k->origin = from;
    snprintf(tag, sizeof(tag), "time-limit:%s", origin_names[from]);
    if ((e = convert__add_tag(k->task, tag)) < 0 || (e = convert__add_note(k->task, note)) < 0)
        return e;
    snprintf(summary, size, "time limit %g s (%s%s%s), memory %g MiB", cpu, origin_names[from],
             which[0] ? ": " : "", which, floor(mem));
    return 0;
}

/* ---- one package --------------------------------------------------------------------- */

static int build(struct package *k, char *summary, size_t size)
{
    struct kattis_data_opts dopts = {0};
    const struct program *ref;
    char *text = NULL, *flags = NULL, lim[PATH_MAX + 128] = "", tag[64];
    bool *ok = NULL;
    double statement_cpu = 0;
    json_t *j;
    int e;

    if (!(k->task = json_object()))
        return -ENOMEM;
    if ((e = problem_yaml(k)) < 0 || (e = validator(k)) < 0)
        return e;

    dopts.scoring = k->scoring;
    dopts.interactive = k->interactive;
    if (k->legacy) {
        dopts.legacy = yaml_doc_get(&k->yaml, "grading");
        dopts.legacy_line = yaml_doc_line(&k->yaml, "grading");
        if (dopts.legacy && !json_is_object(dopts.legacy))
            return refuse(k, "problem.yaml:%u: grading must be a mapping", dopts.legacy_line);
    }
    if ((e = kattis_data_load(&k->pkg, &dopts, &k->data, &k->err)) < 0)
        return e == -ENOMEM ? e : -EINVAL;
    if (!k->validator.rel && (e = check_default_flags(k)) < 0)
        return e;
    if ((e = kattis_plan_make(&k->data, k->scoring, &k->plan, &k->err)) < 0)
        return e == -ENOMEM ? e : -EINVAL;
    if ((e = prompt(k, &text, &statement_cpu)) < 0 || (e = submissions(k)) < 0)
        goto out;

    e = -ENOMEM;
    if (json_object_set_new(k->task, "id", json_string(k->id)) ||
        json_object_set_new(k->task, "source", json_string("kattis")) ||
        json_object_set_new(k->task, "language", json_string("python")) ||
        json_object_set_new(k->task, "harness",
                            json_string(k->interactive ? "interactive" : "stdio")) ||
        (text && json_object_set_new(k->task, "prompt", json_string(text))))
        goto out;
    if ((e = tests(k, &flags)) < 0)
        goto out;
    e = -ENOMEM;
    if (k->interactive) {
        j = program_json(&k->validator, NULL, flags, k->validator.dir);
        if (!j || json_object_set_new(k->task, "interactor", j))
            goto out;
    } else if (k->validator.rel) {
        json_t *c = program_json(&k->validator, "validator", flags, k->validator.dir);
        if (!c || json_object_set_new(k->task, "checker", c))
            goto out;
    } else {
        json_t *c = json_object();
        if (!c || json_object_set_new(k->task, "checker", c) ||
            json_object_set_new(c, "type", json_string("kattis")) ||
            json_object_set_new(c, "flags", json_string(flags)))
            goto out;
    }
    if (k->plan.ngroups) {
        json_t *groups = json_array();
        if (!groups || json_object_set_new(k->task, "groups", groups))
            goto out;
        for (size_t i = 0; i < k->plan.ngroups; i++) {
            json_t *g = json_object();
            if (!g || json_array_append_new(groups, g) ||
                json_object_set_new(g, "name", json_string(k->plan.groups[i].name)) ||
                set_number(g, "score", k->plan.groups[i].score))
                goto out;
        }
    }
    snprintf(tag, sizeof(tag), "kattis:%s", k->scoring ? "scoring" : "pass-fail");
    if (convert__add_tag(k->task, "source:kattis") || convert__add_tag(k->task, tag) ||
        (k->interactive && convert__add_tag(k->task, "kattis:interactive")) ||
        convert__add_tag(k->task, k->legacy ? "format:legacy" : "format:2023-07") ||
        convert__add_tag(k->task, k->interactive     ? "validation:interactive"
                                  : k->validator.rel ? "validation:custom"
                                                     : "validation:default"))
        goto out;
    if (k->nsubs && !(ok = calloc(k->nsubs, sizeof(*ok))))
        goto out;
    if ((e = limits(k, statement_cpu, ok, lim, sizeof(lim))) < 0)
        goto out;
    e = -ENOMEM;
    ref = reference(k, k->origin == FROM_CALIBRATION ? ok : NULL);
    if (ref) {
        char note[PATH_MAX + 128];
        if (json_object_set_new(k->task, "language", json_string(ref->lang->crucible)) ||
            json_object_set_new(k->task, "reference", json_string(sub_code(ref))))
            goto out;
        snprintf(note, sizeof(note), "The reference is %s (%s).", ref->rel, ref->lang->name);
        if (convert__add_note(k->task, note))
            goto out;
    } else if (convert__add_note(k->task, "No accepted submission in a language crucible runs: "
                                          "no reference; the language is only a default.")) {
        goto out;
    }
    if (k->plan.note[0] && convert__add_note(k->task, k->plan.note))
        goto out;
    if (k->pkg.stand_ins) {
        char note[512];
        snprintf(note, sizeof(note),
                 "%u file%s of the package %s git's stand-in for a symlink (a checkout with "
                 "core.symlinks=false writes the link's target as the file's text, e.g. %s); "
                 "each was followed as the symlink it stands for.",
                 k->pkg.stand_ins, k->pkg.stand_ins == 1 ? "" : "s",
                 k->pkg.stand_ins == 1 ? "is" : "are", k->pkg.stand_in);
        if (convert__add_note(k->task, note))
            goto out;
    }
    snprintf(summary, size, "%s%s, %s, %zu test%s%s%s%s, %s%s%s",
             k->scoring ? "scoring" : "pass-fail", k->interactive ? " interactive" : "",
             k->interactive     ? "interactor"
             : k->validator.rel ? "custom validator"
                                : "default validator",
             k->plan.ntests, k->plan.ntests == 1 ? "" : "s", k->plan.ngroups ? " in groups" : "",
             k->plan.dropped ? " (some left out, see notes)" : "",
             k->pkg.stand_ins ? " (symlink stand-ins followed, see notes)" : "", lim,
             ref ? ", reference " : ", no reference", ref ? ref->rel : "");
    e = 0;
out:
    free(ok);
    free(flags);
    free(text);
    return e;
}

/* convert_package(r, dir, id) — one problem package; a bad one is reported and skipped. */
static int convert_package(struct convert_run *r, const char *dir, const char *id)
{
    struct package k = {.r = r, .dir = dir, .id = id, .pkg = {.dirfd = -1}};
    char summary[PATH_MAX + 512] = "";
    int e;

    if ((e = kattis_pkg_open(&k.pkg, dir, &k.err)) == 0)
        e = build(&k, summary, sizeof(summary));
    if (e == -EINVAL || (e < 0 && e != -ENOMEM)) {
        convert__bad(r, dir, "%s; problem '%s' skipped", k.err.msg[0] ? k.err.msg : strerror(-e),
                     id);
        e = 0;
    } else if (e == 0) {
        if (r->errs)
            fprintf(r->errs, "%s: %s\n", id, summary);
        e = convert__finish(r, k.task, dir);
        k.task = NULL;
    }
    json_decref(k.task);
    for (size_t i = 0; i < k.nsubs; i++)
        program_release(&k.subs[i]);
    free(k.subs);
    program_release(&k.validator);
    kattis_plan_release(&k.plan);
    kattis_data_release(&k.data);
    yaml_doc_release(&k.yaml);
    kattis_pkg_close(&k.pkg);
    return e;
}

/* ---- the tree ------------------------------------------------------------------------ */

static bool is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int not_hidden(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

/* walk(r, root, rel, depth, &found) — every package under root/rel, in byte order. Only the
 * tree's own directories are searched: a symlink is taken when it leads to a package (a
 * collection of links to packages), never descended through, since it may lead anywhere — back
 * up the tree, or to the host's `/`, whose whole filesystem would then be searched. */
static int walk(struct convert_run *r, const char *root, const char *rel, int depth, int *found)
{
    struct dirent **ents;
    char dir[PATH_MAX], sub[PATH_MAX], id[PATH_MAX + 8];
    int n, e = 0;

    snprintf(dir, sizeof(dir), "%s/%s", root, rel);
    n = scandir(dir, &ents, not_hidden, by_name);
    if (n < 0)
        return 0; /* an unreadable corner of the tree is not a package */
    for (int i = 0; i < n; i++) {
        struct stat lst;
        snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", ents[i]->d_name);
        snprintf(dir, sizeof(dir), "%s/%s", root, sub);
        if (strlen(root) + strlen(rel) + strlen(ents[i]->d_name) + PATH_SLACK > PATH_MAX) {
            convert__bad(r, dir, "path too long; skipped");
        } else if (!e && lstat(dir, &lst) == 0 && (S_ISDIR(lst.st_mode) || S_ISLNK(lst.st_mode)) &&
                   is_dir(dir)) {
            char yaml[PATH_MAX + 16];
            snprintf(yaml, sizeof(yaml), "%s/problem.yaml", dir);
            if (is_file(yaml)) {
                (*found)++;
                snprintf(id, sizeof(id), "kattis/%s", sub);
                e = convert_package(r, dir, id);
            } else if (S_ISDIR(lst.st_mode) && depth < KATTIS_DEPTH) {
                e = walk(r, root, sub, depth + 1, found);
            }
        }
        free(ents[i]);
    }
    free(ents);
    return e;
}

int convert__kattis(struct convert_run *r, const char *path, struct errbuf *err)
{
    char root[PATH_MAX], yaml[PATH_MAX + 16], id[PATH_MAX + 8];
    const char *base;
    struct stat st;
    int found = 0, e;

    if (stat(path, &st) < 0) {
        e = -errno;
        errbuf_set(err, "cannot open '%s': %s", path, strerror(-e));
        return e;
    }
    if (!S_ISDIR(st.st_mode)) {
        errbuf_set(err, "'%s' is not a directory (want a problem package or a tree of them)", path);
        return -ENOTDIR;
    }
    if (strlen(path) + PATH_SLACK > PATH_MAX) {
        errbuf_set(err, "'%s': path too long", path);
        return -ENAMETOOLONG;
    }
    snprintf(root, sizeof(root), "%s", path);
    while (strlen(root) > 1 && root[strlen(root) - 1] == '/')
        root[strlen(root) - 1] = '\0';
    snprintf(yaml, sizeof(yaml), "%s/problem.yaml", root);
    if (is_file(yaml)) {
        char real[PATH_MAX];
        if (!realpath(root, real))
            snprintf(real, sizeof(real), "%s", root);
        base = strrchr(real, '/');
        snprintf(id, sizeof(id), "kattis/%s", base && base[1] ? base + 1 : real);
        return convert_package(r, root, id);
    }
    e = walk(r, root, "", 0, &found);
    if (!e && !found) {
        errbuf_set(err, "no problem package (a directory with problem.yaml) under '%s'", path);
        return -ENOENT;
    }
    return e;
}
