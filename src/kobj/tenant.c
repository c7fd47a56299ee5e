/*
 * kobj/tenant: the Tenant custom resource, decoded field by field, turned
 * into the core's tenant spec, and its status written and read back.
 */
#include "kobj/tenant.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "core/budget.h"

static const char *const isolation_names[] = {
	[KERF_ISOLATION_SHARED] = "Shared",
	[KERF_ISOLATION_TENANT] = "Tenant",
	[KERF_ISOLATION_HARDWARE] = "Hardware",
};
static const char *const exhaustion_names[] = {
	[KERF_BUDGET_HOLD] = "Hold",
	[KERF_BUDGET_PREEMPTIBLE_ONLY] = "PreemptibleOnly",
};
/* idlePolicy.action i is enum kerf_idle_action i + 1 */
static const char *const idle_names[] = { "Notify", "CheckpointEvict" };

enum kerf_kobj_unit kerf_kobj_flavor_unit(const char *flavor)
{
	if (!strcmp(flavor, "cpu"))
		return KERF_KOBJ_MILLI;
	if (!strcmp(flavor, "memory"))
		return KERF_KOBJ_MIB;
	return KERF_KOBJ_MILLI;
}

static bool is_gpu_flavor(const char *flavor)
{
	return strcmp(flavor, "cpu") && strcmp(flavor, "memory");
}

/* One quantity of a flavor's quota, in the flavor's unit and bounds. */
static int get_flavor_qty(const json_t *v, const char *path, const char *flavor,
			  int64_t *out, struct kerf_err *err)
{
	if (!strcmp(flavor, "cpu"))
		return kerf_kobj_get_quantity(v, path, KERF_KOBJ_MILLI, 0,
					      KERF_MAX_CPU_MILLI, "cores", out, err);
	if (!strcmp(flavor, "memory"))
		return kerf_kobj_get_quantity(v, path, KERF_KOBJ_MIB, 0,
					      KERF_MAX_MEM_MIB, "bytes", out, err);
	return kerf_kobj_get_quantity(v, path, KERF_KOBJ_MILLI, 0,
				      KERF_KOBJ_MAX_QUOTA_GPU_MILLI, "GPUs", out, err);
}

static int dec_quota(const json_t *o, const char *p, struct kerf_kobj_tenant *t,
		     struct kerf_err *err)
{
	struct kerf_kobj_quota *q = &t->quotas[t->nr_quotas];
	char f[KERF_KOBJ_PATH_MAX];
	const json_t *v;
	int rc = kerf_kobj_need_object(o, p, err);

	kerf_kobj_path(f, sizeof(f), p, "flavor");
	if (rc == 0)
		rc = kerf_kobj_required(kerf_kobj_field(o, "flavor"), f, err);
	if (rc == 0)
		rc = kerf_kobj_get_name(kerf_kobj_field(o, "flavor"), f, false,
					q->flavor, err);
	for (size_t k = 0; rc == 0 && k < t->nr_quotas; k++)
		if (!strcmp(t->quotas[k].flavor, q->flavor))
			rc = kerf_kobj_fail(err, f, "'%s' is listed twice", q->flavor);
	if (rc < 0)
		return rc;
	kerf_kobj_path(f, sizeof(f), p, "nominal");
	rc = kerf_kobj_required(kerf_kobj_field(o, "nominal"), f, err);
	if (rc == 0)
		rc = get_flavor_qty(kerf_kobj_field(o, "nominal"), f, q->flavor,
				    &q->nominal, err);
	q->borrow_limit = q->lend_limit = KERF_QTY_INF;
	if (rc == 0 && (v = kerf_kobj_field(o, "borrowingLimit")))
		rc = get_flavor_qty(v, kerf_kobj_path(f, sizeof(f), p, "borrowingLimit"),
				    q->flavor, &q->borrow_limit, err);
	if (rc == 0 && (v = kerf_kobj_field(o, "lendingLimit"))) {
		kerf_kobj_path(f, sizeof(f), p, "lendingLimit");
		rc = get_flavor_qty(v, f, q->flavor, &q->lend_limit, err);
		if (rc == 0 && q->lend_limit > q->nominal) {
			char shown[72];

			rc = kerf_kobj_fail(err, f, "must be at most nominal, not %s",
					    kerf_kobj_show(shown, sizeof(shown), v));
		}
	}
	if (rc == 0)
		t->nr_quotas++;
	return rc;
}

