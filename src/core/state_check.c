/*
 * state_check: the invariant walker (kerf_state_check).
 */
#include "core/state.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/assert.h"
#include "base/grow.h"
#include "core/mig/place.h"

struct node_use {
	int64_t cpu_milli;
	int64_t mem_mib;
	int32_t gpu_milli[KERF_NODE_MAX_GPUS];
	int32_t gpu_mem_mib[KERF_NODE_MAX_GPUS];
	/* the fractions on each GPU, as the running workloads say */
	uint16_t nr_fractions[KERF_NODE_MAX_GPUS];
	uint8_t share[KERF_NODE_MAX_GPUS];
	uint8_t isolation_max[KERF_NODE_MAX_GPUS];
	uint32_t tenant[KERF_NODE_MAX_GPUS];
	bool share_mixed[KERF_NODE_MAX_GPUS];
	bool tenants_mixed[KERF_NODE_MAX_GPUS];
	/* MIG pods on each GPU, and the first slices of their instances */
	uint16_t nr_mig[KERF_NODE_MAX_GPUS];
	uint8_t mig_starts[KERF_NODE_MAX_GPUS];
};

/*
 * MIG pod p of w runs on GPU g of n at b.mig_start: its instance exists,
 * is in use, has p's profile, and no other pod holds it.
 */
static int use_mig(const struct kerf_state *st, const struct kerf_workload *w,
		   const struct kerf_node *n, int g, const struct kerf_pod *p,
		   uint8_t start, struct node_use *u, struct kerf_err *err)
{
	int pi = kerf_pod_mig_profile(&st->cluster, n, p);
	bool found = false;

	if (!(n->mig_gpus >> g & 1) || pi < 0)
		return kerf_err_set(err, -KERF_ERANGE,
				    "workload '%s': MIG pod on GPU %d of '%s', not in MIG mode",
				    w->key, g, n->name);
	for (unsigned k = 0; k < n->mig->gpu[g].nr; k++) {
		const struct kerf_mig_instance *in = &n->mig->gpu[g].inst[k];

		found |= in->in_use && in->profile == pi && in->start == start;
	}
	if (!found)
		return kerf_err_set(err, -KERF_ERANGE,
				    "workload '%s': its MIG instance on '%s' GPU %d slice %u is not in use",
				    w->key, n->name, g, start);
	if (u->mig_starts[g] >> start & 1)
		return kerf_err_set(err, -KERF_ERANGE,
				    "node '%s' GPU %d: MIG instance at slice %u held twice",
				    n->name, g, start);
	u->mig_starts[g] = (uint8_t)(u->mig_starts[g] | 1u << start);
	u->nr_mig[g]++;
	return 0;
}

/* A fraction p of workload w runs on GPU g: note who shares it. */
static void use_fraction(struct node_use *u, int g, const struct kerf_pod *p)
{
	if (u->nr_fractions[g]++ == 0) {
		u->share[g] = p->share;
		u->tenant[g] = p->tenant;
		u->isolation_max[g] = p->isolation;
		return;
	}
	u->share_mixed[g] |= u->share[g] != p->share;
	u->tenants_mixed[g] |= u->tenant[g] != p->tenant;
	if (p->isolation > u->isolation_max[g])
		u->isolation_max[g] = p->isolation;
}

static int check_workload(const struct kerf_state *st,
			  const struct kerf_workload *w, struct node_use *use,
			  struct kerf_res *leaf_use, struct kerf_res *leaf_np,
			  struct kerf_res *leaf_own, struct kerf_err *err)
{
	uint32_t total = kerf_workload_pods(w);
	struct kerf_res charged;

