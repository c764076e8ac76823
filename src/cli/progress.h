/*
 * progress.h — the one-line progress bar `eval` and `tasks validate` draw on a terminal:
 * done/total, rate, ETA and a count the caller names ("accepted 12", "valid 30").
 */
#ifndef CRUCIBLE_PROGRESS_H
#define CRUCIBLE_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

/* progress_draw(f, done, total, t0, label, count) — redraws the line (carriage return, no
 * newline); t0 is util_now() at the start. */
void progress_draw(FILE *f, size_t done, size_t total, double t0, const char *label, size_t count);

#endif
