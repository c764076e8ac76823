/*
 * judging.c — what verify and eval share on the command line (see judging.h).
 *
 * Extensions are data: the usual ones of the first languages (case-insensitive, below), then
 * the extensions of each row of the language table (lang_find_by_file: .ts, .php, .cs, .rb,
 * .pl, .lua, .R, .rkt, .d, .v, .scala, .kts...), then, for a language added to the table
 * without any, the extension of its own source file when it is also one of its names
 * (main.kt and "kt", say).
 */
#include "cli/judging.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

static const struct {
    const char *ext, *lang;
} extensions[] = {
    {"py", "python"}, {"c", "c"},     {"cpp", "cpp"},   {"cc", "cpp"},
    {"cxx", "cpp"},   {"c++", "cpp"}, {"java", "java"}, {"js", "javascript"},
    {"sh", "bash"},   {"go", "go"},   {"rs", "rust"},
};

const struct lang *judging_lang_named(const char *name, struct errbuf *err)
{
    const struct lang *l = lang_find(name);
    char names[256];

    if (l)
        return l;
    lang_names(names, sizeof(names));
    errbuf_set(err, "unknown language '%s' (known: %s)", name, names);
    return NULL;
}

const struct lang *judging_lang_of_file(const char *path)
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
    if ((l = lang_find_by_file(base)))
        return l;
    l = lang_find(ext);
    own = l ? strrchr(l->source, '.') : NULL;
    return own && strcasecmp(own + 1, ext) == 0 ? l : NULL;
}

int judging_option(int c, const char *arg, struct verify_opts *o, const char **model,
                   struct errbuf *err)
{
    uint64_t u;

    switch (c) {
    case JUDGING_OPT_REPEATS:
        if (!util_parse_u64(arg, 1, 100, &u))
            return errbuf_set(err, "--repeats must be a whole number from 1 to 100, not '%s'", arg),
                   -EINVAL;
        o->repeats = (unsigned)u;
        return 1;
    case JUDGING_OPT_REWARD:
        if (!reward_policy_parse(arg, &o->reward))
            return errbuf_set(err, "--reward must be 'binary' or 'fraction', not '%s'", arg),
                   -EINVAL;
        return 1;
    case JUDGING_OPT_MODEL:
        if (!*arg || strlen(arg) > 200)
            return errbuf_set(err, "--model needs a tag of 1 to 200 characters"), -EINVAL;
        *model = arg;
        return 1;
    case JUDGING_OPT_WRITABLE_ROOT:
        o->writable_root = true;
        return 1;
    default:
        return 0;
    }
}
