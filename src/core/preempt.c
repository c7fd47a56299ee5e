#include "core/preempt.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

bool kerf_quota_within_nominal(const struct kerf_tenants *tt, int leaf,
			       const struct kerf_res *req)
{
	for (int t = leaf; t > KERF_TENANT_ROOT; t = tt->t[t].parent)
		for (int i = 0; i < tt->nr_res; i++)
			if (req->v[i] && kerf_tenant_governs(tt, t, i) &&
			    kerf_qty_add(tt->t[t].usage_own.v[i], req->v[i]) >
				    tt->t[t].quota.nominal.v[i])
				return false;
	return true;
}

bool kerf_tenant_borrowing(const struct kerf_tenants *tt, int t)
{
	for (; t > KERF_TENANT_ROOT; t = tt->t[t].parent)
		for (int i = 0; i < tt->nr_res; i++)
			if (kerf_tenant_governs(tt, t, i) &&
			    tt->t[t].usage.v[i] > tt->t[t].quota.nominal.v[i])
				return true;
	return false;
}

static int64_t gpu_milli_held(const struct kerf_workload *w)
{
	int64_t g = 0;

	const int64_t *charged = kerf_wl_charge(w);

	for (int i = KERF_RES_GPU0; charged && i < w->nr_charged; i++)
		g += charged[i];
	return g;
}

/* GPU time that would be lost if v left now. */
static int64_t work_at_risk(const struct kerf_workload *v, int64_t now_ms)
{
	int64_t since = v->last_checkpoint_ms > v->start_ms ? v->last_checkpoint_ms
							    : v->start_ms;

	return now_ms > since ? (now_ms - since) * gpu_milli_held(v) : 0;
}

/* Did workload id ever ask w to leave (whether w left or not)? */
static bool asked_by(const struct kerf_workload *w, uint32_t id)
{
	for (uint32_t i = 0; i < kerf_wl_pre(w)->nr_asked_by; i++)
		if (w->pre->asked_by[i] == id)
			return true;
	return false;
}

/* Evicted KERF_MAX_PREEMPTIONS_PER_HOUR times within the last hour? */
static bool thrashed(const struct kerf_workload *v, int64_t now_ms)
{
	int64_t oldest;

	if (kerf_wl_pre(v)->nr_preemptions < KERF_MAX_PREEMPTIONS_PER_HOUR)
		return false;
	/* the ring slot written next holds the oldest of the last three */
	oldest = v->pre->evicted_at[v->pre->nr_preemptions % KERF_MAX_PREEMPTIONS_PER_HOUR];
	return now_ms - oldest < 3600 * 1000;
}

struct candidate {
	struct kerf_workload *w;
	int64_t risk;
	int32_t value;
};

static int cmp_candidates(const void *pa, const void *pb)
{
	const struct candidate *a = pa, *b = pb;

	if (a->risk != b->risk)
		return a->risk < b->risk ? -1 : 1;
	if (a->value != b->value)
		return a->value < b->value ? -1 : 1;
	if (a->w->start_ms != b->w->start_ms)
		return a->w->start_ms > b->w->start_ms ? -1 : 1; /* newest first */
	if (a->w->seq != b->w->seq)
		return a->w->seq < b->w->seq ? -1 : 1;
	return strcmp(a->w->key, b->w->key);
}

/* Take v's pods and quota away (to be put back by restore). */
static void lift(struct kerf_state *st, struct kerf_sched *s,
		 struct kerf_workload *v)
{
	struct kerf_res charged;

	for (uint32_t k = v->nr_bound; k-- > 0;)
		kerf_sched_unreserve(s, &st->cluster, &v->sets[v->pods[k].set].req,
				     v->pods[k].b, NULL);
	kerf_workload_charged(v, &charged);
	kerf_quota_release(&st->tenants, v->tenant, &charged,
			   v->nonpreemptible, NULL);
	if (!v->borrowed)
		kerf_quota_release_own(&st->tenants, v->tenant, &charged);
}

static void restore(struct kerf_state *st, struct kerf_sched *s,
		    struct kerf_workload *v)
{
	struct kerf_res charged;

	/* its places are free: nothing else was kept while it was lifted */
	for (uint32_t k = 0; k < v->nr_bound; k++)
		kerf_sched_reserve(s, &st->cluster, &v->sets[v->pods[k].set].req,
				   v->pods[k].b, NULL);
	kerf_workload_charged(v, &charged);
	kerf_quota_charge(&st->tenants, v->tenant, &charged, v->nonpreemptible);
	if (!v->borrowed)
		kerf_quota_charge_own(&st->tenants, v->tenant, &charged);
}

/* w's request with its GPU pods on model f; false if a set forbids f. */
static bool request_on_model(const struct kerf_workload *w, int f,
			     struct kerf_res *req)
{
	struct kerf_res one;
	bool allowed = true;

