/*
 * tenants: GET /api/v1/tenants (view/view.h), from the core alone.
 */
#include "view/view.h"

#include <stdlib.h>

#include "core/budget.h"
#include "view/api_json.h"

static const char *isolation_name(unsigned i)
{
	return i == KERF_ISOLATION_TENANT ? "Tenant" : i == KERF_ISOLATION_HARDWARE ? "Hardware" : "Shared";
}

/* --- tenants --------------------------------------------------------------- */

static json_t *budget_json(const struct kerf_tenant *t, int *rc)
{
	const struct kerf_budget *b = &t->budget;
	json_t *o;

	if (b->limit_milli_ms <= 0)
		return json_null();
	o = json_object();
	/* GPU milli x ms: 3.6e9 of them make one GPU-hour */
	kerf_api_put(o, "limitGPUHours", json_real((double)b->limit_milli_ms / 3.6e9), rc);
	kerf_api_put(o, "usedGPUHours", json_real((double)b->used_milli_ms / 3.6e9), rc);
	kerf_api_put(o, "usedPercent", json_integer(kerf_budget_used_pct(t)), rc);
	kerf_api_put(o, "windowSeconds", json_integer(b->window_ms / 1000), rc);
	kerf_api_put(o, "windowStart", kerf_api_time(b->window_start_ms), rc);
	kerf_api_put(o, "action", json_string(b->action == KERF_BUDGET_HOLD ? "Hold" : "PreemptibleOnly"), rc);
	return o;
}

static json_t *flavors_json(const struct kerf_state *st, const struct kerf_tenant *t,
			    int *rc)
{
	json_t *a = json_array();

	for (size_t m = 0; m < st->cluster.nr_models; m++) {
		int i = kerf_res_gpu((int)m);
		json_t *o = json_object();
		int64_t use = t->usage.v[i], nom = t->quota.nominal.v[i];

		kerf_api_put(o, "flavor", kerf_api_str(st->cluster.models[m].name), rc);
		kerf_api_put(o, "nominalGPUMilli", kerf_api_qty(nom), rc);
		kerf_api_put(o, "borrowingLimitGPUMilli", kerf_api_qty(t->quota.borrow_limit.v[i]), rc);
		kerf_api_put(o, "lendingLimitGPUMilli", kerf_api_qty(t->quota.lend_limit.v[i]), rc);
		kerf_api_put(o, "usageGPUMilli", json_integer(use), rc);
		kerf_api_put(o, "borrowedGPUMilli", json_integer(use > nom ? use - nom : 0), rc);
		kerf_api_push(a, o, rc);
	}
	return a;
}

int kerf_view_tenants(const struct kerf_state *st, json_t **out)
{
	const struct kerf_tenants *tt = &st->tenants;
	/* leaves count workloads: each tenant shows its subtree's */
	uint64_t *sum = calloc(3 * (tt->nr ? tt->nr : 1), sizeof(*sum));
	json_t *o, *items;
	int rc = 0;

	if (!sum)
		return -KERF_ENOMEM;
	for (size_t t = tt->nr; t-- > 0;) {
		const struct kerf_tenant *tn = &tt->t[t];

		sum[3 * t] += tn->nr_workloads;
		sum[3 * t + 1] += tn->nr_pending;
		sum[3 * t + 2] += (uint64_t)(tn->pending_gpu_milli > 0 ? tn->pending_gpu_milli : 0);
		if (tn->parent >= 0)
			for (int k = 0; k < 3; k++)
				sum[3 * (size_t)tn->parent + (size_t)k] += sum[3 * t + (size_t)k];
	}
	o = kerf_api_list("TenantList", &rc);
	items = json_array();
	for (size_t t = 0; t < tt->nr; t++) {
		const struct kerf_tenant *tn = &tt->t[t];
		json_t *i;

		if (tn->removed)
			continue;
		i = json_object();
		kerf_api_put(i, "name", kerf_api_str(tn->name), &rc);
		kerf_api_put(i, "parent", tn->parent >= 0 ? kerf_api_str(tt->t[tn->parent].name) : json_null(), &rc);
		kerf_api_put(i, "leaf", json_boolean(kerf_tenant_is_leaf(tn)), &rc);
		kerf_api_put(i, "weight", json_integer(tn->weight), &rc);
		kerf_api_put(i, "isolation", json_string(isolation_name(tn->isolation)), &rc);
		kerf_api_put(i, "workloads", json_integer((json_int_t)sum[3 * t]), &rc);
		kerf_api_put(i, "pending", json_integer((json_int_t)sum[3 * t + 1]), &rc);
		kerf_api_put(i, "pendingGPUMilli", json_integer((json_int_t)sum[3 * t + 2]), &rc);
		kerf_api_put(i, "flavors", flavors_json(st, tn, &rc), &rc);
		kerf_api_put(i, "budget", budget_json(tn, &rc), &rc);
		kerf_api_push(items, i, &rc);
	}
	kerf_api_put(o, "items", items, &rc);
	free(sum);
	*out = o;
	return rc;
}
