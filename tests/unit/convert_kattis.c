/* Unit tests for the Kattis converter's pieces (src/library/kattis_*.c, convert_kattis.c):
 * default-validator flags, language detection, time-limit rules, the data/ tree with its
 * testdata.yaml inheritance and symlinks, scores as task groups, and whole packages of
 * both layouts built here (never dataset text). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "library/convert.h"
#include "library/kattis.h"
#include "tap.h"

static char tmp[256];

/* put(rel, text) — writes tmp/rel, making its directories. */
static void put(const char *rel, const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", tmp, rel);
    for (char *s = strchr(path + strlen(tmp) + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f))
        diag("cannot write %s", path);
}

/* link_at(rel, target) — a symlink tmp/rel -> target. */
static void link_at(const char *rel, const char *target)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/%s", tmp, rel);
    if (symlink(target, path) < 0)
        diag("cannot link %s: %s", path, strerror(errno));
}

/* rm(rel) — removes tmp/rel (a tree). */
static void rm(const char *rel)
{
    char cmd[600];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s'", tmp, rel);
    if (system(cmd) != 0)
        diag("cannot remove %s", rel);
}

/* ---- flags, languages, time limits ---------------------------------------------------- */

static void test_flags(void)
{
    struct errbuf err;
    char *j;

    is_int(kattis_flags_check("", &err), 0, "flags: none");
    is_int(kattis_flags_check("case_sensitive space_change_sensitive", &err), 0,
           "flags: case_sensitive space_change_sensitive");
    is_int(kattis_flags_check("float_tolerance 1e-6 float_absolute_tolerance 0.5 "
                              "float_relative_tolerance -1",
                              &err),
           0, "flags: tolerances (the validator takes any finite number)");
    is_int(kattis_flags_check("float_tolerance", &err), -EINVAL, "flags: a missing number");
    ok(strstr(err.msg, "'float_tolerance' wants a number") != NULL, "... named (%s)", err.msg);
    is_int(kattis_flags_check("float_tolerance inf", &err), -EINVAL, "flags: inf is refused");
    is_int(kattis_flags_check("case_sensitive ignore_case", &err), -EINVAL, "flags: unknown");
    ok(strstr(err.msg, "unknown default validator flag 'ignore_case'") != NULL, "... named (%s)",
       err.msg);
    j = kattis_flags_join("  case_sensitive\t", " float_tolerance   1e-6 ");
    is_str(j, "case_sensitive float_tolerance 1e-6", "join: tokens, single spaces");
    free(j);
    j = kattis_flags_join(NULL, "");
    is_str(j, "", "join: nothing");
    free(j);
}

static const char *detect(const char *a, const char *a_text, const char *b)
{
    struct kattis_file f[2] = {{a, a_text}, {b, NULL}};
    const struct kattis_lang *l = kattis_lang_detect(f, b ? 2 : 1);

    return l ? l->id : "none";
}

static void test_languages(void)
{
    const struct kattis_lang *l;

    is_str(detect("hello.py", "#!/usr/bin/env python3\nprint(1)\n", NULL), "python3",
           "lang: a .py file is Python 3");
    is_str(detect("old.py", "#!/usr/bin/env python2\nprint 1\n", NULL), "python2",
           "lang: with a python2 shebang, Python 2");
    is_str(detect("old.py", "#!/usr/bin/python2.7\n", NULL), "python2",
           "lang: python2.7 matches python2\\b too");
    is_str(detect("new.py", "#!/usr/bin/python27\n", NULL), "python3", "lang: python27 does not");
    is_str(detect("x.py2", NULL, NULL), "python2", "lang: .py2");
    is_str(detect("validate.cc", NULL, "validate.h"), "cpp", "lang: .cc with a header is C++");
    is_str(detect("a.c", NULL, "b.cc"), "cpp", "lang: a tie goes to the higher priority");
    is_str(detect("a.c", NULL, NULL), "c", "lang: .c");
    is_str(detect("x.C", NULL, NULL), "cpp", "lang: .C is C++ (globs are case-sensitive)");
    is_str(detect("Main.java", NULL, NULL), "java", "lang: .java");
    is_str(detect("hello.kt", NULL, NULL), "kotlin", "lang: .kt");
    is_str(detect("a.h", NULL, NULL), "none", "lang: a header alone is no program");
    l = kattis_lang_detect((struct kattis_file[]){{"hello.kt", NULL}}, 1);
    ok(l && l->crucible == NULL, "lang: crucible has no Kotlin");
    l = kattis_lang_detect((struct kattis_file[]){{"x.go", NULL}}, 1);
    ok(l && strcmp(l->crucible, "go") == 0, "lang: Go maps to crucible's go");
    l = kattis_lang_by_crucible("python");
    ok(l && strcmp(l->id, "python3") == 0, "lang: crucible's python is Python 3");
}