	kerf_res_zero(req);
	for (int i = 0; i < w->nr_sets; i++) {
		const struct kerf_pod *p = &w->sets[i].req;

		if (p->nr_gpus > 0 && f >= 0 && p->model_mask &&
		    !(p->model_mask >> f & 1))
			allowed = false;
		kerf_res_of_pod(&one, p, f, w->sets[i].count);
		kerf_res_add(req, &one);
	}
	return allowed;
}

/*
 * Could evicting v help w at all?  Only if v holds something on a node
 * whose GPU model w may use (any node, for CPU-only work).
 */
static bool helps(const struct kerf_state *st, const struct kerf_workload *w,
		  const struct kerf_workload *v)
{
	uint64_t models = 0;
	bool gpu = false;

	for (int i = 0; i < w->nr_sets; i++) {
		if (w->sets[i].req.nr_gpus == 0)
			return true;   /* CPU-only pods can go anywhere */
		gpu = true;
		models |= w->sets[i].req.model_mask ? w->sets[i].req.model_mask
						    : UINT64_MAX;
	}
	if (!gpu)
		return true;
	for (uint32_t k = 0; k < v->nr_bound; k++) {
		const struct kerf_node *n = &st->cluster.nodes[v->pods[k].b.node];

		if (n->nr_gpus > 0 && (models >> n->model & 1))
			return true;
	}
	return false;
}

/*
 * Could w reclaim: stay within its tenant's nominal on some flavor, counting
 * the workloads of its tenant that already wait for victims of their own
 * (together they must fit, or reclaims of one tenant overlap and thrash)?
 */
static bool may_reclaim(const struct kerf_state *st, const struct kerf_workload *w)
{
	int models = (int)st->cluster.nr_models;

	for (int f = models ? 0 : -1; f < models; f++) {
		struct kerf_res req, other;

		if (!request_on_model(w, f, &req))
			continue;
		for (size_t i = 0; i < st->nr_wl; i++) {
			const struct kerf_workload *o = st->wl[i];

			if (o != w && o->state == KERF_WL_PENDING && kerf_wl_pre(o)->nr_victims > 0 &&
			    o->tenant == w->tenant) {
				request_on_model(o, f, &other);
				kerf_res_add(&req, &other);
			}
		}
		if (kerf_quota_within_nominal(&st->tenants, w->tenant, &req))
			return true;
	}
	return false;
}

bool kerf_preempt_plan(struct kerf_state *st, struct kerf_sched *s,
		       struct kerf_workload *w, int64_t now_ms,
		       kerf_fits_fn fits, void *ctx,
		       struct kerf_preempt_plan *plan)
{
	int32_t value = st->classes.c[w->class_idx].value;
	bool reclaim = may_reclaim(st, w), ok = false;
	struct candidate *cand = malloc((st->nr_wl ? st->nr_wl : 1) * sizeof(*cand));
	struct kerf_workload *chosen[KERF_MAX_VICTIMS];
	size_t nr = 0, nr_chosen = 0;

