#include "core/state.h"

#include "core/mig/geometry.h"
#include "core/mig/place.h"

#include "core/budget.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DEFAULT_HALF_LIFE_MS = 3600 * 1000 };

void kerf_state_capacity(const struct kerf_state *st, struct kerf_res *cap)
{
	kerf_res_zero(cap);
	for (size_t i = 0; i < st->cluster.nr_slots; i++) {
		const struct kerf_node *n = &st->cluster.nodes[i];

		cap->v[KERF_RES_CPU] += n->cpu_milli;
		cap->v[KERF_RES_MEM] += n->mem_mib;
		if (n->nr_gpus > 0)
			cap->v[kerf_res_gpu(n->model)] +=
				(int64_t)n->nr_gpus * KERF_GPU_MILLI;
	}
}

int kerf_state_init(struct kerf_state *st, struct kerf_cluster *cluster,
		    struct kerf_tenants *tenants,
		    const struct kerf_classes *classes, struct kerf_err *err)
{
	struct kerf_res cap;

	memset(st, 0, sizeof(*st));
	st->usage_avg = calloc(tenants->nr, sizeof(*st->usage_avg));
	if (!st->usage_avg)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	st->cluster = *cluster;
	memset(cluster, 0, sizeof(*cluster));
	st->tenants = *tenants;
	memset(tenants, 0, sizeof(*tenants));
	st->classes = *classes;
	st->next_id = 1;
	st->half_life_ms = DEFAULT_HALF_LIFE_MS;
	kerf_state_capacity(st, &cap);
	kerf_tenants_set_capacity(&st->tenants, &cap);
	return 0;
}

void kerf_state_release(struct kerf_state *st)
{
	for (size_t i = 0; i < st->nr_wl; i++) {
		free(st->wl[i]->pods);
		free(st->wl[i]->asked_by);
		free(st->wl[i]->nominated);
		free(st->wl[i]);
	}
	free(st->wl);
	free(st->usage_avg);
	free(st->reserved);
	kerf_cluster_release(&st->cluster);
	kerf_tenants_release(&st->tenants);
	memset(st, 0, sizeof(*st));
}

/*
 * What MIG pod p is charged: the most its profile counts (kerf_mig_gpu_milli)
 * on any model it may run on that has GPUs in MIG mode in c; 0 when none
 * can serve it.
 */
static int32_t mig_charge(const struct kerf_cluster *c, const struct kerf_pod *p)
{
	int32_t best = 0;

	for (size_t i = 0; i < c->nr_models; i++) {
		const struct kerf_mig_model *m = c->models[i].mig;
		int pi;

		if (!(c->mig_models >> i & 1) || !m ||
		    (p->model_mask && !(p->model_mask >> i & 1)))
			continue;
		pi = kerf_mig_profile_for(m, p->mig_slices, (uint32_t)p->gpu_mem_mib);
		if (pi >= 0 && kerf_mig_gpu_milli(m, (unsigned)pi) > best)
			best = kerf_mig_gpu_milli(m, (unsigned)pi);
	}
	return best;
}

int kerf_state_submit(struct kerf_state *st, const struct kerf_workload *w,
		      int64_t now_ms, struct kerf_err *err)
{
	struct kerf_workload *copy;
	int rc = kerf_workload_validate(w, err);

	if (rc < 0)
		return rc;
	if (w->tenant <= KERF_TENANT_ROOT || (size_t)w->tenant >= st->tenants.nr ||
	    !kerf_tenant_is_leaf(&st->tenants.t[w->tenant]))
		return kerf_err_set(err, -KERF_EINVAL,
				    "workload '%s': tenant must be a leaf of the tenant tree",
				    w->name);
	if (w->class_idx < 0 || w->class_idx >= st->classes.nr)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workload '%s': unknown priority class", w->name);
	if (st->next_id == UINT32_MAX)
		return kerf_err_set(err, -KERF_ELIMIT, "workload ids exhausted");
	if (st->nr_wl == st->alloc_wl) {
		size_t want = st->alloc_wl ? st->alloc_wl * 2 : 256;
		struct kerf_workload **grown = realloc(st->wl, want * sizeof(*grown));

		if (!grown)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		st->wl = grown;
		st->alloc_wl = want;
	}
	copy = malloc(sizeof(*copy));
	if (!copy)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	*copy = *w;
	copy->id = st->next_id++;
	copy->state = KERF_WL_PENDING;
	copy->pods = NULL;
	copy->asked_by = NULL;
	copy->nr_asked_by = 0;
	copy->nominated = NULL;
	copy->nr_nominated = 0;
	copy->nr_preemptions = 0;
	copy->preempt_deadline_ms = 0;
	copy->nr_victims = 0;
	copy->borrowed = false;
	copy->nr_bound = 0;
	kerf_res_zero(&copy->charged);
	copy->nonpreemptible = !st->classes.c[w->class_idx].preemptible;
	copy->idle_since_ms = -1;
	copy->idle_notified = false;
	copy->idle_reclaim = false;
	copy->util_pct = 100;
	copy->submit_ms = now_ms;
	/*
	 * Who the pods are, for the GPUs they may share.  A shared tenant's
	 * pods go without a tenant: whom they share with does not matter to
	 * them, and identical pods of many tenants stay one shape for the
	 * score cache.
	 */
	for (int i = 0; i < copy->nr_sets; i++) {
		enum kerf_isolation iso = st->tenants.t[w->tenant].isolation;
		struct kerf_pod *p = &copy->sets[i].req;

		p->isolation = (uint8_t)iso;
		p->tenant = iso == KERF_ISOLATION_SHARED ? 0 : (uint32_t)w->tenant;
		/*
		 * A hardware-isolated tenant never shares a GPU by software: a
		 * fraction becomes a MIG instance of its size where the
		 * cluster has GPUs in MIG mode of a model that can serve it,
		 * else a whole GPU, placed and charged as one.
		 */
		if (iso == KERF_ISOLATION_HARDWARE && kerf_pod_is_fraction(p)) {
			struct kerf_pod m = *p;

			m.share = KERF_SHARE_DEFAULT;
			m.mig_slices = (uint8_t)((p->gpu_milli * 7 + KERF_GPU_MILLI - 1) /
						 KERF_GPU_MILLI);
			if (mig_charge(&st->cluster, &m) > 0) {
				*p = m;
			} else {
				p->gpu_milli = KERF_GPU_MILLI;
				p->share = KERF_SHARE_DEFAULT;
			}
		}
		/* a MIG instance is charged its compute slices' share */
		if (kerf_pod_is_mig(p)) {
			int32_t charge = mig_charge(&st->cluster, p);

			if (charge > 0)
				p->gpu_milli = charge;
		}
	}
	copy->pending = KERF_PENDING_NEW;
	copy->pending_text[0] = '\0';
	st->wl[st->nr_wl++] = copy;
	return (int)copy->id;
}

