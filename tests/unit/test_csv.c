/*
 * Unit tests for format/csv: rows split into fields, empty rows skipped with
 * line numbers kept, "\r\n" endings, and the rejections (quotes, NUL bytes,
 * rows over KERF_CSV_MAX_LINE, more than KERF_CSV_MAX_FIELDS fields), plus
 * kerf_csv_int on empty, non-digit, overflowing and out-of-range fields.
 * Every error message must start with "path:line".  A leading UTF-8 byte
 * order mark is skipped, a header naming a column twice is refused, and
 * paths and fields are escaped in messages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format/csv.h"

static void assert_prefix(const char *msg, const char *prefix)
{
	if (strncmp(msg, prefix, strlen(prefix)) != 0)
		fail_msg("message \"%s\" does not start with \"%s\"", msg,
			 prefix);
}

static struct kerf_csv *open_csv(const char *data, size_t len)
{
	struct kerf_csv *r = malloc(sizeof(*r));

	assert_non_null(r);
	kerf_csv_init(r, "t.csv", data, len);
	return r;
}

static struct kerf_csv *open_str(const char *data)
{
	return open_csv(data, strlen(data));
}

static void test_fields(void **state)
{
	struct kerf_csv *r = open_str("a,bb,,c\nx\n,\n");

	(void)state;
	assert_int_equal(kerf_csv_next(r, NULL), 1);
	assert_int_equal(r->line, 1);
	assert_int_equal(r->nr_fields, 4);
	assert_string_equal(r->fields[0], "a");
	assert_string_equal(r->fields[1], "bb");
	assert_string_equal(r->fields[2], "");
	assert_string_equal(r->fields[3], "c");
	assert_int_equal(kerf_csv_find(r, "bb"), 1);
	assert_int_equal(kerf_csv_find(r, ""), 2);
	assert_int_equal(kerf_csv_find(r, "b"), -1);
	assert_int_equal(kerf_csv_next(r, NULL), 1);
	assert_int_equal(r->nr_fields, 1);
	assert_string_equal(r->fields[0], "x");
	assert_int_equal(kerf_csv_next(r, NULL), 1);
	assert_int_equal(r->nr_fields, 2);
	assert_string_equal(r->fields[0], "");
	assert_string_equal(r->fields[1], "");
	assert_int_equal(kerf_csv_next(r, NULL), 0);
	assert_int_equal(kerf_csv_next(r, NULL), 0);
	free(r);
}

static void test_empty_rows_and_line_numbers(void **state)
{
	struct kerf_csv *r = open_str("\n\nh1,h2\n\r\n\nv1,v2");

	(void)state;
	assert_int_equal(kerf_csv_next(r, NULL), 1);
	assert_int_equal(r->line, 3);
	assert_string_equal(r->fields[1], "h2");
	/* last row without a newline */
	assert_int_equal(kerf_csv_next(r, NULL), 1);
	assert_int_equal(r->line, 6);
	assert_string_equal(r->fields[0], "v1");
	assert_string_equal(r->fields[1], "v2");
	assert_int_equal(kerf_csv_next(r, NULL), 0);
	free(r);

	r = open_str("");
	assert_int_equal(kerf_csv_next(r, NULL), 0);
	free(r);
}

static void test_crlf(void **state)
{
	struct kerf_csv *r = open_str("a,b\r\nc\r\nd,\r\n");

	(void)state;
	assert_int_equal(kerf_csv_next(r, NULL), 1);
	assert_int_equal(r->nr_fields, 2);
	assert_string_equal(r->fields[1], "b");
	assert_int_equal(kerf_csv_next(r, NULL), 1);
	assert_string_equal(r->fields[0], "c");
	assert_int_equal(kerf_csv_next(r, NULL), 1);
	assert_int_equal(r->line, 3);
	assert_int_equal(r->nr_fields, 2);
	assert_string_equal(r->fields[1], "");
	assert_int_equal(kerf_csv_next(r, NULL), 0);
	free(r);
}