static int dec_quotas(const json_t *v, struct kerf_kobj_tenant *t,
		      struct kerf_err *err)
{
	int rc = kerf_kobj_need_array(v, "spec.quotas", KERF_KOBJ_MAX_QUOTAS, err);

	for (size_t i = 0; rc == 0 && i < json_array_size(v); i++) {
		char p[KERF_KOBJ_PATH_MAX];

		snprintf(p, sizeof(p), "spec.quotas[%zu]", i);
		rc = dec_quota(json_array_get(v, i), p, t, err);
	}
	return rc;
}

static int dec_ceiling(const json_t *o, struct kerf_kobj_tenant *t,
		       struct kerf_err *err)
{
	const json_t *name = kerf_kobj_field(o, "priorityClassName");
	const json_t *value = kerf_kobj_field(o, "value");
	int64_t x;
	int rc = kerf_kobj_need_object(o, "spec.priorityCeiling", err);

	if (rc < 0)
		return rc;
	if (!name == !value)
		return kerf_kobj_fail(err, "spec.priorityCeiling",
				      "give exactly one of priorityClassName and value");
	t->has_ceiling = true;
	if (name)
		return kerf_kobj_get_name(name, "spec.priorityCeiling.priorityClassName",
					  false, t->ceiling_class, err);
	rc = kerf_kobj_get_int(value, "spec.priorityCeiling.value", INT32_MIN,
			       INT32_MAX, &x, err);
	t->ceiling_value = (int32_t)x;
	return rc;
}

static int dec_flavor_weights(const json_t *v, struct kerf_kobj_tenant *t,
			      struct kerf_err *err)
{
	const char *path = "spec.gpuHourBudget.flavorWeights";
	int rc = kerf_kobj_need_array(v, path, KERF_KOBJ_MAX_FLAVOR_WEIGHTS, err);

	for (size_t i = 0; rc == 0 && i < json_array_size(v); i++) {
		struct kerf_kobj_flavor_weight *w = &t->flavor_weights[i];
		const json_t *o = json_array_get(v, i);
		char p[KERF_KOBJ_PATH_MAX], f[KERF_KOBJ_PATH_MAX];
		int64_t milli = 0;

		snprintf(p, sizeof(p), "%s[%zu]", path, i);
		rc = kerf_kobj_need_object(o, p, err);
		kerf_kobj_path(f, sizeof(f), p, "flavor");
		if (rc == 0)
			rc = kerf_kobj_required(kerf_kobj_field(o, "flavor"), f, err);
		if (rc == 0)
			rc = kerf_kobj_get_name(kerf_kobj_field(o, "flavor"), f,
						false, w->flavor, err);
		if (rc == 0 && !is_gpu_flavor(w->flavor))
			rc = kerf_kobj_fail(err, f, "must name a GPUPool, not '%s'",
					    w->flavor);
		for (size_t k = 0; rc == 0 && k < i; k++)
			if (!strcmp(t->flavor_weights[k].flavor, w->flavor))
				rc = kerf_kobj_fail(err, f, "'%s' is listed twice",
						    w->flavor);
		kerf_kobj_path(f, sizeof(f), p, "weight");
		if (rc == 0)
			rc = kerf_kobj_required(kerf_kobj_field(o, "weight"), f, err);
		if (rc == 0)
			rc = kerf_kobj_get_quantity(kerf_kobj_field(o, "weight"), f,
						    KERF_KOBJ_MILLI, 0, 100000,
						    "a weight", &milli, err);
		if (rc == 0 && milli % 10)
			rc = kerf_kobj_fail(err, f, "must have at most two decimals");
		w->pct = (int32_t)(milli / 10);
		if (rc == 0)
			t->nr_flavor_weights = i + 1;
	}
	return rc;
}

static int dec_budget(const json_t *o, struct kerf_kobj_tenant *t,
		      struct kerf_err *err)
{
	const json_t *v;
	int64_t milli_hours = 0;
	int e = 0;
	int rc = kerf_kobj_need_object(o, "spec.gpuHourBudget", err);

