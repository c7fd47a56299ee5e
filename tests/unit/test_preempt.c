/*
 * test_preempt: making room by eviction, through the scheduling cycle and
 * kerf_preempt_plan directly.  Victims are of a lower class (the lowest
 * first at equal risk), or borrowed work of no higher class when the
 * preemptor reclaims within its nominal; the set is the smallest that
 * suffices, least work at risk first; minimum runtime, non-preemptible
 * classes, the evicted-by history and the thrash limit protect; the
 * handshake ends by acknowledgement (nothing lost) or at the deadline (GPU
 * time since the last checkpoint lost); the preemptor counts its victims
 * down and goes first; two preemptors of one cycle never share a victim and
 * nothing is over-admitted afterwards (RS-01).  kerf_state_check passes
 * after every cycle and every eviction.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/cycle.h"
#include "core/preempt.h"
#include "sched_fixture.h"

#define GPU KERF_RES_GPU0

enum { GRACE_MS = 30000, HOUR_MS = 3600 * 1000 };

/*
 * nodes nodes of 8 GPUs; cluster -> org -> team-a, team-b, team-c.  With
 * nominal NULL nothing is governed; otherwise each team has nominal[i] GPU
 * milli and lends all of it, and org has org_nominal and borrows nothing.
 */
static void setup(struct fx *f, int nodes, const int64_t *nominal,
		  int64_t org_nominal)
{
	struct kerf_quota org, teams[FX_MAX_TEAMS];

	kerf_quota_default(&org);
	if (nominal) {
		org.nominal.v[GPU] = org_nominal;
		org.borrow_limit.v[GPU] = 0;
	}
	for (int i = 0; i < FX_MAX_TEAMS; i++) {
		kerf_quota_default(&teams[i]);
		if (nominal)
			teams[i].nominal.v[GPU] = nominal[i];
	}
	fx_begin(f, nodes, FX_MAX_TEAMS, &org, teams);
	f->urgent = fx_add_class(f, "urgent", 2000, true, GRACE_MS);
	f->prod = fx_add_class(f, "production", 1000, false, GRACE_MS);
	f->high = fx_add_class(f, "high", 500, true, GRACE_MS);
	f->batch = fx_add_class(f, "batch", 100, true, GRACE_MS);
	f->low = fx_add_class(f, "low", 10, true, GRACE_MS);
	f->pinned = fx_add_class(f, "pinned", 5, false, GRACE_MS);
	assert_int_equal(f->pinned, 5);
	fx_start(f);
}

static bool leaving(struct fx *f, uint32_t id)
{
	return kerf_wl_pre(fx_wl(f, id))->preempt_deadline_ms > 0;
}

/* Probe for kerf_preempt_plan: some node has this many idle GPUs. */
struct idle_probe {
	const struct kerf_state *st;
	int gpus;
	int calls;
};

static bool idle_gpus_fit(void *ctx, struct kerf_workload *w)
{
	struct idle_probe *p = ctx;

	(void)w;
	p->calls++;
	for (size_t i = 0; i < p->st->cluster.nr_nodes; i++)
		if (p->st->cluster.nodes[i].nr_gpus_idle >= p->gpus)
			return true;
	return false;
}

static void test_lower_class_chosen_over_higher(void **state)
{
	struct fx f;
	struct kerf_cycle_stats stats;
	uint32_t b, l, h;

	(void)state;
	setup(&f, 1, NULL, 0);
	/* same size, same start: equal work at risk; b comes first by id */
	b = fx_submit(&f, f.a, f.batch, 4, 0);
	l = fx_submit(&f, f.a, f.low, 4, 0);
	assert_int_equal(fx_cycle(&f, 0).nr_admitted, 2);
	h = fx_submit(&f, f.b, f.high, 4, 100);
	stats = fx_cycle(&f, 100);
	assert_int_equal(stats.nr_admitted, 0);
	assert_int_equal(stats.nr_preempted, 1);
	assert_true(leaving(&f, l));
	assert_false(leaving(&f, b));
	assert_int_equal(kerf_wl_pre(fx_wl(&f, l))->preempt_deadline_ms, 100 + GRACE_MS);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, l))->preempted_by, h);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, h))->nr_victims, 1);
	assert_int_equal(fx_wl(&f, h)->pending, KERF_PENDING_PREEMPTING);
	assert_string_equal(fx_wl(&f, h)->pending_text,
			    "waiting for 1 workload to checkpoint and leave (lower priority): w2");
	/* while it waits it causes no more preemptions */
	stats = fx_cycle(&f, 200);
	assert_int_equal(stats.nr_preempted, 0);
	assert_false(leaving(&f, b));
	assert_int_equal(fx_wl(&f, h)->pending, KERF_PENDING_PREEMPTING);
	fx_teardown(&f);
}

static void test_least_work_at_risk_first(void **state)
{
	struct fx f;
	uint32_t old, fresh, h;

	(void)state;
	setup(&f, 1, NULL, 0);
	old = fx_submit(&f, f.a, f.low, 4, 0);
	fresh = fx_submit(&f, f.a, f.low, 4, 0);
	fx_cycle(&f, 0);
	/* 10 ms x 4000 milli at risk against 100 ms x 4000 */
	fx_wl(&f, fresh)->last_checkpoint_ms = 90;
	h = fx_submit(&f, f.b, f.high, 4, 100);
	assert_int_equal(fx_cycle(&f, 100).nr_preempted, 1);
	assert_true(leaving(&f, fresh));
	assert_false(leaving(&f, old));
	assert_int_equal(kerf_wl_pre(fx_wl(&f, fresh))->preempted_by, h);
	fx_teardown(&f);
}

