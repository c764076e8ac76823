/*
 * kattis_data.c — a Kattis package's files and test data (kattis.h): reading beneath the
 * package directory, the data/ tree with its testdata.yaml settings as problemtools'
 * TestCaseGroup builds it, and the reduction of problemtools' grading to task groups.
 */
#include "library/kattis.h"
#include "library/yaml_doc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TESTDATA_MAX ((size_t)1 << 20) /* bytes of one testdata.yaml */

/* ---- the package --------------------------------------------------------------------- */

int kattis_pkg_open(struct kattis_pkg *p, const char *dir, struct errbuf *err)
{
    memset(p, 0, sizeof(*p));
    p->dir = dir;
    p->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (p->dirfd < 0) {
        int e = -errno;
        errbuf_set(err, "cannot open '%s': %s", dir, strerror(-e));
        return e;
    }
    return 0;
}

void kattis_pkg_close(struct kattis_pkg *p)
{
    if (p->dirfd >= 0)
        close(p->dirfd);
    p->dirfd = -1;
}

/* inside(root, path) — is path root itself or below it (both canonical)? */
static bool inside(const char *root, const char *path)
{
    size_t n = strlen(root);

    return strncmp(root, path, n) == 0 && (path[n] == '/' || path[n] == '\0' || n == 1);
}

/* beneath(p, rel, flags) — open rel under the package, never resolving outside it: openat2
 * with RESOLVE_BENEATH, or (kernels before 5.6) the canonical path checked against the
 * package's. An fd, or -errno (-EXDEV: outside the package or through an absolute link). */
static int beneath(const struct kattis_pkg *p, const char *rel, int flags)
{
    struct open_how how = {
        .flags = (uint64_t)(flags | O_CLOEXEC),
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
    };
    char root[PATH_MAX], path[PATH_MAX + 8], real[PATH_MAX], self[64];
    long fd;
    int rc;

    /* EAGAIN: a rename or mount elsewhere raced with a ".." step; the kernel asks to retry */
    for (int tries = 0; tries < 1000; tries++) {
        fd = syscall(SYS_openat2, p->dirfd, rel, &how, sizeof(how));
        if (fd >= 0 || errno != EAGAIN)
            break;
    }
    if (fd >= 0)
        return (int)fd;
    if (errno != ENOSYS)
        return -errno;
    snprintf(self, sizeof(self), "/proc/self/fd/%d", p->dirfd);
    rc = (int)readlink(self, root, sizeof(root) - 1);
    if (rc < 0)
        return -errno;
    root[rc] = '\0';
    if (rel[0] == '/')
        return -EXDEV;
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    if (!realpath(path, real))
        return -errno;
    if (!inside(root, real))
        return -EXDEV;
    fd = open(real, flags | O_CLOEXEC);
    return fd >= 0 ? (int)fd : -errno;
}

/* pkg_error(p, rel, e, err) — err says why rel cannot be read; returns e. */
static int pkg_error(const struct kattis_pkg *p, const char *rel, int e, struct errbuf *err)
{
    char path[PATH_MAX + 8], real[PATH_MAX], root[PATH_MAX];

    if (e == -EXDEV) {
        snprintf(path, sizeof(path), "%s/%s", p->dir, rel);
        if (realpath(path, real) && realpath(p->dir, root) && inside(root, real))
            errbuf_set(err,
                       "'%s' is reached through an absolute symlink (problemtools wants "
                       "relative links within the package)",
                       rel);
        else if (realpath(path, real))
            errbuf_set(err, "'%s' is a symlink that leaves the package (to '%s')", rel, real);
        else
            errbuf_set(err, "'%s' is a symlink that leaves the package", rel);
    } else if (e == -ELOOP) {
        errbuf_set(err, "'%s': a symlink loop (too many levels of symbolic links)", rel);
    } else if (e == -ENOENT) {
        errbuf_set(err, "'%s' does not exist (a dangling symlink?)", rel);
    } else {
        errbuf_set(err, "cannot read '%s': %s", rel, strerror(-e));
    }
    return e;
}

int kattis_pkg_stat(const struct kattis_pkg *p, const char *rel, struct stat *st,
                    struct errbuf *err)
{
    int fd = beneath(p, rel, O_PATH), e = 0;

    if (fd < 0)
        return fd == -ENOENT ? fd : pkg_error(p, rel, fd, err);
    if (fstat(fd, st) < 0)
        e = pkg_error(p, rel, -errno, err);
    close(fd);
    return e;
}

/* stand_in_target(rel, buf, len, out, size) — is buf (the content of rel) a git symlink
 * stand-in? Then out is the package-relative path it names (not yet checked). */
static bool stand_in_target(const char *rel, const char *buf, size_t len, char *out, size_t size)
{
    const char *slash = strrchr(rel, '/');
    size_t dirlen = slash ? (size_t)(slash - rel) : 0;

    if (len == 0 || len > 255 || buf[0] == '/' || memchr(buf, '/', len) == NULL)
        return false;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)buf[i] < 0x21 || buf[i] == 0x7f)
            return false; /* no whitespace, no newline, no control characters */
    if (dirlen + len + 2 > size)
        return false;
    snprintf(out, size, "%.*s%s%.*s", (int)dirlen, rel, dirlen ? "/" : "", (int)len, buf);
    return true;
}

/* pkg_read(p, rel, max, buf, len, err, depth) — kattis_pkg_read, depth stand-ins deep. */
static int pkg_read(struct kattis_pkg *p, const char *rel, size_t max, char **buf, size_t *len,
                    struct errbuf *err, int depth)
{
    char target[PATH_MAX];
    struct stat st;
    int fd = beneath(p, rel, O_RDONLY | O_NONBLOCK), e;

