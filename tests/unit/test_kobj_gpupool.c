/*
 * kobj/gpupool: a GPUPool decoded field by field (good pools, defaults,
 * every refusal with its path), Fixed MIG layouts checked against the
 * model's geometry, node selection, and the status written and read back.
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

#include "kobj/gpupool.h"

static json_t *load(const char *text)
{
	json_error_t je;
	json_t *o = json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY |
					     JSON_ALLOW_NUL, &je);

	if (!o)
		fail_msg("bad test JSON: %s: %s", je.text, text);
	return o;
}

static void decode_ok(const char *text, struct kerf_kobj_gpupool *p)
{
	struct kerf_err err = { 0 };
	json_t *o = load(text);
	int rc = kerf_kobj_gpupool_decode(o, p, &err);

	json_decref(o);
	if (rc != 0)
		fail_msg("decode failed: %s\n  for %s", err.msg, text);
}

static void decode_err(const char *text, const char *want)
{
	struct kerf_kobj_gpupool p;
	struct kerf_err err = { 0 };
	json_t *o = load(text);
	int rc = kerf_kobj_gpupool_decode(o, &p, &err);

	json_decref(o);
	if (rc != -KERF_EINVAL || strcmp(err.msg, want))
		fail_msg("for %s\n  got  %d '%s'\n  want '%s'", text, rc, err.msg, want);
}

#define SEL "\"nodeSelector\":{\"matchLabels\":{\"kerf.io/pool\":\"a100\"}}"
#define P(spec) "{\"metadata\":{\"name\":\"a100\"},\"spec\":{" spec "}}"

static void test_good(void **state)
{
	struct kerf_kobj_gpupool p;

	(void)state;
	decode_ok("{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"GPUPool\","
		  "\"metadata\":{\"name\":\"a100\",\"generation\":2},\"spec\":{"
		  "\"gpuModel\":\"A100-40GB\","
		  "\"nodeSelector\":{\"matchLabels\":{\"kerf.io/pool\":\"a100\",\"zone\":\"\"}},"
		  "\"mig\":{\"policy\":\"Fixed\",\"gpusPerNode\":4,"
		  "\"layout\":[\"3g.20gb\",\"2g.10gb\",\"1g.5gb\"]},"
		  "\"sharing\":[\"Whole\",\"MIG\",\"MPS\",\"TimeSlice\"]}}", &p);
	assert_string_equal(p.name, "a100");
	assert_int_equal(p.generation, 2);
	assert_string_equal(p.gpu_model, "A100-40GB");
	assert_int_equal(p.nr_match_labels, 2);
	assert_string_equal(p.match_labels[0].key, "kerf.io/pool");
	assert_string_equal(p.match_labels[0].value, "a100");
	assert_string_equal(p.match_labels[1].value, "");
	assert_int_equal(p.mig_policy, KERF_KOBJ_MIG_FIXED);
	assert_int_equal(p.mig_gpus_per_node, 4);
	assert_int_equal(p.nr_layout, 3);
	assert_string_equal(p.layout[2], "1g.5gb");
	assert_non_null(p.mig);
	assert_int_equal(p.sharing, KERF_KOBJ_SHARE_WHOLE | KERF_KOBJ_SHARE_MIG |
					    KERF_KOBJ_SHARE_MPS | KERF_KOBJ_SHARE_TIMESLICE);
	/* defaults: whole GPUs, no MIG */
	decode_ok(P("\"gpuModel\":\"L4\"," SEL), &p);
	assert_int_equal(p.mig_policy, KERF_KOBJ_MIG_NONE);
	assert_int_equal(p.mig_gpus_per_node, -1);
	assert_int_equal(p.sharing, KERF_KOBJ_SHARE_WHOLE);
	assert_null(p.mig);
	decode_ok(P("\"gpuModel\":\"H100-80GB\"," SEL ",\"mig\":{\"policy\":\"Dynamic\"},"
		    "\"sharing\":[\"MIG\"]"), &p);
	assert_int_equal(p.mig_policy, KERF_KOBJ_MIG_DYNAMIC);
	assert_int_equal(p.sharing, KERF_KOBJ_SHARE_MIG);
	decode_ok(P("\"gpuModel\":\"L4\"," SEL ",\"mig\":{}"), &p);
	assert_int_equal(p.mig_policy, KERF_KOBJ_MIG_NONE);
}