static void test_smallest_sufficient_set(void **state)
{
	struct fx f;
	struct kerf_cycle_stats stats;
	uint32_t small, big, np, h;

	(void)state;
	setup(&f, 1, NULL, 0);
	big = fx_submit(&f, f.a, f.low, 4, 0);
	np = fx_submit(&f, f.a, f.pinned, 2, 0);
	fx_cycle(&f, 0);
	small = fx_submit(&f, f.a, f.low, 2, 90);
	fx_cycle(&f, 90);
	assert_int_equal(kerf_cluster_gpu_milli_used(&f.st.cluster), 8000);
	/*
	 * small risks 10 x 2000, big 100 x 4000: small is lifted first, but
	 * 4 GPUs on one node need big, and with big gone small may stay
	 */
	h = fx_submit(&f, f.b, f.high, 4, 100);
	stats = fx_cycle(&f, 100);
	assert_int_equal(stats.nr_preempted, 1);
	assert_true(leaving(&f, big));
	assert_false(leaving(&f, small));
	assert_false(leaving(&f, np));
	assert_int_equal(kerf_wl_pre(fx_wl(&f, h))->nr_victims, 1);
	assert_string_equal(fx_wl(&f, h)->pending_text,
			    "waiting for 1 workload to checkpoint and leave (lower priority): w1");
	fx_teardown(&f);
}

/* The plan, called directly: order, prune, and the state left as it was. */
static void test_plan_direct_changes_nothing(void **state)
{
	struct fx f;
	struct kerf_preempt_plan plan;
	struct idle_probe probe;
	struct kerf_tenant *before;
	struct kerf_node nodes[2];
	uint32_t v[4], h;

	(void)state;
	setup(&f, 2, NULL, 0);
	for (int i = 0; i < 4; i++)
		v[i] = fx_submit(&f, f.a, f.low, 4, 0);
	fx_cycle(&f, 0);
	/* risk: v0 0, v1 10 x 4000, v2 50 x 4000, v3 100 x 4000 */
	fx_wl(&f, v[0])->last_checkpoint_ms = 100;
	fx_wl(&f, v[1])->last_checkpoint_ms = 90;
	fx_wl(&f, v[2])->last_checkpoint_ms = 50;
	h = fx_submit(&f, f.b, f.high, 8, 100);
	before = malloc(f.st.tenants.nr * sizeof(*before));
	assert_non_null(before);
	memcpy(before, f.st.tenants.t, f.st.tenants.nr * sizeof(*before));
	memcpy(nodes, f.st.cluster.nodes, sizeof(nodes));

	/* always fits: the first candidate alone */
	probe = (struct idle_probe){ .st = &f.st, .gpus = 0 };
	assert_true(kerf_preempt_plan(&f.st, &f.s, fx_wl(&f, h), 100, idle_gpus_fit,
				      &probe, &plan));
	assert_int_equal(plan.nr, 1);
	assert_int_equal(plan.victims[0], v[0]);
	assert_false(plan.reclaim);

	/*
	 * 8 idle GPUs on one node: v0 and v1 share node 0, v2 and v3 node 1;
	 * greedy lifts v0, v1 (node 0 empty) and stops; nothing to prune
	 */
	probe = (struct idle_probe){ .st = &f.st, .gpus = 8 };
	assert_true(kerf_preempt_plan(&f.st, &f.s, fx_wl(&f, h), 100, idle_gpus_fit,
				      &probe, &plan));
	assert_int_equal(plan.nr, 2);
	assert_int_equal(plan.victims[0], v[0]);
	assert_int_equal(plan.victims[1], v[1]);

	/* nothing helps */
	probe = (struct idle_probe){ .st = &f.st, .gpus = 9 };
	assert_false(kerf_preempt_plan(&f.st, &f.s, fx_wl(&f, h), 100,
				       idle_gpus_fit, &probe, &plan));
	assert_int_equal(plan.nr, 0);

	/* every lift was put back */
	for (size_t t = 0; t < f.st.tenants.nr; t++) {
		assert_memory_equal(&f.st.tenants.t[t].usage, &before[t].usage,
				    sizeof(struct kerf_res));
		assert_memory_equal(&f.st.tenants.t[t].claim, &before[t].claim,
				    sizeof(struct kerf_res));
		assert_memory_equal(&f.st.tenants.t[t].usage_own,
				    &before[t].usage_own, sizeof(struct kerf_res));
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(f.st.cluster.nodes[i].gpu_free_milli_sum,
				 nodes[i].gpu_free_milli_sum);
		assert_int_equal(f.st.cluster.nodes[i].cpu_free_milli,
				 nodes[i].cpu_free_milli);
		assert_memory_equal(f.st.cluster.nodes[i].gpu_free_milli,
				    nodes[i].gpu_free_milli,
				    sizeof(nodes[i].gpu_free_milli));
	}
	for (int i = 0; i < 4; i++)
		assert_false(leaving(&f, v[i]));
	assert_int_equal(kerf_wl_pre(fx_wl(&f, h))->nr_victims, 0);
	fx_state_ok(&f);
	free(before);
	fx_teardown(&f);
}