    *buf = NULL;
    *len = 0;
    if (fd < 0)
        return fd == -ENOENT ? fd : pkg_error(p, rel, fd, err);
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errbuf_set(err, "'%s' is not a regular file", rel);
        return -EINVAL;
    }
    e = util_read_fd(fd, buf, len, max);
    close(fd);
    if (e == -EFBIG)
        errbuf_set(err, "'%s' is larger than %zu bytes", rel, max);
    else if (e < 0)
        pkg_error(p, rel, e, err);
    if (e < 0 || !stand_in_target(rel, *buf, *len, target, sizeof(target)))
        return e;
    /* a stand-in is followed when it names a regular file beneath the package; one that
     * leads out of it is refused as the symlink would be; otherwise it is plain text */
    /* on a refusal the text read is freed here: callers free *buf only on success (it was
     * leaked, found by fuzz/kattis_package) */
    e = kattis_pkg_stat(p, target, &st, err);
    if (e == -EXDEV || e == -ELOOP) {
        errbuf_set(err,
                   "'%s' stands for a symlink (git core.symlinks=false) to '%.*s', "
                   "which leaves the package",
                   rel, (int)*len, *buf);
        goto out_free;
    }
    if (e < 0 || !S_ISREG(st.st_mode)) {
        err->msg[0] = '\0';
        return 0;
    }
    if (depth >= 8) {
        errbuf_set(err, "'%s': a chain of more than 8 symlink stand-ins", rel);
        goto out_free;
    }
    if (p->stand_ins++ == 0)
        snprintf(p->stand_in, sizeof(p->stand_in), "%s", rel);
    free(*buf);
    return pkg_read(p, target, max, buf, len, err, depth + 1);

out_free:
    free(*buf);
    *buf = NULL;
    *len = 0;
    return -EINVAL;
}

int kattis_pkg_read(struct kattis_pkg *p, const char *rel, size_t max, char **buf, size_t *len,
                    struct errbuf *err)
{
    return pkg_read(p, rel, max, buf, len, err, 0);
}

