/*
 * kobj/tenant: a Tenant object decoded field by field (good objects,
 * defaults, every refusal with its path and the value escaped), the core
 * spec it makes (flavors and classes resolved, accepted by the state), and
 * the status written and read back: export -> status JSON -> import keeps
 * the accumulators.
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

#include "core/budget.h"
#include "core/persist.h"
#include "core/state.h"
#include "kobj/tenant.h"

static json_t *load(const char *text)
{
	json_error_t je;
	json_t *o = json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);

	if (!o)
		fail_msg("bad test JSON: %s: %s", je.text, text);
	return o;
}

static void decode_ok(const char *text, struct kerf_kobj_tenant *t)
{
	struct kerf_err err = { 0 };
	json_t *o = load(text);
	int rc = kerf_kobj_tenant_decode(o, t, &err);

	json_decref(o);
	if (rc != 0)
		fail_msg("decode failed: %s\n  for %s", err.msg, text);
}

static void decode_err(const char *text, const char *want)
{
	struct kerf_kobj_tenant t;
	struct kerf_err err = { 0 };
	json_t *o = load(text);
	int rc = kerf_kobj_tenant_decode(o, &t, &err);

	json_decref(o);
	if (rc != -KERF_EINVAL || strcmp(err.msg, want))
		fail_msg("for %s\n  got  %d '%s'\n  want '%s'", text, rc, err.msg, want);
}

#define META "\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"team-a\",\"generation\":3}"
#define T(spec) "{" META ",\"spec\":" spec "}"

static const char full[] =
	"{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\","
	"\"metadata\":{\"name\":\"team-a\",\"generation\":7,\"uid\":\"u\"},"
	"\"spec\":{\"parent\":\"research\",\"weight\":3,"
	"\"quotas\":[{\"flavor\":\"h100\",\"nominal\":8,\"borrowingLimit\":\"4\",\"lendingLimit\":\"2500m\"},"
	"{\"flavor\":\"l4\",\"nominal\":\"0.5\"},"
	"{\"flavor\":\"cpu\",\"nominal\":\"500m\",\"borrowingLimit\":64},"
	"{\"flavor\":\"memory\",\"nominal\":\"1Gi\",\"lendingLimit\":\"1\"}],"
	"\"allowedPriorityClasses\":[\"batch\",\"low\",\"unknown\"],"
	"\"priorityCeiling\":{\"priorityClassName\":\"batch\"},"
	"\"isolation\":\"Tenant\","
	"\"gpuHourBudget\":{\"gpuHours\":\"500.5\",\"window\":\"1h30m\",\"onExhaustion\":\"PreemptibleOnly\","
	"\"flavorWeights\":[{\"flavor\":\"h100\",\"weight\":2},{\"flavor\":\"l4\",\"weight\":\"0.25\"},{\"flavor\":\"gone\",\"weight\":1}]},"
	"\"idlePolicy\":{\"thresholdPercent\":5,\"grace\":\"30m\",\"action\":\"CheckpointEvict\","
	"\"exemptPriorityClasses\":[\"production\"]},"
	"\"networkClass\":\"bulk\"},"
	"\"status\":{\"observedGeneration\":6}}";

static void test_full(void **state)
{
	struct kerf_kobj_tenant t;

	(void)state;
	decode_ok(full, &t);
	assert_string_equal(t.name, "team-a");
	assert_int_equal(t.generation, 7);
	assert_string_equal(t.parent, "research");
	assert_int_equal(t.weight, 3);
	assert_int_equal(t.nr_quotas, 4);
	assert_string_equal(t.quotas[0].flavor, "h100");
	assert_int_equal(t.quotas[0].nominal, 8000);
	assert_int_equal(t.quotas[0].borrow_limit, 4000);
	assert_int_equal(t.quotas[0].lend_limit, 2500);
	assert_int_equal(t.quotas[1].nominal, 500);
	assert_true(t.quotas[1].borrow_limit == KERF_QTY_INF);
	assert_true(t.quotas[1].lend_limit == KERF_QTY_INF);
	assert_int_equal(t.quotas[2].nominal, 500);          /* milli-cores */
	assert_int_equal(t.quotas[2].borrow_limit, 64000);
	assert_int_equal(t.quotas[3].nominal, 1024);         /* MiB */
	assert_int_equal(t.quotas[3].lend_limit, 1);         /* 1 byte: 1 MiB */
	assert_int_equal(t.nr_allowed_classes, 3);
	assert_string_equal(t.allowed_classes[2], "unknown");
	assert_true(t.has_ceiling);
	assert_string_equal(t.ceiling_class, "batch");
	assert_int_equal(t.isolation, KERF_ISOLATION_TENANT);
	assert_int_equal(t.budget_limit_milli_ms, 500500LL * 3600000);
	assert_int_equal(t.budget_window_ms, 5400000);
	assert_int_equal(t.budget_action, KERF_BUDGET_PREEMPTIBLE_ONLY);
	assert_int_equal(t.nr_flavor_weights, 3);
	assert_int_equal(t.flavor_weights[0].pct, 200);
	assert_int_equal(t.flavor_weights[1].pct, 25);
	assert_int_equal(t.idle_action, KERF_IDLE_CHECKPOINT_EVICT);
	assert_int_equal(t.idle_below_pct, 5);
	assert_int_equal(t.idle_after_ms, 1800000);
	assert_int_equal(t.nr_idle_exempt, 1);
	assert_string_equal(t.network_class, "bulk");
}

static void test_defaults(void **state)
{
	struct kerf_kobj_tenant t;

	(void)state;
	decode_ok("{\"metadata\":{\"name\":\"a.b-c\"},\"spec\":{}}", &t);
	assert_string_equal(t.name, "a.b-c");
	assert_int_equal(t.generation, 0);
	assert_string_equal(t.parent, "");
	assert_int_equal(t.weight, 1);
	assert_int_equal(t.nr_quotas, 0);
	assert_false(t.has_ceiling);
	assert_int_equal(t.isolation, KERF_ISOLATION_SHARED);
	assert_int_equal(t.budget_limit_milli_ms, 0);
	assert_int_equal(t.idle_action, KERF_IDLE_NONE);
	assert_string_equal(t.network_class, "");
	/* null reads as absent; defaults of nested objects */
	decode_ok(T("{\"parent\":null,\"weight\":null,"
		    "\"gpuHourBudget\":{\"gpuHours\":1,\"window\":\"24h\"},"
		    "\"idlePolicy\":{\"thresholdPercent\":0,\"grace\":\"1s\"},"
		    "\"priorityCeiling\":{\"value\":-5}}"), &t);
	assert_string_equal(t.parent, "");
	assert_int_equal(t.weight, 1);
	assert_int_equal(t.budget_action, KERF_BUDGET_HOLD);
	assert_int_equal(t.budget_limit_milli_ms, 3600000000LL);
	assert_int_equal(t.idle_action, KERF_IDLE_NOTIFY);
	assert_true(t.has_ceiling);
	assert_string_equal(t.ceiling_class, "");
	assert_int_equal(t.ceiling_value, -5);
}

