#include "sim/check.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "core/mig/place.h"
#include "base/grow.h"
#include "base/map.h"
#include "sim/restart.h"
#include "sim/timesim.h"

/* the first two have MIG tables (core/mig/geometry.h), L4 none */
static const char *const model_names[] = { "A100-40GB", "H100-80GB", "L4" };

static int64_t between(struct kerf_rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)kerf_rng_below(r, (uint64_t)(hi - lo + 1));
}

static void gen_nodes(struct kerf_rng *r, struct kerf_scenario *sc, int models)
{
	static const int gpus[] = { 0, 1, 2, 4, 8, 8 };

	sc->nr_nodes = (size_t)between(r, 1, 4);
	for (size_t i = 0; i < sc->nr_nodes; i++) {
		struct kerf_scn_nodes *g = &sc->nodes[i];

		snprintf(g->prefix, sizeof(g->prefix), "g%zu-", i);
		g->count = (uint32_t)between(r, 1, 8);
		g->gpus = gpus[kerf_rng_below(r, 6)];
		g->cpu_milli = between(r, 8, 128) * 1000;
		g->mem_mib = between(r, 32, 1024) * 1024;
		if (g->gpus > 0) {
			snprintf(g->model, sizeof(g->model), "%s",
				 model_names[kerf_rng_below(r, (uint64_t)models)]);
			g->gpu_mem_mib = (int32_t)between(r, 0, 1) * 81920;
			g->domain_nodes = (uint32_t)between(r, 0, 3);
		}
	}
}

static void gen_classes(struct kerf_rng *r, struct kerf_scenario *sc)
{
	struct kerf_priority_class pc[] = {
		{ .name = "prod", .value = 1000, .preemptible = false },
		{ .name = "batch", .value = 100, .preemptible = true,
		  .checkpoint_grace_ms = 60000 },
		{ .name = "scavenger", .value = 10, .preemptible = true },
	};
	int n = (int)between(r, 2, 3);

	kerf_classes_init(&sc->classes);
	for (int i = 0; i < n; i++)
		kerf_classes_add(&sc->classes, &pc[i], NULL);
}

/* GPU capacity per model name in the generated cluster, in milli. */
static int64_t capacity_of(const struct kerf_scenario *sc, const char *model)
{
	int64_t cap = 0;

	for (size_t i = 0; i < sc->nr_nodes; i++)
		if (sc->nodes[i].gpus > 0 && !strcmp(sc->nodes[i].model, model))
			cap += (int64_t)sc->nodes[i].count * sc->nodes[i].gpus * 1000;
	return cap;
}

static void gen_quota(struct kerf_rng *r, struct kerf_scn_tenant *t,
		      const char *model, int64_t nominal)
{
	struct kerf_scn_quota *q = &t->quotas[t->nr_quotas++];

	snprintf(q->resource, sizeof(q->resource), "%s", model);
	q->nominal = nominal;
	q->borrowing_limit = kerf_rng_below(r, 3) ? KERF_QTY_INF
						  : between(r, 0, 16) * 1000;
	q->lending_limit = kerf_rng_below(r, 3) ? KERF_QTY_INF
						: between(r, 0, nominal / 1000) * 1000;
}

/* Sometimes a GPU-hour budget, sometimes an idle policy. */
static void gen_policies(struct kerf_rng *r, struct kerf_scn_tenant *t)
{
	/* half shared, the rest within the tenant or hardware-isolated */
	t->isolation = kerf_rng_below(r, 2) ? KERF_ISOLATION_SHARED
					    : (enum kerf_isolation)between(r, 1, 2);
	if (!kerf_rng_below(r, 4)) {
		t->budget_gpu_milli_hours = between(r, 1, 50) * 1000;
		t->budget_window_ms = between(r, 1, 8) * 3600 * 1000;
		t->budget_action = (enum kerf_budget_action)kerf_rng_below(r, 2);
		for (int m = 0; m < KERF_MAX_MODELS; m++)
			t->budget_weight_pct[m] = (int32_t)between(r, 0, 4) * 50;
	}
	if (!kerf_rng_below(r, 4)) {
		t->idle_action = kerf_rng_below(r, 2) ? KERF_IDLE_NOTIFY
						     : KERF_IDLE_CHECKPOINT_EVICT;
		t->idle_threshold_pct = (int32_t)between(r, 5, 50);
		t->idle_after_ms = between(r, 5, 60) * 60 * 1000;
		if (kerf_rng_below(r, 2)) {
			snprintf(t->idle_exempt_classes[0], KERF_CLASS_NAME_MAX, "prod");
			t->nr_idle_exempt_classes = 1;
		}
	}
}

