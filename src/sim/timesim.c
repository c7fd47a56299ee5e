#include "sim/timesim.h"

#include "core/idle.h"
#include "core/preempt.h"
#include "sim/entitlement.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DEFAULT_CYCLE_MS = 10 * 1000 };

static void stats_release(struct kerf_ts_tenant_stats *s)
{
	free(s->waits_ms);
}

static int stats_wait(struct kerf_ts_tenant_stats *s, int64_t wait_ms)
{
	if (s->nr_waits == s->alloc_waits) {
		size_t want = s->alloc_waits ? s->alloc_waits * 2 : 64;
		int64_t *grown = realloc(s->waits_ms, want * sizeof(*grown));

		if (!grown)
			return -KERF_ENOMEM;
		s->waits_ms = grown;
		s->alloc_waits = want;
	}
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

static int init_with_state(struct kerf_timesim *ts,
			   const struct kerf_scenario *sc, struct kerf_err *err)
{
	size_t ng = sc->nr_generators;
	int rc = 0;

	ts->sc = sc;
	kerf_evq_init(&ts->q);
	rc = kerf_policy_build(&ts->pol, sc->policy[0] ? sc->policy : KERF_POLICY_DEFAULT,
			       &(struct kerf_policy_args){ .cluster = &ts->st.cluster,
							   .seed = sc->seed },
			       err);
	if (rc < 0) {
		kerf_state_release(&ts->st);
		return rc;
	}
	kerf_sched_init(&ts->sched, &ts->pol);
	ts->horizon_ms = sc->horizon_ms > 0 ? sc->horizon_ms : 24 * 3600 * 1000LL;
	ts->cycle_ms = sc->cycle_ms > 0 ? sc->cycle_ms : DEFAULT_CYCLE_MS;
	ts->share_bucket_ms = ts->horizon_ms / KERF_TS_SHARE_BUCKETS + 1;
	ts->gen_rng = calloc(ng ? ng : 1, sizeof(*ts->gen_rng));
	ts->gen_next = calloc(ng ? ng : 1, sizeof(*ts->gen_next));
	ts->gen_tenant = calloc(ng ? ng : 1, sizeof(*ts->gen_tenant));
	ts->gen_class = calloc(ng ? ng : 1, sizeof(*ts->gen_class));
	ts->tenant = calloc(ts->st.tenants.nr, sizeof(*ts->tenant));
	ts->cls = calloc(KERF_MAX_CLASSES, sizeof(*ts->cls));
	ts->fair = calloc(3 * ts->st.tenants.nr, sizeof(*ts->fair));
	ts->gpu_capacity_milli = kerf_cluster_gpu_milli_capacity(&ts->st.cluster);
	if (!ts->gen_rng || !ts->gen_next || !ts->gen_tenant || !ts->gen_class ||
	    !ts->tenant || !ts->cls || !ts->fair) {
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
		for (size_t t = 0; t < ts->st.tenants.nr; t++)
			stats_release(&ts->tenant[t]);
	if (ts->cls)
		for (int c = 0; c < KERF_MAX_CLASSES; c++)
			stats_release(&ts->cls[c]);
	free(ts->tenant);
	free(ts->cls);
	free(ts->fair);
	free(ts->gen_rng);
	free(ts->gen_next);
	free(ts->gen_tenant);
	free(ts->gen_class);
	free(ts->wl);
	free(ts->edits);
	kerf_evq_release(&ts->q);
	if (ts->sched.policy)
		kerf_sched_release(&ts->sched);
	if (ts->pol.name)
		kerf_policy_release(&ts->pol);
	kerf_state_release(&ts->st);
	memset(ts, 0, sizeof(*ts));
}

int kerf_timesim_node_event(struct kerf_timesim *ts, int64_t at_ms,
			    uint32_t node, bool down)
{
	return push(ts, at_ms, KERF_EV_NODE, node, down, 0);
}

int kerf_timesim_quota_event(struct kerf_timesim *ts, int64_t at_ms,
			     int tenant, const struct kerf_quota *quota)
{
	struct kerf_ts_quota_edit *grown =
		realloc(ts->edits, (ts->nr_edits + 1) * sizeof(*grown));

	if (!grown)
		return -KERF_ENOMEM;
	ts->edits = grown;
	ts->edits[ts->nr_edits] = (struct kerf_ts_quota_edit){
		.at_ms = at_ms, .tenant = tenant, .quota = *quota,
	};
	return push(ts, at_ms, KERF_EV_QUOTA, (uint32_t)ts->nr_edits++, 0, 0);
}

static struct kerf_ts_workload *ts_wl(struct kerf_timesim *ts, uint32_t id)
{
	if (id >= ts->alloc_wl) {
		size_t want = ts->alloc_wl ? ts->alloc_wl : 256;
		struct kerf_ts_workload *grown;

		while (want <= id)
			want *= 2;
		grown = realloc(ts->wl, want * sizeof(*grown));
		if (!grown)
			return NULL;
		memset(grown + ts->alloc_wl, 0,
		       (want - ts->alloc_wl) * sizeof(*grown));
		ts->wl = grown;
		ts->alloc_wl = want;
	}
	return &ts->wl[id];
}

/* GPU quota in use by a tenant's subtree, all models. */
static int64_t gpu_in_use(const struct kerf_tenants *tt, int t)
{
	int64_t g = 0;

	for (int i = KERF_RES_GPU0; i < tt->nr_res; i++)
		g += tt->t[t].usage.v[i];
	return g;
}

/* What every tenant is owed now, by what its workloads run or wait for. */
static void entitlements(struct kerf_timesim *ts)
{
	const struct kerf_tenants *tt = &ts->st.tenants;
	int64_t *demand = ts->fair, *owed = ts->fair + tt->nr;

	for (size_t t = 0; t < tt->nr; t++)
		demand[t] = 0;
	for (size_t i = 0; i < ts->st.nr_wl; i++) {
		const struct kerf_workload *w = ts->st.wl[i];
		int64_t g = 0;

		if (w->state == KERF_WL_PENDING) {
			g = kerf_workload_gpu_milli(w);
		} else if (w->state == KERF_WL_RUNNING) {
			for (int r = KERF_RES_GPU0; r < tt->nr_res; r++)
				g += w->charged.v[r];
		}
		demand[w->tenant] += g;
	}
	kerf_entitlement(tt, ts->gpu_capacity_milli, demand, owed,
			 ts->fair + 2 * tt->nr);
}

/* Integrate usage and entitlement from the last event up to now. */
static void advance(struct kerf_timesim *ts, int64_t to_ms)
{
	int64_t from = ts->now_ms;
	const int64_t *owed = ts->fair + ts->st.tenants.nr;

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
	struct kerf_ts_workload *x;
	int id;

	memcpy(w.name, a->name, sizeof(w.name));
	w.sets[0] = a->set;
	id = kerf_state_submit(&ts->st, &w, ts->now_ms, err);
	if (id < 0)
		return id;
	x = ts_wl(ts, (uint32_t)id);
	if (!x)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	x->duration_ms = a->duration_ms > 0 ? a->duration_ms : 1;
	x->generator = UINT32_MAX;
	x->first_start_ms = -1;
	ts->tenant[w.tenant].submitted++;
	ts->cls[w.class_idx].submitted++;
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
	int id;

	snprintf(w.name, sizeof(w.name), "%.40s-%u", gen->name, i);
	w.sets[0] = gen->set;
	id = kerf_state_submit(&ts->st, &w, ts->now_ms, err);
	if (id < 0)
		return id;
	x = ts_wl(ts, (uint32_t)id);
	if (!x)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	x->duration_ms = draw(&ts->gen_rng[g], gen->duration_ms, gen->duration);
	if (x->duration_ms < 1)
		x->duration_ms = 1;
	x->generator = g;
	x->first_start_ms = -1;
	x->checkpoint_every_ms = gen->checkpoint_every_ms;
	ts->tenant[w.tenant].submitted++;
	ts->cls[w.class_idx].submitted++;
	if (ts->gen_next[g] < gen->count) {
		int64_t gap = draw(&ts->gen_rng[g], gen->interarrival_ms, gen->arrival);

		if (push(ts, ts->now_ms + gap, KERF_EV_ARRIVAL, g, 0, 0) < 0)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	return 0;
}

/* After a cycle: start the clock of everything it admitted. */
static int started(struct kerf_timesim *ts, struct kerf_workload *w,
		   struct kerf_err *err)
{
	struct kerf_ts_workload *x = ts_wl(ts, w->id);

	if (!x)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	x->runs++;
	if (!x->waited) {
		int64_t wait = ts->now_ms - w->submit_ms;

		x->waited = true;
		x->first_start_ms = ts->now_ms;
		if (stats_wait(&ts->tenant[w->tenant], wait) < 0 ||
		    stats_wait(&ts->cls[w->class_idx], wait) < 0)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	ts->tenant[w->tenant].admitted++;
	ts->cls[w->class_idx].admitted++;
	x->run_start_ms = ts->now_ms;
	/* the run picks up from its last checkpoint */
	w->last_checkpoint_ms = ts->now_ms;
	/* how busy it keeps its GPUs; idle work is due for reclamation */
	if (x->generator != UINT32_MAX) {
		const struct kerf_scn_generator *gen = &ts->sc->generators[x->generator];
		const struct kerf_idle_policy *p =
			kerf_idle_policy_of(&ts->st, w->tenant);

		kerf_idle_sample(&ts->st, w->id, gen->utilisation_pct, ts->now_ms);
		if (p->action != KERF_IDLE_NONE && gen->utilisation_pct < p->below_pct &&
		    push(ts, ts->now_ms + p->after_ms, KERF_EV_TIMER, w->id, 0, 0) < 0)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	if (push(ts, ts->now_ms + x->duration_ms - x->done_ms, KERF_EV_FINISH,
		 w->id, 0, x->runs) < 0)
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
 * Victims the cycle asked to leave: a workload that checkpoints answers
 * after KERF_TS_CHECKPOINT_MS (if that is before the deadline); every
 * victim gets its deadline.
 */
static int schedule_handshakes(struct kerf_timesim *ts, struct kerf_err *err)
{
	for (size_t i = 0; i < ts->st.nr_wl; i++) {
		struct kerf_workload *w = ts->st.wl[i];
		struct kerf_ts_workload *x;

		if (w->state != KERF_WL_RUNNING || w->preempt_deadline_ms == 0)
			continue;
		x = &ts->wl[w->id];
		if (x->deadline_seen_ms == w->preempt_deadline_ms)
			continue;
		x->deadline_seen_ms = w->preempt_deadline_ms;
		if (push(ts, w->preempt_deadline_ms, KERF_EV_DEADLINE, w->id, 0,
			 x->runs) < 0)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		if (x->checkpoint_every_ms > 0 &&
		    ts->now_ms + KERF_TS_CHECKPOINT_MS < w->preempt_deadline_ms &&
		    push(ts, ts->now_ms + KERF_TS_CHECKPOINT_MS, KERF_EV_ACK, w->id,
			 0, x->runs) < 0)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	return 0;
}

/* w leaves its run at now having saved work up to saved_ms. */
static void account_leave(struct kerf_timesim *ts, struct kerf_workload *w,
			  int64_t saved_ms, bool preempted)
{
	struct kerf_ts_workload *x = &ts->wl[w->id];

	if (w->idle_reclaim) {
		ts->tenant[w->tenant].idle_reclaimed++;
		ts->cls[w->class_idx].idle_reclaimed++;
		preempted = false;
	}
	if (saved_ms > x->run_start_ms)
		x->done_ms += saved_ms - x->run_start_ms;
	if (x->done_ms > x->duration_ms - 1)
		x->done_ms = x->duration_ms - 1;
	w->last_checkpoint_ms = saved_ms;
	if (preempted) {
		ts->tenant[w->tenant].preempted++;
		ts->cls[w->class_idx].preempted++;
	}
}

static int handshake(struct kerf_timesim *ts, const struct kerf_event *e,
		     struct kerf_err *err)
{
	struct kerf_workload *w = kerf_state_find(&ts->st, e->a);
	int64_t lost_before;
	int rc;

	if (!w || w->state != KERF_WL_RUNNING || w->preempt_deadline_ms == 0 ||
	    ts->wl[e->a].runs != e->gen)
		return 0;
	if (e->kind == KERF_EV_ACK) {
		bool idle = w->idle_reclaim;

		lost_before = w->lost_gpu_milli_ms;
		account_leave(ts, w, ts->now_ms, true);
		rc = kerf_preempt_ack(&ts->st, w->id, ts->now_ms, err);
		if (idle)   /* idle work lost nothing of value */
			return rc;
		ts->tenant[w->tenant].lost_gpu_milli_ms += w->lost_gpu_milli_ms - lost_before;
		ts->cls[w->class_idx].lost_gpu_milli_ms += w->lost_gpu_milli_ms - lost_before;
		return rc;
	}
	/* deadline: every victim due now keeps only its periodic checkpoint */
	for (size_t i = 0; i < ts->st.nr_wl; i++) {
		struct kerf_workload *v = ts->st.wl[i];

		if (v->state == KERF_WL_RUNNING && v->preempt_deadline_ms > 0 &&
		    v->preempt_deadline_ms <= ts->now_ms) {
			int64_t before = v->lost_gpu_milli_ms;
			bool idle = v->idle_reclaim;   /* the run's flags end with it */

			account_leave(ts, v, last_periodic(&ts->wl[v->id], ts->now_ms),
				      true);
			rc = kerf_preempt_expire_one(&ts->st, v->id, ts->now_ms, err);
			if (rc < 0)
				return rc;
			if (!idle) {   /* idle work lost nothing of value */
				ts->tenant[v->tenant].lost_gpu_milli_ms +=
					v->lost_gpu_milli_ms - before;
				ts->cls[v->class_idx].lost_gpu_milli_ms +=
					v->lost_gpu_milli_ms - before;
			}
		}
	}
	return 0;
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
	rc = kerf_cycle_run(&ts->sched, &ts->st, ts->now_ms, &ts->last_cycle, err);
	ts->nr_cycles++;
	if (rc < 0)
		return rc;
	/* the workloads this cycle admitted are those started now */
	for (size_t i = 0; i < ts->st.nr_wl && ts->last_cycle.nr_admitted; i++) {
		struct kerf_workload *w = ts->st.wl[i];

		if (w->state != KERF_WL_RUNNING || w->start_ms != ts->now_ms)
			continue;
		rc = started(ts, w, err);
		if (rc < 0)
			return rc;
	}
	rc = schedule_handshakes(ts, err);
	if (rc < 0)
		return rc;
next:
	if (ts->now_ms + ts->cycle_ms <= ts->horizon_ms &&
	    push(ts, ts->now_ms + ts->cycle_ms, KERF_EV_CYCLE, 0, 0, 0) < 0)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	return 0;
}

static int node_event(struct kerf_timesim *ts, uint32_t node, bool down,
		      struct kerf_err *err)
{
	if (node >= ts->st.cluster.nr_nodes)
		return 0;
	kerf_cluster_cordon(&ts->st.cluster, node, down);
	if (!down)
		return 0;
	/* Everything with a pod there loses all its pods and waits again. */
	for (size_t i = 0; i < ts->st.nr_wl; i++) {
		struct kerf_workload *w = ts->st.wl[i];
		bool hit = false;
		int rc;

		if (w->state != KERF_WL_RUNNING)
			continue;
		for (uint32_t k = 0; k < w->nr_bound && !hit; k++)
			hit = w->pods[k].b.node == node;
		if (!hit)
			continue;
		account_leave(ts, w, last_periodic(&ts->wl[w->id], ts->now_ms), false);
		rc = kerf_state_requeue(&ts->st, w->id, ts->now_ms, err);
		if (rc < 0)
			return rc;
		ts->tenant[w->tenant].evicted++;
		ts->cls[w->class_idx].evicted++;
	}
	return 0;
}

static int step(struct kerf_timesim *ts, const struct kerf_event *e,
		struct kerf_err *err)
{
	struct kerf_workload *w;

	if (e->kind != KERF_EV_CYCLE)
		ts->dirty = true;
	switch (e->kind) {
	case KERF_EV_ARRIVAL:
		return e->b ? trace_arrival(ts, e->a, err) : arrival(ts, e->a, err);
	case KERF_EV_CYCLE:
		return cycle(ts, err);
	case KERF_EV_FINISH:
		w = kerf_state_find(&ts->st, e->a);
		/* a FINISH of an earlier, evicted run is stale */
		if (!w || w->state != KERF_WL_RUNNING || ts->wl[e->a].runs != e->gen)
			return 0;
		ts->tenant[w->tenant].finished++;
		ts->cls[w->class_idx].finished++;
		return kerf_state_finish(&ts->st, e->a, ts->now_ms, err);
	case KERF_EV_NODE:
		return node_event(ts, e->a, e->b != 0, err);
	case KERF_EV_ACK:
	case KERF_EV_DEADLINE:
		return handshake(ts, e, err);
	case KERF_EV_TIMER:
		return 0;   /* only wakes the next cycle */
	case KERF_EV_QUOTA:
		return kerf_tenants_set_quota(&ts->st.tenants, ts->edits[e->a].tenant,
					      &ts->edits[e->a].quota) < 0
			       ? kerf_err_set(err, -KERF_EINVAL, "quota edit of an unknown tenant")
			       : 0;
	}
	return 0;
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
		ts->nr_events++;
		if (ts->hook && (rc = ts->hook(ts->hook_ctx, ts, &e)) != 0)
			return rc;
	}
	advance(ts, ts->horizon_ms);
	return 0;
}
