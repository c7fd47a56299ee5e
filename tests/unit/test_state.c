/*
 * test_state: the scheduling state.  Submission validates the workload,
 * its tenant (a leaf) and class, and stores a clean pending copy; the
 * invariant walker catches each kind of corruption (node usage unlike what
 * running workloads hold, pods held by work that is not running, a gang
 * short of min_count, quota usage, non-preemptible usage or own usage
 * unlike the charges); requeue gives everything back, keeps the
 * submission time and says Requeued, and a victim that leaves that way is
 * one less for its preemptor to wait for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/cycle.h"
#include "core/preempt.h"
#include "sched_fixture.h"

#define GPU KERF_RES_GPU0

/* Two nodes of 8 GPUs; cluster -> org -> team-a, team-b. */
#define setup fx_two_teams

static void expect_corrupt(const struct fx *f, const char *msg)
{
	struct kerf_err err = { 0 };

	assert_int_equal(kerf_state_check(&f->st, &err), -KERF_ERANGE);
	assert_string_equal(err.msg, msg);
}

static void expect_refused(struct fx *f, const struct kerf_workload *w,
			   int code, const char *msg)
{
	struct kerf_err err = { 0 };
	size_t nr = f->st.nr_wl;
	uint32_t next = f->st.next_id;

	assert_int_equal(kerf_state_submit(&f->st, "x", w, 0, &err), code);
	assert_string_equal(err.msg, msg);
	assert_int_equal(f->st.nr_wl, nr);
	assert_int_equal(f->st.next_id, next);
}

static void test_init_takes_capacity(void **state)
{
	struct fx f;
	const struct kerf_res *cap;

	(void)state;
	setup(&f);
	cap = &f.st.tenants.t[KERF_TENANT_ROOT].quota.nominal;
	assert_int_equal(cap->v[KERF_RES_CPU], 128000);
	assert_int_equal(cap->v[KERF_RES_MEM], 2 * 524288);
	assert_int_equal(cap->v[GPU], 16000);
	assert_int_equal(f.st.next_id, 1);
	assert_int_equal(f.st.nr_wl, 0);
	fx_state_ok(&f);
	fx_teardown(&f);
}

static void test_submit_stores_clean_copy(void **state)
{
	struct fx f;
	struct kerf_workload w = fx_gang(0, 0, 2, 1), *x;
	struct kerf_wl_pod bogus;
	struct kerf_wl_preempt pre = { .nr_victims = 3, .preempt_deadline_ms = 5 };

	(void)state;
	setup(&f);
	w.tenant = f.a;
	w.class_idx = f.prod;
	/* whatever the caller left in the running fields is dropped */
	w.state = KERF_WL_RUNNING;
	w.pods = &bogus;
	w.nr_bound = 2;
	w.nr_charged = KERF_MAX_RES;
	w.borrowed = true;
	w.pre = &pre;
	w.idle_since_ms = 7;
	w.idle_reclaim = true;
	w.submit_ms = 99;
	w.pending = KERF_PENDING_QUOTA;
	assert_int_equal(kerf_state_submit(&f.st, "x", &w, 42, NULL), 1);
	assert_int_equal(kerf_state_submit(&f.st, "y", &w, 43, NULL), 2);
	x = fx_wl(&f, 1);
	assert_ptr_not_equal(x, &w);
	assert_int_equal(x->id, 1);
	assert_string_equal(x->key, "x");
	assert_ptr_equal(kerf_state_find_key(&f.st, "y"), fx_wl(&f, 2));
	assert_int_equal(x->state, KERF_WL_PENDING);
	assert_null(x->pods);
	assert_int_equal(x->nr_bound, 0);
	assert_null(kerf_wl_charge(x));
	assert_false(x->borrowed);
	assert_null(x->pre);
	assert_int_equal(x->idle_since_ms, -1);
	assert_false(x->idle_reclaim);
	assert_int_equal(x->util_pct, 100);
	assert_int_equal(x->submit_ms, 42);
	assert_int_equal(x->pending, KERF_PENDING_NEW);
	assert_true(x->nonpreemptible);
	assert_int_equal(fx_wl(&f, 2)->submit_ms, 43);
	assert_null(kerf_state_find(&f.st, 3));
	assert_null(kerf_state_find(&f.st, 0));
	w.class_idx = f.batch;
	assert_int_equal(kerf_state_submit(&f.st, "z", &w, 44, NULL), 3);
	assert_false(fx_wl(&f, 3)->nonpreemptible);
	fx_state_ok(&f);
	fx_teardown(&f);
}