	if (rc == 0)
		rc = kerf_kobj_required(kerf_kobj_field(o, "gpuHours"),
					"spec.gpuHourBudget.gpuHours", err);
	if (rc == 0)
		rc = kerf_kobj_get_quantity(kerf_kobj_field(o, "gpuHours"),
					    "spec.gpuHourBudget.gpuHours",
					    KERF_KOBJ_MILLI, 1,
					    KERF_KOBJ_MAX_BUDGET_MILLI_HOURS,
					    "GPU-hours", &milli_hours, err);
	/* 1e12 milli-hours x 3.6e6 ms stays within int64 */
	t->budget_limit_milli_ms = milli_hours * 3600000;
	if (rc == 0)
		rc = kerf_kobj_required(kerf_kobj_field(o, "window"),
					"spec.gpuHourBudget.window", err);
	if (rc == 0)
		rc = kerf_kobj_get_duration(kerf_kobj_field(o, "window"),
					    "spec.gpuHourBudget.window",
					    &t->budget_window_ms, err);
	if (rc == 0 && (v = kerf_kobj_field(o, "onExhaustion")))
		rc = kerf_kobj_get_enum(v, "spec.gpuHourBudget.onExhaustion",
					exhaustion_names, 2, &e, err);
	t->budget_action = (enum kerf_budget_action)e;
	if (rc == 0 && (v = kerf_kobj_field(o, "flavorWeights")))
		rc = dec_flavor_weights(v, t, err);
	return rc;
}

static int dec_idle(const json_t *o, struct kerf_kobj_tenant *t,
		    struct kerf_err *err)
{
	const json_t *v;
	int64_t pct = 0;
	int a = 0;
	int rc = kerf_kobj_need_object(o, "spec.idlePolicy", err);

	if (rc == 0)
		rc = kerf_kobj_required(kerf_kobj_field(o, "thresholdPercent"),
					"spec.idlePolicy.thresholdPercent", err);
	if (rc == 0)
		rc = kerf_kobj_get_int(kerf_kobj_field(o, "thresholdPercent"),
				       "spec.idlePolicy.thresholdPercent", 0, 100,
				       &pct, err);
	t->idle_below_pct = (int32_t)pct;
	if (rc == 0)
		rc = kerf_kobj_required(kerf_kobj_field(o, "grace"),
					"spec.idlePolicy.grace", err);
	if (rc == 0)
		rc = kerf_kobj_get_duration(kerf_kobj_field(o, "grace"),
					    "spec.idlePolicy.grace",
					    &t->idle_after_ms, err);
	if (rc == 0 && (v = kerf_kobj_field(o, "action")))
		rc = kerf_kobj_get_enum(v, "spec.idlePolicy.action", idle_names,
					2, &a, err);
	t->idle_action = (enum kerf_idle_action)(a + 1);
	if (rc == 0 && (v = kerf_kobj_field(o, "exemptPriorityClasses")))
		rc = kerf_kobj_get_name_set(v, "spec.idlePolicy.exemptPriorityClasses",
					    KERF_MAX_CLASSES, t->idle_exempt,
					    &t->nr_idle_exempt, err);
	return rc;
}

static int dec_spec(const json_t *spec, struct kerf_kobj_tenant *t,
		    struct kerf_err *err)
{
	const json_t *v;
	int64_t x;
	int e;
	int rc = kerf_kobj_need_object(spec, "spec", err);

	if (rc == 0 && (v = kerf_kobj_field(spec, "parent"))) {
		rc = kerf_kobj_get_name(v, "spec.parent", false, t->parent, err);
		if (rc == 0 && !strcmp(t->parent, t->name))
			rc = kerf_kobj_fail(err, "spec.parent",
					    "a tenant cannot be its own parent");
		if (rc == 0 && !strcmp(t->parent, "cluster"))
			rc = kerf_kobj_fail(err, "spec.parent",
					    "'cluster' is the root: leave parent out for a top-level tenant");
	}
	if (rc == 0 && (v = kerf_kobj_field(spec, "weight"))) {
		rc = kerf_kobj_get_int(v, "spec.weight", 1, 1000000, &x, err);
		t->weight = (uint32_t)x;
	}
	if (rc == 0 && (v = kerf_kobj_field(spec, "quotas")))
		rc = dec_quotas(v, t, err);
	if (rc == 0 && (v = kerf_kobj_field(spec, "allowedPriorityClasses")))
		rc = kerf_kobj_get_name_set(v, "spec.allowedPriorityClasses",
					    KERF_MAX_CLASSES, t->allowed_classes,
					    &t->nr_allowed_classes, err);
	if (rc == 0 && (v = kerf_kobj_field(spec, "priorityCeiling")))
		rc = dec_ceiling(v, t, err);
	if (rc == 0 && (v = kerf_kobj_field(spec, "isolation")) &&
	    (rc = kerf_kobj_get_enum(v, "spec.isolation", isolation_names,
				     KERF_ISOLATION_COUNT_, &e, err)) == 0)
		t->isolation = (enum kerf_isolation)e;
	if (rc == 0 && (v = kerf_kobj_field(spec, "gpuHourBudget")))
		rc = dec_budget(v, t, err);
	if (rc == 0 && (v = kerf_kobj_field(spec, "idlePolicy")))
		rc = dec_idle(v, t, err);
	if (rc == 0 && (v = kerf_kobj_field(spec, "networkClass")))
		rc = kerf_kobj_get_name(v, "spec.networkClass", true,
					t->network_class, err);
	return rc;
}