static int by_strcmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void kattis_names_free(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

int kattis_pkg_list(const struct kattis_pkg *p, const char *rel, char ***names, size_t *n,
                    struct errbuf *err)
{
    int fd = beneath(p, rel, O_RDONLY | O_DIRECTORY);
    size_t cap = 0;
    struct dirent *de;
    DIR *dir;

    *names = NULL;
    *n = 0;
    if (fd < 0)
        return fd == -ENOENT || fd == -ENOTDIR ? fd : pkg_error(p, rel, fd, err);
    dir = fdopendir(fd);
    if (!dir) {
        close(fd);
        return pkg_error(p, rel, -errno, err);
    }
    while ((de = readdir(dir))) {
        if (de->d_name[0] == '.')
            continue;
        if (*n == cap) {
            char **v = realloc(*names, (cap ? cap * 2 : 32) * sizeof(*v));
            if (!v)
                goto out_nomem;
            *names = v;
            cap = cap ? cap * 2 : 32;
        }
        if (!((*names)[*n] = strdup(de->d_name)))
            goto out_nomem;
        (*n)++;
    }
    closedir(dir);
    if (*n)
        qsort(*names, *n, sizeof(**names), by_strcmp);
    return 0;
out_nomem:
    closedir(dir);
    kattis_names_free(*names, *n);
    *names = NULL;
    *n = 0;
    return -ENOMEM;
}

/* ---- data/ ----------------------------------------------------------------------------- */

/* problemtools' config/testdata.yaml: what a group has when nothing sets a key. */
static const struct {
    const char *key, *value;
    bool number;
} testdata_defaults[] = {
    {"input_validator_flags", "", false}, {"output_validator_flags", "", false},
    {"on_reject", "break", false},        {"grading", "default", false},
    {"grader_flags", "", false},          {"accept_score", "1", true},
    {"reject_score", "0", true},          {"range", "-inf +inf", false},
};

/* Keys only scoring problems may set (problemtools' _SCORING_ONLY_KEYS). */
static const char *const scoring_keys[] = {"accept_score", "reject_score", "range"};

struct loader {
    struct kattis_pkg *p;
    const struct kattis_data_opts *o;
    struct kattis_data *d;
    struct errbuf *err;
    struct {
        dev_t dev;
        ino_t ino;
        const char *rel;
    } open[KATTIS_DEPTH_MAX + 2]; /* the directories being walked, outermost first */
    size_t depth;
};

/* where(g, key) — where the group's key was set, for messages. */
static const char *where(const struct kattis_group *g, const char *key)
{
    const char *w = json_string_value(json_object_get(g->origin, key));

    return w ? w : "data/testdata.yaml";
}

/* number_value(v, &x) — a YAML number, or a string holding one (pydantic's lax mode and
 * the default grader's float() both take "50"). */
static bool number_value(const json_t *v, double *x)
{
    char *end;

    if (json_is_number(v)) {
        *x = json_number_value(v);
        return true;
    }
    if (!json_is_string(v))
        return false;
    *x = strtod(json_string_value(v), &end);
    return end != json_string_value(v) && *end == '\0' && !isnan(*x);
}

/* text_value(g, key, &s, err) — a string setting (null is ""). 0 or -EINVAL. */
static int text_value(const struct kattis_group *g, const char *key, const char **s,
                      struct errbuf *err)
{
    json_t *v = json_object_get(g->config, key);

    if (!v || json_is_null(v)) {
        *s = "";
        return 0;
    }
    if (!json_is_string(v))
        return errbuf_set(err, "%s: '%s' must be a string", where(g, key), key);
    *s = json_string_value(v);
    return 0;
}

/* interpret(L, g) — the group's flags and grading from its effective config. */
static int interpret(struct loader *L, struct kattis_group *g)
{
    struct kattis_grading *gr = &g->grading;
    const char *s, *p;
    int e;

    if (json_object_get(g->config, "output_validator_args"))
        return errbuf_set(L->err,
                          "%s: 'output_validator_args' is not read by problemtools (it passes "
                          "output_validator_flags): the validator would run without them",
                          where(g, "output_validator_args"));
    if ((e = text_value(g, "output_validator_flags", &s, L->err)) < 0)
        return e;
    if (!(g->flags = kattis_flags_join(s, NULL)))
        return -ENOMEM;
    if ((e = text_value(g, "on_reject", &s, L->err)) < 0)
        return e;
    if (strcmp(s, "break") != 0 && strcmp(s, "continue") != 0)
        return errbuf_set(L->err, "%s: on_reject must be 'break' or 'continue', not '%s'",
                          where(g, "on_reject"), s);
    gr->on_reject_break = strcmp(s, "break") == 0;
    if ((e = text_value(g, "grading", &s, L->err)) < 0)
        return e;
    if (strcmp(s, "custom") == 0)
        return errbuf_set(L->err,
                          "%s: grading: custom (a custom grader program) is not supported: "
                          "task groups can only sum, min or max their tests' scores",
                          where(g, "grading"));
    if (strcmp(s, "default") != 0)
        return errbuf_set(L->err, "%s: grading must be 'default' or 'custom', not '%s'",
                          where(g, "grading"), s);
    if ((e = text_value(g, "grader_flags", &s, L->err)) < 0)
        return e;
    gr->score = KATTIS_SUM;
    for (p = s; *p;) {
        size_t n;
        p += strspn(p, " \t\n");
        n = strcspn(p, " \t\n");
#define FLAG(w) (n == strlen(w) && strncmp(p, w, n) == 0)
        if (FLAG("sum"))
            gr->score = KATTIS_SUM;
        else if (FLAG("avg"))
            gr->score = KATTIS_AVG;
        else if (FLAG("min"))
            gr->score = KATTIS_MIN;
        else if (FLAG("max"))
            gr->score = KATTIS_MAX;
        else if (FLAG("always_accept"))
            gr->always_accept = true;
        else if (FLAG("worst_error") || FLAG("no_errors") || FLAG("first_error"))
            gr->always_accept = false;
        else if (FLAG("ignore_sample"))
            gr->ignore_sample = true;
        else if (FLAG("accept_if_any_accepted"))
            gr->any_accepted = true;
#undef FLAG
        p += n;
    }
    /* problemtools calls ignore_sample below data/ an error, yet judges by it (a group
     * inherits data/'s grader_flags unless it sets its own, as the Code Jam archive's
     * data/sample does): its default grader then keeps a group's last child */
    if (gr->ignore_sample && gr->on_reject_break && g == &L->d->groups[0])
        return errbuf_set(L->err,
                          "%s: grader_flags ignore_sample with on_reject: break may leave the "
                          "secret data unjudged (problemtools refuses it)",
                          where(g, "on_reject"));
    gr->range_min = -INFINITY;
    gr->range_max = INFINITY;
    if (!L->o->scoring)
        return 0;
    if (!number_value(json_object_get(g->config, "accept_score"), &gr->accept_score))
        return errbuf_set(L->err, "%s: accept_score must be a number", where(g, "accept_score"));
    if (!number_value(json_object_get(g->config, "reject_score"), &gr->reject_score))
        return errbuf_set(L->err, "%s: reject_score must be a number", where(g, "reject_score"));
    if ((e = text_value(g, "range", &s, L->err)) < 0)
        return e;
    {
        char *end, *end2;
        gr->range_min = strtod(s, &end);
        gr->range_max = strtod(end, &end2);
        if (end == s || end2 == end || *(end2 + strspn(end2, " \t")) || isnan(gr->range_min) ||
            isnan(gr->range_max) || gr->range_min > gr->range_max)
            return errbuf_set(L->err, "%s: range must be two numbers, low then high, not '%s'",
                              where(g, "range"), s);
    }
    return 0;
}

/* configure(L, g, parent, rel) — g's effective config: the parent's, its own testdata.yaml
 * over it, problem.yaml's legacy grading over both, problemtools' defaults for the rest. */
static int configure(struct loader *L, size_t gi, const struct kattis_group *parent,
                     const char *rel)
{
    struct kattis_group *g = &L->d->groups[gi];
    char path[PATH_MAX], at[PATH_MAX + 16];
    struct yaml_doc doc = {0};
    struct errbuf yerr;
    struct stat st;
    const char *key;
    json_t *v;
    char *text;
    size_t len;
    int e;

    g->config = parent ? json_deep_copy(parent->config) : json_object();
    g->origin = parent ? json_deep_copy(parent->origin) : json_object();
    if (!g->config || !g->origin)
        return -ENOMEM;
    snprintf(path, sizeof(path), "%s/testdata.yaml", rel);
    e = kattis_pkg_stat(L->p, path, &st, L->err);
    if (e == 0 && S_ISREG(st.st_mode)) {
        if ((e = kattis_pkg_read(L->p, path, TESTDATA_MAX, &text, &len, L->err)) < 0)
            return e;
        e = yaml_doc_parse(&doc, text, len, &yerr);
        free(text);
        if (e == -EINVAL)
            e = errbuf_set(L->err, "%s: %s", path, yerr.msg);
        else if (e == 0 && !json_is_object(doc.root) && !json_is_null(doc.root))
            e = errbuf_set(L->err, "%s: must be a mapping of settings", path);
        if (e < 0) {
            yaml_doc_release(&doc);
            return e;
        }
        json_object_foreach(doc.root, key, v)
        {
            snprintf(at, sizeof(at), "%s:%u", path, yaml_doc_line(&doc, key));
            if (json_object_set(g->config, key, v) ||
                json_object_set_new(g->origin, key, json_string(at))) {
                yaml_doc_release(&doc);
                return -ENOMEM;
            }
        }
        yaml_doc_release(&doc);
    } else if (e < 0 && e != -ENOENT) {
        return e;
    }
    if (L->o->legacy) {
        static const char *const keys[] = {"accept_score", "reject_score", "range"};
        const char *on_reject = json_string_value(json_object_get(L->o->legacy, "on_reject"));
        snprintf(at, sizeof(at), "problem.yaml:%u (grading)", L->o->legacy_line);
        for (size_t i = 0; i < 3; i++) {
            v = json_object_get(L->o->legacy, keys[i]);
            if (v && !json_is_null(v) &&
                (json_object_set(g->config, keys[i], v) ||
                 json_object_set_new(g->origin, keys[i], json_string(at))))
                return -ENOMEM;
        }
        if (on_reject &&
            (strcmp(on_reject, "first_error") == 0 || strcmp(on_reject, "grade") == 0) &&
            (json_object_set_new(g->config, "on_reject",
                                 json_string(on_reject[0] == 'f' ? "break" : "continue")) ||
             json_object_set_new(g->origin, "on_reject", json_string(at))))
            return -ENOMEM;
    }
    if (!L->o->scoring) {
        for (size_t i = 0; i < 3; i++) {
            v = json_object_get(g->config, scoring_keys[i]);
            if (v && !json_is_null(v))
                return errbuf_set(L->err,
                                  "%s: '%s' is only for scoring problems, and this one is "
                                  "pass-fail (problemtools refuses it)",
                                  where(g, scoring_keys[i]), scoring_keys[i]);
        }
    }
    for (size_t i = 0; i < sizeof(testdata_defaults) / sizeof(testdata_defaults[0]); i++) {
        if (json_object_get(g->config, testdata_defaults[i].key))
            continue;
        bool scoring_only = false;
        for (size_t k = 0; k < 3; k++)
            scoring_only = scoring_only || strcmp(scoring_keys[k], testdata_defaults[i].key) == 0;
        if (scoring_only && !L->o->scoring)
            v = json_null(); /* problemtools sets them to None in pass-fail problems */
        else if (testdata_defaults[i].number)
            v = json_real(strtod(testdata_defaults[i].value, NULL));
        else
            v = json_string(testdata_defaults[i].value);
        if (json_object_set_new(g->config, testdata_defaults[i].key, v))
            return -ENOMEM;
    }
    return interpret(L, g);
}

/* add_item(g, item) */
static int add_item(struct kattis_group *g, size_t item)
{
    size_t *v = realloc(g->items, (g->nitems + 1) * sizeof(*v));

    if (!v)
        return -ENOMEM;
    v[g->nitems++] = item;
    g->items = v;
    return 0;
}

/* has_suffix(s, suffix) */
static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);

    return n > k && strcmp(s + n - k, suffix) == 0;
}

