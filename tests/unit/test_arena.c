/*
 * Unit tests for base/arena: every allocation is 16-byte aligned, zeroed and
 * disjoint from the others, used_bytes counts rounded sizes, max_bytes is a
 * hard bound (NULL beyond it, nothing consumed), strndup copies and
 * terminates, and alloc_array refuses a size that overflows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/arena.h"

static void test_alignment_and_accounting(void **state)
{
	static const size_t sizes[] = { 1, 3, 16, 17, 100, 4095, 0, 33 };
	struct kerf_arena a;
	size_t want = 0;

	(void)state;
	kerf_arena_init(&a, 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *p = kerf_arena_alloc(&a, sizes[i]);
		size_t s = sizes[i] ? sizes[i] : 1;

		assert_non_null(p);
		assert_int_equal((uintptr_t)p % 16, 0);
		want += (s + 15) / 16 * 16;
		assert_int_equal(a.used_bytes, want);
	}
	kerf_arena_release(&a);
	assert_int_equal(a.used_bytes, 0);
	assert_null(a.head);
}

static void test_allocations_disjoint(void **state)
{
	struct kerf_arena a;
	unsigned char *p[64];

	(void)state;
	kerf_arena_init(&a, 0);
	for (int i = 0; i < 64; i++) {
		/* 64 x 2000 bytes spans more than one 64 KiB chunk. */
		p[i] = kerf_arena_alloc(&a, 2000);
		assert_non_null(p[i]);
		memset(p[i], i, 2000);
	}
	for (int i = 0; i < 64; i++)
		for (int k = 0; k < 2000; k++)
			assert_int_equal(p[i][k], i);
	kerf_arena_release(&a);
}

static void test_zeroed(void **state)
{
	struct kerf_arena a;

	(void)state;
	/* Dirty memory, give it back, then take it again. */
	for (int round = 0; round < 2; round++) {
		unsigned char *p;

		kerf_arena_init(&a, 0);
		for (int i = 0; i < 40; i++) {
			p = kerf_arena_alloc(&a, 3000);
			assert_non_null(p);
			for (int k = 0; k < 3000; k++)
				assert_int_equal(p[k], 0);
			memset(p, 0xff, 3000);
		}
		p = kerf_arena_alloc(&a, 200000); /* bigger than a chunk */
		assert_non_null(p);
		for (int k = 0; k < 200000; k++)
			assert_int_equal(p[k], 0);
		memset(p, 0xff, 200000);
		kerf_arena_release(&a);
	}
}

static void test_large_then_small(void **state)
{
	struct kerf_arena a;
	char *big, *small;

	(void)state;
	kerf_arena_init(&a, 0);
	big = kerf_arena_alloc(&a, 100000);
	small = kerf_arena_alloc(&a, 10);
	assert_non_null(big);
	assert_non_null(small);
	assert_true(small + 10 <= big || small >= big + 100000);
	assert_int_equal(a.used_bytes, 100000 + 16);
	kerf_arena_release(&a);
}

static void test_max_bytes_bound(void **state)
{
	struct kerf_arena a;

	(void)state;
	kerf_arena_init(&a, 64);
	assert_non_null(kerf_arena_alloc(&a, 40)); /* 48 */
	assert_non_null(kerf_arena_alloc(&a, 16)); /* 64 */
	assert_int_equal(a.used_bytes, 64);
	assert_null(kerf_arena_alloc(&a, 1));
	assert_null(kerf_arena_alloc(&a, 0));
	assert_int_equal(a.used_bytes, 64);
	kerf_arena_release(&a);
	/* release keeps the bound */
	assert_int_equal(a.max_bytes, 64);
	assert_null(kerf_arena_alloc(&a, 65));
	assert_int_equal(a.used_bytes, 0);
	assert_non_null(kerf_arena_alloc(&a, 64));
	assert_int_equal(a.used_bytes, 64);
	kerf_arena_release(&a);
}

static void test_huge_size(void **state)
{
	struct kerf_arena a;

	(void)state;
	kerf_arena_init(&a, 0);
	assert_null(kerf_arena_alloc(&a, SIZE_MAX));
	assert_null(kerf_arena_alloc(&a, SIZE_MAX - 15));
	assert_int_equal(a.used_bytes, 0);
	kerf_arena_release(&a);
}

static void test_strndup(void **state)
{
	struct kerf_arena a;
	const char src[] = "hello, world";
	char *s;

	(void)state;
	kerf_arena_init(&a, 0);
	s = kerf_arena_strndup(&a, src, 5);
	assert_non_null(s);
	assert_string_equal(s, "hello");
	assert_ptr_not_equal(s, src);
	s = kerf_arena_strndup(&a, src, strlen(src));
	assert_string_equal(s, "hello, world");
	s = kerf_arena_strndup(&a, src, 0);
	assert_non_null(s);
	assert_string_equal(s, "");
	/* Copies bytes up to len even past an embedded NUL. */
	s = kerf_arena_strndup(&a, "ab\0cd", 5);
	assert_memory_equal(s, "ab\0cd", 6);
	kerf_arena_release(&a);

	kerf_arena_init(&a, 16);
	assert_non_null(kerf_arena_strndup(&a, "0123456789abcde", 15));
	assert_null(kerf_arena_strndup(&a, "x", 1));
	kerf_arena_release(&a);
}

static void test_alloc_array(void **state)
{
	struct kerf_arena a;
	uint64_t *v;

	(void)state;
	kerf_arena_init(&a, 0);
	v = kerf_arena_alloc_array(&a, 5, sizeof(*v));
	assert_non_null(v);
	assert_int_equal(a.used_bytes, 48);
	for (int i = 0; i < 5; i++)
		assert_int_equal(v[i], 0);
	assert_null(kerf_arena_alloc_array(&a, SIZE_MAX / 2 + 1, 2));
	assert_null(kerf_arena_alloc_array(&a, SIZE_MAX, SIZE_MAX));
	assert_null(kerf_arena_alloc_array(&a, 2, SIZE_MAX / 2 + 1));
	assert_null(kerf_arena_alloc_array(&a, (SIZE_MAX >> 4) + 1, 16));
	assert_int_equal(a.used_bytes, 48);
	/* n or size 0: a minimal allocation, not an error */
	assert_non_null(kerf_arena_alloc_array(&a, 0, 8));
	assert_non_null(kerf_arena_alloc_array(&a, SIZE_MAX, 0));
	assert_int_equal(a.used_bytes, 48 + 16 + 16);
	kerf_arena_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alignment_and_accounting),
		cmocka_unit_test(test_allocations_disjoint),
		cmocka_unit_test(test_zeroed),
		cmocka_unit_test(test_large_then_small),
		cmocka_unit_test(test_max_bytes_bound),
		cmocka_unit_test(test_huge_size),
		cmocka_unit_test(test_strndup),
		cmocka_unit_test(test_alloc_array),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