/* Orgs under the cluster, teams (leaves) under orgs, nominals that nest. */
static void gen_tenants(struct kerf_rng *r, struct kerf_scenario *sc, int models)
{
	int orgs = (int)between(r, 1, 3);

	sc->nr_tenants = 0;
	for (int o = 0; o < orgs; o++) {
		struct kerf_scn_tenant *org = &sc->tenants[sc->nr_tenants++];
		int teams = (int)between(r, 0, 3);
		size_t org_idx = sc->nr_tenants - 1;

		memset(org, 0, sizeof(*org));
		snprintf(org->name, sizeof(org->name), "org%d", o);
		org->weight = (uint32_t)between(r, 1, 3);
		gen_policies(r, org);
		for (int m = 0; m < models; m++) {
			int64_t cap = capacity_of(sc, model_names[m]);

			if (cap > 0 && kerf_rng_below(r, 4))
				gen_quota(r, org, model_names[m],
					  cap / orgs / 1000 * 1000);
		}
		for (int t = 0; t < teams; t++) {
			struct kerf_scn_tenant *team = &sc->tenants[sc->nr_tenants++];

			memset(team, 0, sizeof(*team));
			snprintf(team->name, sizeof(team->name), "org%d-team%d", o, t);
			snprintf(team->parent, sizeof(team->parent), "%s",
				 sc->tenants[org_idx].name);
			team->weight = (uint32_t)between(r, 1, 3);
			gen_policies(r, team);
			for (int q = 0; q < sc->tenants[org_idx].nr_quotas; q++) {
				const struct kerf_scn_quota *oq =
					&sc->tenants[org_idx].quotas[q];

				gen_quota(r, team, oq->resource,
					  oq->nominal / teams / 1000 * 1000);
			}
		}
	}
}

static bool is_leaf(const struct kerf_scenario *sc, size_t t)
{
	for (size_t i = 0; i < sc->nr_tenants; i++)
		if (!strcmp(sc->tenants[i].parent, sc->tenants[t].name))
			return false;
	return true;
}

static void gen_workload(struct kerf_rng *r, struct kerf_scenario *sc, int models)
{
	static const uint8_t gpus[] = { 0, 1, 1, 2, 4, 8 };
	size_t leaves[64], nr_leaves = 0;

	for (size_t t = 0; t < sc->nr_tenants; t++)
		if (is_leaf(sc, t) && nr_leaves < 64)
			leaves[nr_leaves++] = t;
	sc->nr_generators = (size_t)between(r, 2, 8);
	for (size_t i = 0; i < sc->nr_generators; i++) {
		struct kerf_scn_generator *g = &sc->generators[i];
		struct kerf_pod *p = &g->set.req;

		memset(g, 0, sizeof(*g));
		snprintf(g->name, sizeof(g->name), "w%zu", i);
		snprintf(g->tenant, sizeof(g->tenant), "%s",
			 sc->tenants[leaves[kerf_rng_below(r, nr_leaves)]].name);
		snprintf(g->class_name, sizeof(g->class_name), "%s",
			 sc->classes.c[kerf_rng_below(r, (uint64_t)sc->classes.nr)].name);
		g->count = (uint32_t)between(r, 1, 30);
		g->start_ms = between(r, 0, 3600) * 1000;
		g->interarrival_ms = between(r, 0, 600) * 1000;
		g->arrival = kerf_rng_below(r, 2) ? KERF_DIST_EXP : KERF_DIST_FIXED;
		g->duration_ms = between(r, 60, 3 * 3600) * 1000;
		g->duration = kerf_rng_below(r, 2) ? KERF_DIST_EXP : KERF_DIST_FIXED;
		g->set.count = (uint32_t)between(r, 1, 4);
		g->min_count = kerf_rng_below(r, 4) ? 0
						    : (uint32_t)between(r, 1, g->set.count);
		g->topology = (enum kerf_topology)kerf_rng_below(r, 4);
		p->cpu_milli = between(r, 1, 32) * 1000;
		p->mem_mib = between(r, 1, 256) * 1024;
		p->nr_gpus = gpus[kerf_rng_below(r, 6)];
		if (p->nr_gpus > 0) {
			p->gpu_milli = kerf_rng_below(r, 3) ? 1000
							    : (int32_t)between(r, 1, 9) * 100;
			if (p->gpu_milli < 1000) {
				p->nr_gpus = 1;
				/* default, MPS or time-slicing */
				p->share = (uint8_t)kerf_rng_below(r, KERF_SHARE_COUNT_);
			}
			if (!kerf_rng_below(r, 4))
				p->gpu_mem_mib = (int32_t)between(r, 1, 40) * 1024;
			if (!kerf_rng_below(r, 4))
				p->model_mask = (uint64_t)between(r, 1, (1 << models) - 1);
		}
		g->utilisation_pct = (int32_t)between(r, 0, 100);
		g->checkpoint_every_ms = kerf_rng_below(r, 2) ? between(r, 5, 60) * 60 * 1000
							      : 0;
	}
}

