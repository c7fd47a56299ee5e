/*
 * kobj/request: the writes kerf sends, against the bodies a real API
 * server v1.34.9 accepted (../shared/fixtures/k8s/real-1.34.9: binding/
 * create-201, status/strategic-merge-patch-podscheduled-false, eviction/
 * create-201-bound-pod, events/core-v1-create and core-v1-count-patch,
 * copied here so the test runs without the fixtures).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "kobj/request.h"
#include "kobj/time.h"

static void same_json(const char *got, const char *want)
{
	json_t *a = json_loads(got, 0, NULL), *b = json_loads(want, 0, NULL);

	assert_non_null(a);
	assert_non_null(b);
	if (!json_equal(a, b))
		fail_msg("got  %s\nwant %s", got, want);
	json_decref(a);
	json_decref(b);
}

static int64_t at(const char *t)
{
	int64_t ms;

	assert_int_equal(kerf_time_parse_ms(t, &ms), 0);
	return ms;
}

static void test_binding(void **state)
{
	struct kerf_kv ann[] = { { "kerf.io/assigned-gpus", "0,1" } };
	struct kerf_err err = { 0 };
	struct kerf_kreq r;

	(void)state;
	assert_int_equal(kerf_kreq_binding(&r, "team-a", "b1", NULL, "gpu-node-1",
					   ann, 1, &err), 0);
	assert_string_equal(r.method, "POST");
	assert_string_equal(r.path, "/api/v1/namespaces/team-a/pods/b1/binding");
	assert_string_equal(r.content_type, "application/json");
	same_json(r.body, "{\"apiVersion\": \"v1\", \"kind\": \"Binding\", \"metadata\": {\"name\": \"b1\", \"namespace\": \"team-a\", \"annotations\": {\"kerf.io/assigned-gpus\": \"0,1\"}}, \"target\": {\"apiVersion\": \"v1\", \"kind\": \"Node\", \"name\": \"gpu-node-1\"}}");
	kerf_kreq_release(&r);
	assert_int_equal(kerf_kreq_binding(&r, "team-a", "b5", "8d6b5fbd-dc9b-4bd9-b446-e39dd58fb331",
					   "gpu-node-1", NULL, 0, &err), 0);
	same_json(r.body, "{\"apiVersion\": \"v1\", \"kind\": \"Binding\", \"metadata\": {\"name\": \"b5\", \"namespace\": \"team-a\", \"uid\": \"8d6b5fbd-dc9b-4bd9-b446-e39dd58fb331\"}, \"target\": {\"apiVersion\": \"v1\", \"kind\": \"Node\", \"name\": \"gpu-node-1\"}}");
	kerf_kreq_release(&r);
}

static void test_pending(void **state)
{
	const char *msg = "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.";
	struct kerf_err err = { 0 };
	struct kerf_kreq r;
	char want[1024];

	(void)state;
	assert_int_equal(kerf_kreq_pending(&r, "team-a", "s2", "Unschedulable", msg,
					   at("2026-12-02T18:32:05Z"), &err), 0);
	assert_string_equal(r.method, "PATCH");
	assert_string_equal(r.path, "/api/v1/namespaces/team-a/pods/s2/status");
	assert_string_equal(r.content_type, "application/strategic-merge-patch+json");
	snprintf(want, sizeof(want), "{\"status\": {\"conditions\": [{\"type\": \"PodScheduled\", \"status\": \"False\", \"reason\": \"Unschedulable\", \"message\": \"%s\", \"lastProbeTime\": null, \"lastTransitionTime\": \"2026-12-02T18:32:05Z\"}]}}", msg);
	same_json(r.body, want);
	kerf_kreq_release(&r);
}

static void test_eviction_and_annotation(void **state)
{
	struct kerf_err err = { 0 };
	struct kerf_kreq r;

	(void)state;
	assert_int_equal(kerf_kreq_eviction(&r, "team-a", "e2", 60, &err), 0);
	assert_string_equal(r.path, "/api/v1/namespaces/team-a/pods/e2/eviction");
	same_json(r.body, "{\"apiVersion\": \"policy/v1\", \"kind\": \"Eviction\", \"metadata\": {\"name\": \"e2\", \"namespace\": \"team-a\"}, \"deleteOptions\": {\"gracePeriodSeconds\": 60}}");
	kerf_kreq_release(&r);
	assert_int_equal(kerf_kreq_eviction(&r, "team-a", "e2", -1, &err), 0);
	same_json(r.body, "{\"apiVersion\": \"policy/v1\", \"kind\": \"Eviction\", \"metadata\": {\"name\": \"e2\", \"namespace\": \"team-a\"}}");
	kerf_kreq_release(&r);
	assert_int_equal(kerf_kreq_annotate(&r, "team-a", "v1", "kerf.io/preempt-at",
					    "2026-12-02T18:40:00Z", &err), 0);
	assert_string_equal(r.path, "/api/v1/namespaces/team-a/pods/v1");
	assert_string_equal(r.content_type, "application/merge-patch+json");
	same_json(r.body, "{\"metadata\":{\"annotations\":{\"kerf.io/preempt-at\":\"2026-12-02T18:40:00Z\"}}}");
	kerf_kreq_release(&r);
	assert_int_equal(kerf_kreq_annotate(&r, "team-a", "v1", "kerf.io/preempt-at",
					    NULL, &err), 0);
	same_json(r.body, "{\"metadata\":{\"annotations\":{\"kerf.io/preempt-at\":null}}}");
	kerf_kreq_release(&r);
	/* a gang's plan: the node and the devices in one merge patch */
	{
		const struct kerf_kv plan[] = {
			{ "kerf.io/planned-node", "gpu-node-1" },
			{ "kerf.io/assigned-gpus", "0,1" },
			{ "kerf.io/assigned-mig", NULL },
		};

		assert_int_equal(kerf_kreq_annotations(&r, "team-a", "g-0", plan, 3, &err), 0);
		assert_string_equal(r.method, "PATCH");
		assert_string_equal(r.path, "/api/v1/namespaces/team-a/pods/g-0");
		assert_string_equal(r.content_type, "application/merge-patch+json");
		same_json(r.body, "{\"metadata\":{\"annotations\":{\"kerf.io/planned-node\":\"gpu-node-1\","
			  "\"kerf.io/assigned-gpus\":\"0,1\",\"kerf.io/assigned-mig\":null}}}");
		kerf_kreq_release(&r);
	}
}

