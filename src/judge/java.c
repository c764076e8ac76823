/*
 * java.c — the public class and the main class of a Java program, from its source text
 * (contract in java.h).
 *
 * Why the source and not the compiled .class files: javac refuses a public class in a file
 * not named after it, so the file name must be known before anything is compiled; and
 * reading class files back would mean parsing bytes the sandboxed compile step wrote. The
 * lexer is small: it splits the text into identifiers and punctuation, dropping comments,
 * string and char literals and text blocks whole; a scanner over the tokens follows the
 * braces to know which class body each declaration belongs to.
 */
#include "judge/java.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum tok_kind { TOK_IDENT, TOK_PUNCT, TOK_LITERAL };

struct tok {
    uint32_t start, len;
    enum tok_kind kind;
};

struct toks {
    struct tok *v;
    size_t n, cap;
};

static bool ident_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c >= 0x80;
}

static bool ident_part(unsigned char c)
{
    return ident_start(c) || (c >= '0' && c <= '9');
}

static bool push(struct toks *t, size_t start, size_t len, enum tok_kind kind)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        struct tok *v = realloc(t->v, cap * sizeof(*v));
        if (!v)
            return false;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = (struct tok){(uint32_t)start, (uint32_t)len, kind};
    return true;
}

/* skip_quoted(s, len, i, q) — past a '...' or "..." literal opened at i (to its closing quote,
 * or to the end of the line when unterminated). */
static size_t skip_quoted(const char *s, size_t len, size_t i, char q)
{
    for (i++; i < len && s[i] != q && s[i] != '\n'; i++)
        if (s[i] == '\\')
            i++;
    return i < len && s[i] == q ? i + 1 : i;
}

/* lex(s, len, t) — the tokens of s; false when out of memory. */
static bool lex(const char *s, size_t len, struct toks *t)
{
    size_t i = 0;

    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        size_t start = i;

        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
            i++;
        } else if (c == '/' && i + 1 < len && s[i + 1] == '/') {
            const char *nl = memchr(s + i, '\n', len - i);
            i = nl ? (size_t)(nl - s) : len;
        } else if (c == '/' && i + 1 < len && s[i + 1] == '*') {
            for (i += 2; i < len && !(s[i] == '*' && i + 1 < len && s[i + 1] == '/'); i++)
                ;
            i = i < len ? i + 2 : len;
        } else if (c == '"' && i + 2 < len && s[i + 1] == '"' && s[i + 2] == '"') {
            /* a text block: to the next unescaped """ */
            for (i += 3; i < len; i++) {
                if (s[i] == '\\') {
                    i++;
                } else if (s[i] == '"' && i + 2 < len && s[i + 1] == '"' && s[i + 2] == '"') {
                    i += 3;
                    break;
                }
            }
            if (i > len)
                i = len;
            if (!push(t, start, i - start, TOK_LITERAL))
                return false;
        } else if (c == '"' || c == '\'') {
            i = skip_quoted(s, len, i, (char)c);
            if (!push(t, start, i - start, TOK_LITERAL))
                return false;
        } else if (ident_start(c)) {
            while (i < len && ident_part((unsigned char)s[i]))
                i++;
            if (!push(t, start, i - start, TOK_IDENT))
                return false;
        } else if (c >= '0' && c <= '9') {
            /* a number: digits, letters (hex, suffixes, exponents), '_' and '.' */
            while (i < len && (ident_part((unsigned char)s[i]) || s[i] == '.'))
                i++;
            if (!push(t, start, i - start, TOK_LITERAL))
                return false;
        } else if (c == '.' && i + 2 < len && s[i + 1] == '.' && s[i + 2] == '.') {
            i += 3;
            if (!push(t, start, 3, TOK_PUNCT))
                return false;
        } else {
            i++;
            if (!push(t, start, 1, TOK_PUNCT))
                return false;
        }
    }
    return true;
}

/* ---- the scan ---- */

struct cls {
    size_t name_tok;
    int parent;      /* index of the enclosing class, -1 for a top-level one */
    bool top;        /* declared at file level */
    bool pub;        /* declared public */
    bool launchable; /* top-level, or a member of a launchable class */
    bool iface;      /* interface or annotation type: methods are public implicitly */
    bool has_main;
};

