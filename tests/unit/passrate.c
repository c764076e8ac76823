/* Unit tests for src/passrate.c: the incomplete beta function, its inverse, pass estimates. */
#include <math.h>

#include "library/passrate.h"
#include "tap.h"

/* near(got, want, tol, name) — one check of |got - want| <= tol, with the values on failure. */
static void near(double got, double want, double tol, const char *name)
{
    if (!ok(fabs(got - want) <= tol, "%s", name))
        diag("  got %.17g, want %.17g (tolerance %g)", got, want, tol);
}

/* P(Binomial(n, x) >= k), summed directly: equals I_x(k, n - k + 1) for integer k >= 1. */
static double binomial_upper_tail(int n, int k, double x)
{
    double sum = 0;

    for (int j = k; j <= n; j++)
        sum += exp(lgamma(n + 1.0) - lgamma(j + 1.0) - lgamma(n - j + 1.0) + j * log(x) +
                   (n - j) * log1p(-x));
    return sum;
}

static const double grid[][2] = {{1, 1},    {0.5, 0.5}, {2, 5},     {5, 2},   {10, 3},
                                 {0.1, 2},  {2, 0.1},   {50, 50},   {500, 3}, {3, 500},
                                 {1, 1000}, {1000, 1},  {300, 700}, {1, 2}};

static void test_beta_inc(void)
{
    const double xs[] = {0, 0.01, 0.2, 0.5, 0.77, 0.999, 1};
    double worst = 0;
    char name[128];

    for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
        snprintf(name, sizeof(name), "I_%g(1,1) = %g", xs[i], xs[i]);
        near(beta_inc(1, 1, xs[i]), xs[i], 1e-12, name);
    }
    near(beta_inc(2, 3, 0.5), 0.6875, 1e-12, "I_0.5(2,3) = 11/16");
    near(beta_inc(2.5, 1, 0.3), pow(0.3, 2.5), 1e-12, "I_x(a,1) = x^a");
    near(beta_inc(1, 7.5, 0.3), 1 - pow(0.7, 7.5), 1e-12, "I_x(1,b) = 1 - (1-x)^b");
    near(beta_inc(0.5, 0.5, 0.2), 2 / M_PI * asin(sqrt(0.2)), 1e-12,
         "I_x(1/2,1/2) = (2/pi) asin(sqrt x)");
    near(beta_inc(1000, 1000, 0.5), 0.5, 1e-10, "I_0.5(a,a) = 1/2 for a = 1000");
    near(beta_inc(500, 3, 0.995), binomial_upper_tail(502, 500, 0.995), 1e-10,
         "I_0.995(500,3) = P(Bin(502,0.995) >= 500)");
    near(beta_inc(40, 61, 0.37), binomial_upper_tail(100, 40, 0.37), 1e-10,
         "I_0.37(40,61) = P(Bin(100,0.37) >= 40)");
    /* Reference values computed with mpmath.betainc at 40 digits. */
    near(beta_inc(2.5, 4.5, 0.3), 0.40653901668245924935, 1e-10, "I_0.3(2.5,4.5) reference");
    near(beta_inc(1, 1000, 0.001), 0.63230457522903596304, 1e-10, "I_0.001(1,1000) reference");
    near(beta_inc(30, 70, 0.25), 0.13581490428342743891, 1e-10, "I_0.25(30,70) reference");
    near(beta_inc(0.1, 0.2, 0.7), 0.71632698299586115243, 1e-10, "I_0.7(0.1,0.2) reference");
    near(beta_inc(100, 200, 0.35), 0.73257146495754406868, 1e-10, "I_0.35(100,200) reference");

    for (size_t g = 0; g < sizeof(grid) / sizeof(grid[0]); g++)
        for (double x = 0.005; x < 1; x += 0.01) {
            double a = grid[g][0], b = grid[g][1];
            double s = beta_inc(a, b, x) + beta_inc(b, a, 1 - x);

            if (fabs(s - 1) > worst)
                worst = fabs(s - 1);
        }
    if (!ok(worst <= 1e-10, "I_x(a,b) + I_{1-x}(b,a) = 1 across the grid"))
        diag("  worst deviation %g", worst);

    ok(isnan(beta_inc(0, 1, 0.5)) && isnan(beta_inc(1, -1, 0.5)) && isnan(beta_inc(1, 1, NAN)),
       "beta_inc rejects a, b <= 0 and NaN x");
    ok(beta_inc(2, 2, -0.5) == 0 && beta_inc(2, 2, 1.5) == 1, "beta_inc clamps x");
}

