/*
 * solution_lang.h — the language a solution names on the command line: `verify --language`,
 * a solution file's extension, and the "language" field of `eval` solution lines.
 */
#ifndef CRUCIBLE_SOLUTION_LANG_H
#define CRUCIBLE_SOLUTION_LANG_H

#include "judge/lang.h"
#include "util.h"

/* solution_lang_named(name, err) — the language of the table called name (canonical name or
 * alias, case-insensitive), or NULL with err saying "unknown language '...' (known: ...)". */
const struct lang *solution_lang_named(const char *name, struct errbuf *err);

/* solution_lang_of_file(path) — the language a file's extension names (.py, .c, .cpp, .cc,
 * .cxx, .java, .js, .sh, .go, .rs, or the extension of a language's own source file), or
 * NULL when it names none (no extension, "-", .txt, ...). */
const struct lang *solution_lang_of_file(const char *path);

#endif
