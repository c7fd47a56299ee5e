/*
 * scenario_build: a parsed scenario (struct kerf_scenario) turned into the
 * core's state: the cluster's nodes, GPU models and NVLink domains, the
 * priority classes and the tenant tree with quotas and policies.
 *
 * It validates again what the reader checked, for scenarios made by hand,
 * and names the tenant or class at fault.  GPU model i of the built cluster
 * is the i-th distinct model in node group order, as the reader numbered
 * them.
 */
#include "sim/scenario.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/resources.h"

/* A model's GPU memory: from the groups that state it (they agree). */
static int32_t model_mem_mib(const struct kerf_scenario *sc, const char *model)
{
	for (size_t g = 0; g < sc->nr_nodes; g++)
		if (sc->nodes[g].gpus > 0 && sc->nodes[g].gpu_mem_mib > 0 &&
		    strcmp(sc->nodes[g].model, model) == 0)
			return sc->nodes[g].gpu_mem_mib;
	return 0;
}

static int build_cluster(const struct kerf_scenario *sc, struct kerf_cluster *c,
			 struct kerf_err *err)
{
	uint32_t domain = 0;

	for (size_t g = 0; g < sc->nr_nodes; g++) {
		const struct kerf_scn_nodes *n = &sc->nodes[g];
		int model = KERF_MODEL_NONE;

		if (n->gpus > 0) {
			model = kerf_cluster_find_model(c, n->model);
			if (model < 0)
				model = kerf_cluster_model(
					c, n->model, model_mem_mib(sc, n->model),
					err);
			if (model < 0)
				return model;
		}
		for (uint32_t i = 0; i < n->count; i++) {
			char name[KERF_SCN_NAME_MAX + 16];
			int idx;

			snprintf(name, sizeof(name), "%s%" PRIu32, n->prefix, i);
			idx = kerf_cluster_add_node(c, name, n->cpu_milli,
						    n->mem_mib, model, n->gpus,
						    err);
			if (idx < 0)
				return idx;
			if (n->mig_gpus) {
				int rc = kerf_cluster_set_mig(
					c, (size_t)idx,
					(uint16_t)((1u << n->mig_gpus) - 1), err);

				if (rc < 0)
					return rc;
			}
			if (n->domain_nodes == 0)
				continue;
			if (i % n->domain_nodes == 0)
				domain++;
			kerf_cluster_set_domain(c, (size_t)idx, domain);
		}
	}
	return 0;
}

static int build_quota(const struct kerf_scn_tenant *t,
		       const struct kerf_cluster *c, struct kerf_quota *q,
		       struct kerf_err *err)
{
	kerf_quota_default(q);
	for (int i = 0; i < t->nr_quotas; i++) {
		const struct kerf_scn_quota *line = &t->quotas[i];
		int dim, m;

		if (strcmp(line->resource, "cpu") == 0) {
			dim = KERF_RES_CPU;
		} else if (strcmp(line->resource, "memory") == 0) {
			dim = KERF_RES_MEM;
		} else {
			m = kerf_cluster_find_model(c, line->resource);
			if (m < 0)
				return kerf_err_set(err, -KERF_ENOTFOUND,
						    "tenant '%s': quota of '%s', which is no GPU model of the cluster",
						    t->name, line->resource);
			dim = kerf_res_gpu(m);
		}
		q->nominal.v[dim] = line->nominal;
		q->borrow_limit.v[dim] = line->borrowing_limit;
		q->lend_limit.v[dim] = line->lending_limit;
	}
	return 0;
}

static int build_policies(const struct kerf_scn_tenant *t,
			  const struct kerf_classes *cl, struct kerf_tenant *x,
			  struct kerf_err *err);

static int build_tenants(const struct kerf_scenario *sc,
			 const struct kerf_cluster *c,
			 const struct kerf_classes *cl, struct kerf_tenants *tt,
			 struct kerf_err *err)
{
	for (size_t k = 0; k < sc->nr_tenants; k++) {
		const struct kerf_scn_tenant *t = &sc->tenants[k];
		int parent = KERF_TENANT_ROOT, idx, rc;
		uint32_t mask = 0;
		struct kerf_quota q;

		if (t->parent[0] != '\0') {
			parent = kerf_tenants_find(tt, t->parent);
			if (parent < 0)
				return kerf_err_set(err, -KERF_ENOTFOUND,
						    "tenant '%s': parent '%s' is not defined before it",
						    t->name, t->parent);
		}
		for (int i = 0; i < t->nr_allowed_classes; i++) {
			int ci = kerf_classes_find(cl, t->allowed_classes[i]);

			if (ci < 0)
				return kerf_err_set(err, -KERF_ENOTFOUND,
						    "tenant '%s': no priority class '%s'",
						    t->name, t->allowed_classes[i]);
			mask |= (uint32_t)1 << ci;
		}
		if ((rc = build_quota(t, c, &q, err)) < 0)
			return rc;
		idx = kerf_tenants_add(tt, t->name, parent, &q, t->weight, err);
		if (idx < 0)
			return idx;
		tt->t[idx].allowed_classes = mask;
		tt->t[idx].isolation = t->isolation;
		rc = build_policies(t, cl, &tt->t[idx], err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The tenant's GPU-hour budget and idle reclamation, in core units. */
static int build_policies(const struct kerf_scn_tenant *t,
			  const struct kerf_classes *cl, struct kerf_tenant *x,
			  struct kerf_err *err)
{
	x->budget.limit_milli_ms = kerf_qty_mul(t->budget_gpu_milli_hours,
						3600 * 1000);
	x->budget.window_ms = t->budget_window_ms;
	x->budget.action = t->budget_action;
	for (int m = 0; m < KERF_MAX_MODELS; m++)
		x->budget.model_weight_pct[m] = t->budget_weight_pct[m];
	x->idle.action = t->idle_action;
	x->idle.below_pct = t->idle_threshold_pct;
	x->idle.after_ms = t->idle_after_ms;
	for (int i = 0; i < t->nr_idle_exempt_classes; i++) {
		int ci = kerf_classes_find(cl, t->idle_exempt_classes[i]);

		if (ci < 0)
			return kerf_err_set(err, -KERF_ENOTFOUND,
					    "tenant '%s': no priority class '%s'",
					    t->name, t->idle_exempt_classes[i]);
		x->idle.exempt_classes |= (uint32_t)1 << ci;
	}
	return 0;
}

int kerf_scenario_build(const struct kerf_scenario *sc, struct kerf_state *st,
			struct kerf_err *err)
{
	struct kerf_cluster c;
	struct kerf_tenants tt;
	int rc;

	memset(st, 0, sizeof(*st));
	kerf_cluster_init(&c);
	rc = build_cluster(sc, &c, err);
	if (rc == 0)
		rc = kerf_tenants_init(&tt, kerf_res_count(&c));
	else
		memset(&tt, 0, sizeof(tt));
	if (rc == -KERF_ENOMEM)
		kerf_err_set(err, rc, "out of memory");
	if (rc == 0)
		rc = build_tenants(sc, &c, &sc->classes, &tt, err);
	if (rc == 0)
		rc = kerf_state_init(st, &c, &tt, &sc->classes, err);
	if (rc < 0) {
		kerf_cluster_release(&c);
		kerf_tenants_release(&tt);
		memset(st, 0, sizeof(*st));
		return rc;
	}
	rc = kerf_tenants_validate(&st->tenants, &st->cluster, err);
	if (rc < 0)
		kerf_state_release(st);
	return rc;
}