/*
 * MIG, drawn from a stream of its own so that a seed without it keeps the
 * scenario it always had: in half of the runs, each group of a model with
 * MIG has a third chance of GPUs in MIG mode, and each generator of
 * one-GPU pods a third chance of asking an instance (1 to 7 compute
 * slices, the memory it had).  Hardware-isolated tenants' fractions then
 * become MIG instances too (kerf_state_submit).
 */
static void gen_mig(uint64_t seed, struct kerf_scenario *sc)
{
	struct kerf_rng r;

	kerf_rng_seed(&r, seed ^ 0x31690u);
	if (kerf_rng_below(&r, 2))
		return;
	for (size_t i = 0; i < sc->nr_nodes; i++) {
		struct kerf_scn_nodes *g = &sc->nodes[i];

		if (g->gpus > 0 && strcmp(g->model, "L4") && !kerf_rng_below(&r, 3))
			g->mig_gpus = (int)between(&r, 1, g->gpus);
	}
	for (size_t i = 0; i < sc->nr_generators; i++) {
		struct kerf_pod *p = &sc->generators[i].set.req;

		if (p->nr_gpus != 1 || kerf_rng_below(&r, 3))
			continue;
		p->mig_slices = (uint8_t)between(&r, 1, 7);
		p->gpu_milli = p->mig_slices * KERF_GPU_MILLI / 7;
		p->share = KERF_SHARE_DEFAULT;
	}
}

int kerf_check_scenario(uint64_t seed, struct kerf_scenario *sc,
			struct kerf_err *err)
{
	struct kerf_rng r;
	int models;

