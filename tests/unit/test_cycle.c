/*
 * test_cycle: the scheduling cycle.  Gangs are admitted whole or not at all
 * (nothing held while they wait), quota limits and borrowing follow the
 * claims rule, non-preemptible work stays within nominal, classes are
 * checked, topology constraints hold, order is priority then fair share,
 * and every pending workload says why.  kerf_state_check passes after
 * every cycle.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/cycle.h"
#include "sched_fixture.h"

/*
 * n nodes of 8 GPUs (model "h100"), 64 cores, 512 GiB; cluster -> org ->
 * team-a (weight 2, nominal_a GPU milli), team-b (nominal_b, lending
 * lend_b); org's nominal covers its children and it borrows nothing.
 */
static void setup(struct fx *f, int n, int64_t nominal_a, int64_t nominal_b,
		  int64_t lend_b)
{
	struct kerf_tenants *tt = &f->tenants;
	struct kerf_quota q, *org;

	fx_begin(f, n, 0, NULL, NULL);
	f->org = kerf_tenants_add(tt, "org", KERF_TENANT_ROOT, NULL, 1, NULL);
	assert_true(f->org > 0);
	kerf_quota_default(&q);
	q.nominal.v[KERF_RES_GPU0] = nominal_a;
	q.nominal.v[KERF_RES_CPU] = KERF_QTY_INF / 4;
	q.nominal.v[KERF_RES_MEM] = KERF_QTY_INF / 4;
	/* org's nominal covers its children */
	org = &tt->t[f->org].quota;
	org->nominal.v[KERF_RES_GPU0] = nominal_a + nominal_b;
	org->nominal.v[KERF_RES_CPU] = KERF_QTY_INF / 2;
	org->nominal.v[KERF_RES_MEM] = KERF_QTY_INF / 2;
	org->borrow_limit.v[KERF_RES_GPU0] = 0; /* org: no more */
	f->a = kerf_tenants_add(tt, "team-a", f->org, &q, 2, NULL);
	q.nominal.v[KERF_RES_GPU0] = nominal_b;
	q.lend_limit.v[KERF_RES_GPU0] = lend_b;
	f->b = kerf_tenants_add(tt, "team-b", f->org, &q, 1, NULL);
	f->prod = fx_add_class(f, "production", 1000, false, 0);
	f->batch = fx_add_class(f, "batch", 100, true, 0);
	fx_start(f);
}

/* A gang of pods x gpus whole GPUs. */
static int submit(struct fx *f, int tenant, int cls, uint32_t pods, int gpus,
		  enum kerf_topology topo, int64_t now)
{
	struct kerf_workload w = fx_gang(tenant, cls, pods, gpus);
	char key[32];

	w.topology = topo;
	snprintf(key, sizeof(key), "w%u", f->st.next_id);
	return kerf_state_submit(&f->st, key, &w, now, NULL);
}

static int64_t gpus_in_use(const struct fx *f)
{
	return kerf_cluster_gpu_milli_used(&f->st.cluster) / 1000;
}

static void test_gang_waits_whole_and_holds_nothing(void **state)
{
	struct fx f;
	struct kerf_workload *w;
	int id;

	(void)state;
	setup(&f, 6, 64000, 0, KERF_QTY_INF);   /* 48 GPUs, quota for 64 */
	id = submit(&f, f.a, f.batch, 8, 8, KERF_TOPO_ANY, 0);
	assert_int_equal(fx_cycle(&f, 0).nr_capacity, 1);
	w = kerf_state_find(&f.st, (uint32_t)id);
	assert_int_equal(w->state, KERF_WL_PENDING);
	assert_int_equal(w->pending, KERF_PENDING_CAPACITY);
	assert_non_null(strstr(w->pending_text, "needs 8 of 8 pods"));
	assert_int_equal(gpus_in_use(&f), 0);  /* nothing held */
	/* smaller work is admitted meanwhile */
	id = submit(&f, f.a, f.batch, 1, 8, KERF_TOPO_ANY, 1);
	assert_int_equal(fx_cycle(&f, 1).nr_admitted, 1);
	assert_int_equal(gpus_in_use(&f), 8);
	fx_teardown(&f);
}

