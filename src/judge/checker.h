/*
 * checker.h — compares a stdio solution's output with the expected output (the task's
 * "checker" field, docs/TASKS.md). Pure functions: no I/O, no state, no allocation except a
 * copy of a numeric token longer than 127 bytes in the float checker.
 *
 * Semantics, per kind:
 *   exact   byte equality (NUL bytes included).
 *   lines   line by line ('\n' separated) after removing each line's trailing whitespace
 *           (space, \t, \r, \v, \f), so "\r\n" equals "\n"; empty lines at the end of either
 *           side are ignored. Leading whitespace and empty lines elsewhere count.
 *   tokens  the same sequence of tokens, a token being a maximal run of bytes other than space,
 *           \t, \n, \r, \v, \f (a NUL byte is part of a token); tokens compare byte for byte.
 *   float   as tokens, except that when both tokens are finite decimal numbers (only digits,
 *           sign, '.', 'e', 'E', the whole token consumed by strtod in the C locale, no
 *           overflow to infinity) they match when |got - want| <= abs_tol or
 *           |got - want| <= rel_tol * |want| (want = expected): the Kattis default
 *           validator's float_absolute_tolerance / float_relative_tolerance. Any other token
 *           ("nan", "inf", "0x10", "1e999", words) must be byte-identical. Numbers compare as
 *           doubles, so integers beyond 2^53 that differ in their low digits may match.
 * All kinds run in time linear in the input.
 */
#ifndef CRUCIBLE_CHECKER_H
#define CRUCIBLE_CHECKER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util.h"

enum checker_kind {
    CHECKER_EXACT,  /* byte for byte */
    CHECKER_LINES,  /* lines, ignoring trailing whitespace and trailing empty lines (default) */
    CHECKER_TOKENS, /* whitespace-separated tokens */
    CHECKER_FLOAT,  /* tokens, numbers within abs_tol or rel_tol */
};

struct checker {
    enum checker_kind kind;
    double abs_tol; /* CHECKER_FLOAT only; >= 0 */
    double rel_tol; /* CHECKER_FLOAT only; >= 0, relative to the expected value */
};

/* checker_parse(j, c, err) — fills c from a task's "checker" value: NULL or JSON null (the
 * default, lines), "exact" | "lines" | "tokens", or an object {"type": T} with T one of those
 * or "float"; only "float" takes "abs_tol" and "rel_tol" (numbers >= 0, each 0 when omitted).
 * Unknown types and unknown or invalid fields give -EINVAL and a message in err; 0 otherwise. */
int checker_parse(const json_t *j, struct checker *c, struct errbuf *err);

/* checker_compare(c, out, out_len, exp, exp_len, why, why_size) — true when the output out
 * is accepted against exp. Otherwise false, with a one-line reason in why (if why_size > 0),
 * e.g. "line 3 differs at column 1: got 'x', expected 'y'"; excerpts are at most 40 input bytes
 * with bytes outside printable ASCII escaped, so why is always ASCII-plus-'…' UTF-8.
 * Neither buffer needs a terminating NUL; nothing past out_len / exp_len is read. */
bool checker_compare(const struct checker *c, const char *out, size_t out_len, const char *exp,
                     size_t exp_len, char *why, size_t why_size);

/* checker_name(k) — "exact", "lines", "tokens" or "float" (a static string). */
const char *checker_name(enum checker_kind k);

#endif
