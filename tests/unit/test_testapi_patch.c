/*
 * test_testapi_patch: JSON merge patch, JSON patch (with test), strategic
 * merge by merge key, and YAML apply bodies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testapi/testapi_int.h"

static void assert_json(const json_t *got, const char *want)
{
	json_t *w = json_loads(want, 0, NULL);

	assert_non_null(w);
	if (!json_equal(w, got)) {
		char *s = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);

		fail_msg("got %s, want %s", s, want);
	}
	json_decref(w);
}

static void test_merge_patch(void **state)
{
	json_t *doc = json_loads("{\"a\":{\"b\":1,\"c\":2},\"l\":[1,2]}", 0, NULL);
	json_t *p = json_loads("{\"a\":{\"b\":null,\"d\":3},\"l\":[3]}", 0, NULL);
	json_t *out = kerf_ta_merge_patch_apply(doc, p);

	(void)state;
	assert_json(out, "{\"a\":{\"c\":2,\"d\":3},\"l\":[3]}");
	json_decref(out);
	json_decref(p);
	json_decref(doc);
}

static void test_json_patch(void **state)
{
	json_t *doc = json_loads("{\"metadata\":{\"resourceVersion\":\"5\"},\"l\":[1,2]}", 0, NULL);
	json_t *ok = json_loads("[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"5\"},"
				"{\"op\":\"add\",\"path\":\"/l/-\",\"value\":3},"
				"{\"op\":\"replace\",\"path\":\"/l/0\",\"value\":0},"
				"{\"op\":\"remove\",\"path\":\"/l/1\"},"
				"{\"op\":\"copy\",\"from\":\"/l\",\"path\":\"/m\"},"
				"{\"op\":\"move\",\"from\":\"/m\",\"path\":\"/a~1b\"}]", 0, NULL);
	json_t *fails = json_loads("[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"1\"}]", 0, NULL);
	json_t *missing = json_loads("[{\"op\":\"replace\",\"path\":\"/x/y\",\"value\":1}]", 0, NULL);
	char msg[256];

	(void)state;
	assert_int_equal(kerf_ta_json_patch(doc, ok, msg, sizeof(msg)), 0);
	assert_json(doc, "{\"metadata\":{\"resourceVersion\":\"5\"},\"l\":[0,3],\"a/b\":[0,3]}");
	assert_int_equal(kerf_ta_json_patch(doc, fails, msg, sizeof(msg)), -2);
	assert_int_equal(kerf_ta_json_patch(doc, missing, msg, sizeof(msg)), -1);
	assert_int_equal(kerf_ta_json_patch(doc, doc, msg, sizeof(msg)), -1);
	json_decref(doc);
	json_decref(ok);
	json_decref(fails);
	json_decref(missing);
}

static void test_strategic_conditions(void **state)
{
	json_t *doc = json_loads("{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\"}],\"phase\":\"Pending\"},"
				 "\"spec\":{\"tolerations\":[{\"key\":\"a\"}]}}", 0, NULL);
	json_t *p = json_loads("{\"status\":{\"conditions\":[{\"type\":\"kerf.io/GangScheduled\",\"status\":\"False\"},"
			       "{\"type\":\"PodScheduled\",\"reason\":\"R\"}]},\"spec\":{\"tolerations\":[{\"key\":\"b\"}]}}", 0, NULL);

	(void)state;
	assert_int_equal(kerf_ta_strategic_merge(doc, p), 0);
	/* merged by type, patch items first; other lists replaced */
	assert_json(doc, "{\"status\":{\"conditions\":[{\"type\":\"kerf.io/GangScheduled\",\"status\":\"False\"},"
			 "{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"R\"}],\"phase\":\"Pending\"},"
			 "\"spec\":{\"tolerations\":[{\"key\":\"b\"}]}}");
	json_decref(p);
	p = json_loads("{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"$patch\":\"delete\"}]}}", 0, NULL);
	assert_int_equal(kerf_ta_strategic_merge(doc, p), 0);
	assert_int_equal(json_array_size(kerf_ta_path(doc, "status.conditions")), 1);
	json_decref(p);
	json_decref(doc);
}

static void test_yaml_body(void **state)
{
	const char *y = "apiVersion: v1\nkind: Pod\nstatus:\n  conditions:\n  - type: PodScheduled\n"
			"    status: \"False\"\n    count: 3\n    ok: true\n    none: null\n";
	char msg[256];
	json_t *j = kerf_ta_yaml_to_json(y, strlen(y), msg, sizeof(msg));

	(void)state;
	assert_json(j, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"status\":{\"conditions\":[{\"type\":\"PodScheduled\","
		       "\"status\":\"False\",\"count\":3,\"ok\":true,\"none\":null}]}}");
	json_decref(j);
	j = kerf_ta_yaml_to_json("{\"a\": [1, 2]}", 13, msg, sizeof(msg));
	assert_json(j, "{\"a\":[1,2]}");
	json_decref(j);
	assert_null(kerf_ta_yaml_to_json("a: [", 4, msg, sizeof(msg)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_patch),
		cmocka_unit_test(test_json_patch),
		cmocka_unit_test(test_strategic_conditions),
		cmocka_unit_test(test_yaml_body),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
