/*
 * The agent's health marks and Node patches (src/agent/marks.h,
 * node_doc.h): the annotations' grammar (strict, errors naming the
 * annotation), verdicts to marks (only ever added; an instance only when
 * the inventory names it), what a restart reads back, and the patches:
 * nothing when the Node already says it, the resourceVersion always, the
 * taint and cordon of a node mark, the condition's transition time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/marks.h"
#include "agent/node_doc.h"

static void test_parse_good(void **state)
{
	struct kerf_agent_marks m;
	struct kerf_err err = { 0 };

	(void)state;
	assert_int_equal(kerf_agent_marks_parse("1,3", "0:3g.40gb@4,2:1g.10gb@6", &m, &err), 0);
	assert_int_equal(m.gpus_down, 0xa);
	assert_int_equal(m.nr_mig, 2);
	assert_string_equal(m.mig[1].profile, "1g.10gb");
	assert_int_equal(m.mig[1].gpu, 2);
	assert_int_equal(m.mig[1].start, 6);
	assert_true(kerf_agent_marks_instance_down(&m, 0, "3g.40gb", 4));
	assert_false(kerf_agent_marks_instance_down(&m, 0, "3g.40gb", 0));
	assert_true(kerf_agent_marks_instance_down(&m, 3, NULL, 0));
	assert_int_equal(kerf_agent_marks_parse("", "", &m, &err), 0);
	assert_int_equal(m.gpus_down, 0);
	assert_int_equal(kerf_agent_marks_parse(NULL, NULL, &m, &err), 0);
}

static void test_parse_bad(void **state)
{
	static const char *const gpus[] = { "1,", ",1", "1,,2", "a", "-1", "64", "1 ", "0x1",
					    "99999999999999999999" };
	static const char *const migs[] = { "3g.40gb@4", "0:@4", "0:3g.40gb", "0:3g.40gb@8",
					    "x:3g.40gb@0", "0:3g.40gb@0,", "64:1g.10gb@0",
					    "0:1g.10gb@-1" };
	struct kerf_agent_marks m;

	(void)state;
	for (size_t i = 0; i < sizeof(gpus) / sizeof(*gpus); i++) {
		struct kerf_err err = { 0 };

		assert_int_equal(kerf_agent_marks_parse(gpus[i], NULL, &m, &err), -KERF_EPARSE);
		assert_non_null(strstr(err.msg, "kerf.io/unhealthy-gpus"));
	}
	for (size_t i = 0; i < sizeof(migs) / sizeof(*migs); i++) {
		struct kerf_err err = { 0 };

		assert_int_equal(kerf_agent_marks_parse(NULL, migs[i], &m, &err), -KERF_EPARSE);
		assert_non_null(strstr(err.msg, "kerf.io/unhealthy-mig"));
	}
}

static struct kerf_gpu_inventory inv_with_mig(struct kerf_gpu *g)
{
	struct kerf_gpu_inventory inv = { .state = KERF_GPU_INVENTORY_READ, .gpus = g,
					  .nr_gpus = 2 };

	memset(g, 0, 2 * sizeof(*g));
	g[0].index = 0;
	snprintf(g[0].name, sizeof(g[0].name), "NVIDIA H100 80GB HBM3");
	g[0].model = "H100-80GB";
	g[0].mem_mib = 81559;
	g[0].mig_current = 0;
	g[1].index = 1;
	snprintf(g[1].name, sizeof(g[1].name), "NVIDIA H100 80GB HBM3");
	g[1].mig_current = 1;
	g[1].nr_gis = 2;
	g[1].gis[0] = (struct kerf_gpu_gi){ .id = 1, .profile = "3g.40gb", .start = 0 };
	g[1].gis[1] = (struct kerf_gpu_gi){ .id = 2, .profile = "3g.40gb", .start = 4 };
	return inv;
}

static struct kerf_health_verdict verdict(unsigned long long x, unsigned gi)
{
	nvmlEventData_t ev = { .eventType = nvmlEventTypeXidCriticalError, .eventData = x,
			       .gpuInstanceId = gi, .computeInstanceId = 0 };
	struct kerf_health_verdict v;

	kerf_health_decide(NVML_SUCCESS, &ev, &v);
	return v;
}

static void test_apply(void **state)
{
	struct kerf_gpu g[2];
	struct kerf_gpu_inventory inv = inv_with_mig(g);
	struct kerf_agent_marks m;
	struct kerf_health_verdict v;

	(void)state;
	memset(&m, 0, sizeof(m));
	v = verdict(13, 0xffffffffu);
	assert_false(kerf_agent_marks_apply(&m, &v, 0, &inv, "t"));   /* N-03 */
	v = verdict(48, 0xffffffffu);
	assert_true(kerf_agent_marks_apply(&m, &v, 0, &inv, "t1"));
	assert_false(kerf_agent_marks_apply(&m, &v, 0, &inv, "t2"));  /* once */
	assert_string_equal(m.gpu[0].since, "t1");
	v = verdict(48, 2);                                          /* N-06 */
	assert_true(kerf_agent_marks_apply(&m, &v, 1, &inv, "t"));
	assert_int_equal(m.gpus_down, 1);
	assert_int_equal(m.nr_mig, 1);
	assert_int_equal(m.mig[0].start, 4);
	v = verdict(48, 7);             /* an instance the inventory does not know */
	assert_true(kerf_agent_marks_apply(&m, &v, 1, &inv, "t"));
	assert_int_equal(m.gpus_down, 3);                            /* the GPU: safe side */
	v = verdict(79, 0xffffffffu);                                /* N-04 */
	struct kerf_agent_marks n;
	memset(&n, 0, sizeof(n));
	assert_true(kerf_agent_marks_apply(&n, &v, 1, &inv, "t"));
	assert_true(n.node_failed);
	assert_int_equal(n.gpus_down, 2);
	kerf_agent_marks_union(&n, &m);
	assert_int_equal(n.gpus_down, 3);
	assert_int_equal(n.nr_mig, 1);
	assert_true(n.node_failed);
	assert_false(kerf_agent_marks_equal(&n, &m));
}

