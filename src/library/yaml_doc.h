/*
 * yaml_doc.h — one YAML document (a Kattis problem.yaml or testdata.yaml) as a tree of
 * jansson values, parsed with libyaml (Debian libyaml-dev, pkg-config yaml-0.1).
 *
 * Plain scalars get the types PyYAML's safe_load gives them (YAML 1.1, the loader
 * problemtools uses), so a converter sees what problemtools sees: ~, null and the empty
 * scalar are null; true/false/yes/no/on/off (three capitalisations) are booleans; 12, 0x1f,
 * 017 (octal), 0b101, 1_000 and 1:30 (base 60) are integers; 2.5, .5, 1.0e-6 are reals. As
 * in PyYAML, 1e-6 (no dot) and 1.0e6 (unsigned exponent) stay strings. Quoted scalars are
 * strings; .inf and .nan stay strings (JSON has no such numbers). Mapping keys are their
 * text; a later duplicate key replaces an earlier one (as PyYAML). Aliases share their
 * anchor's value. A stream with more than one document is an error, as for safe_load.
 *
 * Every value's line is kept under its dotted path ("limits.time_limit", "type.1") for
 * error messages. Single-threaded; no global state.
 */
#ifndef CRUCIBLE_YAML_DOC_H
#define CRUCIBLE_YAML_DOC_H

#include <jansson.h>
#include <stddef.h>

#include "util.h"

struct yaml_doc {
    json_t *root;  /* the document's value; null for an empty document */
    json_t *lines; /* dotted path -> 1-based line of the value ("" is the root) */
};

/* yaml_doc_parse(d, text, len, err) — parses text into d (release it even on error).
 * 0; -EINVAL with err "line L, column C: what is wrong" (libyaml's problem and context),
 * or naming the unsupported construct (a collection as a mapping key, nesting deeper than
 * 64, several documents); -ENOMEM. */
int yaml_doc_parse(struct yaml_doc *d, const char *text, size_t len, struct errbuf *err);

/* yaml_doc_release(d) — frees the tree; d may be zeroed or released twice. */
void yaml_doc_release(struct yaml_doc *d);

/* yaml_doc_get(d, path) — the value at a dotted path of mapping keys ("limits.memory";
 * "" is the root), borrowed; NULL when a step is absent or not a mapping. */
json_t *yaml_doc_get(const struct yaml_doc *d, const char *path);

/* yaml_doc_line(d, path) — the line where the value at path starts, 0 when unknown. */
unsigned yaml_doc_line(const struct yaml_doc *d, const char *path);

#endif