static void test_quotes_rejected(void **state)
{
	struct kerf_csv *r = open_str("a,b\nc,\"d\"\n");
	struct kerf_err err = { 0 };

	(void)state;
	assert_int_equal(kerf_csv_next(r, &err), 1);
	assert_int_equal(kerf_csv_next(r, &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "t.csv:2: quoted fields are not supported");
	free(r);
}

static void test_nul_rejected(void **state)
{
	static const char data[] = "a,b\nc,d\0e\nf\n";
	struct kerf_csv *r = open_csv(data, sizeof(data) - 1);
	struct kerf_err err = { 0 };

	(void)state;
	assert_int_equal(kerf_csv_next(r, &err), 1);
	assert_int_equal(kerf_csv_next(r, &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "t.csv:2: NUL byte in row");
	free(r);
}

static void test_row_length(void **state)
{
	char *data = malloc(3 * KERF_CSV_MAX_LINE + 8);
	struct kerf_csv *r;
	struct kerf_err err = { 0 };
	size_t n = 0;

	(void)state;
	assert_non_null(data);
	/* Exactly the limit, then the limit with "\r\n", then one more. */
	memset(data, 'a', KERF_CSV_MAX_LINE);
	n = KERF_CSV_MAX_LINE;
	data[n++] = '\n';
	memset(data + n, 'b', KERF_CSV_MAX_LINE);
	n += KERF_CSV_MAX_LINE;
	data[n++] = '\r';
	data[n++] = '\n';
	memset(data + n, 'c', KERF_CSV_MAX_LINE + 1);
	n += KERF_CSV_MAX_LINE + 1;
	r = open_csv(data, n);
	assert_int_equal(kerf_csv_next(r, &err), 1);
	assert_int_equal(strlen(r->fields[0]), KERF_CSV_MAX_LINE);
	assert_int_equal(kerf_csv_next(r, &err), 1);
	assert_int_equal(strlen(r->fields[0]), KERF_CSV_MAX_LINE);
	assert_int_equal(r->fields[0][0], 'b');
	assert_int_equal(kerf_csv_next(r, &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "t.csv:3: row longer than 4096 bytes");
	free(r);
	free(data);
}

static void test_field_count(void **state)
{
	char data[2 * KERF_CSV_MAX_FIELDS + 2 * KERF_CSV_MAX_FIELDS + 8];
	struct kerf_csv *r;
	struct kerf_err err = { 0 };
	size_t n = 0;

	(void)state;
	/* 32 fields, then 33. */
	for (int i = 0; i < KERF_CSV_MAX_FIELDS; i++) {
		data[n++] = 'x';
		data[n++] = i + 1 < KERF_CSV_MAX_FIELDS ? ',' : '\n';
	}
	for (int i = 0; i <= KERF_CSV_MAX_FIELDS; i++) {
		data[n++] = 'y';
		data[n++] = i < KERF_CSV_MAX_FIELDS ? ',' : '\n';
	}
	r = open_csv(data, n);
	assert_int_equal(kerf_csv_next(r, &err), 1);
	assert_int_equal(r->nr_fields, KERF_CSV_MAX_FIELDS);
	assert_string_equal(r->fields[KERF_CSV_MAX_FIELDS - 1], "x");
	assert_int_equal(kerf_csv_next(r, &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "t.csv:2: more than 32 fields");
	free(r);
}

/* Parse field i of the single row text with kerf_csv_int. */
static int parse_int(const char *text, int i, int64_t min, int64_t max,
		     int64_t *out, struct kerf_err *err)
{
	struct kerf_csv *r = open_str(text);
	int rc;

	assert_int_equal(kerf_csv_next(r, NULL), 1);
	assert_int_equal(kerf_csv_next(r, NULL), 1);
	rc = kerf_csv_int(r, i, "cpu", min, max, out, err);
	free(r);
	return rc;
}

static void expect_int(const char *field, int64_t min, int64_t max,
		       int64_t want)
{
	char text[64] = "header\n";
	int64_t v = -12345;

	strcat(text, field);
	assert_int_equal(parse_int(text, 0, min, max, &v, NULL), 0);
	assert_int_equal(v, want);
}

static void expect_bad(const char *field, int64_t min, int64_t max, int code,
		       const char *msg)
{
	char text[64] = "header\n";
	int64_t v = -12345;
	struct kerf_err err = { 0 };

	strcat(text, field);
	assert_int_equal(parse_int(text, 0, min, max, &v, &err), code);
	assert_string_equal(err.msg, msg);
	assert_prefix(err.msg, "t.csv:2: ");
	assert_int_equal(v, -12345);
}

static void test_int_values(void **state)
{
	(void)state;
	expect_int("0", 0, 10, 0);
	expect_int("10", 0, 10, 10);
	expect_int("007", 0, 10, 7);
	expect_int("-5", -10, 10, -5);
	expect_int("-0", 0, 0, 0);
	expect_int("9223372036854775807", 0, INT64_MAX, INT64_MAX);
	expect_int("-9223372036854775807", INT64_MIN, 0, -INT64_MAX);
}

static void test_int_rejections(void **state)
{
	(void)state;
	expect_bad(",1", 0, 10, -KERF_EPARSE, "t.csv:2: column 'cpu' is empty");
	expect_bad("-", 0, 10, -KERF_EPARSE, "t.csv:2: column 'cpu': '-' is not an integer");
	expect_bad("12a", 0, 100, -KERF_EPARSE,
		   "t.csv:2: column 'cpu': '12a' is not an integer");
	expect_bad("+5", 0, 100, -KERF_EPARSE,
		   "t.csv:2: column 'cpu': '+5' is not an integer");
	expect_bad(" 5", 0, 100, -KERF_EPARSE,
		   "t.csv:2: column 'cpu': ' 5' is not an integer");
	expect_bad("5 ", 0, 100, -KERF_EPARSE,
		   "t.csv:2: column 'cpu': '5 ' is not an integer");
	expect_bad("1.5", 0, 100, -KERF_EPARSE,
		   "t.csv:2: column 'cpu': '1.5' is not an integer");
	expect_bad("--1", -10, 100, -KERF_EPARSE,
		   "t.csv:2: column 'cpu': '--1' is not an integer");
	expect_bad("9223372036854775808", 0, INT64_MAX, -KERF_ERANGE,
		   "t.csv:2: column 'cpu': '9223372036854775808' is too large");
	expect_bad("99999999999999999999999", 0, INT64_MAX, -KERF_ERANGE,
		   "t.csv:2: column 'cpu': '99999999999999999999999' is too large");
	expect_bad("11", 0, 10, -KERF_ERANGE,
		   "t.csv:2: column 'cpu': 11 is outside 0..10");
	expect_bad("-1", 0, 10, -KERF_ERANGE,
		   "t.csv:2: column 'cpu': -1 is outside 0..10");
	expect_bad("4", 5, 9, -KERF_ERANGE,
		   "t.csv:2: column 'cpu': 4 is outside 5..9");
}

static void test_int_column_index(void **state)
{
	int64_t v = 0;
	struct kerf_err err = { 0 };

	(void)state;
	assert_int_equal(parse_int("a,b\n1,22\n", 1, 0, 100, &v, NULL), 0);
	assert_int_equal(v, 22);
	assert_int_equal(parse_int("a,b\n1,22\n", 2, 0, 100, &v, &err),
			 -KERF_EPARSE);
	assert_string_equal(err.msg, "t.csv:2: column 'cpu' is missing");
	kerf_err_clear(&err);
	assert_int_equal(parse_int("a,b\n1,22\n", -1, 0, 100, &v, &err),
			 -KERF_EPARSE);
	assert_string_equal(err.msg, "t.csv:2: column 'cpu' is missing");
}

static void test_bom(void **state)
{
	struct kerf_csv *r = open_str("\xef\xbb\xbfsn,gpu\nn0,1\n");

	(void)state;
	assert_int_equal(kerf_csv_header(r, NULL), 1);
	assert_int_equal(r->line, 1);
	assert_int_equal(kerf_csv_find(r, "sn"), 0);
	assert_int_equal(kerf_csv_next(r, NULL), 1);
	assert_string_equal(r->fields[0], "n0");
	free(r);
	/* only at the very start: a BOM later is part of the field */
	r = open_str("a\n\xef\xbb\xbf" "b\n");
	assert_int_equal(kerf_csv_next(r, NULL), 1);
	assert_int_equal(kerf_csv_next(r, NULL), 1);
	assert_string_equal(r->fields[0], "\xef\xbb\xbf" "b");
	free(r);
	/* a BOM alone is an empty file */
	r = open_str("\xef\xbb\xbf");
	assert_int_equal(kerf_csv_header(r, NULL), 0);
	free(r);
}

static void test_header_duplicates(void **state)
{
	struct kerf_csv *r = open_str("\n\na,b,c,b\n");
	struct kerf_err err = { 0 };

	(void)state;
	assert_int_equal(kerf_csv_header(r, &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "t.csv:3: column 'b' is named twice (fields 2 and 4)");
	free(r);
	/* the name quoted escaped */
	kerf_err_clear(&err);
	r = open_str("\x1b[2J,x,\x1b[2J\n");
	assert_int_equal(kerf_csv_header(r, &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "t.csv:1: column '\\x1b[2J' is named twice (fields 1 and 3)");
	free(r);
	/* distinct names are fine; so is no header at all */
	r = open_str("a,b,c\n");
	assert_int_equal(kerf_csv_header(r, NULL), 1);
	free(r);
	r = open_str("");
	assert_int_equal(kerf_csv_header(r, NULL), 0);
	free(r);
}

static void test_path_escaped(void **state)
{
	struct kerf_csv *r = malloc(sizeof(*r));
	struct kerf_err err = { 0 };

	(void)state;
	assert_non_null(r);
	kerf_csv_init(r, "a\x1b]0;t\x07\nb.csv", "\"\n", 2);
	assert_int_equal(kerf_csv_next(r, &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "a\\x1b]0;t\\x07\\x0ab.csv:1: quoted fields are not supported");
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_empty_rows_and_line_numbers),
		cmocka_unit_test(test_crlf),
		cmocka_unit_test(test_quotes_rejected),
		cmocka_unit_test(test_nul_rejected),
		cmocka_unit_test(test_row_length),
		cmocka_unit_test(test_field_count),
		cmocka_unit_test(test_int_values),
		cmocka_unit_test(test_int_rejections),
		cmocka_unit_test(test_int_column_index),
		cmocka_unit_test(test_bom),
		cmocka_unit_test(test_header_duplicates),
		cmocka_unit_test(test_path_escaped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