int kerf_kobj_tenant_decode(const json_t *obj, struct kerf_kobj_tenant *t,
			    struct kerf_err *err)
{
	const json_t *meta, *v;
	int rc;

	memset(t, 0, sizeof(*t));
	t->weight = 1;
	t->isolation = KERF_ISOLATION_SHARED;
	t->budget_action = KERF_BUDGET_HOLD;
	t->idle_action = KERF_IDLE_NONE;
	rc = kerf_kobj_need_object(obj, "Tenant", err);
	if (rc < 0)
		return rc;
	meta = kerf_kobj_field(obj, "metadata");
	rc = kerf_kobj_need_object(meta, "metadata", err);
	if (rc == 0)
		rc = kerf_kobj_required(kerf_kobj_field(meta, "name"),
					"metadata.name", err);
	if (rc == 0)
		rc = kerf_kobj_get_name(kerf_kobj_field(meta, "name"),
					"metadata.name", false, t->name, err);
	if (rc == 0 && !strcmp(t->name, "cluster"))
		rc = kerf_kobj_fail(err, "metadata.name",
				    "'cluster' is reserved for the root of the tenant tree");
	if (rc == 0 && (v = kerf_kobj_field(meta, "generation")))
		rc = kerf_kobj_get_int(v, "metadata.generation", 0, INT64_MAX,
				       &t->generation, err);
	if (rc == 0)
		rc = dec_spec(kerf_kobj_field(obj, "spec"), t, err);
	return rc;
}

/* --- the core's spec ------------------------------------------------- */

static int flavor_dim(const struct kerf_kobj_resolver *r, const char *flavor)
{
	int d;

	if (!strcmp(flavor, "cpu"))
		return KERF_RES_CPU;
	if (!strcmp(flavor, "memory"))
		return KERF_RES_MEM;
	d = r->flavor_dim ? r->flavor_dim(r->ctx, flavor) : -1;
	return d >= KERF_RES_GPU0 && d < r->nr_res && d < KERF_MAX_RES ? d : -1;
}

/* The classes named (known ones), as a mask. */
static uint32_t class_mask(const struct kerf_classes *cl,
			   const char (*names)[KERF_KOBJ_NAME_MAX], size_t nr)
{
	uint32_t m = 0;

	for (size_t i = 0; cl && i < nr; i++) {
		int c = kerf_classes_find(cl, names[i]);

		if (c >= 0 && c < KERF_MAX_CLASSES)
			m |= 1u << c;
	}
	return m;
}

static int spec_classes(const struct kerf_kobj_tenant *t,
			const struct kerf_classes *cl, uint32_t *mask,
			struct kerf_err *err)
{
	int nr = cl ? cl->nr : 0;
	uint32_t m;
	int32_t ceiling;

	*mask = 0;
	if (!t->nr_allowed_classes && !t->has_ceiling)
		return 0;
	m = t->nr_allowed_classes ?
		    class_mask(cl, t->allowed_classes, t->nr_allowed_classes) :
		    (nr >= 32 ? UINT32_MAX : (1u << nr) - 1u);
	if (t->has_ceiling) {
		ceiling = t->ceiling_value;
		if (t->ceiling_class[0]) {
			int c = cl ? kerf_classes_find(cl, t->ceiling_class) : -1;

			if (c < 0)
				return kerf_err_set(err, -KERF_ENOTFOUND,
						    "spec.priorityCeiling.priorityClassName: PriorityClass '%s' is not known to kerf",
						    t->ceiling_class);
			ceiling = cl->c[c].value;
		}
		for (int c = 0; c < nr && c < KERF_MAX_CLASSES; c++)
			if (cl->c[c].value > ceiling)
				m &= ~(1u << c);
	}
	if (!m)
		return kerf_kobj_fail(err, t->nr_allowed_classes ?
						   "spec.allowedPriorityClasses" :
						   "spec.priorityCeiling",
				      "no priority class kerf knows is left for the tenant to use");
	*mask = m;
	return 0;
}

