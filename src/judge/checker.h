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
 *   kattis  problemtools' default output validator, configured by its flag string
 *           ("case_sensitive space_change_sensitive float_tolerance 1e-6", the task's
 *           checker "flags" or a test's own "flags"):
 *           - tokens as above; the output must have the answer's tokens, no more, no fewer;
 *           - a token compares ASCII case-insensitively unless case_sensitive;
 *           - with a float tolerance set (float_absolute_tolerance A, float_relative_tolerance
 *             R, float_tolerance E meaning both; a later flag overrides an earlier one; a
 *             negative value leaves that tolerance unset), an answer token that is a float
 *             (the whole token parsed by strtod in the C locale — decimal, exponent, hex
 *             float — to a finite value) needs an output token that is a float too, within
 *             |got - want| <= A or |got - want| <= R * |want|; "200" and "2.0e2" match
 *             then. Answer tokens that are not floats compare as strings. Without a
 *             tolerance, every token compares as a string ("1.0" is not "1");
 *           - space_change_sensitive: the whitespace before, between and after the tokens
 *             must equal the answer's byte for byte (otherwise any run of whitespace,
 *             including none at either end, matches any other).
 *           Unlike problemtools (whose C strings end at a NUL byte), a token compares in
 *           full, NUL bytes included, and a token holding a NUL is never a float.
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
    CHECKER_KATTIS, /* problemtools' default output validator with its flags */
};

struct checker {
    enum checker_kind kind;
    double abs_tol;              /* CHECKER_FLOAT: >= 0; CHECKER_KATTIS: < 0 when not set */
    double rel_tol;              /* as abs_tol, relative to the expected value */
    bool case_sensitive;         /* CHECKER_KATTIS only */
    bool space_change_sensitive; /* CHECKER_KATTIS only */
};

/* checker_parse(j, c, err) — fills c from a task's "checker" value: NULL or JSON null (the
 * default, lines), "exact" | "lines" | "tokens" | "kattis", or an object {"type": T} with T
 * one of those or "float"; only "float" takes "abs_tol" and "rel_tol" (numbers >= 0, each 0
 * when omitted), only "kattis" takes "flags" (a string, checker_kattis_flags).
 * Unknown types and unknown or invalid fields give -EINVAL and a message in err; 0 otherwise. */
int checker_parse(const json_t *j, struct checker *c, struct errbuf *err);

/* checker_kattis_flags(flags, c, err) — sets c to the kattis checker that the flag string
 * gives (words separated by whitespace; NULL or "" is the default: case-insensitive, space
 * changes ignored, no float tolerance). An unknown flag, or a tolerance flag without a
 * number after it, gives -EINVAL and err names the word; 0 otherwise. */
int checker_kattis_flags(const char *flags, struct checker *c, struct errbuf *err);

/* checker_compare(c, out, out_len, exp, exp_len, why, why_size) — true when the output out
 * is accepted against exp. Otherwise false, with a one-line reason in why (if why_size > 0),
 * e.g. "line 3 differs at column 1: got 'x', expected 'y'"; excerpts are at most 40 input bytes
 * with bytes outside printable ASCII escaped, so why is always ASCII-plus-'…' UTF-8.
 * Neither buffer needs a terminating NUL; nothing past out_len / exp_len is read. */
bool checker_compare(const struct checker *c, const char *out, size_t out_len, const char *exp,
                     size_t exp_len, char *why, size_t why_size);

/* checker_name(k) — "exact", "lines", "tokens", "float" or "kattis" (a static string). */
const char *checker_name(enum checker_kind k);

#endif
