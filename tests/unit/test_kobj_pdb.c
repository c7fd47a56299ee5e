/*
 * kobj/pdb and kobj/priorityclass: PodDisruptionBudgets as the API server
 * sends them (matchLabels, matchExpressions, a status computed or not)
 * decoded and matched against pods' labels the way the eviction does;
 * errors naming the field; PriorityClasses' value and preemption policy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kobj/pdb.h"
#include "kobj/priorityclass.h"

static int decode(const char *text, struct kerf_kpdb *b, struct kerf_err *err)
{
	json_error_t je;
	json_t *o = json_loads(text, 0, &je);
	int rc;

	assert_non_null(o);
	rc = kerf_kpdb_decode(o, b, err);
	json_decref(o);
	return rc;
}

/* labels "k=v" ... as a pod carries them */
static size_t labels(uint64_t *out, const char *const *kv, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		char key[64];
		const char *eq = strchr(kv[i], '=');

		memcpy(key, kv[i], (size_t)(eq - kv[i]));
		key[eq - kv[i]] = '\0';
		out[2 * i] = kerf_label_hash(key, NULL);
		out[2 * i + 1] = kerf_label_hash(key, eq + 1);
	}
	return nr;
}

static bool selects(const struct kerf_kpdb *b, const char *const *kv, size_t nr)
{
	uint64_t l[16];

	return kerf_kpdb_selects(b, l, labels(l, kv, nr));
}

static void test_match_labels_and_expressions(void **state)
{
	struct kerf_kpdb b;
	struct kerf_err err = { 0 };

	(void)state;
	assert_int_equal(decode("{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"trainer\",\"generation\":2},"
				"\"spec\":{\"minAvailable\":1,\"selector\":{\"matchLabels\":{\"app\":\"trainer\"},"
				"\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"In\",\"values\":[\"gold\",\"silver\"]},"
				"{\"key\":\"canary\",\"operator\":\"DoesNotExist\"},"
				"{\"key\":\"zone\",\"operator\":\"NotIn\",\"values\":[\"b\"]},"
				"{\"key\":\"owner\",\"operator\":\"Exists\"}]}},"
				"\"status\":{\"observedGeneration\":2,\"disruptionsAllowed\":0}}", &b, &err), 0);
	assert_string_equal(b.ns, "team-a");
	assert_string_equal(b.name, "trainer");
	assert_int_equal(b.nr_terms, 5);
	assert_true(b.observed);
	assert_true(kerf_kpdb_blocks(&b));
	assert_true(selects(&b, (const char *[]){ "app=trainer", "tier=gold", "owner=x" }, 3));
	assert_true(selects(&b, (const char *[]){ "owner=", "tier=silver", "app=trainer", "zone=a" }, 4));
	assert_false(selects(&b, (const char *[]){ "app=trainer", "tier=bronze", "owner=x" }, 3));
	assert_false(selects(&b, (const char *[]){ "app=serve", "tier=gold", "owner=x" }, 3));
	assert_false(selects(&b, (const char *[]){ "app=trainer", "tier=gold", "owner=x", "canary=1" }, 4));
	assert_false(selects(&b, (const char *[]){ "app=trainer", "tier=gold", "owner=x", "zone=b" }, 4));
	assert_false(selects(&b, (const char *[]){ "app=trainer", "tier=gold" }, 2));
	/* a key is not a value: label trainer= is not app=trainer */
	assert_false(selects(&b, (const char *[]){ "trainer=app", "tier=gold", "owner=x" }, 3));
	kerf_kpdb_release(&b);
}

static void test_selector_null_or_empty(void **state)
{
	struct kerf_kpdb b;
	struct kerf_err err = { 0 };

	(void)state;
	/* policy/v1: a null selector selects nothing ... */
	assert_int_equal(decode("{\"metadata\":{\"namespace\":\"a\",\"name\":\"n\"},\"spec\":{\"maxUnavailable\":0}}",
				&b, &err), 0);
	assert_false(b.has_selector);
	assert_false(selects(&b, (const char *[]){ "app=x" }, 1));
	assert_false(kerf_kpdb_selects(&b, NULL, 0));
	kerf_kpdb_release(&b);
	/* ... an empty one every pod */
	assert_int_equal(decode("{\"metadata\":{\"namespace\":\"a\",\"name\":\"n\"},\"spec\":{\"selector\":{}}}",
				&b, &err), 0);
	assert_true(b.has_selector);
	assert_true(selects(&b, (const char *[]){ "app=x" }, 1));
	assert_true(kerf_kpdb_selects(&b, NULL, 0));
	kerf_kpdb_release(&b);
}