void kerf_state_notice(struct kerf_state *st, enum kerf_notice_kind kind,
		       int tenant, uint32_t workload, int32_t pct, int64_t now_ms)
{
	st->notices[st->nr_notices++ % KERF_NOTICES] = (struct kerf_notice){
		.at_ms = now_ms, .kind = kind, .tenant = tenant,
		.workload = workload, .pct = pct,
	};
}

struct kerf_workload *kerf_state_find(const struct kerf_state *st, uint32_t id)
{
	/* ids are assigned in submission order: binary search */
	size_t lo = 0, hi = st->nr_wl;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->wl[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < st->nr_wl && st->wl[lo]->id == id ? st->wl[lo] : NULL;
}

/* Unbind and release everything a running workload holds. */
static int give_back(struct kerf_state *st, uint32_t id, struct kerf_err *err,
		     struct kerf_workload **out)
{
	struct kerf_workload *w = kerf_state_find(st, id);
	int rc;

	if (!w)
		return kerf_err_set(err, -KERF_ENOTFOUND, "workload %" PRIu32 ": not found", id);
	if (w->state != KERF_WL_RUNNING)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workload '%s': not running",
				    w->name);
	for (uint32_t k = w->nr_bound; k-- > 0;) {
		rc = kerf_cluster_unbind(&st->cluster, &w->sets[w->pods[k].set].req,
					 w->pods[k].b, err);
		if (rc < 0)
			return rc;
	}
	rc = kerf_quota_release(&st->tenants, w->tenant, &w->charged,
				w->nonpreemptible, err);
	if (rc < 0)
		return rc;
	if (!w->borrowed)
		kerf_quota_release_own(&st->tenants, w->tenant, &w->charged);
	w->borrowed = false;
	free(w->pods);
	w->pods = NULL;
	w->nr_bound = 0;
	kerf_res_zero(&w->charged);
	/* a victim that leaves, however it leaves, is one less to wait for */
	if (w->preempt_deadline_ms > 0) {
		struct kerf_workload *p = kerf_state_find(st, w->preempted_by);

		if (p && p->nr_victims > 0)
			p->nr_victims--;
		w->preempt_deadline_ms = 0;
		w->preempted_by = 0;
	}
	*out = w;
	return 0;
}

int kerf_state_finish(struct kerf_state *st, uint32_t id, int64_t now_ms,
		      struct kerf_err *err)
{
	struct kerf_workload *w;
	int rc;

	kerf_state_age(st, now_ms);   /* its use so far counts */
	rc = give_back(st, id, err, &w);
	if (rc == 0)
		w->state = KERF_WL_FINISHED;
	return rc;
}

int kerf_state_requeue(struct kerf_state *st, uint32_t id, int64_t now_ms,
		       struct kerf_err *err)
{
	struct kerf_workload *w;
	int rc;

	kerf_state_age(st, now_ms);   /* its use so far counts */
	rc = give_back(st, id, err, &w);
	if (rc == 0) {
		w->state = KERF_WL_PENDING;
		w->pending = KERF_PENDING_REQUEUED;
		/* idling belongs to a run: the next starts without a stretch */
		w->idle_since_ms = -1;
		w->idle_notified = false;
		w->idle_reclaim = false;
		snprintf(w->pending_text, sizeof(w->pending_text),
			 "lost its pods; waiting to be placed again");
	}
	return rc;
}