	if (w->state != KERF_WL_RUNNING)
		return w->nr_bound == 0 ? 0
					: kerf_err_set(err, -KERF_ERANGE,
						       "workload '%s': holds pods but is not running",
						       w->key);
	if (w->nr_bound < w->min_count || w->nr_bound > total)
		return kerf_err_set(err, -KERF_ERANGE,
				    "workload '%s': gang not whole: %u bound, min_count %u",
				    w->key, w->nr_bound, w->min_count);
	for (uint32_t k = 0; k < w->nr_bound; k++) {
		const struct kerf_wl_pod *wp = &w->pods[k];
		const struct kerf_pod *p = &w->sets[wp->set].req;
		const struct kerf_node *n;
		struct node_use *u;

		if (wp->b.node >= st->cluster.nr_slots ||
		    !st->cluster.nodes[wp->b.node].live)
			return kerf_err_set(err, -KERF_ERANGE,
					    "workload '%s': bound to a node that does not exist",
					    w->key);
		n = &st->cluster.nodes[wp->b.node];
		u = &use[wp->b.node];
		if ((w->topology == KERF_TOPO_NODE && wp->b.node != w->pods[0].b.node) ||
		    (w->topology == KERF_TOPO_NVLINK &&
		     (n->domain != st->cluster.nodes[w->pods[0].b.node].domain ||
		      (n->domain == 0 && wp->b.node != w->pods[0].b.node))))
			return kerf_err_set(err, -KERF_ERANGE,
					    "workload '%s': topology constraint broken",
					    w->key);
		u->cpu_milli += p->cpu_milli;
		u->mem_mib += p->mem_mib;
		for (int g = 0; g < n->nr_gpus; g++)
			if (wp->b.gpus >> g & 1) {
				int rc;

				u->gpu_milli[g] += p->gpu_milli;
				if (kerf_pod_is_fraction(p))
					use_fraction(u, g, p);
				if (!kerf_pod_is_mig(p)) {
					u->gpu_mem_mib[g] += p->gpu_mem_mib;
				} else if ((rc = use_mig(st, w, n, g, p, wp->b.mig_start,
							 u, err)) < 0) {
					return rc;
				}
			}
	}
	kerf_workload_charged(w, &charged);
	kerf_res_add(&leaf_use[w->tenant], &charged);
	if (w->nonpreemptible)
		kerf_res_add(&leaf_np[w->tenant], &charged);
	if (!w->borrowed)
		kerf_res_add(&leaf_own[w->tenant], &charged);
	return 0;
}

/* A GPU in MIG mode: its instances in use are exactly its MIG pods'. */
static int check_mig_gpu(const struct kerf_node *n, int g,
			 const struct node_use *u, struct kerf_err *err)
{
	unsigned in_use = 0;

	for (unsigned k = 0; k < n->mig->gpu[g].nr; k++)
		in_use += n->mig->gpu[g].inst[k].in_use;
	if (in_use != u->nr_mig[g])
		return kerf_err_set(err, -KERF_ERANGE,
				    "node '%s' GPU %d: %u MIG instances in use, running workloads hold %u",
				    n->name, g, in_use, u->nr_mig[g]);
	if (KERF_GPU_MILLI - n->mig->free_milli[g] != u->gpu_milli[g])
		return kerf_err_set(err, -KERF_ERANGE,
				    "node '%s' GPU %d: MIG %d milli in use, running workloads hold %d",
				    n->name, g, KERF_GPU_MILLI - n->mig->free_milli[g],
				    u->gpu_milli[g]);
	if (u->nr_fractions[g])
		return kerf_err_set(err, -KERF_ERANGE,
				    "node '%s' GPU %d: fractions on a GPU in MIG mode",
				    n->name, g);
	return 0;
}

static int check_nodes(const struct kerf_state *st, const struct node_use *use,
		       struct kerf_err *err)
{
	for (size_t i = 0; i < st->cluster.nr_slots; i++) {
		const struct kerf_node *n = &st->cluster.nodes[i];
		const struct node_use *u = &use[i];

		if (n->cpu_milli - n->cpu_free_milli != u->cpu_milli ||
		    n->mem_mib - n->mem_free_mib != u->mem_mib)
			return kerf_err_set(err, -KERF_ERANGE,
					    "node '%s': cpu or memory in use differs from the running workloads",
					    n->name);
		for (int g = 0; g < n->nr_gpus; g++) {
			if (n->mig_gpus >> g & 1) {
				int rc = check_mig_gpu(n, g, u, err);

				if (rc < 0)
					return rc;
				continue;
			}
			/* out of service: what its pods hold is kept aside */
			if (KERF_GPU_MILLI - kerf_gpu_held_free_milli(n, g) != u->gpu_milli[g])
				return kerf_err_set(err, -KERF_ERANGE,
						    "node '%s' GPU %d: %d milli in use, running workloads hold %d",
						    n->name, g,
						    KERF_GPU_MILLI - kerf_gpu_held_free_milli(n, g),
						    u->gpu_milli[g]);
			if (n->gpu_mem_mib[g] > 0 &&
			    n->gpu_mem_mib[g] - kerf_gpu_held_mem_free_mib(n, g) != u->gpu_mem_mib[g])
				return kerf_err_set(err, -KERF_ERANGE,
						    "node '%s' GPU %d: GPU memory in use differs",
						    n->name, g);
			if (n->gpu_nr_fractions[g] != u->nr_fractions[g] ||
			    (u->nr_fractions[g] && n->gpu_share[g] != u->share[g]))
				return kerf_err_set(err, -KERF_ERANGE,
						    "node '%s' GPU %d: %u fractions recorded, running workloads hold %u",
						    n->name, g, n->gpu_nr_fractions[g],
						    u->nr_fractions[g]);
			/* isolation: who shares the GPU, from the pods themselves */
			if (u->nr_fractions[g] < 2)
				continue;
			if (u->share_mixed[g])
				return kerf_err_set(err, -KERF_ERANGE,
						    "node '%s' GPU %d: isolation: fractions of two sharing modes on one GPU",
						    n->name, g);
			if (u->isolation_max[g] == KERF_ISOLATION_HARDWARE)
				return kerf_err_set(err, -KERF_ERANGE,
						    "node '%s' GPU %d: isolation: a hardware-isolated fraction shares its GPU",
						    n->name, g);
			if (u->tenants_mixed[g] && u->isolation_max[g] != KERF_ISOLATION_SHARED)
				return kerf_err_set(err, -KERF_ERANGE,
						    "node '%s' GPU %d: isolation: tenants share a GPU although one allows sharing only within itself",
						    n->name, g);
		}
	}
	return 0;
}