static void test_quota_limit_and_reason(void **state)
{
	struct fx f;
	struct kerf_workload *w;
	int id;

	(void)state;
	/* b lends nothing: a can never pass its nominal of 8 GPUs */
	setup(&f, 4, 8000, 16000, 0);
	f.st.tenants.t[f.a].quota.borrow_limit.v[KERF_RES_GPU0] = KERF_QTY_INF;
	id = submit(&f, f.a, f.batch, 2, 8, KERF_TOPO_ANY, 0);
	assert_int_equal(fx_cycle(&f, 0).nr_quota, 1);
	w = kerf_state_find(&f.st, (uint32_t)id);
	assert_int_equal(w->pending, KERF_PENDING_QUOTA);
	assert_non_null(strstr(w->pending_text, "tenant 'org' gpu:h100 would reach"));
	assert_int_equal(gpus_in_use(&f), 0);
	fx_teardown(&f);
}

static void test_borrowing_from_idle_sibling(void **state)
{
	struct fx f;

	(void)state;
	/* b lends everything: a may use b's idle 16 GPUs */
	setup(&f, 4, 8000, 16000, KERF_QTY_INF);
	submit(&f, f.a, f.batch, 3, 8, KERF_TOPO_ANY, 0);
	assert_int_equal(fx_cycle(&f, 0).nr_admitted, 1);
	assert_int_equal(f.st.tenants.t[f.a].usage.v[KERF_RES_GPU0], 24000);
	/* b wants 16 of its own: only 8 are free, b's claim would pass org */
	submit(&f, f.b, f.batch, 2, 8, KERF_TOPO_ANY, 1);
	assert_int_equal(fx_cycle(&f, 1).nr_quota, 1);
	fx_teardown(&f);
}

static void test_nonpreemptible_within_nominal(void **state)
{
	struct fx f;
	struct kerf_workload *w;
	int id;

	(void)state;
	setup(&f, 4, 8000, 16000, KERF_QTY_INF);
	id = submit(&f, f.a, f.prod, 2, 8, KERF_TOPO_ANY, 0);
	assert_int_equal(fx_cycle(&f, 0).nr_quota, 1);
	w = kerf_state_find(&f.st, (uint32_t)id);
	assert_non_null(strstr(w->pending_text, "non-preemptible work must fit in nominal"));
	id = submit(&f, f.a, f.prod, 1, 8, KERF_TOPO_ANY, 1);
	fx_cycle(&f, 1);
	assert_int_equal(kerf_state_find(&f.st, (uint32_t)id)->state, KERF_WL_RUNNING);
	assert_int_equal(f.st.tenants.t[f.a].usage_np.v[KERF_RES_GPU0], 8000);
	fx_teardown(&f);
}

static void test_class_not_allowed(void **state)
{
	struct fx f;
	int id;

	(void)state;
	setup(&f, 2, 8000, 8000, KERF_QTY_INF);
	f.st.tenants.t[f.b].allowed_classes = 1u << f.batch;
	id = submit(&f, f.b, f.prod, 1, 1, KERF_TOPO_ANY, 0);
	assert_int_equal(fx_cycle(&f, 0).nr_other, 1);
	assert_int_equal(kerf_state_find(&f.st, (uint32_t)id)->pending,
			 KERF_PENDING_CLASS);
	fx_teardown(&f);
}

static void test_priority_goes_first(void **state)
{
	struct fx f;
	int lo, hi;

	(void)state;
	setup(&f, 1, 8000, 8000, KERF_QTY_INF);
	lo = submit(&f, f.a, f.batch, 1, 8, KERF_TOPO_ANY, 0);
	hi = submit(&f, f.b, f.prod, 1, 8, KERF_TOPO_ANY, 5);
	fx_cycle(&f, 10);
	assert_int_equal(kerf_state_find(&f.st, (uint32_t)hi)->state, KERF_WL_RUNNING);
	assert_int_equal(kerf_state_find(&f.st, (uint32_t)lo)->state, KERF_WL_PENDING);
	fx_teardown(&f);
}

static void test_finish_gives_back(void **state)
{
	struct fx f;
	int id;

	(void)state;
	setup(&f, 2, 16000, 0, KERF_QTY_INF);
	id = submit(&f, f.a, f.batch, 2, 8, KERF_TOPO_ANY, 0);
	fx_cycle(&f, 0);
	assert_int_equal(gpus_in_use(&f), 16);
	assert_int_equal(kerf_state_finish(&f.st, (uint32_t)id, 5, NULL), 0);
	assert_int_equal(gpus_in_use(&f), 0);
	assert_int_equal(f.st.tenants.t[f.a].usage.v[KERF_RES_GPU0], 0);
	assert_int_equal(kerf_state_check(&f.st, NULL), 0);
	assert_int_equal(kerf_state_finish(&f.st, (uint32_t)id, 6, NULL), -KERF_EINVAL);
	fx_teardown(&f);
}

