#include "sim/timesim.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "core/idle.h"
#include "core/preempt.h"
#include "sim/entitlement.h"

enum { DEFAULT_CYCLE_MS = 10 * 1000 };

static void stats_release(struct kerf_ts_tenant_stats *s)
{
	free(s->waits_ms);
}

static int stats_wait(struct kerf_ts_tenant_stats *s, int64_t wait_ms)
{
	int rc = KERF_GROW(s->waits_ms, s->alloc_waits, s->nr_waits + 1);

	if (rc < 0)
		return rc;
	s->waits_ms[s->nr_waits++] = wait_ms;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int64_t kerf_ts_wait_pct(const struct kerf_ts_tenant_stats *s, int p)
{
	int64_t *v;
	size_t k;
	int64_t r;

	if (s->nr_waits == 0)
		return -1;
	v = malloc(s->nr_waits * sizeof(*v));
	if (!v)
		return -1;
	memcpy(v, s->waits_ms, s->nr_waits * sizeof(*v));
	qsort(v, s->nr_waits, sizeof(*v), cmp_i64);
	/* nearest rank */
	k = (size_t)((p * (int64_t)s->nr_waits + 99) / 100);
	r = v[k ? k - 1 : 0];
	free(v);
	return r;
}

/* A draw with mean m: m itself, or exponential. */
static int64_t draw(struct kerf_rng *rng, int64_t mean, enum kerf_scn_dist d)
{
	double u;

	if (d == KERF_DIST_FIXED || mean <= 0)
		return mean;
	/* (0, 1]: never log(0) */
	u = (double)(kerf_rng_next(rng) >> 11) * 0x1.0p-53;
	u = 1.0 - u;
	return (int64_t)llround(-log(u) * (double)mean);
}

static int push(struct kerf_timesim *ts, int64_t at, enum kerf_ev_kind kind,
		uint32_t a, uint32_t b, uint64_t gen)
{
	return kerf_evq_push(&ts->q, (struct kerf_event){
		.at_ms = at, .kind = kind, .a = a, .b = b, .gen = gen,
	});
}

/* Figures per tenant slot: the tree may grow during a run. */
static int ensure_tenant_stats(struct kerf_timesim *ts)
{
	size_t n = ts->st.tenants.nr, alloc = ts->nr_tenant_stats;
	int64_t *fair;

	if (n <= ts->nr_tenant_stats)
		return 0;
	if (KERF_GROW_ZERO(ts->tenant, alloc, n) < 0)
		return -KERF_ENOMEM;
	fair = calloc(3 * alloc, sizeof(*fair));
	if (!fair)
		return -KERF_ENOMEM;
	free(ts->fair);
	ts->fair = fair;
	ts->nr_tenant_stats = alloc;
	return 0;
}

/* The nodes as they are at the start, in rank order, for node events. */
static int save_node_specs(struct kerf_timesim *ts)
{
	const struct kerf_cluster *c = &ts->st.cluster;

	ts->node_specs = calloc(c->nr_nodes ? c->nr_nodes : 1, sizeof(*ts->node_specs));
	if (!ts->node_specs)
		return -KERF_ENOMEM;
	for (size_t p = 0; p < c->nr_nodes; p++) {
		struct kerf_node_spec *s = &ts->node_specs[p];
		size_t len;
		char *name;

		kerf_cluster_node_spec(c, c->order[p], s);
		s->mig_layout = NULL;   /* borrowed from the node: not kept */
		len = strlen(s->name);
		name = malloc(len + 1);
		if (!name)
			return -KERF_ENOMEM;
		memcpy(name, s->name, len + 1);
		s->name = name;
		ts->nr_node_specs++;
	}
	return 0;
}

static int init_with_state(struct kerf_timesim *ts,
			   const struct kerf_scenario *sc, struct kerf_err *err);

int kerf_timesim_init(struct kerf_timesim *ts, const struct kerf_scenario *sc,
		      struct kerf_err *err)
{
	int rc;

	memset(ts, 0, sizeof(*ts));
	rc = kerf_scenario_build(sc, &ts->st, err);
	if (rc < 0)
		return rc;
	return init_with_state(ts, sc, err);
}

int kerf_timesim_init_state(struct kerf_timesim *ts,
			    const struct kerf_scenario *sc,
			    struct kerf_state *st, struct kerf_err *err)
{
	memset(ts, 0, sizeof(*ts));
	ts->st = *st;
	memset(st, 0, sizeof(*st));
	return init_with_state(ts, sc, err);
}

/* The policy and scheduler for the state's cluster. */
static int build_policy(struct kerf_timesim *ts, struct kerf_err *err)
{
	const struct kerf_scenario *sc = ts->sc;
	int rc = kerf_policy_build(&ts->pol, sc->policy[0] ? sc->policy : KERF_POLICY_DEFAULT,
				   &(struct kerf_policy_args){ .cluster = &ts->st.cluster,
							       .seed = sc->seed },
				   err);

	if (rc < 0)
		return rc;
	kerf_sched_init(&ts->sched, &ts->pol);
	return 0;
}

static int init_with_state(struct kerf_timesim *ts,
			   const struct kerf_scenario *sc, struct kerf_err *err)
{
	size_t ng = sc->nr_generators;
	int rc = 0;

	ts->sc = sc;
	kerf_evq_init(&ts->q);
	kerf_map_init(&ts->by_id, false);
	kerf_decisions_init(&ts->dec);
	ts->nr_wl = 1;   /* handle 0 is never used */
	rc = build_policy(ts, err);
	if (rc < 0) {
		kerf_state_release(&ts->st);
		return rc;
	}
	ts->horizon_ms = sc->horizon_ms > 0 ? sc->horizon_ms : 24 * 3600 * 1000LL;
	ts->cycle_ms = sc->cycle_ms > 0 ? sc->cycle_ms : DEFAULT_CYCLE_MS;
	ts->share_bucket_ms = ts->horizon_ms / KERF_TS_SHARE_BUCKETS + 1;
	ts->gen_rng = calloc(ng ? ng : 1, sizeof(*ts->gen_rng));
	ts->gen_next = calloc(ng ? ng : 1, sizeof(*ts->gen_next));
	ts->gen_tenant = calloc(ng ? ng : 1, sizeof(*ts->gen_tenant));
	ts->gen_class = calloc(ng ? ng : 1, sizeof(*ts->gen_class));
	ts->cls = calloc(KERF_MAX_CLASSES, sizeof(*ts->cls));
	ts->gpu_capacity_milli = kerf_cluster_gpu_milli_capacity(&ts->st.cluster);
	if (!ts->gen_rng || !ts->gen_next || !ts->gen_tenant || !ts->gen_class ||
	    !ts->cls || ensure_tenant_stats(ts) < 0 || save_node_specs(ts) < 0) {
		kerf_timesim_release(ts);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	for (size_t g = 0; g < ng; g++) {
		const struct kerf_scn_generator *gen = &sc->generators[g];

		ts->gen_tenant[g] = kerf_tenants_find(&ts->st.tenants, gen->tenant);
		ts->gen_class[g] = kerf_classes_find(&ts->st.classes, gen->class_name);
		if (ts->gen_tenant[g] < 0 || ts->gen_class[g] < 0) {
			kerf_timesim_release(ts);
			return kerf_err_set(err, -KERF_EINVAL,
					    "workload '%s': unknown tenant or class",
					    gen->name);
		}
		kerf_rng_seed(&ts->gen_rng[g], sc->seed * 1000003u + g + 1);
		if (gen->count > 0 &&
		    push(ts, gen->start_ms, KERF_EV_ARRIVAL, (uint32_t)g, 0, 0) < 0)
			rc = -KERF_ENOMEM;
	}
	for (size_t i = 0; i < sc->nr_arrivals && rc == 0; i++)
		if (sc->arrivals[i].at_ms <= ts->horizon_ms)
			rc = push(ts, sc->arrivals[i].at_ms, KERF_EV_ARRIVAL,
				  (uint32_t)i, 1, 0);
	if (rc == 0)
		rc = push(ts, 0, KERF_EV_CYCLE, 0, 0, 0);
	ts->dirty = true;
	if (rc < 0) {
		kerf_timesim_release(ts);
		return kerf_err_set(err, rc, "out of memory");
	}
	return 0;
}

void kerf_timesim_release(struct kerf_timesim *ts)
{
	if (ts->tenant)
		for (size_t t = 0; t < ts->nr_tenant_stats; t++)
			stats_release(&ts->tenant[t]);
	if (ts->cls)
		for (int c = 0; c < KERF_MAX_CLASSES; c++)
			stats_release(&ts->cls[c]);
	for (size_t i = 0; i < ts->nr_node_specs; i++)
		free((char *)ts->node_specs[i].name);
	free(ts->node_specs);
	free(ts->tenant);
	free(ts->cls);
	free(ts->fair);
	free(ts->gen_rng);
	free(ts->gen_next);
	free(ts->gen_tenant);
	free(ts->gen_class);
	free(ts->wl);
	free(ts->victims);
	free(ts->edits);
	for (size_t i = 0; i < ts->nr_tenant_edits; i++)
		free((char *)ts->tenant_edits[i].spec.name);
	free(ts->tenant_edits);
	kerf_map_release(&ts->by_id);
	kerf_decisions_release(&ts->dec);
	kerf_evq_release(&ts->q);
	if (ts->sched.policy)
		kerf_sched_release(&ts->sched);
	if (ts->pol.name)
		kerf_policy_release(&ts->pol);
	kerf_state_release(&ts->st);
	memset(ts, 0, sizeof(*ts));
}

int kerf_timesim_node_event(struct kerf_timesim *ts, int64_t at_ms,
			    uint32_t node, enum kerf_ts_node_change change)
{
	return push(ts, at_ms, KERF_EV_NODE, node, (uint32_t)change, 0);
}

int kerf_timesim_gpu_event(struct kerf_timesim *ts, int64_t at_ms,
			   uint32_t node, unsigned gpu,
			   enum kerf_ts_node_change change)
{
	if (change != KERF_TS_GPU_DOWN && change != KERF_TS_GPU_UP)
		return -KERF_EINVAL;
	return push(ts, at_ms, KERF_EV_NODE, node, (uint32_t)change, gpu);
}

int kerf_timesim_quota_event(struct kerf_timesim *ts, int64_t at_ms,
			     int tenant, const struct kerf_quota *quota)
{
	int rc = KERF_GROW(ts->edits, ts->alloc_edits, ts->nr_edits + 1);

	if (rc < 0)
		return rc;
	ts->edits[ts->nr_edits] = (struct kerf_ts_quota_edit){
		.at_ms = at_ms, .tenant = tenant, .quota = *quota,
	};
	return push(ts, at_ms, KERF_EV_QUOTA, (uint32_t)ts->nr_edits++, 0, 0);
}

int kerf_timesim_tenant_event(struct kerf_timesim *ts, int64_t at_ms,
			      const struct kerf_tenant_spec *spec, bool remove)
{
	struct kerf_ts_tenant_edit *e;
	size_t len = strlen(spec->name);
	char *name;
	int rc = KERF_GROW(ts->tenant_edits, ts->alloc_tenant_edits,
			   ts->nr_tenant_edits + 1);

	if (rc < 0)
		return rc;
	name = malloc(len + 1);
	if (!name)
		return -KERF_ENOMEM;
	memcpy(name, spec->name, len + 1);
	e = &ts->tenant_edits[ts->nr_tenant_edits];
	e->spec = *spec;
	e->spec.name = name;
	e->remove = remove;
	return push(ts, at_ms, KERF_EV_TENANT, (uint32_t)ts->nr_tenant_edits++, 0, 0);
}

/* --- the simulator's workloads --------------------------------------- */

/* A new handle for core workload id, key; 0 on OOM. */
static uint32_t new_handle(struct kerf_timesim *ts, uint32_t id, const char *key)
{
	struct kerf_ts_workload *x;
	uint32_t h;

	if (kerf_map_reserve(&ts->by_id, 1) < 0)
		return 0;
	if (ts->free_wl) {
		h = ts->free_wl;
		ts->free_wl = ts->wl[h].next_free;
	} else {
		if (ts->nr_wl >= UINT32_MAX ||
		    KERF_GROW(ts->wl, ts->alloc_wl, ts->nr_wl + 1) < 0)
			return 0;
		h = (uint32_t)ts->nr_wl++;
	}
	x = &ts->wl[h];
	memset(x, 0, sizeof(*x));
	snprintf(x->key, sizeof(x->key), "%s", key);
	x->id = id;
	x->first_start_ms = -1;
	ts->live_wl++;
	if (kerf_map_put_u64(&ts->by_id, id, (void *)(uintptr_t)h) < 0)
		return 0;   /* cannot happen: reserved */
	return h;
}

static void free_handle(struct kerf_timesim *ts, uint32_t h)
{
	kerf_map_del_u64(&ts->by_id, ts->wl[h].id);
	ts->wl[h].id = 0;
	ts->wl[h].next_free = ts->free_wl;
	ts->free_wl = h;
	ts->live_wl--;
}

/* The handle of core workload id, or 0. */
static uint32_t handle_of(const struct kerf_timesim *ts, uint32_t id)
{
	return (uint32_t)(uintptr_t)kerf_map_get_u64(&ts->by_id, id);
}

static void drop_victim(struct kerf_timesim *ts, uint32_t h)
{
	for (size_t i = 0; i < ts->nr_victims; i++)
		if (ts->victims[i] == h) {
			ts->victims[i] = ts->victims[--ts->nr_victims];
			return;
		}
}

/* GPU quota in use by a tenant's subtree, all models. */
static int64_t gpu_in_use(const struct kerf_tenants *tt, int t)
{
	int64_t g = 0;

	for (int i = KERF_RES_GPU0; i < tt->nr_res; i++)
		g += tt->t[t].usage.v[i];
	return g;
}

/*
 * What every tenant is owed now, by what its workloads run or wait for:
 * the tenants' own counters, so the cost is per tenant, not per workload.
 */
static void entitlements(struct kerf_timesim *ts)
{
	const struct kerf_tenants *tt = &ts->st.tenants;
	int64_t *demand = ts->fair, *owed = ts->fair + ts->nr_tenant_stats;

	for (size_t t = 0; t < tt->nr; t++) {
		const struct kerf_tenant *x = &tt->t[t];

		demand[t] = x->nr_children || x->removed
				    ? 0
				    : x->pending_gpu_milli + gpu_in_use(tt, (int)t);
	}
	kerf_entitlement(tt, ts->gpu_capacity_milli, demand, owed,
			 ts->fair + 2 * ts->nr_tenant_stats);
}

/* Integrate usage and entitlement from the last event up to now. */
static void advance(struct kerf_timesim *ts, int64_t to_ms)
{
	int64_t from = ts->now_ms;
	const int64_t *owed = ts->fair + ts->nr_tenant_stats;

	if (from < to_ms)
		entitlements(ts);

	while (from < to_ms) {
		int64_t bucket = from / ts->share_bucket_ms;
		int64_t end = (bucket + 1) * ts->share_bucket_ms;
		int64_t dt;

		if (end > to_ms)
			end = to_ms;
		dt = end - from;
		for (size_t t = 0; t < ts->st.tenants.nr; t++) {
			int64_t g = gpu_in_use(&ts->st.tenants, (int)t);

			if (owed[t] > 0) {
				ts->tenant[t].owed_milli_ms += (__int128)owed[t] * dt;
				if (bucket < KERF_TS_SHARE_BUCKETS)
					ts->tenant[t].owed_share_milli_ms[bucket] +=
						owed[t] * dt / 1000;
			}
			if (g == 0)
				continue;
			ts->tenant[t].gpu_milli_ms += (__int128)g * dt;
			if (bucket < KERF_TS_SHARE_BUCKETS)
				ts->tenant[t].share_milli_ms[bucket] += g * dt / 1000;
		}
		from = end;
	}
	ts->now_ms = to_ms;
}

/* Submit w under key; its simulator record, or negative. */
static int submit(struct kerf_timesim *ts, const char *key,
		  const struct kerf_workload *w, struct kerf_err *err)
{
	int id = kerf_state_submit(&ts->st, key, w, ts->now_ms, err);
	uint32_t h;

	if (id < 0)
		return id;
	h = new_handle(ts, (uint32_t)id, key);
	if (!h)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	ts->wl[h].tenant = w->tenant;
	ts->wl[h].class_idx = w->class_idx;
	ts->wl[h].submit_ms = ts->now_ms;
	ts->tenant[w->tenant].submitted++;
	ts->cls[w->class_idx].submitted++;
	return (int)h;
}

/* A workload of a replayed trace arrives. */
static int trace_arrival(struct kerf_timesim *ts, uint32_t i,
			 struct kerf_err *err)
{
	const struct kerf_scn_arrival *a = &ts->sc->arrivals[i];
	struct kerf_workload w = {
		.tenant = a->tenant,
		.class_idx = a->class_idx,
		.nr_sets = 1,
		.min_count = a->set.count,
	};
	int h;

	w.sets[0] = a->set;
	h = submit(ts, a->name, &w, err);
	if (h < 0)
		return h;
	ts->wl[h].duration_ms = a->duration_ms > 0 ? a->duration_ms : 1;
	ts->wl[h].generator = UINT32_MAX;
	return 0;
}

static int arrival(struct kerf_timesim *ts, uint32_t g, struct kerf_err *err)
{
	const struct kerf_scn_generator *gen = &ts->sc->generators[g];
	struct kerf_workload w = {
		.tenant = ts->gen_tenant[g],
		.class_idx = ts->gen_class[g],
		.nr_sets = 1,
		.min_count = gen->min_count ? gen->min_count : gen->set.count,
		.topology = gen->topology,
	};
	struct kerf_ts_workload *x;
	uint32_t i = ts->gen_next[g]++;
	char key[KERF_WORKLOAD_KEY_MAX + 1];
	int h = 0;

	snprintf(key, sizeof(key), "%.200s-%u", gen->name, i);
	w.sets[0] = gen->set;
	/* the tenant may have come late, or gone: found by name */
	w.tenant = ts->gen_tenant[g] = kerf_tenants_find(&ts->st.tenants, gen->tenant);
	if (w.tenant < 0) {
		ts->nr_arrivals_dropped++;
		goto next;
	}
	h = submit(ts, key, &w, err);
	if (h < 0)
		return h;
	x = &ts->wl[h];
	x->duration_ms = draw(&ts->gen_rng[g], gen->duration_ms, gen->duration);
	if (x->duration_ms < 1)
		x->duration_ms = 1;
	x->generator = g;
	x->checkpoint_every_ms = gen->checkpoint_every_ms;
next:
	if (ts->gen_next[g] < gen->count) {
		int64_t gap = draw(&ts->gen_rng[g], gen->interarrival_ms, gen->arrival);

		if (push(ts, ts->now_ms + gap, KERF_EV_ARRIVAL, g, 0, 0) < 0)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	return 0;
}

/* A workload the cycle admitted starts its run now. */
static int started(struct kerf_timesim *ts, uint32_t h, struct kerf_err *err)
{
	struct kerf_ts_workload *x = &ts->wl[h];

	x->token = ++ts->next_token;
	x->running = true;
	x->deadline_ms = 0;
	if (!x->waited) {
		int64_t wait = ts->now_ms - x->submit_ms;

		x->waited = true;
		x->first_start_ms = ts->now_ms;
		if (!ts->no_waits &&
		    (stats_wait(&ts->tenant[x->tenant], wait) < 0 ||
		     stats_wait(&ts->cls[x->class_idx], wait) < 0))
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	ts->tenant[x->tenant].admitted++;
	ts->cls[x->class_idx].admitted++;
	x->run_start_ms = ts->now_ms;
	/* its pods run: the core counts its work from now */
	if (kerf_state_started(&ts->st, x->id, ts->now_ms, err) < 0)
		return -KERF_EINVAL;
	/* how busy it keeps its GPUs; idle work is due for reclamation */
	if (x->generator != UINT32_MAX) {
		const struct kerf_scn_generator *gen = &ts->sc->generators[x->generator];
		const struct kerf_idle_policy *p = kerf_idle_policy_of(&ts->st, x->tenant);

		kerf_idle_sample(&ts->st, x->id, gen->utilisation_pct, ts->now_ms);
		if (p->action != KERF_IDLE_NONE && gen->utilisation_pct < p->below_pct &&
		    push(ts, ts->now_ms + p->after_ms, KERF_EV_TIMER, h, 0, 0) < 0)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	if (push(ts, ts->now_ms + x->duration_ms - x->done_ms, KERF_EV_FINISH,
		 h, 0, x->token) < 0)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	return 0;
}

/* The last periodic checkpoint of x's current run at or before now. */
static int64_t last_periodic(const struct kerf_ts_workload *x, int64_t now)
{
	if (x->checkpoint_every_ms <= 0 || now < x->run_start_ms)
		return x->run_start_ms;
	return x->run_start_ms + (now - x->run_start_ms) / x->checkpoint_every_ms *
					 x->checkpoint_every_ms;
}

/*
 * x leaves its run at now having saved work up to saved_ms: the work it
 * keeps, and (preempted) the GPU time it loses.
 */
static void account_leave(struct kerf_timesim *ts, struct kerf_ts_workload *x,
			  int64_t saved_ms, enum kerf_evict_reason reason)
{
	int64_t since = saved_ms > x->run_start_ms ? saved_ms : x->run_start_ms;

	if (saved_ms > x->run_start_ms)
		x->done_ms += saved_ms - x->run_start_ms;
	if (x->done_ms > x->duration_ms - 1)
		x->done_ms = x->duration_ms - 1;
	x->running = false;
	x->deadline_ms = 0;
	switch (reason) {
	case KERF_EVICT_IDLE:
		ts->tenant[x->tenant].idle_reclaimed++;
		ts->cls[x->class_idx].idle_reclaimed++;
		break;
	case KERF_EVICT_PREEMPTED:
		ts->tenant[x->tenant].preempted++;
		ts->cls[x->class_idx].preempted++;
		if (ts->now_ms > since) {
			__int128 lost = (__int128)(ts->now_ms - since) * x->gpu_milli;

			ts->tenant[x->tenant].lost_gpu_milli_ms += lost;
			ts->cls[x->class_idx].lost_gpu_milli_ms += lost;
		}
		break;
	default:
		ts->tenant[x->tenant].evicted++;
		ts->cls[x->class_idx].evicted++;
		break;
	}
}

/* A finished workload leaves the core too (unless tests keep it). */
static int forget(struct kerf_timesim *ts, uint32_t h, struct kerf_err *err)
{
	int rc = 0;

	if (!ts->keep_finished) {
		rc = kerf_state_forget(&ts->st, ts->wl[h].id, ts->now_ms, &ts->dec, err);
		ts->nr_forgotten += rc == 0;
	}
	drop_victim(ts, h);
	free_handle(ts, h);
	return rc;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = mix(h, (unsigned char)*s);
	return mix(h, 0);
}

/*
 * The decision as the world sees it (keys, node names, devices, times),
 * folded into the run's hash: a restarted run must give the same stream.
 */
static void hash_decision(struct kerf_timesim *ts, const struct kerf_decision *d,
			  uint32_t h)
{
	const struct kerf_workload *w = d->workload
		? kerf_state_find((const struct kerf_state *)&ts->st, d->workload) : NULL;
	uint64_t x = ts->decision_hash;

	x = mix(x, d->kind);
	x = mix(x, d->reason);
	x = mix_str(x, h ? ts->wl[h].key : w ? w->key : "");
	x = mix(x, d->pod);
	x = mix(x, d->set);
	x = mix(x, (uint64_t)d->at_ms);
	x = mix(x, d->requeued);
	if (d->kind == KERF_DECIDE_BIND || d->kind == KERF_DECIDE_MIG) {
		x = mix_str(x, ts->st.cluster.nodes[d->b.node].name);
		x = mix(x, d->b.gpus);
		x = mix(x, d->b.mig_start);
		x = mix(x, (uint64_t)d->value);
		x = mix(x, d->share);
	}
	if (d->kind == KERF_DECIDE_PENDING && w)
		x = mix_str(x, w->pending_text);
	if ((d->kind == KERF_DECIDE_PREEMPT || d->kind == KERF_DECIDE_CANCEL) &&
	    d->other) {
		uint32_t o = handle_of(ts, d->other);

		x = mix_str(x, o ? ts->wl[o].key : "?");
	}
	ts->decision_hash = x;
	ts->nr_decisions++;
	if (ts->decision_log)
		fprintf(ts->decision_log, "%" PRId64 " %s %s pod=%u node=%s gpus=%x start=%u value=%d at=%" PRId64 " req=%d reason=%u other=%u\n",
			ts->now_ms, kerf_decision_kind_name((enum kerf_decision_kind)d->kind),
			h ? ts->wl[h].key : w ? w->key : "-", d->pod,
			d->kind == KERF_DECIDE_BIND || d->kind == KERF_DECIDE_MIG
				? ts->st.cluster.nodes[d->b.node].name : "-",
			d->b.gpus, d->b.mig_start, d->value, d->at_ms, d->requeued,
			d->reason, d->other);
	if (ts->decision_log && d->kind == KERF_DECIDE_PENDING && w)
		fprintf(ts->decision_log, "  reason: %s\n", w->pending_text);
}

/* Carry out what the core decided (ts->dec), then forget the list. */
static int consume(struct kerf_timesim *ts, struct kerf_err *err)
{
	int rc = 0;

	for (size_t i = 0; i < ts->dec.nr && rc == 0; i++) {
		const struct kerf_decision d = ts->dec.d[i];
		uint32_t h = d.workload ? handle_of(ts, d.workload) : 0;
		struct kerf_ts_workload *x = h ? &ts->wl[h] : NULL;

		hash_decision(ts, &d, h);
		switch ((enum kerf_decision_kind)d.kind) {
		case KERF_DECIDE_BIND:
			ts->nr_binds++;
			if (!x)
				break;
			if (d.pod == 0)
				x->gpu_milli = 0;
			x->gpu_milli += (int64_t)d.value * __builtin_popcount(d.b.gpus);
			/* the last pod of the gang: the run starts */
			if (i + 1 == ts->dec.nr || ts->dec.d[i + 1].kind != KERF_DECIDE_BIND ||
			    ts->dec.d[i + 1].workload != d.workload)
				rc = started(ts, h, err);
			break;
		case KERF_DECIDE_PREEMPT:
			if (!x)
				break;
			x->deadline_ms = d.at_ms;
			if (KERF_GROW(ts->victims, ts->alloc_victims, ts->nr_victims + 1) < 0)
				return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
			ts->victims[ts->nr_victims++] = h;
			if (push(ts, d.at_ms, KERF_EV_DEADLINE, h, 0, x->token) < 0)
				return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
			/* a workload that checkpoints answers before its deadline */
			if (x->checkpoint_every_ms > 0 &&
			    ts->now_ms + KERF_TS_CHECKPOINT_MS < d.at_ms &&
			    push(ts, ts->now_ms + KERF_TS_CHECKPOINT_MS, KERF_EV_ACK, h, 0,
				 x->token) < 0)
				return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
			break;
		case KERF_DECIDE_CANCEL:
			if (x) {
				x->deadline_ms = 0;
				drop_victim(ts, h);
			}
			break;
		case KERF_DECIDE_EVICT:
			if (!x)
				break;
			drop_victim(ts, h);
			if (!d.requeued)
				rc = forget(ts, h, err);
			break;
		case KERF_DECIDE_PENDING:
			ts->nr_pending_told++;
			break;
		case KERF_DECIDE_MIG:
			ts->nr_mig_steps++;
			break;
		case KERF_DECIDE_NOTICE:
			break;
		}
	}
	kerf_decisions_clear(&ts->dec);
	return rc;
}

/*
 * Victims whose deadline has come leave with the work of their last
 * periodic checkpoint (reported to the core first).  Run before every
 * cycle and at every deadline, so the order of events at one instant
 * does not matter.
 */
static int expire_due(struct kerf_timesim *ts, struct kerf_err *err)
{
	for (size_t i = 0; i < ts->nr_victims;) {
		uint32_t h = ts->victims[i];
		struct kerf_ts_workload *x = &ts->wl[h];
		int64_t saved;
		int rc;

		if (x->deadline_ms == 0 || x->deadline_ms > ts->now_ms) {
			i++;
			continue;
		}
		saved = last_periodic(x, ts->now_ms);
		rc = kerf_state_checkpointed(&ts->st, x->id, saved, ts->now_ms, err);
		if (rc == 0)
			rc = kerf_preempt_expire_one(&ts->st, x->id, ts->now_ms,
						     &ts->dec, err);
		if (rc < 0)
			return rc;
		/* the record says why it left: idle reclaim or preemption */
		account_leave(ts, x, saved,
			      (enum kerf_evict_reason)ts->dec.d[ts->dec.nr - 1].reason);
		rc = consume(ts, err);
		if (rc < 0)
			return rc;
		i = 0;  /* the list changed */
	}
	return 0;
}

static int handshake(struct kerf_timesim *ts, const struct kerf_event *e,
		     struct kerf_err *err)
{
	struct kerf_ts_workload *x = &ts->wl[e->a];
	int rc;

	if (e->kind == KERF_EV_DEADLINE)
		return expire_due(ts, err);
	/* an acknowledgement of a run that ended, or of a cancelled request */
	if (!x->id || !x->running || x->deadline_ms == 0 || x->token != e->gen)
		return 0;
	rc = kerf_preempt_ack(&ts->st, x->id, ts->now_ms, &ts->dec, err);
	if (rc < 0)
		return rc;
	account_leave(ts, x, ts->now_ms,
		      (enum kerf_evict_reason)ts->dec.d[ts->dec.nr - 1].reason);
	return consume(ts, err);
}

static int cycle(struct kerf_timesim *ts, struct kerf_err *err)
{
	int rc = 0;

	/*
	 * With no arrival, departure, node or quota change since the last
	 * cycle, this one would decide exactly what the last one did: nothing.
	 */
	if (!ts->dirty) {
		ts->nr_cycles_skipped++;
		goto next;
	}
	ts->dirty = false;
	rc = expire_due(ts, err);
	if (rc < 0)
		return rc;
	rc = kerf_cycle_run(&ts->sched, &ts->st, ts->now_ms, &ts->dec,
			    &ts->last_cycle, err);
	ts->nr_cycles++;
	/* what was decided before an error is real: carry it out */
	if (consume(ts, err) < 0 || rc < 0)
		return rc < 0 ? rc : -KERF_ENOMEM;
next:
	if (ts->now_ms + ts->cycle_ms <= ts->horizon_ms &&
	    push(ts, ts->now_ms + ts->cycle_ms, KERF_EV_CYCLE, 0, 0, 0) < 0)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	return 0;
}

/* EVICTs of a node event: each leaves with its last periodic checkpoint. */
static int node_evictions(struct kerf_timesim *ts, size_t from,
			  struct kerf_err *err)
{
	for (size_t i = from; i < ts->dec.nr; i++) {
		const struct kerf_decision *d = &ts->dec.d[i];
		uint32_t h = d->kind == KERF_DECIDE_EVICT ? handle_of(ts, d->workload) : 0;

		if (h)
			account_leave(ts, &ts->wl[h], last_periodic(&ts->wl[h], ts->now_ms),
				      (enum kerf_evict_reason)d->reason);
	}
	return consume(ts, err);
}

/* GPU gpu of the node in slot out of service (down) or back. */
static int gpu_event(struct kerf_timesim *ts, int slot, uint64_t gpu, bool down,
		     struct kerf_err *err)
{
	struct kerf_node_spec now;

	if (slot < 0 || gpu >= ts->st.cluster.nodes[slot].nr_gpus)
		return 0;
	kerf_cluster_node_spec(&ts->st.cluster, (size_t)slot, &now);
	now.mig_layout = NULL;   /* as the core has them */
	if (down)
		now.gpus_down = (uint16_t)(now.gpus_down | 1u << gpu);
	else
		now.gpus_down = (uint16_t)(now.gpus_down & ~(1u << gpu));
	return kerf_state_node_upsert(&ts->st, &now, ts->now_ms, &ts->dec, err);
}

static int node_event(struct kerf_timesim *ts, uint32_t node,
		      enum kerf_ts_node_change change, uint64_t gpu,
		      struct kerf_err *err)
{
	const struct kerf_node_spec *spec;
	int slot, rc = 0;

	if (node >= ts->nr_node_specs)
		return 0;
	spec = &ts->node_specs[node];
	slot = kerf_cluster_find_node(&ts->st.cluster, spec->name);
	switch (change) {
	case KERF_TS_NODE_DOWN:
		if (slot >= 0)
			rc = kerf_state_node_lost(&ts->st, (uint32_t)slot, ts->now_ms,
						  &ts->dec, err);
		break;
	case KERF_TS_NODE_REMOVE:
		if (slot >= 0) {
			rc = kerf_state_node_remove(&ts->st, (uint32_t)slot, ts->now_ms,
						    &ts->dec, err);
			ts->nr_node_removals += rc == 0;
		}
		break;
	case KERF_TS_GPU_DOWN:
	case KERF_TS_GPU_UP:
		rc = gpu_event(ts, slot, gpu, change == KERF_TS_GPU_DOWN, err);
		break;
	case KERF_TS_NODE_UP:
		if (slot >= 0) {
			struct kerf_node_spec now;

			kerf_cluster_node_spec(&ts->st.cluster, (size_t)slot, &now);
			now.cordoned = false;
			now.mig_layout = NULL;   /* as the core has them */
			rc = kerf_state_node_upsert(&ts->st, &now, ts->now_ms, &ts->dec, err);
		} else {
			rc = kerf_state_node_upsert(&ts->st, spec, ts->now_ms, &ts->dec, err);
		}
		break;
	}
	if (rc < 0)
		return rc;
	ts->gpu_capacity_milli = kerf_cluster_gpu_milli_capacity(&ts->st.cluster);
	return node_evictions(ts, 0, err);
}

static int quota_edit(struct kerf_timesim *ts, const struct kerf_ts_quota_edit *e,
		      struct kerf_err *err)
{
	struct kerf_tenant_spec spec;
	struct kerf_err why = { 0 };

	if (e->tenant <= KERF_TENANT_ROOT || (size_t)e->tenant >= ts->st.tenants.nr)
		return kerf_err_set(err, -KERF_EINVAL, "quota edit of an unknown tenant");
	kerf_state_tenant_spec(&ts->st, e->tenant, &spec);
	spec.quota = e->quota;
	/* an edit the API would refuse (quotas that do not nest) is refused */
	if (kerf_state_tenant_update(&ts->st, e->tenant, &spec, &why) < 0)
		ts->nr_edits_refused++;
	return 0;
}

static int tenant_edit(struct kerf_timesim *ts, const struct kerf_ts_tenant_edit *e,
		       struct kerf_err *err)
{
	int t = kerf_tenants_find(&ts->st.tenants, e->spec.name);
	struct kerf_err why = { 0 };

	(void)err;
	if (e->remove) {
		if (t > 0 && kerf_state_tenant_remove(&ts->st, t, &why) < 0)
			ts->nr_edits_refused++;
		return 0;
	}
	if (t >= 0 || kerf_state_tenant_add(&ts->st, &e->spec, &why) < 0)
		ts->nr_edits_refused++;
	else
		ts->nr_tenants_added++;
	return ensure_tenant_stats(ts) < 0 ? -KERF_ENOMEM : 0;
}

static int finish(struct kerf_timesim *ts, const struct kerf_event *e,
		  struct kerf_err *err)
{
	struct kerf_ts_workload *x = &ts->wl[e->a];
	int rc;

	/* a FINISH of an earlier, evicted run is stale */
	if (!x->id || !x->running || x->token != e->gen)
		return 0;
	ts->tenant[x->tenant].finished++;
	ts->cls[x->class_idx].finished++;
	x->running = false;
	rc = kerf_state_finish(&ts->st, x->id, ts->now_ms, err);
	if (rc < 0)
		return rc;
	return forget(ts, e->a, err) < 0 ? -KERF_EINVAL : consume(ts, err);
}

static int step(struct kerf_timesim *ts, const struct kerf_event *e,
		struct kerf_err *err)
{
	if (e->kind != KERF_EV_CYCLE)
		ts->dirty = true;
	switch (e->kind) {
	case KERF_EV_ARRIVAL:
		return e->b ? trace_arrival(ts, e->a, err) : arrival(ts, e->a, err);
	case KERF_EV_CYCLE:
		return cycle(ts, err);
	case KERF_EV_FINISH:
		return finish(ts, e, err);
	case KERF_EV_NODE:
		return node_event(ts, e->a, (enum kerf_ts_node_change)e->b, e->gen, err);
	case KERF_EV_ACK:
	case KERF_EV_DEADLINE:
		return handshake(ts, e, err);
	case KERF_EV_TIMER:
		return 0;   /* only wakes the next cycle */
	case KERF_EV_QUOTA:
		return quota_edit(ts, &ts->edits[e->a], err);
	case KERF_EV_TENANT:
		return tenant_edit(ts, &ts->tenant_edits[e->a], err);
	}
	return 0;
}

int kerf_timesim_rebind(struct kerf_timesim *ts, struct kerf_err *err)
{
	int rc = build_policy(ts, err);

	if (rc < 0)
		return rc;
	kerf_map_release(&ts->by_id);
	kerf_map_init(&ts->by_id, false);
	if (kerf_map_reserve(&ts->by_id, ts->live_wl) < 0)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t h = 1; h < ts->nr_wl; h++) {
		struct kerf_ts_workload *x = &ts->wl[h];
		const struct kerf_workload *w;

		if (!x->id)
			continue;
		w = kerf_state_find_key((const struct kerf_state *)&ts->st, x->key);
		if (!w)
			return kerf_err_set(err, -KERF_ENOTFOUND,
					    "restart: workload '%s' not found again", x->key);
		x->id = w->id;
		if (kerf_map_put_u64(&ts->by_id, w->id, (void *)(uintptr_t)h) < 0)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	return 0;
}

uint64_t kerf_timesim_submitted(const struct kerf_timesim *ts)
{
	uint64_t n = 0;

	for (size_t t = 0; t < ts->nr_tenant_stats; t++)
		n += ts->tenant[t].submitted;
	return n;
}

int kerf_timesim_run(struct kerf_timesim *ts, struct kerf_err *err)
{
	struct kerf_event e;

	while (kerf_evq_pop(&ts->q, &e)) {
		int rc;

		if (e.at_ms > ts->horizon_ms)
			break;
		advance(ts, e.at_ms);
		rc = step(ts, &e, err);
		if (rc < 0)
			return rc;
		if (ensure_tenant_stats(ts) < 0)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		ts->nr_events++;
		if (ts->hook && (rc = ts->hook(ts->hook_ctx, ts, &e)) != 0)
			return rc;
	}
	advance(ts, ts->horizon_ms);
	return 0;
}
