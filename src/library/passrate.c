/*
 * passrate.c — the regularized incomplete beta function, its inverse, and the Beta
 * posterior of a pass rate (see passrate.h for the contracts).
 *
 * I_x(a, b) is evaluated from its continued fraction
 *
 *     I_x(a, b) = x^a (1-x)^b / (a B(a, b)) * 1 / (1 + d1 / (1 + d2 / (1 + ...)))
 *     d(2m+1) = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1))
 *     d(2m)   =  m(b-m) x / ((a+2m-1)(a+2m))
 *
 * which converges quickly for x < (a+1)/(a+b+2); above that point we use the symmetry
 * I_x(a, b) = 1 - I_{1-x}(b, a). The fraction is evaluated forwards with the modified
 * Lentz method. The quantile is a Newton iteration on I_x(a, b) - p kept inside a
 * bracket that is bisected whenever Newton leaves it or its steps stop shrinking fast.
 */
#include "library/passrate.h"

#include <float.h>
#include <math.h>

static const double cf_eps = 1e-15;     /* relative size of the last continued-fraction factor */
static const double cf_tiny = 1e-300;   /* stands in for a zero denominator in Lentz's method */
static const int cf_max_terms = 100000; /* ~sqrt(max(a, b)) terms are needed; a safety cap */
static const int quantile_max_iter = 400;

/* log B(a, b) for a, b > 0. lgamma_r rather than lgamma: lgamma writes the global signgam. */
static double log_beta(double a, double b)
{
    int sign;

    return lgamma_r(a, &sign) + lgamma_r(b, &sign) - lgamma_r(a + b, &sign);
}

/* 1 / (1 + d1 / (1 + d2 / (1 + ...))) for x below the switch-over point (modified Lentz). */
static double beta_cf(double a, double b, double x)
{
    double f = cf_tiny, c = cf_tiny, d = 0.0;

    for (int j = 1; j <= cf_max_terms; j++) {
        double num, delta;

        /* Partial numerators: 1, d1, d2, d3, ...; all partial denominators are 1. */
        if (j == 1) {
            num = 1.0;
        } else {
            int k = j - 1;
            double m = (double)(k / 2);

            if (k % 2)
                num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
            else
                num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
        }
        d = 1.0 + num * d;
        if (fabs(d) < cf_tiny)
            d = cf_tiny;
        c = 1.0 + num / c;
        if (fabs(c) < cf_tiny)
            c = cf_tiny;
        d = 1.0 / d;
        delta = c * d;
        f *= delta;
        if (fabs(delta - 1.0) < cf_eps)
            break;
    }
    return f;
}

/* I_x(a, b) for 0 < x < 1 and x < (a+1)/(a+b+2), where the fraction converges fast. */
static double beta_inc_lower(double a, double b, double x)
{
    double log_front = a * log(x) + b * log1p(-x) - log_beta(a, b) - log(a);

    return exp(log_front) * beta_cf(a, b, x);
}

double beta_inc(double a, double b, double x)
{
    if (isnan(a) || isnan(b) || isnan(x) || a <= 0 || b <= 0)
        return NAN;
    if (x <= 0)
        return 0.0;
    if (x >= 1)
        return 1.0;
    if (x > (a + 1) / (a + b + 2))
        return 1.0 - beta_inc_lower(b, a, 1.0 - x);
    return beta_inc_lower(a, b, x);
}

/* The Beta(a, b) density at 0 < x < 1. */
static double beta_density(double a, double b, double x)
{
    return exp((a - 1) * log(x) + (b - 1) * log1p(-x) - log_beta(a, b));
}

double beta_quantile(double a, double b, double p)
{
    double lo = 0.0, hi = 1.0, x, step = 1.0, step_before = 1.0;

    if (isnan(a) || isnan(b) || isnan(p) || a <= 0 || b <= 0)
        return NAN;
    if (p <= 0)
        return 0.0;
    if (p >= 1)
        return 1.0;

    x = a / (a + b); /* the mean: interior, and close to the answer for central p */
    for (int i = 0; i < quantile_max_iter; i++) {
        double fx = beta_inc(a, b, x) - p, dens, next;

        if (fx == 0)
            return x;
        if (fx < 0)
            lo = x;
        else
            hi = x;

        dens = beta_density(a, b, x);
        next = (dens > 0 && isfinite(dens)) ? x - fx / dens : NAN;
        /* Bisect when Newton leaves the bracket or its steps stop shrinking fast. */
        if (!(next > lo && next < hi) || fabs(next - x) > 0.5 * fabs(step_before))
            next = lo + 0.5 * (hi - lo);
        step_before = step;
        step = next - x;
        /* Done when the step is below the resolution of x near 0 or near 1. */
        if (fabs(step) <= DBL_EPSILON * fmin(next, 1.0 - next) || next == lo || next == hi)
            return next;
        x = next;
    }
    return x;
}

void pass_estimate(unsigned long accepted, unsigned long attempts, double level,
                   struct pass_estimate *e)
{
    double a, b, tail;

    if (accepted > attempts)
        accepted = attempts;
    a = 1.0 + (double)accepted;
    b = 1.0 + (double)(attempts - accepted);
    if (isnan(level) || level < 0)
        level = 0;
    if (level > 1)
        level = 1;
    tail = 0.5 * (1.0 - level);

    e->mean = a / (a + b);
    e->lo = beta_quantile(a, b, tail);
    e->hi = beta_quantile(a, b, 1.0 - tail);
}
