/*
 * whatif: a state document run as it is and with changes (sim/whatif.h).
 */
#include "sim/whatif.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/units.h"
#include "core/cycle.h"
#include "core/persist.h"
#include "core/policy.h"
#include "persist/state_doc.h"
#include "sim/timesim.h"

/* One run: the state loaded from the document, its policy and scheduler. */
struct side {
	struct kerf_state st;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct kerf_state_doc_info info;
	bool built;
};

static void side_release(struct side *s)
{
	if (s->built) {
		kerf_sched_release(&s->sched);
		kerf_policy_release(&s->pol);
	}
	if (s->st.cluster.nodes || s->st.tenants.t)
		kerf_state_release(&s->st);
	memset(s, 0, sizeof(*s));
}

static int apply(struct side *s, const struct kerf_whatif_change *c,
		 struct kerf_err *err)
{
	struct kerf_tenant_spec spec;
	int t, m, rc;

	if ((rc = kerf_whatif_change_check(&s->st, c, err)) < 0)
		return rc;
	if (c->kind == KERF_WHATIF_POLICY) {
		snprintf(s->info.policy, sizeof(s->info.policy), "%s", c->policy);
		return 0;
	}
	t = kerf_tenants_find(&s->st.tenants, c->tenant);
	kerf_state_tenant_spec(&s->st, t, &spec);
	m = c->flavor[0] ? kerf_whatif_flavor(&s->st, c->flavor) : 0;
	switch (c->kind) {
	case KERF_WHATIF_QUOTA:
		spec.quota.nominal.v[kerf_res_gpu(m)] = c->value;
		/* a lending limit is at most the nominal */
		if (spec.quota.lend_limit.v[kerf_res_gpu(m)] > c->value &&
		    spec.quota.lend_limit.v[kerf_res_gpu(m)] != KERF_QTY_INF)
			spec.quota.lend_limit.v[kerf_res_gpu(m)] = c->value;
		break;
	case KERF_WHATIF_BORROW:
		spec.quota.borrow_limit.v[kerf_res_gpu(m)] = c->value;
		break;
	case KERF_WHATIF_WEIGHT:
		spec.weight = (uint32_t)c->value;
		break;
	case KERF_WHATIF_BUDGET:
		/* GPU-milli-hours into GPU milli x ms */
		spec.budget_limit_milli_ms = c->value * 3600 * 1000;
		if (c->value && !spec.budget_window_ms)
			spec.budget_window_ms = KERF_WHATIF_BUDGET_WINDOW_MS;
		break;
	case KERF_WHATIF_POLICY:
		break;
	}
	rc = kerf_state_tenant_update(&s->st, t, &spec, err);
	if (rc < 0) {
		struct kerf_err inner = *err;

		kerf_err_clear(err);
		return kerf_err_set(err, -KERF_EINVAL, "%s %s: refused: %s", c->option,
				    c->tenant, inner.msg);
	}
	return 0;
}

static int side_load(struct side *s, const json_t *doc,
		     const struct kerf_whatif_change *changes, size_t nr,
		     struct kerf_err *err)
{
	struct kerf_persist hist;
	int rc = kerf_state_doc_decode(doc, &s->st, &s->info, &hist, err);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < nr && rc == 0; i++)
		rc = apply(s, &changes[i], err);
	if (rc == 0)
		rc = kerf_policy_build(&s->pol, s->info.policy,
				       &(struct kerf_policy_args){ .cluster = &s->st.cluster,
								   .seed = s->info.seed },
				       err);
	if (rc == 0) {
		kerf_sched_init(&s->sched, &s->pol);
		s->built = true;
		if (s->info.history)
			rc = kerf_state_import(&s->st, &s->sched, &hist, err);
	}
	kerf_persist_release(&hist);
	return rc;
}

/* Cycles from the document's clock to the horizon; nothing arrives. */
static int side_run(struct side *s, int64_t horizon_ms, int64_t cycle_ms,
		    struct kerf_err *err)
{
	struct kerf_decisions dec;
	struct kerf_cycle_stats stats;
	int64_t t = s->info.now_ms, end = t + horizon_ms;
	int rc = 0;