static void test_min_runtime_protects(void **state)
{
	struct fx f;
	uint32_t l, h;

	(void)state;
	setup(&f, 1, NULL, 0);
	f.st.classes.c[f.low].min_runtime_ms = 1000;
	l = fx_submit(&f, f.a, f.low, 8, 0);
	fx_cycle(&f, 0);
	h = fx_submit(&f, f.b, f.high, 8, 500);
	assert_int_equal(fx_cycle(&f, 500).nr_preempted, 0);
	assert_int_equal(fx_wl(&f, h)->pending, KERF_PENDING_CAPACITY);
	assert_int_equal(fx_cycle(&f, 999).nr_preempted, 0);
	assert_false(leaving(&f, l));
	assert_int_equal(fx_cycle(&f, 1000).nr_preempted, 1);
	assert_true(leaving(&f, l));
	assert_int_equal(kerf_wl_pre(fx_wl(&f, l))->preempted_by, h);
	fx_teardown(&f);
}

static void test_nonpreemptible_never_a_victim(void **state)
{
	struct fx f;
	struct kerf_preempt_plan plan;
	struct idle_probe probe;
	uint32_t p, pin, u;

	(void)state;
	setup(&f, 1, NULL, 0);
	p = fx_submit(&f, f.a, f.prod, 4, 0);
	pin = fx_submit(&f, f.a, f.pinned, 4, 0);
	fx_cycle(&f, 0);
	assert_true(fx_wl(&f, pin)->nonpreemptible);
	u = fx_submit(&f, f.b, f.urgent, 4, 10);
	assert_int_equal(fx_cycle(&f, 10).nr_preempted, 0);
	assert_int_equal(fx_wl(&f, u)->state, KERF_WL_PENDING);
	assert_int_equal(fx_wl(&f, u)->pending, KERF_PENDING_CAPACITY);
	assert_false(leaving(&f, p));
	assert_false(leaving(&f, pin));
	/* no candidate at all: the probe is never asked */
	probe = (struct idle_probe){ .st = &f.st, .gpus = 0 };
	assert_false(kerf_preempt_plan(&f.st, &f.s, fx_wl(&f, u), 20, idle_gpus_fit,
				       &probe, &plan));
	assert_int_equal(probe.calls, 0);
	fx_teardown(&f);
}

/*
 * A workload whose eviction a PodDisruptionBudget would refuse is never
 * asked to leave; an unprotected one of the same class is.  With every
 * candidate protected the preemptor's reason says why nothing was asked.
 */
static void test_protected_never_a_victim(void **state)
{
	struct fx f;
	struct kerf_err err = { 0 };
	uint32_t shielded, plain, h;

	(void)state;
	setup(&f, 1, NULL, 0);
	shielded = fx_submit(&f, f.a, f.low, 4, 0);
	plain = fx_submit(&f, f.a, f.low, 4, 0);
	assert_int_equal(fx_cycle(&f, 0).nr_admitted, 2);
	assert_int_equal(kerf_state_protect(&f.st, shielded, true, &err), 0);
	assert_int_equal(kerf_state_protect(&f.st, plain, true, &err), 0);
	assert_int_equal(kerf_state_protect(&f.st, 9999, true, &err), -KERF_ENOTFOUND);
	assert_string_equal(err.msg, "workload 9999: not found");
	/* shielded has less work at risk: it would go first unprotected */
	fx_wl(&f, shielded)->last_checkpoint_ms = 90;
	h = fx_submit(&f, f.b, f.high, 4, 100);
	/* both protected: nothing asked, and the reason says why */
	assert_int_equal(fx_cycle(&f, 100).nr_preempted, 0);
	assert_false(leaving(&f, shielded));
	assert_false(leaving(&f, plain));
	assert_int_equal(fx_wl(&f, h)->pending, KERF_PENDING_CAPACITY);
	assert_non_null(strstr(fx_wl(&f, h)->pending_text,
			       "; 2 running workloads of lower priority not asked to leave: a PodDisruptionBudget allows no disruption"));
	/* plain unprotected: it is asked, shielded is not */
	assert_int_equal(kerf_state_protect(&f.st, plain, false, &err), 0);
	assert_int_equal(fx_cycle(&f, 200).nr_preempted, 1);
	assert_true(leaving(&f, plain));
	assert_false(leaving(&f, shielded));
	assert_int_equal(kerf_wl_pre(fx_wl(&f, plain))->preempted_by, h);
	assert_int_equal(fx_wl(&f, h)->pending, KERF_PENDING_PREEMPTING);
	fx_teardown(&f);
}