	memset(plan, 0, sizeof(*plan));
	if (!cand) {
		plan->oom = true;
		return false;
	}
	for (size_t i = 0; i < st->nr_wl; i++) {
		struct kerf_workload *v = st->wl[i];
		const struct kerf_priority_class *pc = &st->classes.c[v->class_idx];
		bool by_priority, by_reclaim;

		if (v->state != KERF_WL_RUNNING || v->nonpreemptible ||
		    kerf_wl_pre(v)->preempt_deadline_ms > 0 || v->leaving || !pc->preemptible ||
		    now_ms - v->start_ms < pc->min_runtime_ms ||
		    thrashed(v, now_ms))
			continue;
		if (!helps(st, w, v))
			continue;
		by_priority = pc->value < value;
		by_reclaim = reclaim && v->borrowed && pc->value <= value &&
			     v->tenant != w->tenant;
		/* never back at one that evicted w: no A-B-A cycles */
		if ((!by_priority && !by_reclaim) || asked_by(w, v->id))
			continue;
		/* its eviction would be refused: no handshake started for it */
		if (v->pdb_protected) {
			plan->nr_protected++;
			continue;
		}
		cand[nr++] = (struct candidate){
			.w = v, .risk = work_at_risk(v, now_ms), .value = pc->value,
		};
	}
	qsort(cand, nr, sizeof(*cand), cmp_candidates);
	/*
	 * Greedy in the candidates' order: the shortest prefix that makes w
	 * fit.  Lift them all and probe once; if that is not enough, nothing
	 * is; otherwise find the prefix by bisection (fits() is monotone in
	 * the prefix: more room never hurts).
	 */
	if (nr > KERF_MAX_VICTIMS)
		nr = KERF_MAX_VICTIMS;
	for (size_t i = 0; i < nr; i++) {
		lift(st, s, cand[i].w);
		chosen[nr_chosen++] = cand[i].w;
	}
	ok = nr_chosen > 0 && fits(ctx, w);
	if (ok) {
		size_t lo = 1, hi = nr_chosen, lifted = nr_chosen;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			while (lifted > mid)
				restore(st, s, chosen[--lifted]);
			while (lifted < mid)
				lift(st, s, chosen[lifted++]);
			if (fits(ctx, w))
				hi = mid;
			else
				lo = mid + 1;
		}
		while (lifted > lo)
			restore(st, s, chosen[--lifted]);
		while (lifted < lo)
			lift(st, s, chosen[lifted++]);
		nr_chosen = lo;
	}
	if (ok) {
		/* prune: put back every victim w can do without */
		for (size_t k = nr_chosen - 1; k-- > 0;) {
			restore(st, s, chosen[k]);
			if (fits(ctx, w)) {
				memmove(&chosen[k], &chosen[k + 1],
					(nr_chosen - k - 1) * sizeof(*chosen));
				nr_chosen--;
			} else {
				lift(st, s, chosen[k]);
			}
		}
		for (size_t k = 0; k < nr_chosen; k++) {
			plan->victims[k] = chosen[k]->id;
			plan->reclaim |= st->classes.c[chosen[k]->class_idx].value >= value;
		}
		plan->nr = (uint32_t)nr_chosen;
	}
	/* leave the state as it was */
	for (size_t k = nr_chosen; k-- > 0;)
		restore(st, s, chosen[k]);
	free(cand);
	return ok;
}

static bool has_node(const uint32_t *nodes, uint32_t nr, uint32_t node)
{
	for (uint32_t i = 0; i < nr; i++)
		if (nodes[i] == node)
			return true;
	return false;
}

int kerf_preempt_start(struct kerf_state *st, struct kerf_workload *w,
		       const struct kerf_preempt_plan *plan, int64_t now_ms,
		       struct kerf_decisions *out)
{
	uint32_t nr_pods = 0, *nominated;
	struct kerf_wl_preempt *wp = kerf_workload_preempt(w);

	/*
	 * Each victim remembers who asked it to leave, so that it never asks
	 * back (no preemption cycle, even when this request is cancelled).
	 * Everything that can fail is done first: out of memory, nothing
	 * has started.
	 */
	if (!wp)
		return -KERF_ENOMEM;
	for (uint32_t i = 0; i < plan->nr; i++) {
		struct kerf_workload *v = kerf_state_find(st, plan->victims[i]);
		struct kerf_wl_preempt *vp = kerf_workload_preempt(v);
		size_t alloc;

		if (!vp)
			return -KERF_ENOMEM;
		alloc = vp->nr_asked_by;
		if (KERF_GROW(vp->asked_by, alloc, (size_t)vp->nr_asked_by + 1) < 0)
			return -KERF_ENOMEM;
		nr_pods += v->nr_bound;
	}
	nominated = malloc((nr_pods ? nr_pods : 1) * sizeof(*nominated));
	if (!nominated || kerf_decisions_reserve(out, plan->nr) < 0) {
		free(nominated);
		return -KERF_ENOMEM;
	}
	for (uint32_t i = 0; i < plan->nr; i++) {
		struct kerf_workload *v = kerf_state_find(st, plan->victims[i]);

		if (!asked_by(v, w->id))
			v->pre->asked_by[v->pre->nr_asked_by++] = w->id;
	}
	kerf_preempt_unnominate(w);
	wp->nominated = nominated;
	for (uint32_t i = 0; i < plan->nr; i++) {
		struct kerf_workload *v = kerf_state_find(st, plan->victims[i]);
		struct kerf_wl_preempt *vp = v->pre;
		int64_t grace = st->classes.c[v->class_idx].checkpoint_grace_ms;

		vp->preempt_deadline_ms = now_ms + (grace > 0 ? grace : 1);
		if (vp->preempt_deadline_ms < st->deadline_hint_ms)
			st->deadline_hint_ms = vp->preempt_deadline_ms;
		vp->preempted_by = w->id;
		for (uint32_t k = 0; k < v->nr_bound; k++)
			if (!has_node(wp->nominated, wp->nr_nominated, v->pods[k].b.node))
				wp->nominated[wp->nr_nominated++] = v->pods[k].b.node;
		kerf_decisions_push(out, &(struct kerf_decision){
			.kind = KERF_DECIDE_PREEMPT, .workload = v->id,
			.other = w->id, .at_ms = vp->preempt_deadline_ms,
		});
	}
	wp->nr_victims = plan->nr;
	return 0;
}