int kerf_kobj_tenant_spec(const struct kerf_kobj_tenant *t, int parent,
			  const struct kerf_kobj_resolver *r,
			  struct kerf_tenant_spec *spec, size_t *nr_unresolved,
			  struct kerf_err *err)
{
	size_t unresolved = 0;
	int rc;

	memset(spec, 0, sizeof(*spec));
	spec->name = t->name;
	spec->parent = parent;
	kerf_quota_default(&spec->quota);
	spec->weight = t->weight;
	spec->isolation = t->isolation;
	for (size_t i = 0; i < t->nr_quotas; i++) {
		const struct kerf_kobj_quota *q = &t->quotas[i];
		int d = flavor_dim(r, q->flavor);

		if (d < 0) {
			unresolved++;
			continue;
		}
		spec->quota.nominal.v[d] = q->nominal;
		spec->quota.borrow_limit.v[d] = q->borrow_limit;
		spec->quota.lend_limit.v[d] = q->lend_limit;
	}
	rc = spec_classes(t, r->classes, &spec->allowed_classes, err);
	if (rc < 0)
		return rc;
	spec->budget_limit_milli_ms = t->budget_limit_milli_ms;
	spec->budget_window_ms = t->budget_window_ms;
	spec->budget_action = t->budget_action;
	for (int m = 0; m < KERF_MAX_MODELS; m++)
		spec->budget_model_weight_pct[m] = 100;
	for (size_t i = 0; i < t->nr_flavor_weights; i++) {
		int d = flavor_dim(r, t->flavor_weights[i].flavor);

		if (d < KERF_RES_GPU0)
			unresolved++;
		else
			spec->budget_model_weight_pct[d - KERF_RES_GPU0] =
				t->flavor_weights[i].pct;
	}
	spec->idle.action = t->idle_action;
	spec->idle.below_pct = t->idle_below_pct;
	spec->idle.after_ms = t->idle_after_ms;
	spec->idle.exempt_classes = class_mask(r->classes, t->idle_exempt,
					       t->nr_idle_exempt);
	if (nr_unresolved)
		*nr_unresolved = unresolved;
	return 0;
}

/* --- status ---------------------------------------------------------- */

static bool in_subtree(const struct kerf_tenants *tt, int u, int t)
{
	for (int depth = 0; u >= 0 && depth <= (int)tt->nr; depth++) {
		if (u == t)
			return true;
		u = tt->t[u].parent;
	}
	return false;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	return a > 0 && b > 0 ? kerf_qty_add(a, b) : a + b;
}

void kerf_kobj_tenant_status_fill(const struct kerf_state *st, int t,
				  const char *const *dim_flavor,
				  struct kerf_kobj_tenant_status *s)
{
	const struct kerf_tenants *tt = &st->tenants;
	const struct kerf_tenant *tn = &tt->t[t];
	int nr_res = tt->nr_res < KERF_MAX_RES ? tt->nr_res : KERF_MAX_RES;

	s->gpus_nominal = s->gpus_used = s->gpus_borrowed = 0;
	s->gpus_pending = s->pending_workloads = 0;
	s->nr_usage = 0;
	for (int i = 0; i < nr_res; i++) {
		int64_t used = tn->usage.v[i];
		int64_t nominal = tn->quota.nominal.v[i];
		/* where nothing is governed, nothing is borrowed */
		int64_t over = used > nominal && kerf_tenant_governs(tt, t, i) ?
				       used - nominal : 0;
		struct kerf_kobj_usage *u;

		if (i >= KERF_RES_GPU0) {
			s->gpus_nominal = sat_add(s->gpus_nominal, nominal);
			s->gpus_used = sat_add(s->gpus_used, used);
			s->gpus_borrowed = sat_add(s->gpus_borrowed, over);
		}
		if (!used && !nominal)
			continue;
		u = &s->usage[s->nr_usage++];
		memset(u, 0, sizeof(*u));
		if (dim_flavor && dim_flavor[i])
			snprintf(u->flavor, sizeof(u->flavor), "%s", dim_flavor[i]);
		else
			kerf_res_name(&st->cluster, i, u->flavor, sizeof(u->flavor));
		u->used = used;
		u->borrowed = over;
	}
	for (size_t u = 0; u < tt->nr; u++)
		if (!tt->t[u].removed && in_subtree(tt, (int)u, t)) {
			s->pending_workloads += tt->t[u].nr_pending;
			s->gpus_pending = sat_add(s->gpus_pending,
						  tt->t[u].pending_gpu_milli);
		}
	s->has_budget = tn->budget.limit_milli_ms > 0;
	s->budget_pct = s->has_budget ? kerf_budget_used_pct(tn) : 0;
	s->averaged_at_ms = st->avg_at_ms;
	s->nr_usage_avg = 0;
	for (int i = 0; i < nr_res; i++) {
		struct kerf_persist_dim *d;

		if (!st->usage_avg[t].v[i])
			continue;
		d = &s->usage_avg[s->nr_usage_avg++];
		memset(d, 0, sizeof(*d));
		kerf_res_name(&st->cluster, i, d->name, sizeof(d->name));
		d->value = st->usage_avg[t].v[i];
	}
	s->budget_used_milli_ms = tn->budget.used_milli_ms;
	s->budget_window_start_ms = tn->budget.window_start_ms;
	s->budget_warned_pct = tn->budget.warned_pct;
}

