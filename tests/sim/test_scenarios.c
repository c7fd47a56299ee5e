/*
 * test_scenarios: the scenario tests named after the failure modes in the
 * product brief, each a YAML scenario in tests/sim/ run through the time
 * simulator (the real core), with the invariants of `kerf sim check`
 * verified after every event and the scenario's own claim asserted.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/mig/geometry.h"
#include "core/mig/place.h"
#include "sim/scenario.h"
#include "sim/timesim.h"
#include "sim/timesim_report.h"

static void load(struct kerf_scenario *sc, const char *file)
{
	const char *root = getenv("KERF_SOURCE_ROOT");
	char path[4096];
	struct kerf_err err = { 0 };

	snprintf(path, sizeof(path), "%s/tests/sim/%s", root ? root : ".", file);
	if (kerf_scenario_load(sc, path, &err) < 0)
		fail_msg("%s", err.msg);
}

static int check_state(void *ctx, struct kerf_timesim *ts,
		       const struct kerf_event *ev)
{
	struct kerf_err err = { 0 };

	(void)ctx;
	(void)ev;
	if (kerf_state_check(&ts->st, &err) < 0)
		fail_msg("t=%lld ms: %s", (long long)ts->now_ms, err.msg);
	return 0;
}

static void run(struct kerf_timesim *ts, const struct kerf_scenario *sc)
{
	struct kerf_err err = { 0 };

	if (kerf_timesim_init(ts, sc, &err) < 0)
		fail_msg("%s", err.msg);
	/* the checks below read finished workloads */
	ts->keep_finished = true;
	ts->hook = check_state;
	if (kerf_timesim_run(ts, &err) < 0)
		fail_msg("%s", err.msg);
}

/* 6. Weights 2:1 under sustained contention converge to a 2:1 share. */
static void test_fair_share_2_to_1(void **state)
{
	struct kerf_scenario sc;
	struct kerf_timesim ts;

	(void)state;
	load(&sc, "fair_share.yaml");
	run(&ts, &sc);
	for (size_t t = 1; t < ts.st.tenants.nr; t++) {
		int64_t e = kerf_ts_entitlement_ppm(&ts.st.tenants, (int)t);
		int64_t o = kerf_ts_owed_ppm(&ts, (int)t);
		int64_t s = kerf_ts_share_ppm(&ts, (int)t);

		printf("# %s: weight entitlement %.1f%%, owed given demand %.1f%%, share %.1f%%\n",
		       ts.st.tenants.t[t].name, (double)e / 1e4, (double)o / 1e4,
		       (double)s / 1e4);
		/* both always want more than their part: owed is the weights' */
		assert_true(o * 100 >= e * 99 && o * 100 <= e * 101);
		/* within 5 % of the entitlement */
		assert_true(s * 100 >= e * 95 && s * 100 <= e * 105);
	}
	kerf_timesim_release(&ts);
	kerf_scenario_release(&sc);
}

static int tenant(const struct kerf_timesim *ts, const char *name)
{
	int t = kerf_tenants_find(&ts->st.tenants, name);

	assert_true(t > 0);
	return t;
}

static int klass(const struct kerf_timesim *ts, const char *name)
{
	int c = kerf_classes_find(&ts->st.classes, name);

	assert_true(c >= 0);
	return c;
}

static double gpu_hours(__int128 milli_ms)
{
	return (double)milli_ms / 1000.0 / 3.6e6;
}

/*
 * 2. Production inference is never preempted and meets its time-to-start
 * SLO while preemptible experiments flood the cluster.
 */
static void test_production_meets_slo_under_flood(void **state)
{
	struct kerf_scenario sc;
	struct kerf_timesim ts;
	const struct kerf_ts_tenant_stats *prod, *exp;

	(void)state;
	load(&sc, "production_slo.yaml");
	run(&ts, &sc);
	prod = &ts.cls[klass(&ts, "production")];
	exp = &ts.cls[klass(&ts, "experiment")];
	printf("# production: %zu/%u started, p99 wait %lld ms, %u preempted; experiments preempted %u\n",
	       prod->nr_waits, prod->submitted,
	       (long long)kerf_ts_wait_pct(prod, 99), prod->preempted,
	       exp->preempted);
	assert_int_equal(prod->nr_waits, prod->submitted);  /* all started */
	assert_int_equal(prod->preempted, 0);
	assert_int_equal(prod->evicted, 0);
	assert_int_equal(kerf_ts_slo_ppm(prod), 1000000);    /* all within SLO */
	assert_true(exp->preempted > 0);                     /* it did flood */
	assert_true(kerf_ts_wait_pct(exp, 50) > 3600 * 1000);
	kerf_timesim_release(&ts);
	kerf_scenario_release(&sc);
}

