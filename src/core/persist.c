#include "core/persist.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/assert.h"
#include "base/grow.h"
#include "core/preempt.h"
#include "core/resources.h"

void kerf_persist_init(struct kerf_persist *p)
{
	memset(p, 0, sizeof(*p));
	p->version = KERF_PERSIST_VERSION;
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

void kerf_persist_release(struct kerf_persist *p)
{
	for (size_t i = 0; p->tenants && i < p->nr_tenants; i++) {
		free(p->tenants[i].name);
		free(p->tenants[i].usage_avg);
	}
	free(p->tenants);
	for (size_t i = 0; p->workloads && i < p->nr_workloads; i++) {
		struct kerf_persist_workload *w = &p->workloads[i];

		free(w->key);
		free(w->preempted_by);
		free_names(w->asked_by, w->nr_asked_by);
		free_names(w->nominated, w->nr_nominated);
	}
	free(p->workloads);
	free(p->reserver);
	free_names(p->reserved, p->nr_reserved);
	for (size_t i = 0; p->notices && i < p->nr_notices; i++) {
		free(p->notices[i].tenant);
		free(p->notices[i].workload);
	}
	free(p->notices);
	free(p->policy);
	free(p->policy_state);
	kerf_persist_init(p);
}

/* --- export ---------------------------------------------------------- */

int kerf_state_export_tenant(const struct kerf_state *st, int t,
			     struct kerf_persist_tenant *x)
{
	const struct kerf_tenant *tn = &st->tenants.t[t];

	x->name = kerf_strdup(tn->name);
	x->usage_avg = calloc((size_t)st->tenants.nr_res, sizeof(*x->usage_avg));
	if (!x->name || !x->usage_avg)
		return -KERF_ENOMEM;
	for (int i = 0; i < st->tenants.nr_res; i++) {
		if (!st->usage_avg[t].v[i])
			continue;
		kerf_res_name(&st->cluster, i, x->usage_avg[x->nr_usage_avg].name,
			      KERF_PERSIST_DIM_NAME_MAX);
		x->usage_avg[x->nr_usage_avg++].value = st->usage_avg[t].v[i];
	}
	x->budget_used_milli_ms = tn->budget.used_milli_ms;
	x->budget_window_start_ms = tn->budget.window_start_ms;
	x->budget_warned_pct = tn->budget.warned_pct;
	return 0;
}

static char *key_of(const struct kerf_state *st, uint32_t id)
{
	const struct kerf_workload *o = kerf_state_find(st, id);

	return o ? kerf_strdup(o->key) : NULL;
}

static int export_workload(const struct kerf_state *st,
			   const struct kerf_workload *w,
			   struct kerf_persist_workload *x)
{
	const struct kerf_wl_preempt *p = w->pre;

	x->key = kerf_strdup(w->key);
	if (!x->key)
		return -KERF_ENOMEM;
	x->seq = w->seq;
	x->last_checkpoint_ms = w->last_checkpoint_ms;
	if (p) {
		memcpy(x->evicted_at_ms, p->evicted_at, sizeof(x->evicted_at_ms));
		x->nr_preemptions = p->nr_preemptions;
		x->lost_gpu_milli_ms = p->lost_gpu_milli_ms;
	}
	if (kerf_wl_pre(w)->nr_asked_by) {
		x->asked_by = calloc(p->nr_asked_by, sizeof(*x->asked_by));
		if (!x->asked_by)
			return -KERF_ENOMEM;
		/* who asked: kept by key while that workload is known */
		for (uint32_t k = 0; k < p->nr_asked_by; k++) {
			char *key = key_of(st, p->asked_by[k]);

			if (key)
				x->asked_by[x->nr_asked_by++] = key;
		}
	}
	x->borrowed = w->borrowed;
	x->preempt_deadline_ms = w->state == KERF_WL_RUNNING ? kerf_wl_pre(w)->preempt_deadline_ms : 0;
	if (x->preempt_deadline_ms && p->preempted_by &&
	    !(x->preempted_by = key_of(st, p->preempted_by)))
		x->preempt_deadline_ms = 0;  /* its preemptor is gone: not asked */
	x->idle_reclaim = w->idle_reclaim;
	x->idle_notified = w->idle_notified;
	x->idle_since_ms = w->idle_since_ms;
	x->util_pct = w->util_pct;
	x->pending = (uint8_t)w->pending;
	x->pending_told = w->pending_told;
	x->observed = w->observed;
	if (w->state == KERF_WL_PENDING && kerf_wl_pre(w)->nr_nominated) {
		x->nominated = calloc(p->nr_nominated, sizeof(*x->nominated));
		if (!x->nominated)
			return -KERF_ENOMEM;
		for (uint32_t k = 0; k < p->nr_nominated; k++) {
			uint32_t i = p->nominated[k];

			if (i < st->cluster.nr_slots && st->cluster.nodes[i].live &&
			    !(x->nominated[x->nr_nominated++] = kerf_strdup(st->cluster.nodes[i].name)))
				return -KERF_ENOMEM;
		}
	}
	return 0;
}

/* The notices issued since the last were told. */
static int export_notices(const struct kerf_state *st, struct kerf_persist *p)
{
	uint64_t from = st->notices_told;

	if (st->nr_notices - from > KERF_NOTICES)
		from = st->nr_notices - KERF_NOTICES;
	if (from == st->nr_notices)
		return 0;
	p->notices = calloc((size_t)(st->nr_notices - from), sizeof(*p->notices));
	if (!p->notices)
		return -KERF_ENOMEM;
	for (uint64_t i = from; i < st->nr_notices; i++) {
		const struct kerf_notice *n = &st->notices[i % KERF_NOTICES];
		struct kerf_persist_notice *x = &p->notices[p->nr_notices++];

		x->kind = (uint8_t)n->kind;
		x->pct = n->pct;
		x->at_ms = n->at_ms;
		x->tenant = kerf_strdup(st->tenants.t[n->tenant].name);
		if (!x->tenant)
			return -KERF_ENOMEM;
		if (n->workload && !(x->workload = key_of(st, n->workload)) &&
		    kerf_state_find(st, n->workload))
			return -KERF_ENOMEM;
	}
	return 0;
}

static int export_policy(const struct kerf_sched *s, struct kerf_persist *p)
{
	if (!s || !s->policy)
		return 0;
	p->policy = kerf_strdup(s->policy->name);
	if (!p->policy)
		return -KERF_ENOMEM;
	return kerf_sched_save(s, &p->policy_state, &p->nr_policy_state);
}

int kerf_state_export(const struct kerf_state *st, const struct kerf_sched *s,
		      struct kerf_persist *p)
{
	int rc = 0;

	kerf_persist_init(p);
	p->avg_at_ms = st->avg_at_ms;
	p->half_life_ms = st->half_life_ms;
	p->next_seq = st->next_seq;
	p->tenants = calloc(st->tenants.nr, sizeof(*p->tenants));
	p->workloads = calloc(st->nr_wl ? st->nr_wl : 1, sizeof(*p->workloads));
	if (!p->tenants || !p->workloads)
		rc = -KERF_ENOMEM;
	for (size_t t = 1; t < st->tenants.nr && rc == 0; t++)
		if (!st->tenants.t[t].removed)
			rc = kerf_state_export_tenant(st, (int)t, &p->tenants[p->nr_tenants++]);
	for (size_t i = 0; i < st->nr_wl && rc == 0; i++)
		rc = export_workload(st, st->wl[i], &p->workloads[p->nr_workloads++]);
	if (rc == 0 && st->reserver_id) {
		p->reserver = key_of(st, st->reserver_id);
		p->reserved = calloc(st->cluster.nr_nodes ? st->cluster.nr_nodes : 1,
				     sizeof(*p->reserved));
		if (!p->reserver || !p->reserved)
			rc = -KERF_ENOMEM;
		for (size_t k = 0; rc == 0 && k < st->cluster.nr_nodes; k++) {
			uint32_t i = st->cluster.order[k];

			if (i < st->nr_reserved && st->reserved[i] &&
			    !(p->reserved[p->nr_reserved++] = kerf_strdup(st->cluster.nodes[i].name)))
				rc = -KERF_ENOMEM;
		}
	}
	if (rc == 0)
		rc = export_notices(st, p);
	if (rc == 0)
		rc = export_policy(s, p);
	if (rc < 0)
		kerf_persist_release(p);
	return rc;
}

/* --- validation ------------------------------------------------------ */

static bool time_ok(int64_t t)
{
	return t >= -KERF_PERSIST_MAX_MS && t <= KERF_PERSIST_MAX_MS;
}

static bool amount_ok(int64_t v)
{
	return v >= 0 && v <= KERF_PERSIST_MAX_AMOUNT;
}

/* A name of the cluster's (node, tenant): 1 .. 317 bytes, no control bytes. */
static int name_ok(const char *s, const char *field, struct kerf_err *err)
{
	struct kerf_err why = { 0 };

	if (!s)
		return kerf_err_set(err, -KERF_EINVAL, "%s: missing", field);
	if (kerf_workload_key_check(s, &why) < 0)
		return kerf_err_set(err, -KERF_EINVAL, "%s: not a usable name: %s",
				    field, why.msg);
	return 0;
}

static int check_tenant(const struct kerf_persist_tenant *t, size_t i,
			struct kerf_err *err)
{
	char f[64];

	snprintf(f, sizeof(f), "tenants[%zu].name", i);
	if (name_ok(t->name, f, err) < 0)
		return -KERF_EINVAL;
	if (t->nr_usage_avg > KERF_MAX_RES)
		return kerf_err_set(err, -KERF_EINVAL,
				    "tenants[%zu].usageAvg: %zu dimensions, at most %d",
				    i, t->nr_usage_avg, KERF_MAX_RES);
	for (size_t k = 0; k < t->nr_usage_avg; k++)
		if (!t->usage_avg[k].name[0] || !amount_ok(t->usage_avg[k].value))
			return kerf_err_set(err, -KERF_EINVAL,
					    "tenants[%zu].usageAvg[%zu]: a named dimension and 0..2^62",
					    i, k);
	if (!amount_ok(t->budget_used_milli_ms) || !time_ok(t->budget_window_start_ms))
		return kerf_err_set(err, -KERF_EINVAL,
				    "tenants[%zu].budget: used must be 0..2^62, window start within 2^53 ms",
				    i);
	if (t->budget_warned_pct < 0 || t->budget_warned_pct > 100)
		return kerf_err_set(err, -KERF_EINVAL,
				    "tenants[%zu].budget.warnedPct: %" PRId32 " is outside 0..100",
				    i, t->budget_warned_pct);
	return 0;
}

static int check_workload(const struct kerf_persist_workload *w, size_t i,
			  struct kerf_err *err)
{
	char f[64];

	snprintf(f, sizeof(f), "workloads[%zu].key", i);
	if (name_ok(w->key, f, err) < 0)
		return -KERF_EINVAL;
	if (w->seq == 0 || w->seq > (uint64_t)KERF_PERSIST_MAX_AMOUNT)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workloads[%zu].seq: must be 1..2^62", i);
	if (!time_ok(w->last_checkpoint_ms) || !time_ok(w->preempt_deadline_ms) ||
	    !time_ok(w->idle_since_ms) || w->preempt_deadline_ms < 0 ||
	    w->idle_since_ms < -1)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workloads[%zu]: a time is out of range", i);
	for (int k = 0; k < 3; k++)
		if (!time_ok(w->evicted_at_ms[k]))
			return kerf_err_set(err, -KERF_EINVAL,
					    "workloads[%zu].evictedAtMs[%d]: out of range", i, k);
	if (!amount_ok(w->lost_gpu_milli_ms) || w->nr_preemptions > 1000000000u)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workloads[%zu]: lost GPU time 0..2^62, preemptions 0..10^9", i);
	if (w->util_pct < 0 || w->util_pct > 100)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workloads[%zu].utilPct: %" PRId32 " is outside 0..100",
				    i, w->util_pct);
	if (w->pending >= KERF_PENDING_COUNT_)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workloads[%zu].pending: unknown reason %u", i, w->pending);
	if (w->nr_asked_by > KERF_PERSIST_MAX_ASKED_BY ||
	    w->nr_nominated > KERF_PERSIST_MAX_NAMES)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workloads[%zu]: too many askedBy or nominated entries", i);
	for (uint32_t k = 0; k < w->nr_asked_by; k++) {
		snprintf(f, sizeof(f), "workloads[%zu].askedBy[%u]", i, k);
		if (name_ok(w->asked_by[k], f, err) < 0)
			return -KERF_EINVAL;
	}
	for (uint32_t k = 0; k < w->nr_nominated; k++) {
		snprintf(f, sizeof(f), "workloads[%zu].nominated[%u]", i, k);
		if (name_ok(w->nominated[k], f, err) < 0)
			return -KERF_EINVAL;
	}
	if (w->preempted_by) {
		snprintf(f, sizeof(f), "workloads[%zu].preemptedBy", i);
		if (name_ok(w->preempted_by, f, err) < 0)
			return -KERF_EINVAL;
		if (!w->preempt_deadline_ms)
			return kerf_err_set(err, -KERF_EINVAL,
					    "workloads[%zu].preemptedBy: set without a deadline", i);
	}
	return 0;
}