static void test_quantities_and_durations(void **state)
{
	static const struct {
		const char *q;
		int64_t milli;
	} gpus[] = {
		{ "2", 2000 }, { "\"2\"", 2000 }, { "\"2500m\"", 2500 },
		{ "\"2.5\"", 2500 }, { "\"0.0001\"", 1 }, { "\"1e3\"", 1000000 },
		{ "\"+3\"", 3000 }, { "\"1k\"", 1000000 }, { "0", 0 },
	};
	static const struct {
		const char *d;
		int64_t ms;
	} durations[] = {
		{ "168h", 604800000 }, { "1h30m", 5400000 }, { "2.5s", 2500 },
		{ "300ms", 300 }, { "1.5ms", 2 }, { "1.0005s", 1001 },
		{ "0.0000000001s", 1 }, { "87600h", 315360000000LL },
		{ "1m1s1ms", 61001 },
	};
	char text[512];
	struct kerf_kobj_tenant t;

	(void)state;
	for (size_t i = 0; i < sizeof(gpus) / sizeof(gpus[0]); i++) {
		snprintf(text, sizeof(text),
			 T("{\"quotas\":[{\"flavor\":\"h100\",\"nominal\":%s}]}"),
			 gpus[i].q);
		decode_ok(text, &t);
		assert_int_equal(t.quotas[0].nominal, gpus[i].milli);
	}
	for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		snprintf(text, sizeof(text),
			 T("{\"idlePolicy\":{\"thresholdPercent\":1,\"grace\":\"%s\"}}"),
			 durations[i].d);
		decode_ok(text, &t);
		assert_int_equal(t.idle_after_ms, durations[i].ms);
	}
	decode_ok(T("{\"quotas\":[{\"flavor\":\"memory\",\"nominal\":\"1099511627776Mi\"},"
		    "{\"flavor\":\"cpu\",\"nominal\":\"2147483.648\"},"
		    "{\"flavor\":\"x\",\"nominal\":1000000}]}"), &t);
	assert_int_equal(t.quotas[0].nominal, 1LL << 40);
	assert_int_equal(t.quotas[1].nominal, 1LL << 31);
	assert_int_equal(t.quotas[2].nominal, 1000000000);
}

static void test_errors_meta(void **state)
{
	(void)state;
	decode_err("[]", "Tenant: must be an object, not an array");
	decode_err("{\"spec\":{}}", "metadata: is required");
	decode_err("{\"metadata\":7,\"spec\":{}}", "metadata: must be an object, not 7");
	decode_err("{\"metadata\":{},\"spec\":{}}", "metadata.name: is required");
	decode_err("{\"metadata\":{\"name\":\"\"},\"spec\":{}}",
		   "metadata.name: must be 1 to 63 bytes long, not ''");
	decode_err("{\"metadata\":{\"name\":\"a\\u001b[31m\"},\"spec\":{}}",
		   "metadata.name: must be lower-case letters, digits, '.' and '-', starting and ending with a letter or digit, not 'a\\x1b[31m'");
	decode_err("{\"metadata\":{\"name\":\"Team\"},\"spec\":{}}",
		   "metadata.name: must be lower-case letters, digits, '.' and '-', starting and ending with a letter or digit, not 'Team'");
	decode_err("{\"metadata\":{\"name\":\"a-\"},\"spec\":{}}",
		   "metadata.name: must be lower-case letters, digits, '.' and '-', starting and ending with a letter or digit, not 'a-'");
	decode_err("{\"metadata\":{\"name\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"},\"spec\":{}}",
		   "metadata.name: must be 1 to 63 bytes long, not 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'");
	decode_err("{\"metadata\":{\"name\":\"cluster\"},\"spec\":{}}",
		   "metadata.name: 'cluster' is reserved for the root of the tenant tree");
	decode_err("{\"metadata\":{\"name\":\"a\",\"generation\":-1},\"spec\":{}}",
		   "metadata.generation: must be an integer from 0 to 9223372036854775807, not -1");
	decode_err("{\"metadata\":{\"name\":\"a\"}}", "spec: is required");
	decode_err("{\"metadata\":{\"name\":\"a\"},\"spec\":\"x\"}",
		   "spec: must be an object, not 'x'");
}

