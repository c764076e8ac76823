/*
 * convert_kattis.c — Kattis / problemtools problem packages to stdio tasks (convert.h).
 *
 * A package is a directory with problem.yaml, problem_statement/ and data/ holding .in
 * and .ans files (https://www.kattis.com/problem-package-format/). PATH is one package
 * or a tree of them; a package's id is kattis/ + its path relative to PATH (the
 * directory's own name when PATH is the package), packages in byte order of their paths.
 *
 * problem.yaml is read by convert_yaml_get, a line scanner, not a YAML parser: the keys
 * used here are plain scalars (validation, output_validator_flags or the older
 * validator_flags, limits.time_limit, limits.memory). A package with custom validation
 * (validation: custom, or an output_validators/ directory) cannot be checked by a
 * built-in checker and is reported and skipped.
 *
 * The task: language python (packages ship no reference; the language is only the
 * default), harness stdio; one test per .in file under data/ with its .ans, named by its
 * path under data/ without the extension, sorted; checker float with the default
 * validator's tolerances, else "tokens" (the default validator compares tokens too, but
 * ignores case unless case_sensitive is given; "tokens" does not); prompt = the statement
 * as text (convert_html_text), or problem.tex as written; limits: cpu_time and memory_mb
 * from problem.yaml, else from the statement's "Time limit: N seconds" and "Memory limit:
 * N GB" lines (the largest; Code Jam packages have none in problem.yaml), wall_time twice
 * cpu_time, and output_kb raised when an .ans is near the default output cap. A .in or
 * .ans that is not UTF-8 makes the problem an error (reported, skipped).
 */
#include "library/convert_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define KATTIS_DEPTH    16                /* directory levels searched for packages */
#define KATTIS_FILE_MAX ((size_t)1 << 30) /* bytes of one .in or .ans */
#define KATTIS_YAML_MAX ((size_t)1 << 20) /* bytes of problem.yaml or a statement */
#define CPU_TIME_MAX    3600.0            /* seconds, as the sandbox's range */
#define MEMORY_MB_MAX   1048576.0
#define OUTPUT_KB_DEF   1024 /* the sandbox's default output cap */
/* Paths longer than PATH_MAX - PATH_SLACK are refused, never truncated: the slack is room
 * for what is appended to a package or test path ("/problem_statement/problem.en.html"). */
#define PATH_SLACK 64

/* ---- problem.yaml -------------------------------------------------------------------- */

/* yaml_value(v, n, out, size) — a scalar's text without quotes or a trailing comment. */
static bool yaml_value(const char *v, size_t n, char *out, size_t size)
{
    while (n && (*v == ' ' || *v == '\t')) {
        v++;
        n--;
    }
    if (n && (*v == '"' || *v == '\'')) {
        const char *q = memchr(v + 1, *v, n - 1);
        if (q) {
            n = (size_t)(q - v - 1);
            v++;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            if (v[i] == '#' && (i == 0 || v[i - 1] == ' ' || v[i - 1] == '\t')) {
                n = i;
                break;
            }
        }
        while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r'))
            n--;
    }
    if (n >= size)
        return false;
    memcpy(out, v, n);
    out[n] = '\0';
    return true;
}

bool convert_yaml_get(const char *yaml, const char *key, char *out, size_t size)
{
    const char *dot = strchr(key, '.'), *line, *nl, *want = dot ? dot + 1 : key;
    size_t parent_n = dot ? (size_t)(dot - key) : 0, want_n = strlen(want);
    bool inside = false;

    for (line = yaml; line && *line; line = nl ? nl + 1 : NULL) {
        size_t n, indent;
        nl = strchr(line, '\n');
        n = nl ? (size_t)(nl - line) : strlen(line);
        indent = strspn(line, " \t");
        if (indent >= n || line[indent] == '#' || line[indent] == '\r')
            continue; /* blank or comment */
        if (indent == 0) {
            inside =
                dot && n > parent_n && strncmp(line, key, parent_n) == 0 && line[parent_n] == ':';
            if (dot)
                continue;
        } else if (!dot || !inside) {
            continue;
        }
        if (n - indent > want_n && strncmp(line + indent, want, want_n) == 0 &&
            line[indent + want_n] == ':' &&
            (n == indent + want_n + 1 || line[indent + want_n + 1] == ' ' ||
             line[indent + want_n + 1] == '\t' || line[indent + want_n + 1] == '\r'))
            return yaml_value(line + indent + want_n + 1, n - indent - want_n - 1, out, size);
    }
    return false;
}

