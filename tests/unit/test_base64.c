/*
 * base64 (base/base64.h): the strict decoder (padding required, no stray
 * bits, line breaks skipped) and the encoder against RFC 4648's vectors,
 * and a round trip over every byte value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base64.h"
#include "base/err.h"

static void test_decode(void **state)
{
	char *out;
	size_t len;

	(void)state;
	assert_int_equal(kerf_base64_decode("aGk=", 4, &out, &len), 0);
	assert_int_equal(len, 2);
	assert_string_equal(out, "hi");
	free(out);
	assert_int_equal(kerf_base64_decode("aGVs\nbG8=\r\n", 11, &out, &len), 0);
	assert_string_equal(out, "hello");
	free(out);
	assert_int_equal(kerf_base64_decode("", 0, &out, &len), 0);
	assert_int_equal(len, 0);
	free(out);
	assert_int_equal(kerf_base64_decode("aGk", 3, &out, &len), -KERF_EPARSE);
	assert_int_equal(kerf_base64_decode("aGl=", 4, &out, &len), -KERF_EPARSE);   /* bits left */
	assert_int_equal(kerf_base64_decode("aG==", 4, &out, &len), -KERF_EPARSE);   /* bits left */
	assert_int_equal(kerf_base64_decode("a=Gk", 4, &out, &len), -KERF_EPARSE);
	assert_int_equal(kerf_base64_decode("a===", 4, &out, &len), -KERF_EPARSE);
	assert_int_equal(kerf_base64_decode("aG-k", 4, &out, &len), -KERF_EPARSE);
	assert_int_equal(kerf_base64_decode("aGk= ", 5, &out, &len), -KERF_EPARSE);
}

static void test_encode(void **state)
{
	/* RFC 4648 section 10 */
	static const char *const vec[][2] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" },
		{ "foobar", "Zm9vYmFy" },
	};
	char *out;
	size_t len;

	(void)state;
	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		assert_int_equal(kerf_base64_encode(vec[i][0], strlen(vec[i][0]), &out, &len), 0);
		assert_string_equal(out, vec[i][1]);
		assert_int_equal(len, strlen(vec[i][1]));
		free(out);
	}
	/* the last alphabet symbols */
	assert_int_equal(kerf_base64_encode("\xfb\xff\xbf", 3, &out, &len), 0);
	assert_string_equal(out, "+/+/");
	free(out);
}

static void test_round_trip(void **state)
{
	unsigned char in[256];
	char *enc, *dec;
	size_t enc_len, dec_len;

	(void)state;
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(255 - i);
	for (size_t n = 0; n <= sizeof(in); n += 37) {
		assert_int_equal(kerf_base64_encode(in, n, &enc, &enc_len), 0);
		assert_int_equal(enc_len, (n + 2) / 3 * 4);
		assert_int_equal(kerf_base64_decode(enc, enc_len, &dec, &dec_len), 0);
		assert_int_equal(dec_len, n);
		assert_memory_equal(dec, in, n);
		free(enc);
		free(dec);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