/* preemptionPolicy Never: it waits by its priority, asks nobody to leave */
static void test_never_preempts(void **state)
{
	struct fx f;
	uint32_t l, h;

	(void)state;
	setup(&f, 1, NULL, 0);
	l = fx_submit(&f, f.a, f.low, 8, 0);
	assert_int_equal(fx_cycle(&f, 0).nr_admitted, 1);
	h = fx_submit(&f, f.b, f.high, 4, 100);
	fx_wl(&f, h)->never_preempts = true;
	assert_int_equal(fx_cycle(&f, 100).nr_preempted, 0);
	assert_false(leaving(&f, l));
	assert_int_equal(fx_wl(&f, h)->pending, KERF_PENDING_CAPACITY);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, h))->nr_victims, 0);
	/* the same workload allowed to preempt asks l to leave */
	fx_wl(&f, h)->never_preempts = false;
	assert_int_equal(fx_cycle(&f, 200).nr_preempted, 1);
	assert_true(leaving(&f, l));
	fx_teardown(&f);
}

/* team-a within nominal takes back from team-b what team-b borrowed */
static void test_reclaim_evicts_borrowed_only(void **state)
{
	static const int64_t nominal[3] = { 8000, 8000, 0 };
	struct fx f;
	uint32_t own, lent, a;

	(void)state;
	setup(&f, 2, nominal, 16000);
	own = fx_submit(&f, f.b, f.batch, 8, 0);
	lent = fx_submit(&f, f.b, f.batch, 8, 0);
	fx_cycle(&f, 0);
	assert_false(fx_wl(&f, own)->borrowed);
	assert_true(fx_wl(&f, lent)->borrowed);
	assert_int_equal(f.st.tenants.t[f.b].usage_own.v[GPU], 8000);
	/* the own work has less at risk, and is of the same class: kept */
	fx_wl(&f, own)->last_checkpoint_ms = 99;
	a = fx_submit(&f, f.a, f.batch, 8, 100);
	assert_int_equal(fx_cycle(&f, 100).nr_preempted, 1);
	assert_true(leaving(&f, lent));
	assert_false(leaving(&f, own));
	assert_string_equal(fx_wl(&f, a)->pending_text,
			    "waiting for 1 workload to checkpoint and leave (reclaiming lent quota): w2");
	fx_ack(&f, lent, 110);
	fx_cycle(&f, 110);
	assert_int_equal(fx_wl(&f, a)->state, KERF_WL_RUNNING);
	assert_false(fx_wl(&f, a)->borrowed);
	/* team-b is at its nominal: its work cannot take it back in turn */
	assert_int_equal(fx_wl(&f, lent)->state, KERF_WL_PENDING);
	assert_int_equal(fx_wl(&f, lent)->pending, KERF_PENDING_QUOTA);
	assert_int_equal(fx_cycle(&f, 120).nr_preempted, 0);
	assert_false(leaving(&f, a));
	fx_teardown(&f);
}

/* borrowed work of one's own tenant is no reclaim */
static void test_reclaim_not_from_own_tenant(void **state)
{
	static const int64_t nominal[3] = { 8000, 8000, 0 };
	struct fx f;
	uint32_t a0, a1, a2;

	(void)state;
	setup(&f, 2, nominal, 16000);
	a0 = fx_submit(&f, f.a, f.batch, 8, 0);
	a1 = fx_submit(&f, f.a, f.batch, 8, 0);
	fx_cycle(&f, 0);
	assert_true(fx_wl(&f, a1)->borrowed);
	assert_int_equal(kerf_state_finish(&f.st, a0, 10, NULL), 0);
	fx_submit(&f, f.b, f.batch, 8, 20);
	fx_cycle(&f, 20);
	/* team-a within nominal again; only its own borrowed work to take */
	a2 = fx_submit(&f, f.a, f.batch, 8, 30);
	assert_int_equal(fx_cycle(&f, 30).nr_preempted, 0);
	assert_false(leaving(&f, a1));
	assert_int_equal(fx_wl(&f, a2)->state, KERF_WL_PENDING);
	fx_teardown(&f);
}

/* two reclaims of one tenant must fit its nominal together */
static void test_reclaims_of_one_tenant_fit_together(void **state)
{
	static const int64_t nominal[3] = { 8000, 8000, 8000 };
	struct fx f;
	uint32_t b2, b3, x1, x2;

	(void)state;
	setup(&f, 3, nominal, 24000);
	fx_submit(&f, f.b, f.batch, 8, 0);
	b2 = fx_submit(&f, f.b, f.batch, 8, 0);
	b3 = fx_submit(&f, f.b, f.batch, 8, 0);
	fx_cycle(&f, 0);
	assert_true(fx_wl(&f, b3)->borrowed);
	x1 = fx_submit(&f, f.a, f.batch, 8, 100);
	x2 = fx_submit(&f, f.a, f.batch, 8, 100);
	assert_int_equal(fx_cycle(&f, 100).nr_preempted, 1);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, b2))->preempted_by, x1);
	assert_false(leaving(&f, b3));
	assert_int_equal(kerf_wl_pre(fx_wl(&f, x2))->nr_victims, 0);
	fx_ack(&f, b2, 110);
	fx_cycle(&f, 110);
	assert_int_equal(fx_wl(&f, x1)->state, KERF_WL_RUNNING);
	assert_int_equal(fx_wl(&f, x2)->state, KERF_WL_PENDING);
	assert_false(leaving(&f, b3));
	fx_teardown(&f);
}