/* flag_number(tok, n, &v) — a non-negative finite number filling the whole token. */
static bool flag_number(const char *tok, size_t n, double *v)
{
    char num[64], *end;

    if (n == 0 || n >= sizeof(num))
        return false;
    memcpy(num, tok, n);
    num[n] = '\0';
    errno = 0;
    *v = strtod(num, &end);
    return !errno && *end == '\0' && isfinite(*v) && *v >= 0;
}

int convert_validator_flags(const char *flags, double *abs_tol, double *rel_tol)
{
    const char *p = flags ? flags : "";
    int found = 0;

    *abs_tol = *rel_tol = 0;
    while (*p) {
        size_t n, vn;
        const char *v;
        double x;
        bool both, isabs, isrel;
        p += strspn(p, " \t");
        n = strcspn(p, " \t");
        if (!n)
            break;
        both = n == 15 && strncmp(p, "float_tolerance", n) == 0;
        isabs = n == 24 && strncmp(p, "float_absolute_tolerance", n) == 0;
        isrel = n == 24 && strncmp(p, "float_relative_tolerance", n) == 0;
        p += n;
        if (!both && !isabs && !isrel)
            continue;
        v = p + strspn(p, " \t");
        vn = strcspn(v, " \t");
        if (!flag_number(v, vn, &x))
            return -EINVAL;
        if (both || isabs)
            *abs_tol = x;
        if (both || isrel)
            *rel_tol = x;
        found = 1;
        p = v + vn;
    }
    return found;
}

/* ---- the statement ------------------------------------------------------------------- */

/* Elements whose content is not statement text. */
static const char *const html_skip[] = {"head", "script", "style", "noscript", "template"};
/* Classes of the Code Jam page's widgets (icon ligatures, "Copied!" pop-ups). */
static const char *const html_skip_class[] = {"material-icons", "copy-popup"};
/* Elements that end a line, and those that end a paragraph (a blank line follows). */
static const char *const html_line[] = {"br", "dd", "dt", "li", "td", "th", "tr"};
static const char *const html_para[] = {"address", "blockquote", "div",     "dl",    "h1", "h2",
                                        "h3",      "h4",         "h5",      "h6",    "hr", "ol",
                                        "p",       "pre",        "section", "table", "ul"};

static const struct {
    const char *name;
    const char *text;
} html_entities[] = {
    {"amp", "&"},    {"lt", "<"},    {"gt", ">"},    {"quot", "\""},  {"apos", "'"},
    {"nbsp", " "},   {"le", "≤"},    {"ge", "≥"},    {"ne", "≠"},     {"times", "×"},
    {"rarr", "→"},   {"larr", "←"},  {"mdash", "—"}, {"ndash", "–"},  {"hellip", "…"},
    {"middot", "·"}, {"minus", "−"}, {"infin", "∞"}, {"lsquo", "‘"},  {"rsquo", "’"},
    {"ldquo", "“"},  {"rdquo", "”"}, {"deg", "°"},   {"plusmn", "±"}, {"cdot", "⋅"},
};

static bool name_in(const char *const *list, size_t count, const char *name)
{
    for (size_t i = 0; i < count; i++)
        if (strcasecmp(list[i], name) == 0)
            return true;
    return false;
}

/* put_utf8(b, cp) — appends code point cp as UTF-8 (nothing for invalid ones). */
static void put_utf8(struct convert_buf *b, unsigned long cp)
{
    char u[4];

    if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return;
    if (cp < 0x80) {
        u[0] = (char)cp;
        convert__buf_add(b, u, 1);
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3f));
        convert__buf_add(b, u, 2);
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        convert__buf_add(b, u, 3);
    } else {
        u[0] = (char)(0xf0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (char)(0x80 | (cp & 0x3f));
        convert__buf_add(b, u, 4);
    }
}