void kerf_kobj_tenant_history_set(struct kerf_kobj_tenant_status *s,
				  const struct kerf_persist_tenant *pt,
				  int64_t avg_at_ms)
{
	s->averaged_at_ms = avg_at_ms;
	s->nr_usage_avg = 0;
	for (size_t k = 0; k < pt->nr_usage_avg && k < KERF_MAX_RES; k++)
		s->usage_avg[s->nr_usage_avg++] = pt->usage_avg[k];
	s->budget_used_milli_ms = pt->budget_used_milli_ms;
	s->budget_window_start_ms = pt->budget_window_start_ms;
	s->budget_warned_pct = pt->budget_warned_pct;
}

int kerf_kobj_tenant_history_get(const struct kerf_kobj_tenant_status *s,
				 const char *name, struct kerf_persist_tenant *pt)
{
	memset(pt, 0, sizeof(*pt));
	pt->name = kerf_strdup(name);
	pt->usage_avg = calloc(s->nr_usage_avg ? s->nr_usage_avg : 1,
			       sizeof(*pt->usage_avg));
	if (!pt->name || !pt->usage_avg) {
		free(pt->name);
		free(pt->usage_avg);
		memset(pt, 0, sizeof(*pt));
		return -KERF_ENOMEM;
	}
	memcpy(pt->usage_avg, s->usage_avg, s->nr_usage_avg * sizeof(*pt->usage_avg));
	pt->nr_usage_avg = s->nr_usage_avg;
	pt->budget_used_milli_ms = s->budget_used_milli_ms;
	pt->budget_window_start_ms = s->budget_window_start_ms;
	pt->budget_warned_pct = s->budget_warned_pct;
	return 0;
}

/* A quantity of a flavor's unit as status text. */
static json_t *qty_text(const char *flavor, int64_t x)
{
	char text[KERF_KOBJ_QTY_TEXT_MAX];

	if (kerf_kobj_flavor_unit(flavor) == KERF_KOBJ_MIB)
		snprintf(text, sizeof(text), "%" PRId64 "Mi", x);
	else
		kerf_kobj_format_milli(text, sizeof(text), x);
	return json_string(text);
}

static json_t *milli_text(int64_t x)
{
	char text[KERF_KOBJ_QTY_TEXT_MAX];

	return json_string(kerf_kobj_format_milli(text, sizeof(text), x));
}

static json_t *child(json_t *o, const char *key, json_t *v)
{
	return kerf_kobj_put(o, key, v) ? v : NULL;
}