static json_t *node_json(const char *extra_meta, const char *spec)
{
	char text[2048];
	json_error_t jerr;

	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"42\"%s},\"spec\":{%s}}",
		 extra_meta, spec);
	json_t *j = json_loads(text, 0, &jerr);
	assert_non_null(j);
	return j;
}

static void test_round_trip(void **state)
{
	struct kerf_gpu g[2];
	struct kerf_gpu_inventory inv = inv_with_mig(g);
	struct kerf_agent_marks m, back;
	struct kerf_health_verdict v;
	struct kerf_err err = { 0 };
	json_t *node = node_json("", ""), *patch, *after;

	(void)state;
	memset(&m, 0, sizeof(m));
	v = verdict(48, 0xffffffffu);
	kerf_agent_marks_apply(&m, &v, 0, &inv, "2026-12-03T10:00:00Z");
	v = verdict(48, 2);
	kerf_agent_marks_apply(&m, &v, 1, &inv, "2026-12-03T10:00:01Z");
	v = verdict(79, 0xffffffffu);
	kerf_agent_marks_apply(&m, &v, 1, &inv, "2026-12-03T10:00:02Z");
	struct kerf_agent_node_view view = { .inv = &inv, .marks = &m, .now = "now" };
	assert_int_equal(kerf_agent_node_patch(node, &view, &patch), 0);
	assert_non_null(patch);
	/* the write is conditional on the Node as read */
	assert_string_equal(json_string_value(json_object_get(json_object_get(patch, "metadata"),
							      "resourceVersion")), "42");
	after = json_deep_copy(node);
	json_object_update_recursive(after, patch);
	json_decref(patch);
	/* what a restart reads back */
	assert_int_equal(kerf_agent_marks_from_node(after, &back, &err), 0);
	assert_true(kerf_agent_marks_equal(&back, &m));
	assert_string_equal(back.gpu[0].since, "2026-12-03T10:00:00Z");
	assert_true(back.node_failed);
	assert_non_null(strstr(back.node.reason, "Xid 79"));
	const json_t *spec = json_object_get(after, "spec");
	assert_null(json_object_get(spec, "unschedulable"));   /* the operator's */
	assert_int_equal(json_array_size(json_object_get(spec, "taints")), 1);
	const json_t *labels = json_object_get(json_object_get(after, "metadata"), "labels");
	assert_string_equal(json_string_value(json_object_get(labels, "nvidia.com/gpu.product")),
			    "NVIDIA-H100-80GB-HBM3");
	assert_string_equal(json_string_value(json_object_get(labels, "kerf.io/mig-gpus")), "1");
	assert_string_equal(json_string_value(json_object_get(labels, "nvidia.com/gpu.count")), "2");
	/* the Node says it all: no write */
	assert_int_equal(kerf_agent_node_patch(after, &view, &patch), 0);
	assert_null(patch);
	json_decref(after);
	json_decref(node);
}