/* entity(p, end, b) — decodes the entity at p ('&'); returns its length, 0 if none. */
static size_t entity(const char *p, const char *end, struct convert_buf *b)
{
    const char *semi = memchr(p, ';', (size_t)(end - p) < 12 ? (size_t)(end - p) : 12);
    size_t n;

    if (!semi)
        return 0;
    n = (size_t)(semi - p - 1);
    if (n >= 2 && p[1] == '#') {
        char num[12], *e;
        unsigned long cp;
        bool hex = p[2] == 'x' || p[2] == 'X';
        snprintf(num, sizeof(num), "%.*s", (int)(n - 1 - hex), p + 2 + hex);
        cp = strtoul(num, &e, hex ? 16 : 10);
        if (*e || !num[0])
            return 0;
        put_utf8(b, cp);
        return n + 2;
    }
    for (size_t i = 0; i < sizeof(html_entities) / sizeof(html_entities[0]); i++) {
        if (strlen(html_entities[i].name) == n && memcmp(p + 1, html_entities[i].name, n) == 0) {
            convert__buf_puts(b, html_entities[i].text);
            return n + 2;
        }
    }
    return 0;
}

/* line_break(b, blank) — ends the current line (trailing spaces dropped), and with blank
 * the paragraph; never more than one blank line, none at the start. */
static void line_break(struct convert_buf *b, bool blank)
{
    size_t have = 0, want = blank ? 2 : 1;

    while (b->len && b->s[b->len - 1] == ' ')
        b->s[--b->len] = '\0';
    while (have < b->len && b->s[b->len - 1 - have] == '\n')
        have++;
    if (b->len == 0)
        return;
    for (; have < want; have++)
        convert__buf_puts(b, "\n");
}

/* tag_end(p, end) — the '>' that closes the tag at p, quotes respected; end if none. */
static const char *tag_end(const char *p, const char *end)
{
    char q = 0;

    for (; p < end; p++) {
        if (q) {
            if (*p == q)
                q = 0;
        } else if (*p == '"' || *p == '\'') {
            q = *p;
        } else if (*p == '>') {
            return p;
        }
    }
    return end;
}

/* skip_element(p, end, name) — past the close tag matching an open <name> (nesting
 * counted); p is just after the open tag. */
static const char *skip_element(const char *p, const char *end, const char *name)
{
    size_t n = strlen(name);
    int depth = 1;

    while (p < end) {
        const char *lt = memchr(p, '<', (size_t)(end - p));
        if (!lt)
            return end;
        p = tag_end(lt, end);
        p = p < end ? p + 1 : end;
        if ((size_t)(end - lt) > n + 1 && lt[1] == '/' && strncasecmp(lt + 2, name, n) == 0 &&
            !isalnum((unsigned char)lt[2 + n])) {
            if (--depth == 0)
                return p;
        } else if ((size_t)(end - lt) > n && strncasecmp(lt + 1, name, n) == 0 &&
                   !isalnum((unsigned char)lt[1 + n]) && p[-2] != '/') {
            depth++;
        }
    }
    return end;
}

/* has_skip_class(tag, n) — does the tag's class attribute name a widget class? */
static bool has_skip_class(const char *tag, size_t n)
{
    char buf[512];
    const char *c;

    snprintf(buf, sizeof(buf), "%.*s", (int)(n < sizeof(buf) ? n : sizeof(buf) - 1), tag);
    c = strstr(buf, "class=");
    if (!c)
        return false;
    for (size_t i = 0; i < sizeof(html_skip_class) / sizeof(html_skip_class[0]); i++)
        if (strstr(c, html_skip_class[i]))
            return true;
    return false;
}