static void test_errors_spec(void **state)
{
	(void)state;
	decode_err(T("{\"parent\":\"team-a\"}"), "spec.parent: a tenant cannot be its own parent");
	decode_err(T("{\"parent\":\"cluster\"}"),
		   "spec.parent: 'cluster' is the root: leave parent out for a top-level tenant");
	decode_err(T("{\"parent\":5}"), "spec.parent: must be a name, not 5");
	decode_err(T("{\"weight\":0}"), "spec.weight: must be an integer from 1 to 1000000, not 0");
	decode_err(T("{\"weight\":1000001}"), "spec.weight: must be an integer from 1 to 1000000, not 1000001");
	decode_err(T("{\"weight\":\"2\"}"), "spec.weight: must be an integer from 1 to 1000000, not '2'");
	decode_err(T("{\"weight\":2.0}"), "spec.weight: must be an integer from 1 to 1000000, not 2.0");
	decode_err(T("{\"allowedPriorityClasses\":\"a\"}"),
		   "spec.allowedPriorityClasses: must be a list, not 'a'");
	decode_err(T("{\"allowedPriorityClasses\":[\"a\",\"a\"]}"),
		   "spec.allowedPriorityClasses[1]: 'a' is listed twice");
	decode_err(T("{\"allowedPriorityClasses\":[\"a\",\"B\"]}"),
		   "spec.allowedPriorityClasses[1]: must be lower-case letters, digits, '.' and '-', starting and ending with a letter or digit, not 'B'");
	decode_err(T("{\"allowedPriorityClasses\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\",\"m\",\"n\",\"o\",\"p\",\"q\",\"r\",\"s\",\"t\",\"u\",\"v\",\"w\",\"x\",\"y\",\"z\",\"aa\",\"ab\",\"ac\",\"ad\",\"ae\",\"af\",\"ag\"]}"),
		   "spec.allowedPriorityClasses: must have at most 32 entries, not 33");
	decode_err(T("{\"priorityCeiling\":1}"), "spec.priorityCeiling: must be an object, not 1");
	decode_err(T("{\"priorityCeiling\":{}}"),
		   "spec.priorityCeiling: give exactly one of priorityClassName and value");
	decode_err(T("{\"priorityCeiling\":{\"priorityClassName\":\"a\",\"value\":1}}"),
		   "spec.priorityCeiling: give exactly one of priorityClassName and value");
	decode_err(T("{\"priorityCeiling\":{\"value\":2147483648}}"),
		   "spec.priorityCeiling.value: must be an integer from -2147483648 to 2147483647, not 2147483648");
	decode_err(T("{\"priorityCeiling\":{\"priorityClassName\":\"-a\"}}"),
		   "spec.priorityCeiling.priorityClassName: must be lower-case letters, digits, '.' and '-', starting and ending with a letter or digit, not '-a'");
	decode_err(T("{\"isolation\":\"shared\"}"),
		   "spec.isolation: must be one of Shared, Tenant, Hardware, not 'shared'");
	decode_err(T("{\"networkClass\":\"a.b\"}"),
		   "spec.networkClass: must be lower-case letters, digits and '-', starting and ending with a letter or digit, not 'a.b'");
}

static void test_errors_quotas(void **state)
{
	char big[8192];
	size_t len;

	(void)state;
	decode_err(T("{\"quotas\":{}}"), "spec.quotas: must be a list, not an object");
	decode_err(T("{\"quotas\":[7]}"), "spec.quotas[0]: must be an object, not 7");
	decode_err(T("{\"quotas\":[{\"nominal\":1}]}"), "spec.quotas[0].flavor: is required");
	decode_err(T("{\"quotas\":[{\"flavor\":\"a\",\"nominal\":1},{\"flavor\":\"a\",\"nominal\":1}]}"),
		   "spec.quotas[1].flavor: 'a' is listed twice");
	decode_err(T("{\"quotas\":[{\"flavor\":\"a\"}]}"), "spec.quotas[0].nominal: is required");
	decode_err(T("{\"quotas\":[{\"flavor\":\"a\",\"nominal\":1},{\"flavor\":\"b\",\"nominal\":-1}]}"),
		   "spec.quotas[1].nominal: must be GPUs from 0 to 1000000, not -1");
	decode_err(T("{\"quotas\":[{\"flavor\":\"a\",\"nominal\":\"-1\"}]}"),
		   "spec.quotas[0].nominal: must be GPUs from 0 to 1000000, not '-1'");
	decode_err(T("{\"quotas\":[{\"flavor\":\"a\",\"nominal\":\"1000001\"}]}"),
		   "spec.quotas[0].nominal: must be GPUs from 0 to 1000000, not '1000001'");
	decode_err(T("{\"quotas\":[{\"flavor\":\"a\",\"nominal\":9223372036854775807}]}"),
		   "spec.quotas[0].nominal: must be GPUs from 0 to 1000000, not 9223372036854775807");
	decode_err(T("{\"quotas\":[{\"flavor\":\"a\",\"nominal\":\"eight\"}]}"),
		   "spec.quotas[0].nominal: must be a quantity of GPUs (digits with a suffix such as 500m, 16Gi or 2e3), not 'eight'");
	decode_err(T("{\"quotas\":[{\"flavor\":\"a\",\"nominal\":1.5}]}"),
		   "spec.quotas[0].nominal: must be a quantity of GPUs (an integer or a string such as 2.5 or 500m), not 1.5");
	decode_err(T("{\"quotas\":[{\"flavor\":\"a\",\"nominal\":\"1\\u0000\"}]}"),
		   "spec.quotas[0].nominal: must be a quantity of GPUs (an integer or a string such as 2.5 or 500m), not '1\\x00'");
	decode_err(T("{\"quotas\":[{\"flavor\":\"cpu\",\"nominal\":\"2147484\"}]}"),
		   "spec.quotas[0].nominal: must be cores from 0 to 2147483.648, not '2147484'");
	decode_err(T("{\"quotas\":[{\"flavor\":\"memory\",\"nominal\":\"2Ei\"}]}"),
		   "spec.quotas[0].nominal: must be bytes from 0Mi to 1099511627776Mi, not '2Ei'");
	decode_err(T("{\"quotas\":[{\"flavor\":\"a\",\"nominal\":1,\"borrowingLimit\":[]}]}"),
		   "spec.quotas[0].borrowingLimit: must be a quantity of GPUs (an integer or a string such as 2.5 or 500m), not an array");
	decode_err(T("{\"quotas\":[{\"flavor\":\"a\",\"nominal\":1,\"lendingLimit\":\"1001m\"}]}"),
		   "spec.quotas[0].lendingLimit: must be at most nominal, not '1001m'");
	decode_err(T("{\"quotas\":[{\"flavor\":\"a\",\"nominal\":1,\"lendingLimit\":true}]}"),
		   "spec.quotas[0].lendingLimit: must be a quantity of GPUs (an integer or a string such as 2.5 or 500m), not true");
	/* 67 entries */
	len = (size_t)snprintf(big, sizeof(big), "%s", "{" META ",\"spec\":{\"quotas\":[");
	for (int i = 0; i < 67; i++)
		len += (size_t)snprintf(big + len, sizeof(big) - len,
					"%s{\"flavor\":\"f%d\",\"nominal\":1}", i ? "," : "", i);
	snprintf(big + len, sizeof(big) - len, "]}}");
	decode_err(big, "spec.quotas: must have at most 66 entries, not 67");
}

