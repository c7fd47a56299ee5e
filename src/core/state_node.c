/*
 * state_node: node events (upsert, lost, removed) and the work they move.
 */
#include "core/state.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/assert.h"
#include "base/grow.h"
#include "core/state_int.h"

/* --- nodes ----------------------------------------------------------- */

/* Does w hold a pod on slot i? */
static bool holds_pod_on(const struct kerf_workload *w, uint32_t i)
{
	for (uint32_t k = 0; k < w->nr_bound; k++)
		if (w->pods[k].b.node == i)
			return true;
	return false;
}

/*
 * The running workloads with a pod on slot i (only NVLink-constrained ones
 * when nvlink_only), in seq order; *v malloc'd.  Negative on OOM.
 */
static int workloads_on(const struct kerf_state *st, uint32_t i,
			bool nvlink_only, struct kerf_workload ***v, size_t *nr)
{
	*nr = 0;
	*v = malloc((st->nr_wl ? st->nr_wl : 1) * sizeof(**v));
	if (!*v)
		return -KERF_ENOMEM;
	for (size_t k = 0; k < st->nr_wl; k++) {
		struct kerf_workload *w = st->wl[k];

		if (w->state == KERF_WL_RUNNING && holds_pod_on(w, i) &&
		    (!nvlink_only || w->topology == KERF_TOPO_NVLINK))
			(*v)[(*nr)++] = w;
	}
	kerf_state_sort_by_seq(*v, *nr);
	return 0;
}

/* Requeue each of v (EVICT with reason); out has the room. */
static int requeue_all(struct kerf_state *st, struct kerf_workload **v,
		       size_t nr, enum kerf_evict_reason reason, int64_t now_ms,
		       struct kerf_decisions *out, struct kerf_err *err)
{
	for (size_t k = 0; k < nr; k++) {
		int rc = kerf_state_requeue(st, v[k]->id, now_ms, err);

		if (rc < 0)
			return rc;
		kerf_decisions_push(out, &(struct kerf_decision){
			.kind = KERF_DECIDE_EVICT, .reason = (uint8_t)reason,
			.workload = v[k]->id, .requeued = true, .at_ms = now_ms,
		});
	}
	return 0;
}

/* Requeue what runs on slot i (all, or the NVLink-constrained). */
static int clear_node(struct kerf_state *st, uint32_t i, bool nvlink_only,
		      enum kerf_evict_reason reason, int64_t now_ms,
		      struct kerf_decisions *out, struct kerf_err *err)
{
	struct kerf_workload **v;
	size_t nr;
	int rc = workloads_on(st, i, nvlink_only, &v, &nr);

	if (rc == 0 && nr && (!out || kerf_decisions_reserve(out, nr) < 0))
		rc = -KERF_ENOMEM;
	if (rc < 0) {
		free(v);
		return kerf_err_set(err, rc, "out of memory");
	}
	rc = requeue_all(st, v, nr, reason, now_ms, out, err);
	free(v);
	return rc;
}

/* No pending preemptor waits on slot i any more, no reservation holds it. */
static void let_go_of_node(struct kerf_state *st, uint32_t i)
{
	for (size_t k = 0; k < st->nr_wl; k++) {
		struct kerf_workload *w = st->wl[k];

		struct kerf_wl_preempt *p = w->pre;

		for (uint32_t j = 0; p && j < p->nr_nominated;)
			if (p->nominated[j] == i)
				p->nominated[j] = p->nominated[--p->nr_nominated];
			else
				j++;
	}
	if (i < st->nr_reserved)
		st->reserved[i] = 0;
}

int kerf_state_node_upsert(struct kerf_state *st,
			   const struct kerf_node_spec *spec, int64_t now_ms,
			   struct kerf_decisions *out, struct kerf_err *err)
{
	struct kerf_err first = { 0 };
	int found, rc = kerf_node_spec_validate(&st->cluster, spec, err);