char *convert_html_text(const char *html, size_t len)
{
    const char *p = html, *end = html + len;
    struct convert_buf b = {0};
    int pre = 0;

    convert__buf_add(&b, "", 0);
    while (p < end) {
        if (*p == '<') {
            const char *close, *nm;
            char name[16];
            size_t n;
            bool closing;
            if (end - p >= 4 && strncmp(p, "<!--", 4) == 0) {
                const char *c = memmem(p + 4, (size_t)(end - p - 4), "-->", 3);
                p = c ? c + 3 : end;
                continue;
            }
            close = tag_end(p, end);
            closing = p + 1 < end && p[1] == '/';
            nm = p + 1 + closing;
            n = 0;
            while (nm + n < close && (isalnum((unsigned char)nm[n])) && n < sizeof(name) - 1) {
                name[n] = (char)tolower((unsigned char)nm[n]);
                n++;
            }
            name[n] = '\0';
            p = close < end ? close + 1 : end;
            if (!n)
                continue; /* <!DOCTYPE>, <?xml?> and the like */
            if (!closing && (name_in(html_skip, sizeof(html_skip) / sizeof(html_skip[0]), name) ||
                             has_skip_class(nm, (size_t)(close - nm)))) {
                p = skip_element(p, end, name);
                continue;
            }
            if (name_in(html_line, sizeof(html_line) / sizeof(html_line[0]), name))
                line_break(&b, false);
            if (name_in(html_para, sizeof(html_para) / sizeof(html_para[0]), name))
                line_break(&b, true);
            if (!closing && strcmp(name, "li") == 0)
                convert__buf_puts(&b, "- ");
            if (strcmp(name, "pre") == 0) {
                pre += closing ? (pre > 0 ? -1 : 0) : 1;
                if (!closing && p < end && *p == '\n')
                    p++; /* a newline right after <pre> is not content (HTML) */
            }
            continue;
        }
        if (*p == '&') {
            size_t n = entity(p, end, &b);
            if (n) {
                p += n;
                continue;
            }
        }
        if (!pre && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
            if (b.len && b.s[b.len - 1] != ' ' && b.s[b.len - 1] != '\n')
                convert__buf_puts(&b, " ");
            p++;
            continue;
        }
        convert__buf_add(&b, p, 1);
        p++;
    }
    line_break(&b, false);
    while (b.len && b.s[b.len - 1] == '\n')
        b.s[--b.len] = '\0';
    convert__buf_puts(&b, "\n");
    if (b.oom) {
        convert__buf_release(&b);
        errno = ENOMEM;
        return NULL;
    }
    return b.s;
}

/* ---- files --------------------------------------------------------------------------- */

/* read_file(path, max, &buf, &len) — the whole file (NUL-terminated, caller frees);
 * 0 or -errno. */
static int read_file(const char *path, size_t max, char **buf, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), e;

    if (fd < 0)
        return -errno;
    e = util_read_fd(fd, buf, len, max);
    close(fd);
    return e;
}

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

/* A list of names (test paths under data/), grown as found. */
struct names {
    char **v;
    size_t n, cap;
};

static void names_release(struct names *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

static int names_add(struct names *l, const char *s, size_t n)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **v = realloc(l->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n] = strndup(s, n);
    return l->v[l->n] ? (l->n++, 0) : -ENOMEM;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* find_tests(data, rel, depth, l) — the .in files under data/rel, as "rel/name" without
 * the extension. 0 or -errno. */
static int find_tests(const char *data, const char *rel, int depth, struct names *l)
{
    struct dirent **ents;
    char dir[PATH_MAX], sub[PATH_MAX];
    int n, e = 0;

    snprintf(dir, sizeof(dir), "%s%s%s", data, rel[0] ? "/" : "", rel);
    n = scandir(dir, &ents, not_hidden, by_name);
    if (n < 0)
        return -errno;
    for (int i = 0; i < n; i++) {
        const char *name = ents[i]->d_name;
        size_t len = strlen(name);
        if (strlen(data) + strlen(rel) + len + PATH_SLACK > PATH_MAX)
            e = e ? e : -ENAMETOOLONG;
        snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", name);
        snprintf(dir, sizeof(dir), "%s/%s", data, sub);
        if (!e && depth < KATTIS_DEPTH && is_dir(dir))
            e = find_tests(data, sub, depth + 1, l);
        else if (!e && len > 3 && strcmp(name + len - 3, ".in") == 0)
            e = names_add(l, sub, strlen(sub) - 3);
        free(ents[i]);
    }
    free(ents);
    return e;
}

/* ---- one package --------------------------------------------------------------------- */

/* statement_limits(text, &cpu, &mem) — the largest "Time limit: N second(s)" and
 * "Memory limit: N GB|MB" of a statement's text (0 when absent). */
static void statement_limits(const char *text, double *cpu, double *mem)
{
    static const char *const keys[] = {"Time limit:", "Memory limit:"};

    *cpu = *mem = 0;
    for (int k = 0; k < 2; k++) {
        for (const char *p = text; (p = strcasestr(p, keys[k])); p++) {
            char *e;
            double v = strtod(p + strlen(keys[k]), &e);
            if (e == p + strlen(keys[k]) || !isfinite(v) || v <= 0)
                continue;
            e += strspn(e, " ");
            if (k == 0 && strncasecmp(e, "second", 6) == 0 && v > *cpu)
                *cpu = v;
            if (k == 1 && strncasecmp(e, "GB", 2) == 0 && v * 1024 > *mem)
                *mem = v * 1024;
            if (k == 1 && strncasecmp(e, "MB", 2) == 0 && v > *mem)
                *mem = v;
        }
    }
}

/* statement(dir, &text) — the statement as text, or NULL text when there is none.
 * 0, -EILSEQ (not UTF-8), or -errno. */
static int statement(const char *dir, char **text)
{
    static const char *const files[] = {"problem.html", "problem.en.html", "problem.tex",
                                        "problem.en.tex"};
    char path[PATH_MAX];
    char *buf;
    size_t len;
    int e;

    *text = NULL;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(path, sizeof(path), "%s/problem_statement/%s", dir, files[i]);
        if (!is_file(path))
            continue;
        e = read_file(path, KATTIS_YAML_MAX, &buf, &len);
        if (e)
            return e;
        if (!util_utf8_valid(buf, len)) {
            free(buf);
            return -EILSEQ;
        }
        if (strstr(files[i], ".html")) {
            *text = convert_html_text(buf, len);
            free(buf);
            return *text ? 0 : -ENOMEM;
        }
        *text = buf;
        return 0;
    }
    return 0;
}