static void test_errors_budget_idle(void **state)
{
	(void)state;
#define B(x) T("{\"gpuHourBudget\":" x "}")
	decode_err(B("[]"), "spec.gpuHourBudget: must be an object, not an array");
	decode_err(B("{\"window\":\"1h\"}"), "spec.gpuHourBudget.gpuHours: is required");
	decode_err(B("{\"gpuHours\":0,\"window\":\"1h\"}"),
		   "spec.gpuHourBudget.gpuHours: must be GPU-hours from 0.001 to 1000000000, not 0");
	decode_err(B("{\"gpuHours\":\"1000000001\",\"window\":\"1h\"}"),
		   "spec.gpuHourBudget.gpuHours: must be GPU-hours from 0.001 to 1000000000, not '1000000001'");
	decode_err(B("{\"gpuHours\":1}"), "spec.gpuHourBudget.window: is required");
	decode_err(B("{\"gpuHours\":1,\"window\":\"0s\"}"),
		   "spec.gpuHourBudget.window: must be a duration of h, m, s or ms such as 168h, 30m or 1h30m, more than 0 and at most 87600h, not '0s'");
	decode_err(B("{\"gpuHours\":1,\"window\":\"1d\"}"),
		   "spec.gpuHourBudget.window: must be a duration of h, m, s or ms such as 168h, 30m or 1h30m, more than 0 and at most 87600h, not '1d'");
	decode_err(B("{\"gpuHours\":1,\"window\":\"87600h1ms\"}"),
		   "spec.gpuHourBudget.window: must be a duration of h, m, s or ms such as 168h, 30m or 1h30m, more than 0 and at most 87600h, not '87600h1ms'");
	decode_err(B("{\"gpuHours\":1,\"window\":\"99999999999999999999h\"}"),
		   "spec.gpuHourBudget.window: must be a duration of h, m, s or ms such as 168h, 30m or 1h30m, more than 0 and at most 87600h, not '99999999999999999999h'");
	decode_err(B("{\"gpuHours\":1,\"window\":\"1.h\"}"),
		   "spec.gpuHourBudget.window: must be a duration of h, m, s or ms such as 168h, 30m or 1h30m, more than 0 and at most 87600h, not '1.h'");
	decode_err(B("{\"gpuHours\":1,\"window\":\"h\"}"),
		   "spec.gpuHourBudget.window: must be a duration of h, m, s or ms such as 168h, 30m or 1h30m, more than 0 and at most 87600h, not 'h'");
	decode_err(B("{\"gpuHours\":1,\"window\":3600}"),
		   "spec.gpuHourBudget.window: must be a duration of h, m, s or ms such as 168h, 30m or 1h30m, more than 0 and at most 87600h, not 3600");
	decode_err(B("{\"gpuHours\":1,\"window\":\"1h\",\"onExhaustion\":\"hold\"}"),
		   "spec.gpuHourBudget.onExhaustion: must be one of Hold, PreemptibleOnly, not 'hold'");
	decode_err(B("{\"gpuHours\":1,\"window\":\"1h\",\"flavorWeights\":{}}"),
		   "spec.gpuHourBudget.flavorWeights: must be a list, not an object");
	decode_err(B("{\"gpuHours\":1,\"window\":\"1h\",\"flavorWeights\":[1]}"),
		   "spec.gpuHourBudget.flavorWeights[0]: must be an object, not 1");
	decode_err(B("{\"gpuHours\":1,\"window\":\"1h\",\"flavorWeights\":[{\"weight\":1}]}"),
		   "spec.gpuHourBudget.flavorWeights[0].flavor: is required");
	decode_err(B("{\"gpuHours\":1,\"window\":\"1h\",\"flavorWeights\":[{\"flavor\":\"cpu\",\"weight\":1}]}"),
		   "spec.gpuHourBudget.flavorWeights[0].flavor: must name a GPUPool, not 'cpu'");
	decode_err(B("{\"gpuHours\":1,\"window\":\"1h\",\"flavorWeights\":[{\"flavor\":\"a\",\"weight\":1},{\"flavor\":\"a\",\"weight\":1}]}"),
		   "spec.gpuHourBudget.flavorWeights[1].flavor: 'a' is listed twice");
	decode_err(B("{\"gpuHours\":1,\"window\":\"1h\",\"flavorWeights\":[{\"flavor\":\"a\"}]}"),
		   "spec.gpuHourBudget.flavorWeights[0].weight: is required");
	decode_err(B("{\"gpuHours\":1,\"window\":\"1h\",\"flavorWeights\":[{\"flavor\":\"a\",\"weight\":101}]}"),
		   "spec.gpuHourBudget.flavorWeights[0].weight: must be a weight from 0 to 100, not 101");
	decode_err(B("{\"gpuHours\":1,\"window\":\"1h\",\"flavorWeights\":[{\"flavor\":\"a\",\"weight\":\"0.255\"}]}"),
		   "spec.gpuHourBudget.flavorWeights[0].weight: must have at most two decimals");
#undef B
#define I(x) T("{\"idlePolicy\":" x "}")
	decode_err(I("true"), "spec.idlePolicy: must be an object, not true");
	decode_err(I("{\"grace\":\"1h\"}"), "spec.idlePolicy.thresholdPercent: is required");
	decode_err(I("{\"thresholdPercent\":101,\"grace\":\"1h\"}"),
		   "spec.idlePolicy.thresholdPercent: must be an integer from 0 to 100, not 101");
	decode_err(I("{\"thresholdPercent\":1}"), "spec.idlePolicy.grace: is required");
	decode_err(I("{\"thresholdPercent\":1,\"grace\":\"-1h\"}"),
		   "spec.idlePolicy.grace: must be a duration of h, m, s or ms such as 168h, 30m or 1h30m, more than 0 and at most 87600h, not '-1h'");
	decode_err(I("{\"thresholdPercent\":1,\"grace\":\"1h\",\"action\":\"Evict\"}"),
		   "spec.idlePolicy.action: must be one of Notify, CheckpointEvict, not 'Evict'");
	decode_err(I("{\"thresholdPercent\":1,\"grace\":\"1h\",\"exemptPriorityClasses\":[\"p\",\"p\"]}"),
		   "spec.idlePolicy.exemptPriorityClasses[1]: 'p' is listed twice");
#undef I
}

/* --- the core's spec ------------------------------------------------- */

struct world {
	struct kerf_state st;
	int h100, l4;                  /* dimensions */
};

