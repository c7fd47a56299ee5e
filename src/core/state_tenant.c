/*
 * state_tenant: tenants added, changed and removed while the state runs.
 */
#include "core/state.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/assert.h"
#include "base/grow.h"
#include "core/state_int.h"

/* --- tenants --------------------------------------------------------- */

static int check_tenant_spec(const struct kerf_state *st, int self,
			     const struct kerf_tenant_spec *spec,
			     struct kerf_err *err)
{
	const char *name = spec->name ? spec->name : "";

	if (spec->weight < 1)
		return kerf_err_set(err, -KERF_EINVAL,
				    "tenant '%s': weight must be at least 1", name);
	if (spec->isolation >= KERF_ISOLATION_COUNT_)
		return kerf_err_set(err, -KERF_EINVAL,
				    "tenant '%s': unknown isolation level", name);
	if (spec->budget_limit_milli_ms < 0 || spec->budget_window_ms < 0)
		return kerf_err_set(err, -KERF_EINVAL,
				    "tenant '%s': budget limit and window must not be negative",
				    name);
	if (spec->idle.below_pct < 0 || spec->idle.below_pct > 100 ||
	    spec->idle.after_ms < 0)
		return kerf_err_set(err, -KERF_EINVAL,
				    "tenant '%s': idle policy: threshold 0..100 %%, duration not negative",
				    name);
	for (int m = 0; m < KERF_MAX_MODELS; m++)
		if (spec->budget_model_weight_pct[m] < 0 ||
		    spec->budget_model_weight_pct[m] > 100000)
			return kerf_err_set(err, -KERF_EINVAL,
					    "tenant '%s': budget weight of model %d must be 0..100000 %%",
					    name, m);
	(void)st;
	(void)self;
	return 0;
}

/* Everything of spec but name, parent and quota onto tenant x. */
static void apply_tenant_spec(struct kerf_tenant *x,
			      const struct kerf_tenant_spec *spec)
{
	x->weight = spec->weight;
	x->allowed_classes = spec->allowed_classes;
	x->isolation = spec->isolation;
	x->budget.limit_milli_ms = spec->budget_limit_milli_ms;
	x->budget.window_ms = spec->budget_window_ms;
	x->budget.action = spec->budget_action;
	memcpy(x->budget.model_weight_pct, spec->budget_model_weight_pct,
	       sizeof(x->budget.model_weight_pct));
	x->idle = spec->idle;
}

void kerf_state_tenant_spec(const struct kerf_state *st, int t,
			    struct kerf_tenant_spec *spec)
{
	const struct kerf_tenant *x = &st->tenants.t[t];

	memset(spec, 0, sizeof(*spec));
	spec->name = x->name;
	spec->parent = x->parent;
	spec->quota = x->quota;
	spec->weight = x->weight;
	spec->allowed_classes = x->allowed_classes;
	spec->isolation = x->isolation;
	spec->budget_limit_milli_ms = x->budget.limit_milli_ms;
	spec->budget_window_ms = x->budget.window_ms;
	spec->budget_action = x->budget.action;
	memcpy(spec->budget_model_weight_pct, x->budget.model_weight_pct,
	       sizeof(spec->budget_model_weight_pct));
	spec->idle = x->idle;
}

int kerf_state_tenant_add(struct kerf_state *st,
			  const struct kerf_tenant_spec *spec,
			  struct kerf_err *err)
{
	struct kerf_tenants *tt = &st->tenants;
	int rc = check_tenant_spec(st, -1, spec, err), t;

	if (rc < 0)
		return rc;
	if (spec->parent >= 0 && (size_t)spec->parent < tt->nr &&
	    !tt->t[spec->parent].removed && spec->parent != KERF_TENANT_ROOT &&
	    kerf_tenant_is_leaf(&tt->t[spec->parent]) &&
	    tt->t[spec->parent].nr_workloads > 0)
		return kerf_err_set(err, -KERF_EBUSY,
				    "tenant '%s': parent '%s' has workloads of its own and cannot take children",
				    spec->name, tt->t[spec->parent].name);
	if (spec->parent >= 0 && (size_t)spec->parent < tt->nr &&
	    tt->t[spec->parent].removed)
		return kerf_err_set(err, -KERF_EINVAL,
				    "tenant '%s': parent was removed", spec->name);
	if (kerf_state_grow_tenants(st, tt->nr + 1) < 0)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	t = kerf_tenants_add(tt, spec->name, spec->parent, &spec->quota,
			     spec->weight, err);
	if (t < 0)
		return t;
	apply_tenant_spec(&tt->t[t], spec);
	tt->t[t].budget.window_start_ms = st->avg_at_ms;
	rc = kerf_tenants_validate_one(tt, t, &st->cluster, err);
	if (rc < 0) {
		kerf_tenants_pop(tt);
		return rc;
	}
	memset(&st->usage_avg[t], 0, sizeof(st->usage_avg[t]));
	return t;
}

int kerf_state_tenant_update(struct kerf_state *st, int t,
			     const struct kerf_tenant_spec *spec,
			     struct kerf_err *err)
{
	struct kerf_tenants *tt = &st->tenants;
	struct kerf_tenant before;
	int rc;

	if (t <= KERF_TENANT_ROOT || (size_t)t >= tt->nr || tt->t[t].removed)
		return kerf_err_set(err, -KERF_ENOTFOUND, "tenant %d: not found", t);
	if ((spec->name && strcmp(spec->name, tt->t[t].name) != 0) ||
	    spec->parent != tt->t[t].parent)
		return kerf_err_set(err, -KERF_EINVAL,
				    "tenant '%s': name and parent cannot change (remove it and add it again)",
				    tt->t[t].name);
	rc = check_tenant_spec(st, t, spec, err);
	if (rc < 0)
		return rc;
	before = tt->t[t];
	apply_tenant_spec(&tt->t[t], spec);
	if (kerf_tenants_set_quota(tt, t, &spec->quota) < 0 ||
	    (rc = kerf_tenants_validate_one(tt, t, &st->cluster, err)) < 0) {
		tt->t[t] = before;
		kerf_tenants_set_quota(tt, t, &before.quota);
		return rc < 0 ? rc : kerf_err_set(err, -KERF_EINVAL,
						  "tenant '%s': quota refused",
						  tt->t[t].name);
	}
	return 0;
}

int kerf_state_tenant_remove(struct kerf_state *st, int t, struct kerf_err *err)
{
	struct kerf_tenants *tt = &st->tenants;

	if (t <= KERF_TENANT_ROOT || (size_t)t >= tt->nr || tt->t[t].removed)
		return kerf_err_set(err, -KERF_ENOTFOUND, "tenant %d: not found", t);
	if (tt->t[t].nr_children || tt->t[t].nr_workloads)
		return kerf_err_set(err, -KERF_EBUSY,
				    "tenant '%s': has %d children and %u workloads",
				    tt->t[t].name, tt->t[t].nr_children,
				    tt->t[t].nr_workloads);
	kerf_tenants_remove(tt, t);
	memset(&st->usage_avg[t], 0, sizeof(st->usage_avg[t]));
	if (st->reserver_id) {
		const struct kerf_workload *r = kerf_state_find(st, st->reserver_id);

		if (!r)
			st->reserver_id = 0;
	}
	return 0;
}