/* set_number(obj, key, v) — obj[key] = v, an integer when v is whole. */
static int set_number(json_t *obj, const char *key, double v)
{
    json_t *j = v < 1e15 && v == (double)(json_int_t)v ? json_integer((json_int_t)v) : json_real(v);

    return j && json_object_set_new(obj, key, j) == 0 ? 0 : -ENOMEM;
}

/* add_test(tests, data, name, pkg, r, &maxans) — one test from data/name.in and .ans.
 * 1 when the problem must be skipped (reported), 0, or -ENOMEM. */
static int add_test(struct convert_run *r, json_t *tests, const char *data, const char *name,
                    const char *id, size_t *maxans)
{
    static const char *const ext[] = {".in", ".ans"};
    static const char *const key[] = {"stdin", "expected"};
    json_t *t = json_object();
    char path[PATH_MAX];
    int e = 0;

    if (!t || json_object_set_new(t, "name", json_string(name)) || json_array_append_new(tests, t))
        return -ENOMEM;
    for (int k = 0; k < 2 && !e; k++) {
        char *buf;
        size_t len;
        snprintf(path, sizeof(path), "%s/%s%s", data, name, ext[k]);
        e = read_file(path, KATTIS_FILE_MAX, &buf, &len);
        if (e) {
            convert__bad(r, path, "cannot read: %s; problem '%s' skipped", strerror(-e), id);
            return 1;
        }
        if (!util_utf8_valid(buf, len)) {
            free(buf);
            convert__bad(r, path, "not valid UTF-8; problem '%s' skipped", id);
            return 1;
        }
        if (k == 1 && len > *maxans)
            *maxans = len;
        e = json_object_set_new(t, key[k], json_stringn(buf, len)) ? -ENOMEM : 0;
        free(buf);
    }
    return e;
}

