/*
 * convert_html.c — a statement's HTML as plain text (convert_html_text in convert.h), for
 * prompts of problem packages whose statement is an HTML page (the Code Jam archive's).
 */
#include "library/convert_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
