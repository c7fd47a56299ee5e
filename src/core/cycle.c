#include "core/cycle.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "core/budget.h"
#include "core/idle.h"
#include "core/preempt.h"

/* Gang shapes that failed for capacity in this cycle (no capacity comes
 * free inside a cycle, so an identical gang fails too). */
enum { FAILED_SHAPES = 256, NODE_ATTEMPTS = 16, DOMAIN_ATTEMPTS = 64,
       POD_MEMO = 256 };

/* Preemption searches per cycle (each tries up to KERF_MAX_VICTIMS). */
enum { PREEMPT_PLANS_PER_CYCLE = 8 };

struct cycle_ctx {
	struct kerf_sched *s;
	struct kerf_state *st;
	int64_t now_ms;
	struct kerf_decisions *out;
	int rc;                     /* first error: the cycle stops there */
	int64_t *share;             /* per tenant, see tenant_shares */
	struct kerf_wl_pod *scratch;/* pods being placed */
	uint8_t *allowed;           /* per node, for topology constraints */
	uint64_t failed[2 * FAILED_SHAPES]; /* open addressing; 0 = empty */
	struct failed_reason {
		uint64_t hash;      /* of (InsufficientCapacity, text) */
		size_t len;
		char text[KERF_REASON_MAX];
	} *failed_text;             /* the sentence of each */
	size_t nr_failed;
	int plans_left;
	/* head-of-line reservation (see reserve_for) */
	uint8_t *reserved;          /* per node: held for the reserver */
	uint64_t *rank_keys;        /* scratch of reserve_for, per live node */
	uint8_t *eff;               /* allowed and not reserved, per node */
	const struct kerf_workload *reserver;
	bool keep_off;              /* the workload placed now must avoid it */
	bool no_preempt;            /* a first, tentative attempt: no searches */
	/* room freed for waiting preemptors (see kerf_preempt_start) */
	int32_t *held;              /* per node: highest holder's class value */
	uint32_t *held_list;        /* the held nodes */
	size_t nr_held;
	bool any_held;
	uint8_t *only;              /* all zero but while place_one_node uses it */
	/* NVLink domains in node order, built when first needed */
	uint64_t *dom_keys;         /* scratch of build_domains, 2 per slot */
	uint32_t *dom_nodes;        /* nodes grouped by domain, rank order within */
	uint32_t *dom_start;        /* group g: dom_nodes[dom_start[g] ..
				       dom_start[g + 1]) */
	size_t nr_doms;
	bool doms_built;
	/*
	 * Pods that fit nowhere as the first pod of a gang, and why.  Within
	 * a cycle free capacity only shrinks (admissions take, nothing
	 * leaves; a probe's evictions are never seen here), so the same pod on
	 * the same nodes fails again: the select and its explanation are
	 * skipped.  Keyed by the pod and what decides its nodes; emptied when
	 * held room is given back.
	 */
	struct pod_memo {
		uint64_t key;           /* 0 = empty */
		struct kerf_status why;
	} *pod_memo;                /* POD_MEMO slots, open addressing */
	size_t nr_pod_memo;
};

enum { NOT_HELD = INT32_MIN };

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Held nodes: the victims' nodes of every preemptor still waiting. */
static void hold_nominated(struct cycle_ctx *x)
{
	const struct kerf_state *st = x->st;

	/* nodes may come free: what failed before may fit now */
	if (x->pod_memo && x->nr_pod_memo) {
		memset(x->pod_memo, 0, POD_MEMO * sizeof(*x->pod_memo));
		x->nr_pod_memo = 0;
	}

	for (size_t i = 0; i < x->nr_held; i++)
		x->held[x->held_list[i]] = NOT_HELD;
	x->nr_held = 0;
	x->any_held = false;
	for (size_t i = 0; i < st->nr_wl; i++) {
		const struct kerf_workload *w = st->wl[i];
		int32_t v = st->classes.c[w->class_idx].value;

		if (w->state != KERF_WL_PENDING)
			continue;
		for (uint32_t k = 0; k < kerf_wl_pre(w)->nr_nominated; k++) {
			uint32_t n = w->pre->nominated[k];

			if (n >= st->cluster.nr_slots || !st->cluster.nodes[n].live)
				continue;
			if (x->held[n] == NOT_HELD)
				x->held_list[x->nr_held++] = n;
			if (x->held[n] < v)
				x->held[n] = v;
			x->any_held = true;
		}
	}
}

/* May w use node n, held or not? Higher classes and its holders may. */
static bool may_use_node(const struct cycle_ctx *x,
			 const struct kerf_workload *w, uint32_t n)
{
	if (x->held[n] == NOT_HELD ||
	    x->st->classes.c[w->class_idx].value > x->held[n])
		return true;
	for (uint32_t k = 0; k < kerf_wl_pre(w)->nr_nominated; k++)
		if (w->pre->nominated[k] == n)
			return true;
	return false;
}

/*
 * Weighted dominant share of each tenant, in parts per million per unit
 * weight: the largest fraction of any cluster dimension its subtree uses,
 * usage blended half and half with its history, over its weight.
 */
static void tenant_shares(struct cycle_ctx *x)
{
	const struct kerf_state *st = x->st;
	const struct kerf_res *cap = &st->tenants.t[KERF_TENANT_ROOT].quota.nominal;

	for (size_t t = 0; t < st->tenants.nr; t++) {
		const struct kerf_tenant *tn = &st->tenants.t[t];
		int64_t best = 0;

		for (int i = 0; i < st->tenants.nr_res; i++) {
			int64_t eff, s;

			if (cap->v[i] <= 0)
				continue;
			eff = tn->usage.v[i] / 2 + (st->usage_avg[t].v[i] >> 16) / 2;
			s = (int64_t)((__int128)eff * 1000000 / cap->v[i]);
			if (s > best)
				best = s;
		}
		x->share[t] = best * 1000 / tn->weight;
	}
}

/* The ancestor of t at depth d. */
static int ancestor_at(const struct kerf_tenants *tt, int t, int d)
{
	while (tt->t[t].depth > d)
		t = tt->t[t].parent;
	return t;
}

