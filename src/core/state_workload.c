/*
 * state_workload: workloads coming into the state (submit) and going out
 * of it (finish, requeue, forget), and the acknowledgements in between.
 */
#include "core/state.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/assert.h"
#include "base/grow.h"
#include "base/slab.h"
#include "core/mig/geometry.h"
#include "core/preempt.h"
#include "core/state_int.h"

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

/*
 * A hardware-isolated tenant never shares a GPU by software: its fraction
 * becomes a MIG instance of the fraction's share of a GPU's compute slices
 * (rounded up) where the cluster has GPUs in MIG mode that can serve it,
 * else a whole GPU, placed and charged as one.  Models differ in compute
 * slices (7, an A30 4): the first model with MIG GPUs that can serve it
 * sets the slice count, and the pod keeps to the models of that count.
 */
static void harden_fraction(const struct kerf_cluster *c, struct kerf_pod *p)
{
	uint64_t allowed = p->model_mask ? p->model_mask : UINT64_MAX;
	struct kerf_pod m = *p;
	unsigned slices = 0;

	m.share = KERF_SHARE_DEFAULT;
	m.model_mask = 0;
	for (size_t i = 0; i < c->nr_models; i++) {
		const struct kerf_mig_model *mm = c->models[i].mig;
		unsigned s;

		if (!(c->mig_models >> i & 1) || !mm || !(allowed >> i & 1))
			continue;
		s = (unsigned)(((int64_t)p->gpu_milli * mm->compute_slices +
				KERF_GPU_MILLI - 1) / KERF_GPU_MILLI);
		if (kerf_mig_profile_for(mm, s, (uint32_t)p->gpu_mem_mib) < 0 ||
		    (slices && mm->compute_slices != slices))
			continue;
		slices = mm->compute_slices;
		m.mig_slices = (uint8_t)s;
		m.model_mask |= (uint64_t)1 << i;
	}
	if (m.model_mask) {
		*p = m;
		return;
	}
	p->gpu_milli = KERF_GPU_MILLI;
	p->share = KERF_SHARE_DEFAULT;
}

/* Checks common to submit and adopt; names the workload and the field. */
int kerf_state_check_new(const struct kerf_state *st, const char *key,
		     const struct kerf_workload *w, struct kerf_err *err)
{
	struct kerf_workload named;
	int rc = kerf_workload_key_check(key, err);

	if (rc < 0)
		return rc;
	/* w may be a state's, sized for its sets: never copied with '=' */
	kerf_workload_copy(&named, w);
	named.key = key;
	rc = kerf_workload_validate(&named, err);
	if (rc < 0)
		return rc;
	if (!st->no_key_map && kerf_map_get_str(&st->by_key, key))
		return kerf_err_set(err, -KERF_EEXIST,
				    "workload '%s': already known", key);
	if (w->tenant <= KERF_TENANT_ROOT || (size_t)w->tenant >= st->tenants.nr ||
	    st->tenants.t[w->tenant].removed ||
	    !kerf_tenant_is_leaf(&st->tenants.t[w->tenant]))
		return kerf_err_set(err, -KERF_EINVAL,
				    "workload '%s': tenant must be a leaf of the tenant tree",
				    key);
	if (w->class_idx < 0 || w->class_idx >= st->classes.nr)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workload '%s': unknown priority class", key);
	if (st->next_id == UINT32_MAX)
		return kerf_err_set(err, -KERF_ELIMIT, "workload ids exhausted");
	return 0;
}

/*
 * Must the state's copy of w keep what each set asked apart from sets[]?
 * Resolving (kerf_state_resolve) changes only isolation and tenant of a
 * request that is neither a fraction nor MIG, for any cluster and any
 * tenant isolation, so sets[] keeps the rest as asked; else, or when the
 * caller's asked[] (kerf_state_adopt) differs from its sets[] in more, it
 * must.  A differing byte only keeps what need not be kept.
 */
static bool keeps_asked(const struct kerf_workload *w)
{
	for (int i = 0; i < w->nr_sets; i++) {
		struct kerf_pod a = kerf_workload_asked(w, i), s = w->sets[i].req;

		s.isolation = 0;
		s.tenant = 0;
		if (kerf_pod_is_fraction(&s) || kerf_pod_is_mig(&s) ||
		    memcmp(&a, &s, sizeof(a)) != 0)
			return true;
	}
	return false;
}

