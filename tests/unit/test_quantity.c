/* quantity: the API server's grammar, rounding up, refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/quantity.h"

static int64_t units(const char *s)
{
	int64_t v = -777;

	assert_int_equal(kerf_quantity_parse(s, &v), 0);
	return v;
}

static int64_t milli(const char *s)
{
	int64_t v = -777;

	assert_int_equal(kerf_quantity_parse_milli(s, &v), 0);
	return v;
}

static void test_suffixes(void **state)
{
	(void)state;
	assert_int_equal(units("8"), 8);
	assert_int_equal(units("16Gi"), 17179869184LL);
	assert_int_equal(units("1Ki"), 1024);
	assert_int_equal(units("1.5Ki"), 1536);
	assert_int_equal(units("2k"), 2000);
	assert_int_equal(units("3M"), 3000000);
	assert_int_equal(units("1G"), 1000000000);
	assert_int_equal(units("1T"), 1000000000000LL);
	assert_int_equal(units("1P"), 1000000000000000LL);
	assert_int_equal(units("1E"), 1000000000000000000LL);
	assert_int_equal(units("4Ei"), 4611686018427387904LL);
	assert_int_equal(units("2e3"), 2000);
	assert_int_equal(units("2E3"), 2000);
	assert_int_equal(units("2e+3"), 2000);
	assert_int_equal(units("007"), 7);
	assert_int_equal(units("-2"), -2);
	assert_int_equal(units("+2"), 2);
	assert_int_equal(units(".5"), 1);
	assert_int_equal(units("5."), 5);
	assert_int_equal(units("0"), 0);
	assert_int_equal(units("0Ei"), 0);
	assert_int_equal(milli("500m"), 500);
	assert_int_equal(milli("1"), 1000);
	assert_int_equal(milli("0.25"), 250);
	assert_int_equal(milli("250000u"), 250);
	assert_int_equal(milli("2e-3"), 2);
	assert_int_equal(milli("1n"), 1);      /* rounded up */
	assert_int_equal(milli("1500000n"), 2);
	assert_int_equal(units("1500m"), 2);   /* Value() rounds up */
	assert_int_equal(units("0.1m"), 1);
	assert_int_equal(units("-1500m"), -2); /* away from zero */
	assert_int_equal(units("10000000000000000000e-1"), 1000000000000000000LL);
	assert_int_equal(units("1.00000000000000000000000"), 1);
}

static void test_refused(void **state)
{
	static const char *bad[] = {
		"", "m", "Gi", "1 Gi", " 1", "1 ", "1GiB", "1g", "1Kb", "0x10",
		"1..5", "1.5.", "e3", "1e", "1e+", "1e3.5", "1Gi1", "--1",
		"1mm", "1ki", "1,5", "nan", "inf", ".", "+", "1\n",
	};
	int64_t v = 42;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(kerf_quantity_parse(bad[i], &v), -KERF_EPARSE);
		assert_int_equal(v, 42);
	}
	assert_int_equal(kerf_quantity_parse(NULL, &v), -KERF_EPARSE);
	assert_int_equal(kerf_quantity_parse("8Ei", &v), -KERF_ERANGE);
	assert_int_equal(kerf_quantity_parse("9223372036854775808", &v),
			 -KERF_ERANGE);
	assert_int_equal(kerf_quantity_parse("99999999999999999999", &v),
			 -KERF_ERANGE);
	assert_int_equal(kerf_quantity_parse("1e19", &v), -KERF_ERANGE);
	assert_int_equal(kerf_quantity_parse("1e99999", &v), -KERF_ERANGE);
	assert_int_equal(kerf_quantity_parse_milli("10E", &v), -KERF_ERANGE);
	assert_int_equal(v, 42);
	assert_int_equal(kerf_quantity_parse("9223372036854775807", &v), 0);
	assert_int_equal(v, INT64_MAX);
}

static void test_whole(void **state)
{
	int64_t v = 42;

	(void)state;
	assert_int_equal(kerf_quantity_parse_whole("8", &v), 0);
	assert_int_equal(v, 8);
	assert_int_equal(kerf_quantity_parse_whole("8000m", &v), 0);
	assert_int_equal(v, 8);
	assert_int_equal(kerf_quantity_parse_whole("0.5Ki", &v), 0);
	assert_int_equal(v, 512);
	assert_int_equal(kerf_quantity_parse_whole("1500m", &v), -KERF_EINVAL);
	assert_int_equal(kerf_quantity_parse_whole("0.5", &v), -KERF_EINVAL);
	assert_int_equal(kerf_quantity_parse_whole("0.1Ei", &v), -KERF_EINVAL);
	assert_int_equal(v, 512);
}

static void test_field_messages(void **state)
{
	struct kerf_err err = { 0 };
	int64_t v;

	(void)state;
	assert_int_equal(kerf_quantity_parse_field("limits.nvidia.com/gpu",
						   "1500m", true, &v, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "limits.nvidia.com/gpu '1500m': must be an integer");
	kerf_err_clear(&err);
	assert_int_equal(kerf_quantity_parse_field("requests.memory",
						   "1\x1b[2J", false, &v, &err),
			 -KERF_EPARSE);
	assert_null(strchr(err.msg, '\x1b'));
	assert_non_null(strstr(err.msg, "requests.memory '1\\x1b[2J': not a quantity"));
	kerf_err_clear(&err);
	assert_int_equal(kerf_quantity_parse_field("requests.memory", "9Ei",
						   false, &v, &err),
			 -KERF_ERANGE);
	assert_string_equal(err.msg, "requests.memory '9Ei': out of range");
	kerf_err_clear(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_suffixes),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_field_messages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
