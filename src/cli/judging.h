/*
 * judging.h — what `crucible verify` and `crucible eval` share on the command line: the
 * language a solution names (`verify --language`, a solution file's extension, the "language"
 * field of `eval` solution lines) and the options of how it is judged (--repeats, --reward,
 * --model).
 */
#ifndef CRUCIBLE_JUDGING_H
#define CRUCIBLE_JUDGING_H

#include "judge/lang.h"
#include "judge/verify.h"
#include "util.h"

/* The long options judging_option takes; their getopt codes. */
enum {
    JUDGING_OPT_REPEATS = 'n',
    JUDGING_OPT_REWARD = 'w',
    JUDGING_OPT_MODEL = 'm',
    JUDGING_OPT_WRITABLE_ROOT = 'W'
};

/* judging_option(c, arg, o, model, err) — applies --repeats (1..100), --reward
 * (binary|fraction) or --model (a tag of 1 to 200 characters, into *model). 1 when c is one of
 * them, 0 when it is not, -EINVAL with err naming the problem. */
int judging_option(int c, const char *arg, struct verify_opts *o, const char **model,
                   struct errbuf *err);

/* judging_lang_named(name, err) — the language of the table called name (canonical name or
 * alias, case-insensitive), or NULL with err saying "unknown language '...' (known: ...)". */
const struct lang *judging_lang_named(const char *name, struct errbuf *err);

/* judging_lang_of_file(path) — the language a file's extension names (.py, .c, .cpp, .cc,
 * .cxx, .java, .js, .sh, .go, .rs, any extension of a row of the language table: .ts, .php,
 * .cs, .rb, .pl, .lua, .R, .rkt, .d, .v, .scala, .kts..., or the extension of a language's
 * own source file), or NULL when it names none (no extension, "-", .txt, ...). */
const struct lang *judging_lang_of_file(const char *path);

#endif
