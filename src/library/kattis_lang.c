/*
 * kattis_lang.c — problemtools' language table and detection, the default output
 * validator's flags, and the time-limit rule (kattis.h). The table is languages.yaml of
 * problemtools (a185fe9) as data: ids, priorities and file globs, plus the crucible
 * language each maps to when crucible's table (src/judge/lang.c) has it.
 */
#include "library/kattis.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct kattis_lang langs[] = {
    {"c", "C", "c", 950, "*.c", false},
    {"cpp", "C++", "cpp", 1000, "*.cc *.C *.cpp *.cxx *.c++", false},
    {"csharp", "C#", NULL, 700, "*.cs", false},
    {"cobol", "Cobol", NULL, 50, "*.cob", false},
    {"fsharp", "F#", NULL, 675, "*.fs", false},
    {"go", "Go", "go", 400, "*.go", false},
    {"haskell", "Haskell", NULL, 600, "*.hs *.c", false},
    {"java", "Java", "java", 800, "*.java", false},
    {"javascript", "JavaScript", "javascript", 500, "*.js", false},
    {"kotlin", "Kotlin", NULL, 250, "*.kt", false},
    {"lisp", "Common Lisp", NULL, 200, "*.lisp *.cl", false},
    {"ocaml", "OCaml", NULL, 375, "*.ml", false},
    {"objectivec", "Objective C", NULL, 300, "*.m *.c", false},
    {"pascal", "Pascal", NULL, 350, "*.pas", false},
    {"php", "PHP", NULL, 450, "*.php", false},
    {"prolog", "Prolog", NULL, 100, "*.pl", false},
    {"python2", "Python 2", NULL, 860, "*.py *.py2", true},
    {"python3", "Python 3", "python", 850, "*.py *.py3", false},
    {"ruby", "Ruby", NULL, 650, "*.rb", false},
    {"rust", "Rust", "rust", 575, "*.rs", false},
    {"scala", "Scala", NULL, 550, "*.sc *.scala", false},
};

/* glob_match(globs, name) — does name match one of the space-separated globs? */
static bool glob_match(const char *globs, const char *name)
{
    char g[32];

    while (*globs) {
        size_t n = strcspn(globs, " ");
        if (n && n < sizeof(g)) {
            memcpy(g, globs, n);
            g[n] = '\0';
            if (fnmatch(g, name, 0) == 0)
                return true;
        }
        globs += n;
        globs += strspn(globs, " ");
    }
    return false;
}

/* python2_shebang(text) — does the first line match problemtools' ^#!.*python2\b ? */
static bool python2_shebang(const char *text)
{
    const char *nl, *p;

    if (!text || strncmp(text, "#!", 2) != 0)
        return false;
    nl = strchr(text, '\n');
    for (p = text + 2; (p = strstr(p, "python2")) && (!nl || p < nl); p++)
        if (!isalnum((unsigned char)p[7]) && p[7] != '_')
            return true;
    return false;
}

const struct kattis_lang *kattis_lang_detect(const struct kattis_file *files, size_t n)
{
    const struct kattis_lang *best = NULL;
    size_t best_count = 0;

    for (size_t l = 0; l < sizeof(langs) / sizeof(langs[0]); l++) {
        size_t count = 0;
        for (size_t i = 0; i < n; i++) {
            const char *base = strrchr(files[i].name, '/');
            base = base ? base + 1 : files[i].name;
            if (!glob_match(langs[l].files, base))
                continue;
            /* the shebang gate: *.py is evidence for Python 2 only with its shebang */
            if (langs[l].python2_gate && fnmatch("*.py", base, 0) == 0 &&
                !python2_shebang(files[i].text))
                continue;
            count++;
        }
        if (count &&
            (count > best_count || (count == best_count && langs[l].priority > best->priority))) {
            best = &langs[l];
            best_count = count;
        }
    }
    return best;
}

const struct kattis_lang *kattis_lang_by_crucible(const char *name)
{
    for (size_t l = 0; name && l < sizeof(langs) / sizeof(langs[0]); l++)
        if (langs[l].crucible && strcmp(langs[l].crucible, name) == 0)
            return &langs[l];
    return NULL;
}

/* ---- flags --------------------------------------------------------------------------- */

/* tolerance(tok, n) — is the token a finite number (the default validator's isfloat)? */
static bool tolerance(const char *tok, size_t n)
{
    char num[64], *end;
    double v;

    if (n == 0 || n >= sizeof(num))
        return false;
    memcpy(num, tok, n);
    num[n] = '\0';
    errno = 0;
    v = strtod(num, &end);
    return *end == '\0' && isfinite(v);
}

int kattis_flags_check(const char *flags, struct errbuf *err)
{
    static const char *const plain[] = {"case_sensitive", "space_change_sensitive"};
    static const char *const numeric[] = {"float_relative_tolerance", "float_absolute_tolerance",
                                          "float_tolerance"};
    const char *p = flags ? flags : "";

    for (;;) {
        size_t n;
        bool known = false;
        p += strspn(p, " \t\n");
        if (!*p)
            return 0;
        n = strcspn(p, " \t\n");
        for (size_t i = 0; i < 2 && !known; i++)
            known = strlen(plain[i]) == n && strncmp(p, plain[i], n) == 0;
        for (size_t i = 0; i < 3 && !known; i++) {
            if (strlen(numeric[i]) == n && strncmp(p, numeric[i], n) == 0) {
                const char *v = p + n + strspn(p + n, " \t\n");
                size_t vn = strcspn(v, " \t\n");
                if (!tolerance(v, vn))
                    return errbuf_set(err,
                                      "default validator flag '%.*s' wants a number after it, "
                                      "got '%.*s'",
                                      (int)n, p, (int)vn, v);
                n = (size_t)(v + vn - p);
                known = true;
            }
        }
        if (!known)
            return errbuf_set(err,
                              "unknown default validator flag '%.*s' (problemtools' default "
                              "validator knows case_sensitive, space_change_sensitive, "
                              "float_tolerance, float_relative_tolerance, "
                              "float_absolute_tolerance)",
                              (int)n, p);
        p += n;
    }
}

char *kattis_flags_join(const char *a, const char *b)
{
    const char *parts[2] = {a ? a : "", b ? b : ""};
    size_t cap = strlen(parts[0]) + strlen(parts[1]) + 2, len = 0;
    char *out = malloc(cap);

    if (!out)
        return NULL;
    for (int k = 0; k < 2; k++) {
        const char *p = parts[k];
        for (;;) {
            size_t n;
            p += strspn(p, " \t\n\r");
            if (!*p)
                break;
            n = strcspn(p, " \t\n\r");
            if (len)
                out[len++] = ' ';
            memcpy(out + len, p, n);
            len += n;
            p += n;
        }
    }
    out[len] = '\0';
    return out;
}

/* ---- time limits --------------------------------------------------------------------- */

double kattis_time_limit_round(double slowest, double multiplier, double resolution)
{
    double steps = ceil(slowest * multiplier / resolution);

    return (steps < 1 ? 1 : steps) * resolution;
}

bool kattis_timelimit_parse(const char *text, double *seconds)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(text, &end);
    if (end == text || errno || !isfinite(v) || v <= 0)
        return false;
    end += strspn(end, " \t\r\n");
    if (*end)
        return false;
    *seconds = v;
    return true;
}
