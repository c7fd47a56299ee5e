/*
 * test_whatif: kerf what-if's pieces: the change parser (every bad input
 * refused with the option and the reason), the checks against a state,
 * the state document (round trip, bad documents refused with the field)
 * and a run (a raised quota starts the job that waited; deterministic).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/persist.h"
#include "core/policy.h"
#include "persist/state_doc.h"
#include "sim/scenario.h"
#include "sim/whatif.h"

static const char scenario_yaml[] =
	"horizon_h: 10\n"
	"cluster:\n"
	"  nodes:\n"
	"    - { prefix: n, count: 2, cpu: 64, memory_gib: 512, gpus: 8, model: H100-80GB }\n"
	"    - { prefix: t, count: 1, cpu: 16, memory_gib: 64, gpus: 4, model: T4 }\n"
	"priority_classes:\n"
	"  - { name: prod, value: 1000 }\n"
	"  - { name: serve, value: 500 }\n"
	"  - { name: batch, value: 100 }\n"
	"tenants:\n"
	"  - name: a\n"
	"    quota: { H100-80GB: { nominal: 8, borrowing_limit: 0 } }\n"
	"  - name: b\n"
	"workload:\n"
	"  - { name: first, tenant: a, class: batch, duration_h: 5, gpus: 8, models: [H100-80GB] }\n"
	"  - { name: second, tenant: a, class: batch, start_s: 60, duration_h: 5, gpus: 8,\n"
	"      models: [H100-80GB] }\n";

static json_t *scenario_doc(int64_t at_ms)
{
	struct kerf_scenario sc;
	struct kerf_err err = { 0 };
	json_t *doc = NULL;

	kerf_scenario_init(&sc);
	assert_int_equal(kerf_scenario_parse(&sc, "t.yaml", scenario_yaml,
					     strlen(scenario_yaml), &err), 0);
	assert_int_equal(kerf_whatif_scenario_doc(&sc, at_ms, NULL, NULL, &doc, &err), 0);
	kerf_scenario_release(&sc);
	assert_non_null(doc);
	return doc;
}

/* opt arg must be refused with a message holding want. */
static void refused(const char *opt, const char *arg, const char *want)
{
	struct kerf_whatif_change c;
	struct kerf_err err = { 0 };

	assert_int_equal(kerf_whatif_change_parse(opt, arg, &c, &err), -KERF_EINVAL);
	if (!strstr(err.msg, want) || !strstr(err.msg, opt))
		fail_msg("%s '%s': got '%s', want '%s'", opt, arg, err.msg, want);
}

static void test_parse_good(void **unused)
{
	struct kerf_whatif_change c;
	struct kerf_err err = { 0 };

	(void)unused;
	assert_int_equal(kerf_whatif_change_parse("--set-quota", "team-a:H100-80GB=16", &c, &err), 0);
	assert_int_equal(c.kind, KERF_WHATIF_QUOTA);
	assert_string_equal(c.tenant, "team-a");
	assert_string_equal(c.flavor, "H100-80GB");
	assert_int_equal(c.value, 16000);
	assert_int_equal(kerf_whatif_change_parse("--set-borrowing-limit", "b=0.5", &c, &err), 0);
	assert_int_equal(c.kind, KERF_WHATIF_BORROW);
	assert_string_equal(c.flavor, "");
	assert_int_equal(c.value, 500);
	assert_int_equal(kerf_whatif_change_parse("--set-weight", "b=3", &c, &err), 0);
	assert_int_equal(c.value, 3);
	assert_int_equal(kerf_whatif_change_parse("--set-budget", "b=12.5", &c, &err), 0);
	assert_int_equal(c.value, 12500);
	assert_int_equal(kerf_whatif_change_parse("--policy", "best-fit", &c, &err), 0);
	assert_string_equal(c.policy, "best-fit");
}