static int dims(void *ctx, const char *flavor)
{
	struct world *w = ctx;

	if (!strcmp(flavor, "h100"))
		return w->h100;
	if (!strcmp(flavor, "l4"))
		return w->l4;
	return -1;
}

static void world_init(struct world *w)
{
	struct kerf_cluster c;
	struct kerf_tenants tt;
	struct kerf_classes cl;
	struct kerf_priority_class pcs[] = {
		{ .name = "production", .value = 1000, .preemptible = false },
		{ .name = "batch", .value = 100, .preemptible = true },
		{ .name = "low", .value = 10, .preemptible = true },
	};

	kerf_cluster_init(&c);
	w->h100 = kerf_res_gpu(kerf_cluster_model(&c, "H100-80GB", 81920, NULL));
	w->l4 = kerf_res_gpu(kerf_cluster_model(&c, "L4", 23034, NULL));
	for (int i = 0; i < 4; i++) {
		char name[8];

		snprintf(name, sizeof(name), "n%d", i);
		assert_true(kerf_cluster_add_node(&c, name, 64000, 524288,
						  i < 2 ? 0 : 1, 8, NULL) >= 0);
	}
	assert_int_equal(kerf_tenants_init(&tt, kerf_res_count(&c)), 0);
	kerf_classes_init(&cl);
	for (size_t i = 0; i < 3; i++)
		assert_true(kerf_classes_add(&cl, &pcs[i], NULL) >= 0);
	assert_int_equal(kerf_state_init(&w->st, &c, &tt, &cl, NULL), 0);
}

static struct kerf_kobj_resolver resolver(struct world *w)
{
	return (struct kerf_kobj_resolver){
		.flavor_dim = dims, .ctx = w, .classes = &w->st.classes,
		.nr_res = w->st.tenants.nr_res,
	};
}

static int add_tenant(struct world *w, const char *text, int parent)
{
	struct kerf_kobj_resolver r = resolver(w);
	struct kerf_kobj_tenant t;
	struct kerf_tenant_spec spec;
	struct kerf_err err = { 0 };
	int idx;

	decode_ok(text, &t);
	assert_int_equal(kerf_kobj_tenant_spec(&t, parent, &r, &spec, NULL, &err), 0);
	idx = kerf_state_tenant_add(&w->st, &spec, &err);
	if (idx < 0)
		fail_msg("tenant add: %s", err.msg);
	return idx;
}