size_t kerf_state_workload_bytes(const struct kerf_workload *w)
{
	size_t at = kerf_workload_size(w->nr_sets) +
		    (w->asked ? (size_t)w->nr_sets * sizeof(struct kerf_pod) : 0);

	return at + (w->key == (const char *)w + at ? strlen(w->key) + 1 : 0);
}

/* A new workload from template w (not yet in the state); NULL on OOM. */
struct kerf_workload *kerf_state_make_workload(struct kerf_state *st,
					   const char *key,
					   const struct kerf_workload *w,
					   int64_t submit_ms)
{
	/*
	 * Only the sets it has (a workload of one pod is 900 bytes smaller),
	 * then what each set asked when it must be kept, then the key unless
	 * borrowed: one allocation, freed with the workload.
	 */
	size_t size = kerf_workload_size(w->nr_sets);
	size_t len = st->borrow_keys ? 0 : strlen(key) + 1;
	size_t nr_asked = keeps_asked(w) ? (size_t)w->nr_sets : 0;
	struct kerf_workload *copy = kerf_slab_alloc(size + nr_asked * sizeof(struct kerf_pod) +
						     len);
	struct kerf_pod *asked;
	char *k;
	enum kerf_isolation iso = st->tenants.t[w->tenant].isolation;

	_Static_assert(sizeof(struct kerf_pod) % _Alignof(struct kerf_pod) == 0 &&
		       offsetof(struct kerf_workload, sets) % _Alignof(struct kerf_pod) == 0 &&
		       sizeof(struct kerf_podset) % _Alignof(struct kerf_pod) == 0,
		       "asked[] follows the sets aligned");
	if (!copy)
		return NULL;
	asked = nr_asked ? (struct kerf_pod *)((char *)copy + size) : NULL;
	k = (char *)copy + size + nr_asked * sizeof(struct kerf_pod);
	if (len)
		memcpy(k, key, len);
	memcpy(copy, w, kerf_workload_size(w->nr_sets));
	copy->key = len ? k : key;
	copy->asked = asked;
	copy->state = KERF_WL_PENDING;
	copy->pods = NULL;
	copy->nr_bound = 0;
	copy->pre = NULL;
	copy->leaving = false;
	copy->borrowed = false;
	copy->pdb_protected = false;
	copy->last_checkpoint_ms = 0;
	copy->start_ms = 0;
	copy->nr_charged = 0;
	copy->nonpreemptible = !st->classes.c[w->class_idx].preemptible;
	copy->idle_since_ms = -1;
	copy->idle_notified = false;
	copy->idle_reclaim = false;
	copy->util_pct = 100;
	copy->submit_ms = submit_ms;
	copy->pending = KERF_PENDING_NEW;
	copy->pending_text = kerf_wl_no_text;
	copy->pending_told = 0;
	copy->observed = false;
	for (int i = 0; asked && i < copy->nr_sets; i++) {
		asked[i] = copy->sets[i].req;   /* room made above */
		asked[i].isolation = 0;         /* resolved: not part of it */
		asked[i].tenant = 0;
	}
	(void)iso;
	kerf_state_resolve(st, copy);
	return copy;
}

void kerf_state_resolve(const struct kerf_state *st, struct kerf_workload *w)
{
	enum kerf_isolation iso = st->tenants.t[w->tenant].isolation;

	w->resolved_for = st->cluster.mig_models;
	/*
	 * Who the pods are, for the GPUs they may share.  A shared tenant's
	 * pods go without a tenant: whom they share with does not matter to
	 * them, and identical pods of many tenants stay one shape for the
	 * score cache.
	 */
	for (int i = 0; i < w->nr_sets; i++) {
		struct kerf_pod *p = &w->sets[i].req;

		*p = kerf_workload_asked(w, i);
		p->isolation = (uint8_t)iso;
		p->tenant = iso == KERF_ISOLATION_SHARED ? 0 : (uint32_t)w->tenant;
		if (iso == KERF_ISOLATION_HARDWARE && kerf_pod_is_fraction(p))
			harden_fraction(&st->cluster, p);
		/* a MIG instance is charged its compute slices' share */
		if (kerf_pod_is_mig(p)) {
			int32_t charge = mig_charge(&st->cluster, p);

			if (charge > 0)
				p->gpu_milli = charge;
		}
	}
}

void kerf_state_resolve_pending(struct kerf_state *st)
{
	for (size_t i = 0; i < st->nr_wl; i++) {
		struct kerf_workload *w = st->wl[i];

		if (w->state != KERF_WL_PENDING ||
		    w->resolved_for == st->cluster.mig_models)
			continue;
		kerf_state_count_pending(st, w, -1);
		kerf_state_resolve(st, w);
		kerf_state_count_pending(st, w, +1);
	}
}