	kerf_scenario_init(sc);
	kerf_rng_seed(&r, seed);
	models = (int)between(&r, 1, 3);
	sc->nodes = calloc(4, sizeof(*sc->nodes));
	sc->tenants = calloc(12, sizeof(*sc->tenants));
	sc->generators = calloc(8, sizeof(*sc->generators));
	if (!sc->nodes || !sc->tenants || !sc->generators) {
		kerf_scenario_release(sc);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	snprintf(sc->name, sizeof(sc->name), "check-%" PRIu64, seed);
	sc->seed = seed;
	sc->horizon_ms = between(&r, 2, 8) * 3600 * 1000;
	sc->cycle_ms = between(&r, 5, 60) * 1000;
	snprintf(sc->policy, sizeof(sc->policy), "%s",
		 kerf_rng_below(&r, 2) ? "kerf" : "best-fit");
	gen_nodes(&r, sc, models);
	gen_classes(&r, sc);
	gen_tenants(&r, sc, models);
	gen_workload(&r, sc, models);
	gen_mig(seed, sc);
	/*
	 * A model named in a pod mask or quota may have no node: the loader
	 * would reject a quota on it, so drop such quota lines here.
	 */
	for (size_t t = 0; t < sc->nr_tenants; t++) {
		struct kerf_scn_tenant *x = &sc->tenants[t];
		int keep = 0;

		for (int q = 0; q < x->nr_quotas; q++)
			if (capacity_of(sc, x->quotas[q].resource) > 0)
				x->quotas[keep++] = x->quotas[q];
		x->nr_quotas = keep;
	}
	return 0;
}

struct edge {
	uint64_t from, to;              /* preemptor, victim (key hashes) */
};

struct checker {
	struct kerf_res *claims;        /* before the event, per tenant */
	struct kerf_res *np;
	size_t nr_tenants;              /* entries in claims and np */
	int64_t restart_at[3];          /* restart the controller then */
	int nr_restarts;
	int next_restart;
	struct edge *edges;             /* preemptions seen */
	size_t nr_edges, alloc_edges;
	uint64_t seed;
	uint64_t violations;
	uint64_t shared, in_tenant;     /* GPUs shared by fractions, per event */
	uint64_t mig_in_use, mig_gpus_shared; /* MIG instances in use, per event */
	char first[512];
	/* the first violation's parts, for -o json */
	int64_t first_ms;
	uint64_t first_event;
	const char *first_kind;
	char first_what[384];
	kerf_check_tamper_fn tamper;    /* a test's, else NULL */
	void *tamper_ctx;
};

static const char *const kind_names[] = {
	[KERF_EV_FINISH] = "finish", [KERF_EV_NODE] = "node",
	[KERF_EV_QUOTA] = "quota edit", [KERF_EV_TENANT] = "tenant edit",
	[KERF_EV_ACK] = "checkpoint ack", [KERF_EV_DEADLINE] = "deadline",
	[KERF_EV_TIMER] = "timer", [KERF_EV_ARRIVAL] = "arrival",
	[KERF_EV_CYCLE] = "cycle",
};

static int violation(struct checker *c, const struct kerf_timesim *ts,
		     const struct kerf_event *ev, const char *what)
{
	if (c->violations++ == 0)
		snprintf(c->first, sizeof(c->first),
			 "seed %" PRIu64 " t=%" PRId64 "ms event %" PRIu64 " (%s): %s",
			 c->seed, ts->now_ms, ts->nr_events, kind_names[ev->kind],
			 what);
	if (c->violations == 1) {
		c->first_ms = ts->now_ms;
		c->first_event = ts->nr_events;
		c->first_kind = kind_names[ev->kind];
		snprintf(c->first_what, sizeof(c->first_what), "%s", what);
	}
	return 1;  /* stop this run: later state is not trustworthy */
}

/*
 * Victims: never non-preemptible; and no cycle: a workload never preempts
 * one that preempted it (A evicts B, B evicts A).
 */
static int check_preemptions(struct checker *c, const struct kerf_timesim *ts,
			     const struct kerf_event *ev)
{
	char msg[400];

	for (size_t i = 0; i < ts->st.nr_wl; i++) {
		const struct kerf_workload *v = ts->st.wl[i];
		const struct kerf_workload *by;
		uint64_t vk, bk;
		bool seen = false;

		if (v->state != KERF_WL_RUNNING || kerf_wl_pre(v)->preempt_deadline_ms == 0)
			continue;
		if (v->nonpreemptible) {
			snprintf(msg, sizeof(msg),
				 "non-preemptible workload '%s' asked to leave", v->key);
			return violation(c, ts, ev, msg);
		}
		by = kerf_state_find((const struct kerf_state *)&ts->st, kerf_wl_pre(v)->preempted_by);
		if (!by)
			continue;   /* reclaimed for idling */
		vk = kerf_hash_str(v->key);
		bk = kerf_hash_str(by->key);
		for (size_t k = 0; k < c->nr_edges; k++) {
			if (c->edges[k].from == vk && c->edges[k].to == bk) {
				snprintf(msg, sizeof(msg),
					 "preemption cycle: '%s' and '%s' preempt each other",
					 v->key, by->key);
				return violation(c, ts, ev, msg);
			}
			seen |= c->edges[k].from == bk && c->edges[k].to == vk;
		}
		if (seen)
			continue;
		if (KERF_GROW(c->edges, c->alloc_edges, c->nr_edges + 1) < 0)
			return violation(c, ts, ev, "out of memory");
		c->edges[c->nr_edges++] = (struct edge){ bk, vk };
	}
	return 0;
}

static int snapshot(struct checker *c, const struct kerf_tenants *tt)
{
	size_t a = c->nr_tenants, b = c->nr_tenants;

	if (KERF_GROW_ZERO(c->claims, a, tt->nr) < 0 ||
	    KERF_GROW_ZERO(c->np, b, tt->nr) < 0)
		return -KERF_ENOMEM;
	if (tt->nr > c->nr_tenants)
		c->nr_tenants = a < b ? a : b;
	for (size_t t = 0; t < tt->nr; t++) {
		c->claims[t] = tt->t[t].claim;
		c->np[t] = tt->t[t].usage_np;
	}
	return 0;
}

/* Room for late tenants: their snapshot starts at zero. */
static int snapshot_grow(struct checker *c, const struct kerf_tenants *tt)
{
	size_t a = c->nr_tenants, b = c->nr_tenants;

	if (tt->nr <= c->nr_tenants)
		return 0;
	if (KERF_GROW_ZERO(c->claims, a, tt->nr) < 0 ||
	    KERF_GROW_ZERO(c->np, b, tt->nr) < 0)
		return -KERF_ENOMEM;
	c->nr_tenants = a < b ? a : b;
	return 0;
}

static int after_event(void *ctx, struct kerf_timesim *ts,
		       const struct kerf_event *ev)
{
	struct checker *c = ctx;
	const struct kerf_tenants *tt;
	struct kerf_err err = { 0 };
	char msg[400];

	if (c->tamper)
		c->tamper(c->tamper_ctx, ts);
	/* the controller restarts here: state rebuilt, history imported */
	if (c->next_restart < c->nr_restarts && ts->now_ms >= c->restart_at[c->next_restart]) {
		c->next_restart++;
		if (kerf_timesim_restart(ts, &err) < 0) {
			snprintf(msg, sizeof(msg), "restart: %.370s", err.msg);
			return violation(c, ts, ev, msg);
		}
	}
	tt = &ts->st.tenants;
	if (snapshot_grow(c, tt) < 0)
		return violation(c, ts, ev, "out of memory");
	if (kerf_state_check(&ts->st, &err) < 0) {
		snprintf(msg, sizeof(msg), "%.380s", err.msg);
		return violation(c, ts, ev, msg);
	}
	for (size_t i = 0; i < ts->st.cluster.nr_slots; i++) {
		const struct kerf_node *n = &ts->st.cluster.nodes[i];

		for (int g = 0; g < n->nr_gpus; g++) {
			unsigned in_use = 0;

			if (n->gpu_nr_fractions[g] >= 2) {
				c->shared++;
				c->in_tenant += n->gpu_isolation[g] == KERF_ISOLATION_TENANT;
			}
			if (!(n->mig_gpus >> g & 1))
				continue;
			for (unsigned k = 0; k < n->mig->gpu[g].nr; k++)
				in_use += n->mig->gpu[g].inst[k].in_use;
			c->mig_in_use += in_use;
			c->mig_gpus_shared += in_use >= 2;
		}
	}
	/*
	 * A quota edit may itself move claims over a limit (RS-21): allowed;
	 * what must never happen is an admission that grows one there.  (A
	 * tenant added claims its protected nominal on its ancestors: a
	 * configuration change too.  A node event may shrink the root,
	 * which has no limit.)
	 */
	for (size_t t = 1; t < tt->nr && ev->kind != KERF_EV_QUOTA &&
			   ev->kind != KERF_EV_TENANT; t++) {
		for (int i = 0; i < tt->nr_res; i++) {
			int64_t claim = tt->t[t].claim.v[i];
			int64_t np = tt->t[t].usage_np.v[i];

			if (claim > kerf_tenant_limit(tt, (int)t, i) &&
			    claim > c->claims[t].v[i]) {
				snprintf(msg, sizeof(msg),
					 "tenant '%s' dimension %d: claim %" PRId64 " over its limit %" PRId64 " and growing",
					 tt->t[t].name, i, claim,
					 kerf_tenant_limit(tt, (int)t, i));
				return violation(c, ts, ev, msg);
			}
			if (kerf_tenant_governs(tt, (int)t, i) &&
			    np > tt->t[t].quota.nominal.v[i] && np > c->np[t].v[i]) {
				snprintf(msg, sizeof(msg),
					 "tenant '%s' dimension %d: non-preemptible usage %" PRId64 " over nominal %" PRId64,
					 tt->t[t].name, i, np, tt->t[t].quota.nominal.v[i]);
				return violation(c, ts, ev, msg);
			}
		}
	}
	if (ev->kind == KERF_EV_CYCLE) {
		int rc = check_preemptions(c, ts, ev);

		if (rc)
			return rc;
		for (size_t i = 0; i < ts->st.nr_wl; i++) {
			const struct kerf_workload *w = ts->st.wl[i];

			if (w->state != KERF_WL_RUNNING || w->start_ms != ts->now_ms)
				continue;
			for (uint32_t k = 0; k < w->nr_bound; k++) {
				const struct kerf_node *n = &ts->st.cluster.nodes[w->pods[k].b.node];

				if (n->cordoned)
					snprintf(msg, sizeof(msg),
						 "workload '%s' placed on cordoned node '%s'",
						 w->key, n->name);
				else if (w->pods[k].b.gpus & n->gpus_down)
					snprintf(msg, sizeof(msg),
						 "workload '%s' placed on GPUs 0x%x of node '%s', 0x%x out of service",
						 w->key, w->pods[k].b.gpus, n->name, n->gpus_down);
				else
					continue;
				return violation(c, ts, ev, msg);
			}
		}
	}
	if (snapshot(c, tt) < 0)
		return violation(c, ts, ev, "out of memory");
	return 0;
}

/* A leaf tenant that has generators: it is held back and comes late. */
static int pick_late_tenant(struct kerf_rng *r, const struct kerf_timesim *ts)
{
	const struct kerf_scenario *sc = ts->sc;

	if (sc->nr_generators == 0 || kerf_rng_below(r, 2))
		return -1;
	return kerf_tenants_find(&ts->st.tenants,
				 sc->generators[kerf_rng_below(r, sc->nr_generators)].tenant);
}

/*
 * Node failures, removals (some added back later), quota edits, GPUs out
 * of service (some back later), a late tenant, at random times.
 */
static int inject_faults(struct kerf_rng *r, struct kerf_timesim *ts)
{
	size_t nodes = ts->nr_node_specs, tenants = ts->st.tenants.nr;
	int faults = (int)between(r, 0, 4), rc = 0, late;
	struct kerf_rng g = *r;

	for (int f = 0; f < faults && rc == 0 && nodes > 0; f++) {
		uint32_t n = (uint32_t)kerf_rng_below(r, nodes);
		int64_t down = between(r, 0, ts->horizon_ms);

		rc = kerf_timesim_node_event(ts, down, n, KERF_TS_NODE_DOWN);
		if (rc == 0 && kerf_rng_below(r, 2))
			rc = kerf_timesim_node_event(ts, down + between(r, 1, 3600) * 1000,
						     n, KERF_TS_NODE_UP);
	}
	for (int e = 0; e < (int)between(r, 0, 3) && rc == 0 && tenants > 1; e++) {
		int t = (int)between(r, 1, (int64_t)tenants - 1);
		struct kerf_quota q = ts->st.tenants.t[t].quota;

		/* shrink (or grow) one GPU nominal; edits that do not nest are
		 * refused, others may leave usage over the new limit */
		for (int i = KERF_RES_GPU0; i < ts->st.tenants.nr_res; i++)
			if (q.nominal.v[i] > 0)
				q.nominal.v[i] = q.nominal.v[i] * between(r, 0, 150) / 100 /
						 1000 * 1000;
		if (kerf_rng_below(r, 2))
			for (int i = KERF_RES_GPU0; i < ts->st.tenants.nr_res; i++)
				q.borrow_limit.v[i] = between(r, 0, 4) * 1000;
		rc = kerf_timesim_quota_event(ts, between(r, 0, ts->horizon_ms), t, &q);
	}
	/* a node removed, and maybe added back as it was */
	for (int f = (int)between(r, 0, 2); f > 0 && rc == 0 && nodes > 1; f--) {
		uint32_t n = (uint32_t)kerf_rng_below(r, nodes);
		int64_t gone = between(r, 0, ts->horizon_ms);

		rc = kerf_timesim_node_event(ts, gone, n, KERF_TS_NODE_REMOVE);
		if (rc == 0 && kerf_rng_below(r, 2))
			rc = kerf_timesim_node_event(ts, gone + between(r, 1, 7200) * 1000,
						     n, KERF_TS_NODE_UP);
	}
	/* GPUs out of service and back, from a stream of their own: the
	   draws after these stay as they were */
	kerf_rng_seed(&g, kerf_rng_next(&g) ^ 0x6a09e667f3bcc909ull);
	for (int f = (int)between(&g, 0, 4); f > 0 && rc == 0 && nodes > 0; f--) {
		uint32_t n = (uint32_t)kerf_rng_below(&g, nodes);
		unsigned gpu = (unsigned)kerf_rng_below(&g, KERF_NODE_MAX_GPUS);
		int64_t down = between(&g, 0, ts->horizon_ms);

		rc = kerf_timesim_gpu_event(ts, down, n, gpu, KERF_TS_GPU_DOWN);
		if (rc == 0 && kerf_rng_below(&g, 2))
			rc = kerf_timesim_gpu_event(ts, down + between(&g, 1, 3600) * 1000,
						    n, gpu, KERF_TS_GPU_UP);
	}
	/* a tenant that is not there at first and comes later */
	late = pick_late_tenant(r, ts);
	if (rc == 0 && late > 0) {
		struct kerf_tenant_spec spec;

		kerf_state_tenant_spec(&ts->st, late, &spec);
		rc = kerf_timesim_tenant_event(ts, 0, &spec, true);
		if (rc == 0)
			rc = kerf_timesim_tenant_event(ts, between(r, 1, ts->horizon_ms / 1000) * 1000,
						       &spec, false);
	}
	return rc;
}

int kerf_check_prepare(uint64_t seed, struct kerf_scenario *sc,
		       struct kerf_timesim *ts, struct kerf_err *err)
{
	struct kerf_rng r;
	int rc = kerf_check_scenario(seed, sc, err);

