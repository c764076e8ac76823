/*
 * solution_lang.c — the language a solution names on the command line (see solution_lang.h).
 *
 * Extensions are data: the usual ones of each language of the table, and for a language
 * added to the table later, the extension of its own source file when it is also one of
 * its names (main.kt and "kt", say).
 */
#include "cli/solution_lang.h"

#include <string.h>
#include <strings.h>

static const struct {
    const char *ext, *lang;
} extensions[] = {
    {"py", "python"}, {"c", "c"},     {"cpp", "cpp"},   {"cc", "cpp"},
    {"cxx", "cpp"},   {"c++", "cpp"}, {"java", "java"}, {"js", "javascript"},
    {"sh", "bash"},   {"go", "go"},   {"rs", "rust"},
};

const struct lang *solution_lang_named(const char *name, struct errbuf *err)
{
    const struct lang *l = lang_find(name);
    char names[256];

    if (l)
        return l;
    lang_names(names, sizeof(names));
    errbuf_set(err, "unknown language '%s' (known: %s)", name, names);
    return NULL;
}

const struct lang *solution_lang_of_file(const char *path)
{
    const char *base = strrchr(path, '/'), *ext, *own;
    const struct lang *l;

    base = base ? base + 1 : path;
    ext = strrchr(base, '.');
    if (!ext || ext == base || !ext[1])
        return NULL; /* no extension, or a dot file such as ".py" */
    ext++;
    for (size_t i = 0; i < sizeof(extensions) / sizeof(extensions[0]); i++)
        if (strcasecmp(extensions[i].ext, ext) == 0)
            return lang_find(extensions[i].lang);
    l = lang_find(ext);
    own = l ? strrchr(l->source, '.') : NULL;
    return own && strcasecmp(own + 1, ext) == 0 ? l : NULL;
}
