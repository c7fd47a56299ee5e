/*
 * Unit tests for base/err: kerf_err_set keeps the first message and returns
 * the code it was given, kerf_strerror has a text for every code (negative
 * or positive) and a fallback for unknown ones, and both accept a NULL err.
 */
#include <setjmp.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"

static void test_set_returns_code_and_formats(void **state)
{
	struct kerf_err err = { 0 };
	int rc;

	(void)state;
	rc = kerf_err_set(&err, -KERF_EPARSE, "bad '%s' at %d", "x", 7);
	assert_int_equal(rc, -KERF_EPARSE);
	assert_int_equal(err.code, -KERF_EPARSE);
	assert_string_equal(err.msg, "bad 'x' at 7");
}

static void test_first_message_wins(void **state)
{
	struct kerf_err err = { 0 };
	int rc;

	(void)state;
	kerf_err_set(&err, -KERF_EIO, "inner cause");
	rc = kerf_err_set(&err, -KERF_EINVAL, "outer context");
	/* The second call still returns its own code... */
	assert_int_equal(rc, -KERF_EINVAL);
	/* ...but the recorded error is the first one. */
	assert_int_equal(err.code, -KERF_EIO);
	assert_string_equal(err.msg, "inner cause");
}

static void test_clear_allows_a_new_message(void **state)
{
	struct kerf_err err = { 0 };

	(void)state;
	kerf_err_set(&err, -KERF_EIO, "first");
	kerf_err_clear(&err);
	assert_int_equal(err.code, 0);
	assert_string_equal(err.msg, "");
	kerf_err_set(&err, -KERF_ERANGE, "second");
	assert_int_equal(err.code, -KERF_ERANGE);
	assert_string_equal(err.msg, "second");
}

static void test_null_err(void **state)
{
	(void)state;
	assert_int_equal(kerf_err_set(NULL, -KERF_ENOMEM, "lost %d", 1),
			 -KERF_ENOMEM);
	assert_int_equal(kerf_err_set(NULL, -KERF_EEXIST, "lost"),
			 -KERF_EEXIST);
	kerf_err_clear(NULL);
}

static void test_long_message_is_truncated(void **state)
{
	struct kerf_err err = { 0 };
	char big[2 * KERF_ERR_MSG_MAX];

	(void)state;
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	kerf_err_set(&err, -KERF_ELIMIT, "%s", big);
	assert_int_equal(err.code, -KERF_ELIMIT);
	assert_int_equal(strlen(err.msg), KERF_ERR_MSG_MAX - 1);
	assert_int_equal(err.msg[KERF_ERR_MSG_MAX - 2], 'a');
}

static void test_strerror_every_code(void **state)
{
	static const struct {
		int code;
		const char *text;
	} want[] = {
		{ KERF_OK, "success" },
		{ KERF_ENOMEM, "out of memory" },
		{ KERF_EINVAL, "invalid argument" },
		{ KERF_EPARSE, "malformed input" },
		{ KERF_EIO, "input/output error" },
		{ KERF_ERANGE, "value out of range" },
		{ KERF_ENOTFOUND, "not found" },
		{ KERF_ELIMIT, "limit exceeded" },
		{ KERF_EEXIST, "already exists" },
		{ KERF_EBUSY, "in use" },
		{ KERF_EGONE, "resource version expired" },
		{ KERF_ETIMEDOUT, "timed out" },
		{ KERF_ETRANSPORT, "transport error" },
		{ KERF_EHTTP, "API server refused the request" },
	};

	(void)state;
	assert_int_equal(sizeof(want) / sizeof(want[0]), KERF_E_COUNT_);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(want[i].code, (int)i);
		assert_string_equal(kerf_strerror(want[i].code), want[i].text);
		assert_string_equal(kerf_strerror(-want[i].code), want[i].text);
	}
}

static void test_strerror_unknown(void **state)
{
	(void)state;
	assert_string_equal(kerf_strerror(KERF_E_COUNT_), "unknown error");
	assert_string_equal(kerf_strerror(-KERF_E_COUNT_), "unknown error");
	assert_string_equal(kerf_strerror(INT_MIN), "unknown error");
	assert_string_equal(kerf_strerror(INT_MAX), "unknown error");
	assert_string_equal(kerf_strerror(1000), "unknown error");
	assert_string_equal(kerf_strerror(-1000), "unknown error");
	assert_string_equal(kerf_strerror(INT32_MAX), "unknown error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_returns_code_and_formats),
		cmocka_unit_test(test_first_message_wins),
		cmocka_unit_test(test_clear_allows_a_new_message),
		cmocka_unit_test(test_null_err),
		cmocka_unit_test(test_long_message_is_truncated),
		cmocka_unit_test(test_strerror_every_code),
		cmocka_unit_test(test_strerror_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