	if (rc < 0)
		return rc;
	rc = kerf_timesim_init(ts, sc, err);
	if (rc < 0) {
		kerf_scenario_release(sc);
		return kerf_err_set(err, rc, "seed %" PRIu64 ": %s", seed, err->msg);
	}
	kerf_rng_seed(&r, seed ^ 0xfa017u);
	if (inject_faults(&r, ts) < 0) {
		kerf_timesim_release(ts);
		kerf_scenario_release(sc);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	return 0;
}

/*
 * One simulation of seed, checked after every event, with the controller
 * restarted at the times of c (none: uninterrupted).  Its decision stream
 * is hashed into *hash.
 */
static int simulate(uint64_t seed, struct checker *c, struct kerf_check_result *res,
		    uint64_t *hash, uint64_t *nr_decisions, int64_t *horizon_ms,
		    struct kerf_err *err)
{
	struct kerf_scenario sc;
	struct kerf_timesim ts;
	int rc = kerf_check_prepare(seed, &sc, &ts, err);

	if (rc < 0)
		return rc;
	if (snapshot(c, &ts.st.tenants) < 0) {
		rc = kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		goto out;
	}
	ts.hook = after_event;
	ts.hook_ctx = c;
	/* KERF_CHECK_TRACE=PREFIX: each run's decisions to PREFIX.0 and .N */
	if (getenv("KERF_CHECK_TRACE")) {
		char path[512];

		snprintf(path, sizeof(path), "%s.%d", getenv("KERF_CHECK_TRACE"),
			 c->nr_restarts);
		ts.decision_log = fopen(path, "w");
	}
	rc = kerf_timesim_run(&ts, err);
	if (ts.decision_log)
		fclose(ts.decision_log);
	if (rc > 0)
		rc = 0;   /* stopped by a violation */
	*hash = ts.decision_hash;
	*nr_decisions = ts.nr_decisions;
	*horizon_ms = ts.horizon_ms;
	res->events += ts.nr_events;
	res->shared_gpu_checks += c->shared;
	res->tenant_gpu_checks += c->in_tenant;
	res->mig_instance_checks += c->mig_in_use;
	res->mig_shared_gpu_checks += c->mig_gpus_shared;
	res->restarts += ts.nr_restarts;
	res->adoptions += ts.nr_adopted;
	res->node_removals += ts.nr_node_removals;
	res->late_tenants += ts.nr_tenants_added;
	res->decisions += ts.nr_decisions;
	if (c->nr_restarts == 0)
		for (size_t t = 1; t < ts.nr_tenant_stats; t++) {
			res->preemptions += ts.tenant[t].preempted;
			res->evictions += ts.tenant[t].evicted;
			res->admissions += ts.tenant[t].admitted;
		}
out:
	kerf_timesim_release(&ts);
	kerf_scenario_release(&sc);
	return rc;
}

static void record(struct kerf_check_result *res, const struct checker *c,
		   uint64_t seed)
{
	if (!c->violations)
		return;
	if (res->violations == 0) {
		res->first_bad_seed = seed;
		memcpy(res->first_violation, c->first, sizeof(c->first));
	}
	if (!res->last.valid) {
		res->last.valid = true;
		res->last.seed = seed;
		res->last.time_ms = c->first_ms;
		res->last.event = c->first_event;
		res->last.kind = c->first_kind;
		memcpy(res->last.what, c->first_what, sizeof(res->last.what));
	}
	res->violations += c->violations;
}

static void checker_release(struct checker *c)
{
	free(c->claims);
	free(c->np);
	free(c->edges);
}

/*
 * A seed run twice: uninterrupted, then with its controller restarted at
 * up to three random times; both checked after every event, and the
 * second must decide exactly what the first did.
 */
static int run_one(uint64_t seed, kerf_check_tamper_fn tamper, void *ctx,
		   struct kerf_check_result *res, struct kerf_err *err)
{
	struct checker a = { .seed = seed, .tamper = tamper, .tamper_ctx = ctx };
	struct checker b = { .seed = seed, .tamper = tamper, .tamper_ctx = ctx };
	uint64_t ha = 0, hb = 0, na = 0, nb = 0;
	int64_t horizon_ms = 0;
	struct kerf_rng r;
	int rc;

