/*
 * Unit tests for base/parse: decimal digits are accepted up to UINT64_MAX
 * (leading zeros too); an empty string, a sign, spaces, "0x", trailing
 * characters and overflow are refused with *out untouched; the option form
 * checks its bounds and names the option and the value, escaped, in its
 * message.  Fixed-point decimals refuse '', nan, inf, 1e400, signs, ".5",
 * trailing text and digits finer than the unit; lists refuse empty items,
 * too many items and (when asked) repeats; seed ranges count rather than
 * compare, so the range ending at UINT64_MAX is one seed, not a loop
 * without end.
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
		/* not digits, even where the digits before already overflow */
		"18446744073709551616x", "99999999999999999999999\x11",
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

static void test_fixed_valid(void **state)
{
	static const struct {
		const char *s;
		unsigned decimals;
		uint64_t v;
	} ok[] = {
		{ "0", 3, 0 },
		{ "7", 3, 7000 },
		{ "2.5", 3, 2500 },
		{ "0.001", 3, 1 },
		{ "0.250", 3, 250 },
		{ "1.5000000", 3, 1500 },         /* trailing zeros are exact */
		{ "007.10", 2, 710 },
		{ "1.3", 2, 130 },
		{ "42", 0, 42 },
		{ "42.000", 0, 42 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "18446744073709551.615", 3, UINT64_MAX },
		{ "1", 18, 1000000000000000000ull },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t v = 12345;

		assert_int_equal(kerf_parse_fixed(ok[i].s, ok[i].decimals, &v), 0);
		assert_true(v == ok[i].v);
	}
}

static void test_fixed_refused(void **state)
{
	static const struct {
		const char *s;
		unsigned decimals;
		int rc;
	} bad[] = {
		{ "", 3, -KERF_EPARSE },
		{ "nan", 3, -KERF_EPARSE },
		{ "inf", 3, -KERF_EPARSE },
		{ "1e400", 3, -KERF_EPARSE },
		{ "1e3", 3, -KERF_EPARSE },
		{ "-1", 3, -KERF_EPARSE },
		{ "+1", 3, -KERF_EPARSE },
		{ ".5", 3, -KERF_EPARSE },
		{ "5.", 3, -KERF_EPARSE },
		{ " 5", 3, -KERF_EPARSE },
		{ "5 ", 3, -KERF_EPARSE },
		{ "5s", 3, -KERF_EPARSE },
		{ "0x10", 3, -KERF_EPARSE },
		{ "1..2", 3, -KERF_EPARSE },
		{ "1.2.3", 3, -KERF_EPARSE },
		{ "1,5", 3, -KERF_EPARSE },
		{ "1", 19, -KERF_EPARSE },
		{ "0.0005", 3, -KERF_EINVAL },
		{ "1.5", 0, -KERF_EINVAL },
		{ "18446744073709551616", 0, -KERF_ERANGE },
		{ "18446744073709551.616", 3, -KERF_ERANGE },
		{ "18446744073709552", 3, -KERF_ERANGE },
		{ "99999999999999999999999", 0, -KERF_ERANGE },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 12345;

		assert_int_equal(kerf_parse_fixed(bad[i].s, bad[i].decimals, &v),
				 bad[i].rc);
		assert_true(v == 12345);
	}
	assert_int_equal(kerf_parse_fixed(NULL, 3, NULL), -KERF_EPARSE);
}

