/*
 * mps_limits (mps/limits.h): a fraction's thread percentage (rounded up)
 * and pinned memory (rounded down, at least 1 MiB), the bounds, "within",
 * and the text of the control commands and client variables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mps/limits.h"

static void test_fraction(void **state)
{
	struct kerf_mps_limits l;
	(void)state;

	/* H100 80GB: 81559 MiB */
	assert_int_equal(kerf_mps_limits_for_fraction(250, 81559, &l, NULL), 0);
	assert_int_equal(l.thread_pct, 25);
	assert_int_equal(l.pinned_mem_mib, 20389);   /* 20389.75 down */
	assert_int_equal(kerf_mps_limits_for_fraction(1, 81559, &l, NULL), 0);
	assert_int_equal(l.thread_pct, 1);           /* 0.1 % up */
	assert_int_equal(l.pinned_mem_mib, 81);
	assert_int_equal(kerf_mps_limits_for_fraction(999, 81559, &l, NULL), 0);
	assert_int_equal(l.thread_pct, 100);
	assert_int_equal(l.pinned_mem_mib, 81477);
	assert_int_equal(kerf_mps_limits_for_fraction(333, 1000, &l, NULL), 0);
	assert_int_equal(l.thread_pct, 34);
	assert_int_equal(l.pinned_mem_mib, 333);
	/* a tiny GPU: never 0 MiB (0 would mean no limit) */
	assert_int_equal(kerf_mps_limits_for_fraction(1, 10, &l, NULL), 0);
	assert_int_equal(l.pinned_mem_mib, 1);
	/* three shares of 333m never add up to more than the GPU */
	assert_true(3 * l.pinned_mem_mib <= 10);
	/* the largest GPU does not overflow */
	assert_int_equal(kerf_mps_limits_for_fraction(999, KERF_MPS_MAX_GPU_MEM_MIB, &l, NULL), 0);
	assert_int_equal(l.pinned_mem_mib, (uint64_t)KERF_MPS_MAX_GPU_MEM_MIB * 999 / 1000);
}

static void test_fraction_refused(void **state)
{
	struct kerf_mps_limits l = { 7, 7 };
	struct kerf_err err = { 0 };
	(void)state;

	assert_int_equal(kerf_mps_limits_for_fraction(0, 80000, &l, &err), -KERF_ERANGE);
	assert_non_null(strstr(err.msg, "fraction 0m: must be 1m..999m"));
	kerf_err_clear(&err);
	assert_int_equal(kerf_mps_limits_for_fraction(1000, 80000, &l, &err), -KERF_ERANGE);
	assert_non_null(strstr(err.msg, "fraction 1000m"));
	kerf_err_clear(&err);
	assert_int_equal(kerf_mps_limits_for_fraction(500, 0, &l, &err), -KERF_ERANGE);
	assert_non_null(strstr(err.msg, "GPU memory 0 MiB"));
	kerf_err_clear(&err);
	assert_int_equal(kerf_mps_limits_for_fraction(500, KERF_MPS_MAX_GPU_MEM_MIB + 1ull, &l,
						      &err), -KERF_ERANGE);
	assert_int_equal(l.thread_pct, 7);   /* untouched */

	struct kerf_mps_limits bad = { 0, 10 };
	kerf_err_clear(&err);
	assert_int_equal(kerf_mps_limits_check(&bad, &err), -KERF_ERANGE);
	assert_non_null(strstr(err.msg, "active thread percentage 0: must be 1..100"));
	bad.thread_pct = 101;
	assert_int_equal(kerf_mps_limits_check(&bad, NULL), -KERF_ERANGE);
	bad.thread_pct = 100;
	bad.pinned_mem_mib = KERF_MPS_MAX_GPU_MEM_MIB + 1ull;
	kerf_err_clear(&err);
	assert_int_equal(kerf_mps_limits_check(&bad, &err), -KERF_ERANGE);
	assert_non_null(strstr(err.msg, "pinned memory limit"));
	bad.pinned_mem_mib = 0;
	assert_int_equal(kerf_mps_limits_check(&bad, NULL), 0);
}

static void test_within(void **state)
{
	struct kerf_mps_limits daemon = { 50, 40000 }, pod = { 25, 20000 };
	struct kerf_mps_limits unlimited = { 50, 0 };
	(void)state;

	assert_true(kerf_mps_limits_within(&pod, &daemon));
	assert_true(kerf_mps_limits_within(&daemon, &daemon));
	pod.thread_pct = 51;
	assert_false(kerf_mps_limits_within(&pod, &daemon));
	pod.thread_pct = 50;
	pod.pinned_mem_mib = 40001;
	assert_false(kerf_mps_limits_within(&pod, &daemon));
	/* no limit on the pod is more than any limit */
	pod.pinned_mem_mib = 0;
	assert_false(kerf_mps_limits_within(&pod, &daemon));
	assert_true(kerf_mps_limits_within(&pod, &unlimited));
}

static void test_text(void **state)
{
	struct kerf_mps_limits l = { 25, 20389 };
	char cmds[2][KERF_MPS_TEXT_MAX], pct[KERF_MPS_TEXT_MAX], mem[KERF_MPS_TEXT_MAX];
	(void)state;

	assert_int_equal(kerf_mps_limits_commands(&l, cmds), 2);
	assert_string_equal(cmds[0], "set_default_device_pinned_mem_limit 0 20389M");
	assert_string_equal(cmds[1], "set_default_active_thread_percentage 25");
	kerf_mps_limits_env(&l, pct, mem);
	assert_string_equal(pct, "25");
	assert_string_equal(mem, "0=20389M");
	l.pinned_mem_mib = 0;
	assert_int_equal(kerf_mps_limits_commands(&l, cmds), 1);
	assert_string_equal(cmds[0], "set_default_active_thread_percentage 25");
	kerf_mps_limits_env(&l, pct, mem);
	assert_string_equal(mem, "");
	/* the longest fits */
	l.thread_pct = 100;
	l.pinned_mem_mib = KERF_MPS_MAX_GPU_MEM_MIB;
	assert_int_equal(kerf_mps_limits_commands(&l, cmds), 2);
	assert_string_equal(cmds[0], "set_default_device_pinned_mem_limit 0 16777216M");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fraction),
		cmocka_unit_test(test_fraction_refused),
		cmocka_unit_test(test_within),
		cmocka_unit_test(test_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
