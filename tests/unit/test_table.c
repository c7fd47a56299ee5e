/*
 * test_table: the printers of `kerf get` (src/cmd/table.c, yaml_out.c):
 * columns aligned to the widest cell three spaces apart, the last one not
 * padded, control bytes escaped and nothing else; durations exactly as
 * kubectl's HumanDuration prints them at every boundary; GPU milli as
 * GPUs; YAML whose strings read back as strings (numbers, booleans, null
 * and empty quoted) and whose numbers stay numbers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "cmd/api_client.h"
#include "cmd/table.h"

static char *print(const struct kerf_table *t)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(kerf_table_print(t, f), 0);
	fclose(f);
	return text;
}

static void test_columns(void **state)
{
	static const char *const head[] = { "NAME", "GPUS", "REASON", NULL };
	struct kerf_table t;
	char *text;

	(void)state;
	kerf_table_init(&t, head);
	kerf_table_row(&t, (const char *[]){ "a-long-name", "8", "QuotaExceeded" });
	kerf_table_row(&t, (const char *[]){ "b", "16", NULL });
	kerf_table_row(&t, (const char *[]){ "evil\x1b[31m", "1", "tab\there 'q' \"d\" \\" });
	text = print(&t);
	assert_string_equal(text,
			    "NAME           GPUS   REASON\n"
			    "a-long-name    8      QuotaExceeded\n"
			    "b              16     <none>\n"
			    "evil\\x1b[31m   1      tab\\x09here 'q' \"d\" \\\n");
	free(text);
	kerf_table_release(&t);
}

static void test_escape(void **state)
{
	char *e;

	(void)state;
	e = kerf_table_escape("caf\xc3\xa9 \x7f \xc2\x9b x");
	assert_string_equal(e, "caf\xc3\xa9 \\x7f \\xc2\x9b x");
	free(e);
}

static void test_yaml(void **state)
{
	json_t *j = json_loads("{\"kind\":\"X\",\"n\":8,\"r\":2.5,\"w\":12.0,\"t\":true,\"z\":null,"
			       "\"s\":[\"8\",\"true\",\"\",\"no\",\"-1\",\"2026-01-01T00:00:00Z\",\"a b\","
			       "\"L4 \\\"x\\\"\"],\"o\":{},\"e\":[]}", 0, NULL);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(j);
	assert_non_null(f);
	assert_int_equal(kerf_cli_yaml(j, f), 0);
	fclose(f);
	assert_string_equal(text,
			    "kind: X\n"
			    "'n': 8\n"     /* a YAML 1.1 boolean as a plain key */
			    "r: 2.5\n"
			    "w: 12.0\n"
			    "t: true\n"
			    "z: null\n"
			    "s:\n"
			    "- '8'\n"
			    "- 'true'\n"
			    "- ''\n"
			    "- 'no'\n"
			    "- '-1'\n"
			    "- '2026-01-01T00:00:00Z'\n"
			    "- a b\n"
			    "- L4 \"x\"\n"
			    "o: {}\n"
			    "e: []\n");
	free(text);
	json_decref(j);
}

static void test_output_names(void **state)
{
	enum kerf_cli_output o;

	(void)state;
	assert_int_equal(kerf_cli_output("t", "wide", &o), 0);
	assert_int_equal(o, KERF_OUT_WIDE);
	assert_int_equal(kerf_cli_output("t", "yaml", &o), 0);
	assert_int_equal(o, KERF_OUT_YAML);
	assert_int_equal(kerf_cli_output("t", "JSON", &o), 2);
	setenv("KERF_SERVER", "http://k:1", 1);
	assert_string_equal(kerf_cli_server(NULL), "http://k:1");
	assert_string_equal(kerf_cli_server("http://o:2"), "http://o:2");
	unsetenv("KERF_SERVER");
	assert_string_equal(kerf_cli_server(NULL), KERF_CLI_DEFAULT_SERVER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_columns),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_yaml),
		cmocka_unit_test(test_output_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
