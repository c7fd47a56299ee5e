/*
 * Unit tests for base/parse: decimal digits are accepted up to UINT64_MAX
 * (leading zeros too); an empty string, a sign, spaces, "0x", trailing
 * characters and overflow are refused with *out untouched; the option form
 * checks its bounds and names the option and the value, escaped, in its
 * message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/parse.h"

static void test_valid(void **state)
{
	static const struct {
		const char *s;
		uint64_t v;
	} ok[] = {
		{ "0", 0 },
		{ "7", 7 },
		{ "007", 7 },
		{ "42", 42 },
		{ "100000000", 100000000 },
		{ "4294967296", (uint64_t)1 << 32 },
		{ "18446744073709551614", UINT64_MAX - 1 },
		{ "18446744073709551615", UINT64_MAX },
		{ "000000000000000000000018446744073709551615", UINT64_MAX },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t v = 12345;

		assert_int_equal(kerf_parse_u64(ok[i].s, &v), 0);
		assert_true(v == ok[i].v);
	}
}

static void test_not_digits(void **state)
{
	static const char *const bad[] = {
		"", "-", "+", "-1", "+1", "-0", " 1", "1 ", "\t1", "1\n",
		"0x10", "1e3", "1.5", "1,2", "12abc", "abc", "1-2", "\xd9\xa1", "1\xff",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 12345;

		assert_int_equal(kerf_parse_u64(bad[i], &v), -KERF_EPARSE);
		assert_true(v == 12345);
	}
	assert_int_equal(kerf_parse_u64(NULL, NULL), -KERF_EPARSE);
}

static void test_overflow(void **state)
{
	static const char *const big[] = {
		"18446744073709551616",          /* UINT64_MAX + 1 */
		"18446744073709551620",
		"99999999999999999999",
		"184467440737095516150",
		"100000000000000000000000000000000000000000",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		uint64_t v = 12345;

		assert_int_equal(kerf_parse_u64(big[i], &v), -KERF_ERANGE);
		assert_true(v == 12345);
	}
}

static void test_opt_in_bounds(void **state)
{
	struct kerf_err err = { 0 };
	uint64_t v = 0;

	(void)state;
	assert_int_equal(kerf_parse_u64_opt("--runs", "1", 1, 100, &v, &err), 0);
	assert_true(v == 1);
	assert_int_equal(kerf_parse_u64_opt("--runs", "100", 1, 100, &v, &err), 0);
	assert_true(v == 100);
	assert_int_equal(kerf_parse_u64_opt("--seed", "18446744073709551615", 0,
					    UINT64_MAX, &v, &err), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(err.code, 0);
	assert_string_equal(err.msg, "");
}

static void test_opt_errors(void **state)
{
	static const struct {
		const char *s;
		uint64_t min, max;
		int code;
		const char *msg;
	} bad[] = {
		{ "", 1, 100, -KERF_EPARSE,
		  "--runs '': not a decimal integer (expected 1..100)" },
		{ "-1", 1, 100, -KERF_EPARSE,
		  "--runs '-1': not a decimal integer (expected 1..100)" },
		{ "+5", 1, 100, -KERF_EPARSE,
		  "--runs '+5': not a decimal integer (expected 1..100)" },
		{ "12abc", 1, 100, -KERF_EPARSE,
		  "--runs '12abc': not a decimal integer (expected 1..100)" },
		{ " 5", 1, 100, -KERF_EPARSE,
		  "--runs ' 5': not a decimal integer (expected 1..100)" },
		{ "0", 1, 100, -KERF_ERANGE,
		  "--runs '0': out of range (expected 1..100)" },
		{ "101", 1, 100, -KERF_ERANGE,
		  "--runs '101': out of range (expected 1..100)" },
		{ "18446744073709551616", 0, UINT64_MAX, -KERF_ERANGE,
		  "--runs '18446744073709551616': out of range (expected 0..18446744073709551615)" },
		{ "1\n\x1b[2J'", 0, 9, -KERF_EPARSE,
		  "--runs '1\\x0a\\x1b[2J\\'': not a decimal integer (expected 0..9)" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kerf_err err = { 0 };
		uint64_t v = 12345;

		assert_int_equal(kerf_parse_u64_opt("--runs", bad[i].s,
						    bad[i].min, bad[i].max, &v,
						    &err),
				 bad[i].code);
		assert_int_equal(err.code, bad[i].code);
		assert_string_equal(err.msg, bad[i].msg);
		assert_true(v == 12345);
	}
}

static void test_opt_null_err(void **state)
{
	uint64_t v = 3;

	(void)state;
	assert_int_equal(kerf_parse_u64_opt("--x", "x", 0, 9, &v, NULL),
			 -KERF_EPARSE);
	assert_int_equal(kerf_parse_u64_opt("--x", "10", 0, 9, &v, NULL),
			 -KERF_ERANGE);
	assert_int_equal(kerf_parse_u64_opt("--x", NULL, 0, 9, &v, NULL),
			 -KERF_EPARSE);
	assert_true(v == 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_not_digits),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_opt_in_bounds),
		cmocka_unit_test(test_opt_errors),
		cmocka_unit_test(test_opt_null_err),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