static void test_time_limits(void)
{
    double v = 0;

    ok(kattis_time_limit_round(0.31, 5, 1) == 2, "time: 5 x 0.31 s rounds up to 2 s");
    ok(kattis_time_limit_round(0.1, 2, 1) == 1, "time: at least one resolution step");
    ok(kattis_time_limit_round(1.01, 2, 1) == 3, "time: 2 x 1.01 s is 3 s");
    ok(kattis_time_limit_round(0.3, 2, 0.5) == 1, "time: resolution 0.5: 0.6 s -> 1 s");
    ok(fabs(kattis_time_limit_round(0.01, 2, 0.1) - 0.1) < 1e-12, "time: resolution 0.1");
    ok(kattis_timelimit_parse("2\n", &v) && v == 2, ".timelimit: '2\\n'");
    ok(kattis_timelimit_parse(" 1.5 ", &v) && v == 1.5, ".timelimit: ' 1.5 '");
    ok(!kattis_timelimit_parse("abc", &v), ".timelimit: not a number");
    ok(!kattis_timelimit_parse("0", &v), ".timelimit: zero");
    ok(!kattis_timelimit_parse("2 3", &v), ".timelimit: two numbers");
}

/* ---- the data tree -------------------------------------------------------------------- */

/* load(pkg, scoring, d, err) — kattis_data_load on tmp/pkg. */
static int load(const char *pkg, bool scoring, struct kattis_data *d, struct errbuf *err)
{
    struct kattis_data_opts o = {.scoring = scoring};
    struct kattis_pkg p;
    char dir[512];
    int e;

    snprintf(dir, sizeof(dir), "%s/%s", tmp, pkg);
    err->msg[0] = '\0';
    if ((e = kattis_pkg_open(&p, dir, err)) < 0)
        return e;
    e = kattis_data_load(&p, &o, d, err);
    kattis_pkg_close(&p);
    return e;
}

/* names(d) — the test names, space-separated (static buffer). */
static const char *names(const struct kattis_data *d)
{
    static char buf[2048];
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < d->ntests && used < sizeof(buf); i++)
        used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s", i ? " " : "",
                                 d->tests[i].name);
    return buf;
}

/* pair(pkg, name) — a test case tmp/pkg/data/name.{in,ans}. */
static void pair(const char *pkg, const char *name)
{
    char rel[512];

    snprintf(rel, sizeof(rel), "%s/data/%s.in", pkg, name);
    put(rel, "1\n");
    snprintf(rel, sizeof(rel), "%s/data/%s.ans", pkg, name);
    put(rel, "1\n");
}

static const struct kattis_group *group(const struct kattis_data *d, const char *name)
{
    for (size_t i = 0; i < d->ngroups; i++)
        if (strcmp(d->groups[i].name, name) == 0)
            return &d->groups[i];
    return NULL;
}