static void test_events(void **state)
{
	struct kerf_kevent e = {
		.ns = "team-a", .name = "s1.18ed836bfae16e00", .pod = "s1",
		.pod_uid = "f9f6f448-1f3b-4176-a74c-39d8a997feee",
		.type = "Warning", .reason = "FailedScheduling",
		.message = "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
		.component = "kerf-scheduler", .instance = "",
		.now_ms = at("2026-12-02T18:32:06Z"), .count = 1,
	};
	struct kerf_err err = { 0 };
	struct kerf_kreq r;

	(void)state;
	assert_int_equal(kerf_kreq_event(&r, &e, &err), 0);
	assert_string_equal(r.path, "/api/v1/namespaces/team-a/events");
	/* as sent in events/core-v1-create.json, without involvedObject.resourceVersion */
	same_json(r.body, "{\"apiVersion\": \"v1\", \"kind\": \"Event\", \"metadata\": {\"name\": \"s1.18ed836bfae16e00\", \"namespace\": \"team-a\"}, \"involvedObject\": {\"kind\": \"Pod\", \"namespace\": \"team-a\", \"name\": \"s1\", \"uid\": \"f9f6f448-1f3b-4176-a74c-39d8a997feee\", \"apiVersion\": \"v1\"}, \"reason\": \"FailedScheduling\", \"message\": \"0/2 nodes are available: 2 Insufficient nvidia.com/gpu.\", \"source\": {\"component\": \"kerf-scheduler\"}, \"firstTimestamp\": \"2026-12-02T18:32:06Z\", \"lastTimestamp\": \"2026-12-02T18:32:06Z\", \"count\": 1, \"type\": \"Warning\", \"eventTime\": null, \"reportingComponent\": \"kerf-scheduler\", \"reportingInstance\": \"\"}");
	kerf_kreq_release(&r);
	e.count = 2;
	assert_int_equal(kerf_kreq_event_count(&r, &e, &err), 0);
	assert_string_equal(r.path, "/api/v1/namespaces/team-a/events/s1.18ed836bfae16e00");
	same_json(r.body, "{\"count\": 2, \"lastTimestamp\": \"2026-12-02T18:32:06Z\", \"message\": \"0/2 nodes are available: 2 Insufficient nvidia.com/gpu.\"}");
	kerf_kreq_release(&r);
}

static void test_refused(void **state)
{
	struct kerf_err err = { 0 };
	struct kerf_kreq r;

	(void)state;
	assert_int_equal(kerf_kreq_binding(&r, "team-a", "../nodes/x", NULL, "n", NULL, 0, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "pod name '../nodes/x': not a DNS name (lower-case letters, digits, '-', '.')");
	kerf_err_clear(&err);
	assert_int_equal(kerf_kreq_binding(&r, "team-a", "p", NULL, "node?x=1", NULL, 0, &err),
			 -KERF_EINVAL);
	kerf_err_clear(&err);
	assert_int_equal(kerf_kreq_eviction(&r, "", "p", 0, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "namespace: empty");
	kerf_err_clear(&err);
	assert_int_equal(kerf_kreq_pending(&r, "ns", "p", "Unschedulable", "bad \xff utf-8", 0, &err),
			 -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "not UTF-8"));
	kerf_err_clear(&err);
	assert_int_equal(kerf_kreq_annotate(&r, "Team", "p", "k", "v", &err), -KERF_EINVAL);
	kerf_err_clear(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_binding),
		cmocka_unit_test(test_pending),
		cmocka_unit_test(test_eviction_and_annotation),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
