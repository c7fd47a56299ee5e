/*
 * units: the one text form of each quantity (base/units.h; issue 13,
 * friction 9): kubectl's durations rounded to the nearest second, run
 * times, GPUs, GPU-hours and percentages.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/units.h"

static void duration_ms(int64_t ms, const char *want)
{
	char buf[32];

	kerf_units_duration(ms, buf, sizeof(buf));
	if (strcmp(buf, want))
		fail_msg("%lld ms: '%s', not '%s'", (long long)ms, buf, want);
}

static void duration(int64_t s, const char *want)
{
	duration_ms(s * 1000, want);
}

static void test_durations(void **state)
{
	(void)state;
	duration_ms(-1, "-");
	duration(0, "0s");
	duration(119, "119s");
	duration(120, "2m");
	duration(192, "3m12s");
	duration(599, "9m59s");
	duration(600, "10m");
	duration(3 * 3600 - 1, "179m");
	duration(3 * 3600, "3h");
	duration(3 * 3600 + 60, "3h1m");
	duration(3 * 3600 + 58 * 60 + 63, "3h59m");
	duration(8 * 3600 + 60, "8h");
	duration(47 * 3600 + 3599, "47h");
	duration(48 * 3600, "2d");
	duration(51 * 3600, "2d3h");
	duration(8 * 86400, "8d");
	duration(2 * 365 * 86400 - 1, "729d");
	duration(2 * 365 * 86400, "2y");
	duration(2 * 365 * 86400 + 86400, "2y1d");
	duration(9 * 365 * 86400 + 86400, "9y");
}

/* The friction: one p99 printed "32s" by one command and "33 s" by
 * another.  Rounded to the nearest second, both read the same. */
static void test_rounding(void **state)
{
	(void)state;
	duration_ms(32499, "32s");
	duration_ms(32500, "33s");
	duration_ms(32999, "33s");
	duration_ms(499, "0s");
	duration_ms(119499, "119s");
	duration_ms(119500, "2m");
	/* 85543 s, once printed as "85543s", is a day less an hour */
	duration(85543, "23h");
}

static void elapsed(double s, const char *want)
{
	char buf[32];

	kerf_units_elapsed(s, buf, sizeof(buf));
	if (strcmp(buf, want))
		fail_msg("%g s: '%s', not '%s'", s, buf, want);
}

static void test_elapsed(void **state)
{
	(void)state;
	elapsed(0, "0.00s");
	elapsed(0.423, "0.42s");
	elapsed(9.994, "9.99s");
	elapsed(12.34, "12.3s");
	elapsed(192, "3m12s");
	elapsed(-1, "-");
}

static void test_gpus(void **state)
{
	char buf[32];

	(void)state;
	kerf_units_gpus(0, buf, sizeof(buf));
	assert_string_equal(buf, "0");
	kerf_units_gpus(16000, buf, sizeof(buf));
	assert_string_equal(buf, "16");
	kerf_units_gpus(2500, buf, sizeof(buf));
	assert_string_equal(buf, "2.5");
	kerf_units_gpus(125, buf, sizeof(buf));
	assert_string_equal(buf, "0.125");
	kerf_units_gpus(1010, buf, sizeof(buf));
	assert_string_equal(buf, "1.01");
	kerf_units_gpus(-1, buf, sizeof(buf));
	assert_string_equal(buf, "-");
}

static void test_gpu_hours_percent(void **state)
{
	char buf[32];

	(void)state;
	kerf_units_gpu_hours(0, buf, sizeof(buf));
	assert_string_equal(buf, "0 GPU-h");
	kerf_units_gpu_hours(12.46, buf, sizeof(buf));
	assert_string_equal(buf, "12.5 GPU-h");
	kerf_units_percent(213.4, 0, buf, sizeof(buf));
	assert_string_equal(buf, "213%");
	kerf_units_percent(33.04, 1, buf, sizeof(buf));
	assert_string_equal(buf, "33.0%");
	kerf_units_percent(5.1234, 9, buf, sizeof(buf));
	assert_string_equal(buf, "5.123%");
	kerf_units_percent(1, -2, buf, sizeof(buf));
	assert_string_equal(buf, "1%");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_rounding),
		cmocka_unit_test(test_elapsed),
		cmocka_unit_test(test_gpus),
		cmocka_unit_test(test_gpu_hours_percent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