	if (rc < 0)
		return rc;
	found = kerf_cluster_find_node(&st->cluster, spec->name);
	/* NVLink-constrained gangs cannot keep a node that changes domain */
	if (found >= 0 && st->cluster.nodes[found].domain != spec->domain) {
		rc = clear_node(st, (uint32_t)found, true, KERF_EVICT_NODE_CHANGED,
				now_ms, out, err);
		if (rc < 0)
			return rc;
	}
	rc = kerf_cluster_upsert_node(&st->cluster, spec, &first);
	if (rc == -KERF_EBUSY && found >= 0) {
		/* its shape or a busy GPU's mode changes: what runs there goes */
		rc = clear_node(st, (uint32_t)found, false, KERF_EVICT_NODE_CHANGED,
				now_ms, out, err);
		if (rc < 0)
			return rc;
		rc = kerf_cluster_upsert_node(&st->cluster, spec, err);
	} else if (rc < 0) {
		return kerf_err_set(err, rc, "%s", first.msg);
	}
	if (rc >= 0)
		kerf_state_follow_capacity(st);
	return rc;
}

int kerf_state_node_lost(struct kerf_state *st, uint32_t slot, int64_t now_ms,
			 struct kerf_decisions *out, struct kerf_err *err)
{
	int rc;

	if (slot >= st->cluster.nr_slots || !st->cluster.nodes[slot].live)
		return kerf_err_set(err, -KERF_ENOTFOUND, "node slot %" PRIu32 ": no node", slot);
	rc = clear_node(st, slot, false, KERF_EVICT_NODE_LOST, now_ms, out, err);
	if (rc < 0)
		return rc;
	kerf_cluster_cordon(&st->cluster, slot, true);
	return 0;
}

int kerf_state_node_remove(struct kerf_state *st, uint32_t slot,
			   int64_t now_ms, struct kerf_decisions *out,
			   struct kerf_err *err)
{
	int rc;

	if (slot >= st->cluster.nr_slots || !st->cluster.nodes[slot].live)
		return kerf_err_set(err, -KERF_ENOTFOUND, "node slot %" PRIu32 ": no node", slot);
	rc = clear_node(st, slot, false, KERF_EVICT_NODE_GONE, now_ms, out, err);
	if (rc < 0)
		return rc;
	rc = kerf_cluster_remove_node(&st->cluster, slot, err);
	if (rc < 0)
		return rc;
	let_go_of_node(st, slot);
	kerf_state_follow_capacity(st);
	return 0;
}

/* --- GPU models -------------------------------------------------------- */

int kerf_state_model(struct kerf_state *st, const char *name,
		     int32_t gpu_mem_mib, struct kerf_err *err)
{
	return kerf_state_model_hw(st, name, name, gpu_mem_mib, err);
}

int kerf_state_model_hw(struct kerf_state *st, const char *name, const char *hw,
			int32_t gpu_mem_mib, struct kerf_err *err)
{
	struct kerf_tenants *tt = &st->tenants;
	int m = kerf_cluster_model_hw(&st->cluster, name, hw, gpu_mem_mib, err);
	int r;

	if (m < 0)
		return m;
	r = kerf_res_gpu(m);
	if (r < tt->nr_res)
		return m;
	/*
	 * A new quota dimension: nobody is guaranteed any of it yet, anyone
	 * may borrow all of it (the root's nominal follows the capacity,
	 * which its nodes bring).  Every counter of the dimension starts at
	 * zero whatever was left in the slot.
	 */
	for (size_t t = 0; t < tt->nr; t++) {
		struct kerf_tenant *x = &tt->t[t];

		x->quota.nominal.v[r] = 0;
		x->quota.borrow_limit.v[r] = t == KERF_TENANT_ROOT ? 0 : KERF_QTY_INF;
		x->quota.lend_limit.v[r] = KERF_QTY_INF;
		x->usage.v[r] = 0;
		x->usage_np.v[r] = 0;
		x->usage_own.v[r] = 0;
		x->claim.v[r] = 0;
		x->child_claims.v[r] = 0;
		if (t < st->alloc_usage_avg)
			st->usage_avg[t].v[r] = 0;
	}
	tt->nr_res = r + 1;
	return m;
}