static void test_beta_quantile(void)
{
    const double ps[] = {0, 0.001, 0.05, 0.3, 0.5, 0.9, 0.999, 1};
    char name[128];

    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        snprintf(name, sizeof(name), "beta_quantile(2,1,%g) = sqrt(%g)", ps[i], ps[i]);
        near(beta_quantile(2, 1, ps[i]), sqrt(ps[i]), 1e-12, name);
    }
    ok(beta_quantile(3, 4, 0) == 0 && beta_quantile(3, 4, 1) == 1, "quantile exact at the ends");
    near(beta_quantile(1, 1000, 0.05), -expm1(log(0.95) / 1000), 1e-15,
         "quantile(1,1000,0.05) = 1 - 0.95^(1/1000)");
    near(beta_quantile(0.01, 1, 0.5), pow(0.5, 100), 1e-40, "quantile(0.01,1,0.5) = 2^-100");
    ok(isnan(beta_quantile(0, 1, 0.5)) && isnan(beta_quantile(1, 1, NAN)),
       "beta_quantile rejects a <= 0 and NaN p");

    for (size_t g = 0; g < sizeof(grid) / sizeof(grid[0]); g++) {
        double a = grid[g][0], b = grid[g][1], worst_p = 0, worst_x = 0;
        int checked = 0;

        /* The root lies between the neighbours of q(p): near 0 or 1 (e.g. (2, 0.1)) the true
         * quantile may be closer to 1 than any double, so |inc(q(p)) - p| can be large. */
        for (double p = 0.0005; p < 1; p += 0.0125) {
            double x = beta_quantile(a, b, p);
            double below = p - beta_inc(a, b, nextafter(x, 0));
            double above = beta_inc(a, b, nextafter(x, 1)) - p;
            double d = fabs(beta_inc(a, b, x) - p);

            if (below > -1e-10 && above > -1e-10)
                d = 0;
            if (d > worst_p)
                worst_p = d;
        }
        for (double x = 0.0005; x < 1; x += 0.0125) {
            double p = beta_inc(a, b, x), d;

            if (p < 1e-6 || p > 1 - 1e-6)
                continue; /* saturated: x is not recoverable from p in double precision */
            d = fabs(beta_quantile(a, b, p) - x);
            if (d > worst_x)
                worst_x = d;
            checked++;
        }
        if (!ok(worst_p <= 1e-10 && worst_x <= 1e-8 && checked > 0,
                "quantile round trips for (a,b) = (%g,%g)", a, b))
            diag("  worst |inc(q(p)) - p| off the ulp bracket %g, worst |q(inc(x)) - x| %g over %d "
                 "x",
                 worst_p, worst_x, checked);
    }
}

static void test_pass_estimate(void)
{
    struct pass_estimate e, prev;
    const unsigned long n[] = {2, 10, 100, 1000, 100000};

    pass_estimate(1, 1, 0.9, &e);
    near(e.mean, 2.0 / 3, 1e-15, "1 of 1: mean 2/3");
    ok(e.hi < 1 && e.lo > 0.2, "1 of 1: 0.2 < lo, hi < 1");
    near(e.lo, sqrt(0.05), 1e-12, "1 of 1: lo = sqrt(0.05)");
    near(e.hi, sqrt(0.95), 1e-12, "1 of 1: hi = sqrt(0.95)");

    pass_estimate(0, 0, 0.9, &e);
    near(e.mean, 0.5, 1e-15, "0 of 0: mean 1/2");
    near(e.lo, 0.05, 1e-12, "0 of 0: lo 0.05");
    near(e.hi, 0.95, 1e-12, "0 of 0: hi 0.95");

    pass_estimate(0, 10, 0.9, &e);
    ok(e.lo > 0 && e.hi < 0.3 && e.mean > 0, "0 of 10: small but not zero");

    pass_estimate(7, 5, 0.9, &prev);
    pass_estimate(5, 5, 0.9, &e);
    ok(prev.mean == e.mean && prev.lo == e.lo && prev.hi == e.hi,
       "accepted > attempts counts as accepted = attempts");

    pass_estimate(3, 4, 0.5, &e);
    pass_estimate(3, 4, 0.95, &prev);
    ok(prev.lo < e.lo && e.hi < prev.hi, "a higher level gives a wider interval");
    pass_estimate(3, 4, 0, &e);
    near(e.lo, e.hi, 1e-12, "level 0: lo = hi (the median)");
    pass_estimate(3, 4, 1, &e);
    ok(e.lo == 0 && e.hi == 1, "level 1: [0, 1]");

    pass_estimate(1, 2, 0.9, &prev);
    for (size_t i = 1; i < sizeof(n) / sizeof(n[0]); i++) {
        pass_estimate(n[i] / 2, n[i], 0.9, &e);
        if (!ok(e.hi - e.lo < prev.hi - prev.lo && e.lo <= 0.5 && 0.5 <= e.hi,
                "half of %lu: the interval shrinks around 1/2", n[i]))
            diag("  [%g, %g] after [%g, %g]", e.lo, e.hi, prev.lo, prev.hi);
        prev = e;
    }
    pass_estimate(90000, 100000, 0.9, &e);
    ok(e.lo > 0.897 && e.hi < 0.903 && e.lo < 0.9 && e.hi > 0.9,
       "90000 of 100000: a tight interval around 0.9");
}

int main(void)
{
    test_beta_inc();
    test_beta_quantile();
    test_pass_estimate();
    return done_testing();
}