static void test_topology_node_and_nvlink(void **state)
{
	struct fx f;
	struct kerf_workload *w;
	int id;

	(void)state;
	setup(&f, 4, 64000, 0, KERF_QTY_INF);
	/* fragment node 0 so that a two-pod gang cannot share it */
	submit(&f, f.a, f.batch, 1, 5, KERF_TOPO_ANY, 0);
	fx_cycle(&f, 0);
	id = submit(&f, f.a, f.batch, 2, 4, KERF_TOPO_NODE, 1);
	fx_cycle(&f, 1);
	w = kerf_state_find(&f.st, (uint32_t)id);
	assert_int_equal(w->state, KERF_WL_RUNNING);
	assert_int_equal(w->pods[0].b.node, w->pods[1].b.node);
	assert_int_not_equal(w->pods[0].b.node, 0);
	/* nodes 2 and 3 form a domain; nodes 0 and 1 are alone */
	kerf_cluster_set_domain(&f.st.cluster, 2, 7);
	kerf_cluster_set_domain(&f.st.cluster, 3, 7);
	id = submit(&f, f.a, f.batch, 2, 8, KERF_TOPO_NVLINK, 2);
	fx_cycle(&f, 2);
	w = kerf_state_find(&f.st, (uint32_t)id);
	assert_int_equal(w->state, KERF_WL_RUNNING);
	assert_int_equal(f.st.cluster.nodes[w->pods[0].b.node].domain, 7);
	assert_int_equal(f.st.cluster.nodes[w->pods[1].b.node].domain, 7);
	/* no domain has two free nodes left: a second one waits */
	id = submit(&f, f.a, f.batch, 2, 1, KERF_TOPO_NVLINK, 3);
	fx_cycle(&f, 3);
	w = kerf_state_find(&f.st, (uint32_t)id);
	assert_int_equal(w->state, KERF_WL_RUNNING);  /* node 0 alone has 3 */
	assert_int_equal(w->pods[0].b.node, 0);
	assert_int_equal(w->pods[1].b.node, 0);
	id = submit(&f, f.a, f.batch, 2, 2, KERF_TOPO_NVLINK, 4);
	fx_cycle(&f, 4);
	w = kerf_state_find(&f.st, (uint32_t)id);
	assert_int_equal(w->state, KERF_WL_PENDING);
	assert_non_null(strstr(w->pending_text, "in one NVLink domain"));
	fx_teardown(&f);
}

static void test_fair_share_orders_tenants(void **state)
{
	struct fx f;
	int a2, b1;

	(void)state;
	setup(&f, 1, 8000, 8000, KERF_QTY_INF);
	/* a already holds 4 GPUs; b holds none: b goes first at equal class */
	submit(&f, f.a, f.batch, 1, 4, KERF_TOPO_ANY, 0);
	fx_cycle(&f, 0);
	a2 = submit(&f, f.a, f.batch, 1, 4, KERF_TOPO_ANY, 1);
	b1 = submit(&f, f.b, f.batch, 1, 4, KERF_TOPO_ANY, 2);
	fx_cycle(&f, 3);
	assert_int_equal(kerf_state_find(&f.st, (uint32_t)b1)->state, KERF_WL_RUNNING);
	assert_int_equal(kerf_state_find(&f.st, (uint32_t)a2)->state, KERF_WL_PENDING);
	fx_teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gang_waits_whole_and_holds_nothing),
		cmocka_unit_test(test_quota_limit_and_reason),
		cmocka_unit_test(test_borrowing_from_idle_sibling),
		cmocka_unit_test(test_nonpreemptible_within_nominal),
		cmocka_unit_test(test_class_not_allowed),
		cmocka_unit_test(test_priority_goes_first),
		cmocka_unit_test(test_finish_gives_back),
		cmocka_unit_test(test_topology_node_and_nvlink),
		cmocka_unit_test(test_fair_share_orders_tenants),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