struct tenant_count {
	uint32_t nr;
	uint32_t nr_pending;
	int64_t gpu_milli;
};

/* wl[], the id and key maps agree; the tenants' counters, recounted. */
static int check_index(const struct kerf_state *st, struct tenant_count *pend,
		       struct kerf_err *err)
{
	if (st->by_id.nr != st->nr_wl ||
	    st->by_key.nr != (st->no_key_map ? 0 : st->nr_wl))
		return kerf_err_set(err, -KERF_ERANGE,
				    "workloads: %zu held, %zu ids, %zu keys",
				    st->nr_wl, st->by_id.nr, st->by_key.nr);
	for (size_t i = 0; i < st->nr_wl; i++) {
		const struct kerf_workload *w = st->wl[i];

		if (w->index != i || kerf_state_find(st, w->id) != w ||
		    (!st->no_key_map && kerf_state_find_key(st, w->key) != w))
			return kerf_err_set(err, -KERF_ERANGE,
					    "workload '%s': not found by its id, key or place",
					    w->key);
		if ((size_t)w->tenant >= st->tenants.nr || st->tenants.t[w->tenant].removed)
			return kerf_err_set(err, -KERF_ERANGE,
					    "workload '%s': its tenant is gone", w->key);
		pend[w->tenant].nr++;
		if (w->state == KERF_WL_PENDING) {
			pend[w->tenant].nr_pending++;
			pend[w->tenant].gpu_milli += kerf_workload_gpu_milli(w);
		}
	}
	return 0;
}

int kerf_state_check(const struct kerf_state *st, struct kerf_err *err)
{
	size_t nt = st->tenants.nr;
	struct node_use *use = calloc(st->cluster.nr_slots ? st->cluster.nr_slots : 1,
				      sizeof(*use));
	struct kerf_res *leaf_use = calloc(nt, sizeof(*leaf_use));
	struct kerf_res *leaf_np = calloc(nt, sizeof(*leaf_np));
	struct kerf_res *leaf_own = calloc(nt, sizeof(*leaf_own));
	struct tenant_count *pend = calloc(nt, sizeof(*pend));
	int rc = 0;

	if (!use || !leaf_use || !leaf_np || !leaf_own || !pend) {
		rc = kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		goto out;
	}
	rc = kerf_cluster_check(&st->cluster, err);
	if (rc == 0)
		rc = kerf_tenants_check(&st->tenants, err);
	for (size_t i = 0; i < st->nr_wl && rc == 0; i++)
		rc = check_workload(st, st->wl[i], use, leaf_use, leaf_np, leaf_own,
				    err);
	if (rc == 0)
		rc = check_nodes(st, use, err);
	if (rc == 0)
		rc = check_index(st, pend, err);
	for (size_t t = 1; t < nt && rc == 0; t++) {
		const struct kerf_tenant *x = &st->tenants.t[t];

		if (x->nr_children)
			continue;
		if (pend[t].nr != x->nr_workloads || pend[t].nr_pending != x->nr_pending ||
		    pend[t].gpu_milli != x->pending_gpu_milli) {
			rc = kerf_err_set(err, -KERF_ERANGE,
					  "tenant '%s': %u workloads, %u pending (%" PRId64 " GPU milli) counted; %u, %u (%" PRId64 ") held",
					  x->name, x->nr_workloads, x->nr_pending,
					  x->pending_gpu_milli, pend[t].nr,
					  pend[t].nr_pending, pend[t].gpu_milli);
			break;
		}
		if (memcmp(&leaf_use[t], &x->usage, sizeof(x->usage)) ||
		    memcmp(&leaf_np[t], &x->usage_np, sizeof(x->usage_np)) ||
		    memcmp(&leaf_own[t], &x->usage_own, sizeof(x->usage_own)))
			rc = kerf_err_set(err, -KERF_ERANGE,
					  "tenant '%s': quota usage differs from what its running workloads were charged",
					  x->name);
	}
out:
	free(use);
	free(leaf_use);
	free(leaf_np);
	free(leaf_own);
	free(pend);
	return rc;
}