static int cmp_workloads(const struct cycle_ctx *x, const struct kerf_workload *a,
			 const struct kerf_workload *b)
{
	const struct kerf_tenants *tt = &x->st->tenants;
	int32_t va = x->st->classes.c[a->class_idx].value;
	int32_t vb = x->st->classes.c[b->class_idx].value;

	if (va != vb)
		return va > vb ? -1 : 1;
	/* a workload whose victims made room for it goes first */
	if ((a->pending == KERF_PENDING_PREEMPTING) !=
	    (b->pending == KERF_PENDING_PREEMPTING))
		return a->pending == KERF_PENDING_PREEMPTING ? -1 : 1;
	if (a->tenant != b->tenant) {
		/* compare the two subtrees where the paths part */
		int ta = a->tenant, tb = b->tenant;
		int d = tt->t[ta].depth < tt->t[tb].depth ? tt->t[ta].depth
							  : tt->t[tb].depth;

		ta = ancestor_at(tt, ta, d);
		tb = ancestor_at(tt, tb, d);
		while (tt->t[ta].parent != tt->t[tb].parent) {
			ta = tt->t[ta].parent;
			tb = tt->t[tb].parent;
		}
		if (ta != tb && x->share[ta] != x->share[tb])
			return x->share[ta] < x->share[tb] ? -1 : 1;
	}
	if (a->submit_ms != b->submit_ms)
		return a->submit_ms < b->submit_ms ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* Stable merge sort of workload pointers with the cycle's order. */
static void sort_pending(const struct cycle_ctx *x, struct kerf_workload **v,
			 struct kerf_workload **tmp, size_t n)
{
	size_t half = n / 2, i = 0, j = half, k = 0;

	if (n < 2)
		return;
	sort_pending(x, v, tmp, half);
	sort_pending(x, v + half, tmp, n - half);
	while (i < half && j < n)
		tmp[k++] = cmp_workloads(x, v[j], v[i]) < 0 ? v[j++] : v[i++];
	while (i < half)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof(*v));
}

static bool class_allowed(const struct kerf_state *st,
			  const struct kerf_workload *w)
{
	for (int t = w->tenant; t > KERF_TENANT_ROOT; t = st->tenants.t[t].parent) {
		uint32_t m = st->tenants.t[t].allowed_classes;

		if (m && !(m >> w->class_idx & 1))
			return false;
	}
	return true;
}

static uint64_t all_models(const struct kerf_cluster *c)
{
	return c->nr_models >= 64 ? UINT64_MAX
				  : ((uint64_t)1 << c->nr_models) - 1;
}

/* Models every GPU pod set of w may use (all models if none asks GPUs). */
static uint64_t common_flavors(const struct kerf_state *st,
			       const struct kerf_workload *w)
{
	uint64_t m = all_models(&st->cluster);

	for (int i = 0; i < w->nr_sets; i++)
		if (w->sets[i].req.nr_gpus > 0 && w->sets[i].req.model_mask)
			m &= w->sets[i].req.model_mask;
	return m;
}

static bool has_gpu_sets(const struct kerf_workload *w)
{
	for (int i = 0; i < w->nr_sets; i++)
		if (w->sets[i].req.nr_gpus > 0)
			return true;
	return false;
}

/* The quota w would take if all its GPU pods used model f (-1: none). */
static void request_on(const struct kerf_workload *w, int f,
		       struct kerf_res *req)
{
	kerf_res_zero(req);
	for (int i = 0; i < w->nr_sets; i++) {
		struct kerf_res one;

		kerf_res_of_pod(&one, &w->sets[i].req, f, w->sets[i].count);
		kerf_res_add(req, &one);
	}
}

static void rollback(struct cycle_ctx *x, const struct kerf_workload *w,
		     uint32_t nr)
{
	while (nr-- > 0)
		kerf_sched_unreserve(x->s, &x->st->cluster,
				     &w->sets[x->scratch[nr].set].req,
				     x->scratch[nr].b, NULL);
}

/*
 * Place the pods of w in set order on the allowed nodes (NULL: all),
 * restricted to the models in flavors.  Keeps going after a failure only
 * to reach more than min_count; on success *nr >= min_count and the pods are
 * bound, otherwise nothing is bound and st says why the last pod failed.
 */
/*
 * The memo key of pod p placed first by w on every node it may use: the
 * pod, whether the reservation is avoided, and (while room is held) w's
 * class.  0: not memoised (w is nominated: its nodes are its own).
 */
static uint64_t pod_memo_key(const struct cycle_ctx *x,
			     const struct kerf_workload *w,
			     const struct kerf_pod *p)
{
	const uint64_t v[] = {
		(uint64_t)p->cpu_milli, (uint64_t)p->mem_mib,
		(uint64_t)(uint32_t)p->gpu_milli, (uint64_t)(uint32_t)p->gpu_mem_mib,
		p->nr_gpus, p->model_mask, x->keep_off,
		(uint64_t)p->share << 40 | (uint64_t)p->isolation << 32 | p->tenant,
		x->any_held ? (uint64_t)(uint32_t)x->st->classes.c[w->class_idx].value
			    : 0,
		p->need_labels, p->tolerates,
	};
	uint64_t h = 0xcbf29ce484222325ULL;

	if (kerf_wl_pre(w)->nr_nominated || !x->pod_memo)
		return 0;
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
		h ^= v[k];
		h *= 0x100000001b3ULL;
		h ^= h >> 31;
	}
	return h | 1;
}

static struct pod_memo *pod_memo_slot(struct cycle_ctx *x, uint64_t key)
{
	size_t i = key % POD_MEMO;

	while (x->pod_memo[i].key && x->pod_memo[i].key != key)
		i = (i + 1) % POD_MEMO;
	return &x->pod_memo[i];
}

static bool place_pods(struct cycle_ctx *x, const struct kerf_workload *w,
		       uint64_t flavors, const uint8_t *allowed, uint32_t *nr,
		       struct kerf_status *why)
{
	struct kerf_cluster *c = &x->st->cluster;
	uint32_t placed = 0;
	/* not a probe, no topology mask: the pod may use every node w may */
	bool memoable = !allowed && why;