static void test_reclaim_never_of_higher_class(void **state)
{
	static const int64_t nominal[3] = { 8000, 8000, 0 };
	struct fx f;
	uint32_t own, lent, a;

	(void)state;
	setup(&f, 2, nominal, 16000);
	own = fx_submit(&f, f.b, f.batch, 8, 0);
	fx_cycle(&f, 0);
	lent = fx_submit(&f, f.b, f.high, 8, 1);
	fx_cycle(&f, 1);
	assert_true(fx_wl(&f, lent)->borrowed);
	a = fx_submit(&f, f.a, f.batch, 8, 100);
	assert_int_equal(fx_cycle(&f, 100).nr_preempted, 0);
	assert_false(leaving(&f, lent));
	assert_false(leaving(&f, own));
	assert_int_equal(fx_wl(&f, a)->state, KERF_WL_PENDING);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, a))->nr_victims, 0);
	fx_teardown(&f);
}

static void test_ack_loses_nothing(void **state)
{
	struct fx f;
	struct kerf_err err = { 0 };
	struct kerf_workload *v;
	uint32_t l, h;

	(void)state;
	setup(&f, 1, NULL, 0);
	l = fx_submit(&f, f.a, f.low, 8, 0);
	fx_cycle(&f, 0);
	h = fx_submit(&f, f.b, f.high, 8, 100);
	fx_cycle(&f, 100);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, h))->nr_victims, 1);
	fx_ack(&f, l, 150);
	v = fx_wl(&f, l);
	assert_int_equal(v->state, KERF_WL_PENDING);
	assert_int_equal(v->pending, KERF_PENDING_REQUEUED);
	assert_int_equal(v->submit_ms, 0);
	assert_int_equal(kerf_wl_pre(v)->lost_gpu_milli_ms, 0);
	assert_int_equal(v->last_checkpoint_ms, 150);
	assert_int_equal(kerf_wl_pre(v)->nr_preemptions, 1);
	assert_int_equal(kerf_wl_pre(v)->nr_asked_by, 1);
	assert_int_equal(v->pre->asked_by[0], h);
	assert_int_equal(v->pre->evicted_at[0], 150);
	assert_int_equal(kerf_wl_pre(v)->preempt_deadline_ms, 0);
	assert_int_equal(kerf_wl_pre(v)->preempted_by, 0);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, h))->nr_victims, 0);
	assert_int_equal(kerf_cluster_gpu_milli_used(&f.st.cluster), 0);
	assert_int_equal(f.st.tenants.t[f.a].usage.v[GPU], 0);
	/* a second acknowledgement, or one nobody asked for, is refused */
	assert_int_equal(kerf_preempt_ack(&f.st, l, 160, &f.dec, &err), -KERF_EINVAL);
	assert_string_equal(err.msg,
			    "checkpoint acknowledgement for a workload that was not asked");
	fx_cycle(&f, 170);
	assert_int_equal(fx_wl(&f, h)->state, KERF_WL_RUNNING);
	assert_int_equal(kerf_preempt_ack(&f.st, h, 180, &f.dec, NULL), -KERF_EINVAL);
	assert_int_equal(kerf_preempt_ack(&f.st, 99, 180, &f.dec, NULL), -KERF_EINVAL);
	fx_teardown(&f);
}

static void test_expire_at_deadline_records_lost_work(void **state)
{
	struct fx f;
	struct kerf_err err = { 0 };
	struct kerf_workload *v;
	uint32_t l, h;

	(void)state;
	setup(&f, 1, NULL, 0);
	l = fx_submit(&f, f.a, f.low, 4, 0);
	fx_cycle(&f, 0);
	fx_wl(&f, l)->last_checkpoint_ms = 40;
	h = fx_submit(&f, f.b, f.high, 8, 100);
	fx_cycle(&f, 100);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, l))->preempt_deadline_ms, 100 + GRACE_MS);
	assert_int_equal(kerf_preempt_expire(&f.st, 100 + GRACE_MS - 1, &f.dec, &err), 0);
	assert_int_equal(fx_wl(&f, l)->state, KERF_WL_RUNNING);
	assert_int_equal(kerf_preempt_expire_one(&f.st, l, 100 + GRACE_MS - 1, &f.dec,
						 &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "expiry of a workload that is not a due victim");
	assert_int_equal(kerf_preempt_expire(&f.st, 100 + GRACE_MS, &f.dec, NULL), 1);
	fx_state_ok(&f);
	v = fx_wl(&f, l);
	assert_int_equal(v->state, KERF_WL_PENDING);
	assert_int_equal(v->pending, KERF_PENDING_REQUEUED);
	assert_int_equal(kerf_wl_pre(v)->lost_gpu_milli_ms,
			 (int64_t)(100 + GRACE_MS - 40) * 4000);
	assert_int_equal(kerf_wl_pre(v)->nr_preemptions, 1);
	assert_int_equal(kerf_wl_pre(v)->nr_asked_by, 1);
	assert_int_equal(v->pre->asked_by[0], h);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, h))->nr_victims, 0);
	assert_int_equal(kerf_preempt_expire(&f.st, 100 + GRACE_MS, &f.dec, NULL), 0);
	fx_teardown(&f);
}