int kerf_persist_validate(const struct kerf_persist *p, struct kerf_err *err)
{
	int rc = 0;

	if (p->version != KERF_PERSIST_VERSION)
		return kerf_err_set(err, -KERF_EINVAL,
				    "version: %" PRIu32 ", this kerf reads %d",
				    p->version, KERF_PERSIST_VERSION);
	if (!time_ok(p->avg_at_ms) || p->half_life_ms <= 0 ||
	    p->half_life_ms > KERF_PERSIST_MAX_MS)
		return kerf_err_set(err, -KERF_EINVAL,
				    "avgAtMs, halfLifeMs: out of range (half-life must be positive)");
	if (p->next_seq == 0 || p->next_seq > (uint64_t)KERF_PERSIST_MAX_AMOUNT)
		return kerf_err_set(err, -KERF_EINVAL, "nextSeq: must be 1..2^62");
	if (p->nr_tenants > KERF_MAX_TENANTS || p->nr_workloads > KERF_PERSIST_MAX_NAMES ||
	    p->nr_reserved > KERF_PERSIST_MAX_NAMES ||
	    p->nr_policy_state > KERF_PERSIST_MAX_POLICY_WORDS)
		return kerf_err_set(err, -KERF_EINVAL,
				    "too many tenants, workloads, reserved nodes or policy words");
	for (size_t i = 0; i < p->nr_tenants && rc == 0; i++)
		rc = check_tenant(&p->tenants[i], i, err);
	for (size_t i = 0; i < p->nr_workloads && rc == 0; i++) {
		rc = check_workload(&p->workloads[i], i, err);
		if (rc == 0 && p->workloads[i].seq >= p->next_seq)
			rc = kerf_err_set(err, -KERF_EINVAL,
					  "workloads[%zu].seq: %" PRIu64 " is not below nextSeq %" PRIu64,
					  i, p->workloads[i].seq, p->next_seq);
	}
	if (rc == 0 && p->reserver && name_ok(p->reserver, "reservation.workload", err) < 0)
		rc = -KERF_EINVAL;
	for (size_t k = 0; rc == 0 && k < p->nr_reserved; k++)
		if (name_ok(p->reserved[k], "reservation.nodes[]", err) < 0)
			rc = -KERF_EINVAL;
	if (rc == 0 && p->nr_reserved && !p->reserver)
		rc = kerf_err_set(err, -KERF_EINVAL,
				  "reservation.nodes: nodes held for no workload");
	if (rc == 0 && p->nr_notices > KERF_NOTICES)
		rc = kerf_err_set(err, -KERF_EINVAL, "notices: more than %d", KERF_NOTICES);
	for (size_t k = 0; rc == 0 && k < p->nr_notices; k++) {
		const struct kerf_persist_notice *n = &p->notices[k];

		if (n->kind > KERF_NOTICE_IDLE_EVICT || n->pct < 0 || n->pct > 100 ||
		    !time_ok(n->at_ms))
			rc = kerf_err_set(err, -KERF_EINVAL,
					  "notices[%zu]: kind, percent 0..100 or time out of range", k);
		else if (name_ok(n->tenant, "notices[].tenant", err) < 0 ||
			 (n->workload && name_ok(n->workload, "notices[].workload", err) < 0))
			rc = -KERF_EINVAL;
	}
	if (rc == 0 && p->nr_policy_state && !p->policy)
		rc = kerf_err_set(err, -KERF_EINVAL, "policy.state: no policy named");
	return rc;
}

