/*
 * Unit tests for base/map: string and integer keys, replace, delete with
 * reuse of deleted entries, growth keeping every key, walking every value
 * once, and a seeded random sequence checked against a naive table after
 * every step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/map.h"
#include "base/rng.h"

static void test_strings(void **state)
{
	struct kerf_map m;
	int a = 1, b = 2, c = 3;
	char key[16];

	(void)state;
	kerf_map_init(&m, true);
	assert_null(kerf_map_get_str(&m, "x"));
	assert_false(kerf_map_del_str(&m, "x"));
	assert_int_equal(kerf_map_put_str(&m, "ns/a", &a), 0);
	assert_int_equal(kerf_map_put_str(&m, "ns/b", &b), 0);
	/* the key is compared, not the pointer */
	snprintf(key, sizeof(key), "ns/%s", "a");
	assert_ptr_equal(kerf_map_get_str(&m, key), &a);
	assert_int_equal(kerf_map_put_str(&m, "ns/a", &c), 0);
	assert_ptr_equal(kerf_map_get_str(&m, "ns/a"), &c);
	assert_int_equal(m.nr, 2);
	assert_true(kerf_map_del_str(&m, "ns/a"));
	assert_null(kerf_map_get_str(&m, "ns/a"));
	assert_ptr_equal(kerf_map_get_str(&m, "ns/b"), &b);
	assert_int_equal(m.nr, 1);
	kerf_map_release(&m);
}

static void test_growth(void **state)
{
	enum { N = 5000 };
	static char keys[N][12];
	struct kerf_map m;

	(void)state;
	kerf_map_init(&m, true);
	for (int i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%d", i);
		assert_int_equal(kerf_map_put_str(&m, keys[i], keys[i]), 0);
		/* never more than seven eighths full, and not much less
		   once it grew: a key costs at most 46 bytes of table */
		assert_true(8 * (m.nr + m.nr_deleted) < 7 * m.cap);
		assert_true(m.cap <= 16 || 16 * (m.nr + 1) >= 7 * m.cap);
	}
	/* a slot: the key and value, and 32 bits of hash */
	assert_int_equal(sizeof(struct kerf_map_slot), 2 * sizeof(void *));
	assert_true((char *)m.h == (char *)(m.kv + m.cap));
	for (int i = 0; i < N; i++)
		assert_ptr_equal(kerf_map_get_str(&m, keys[i]), keys[i]);
	for (int i = 0; i < N; i += 2)
		assert_true(kerf_map_del_str(&m, keys[i]));
	for (int i = 0; i < N; i++)
		assert_ptr_equal(kerf_map_get_str(&m, keys[i]), i % 2 ? keys[i] : NULL);
	kerf_map_release(&m);
}

/* Churn: deleted entries are reused or swept, the table stays bounded. */
static void test_random_against_naive(void **state)
{
	enum { KEYS = 300, STEPS = 100000 };
	static int vals[KEYS];
	void *naive[KEYS] = { NULL };
	struct kerf_map m;
	struct kerf_rng rng;

	(void)state;
	kerf_map_init(&m, false);
	kerf_rng_seed(&rng, 11);
	for (int step = 0; step < STEPS; step++) {
		uint64_t k = kerf_rng_below(&rng, KEYS);
		uint64_t key = k * 0x9e3779b97f4a7c15ULL;   /* spread, not dense */

		if (kerf_rng_below(&rng, 2)) {
			assert_int_equal(kerf_map_put_u64(&m, key, &vals[k]), 0);
			naive[k] = &vals[k];
		} else {
			assert_int_equal(kerf_map_del_u64(&m, key), naive[k] != NULL);
			naive[k] = NULL;
		}
		assert_ptr_equal(kerf_map_get_u64(&m, key), naive[k]);
	}
	for (uint64_t k = 0; k < KEYS; k++)
		assert_ptr_equal(kerf_map_get_u64(&m, k * 0x9e3779b97f4a7c15ULL),
				 naive[k]);
	assert_true(m.cap <= 4096);
	kerf_map_release(&m);
}

/* kerf_map_next walks every value once, deleted ones not at all. */
static void test_walk(void **state)
{
	enum { N = 1000 };
	static int vals[N];
	static unsigned seen[N];
	struct kerf_map m;
	size_t i = 0, n = 0;
	int *v;

	(void)state;
	kerf_map_init(&m, false);
	assert_null(kerf_map_next(&m, &i));
	for (uint64_t k = 0; k < N; k++)
		assert_int_equal(kerf_map_put_u64(&m, k, &vals[k]), 0);
	for (uint64_t k = 0; k < N; k += 3)
		assert_true(kerf_map_del_u64(&m, k));
	for (i = 0; (v = kerf_map_next(&m, &i));) {
		seen[v - vals]++;
		n++;
	}
	assert_int_equal(n, m.nr);
	for (int k = 0; k < N; k++)
		assert_int_equal(seen[k], k % 3 ? 1 : 0);
	kerf_map_release(&m);
}

static void test_reserve(void **state)
{
	struct kerf_map m;
	size_t cap;
	int v;

	(void)state;
	kerf_map_init(&m, false);
	assert_int_equal(kerf_map_reserve(&m, 100), 0);
	cap = m.cap;
	for (uint64_t k = 0; k < 100; k++)
		assert_int_equal(kerf_map_put_u64(&m, k, &v), 0);
	assert_int_equal(m.cap, cap);   /* no rehash: the room was there */
	kerf_map_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_random_against_naive),
		cmocka_unit_test(test_reserve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