static void test_submit_validation_messages(void **state)
{
	struct fx f;
	struct kerf_workload w;

	(void)state;
	setup(&f);
	w = fx_gang(KERF_TENANT_ROOT, 1, 2, 1);
	expect_refused(&f, &w, -KERF_EINVAL,
		       "workload 'x': tenant must be a leaf of the tenant tree");
	w.tenant = f.org;
	expect_refused(&f, &w, -KERF_EINVAL,
		       "workload 'x': tenant must be a leaf of the tenant tree");
	w.tenant = 4;
	expect_refused(&f, &w, -KERF_EINVAL,
		       "workload 'x': tenant must be a leaf of the tenant tree");
	w.tenant = -1;
	expect_refused(&f, &w, -KERF_EINVAL,
		       "workload 'x': tenant must be a leaf of the tenant tree");

	w = fx_gang(f.a, 2, 2, 1);
	expect_refused(&f, &w, -KERF_EINVAL, "workload 'x': unknown priority class");
	w.class_idx = -1;
	expect_refused(&f, &w, -KERF_EINVAL, "workload 'x': unknown priority class");

	w = fx_gang(f.a, f.batch, 2, 1);
	w.nr_sets = 0;
	expect_refused(&f, &w, -KERF_EINVAL, "workload 'x': pod sets: 0, must be 1..8");
	w.nr_sets = 9;
	expect_refused(&f, &w, -KERF_EINVAL, "workload 'x': pod sets: 9, must be 1..8");

	w = fx_gang(f.a, f.batch, 2, 1);
	w.sets[0].count = 0;
	expect_refused(&f, &w, -KERF_EINVAL,
		       "workload 'x': pod set 0: count must be at least 1");

	w = fx_gang(f.a, f.batch, 2, 1);
	w.nr_sets = 2;
	w.sets[1] = w.sets[0];
	w.sets[1].req.gpu_milli = 1500;
	expect_refused(&f, &w, -KERF_EINVAL,
		       "workload 'x': pod set 1: gpu_milli 1500: must be 1..1000 for a GPU pod");

	w = fx_gang(f.a, f.batch, 2, 1);
	w.min_count = 3;
	expect_refused(&f, &w, -KERF_EINVAL, "workload 'x': min_count 3 must be 1..2");
	w.min_count = 0;
	expect_refused(&f, &w, -KERF_EINVAL, "workload 'x': min_count 0 must be 1..2");

	w = fx_gang(f.a, f.batch, 4097, 0);
	w.sets[0].req.gpu_milli = 0;
	expect_refused(&f, &w, -KERF_ELIMIT, "workload 'x': 4097 pods, more than 4096");

	w = fx_gang(f.a, f.batch, 2, 1);
	w.topology = (enum kerf_topology)(KERF_TOPO_PACK + 1);
	expect_refused(&f, &w, -KERF_EINVAL, "workload 'x': unknown topology");

	/* the workload itself is checked before its tenant and class */
	w = fx_gang(KERF_TENANT_ROOT, -1, 2, 1);
	w.min_count = 3;
	expect_refused(&f, &w, -KERF_EINVAL, "workload 'x': min_count 3 must be 1..2");

	w = fx_gang(f.b, f.batch, 4096, 0);
	w.sets[0].req.gpu_milli = 0;
	assert_int_equal(kerf_state_submit(&f.st, "x", &w, 0, NULL), 1);
	fx_teardown(&f);
}

