/*
 * passrate.h — how often does a task's reference pass, with honest error bars.
 *
 * The task library records, per task, how many attempts were made and how many were
 * accepted. A raw ratio lies for small counts (1 of 1 is not "100%"), so we report the
 * posterior of the pass rate under a uniform Beta(1,1) prior instead: its mean and an
 * equal-tailed credible interval. The special functions behind it (the regularized
 * incomplete beta function and its inverse) are exposed for tests and other callers.
 *
 * Pure functions: no allocation, no state, safe from any thread.
 */
#ifndef CRUCIBLE_PASSRATE_H
#define CRUCIBLE_PASSRATE_H

/* The posterior of a pass rate: its mean and a credible interval [lo, hi], all in [0, 1]. */
struct pass_estimate {
    double mean; /* (accepted + 1) / (attempts + 2) */
    double lo;   /* lower end of the equal-tailed interval */
    double hi;   /* upper end */
};

/* beta_inc(a, b, x) — the regularized incomplete beta function I_x(a, b) for a, b > 0,
 * x in [0, 1] (x outside is clamped), accurate to about 1e-10. NaN for a or b <= 0 or NaN. */
double beta_inc(double a, double b, double x);

/* beta_quantile(a, b, p) — the x in [0, 1] with I_x(a, b) = p, the inverse of beta_inc;
 * exactly 0 for p <= 0 and 1 for p >= 1. NaN for a or b <= 0 or a NaN argument. */
double beta_quantile(double a, double b, double p);

/* pass_estimate(accepted, attempts, level, e) — fills *e with the posterior
 * Beta(1 + accepted, 1 + attempts - accepted): its mean and the equal-tailed credible
 * interval holding `level` of the mass (e.g. 0.9). accepted > attempts counts as
 * accepted = attempts; level is clamped to [0, 1] (0 gives lo = hi = the median). */
void pass_estimate(unsigned long accepted, unsigned long attempts, double level,
                   struct pass_estimate *e);

#endif
