/*
 * tap.h — a minimal Test Anything Protocol producer for crucible's unit tests.
 *
 * Each unit test binary prints "1..N" at the end (plan_done) and one "ok N - name" or
 * "not ok N - name" line per check; prove(1) runs them. Header-only, no dependencies.
 */
#ifndef CRUCIBLE_TAP_H
#define CRUCIBLE_TAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap__count;
static int tap__failed;

static inline void tap_vok(int pass, const char *fmt, va_list ap)
{
    tap__count++;
    if (!pass)
        tap__failed++;
    printf("%sok %d - ", pass ? "" : "not ", tap__count);
    vprintf(fmt, ap);
    putchar('\n');
    fflush(stdout);
}

/* ok(cond, fmt, ...) — one check; returns cond so callers can add diagnostics. */
static inline int ok(int pass, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int ok(int pass, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tap_vok(pass, fmt, ap);
    va_end(ap);
    return pass;
}

/* diag(fmt, ...) — a "# ..." comment line for humans. */
static inline void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("# ");
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
    fflush(stdout);
}

#define is_int(got, want, name)                                                                    \
    do {                                                                                           \
        long long g_ = (long long)(got), w_ = (long long)(want);                                   \
        if (!ok(g_ == w_, "%s", name))                                                             \
            diag("  got %lld, want %lld", g_, w_);                                                 \
    } while (0)

#define is_str(got, want, name)                                                                    \
    do {                                                                                           \
        const char *g_ = (got), *w_ = (want);                                                      \
        if (!ok(g_ && w_ && strcmp(g_, w_) == 0, "%s", name))                                      \
            diag("  got '%s', want '%s'", g_ ? g_ : "(null)", w_ ? w_ : "(null)");                 \
    } while (0)

/* skip(why) — a passing check marked SKIP, for environments that lack a feature. */
static inline void skip(const char *why)
{
    tap__count++;
    printf("ok %d # SKIP %s\n", tap__count, why);
    fflush(stdout);
}

/* done_testing() — prints the plan and returns the process exit status. */
static inline int done_testing(void)
{
    printf("1..%d\n", tap__count);
    return tap__failed ? 1 : 0;
}

#endif