json_t *kerf_kobj_tenant_status_encode(const struct kerf_kobj_tenant_status *s)
{
	json_t *o = json_object();
	json_t *g = o ? child(o, "gpus", json_object()) : NULL;
	json_t *u = o ? child(o, "usage", json_array()) : NULL;
	json_t *h = o ? child(o, "history", json_object()) : NULL;
	json_t *avg = h ? child(h, "usageAverage", json_object()) : NULL;
	bool ok = g && u && avg;

	ok = ok && kerf_kobj_status_head_put(o, s->observed_generation,
					     s->conditions, s->nr_conditions) &&
	     kerf_kobj_put(g, "nominal", milli_text(s->gpus_nominal)) &&
	     kerf_kobj_put(g, "used", milli_text(s->gpus_used)) &&
	     kerf_kobj_put(g, "borrowed", milli_text(s->gpus_borrowed)) &&
	     kerf_kobj_put(g, "pending", milli_text(s->gpus_pending)) &&
	     kerf_kobj_put(o, "pendingWorkloads", json_integer(s->pending_workloads));
	for (size_t i = 0; ok && i < s->nr_usage; i++) {
		const struct kerf_kobj_usage *x = &s->usage[i];
		json_t *e = json_object();

		ok = e && json_array_append_new(u, e) == 0 &&
		     kerf_kobj_put(e, "flavor", json_string(x->flavor)) &&
		     kerf_kobj_put(e, "used", qty_text(x->flavor, x->used)) &&
		     kerf_kobj_put(e, "borrowed", qty_text(x->flavor, x->borrowed));
	}
	if (ok && s->has_budget) {
		json_t *b = child(o, "budgetUsed", json_object());

		ok = b && kerf_kobj_put(b, "gpuHours",
					milli_text(s->budget_used_milli_ms / 3600000)) &&
		     kerf_kobj_put(b, "percent", json_integer(s->budget_pct));
	}
	for (size_t i = 0; ok && i < s->nr_usage_avg; i++)
		ok = kerf_kobj_put(avg, s->usage_avg[i].name,
				   json_integer(s->usage_avg[i].value));
	ok = ok && kerf_kobj_put(h, "averagedAtMs", json_integer(s->averaged_at_ms)) &&
	     kerf_kobj_put(h, "budgetUsedMilliMs",
			   json_integer(s->budget_used_milli_ms)) &&
	     kerf_kobj_put(h, "budgetWindowStartMs",
			   json_integer(s->budget_window_start_ms)) &&
	     kerf_kobj_put(h, "budgetWarnedPercent",
			   json_integer(s->budget_warned_pct));
	if (ok)
		return o;
	json_decref(o);
	return NULL;
}

static int dec_gpu_total(const json_t *g, const char *key, int64_t *out,
			 struct kerf_err *err)
{
	char p[KERF_KOBJ_PATH_MAX];
	const json_t *v = kerf_kobj_field(g, key);

	if (!v)
		return 0;
	snprintf(p, sizeof(p), "status.gpus.%s", key);
	return kerf_kobj_get_quantity(v, p, KERF_KOBJ_MILLI, 0, KERF_QTY_INF,
				      "GPUs", out, err);
}

static int dec_usage(const json_t *v, struct kerf_kobj_tenant_status *s,
		     struct kerf_err *err)
{
	int rc = kerf_kobj_need_array(v, "status.usage", KERF_MAX_RES, err);

	for (size_t i = 0; rc == 0 && i < json_array_size(v); i++) {
		const json_t *o = json_array_get(v, i);
		struct kerf_kobj_usage *u = &s->usage[i];
		char p[KERF_KOBJ_PATH_MAX], f[KERF_KOBJ_PATH_MAX];
		enum kerf_kobj_unit unit;
		const json_t *x;

		snprintf(p, sizeof(p), "status.usage[%zu]", i);
		rc = kerf_kobj_need_object(o, p, err);
		kerf_kobj_path(f, sizeof(f), p, "flavor");
		if (rc == 0)
			rc = kerf_kobj_required(kerf_kobj_field(o, "flavor"), f, err);
		if (rc == 0)
			rc = kerf_kobj_get_text(kerf_kobj_field(o, "flavor"), f,
						u->flavor, sizeof(u->flavor), false, err);
		if (rc < 0)
			break;
		unit = kerf_kobj_flavor_unit(u->flavor);
		if ((x = kerf_kobj_field(o, "used")))
			rc = kerf_kobj_get_quantity(x, kerf_kobj_path(f, sizeof(f), p, "used"),
						    unit, 0, KERF_QTY_INF, "a quantity",
						    &u->used, err);
		if (rc == 0 && (x = kerf_kobj_field(o, "borrowed")))
			rc = kerf_kobj_get_quantity(x, kerf_kobj_path(f, sizeof(f), p, "borrowed"),
						    unit, 0, KERF_QTY_INF, "a quantity",
						    &u->borrowed, err);
		if (rc == 0)
			s->nr_usage = i + 1;
	}
	return rc;
}

static int dec_history(const json_t *h, struct kerf_kobj_tenant_status *s,
		       struct kerf_err *err)
{
	const int64_t T = KERF_PERSIST_MAX_MS, A = KERF_PERSIST_MAX_AMOUNT;
	const json_t *v, *avg;
	int64_t x;
	int rc = kerf_kobj_need_object(h, "status.history", err);