static void test_data(void)
{
    struct kattis_data d;
    struct errbuf err;
    const struct kattis_group *g;

    /* order: entries sorted by name (Python's sorted(os.listdir)), groups where they sort */
    pair("order", "sample/1");
    pair("order", "secret/1");
    pair("order", "secret/10");
    pair("order", "secret/2");
    pair("order", "secret/1a/x");
    pair("order", "secret/b");
    put("order/data/secret/notes.txt", "not a test\n");
    is_int(load("order", false, &d, &err), 0, "data: loads");
    is_str(names(&d), "sample/1 secret/1 secret/10 secret/1a/x secret/2 secret/b",
           "data: problemtools' order (1.ans < 10.ans < 1a < 2.ans)");
    kattis_data_release(&d);

    /* testdata.yaml: inherited down, a child's own keys win */
    pair("inherit", "sample/1");
    pair("inherit", "secret/g1/1");
    pair("inherit", "secret/g2/1");
    put("inherit/data/testdata.yaml", "output_validator_flags: case_sensitive\n");
    put("inherit/data/secret/g1/testdata.yaml",
        "# tighter\noutput_validator_flags: float_tolerance 1e-6\non_reject: continue\n");
    is_int(load("inherit", false, &d, &err), 0, "inherit: loads");
    g = group(&d, "secret/g2");
    is_str(g ? g->flags : NULL, "case_sensitive", "inherit: g2 has data/'s flags");
    ok(g && g->grading.on_reject_break, "inherit: on_reject defaults to break");
    g = group(&d, "secret/g1");
    is_str(g ? g->flags : NULL, "float_tolerance 1e-6", "inherit: g1's own flags win");
    ok(g && !g->grading.on_reject_break, "inherit: g1's on_reject");
    is_str(g ? json_string_value(json_object_get(g->origin, "output_validator_flags")) : NULL,
           "data/secret/g1/testdata.yaml:2", "inherit: where each key was set");
    g = group(&d, "sample");
    is_str(g ? g->flags : NULL, "case_sensitive", "inherit: sample too");
    kattis_data_release(&d);

    /* what problemtools refuses */
    pair("bad", "sample/1");
    pair("bad", "secret/1");
    put("bad/data/secret/2.in", "x\n");
    is_int(load("bad", false, &d, &err), -EINVAL, "refused: an .in without its .ans");
    ok(strstr(err.msg, "data/secret/2.in: no matching answer file '2.ans'") != NULL, "... (%s)",
       err.msg);
    kattis_data_release(&d);
    rm("bad/data/secret/2.in");
    put("bad/data/secret/3.ans", "x\n");
    is_int(load("bad", false, &d, &err), -EINVAL, "refused: an .ans without its .in");
    kattis_data_release(&d);
    rm("bad/data/secret/3.ans");
    put("bad/data/secret/testdata.yaml", "on_reject: maybe\n");
    is_int(load("bad", false, &d, &err), -EINVAL, "refused: a bad on_reject");
    ok(strstr(err.msg, "data/secret/testdata.yaml:1: on_reject must be") != NULL, "... (%s)",
       err.msg);
    kattis_data_release(&d);
    put("bad/data/secret/testdata.yaml", "range: [0, 1\n");
    is_int(load("bad", true, &d, &err), -EINVAL, "refused: testdata.yaml that is not YAML");
    ok(strstr(err.msg, "data/secret/testdata.yaml: line ") != NULL, "... file and line (%s)",
       err.msg);
    kattis_data_release(&d);
    put("bad/data/secret/testdata.yaml", "grading: custom\n");
    is_int(load("bad", true, &d, &err), -EINVAL, "refused: grading: custom");
    ok(strstr(err.msg, "custom grader") != NULL, "... (%s)", err.msg);
    kattis_data_release(&d);
    put("bad/data/secret/testdata.yaml", "output_validator_args: [a]\n");
    is_int(load("bad", false, &d, &err), -EINVAL, "refused: output_validator_args");
    kattis_data_release(&d);
    put("bad/data/secret/testdata.yaml", "accept_score: 5\n");
    is_int(load("bad", false, &d, &err), -EINVAL, "refused: accept_score in a pass-fail problem");
    ok(strstr(err.msg, "only for scoring problems") != NULL, "... (%s)", err.msg);
    kattis_data_release(&d);
    rm("bad/data/secret/testdata.yaml");
    put("bad/data/secret/empty/readme", "x\n");
    is_int(load("bad", false, &d, &err), -EINVAL, "refused: a group without tests");
    kattis_data_release(&d);
    rm("bad/data/secret/empty");
    pair("bad", "extra/1");
    is_int(load("bad", false, &d, &err), -EINVAL, "refused: data/extra");
    kattis_data_release(&d);
    rm("bad/data/extra");
    pair("bad", "1");
    is_int(load("bad", false, &d, &err), -EINVAL, "refused: a test directly in data/");
    kattis_data_release(&d);
    rm("bad/data/1.in");
    rm("bad/data/1.ans");
    rm("bad/data/secret");
    is_int(load("bad", false, &d, &err), -EINVAL, "refused: no data/secret");
    kattis_data_release(&d);

    /* .interaction samples: for the statement, never tests; only in interactive problems */
    pair("inter", "secret/1");
    put("inter/data/sample/1.interaction", ">1\n<ok\n");
    is_int(load("inter", false, &d, &err), -EINVAL,
           "refused: an .interaction sample of a non-interactive problem");
    kattis_data_release(&d);
    {
        struct kattis_data_opts o = {.interactive = true};
        struct kattis_pkg p;
        char dir[512];
        snprintf(dir, sizeof(dir), "%s/inter", tmp);
        kattis_pkg_open(&p, dir, &err);
        is_int(kattis_data_load(&p, &o, &d, &err), 0, "interactive: loads");
        ok(d.ntests == 1 && d.nsamples == 1 && strcmp(d.samples[0], "1.interaction") == 0,
           "interactive: the .interaction is a sample for the statement, not a test");
        kattis_data_release(&d);
        kattis_pkg_close(&p);
    }
}