static void test_preemptor_counts_down(void **state)
{
	struct fx f;
	uint32_t l1, l2, h;

	(void)state;
	setup(&f, 1, NULL, 0);
	l1 = fx_submit(&f, f.a, f.low, 4, 0);
	l2 = fx_submit(&f, f.a, f.low, 4, 0);
	fx_cycle(&f, 0);
	h = fx_submit(&f, f.a, f.high, 8, 100);
	assert_int_equal(fx_cycle(&f, 100).nr_preempted, 2);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, h))->nr_victims, 2);
	assert_string_equal(fx_wl(&f, h)->pending_text,
			    "waiting for 2 workloads to checkpoint and leave (lower priority): w1, w2");
	fx_ack(&f, l1, 110);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, h))->nr_victims, 1);
	assert_int_equal(kerf_preempt_expire(&f.st, 100 + GRACE_MS, &f.dec, NULL), 1);
	fx_state_ok(&f);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, h))->nr_victims, 0);
	fx_cycle(&f, 100 + GRACE_MS);
	assert_int_equal(fx_wl(&f, h)->state, KERF_WL_RUNNING);
	assert_int_equal(fx_wl(&f, l1)->state, KERF_WL_PENDING);
	assert_int_equal(fx_wl(&f, l2)->state, KERF_WL_PENDING);
	fx_teardown(&f);
}

static void test_preemptor_goes_first(void **state)
{
	const int64_t t0 = 600000;          /* ten minutes of history */
	struct fx f;
	uint32_t l1, h, q;

	(void)state;
	setup(&f, 1, NULL, 0);
	l1 = fx_submit(&f, f.a, f.low, 4, 0);
	fx_submit(&f, f.a, f.low, 4, 0);
	fx_cycle(&f, 0);
	/* 3 GPUs: small enough that no nodes are reserved for it */
	h = fx_submit(&f, f.a, f.high, 3, t0);
	assert_int_equal(fx_cycle(&f, t0).nr_preempted, 1);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, l1))->preempted_by, h);
	fx_ack(&f, l1, t0 + 10);
	/*
	 * q, of the same class, belongs to a tenant with no usage history:
	 * fair share alone would put it before h, whose tenant ran 8 GPUs,
	 * and it would take 3 of the 4 GPUs freed for h
	 */
	q = fx_submit(&f, f.b, f.high, 3, t0 + 10);
	fx_cycle(&f, t0 + 20);
	assert_int_equal(fx_wl(&f, h)->state, KERF_WL_RUNNING);
	assert_int_equal(fx_wl(&f, q)->state, KERF_WL_PENDING);
	fx_teardown(&f);
}

/*
 * x reclaims from w2; x is later queued again and, after a quota edit,
 * runs on borrowed quota that w2's tenant could reclaim: w2 never evicts
 * x, though w3 of the same tenant does.
 */
static void test_never_evicts_its_evictor(void **state)
{
	static const int64_t nominal[3] = { 8000, 8000, 0 };
	struct fx f;
	struct kerf_quota q;
	uint32_t w, w2, w3, x;

	(void)state;
	setup(&f, 2, nominal, 16000);
	w = fx_submit(&f, f.b, f.batch, 8, 0);
	w2 = fx_submit(&f, f.b, f.batch, 8, 0);
	fx_cycle(&f, 0);
	x = fx_submit(&f, f.a, f.batch, 8, 1000);
	fx_cycle(&f, 1000);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, w2))->preempted_by, x);
	fx_ack(&f, w2, 1010);
	assert_int_equal(fx_wl(&f, w2)->pre->asked_by[0], x);
	fx_cycle(&f, 1020);
	assert_int_equal(fx_wl(&f, x)->state, KERF_WL_RUNNING);

	assert_int_equal(kerf_state_requeue(&f.st, x, 2000, NULL), 0);
	kerf_quota_default(&q);
	q.borrow_limit.v[GPU] = 16000;          /* nominal 0: borrows all */
	assert_int_equal(kerf_tenants_set_quota(&f.st.tenants, f.a, &q), 0);
	kerf_quota_default(&q);
	q.nominal.v[GPU] = 16000;
	assert_int_equal(kerf_tenants_set_quota(&f.st.tenants, f.b, &q), 0);
	assert_int_equal(fx_cycle(&f, 2000).nr_preempted, 0);
	assert_int_equal(fx_wl(&f, x)->state, KERF_WL_RUNNING);
	assert_true(fx_wl(&f, x)->borrowed);
	assert_int_equal(fx_wl(&f, w2)->state, KERF_WL_PENDING);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, w2))->nr_victims, 0);
	assert_false(leaving(&f, x));
	assert_false(leaving(&f, w));

	w3 = fx_submit(&f, f.b, f.batch, 8, 3000);
	assert_int_equal(fx_cycle(&f, 3000).nr_preempted, 1);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, x))->preempted_by, w3);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, w2))->nr_victims, 0);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, w3))->nr_victims, 1);
	fx_teardown(&f);
}