/* name_listed(names, kinds, n, name) — the index of a non-directory entry name, or -1. */
static long file_listed(char **names, const mode_t *modes, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return S_ISDIR(modes[i]) ? -1 : (long)i;
    return -1;
}

static int load_group(struct loader *L, const char *rel, const char *name, size_t parent);

/* load_entries(L, gi, rel) — the children of group gi (directory rel) in order. */
static int load_entries(struct loader *L, size_t gi, const char *rel)
{
    char **names = NULL, path[PATH_MAX], other[PATH_MAX];
    mode_t *modes = NULL;
    size_t n = 0;
    int e;

    if ((e = kattis_pkg_list(L->p, rel, &names, &n, L->err)) < 0)
        return pkg_error(L->p, rel, e, L->err);
    if (n && !(modes = calloc(n, sizeof(*modes)))) {
        e = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (strlen(rel) + strlen(names[i]) + 16 > sizeof(path)) {
            e = errbuf_set(L->err, "'%s/%s': path too long", rel, names[i]);
            goto out;
        }
        snprintf(path, sizeof(path), "%s/%s", rel, names[i]);
        if ((e = kattis_pkg_stat(L->p, path, &st, L->err)) < 0) {
            if (e == -ENOENT)
                pkg_error(L->p, path, e, L->err);
            goto out;
        }
        modes[i] = st.st_mode;
    }
    /* problemtools' check: every .in has its .ans and every .ans its .in */
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(names[i]);
        bool in = has_suffix(names[i], ".in"), ans = has_suffix(names[i], ".ans");
        if (S_ISDIR(modes[i]) || (!in && !ans))
            continue;
        snprintf(other, sizeof(other), "%.*s%s", (int)(len - (in ? 3 : 4)), names[i],
                 in ? ".ans" : ".in");
        if (file_listed(names, modes, n, other) < 0) {
            e = errbuf_set(L->err, "%s/%s: no matching %s file '%s' (problemtools refuses it)", rel,
                           names[i], in ? "answer" : "input", other);
            goto out;
        }
    }
    for (size_t i = 0; i < n && !e; i++) {
        struct kattis_test *t;
        size_t len = strlen(names[i]);
        snprintf(path, sizeof(path), "%s/%s", rel, names[i]);
        if (S_ISDIR(modes[i])) {
            char sub[PATH_MAX];
            const char *gname = L->d->groups[gi].name;
            long child;
            snprintf(sub, sizeof(sub), "%s%s%s", gname, gname[0] ? "/" : "", names[i]);
            child = load_group(L, path, sub, gi);
            if (child < 0) {
                e = (int)child;
                break;
            }
            e = add_item(&L->d->groups[gi], KATTIS_ITEM_GROUP | (size_t)child);
            continue;
        }
        if (!has_suffix(names[i], ".ans") || !S_ISREG(modes[i]))
            continue;
        snprintf(other, sizeof(other), "%.*s.in", (int)(len - 4), names[i]);
        {
            long k = file_listed(names, modes, n, other);
            if (k < 0 || !S_ISREG(modes[k]))
                continue;
        }
        if (L->d->ntests == KATTIS_TESTS_MAX) {
            e = errbuf_set(L->err,
                           "more than %d test cases under data/ (symlinked directories "
                           "repeating each other?)",
                           KATTIS_TESTS_MAX);
            break;
        }
        t = realloc(L->d->tests, (L->d->ntests + 1) * sizeof(*t));
        if (!t) {
            e = -ENOMEM;
            break;
        }
        L->d->tests = t;
        t = &t[L->d->ntests];
        memset(t, 0, sizeof(*t));
        t->group = gi;
        t->name = malloc(strlen(L->d->groups[gi].name) + len + 2);
        t->ans = strdup(path);
        t->in = malloc(strlen(path));
        if (!t->name || !t->ans || !t->in) {
            free(t->name);
            free(t->ans);
            free(t->in);
            e = -ENOMEM;
            break;
        }
        sprintf(t->name, "%s%s%.*s", L->d->groups[gi].name, L->d->groups[gi].name[0] ? "/" : "",
                (int)(len - 4), names[i]);
        sprintf(t->in, "%.*s.in", (int)(strlen(path) - 4), path);
        e = add_item(&L->d->groups[gi], L->d->ntests++);
    }
out:
    free(modes);
    kattis_names_free(names, n);
    return e;
}

/* load_group(L, rel, name, parent) — the group in directory rel and everything below it.
 * Its index, or -errno. */
