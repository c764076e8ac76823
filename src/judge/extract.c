/*
 * extract.c — code extraction from model responses (rules in extract.h).
 *
 * One pass over the response's lines finds every fenced block and remembers only the last
 * block of each preference class and how many there were; the chosen one is then copied.
 */
#include "judge/extract.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Names a fence's info string may use for each language; the first is the canonical one. */
static const struct {
    const char *names[5];
} languages[] = {
    {{"python", "py", "python3", NULL}},
    {{"cpp", "c++", "cc", "cxx", NULL}},
    {{"c", NULL}},
    {{"java", NULL}},
    {{"javascript", "js", "node", "nodejs", NULL}},
    {{"go", "golang", NULL}},
    {{"rust", "rs", NULL}},
    {{"bash", "sh", "shell", NULL}},
};

/* language_index(s, n) — the row of languages[] naming s[0, n), or -1. */
static int language_index(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof(languages) / sizeof(languages[0]); i++)
        for (const char *const *name = languages[i].names; *name; name++)
            if (strlen(*name) == n && strncasecmp(*name, s, n) == 0)
                return (int)i;
    return -1;
}

/* A fence line: its indentation, character, run length and info string. */
struct fence {
    size_t indent, run;
    char ch;
    const char *info; /* trimmed; not NUL-terminated */
    size_t info_len;
};

/* A fenced block: content [body, body + len) and the first word of its info string. */
struct block {
    const char *body, *word;
    size_t len, word_len, indent;
    char ch;
};

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool all_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_blank(s[i]) && s[i] != '\n')
            return false;
    return true;
}

/* fence_parse(line, n, f) — true when line[0, n) (without '\n') is a fence line. */
static bool fence_parse(const char *line, size_t n, struct fence *f)
{
    size_t i = 0, end = n;

    while (i < n && i < 4 && line[i] == ' ')
        i++;
    if (i > 3 || i >= n || (line[i] != '`' && line[i] != '~'))
        return false;
    f->indent = i;
    f->ch = line[i];
    while (i < n && line[i] == f->ch)
        i++;
    f->run = i - f->indent;
    if (f->run < 3)
        return false;
    while (i < n && is_blank(line[i]))
        i++;
    while (end > i && is_blank(line[end - 1]))
        end--;
    f->info = line + i;
    f->info_len = end - i;
    return !(f->ch == '`' && memchr(f->info, '`', f->info_len));
}

/* fence_closes(line, n, open) — true when line[0, n) ends the block opened by open. */
static bool fence_closes(const char *line, size_t n, const struct fence *open)
{
    struct fence f;

    return fence_parse(line, n, &f) && f.ch == open->ch && f.run >= open->run && f.info_len == 0;
}

static struct block block_from(const struct fence *f, const char *body, size_t len)
{
    struct block b = {body, f->info, len, 0, f->indent, f->ch};

    while (b.word_len < f->info_len && !is_blank(f->info[b.word_len]))
        b.word_len++;
    return b;
}

/* copy_body(b) — a NUL-terminated copy of b's content, minus the fence's indentation. */
static char *copy_body(const struct block *b)
{
    char *out = malloc(b->len + 1), *p = out;
    size_t pos = 0;

    if (!out)
        return NULL;
    while (pos < b->len) {
        const char *nl = memchr(b->body + pos, '\n', b->len - pos);
        size_t end = nl ? (size_t)(nl - b->body) + 1 : b->len;

        for (size_t k = 0; k < b->indent && pos < end && b->body[pos] == ' '; k++)
            pos++;
        memcpy(p, b->body + pos, end - pos);
        p += end - pos;
        pos = end;
    }
    *p = '\0';
    return out;
}

/* shown(dst, s, n) — s[0, n) for messages: at most 20 bytes, printable ASCII ('?' for
 * others), so that how stays ASCII whatever the response holds. */
static const char *shown(char dst[24], const char *s, size_t n)
{
    if (n > 20)
        n = 20;
    for (size_t i = 0; i < n; i++)
        dst[i] = s[i] > 0x20 && s[i] < 0x7f ? s[i] : '?';
    dst[n] = '\0';
    return dst;
}

static void describe(char *how, size_t how_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void describe(char *how, size_t how_size, const char *fmt, ...)
{
    va_list ap;

    if (!how || !how_size)
        return;
    va_start(ap, fmt);
    vsnprintf(how, how_size, fmt, ap);
    va_end(ap);
}

char *extract_code(const char *response, const char *language, char *how, size_t how_size)
{
    struct block lang = {0}, plain = {0}, any = {0}, open_block = {0};
    size_t n_lang = 0, n_plain = 0, n_any = 0, len, pos = 0, start, end;
    int want = language ? language_index(language, strlen(language)) : -1;
    const char *s = response ? response : "";
    const char *body = NULL;
    struct fence cur = {0};
    char fence[4], word[24], lname[24], *code;

    len = strlen(s);
    while (pos < len) {
        const char *nl = memchr(s + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (s + pos)) : len - pos;
        size_t next = nl ? pos + n + 1 : len;

        if (!body) {
            if (fence_parse(s + pos, n, &cur))
                body = s + next;
        } else if (fence_closes(s + pos, n, &cur)) {
            struct block b = block_from(&cur, body, (size_t)(s + pos - body));
            bool match =
                b.word_len > 0 && (want >= 0 ? language_index(b.word, b.word_len) == want
                                             : language && strlen(language) == b.word_len &&
                                                   strncasecmp(language, b.word, b.word_len) == 0);
            if (match) {
                lang = b;
                n_lang++;
            }
            if (b.word_len == 0) {
                plain = b;
                n_plain++;
            }
            any = b;
            n_any++;
            body = NULL;
        }
        pos = next;
    }

    if (n_lang > 0) {
        snprintf(fence, sizeof(fence), "%c%c%c", lang.ch, lang.ch, lang.ch);
        if (n_lang == 1)
            describe(how, how_size, "%s%s block", fence, shown(word, lang.word, lang.word_len));
        else
            describe(how, how_size, "last %s%s block (of %zu)", fence,
                     shown(word, lang.word, lang.word_len), n_lang);
        return copy_body(&lang);
    }
    if (n_plain > 0) {
        if (n_plain == 1)
            describe(how, how_size, "fenced block (no language tag)");
        else
            describe(how, how_size, "last fenced block (no language tag, of %zu)", n_plain);
        return copy_body(&plain);
    }
    if (n_any > 0) {
        snprintf(fence, sizeof(fence), "%c%c%c", any.ch, any.ch, any.ch);
        describe(how, how_size, "last %s%s block (of %zu; none tagged %s)", fence,
                 shown(word, any.word, any.word_len), n_any,
                 language ? shown(lname, language, strlen(language)) : "with the language");
        return copy_body(&any);
    }
    if (body && !all_blank(body, (size_t)(s + len - body))) {
        open_block = block_from(&cur, body, (size_t)(s + len - body));
        snprintf(fence, sizeof(fence), "%c%c%c", cur.ch, cur.ch, cur.ch);
        describe(how, how_size, "unterminated %s%s block", fence,
                 shown(word, open_block.word, open_block.word_len));
        return copy_body(&open_block);
    }

    start = 0;
    end = len;
    while (start < end && (is_blank(s[start]) || s[start] == '\n'))
        start++;
    while (end > start && (is_blank(s[end - 1]) || s[end - 1] == '\n'))
        end--;
    code = strndup(s + start, end - start);
    if (!code)
        errno = ENOMEM;
    describe(how, how_size, "whole response (no fenced block)");
    return code;
}