static void test_fixed_opt(void **state)
{
	static const struct {
		const char *s;
		int code;
		const char *msg;
	} bad[] = {
		{ "", -KERF_EPARSE,
		  "--arrival-s '': not a decimal number (expected 0.001..3600, at most 3 decimals)" },
		{ "nan", -KERF_EPARSE,
		  "--arrival-s 'nan': not a decimal number (expected 0.001..3600, at most 3 decimals)" },
		{ "1e400", -KERF_EPARSE,
		  "--arrival-s '1e400': not a decimal number (expected 0.001..3600, at most 3 decimals)" },
		{ "-2", -KERF_EPARSE,
		  "--arrival-s '-2': not a decimal number (expected 0.001..3600, at most 3 decimals)" },
		{ "0.0005", -KERF_EINVAL,
		  "--arrival-s '0.0005': more than 3 decimals (expected 0.001..3600)" },
		{ "0", -KERF_ERANGE,
		  "--arrival-s '0': out of range (expected 0.001..3600)" },
		{ "3600.001", -KERF_ERANGE,
		  "--arrival-s '3600.001': out of range (expected 0.001..3600)" },
		{ "99999999999999999999", -KERF_ERANGE,
		  "--arrival-s '99999999999999999999': out of range (expected 0.001..3600)" },
	};
	struct kerf_err err = { 0 };
	uint64_t v = 0;

	(void)state;
	assert_int_equal(kerf_parse_fixed_opt("--arrival-s", "2.5", 3, 1, 3600000,
					      &v, &err), 0);
	assert_true(v == 2500);
	assert_int_equal(err.code, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		kerf_err_clear(&err);
		v = 12345;
		assert_int_equal(kerf_parse_fixed_opt("--arrival-s", bad[i].s, 3,
						      1, 3600000, &v, &err),
				 bad[i].code);
		assert_int_equal(err.code, bad[i].code);
		assert_string_equal(err.msg, bad[i].msg);
		assert_true(v == 12345);
	}
	/* control characters in the value come back escaped */
	kerf_err_clear(&err);
	assert_int_equal(kerf_parse_fixed_opt("--inflate", "1\x1b[2J\n", 2, 1,
					      1000, &v, &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "--inflate '1\\x1b[2J\\x0a': not a decimal number (expected 0.01..10, at most 2 decimals)");
}

static void test_list(void **state)
{
	static const struct {
		const char *s;
		int code;
		const char *msg;
	} bad[] = {
		{ "", -KERF_EPARSE,
		  "--nodes '': empty (expected a list N,N,... of integers 1..100)" },
		{ "1,,2", -KERF_EPARSE,
		  "--nodes '1,,2': item 2 is empty or longer than 31 bytes (expected N,N,...)" },
		{ ",1", -KERF_EPARSE,
		  "--nodes ',1': item 1 is empty or longer than 31 bytes (expected N,N,...)" },
		{ "1,", -KERF_EPARSE,
		  "--nodes '1,': item 2 is empty or longer than 31 bytes (expected N,N,...)" },
		{ "1,x", -KERF_EPARSE,
		  "--nodes '1,x': item 2 'x' is not a decimal integer (expected 1..100)" },
		{ "1,0", -KERF_ERANGE,
		  "--nodes '1,0': item 2 '0' is out of range (expected 1..100)" },
		{ "1,2,3,4,5", -KERF_ELIMIT,
		  "--nodes '1,2,3,4,5': more than 4 items" },
		{ "3,3", -KERF_EEXIST, "--nodes '3,3': 3 is given twice" },
		{ "1,\n\x1b", -KERF_EPARSE,
		  "--nodes '1,\\x0a\\x1b': item 2 '\\x0a\\x1b' is not a decimal integer (expected 1..100)" },
	};
	uint64_t v[4];
	size_t nr = 99;
	struct kerf_err err = { 0 };

	(void)state;
	assert_int_equal(kerf_parse_u64_list_opt("--nodes", "4,16,100,1", 1, 100,
						 true, v, 4, &nr, &err), 0);
	assert_int_equal(nr, 4);
	assert_true(v[0] == 4 && v[1] == 16 && v[2] == 100 && v[3] == 1);
	/* not unique: repeats are fine */
	assert_int_equal(kerf_parse_u64_list_opt("--nodes", "5,5", 1, 100,
						 false, v, 4, &nr, &err), 0);
	assert_int_equal(nr, 2);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		kerf_err_clear(&err);
		nr = 99;
		assert_int_equal(kerf_parse_u64_list_opt("--nodes", bad[i].s, 1,
							 100, true, v, 4, &nr,
							 &err),
				 bad[i].code);
		assert_string_equal(err.msg, bad[i].msg);
		assert_int_equal(nr, 99);
	}
}