struct scope {
    int cls;       /* the class whose body this is, or -1 (file level, a block, a lambda...) */
    int paren;     /* open parentheses inside this scope */
    bool d_public; /* modifiers seen in the declaration being read */
    bool d_static;
    bool d_private;
};

#define MAX_DEPTH   512
#define MAX_CLASSES 4096

struct scan {
    const char *s;
    const struct toks *t;
    struct cls *cls;
    size_t ncls;
    struct scope sc[MAX_DEPTH];
    int depth; /* sc[depth] is the innermost scope; sc[0] is the file */
};

static bool is(const struct scan *x, size_t i, const char *text)
{
    size_t n = strlen(text);
    return i < x->t->n && x->t->v[i].len == n && memcmp(x->s + x->t->v[i].start, text, n) == 0;
}

static bool is_ident(const struct scan *x, size_t i)
{
    return i < x->t->n && x->t->v[i].kind == TOK_IDENT;
}

/* skip_annotation(x, i) — past an annotation starting at '@' (name and arguments). */
static size_t skip_annotation(const struct scan *x, size_t i)
{
    int depth = 0;

    i++;
    while (is_ident(x, i) && is(x, i + 1, ".") && is_ident(x, i + 2))
        i += 2;
    if (!is_ident(x, i))
        return i;
    i++;
    if (!is(x, i, "("))
        return i;
    for (; i < x->t->n; i++) {
        if (is(x, i, "("))
            depth++;
        else if (is(x, i, ")") && --depth == 0)
            return i + 1;
    }
    return i;
}

/* main_params(x, i, end) — the tokens [i, end) (a parameter list without its parentheses)
 * declare exactly one String[] / String... parameter, modifiers and annotations apart. */
static bool main_params(const struct scan *x, size_t i, size_t end)
{
    size_t k[8], n = 0;

    while (i < end) {
        if (is(x, i, "@")) {
            i = skip_annotation(x, i);
            continue;
        }
        if (is(x, i, "final")) {
            i++;
            continue;
        }
        if (n == 8)
            return false;
        k[n++] = i++;
    }
    size_t p = 0;
    if (n >= 4 && is(x, k[0], "java") && is(x, k[1], ".") && is(x, k[2], "lang") &&
        is(x, k[3], "."))
        p = 4;
    if (p >= n || !is(x, k[p], "String"))
        return false;
    p++;
    if (n - p == 3 && is(x, k[p], "[") && is(x, k[p + 1], "]") && is_ident(x, k[p + 2]))
        return true;
    if (n - p == 2 && is(x, k[p], "...") && is_ident(x, k[p + 1]))
        return true;
    return n - p == 3 && is_ident(x, k[p]) && is(x, k[p + 1], "[") && is(x, k[p + 2], "]");
}

/* closing_paren(x, i) — the index of the ')' matching the '(' at i, or t->n. */
static size_t closing_paren(const struct scan *x, size_t i)
{
    int depth = 0;

    for (; i < x->t->n; i++) {
        if (is(x, i, "("))
            depth++;
        else if (is(x, i, ")") && --depth == 0)
            return i;
    }
    return i;
}

/* binary_name(x, c, out) — Outer$Inner for class c; false when longer than JAVA_NAME_MAX. */
static bool binary_name(const struct scan *x, int c, char out[JAVA_NAME_MAX])
{
    const struct tok *tk = &x->t->v[x->cls[c].name_tok];
    size_t have = 0;

    if (x->cls[c].parent >= 0) {
        if (!binary_name(x, x->cls[c].parent, out))
            return false;
        have = strlen(out);
        out[have++] = '$';
    }
    if (have + tk->len >= JAVA_NAME_MAX)
        return false;
    memcpy(out + have, x->s + tk->start, tk->len);
    out[have + tk->len] = '\0';
    return true;
}