	/*
	 * backfill stays off the nodes held for the reserved gang, and
	 * lower work off the room freed for a waiting preemptor
	 */
	if (x->keep_off || x->any_held) {
		if (!allowed)
			memset(x->eff, 1, c->nr_slots);
		else
			memcpy(x->eff, allowed, c->nr_slots);
		if (x->keep_off)
			for (size_t i = 0; i < c->nr_slots; i++)
				x->eff[i] &= (uint8_t)!x->reserved[i];
		for (size_t k = 0; k < x->nr_held; k++)
			if (!may_use_node(x, w, x->held_list[k]))
				x->eff[x->held_list[k]] = 0;
		allowed = x->eff;
	}

	for (int si = 0; si < w->nr_sets; si++) {
		struct kerf_pod p = w->sets[si].req;

		if (p.nr_gpus > 0) {
			p.model_mask = (p.model_mask ? p.model_mask : all_models(c)) &
				       flavors;
			if (!p.model_mask) {
				kerf_status_set(why, KERF_UNRESOLVABLE, "cycle",
						"no GPU model both allowed and within quota");
				break;
			}
		}
		for (uint32_t k = 0; k < w->sets[si].count; k++) {
			struct kerf_binding b;
			uint64_t key = memoable && placed == 0 ? pod_memo_key(x, w, &p) : 0;
			struct pod_memo *m = key ? pod_memo_slot(x, key) : NULL;

			if (m && m->key == key) {
				*why = m->why;
				goto out;
			}
			if (kerf_sched_select_in(x->s, c, &p, allowed, &b, why) != KERF_FIT) {
				/* keep half the table free */
				if (m && x->nr_pod_memo < POD_MEMO / 2) {
					m->key = key;
					m->why = *why;
					x->nr_pod_memo++;
				}
				goto out;
			}
			if (kerf_sched_reserve(x->s, c, &w->sets[si].req, b, NULL) < 0) {
				kerf_status_set(why, KERF_INTERNAL, "cycle",
						"reserve refused a selected binding");
				goto out;
			}
			x->scratch[placed++] = (struct kerf_wl_pod){
				.set = (uint8_t)si, .b = b
			};
		}
	}
out:
	if (placed >= w->min_count) {
		*nr = placed;
		return true;
	}
	rollback(x, w, placed);
	*nr = 0;
	return false;
}

/* Every pod on one node: try the nodes the first pod would pick. */
static bool place_one_node(struct cycle_ctx *x, const struct kerf_workload *w,
			   uint64_t flavors, uint32_t *nr,
			   struct kerf_status *why)
{
	struct kerf_cluster *c = &x->st->cluster;
	uint8_t *excluded = x->allowed;
	bool ok = false;
	int attempt;

	for (size_t i = 0; i < c->nr_slots; i++)
		excluded[i] = 1;
	for (attempt = 0; attempt < NODE_ATTEMPTS && !ok; attempt++) {
		struct kerf_pod p = w->sets[0].req;
		struct kerf_binding b;
		uint8_t *only;

		if (p.nr_gpus > 0)
			p.model_mask = (p.model_mask ? p.model_mask : all_models(c)) &
				       flavors;
		if ((p.nr_gpus > 0 && !p.model_mask) ||
		    kerf_sched_select_in(x->s, c, &p, excluded, &b, why) != KERF_FIT)
			break;
		/*
		 * try the whole gang there; why one node falls short is not
		 * worth a count over every node: one sentence says it below
		 */
		only = x->only;
		only[b.node] = 1;
		ok = place_pods(x, w, flavors, only, nr, NULL);
		only[b.node] = 0;
		excluded[b.node] = 0;
	}
	if (!ok && attempt > 0)
		kerf_status_set(why, KERF_UNSCHEDULABLE, "cycle",
				"no node has room for all %u pods (the %d nodes best for its first pod tried)",
				w->min_count, attempt);
	return ok;
}

/* (domain << 32 | rank) of every node in a domain, sorted: groups by domain */
static void build_domains(struct cycle_ctx *x)
{
	const struct kerf_cluster *c = &x->st->cluster;
	uint64_t *key = x->dom_keys, *first = x->dom_keys + c->nr_slots;
	size_t nr_keys = 0, nr = 0, g = 0;

	x->doms_built = true;
	for (size_t p = 0; p < c->nr_nodes; p++)
		if (c->nodes[c->order[p]].domain)
			key[nr_keys++] = (uint64_t)c->nodes[c->order[p]].domain << 32 | p;
	qsort(key, nr_keys, sizeof(*key), cmp_u64);
	/* the groups in the order of their first node: (first rank << 32 | start) */
	for (size_t i = 0; i < nr_keys; i++)
		if (i == 0 || key[i] >> 32 != key[i - 1] >> 32)
			first[g++] = (key[i] & 0xffffffffu) << 32 | i;
	qsort(first, g, sizeof(*first), cmp_u64);
	for (size_t k = 0; k < g; k++) {
		size_t i = first[k] & 0xffffffffu;
		uint64_t d = key[i] >> 32;

		x->dom_start[k] = (uint32_t)nr;
		/* ranks back to slots */
		for (; i < nr_keys && key[i] >> 32 == d; i++)
			x->dom_nodes[nr++] = c->order[key[i] & 0xffffffffu];
	}
	x->dom_start[g] = (uint32_t)nr;
	x->nr_doms = g;
}

/* Could domain g hold w's smallest admissible set of pods at all? */
static bool domain_has_room(const struct cycle_ctx *x, size_t g,
			    const struct kerf_workload *w)
{
	const struct kerf_cluster *c = &x->st->cluster;
	int64_t per_pod = INT64_MAX, free_milli = 0;

	for (int s = 0; s < w->nr_sets; s++) {
		int64_t m = kerf_pod_gpu_milli_total(&w->sets[s].req);

		if (m < per_pod)
			per_pod = m;
	}
	for (uint32_t k = x->dom_start[g]; k < x->dom_start[g + 1]; k++) {
		const struct kerf_node *n = &c->nodes[x->dom_nodes[k]];

		if (!n->cordoned)
			free_milli += n->gpu_free_milli_sum;
	}
	return free_milli >= per_pod * (int64_t)w->min_count;
}