/* --- import ---------------------------------------------------------- */

/* Dimension index of name in st, or -1 (a flavor no longer there). */
static int dim_index(const struct kerf_state *st, const char *name)
{
	char have[KERF_PERSIST_DIM_NAME_MAX];

	for (int i = 0; i < st->tenants.nr_res; i++) {
		kerf_res_name(&st->cluster, i, have, sizeof(have));
		if (strcmp(have, name) == 0)
			return i;
	}
	return -1;
}

static void import_tenant(struct kerf_state *st, const struct kerf_persist_tenant *x);

int kerf_state_import_tenant(struct kerf_state *st,
			     const struct kerf_persist_tenant *x,
			     struct kerf_err *err)
{
	int rc = check_tenant(x, 0, err);

	if (rc < 0)
		return rc;
	if (kerf_tenants_find(&st->tenants, x->name) <= KERF_TENANT_ROOT)
		return kerf_err_set(err, -KERF_ENOTFOUND, "tenant '%s': not known", x->name);
	import_tenant(st, x);
	return 0;
}

static void import_tenant(struct kerf_state *st, const struct kerf_persist_tenant *x)
{
	int t = kerf_tenants_find(&st->tenants, x->name);
	struct kerf_tenant *tn;

	if (t <= KERF_TENANT_ROOT)
		return;
	tn = &st->tenants.t[t];
	memset(&st->usage_avg[t], 0, sizeof(st->usage_avg[t]));
	for (size_t k = 0; k < x->nr_usage_avg; k++) {
		int i = dim_index(st, x->usage_avg[k].name);

		if (i >= 0)
			st->usage_avg[t].v[i] = x->usage_avg[k].value;
	}
	tn->budget.used_milli_ms = x->budget_used_milli_ms;
	tn->budget.window_start_ms = x->budget_window_start_ms;
	tn->budget.warned_pct = x->budget_warned_pct;
}