static void test_symlinks(void)
{
    struct kattis_data d;
    struct errbuf err;

    pair("links", "sample/1");
    pair("links", "secret/a/1");
    pair("links", "secret/a/2");
    link_at("links/data/secret/b", "a");
    put("links/data/secret/c/1.ans", "1\n");
    link_at("links/data/secret/c/1.in", "../a/1.in");
    is_int(load("links", false, &d, &err), 0, "symlinks inside the package are followed");
    is_str(names(&d), "sample/1 secret/a/1 secret/a/2 secret/b/1 secret/b/2 secret/c/1",
           "... a linked directory's tests and a linked file's test are tests");
    kattis_data_release(&d);

    link_at("links/data/secret/a/loop", "..");
    is_int(load("links", false, &d, &err), -EINVAL, "a link back to a directory it is in");
    ok(strstr(err.msg, "symlink loop") && strstr(err.msg, "leads back to 'data/secret'"),
       "... is a loop, named (%s)", err.msg);
    kattis_data_release(&d);
    rm("links/data/secret/a/loop");

    link_at("links/data/secret/x", "y");
    link_at("links/data/secret/y", "x");
    is_int(load("links", false, &d, &err), -ELOOP, "links to each other");
    ok(strstr(err.msg, "data/secret/x': a symlink loop") != NULL, "... named (%s)", err.msg);
    kattis_data_release(&d);
    rm("links/data/secret/x");
    rm("links/data/secret/y");

    put("outside.in", "secret\n");
    link_at("links/data/secret/c/2.in", "../../../../outside.in");
    put("links/data/secret/c/2.ans", "1\n");
    is_int(load("links", false, &d, &err), -EXDEV, "a link leaving the package");
    ok(strstr(err.msg, "'data/secret/c/2.in' is a symlink that leaves the package") != NULL,
       "... is refused (%s)", err.msg);
    kattis_data_release(&d);
    rm("links/data/secret/c/2.in");
    {
        char target[600];
        snprintf(target, sizeof(target), "%s/links/data/secret/a/1.in", tmp);
        link_at("links/data/secret/c/2.in", target);
    }
    is_int(load("links", false, &d, &err), -EXDEV, "an absolute link, even to inside");
    ok(strstr(err.msg, "absolute symlink") != NULL, "... is refused (%s)", err.msg);
    kattis_data_release(&d);
    rm("links/data/secret/c/2.in");
    rm("links/data/secret/c/2.ans");

    /* git's stand-ins for symlinks (core.symlinks=false): followed inside the package */
    put("links/data/secret/c/2.in", "../a/2.in");
    put("links/data/secret/c/2.ans", "../a/2.ans");
    put("links/data/secret/a/2.in", "22\n");
    {
        struct kattis_pkg p;
        char dir[512], *buf;
        size_t len;
        snprintf(dir, sizeof(dir), "%s/links", tmp);
        kattis_pkg_open(&p, dir, &err);
        is_int(kattis_pkg_read(&p, "data/secret/c/2.in", 100, &buf, &len, &err), 0,
               "stand-in: read");
        is_str(buf, "22\n", "stand-in: followed to the file it names");
        ok(p.stand_ins == 1 && strcmp(p.stand_in, "data/secret/c/2.in") == 0,
           "stand-in: counted and named");
        free(buf);
        put("links/data/secret/c/3.in", "no/such/file");
        is_int(kattis_pkg_read(&p, "data/secret/c/3.in", 100, &buf, &len, &err), 0,
               "stand-in: a path to nothing");
        is_str(buf, "no/such/file", "stand-in: ... is plain text");
        free(buf);
        put("links/data/secret/c/3.in", "../../../../outside.in");
        is_int(kattis_pkg_read(&p, "data/secret/c/3.in", 100, &buf, &len, &err), -EINVAL,
               "stand-in: one leading out of the package");
        ok(strstr(err.msg, "leaves the package") != NULL, "... is refused (%s)", err.msg);
        free(buf);
        put("links/data/secret/c/3.in", "./3.in");
        is_int(kattis_pkg_read(&p, "data/secret/c/3.in", 100, &buf, &len, &err), -EINVAL,
               "stand-in: one naming itself");
        ok(strstr(err.msg, "chain of more than 8") != NULL, "... is refused (%s)", err.msg);
        free(buf);
        kattis_pkg_close(&p);
        rm("links/data/secret/c/3.in");
    }
    rm("links/data/secret/c/2.in");
    rm("links/data/secret/c/2.ans");

    /* directories linking twice to the one below: 2^14 tests from 2 files */
    pair("fan", "secret/d0/1");
    pair("fan", "secret/d0/2");
    for (int i = 1; i <= 13; i++) {
        char rel[128], target[32];
        snprintf(target, sizeof(target), "../d%d", i - 1);
        snprintf(rel, sizeof(rel), "fan/data/secret/d%d/x", i);
        put(rel, "");
        rm(rel);
        snprintf(rel, sizeof(rel), "fan/data/secret/d%d/a", i);
        link_at(rel, target);
        snprintf(rel, sizeof(rel), "fan/data/secret/d%d/b", i);
        link_at(rel, target);
    }
    is_int(load("fan", false, &d, &err), -EINVAL, "directories repeating each other");
    ok(strstr(err.msg, "more than 10000 test cases") != NULL, "... stop at the cap (%s)", err.msg);
    kattis_data_release(&d);
}

/* ---- scores as groups ----------------------------------------------------------------- */

/* plan(pkg, scoring, pl, err) — load tmp/pkg and make its plan. */
static int plan(const char *pkg, bool scoring, struct kattis_plan *pl, struct errbuf *err)
{
    struct kattis_data d;
    int e = load(pkg, scoring, &d, err);

    memset(pl, 0, sizeof(*pl));
    if (e == 0)
        e = kattis_plan_make(&d, scoring, pl, err);
    kattis_data_release(&d);
    return e;
}

/* layout(pl) — "name:group ..." of the plan's tests and "| group=score ..." (static). The
 * test names are lost with the data, so tests are shown by index. */
static const char *layout(const struct kattis_plan *pl)
{
    static char buf[2048];
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < pl->ntests && used < sizeof(buf); i++)
        used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%zu%s:%s", i ? " " : "",
                                 pl->tests[i].test, pl->tests[i].copy ? "+" : "",
                                 pl->tests[i].group ? pl->tests[i].group : "-");
    used += (size_t)snprintf(buf + used, sizeof(buf) - used, " |");
    for (size_t i = 0; i < pl->ngroups && used < sizeof(buf); i++)
        used += (size_t)snprintf(buf + used, sizeof(buf) - used, " %s=%g", pl->groups[i].name,
                                 pl->groups[i].score);
    return buf;
}