static int load_group(struct loader *L, const char *rel, const char *name, size_t parent)
{
    struct kattis_group *g;
    struct stat st;
    size_t gi;
    int e;

    if ((e = kattis_pkg_stat(L->p, rel, &st, L->err)) < 0)
        return e == -ENOENT ? pkg_error(L->p, rel, e, L->err) : e;
    for (size_t i = 0; i < L->depth; i++)
        if (L->open[i].dev == st.st_dev && L->open[i].ino == st.st_ino)
            return errbuf_set(L->err, "'%s' is a symlink loop: it leads back to '%s'", rel,
                              L->open[i].rel);
    if (L->depth > KATTIS_DEPTH_MAX)
        return errbuf_set(L->err, "'%s': test data nested deeper than %d directories", rel,
                          KATTIS_DEPTH_MAX);
    g = realloc(L->d->groups, (L->d->ngroups + 1) * sizeof(*g));
    if (!g)
        return -ENOMEM;
    L->d->groups = g;
    gi = L->d->ngroups++;
    g = &g[gi];
    memset(g, 0, sizeof(*g));
    if (!(g->name = strdup(name)))
        return -ENOMEM;
    L->open[L->depth].dev = st.st_dev;
    L->open[L->depth].ino = st.st_ino;
    L->open[L->depth].rel = rel;
    L->depth++;
    e = configure(L, gi, parent == SIZE_MAX ? NULL : &L->d->groups[parent], rel);
    if (!e)
        e = load_entries(L, gi, rel);
    L->depth--;
    if (e < 0)
        return e;
    g = &L->d->groups[gi];
    if (g->nitems == 0) {
        const char *base = strrchr(rel, '/');
        base = base ? base + 1 : rel;
        if (strcmp(base, "sample") != 0 && parent != SIZE_MAX)
            return errbuf_set(L->err,
                              "'%s' has no test cases (problemtools refuses an empty "
                              "test group)",
                              rel);
    }
    return (int)gi;
}

/* load_samples(L) — data/sample's files as problemtools' statement shows them. */
static int load_samples(struct loader *L)
{
    char **names = NULL, stem[PATH_MAX];
    size_t n = 0;
    int e;

    e = kattis_pkg_list(L->p, "data/sample", &names, &n, L->err);
    if (e == -ENOENT || e == -ENOTDIR)
        return 0;
    if (e < 0)
        return e;
    for (size_t i = 0; i < n && !e; i++) {
        bool keep = false;
        size_t len = strlen(names[i]);
        if (has_suffix(names[i], ".interaction")) {
            if (!L->o->interactive) {
                e = errbuf_set(L->err,
                               "data/sample/%s: an interaction sample, but the problem is not "
                               "interactive (problemtools refuses it)",
                               names[i]);
                break;
            }
            keep = true;
        } else if (has_suffix(names[i], ".in")) {
            snprintf(stem, sizeof(stem), "%.*s.interaction", (int)(len - 3), names[i]);
            keep = true;
            for (size_t k = 0; k < n; k++)
                keep = keep && strcmp(names[k], stem) != 0;
            snprintf(stem, sizeof(stem), "%.*s.ans", (int)(len - 3), names[i]);
            {
                bool found = false;
                for (size_t k = 0; k < n; k++)
                    found = found || strcmp(names[k], stem) == 0;
                keep = keep && found;
            }
        }
        if (keep) {
            char **v = realloc(L->d->samples, (L->d->nsamples + 1) * sizeof(*v));
            if (!v) {
                e = -ENOMEM;
                break;
            }
            L->d->samples = v;
            if (!(v[L->d->nsamples] = strdup(names[i]))) {
                e = -ENOMEM;
                break;
            }
            L->d->nsamples++;
        }
    }
    kattis_names_free(names, n);
    return e;
}

int kattis_data_load(struct kattis_pkg *p, const struct kattis_data_opts *o, struct kattis_data *d,
                     struct errbuf *err)
{
    struct loader L = {.p = p, .o = o, .d = d, .err = err};
    struct stat st;
    bool secret = false;
    int e;

    memset(d, 0, sizeof(*d));
    if ((e = kattis_pkg_stat(p, "data", &st, err)) < 0)
        return e == -ENOENT ? errbuf_set(err, "no data/ directory") : e;
    if ((e = load_group(&L, "data", "", SIZE_MAX)) < 0)
        return e;
    for (size_t i = 0; i < d->groups[0].nitems; i++) {
        size_t it = d->groups[0].items[i];
        const char *name;
        if (!(it & KATTIS_ITEM_GROUP))
            return errbuf_set(err,
                              "data/%s.in: test cases directly in data/ (problemtools wants them "
                              "in data/sample or data/secret)",
                              d->tests[it].name);
        name = d->groups[it & ~KATTIS_ITEM_GROUP].name;
        if (strcmp(name, "secret") == 0)
            secret = true;
        else if (strcmp(name, "sample") != 0)
            return errbuf_set(err,
                              "data/%s: test data at the top level can only be data/sample and "
                              "data/secret (problemtools)",
                              name);
    }
    if (!secret)
        return errbuf_set(err, "no data/secret (problemtools requires secret test data)");
    return load_samples(&L);
}

void kattis_data_release(struct kattis_data *d)
{
    for (size_t i = 0; i < d->ngroups; i++) {
        free(d->groups[i].name);
        json_decref(d->groups[i].config);
        json_decref(d->groups[i].origin);
        free(d->groups[i].flags);
        free(d->groups[i].items);
    }
    free(d->groups);
    for (size_t i = 0; i < d->ntests; i++) {
        free(d->tests[i].name);
        free(d->tests[i].in);
        free(d->tests[i].ans);
    }
    free(d->tests);
    kattis_names_free(d->samples, d->nsamples);
    memset(d, 0, sizeof(*d));
}

/* ---- scores as task groups ------------------------------------------------------------ */

/* A sorted set of test indices. */
struct tset {
    size_t *v;
    size_t n;
};

