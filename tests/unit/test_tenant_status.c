/*
 * test_tenant_status: a Tenant's status as kerf serve writes it (what the
 * core holds, the history with it, vanished usage dimensions written as 0,
 * conditions kept) and the history restored into a new world's core.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/persist.h"
#include "serve/tenant_status.h"
#include "serve/tenants.h"

static const char tenant_json[] =
	"{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"team-a\",\"generation\":3},"
	"\"spec\":{\"weight\":1},"
	"\"status\":{\"observedGeneration\":2,\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"Ok\",\"message\":\"m\","
	"\"lastTransitionTime\":\"2026-12-02T18:32:10Z\"}],"
	"\"history\":{\"averagedAtMs\":1000,\"budgetUsedMilliMs\":5,\"budgetWindowStartMs\":0,\"budgetWarnedPercent\":0,"
	"\"usageAverage\":{\"cpu\":700,\"gpu:gone\":9}}}}";

static struct kerf_ctenant *ctenant(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	struct kerf_err err = { 0 };
	struct kerf_ctenant *ct;

	assert_non_null(j);
	ct = kerf_ctenant_decode(j, &err);
	json_decref(j);
	if (!ct)
		fail_msg("decode: %s", err.msg);
	return ct;
}

static struct kerf_world *world_with(const struct kerf_ctenant *ct)
{
	struct kerf_world_config cfg = { .scheduler_name = "kerf", .policy = "kerf", .seed = 1 };
	struct kerf_world *w;
	struct kerf_err err = { 0 };

	assert_int_equal(kerf_world_new(&cfg, &w, &err), 0);
	if (kerf_serve_tenant_set(w, &ct->t, &err) < 0)
		fail_msg("tenant: %s", err.msg);
	return w;
}

static void test_patch(void **state)
{
	struct kerf_ctenant *ct = ctenant(tenant_json);
	struct kerf_world *w = world_with(ct);
	char *body = NULL;
	json_t *p, *st, *avg;

	(void)state;
	assert_non_null(ct->status);
	assert_int_equal(kerf_ctenant_status_patch(kerf_world_state(w), ct, &body), 0);
	assert_non_null(body);
	p = json_loads(body, 0, NULL);
	assert_non_null(p);
	st = json_object_get(p, "status");
	assert_int_equal(json_integer_value(json_object_get(st, "observedGeneration")), 3);
	assert_string_equal(json_string_value(json_object_get(json_object_get(st, "gpus"), "used")), "0");
	/* the condition kept; the vanished dimensions written as 0 */
	assert_int_equal(json_array_size(json_object_get(st, "conditions")), 1);
	avg = json_object_get(json_object_get(st, "history"), "usageAverage");
	assert_int_equal(json_integer_value(json_object_get(avg, "cpu")), 0);
	assert_int_equal(json_integer_value(json_object_get(avg, "gpu:gone")), 0);
	json_decref(p);
	free(body);
	/* a tenant the core does not know: no patch */
	{
		struct kerf_ctenant *x = ctenant(
			"{\"metadata\":{\"name\":\"nobody\"},\"spec\":{\"weight\":1}}");

		assert_int_equal(kerf_ctenant_status_patch(kerf_world_state(w), x, &body), 0);
		assert_null(body);
		kerf_ctenant_free(x);
	}
	kerf_world_free(w);
	kerf_ctenant_free(ct);
}

static void test_restore(void **state)
{
	struct kerf_ctenant *ct = ctenant(tenant_json);
	struct kerf_world *w = world_with(ct);
	struct kerf_persist_tenant pt = { 0 };
	struct kerf_err err = { 0 };
	const struct kerf_state *st = kerf_world_state(w);
	int t = kerf_tenants_find(&st->tenants, "team-a");

	(void)state;
	/* "gpu:gone" names no dimension of this cluster: skipped */
	assert_int_equal(kerf_ctenant_restore(w, ct, &err), 1);
	assert_int_equal(kerf_state_export_tenant(st, t, &pt), 0);
	assert_int_equal(pt.nr_usage_avg, 1);
	assert_string_equal(pt.usage_avg[0].name, "cpu");
	assert_int_equal(pt.usage_avg[0].value, 700);
	assert_int_equal(pt.budget_used_milli_ms, 5);
	free(pt.name);
	free(pt.usage_avg);
	/* no status: nothing to restore */
	{
		struct kerf_ctenant *x = ctenant(
			"{\"metadata\":{\"name\":\"team-a\"},\"spec\":{\"weight\":1}}");

		assert_null(x->status);
		assert_int_equal(kerf_ctenant_restore(w, x, &err), 0);
		kerf_ctenant_free(x);
	}
	/* a status kerf cannot read is not trusted, and says why */
	{
		struct kerf_ctenant *x = ctenant(
			"{\"metadata\":{\"name\":\"team-a\"},\"spec\":{\"weight\":1},"
			"\"status\":{\"history\":{\"usageAverage\":{\"cpu\":-1}}}}");

		assert_null(x->status);
		assert_non_null(strstr(x->status_error, "status.history.usageAverage.cpu"));
		kerf_ctenant_free(x);
	}
	kerf_world_free(w);
	kerf_ctenant_free(ct);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patch),
		cmocka_unit_test(test_restore),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
