/*
 * grpc_frame (grpc/frame.h): the length-prefixed message reader fed whole,
 * byte by byte and in odd pieces; its bounds (length over the limit,
 * compressed flag) refused with a message; the callback's error stopping
 * the feed; status names and the kerf error mapping; grpc-message
 * percent-encoding.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "grpc/frame.h"

struct got {
	int n;
	size_t len[8];
	uint8_t bytes[8][64];
	int fail_at;
};

static int collect(void *arg, const uint8_t *msg, size_t len)
{
	struct got *g = arg;
	if (g->fail_at && g->n + 1 == g->fail_at)
		return -KERF_EINVAL;
	assert_true(g->n < 8 && len <= 64);
	g->len[g->n] = len;
	memcpy(g->bytes[g->n], msg, len);
	g->n++;
	return 0;
}

/* Two messages ("abc" and "") and a third "xy", as one buffer. */
static size_t three(uint8_t *buf)
{
	size_t n = 0;
	kerf_grpc_prefix_write(buf + n, 3);
	n += 5;
	memcpy(buf + n, "abc", 3);
	n += 3;
	kerf_grpc_prefix_write(buf + n, 0);
	n += 5;
	kerf_grpc_prefix_write(buf + n, 2);
	n += 5;
	memcpy(buf + n, "xy", 2);
	return n + 2;
}

static void check_three(const struct got *g)
{
	assert_int_equal(g->n, 3);
	assert_int_equal(g->len[0], 3);
	assert_memory_equal(g->bytes[0], "abc", 3);
	assert_int_equal(g->len[1], 0);
	assert_int_equal(g->len[2], 2);
	assert_memory_equal(g->bytes[2], "xy", 2);
}

static void test_whole_and_pieces(void **state)
{
	uint8_t buf[64];
	size_t len = three(buf);
	(void)state;

	for (size_t step = 1; step <= len; step++) {
		struct kerf_grpc_reader r;
		struct got g = { 0 };
		struct kerf_err err = { 0 };
		kerf_grpc_reader_init(&r, 16);
		for (size_t off = 0; off < len; off += step) {
			size_t take = len - off < step ? len - off : step;
			assert_int_equal(kerf_grpc_reader_feed(&r, buf + off, take, collect, &g, &err), 0);
		}
		assert_true(kerf_grpc_reader_idle(&r));
		check_three(&g);
		kerf_grpc_reader_free(&r);
	}
}

static void test_partial_not_idle(void **state)
{
	uint8_t buf[64];
	struct kerf_grpc_reader r;
	struct got g = { 0 };
	struct kerf_err err = { 0 };
	(void)state;

	size_t len = three(buf);
	kerf_grpc_reader_init(&r, 16);
	assert_int_equal(kerf_grpc_reader_feed(&r, buf, len - 1, collect, &g, &err), 0);
	assert_false(kerf_grpc_reader_idle(&r));
	assert_int_equal(g.n, 2);
	kerf_grpc_reader_free(&r); /* frees the half message: ASan checks */
}

static void test_over_limit(void **state)
{
	uint8_t buf[5];
	struct kerf_grpc_reader r;
	struct got g = { 0 };
	struct kerf_err err = { 0 };
	(void)state;

	kerf_grpc_prefix_write(buf, 17);
	kerf_grpc_reader_init(&r, 16);
	assert_int_equal(kerf_grpc_reader_feed(&r, buf, 5, collect, &g, &err), -KERF_ELIMIT);
	assert_non_null(strstr(err.msg, "length 17 over the limit of 16 bytes"));
	/* A failed reader stays failed. */
	assert_int_equal(kerf_grpc_reader_feed(&r, buf, 1, collect, &g, NULL), -KERF_EINVAL);
	assert_false(kerf_grpc_reader_idle(&r));
	kerf_grpc_reader_free(&r);

	/* 0xffffffff: refused before any allocation. */
	memset(buf + 1, 0xff, 4);
	buf[0] = 0;
	kerf_grpc_reader_init(&r, KERF_GRPC_MAX_MSG_BYTES);
	assert_int_equal(kerf_grpc_reader_feed(&r, buf, 5, collect, &g, NULL), -KERF_ELIMIT);
	kerf_grpc_reader_free(&r);
}

static void test_compressed(void **state)
{
	uint8_t buf[6];
	struct kerf_grpc_reader r;
	struct got g = { 0 };
	struct kerf_err err = { 0 };
	(void)state;

	kerf_grpc_prefix_write(buf, 1);
	buf[0] = 1;
	buf[5] = 'a';
	kerf_grpc_reader_init(&r, 16);
	assert_int_equal(kerf_grpc_reader_feed(&r, buf, 6, collect, &g, &err), -KERF_EPARSE);
	assert_non_null(strstr(err.msg, "compressed flag 1"));
	assert_int_equal(g.n, 0);
	kerf_grpc_reader_free(&r);
}

static void test_callback_error(void **state)
{
	uint8_t buf[64];
	struct kerf_grpc_reader r;
	struct got g = { .fail_at = 2 };
	(void)state;

	size_t len = three(buf);
	kerf_grpc_reader_init(&r, 16);
	assert_int_equal(kerf_grpc_reader_feed(&r, buf, len, collect, &g, NULL), -KERF_EINVAL);
	assert_int_equal(g.n, 1);
	kerf_grpc_reader_free(&r);
}

static void test_status(void **state)
{
	(void)state;
	assert_string_equal(kerf_grpc_status_name(0), "OK");
	assert_string_equal(kerf_grpc_status_name(3), "INVALID_ARGUMENT");
	assert_string_equal(kerf_grpc_status_name(16), "UNAUTHENTICATED");
	assert_string_equal(kerf_grpc_status_name(17), "UNKNOWN");
	assert_string_equal(kerf_grpc_status_name(-1), "UNKNOWN");
	assert_int_equal(kerf_grpc_status_from_err(0), KERF_GRPC_OK);
	assert_int_equal(kerf_grpc_status_from_err(-KERF_EPARSE), KERF_GRPC_INVALID_ARGUMENT);
	assert_int_equal(kerf_grpc_status_from_err(-KERF_ENOTFOUND), KERF_GRPC_NOT_FOUND);
	assert_int_equal(kerf_grpc_status_from_err(-KERF_ELIMIT), KERF_GRPC_RESOURCE_EXHAUSTED);
	assert_int_equal(kerf_grpc_status_from_err(-KERF_EEXIST), KERF_GRPC_ALREADY_EXISTS);
	assert_int_equal(kerf_grpc_status_from_err(-KERF_EHTTP), KERF_GRPC_INTERNAL);
}

static void test_message_encode(void **state)
{
	char out[16];
	(void)state;

	assert_int_equal(kerf_grpc_message_encode(out, sizeof(out), "a b%c\n"), 10);
	assert_string_equal(out, "a b%25c%0A");
	/* Truncation keeps whole escapes. */
	assert_int_equal(kerf_grpc_message_encode(out, 6, "abcd\xff"), 4);
	assert_string_equal(out, "abcd");
	assert_int_equal(kerf_grpc_message_encode(out, 1, "abc"), 0);
	assert_string_equal(out, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_and_pieces),
		cmocka_unit_test(test_partial_not_idle),
		cmocka_unit_test(test_over_limit),
		cmocka_unit_test(test_compressed),
		cmocka_unit_test(test_callback_error),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_message_encode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