static void test_parse_bad(void **unused)
{
	(void)unused;
	refused("--set-quota", "a", "expected TENANT[:FLAVOR]=VALUE");
	refused("--set-quota", "=8", "tenant's name is empty");
	refused("--set-quota", "a:=8", "flavor after ':' is empty");
	refused("--set-quota", "a=", "value after '=' is empty");
	refused("--set-quota", "a=-1", "GPUS must not be negative");
	refused("--set-quota", "a=eight", "GPUS must be a decimal number");
	refused("--set-quota", "a=0.0001", "more than 3 decimals");
	refused("--set-quota", "a=2000000", "from 0 to 1000000");
	refused("--set-borrowing-limit", "a:T4=-2", "must not be negative");
	refused("--set-weight", "a=0", "from 1 to 1000000");
	refused("--set-weight", "a=-3", "must not be negative");
	refused("--set-weight", "a=1.5", "whole number");
	refused("--set-weight", "a:T4=2", "not per flavor");
	refused("--set-budget", "a=-5", "GPU_HOURS must not be negative");
	refused("--set-budget", "a", "expected TENANT=VALUE");
	refused("--policy", "nope", "not a placement policy");
	refused("--policy", "fgd", "needs the workload in advance");
	refused("--set-quota",
		"a-name-that-is-far-too-long-for-a-tenant-because-it-has-more-than-63-bytes=1",
		"longer than 63 bytes");
}

static void test_check(void **unused)
{
	json_t *doc = scenario_doc(600000);
	struct kerf_state st;
	struct kerf_state_doc_info info;
	struct kerf_persist hist;
	struct kerf_whatif_change c;
	struct kerf_err err = { 0 };

	(void)unused;
	assert_int_equal(kerf_state_doc_decode(doc, &st, &info, &hist, &err), 0);
	kerf_persist_release(&hist);
	assert_int_equal(kerf_whatif_change_parse("--set-quota", "nobody:T4=1", &c, &err), 0);
	assert_int_equal(kerf_whatif_change_check(&st, &c, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "unknown tenant 'nobody' (tenants: a b)"));
	kerf_err_clear(&err);
	assert_int_equal(kerf_whatif_change_parse("--set-weight", "cluster=2", &c, &err), 0);
	assert_int_equal(kerf_whatif_change_check(&st, &c, &err), -KERF_EINVAL);
	kerf_err_clear(&err);
	assert_int_equal(kerf_whatif_change_parse("--set-quota", "a:A100=1", &c, &err), 0);
	assert_int_equal(kerf_whatif_change_check(&st, &c, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "unknown flavor 'A100' (flavors: H100-80GB, T4)"));
	kerf_err_clear(&err);
	assert_int_equal(kerf_whatif_change_parse("--set-quota", "a=1", &c, &err), 0);
	assert_int_equal(kerf_whatif_change_check(&st, &c, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "2 GPU flavors: name one as a:FLAVOR"));
	assert_int_equal(kerf_whatif_change_parse("--set-quota", "b:T4=1", &c, &err), 0);
	assert_int_equal(kerf_whatif_change_check(&st, &c, NULL), 0);
	/* a flavor as a Tenant names it: case ignored */
	assert_int_equal(kerf_whatif_change_parse("--set-quota", "b:h100-80gb=1", &c, &err), 0);
	assert_int_equal(kerf_whatif_change_check(&st, &c, NULL), 0);
	kerf_state_release(&st);
	json_decref(doc);
}

/* Decoded and encoded again, a document is the same document. */
static void test_doc_round_trip(void **unused)
{
	json_t *doc = scenario_doc(600000), *again;
	struct kerf_state st;
	struct kerf_state_doc_info info;
	struct kerf_persist hist;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct kerf_err err = { 0 };

	(void)unused;
	assert_int_equal(kerf_state_doc_decode(doc, &st, &info, &hist, &err), 0);
	assert_int_equal(info.now_ms, 600000);
	assert_string_equal(info.policy, "kerf");
	assert_int_equal(st.cluster.nr_nodes, 3);
	assert_int_equal(st.nr_wl, 2);
	assert_int_equal(kerf_policy_build(&pol, info.policy,
					   &(struct kerf_policy_args){ .cluster = &st.cluster,
								       .seed = info.seed }, &err), 0);
	kerf_sched_init(&sched, &pol);
	assert_int_equal(kerf_state_import(&st, &sched, &hist, &err), 0);
	again = kerf_state_doc_encode(&st, &sched, &info, &err);
	assert_non_null(again);
	if (!json_equal(doc, again)) {
		char *a = json_dumps(doc, JSON_SORT_KEYS), *b = json_dumps(again, JSON_SORT_KEYS);

		fail_msg("round trip differs:\n%s\n%s", a, b);
	}
	json_decref(again);
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	kerf_persist_release(&hist);
	kerf_state_release(&st);
	json_decref(doc);
}