/* Every pod in one NVLink domain: try the domains in node order. */
static bool place_one_domain(struct cycle_ctx *x, const struct kerf_workload *w,
			     uint64_t flavors, uint32_t *nr,
			     struct kerf_status *why)
{
	struct kerf_cluster *c = &x->st->cluster;
	int tried = 0;

	if (!x->doms_built)
		build_domains(x);
	memset(x->allowed, 0, c->nr_slots);
	for (size_t g = 0; g < x->nr_doms && tried < DOMAIN_ATTEMPTS; g++) {
		bool ok;

		if (!domain_has_room(x, g, w))
			continue;
		tried++;
		for (uint32_t k = x->dom_start[g]; k < x->dom_start[g + 1]; k++)
			x->allowed[x->dom_nodes[k]] = 1;
		/* the sentence comes from the last resort below */
		ok = place_pods(x, w, flavors, x->allowed, nr, NULL);
		for (uint32_t k = x->dom_start[g]; k < x->dom_start[g + 1]; k++)
			x->allowed[x->dom_nodes[k]] = 0;
		if (ok)
			return true;
	}
	/* nodes outside any domain are domains of one */
	return place_one_node(x, w, flavors, nr, why);
}

static bool place_gang(struct cycle_ctx *x, const struct kerf_workload *w,
		       uint64_t flavors, uint32_t *nr, struct kerf_status *why)
{
	switch (w->topology) {
	case KERF_TOPO_NODE:
		return place_one_node(x, w, flavors, nr, why);
	case KERF_TOPO_NVLINK:
		return place_one_domain(x, w, flavors, nr, why);
	case KERF_TOPO_PACK:
		if (place_one_node(x, w, flavors, nr, why))
			return true;
		return place_pods(x, w, flavors, NULL, nr, why);
	case KERF_TOPO_ANY:
		break;
	}
	return place_pods(x, w, flavors, NULL, nr, why);
}

static void set_pending(struct kerf_workload *w, enum kerf_pending code,
			const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void set_pending(struct kerf_workload *w, enum kerf_pending code,
			const char *fmt, ...)
{
	va_list ap;
	char text[KERF_REASON_MAX];

	w->pending = code;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	kerf_workload_set_text(w, text);
	w->pending_hash = kerf_pending_hash(w->pending, text);
}

/* The reason of a twin (same shape, failed the same way), cheaply. */
static void set_twin_reason(struct kerf_workload *w, const struct failed_reason *r)
{
	w->pending = KERF_PENDING_CAPACITY;
	kerf_workload_set_text(w, r->text);
	w->pending_hash = r->hash;
}

static void quota_sentence(const struct kerf_state *st,
			   const struct kerf_quota_verdict *v, char *buf,
			   size_t size)
{
	const struct kerf_tenant *t;
	char dim[48];

	if (v->tenant < 0 || v->res < 0) {
		snprintf(buf, size, "over quota");
		return;
	}
	t = &st->tenants.t[v->tenant];
	kerf_res_name(&st->cluster, v->res, dim, sizeof(dim));
	if (v->nominal_only)
		snprintf(buf, size,
			 "non-preemptible work must fit in nominal quota: tenant '%s' %s would reach %" PRId64 " of nominal %" PRId64,
			 t->name, dim, v->need, v->limit);
	else
		snprintf(buf, size,
			 "tenant '%s' %s would reach %" PRId64 ", over its limit %" PRId64 " (nominal %" PRId64 " + borrowing); it uses %" PRId64,
			 t->name, dim, v->need, v->limit,
			 t->quota.nominal.v[v->res], t->usage.v[v->res]);
}

static uint64_t gang_hash(const struct kerf_workload *w, uint64_t flavors)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ flavors ^ ((uint64_t)w->topology << 56) ^
		     w->min_count;

	for (int i = 0; i < w->nr_sets; i++) {
		const struct kerf_pod *p = &w->sets[i].req;
		const uint64_t v[] = { (uint64_t)p->cpu_milli, (uint64_t)p->mem_mib,
				       (uint64_t)p->gpu_milli, (uint64_t)p->gpu_mem_mib,
				       p->nr_gpus, p->model_mask, w->sets[i].count,
				       (uint64_t)p->share << 40 |
					       (uint64_t)p->isolation << 32 | p->tenant,
				       p->need_labels, p->tolerates };

		for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
			h ^= v[k];
			h *= 0x100000001b3ULL;
			h ^= h >> 29;
		}
	}
	return h;
}

/* The sentence of a gang shape that failed before in this cycle, or NULL. */
static const struct failed_reason *failed_before(const struct cycle_ctx *x,
						 uint64_t h)
{
	const size_t mask = 2 * FAILED_SHAPES - 1;

	for (size_t i = h & mask; x->failed[i]; i = (i + 1) & mask)
		if (x->failed[i] == h)
			return &x->failed_text[i];
	return NULL;
}

/*
 * At most FAILED_SHAPES shapes, so the table stays half empty; each with
 * the sentence its twins are told.
 */
static void remember_failed(struct cycle_ctx *x, uint64_t h, const char *text)
{
	const size_t mask = 2 * FAILED_SHAPES - 1;
	size_t i = h & mask;

	if (x->nr_failed >= FAILED_SHAPES || !h)
		return;
	while (x->failed[i] && x->failed[i] != h)
		i = (i + 1) & mask;
	if (!x->failed[i])
		x->nr_failed++;
	x->failed[i] = h;
	snprintf(x->failed_text[i].text, sizeof(x->failed_text[i].text), "%s", text);
	x->failed_text[i].len = strlen(x->failed_text[i].text);
	x->failed_text[i].hash = kerf_pending_hash(KERF_PENDING_CAPACITY,
						   x->failed_text[i].text);
}

/* Admit w with the pods placed; out of memory stops the cycle. */
static void commit(struct cycle_ctx *x, struct kerf_workload *w, uint32_t nr,
		   const struct kerf_res *req)
{
	int rc = kerf_state_admit(x->st, w, x->scratch, nr, req, x->now_ms,
				  x->out, NULL);

	if (rc < 0) {
		/* nothing was recorded: the pods go back, the cycle ends */
		rollback(x, w, nr);
		x->rc = rc;
	}
}

