/* Unit tests for src/rng.c: reproducible splitmix64 sequences, uniforms, bounded integers. */
#include "library/rng.h"
#include "tap.h"

int main(void)
{
    struct rng r, s;
    uint64_t seen = 0, v;
    double sum = 0, u, lo = 1, hi = 0;
    int same = 1, differ = 0, in_range = 1;
    const int draws = 100000;

    /* Worked by hand from the definition: state = 0 + 0x9E3779B97F4A7C15, then the mixer. */
    rng_seed(&r, 0);
    v = rng_next(&r);
    if (!ok(v == 0xE220A8397B1DCDAFu, "seed 0: first value 0xe220a8397b1dcdaf"))
        diag("  got 0x%016llx", (unsigned long long)v);
    v = rng_next(&r);
    if (!ok(v == 0x6E789E6AA1B965F4u, "seed 0: second value 0x6e789e6aa1b965f4"))
        diag("  got 0x%016llx", (unsigned long long)v);
    rng_seed(&r, 1234567);
    v = rng_next(&r);
    if (!ok(v == 0x599ED017FB08FC85u, "seed 1234567: first value 0x599ed017fb08fc85"))
        diag("  got 0x%016llx", (unsigned long long)v);

    rng_seed(&r, 42);
    rng_seed(&s, 42);
    for (int i = 0; i < 1000; i++)
        same &= rng_next(&r) == rng_next(&s);
    ok(same, "same seed, same sequence");

    rng_seed(&r, 42);
    rng_seed(&s, 43);
    for (int i = 0; i < 1000; i++)
        differ += rng_next(&r) != rng_next(&s);
    ok(differ == 1000, "different seeds, different sequences");

    rng_seed(&r, 7);
    for (int i = 0; i < draws; i++) {
        v = rng_below(&r, 7);
        in_range &= v < 7;
        seen |= (uint64_t)1 << (v & 63);
    }
    ok(in_range, "rng_below(7) stays in [0, 7)");
    ok(seen == 0x7f, "rng_below(7) hits every value");

    rng_seed(&r, 8);
    in_range = 1;
    for (int i = 0; i < 1000; i++)
        in_range &= rng_below(&r, 1) == 0;
    ok(in_range, "rng_below(1) is always 0");
    ok(rng_below(&r, 0) == 0, "rng_below(0) returns 0");

    rng_seed(&r, 9);
    in_range = 1;
    for (int i = 0; i < 1000; i++)
        in_range &= rng_below(&r, ((uint64_t)1 << 63) + 1) <= (uint64_t)1 << 63;
    ok(in_range, "rng_below(2^63 + 1) stays in range (half the draws rejected)");

    rng_seed(&r, 10);
    in_range = 1;
    for (int i = 0; i < draws; i++) {
        u = rng_uniform(&r);
        in_range &= u >= 0 && u < 1;
        sum += u;
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
    }
    ok(in_range, "rng_uniform in [0, 1)");
    /* The sample mean has standard deviation 1/sqrt(12 * 100000) ~ 0.0009. */
    if (!ok(sum / draws > 0.49 && sum / draws < 0.51, "mean of %d uniforms near 1/2", draws))
        diag("  mean %g", sum / draws);
    ok(lo < 0.001 && hi > 0.999, "uniforms reach both ends of [0, 1)");

    rng_seed(&r, 11);
    rng_seed(&s, 11);
    ok(rng_uniform(&r) == (double)(rng_next(&s) >> 11) / 9007199254740992.0,
       "rng_uniform uses the top 53 bits of one draw");

    rng_seed_from_entropy(&r);
    rng_seed_from_entropy(&s);
    ok(r.state != s.state, "two entropy seeds differ");

    return done_testing();
}