/* Put w into the array and both maps (room reserved by reserve_one). */
void kerf_state_insert(struct kerf_state *st, struct kerf_workload *w)
{
	int rc;

	w->id = st->next_id++;
	w->seq = st->next_seq++;
	w->index = (uint32_t)st->nr_wl;
	st->wl[st->nr_wl++] = w;
	rc = kerf_map_put_u64(&st->by_id, w->id, w);
	KERF_ASSERT(rc == 0);
	if (!st->no_key_map) {
		rc = kerf_map_put_str(&st->by_key, w->key, w);
		KERF_ASSERT(rc == 0);
	}
}

/* Room for one more workload in the array and the maps. */
int kerf_state_reserve_one(struct kerf_state *st)
{
	int rc = KERF_GROW(st->wl, st->alloc_wl, st->nr_wl + 1);

	if (rc == 0)
		rc = kerf_map_reserve(&st->by_id, 1);
	if (rc == 0 && !st->no_key_map)
		rc = kerf_map_reserve(&st->by_key, 1);
	return rc;
}

int kerf_state_submit(struct kerf_state *st, const char *key,
		      const struct kerf_workload *w, int64_t submit_ms,
		      struct kerf_err *err)
{
	struct kerf_workload *copy;
	int rc = kerf_state_check_new(st, key, w, err);

	if (rc < 0)
		return rc;
	if (kerf_state_reserve_one(st) < 0 || !(copy = kerf_state_make_workload(st, key, w, submit_ms)))
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	kerf_state_insert(st, copy);
	kerf_state_count_pending(st, copy, +1);
	st->tenants.t[copy->tenant].nr_workloads++;
	return (int)copy->id;
}

/* Take w out of the array and the maps and free it. */
void kerf_state_drop(struct kerf_state *st, struct kerf_workload *w)
{
	size_t i = w->index;

	KERF_ASSERT(i < st->nr_wl && st->wl[i] == w);
	st->wl[i] = st->wl[--st->nr_wl];
	st->wl[i]->index = (uint32_t)i;
	kerf_map_del_u64(&st->by_id, w->id);
	if (!st->no_key_map)
		kerf_map_del_str(&st->by_key, w->key);
	if (w->state == KERF_WL_PENDING)
		kerf_state_count_pending(st, w, -1);
	st->tenants.t[w->tenant].nr_workloads--;
	if (st->reserver_id == w->id)
		st->reserver_id = 0;
	kerf_state_free_workload(w);
}

/* The running workload of id, or NULL with *rc and err saying why not. */
static struct kerf_workload *running(struct kerf_state *st, uint32_t id,
				     int *rc, struct kerf_err *err)
{
	struct kerf_workload *w = kerf_state_find(st, id);

	if (!w) {
		*rc = kerf_err_set(err, -KERF_ENOTFOUND,
				   "workload %" PRIu32 ": not found", id);
		return NULL;
	}
	if (w->state != KERF_WL_RUNNING) {
		*rc = kerf_err_set(err, -KERF_EINVAL, "workload '%s': not running",
				   w->key);
		return NULL;
	}
	return w;
}

/* A running workload gives everything back and becomes to. */
static int leave(struct kerf_state *st, uint32_t id, int64_t now_ms,
		 enum kerf_wl_state to, struct kerf_err *err)
{
	int rc = 0;
	struct kerf_workload *w = running(st, id, &rc, err);

	if (!w)
		return rc;
	kerf_state_age(st, now_ms);   /* its use so far counts */
	rc = kerf_state_give_back(st, w, err);
	if (rc < 0)
		return rc;
	kerf_state_set_wl_state(st, w, to);
	if (to != KERF_WL_PENDING)
		return 0;
	w->pending = KERF_PENDING_REQUEUED;
	/* idling belongs to a run: the next starts without a stretch */
	w->idle_since_ms = -1;
	w->idle_notified = false;
	w->idle_reclaim = false;
	kerf_workload_set_text(w, "lost its pods; waiting to be placed again");
	w->pending_hash = kerf_pending_hash(w->pending, w->pending_text);
	return 0;
}

int kerf_state_finish(struct kerf_state *st, uint32_t id, int64_t now_ms,
		      struct kerf_err *err)
{
	return leave(st, id, now_ms, KERF_WL_FINISHED, err);
}