static void test_spec(void **state)
{
	struct world w;
	struct kerf_kobj_resolver r;
	struct kerf_kobj_tenant t;
	struct kerf_tenant_spec spec;
	struct kerf_err err = { 0 };
	size_t unresolved = 99;
	int research, team;

	(void)state;
	world_init(&w);
	r = resolver(&w);
	decode_ok(full, &t);
	assert_int_equal(kerf_kobj_tenant_spec(&t, 1, &r, &spec, &unresolved, &err), 0);
	assert_ptr_equal(spec.name, t.name);
	assert_int_equal(spec.parent, 1);
	assert_int_equal(spec.weight, 3);
	assert_int_equal(spec.quota.nominal.v[w.h100], 8000);
	assert_int_equal(spec.quota.borrow_limit.v[w.h100], 4000);
	assert_int_equal(spec.quota.lend_limit.v[w.h100], 2500);
	assert_int_equal(spec.quota.nominal.v[w.l4], 500);
	assert_int_equal(spec.quota.nominal.v[KERF_RES_CPU], 500);
	assert_int_equal(spec.quota.nominal.v[KERF_RES_MEM], 1024);
	/* batch and low allowed ("unknown" left out), both at or below batch */
	assert_int_equal(spec.allowed_classes, (1u << 1) | (1u << 2));
	assert_int_equal(spec.isolation, KERF_ISOLATION_TENANT);
	assert_int_equal(spec.budget_model_weight_pct[w.h100 - KERF_RES_GPU0], 200);
	assert_int_equal(spec.budget_model_weight_pct[w.l4 - KERF_RES_GPU0], 25);
	assert_int_equal(spec.budget_model_weight_pct[5], 100);
	assert_int_equal(spec.idle.exempt_classes, 1u << 0);
	assert_int_equal(spec.idle.action, KERF_IDLE_CHECKPOINT_EVICT);
	assert_int_equal(unresolved, 1);   /* flavor weight "gone" */

	/* no classes named: all */
	decode_ok(T("{}"), &t);
	assert_int_equal(kerf_kobj_tenant_spec(&t, 0, &r, &spec, &unresolved, &err), 0);
	assert_int_equal(spec.allowed_classes, 0);
	assert_true(spec.quota.borrow_limit.v[w.h100] == KERF_QTY_INF);
	/* a ceiling by value: all classes at or below */
	decode_ok(T("{\"priorityCeiling\":{\"value\":100}}"), &t);
	assert_int_equal(kerf_kobj_tenant_spec(&t, 0, &r, &spec, NULL, &err), 0);
	assert_int_equal(spec.allowed_classes, (1u << 1) | (1u << 2));
	/* an unknown flavor's quota is left out and counted */
	decode_ok(T("{\"quotas\":[{\"flavor\":\"a100\",\"nominal\":4},{\"flavor\":\"l4\",\"nominal\":4}]}"), &t);
	assert_int_equal(kerf_kobj_tenant_spec(&t, 0, &r, &spec, &unresolved, &err), 0);
	assert_int_equal(unresolved, 1);
	assert_int_equal(spec.quota.nominal.v[w.l4], 4000);
	/* a ceiling kerf does not know */
	decode_ok(T("{\"priorityCeiling\":{\"priorityClassName\":\"gold\"}}"), &t);
	assert_int_equal(kerf_kobj_tenant_spec(&t, 0, &r, &spec, NULL, &err), -KERF_ENOTFOUND);
	assert_string_equal(err.msg, "spec.priorityCeiling.priorityClassName: PriorityClass 'gold' is not known to kerf");
	/* nothing left to use */
	kerf_err_clear(&err);
	decode_ok(T("{\"allowedPriorityClasses\":[\"production\"],\"priorityCeiling\":{\"value\":50}}"), &t);
	assert_int_equal(kerf_kobj_tenant_spec(&t, 0, &r, &spec, NULL, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "spec.allowedPriorityClasses: no priority class kerf knows is left for the tenant to use");
	kerf_err_clear(&err);
	decode_ok(T("{\"priorityCeiling\":{\"value\":1}}"), &t);
	assert_int_equal(kerf_kobj_tenant_spec(&t, 0, &r, &spec, NULL, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "spec.priorityCeiling: no priority class kerf knows is left for the tenant to use");

	/* the state takes the specs: a tree, then an update */
	research = add_tenant(&w, "{\"metadata\":{\"name\":\"research\"},\"spec\":{"
			      "\"quotas\":[{\"flavor\":\"h100\",\"nominal\":16}]}}", KERF_TENANT_ROOT);
	team = add_tenant(&w, "{\"metadata\":{\"name\":\"team-a\"},\"spec\":{\"parent\":\"research\","
			  "\"quotas\":[{\"flavor\":\"h100\",\"nominal\":8,\"lendingLimit\":4}],"
			  "\"gpuHourBudget\":{\"gpuHours\":10,\"window\":\"24h\"},"
			  "\"idlePolicy\":{\"thresholdPercent\":5,\"grace\":\"30m\"}}}", research);
	assert_int_equal(w.st.tenants.t[team].parent, research);
	assert_int_equal(w.st.tenants.t[team].quota.nominal.v[w.h100], 8000);
	assert_int_equal(w.st.tenants.t[team].budget.limit_milli_ms, 10000LL * 3600000);
	assert_int_equal(w.st.tenants.t[team].idle.after_ms, 1800000);
	decode_ok("{\"metadata\":{\"name\":\"team-a\"},\"spec\":{\"parent\":\"research\","
		  "\"quotas\":[{\"flavor\":\"h100\",\"nominal\":\"12\"}],\"weight\":5}}", &t);
	assert_int_equal(kerf_kobj_tenant_spec(&t, research, &r, &spec, NULL, &err), 0);
	assert_int_equal(kerf_state_tenant_update(&w.st, team, &spec, &err), 0);
	assert_int_equal(w.st.tenants.t[team].quota.nominal.v[w.h100], 12000);
	assert_int_equal(w.st.tenants.t[team].weight, 5);
	kerf_state_release(&w.st);
}

/* --- status ---------------------------------------------------------- */

static void same_status(const struct kerf_kobj_tenant_status *a,
			const struct kerf_kobj_tenant_status *b)
{
	assert_int_equal(a->observed_generation, b->observed_generation);
	assert_int_equal(a->nr_conditions, b->nr_conditions);
	for (size_t i = 0; i < a->nr_conditions; i++) {
		assert_string_equal(a->conditions[i].type, b->conditions[i].type);
		assert_string_equal(a->conditions[i].status, b->conditions[i].status);
		assert_string_equal(a->conditions[i].reason, b->conditions[i].reason);
		assert_string_equal(a->conditions[i].message, b->conditions[i].message);
		assert_string_equal(a->conditions[i].last_transition,
				    b->conditions[i].last_transition);
		assert_int_equal(a->conditions[i].observed_generation,
				 b->conditions[i].observed_generation);
	}
	assert_int_equal(a->gpus_nominal, b->gpus_nominal);
	assert_int_equal(a->gpus_used, b->gpus_used);
	assert_int_equal(a->gpus_borrowed, b->gpus_borrowed);
	assert_int_equal(a->gpus_pending, b->gpus_pending);
	assert_int_equal(a->pending_workloads, b->pending_workloads);
	assert_int_equal(a->nr_usage, b->nr_usage);
	for (size_t i = 0; i < a->nr_usage; i++) {
		assert_string_equal(a->usage[i].flavor, b->usage[i].flavor);
		assert_int_equal(a->usage[i].used, b->usage[i].used);
		assert_int_equal(a->usage[i].borrowed, b->usage[i].borrowed);
	}
	assert_int_equal(a->has_budget, b->has_budget);
	assert_int_equal(a->budget_pct, b->budget_pct);
	assert_int_equal(a->averaged_at_ms, b->averaged_at_ms);
	assert_int_equal(a->nr_usage_avg, b->nr_usage_avg);
	for (size_t i = 0; i < a->nr_usage_avg; i++) {
		assert_string_equal(a->usage_avg[i].name, b->usage_avg[i].name);
		assert_int_equal(a->usage_avg[i].value, b->usage_avg[i].value);
	}
	assert_int_equal(a->budget_used_milli_ms, b->budget_used_milli_ms);
	assert_int_equal(a->budget_window_start_ms, b->budget_window_start_ms);
	assert_int_equal(a->budget_warned_pct, b->budget_warned_pct);
}

/* A world with team-a (8 H100 nominal) running 12 H100 and 1 L4, one pending. */
static int busy_world(struct world *w, int *research)
{
	struct kerf_workload wl = { .nr_sets = 1, .min_count = 2, .class_idx = 1 };
	struct kerf_wl_pod pods[2] = {
		{ .set = 0, .b = { .node = 0, .gpus = 0xff } },
		{ .set = 0, .b = { .node = 1, .gpus = 0x0f } },
	};
	struct kerf_err err = { 0 };
	int team;

	world_init(w);
	*research = add_tenant(w, "{\"metadata\":{\"name\":\"research\"},\"spec\":{"
			       "\"quotas\":[{\"flavor\":\"h100\",\"nominal\":16}],"
			       "\"gpuHourBudget\":{\"gpuHours\":100,\"window\":\"168h\"}}}",
			       KERF_TENANT_ROOT);
	team = add_tenant(w, "{\"metadata\":{\"name\":\"team-a\"},\"spec\":{\"parent\":\"research\","
			  "\"quotas\":[{\"flavor\":\"h100\",\"nominal\":8}],"
			  "\"gpuHourBudget\":{\"gpuHours\":50,\"window\":\"24h\"}}}", *research);
	wl.tenant = team;
	wl.sets[0] = (struct kerf_podset){
		.req = { .cpu_milli = 1000, .mem_mib = 1024, .nr_gpus = 8,
			 .gpu_milli = 1000 },
		.count = 2,
	};
	pods[1].b.gpus = 0xff;
	if (kerf_state_adopt(&w->st, "ns/train", &wl, 0, 0, pods, 2, &err) <= 0)
		fail_msg("adopt: %s", err.msg);
	wl.min_count = 1;
	wl.sets[0].count = 1;
	wl.sets[0].req.nr_gpus = 2;
	assert_true(kerf_state_submit(&w->st, "ns/wait", &wl, 5, &err) > 0);
	kerf_state_age(&w->st, 3600000);
	kerf_state_age(&w->st, 7200000);
	return team;
}

static void test_status_fill_and_round_trip(void **state)
{
	struct world w;
	struct kerf_kobj_tenant_status s, back;
	struct kerf_err err = { 0 };
	const char *flavors[KERF_MAX_RES] = { 0 };
	int research, team;
	json_t *o;
	char *text;

	(void)state;
	team = busy_world(&w, &research);
	flavors[w.h100] = "h100";
	memset(&s, 0, sizeof(s));
	s.observed_generation = 4;
	s.nr_conditions = 1;
	snprintf(s.conditions[0].type, sizeof(s.conditions[0].type), "Accepted");
	snprintf(s.conditions[0].status, sizeof(s.conditions[0].status), "True");
	snprintf(s.conditions[0].reason, sizeof(s.conditions[0].reason), "Applied");
	snprintf(s.conditions[0].message, sizeof(s.conditions[0].message), "quota \"x\"\n");
	snprintf(s.conditions[0].last_transition, sizeof(s.conditions[0].last_transition),
		 "2026-12-02T18:32:10Z");
	s.conditions[0].observed_generation = 4;
	kerf_kobj_tenant_status_fill(&w.st, team, flavors, &s);
	assert_int_equal(s.gpus_nominal, 8000);
	assert_int_equal(s.gpus_used, 16000);
	assert_int_equal(s.gpus_borrowed, 8000);
	assert_int_equal(s.gpus_pending, 2000);
	assert_int_equal(s.pending_workloads, 1);
	assert_true(s.nr_usage >= 3);
	assert_string_equal(s.usage[0].flavor, "cpu");
	assert_int_equal(s.usage[0].used, 2000);
	assert_string_equal(s.usage[1].flavor, "memory");
	assert_string_equal(s.usage[2].flavor, "h100");
	assert_int_equal(s.usage[2].used, 16000);
	assert_true(s.has_budget);
	assert_true(s.budget_used_milli_ms > 0);
	assert_int_equal(s.budget_pct, kerf_budget_used_pct(&w.st.tenants.t[team]));
	assert_true(s.nr_usage_avg > 0);
	assert_int_equal(s.averaged_at_ms, 7200000);

	o = kerf_kobj_tenant_status_encode(&s);
	assert_non_null(o);
	text = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
	assert_non_null(strstr(text, "\"gpus\":{\"borrowed\":\"8\",\"nominal\":\"8\",\"pending\":\"2\",\"used\":\"16\"}"));
	assert_non_null(strstr(text, "{\"borrowed\":\"0Mi\",\"flavor\":\"memory\",\"used\":\"2048Mi\"}"));
	assert_non_null(strstr(text, "\"usageAverage\":{\"cpu\":"));
	free(text);
	assert_int_equal(kerf_kobj_tenant_status_decode(o, &back, &err), 0);
	json_decref(o);
	same_status(&s, &back);

	/* the parent sees its subtree's pending work */
	kerf_kobj_tenant_status_fill(&w.st, research, NULL, &s);
	assert_int_equal(s.pending_workloads, 1);
	assert_int_equal(s.gpus_used, 16000);
	assert_string_equal(s.usage[2].flavor, "gpu:H100-80GB");
	kerf_state_release(&w.st);
}

/* Export -> status JSON -> persisted tenant -> import gives the same. */
static void test_history_survives_restart(void **state)
{
	struct world w, again;
	struct kerf_persist p, q;
	struct kerf_err err = { 0 };
	int research, team, t2, r2;

	(void)state;
	team = busy_world(&w, &research);
	assert_int_equal(kerf_state_export(&w.st, NULL, &p), 0);
	kerf_persist_init(&q);
	q.version = p.version;
	q.half_life_ms = p.half_life_ms;
	q.next_seq = p.next_seq;
	q.tenants = calloc(p.nr_tenants, sizeof(*q.tenants));
	assert_non_null(q.tenants);
	for (size_t i = 0; i < p.nr_tenants; i++) {
		struct kerf_kobj_tenant_status s, back;
		json_t *o;

		memset(&s, 0, sizeof(s));
		kerf_kobj_tenant_history_set(&s, &p.tenants[i], p.avg_at_ms);
		o = kerf_kobj_tenant_status_encode(&s);
		assert_non_null(o);
		assert_int_equal(kerf_kobj_tenant_status_decode(o, &back, &err), 0);
		json_decref(o);
		same_status(&s, &back);
		assert_int_equal(kerf_kobj_tenant_history_get(&back, p.tenants[i].name,
							      &q.tenants[i]), 0);
		q.nr_tenants++;
		q.avg_at_ms = back.averaged_at_ms;
		assert_string_equal(q.tenants[i].name, p.tenants[i].name);
		assert_int_equal(q.tenants[i].nr_usage_avg, p.tenants[i].nr_usage_avg);
		for (size_t k = 0; k < p.tenants[i].nr_usage_avg; k++) {
			assert_string_equal(q.tenants[i].usage_avg[k].name,
					    p.tenants[i].usage_avg[k].name);
			assert_int_equal(q.tenants[i].usage_avg[k].value,
					 p.tenants[i].usage_avg[k].value);
		}
		assert_int_equal(q.tenants[i].budget_used_milli_ms,
				 p.tenants[i].budget_used_milli_ms);
		assert_int_equal(q.tenants[i].budget_window_start_ms,
				 p.tenants[i].budget_window_start_ms);
		assert_int_equal(q.tenants[i].budget_warned_pct,
				 p.tenants[i].budget_warned_pct);
	}
	/* a restarted controller: the same tree, nothing accumulated */
	world_init(&again);
	r2 = add_tenant(&again, "{\"metadata\":{\"name\":\"research\"},\"spec\":{"
			"\"quotas\":[{\"flavor\":\"h100\",\"nominal\":16}],"
			"\"gpuHourBudget\":{\"gpuHours\":100,\"window\":\"168h\"}}}",
			KERF_TENANT_ROOT);
	t2 = add_tenant(&again, "{\"metadata\":{\"name\":\"team-a\"},\"spec\":{\"parent\":\"research\","
			"\"quotas\":[{\"flavor\":\"h100\",\"nominal\":8}],"
			"\"gpuHourBudget\":{\"gpuHours\":50,\"window\":\"24h\"}}}", r2);
	if (kerf_state_import(&again.st, NULL, &q, &err) != 0)
		fail_msg("import: %s", err.msg);
	assert_int_equal(again.st.avg_at_ms, w.st.avg_at_ms);
	for (int i = 0; i < w.st.tenants.nr_res; i++) {
		assert_int_equal(again.st.usage_avg[t2].v[i], w.st.usage_avg[team].v[i]);
		assert_int_equal(again.st.usage_avg[r2].v[i], w.st.usage_avg[research].v[i]);
	}
	assert_int_equal(again.st.tenants.t[t2].budget.used_milli_ms,
			 w.st.tenants.t[team].budget.used_milli_ms);
	assert_int_equal(again.st.tenants.t[t2].budget.window_start_ms,
			 w.st.tenants.t[team].budget.window_start_ms);
	assert_int_equal(again.st.tenants.t[r2].budget.warned_pct,
			 w.st.tenants.t[research].budget.warned_pct);
	kerf_persist_release(&p);
	kerf_persist_release(&q);
	kerf_state_release(&w.st);
	kerf_state_release(&again.st);
}

static void status_err(const char *text, const char *want)
{
	struct kerf_kobj_tenant_status s;
	struct kerf_err err = { 0 };
	json_t *o = load(text);
	int rc = kerf_kobj_tenant_status_decode(o, &s, &err);

	json_decref(o);
	if (rc != -KERF_EINVAL || strcmp(err.msg, want))
		fail_msg("for %s\n  got  %d '%s'\n  want '%s'", text, rc, err.msg, want);
}

static void test_status_errors(void **state)
{
	struct kerf_kobj_tenant_status s;

	(void)state;
	assert_int_equal(kerf_kobj_tenant_status_decode(NULL, &s, NULL), 0);
	assert_int_equal(s.nr_usage, 0);
	status_err("[]", "status: must be an object, not an array");
	status_err("{\"observedGeneration\":-1}",
		   "status.observedGeneration: must be an integer from 0 to 9223372036854775807, not -1");
	status_err("{\"conditions\":[{\"status\":\"True\"}]}", "status.conditions[0].type: must be a string, not null");
	status_err("{\"conditions\":[{\"type\":\"\",\"status\":\"True\"}]}", "status.conditions[0].type: must not be empty");
	status_err("{\"conditions\":[{\"type\":\"A\",\"status\":\"yes\"}]}",
		   "status.conditions[0].status: must be one of True, False, Unknown, not 'yes'");
	status_err("{\"conditions\":[{\"type\":\"A\\u0007\",\"status\":\"True\"},{\"type\":\"A\\u0007\",\"status\":\"True\"}]}",
		   "status.conditions[1]: type 'A\\x07' is listed twice");
	status_err("{\"conditions\":[{\"type\":\"A\",\"status\":\"True\",\"reason\":7}]}",
		   "status.conditions[0].reason: must be a string, not 7");
	status_err("{\"conditions\":[1,2,3,4,5,6,7,8,9]}",
		   "status.conditions: must have at most 8 entries, not 9");
	status_err("{\"gpus\":{\"used\":\"-1\"}}", "status.gpus.used: must be GPUs from 0 to 9223372036854775.807, not '-1'");
	status_err("{\"pendingWorkloads\":\"1\"}",
		   "status.pendingWorkloads: must be an integer from 0 to 9223372036854775807, not '1'");
	status_err("{\"usage\":[{\"used\":\"1\"}]}", "status.usage[0].flavor: is required");
	status_err("{\"usage\":[{\"flavor\":\"h\",\"used\":\"x\"}]}",
		   "status.usage[0].used: must be a quantity of a quantity (digits with a suffix such as 500m, 16Gi or 2e3), not 'x'");
	status_err("{\"budgetUsed\":{\"percent\":-3}}",
		   "status.budgetUsed.percent: must be an integer from 0 to 2147483647, not -3");
	status_err("{\"history\":{\"usageAverage\":{\"cpu\":-1}}}",
		   "status.history.usageAverage.cpu: must be an integer from 0 to 4611686018427387904, not -1");
	status_err("{\"history\":{\"usageAverage\":{\"gpu:\\u001baaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\":1}}}",
		   "status.history.usageAverage.gpu:\\x1baaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa: a dimension name is 1 to 47 bytes");
	status_err("{\"history\":{\"budgetWarnedPercent\":101}}",
		   "status.history.budgetWarnedPercent: must be an integer from 0 to 100, not 101");
	status_err("{\"history\":{\"averagedAtMs\":9007199254740993}}",
		   "status.history.averagedAtMs: must be an integer from -9007199254740992 to 9007199254740992, not 9007199254740993");
}

static void test_format_milli(void **state)
{
	char b[KERF_KOBJ_QTY_TEXT_MAX];

	(void)state;
	assert_string_equal(kerf_kobj_format_milli(b, sizeof(b), 0), "0");
	assert_string_equal(kerf_kobj_format_milli(b, sizeof(b), 12000), "12");
	assert_string_equal(kerf_kobj_format_milli(b, sizeof(b), 2500), "2.5");
	assert_string_equal(kerf_kobj_format_milli(b, sizeof(b), 250), "0.25");
	assert_string_equal(kerf_kobj_format_milli(b, sizeof(b), 1), "0.001");
	assert_string_equal(kerf_kobj_format_milli(b, sizeof(b), 1010), "1.01");
	assert_string_equal(kerf_kobj_format_milli(b, sizeof(b), INT64_MAX),
			    "9223372036854775.807");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_quantities_and_durations),
		cmocka_unit_test(test_errors_meta),
		cmocka_unit_test(test_errors_spec),
		cmocka_unit_test(test_errors_quotas),
		cmocka_unit_test(test_errors_budget_idle),
		cmocka_unit_test(test_spec),
		cmocka_unit_test(test_status_fill_and_round_trip),
		cmocka_unit_test(test_history_survives_restart),
		cmocka_unit_test(test_status_errors),
		cmocka_unit_test(test_format_milli),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