static void test_plans(void)
{
    struct kattis_plan pl;
    struct errbuf err;

    /* oddecho's shape: samples ignored, two min groups of 50 */
    pair("odd", "sample/1");
    pair("odd", "secret/s1/1");
    pair("odd", "secret/s1/2");
    pair("odd", "secret/s2/1");
    put("odd/data/testdata.yaml",
        "on_reject: continue\nrange: 0 100\ngrader_flags: ignore_sample\n");
    put("odd/data/sample/testdata.yaml",
        "accept_score: 0\nrange: 0 0\ngrader_flags: first_error\n");
    put("odd/data/secret/testdata.yaml",
        "on_reject: continue\ngrader_flags: first_error accept_if_any_accepted\n");
    put("odd/data/secret/s1/testdata.yaml",
        "on_reject: break\naccept_score: 50\ngrader_flags: min\n");
    put("odd/data/secret/s2/testdata.yaml",
        "on_reject: break\naccept_score: 50\ngrader_flags: min\n");
    is_int(plan("odd", true, &pl, &err), 0, "plan: oddecho's shape");
    is_str(layout(&pl), "1:secret/s1 2:secret/s1 3:secret/s2 | secret/s1=50 secret/s2=50",
           "plan: min groups of 50, the ignored sample left out");
    ok(pl.dropped == 1 && pl.max_score == 100 && pl.range_max == 100, "plan: 1 dropped, 100 max");
    ok(strstr(pl.note, "ignore_sample") != NULL, "plan: the note says why (%s)", pl.note);
    kattis_plan_release(&pl);

    /* problemtools' defaults: each test scores 1, judging stops at the first rejection */
    pair("dflt", "sample/1");
    pair("dflt", "secret/1");
    pair("dflt", "secret/2");
    pair("dflt", "secret/3");
    put("dflt/data/testdata.yaml", "on_reject: continue\n");
    put("dflt/data/secret/testdata.yaml", "on_reject: break\n");
    is_int(plan("dflt", true, &pl, &err), 0, "plan: sum under break");
    is_str(layout(&pl),
           "0:sample 1:secret/1 1+:secret/2 2:secret/2 1+:secret/3 2+:secret/3 3:secret/3 | "
           "sample=1 secret/1=1 secret/2=1 secret/3=1",
           "plan: a later test's score needs the earlier ones: copies");
    is_int(pl.copies, 3, "plan: 3 copies");
    kattis_plan_release(&pl);
    pair("dflt", "secret/4");
    is_int(plan("dflt", true, &pl, &err), -EINVAL, "plan: copies beyond doubling the tests");
    ok(strstr(err.msg, "more than doubling") != NULL, "... are refused (%s)", err.msg);
    kattis_plan_release(&pl);
    put("dflt/data/secret/testdata.yaml", "on_reject: continue\naccept_score: 2\n");
    is_int(plan("dflt", true, &pl, &err), 0, "plan: sum, continue");
    is_str(layout(&pl),
           "0:sample 1:secret/1 2:secret/2 3:secret/3 4:secret/4 | sample=1 secret/1=2 "
           "secret/2=2 secret/3=2 secret/4=2",
           "plan: each test its own group, no copies");
    kattis_plan_release(&pl);
    put("dflt/data/secret/testdata.yaml", "on_reject: continue\ngrader_flags: avg\n");
    is_int(plan("dflt", true, &pl, &err), 0, "plan: avg, continue");
    ok(pl.ngroups == 5 && fabs(pl.groups[1].score - 0.25) < 1e-12, "plan: scores scaled by 1/n");
    kattis_plan_release(&pl);
    put("dflt/data/secret/testdata.yaml", "on_reject: break\ngrader_flags: avg\n");
    is_int(plan("dflt", true, &pl, &err), -EINVAL, "plan: avg under break is refused");
    kattis_plan_release(&pl);
    put("dflt/data/secret/testdata.yaml", "on_reject: continue\nreject_score: -1\n");
    is_int(plan("dflt", true, &pl, &err), -EINVAL, "plan: reject_score other than 0 is refused");
    ok(strstr(err.msg, "reject_score -1") != NULL, "... (%s)", err.msg);
    kattis_plan_release(&pl);
    put("dflt/data/secret/testdata.yaml", "on_reject: continue\ngrader_flags: max\n");
    is_int(plan("dflt", true, &pl, &err), -EINVAL, "plan: max over tests scoring apart");
    kattis_plan_release(&pl);

    /* the Code Jam archive's shape: one test per subtask, break in secret */
    pair("cj", "sample/1");
    pair("cj", "secret/subtask1/1");
    pair("cj", "secret/subtask2/1");
    put("cj/data/testdata.yaml", "on_reject: continue\nrange: 0 20\ngrader_flags: ignore_sample\n");
    put("cj/data/sample/testdata.yaml", "accept_score: 0\nrange: 0 0\n");
    put("cj/data/secret/testdata.yaml",
        "on_reject: break\nrange: 0 20\ngrader_flags: first_error accept_if_any_accepted\n");
    put("cj/data/secret/subtask1/testdata.yaml", "accept_score: 5\n");
    put("cj/data/secret/subtask2/testdata.yaml", "accept_score: 10\n");
    is_int(plan("cj", true, &pl, &err), 0, "plan: Code Jam's shape");
    is_str(layout(&pl),
           "1:secret/subtask1 1+:secret/subtask2 2:secret/subtask2 | secret/subtask1=5 "
           "secret/subtask2=10",
           "plan: subtask2 needs subtask1 (a copy), the sample is ignored");
    ok(strstr(pl.note, "range gives full marks as 20, but the groups add up to 15") != NULL,
       "plan: a range that the groups do not reach is noted (%s)", pl.note);
    kattis_plan_release(&pl);

    /* pass-fail: no groups; verdicts that never count */
    pair("pf", "sample/1");
    pair("pf", "secret/a/1");
    pair("pf", "secret/b/1");
    is_int(plan("pf", false, &pl, &err), 0, "plan: pass-fail");
    is_str(layout(&pl), "0:- 1:- 2:- |", "plan: every test, no groups");
    kattis_plan_release(&pl);
    put("pf/data/secret/b/testdata.yaml", "grader_flags: always_accept\n");
    is_int(plan("pf", false, &pl, &err), 0, "plan: pass-fail with always_accept");
    is_str(layout(&pl), "0:- 1:- |", "plan: the always-accepted group is left out");
    kattis_plan_release(&pl);
    put("pf/data/secret/b/testdata.yaml", "");
    put("pf/data/secret/testdata.yaml", "grader_flags: accept_if_any_accepted\n");
    is_int(plan("pf", false, &pl, &err), -EINVAL, "plan: pass-fail, any-of verdict refused");
    kattis_plan_release(&pl);
}