	kerf_rng_seed(&r, seed ^ 0x7e57a27u);
	b.nr_restarts = (int)between(&r, 1, 3);
	rc = simulate(seed, &a, res, &ha, &na, &horizon_ms, err);
	for (int i = 0; i < b.nr_restarts; i++)
		b.restart_at[i] = between(&r, 0, horizon_ms);
	/* in time order */
	for (int i = 1; i < b.nr_restarts; i++)
		for (int j = i; j > 0 && b.restart_at[j] < b.restart_at[j - 1]; j--) {
			int64_t t = b.restart_at[j];

			b.restart_at[j] = b.restart_at[j - 1];
			b.restart_at[j - 1] = t;
		}
	if (rc == 0)
		rc = simulate(seed, &b, res, &hb, &nb, &horizon_ms, err);
	res->runs++;
	record(res, &a, seed);
	record(res, &b, seed);
	if (rc == 0 && !a.violations && !b.violations && (ha != hb || na != nb)) {
		if (res->mismatches++ == 0) {
			res->first_mismatch_seed = seed;
			snprintf(res->first_mismatch, sizeof(res->first_mismatch),
				 "seed %" PRIu64 ": %" PRIu64 " decisions uninterrupted, %" PRIu64 " with %d restarts, streams differ",
				 seed, na, nb, b.nr_restarts);
		}
	}
	checker_release(&a);
	checker_release(&b);
	return rc;
}

int kerf_check_status(const struct kerf_check_result *r)
{
	return r->violations || r->mismatches ? 3 : 0;
}

int kerf_check_run(uint64_t first, uint32_t runs, struct kerf_check_result *r,
		   struct kerf_err *err)
{
	return kerf_check_run_tampered(first, runs, NULL, NULL, r, err);
}

int kerf_check_run_tampered(uint64_t first, uint32_t runs,
			    kerf_check_tamper_fn tamper, void *ctx,
			    struct kerf_check_result *r, struct kerf_err *err)
{
	for (uint32_t i = 0; i < runs; i++) {
		int rc = run_one(first + i, tamper, ctx, r, err);

		if (rc < 0)
			return rc;
	}
	return 0;
}