/* Ids of the keys that are known (others are gone: skipped). */
static uint32_t resolve(const struct kerf_state *st, char *const *keys,
			uint32_t nr, uint32_t *out)
{
	uint32_t n = 0;

	for (uint32_t k = 0; k < nr; k++) {
		const struct kerf_workload *o = kerf_state_find_key(st, keys[k]);

		if (o)
			out[n++] = o->id;
	}
	return n;
}

/* Does record x give its workload a part in preemption (w->pre)? */
static bool takes_part(const struct kerf_persist_workload *x)
{
	return x->nr_asked_by || x->nr_nominated || x->preempt_deadline_ms ||
	       x->nr_preemptions || x->lost_gpu_milli_ms || x->evicted_at_ms[0] ||
	       x->evicted_at_ms[1] || x->evicted_at_ms[2];
}

/*
 * Room for w's record: its pre when it takes part, the pre of the
 * preemptor it names (counted its victims), the lists (asked_by and
 * nominated).  The record is applied only when every workload has its
 * room; a pre made all zero reads as none meanwhile.
 */
static int make_room(struct kerf_state *st, struct kerf_workload *w,
		     const struct kerf_persist_workload *x,
		     uint32_t **asked, uint32_t **nominated)
{
	struct kerf_workload *by = x->preempt_deadline_ms && x->preempted_by
		? kerf_state_find_key(st, x->preempted_by) : NULL;

	*asked = NULL;
	*nominated = NULL;
	if (takes_part(x) && !kerf_workload_preempt(w))
		return -KERF_ENOMEM;
	if (by && by->state == KERF_WL_PENDING && !kerf_workload_preempt(by))
		return -KERF_ENOMEM;
	if (x->nr_asked_by && !(*asked = calloc(x->nr_asked_by, sizeof(**asked))))
		return -KERF_ENOMEM;
	if (x->nr_nominated &&
	    !(*nominated = calloc(x->nr_nominated, sizeof(**nominated)))) {
		free(*asked);
		*asked = NULL;
		return -KERF_ENOMEM;
	}
	return 0;
}