static void test_thrash_limit(void **state)
{
	struct fx f;
	struct kerf_workload *v;
	uint32_t l, p;
	int64_t t = 0;

	(void)state;
	setup(&f, 1, NULL, 0);
	l = fx_submit(&f, f.a, f.low, 8, 0);
	fx_cycle(&f, 0);
	for (int k = 0; k < 3; k++) {
		t = 1000 + 60000 * k;
		p = fx_submit(&f, f.b, f.high, 8, t);
		assert_int_equal(fx_cycle(&f, t).nr_preempted, 1);
		fx_ack(&f, l, t + 1);
		fx_cycle(&f, t + 2);
		assert_int_equal(fx_wl(&f, p)->state, KERF_WL_RUNNING);
		assert_int_equal(kerf_state_finish(&f.st, p, t + 3, NULL), 0);
		fx_cycle(&f, t + 4);
		assert_int_equal(fx_wl(&f, l)->state, KERF_WL_RUNNING);
	}
	v = fx_wl(&f, l);
	assert_int_equal(kerf_wl_pre(v)->nr_preemptions, 3);
	assert_int_equal(v->pre->evicted_at[0], 1001);
	assert_int_equal(v->pre->evicted_at[2], 121001);
	/* a fourth within the hour of the first is refused */
	p = fx_submit(&f, f.b, f.high, 8, 200000);
	assert_int_equal(fx_cycle(&f, 200000).nr_preempted, 0);
	assert_int_equal(fx_cycle(&f, 1001 + HOUR_MS - 1).nr_preempted, 0);
	assert_false(leaving(&f, l));
	assert_int_equal(fx_wl(&f, p)->state, KERF_WL_PENDING);
	/* an hour after the first, it is a candidate again */
	assert_int_equal(fx_cycle(&f, 1001 + HOUR_MS).nr_preempted, 1);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, l))->preempted_by, p);
	fx_teardown(&f);
}

static void assert_within_limits(const struct fx *f)
{
	const struct kerf_tenants *tt = &f->st.tenants;
	const int teams[FX_MAX_TEAMS] = { f->a, f->b, f->c };
	int64_t sum_usage = 0, sum_nominal = 0;

	fx_state_ok(f);
	for (size_t t = 1; t < tt->nr; t++)
		for (int i = 0; i < tt->nr_res; i++)
			if (tt->t[t].claim.v[i] > kerf_tenant_limit(tt, (int)t, i))
				fail_msg("tenant '%s' claims %lld over its limit",
					 tt->t[t].name, (long long)tt->t[t].claim.v[i]);
	for (int i = 0; i < FX_MAX_TEAMS; i++) {
		sum_usage += tt->t[teams[i]].usage.v[GPU];
		sum_nominal += tt->t[teams[i]].quota.nominal.v[GPU];
		assert_false(kerf_tenants_over_limit(tt, teams[i], NULL));
	}
	assert_true(sum_usage <= sum_nominal);
	assert_true(tt->t[f->org].usage.v[GPU] <= tt->t[f->org].quota.nominal.v[GPU]);
}

/*
 * Regression (was a bug): the room a victim frees is not
 * held for its waiting preemptor.  Here the victim itself, of a lower
 * class, is admitted again onto the GPUs it just gave up while h still
 * waits for its second victim, and h must then evict it a second time
 * (RS-39).
 */
static void test_freed_room_held_for_preemptor(void **state)
{
	struct fx f;
	uint32_t l1, l2, h;

	(void)state;
	setup(&f, 1, NULL, 0);
	l1 = fx_submit(&f, f.a, f.low, 4, 0);
	l2 = fx_submit(&f, f.a, f.low, 4, 0);
	fx_cycle(&f, 0);
	h = fx_submit(&f, f.a, f.high, 8, 100);
	assert_int_equal(fx_cycle(&f, 100).nr_preempted, 2);
	fx_ack(&f, l1, 110);
	fx_cycle(&f, 120);
	assert_int_equal(fx_wl(&f, l1)->state, KERF_WL_PENDING);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, h))->nr_victims, 1);
	fx_ack(&f, l2, 130);
	assert_int_equal(fx_cycle(&f, 140).nr_preempted, 0);
	assert_int_equal(fx_wl(&f, h)->state, KERF_WL_RUNNING);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, l1))->nr_preemptions, 1);
	fx_teardown(&f);
}

/*
 * A preemptor held by its budget once its victims left keeps no room: the
 * lower work gets the GPUs back in the same cycle instead of leaving them
 * idle for as long as the budget holds.
 */
static void test_held_preemptor_keeps_no_room(void **state)
{
	struct fx f;
	struct kerf_budget *b;
	uint32_t l1, l2, h;

	(void)state;
	setup(&f, 1, NULL, 0);
	l1 = fx_submit(&f, f.b, f.low, 4, 0);
	l2 = fx_submit(&f, f.b, f.low, 4, 0);
	fx_cycle(&f, 0);
	h = fx_submit(&f, f.a, f.high, 8, 100);
	assert_int_equal(fx_cycle(&f, 100).nr_preempted, 2);
	assert_true(kerf_wl_pre(fx_wl(&f, h))->nr_nominated > 0);
	/* team-a's budget runs out while the victims leave */
	b = &f.st.tenants.t[f.a].budget;
	b->limit_milli_ms = 1;
	b->used_milli_ms = 1;
	b->window_ms = 3600 * 1000;
	b->action = KERF_BUDGET_HOLD;
	fx_ack(&f, l1, 110);
	fx_ack(&f, l2, 120);
	fx_cycle(&f, 130);
	assert_int_equal(fx_wl(&f, h)->pending, KERF_PENDING_BUDGET);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, h))->nr_nominated, 0);
	assert_int_equal(fx_wl(&f, l1)->state, KERF_WL_RUNNING);
	assert_int_equal(fx_wl(&f, l2)->state, KERF_WL_RUNNING);
	fx_teardown(&f);
}

