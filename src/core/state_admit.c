/*
 * state_admit: admission as the state records it (the cycle places, then
 * kerf_state_admit), and adoption of work already running after a
 * restart, with the MIG steps its instances need.
 */
#include "core/state.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/assert.h"
#include "base/grow.h"
#include "base/slab.h"
#include "core/mig/place.h"
#include "core/preempt.h"
#include "core/state_int.h"

void kerf_state_charge_of(const struct kerf_state *st,
			  const struct kerf_workload *w,
			  const struct kerf_wl_pod *pods, uint32_t nr,
			  struct kerf_res *req)
{
	kerf_res_zero(req);
	for (uint32_t k = 0; k < nr; k++) {
		const struct kerf_node *n = &st->cluster.nodes[pods[k].b.node];
		struct kerf_res one;

		kerf_res_of_pod(&one, &w->sets[pods[k].set].req,
				n->nr_gpus ? n->model : -1, 1);
		kerf_res_add(req, &one);
	}
}

/* The quota dimensions a charge made now can use. */
static size_t charge_dims(const struct kerf_state *st)
{
	size_t n = KERF_RES_GPU0 + st->cluster.nr_models;

	return n < KERF_MAX_RES ? n : KERF_MAX_RES;
}

/*
 * Its own copy of a pod list, with room after it for a charge of the
 * quota dimensions the cluster has now (CPU, memory, each GPU model known:
 * a charge is made of the pods' nodes' models); NULL on OOM.
 */
size_t kerf_state_pods_bytes(uint32_t nr, size_t dims)
{
	return kerf_wl_charge_at(nr) + dims * sizeof(int64_t);
}

static struct kerf_wl_pod *copy_pods(const struct kerf_state *st,
				     const struct kerf_wl_pod *pods, uint32_t nr)
{
	struct kerf_wl_pod *copy = kerf_slab_alloc(kerf_state_pods_bytes(nr, charge_dims(st)));

	if (copy && nr)
		memcpy(copy, pods, nr * sizeof(*copy));
	return copy;
}

/*
 * The pods (bound in the cluster; pods is w's own copy, taken over) are
 * w's: it holds them and its charge, and runs.
 */
static void record_admission(struct kerf_state *st, struct kerf_workload *w,
			     struct kerf_wl_pod *pods, uint32_t nr,
			     const struct kerf_res *charge, int64_t start_ms)
{
	size_t dims = charge_dims(st);

	w->pods = pods;
	w->nr_bound = nr;
	w->nr_charged = (uint8_t)dims;
	for (size_t i = 0; i < KERF_MAX_RES; i++) {
		/* the pods' nodes' models are known: nothing falls outside */
		KERF_ASSERT(i < dims || charge->v[i] == 0);
		if (i < dims)
			kerf_wl_charge(w)[i] = charge->v[i];
	}
	/* borrowed: did this admission take its tenant beyond nominal? */
	w->borrowed = !kerf_quota_within_nominal(&st->tenants, w->tenant, charge);
	kerf_quota_charge(&st->tenants, w->tenant, charge, w->nonpreemptible);
	if (!w->borrowed)
		kerf_quota_charge_own(&st->tenants, w->tenant, charge);
	kerf_state_set_wl_state(st, w, KERF_WL_RUNNING);
	w->start_ms = start_ms;
	w->last_checkpoint_ms = start_ms;
	w->pending = KERF_PENDING_NONE;
	kerf_workload_clear_text(w);
	w->pending_told = 0;
}

/*
 * MIG: the instances on GPU g of node i as the core has them, against
 * what it told the caller before: one MIG record per instance to destroy
 * or create.  out NULL: the caller knows (adoption); told catches up.
 */
static uint32_t mig_steps(struct kerf_state *st, uint32_t i, int g,
			  int64_t now_ms, struct kerf_decisions *out)
{
	struct kerf_node_mig *nm = st->cluster.nodes[i].mig;
	const struct kerf_mig_layout *now = &nm->gpu[g];
	struct kerf_mig_layout *told = &nm->told[g];
	uint32_t steps = 0;

	for (int pass = 0; pass < 2; pass++) {
		/* destroys first: a create may need their room */
		const struct kerf_mig_layout *from = pass ? now : told;
		const struct kerf_mig_layout *to = pass ? told : now;

		for (unsigned k = 0; k < from->nr; k++) {
			bool kept = false;

			for (unsigned j = 0; j < to->nr && !kept; j++)
				kept = to->inst[j].profile == from->inst[k].profile &&
				       to->inst[j].start == from->inst[k].start;
			if (kept)
				continue;
			steps++;
			if (out)
				kerf_decisions_push(out, &(struct kerf_decision){
					.kind = KERF_DECIDE_MIG,
					.reason = (uint8_t)pass,
					.b = { .node = i, .gpus = (uint16_t)(1u << g),
					       .mig_start = from->inst[k].start },
					.value = from->inst[k].profile,
					.at_ms = now_ms,
				});
		}
	}
	if (out)
		*told = *now;
	return steps;
}

