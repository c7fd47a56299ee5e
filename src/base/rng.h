/*
 * rng: a small seeded pseudo-random generator (xoshiro256**, seeded through
 * splitmix64).  The only randomness the core may use: a policy or a
 * simulator gets a struct kerf_rng from its caller, so the same seed gives
 * the same stream on every machine.
 */
#ifndef KERF_BASE_RNG_H
#define KERF_BASE_RNG_H

#include <stddef.h>
#include <stdint.h>

struct kerf_rng {
	uint64_t s[4];
};

void kerf_rng_seed(struct kerf_rng *rng, uint64_t seed);
uint64_t kerf_rng_next(struct kerf_rng *rng);

/* Uniform integer in [0, bound); bound must be > 0.  Unbiased. */
uint64_t kerf_rng_below(struct kerf_rng *rng, uint64_t bound);

/* Fisher-Yates shuffle of n elements of elem_size bytes each. */
void kerf_rng_shuffle(struct kerf_rng *rng, void *base, size_t n,
		      size_t elem_size);

/* perm[i] = a uniformly random permutation of 0..n-1. */
void kerf_rng_perm(struct kerf_rng *rng, uint32_t *perm, size_t n);

#endif /* KERF_BASE_RNG_H */
