/*
 * extract.h — takes the program to run out of a raw model response.
 *
 * Fenced blocks follow CommonMark: an opening fence is a line of 3 or more '`' or '~'
 * (indented by at most 3 spaces) followed by an optional info string (which, for '`' fences,
 * holds no '`'); the block ends at a line of at least as many of the same character, indented
 * by at most 3 spaces, with nothing but whitespace after. A fence is recognised only at the
 * start of a line, so ``` inside a line of code is content, and blocks do not nest (a ```
 * line inside a ~~~ block is content). CRLF line ends are tolerated.
 *
 * The code taken is, in order of preference:
 *   1. the last closed block whose info string's first word names the language (any alias,
 *      case-insensitive: python py python3 | cpp c++ cc cxx | c | java | javascript js node
 *      nodejs | go golang | rust rs | bash sh shell; another language only by its own name);
 *   2. the last closed block without an info string;
 *   3. the last closed block of any language;
 *   4. an unterminated final block (an opening fence never closed), up to the end, unless
 *      it holds only whitespace;
 *   5. the whole response without surrounding whitespace.
 * A block's content is kept byte for byte (CR included) without its fence lines, except that
 * a fence indented by N spaces has up to N leading spaces removed from each content line, as
 * CommonMark does.
 */
#ifndef CRUCIBLE_EXTRACT_H
#define CRUCIBLE_EXTRACT_H

#include <stddef.h>

/* extract_code(response, language, how, how_size) — a new malloc'd, NUL-terminated string
 * with the code to run (the caller frees it), or NULL with errno set to ENOMEM. response may
 * be NULL (taken as ""); language may be NULL (no language preference). how, if how_size > 0,
 * receives a short description of what was taken, e.g. "last ```python block (of 3)" or
 * "whole response (no fenced block)". */
char *extract_code(const char *response, const char *language, char *how, size_t how_size);

#endif