/* convert_package(r, dir, id) — one problem package; a bad one is reported and skipped. */
static int convert_package(struct convert_run *r, const char *dir, const char *id)
{
    char path[PATH_MAX], data[PATH_MAX], val[512];
    char *yaml = NULL, *text = NULL;
    struct names tests = {0};
    json_t *task = NULL, *list, *limits;
    double abs_tol, rel_tol, cpu = 0, mem = 0;
    size_t len, maxans = 0;
    int e, flags;

    snprintf(path, sizeof(path), "%s/problem.yaml", dir);
    e = read_file(path, KATTIS_YAML_MAX, &yaml, &len);
    if (e) {
        convert__bad(r, path, "cannot read: %s; problem '%s' skipped", strerror(-e), id);
        return 0;
    }
    snprintf(path, sizeof(path), "%s/output_validators", dir);
    if ((convert_yaml_get(yaml, "validation", val, sizeof(val)) && strstr(val, "custom")) ||
        is_dir(path)) {
        convert__bad(r, dir, "custom output validation is not supported; problem '%s' skipped", id);
        goto out;
    }
    if (!convert_yaml_get(yaml, "output_validator_flags", val, sizeof(val)) &&
        !convert_yaml_get(yaml, "validator_flags", val, sizeof(val)))
        val[0] = '\0';
    flags = convert_validator_flags(val, &abs_tol, &rel_tol);
    if (flags < 0) {
        convert__bad(r, dir, "bad validator flags '%s' in problem.yaml; problem '%s' skipped", val,
                     id);
        goto out;
    }

    snprintf(data, sizeof(data), "%s/data", dir);
    e = find_tests(data, "", 0, &tests);
    if (e == -ENOMEM)
        goto out;
    if (e || tests.n == 0) {
        convert__bad(r, data, "%s; problem '%s' skipped", e ? strerror(-e) : "no test (*.in file)",
                     id);
        e = 0;
        goto out;
    }
    qsort(tests.v, tests.n, sizeof(tests.v[0]), cmp_names);

    e = -ENOMEM;
    task = json_object();
    list = json_array();
    if (!task || !list || json_object_set_new(task, "tests", list))
        goto out;
    for (size_t i = 0; i < tests.n; i++) {
        e = add_test(r, list, data, tests.v[i], id, &maxans);
        if (e) {
            e = e == 1 ? 0 : e; /* 1: reported, the problem is skipped */
            goto out;
        }
    }

    e = statement(dir, &text);
    if (e == -ENOMEM)
        goto out;
    if (e) {
        snprintf(path, sizeof(path), "%s/problem_statement", dir);
        convert__bad(r, path, "%s; problem '%s' skipped",
                     e == -EILSEQ ? "statement is not valid UTF-8" : strerror(-e), id);
        e = 0;
        goto out;
    }

    e = -ENOMEM;
    if (json_object_set_new(task, "id", json_string(id)) ||
        json_object_set_new(task, "source", json_string("kattis")) ||
        json_object_set_new(task, "language", json_string("python")) ||
        json_object_set_new(task, "harness", json_string("stdio")) ||
        (text && json_object_set_new(task, "prompt", json_string(text))))
        goto out;
    if (flags > 0) {
        json_t *c = json_object();
        if (!c || json_object_set_new(task, "checker", c) ||
            json_object_set_new(c, "type", json_string("float")) ||
            json_object_set_new(c, "abs_tol", json_real(abs_tol)) ||
            json_object_set_new(c, "rel_tol", json_real(rel_tol)))
            goto out;
    } else if (json_object_set_new(task, "checker", json_string("tokens"))) {
        goto out;
    }

    if (convert_yaml_get(yaml, "limits.time_limit", val, sizeof(val)))
        cpu = strtod(val, NULL);
    if (convert_yaml_get(yaml, "limits.memory", val, sizeof(val)))
        mem = strtod(val, NULL);
    if (text && (!(cpu > 0) || !(mem > 0))) {
        double scpu, smem;
        statement_limits(text, &scpu, &smem);
        cpu = cpu > 0 ? cpu : scpu;
        mem = mem > 0 ? mem : smem;
    }
    limits = json_object();
    if (!limits || json_object_set_new(task, "limits", limits))
        goto out;
    if (cpu > 0 && cpu <= CPU_TIME_MAX &&
        (set_number(limits, "cpu_time", cpu) || set_number(limits, "wall_time", 2 * cpu)))
        goto out;
    if (mem >= 8 && mem <= MEMORY_MB_MAX &&
        set_number(limits, "memory_mb", (double)(json_int_t)mem))
        goto out;
    if (maxans > (size_t)OUTPUT_KB_DEF * 1024 / 2 &&
        set_number(limits, "output_kb", (double)(maxans * 2 / 1024 + 1)))
        goto out;
    if (json_object_size(limits) == 0)
        json_object_del(task, "limits");
    if (convert__add_tag(task, "source:kattis"))
        goto out;
    e = convert__finish(r, task, dir);
    task = NULL;
out:
    json_decref(task);
    free(text);
    free(yaml);
    names_release(&tests);
    return e;
}

/* ---- the tree ------------------------------------------------------------------------ */

/* walk(r, root, rel, depth, &found) — every package under root/rel, in byte order. */
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
        snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", ents[i]->d_name);
        snprintf(dir, sizeof(dir), "%s/%s", root, sub);
        if (strlen(root) + strlen(rel) + strlen(ents[i]->d_name) + PATH_SLACK > PATH_MAX) {
            convert__bad(r, dir, "path too long; skipped");
        } else if (!e && is_dir(dir)) {
            char yaml[PATH_MAX + 16];
            snprintf(yaml, sizeof(yaml), "%s/problem.yaml", dir);
            if (is_file(yaml)) {
                (*found)++;
                snprintf(id, sizeof(id), "kattis/%s", sub);
                e = convert_package(r, dir, id);
            } else if (depth < KATTIS_DEPTH) {
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
