/*
 * rng.h — a small seeded random-number generator (splitmix64) for sampling tasks and
 * tests.
 *
 * The sequence depends only on the seed: the same seed gives the same numbers on every
 * platform and compiler, so a sample can be reproduced from the seed we log with it. Not
 * for secrets. A struct rng is plain data owned by the caller; use one per thread.
 */
#ifndef CRUCIBLE_RNG_H
#define CRUCIBLE_RNG_H

#include <stdint.h>

struct rng {
    uint64_t state; /* advanced by a fixed odd constant on every draw */
};

/* rng_seed(r, seed) — starts the sequence for seed; any value, 0 included, is fine. */
void rng_seed(struct rng *r, uint64_t seed);

/* rng_seed_from_entropy(r) — seeds from getrandom(2); if that fails, from the clocks and
 * the pid. For runs that need no reproducibility (log r->state first if they might). */
void rng_seed_from_entropy(struct rng *r);

/* rng_next(r) — the next 64 uniformly distributed bits (splitmix64). */
uint64_t rng_next(struct rng *r);

/* rng_uniform(r) — a double uniform in [0, 1): 53 random bits, one draw. */
double rng_uniform(struct rng *r);

/* rng_below(r, n) — a uniform integer in [0, n) without modulo bias (rejection); n must be
 * > 0 (0 returns 0 and draws nothing). */
uint64_t rng_below(struct rng *r, uint64_t n);

#endif
