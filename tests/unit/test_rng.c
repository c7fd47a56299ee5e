/*
 * Unit tests for base/rng: the stream is a pure function of the seed (and
 * matches the reference xoshiro256** seeded through splitmix64), different
 * seeds give different streams, kerf_rng_below stays in bounds and is close
 * to uniform, and shuffle/perm produce permutations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/rng.h"

static void test_reference_values(void **state)
{
	/* xoshiro256** with splitmix64 seeding, from the reference code. */
	static const uint64_t seed0[] = {
		0x99ec5f36cb75f2b4ULL, 0xbf6e1f784956452aULL,
		0x1a5f849d4933e6e0ULL, 0x6aa594f1262d2d2cULL,
	};
	static const uint64_t seed42[] = {
		0x15780b2e0c2ec716ULL, 0x6104d9866d113a7eULL,
		0xae17533239e499a1ULL, 0xecb8ad4703b360a1ULL,
	};
	struct kerf_rng a, b;

	(void)state;
	kerf_rng_seed(&a, 0);
	kerf_rng_seed(&b, 42);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(kerf_rng_next(&a), seed0[i]);
		assert_int_equal(kerf_rng_next(&b), seed42[i]);
	}
}

static void test_same_seed_same_stream(void **state)
{
	struct kerf_rng a, b;

	(void)state;
	kerf_rng_seed(&a, 123456789);
	kerf_rng_seed(&b, 123456789);
	for (int i = 0; i < 10000; i++)
		assert_int_equal(kerf_rng_next(&a), kerf_rng_next(&b));
	/* Re-seeding restarts the stream. */
	kerf_rng_seed(&a, 7);
	kerf_rng_seed(&b, 7);
	kerf_rng_next(&b);
	kerf_rng_seed(&b, 7);
	for (int i = 0; i < 100; i++)
		assert_int_equal(kerf_rng_below(&a, 1000),
				 kerf_rng_below(&b, 1000));
}

static void test_different_seeds_differ(void **state)
{
	(void)state;
	for (uint64_t seed = 0; seed < 64; seed++) {
		struct kerf_rng a, b;
		int same = 0;

		kerf_rng_seed(&a, seed);
		kerf_rng_seed(&b, seed + 1);
		for (int i = 0; i < 64; i++)
			same += kerf_rng_next(&a) == kerf_rng_next(&b);
		assert_int_equal(same, 0);
	}
}

static void test_below_bounds(void **state)
{
	static const uint64_t bounds[] = {
		1, 2, 3, 7, 10, 1000, 1ULL << 32, (1ULL << 63) + 1,
		UINT64_MAX,
	};
	struct kerf_rng rng;

	(void)state;
	kerf_rng_seed(&rng, 99);
	for (size_t b = 0; b < sizeof(bounds) / sizeof(bounds[0]); b++) {
		for (int i = 0; i < 5000; i++) {
			uint64_t x = kerf_rng_below(&rng, bounds[b]);

			assert_true(x < bounds[b]);
			if (bounds[b] == 1)
				assert_int_equal(x, 0);
		}
	}
}

static void test_below_reaches_every_value(void **state)
{
	struct kerf_rng rng;
	int seen[5] = { 0 };

	(void)state;
	kerf_rng_seed(&rng, 5);
	for (int i = 0; i < 1000; i++)
		seen[kerf_rng_below(&rng, 5)] = 1;
	for (int v = 0; v < 5; v++)
		assert_int_equal(seen[v], 1);
}

static void test_below_roughly_uniform(void **state)
{
	enum { BUCKETS = 10, DRAWS = 100000 };
	struct kerf_rng rng;
	int count[BUCKETS] = { 0 };

	(void)state;
	kerf_rng_seed(&rng, 2024);
	for (int i = 0; i < DRAWS; i++)
		count[kerf_rng_below(&rng, BUCKETS)]++;
	/* Expected 10000 each, standard deviation ~95: allow 5 sigma. */
	for (int v = 0; v < BUCKETS; v++) {
		assert_true(count[v] > DRAWS / BUCKETS - 475);
		assert_true(count[v] < DRAWS / BUCKETS + 475);
	}
}