/* ---- whole packages ------------------------------------------------------------------- */

static int collect(json_t *task, void *arg)
{
    return json_array_append(arg, task) ? -ENOMEM : 0;
}

struct run {
    json_t *tasks;
    char *errs;
    size_t errs_len;
    struct convert_stats st;
    struct errbuf err;
    int rc;
};

static void convert(struct run *r, const char *rel)
{
    struct convert_opts o = {.format = CONVERT_KATTIS};
    char path[512];
    FILE *errs;

    memset(r, 0, sizeof(*r));
    r->tasks = json_array();
    errs = open_memstream(&r->errs, &r->errs_len);
    snprintf(path, sizeof(path), "%s/%s", tmp, rel);
    r->rc = convert_path(&o, path, collect, r->tasks, errs, &r->st, &r->err);
    fclose(errs);
}

static void run_release(struct run *r)
{
    json_decref(r->tasks);
    free(r->errs);
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? s : "";
}

static bool starts_with(const char *s, const char *prefix)
{
    if (strncmp(s, prefix, strlen(prefix)) == 0)
        return true;
    diag("  '%s' does not start with '%s'", s, prefix);
    return false;
}

static bool has_tag(const json_t *task, const char *tag)
{
    const json_t *v;
    size_t i;

    json_array_foreach(json_object_get(task, "tags"), i, v)
    {
        if (strcmp(json_string_value(v), tag) == 0)
            return true;
    }
    return false;
}

/* refused(pkg, why, desc) — converting tmp/pkg skips it with a message containing why. */
static void refused(const char *pkg, const char *why, const char *desc)
{
    struct run r;

    convert(&r, pkg);
    if (!ok(r.rc == 0 && json_array_size(r.tasks) == 0 && r.st.bad == 1 && r.errs &&
                strstr(r.errs, why),
            "%s", desc))
        diag("  errors: %s", r.errs ? r.errs : "");
    run_release(&r);
}