/* MIG steps of w's MIG pods: counted (out NULL) or appended. */
static uint32_t mig_steps_of(struct kerf_state *st, const struct kerf_workload *w,
			     const struct kerf_wl_pod *pods, uint32_t nr,
			     int64_t now_ms, struct kerf_decisions *out)
{
	uint32_t steps = 0;

	for (uint32_t k = 0; k < nr; k++) {
		const struct kerf_node *n = &st->cluster.nodes[pods[k].b.node];

		if (!kerf_pod_is_mig(&w->sets[pods[k].set].req) || !n->mig)
			continue;
		steps += mig_steps(st, pods[k].b.node, __builtin_ctz(pods[k].b.gpus),
				   now_ms, out);
	}
	return steps;
}

int kerf_state_admit(struct kerf_state *st, struct kerf_workload *w,
		     const struct kerf_wl_pod *pods, uint32_t nr,
		     const struct kerf_res *charge, int64_t now_ms,
		     struct kerf_decisions *out, struct kerf_err *err)
{
	uint32_t steps = mig_steps_of(st, w, pods, nr, now_ms, NULL);
	struct kerf_wl_pod *held;

	KERF_ASSERT(w->state == KERF_WL_PENDING && nr >= w->min_count);
	if (kerf_decisions_reserve(out, (size_t)nr + steps) < 0 ||
	    !(held = copy_pods(st, pods, nr)))
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	record_admission(st, w, held, nr, charge, now_ms);
	mig_steps_of(st, w, pods, nr, now_ms, out);
	for (uint32_t k = 0; k < nr; k++) {
		const struct kerf_pod *p = &w->sets[pods[k].set].req;

		kerf_decisions_push(out, &(struct kerf_decision){
			.kind = KERF_DECIDE_BIND, .workload = w->id,
			.pod = k, .set = pods[k].set, .b = pods[k].b,
			.share = kerf_pod_is_fraction(p) ? p->share : 0,
			.value = p->gpu_milli, .at_ms = now_ms,
		});
	}
	return 0;
}

/* Does the placement keep w's topology constraint? */
static bool topology_kept(const struct kerf_state *st,
			  const struct kerf_workload *w,
			  const struct kerf_wl_pod *pods, uint32_t nr)
{
	const struct kerf_cluster *c = &st->cluster;

	for (uint32_t k = 1; k < nr; k++) {
		const struct kerf_node *n = &c->nodes[pods[k].b.node];
		const struct kerf_node *first = &c->nodes[pods[0].b.node];

		if (w->topology == KERF_TOPO_NODE && pods[k].b.node != pods[0].b.node)
			return false;
		if (w->topology == KERF_TOPO_NVLINK &&
		    (n->domain != first->domain ||
		     (n->domain == 0 && pods[k].b.node != pods[0].b.node)))
			return false;
	}
	return true;
}