static void test_status(void **state)
{
	struct kerf_kpdb b;
	struct kerf_err err = { 0 };

	(void)state;
	/* not computed yet: the eviction refuses, so it blocks */
	assert_int_equal(decode("{\"metadata\":{\"namespace\":\"a\",\"name\":\"n\",\"generation\":1},\"spec\":{\"selector\":{}}}",
				&b, &err), 0);
	assert_false(b.observed);
	assert_true(kerf_kpdb_blocks(&b));
	kerf_kpdb_release(&b);
	/* computed for an older generation: still being processed */
	assert_int_equal(decode("{\"metadata\":{\"namespace\":\"a\",\"name\":\"n\",\"generation\":3},\"spec\":{\"selector\":{}},"
				"\"status\":{\"observedGeneration\":2,\"disruptionsAllowed\":4}}", &b, &err), 0);
	assert_false(b.observed);
	assert_true(kerf_kpdb_blocks(&b));
	kerf_kpdb_release(&b);
	assert_int_equal(decode("{\"metadata\":{\"namespace\":\"a\",\"name\":\"n\",\"generation\":3},\"spec\":{\"selector\":{}},"
				"\"status\":{\"observedGeneration\":3,\"disruptionsAllowed\":1}}", &b, &err), 0);
	assert_int_equal(b.disruptions_allowed, 1);
	assert_false(kerf_kpdb_blocks(&b));
	kerf_kpdb_release(&b);
}

static void test_errors_name_the_field(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "[]", "PodDisruptionBudget: expected an object, got an array" },
		{ "{\"metadata\":{\"name\":\"n\"}}", "metadata.namespace: missing" },
		{ "{\"metadata\":{\"namespace\":\"a\"}}", "metadata.name: missing" },
		{ "{\"metadata\":{\"namespace\":\"a\",\"name\":\"n\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":1}}}}",
		  "spec.selector.matchLabels.app: expected a string, got an integer" },
		{ "{\"metadata\":{\"namespace\":\"a\",\"name\":\"n\"},\"spec\":{\"selector\":{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"Near\",\"values\":[\"x\"]}]}}}",
		  "spec.selector.matchExpressions[0].operator 'Near': expected In, NotIn, Exists or DoesNotExist" },
		{ "{\"metadata\":{\"namespace\":\"a\",\"name\":\"n\"},\"spec\":{\"selector\":{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"In\"}]}}}",
		  "spec.selector.matchExpressions[0].values: In needs at least one value" },
		{ "{\"metadata\":{\"namespace\":\"a\",\"name\":\"n\"},\"spec\":{\"selector\":{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"Exists\",\"values\":[\"x\"]}]}}}",
		  "spec.selector.matchExpressions[0].values: Exists takes no values" },
		{ "{\"metadata\":{\"namespace\":\"a\",\"name\":\"n\"},\"spec\":{\"selector\":{\"matchExpressions\":[{\"operator\":\"Exists\"}]}}}",
		  "spec.selector.matchExpressions[0].key: missing" },
		{ "{\"metadata\":{\"namespace\":\"a\",\"name\":\"n\"},\"status\":{\"disruptionsAllowed\":\"1\"}}",
		  "status.disruptionsAllowed: expected an integer, got a string" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kerf_kpdb b;
		struct kerf_err err = { 0 };

		assert_true(decode(cases[i].text, &b, &err) < 0);
		assert_string_equal(err.msg, cases[i].msg);
	}
}

static void test_priority_class(void **state)
{
	struct kerf_kpc c;
	struct kerf_err err = { 0 };
	json_t *o;

	(void)state;
	o = json_loads("{\"metadata\":{\"name\":\"batch-never\"},\"value\":50,\"preemptionPolicy\":\"Never\"}", 0, NULL);
	assert_int_equal(kerf_kpc_decode(o, &c, &err), 0);
	json_decref(o);
	assert_string_equal(c.name, "batch-never");
	assert_int_equal(c.value, 50);
	assert_int_equal(c.preemption, KERF_PREEMPT_NEVER);
	/* the API server's default */
	o = json_loads("{\"metadata\":{\"name\":\"high\"},\"value\":1000,\"globalDefault\":true}", 0, NULL);
	assert_int_equal(kerf_kpc_decode(o, &c, &err), 0);
	json_decref(o);
	assert_int_equal(c.preemption, KERF_PREEMPT_LOWER_PRIORITY);
	assert_true(c.global_default);
	o = json_loads("{\"metadata\":{\"name\":\"x\"},\"value\":1,\"preemptionPolicy\":\"Sometimes\"}", 0, NULL);
	assert_true(kerf_kpc_decode(o, &c, &err) < 0);
	json_decref(o);
	assert_string_equal(err.msg, "preemptionPolicy 'Sometimes': expected PreemptLowerPriority or Never");
	err = (struct kerf_err){ 0 };
	o = json_loads("{\"metadata\":{\"name\":\"x\"}}", 0, NULL);
	assert_true(kerf_kpc_decode(o, &c, &err) < 0);
	json_decref(o);
	assert_string_equal(err.msg, "value: missing");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_labels_and_expressions),
		cmocka_unit_test(test_selector_null_or_empty),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_errors_name_the_field),
		cmocka_unit_test(test_priority_class),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