static void scan(struct scan *x)
{
    int pending = -1; /* a class whose body the next '{' of this scope opens */
    int pending_depth = 0;

    for (size_t i = 0; i < x->t->n; i++) {
        struct scope *s = &x->sc[x->depth];

        if (is(x, i, "(")) {
            s->paren++;
        } else if (is(x, i, ")")) {
            if (s->paren > 0)
                s->paren--;
        } else if (is(x, i, "{")) {
            int cls = pending >= 0 && pending_depth == x->depth && s->paren == 0 ? pending : -1;
            if (s->paren == 0)
                s->d_public = s->d_static = s->d_private = false;
            if (cls >= 0)
                pending = -1;
            if (x->depth + 1 < MAX_DEPTH) {
                x->depth++;
                x->sc[x->depth] = (struct scope){.cls = cls};
            } else {
                return; /* nested beyond reason: what was found so far stands */
            }
        } else if (is(x, i, "}")) {
            if (x->depth > 0)
                x->depth--;
            s = &x->sc[x->depth];
            if (s->paren == 0)
                s->d_public = s->d_static = s->d_private = false;
        } else if (is(x, i, ";")) {
            if (s->paren == 0) {
                s->d_public = s->d_static = s->d_private = false;
                if (pending_depth == x->depth)
                    pending = -1;
            }
        } else if (!is_ident(x, i)) {
            continue;
        } else if (is(x, i, "public")) {
            s->d_public = true;
        } else if (is(x, i, "static")) {
            s->d_static = true;
        } else if (is(x, i, "private") || is(x, i, "protected")) {
            s->d_private = true;
        } else if ((is(x, i, "class") || is(x, i, "interface") || is(x, i, "enum") ||
                    (is(x, i, "record") && is_ident(x, i + 1) &&
                     (is(x, i + 2, "(") || is(x, i + 2, "<")))) &&
                   !(i > 0 && is(x, i - 1, ".")) && is_ident(x, i + 1)) {
            /* a class declaration (X.class is a literal, not one) */
            bool in_class = s->cls >= 0;
            if (x->ncls < MAX_CLASSES) {
                struct cls *c = &x->cls[x->ncls];
                c->name_tok = i + 1;
                c->parent = in_class ? s->cls : -1;
                c->top = x->depth == 0;
                c->pub = s->d_public;
                c->launchable = c->top || (in_class && x->cls[s->cls].launchable);
                c->iface = is(x, i, "interface");
                c->has_main = false;
                pending = (int)x->ncls++;
                pending_depth = x->depth;
            }
            i++;
        } else if (is(x, i, "main") && s->cls >= 0 && s->paren == 0 && i > 0 &&
                   is(x, i - 1, "void") && is(x, i + 1, "(")) {
            struct cls *c = &x->cls[s->cls];
            size_t close = closing_paren(x, i + 1);
            if (s->d_static && !s->d_private && (s->d_public || c->iface) && c->launchable &&
                main_params(x, i + 2, close))
                c->has_main = true;
        }
    }
}

void java_find_entry(const char *src, size_t len, struct java_entry *e)
{
    struct toks t = {0};
    struct scan *x;
    int pick = -1;

    e->public_class[0] = e->main_class[0] = '\0';
    if (len > UINT32_MAX || !lex(src, len, &t)) {
        free(t.v);
        return;
    }
    x = calloc(1, sizeof(*x));
    if (x)
        x->cls = calloc(MAX_CLASSES, sizeof(*x->cls));
    if (!x || !x->cls) {
        if (x)
            free(x->cls);
        free(x);
        free(t.v);
        return;
    }
    x->s = src;
    x->t = &t;
    x->sc[0] = (struct scope){.cls = -1};
    scan(x);
    for (size_t i = 0; i < x->ncls; i++) {
        if (x->cls[i].top && x->cls[i].pub) {
            binary_name(x, (int)i, e->public_class);
            if (x->cls[i].has_main)
                pick = (int)i;
            break;
        }
    }
    for (size_t i = 0; pick < 0 && i < x->ncls; i++)
        if (x->cls[i].top && x->cls[i].has_main && is(x, x->cls[i].name_tok, "Main"))
            pick = (int)i;
    for (size_t i = 0; pick < 0 && i < x->ncls; i++)
        if (x->cls[i].top && x->cls[i].has_main)
            pick = (int)i;
    for (size_t i = 0; pick < 0 && i < x->ncls; i++)
        if (x->cls[i].has_main)
            pick = (int)i;
    if (pick >= 0 && !binary_name(x, pick, e->main_class))
        e->main_class[0] = '\0';
    free(x->cls);
    free(x);
    free(t.v);
}