/* RS-01: three tenants in one cohort, two preemptors in one cycle */
static void test_concurrent_reclaims_disjoint(void **state)
{
	static const int64_t nominal[3] = { 8000, 8000, 8000 };
	struct fx f;
	uint32_t a1, a2, a3, b, c;

	(void)state;
	setup(&f, 3, nominal, 24000);
	a1 = fx_submit(&f, f.a, f.batch, 8, 0);
	a2 = fx_submit(&f, f.a, f.batch, 8, 0);
	a3 = fx_submit(&f, f.a, f.batch, 8, 0);
	assert_int_equal(fx_cycle(&f, 0).nr_admitted, 3);
	assert_within_limits(&f);
	assert_true(fx_wl(&f, a2)->borrowed);
	assert_true(fx_wl(&f, a3)->borrowed);
	b = fx_submit(&f, f.b, f.batch, 8, 1000);
	c = fx_submit(&f, f.c, f.batch, 8, 1000);
	assert_int_equal(fx_cycle(&f, 1000).nr_preempted, 2);
	assert_within_limits(&f);
	assert_false(leaving(&f, a1));
	assert_int_equal(kerf_wl_pre(fx_wl(&f, a2))->preempted_by, b);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, a3))->preempted_by, c);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, b))->nr_victims, 1);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, c))->nr_victims, 1);
	fx_ack(&f, a2, 1010);
	assert_within_limits(&f);
	fx_cycle(&f, 1015);
	assert_within_limits(&f);
	assert_int_equal(fx_wl(&f, b)->state, KERF_WL_RUNNING);
	assert_int_equal(fx_wl(&f, c)->state, KERF_WL_PENDING);
	fx_ack(&f, a3, 1020);
	fx_cycle(&f, 1025);
	assert_within_limits(&f);
	assert_int_equal(fx_wl(&f, c)->state, KERF_WL_RUNNING);
	assert_int_equal(fx_wl(&f, a2)->state, KERF_WL_PENDING);
	assert_int_equal(fx_wl(&f, a3)->state, KERF_WL_PENDING);
	assert_int_equal(f.st.tenants.t[f.org].usage.v[GPU], 24000);
	/* a is at its nominal: a2, a3 wait, and reclaim nothing */
	assert_int_equal(fx_cycle(&f, 2000).nr_preempted, 0);
	assert_within_limits(&f);
	fx_teardown(&f);
}

/* RS-01, one victim enough for both: the second preemptor must not count
 * on it, and both are admitted only when both fit */
static void test_concurrent_reclaims_one_victim(void **state)
{
	static const int64_t nominal[3] = { 8000, 8000, 8000 };
	struct fx f;
	uint32_t big, b, c;

	(void)state;
	setup(&f, 3, nominal, 24000);
	fx_submit(&f, f.a, f.batch, 8, 0);
	big = fx_submit_gang(&f, f.a, f.batch, 2, 8, 0);
	assert_int_equal(fx_cycle(&f, 0).nr_admitted, 2);
	assert_true(fx_wl(&f, big)->borrowed);
	b = fx_submit(&f, f.b, f.batch, 8, 1000);
	c = fx_submit(&f, f.c, f.batch, 8, 1000);
	assert_int_equal(fx_cycle(&f, 1000).nr_preempted, 1);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, big))->preempted_by, b);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, c))->nr_victims, 0);
	assert_int_equal(fx_wl(&f, c)->state, KERF_WL_PENDING);
	assert_within_limits(&f);
	fx_ack(&f, big, 1010);
	fx_cycle(&f, 1020);
	assert_within_limits(&f);
	assert_int_equal(fx_wl(&f, b)->state, KERF_WL_RUNNING);
	assert_int_equal(fx_wl(&f, c)->state, KERF_WL_RUNNING);
	assert_int_equal(f.st.tenants.t[f.org].usage.v[GPU], 24000);
	fx_teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lower_class_chosen_over_higher),
		cmocka_unit_test(test_least_work_at_risk_first),
		cmocka_unit_test(test_smallest_sufficient_set),
		cmocka_unit_test(test_plan_direct_changes_nothing),
		cmocka_unit_test(test_min_runtime_protects),
		cmocka_unit_test(test_nonpreemptible_never_a_victim),
		cmocka_unit_test(test_protected_never_a_victim),
		cmocka_unit_test(test_never_preempts),
		cmocka_unit_test(test_reclaim_evicts_borrowed_only),
		cmocka_unit_test(test_reclaim_not_from_own_tenant),
		cmocka_unit_test(test_reclaims_of_one_tenant_fit_together),
		cmocka_unit_test(test_reclaim_never_of_higher_class),
		cmocka_unit_test(test_ack_loses_nothing),
		cmocka_unit_test(test_expire_at_deadline_records_lost_work),
		cmocka_unit_test(test_preemptor_counts_down),
		cmocka_unit_test(test_preemptor_goes_first),
		cmocka_unit_test(test_never_evicts_its_evictor),
		cmocka_unit_test(test_thrash_limit),
		cmocka_unit_test(test_freed_room_held_for_preemptor),
		cmocka_unit_test(test_held_preemptor_keeps_no_room),
		cmocka_unit_test(test_concurrent_reclaims_disjoint),
		cmocka_unit_test(test_concurrent_reclaims_one_victim),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
