/*
 * The windowed GPU utilisation the agent writes for idle reclamation
 * (src/agent/util.h): the mean over the window, old samples leaving it,
 * GPUs without samples left out, the annotation's grammar, and a write
 * only when a GPU moved by 5 points or more.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/util.h"

static void test_window(void **state)
{
	static struct kerf_util_window w;
	char text[256];

	(void)state;
	memset(&w, 0, sizeof(w));
	kerf_util_text(&w, text, sizeof(text));
	assert_string_equal(text, "");
	kerf_util_add(&w, 0, true, 40);
	kerf_util_add(&w, 0, true, 41);
	kerf_util_add(&w, 2, true, 250);        /* clamped */
	kerf_util_add(&w, 1, false, 99);        /* no sample */
	kerf_util_add(&w, 64, true, 5);         /* no such GPU */
	kerf_util_text(&w, text, sizeof(text));
	assert_string_equal(text, "0:41,2:100");   /* 40.5 rounds up */
	for (int i = 0; i < KERF_UTIL_SAMPLES; i++)
		kerf_util_add(&w, 0, true, 3);      /* the old samples leave */
	kerf_util_text(&w, text, sizeof(text));
	assert_string_equal(text, "0:3,2:100");
}

static void test_changed(void **state)
{
	(void)state;
	assert_true(kerf_util_changed(NULL, "0:40"));
	assert_false(kerf_util_changed(NULL, ""));
	assert_false(kerf_util_changed("0:40,1:10", "0:44,1:6"));
	assert_true(kerf_util_changed("0:40,1:10", "0:45,1:10"));
	assert_true(kerf_util_changed("0:40,1:10", "0:40"));
	assert_true(kerf_util_changed("0:40", "0:40,1:0"));
	assert_true(kerf_util_changed("garbage", "0:40"));
}

static void test_parse(void **state)
{
	static const char *const bad[] = { "0", "0:", ":1", "0:101", "64:1", "0:1,", "0:1,0:2",
					   "0:x", "0:-1", "0:1;1:2" };
	int8_t pct[KERF_UTIL_MAX_GPUS];

	(void)state;
	assert_int_equal(kerf_gpu_util_parse("0:40,7:0", pct, NULL), 0);
	assert_int_equal(pct[0], 40);
	assert_int_equal(pct[7], 0);
	assert_int_equal(pct[1], -1);
	assert_int_equal(kerf_gpu_util_parse("", pct, NULL), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		assert_int_equal(kerf_gpu_util_parse(bad[i], pct, NULL), -KERF_EPARSE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_changed),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