/*
 * 3. A tenant borrowing idle quota is reclaimed through the checkpoint
 * handshake when the owner's work arrives; lost GPU-time equals the work
 * since the last checkpoint.
 */
static void test_reclaim_through_handshake(void **state)
{
	struct kerf_scenario sc;
	struct kerf_timesim ts;
	const struct kerf_ts_tenant_stats *owner, *borrower;
	/* 4 victims x 8 GPUs, deadline 3920 s, last checkpoint at 3600 s */
	const double expected_lost = 4.0 * 8.0 * (3920.0 - 3600.0) / 3600.0;

	(void)state;
	load(&sc, "reclaim.yaml");
	run(&ts, &sc);
	owner = &ts.tenant[tenant(&ts, "owner")];
	borrower = &ts.tenant[tenant(&ts, "borrower")];
	printf("# owner waited %lld ms; borrower preempted %u, lost %.3f GPU-h (expected %.3f)\n",
	       (long long)kerf_ts_wait_pct(owner, 100), borrower->preempted,
	       gpu_hours(borrower->lost_gpu_milli_ms), expected_lost);
	assert_int_equal(owner->nr_waits, 4);
	assert_int_equal(kerf_ts_wait_pct(owner, 100), 20 * 1000); /* the grace */
	assert_int_equal(borrower->preempted, 4);
	assert_true(gpu_hours(borrower->lost_gpu_milli_ms) > expected_lost - 1e-6 &&
		    gpu_hours(borrower->lost_gpu_milli_ms) < expected_lost + 1e-6);
	assert_int_equal(owner->preempted, 0);
	kerf_timesim_release(&ts);
	kerf_scenario_release(&sc);
}

struct gang_watch {
	uint32_t gang;              /* workload id of the gang */
	int64_t whole_free_at;      /* first time 8 nodes were entirely free */
	int64_t all_done_at;        /* the last of the 4-GPU jobs finished */
	int64_t started_at;
};

static int watch_gang(void *ctx, struct kerf_timesim *ts,
		      const struct kerf_event *ev)
{
	struct gang_watch *g = ctx;
	const struct kerf_cluster *c = &ts->st.cluster;
	const struct kerf_workload *w;
	int whole = 0;

	check_state(NULL, ts, ev);
	for (size_t i = 0; i < ts->st.nr_wl && !g->gang; i++)
		if (!strcmp(ts->st.wl[i]->key, "big-gang-0"))
			g->gang = ts->st.wl[i]->id;
	if (!g->gang)
		return 0;
	w = kerf_state_find(&ts->st, g->gang);
	/* waiting, it holds nothing at all */
	if (w->state == KERF_WL_PENDING)
		assert_int_equal(w->nr_bound, 0);
	if (w->state == KERF_WL_RUNNING && g->started_at < 0)
		g->started_at = w->start_ms;
	for (size_t i = 0; i < c->nr_nodes; i++)
		whole += c->nodes[i].nr_pods == 0;
	if (g->all_done_at < 0) {
		int done = 0;

		for (size_t i = 0; i < ts->st.nr_wl; i++)
			done += !strncmp(ts->st.wl[i]->key, "running-", 8) &&
				ts->st.wl[i]->state == KERF_WL_FINISHED;
		if (done == 12)
			g->all_done_at = ts->now_ms;
	}
	if (whole >= 8 && g->whole_free_at < 0 && w->state == KERF_WL_PENDING)
		g->whole_free_at = ts->now_ms;
	return 0;
}

/*
 * 1. A 64-GPU training gang on a cluster with 48 free GPUs: no GPU is held
 * idle for it while it waits, inference that arrives meanwhile is
 * admitted, and the gang starts as soon as 64 GPUs are free.
 */
