/*
 * Unit tests for base/buf: appends keep the buffer NUL-terminated, the
 * max_bytes bound refuses a whole append and keeps what was there,
 * formatted appends, detach, and escaping of untrusted text (control
 * bytes, ESC, newline, quotes, high bytes) for messages, truncated with
 * "..." only when it does not fit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/err.h"

/* A Prometheus label value: \\ " and newline escaped, the rest as is. */
static void test_prom_label(void **state)
{
	struct kerf_buf b;

	(void)state;
	kerf_buf_init(&b, 64);
	assert_int_equal(kerf_buf_add_prom_label(&b, "a\\b\"c\nd\te"), 0);
	assert_string_equal(kerf_buf_str(&b), "a\\\\b\\\"c\\nd\te");
	kerf_buf_release(&b);
	kerf_buf_init(&b, 4);
	assert_true(kerf_buf_add_prom_label(&b, "\"\"\"") < 0);   /* 6 bytes: over */
	kerf_buf_release(&b);
}

static void test_append_and_str(void **state)
{
	struct kerf_buf b;

	(void)state;
	kerf_buf_init(&b, 0);
	assert_string_equal(kerf_buf_str(&b), "");
	assert_int_equal(kerf_buf_add_str(&b, "abc"), 0);
	assert_int_equal(kerf_buf_add(&b, "\0x", 2), 0);
	assert_int_equal(b.len, 5);
	assert_int_equal(b.data[5], '\0');
	assert_int_equal(kerf_buf_addf(&b, "%d-%s", 42, "z"), 0);
	assert_int_equal(b.len, 9);
	assert_memory_equal(b.data, "abc\0x42-z", 10);
	kerf_buf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_string_equal(kerf_buf_str(&b), "");
	kerf_buf_release(&b);
}

static void test_bound_refuses_whole(void **state)
{
	struct kerf_buf b;

	(void)state;
	kerf_buf_init(&b, 8);
	assert_int_equal(kerf_buf_add_str(&b, "12345"), 0);
	assert_int_equal(kerf_buf_add_str(&b, "6789"), -KERF_ELIMIT);
	assert_string_equal(kerf_buf_str(&b), "12345");
	assert_int_equal(kerf_buf_addf(&b, "%s", "abcd"), -KERF_ELIMIT);
	assert_string_equal(kerf_buf_str(&b), "12345");
	assert_int_equal(kerf_buf_add_escaped(&b, "a\nb", 3, 0), -KERF_ELIMIT);
	assert_string_equal(kerf_buf_str(&b), "12345");
	assert_int_equal(kerf_buf_add_str(&b, "678"), 0);
	assert_int_equal(b.len, 8);
	assert_int_equal(kerf_buf_add(&b, "", 0), 0);
	assert_int_equal(kerf_buf_add(&b, "x", 1), -KERF_ELIMIT);
	kerf_buf_release(&b);
}

static void test_large_growth(void **state)
{
	struct kerf_buf b;

	(void)state;
	kerf_buf_init(&b, 0);
	for (int i = 0; i < 100000; i++)
		assert_int_equal(kerf_buf_addf(&b, "%05d", i % 100000), 0);
	assert_int_equal(b.len, 500000);
	assert_memory_equal(b.data + 5 * 12345, "12345", 5);
	kerf_buf_release(&b);
}

static void test_detach(void **state)
{
	struct kerf_buf b;
	size_t len;
	char *s;

	(void)state;
	kerf_buf_init(&b, 0);
	s = kerf_buf_detach(&b, &len);
	assert_non_null(s);
	assert_string_equal(s, "");
	assert_int_equal(len, 0);
	free(s);
	assert_int_equal(kerf_buf_add_str(&b, "hello"), 0);
	s = kerf_buf_detach(&b, &len);
	assert_string_equal(s, "hello");
	assert_int_equal(len, 5);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	free(s);
}

static void test_escaped(void **state)
{
	struct kerf_buf b;

	(void)state;
	kerf_buf_init(&b, 0);
	assert_int_equal(kerf_buf_add_escaped(&b, "a\x1b[31mb\n'\\\xff", 11, '\''),
			 0);
	assert_string_equal(kerf_buf_str(&b), "a\\x1b[31mb\\x0a\\'\\\\\\xff");
	kerf_buf_release(&b);
}

static void test_escape_into_message(void **state)
{
	char out[16];

	(void)state;
	assert_string_equal(kerf_escape(out, sizeof(out), "plain"), "plain");
	assert_string_equal(kerf_escape(out, sizeof(out), "a\nb"), "a\\x0ab");
	/* exactly fits: 15 characters */
	assert_string_equal(kerf_escape(out, sizeof(out), "123456789012345"),
			    "123456789012345");
	/* one more: shortened */
	assert_string_equal(kerf_escape(out, sizeof(out), "1234567890123456"),
			    "123456789012...");
	/* an escape is never cut in half */
	assert_string_equal(kerf_escape(out, sizeof(out), "12345678901\x1b\x1b"),
			    "12345678901...");
	assert_string_equal(kerf_escape(out, sizeof(out), NULL), "");
	assert_string_equal(kerf_escape_n(out, sizeof(out), "a\0b", 3), "a\\x00b");
	assert_string_equal(kerf_escape(out, 4, "abc"), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_append_and_str),
		cmocka_unit_test(test_bound_refuses_whole),
		cmocka_unit_test(test_large_growth),
		cmocka_unit_test(test_detach),
		cmocka_unit_test(test_escaped),
		cmocka_unit_test(test_escape_into_message),
		cmocka_unit_test(test_prom_label),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