	kerf_decisions_init(&dec);
	for (; rc == 0 && t <= end; t += cycle_ms) {
		kerf_state_age(&s->st, t);
		dec.nr = 0;
		rc = kerf_cycle_run(&s->sched, &s->st, t, &dec, &stats, err);
	}
	kerf_decisions_release(&dec);
	return rc;
}

/* --- what each workload became ---------------------------------------- */

static char *nodes_of(const struct kerf_state *st, const struct kerf_workload *w)
{
	struct kerf_buf b;
	char *out;
	int rc = 0;

	kerf_buf_init(&b, 0);
	for (uint32_t k = 0; k < w->nr_bound; k++) {
		const char *name = st->cluster.nodes[w->pods[k].b.node].name;
		bool seen = false;

		for (uint32_t j = 0; j < k && !seen; j++)
			seen = w->pods[j].b.node == w->pods[k].b.node;
		if (!seen && rc == 0)
			rc = kerf_buf_addf(&b, "%s%s", b.len ? "," : "", name);
	}
	out = rc < 0 ? NULL : kerf_strdup(kerf_buf_str(&b));
	kerf_buf_release(&b);
	return out;
}

static int outcome(const struct kerf_state *st, const char *key,
		   struct kerf_whatif_outcome *o)
{
	const struct kerf_workload *w = kerf_state_find_key(st, key);

	memset(o, 0, sizeof(*o));
	o->state = w ? w->state : KERF_WL_FINISHED;
	if (!w || w->state == KERF_WL_FINISHED)
		return 0;
	if (w->state == KERF_WL_RUNNING) {
		o->leaving = w->leaving || kerf_wl_pre(w)->preempt_deadline_ms > 0;
		o->nodes = nodes_of(st, w);
		return o->nodes ? 0 : -KERF_ENOMEM;
	}
	o->code = w->pending;
	o->reason = kerf_strdup(w->pending_text ? w->pending_text : "");
	return o->reason ? 0 : -KERF_ENOMEM;
}

static void outcome_release(struct kerf_whatif_outcome *o)
{
	free(o->reason);
	free(o->nodes);
}

void kerf_whatif_result_release(struct kerf_whatif_result *r)
{
	for (size_t i = 0; r->wl && i < r->nr_wl; i++) {
		free(r->wl[i].key);
		free(r->wl[i].tenant);
		outcome_release(&r->wl[i].before);
		outcome_release(&r->wl[i].as_is);
		outcome_release(&r->wl[i].what_if);
	}
	for (size_t i = 0; r->tenants && i < r->nr_tenants; i++)
		free(r->tenants[i].name);
	free(r->wl);
	free(r->tenants);
	memset(r, 0, sizeof(*r));
}

static int by_seq(const void *a, const void *b)
{
	uint64_t x = (*(struct kerf_workload *const *)a)->seq;
	uint64_t y = (*(struct kerf_workload *const *)b)->seq;

	return x < y ? -1 : x > y;
}

/* The workloads of the loaded state (before any cycle), by seq. */
static int take_before(const struct kerf_state *st, struct kerf_whatif_result *r)
{
	struct kerf_workload **v = malloc((st->nr_wl ? st->nr_wl : 1) * sizeof(*v));
	int rc = 0;

	r->wl = calloc(st->nr_wl ? st->nr_wl : 1, sizeof(*r->wl));
	if (!v || !r->wl) {
		free(v);
		return -KERF_ENOMEM;
	}
	memcpy(v, st->wl, st->nr_wl * sizeof(*v));
	qsort(v, st->nr_wl, sizeof(*v), by_seq);
	for (size_t i = 0; i < st->nr_wl && rc == 0; i++) {
		struct kerf_whatif_wl *x = &r->wl[r->nr_wl++];

		x->key = kerf_strdup(v[i]->key);
		x->tenant = kerf_strdup(st->tenants.t[v[i]->tenant].name);
		if (!x->key || !x->tenant)
			rc = -KERF_ENOMEM;
		else
			rc = outcome(st, v[i]->key, &x->before);
	}
	free(v);
	return rc;
}

static int64_t gpu_in_use(const struct kerf_state *st, int t)
{
	int64_t sum = 0;

	for (int i = KERF_RES_GPU0; i < st->tenants.nr_res; i++)
		sum += st->tenants.t[t].usage.v[i];
	return sum;
}