static void tset_release(struct tset *s)
{
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

/* tset_union(s, o) — s becomes s | o. 0 or -ENOMEM. */
static int tset_union(struct tset *s, const struct tset *o)
{
    size_t *v, i = 0, j = 0, n = 0;

    if (!o->n)
        return 0;
    if (!(v = malloc((s->n + o->n) * sizeof(*v))))
        return -ENOMEM;
    while (i < s->n || j < o->n) {
        if (j == o->n || (i < s->n && s->v[i] < o->v[j]))
            v[n++] = s->v[i++];
        else if (i == s->n || o->v[j] < s->v[i])
            v[n++] = o->v[j++];
        else
            v[n++] = s->v[i++], j++;
    }
    free(s->v);
    s->v = v;
    s->n = n;
    return 0;
}

static bool tset_has(const struct tset *s, size_t t)
{
    size_t lo = 0, hi = s->n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->v[mid] == t)
            return true;
        if (s->v[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

static bool tset_subset(const struct tset *a, const struct tset *b)
{
    for (size_t i = 0; i < a->n; i++)
        if (!tset_has(b, a->v[i]))
            return false;
    return true;
}

/* A score that is earned when all of own and pre pass: own are the tests whose results it
 * stands for, pre those that must pass for them to be judged at all (on_reject: break). */
struct unit {
    char *name;
    double score;
    struct tset own, pre;
    bool named; /* named after a group (not a test) */
};

/* What a node of the tree reduces to: its score as units, and its verdict as "all of ac
 * pass" (rep) or as something else (!rep). */
struct red {
    struct unit *u;
    size_t n;
    bool rep;
    struct tset ac;
};

static void red_release(struct red *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->u[i].name);
        tset_release(&r->u[i].own);
        tset_release(&r->u[i].pre);
    }
    free(r->u);
    tset_release(&r->ac);
    memset(r, 0, sizeof(*r));
}

/* red_take(r, u) — moves unit u into r. 0 or -ENOMEM (u is released then). */
static int red_take(struct red *r, struct unit *u)
{
    struct unit *v = realloc(r->u, (r->n + 1) * sizeof(*v));

    if (!v) {
        free(u->name);
        tset_release(&u->own);
        tset_release(&u->pre);
        return -ENOMEM;
    }
    r->u = v;
    v[r->n++] = *u;
    memset(u, 0, sizeof(*u));
    return 0;
}

struct planner {
    const struct kattis_data *d;
    bool scoring;
    bool *dropped; /* per test: problemtools ignores its result */
    struct errbuf *err;
};

/* label(d, gi) — "data/NAME" for messages. */
static const char *label(const struct kattis_data *d, size_t gi, char *buf, size_t size)
{
    snprintf(buf, size, "data%s%s", d->groups[gi].name[0] ? "/" : "", d->groups[gi].name);
    return buf;
}

/* drop_below(P, item) — marks every test of an item dropped. */
static void drop_below(struct planner *P, size_t item)
{
    const struct kattis_group *g;

    if (!(item & KATTIS_ITEM_GROUP)) {
        P->dropped[item] = true;
        return;
    }
    g = &P->d->groups[item & ~KATTIS_ITEM_GROUP];
    for (size_t i = 0; i < g->nitems; i++)
        drop_below(P, g->items[i]);
}

static int reduce(struct planner *P, size_t item, size_t parent, struct red *out);

/* reduce_test(P, t, gi, out) — a test case: accepted when it passes; earns its group's
 * accept_score then, reject_score (which must be 0) otherwise. */
static int reduce_test(struct planner *P, size_t t, size_t gi, struct red *out)
{
    const struct kattis_grading *gr = &P->d->groups[gi].grading;
    struct unit u = {0};

    out->rep = true;
    if (!(out->ac.v = malloc(sizeof(size_t))))
        return -ENOMEM;
    out->ac.v[0] = t;
    out->ac.n = 1;
    if (!P->scoring)
        return 0;
    if (gr->reject_score != 0)
        return errbuf_set(P->err,
                          "%s: reject_score %g: a rejected test scoring other than 0 cannot be "
                          "expressed by task groups",
                          where(&P->d->groups[gi], "reject_score"), gr->reject_score);
    if (gr->accept_score < 0)
        return errbuf_set(P->err, "%s: a negative accept_score (%g) cannot be expressed",
                          where(&P->d->groups[gi], "accept_score"), gr->accept_score);
    if (gr->accept_score == 0)
        return 0;
    u.score = gr->accept_score;
    u.name = strdup(P->d->tests[t].name);
    u.own.v = malloc(sizeof(size_t));
    if (!u.name || !u.own.v) {
        free(u.name);
        free(u.own.v);
        return -ENOMEM;
    }
    u.own.v[0] = t;
    u.own.n = 1;
    return red_take(out, &u);
}

/* with_pre(out, r, pre) — moves r's units into out, each also needing pre. */
static int with_pre(struct red *out, struct red *r, const struct tset *pre, double scale)
{
    int e = 0;

    for (size_t i = 0; i < r->n && !e; i++) {
        r->u[i].score *= scale;
        e = tset_union(&r->u[i].pre, pre);
        if (!e)
            e = red_take(out, &r->u[i]);
    }
    return e;
}

/* reduce_group(P, gi, out) — problemtools' default grader over the group's children,
 * judged in order (stopping at the first rejected one under on_reject: break). */
static int reduce_group(struct planner *P, size_t gi, struct red *out)
{
    const struct kattis_group *g = &P->d->groups[gi];
    const struct kattis_grading *gr = &g->grading;
    size_t start = 0, m, with_units = 0, multi = 0;
    struct red *R = NULL;
    struct tset pre = {0};
    char lb[PATH_MAX];
    bool prefix_rep = true;
    int e = 0;

    label(P->d, gi, lb, sizeof(lb));
    if (gr->ignore_sample && g->nitems >= 2) {
        /* the default grader keeps the last child's verdict and score (of one or two) */
        if (gi != 0)
            return errbuf_set(P->err,
                              "%s: grader_flags ignore_sample (set there or inherited) would keep "
                              "only the last of %s's %zu children; problemtools refuses "
                              "ignore_sample below data/",
                              where(g, "grader_flags"), lb, g->nitems);
        if (g->nitems > 2)
            return errbuf_set(P->err,
                              "%s: grader_flags ignore_sample wants at most two children in "
                              "%s (sample, secret), not %zu: the default grader fails",
                              where(g, "grader_flags"), lb, g->nitems);
        if (gr->on_reject_break)
            return errbuf_set(P->err,
                              "%s: grader_flags ignore_sample with on_reject: break in %s keeps "
                              "the first child's result when it is rejected, which task groups "
                              "cannot express",
                              where(g, "grader_flags"), lb);
        for (size_t i = 0; i + 1 < g->nitems; i++)
            drop_below(P, g->items[i]);
        start = g->nitems - 1;
    }
    m = g->nitems - start;
    if (m && !(R = calloc(m, sizeof(*R))))
        return -ENOMEM;
    for (size_t k = 0; k < m && !e; k++) {
        e = reduce(P, g->items[start + k], gi, &R[k]);
        with_units += R[k].n > 0;
        multi += R[k].n > 1;
    }
    if (e)
        goto out;

    /* the verdict */
    out->rep = true;
    if (gr->always_accept) {
        out->rep = true;
    } else if (gr->any_accepted && m >= 2) {
        bool always = false;
        for (size_t k = 0; k < m; k++)
            always = always || (R[k].rep && R[k].ac.n == 0);
        out->rep = always;
    } else {
        for (size_t k = 0; k < m && !e; k++) {
            out->rep = out->rep && R[k].rep;
            if (out->rep)
                e = tset_union(&out->ac, &R[k].ac);
        }
        if (!out->rep)
            tset_release(&out->ac);
    }
    if (e || !P->scoring)
        goto out;

    /* the score */
    if (m == 1 || gr->score == KATTIS_SUM || (gr->score == KATTIS_AVG && !gr->on_reject_break)) {
        double scale = gr->score == KATTIS_AVG ? 1.0 / (double)m : 1.0;
        for (size_t k = 0; k < m && !e; k++) {
            if (k > 0 && gr->on_reject_break) {
                prefix_rep = prefix_rep && R[k - 1].rep;
                if (prefix_rep && (e = tset_union(&pre, &R[k - 1].ac)))
                    break;
            }
            if (R[k].n && !prefix_rep) {
                e = errbuf_set(P->err,
                               "%s: on_reject: break judges a child only while the earlier ones "
                               "are accepted, and an earlier child's verdict there is \"any of "
                               "its parts accepted\" (accept_if_any_accepted), which task groups "
                               "cannot express",
                               lb);
                break;
            }
            e = with_pre(out, &R[k], &pre, scale);
        }
    } else if (gr->score == KATTIS_AVG) {
        e = errbuf_set(P->err,
                       "%s: grader_flags avg with on_reject: break averages over however many "
                       "children were judged, which task groups cannot express",
                       where(g, "grader_flags"));
    } else if (gr->score == KATTIS_MAX) {
        if (with_units > 1) {
            e = errbuf_set(P->err,
                           "%s: grader_flags max over children that score apart cannot be "
                           "expressed by task groups (they add up)",
                           where(g, "grader_flags"));
        } else {
            for (size_t k = 0; k < m && !e; k++) {
                if (k > 0 && gr->on_reject_break) {
                    prefix_rep = prefix_rep && R[k - 1].rep;
                    if (prefix_rep)
                        e = tset_union(&pre, &R[k - 1].ac);
                }
                if (!e && R[k].n && !prefix_rep)
                    e = errbuf_set(P->err,
                                   "%s: on_reject: break after a child whose verdict is \"any "
                                   "of its parts accepted\" cannot be expressed by task groups",
                                   lb);
                if (!e && R[k].n)
                    e = with_pre(out, &R[k], &pre, 1.0);
            }
        }
    } else { /* min */
        struct unit u = {0};
        if (multi) {
            e = errbuf_set(P->err,
                           "%s: grader_flags min over a child whose tests score apart cannot be "
                           "expressed by task groups",
                           where(g, "grader_flags"));
            goto out;
        }
        if (gr->on_reject_break) {
            /* judging stops at the first rejected child: its score must then be 0, i.e. its
             * tests all passing must mean it is accepted */
            for (size_t k = 0; k + 1 < m && !e; k++) {
                struct tset all = {0};
                if (!R[k].n)
                    continue;
                if ((e = tset_union(&all, &R[k].u[0].own)) == 0 &&
                    (e = tset_union(&all, &R[k].u[0].pre)) == 0 &&
                    (!R[k].rep || !tset_subset(&R[k].ac, &all)))
                    e = errbuf_set(P->err,
                                   "%s: grader_flags min with on_reject: break, where a child "
                                   "can be rejected while its scored tests pass, cannot be "
                                   "expressed by task groups",
                                   where(g, "grader_flags"));
                tset_release(&all);
            }
        }
        if (e || with_units < m)
            goto out; /* a child that never scores makes the minimum 0 */
        u.score = INFINITY;
        for (size_t k = 0; k < m && !e; k++) {
            if (R[k].u[0].score < u.score)
                u.score = R[k].u[0].score;
            e = tset_union(&u.own, &R[k].u[0].own);
            if (!e)
                e = tset_union(&u.pre, &R[k].u[0].pre);
        }
        u.named = true;
        if (!e && !(u.name = strdup(g->name[0] ? g->name : "data")))
            e = -ENOMEM;
        if (e) {
            tset_release(&u.own);
            tset_release(&u.pre);
        } else {
            e = red_take(out, &u);
        }
    }
    if (!e && out->n == 1 && !out->u[0].named && g->name[0]) {
        char *name = strdup(g->name);
        if (!name) {
            e = -ENOMEM;
        } else {
            free(out->u[0].name);
            out->u[0].name = name;
            out->u[0].named = true;
        }
    }
out:
    for (size_t k = 0; k < m; k++)
        red_release(&R[k]);
    free(R);
    tset_release(&pre);
    return e;
}

static int reduce(struct planner *P, size_t item, size_t parent, struct red *out)
{
    if (item & KATTIS_ITEM_GROUP)
        return reduce_group(P, item & ~KATTIS_ITEM_GROUP, out);
    return reduce_test(P, item, parent, out);
}

void kattis_plan_release(struct kattis_plan *pl)
{
    for (size_t i = 0; i < pl->ngroups; i++)
        free(pl->groups[i].name);
    free(pl->groups);
    free(pl->tests);
    memset(pl, 0, sizeof(*pl));
}

/* plan_add(pl, test, group, copy) — appends a test to run. */
static int plan_add(struct kattis_plan *pl, size_t test, const char *group, bool copy)
{
    struct kattis_plan_test *v = realloc(pl->tests, (pl->ntests + 1) * sizeof(*v));

    if (!v)
        return -ENOMEM;
    pl->tests = v;
    v[pl->ntests].test = test;
    v[pl->ntests].group = group;
    v[pl->ntests].copy = copy;
    pl->ntests++;
    pl->copies += copy;
    return 0;
}

/* note_add(pl, fmt, ...) — appends a sentence to pl->note. */
static void note_add(struct kattis_plan *pl, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note_add(struct kattis_plan *pl, const char *fmt, ...)
{
    size_t used = strlen(pl->note);
    va_list ap;

    if (used && used + 1 < sizeof(pl->note))
        pl->note[used++] = ' ';
    va_start(ap, fmt);
    vsnprintf(pl->note + used, sizeof(pl->note) - used, fmt, ap);
    va_end(ap);
}

int kattis_plan_make(const struct kattis_data *d, bool scoring, struct kattis_plan *pl,
                     struct errbuf *err)
{
    struct planner P = {.d = d, .scoring = scoring, .err = err};
    struct red root = {0};
    size_t *home = NULL, kept = 0, dropped_sample = 0, dropped_other = 0;
    int e;

    memset(pl, 0, sizeof(*pl));
    pl->range_max = INFINITY;
    if (!(P.dropped = calloc(d->ntests ? d->ntests : 1, sizeof(bool))))
        return -ENOMEM;
    e = reduce_group(&P, 0, &root);
    if (e)
        goto out;
    for (size_t t = 0; t < d->ntests; t++)
        dropped_sample += P.dropped[t];
    if (!scoring) {
        if (!root.rep) {
            e = errbuf_set(err,
                           "data/: the problem's verdict is \"any of the groups accepted\" "
                           "(grader_flags accept_if_any_accepted), which a task (accepted when "
                           "every test passes) cannot express");
            goto out;
        }
        for (size_t t = 0; t < d->ntests; t++) {
            if (!P.dropped[t] && !tset_has(&root.ac, t)) {
                P.dropped[t] = true;
                dropped_other++;
            }
        }
    }
    for (size_t t = 0; t < d->ntests; t++)
        kept += !P.dropped[t];
    if (!kept) {
        e = errbuf_set(err, "no test case is left to judge by (every result is ignored)");
        goto out;
    }

    /* the groups: one per unit, names unique */
    if (root.n && !(pl->groups = calloc(root.n, sizeof(*pl->groups)))) {
        e = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < root.n; i++) {
        char name[PATH_MAX];
        snprintf(name, sizeof(name), "%s", root.u[i].name);
        for (unsigned k = 2;; k++) {
            bool taken = false;
            for (size_t j = 0; j < i; j++)
                taken = taken || strcmp(pl->groups[j].name, name) == 0;
            if (!taken)
                break;
            snprintf(name, sizeof(name), "%s#%u", root.u[i].name, k);
        }
        if (!(pl->groups[i].name = strdup(name))) {
            e = -ENOMEM;
            goto out;
        }
        pl->groups[i].score = root.u[i].score;
        pl->ngroups++;
        pl->max_score += root.u[i].score;
    }

    /* each test's home group: the one whose score it stands for, else the first needing it */
    if (!(home = malloc((d->ntests ? d->ntests : 1) * sizeof(*home)))) {
        e = -ENOMEM;
        goto out;
    }
    for (size_t t = 0; t < d->ntests; t++)
        home[t] = SIZE_MAX;
    for (size_t i = 0; i < root.n; i++)
        for (size_t k = 0; k < root.u[i].own.n; k++)
            home[root.u[i].own.v[k]] = i;
    for (size_t i = 0; i < root.n; i++)
        for (size_t k = 0; k < root.u[i].pre.n; k++)
            if (home[root.u[i].pre.v[k]] == SIZE_MAX)
                home[root.u[i].pre.v[k]] = i;

    /* run order: the test cases in problemtools' order; a group's copies of earlier tests
     * just before its first own test */
    for (size_t t = 0; t < d->ntests && !e; t++) {
        if (P.dropped[t])
            continue;
        for (size_t i = 0; i < root.n && !e; i++) {
            if (root.u[i].own.v[0] != t)
                continue;
            for (size_t k = 0; k < root.u[i].pre.n && !e; k++) {
                size_t c = root.u[i].pre.v[k];
                if (home[c] != i && !P.dropped[c])
                    e = plan_add(pl, c, pl->groups[i].name, true);
            }
        }
        if (!e)
            e = plan_add(pl, t, home[t] == SIZE_MAX ? NULL : pl->groups[home[t]].name, false);
    }
    if (e)
        goto out;
    if (pl->copies > kept) {
        e = errbuf_set(err,
                       "on_reject: break makes each group's score depend on the groups before "
                       "it: expressing that needs %zu repeated test runs for %zu tests, more "
                       "than doubling the work",
                       pl->copies, kept);
        goto out;
    }
    pl->dropped = dropped_sample + dropped_other;
    pl->range_max = d->groups[0].grading.range_max;
    if (dropped_sample)
        note_add(pl,
                 "The grader ignores data/sample (grader_flags ignore_sample): its %zu test%s "
                 "%s left out.",
                 dropped_sample, dropped_sample == 1 ? "" : "s",
                 dropped_sample == 1 ? "is" : "are");
    if (dropped_other)
        note_add(pl,
                 "%zu test%s never affect%s the verdict (grader_flags always_accept) and %s "
                 "left out.",
                 dropped_other, dropped_other == 1 ? "" : "s", dropped_other == 1 ? "s" : "",
                 dropped_other == 1 ? "is" : "are");
    if (pl->copies)
        note_add(pl,
                 "Under on_reject: break a group's score counts only when the groups judged "
                 "before it pass, so its tests include theirs: %zu test%s run again (named "
                 "TEST@GROUP).",
                 pl->copies, pl->copies == 1 ? " is" : "s are");
    if (scoring && isfinite(pl->range_max) && pl->range_max != pl->max_score)
        note_add(pl,
                 "data/'s range gives full marks as %g, but the groups add up to %g (problemtools "
                 "would call no submission fully accepted).",
                 pl->range_max, pl->max_score);
out:
    free(home);
    free(P.dropped);
    red_release(&root);
    if (e)
        kattis_plan_release(pl);
    return e;
}