	if (rc == 0 && (v = kerf_kobj_field(h, "averagedAtMs")))
		rc = kerf_kobj_get_int(v, "status.history.averagedAtMs", -T, T,
				       &s->averaged_at_ms, err);
	if (rc == 0 && (v = kerf_kobj_field(h, "budgetUsedMilliMs")))
		rc = kerf_kobj_get_int(v, "status.history.budgetUsedMilliMs", 0, A,
				       &s->budget_used_milli_ms, err);
	if (rc == 0 && (v = kerf_kobj_field(h, "budgetWindowStartMs")))
		rc = kerf_kobj_get_int(v, "status.history.budgetWindowStartMs", -T, T,
				       &s->budget_window_start_ms, err);
	if (rc == 0 && (v = kerf_kobj_field(h, "budgetWarnedPercent")) &&
	    (rc = kerf_kobj_get_int(v, "status.history.budgetWarnedPercent", 0,
				    100, &x, err)) == 0)
		s->budget_warned_pct = (int32_t)x;
	if (rc < 0 || !(avg = kerf_kobj_field(h, "usageAverage")))
		return rc;
	rc = kerf_kobj_need_object(avg, "status.history.usageAverage", err);
	if (rc == 0 && json_object_size(avg) > KERF_MAX_RES)
		rc = kerf_kobj_fail(err, "status.history.usageAverage",
				    "must have at most %d dimensions, not %zu",
				    KERF_MAX_RES, json_object_size(avg));
	if (rc == 0) {
		const char *dim;
		json_t *q;

		json_object_foreach((json_t *)avg, dim, q) {
			struct kerf_persist_dim *d = &s->usage_avg[s->nr_usage_avg];
			char p[KERF_KOBJ_PATH_MAX], esc[64];

			snprintf(p, sizeof(p), "status.history.usageAverage.%s",
				 kerf_escape(esc, sizeof(esc), dim));
			if (!dim[0] || strlen(dim) >= sizeof(d->name))
				return kerf_kobj_fail(err, p,
						      "a dimension name is 1 to %d bytes",
						      (int)sizeof(d->name) - 1);
			memset(d, 0, sizeof(*d));
			rc = kerf_kobj_get_int(q, p, 0, A, &d->value, err);
			if (rc < 0)
				return rc;
			memcpy(d->name, dim, strlen(dim) + 1);
			s->nr_usage_avg++;
		}
	}
	return rc;
}

int kerf_kobj_tenant_status_decode(const json_t *status,
				   struct kerf_kobj_tenant_status *s,
				   struct kerf_err *err)
{
	const json_t *v, *g;
	int64_t x;
	int rc;

	memset(s, 0, sizeof(*s));
	if (!status || json_is_null(status))
		return 0;
	rc = kerf_kobj_status_head_decode(status, &s->observed_generation,
					  s->conditions, &s->nr_conditions, err);
	if (rc == 0 && (g = kerf_kobj_field(status, "gpus"))) {
		rc = kerf_kobj_need_object(g, "status.gpus", err);
		if (rc == 0)
			rc = dec_gpu_total(g, "nominal", &s->gpus_nominal, err);
		if (rc == 0)
			rc = dec_gpu_total(g, "used", &s->gpus_used, err);
		if (rc == 0)
			rc = dec_gpu_total(g, "borrowed", &s->gpus_borrowed, err);
		if (rc == 0)
			rc = dec_gpu_total(g, "pending", &s->gpus_pending, err);
	}
	if (rc == 0 && (v = kerf_kobj_field(status, "pendingWorkloads")))
		rc = kerf_kobj_get_int(v, "status.pendingWorkloads", 0, INT64_MAX,
				       &s->pending_workloads, err);
	if (rc == 0 && (v = kerf_kobj_field(status, "usage")))
		rc = dec_usage(v, s, err);
	if (rc == 0 && (g = kerf_kobj_field(status, "budgetUsed"))) {
		rc = kerf_kobj_need_object(g, "status.budgetUsed", err);
		s->has_budget = true;
		if (rc == 0 && (v = kerf_kobj_field(g, "percent")) &&
		    (rc = kerf_kobj_get_int(v, "status.budgetUsed.percent", 0,
					    INT32_MAX, &x, err)) == 0)
			s->budget_pct = (int32_t)x;
	}
	if (rc == 0 && (v = kerf_kobj_field(status, "history")))
		rc = dec_history(v, s, err);
	return rc;
}