/* The preemptor of each victim not recorded has its pre (count_victims). */
static int make_room_unrecorded(struct kerf_state *st)
{
	for (size_t i = 0; i < st->nr_wl; i++) {
		const struct kerf_workload *v = st->wl[i];
		struct kerf_workload *p;

		if (kerf_wl_pre(v)->preempt_deadline_ms > 0 && v->pre->preempted_by &&
		    (p = kerf_state_find(st, v->pre->preempted_by)) &&
		    !kerf_workload_preempt(p))
			return -KERF_ENOMEM;
	}
	return 0;
}

static void apply_workload(struct kerf_state *st, struct kerf_workload *w,
			   const struct kerf_persist_workload *x,
			   uint32_t *asked, uint32_t *nominated)
{
	/* made by make_room when x takes part; else x has none of it */
	struct kerf_wl_preempt *p = w->pre;

	w->seq = x->seq;
	w->last_checkpoint_ms = x->last_checkpoint_ms;
	if (p) {
		memcpy(p->evicted_at, x->evicted_at_ms, sizeof(p->evicted_at));
		p->nr_preemptions = x->nr_preemptions;
		p->lost_gpu_milli_ms = x->lost_gpu_milli_ms;
		free(p->asked_by);
		p->asked_by = asked;
		p->nr_asked_by = resolve(st, x->asked_by, x->nr_asked_by, asked);
	}
	if (w->state == KERF_WL_RUNNING) {
		/* own usage follows the borrowed mark of its admission */
		struct kerf_res charged;

		kerf_workload_charged(w, &charged);
		if (x->borrowed && !w->borrowed)
			kerf_quota_release_own(&st->tenants, w->tenant, &charged);
		else if (!x->borrowed && w->borrowed)
			kerf_quota_charge_own(&st->tenants, w->tenant, &charged);
		w->borrowed = x->borrowed;
		if (p) {
			p->preempt_deadline_ms = 0;
			p->preempted_by = 0;
		}
		if (x->preempt_deadline_ms) {
			const struct kerf_workload *by = x->preempted_by
				? kerf_state_find_key(st, x->preempted_by) : NULL;

			/* asked by a preemptor still waiting, or for idleness */
			if (!x->preempted_by || (by && by->state == KERF_WL_PENDING)) {
				p->preempt_deadline_ms = x->preempt_deadline_ms;
				st->deadline_hint_ms = 0;   /* walk again */
				p->preempted_by = by ? by->id : 0;
			}
		}
		w->idle_reclaim = x->idle_reclaim && kerf_wl_pre(w)->preempt_deadline_ms;
		w->idle_notified = x->idle_notified;
		w->idle_since_ms = x->idle_since_ms;
		w->util_pct = x->util_pct;
		free(nominated);
		return;
	}
	w->pending_told = x->pending_told;
	w->observed = x->observed;
	if (w->state == KERF_WL_PENDING && x->pending != KERF_PENDING_NONE)
		w->pending = (enum kerf_pending)x->pending;
	if (!p)
		return;
	free(p->nominated);
	p->nominated = nominated;
	p->nr_nominated = 0;
	for (uint32_t k = 0; k < x->nr_nominated; k++) {
		int i = kerf_cluster_find_node(&st->cluster, x->nominated[k]);

		if (i >= 0)
			p->nominated[p->nr_nominated++] = (uint32_t)i;
	}
}