/* doc with path set to v must be refused with want in the message. */
static void bad_doc(const char *a, const char *b, int i, const char *c, json_t *v,
		    const char *want)
{
	json_t *doc = scenario_doc(600000), *o = json_object_get(doc, a);
	struct kerf_state st;
	struct kerf_state_doc_info info;
	struct kerf_persist hist;
	struct kerf_err err = { 0 };

	if (b)
		o = json_array_get(json_object_get(doc, b), (size_t)i);
	if (c)
		json_object_set_new(o, c, v);
	else
		json_object_set_new(doc, a, v);
	assert_true(kerf_state_doc_decode(doc, &st, &info, &hist, &err) < 0);
	if (!strstr(err.msg, want))
		fail_msg("got '%s', want '%s'", err.msg, want);
	assert_null(st.cluster.nodes);
	json_decref(doc);
}

static void test_doc_bad(void **unused)
{
	(void)unused;
	bad_doc("kind", NULL, 0, NULL, json_string("Pod"), "state: kind: must be State");
	bad_doc("version", NULL, 0, NULL, json_integer(2), "version: must be 1");
	bad_doc("nodes", "nodes", 1, "cpuMilli", json_string("8"),
		"state: nodes[1].cpuMilli: must be an integer");
	bad_doc("nodes", "nodes", 0, "model", json_string("A100"),
		"nodes[0].model: not among the document's models");
	bad_doc("nodes", "nodes", 0, "gpusDown", json_pack("[i]", 16),
		"nodes[0].gpusDown: item 0: must be a bit number from 0 to 15");
	bad_doc("tenants", "tenants", 1, "weight", json_integer(0),
		"tenants[1].weight: must be an integer from 1 to 1000000");
	bad_doc("tenants", "tenants", 0, "quota", json_pack("{s{si}}", "disk", "nominal", 1),
		"tenants[0].quota.disk: not a dimension");
	bad_doc("workloads", "workloads", 0, "tenant", json_string("nobody"),
		"workloads[0].tenant: not a tenant of the document");
	bad_doc("workloads", "workloads", 1, "state", json_string("Done"),
		"workloads[1].state: must be Running or Pending");
	bad_doc("workloads", "workloads", 0, "pods", json_pack("[{sisss[]}]", "set", 0, "node", "zz", "gpus"),
		"workloads[0].pods[0].node: not a node of the document");
}

static json_t *run_json(const json_t *doc, const char *opt, const char *arg)
{
	struct kerf_whatif_change c;
	struct kerf_whatif_result r;
	struct kerf_err err = { 0 };
	json_t *out;

	assert_int_equal(kerf_whatif_change_parse(opt, arg, &c, &err), 0);
	if (kerf_whatif_run(doc, &c, 1, 0, 0, &r, &err) < 0)
		fail_msg("%s", err.msg);
	out = kerf_whatif_json(&r, &c, 1);
	kerf_whatif_result_release(&r);
	assert_non_null(out);
	return out;
}

static void test_run(void **unused)
{
	json_t *doc = scenario_doc(600000);
	json_t *out = run_json(doc, "--set-quota", "a:H100-80GB=16");
	json_t *again = run_json(doc, "--set-quota", "a:H100-80GB=16");
	json_t *second = json_array_get(json_object_get(out, "workloads"), 1);
	struct kerf_whatif_change c;
	struct kerf_whatif_result r;
	struct kerf_err err = { 0 };

	(void)unused;
	assert_string_equal(json_string_value(json_object_get(second, "workload")), "second-0");
	assert_string_equal(json_string_value(json_object_get(second, "effect")), "Starts");
	assert_string_equal(json_string_value(json_object_get(json_object_get(second, "asIs"), "code")),
			    "QuotaExceeded");
	assert_string_equal(json_string_value(json_object_get(json_object_get(second, "whatIf"), "nodes")),
			    "n1");
	assert_true(json_equal(out, again));
	json_decref(out);
	json_decref(again);
	/* a change the state does not have is refused, naming the option */
	assert_int_equal(kerf_whatif_change_parse("--set-weight", "nobody=2", &c, &err), 0);
	assert_int_equal(kerf_whatif_run(doc, &c, 1, 0, 0, &r, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "--set-weight: unknown tenant 'nobody'"));
	assert_null(r.wl);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_doc_round_trip),
		cmocka_unit_test(test_doc_bad),
		cmocka_unit_test(test_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