/*
 * 65536 * 2^(-dt / half_life): halve once per whole half-life, linear
 * within the last (an integer stand-in for exp, the same on every machine).
 */
static int64_t decay_q16(int64_t dt, int64_t half_life)
{
	int64_t halvings = dt / half_life, r = dt % half_life;

	if (halvings >= 16)
		return 0;
	return (65536 >> halvings) * (2 * half_life - r) / (2 * half_life);
}

void kerf_state_age(struct kerf_state *st, int64_t now_ms)
{
	int64_t dt = now_ms - st->avg_at_ms, f;

	if (dt <= 0)
		return;
	kerf_budget_account(st, dt, now_ms);
	f = decay_q16(dt, st->half_life_ms);
	for (size_t t = 0; t < st->tenants.nr; t++)
		for (int i = 0; i < st->tenants.nr_res; i++) {
			int64_t a = st->usage_avg[t].v[i];
			int64_t u = st->tenants.t[t].usage.v[i];

			st->usage_avg[t].v[i] = (a * f + u * (65536 - f)) >> 16;
		}
	st->avg_at_ms = now_ms;
}

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
				    w->name, g, n->name);
	for (unsigned k = 0; k < n->mig->gpu[g].nr; k++) {
		const struct kerf_mig_instance *in = &n->mig->gpu[g].inst[k];

		found |= in->in_use && in->profile == pi && in->start == start;
	}
	if (!found)
		return kerf_err_set(err, -KERF_ERANGE,
				    "workload '%s': its MIG instance on '%s' GPU %d slice %u is not in use",
				    w->name, n->name, g, start);
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

	if (w->state != KERF_WL_RUNNING)
		return w->nr_bound == 0 ? 0
					: kerf_err_set(err, -KERF_ERANGE,
						       "workload '%s': holds pods but is not running",
						       w->name);
	if (w->nr_bound < w->min_count || w->nr_bound > total)
		return kerf_err_set(err, -KERF_ERANGE,
				    "workload '%s': gang not whole: %u bound, min_count %u",
				    w->name, w->nr_bound, w->min_count);
	for (uint32_t k = 0; k < w->nr_bound; k++) {
		const struct kerf_wl_pod *wp = &w->pods[k];
		const struct kerf_pod *p = &w->sets[wp->set].req;
		const struct kerf_node *n;
		struct node_use *u;

		if (wp->b.node >= st->cluster.nr_slots ||
		    !st->cluster.nodes[wp->b.node].live)
			return kerf_err_set(err, -KERF_ERANGE,
					    "workload '%s': bound to a node that does not exist",
					    w->name);
		n = &st->cluster.nodes[wp->b.node];
		u = &use[wp->b.node];
		if ((w->topology == KERF_TOPO_NODE && wp->b.node != w->pods[0].b.node) ||
		    (w->topology == KERF_TOPO_NVLINK &&
		     (n->domain != st->cluster.nodes[w->pods[0].b.node].domain ||
		      (n->domain == 0 && wp->b.node != w->pods[0].b.node))))
			return kerf_err_set(err, -KERF_ERANGE,
					    "workload '%s': topology constraint broken",
					    w->name);
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
	kerf_res_add(&leaf_use[w->tenant], &w->charged);
	if (w->nonpreemptible)
		kerf_res_add(&leaf_np[w->tenant], &w->charged);
	if (!w->borrowed)
		kerf_res_add(&leaf_own[w->tenant], &w->charged);
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
			if (KERF_GPU_MILLI - n->gpu_free_milli[g] != u->gpu_milli[g])
				return kerf_err_set(err, -KERF_ERANGE,
						    "node '%s' GPU %d: %d milli in use, running workloads hold %d",
						    n->name, g,
						    KERF_GPU_MILLI - n->gpu_free_milli[g],
						    u->gpu_milli[g]);
			if (n->gpu_mem_mib[g] > 0 &&
			    n->gpu_mem_mib[g] - n->gpu_mem_free_mib[g] != u->gpu_mem_mib[g])
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

int kerf_state_check(const struct kerf_state *st, struct kerf_err *err)
{
	size_t nt = st->tenants.nr;
	struct node_use *use = calloc(st->cluster.nr_slots ? st->cluster.nr_slots : 1,
				      sizeof(*use));
	struct kerf_res *leaf_use = calloc(nt, sizeof(*leaf_use));
	struct kerf_res *leaf_np = calloc(nt, sizeof(*leaf_np));
	struct kerf_res *leaf_own = calloc(nt, sizeof(*leaf_own));
	int rc = 0;

	if (!use || !leaf_use || !leaf_np || !leaf_own) {
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
	for (size_t t = 1; t < nt && rc == 0; t++) {
		const struct kerf_tenant *x = &st->tenants.t[t];

		if (x->nr_children)
			continue;
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
	return rc;
}