/* Victims still leaving, counted for each waiting preemptor. */
static void count_victims(struct kerf_state *st)
{
	for (size_t i = 0; i < st->nr_wl; i++)
		if (st->wl[i]->pre)
			st->wl[i]->pre->nr_victims = 0;
	for (size_t i = 0; i < st->nr_wl; i++) {
		const struct kerf_workload *v = st->wl[i];
		struct kerf_workload *p;

		if (v->state == KERF_WL_RUNNING && kerf_wl_pre(v)->preempt_deadline_ms > 0 &&
		    v->pre->preempted_by && (p = kerf_state_find(st, v->pre->preempted_by))) {
			KERF_ASSERT(p->pre);   /* make_room, make_room_unrecorded */
			p->pre->nr_victims++;
		}
	}
}

static int import_reservation(struct kerf_state *st, const struct kerf_persist *p)
{
	const struct kerf_workload *r = p->reserver ? kerf_state_find_key(st, p->reserver)
						    : NULL;

	st->reserver_id = 0;
	if (!r || r->state != KERF_WL_PENDING)
		return 0;
	if (KERF_GROW_ZERO(st->reserved, st->nr_reserved, st->cluster.nr_slots) < 0)
		return -KERF_ENOMEM;
	memset(st->reserved, 0, st->nr_reserved);
	for (size_t k = 0; k < p->nr_reserved; k++) {
		int i = kerf_cluster_find_node(&st->cluster, p->reserved[k]);

		if (i >= 0)
			st->reserved[i] = 1;
	}
	st->reserver_id = r->id;
	return 0;
}