static void test_gang_waits_whole(void **state)
{
	struct kerf_scenario sc;
	struct kerf_timesim ts;
	struct kerf_err err = { 0 };
	struct gang_watch g = { .whole_free_at = -1, .all_done_at = -1,
				.started_at = -1 };
	const struct kerf_ts_tenant_stats *inf;

	(void)state;
	load(&sc, "gang_reservation.yaml");
	if (kerf_timesim_init(&ts, &sc, &err) < 0)
		fail_msg("%s", err.msg);
	/* the checks below read finished workloads */
	ts.keep_finished = true;
	ts.hook = watch_gang;
	ts.hook_ctx = &g;
	if (kerf_timesim_run(&ts, &err) < 0)
		fail_msg("%s", err.msg);
	inf = &ts.cls[klass(&ts, "inference")];
	printf("# gang: jobs in the way done by %lld s, 8 whole nodes free at %lld s, started at %lld s; inference %zu/%u started, p99 wait %lld ms\n",
	       (long long)g.all_done_at / 1000,
	       (long long)g.whole_free_at / 1000, (long long)g.started_at / 1000,
	       inf->nr_waits, inf->submitted, (long long)kerf_ts_wait_pct(inf, 99));
	assert_true(g.started_at > 300 * 1000);        /* it did wait */
	assert_true(g.whole_free_at >= 0);
	/* it starts at the first cycle once 64 GPUs (8 nodes) are free */
	assert_true(g.started_at >= g.whole_free_at &&
		    g.started_at <= g.whole_free_at + sc.cycle_ms);
	/* and the notebooks that kept arriving never took those nodes: they
	 * were whole by the time the jobs in the way were done */
	assert_true(g.all_done_at >= 0 && g.whole_free_at <= g.all_done_at);
	/* inference arriving meanwhile was admitted, within its SLO */
	assert_int_equal(inf->nr_waits, inf->submitted);
	assert_int_equal(kerf_ts_slo_ppm(inf), 1000000);
	kerf_timesim_release(&ts);
	kerf_scenario_release(&sc);
}

/* When each workload first finished, by id (-1: never). */
struct finish_watch {
	int64_t at[256];
};

static int watch_finish(void *ctx, struct kerf_timesim *ts,
			const struct kerf_event *ev)
{
	struct finish_watch *f = ctx;

	check_state(NULL, ts, ev);
	for (size_t i = 0; i < ts->st.nr_wl; i++) {
		const struct kerf_workload *w = ts->st.wl[i];

		if (w->id < 256 && w->state == KERF_WL_FINISHED && f->at[w->id] < 0)
			f->at[w->id] = ts->now_ms;
	}
	return 0;
}

static void run_watching_finishes(struct kerf_timesim *ts,
				  const struct kerf_scenario *sc,
				  struct finish_watch *f)
{
	struct kerf_err err = { 0 };

	for (int i = 0; i < 256; i++)
		f->at[i] = -1;
	if (kerf_timesim_init(ts, sc, &err) < 0)
		fail_msg("%s", err.msg);
	/* the checks below read finished workloads */
	ts->keep_finished = true;
	ts->hook = watch_finish;
	ts->hook_ctx = f;
	if (kerf_timesim_run(ts, &err) < 0)
		fail_msg("%s", err.msg);
}

/* 4. Budget exhaustion holds a tenant's new work and lets running work
 * finish. */
static void test_budget_holds_new_work(void **state)
{
	struct kerf_scenario sc;
	struct kerf_timesim ts;
	struct finish_watch f;
	int64_t exhausted = -1;
	int started = 0, held = 0, running_at_exhaustion = 0;

	(void)state;
	load(&sc, "budget.yaml");
	run_watching_finishes(&ts, &sc, &f);
	for (uint64_t i = 0; i < ts.st.nr_notices && i < KERF_NOTICES; i++)
		if (ts.st.notices[i].kind == KERF_NOTICE_BUDGET &&
		    ts.st.notices[i].pct == 100)
			exhausted = ts.st.notices[i].at_ms;
	assert_true(exhausted > 0);
	for (size_t i = 0; i < ts.st.nr_wl; i++) {
		const struct kerf_workload *w = ts.st.wl[i];

		if (w->state == KERF_WL_PENDING) {
			assert_int_equal(w->pending, KERF_PENDING_BUDGET);
			assert_non_null(strstr(w->pending_text, "spent its GPU-hour budget"));
			held++;
			continue;
		}
		started++;
		/* nothing new started once the budget was spent */
		assert_true(w->start_ms <= exhausted);
		/* what was running then ran to its end, untouched */
		assert_int_equal(w->state, KERF_WL_FINISHED);
		assert_int_equal(kerf_wl_pre(w)->nr_preemptions, 0);
		assert_true(f.at[w->id] - w->start_ms >= 3600 * 1000);
		running_at_exhaustion += f.at[w->id] > exhausted;
	}
	printf("# budget spent at %lld s: %d started, %d held, %d ran on past it\n",
	       (long long)exhausted / 1000, started, held, running_at_exhaustion);
	assert_true(held > 0 && running_at_exhaustion > 0);
	kerf_timesim_release(&ts);
	kerf_scenario_release(&sc);
}

