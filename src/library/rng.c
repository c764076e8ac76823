/*
 * rng.c — splitmix64 (see rng.h for the contracts).
 *
 * splitmix64 adds the golden-ratio constant 0x9E3779B97F4A7C15 to a 64-bit counter and
 * passes the counter through a fixed bijective mixing function (two xor-shift-multiply
 * rounds and a final xor-shift). Everything is unsigned 64-bit arithmetic modulo 2^64, so
 * the output is identical wherever uint64_t exists.
 */
#include "library/rng.h"

#include <errno.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static const uint64_t rng_gamma = 0x9E3779B97F4A7C15u;
static const uint64_t rng_mul1 = 0xBF58476D1CE4E5B9u;
static const uint64_t rng_mul2 = 0x94D049BB133111EBu;

void rng_seed(struct rng *r, uint64_t seed)
{
    r->state = seed;
}

/* The splitmix64 finaliser: a bijection of 64-bit values with good avalanche. */
static uint64_t rng_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * rng_mul1;
    z = (z ^ (z >> 27)) * rng_mul2;
    return z ^ (z >> 31);
}

uint64_t rng_next(struct rng *r)
{
    r->state += rng_gamma;
    return rng_mix(r->state);
}

double rng_uniform(struct rng *r)
{
    /* The top 53 bits, scaled by 2^-53: every multiple of 2^-53 in [0, 1) equally likely. */
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t rng_below(struct rng *r, uint64_t n)
{
    uint64_t reject_below, x;

    if (n == 0)
        return 0;
    /* 2^64 mod n values at the bottom are rejected, leaving a multiple of n to fold. */
    reject_below = -n % n;
    do
        x = rng_next(r);
    while (x < reject_below);
    return x % n;
}

void rng_seed_from_entropy(struct rng *r)
{
    uint64_t seed;
    struct timespec rt = {0, 0}, mono = {0, 0};
    ssize_t got;

    do
        got = getrandom(&seed, sizeof(seed), 0);
    while (got < 0 && errno == EINTR);
    if (got == (ssize_t)sizeof(seed)) {
        rng_seed(r, seed);
        return;
    }

    /* No getrandom (old kernel, seccomp): mix what differs between runs and processes. */
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    seed = rng_mix((uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec);
    seed = rng_mix(seed ^ ((uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec));
    seed = rng_mix(seed ^ (uint64_t)getpid());
    seed = rng_mix(seed ^ (uint64_t)(uintptr_t)&seed);
    rng_seed(r, seed);
}