static void test_shuffle_is_permutation(void **state)
{
	enum { N = 200 };
	struct kerf_rng rng;
	uint32_t v[N];
	int seen[N] = { 0 };
	int moved = 0;

	(void)state;
	for (uint32_t i = 0; i < N; i++)
		v[i] = i;
	kerf_rng_seed(&rng, 11);
	kerf_rng_shuffle(&rng, v, N, sizeof(v[0]));
	for (int i = 0; i < N; i++) {
		assert_true(v[i] < N);
		seen[v[i]]++;
		moved += v[i] != (uint32_t)i;
	}
	for (int i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	/* A uniform shuffle of 200 leaves ~1 element in place. */
	assert_true(moved > N - 10);
}

static void test_shuffle_multibyte_elements(void **state)
{
	struct rec {
		uint16_t key;
		char tag[5];
	} v[50];
	struct kerf_rng rng;
	int seen[50] = { 0 };

	(void)state;
	memset(v, 0, sizeof(v));
	for (int i = 0; i < 50; i++) {
		v[i].key = (uint16_t)i;
		v[i].tag[0] = (char)('A' + i % 26);
		v[i].tag[3] = (char)i;
	}
	kerf_rng_seed(&rng, 3);
	kerf_rng_shuffle(&rng, v, 50, sizeof(v[0]));
	for (int i = 0; i < 50; i++) {
		int k = v[i].key;

		assert_true(k < 50);
		/* Whole records move together. */
		assert_int_equal(v[i].tag[0], 'A' + k % 26);
		assert_int_equal(v[i].tag[3], k);
		seen[k]++;
	}
	for (int i = 0; i < 50; i++)
		assert_int_equal(seen[i], 1);
}

static void test_shuffle_small(void **state)
{
	struct kerf_rng rng, before;
	uint32_t one = 17;

	(void)state;
	kerf_rng_seed(&rng, 1);
	before = rng;
	kerf_rng_shuffle(&rng, NULL, 0, 4);
	kerf_rng_shuffle(&rng, &one, 1, sizeof(one));
	assert_int_equal(one, 17);
	/* Nothing was drawn. */
	assert_memory_equal(&rng, &before, sizeof(rng));
}

static void test_perm_is_permutation(void **state)
{
	enum { N = 1000 };
	static uint32_t p[N], q[N];
	static int seen[N];
	struct kerf_rng a, b;

	(void)state;
	kerf_rng_seed(&a, 77);
	kerf_rng_seed(&b, 77);
	kerf_rng_perm(&a, p, N);
	kerf_rng_perm(&b, q, N);
	assert_memory_equal(p, q, sizeof(p));
	memset(seen, 0, sizeof(seen));
	for (int i = 0; i < N; i++) {
		assert_true(p[i] < N);
		seen[p[i]]++;
	}
	for (int i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	kerf_rng_seed(&b, 78);
	kerf_rng_perm(&b, q, N);
	assert_memory_not_equal(p, q, sizeof(p));
}

static void test_perm_uniform_over_orders(void **state)
{
	enum { ROUNDS = 24000 };
	struct kerf_rng rng;
	int count[4 * 4 * 4 * 4] = { 0 };
	int distinct = 0;

	(void)state;
	kerf_rng_seed(&rng, 8);
	for (int r = 0; r < ROUNDS; r++) {
		uint32_t p[4];

		kerf_rng_perm(&rng, p, 4);
		count[p[0] * 64 + p[1] * 16 + p[2] * 4 + p[3]]++;
	}
	/* 24 orders, ~1000 each (standard deviation ~31). */
	for (int k = 0; k < 256; k++) {
		if (!count[k])
			continue;
		distinct++;
		assert_true(count[k] > 850);
		assert_true(count[k] < 1150);
	}
	assert_int_equal(distinct, 24);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_values),
		cmocka_unit_test(test_same_seed_same_stream),
		cmocka_unit_test(test_different_seeds_differ),
		cmocka_unit_test(test_below_bounds),
		cmocka_unit_test(test_below_reaches_every_value),
		cmocka_unit_test(test_below_roughly_uniform),
		cmocka_unit_test(test_shuffle_is_permutation),
		cmocka_unit_test(test_shuffle_multibyte_elements),
		cmocka_unit_test(test_shuffle_small),
		cmocka_unit_test(test_perm_is_permutation),
		cmocka_unit_test(test_perm_uniform_over_orders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
