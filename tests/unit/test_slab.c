/*
 * Unit tests for base/slab: off, it is malloc (and cannot be turned on
 * while a record taken from malloc is live); on (not under ASan), records
 * are 8-byte aligned, disjoint, of their size rounded up to 8, a freed
 * record is the next of its class, classes do not mix, big records come
 * from malloc, empty chunks are given back, and the stats add up.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/slab.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>

/* ASan: a record is addressable only while handed out, up to its size. */
static void test_poisoned_when_free(void **state)
{
	unsigned char *p;

	(void)state;
	assert_true(kerf_slab_enabled());
	p = kerf_slab_alloc(13);
	assert_non_null(p);
	assert_false(__asan_address_is_poisoned(p));
	assert_false(__asan_address_is_poisoned(p + 12));
	assert_true(__asan_address_is_poisoned(p + 13));
	kerf_slab_free(p, 13);
	assert_true(__asan_address_is_poisoned(p));
	assert_true(__asan_address_is_poisoned(p + 8));
	assert_ptr_equal(kerf_slab_alloc(16), p);   /* its class again */
	assert_false(__asan_address_is_poisoned(p + 15));
	kerf_slab_free(p, 16);
}
#endif

static void test_off_then_on(void **state)
{
	unsigned char *p = kerf_slab_zalloc(40);

	(void)state;
	assert_false(kerf_slab_enabled());
	assert_non_null(p);
	for (int i = 0; i < 40; i++)
		assert_int_equal(p[i], 0);
	/* a live record from malloc: the lists must never see it */
	assert_false(kerf_slab_enable());
	assert_false(kerf_slab_enabled());
	kerf_slab_free(p, 40);
	kerf_slab_free(NULL, 40);
	assert_true(kerf_slab_enable());
	assert_true(kerf_slab_enabled());
}

static void test_records(void **state)
{
	static const size_t sizes[] = { 1, 7, 8, 9, 56, 86, 100, 232, 512 };
	unsigned char *p[9];
	struct kerf_slab_stats st0, st;
	size_t live = 0;

	(void)state;
	assert_true(kerf_slab_enabled());
	kerf_slab_stats(&st0);
	for (size_t i = 0; i < 9; i++) {
		p[i] = kerf_slab_alloc(sizes[i]);
		assert_non_null(p[i]);
		assert_int_equal((uintptr_t)p[i] % 8, 0);
		memset(p[i], (int)i + 1, sizes[i]);
		live += (sizes[i] + 7) / 8 * 8;
	}
	/* disjoint: each still holds its own bytes */
	for (size_t i = 0; i < 9; i++)
		for (size_t k = 0; k < sizes[i]; k++)
			assert_int_equal(p[i][k], i + 1);
	kerf_slab_stats(&st);
	assert_int_equal(st.live_bytes - st0.live_bytes, live);
	assert_true(st.mapped_bytes >= st.live_bytes + st.free_bytes);
	/* a freed record is the next of its class, and only of its class */
	kerf_slab_free(p[5], 86);
	kerf_slab_stats(&st);
	assert_int_equal(st.free_bytes - st0.free_bytes, 88);
	assert_ptr_not_equal(kerf_slab_alloc(80), p[5]);
	assert_ptr_equal(kerf_slab_alloc(85), p[5]);
	kerf_slab_stats(&st);
	assert_int_equal(st.free_bytes, st0.free_bytes);
	/* zalloc zeroes a reused record */
	kerf_slab_free(p[6], 100);
	assert_ptr_equal(kerf_slab_zalloc(97), p[6]);
	for (int k = 0; k < 97; k++)
		assert_int_equal(p[6][k], 0);
}

static void test_big_and_many(void **state)
{
	struct kerf_slab_stats st0, st;
	void *big, *v[20000];

	(void)state;
	assert_true(kerf_slab_enabled());
	kerf_slab_stats(&st0);
	big = kerf_slab_alloc(KERF_SLAB_MAX_BYTES + 1);
	assert_non_null(big);
	kerf_slab_stats(&st);
	assert_int_equal(st.live_bytes, st0.live_bytes);   /* malloc's */
	kerf_slab_free(big, KERF_SLAB_MAX_BYTES + 1);
	/* more than a chunk of one class, freed and taken again */
	for (int i = 0; i < 20000; i++) {
		v[i] = kerf_slab_alloc(24);
		assert_non_null(v[i]);
		memset(v[i], 0xa5, 24);
	}
	kerf_slab_stats(&st);
	assert_true(st.mapped_bytes - st0.mapped_bytes >= 20000 * 24 - KERF_SLAB_CHUNK_BYTES);
	for (int i = 0; i < 20000; i++)
		kerf_slab_free(v[i], 24);
	kerf_slab_stats(&st);
	assert_int_equal(st.live_bytes, st0.live_bytes);
	/* the empty chunks given back, but one kept for the class */
	assert_true(st.mapped_bytes <= st0.mapped_bytes + KERF_SLAB_CHUNK_BYTES);
	assert_true(st.free_bytes - st0.free_bytes <= KERF_SLAB_CHUNK_BYTES);
	for (int i = 0; i < 20000; i++)
		assert_non_null(kerf_slab_alloc(24));
	kerf_slab_stats(&st);
	assert_int_equal(st.free_bytes, st0.free_bytes);   /* all reused */
}

/* Seeded: records of every class taken and freed in any order keep their
   bytes, and all freed, the slab holds at most one chunk a class. */
static void test_random_order(void **state)
{
	enum { N = 4000 };
	static unsigned char *v[N];
	static size_t len[N];
	struct kerf_slab_stats st0, st;
	uint64_t x = 42;

	(void)state;
	assert_true(kerf_slab_enabled());
	kerf_slab_stats(&st0);
	for (int step = 0; step < 200000; step++) {
		size_t i;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		i = (size_t)(x % N);
		if (v[i]) {
			for (size_t k = 0; k < len[i]; k++)
				assert_int_equal(v[i][k], (unsigned char)(i * 7 + k));
			kerf_slab_free(v[i], len[i]);
			v[i] = NULL;
			continue;
		}
		len[i] = (size_t)(x >> 20) % KERF_SLAB_MAX_BYTES + 1;
		v[i] = kerf_slab_alloc(len[i]);
		assert_non_null(v[i]);
		for (size_t k = 0; k < len[i]; k++)
			v[i][k] = (unsigned char)(i * 7 + k);
	}
	for (size_t i = 0; i < N; i++) {
		if (!v[i])
			continue;
		for (size_t k = 0; k < len[i]; k++)
			assert_int_equal(v[i][k], (unsigned char)(i * 7 + k));
		kerf_slab_free(v[i], len[i]);
	}
	kerf_slab_stats(&st);
	assert_int_equal(st.live_bytes, st0.live_bytes);
	assert_true(st.mapped_bytes <=
		    st0.mapped_bytes + (size_t)KERF_SLAB_MAX_BYTES / 8 * KERF_SLAB_CHUNK_BYTES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_then_on),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_big_and_many),
		cmocka_unit_test(test_random_order),
#if defined(__SANITIZE_ADDRESS__)
		cmocka_unit_test(test_poisoned_when_free),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