static int take_tenants(const struct kerf_state *st, struct kerf_whatif_result *r)
{
	r->tenants = calloc(st->tenants.nr, sizeof(*r->tenants));
	if (!r->tenants)
		return -KERF_ENOMEM;
	for (size_t t = 1; t < st->tenants.nr; t++) {
		struct kerf_whatif_tenant *x;

		if (st->tenants.t[t].removed)
			continue;
		x = &r->tenants[r->nr_tenants++];
		if (!(x->name = kerf_strdup(st->tenants.t[t].name)))
			return -KERF_ENOMEM;
		x->gpu_milli[0] = gpu_in_use(st, (int)t);
	}
	return 0;
}

static int take_after(const struct kerf_state *st, int k, struct kerf_whatif_result *r)
{
	int rc = 0;

	for (size_t i = 0; i < r->nr_wl && rc == 0; i++)
		rc = outcome(st, r->wl[i].key, k == 1 ? &r->wl[i].as_is : &r->wl[i].what_if);
	for (size_t i = 0; i < r->nr_tenants; i++)
		r->tenants[i].gpu_milli[k] =
			gpu_in_use(st, kerf_tenants_find(&st->tenants, r->tenants[i].name));
	return rc;
}

int kerf_whatif_run(const json_t *doc, const struct kerf_whatif_change *changes,
		    size_t nr, int64_t horizon_ms, int64_t cycle_ms,
		    struct kerf_whatif_result *r, struct kerf_err *err)
{
	struct side a = { 0 }, b = { 0 };
	int rc;

	memset(r, 0, sizeof(*r));
	if (cycle_ms <= 0)
		cycle_ms = 10000;
	rc = side_load(&a, doc, NULL, 0, err);
	if (rc == 0)
		rc = side_load(&b, doc, changes, nr, err);
	if (rc == 0) {
		r->now_ms = a.info.now_ms;
		r->horizon_ms = horizon_ms;
		snprintf(r->policy[0], sizeof(r->policy[0]), "%s", a.info.policy);
		snprintf(r->policy[1], sizeof(r->policy[1]), "%s", b.info.policy);
		rc = take_before(&a.st, r);
		if (rc == 0)
			rc = take_tenants(&a.st, r);
		if (rc == -KERF_ENOMEM)
			kerf_err_set(err, rc, "what-if: out of memory");
	}
	if (rc == 0)
		rc = side_run(&a, horizon_ms, cycle_ms, err);
	if (rc == 0)
		rc = side_run(&b, horizon_ms, cycle_ms, err);
	if (rc == 0 && ((rc = take_after(&a.st, 1, r)) < 0 || (rc = take_after(&b.st, 2, r)) < 0))
		kerf_err_set(err, rc, "what-if: out of memory");
	side_release(&a);
	side_release(&b);
	if (rc < 0)
		kerf_whatif_result_release(r);
	return rc;
}

int kerf_whatif_scenario_doc(const struct kerf_scenario *sc, int64_t at_ms,
			     kerf_ts_hook hook, void *ctx, json_t **doc,
			     struct kerf_err *err)
{
	struct kerf_scenario upto = *sc;   /* shallow: borrowed for the run */
	struct kerf_timesim ts;
	struct kerf_state_doc_info info = { .now_ms = at_ms, .seed = sc->seed };
	int rc;

	*doc = NULL;
	if (at_ms > sc->horizon_ms) {
		char at[32], end[32];

		kerf_units_duration(at_ms, at, sizeof(at));
		kerf_units_duration(sc->horizon_ms, end, sizeof(end));
		return kerf_err_set(err, -KERF_EINVAL,
				    "--at: %s is past the scenario's horizon (%s)", at, end);
	}
	upto.horizon_ms = at_ms > 0 ? at_ms : 1;
	rc = kerf_timesim_init(&ts, &upto, err);
	if (rc < 0)
		return rc;
	ts.hook = hook;
	ts.hook_ctx = ctx;
	rc = kerf_timesim_run(&ts, err);
	if (rc == 0) {
		snprintf(info.policy, sizeof(info.policy), "%s",
			 sc->policy[0] ? sc->policy : KERF_POLICY_DEFAULT);
		info.now_ms = ts.now_ms;
		*doc = kerf_state_doc_encode(&ts.st, &ts.sched, &info, err);
		if (!*doc)
			rc = -KERF_ENOMEM;
	}
	kerf_timesim_release(&ts);
	return rc;
}