/* 5. An idle notebook holding a GPU is reclaimed after the configured
 * time. */
static void test_idle_notebook_reclaimed(void **state)
{
	struct kerf_scenario sc;
	struct kerf_timesim ts;
	struct finish_watch f;

	(void)state;
	load(&sc, "idle.yaml");
	run_watching_finishes(&ts, &sc, &f);
	for (size_t i = 0; i < ts.st.nr_wl; i++) {
		const struct kerf_workload *w = ts.st.wl[i];

		if (!strncmp(w->key, "notebook-", 9)) {
			int64_t gone = f.at[w->id] - w->start_ms;

			printf("# %s reclaimed %lld s after it started\n", w->key,
			       (long long)gone / 1000);
			assert_int_equal(w->state, KERF_WL_FINISHED);
			assert_true(w->idle_reclaim);
			/* 30 min idle + 60 s grace, to the next cycle */
			assert_true(gone >= (1800 + 60) * 1000 &&
				    gone <= (1800 + 60) * 1000 + 2 * sc.cycle_ms);
		} else if (!strncmp(w->key, "train-", 6)) {
			assert_false(w->idle_reclaim);       /* busy */
			assert_int_equal(f.at[w->id] - w->start_ms, 3 * 3600 * 1000);
		} else {
			assert_false(w->idle_reclaim);       /* exempt class */
			assert_int_equal(w->state, KERF_WL_RUNNING);
		}
	}
	kerf_timesim_release(&ts);
	kerf_scenario_release(&sc);
}

/*
 * Isolation levels: no GPU is shared against a tenant's level (the state
 * check runs after every event), each GPU holds the fractions the levels
 * allow, and the pod that fits only on GPUs it may not share waits saying
 * so.
 */
static const struct kerf_workload *find_wl(const struct kerf_timesim *ts, const char *name)
{
	for (size_t i = 0; i < ts->st.nr_wl; i++)
		if (!strcmp(ts->st.wl[i]->key, name))
			return ts->st.wl[i];
	fail_msg("no workload %s", name);
	return NULL;
}

/* The GPU (node * 16 + gpu) a one-pod workload runs on. */
static int gpu_of(const struct kerf_workload *w)
{
	assert_int_equal(w->state, KERF_WL_RUNNING);
	assert_int_equal(w->nr_bound, 1);
	return (int)w->pods[0].b.node * 16 + __builtin_ctz(w->pods[0].b.gpus);
}

static void test_isolation_levels(void **state)
{
	static const char *const groups[] = { "bank", "lab", "web" };
	struct kerf_scenario sc;
	struct kerf_timesim ts;
	char name[32];
	int gpu[3], secure, lab2;
	const struct kerf_workload *bank2;

	(void)state;
	load(&sc, "isolation.yaml");
	run(&ts, &sc);
	for (int k = 0; k < 3; k++) {
		snprintf(name, sizeof(name), "%s-0", groups[k]);
		gpu[k] = gpu_of(find_wl(&ts, name));
		for (int i = 1; i < (k == 0 ? 4 : 3); i++) {
			snprintf(name, sizeof(name), "%s-%d", groups[k], i);
			assert_int_equal(gpu_of(find_wl(&ts, name)), gpu[k]);
		}
	}
	secure = gpu_of(find_wl(&ts, "secure-0"));
	lab2 = gpu_of(find_wl(&ts, "lab2-0"));
	printf("# GPUs: bank %d, lab %d (+lab2 %d), web %d, secure %d\n", gpu[0], gpu[1],
	       lab2, gpu[2], secure);
	assert_true(gpu[0] != gpu[1] && gpu[0] != gpu[2] && gpu[1] != gpu[2]);
	assert_true(secure != gpu[0] && secure != gpu[1] && secure != gpu[2]);
	assert_int_equal(lab2, gpu[1]);
	/* the hardware tenant's fraction became a whole GPU, charged as one */
	assert_int_equal(find_wl(&ts, "secure-0")->sets[0].req.gpu_milli, KERF_GPU_MILLI);
	bank2 = find_wl(&ts, "bank2-0");
	printf("# bank2: %s\n", bank2->pending_text);
	assert_int_equal(bank2->state, KERF_WL_PENDING);
	assert_non_null(strstr(bank2->pending_text, "isolation"));
	kerf_timesim_release(&ts);
	kerf_scenario_release(&sc);
}