static void test_seeds(void **state)
{
	static const struct {
		const char *s;
		int code;
		const char *msg;
	} bad[] = {
		{ "", -KERF_EPARSE,
		  "--seeds '': empty (expected a list N,N,... of integers 0..18446744073709551615)" },
		{ "1,,2", -KERF_EPARSE,
		  "--seeds '1,,2': item 2 is empty or longer than 31 bytes (expected N,N,...)" },
		{ "42,42", -KERF_EEXIST, "--seeds '42,42': 42 is given twice" },
		{ "5-4", -KERF_ERANGE,
		  "--seeds '5-4': the range ends before it starts" },
		{ "0-1000", -KERF_ELIMIT, "--seeds '0-1000': more than 1000 seeds" },
		{ "0-18446744073709551615", -KERF_ELIMIT,
		  "--seeds '0-18446744073709551615': more than 1000 seeds" },
		{ "-5", -KERF_EPARSE,
		  "--seeds '-5': expected A-B or A,B,... (decimal integers up to 18446744073709551615)" },
		{ "1-", -KERF_EPARSE,
		  "--seeds '1-': expected A-B or A,B,... (decimal integers up to 18446744073709551615)" },
		{ "1-2-3", -KERF_EPARSE,
		  "--seeds '1-2-3': expected A-B or A,B,... (decimal integers)" },
		{ "1-18446744073709551616", -KERF_EPARSE,
		  "--seeds '1-18446744073709551616': expected A-B or A,B,... (decimal integers up to 18446744073709551615)" },
		{ "1,2-3", -KERF_EPARSE,
		  "--seeds '1,2-3': item 2 '2-3' is not a decimal integer (expected 0..18446744073709551615)" },
	};
	static uint64_t v[1000];
	size_t nr = 0;
	struct kerf_err err = { 0 };

	(void)state;
	assert_int_equal(kerf_parse_seeds_opt("--seeds", "42-51", v, 1000, &nr,
					      &err), 0);
	assert_int_equal(nr, 10);
	assert_true(v[0] == 42 && v[9] == 51);
	/* the range that once overflowed the stack: one seed, the last */
	assert_int_equal(kerf_parse_seeds_opt("--seeds",
					      "18446744073709551615-18446744073709551615",
					      v, 1000, &nr, &err), 0);
	assert_int_equal(nr, 1);
	assert_true(v[0] == UINT64_MAX);
	assert_int_equal(kerf_parse_seeds_opt("--seeds",
					      "18446744073709550616-18446744073709551615",
					      v, 1000, &nr, &err), 0);
	assert_int_equal(nr, 1000);
	assert_true(v[999] == UINT64_MAX && v[0] == UINT64_MAX - 999);
	assert_int_equal(kerf_parse_seeds_opt("--seeds", "7", v, 1000, &nr,
					      &err), 0);
	assert_int_equal(nr, 1);
	assert_int_equal(kerf_parse_seeds_opt("--seeds", "9,3,5", v, 1000, &nr,
					      &err), 0);
	assert_int_equal(nr, 3);
	assert_int_equal(err.code, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		kerf_err_clear(&err);
		nr = 77;
		assert_int_equal(kerf_parse_seeds_opt("--seeds", bad[i].s, v, 1000,
						      &nr, &err),
				 bad[i].code);
		assert_string_equal(err.msg, bad[i].msg);
		assert_int_equal(nr, 77);
	}
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
		cmocka_unit_test(test_fixed_valid),
		cmocka_unit_test(test_fixed_refused),
		cmocka_unit_test(test_fixed_opt),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_seeds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