void kerf_preempt_unnominate(struct kerf_workload *w)
{
	if (!w->pre)
		return;
	free(w->pre->nominated);
	w->pre->nominated = NULL;
	w->pre->nr_nominated = 0;
}

/*
 * v leaves now: lost work recorded, queued again (or finished); EVICT.
 * With st->hold_evicted it is only marked leaving: its devices and charge
 * stay (its preemptor keeps waiting for it) until kerf_state_finish.
 */
static int evict(struct kerf_state *st, struct kerf_workload *v, int64_t now_ms,
		 struct kerf_decisions *out, struct kerf_err *err)
{
	bool idle = v->idle_reclaim;
	int rc = 0;

	if (kerf_decisions_reserve(out, 1) < 0)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	/* asked to leave: it has its pre (kerf_preempt_start, kerf_idle_pass) */
	v->pre->evicted_at[v->pre->nr_preemptions % KERF_MAX_PREEMPTIONS_PER_HOUR] = now_ms;
	v->pre->lost_gpu_milli_ms += work_at_risk(v, now_ms);
	v->pre->nr_preemptions++;
	/* reclaimed for idling: it ends here rather than coming back idle */
	if (st->hold_evicted)
		v->leaving = true;
	else
		rc = idle ? kerf_state_finish(st, v->id, now_ms, err)
			  : kerf_state_requeue(st, v->id, now_ms, err);
	if (rc < 0)
		return rc;
	kerf_decisions_push(out, &(struct kerf_decision){
		.kind = KERF_DECIDE_EVICT,
		.reason = idle ? KERF_EVICT_IDLE : KERF_EVICT_PREEMPTED,
		.workload = v->id, .requeued = !idle && !st->hold_evicted,
		.at_ms = now_ms,
	});
	return 0;
}

int kerf_preempt_ack(struct kerf_state *st, uint32_t id, int64_t now_ms,
		     struct kerf_decisions *out, struct kerf_err *err)
{
	struct kerf_workload *v = kerf_state_find(st, id);

	if (!v || v->state != KERF_WL_RUNNING || kerf_wl_pre(v)->preempt_deadline_ms == 0)
		return kerf_err_set(err, -KERF_EINVAL,
				    "checkpoint acknowledgement for a workload that was not asked");
	if (v->leaving)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workload '%s': checkpoint acknowledged after its eviction",
				    v->key);
	v->last_checkpoint_ms = now_ms;
	return evict(st, v, now_ms, out, err);
}

int kerf_preempt_expire_one(struct kerf_state *st, uint32_t id, int64_t now_ms,
			    struct kerf_decisions *out, struct kerf_err *err)
{
	struct kerf_workload *v = kerf_state_find(st, id);

	if (!v || v->state != KERF_WL_RUNNING || kerf_wl_pre(v)->preempt_deadline_ms == 0 ||
	    v->pre->preempt_deadline_ms > now_ms || v->leaving)
		return kerf_err_set(err, -KERF_EINVAL,
				    "expiry of a workload that is not a due victim");
	return evict(st, v, now_ms, out, err);
}

int kerf_preempt_expire(struct kerf_state *st, int64_t now_ms,
			struct kerf_decisions *out, struct kerf_err *err)
{
	struct kerf_workload **due;
	int64_t next = INT64_MAX;
	size_t nr = 0;
	int rc = 0;

	/* kerf serve runs 50,000 workloads: none is walked before a deadline */
	if (st->deadline_hint_ms > now_ms)
		return 0;
	for (size_t i = 0; i < st->nr_wl; i++) {
		const struct kerf_workload *v = st->wl[i];

		if (v->state != KERF_WL_RUNNING || kerf_wl_pre(v)->preempt_deadline_ms <= 0 || v->leaving)
			continue;
		if (v->pre->preempt_deadline_ms <= now_ms)
			nr++;
		else if (v->pre->preempt_deadline_ms < next)
			next = v->pre->preempt_deadline_ms;
	}
	st->deadline_hint_ms = next;
	if (nr == 0)
		return 0;
	due = malloc(nr * sizeof(*due));
	if (!due)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	nr = 0;
	for (size_t i = 0; i < st->nr_wl; i++) {
		struct kerf_workload *v = st->wl[i];

		if (v->state == KERF_WL_RUNNING && kerf_wl_pre(v)->preempt_deadline_ms > 0 &&
		    v->pre->preempt_deadline_ms <= now_ms && !v->leaving)
			due[nr++] = v;
	}
	kerf_state_sort_by_seq(due, nr);
	for (size_t i = 0; i < nr && rc == 0; i++)
		rc = evict(st, due[i], now_ms, out, err);
	free(due);
	return rc < 0 ? rc : (int)nr;
}