int kerf_state_requeue(struct kerf_state *st, uint32_t id, int64_t now_ms,
		       struct kerf_err *err)
{
	return leave(st, id, now_ms, KERF_WL_PENDING, err);
}

int kerf_state_started(struct kerf_state *st, uint32_t id, int64_t now_ms,
		       struct kerf_err *err)
{
	int rc = 0;
	struct kerf_workload *w = running(st, id, &rc, err);

	if (!w)
		return rc;
	/* the run picks up from its last checkpoint: nothing before is at risk */
	if (now_ms > w->last_checkpoint_ms)
		w->last_checkpoint_ms = now_ms;
	return 0;
}

int kerf_state_leaving(struct kerf_state *st, uint32_t id, struct kerf_err *err)
{
	int rc = 0;
	struct kerf_workload *w = running(st, id, &rc, err);

	if (!w)
		return rc;
	w->leaving = true;
	return 0;
}

int kerf_state_protect(struct kerf_state *st, uint32_t id, bool on,
		       struct kerf_err *err)
{
	struct kerf_workload *w = kerf_state_find(st, id);

	if (!w)
		return kerf_err_set(err, -KERF_ENOTFOUND,
				    "workload %" PRIu32 ": not found", id);
	w->pdb_protected = on;
	return 0;
}

int kerf_state_checkpointed(struct kerf_state *st, uint32_t id, int64_t at_ms,
			    int64_t now_ms, struct kerf_err *err)
{
	int rc = 0;
	struct kerf_workload *w = running(st, id, &rc, err);

	if (!w)
		return rc;
	if (at_ms > now_ms)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workload '%s': checkpoint at %" PRId64 " ms is in the future (now %" PRId64 ")",
				    w->key, at_ms, now_ms);
	if (at_ms > w->last_checkpoint_ms)
		w->last_checkpoint_ms = at_ms;
	return 0;
}

static int cmp_seq(const void *a, const void *b)
{
	const struct kerf_workload *x = *(struct kerf_workload *const *)a;
	const struct kerf_workload *y = *(struct kerf_workload *const *)b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return strcmp(x->key, y->key);
}

void kerf_state_sort_by_seq(struct kerf_workload **v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_seq);
}

/* Let w's victims stay (CANCEL each, in seq order); out has the room. */
void kerf_state_cancel_victims(struct kerf_state *st, struct kerf_workload *w,
			       int64_t now_ms, struct kerf_decisions *out)
{
	struct kerf_workload *v[KERF_MAX_VICTIMS];
	size_t nr = 0;

	for (size_t i = 0; i < st->nr_wl && nr < KERF_MAX_VICTIMS; i++) {
		struct kerf_workload *x = st->wl[i];

		/* one evicted already goes anyway: it only stops waking w */
		if (x->state != KERF_WL_RUNNING || kerf_wl_pre(x)->preempt_deadline_ms <= 0 ||
		    x->pre->preempted_by != w->id)
			continue;
		if (x->leaving)
			x->pre->preempted_by = 0;
		else
			v[nr++] = x;
	}
	kerf_state_sort_by_seq(v, nr);
	for (size_t k = 0; k < nr; k++) {
		v[k]->pre->preempt_deadline_ms = 0;
		v[k]->pre->preempted_by = 0;
		if (out)
			kerf_decisions_push(out, &(struct kerf_decision){
				.kind = KERF_DECIDE_CANCEL, .workload = v[k]->id,
				.other = w->id, .at_ms = now_ms });
	}
	if (w->pre)
		w->pre->nr_victims = 0;
}

int kerf_state_forget(struct kerf_state *st, uint32_t id, int64_t now_ms,
		      struct kerf_decisions *out, struct kerf_err *err)
{
	struct kerf_workload *w = kerf_state_find(st, id);

	if (!w)
		return kerf_err_set(err, -KERF_ENOTFOUND, "workload %" PRIu32 ": not found", id);
	if (w->state == KERF_WL_RUNNING)
		return kerf_err_set(err, -KERF_EBUSY,
				    "workload '%s': still running; it must finish first",
				    w->key);
	if (kerf_wl_pre(w)->nr_victims) {
		if (!out || kerf_decisions_reserve(out, w->pre->nr_victims) < 0)
			return kerf_err_set(err, -KERF_ENOMEM,
					    "workload '%s': no room to tell its victims they may stay",
					    w->key);
		kerf_state_cancel_victims(st, w, now_ms, out);
	}
	kerf_preempt_unnominate(w);
	kerf_state_drop(st, w);
	return 0;
}