int kerf_state_adopt(struct kerf_state *st, const char *key,
		     const struct kerf_workload *w, int64_t submit_ms,
		     int64_t start_ms, const struct kerf_wl_pod *pods,
		     uint32_t nr_pods, struct kerf_err *err)
{
	uint32_t per_set[KERF_MAX_PODSETS] = { 0 };
	struct kerf_workload *copy;
	struct kerf_wl_pod *held;
	struct kerf_res charge;
	uint32_t bound = 0;
	int rc = kerf_state_check_new(st, key, w, err);

	if (rc < 0)
		return rc;
	if (nr_pods < w->min_count || nr_pods > kerf_workload_pods(w))
		return kerf_err_set(err, -KERF_EINVAL,
				    "workload '%s': %u pods running, needs %u to %u",
				    key, nr_pods, w->min_count, kerf_workload_pods(w));
	for (uint32_t k = 0; k < nr_pods; k++) {
		if (pods[k].set >= w->nr_sets ||
		    ++per_set[pods[k].set] > w->sets[pods[k].set].count)
			return kerf_err_set(err, -KERF_EINVAL,
					    "workload '%s': pod %u: pod set %u is not there or has fewer pods",
					    key, k, pods[k].set);
	}
	held = copy_pods(st, pods, nr_pods);
	if (!held || kerf_state_reserve_one(st) < 0 ||
	    !(copy = kerf_state_make_workload(st, key, w, submit_ms))) {
		kerf_slab_free(held, kerf_state_pods_bytes(nr_pods, charge_dims(st)));
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	/*
	 * It runs with the shape it was bound with: kept as given, not
	 * resolved again; what it asked first is kept when the caller has it.
	 */
	for (int i = 0; i < copy->nr_sets; i++) {
		struct kerf_pod *p = &copy->sets[i].req;
		uint8_t iso = p->isolation;
		uint32_t tenant = p->tenant;

		*p = w->sets[i].req;
		p->isolation = iso;
		p->tenant = tenant;
		if (copy->asked)   /* else equal to sets[] (keeps_asked) */
			copy->asked[i] = kerf_workload_asked(w, i);
	}
	for (; bound < nr_pods; bound++) {
		struct kerf_err why = { 0 };

		rc = kerf_cluster_bind(&st->cluster, &copy->sets[pods[bound].set].req,
				       pods[bound].b, &why);
		if (rc < 0) {
			kerf_err_set(err, rc, "workload '%s': pod %u does not fit: %s",
				     key, bound, why.msg);
			goto undo;
		}
	}
	if (!topology_kept(st, copy, pods, nr_pods)) {
		rc = kerf_err_set(err, -KERF_EINVAL,
				  "workload '%s': its pods break its topology constraint",
				  key);
		goto undo;
	}
	kerf_state_charge_of(st, copy, pods, nr_pods, &charge);
	kerf_state_insert(st, copy);
	kerf_state_count_pending(st, copy, +1);   /* pending until recorded running */
	st->tenants.t[copy->tenant].nr_workloads++;
	copy->observed = true;
	record_admission(st, copy, held, nr_pods, &charge, start_ms);
	/* the caller knows its instances: nothing to tell */
	for (uint32_t k = 0; k < nr_pods; k++) {
		const struct kerf_node *n = &st->cluster.nodes[pods[k].b.node];
		int g = __builtin_ctz(pods[k].b.gpus | 0x10000u);

		if (n->mig && g < KERF_NODE_MAX_GPUS && (n->mig_gpus >> g & 1))
			n->mig->told[g] = n->mig->gpu[g];
	}
	return (int)copy->id;
undo:
	while (bound-- > 0)
		kerf_cluster_unbind(&st->cluster, &copy->sets[pods[bound].set].req,
				    pods[bound].b, NULL);
	kerf_slab_free(held, kerf_state_pods_bytes(nr_pods, charge_dims(st)));
	/* its asked[] and key too */
	kerf_slab_free(copy, kerf_state_workload_bytes(copy));
	return rc;
}

/*
 * The undo of an admission: unbind w's pods, give its charge back.  A
 * victim that leaves, however it leaves, is one less for its preemptor
 * to wait for.
 */
int kerf_state_give_back(struct kerf_state *st, struct kerf_workload *w,
			 struct kerf_err *err)
{
	struct kerf_res charged;
	int rc;

	if (w->state != KERF_WL_RUNNING)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workload '%s': not running", w->key);
	for (uint32_t k = w->nr_bound; k-- > 0;) {
		rc = kerf_cluster_unbind(&st->cluster, &w->sets[w->pods[k].set].req,
					 w->pods[k].b, err);
		KERF_ASSERT(rc == 0);  /* it bound these: they must unbind */
	}
	kerf_workload_charged(w, &charged);
	rc = kerf_quota_release(&st->tenants, w->tenant, &charged,
				w->nonpreemptible, err);
	KERF_ASSERT(rc == 0);
	if (!w->borrowed)
		kerf_quota_release_own(&st->tenants, w->tenant, &charged);
	w->borrowed = false;
	w->leaving = false;
	/* the charge with them */
	kerf_slab_free(w->pods, kerf_state_pods_bytes(w->nr_bound, w->nr_charged));
	w->pods = NULL;
	w->nr_bound = 0;
	w->nr_charged = 0;
	if (kerf_wl_pre(w)->preempt_deadline_ms > 0) {
		struct kerf_workload *p = kerf_state_find(st, w->pre->preempted_by);

		if (p && kerf_wl_pre(p)->nr_victims > 0)
			p->pre->nr_victims--;
		w->pre->preempt_deadline_ms = 0;
		w->pre->preempted_by = 0;
	}
	return 0;
}
