/*
 * Unit tests for base/grow: KERF_GROW keeps items across growth, at least
 * doubles, zeroes new slots when asked, and refuses a size that overflows
 * (-KERF_ELIMIT) with the array untouched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "base/grow.h"

struct item {
	uint64_t a;
	uint32_t b;
};

static void test_append_keeps_items(void **state)
{
	struct item *v = NULL;
	size_t nr = 0, alloc = 0, reallocs = 0, last = 0;

	(void)state;
	for (uint32_t i = 0; i < 100000; i++) {
		assert_int_equal(KERF_GROW(v, alloc, nr + 1), 0);
		assert_true(alloc >= nr + 1);
		if (alloc != last) {
			reallocs++;
			/* at least doubling */
			assert_true(last == 0 || alloc >= 2 * last);
			last = alloc;
		}
		v[nr++] = (struct item){ .a = (uint64_t)i * 7, .b = i };
	}
	/* amortised: about log2(100000 / 16) growths */
	assert_true(reallocs <= 14);
	for (uint32_t i = 0; i < nr; i++) {
		assert_int_equal(v[i].a, (uint64_t)i * 7);
		assert_int_equal(v[i].b, i);
	}
	free(v);
}

static void test_no_growth_when_room(void **state)
{
	int *v = NULL;
	size_t alloc = 0;
	int *before;

	(void)state;
	assert_int_equal(KERF_GROW(v, alloc, 10), 0);
	assert_int_equal(alloc, 16);
	before = v;
	assert_int_equal(KERF_GROW(v, alloc, 16), 0);
	assert_ptr_equal(v, before);
	assert_int_equal(KERF_GROW(v, alloc, 0), 0);
	assert_int_equal(alloc, 16);
	free(v);
}

static void test_zero_new_slots(void **state)
{
	uint32_t *v = NULL;
	size_t alloc = 0;

	(void)state;
	assert_int_equal(KERF_GROW_ZERO(v, alloc, 3), 0);
	for (size_t i = 0; i < alloc; i++)
		assert_int_equal(v[i], 0);
	memset(v, 0xff, alloc * sizeof(*v));
	assert_int_equal(KERF_GROW_ZERO(v, alloc, 17), 0);
	assert_int_equal(alloc, 32);
	for (size_t i = 0; i < 16; i++)
		assert_int_equal(v[i], UINT32_MAX);
	for (size_t i = 16; i < alloc; i++)
		assert_int_equal(v[i], 0);
	free(v);
}

static void test_overflow_refused(void **state)
{
	struct item *v = NULL;
	size_t alloc = 0;

	(void)state;
	assert_int_equal(KERF_GROW(v, alloc, 4), 0);
	v[0].b = 42;
	/* need * size overflows */
	assert_int_equal(KERF_GROW(v, alloc, SIZE_MAX / 8), -KERF_ELIMIT);
	assert_int_equal(KERF_GROW(v, alloc, SIZE_MAX), -KERF_ELIMIT);
	assert_int_equal(alloc, 16);
	assert_int_equal(v[0].b, 42);
	free(v);
}

static void test_mul_ok(void **state)
{
	size_t out;

	(void)state;
	assert_true(kerf_mul_ok(1000, 1000, &out));
	assert_int_equal(out, 1000000);
	assert_false(kerf_mul_ok(SIZE_MAX / 2 + 1, 2, &out));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_append_keeps_items),
		cmocka_unit_test(test_no_growth_when_room),
		cmocka_unit_test(test_zero_new_slots),
		cmocka_unit_test(test_overflow_refused),
		cmocka_unit_test(test_mul_ok),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