/* Try one flavor set: place, check the quota of the placement, commit. */
static bool attempt(struct cycle_ctx *x, struct kerf_workload *w,
		    uint64_t flavors, struct kerf_status *why,
		    struct kerf_quota_verdict *qv, bool *quota_failed)
{
	struct kerf_res req;
	uint32_t nr;

	if (!place_gang(x, w, flavors, &nr, why))
		return false;
	kerf_state_charge_of(x->st, w, x->scratch, nr, &req);
	if (!kerf_quota_fits(&x->st->tenants, w->tenant, &req,
			     w->nonpreemptible, qv)) {
		rollback(x, w, nr);
		*quota_failed = true;
		return false;
	}
	commit(x, w, nr, &req);
	return w->state == KERF_WL_RUNNING;
}

/* The flavors w could use within quota (0: none), as the pre-check. */
static uint64_t quota_flavors(const struct kerf_state *st,
			      const struct kerf_workload *w,
			      struct kerf_quota_verdict *first)
{
	uint64_t common = common_flavors(st, w), fitting = 0;
	struct kerf_quota_verdict qv;
	struct kerf_res req;

	*first = (struct kerf_quota_verdict){ .fits = true, .tenant = -1, .res = -1 };
	if (!has_gpu_sets(w)) {
		request_on(w, -1, &req);
		return kerf_quota_fits(&st->tenants, w->tenant, &req,
				       w->nonpreemptible, first)
			       ? all_models(&st->cluster)
			       : 0;
	}
	if (!common)
		return all_models(&st->cluster); /* disjoint sets: placement tells */
	/* the quota of models the cluster does not have is not the issue */
	if (!(common & all_models(&st->cluster)))
		return all_models(&st->cluster);
	for (int f = 0; f < (int)st->cluster.nr_models; f++) {
		if (!(common >> f & 1))
			continue;
		request_on(w, f, &req);
		if (kerf_quota_fits(&st->tenants, w->tenant, &req,
				    w->nonpreemptible, &qv))
			fitting |= (uint64_t)1 << f;
		else if (first->fits)
			*first = qv;
	}
	return fitting;
}

/* Would w be admitted now?  Places and checks quota, keeps nothing. */
static bool probe(void *ctx, struct kerf_workload *w)
{
	struct cycle_ctx *x = ctx;
	struct kerf_quota_verdict qv;
	struct kerf_res req;
	uint64_t flavors = quota_flavors(x->st, w, &qv);
	uint32_t nr;
	bool ok;

	/* no reasons wanted: a probe's failure is not shown to anyone */
	if (!flavors || !place_gang(x, w, flavors, &nr, NULL))
		return false;
	kerf_state_charge_of(x->st, w, x->scratch, nr, &req);
	ok = kerf_quota_fits(&x->st->tenants, w->tenant, &req, w->nonpreemptible,
			     &qv);
	rollback(x, w, nr);
	return ok;
}

/*
 * No plan, and nr workloads it could have asked to leave are protected:
 * its reason says so (the sentence it has, then why nothing was asked).
 */
static void protected_told(struct kerf_workload *w, uint32_t nr)
{
	char text[sizeof(w->pending_text)];

	snprintf(text, sizeof(text), "%s", w->pending_text);
	set_pending(w, w->pending,
		    "%.150s; %u running workload%s of lower priority not asked to leave: a PodDisruptionBudget allows no disruption",
		    text, nr, nr == 1 ? "" : "s");
}

/* w does not fit: can evicting others make room? */
static void try_preempt(struct cycle_ctx *x, struct kerf_workload *w,
			struct kerf_cycle_stats *stats)
{
	struct kerf_preempt_plan plan;
	char names[160] = "";
	size_t off = 0;

	if (kerf_wl_pre(w)->nr_victims > 0 || w->never_preempts)
		return;
	/* its victims are gone and it still does not fit: plan anew */
	kerf_preempt_unnominate(w);
	if (x->plans_left <= 0 || x->no_preempt)
		return;
	x->plans_left--;
	if (!kerf_preempt_plan(x->st, x->s, w, x->now_ms, probe, x, &plan)) {
		if (plan.oom)
			x->rc = -KERF_ENOMEM;
		else if (plan.nr_protected > 0)
			protected_told(w, plan.nr_protected);
		return;
	}
	x->rc = kerf_preempt_start(x->st, w, &plan, x->now_ms, x->out);
	if (x->rc < 0)
		return;  /* out of memory: nothing started, the cycle ends */
	for (uint32_t i = 0; i < plan.nr && off < sizeof(names) - 1; i++)
		off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s",
					i ? ", " : "",
					kerf_state_find(x->st, plan.victims[i])->key);
	set_pending(w, KERF_PENDING_PREEMPTING,
		    "waiting for %u workload%s to checkpoint and leave (%s): %s",
		    plan.nr, plan.nr == 1 ? "" : "s",
		    plan.reclaim ? "reclaiming lent quota" : "lower priority",
		    names);
	stats->nr_preempted += plan.nr;
}

/* A gang big enough to be starved by a stream of small work. */
static bool large(const struct kerf_workload *w)
{
	return w->min_count > 1 || kerf_workload_gpu_milli(w) >= 4 * KERF_GPU_MILLI;
}

/* Pods of set s that node n could hold if it were empty. */
static uint32_t pods_if_empty(const struct kerf_node *n, const struct kerf_pod *p)
{
	uint32_t by_gpu = UINT32_MAX, by_cpu = UINT32_MAX, by_mem = UINT32_MAX;

	if (n->cordoned || (n->labels & p->need_labels) != p->need_labels ||
	    (n->taints & ~p->tolerates))
		return 0;
	if (p->nr_gpus > 0) {
		if (n->nr_gpus < p->nr_gpus ||
		    (p->model_mask && !(p->model_mask >> n->model & 1)))
			return 0;
		by_gpu = kerf_pod_is_fraction(p)
				 ? (uint32_t)(n->nr_gpus * (KERF_GPU_MILLI / p->gpu_milli))
				 : (uint32_t)(n->nr_gpus / p->nr_gpus);
	}
	if (p->cpu_milli > 0)
		by_cpu = (uint32_t)(n->cpu_milli / p->cpu_milli);
	if (p->mem_mib > 0)
		by_mem = (uint32_t)(n->mem_mib / p->mem_mib);
	return by_gpu < by_cpu ? (by_gpu < by_mem ? by_gpu : by_mem)
			       : (by_cpu < by_mem ? by_cpu : by_mem);
}