static void test_legacy(void)
{
    struct run r;
    const json_t *t, *c, *tests;

    put("legacy/problem.yaml", "name: Diff\nvalidation: custom\nvalidator_flags: strict\n"
                               "limits:\n  memory: 256\n  output: 2\n");
    put("legacy/problem_statement/problem.sv.tex", "\\problemname{Skillnad}\n");
    put("legacy/problem_statement/problem.en.tex", "\\problemname{Diff}\nPrint |a-b|.");
    pair("legacy", "sample/1");
    pair("legacy", "secret/1");
    pair("legacy", "secret/2");
    put("legacy/data/secret/testdata.yaml", "output_validator_flags: extra\n");
    put("legacy/output_validators/v/validate.cc", "#include \"validate.h\"\nint main() {}\n");
    put("legacy/output_validators/v/validate.h", "// header\n");
    put("legacy/submissions/accepted/a.rb", "puts 1\n");
    put("legacy/submissions/accepted/b.java", "class B {}\n");
    put("legacy/submissions/accepted/c.py", "#!/usr/bin/env python2\nprint 1\n");
    put("legacy/submissions/accepted/d.py", "print(1)\n");
    put("legacy/submissions/accepted/e.cc", "int main() {}\n");
    put("legacy/.timelimit", "3\n");
    convert(&r, "legacy");
    is_int(json_array_size(r.tasks), 1, "legacy: converted");
    diag("%s", r.errs ? r.errs : "");
    t = json_array_get(r.tasks, 0);
    c = json_object_get(t, "checker");
    is_str(str(c, "type"), "validator", "legacy: a custom validator is checker 'validator'");
    is_str(str(c, "language"), "cpp", "legacy: ... its language by problemtools' table");
    ok(json_is_object(json_object_get(c, "files")) &&
           json_object_size(json_object_get(c, "files")) == 2 &&
           json_object_get(json_object_get(c, "files"), "validate.h"),
       "legacy: ... its files by name (validate.cc, validate.h)");
    is_str(str(c, "flags"), "strict extra",
           "legacy: the checker's flags: validator_flags + testdata.yaml (the most common)");
    tests = json_object_get(t, "tests");
    is_str(str(json_array_get(tests, 0), "flags"), "strict",
           "legacy: a test whose flags differ carries its own");
    ok(json_object_get(json_array_get(tests, 1), "flags") == NULL &&
           json_object_get(json_array_get(tests, 2), "flags") == NULL,
       "legacy: ... and those that have the checker's do not");
    is_str(str(t, "reference"), "print(1)\n",
           "legacy: the reference is the Python 3 submission (Python 2 and Ruby cannot run)");
    is_str(str(t, "language"), "python", "legacy: the language is the reference's");
    ok(json_integer_value(json_object_get(json_object_get(t, "limits"), "cpu_time")) == 3 &&
           json_integer_value(json_object_get(json_object_get(t, "limits"), "memory_mb")) == 256 &&
           json_integer_value(json_object_get(json_object_get(t, "limits"), "output_kb")) == 2048 &&
           has_tag(t, "time-limit:timelimit-file"),
       "legacy: .timelimit, limits.memory, limits.output in MiB");
    ok(starts_with(str(t, "prompt"),
                   "\\problemname{Diff}\nPrint |a-b|.\n\nSample Input 1\n```\n1\n```\nSample "
                   "Output 1\n```\n1\n```\n"),
       "legacy: the English statement, then the samples");
    ok(has_tag(t, "validation:custom") && has_tag(t, "format:legacy") &&
           has_tag(t, "kattis:pass-fail") && has_tag(t, "source:kattis"),
       "legacy: tags");
    run_release(&r);

    /* the reference among C++ and Java when there is no Python */
    rm("legacy/submissions/accepted/d.py");
    convert(&r, "legacy");
    is_str(str(json_array_get(r.tasks, 0), "language"), "cpp",
           "legacy: without Python, the C++ submission is the reference");
    run_release(&r);

    /* one-file validator; interactive */
    rm("legacy/output_validators/v");
    put("legacy/output_validators/check.py", "import sys\nsys.exit(42)\n");
    put("legacy/problem.yaml", "validation: custom interactive\n");
    convert(&r, "legacy");
    t = json_array_get(r.tasks, 0);
    c = json_object_get(t, "interactor");
    is_str(str(t, "harness"), "interactive", "legacy: validation custom interactive");
    ok(c && strcmp(str(c, "language"), "python") == 0 &&
           strcmp(str(c, "code"), "import sys\nsys.exit(42)\n") == 0 &&
           json_object_get(t, "checker") == NULL,
       "legacy: the validator is the interactor, one file as 'code'");
    ok(has_tag(t, "kattis:interactive") && has_tag(t, "validation:interactive"),
       "legacy: interactive tags");
    run_release(&r);

    put("legacy/output_validators/check.py", "#!/usr/bin/env python2\nimport sys\n");
    refused("legacy",
            "output validator output_validators/check.py is Python 2, which crucible "
            "cannot run",
            "refused: a validator in a language crucible lacks");
    put("legacy/problem.yaml", "validation: custom score\n");
    refused("legacy", "validation: custom score", "refused: custom score");
    put("legacy/problem.yaml", "validation: default\n");
    refused("legacy", "has validator programs but problem.yaml says validation: default",
            "refused: validators with validation: default");
    rm("legacy/output_validators");
    put("legacy/problem.yaml", "validation: custom interactive\n");
    refused("legacy", "needs its interactor in output_validators/",
            "refused: an interactive problem without a validator");
    put("legacy/problem.yaml", "type: scoring\ngrading:\n  objective: min\n");
    refused("legacy", "objective min", "refused: lower scores better");
    put("legacy/problem.yaml", "name: [unclosed\n");
    refused("legacy", "problem.yaml: line 2",
            "refused: problem.yaml that is not YAML, with the line");
    put("legacy/problem.yaml", "validator_flags: case_sensitive\n");
    put("legacy/output_validator/x.py", "pass\n");
    refused("legacy", "output_validator/ is where the 2023-07 layout keeps output validators",
            "refused: the other layout's validator directory");
    rm("legacy/output_validator");
    put("legacy/graders/g.py", "pass\n");
    refused("legacy", "graders/", "refused: a custom grader");
    rm("legacy/graders");
    rm("legacy/data/secret/testdata.yaml");
    put("legacy/data/secret/big.in", "1\n");
    put("legacy/data/secret/big.ans", "0123456789\n");
    put("legacy/problem.yaml", "limits:\n  output: 0.000001\n");
    refused("legacy", "must be between", "refused: an output limit out of range");
    put("legacy/problem.yaml", "limits:\n  output: 0.001\n");
    {
        char big[1200];
        memset(big, 'x', sizeof(big) - 2);
        big[sizeof(big) - 2] = '\n';
        big[sizeof(big) - 1] = '\0';
        put("legacy/data/secret/big.ans", big);
    }
    refused("legacy", "is larger than the output limit",
            "refused: an answer over the output limit");
}

