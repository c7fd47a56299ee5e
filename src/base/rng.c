#include "base/rng.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void kerf_rng_seed(struct kerf_rng *rng, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		rng->s[i] = splitmix64(&x);
}

uint64_t kerf_rng_next(struct kerf_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t kerf_rng_below(struct kerf_rng *rng, uint64_t bound)
{
	/* Rejection sampling keeps every value equally likely. */
	uint64_t limit = UINT64_MAX - (UINT64_MAX % bound);
	uint64_t x;

	do
		x = kerf_rng_next(rng);
	while (x >= limit);
	return x % bound;
}

void kerf_rng_shuffle(struct kerf_rng *rng, void *base, size_t n,
		      size_t elem_size)
{
	unsigned char *p = base;

	if (n < 2)
		return;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)kerf_rng_below(rng, (uint64_t)i + 1);
		unsigned char *a = p + i * elem_size;
		unsigned char *b = p + j * elem_size;

		for (size_t k = 0; j != i && k < elem_size; k++) {
			unsigned char t = a[k];

			a[k] = b[k];
			b[k] = t;
		}
	}
}

void kerf_rng_perm(struct kerf_rng *rng, uint32_t *perm, size_t n)
{
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	kerf_rng_shuffle(rng, perm, n, sizeof(*perm));
}