/*
 * Head-of-line reservation: the first large workload blocked for capacity
 * gets the nodes that could hold its gang once empty: the nodes it held in
 * the last cycle first (a reservation that wandered would let backfill onto
 * every node in turn), then the nodes closest to free (most free GPU, then
 * rank).  For the rest of the cycle, work of its class or below stays off
 * those nodes, except preemptible work of a lower class, which the
 * reserver may evict when its time comes.
 */
static void reserve_for(struct cycle_ctx *x, const struct kerf_workload *w)
{
	const struct kerf_state *st = x->st;
	const struct kerf_cluster *c = &x->st->cluster;
	bool sticky = st->reserver_id == w->id && st->reserved;
	uint64_t *order = x->rank_keys;
	uint32_t need[KERF_MAX_PODSETS];

	/*
	 * held before, then most free GPU, then rank: one sortable key per
	 * node (free GPU milli is at most 16000, a rank fits 32 bits)
	 */
	for (size_t p = 0; p < c->nr_nodes; p++) {
		uint32_t i = c->order[p];
		uint64_t held = sticky && i < st->nr_reserved && st->reserved[i];
		uint64_t room = (uint64_t)(KERF_NODE_MAX_GPUS * KERF_GPU_MILLI -
					   c->nodes[i].gpu_free_milli_sum);

		order[p] = ((uint64_t)!held << 62) | (room << 32) | (uint64_t)p;
	}
	qsort(order, c->nr_nodes, sizeof(*order), cmp_u64);
	for (int s = 0; s < w->nr_sets; s++)
		need[s] = w->sets[s].count;
	memset(x->reserved, 0, c->nr_slots);
	for (size_t k = 0; k < c->nr_nodes; k++) {
		uint32_t i = c->order[order[k] & 0xffffffffu];
		const struct kerf_node *n = &c->nodes[i];
		bool done = true, used = false;

		for (int s = 0; s < w->nr_sets; s++) {
			uint32_t fit = pods_if_empty(n, &w->sets[s].req);

			if (need[s] && fit) {
				need[s] -= fit < need[s] ? fit : need[s];
				used = true;
			}
			done &= need[s] == 0;
		}
		if (used)
			x->reserved[i] = 1;
		if (done) {
			x->reserver = w;
			break;
		}
	}
}

/* May w use the reserved nodes? */
static bool may_use_reserved(const struct cycle_ctx *x,
			     const struct kerf_workload *w)
{
	const struct kerf_classes *cl = &x->st->classes;
	int32_t rv = cl->c[x->reserver->class_idx].value;
	int32_t wv = cl->c[w->class_idx].value;

	return wv > rv || (wv < rv && !w->nonpreemptible);
}

/* w cannot be admitted for a while: once its victims are gone, its room goes. */
static void drop_nomination(struct cycle_ctx *x, struct kerf_workload *w)
{
	if (kerf_wl_pre(w)->nr_victims > 0 || kerf_wl_pre(w)->nr_nominated == 0)
		return;
	kerf_preempt_unnominate(w);
	hold_nominated(x);
}

static void try_admit(struct cycle_ctx *x, struct kerf_workload *w,
		      struct kerf_cycle_stats *stats)
{
	const struct kerf_state *st = x->st;
	uint64_t fitting = 0, h;
	struct kerf_quota_verdict qv = { .fits = true }, first_qv = { .fits = true };
	struct kerf_status why = { .code = KERF_FIT };
	bool quota_failed = false;
	char text[KERF_REASON_MAX];
	const struct failed_reason *twin;