/* Untold notices are issued again, to be told at the next cycle. */
static void import_notices(struct kerf_state *st, const struct kerf_persist *p)
{
	st->notices_told = st->nr_notices;
	for (size_t k = 0; k < p->nr_notices; k++) {
		const struct kerf_persist_notice *n = &p->notices[k];
		int t = kerf_tenants_find(&st->tenants, n->tenant);
		const struct kerf_workload *w = n->workload
			? kerf_state_find_key(st, n->workload) : NULL;

		if (t < 0)
			continue;
		kerf_state_notice(st, (enum kerf_notice_kind)n->kind, t,
				  w ? w->id : 0, n->pct, n->at_ms);
	}
}

int kerf_state_import(struct kerf_state *st, struct kerf_sched *s,
		      const struct kerf_persist *p, struct kerf_err *err)
{
	struct kerf_workload **match;
	uint32_t **asked, **nominated;
	bool *recorded;
	uint64_t next_seq;
	int rc = kerf_persist_validate(p, err);

	if (rc < 0)
		return rc;
	match = calloc(p->nr_workloads ? p->nr_workloads : 1, sizeof(*match));
	asked = calloc(p->nr_workloads ? p->nr_workloads : 1, sizeof(*asked));
	nominated = calloc(p->nr_workloads ? p->nr_workloads : 1, sizeof(*nominated));
	recorded = calloc(st->nr_wl ? st->nr_wl : 1, sizeof(*recorded));
	rc = match && asked && nominated && recorded ? 0 : -KERF_ENOMEM;
	/* every allocation first: then nothing can fail half-way */
	for (size_t i = 0; i < p->nr_workloads && rc == 0; i++) {
		match[i] = kerf_state_find_key(st, p->workloads[i].key);
		if (match[i])
			rc = make_room(st, match[i], &p->workloads[i], &asked[i], &nominated[i]);
	}
	if (rc == 0)
		rc = make_room_unrecorded(st);
	if (rc == 0 && p->reserver &&
	    KERF_GROW_ZERO(st->reserved, st->nr_reserved, st->cluster.nr_slots) < 0)
		rc = -KERF_ENOMEM;
	if (rc < 0)
		rc = kerf_err_set(err, rc, "out of memory");
	/* the policy's part checks itself whole before it changes anything */
	else if (s && p->policy && s->policy && strcmp(p->policy, s->policy->name) == 0)
		rc = kerf_sched_load(s, p->policy_state, p->nr_policy_state, err);
	if (rc < 0) {
		for (size_t i = 0; asked && nominated && i < p->nr_workloads; i++) {
			free(asked[i]);
			free(nominated[i]);
		}
		free(match);
		free(asked);
		free(nominated);
		free(recorded);
		return rc;
	}
	st->avg_at_ms = p->avg_at_ms;
	st->half_life_ms = p->half_life_ms;
	for (size_t t = 0; t < p->nr_tenants; t++)
		import_tenant(st, &p->tenants[t]);
	/* seqs: the recorded ones, then new ones after all of them */
	next_seq = p->next_seq > st->next_seq ? p->next_seq : st->next_seq;
	for (size_t i = 0; i < p->nr_workloads; i++)
		if (match[i] && !recorded[match[i]->index]) {
			apply_workload(st, match[i], &p->workloads[i], asked[i], nominated[i]);
			recorded[match[i]->index] = true;
		} else {
			/* a key recorded twice: the first record holds */
			free(asked[i]);
			free(nominated[i]);
		}
	for (size_t i = 0; i < st->nr_wl; i++)
		if (!recorded[i])
			st->wl[i]->seq = next_seq++;
	st->next_seq = next_seq;
	count_victims(st);
	import_reservation(st, p);  /* room made above: cannot fail */
	import_notices(st, p);
	free(match);
	free(asked);
	free(nominated);
	free(recorded);
	return 0;
}
