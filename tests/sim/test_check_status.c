/*
 * test_check_status: kerf sim check's exit status and its per-seed record
 * of a violation.  The random scenarios hold every invariant, so the
 * command cannot be made to exit 3 from the outside; its status comes from
 * kerf_check_status, tested here on results that say what a violation or
 * a restart mismatch leaves behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sim/check.h"

static void test_clean_is_0(void **state)
{
	struct kerf_check_result r = { .runs = 5, .events = 1000 };

	(void)state;
	assert_int_equal(kerf_check_status(&r), 0);
}

static void test_violation_is_3(void **state)
{
	struct kerf_check_result r = { .runs = 5, .events = 1000, .violations = 1 };

	(void)state;
	assert_int_equal(kerf_check_status(&r), 3);
}

static void test_mismatch_is_3(void **state)
{
	struct kerf_check_result r = { .runs = 5, .events = 1000, .mismatches = 2 };

	(void)state;
	assert_int_equal(kerf_check_status(&r), 3);
}

/* A seed that holds: status 0, and no violation recorded for it. */
static void test_real_seed(void **state)
{
	struct kerf_check_result r = { 0 };
	struct kerf_err err = { 0 };

	(void)state;
	assert_int_equal(kerf_check_run(7, 1, &r, &err), 0);
	assert_int_equal(r.runs, 1);
	assert_true(r.events > 0);
	assert_false(r.last.valid);
	assert_int_equal(kerf_check_status(&r), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_is_0),
		cmocka_unit_test(test_violation_is_3),
		cmocka_unit_test(test_mismatch_is_3),
		cmocka_unit_test(test_real_seed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