	if (kerf_budget_holds(st, w, x->now_ms, text, sizeof(text))) {
		set_pending(w, KERF_PENDING_BUDGET, "%s", text);
		stats->nr_other++;
		/* held for hours maybe: the room its victims free is not kept */
		drop_nomination(x, w);
		return;
	}
	if (!class_allowed(st, w)) {
		drop_nomination(x, w);
		set_pending(w, KERF_PENDING_CLASS,
			    "priority class '%s' is not allowed for tenant '%s'",
			    st->classes.c[w->class_idx].name,
			    st->tenants.t[w->tenant].name);
		stats->nr_other++;
		return;
	}
	/* Quota pre-check: which flavors could hold the whole gang? */
	fitting = quota_flavors(st, w, &first_qv);
	if (!fitting)
		goto over_quota;
	h = gang_hash(w, fitting) ^ (x->keep_off ? 0x5bd1e995u : 0);
	/* held room: what fails for one class or holder may fit another */
	if (x->any_held)
		h ^= ((uint64_t)(uint32_t)st->classes.c[w->class_idx].value << 32) ^
		     (kerf_wl_pre(w)->nr_nominated ? (uint64_t)w->id * 0x9e3779b97f4a7c15ULL : 0);
	if ((twin = failed_before(x, h))) {
		stats->nr_capacity++;
		if (kerf_wl_pre(w)->nr_victims == 0)  /* as its twin */
			set_twin_reason(w, twin);
		/* its twin's victims are taken: it may find others */
		try_preempt(x, w, stats);
		return;
	}
	stats->nr_placements++;
	if (attempt(x, w, fitting, &why, &qv, &quota_failed))
		goto admitted;
	/* Mixed flavors may pass a limit one flavor alone does not. */
	if (quota_failed && __builtin_popcountll(fitting) > 1) {
		for (int f = 0; f < (int)st->cluster.nr_models; f++) {
			if (!(fitting >> f & 1))
				continue;
			stats->nr_placements++;
			if (attempt(x, w, (uint64_t)1 << f, &why, &qv, &quota_failed))
				goto admitted;
		}
	}
	if (quota_failed) {
		quota_sentence(st, &qv, text, sizeof(text));
		set_pending(w, KERF_PENDING_QUOTA, "%s", text);
		stats->nr_quota++;
		try_preempt(x, w, stats);
		return;
	}
	if (why.code == KERF_UNRESOLVABLE && w->topology == KERF_TOPO_ANY) {
		set_pending(w, KERF_PENDING_NEVER_FITS,
			    "needs %u pods (%" PRId64 " GPU milli); no node can ever host one: %s",
			    w->min_count, kerf_workload_gpu_milli(w), why.reason);
		stats->nr_other++;
		return;
	}
	if (!x->reserver && large(w))
		reserve_for(x, w);
	snprintf(text, sizeof(text),
		 "needs %u of %u pods (%" PRId64 " GPU milli) placed together%s; not enough free now: %.150s",
		 w->min_count, kerf_workload_pods(w), kerf_workload_gpu_milli(w),
		 w->topology == KERF_TOPO_NODE     ? " on one node"
		 : w->topology == KERF_TOPO_NVLINK ? " in one NVLink domain"
						   : "",
		 why.reason);
	set_pending(w, KERF_PENDING_CAPACITY, "%s%s", text,
		    x->reserver == w ? "; nodes are held for it as they free (smaller work backfills elsewhere)"
				     : "");
	remember_failed(x, h, text);
	stats->nr_capacity++;
	try_preempt(x, w, stats);
	return;
over_quota:
	quota_sentence(st, &first_qv, text, sizeof(text));
	set_pending(w, KERF_PENDING_QUOTA, "%s", text);
	stats->nr_quota++;
	try_preempt(x, w, stats);
	return;
admitted:
	/* victims were still leaving for it: they may stay */
	if (kerf_wl_pre(w)->nr_victims > 0) {
		x->rc = kerf_decisions_reserve(x->out, w->pre->nr_victims);
		if (x->rc < 0)
			return;
		kerf_state_cancel_victims(x->st, w, x->now_ms, x->out);
	}
	if (kerf_wl_pre(w)->nr_nominated) {
		/* what it did not need of the held room is free again */
		kerf_preempt_unnominate(w);
		hold_nominated(x);
	}
	stats->nr_admitted++;
}

static int cmp_arrival(const void *pa, const void *pb)
{
	const struct kerf_workload *a = *(struct kerf_workload *const *)pa;
	const struct kerf_workload *b = *(struct kerf_workload *const *)pb;

	if (a->submit_ms != b->submit_ms)
		return a->submit_ms < b->submit_ms ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return strcmp(a->key, b->key);
}

/*
 * The policy learns the pods of workloads it has not seen, in the order
 * they arrived (submission time, then seq), whatever order the state
 * holds them in.
 */
static void observe_new(struct kerf_sched *s, struct kerf_workload **v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_arrival);
	for (size_t i = 0; i < n; i++) {
		struct kerf_workload *w = v[i];

		for (int si = 0; si < w->nr_sets; si++)
			for (uint32_t k = 0; k < w->sets[si].count; k++)
				kerf_sched_observe(s, &w->sets[si].req);
		w->observed = true;
	}
}

/* A PENDING record for each workload whose reason is not the one told. */
static int tell_reasons(struct kerf_state *st, struct kerf_workload **v,
			size_t n, int64_t now_ms, struct kerf_decisions *out)
{
	size_t changed = 0;

	for (size_t i = 0; i < n; i++)
		changed += v[i]->state == KERF_WL_PENDING &&
			   v[i]->pending_hash != v[i]->pending_told;
	if (kerf_decisions_reserve(out, changed) < 0)
		return -KERF_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct kerf_workload *w = v[i];
		uint64_t h;

		if (w->state != KERF_WL_PENDING || (h = w->pending_hash) == w->pending_told)
			continue;
		w->pending_told = h;
		kerf_decisions_push(out, &(struct kerf_decision){
			.kind = KERF_DECIDE_PENDING, .reason = (uint8_t)w->pending,
			.workload = w->id, .at_ms = now_ms,
		});
	}
	(void)st;
	return 0;
}

/* Notices issued since the last were told (the ring keeps the last ones). */
static int tell_notices(struct kerf_state *st, struct kerf_decisions *out)
{
	uint64_t from = st->notices_told;

	if (st->nr_notices - from > KERF_NOTICES)
		from = st->nr_notices - KERF_NOTICES;
	if (kerf_decisions_reserve(out, (size_t)(st->nr_notices - from)) < 0)
		return -KERF_ENOMEM;
	for (uint64_t i = from; i < st->nr_notices; i++) {
		const struct kerf_notice *n = &st->notices[i % KERF_NOTICES];

		kerf_decisions_push(out, &(struct kerf_decision){
			.kind = KERF_DECIDE_NOTICE, .reason = (uint8_t)n->kind,
			.workload = n->workload, .other = (uint32_t)n->tenant,
			.value = n->pct, .at_ms = n->at_ms,
		});
	}
	st->notices_told = st->nr_notices;
	return 0;
}

int kerf_cycle_run(struct kerf_sched *s, struct kerf_state *st, int64_t now_ms,
		   struct kerf_decisions *out, struct kerf_cycle_stats *stats,
		   struct kerf_err *err)
{
	struct cycle_ctx x = { .s = s, .st = st, .now_ms = now_ms, .out = out };
	struct kerf_workload **pending = NULL, **tmp = NULL;
	size_t nr = 0, nr_new = 0, slots = st->cluster.nr_slots ? st->cluster.nr_slots : 1;
	int rc = 0, grown;