static void test_check_node_usage(void **state)
{
	struct fx f;
	struct kerf_pod gpu_only = { .nr_gpus = 1, .gpu_milli = 1000 };
	struct kerf_pod cpu_only = { .cpu_milli = 500 };
	struct kerf_binding b1 = { .node = 1, .gpus = 1u << 3 };
	struct kerf_binding b0 = { .node = 0, .gpus = 0 };

	(void)state;
	setup(&f);
	fx_submit_gang(&f, f.a, f.batch, 2, 4, 0);
	fx_cycle(&f, 0);
	assert_int_equal(fx_wl(&f, 1)->pods[0].b.node, 0);
	/* a leaked binding: the cluster is consistent, the workloads are not */
	assert_int_equal(kerf_cluster_bind(&f.st.cluster, &gpu_only, b1, NULL), 0);
	assert_int_equal(kerf_cluster_check(&f.st.cluster, NULL), 0);
	expect_corrupt(&f, "node 'n1' GPU 3: 1000 milli in use, running workloads hold 0");
	assert_int_equal(kerf_cluster_unbind(&f.st.cluster, &gpu_only, b1, NULL), 0);
	fx_state_ok(&f);
	assert_int_equal(kerf_cluster_bind(&f.st.cluster, &cpu_only, b0, NULL), 0);
	expect_corrupt(&f, "node 'n0': cpu or memory in use differs from the running workloads");
	assert_int_equal(kerf_cluster_unbind(&f.st.cluster, &cpu_only, b0, NULL), 0);
	fx_state_ok(&f);
	fx_teardown(&f);
}

static void test_check_pods_of_work_not_running(void **state)
{
	struct fx f;

	(void)state;
	setup(&f);
	fx_submit_gang(&f, f.a, f.batch, 1, 1, 0);
	fx_cycle(&f, 0);
	fx_wl(&f, 1)->state = KERF_WL_FINISHED;
	expect_corrupt(&f, "workload 'w1': holds pods but is not running");
	fx_wl(&f, 1)->state = KERF_WL_RUNNING;
	fx_state_ok(&f);
	fx_teardown(&f);
}

static void test_check_gang_whole(void **state)
{
	struct fx f;
	struct kerf_workload *w;

	(void)state;
	setup(&f);
	fx_submit_gang(&f, f.a, f.batch, 3, 2, 0);
	fx_cycle(&f, 0);
	w = fx_wl(&f, 1);
	assert_int_equal(w->nr_bound, 3);
	w->nr_bound = 2;
	expect_corrupt(&f, "workload 'w1': gang not whole: 2 bound, min_count 3");
	w->nr_bound = 3;
	fx_state_ok(&f);
	fx_teardown(&f);
}

static void test_check_quota_usage(void **state)
{
	const char *msg = "tenant 'team-a': quota usage differs from what its running workloads were charged";
	struct fx f;
	struct kerf_workload *w;
	struct kerf_res extra;

	(void)state;
	setup(&f);
	fx_submit_gang(&f, f.a, f.batch, 1, 2, 0);
	fx_cycle(&f, 0);
	w = fx_wl(&f, 1);
	assert_int_equal(kerf_wl_charge(w)[GPU], 2000);
	/* a charge no workload holds: the tree is consistent, the leaf not */
	kerf_res_zero(&extra);
	extra.v[GPU] = 1000;
	kerf_quota_charge(&f.st.tenants, f.a, &extra, false);
	assert_int_equal(kerf_tenants_check(&f.st.tenants, NULL), 0);
	expect_corrupt(&f, msg);
	assert_int_equal(kerf_quota_release(&f.st.tenants, f.a, &extra, false,
					    NULL), 0);
	fx_state_ok(&f);
	/* the workload's record of its charge */
	kerf_wl_charge(w)[KERF_RES_CPU]++;
	expect_corrupt(&f, msg);
	kerf_wl_charge(w)[KERF_RES_CPU]--;
	fx_state_ok(&f);
	/* non-preemptible usage */
	w->nonpreemptible = true;
	expect_corrupt(&f, msg);
	w->nonpreemptible = false;
	/* own usage: borrowed without the own charge taken back */
	w->borrowed = true;
	expect_corrupt(&f, msg);
	w->borrowed = false;
	kerf_quota_release_own(&f.st.tenants, f.a, &extra);
	assert_int_equal(kerf_tenants_check(&f.st.tenants, NULL), 0);
	expect_corrupt(&f, msg);
	kerf_quota_charge_own(&f.st.tenants, f.a, &extra);
	fx_state_ok(&f);
	fx_teardown(&f);
}