static void test_2023(void)
{
    struct run r;
    const json_t *t, *tests;

    put("new/problem.yaml", "problem_format_version: 2023-07-draft\n"
                            "name:\n  en: Echo\n  sv: Eko\n"
                            "type: [scoring]\n"
                            "limits:\n  time_limit: 2.5\n  memory: 512\n");
    put("new/statement/problem.sv.md", "Svenska\n");
    put("new/statement/problem.en.md", "Echo every word.\n");
    pair("new", "sample/1");
    pair("new", "secret/g1/1");
    pair("new", "secret/g1/2");
    pair("new", "secret/g2/1");
    put("new/data/testdata.yaml", "on_reject: continue\ngrader_flags: ignore_sample\n");
    put("new/data/sample/testdata.yaml", "accept_score: 0\n");
    put("new/data/secret/testdata.yaml", "on_reject: continue\ngrader_flags: first_error\n");
    put("new/data/secret/g1/testdata.yaml",
        "accept_score: 30\ngrader_flags: min\noutput_validator_flags: case_sensitive\n");
    put("new/data/secret/g2/testdata.yaml", "accept_score: 70\ngrader_flags: min\n");
    convert(&r, "new");
    diag("%s", r.errs ? r.errs : "");
    t = json_array_get(r.tasks, 0);
    tests = json_object_get(t, "tests");
    is_int(json_array_size(tests), 3, "2023-07: the ignored sample is not a test");
    is_str(str(json_array_get(tests, 0), "group"), "secret/g1", "2023-07: tests carry their group");
    ok(json_object_get(json_array_get(tests, 0), "flags") == NULL,
       "2023-07: g1's tests have the checker's flags: none of their own");
    is_str(str(json_object_get(t, "checker"), "flags"), "case_sensitive",
           "2023-07: ... which most tests have: the checker's");
    is_str(str(json_array_get(tests, 2), "flags"), "", "2023-07: g2's test has none, and says so");
    ok(json_array_size(json_object_get(t, "groups")) == 2 &&
           json_integer_value(
               json_object_get(json_array_get(json_object_get(t, "groups"), 1), "score")) == 70,
       "2023-07: groups with scores");
    ok(json_real_value(json_object_get(json_object_get(t, "limits"), "cpu_time")) == 2.5 &&
           has_tag(t, "time-limit:problem.yaml") && has_tag(t, "kattis:scoring") &&
           has_tag(t, "format:2023-07"),
       "2023-07: limits.time_limit, tags");
    ok(starts_with(str(t, "prompt"), "# Echo\n\nEcho every word.\n\nSample Input 1\n"),
       "2023-07: the English Markdown statement, titled from problem.yaml");
    run_release(&r);

    put("new/output_validator/validate.py", "import sys\n");
    refused("new", "may award scores of its own", "refused: a 2023-07 scoring problem's validator");
    put("new/problem.yaml", "problem_format_version: 2023-07-draft\ntype: pass-fail\n");
    put("new/data/testdata.yaml", "");
    put("new/data/sample/testdata.yaml", "");
    put("new/data/secret/g1/testdata.yaml", "");
    put("new/data/secret/g2/testdata.yaml", "");
    convert(&r, "new");
    t = json_array_get(r.tasks, 0);
    ok(t && strcmp(str(json_object_get(t, "checker"), "type"), "validator") == 0 &&
           strcmp(str(json_object_get(t, "checker"), "language"), "python") == 0 &&
           json_object_get(json_object_get(json_object_get(t, "checker"), "files"), "validate.py"),
       "2023-07: output_validator/ with its files directly inside is one program");
    run_release(&r);
    put("new/output_validator/validate.hs", "main = pure ()\n");
    rm("new/output_validator/validate.py");
    refused("new", "is Haskell, which crucible cannot run", "refused: a Haskell validator");
    rm("new/output_validator");
    put("new/output_validators/v.py", "pass\n");
    refused("new", "output_validators/ is where the legacy layout keeps output validators",
            "refused: a 2023-07 package with output_validators/");
    rm("new/output_validators");
    put("new/problem.yaml", "problem_format_version: 2023-07\ntype: [pass-fail, multi-pass]\n");
    refused("new", "type multi-pass", "refused: multi-pass");
    put("new/problem.yaml", "problem_format_version: 2023-07\ntype: submit-answer\n");
    refused("new", "type submit-answer", "refused: submit-answer");
    put("new/problem.yaml", "problem_format_version: 2023-07\ntype: [pass-fail, scoring]\n");
    refused("new", "both pass-fail and scoring", "refused: pass-fail and scoring");
    put("new/problem.yaml", "problem_format_version: 2023-07\ntype: golf\n");
    refused("new", "unknown type 'golf'", "refused: an unknown type");
    put("new/problem.yaml", "problem_format_version: 2099-01\n");
    refused("new", "problem_format_version '2099-01'", "refused: an unknown format version");
    put("new/problem.yaml", "problem_format_version: 2023-07\nvalidator_flags: x\n");
    refused("new", "'validation' and 'validator_flags' are legacy keys",
            "refused: legacy keys in a 2023-07 problem.yaml");
    put("new/problem.yaml", "problem_format_version: 2023-07\ntype: interactive\n");
    refused("new", "interactive problem needs its interactor in output_validator/",
            "refused: 2023-07 interactive without a validator");
    put("new/problem.yaml", "problem_format_version: 2023-07\nlimits:\n  time_limit: fast\n");
    refused("new", "problem.yaml:3: 'limits.time_limit' must be a number",
            "refused: a time limit that is not a number, with its line");
    put("new/problem.yaml", "problem_format_version: 2023-07\n");
    put("new/data/secret/g1/testdata.yaml", "output_validator_flags: ignore_case\n");
    refused("new", "data/secret/g1/testdata.yaml:1: unknown default validator flag 'ignore_case'",
            "refused: an unknown default-validator flag in testdata.yaml");
}

int main(void)
{
    char cmd[300];

    snprintf(tmp, sizeof(tmp), "%s/crucible-kattis.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp)) {
        printf("Bail out! cannot make a temporary directory\n");
        return 1;
    }
    test_flags();
    test_languages();
    test_time_limits();
    test_data();
    test_symlinks();
    test_plans();
    test_legacy();
    test_2023();
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        diag("cannot remove %s", tmp);
    return done_testing();
}