	memset(stats, 0, sizeof(*stats));
	x.plans_left = PREEMPT_PLANS_PER_CYCLE;
	kerf_state_age(st, now_ms);
	kerf_state_resolve_pending(st);
	/* victims whose checkpoint deadline passed leave now */
	rc = kerf_preempt_expire(st, now_ms, out, err);
	if (rc < 0)
		return rc;
	/* idle work past its policy's time starts its way out */
	rc = kerf_idle_pass(st, now_ms, out);
	if (rc < 0)
		return kerf_err_set(err, rc, "out of memory");
	rc = 0;
	x.share = calloc(st->tenants.nr, sizeof(*x.share));
	x.scratch = malloc(KERF_MAX_GANG_PODS * sizeof(*x.scratch));
	x.allowed = malloc(slots);
	x.reserved = calloc(slots, 1);
	x.eff = malloc(slots);
	x.held = malloc(slots * sizeof(*x.held));
	x.held_list = malloc(slots * sizeof(*x.held_list));
	x.only = calloc(slots, 1);
	x.rank_keys = malloc(slots * sizeof(*x.rank_keys));
	x.dom_nodes = malloc(slots * sizeof(*x.dom_nodes));
	x.dom_start = malloc((slots + 1) * sizeof(*x.dom_start));
	x.dom_keys = malloc(2 * slots * sizeof(*x.dom_keys));
	/* without it nothing is memoised */
	x.pod_memo = calloc(POD_MEMO, sizeof(*x.pod_memo));
	x.failed_text = malloc(2 * FAILED_SHAPES * sizeof(*x.failed_text));
	pending = malloc((st->nr_wl ? st->nr_wl : 1) * sizeof(*pending));
	tmp = malloc((st->nr_wl ? st->nr_wl : 1) * sizeof(*tmp));
	/* the reservation is kept for the next cycle: room for it now */
	grown = KERF_GROW_ZERO(st->reserved, st->nr_reserved, st->cluster.nr_slots);
	if (!x.share || !x.scratch || !x.allowed || !x.reserved || !x.eff ||
	    !x.held || !x.held_list || !x.only || !x.rank_keys || !x.dom_nodes ||
	    !x.dom_start || !x.dom_keys || !x.pod_memo || !x.failed_text ||
	    !pending || !tmp ||
	    grown < 0) {
		rc = kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < st->nr_wl; i++)
		if (st->wl[i]->state == KERF_WL_PENDING && !st->wl[i]->observed)
			tmp[nr_new++] = st->wl[i];
	observe_new(s, tmp, nr_new);
	for (size_t i = 0; i < st->nr_wl; i++)
		if (st->wl[i]->state == KERF_WL_PENDING)
			pending[nr++] = st->wl[i];
	stats->nr_pending = (uint32_t)nr;
	for (size_t i = 0; i < st->cluster.nr_slots; i++)
		x.held[i] = NOT_HELD;
	hold_nominated(&x);
	tenant_shares(&x);
	sort_pending(&x, pending, tmp, nr);
	/* the reservation of the last cycle holds while its gang waits */
	if (st->reserver_id) {
		struct kerf_workload *r = kerf_state_find(st, st->reserver_id);

		if (r && r->state == KERF_WL_PENDING)
			reserve_for(&x, r);
	}
	/* Shares are taken once, at the start of the cycle. */
	for (size_t i = 0; i < nr; i++) {
		struct kerf_workload *w = pending[i];

		x.keep_off = x.reserver && w != x.reserver && !may_use_reserved(&x, w);
		/* higher classes may use the reservation, but try elsewhere first */
		if (x.reserver && w != x.reserver && !x.keep_off &&
		    x.st->classes.c[w->class_idx].value >
			    x.st->classes.c[x.reserver->class_idx].value) {
			x.keep_off = true;
			x.no_preempt = true;
			try_admit(&x, w, stats);
			x.keep_off = false;
			x.no_preempt = false;
			if (x.rc < 0)
				break;
			if (w->state == KERF_WL_RUNNING)
				continue;
		}
		try_admit(&x, w, stats);
		if (x.rc < 0)
			break;
		if (w->state == KERF_WL_PENDING && kerf_wl_pre(w)->nr_victims > 0 &&
		    w->pending != KERF_PENDING_PREEMPTING)
			set_pending(w, KERF_PENDING_PREEMPTING,
				    "waiting for %u workload%s to checkpoint and leave",
				    w->pre->nr_victims, w->pre->nr_victims == 1 ? "" : "s");
	}
	/* carves of placements rolled back are not real: undo them */
	kerf_cluster_mig_reconcile(&st->cluster);
	if (x.rc == 0)
		x.rc = tell_reasons(st, pending, nr, now_ms, out);
	if (x.rc == 0)
		x.rc = tell_notices(st, out);
	if (x.rc < 0)
		rc = kerf_err_set(err, x.rc, "scheduling cycle: %s", kerf_strerror(x.rc));
	st->reserver_id = x.reserver && x.reserver->state == KERF_WL_PENDING
				  ? x.reserver->id
				  : 0;
	if (st->reserver_id)
		memcpy(st->reserved, x.reserved, st->cluster.nr_slots);
out:
	free(x.share);
	free(x.scratch);
	free(x.allowed);
	free(x.reserved);
	free(x.eff);
	free(x.pod_memo);
	free(x.failed_text);
	free(x.held);
	free(x.held_list);
	free(x.only);
	free(x.rank_keys);
	free(x.dom_nodes);
	free(x.dom_start);
	free(x.dom_keys);
	free(pending);
	free(tmp);
	return rc;
}

int kerf_cycle_queue(const struct kerf_state *st, struct kerf_workload **v,
		     size_t *nr)
{
	/* the order needs only the state and the shares */
	struct cycle_ctx x = { .st = (struct kerf_state *)st };
	struct kerf_workload **tmp;
	size_t n = 0;

	*nr = 0;
	x.share = calloc(st->tenants.nr ? st->tenants.nr : 1, sizeof(*x.share));
	tmp = malloc((st->nr_wl ? st->nr_wl : 1) * sizeof(*tmp));
	if (!x.share || !tmp) {
		free(x.share);
		free(tmp);
		return -KERF_ENOMEM;
	}
	for (size_t i = 0; i < st->nr_wl; i++)
		if (st->wl[i]->state == KERF_WL_PENDING)
			v[n++] = st->wl[i];
	tenant_shares(&x);
	sort_pending(&x, v, tmp, n);
	free(x.share);
	free(tmp);
	*nr = n;
	return 0;
}