static void test_requeue_keeps_submit_time(void **state)
{
	struct fx f;
	struct kerf_err err = { 0 };
	struct kerf_workload *w;
	uint32_t id;

	(void)state;
	setup(&f);
	id = fx_submit_gang(&f, f.a, f.batch, 2, 8, 5);
	fx_cycle(&f, 10);
	w = fx_wl(&f, id);
	assert_int_equal(w->state, KERF_WL_RUNNING);
	assert_int_equal(w->start_ms, 10);
	/* a running workload carries no reason: none allocated */
	assert_ptr_equal(w->pending_text, kerf_wl_no_text);
	assert_int_equal(kerf_cluster_gpu_milli_used(&f.st.cluster), 16000);
	assert_int_equal(kerf_state_requeue(&f.st, id, 20, &err), 0);
	fx_state_ok(&f);
	assert_int_equal(w->state, KERF_WL_PENDING);
	assert_int_equal(w->pending, KERF_PENDING_REQUEUED);
	assert_string_equal(kerf_pending_name(w->pending), "Requeued");
	assert_string_equal(w->pending_text, "lost its pods; waiting to be placed again");
	assert_int_equal(w->submit_ms, 5);
	assert_int_equal(w->nr_bound, 0);
	assert_null(w->pods);
	assert_null(kerf_wl_charge(w));
	assert_int_equal(kerf_cluster_gpu_milli_used(&f.st.cluster), 0);
	for (int t = 0; t < 4; t++)
		assert_int_equal(f.st.tenants.t[t].usage.v[GPU], 0);
	/* only running work can be requeued or finished */
	assert_int_equal(kerf_state_requeue(&f.st, id, 21, &err), -KERF_EINVAL);
	assert_string_equal(err.msg,
			    "workload 'w1': not running");
	kerf_err_clear(&err);
	assert_int_equal(kerf_state_finish(&f.st, 99, 21, &err), -KERF_ENOTFOUND);
	assert_string_equal(err.msg, "workload 99: not found");
	/* it runs again, as submitted at 5 */
	fx_cycle(&f, 30);
	assert_int_equal(w->state, KERF_WL_RUNNING);
	assert_int_equal(w->start_ms, 30);
	assert_int_equal(w->submit_ms, 5);
	assert_int_equal(kerf_state_finish(&f.st, id, 40, NULL), 0);
	assert_int_equal(w->state, KERF_WL_FINISHED);
	fx_state_ok(&f);
	fx_teardown(&f);
}

static void test_requeued_victim_counts_down(void **state)
{
	struct fx f;
	struct kerf_preempt_plan plan = { .nr = 2 };
	uint32_t v1, v2, p;

	(void)state;
	setup(&f);
	v1 = fx_submit_gang(&f, f.a, f.batch, 1, 8, 0);
	v2 = fx_submit_gang(&f, f.a, f.batch, 1, 8, 0);
	fx_cycle(&f, 0);
	p = fx_submit_gang(&f, f.b, f.prod, 1, 8, 10);
	plan.victims[0] = v1;
	plan.victims[1] = v2;
	assert_int_equal(kerf_preempt_start(&f.st, fx_wl(&f, p), &plan, 10, &f.dec), 0);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, p))->nr_victims, 2);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, v1))->preempt_deadline_ms, 1010);
	/* v1's node fails: it leaves without the handshake */
	assert_int_equal(kerf_state_requeue(&f.st, v1, 20, NULL), 0);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, p))->nr_victims, 1);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, v1))->preempt_deadline_ms, 0);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, v1))->preempted_by, 0);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, v1))->nr_preemptions, 0);
	assert_int_equal(kerf_state_finish(&f.st, v2, 30, NULL), 0);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, p))->nr_victims, 0);
	fx_state_ok(&f);
	fx_teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_takes_capacity),
		cmocka_unit_test(test_submit_stores_clean_copy),
		cmocka_unit_test(test_submit_validation_messages),
		cmocka_unit_test(test_check_node_usage),
		cmocka_unit_test(test_check_pods_of_work_not_running),
		cmocka_unit_test(test_check_gang_whole),
		cmocka_unit_test(test_check_quota_usage),
		cmocka_unit_test(test_requeue_keeps_submit_time),
		cmocka_unit_test(test_requeued_victim_counts_down),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
