/*
 * test_testapi_select: label and field selectors as kube-apiserver parses
 * and applies them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "testapi/testapi_int.h"

static const struct kerf_ta_kind pods = {
	.group = "", .version = "v1", .plural = "pods", .kind = "Pod",
};

static bool sel(const char *label, const char *field, const json_t *obj)
{
	struct kerf_ta_sel *s;
	char msg[256];
	bool m;

	assert_int_equal(kerf_ta_sel_parse(label, field, &pods, &s, msg,
					   sizeof(msg)), 0);
	m = kerf_ta_sel_match(s, obj);
	kerf_ta_sel_free(s);
	return m;
}

static const char *bad(const char *label, const char *field)
{
	static char msg[256];
	struct kerf_ta_sel *s = NULL;

	assert_int_equal(kerf_ta_sel_parse(label, field, &pods, &s, msg,
					   sizeof(msg)), -1);
	assert_null(s);
	return msg;
}

static void test_labels(void **state)
{
	json_t *p = json_pack("{s{s{ssss}}}", "metadata", "labels",
			      "kerf.io/gang", "g2", "app", "train");

	(void)state;
	assert_true(sel("kerf.io/gang=g2", NULL, p));
	assert_true(sel("kerf.io/gang==g2", NULL, p));
	assert_false(sel("kerf.io/gang=g1", NULL, p));
	assert_true(sel("kerf.io/gang!=g1", NULL, p));
	assert_true(sel("kerf.io/gang in (g2),app", NULL, p));
	assert_true(sel("kerf.io/gang in (g1, g2)", NULL, p));
	assert_false(sel("kerf.io/gang notin (g2)", NULL, p));
	assert_true(sel("!missing", NULL, p));
	assert_false(sel("!app", NULL, p));
	assert_false(sel("missing", NULL, p));
	assert_true(sel("missing!=x", NULL, p));
	assert_true(sel("", NULL, p));
	json_decref(p);
}

static void test_label_errors(void **state)
{
	(void)state;
	assert_string_equal(bad("kerf.io/gang===", NULL),
			    "unable to parse requirement: found '=', expected: identifier");
	assert_non_null(strstr(bad("a in (b", NULL), "unable to parse"));
	assert_non_null(strstr(bad("a,,b", NULL), "unable to parse"));
	assert_non_null(strstr(bad("-bad-", NULL), "invalid label key"));
}

static void test_fields(void **state)
{
	json_t *p = json_pack("{s{ssss}s{ss}s{ss}}", "metadata", "name", "p1",
			      "namespace", "team-a", "spec", "schedulerName",
			      "kerf", "status", "phase", "Pending");

	(void)state;
	assert_true(sel(NULL, "spec.schedulerName=kerf,spec.nodeName=", p));
	assert_true(sel(NULL, "status.phase!=Succeeded,status.phase!=Failed", p));
	assert_false(sel(NULL, "metadata.name=p2", p));
	assert_true(sel(NULL, "metadata.namespace==team-a", p));
	assert_string_equal(bad(NULL, "spec.gpu=1"),
			    "field label not supported: spec.gpu");
	assert_non_null(strstr(bad(NULL, "nonsense"), "invalid selector"));
	json_decref(p);
}

static void test_label_selector_object(void **state)
{
	json_t *labels = json_pack("{ss}", "kerf.io/gang", "ge");
	json_t *s1 = json_pack("{s{ss}}", "matchLabels", "kerf.io/gang", "ge");
	json_t *s2 = json_pack("{s[{sssss[s]}]}", "matchExpressions", "key",
			       "kerf.io/gang", "operator", "NotIn", "values",
			       "ge");

	(void)state;
	assert_true(kerf_ta_labels_match(s1, labels));
	assert_false(kerf_ta_labels_match(s2, labels));
	assert_false(kerf_ta_labels_match(NULL, labels));
	json_decref(labels);
	json_decref(s1);
	json_decref(s2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_label_errors),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_label_selector_object),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