static void test_unreadable_and_taints_kept(void **state)
{
	struct kerf_agent_marks m;
	struct kerf_err err = { 0 };
	json_t *node = node_json(",\"annotations\":{\"kerf.io/unhealthy-gpus\":\"1,x\"}", "");

	(void)state;
	assert_int_equal(kerf_agent_marks_from_node(node, &m, &err), -KERF_EPARSE);
	assert_non_null(strstr(err.msg, "kerf.io/unhealthy-gpus"));
	json_decref(node);
	node = node_json(",\"annotations\":{\"kerf.io/unhealthy-mig\":5}", "");
	assert_int_equal(kerf_agent_marks_from_node(node, &m, &err), -KERF_EPARSE);
	json_decref(node);
	/* someone else's taint stays when kerf adds its own */
	node = node_json("", "\"taints\":[{\"key\":\"other\",\"effect\":\"NoSchedule\"}]");
	memset(&m, 0, sizeof(m));
	m.node_failed = true;
	struct kerf_agent_node_view view = { .marks = &m, .now = "now" };
	json_t *patch;
	assert_int_equal(kerf_agent_node_patch(node, &view, &patch), 0);
	const json_t *taints = json_object_get(json_object_get(patch, "spec"), "taints");
	assert_int_equal(json_array_size(taints), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(taints, 0), "key")),
			    "other");
	json_decref(patch);
	json_decref(node);
}

static void test_condition(void **state)
{
	struct kerf_agent_marks m;
	json_t *node = node_json("", ""), *patch;

	(void)state;
	memset(&m, 0, sizeof(m));
	struct kerf_agent_node_view view = { .marks = &m, .now = "T1" };
	assert_int_equal(kerf_agent_condition_patch(node, &view, NULL, &patch), 0);
	json_t *c = json_array_get(json_object_get(json_object_get(patch, "status"), "conditions"), 0);
	assert_string_equal(json_string_value(json_object_get(c, "status")), "True");
	assert_string_equal(json_string_value(json_object_get(c, "type")), "kerf.io/GPUHealthy");
	json_object_set(node, "status", json_object_get(patch, "status"));
	json_decref(patch);
	/* the same: nothing to write */
	view.now = "T2";
	assert_int_equal(kerf_agent_condition_patch(node, &view, NULL, &patch), 0);
	assert_null(patch);
	/* a mark: False, the transition time moves */
	m.gpus_down = 4;
	assert_int_equal(kerf_agent_condition_patch(node, &view, NULL, &patch), 0);
	c = json_array_get(json_object_get(json_object_get(patch, "status"), "conditions"), 0);
	assert_string_equal(json_string_value(json_object_get(c, "status")), "False");
	assert_string_equal(json_string_value(json_object_get(c, "lastTransitionTime")), "T2");
	assert_non_null(strstr(json_string_value(json_object_get(c, "message")), "GPUs [2]"));
	json_decref(patch);
	/* no signal: Unknown, never True */
	m.gpus_down = 0;
	assert_int_equal(kerf_agent_condition_patch(node, &view, "events fail", &patch), 0);
	c = json_array_get(json_object_get(json_object_get(patch, "status"), "conditions"), 0);
	assert_string_equal(json_string_value(json_object_get(c, "status")), "Unknown");
	json_decref(patch);
	json_decref(node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_unreadable_and_taints_kept),
		cmocka_unit_test(test_condition),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