/* The MIG instance a one-pod workload runs on, as "node/gpu/profile@start". */
static void mig_of(const struct kerf_timesim *ts, const struct kerf_workload *w,
		   char *out, size_t len)
{
	const struct kerf_cluster *c = &ts->st.cluster;
	const struct kerf_node *n = &c->nodes[w->pods[0].b.node];
	int pi = kerf_pod_mig_profile(c, n, &w->sets[0].req);

	assert_true(pi >= 0);
	snprintf(out, len, "%s/%d/%s@%u", n->name, __builtin_ctz(w->pods[0].b.gpus),
		 c->models[n->model].mig->profiles[pi].name, w->pods[0].b.mig_start);
}

static void test_mig_in_the_core(void **state)
{
	static const char *const names[] = { "lab-0", "lab-1", "serve-0", "serve-1",
					     "serve-2", "serve-3", "secure-0" };
	struct kerf_scenario sc;
	struct kerf_timesim ts;
	char where[7][64];
	const struct kerf_workload *big, *train;

	(void)state;
	load(&sc, "mig.yaml");
	sc.horizon_ms = 30 * 60 * 1000;   /* before lab's work ends */
	run(&ts, &sc);
	for (int i = 0; i < 7; i++) {
		const struct kerf_workload *w = find_wl(&ts, names[i]);

		assert_int_equal(w->state, KERF_WL_RUNNING);
		mig_of(&ts, w, where[i], sizeof(where[i]));
		printf("# %s on %s, charged %d milli\n", names[i], where[i],
		       w->sets[0].req.gpu_milli);
	}
	big = find_wl(&ts, "big-0");
	printf("# big: %s\n", big->pending_text);
	assert_int_equal(big->state, KERF_WL_PENDING);
	assert_non_null(strstr(big->pending_text, "MIG instances in use leave no room"));
	train = find_wl(&ts, "train-0");
	assert_string_equal(ts.st.cluster.nodes[train->pods[0].b.node].name, "full-0");
	/* lab's two 3g share a GPU; serve and secure the other */
	assert_memory_equal(where[0], "mig-0/0/", 8);
	assert_memory_equal(where[1], "mig-0/0/", 8);
	for (int i = 2; i < 7; i++)
		assert_memory_equal(where[i], "mig-0/1/", 8);
	kerf_timesim_release(&ts);

	/* the whole run: big gets lab's GPU, carved again, once lab is done */
	sc.horizon_ms = 90 * 60 * 1000;
	run(&ts, &sc);
	big = find_wl(&ts, "big-0");
	assert_int_equal(big->state, KERF_WL_RUNNING);
	{
		char at[64];
		const struct kerf_node *n = &ts.st.cluster.nodes[0];

		mig_of(&ts, big, at, sizeof(at));
		printf("# big started at %" PRId64 " s on %s; node mig-0: %u instances created, %u destroyed\n",
		       big->start_ms / 1000, at, n->mig->nr_created, n->mig->nr_destroyed);
		assert_string_equal(at, "mig-0/0/7g.80gb@0");
		assert_true(big->start_ms >= 3600 * 1000 && big->start_ms <= 3620 * 1000);
		/* 2 x 3g, 4 x 1g, 1 x 2g, then the 7g after both 3g went */
		assert_int_equal(n->mig->nr_created, 8);
		assert_int_equal(n->mig->nr_destroyed, 2);
	}
	for (int i = 2; i < 7; i++) {
		char now[64];

		mig_of(&ts, find_wl(&ts, names[i]), now, sizeof(now));
		assert_string_equal(now, where[i]);
	}
	kerf_timesim_release(&ts);
	kerf_scenario_release(&sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_holds_new_work),
		cmocka_unit_test(test_idle_notebook_reclaimed),
		cmocka_unit_test(test_gang_waits_whole),
		cmocka_unit_test(test_production_meets_slo_under_flood),
		cmocka_unit_test(test_reclaim_through_handshake),
		cmocka_unit_test(test_fair_share_2_to_1),
		cmocka_unit_test(test_isolation_levels),
		cmocka_unit_test(test_mig_in_the_core),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