static void test_errors(void **state)
{
	char big[2048];
	size_t len;

	(void)state;
	decode_err("1", "GPUPool: must be an object, not 1");
	decode_err("{\"spec\":{}}", "metadata: is required");
	decode_err("{\"metadata\":{\"name\":\"cpu\"},\"spec\":{}}",
		   "metadata.name: 'cpu' is reserved for tenant quotas");
	decode_err("{\"metadata\":{\"name\":\"A\"},\"spec\":{}}",
		   "metadata.name: must be lower-case letters, digits, '.' and '-', starting and ending with a letter or digit, not 'A'");
	decode_err("{\"metadata\":{\"name\":\"a\",\"generation\":\"1\"},\"spec\":{}}",
		   "metadata.generation: must be an integer from 0 to 9223372036854775807, not '1'");
	decode_err("{\"metadata\":{\"name\":\"a\"}}", "spec: is required");
	decode_err(P(SEL), "spec.gpuModel: is required");
	decode_err(P("\"gpuModel\":7," SEL), "spec.gpuModel: must be a GPU model name, not 7");
	decode_err(P("\"gpuModel\":\"\"," SEL), "spec.gpuModel: must be 1 to 31 bytes long, not ''");
	decode_err(P("\"gpuModel\":\"H100 80GB\"," SEL),
		   "spec.gpuModel: must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit, not 'H100 80GB'");
	decode_err(P("\"gpuModel\":\"memory\"," SEL), "spec.gpuModel: cpu and memory are not GPU models");
	decode_err(P("\"gpuModel\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"," SEL),
		   "spec.gpuModel: must be 1 to 31 bytes long, not 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'");
	decode_err(P("\"gpuModel\":\"L4\""), "spec.nodeSelector: is required");
	decode_err(P("\"gpuModel\":\"L4\",\"nodeSelector\":{}"),
		   "spec.nodeSelector.matchLabels: is required");
	decode_err(P("\"gpuModel\":\"L4\",\"nodeSelector\":{\"matchLabels\":{}}"),
		   "spec.nodeSelector.matchLabels: must have 1 to 16 labels, not 0");
	decode_err(P("\"gpuModel\":\"L4\",\"nodeSelector\":{\"matchLabels\":{\"a/b/c\":\"x\"}}"),
		   "spec.nodeSelector.matchLabels.a/b/c: not a label key ([prefix/]name, the name 1 to 63 letters, digits, '-', '_' and '.')");
	decode_err(P("\"gpuModel\":\"L4\",\"nodeSelector\":{\"matchLabels\":{\"Kerf.io/x\":\"x\"}}"),
		   "spec.nodeSelector.matchLabels.Kerf.io/x: not a label key ([prefix/]name, the name 1 to 63 letters, digits, '-', '_' and '.')");
	decode_err(P("\"gpuModel\":\"L4\",\"nodeSelector\":{\"matchLabels\":{\"x\\u001b\":\"x\"}}"),
		   "spec.nodeSelector.matchLabels.x\\x1b: not a label key ([prefix/]name, the name 1 to 63 letters, digits, '-', '_' and '.')");
	decode_err(P("\"gpuModel\":\"L4\",\"nodeSelector\":{\"matchLabels\":{\"x\":\"-x\"}}"),
		   "spec.nodeSelector.matchLabels.x: must be a label value (at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit), not '-x'");
	decode_err(P("\"gpuModel\":\"L4\",\"nodeSelector\":{\"matchLabels\":{\"x\":1}}"),
		   "spec.nodeSelector.matchLabels.x: must be a label value (at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit), not 1");
	len = (size_t)snprintf(big, sizeof(big), "%s", P("\"gpuModel\":\"L4\",\"nodeSelector\":{\"matchLabels\":{"));
	len -= 2;  /* drop the closing braces P() added */
	for (int i = 0; i < 17; i++)
		len += (size_t)snprintf(big + len, sizeof(big) - len, "%s\"l%d\":\"v\"",
					i ? "," : "", i);
	snprintf(big + len, sizeof(big) - len, "}}}}");
	decode_err(big, "spec.nodeSelector.matchLabels: must have 1 to 16 labels, not 17");
#define M(x) P("\"gpuModel\":\"A100-40GB\"," SEL ",\"mig\":" x ",\"sharing\":[\"MIG\"]")
	decode_err(M("[]"), "spec.mig: must be an object, not an array");
	decode_err(M("{\"policy\":\"Static\"}"),
		   "spec.mig.policy: must be one of None, Fixed, Dynamic, not 'Static'");
	decode_err(M("{\"policy\":\"Dynamic\",\"gpusPerNode\":17}"),
		   "spec.mig.gpusPerNode: must be an integer from 0 to 16, not 17");
	decode_err(M("{\"policy\":\"Dynamic\",\"layout\":[\"1g.5gb\"]}"),
		   "spec.mig.layout: is refused unless policy is Fixed");
	decode_err(M("{\"policy\":\"Fixed\"}"), "spec.mig.layout: is required with policy Fixed");
	decode_err(M("{\"policy\":\"Fixed\",\"layout\":[]}"), "spec.mig.layout: must not be empty");
	decode_err(M("{\"policy\":\"Fixed\",\"layout\":\"1g.5gb\"}"),
		   "spec.mig.layout: must be a list, not '1g.5gb'");
	decode_err(M("{\"policy\":\"Fixed\",\"layout\":[\"1g.5gb\",\"1g.5gb\",\"1g.5gb\",\"1g.5gb\",\"1g.5gb\",\"1g.5gb\",\"1g.5gb\",\"1g.5gb\",\"1g.5gb\"]}"),
		   "spec.mig.layout: must have at most 8 entries, not 9");
	decode_err(M("{\"policy\":\"Fixed\",\"layout\":[1]}"), "spec.mig.layout[0]: must be a string, not 1");
	decode_err(M("{\"policy\":\"Fixed\",\"layout\":[\"3g.40gb\"]}"),
		   "spec.mig.layout[0]: '3g.40gb' is not a MIG profile of A100-40GB");
	decode_err(M("{\"policy\":\"Fixed\",\"layout\":[\"7g.40gb\",\"1g.5gb\"]}"),
		   "spec.mig.layout[1]: '1g.5gb' does not fit on the GPU beside the instances before it");
	decode_err(P("\"gpuModel\":\"L4\"," SEL ",\"mig\":{\"policy\":\"Dynamic\"},\"sharing\":[\"MIG\"]"),
		   "spec.mig.policy: GPU model 'L4' has no MIG table kerf knows (docs/mig.md)");
#undef M
	decode_err(P("\"gpuModel\":\"L4\"," SEL ",\"sharing\":\"Whole\""),
		   "spec.sharing: must be a list, not 'Whole'");
	decode_err(P("\"gpuModel\":\"L4\"," SEL ",\"sharing\":[]"), "spec.sharing: must not be empty");
	decode_err(P("\"gpuModel\":\"L4\"," SEL ",\"sharing\":[\"MPS\",\"mps\"]"),
		   "spec.sharing[1]: must be one of Whole, MIG, MPS, TimeSlice, not 'mps'");
	decode_err(P("\"gpuModel\":\"L4\"," SEL ",\"sharing\":[\"MPS\",\"MPS\"]"),
		   "spec.sharing[1]: 'MPS' is listed twice");
	decode_err(P("\"gpuModel\":\"L4\"," SEL ",\"sharing\":[\"MIG\"]"),
		   "spec.sharing: lists MIG if and only if mig.policy is Fixed or Dynamic");
	decode_err(P("\"gpuModel\":\"H100-80GB\"," SEL ",\"mig\":{\"policy\":\"Dynamic\"}"),
		   "spec.sharing: lists MIG if and only if mig.policy is Fixed or Dynamic");
}

static void test_selects(void **state)
{
	struct kerf_kobj_gpupool p;
	json_t *l;

	(void)state;
	decode_ok(P("\"gpuModel\":\"L4\",\"nodeSelector\":{\"matchLabels\":{\"kerf.io/pool\":\"a100\",\"zone\":\"z1\"}}"), &p);
	l = load("{\"kerf.io/pool\":\"a100\",\"zone\":\"z1\",\"other\":\"x\"}");
	assert_true(kerf_kobj_gpupool_selects(&p, l));
	json_decref(l);
	l = load("{\"kerf.io/pool\":\"a100\",\"zone\":\"z2\"}");
	assert_false(kerf_kobj_gpupool_selects(&p, l));
	json_decref(l);
	l = load("{\"kerf.io/pool\":\"a100\"}");
	assert_false(kerf_kobj_gpupool_selects(&p, l));
	json_decref(l);
	l = load("{\"kerf.io/pool\":\"a100\",\"zone\":1}");
	assert_false(kerf_kobj_gpupool_selects(&p, l));
	json_decref(l);
	assert_false(kerf_kobj_gpupool_selects(&p, NULL));
}

static void test_status(void **state)
{
	struct kerf_kobj_gpupool_status s = {
		.observed_generation = 3, .nr_conditions = 1, .nodes = 4,
		.gpus = 32, .mig_gpus = 8, .allocated_gpu_milli = 12250,
	}, back;
	struct kerf_err err = { 0 };
	json_t *o;
	char *text;

	(void)state;
	snprintf(s.conditions[0].type, sizeof(s.conditions[0].type), "Accepted");
	snprintf(s.conditions[0].status, sizeof(s.conditions[0].status), "False");
	snprintf(s.conditions[0].reason, sizeof(s.conditions[0].reason), "InvalidSpec");
	snprintf(s.conditions[0].message, sizeof(s.conditions[0].message), "spec.gpuModel: is required");
	o = kerf_kobj_gpupool_status_encode(&s);
	assert_non_null(o);
	text = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(text,
			    "{\"allocated\":\"12.25\",\"conditions\":[{\"message\":\"spec.gpuModel: is required\","
			    "\"observedGeneration\":0,\"reason\":\"InvalidSpec\",\"status\":\"False\",\"type\":\"Accepted\"}],"
			    "\"gpus\":32,\"migGPUs\":8,\"nodes\":4,\"observedGeneration\":3}");
	free(text);
	assert_int_equal(kerf_kobj_gpupool_status_decode(o, &back, &err), 0);
	json_decref(o);
	assert_int_equal(back.observed_generation, 3);
	assert_int_equal(back.nodes, 4);
	assert_int_equal(back.gpus, 32);
	assert_int_equal(back.mig_gpus, 8);
	assert_int_equal(back.allocated_gpu_milli, 12250);
	assert_int_equal(back.nr_conditions, 1);
	assert_string_equal(back.conditions[0].message, "spec.gpuModel: is required");
	assert_int_equal(kerf_kobj_gpupool_status_decode(NULL, &back, &err), 0);
	assert_int_equal(back.gpus, 0);
	o = load("{\"nodes\":-1}");
	assert_int_equal(kerf_kobj_gpupool_status_decode(o, &back, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "status.nodes: must be an integer from 0 to 2147483647, not -1");
	json_decref(o);
	kerf_err_clear(&err);
	o = load("{\"allocated\":\"lots\"}");
	assert_int_equal(kerf_kobj_gpupool_status_decode(o, &back, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "status.allocated: must be a quantity of GPUs (digits with a suffix such as 500m, 16Gi or 2e3), not 'lots'");
	json_decref(o);
	kerf_err_clear(&err);
	o = load("\"x\"");
	assert_int_equal(kerf_kobj_gpupool_status_decode(o, &back, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "status: must be an object, not 'x'");
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_selects),
		cmocka_unit_test(test_status),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
