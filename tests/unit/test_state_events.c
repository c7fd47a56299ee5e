/*
 * test_state_events: the state driven as a controller drives it.  Every
 * event refuses bad input with a message naming the field and the reason
 * and changes nothing then: keys, adoption (pod counts, bindings that do
 * not fit or break the topology), forget of running work, checkpoints in
 * the future, tenants that cannot take children or leave.  What events
 * decide comes out as records: EVICT for work on a node that is lost,
 * removed or reshaped, CANCEL for the victims of a withdrawn preemptor,
 * BIND per pod, PENDING only when a reason changes.  The root's capacity
 * follows the nodes; removed tenants and nodes free their names; a
 * hardware tenant's fraction is sized by the MIG model's own slices.
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

static int64_t root_gpu(const struct fx *f)
{
	return f->st.tenants.t[KERF_TENANT_ROOT].quota.nominal.v[GPU];
}

static void test_keys(void **state)
{
	struct fx f;
	struct kerf_err err = { 0 };
	struct kerf_workload w;
	char long_key[400];

	(void)state;
	setup(&f);
	w = fx_gang(f.a, f.batch, 1, 1);
	assert_int_equal(kerf_state_submit(&f.st, "", &w, 0, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "workload key: must not be empty");
	kerf_err_clear(&err);
	assert_int_equal(kerf_state_submit(&f.st, "ns/a\nb", &w, 0, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "workload key 'ns/a\\x0ab': holds a control character");
	memset(long_key, 'k', sizeof(long_key) - 1);
	long_key[sizeof(long_key) - 1] = '\0';
	kerf_err_clear(&err);
	assert_int_equal(kerf_state_submit(&f.st, long_key, &w, 0, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "longer than 317 bytes"));
	/* the longest key a namespace/name can make is fine */
	long_key[317] = '\0';
	assert_true(kerf_state_submit(&f.st, long_key, &w, 0, NULL) > 0);
	assert_int_equal(kerf_state_submit(&f.st, "ns/x", &w, 5, NULL), 2);
	kerf_err_clear(&err);
	assert_int_equal(kerf_state_submit(&f.st, "ns/x", &w, 0, &err), -KERF_EEXIST);
	assert_string_equal(err.msg, "workload 'ns/x': already known");
	assert_int_equal(f.st.nr_wl, 2);
	assert_int_equal(kerf_state_find_key(&f.st, "ns/x")->submit_ms, 5);
	assert_int_equal(f.st.tenants.t[f.a].nr_pending, 2);
	assert_int_equal(f.st.tenants.t[f.a].pending_gpu_milli, 2000);
	fx_state_ok(&f);
	fx_teardown(&f);
}

static void test_adopt(void **state)
{
	struct fx f;
	struct kerf_err err = { 0 };
	struct kerf_workload w;
	struct kerf_wl_pod pods[3] = {
		{ .set = 0, .b = { .node = 0, .gpus = 0x03 } },
		{ .set = 0, .b = { .node = 1, .gpus = 0x03 } },
	};
	int id;

	(void)state;
	setup(&f);
	w = fx_gang(f.a, f.batch, 2, 2);
	id = kerf_state_adopt(&f.st, "ns/train", &w, 100, 200, pods, 2, &err);
	assert_true(id > 0);
	assert_int_equal(fx_wl(&f, (uint32_t)id)->state, KERF_WL_RUNNING);
	assert_int_equal(fx_wl(&f, (uint32_t)id)->start_ms, 200);
	assert_int_equal(fx_wl(&f, (uint32_t)id)->submit_ms, 100);
	assert_true(fx_wl(&f, (uint32_t)id)->observed);
	assert_int_equal(f.st.tenants.t[f.a].usage.v[GPU], 4000);
	assert_int_equal(f.st.cluster.nodes[0].nr_gpus_idle, 6);
	fx_state_ok(&f);

	/* too few pods for its gang */
	kerf_err_clear(&err);
	assert_int_equal(kerf_state_adopt(&f.st, "ns/b", &w, 0, 0, pods, 1, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "workload 'ns/b': 1 pods running, needs 2 to 2");
	/* a pod set it does not have */
	pods[2] = (struct kerf_wl_pod){ .set = 3, .b = { .node = 0, .gpus = 0x30 } };
	kerf_err_clear(&err);
	assert_int_equal(kerf_state_adopt(&f.st, "ns/b", &w, 0, 0, pods + 1, 2, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "workload 'ns/b': pod 1: pod set 3 is not there or has fewer pods");
	/* GPUs already held: the second pod does not fit, nothing is kept */
	pods[2] = (struct kerf_wl_pod){ .set = 0, .b = { .node = 1, .gpus = 0x06 } };
	pods[1].b.gpus = 0x0c;
	kerf_err_clear(&err);
	assert_int_equal(kerf_state_adopt(&f.st, "ns/b", &w, 0, 0, pods + 1, 2, &err),
			 -KERF_ERANGE);
	assert_string_equal(err.msg, "workload 'ns/b': pod 1 does not fit: binding on 'n1': GPU 1 overcommitted");
	assert_int_equal(f.st.cluster.nodes[1].nr_gpus_idle, 6);
	assert_null(kerf_state_find_key(&f.st, "ns/b"));
	/* the same key twice */
	kerf_err_clear(&err);
	assert_int_equal(kerf_state_adopt(&f.st, "ns/train", &w, 0, 0, pods, 2, &err),
			 -KERF_EEXIST);
	/* one node only, but its pods are on two */
	w.topology = KERF_TOPO_NODE;
	pods[0].b.gpus = 0x30;
	pods[1].b.gpus = 0x30;
	kerf_err_clear(&err);
	assert_int_equal(kerf_state_adopt(&f.st, "ns/c", &w, 0, 0, pods, 2, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "workload 'ns/c': its pods break its topology constraint");
	assert_int_equal(f.st.cluster.nodes[0].nr_gpus_idle, 6);
	fx_state_ok(&f);
	fx_teardown(&f);
}

/* Adopted work is charged even when its quota was lowered meanwhile. */
static void test_adopt_over_quota(void **state)
{
	struct kerf_quota q[2];
	struct fx f;
	struct kerf_workload w;
	struct kerf_wl_pod pods[1] = { { .set = 0, .b = { .node = 0, .gpus = 0xff } } };

	(void)state;
	kerf_quota_default(&q[0]);
	kerf_quota_default(&q[1]);
	q[0].nominal.v[GPU] = 2000;
	q[0].borrow_limit.v[GPU] = 0;
	fx_begin(&f, 2, 2, NULL, q);
	f.batch = fx_add_class(&f, "batch", 100, true, 1000);
	fx_start(&f);
	w = fx_gang(f.a, f.batch, 1, 8);
	assert_true(kerf_state_adopt(&f.st, "ns/big", &w, 0, 0, pods, 1, NULL) > 0);
	assert_int_equal(f.st.tenants.t[f.a].usage.v[GPU], 8000);
	assert_true(fx_wl(&f, 1)->borrowed);
	fx_state_ok(&f);
	/* nothing new for team-a until it is back under */
	fx_submit(&f, f.a, f.batch, 1, 10);
	fx_cycle(&f, 10);
	assert_int_equal(fx_wl(&f, 2)->pending, KERF_PENDING_QUOTA);
	fx_teardown(&f);
}

static void test_forget(void **state)
{
	struct fx f;
	struct kerf_err err = { 0 };
	struct kerf_preempt_plan plan = { .nr = 1 };
	uint32_t v, p;

	(void)state;
	setup(&f);
	v = fx_submit_gang(&f, f.a, f.batch, 1, 8, 0);
	fx_cycle(&f, 0);
	assert_int_equal(kerf_state_forget(&f.st, v, 1, &f.dec, &err), -KERF_EBUSY);
	assert_string_equal(err.msg, "workload 'w1': still running; it must finish first");
	kerf_err_clear(&err);
	assert_int_equal(kerf_state_forget(&f.st, 99, 1, &f.dec, &err), -KERF_ENOTFOUND);
	/* a withdrawn preemptor lets its victim stay */
	p = fx_submit_gang(&f, f.b, f.prod, 1, 8, 5);
	plan.victims[0] = v;
	kerf_decisions_clear(&f.dec);
	assert_int_equal(kerf_preempt_start(&f.st, fx_wl(&f, p), &plan, 5, &f.dec), 0);
	assert_int_equal(fx_count(&f, KERF_DECIDE_PREEMPT, v), 1);
	assert_int_equal(f.dec.d[0].at_ms, 1005);
	assert_int_equal(f.dec.d[0].other, p);
	kerf_decisions_clear(&f.dec);
	assert_int_equal(kerf_state_forget(&f.st, p, 6, &f.dec, NULL), 0);
	assert_int_equal(fx_count(&f, KERF_DECIDE_CANCEL, v), 1);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, v))->preempt_deadline_ms, 0);
	assert_null(kerf_state_find(&f.st, p));
	assert_null(kerf_state_find_key(&f.st, "w2"));
	/* finished work goes for good, its key free again */
	assert_int_equal(kerf_state_finish(&f.st, v, 10, NULL), 0);
	assert_int_equal(kerf_state_forget(&f.st, v, 10, NULL, NULL), 0);
	assert_int_equal(f.st.nr_wl, 0);
	assert_int_equal(f.st.tenants.t[f.a].nr_workloads, 0);
	fx_state_ok(&f);
	fx_teardown(&f);
}

static void test_acks(void **state)
{
	struct fx f;
	struct kerf_err err = { 0 };
	uint32_t id;

	(void)state;
	setup(&f);
	id = fx_submit(&f, f.a, f.batch, 1, 0);
	assert_int_equal(kerf_state_started(&f.st, id, 0, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "workload 'w1': not running");
	fx_cycle(&f, 0);
	assert_int_equal(kerf_state_started(&f.st, id, 30, NULL), 0);
	assert_int_equal(fx_wl(&f, id)->last_checkpoint_ms, 30);
	kerf_err_clear(&err);
	assert_int_equal(kerf_state_checkpointed(&f.st, id, 90, 60, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "workload 'w1': checkpoint at 90 ms is in the future (now 60)");
	assert_int_equal(kerf_state_checkpointed(&f.st, id, 50, 60, NULL), 0);
	/* an older checkpoint never moves it back */
	assert_int_equal(kerf_state_checkpointed(&f.st, id, 40, 60, NULL), 0);
	assert_int_equal(fx_wl(&f, id)->last_checkpoint_ms, 50);
	kerf_err_clear(&err);
	assert_int_equal(kerf_state_finish(&f.st, 77, 60, &err), -KERF_ENOTFOUND);
	fx_teardown(&f);
}

/* The decisions of a cycle: BIND per pod, PENDING only when it changed. */
static void test_cycle_records(void **state)
{
	struct fx f;
	uint32_t a, b;

	(void)state;
	setup(&f);
	a = fx_submit_gang(&f, f.a, f.batch, 3, 4, 0);
	b = fx_submit_gang(&f, f.b, f.batch, 2, 8, 0);
	fx_cycle(&f, 0);
	assert_int_equal(fx_count(&f, KERF_DECIDE_BIND, a), 3);
	assert_int_equal(fx_count(&f, KERF_DECIDE_BIND, b), 0);
	assert_int_equal(fx_count(&f, KERF_DECIDE_PENDING, b), 1);
	for (size_t i = 0; i < f.dec.nr; i++)
		if (f.dec.d[i].kind == KERF_DECIDE_BIND) {
			assert_int_equal(__builtin_popcount(f.dec.d[i].b.gpus), 4);
			assert_int_equal(f.dec.d[i].value, 1000);
		}
	/* nothing changed: the reason is not told again */
	fx_cycle(&f, 10);
	assert_int_equal(f.dec.nr, 0);
	fx_teardown(&f);
}

static void test_node_events(void **state)
{
	struct fx f;
	struct kerf_err err = { 0 };
	struct kerf_node_spec s;
	uint32_t a, b;

	(void)state;
	setup(&f);
	a = fx_submit_gang(&f, f.a, f.batch, 1, 8, 0);
	b = fx_submit_gang(&f, f.b, f.batch, 1, 8, 0);
	fx_cycle(&f, 0);
	assert_int_equal(root_gpu(&f), 16000);
	/* a third node: the root grows */
	kerf_cluster_node_spec(&f.st.cluster, 0, &s);
	s.name = "n2";
	s.rank = 9;
	kerf_decisions_clear(&f.dec);
	assert_int_equal(kerf_state_node_upsert(&f.st, &s, 1, &f.dec, NULL), 2);
	assert_int_equal(root_gpu(&f), 24000);
	assert_int_equal(f.dec.nr, 0);
	/* n0 loses GPUs: what ran there goes back to the queue */
	kerf_cluster_node_spec(&f.st.cluster, 0, &s);
	s.nr_gpus = 4;
	assert_int_equal(kerf_state_node_upsert(&f.st, &s, 2, &f.dec, NULL), 0);
	assert_int_equal(fx_count(&f, KERF_DECIDE_EVICT, a), 1);
	assert_int_equal(f.dec.d[0].reason, KERF_EVICT_NODE_CHANGED);
	assert_true(f.dec.d[0].requeued);
	assert_int_equal(fx_wl(&f, a)->state, KERF_WL_PENDING);
	assert_int_equal(root_gpu(&f), 20000);
	fx_state_ok(&f);
	/* n1 fails: cordoned, its work requeued */
	kerf_decisions_clear(&f.dec);
	assert_int_equal(kerf_state_node_lost(&f.st, 1, 3, &f.dec, NULL), 0);
	assert_int_equal(fx_count(&f, KERF_DECIDE_EVICT, b), 1);
	assert_int_equal(f.dec.d[0].reason, KERF_EVICT_NODE_LOST);
	assert_true(f.st.cluster.nodes[1].cordoned);
	assert_int_equal(root_gpu(&f), 20000);   /* still there */
	/* removed: the slot is free, the name too */
	kerf_decisions_clear(&f.dec);
	assert_int_equal(kerf_state_node_remove(&f.st, 1, 4, &f.dec, NULL), 0);
	assert_int_equal(root_gpu(&f), 12000);
	assert_int_equal(kerf_cluster_find_node(&f.st.cluster, "n1"), -KERF_ENOTFOUND);
	assert_int_equal(kerf_state_node_remove(&f.st, 1, 4, &f.dec, &err), -KERF_ENOTFOUND);
	assert_string_equal(err.msg, "node slot 1: no node");
	fx_state_ok(&f);
	fx_teardown(&f);
}

/* A node removed under a waiting preemptor: its held room is let go. */
static void test_node_remove_lets_go(void **state)
{
	struct fx f;
	struct kerf_preempt_plan plan = { .nr = 1 };
	uint32_t v, p;

	(void)state;
	setup(&f);
	v = fx_submit_gang(&f, f.a, f.batch, 1, 8, 0);
	fx_cycle(&f, 0);
	p = fx_submit_gang(&f, f.b, f.prod, 1, 8, 5);
	plan.victims[0] = v;
	assert_int_equal(kerf_preempt_start(&f.st, fx_wl(&f, p), &plan, 5, &f.dec), 0);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, p))->nr_nominated, 1);
	kerf_decisions_clear(&f.dec);
	assert_int_equal(kerf_state_node_remove(&f.st, fx_wl(&f, v)->pods[0].b.node, 6,
						&f.dec, NULL), 0);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, p))->nr_nominated, 0);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, p))->nr_victims, 0);
	fx_state_ok(&f);
	fx_teardown(&f);
}

static void test_tenant_events(void **state)
{
	struct fx f;
	struct kerf_err err = { 0 };
	struct kerf_tenant_spec s;
	int t;

	(void)state;
	setup(&f);
	fx_submit(&f, f.a, f.batch, 1, 0);
	/* team-a holds work: it cannot take children */
	memset(&s, 0, sizeof(s));
	s.name = "sub";
	s.parent = f.a;
	s.weight = 1;
	kerf_quota_default(&s.quota);
	assert_int_equal(kerf_state_tenant_add(&f.st, &s, &err), -KERF_EBUSY);
	assert_string_equal(err.msg, "tenant 'sub': parent 'team-a' has workloads of its own and cannot take children");
	/* a late tenant under org, with a nominal that does not fit org's */
	s.parent = f.org;
	s.name = "team-c";
	s.quota.nominal.v[GPU] = 4000;
	kerf_err_clear(&err);
	/* org has no nominal, so a child nominal is refused, nothing added */
	assert_int_equal(kerf_state_tenant_add(&f.st, &s, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "tenants under 'org'"));
	assert_int_equal(kerf_tenants_find(&f.st.tenants, "team-c"), -KERF_ENOTFOUND);
	s.quota.nominal.v[GPU] = 0;
	s.weight = 0;
	kerf_err_clear(&err);
	assert_int_equal(kerf_state_tenant_add(&f.st, &s, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "tenant 'team-c': weight must be at least 1");
	s.weight = 3;
	t = kerf_state_tenant_add(&f.st, &s, NULL);
	assert_true(t > f.b);
	assert_int_equal(f.st.tenants.t[t].weight, 3);
	/* work for it, then a cycle: its arrays grew with the tree */
	fx_submit(&f, t, f.batch, 1, 1);
	fx_cycle(&f, 1);
	/* update: the name cannot change */
	kerf_state_tenant_spec(&f.st, t, &s);
	s.weight = 5;
	assert_int_equal(kerf_state_tenant_update(&f.st, t, &s, NULL), 0);
	assert_int_equal(f.st.tenants.t[t].weight, 5);
	s.name = "other";
	kerf_err_clear(&err);
	assert_int_equal(kerf_state_tenant_update(&f.st, t, &s, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "tenant 'team-c': name and parent cannot change (remove it and add it again)");
	/* removal: not while it holds work */
	kerf_err_clear(&err);
	assert_int_equal(kerf_state_tenant_remove(&f.st, t, &err), -KERF_EBUSY);
	assert_string_equal(err.msg, "tenant 'team-c': has 0 children and 1 workloads");
	assert_int_equal(kerf_state_finish(&f.st, 2, 2, NULL), 0);
	assert_int_equal(kerf_state_forget(&f.st, 2, 2, NULL, NULL), 0);
	assert_int_equal(kerf_state_tenant_remove(&f.st, t, NULL), 0);
	assert_int_equal(kerf_tenants_find(&f.st.tenants, "team-c"), -KERF_ENOTFOUND);
	assert_int_equal(f.st.tenants.t[f.org].nr_children, 2);
	kerf_err_clear(&err);
	assert_int_equal(kerf_state_tenant_remove(&f.st, t, &err), -KERF_ENOTFOUND);
	/* the name can be used again: a new slot */
	s.name = "team-c";
	assert_int_equal(kerf_state_tenant_add(&f.st, &s, NULL), t + 1);
	fx_state_ok(&f);
	fx_teardown(&f);
}

/*
 * A hardware-isolated tenant's half GPU on A30s in MIG mode is 2 of their
 * 4 compute slices (not 4 of 7).
 */
static void test_hardware_fraction_by_model_slices(void **state)
{
	struct kerf_cluster c;
	struct kerf_tenants tt;
	struct kerf_classes cl;
	struct kerf_state st;
	struct kerf_priority_class pc = { .name = "b", .value = 1, .preemptible = true };
	struct kerf_workload w = { .nr_sets = 1, .min_count = 1 };
	int a30, t;

	(void)state;
	kerf_cluster_init(&c);
	a30 = kerf_cluster_model(&c, "A30", 24576, NULL);
	assert_true(a30 >= 0);
	assert_int_equal(kerf_cluster_add_node(&c, "n", 32000, 65536, a30, 4, NULL), 0);
	assert_int_equal(kerf_cluster_set_mig(&c, 0, 0xf, NULL), 0);
	assert_int_equal(kerf_tenants_init(&tt, kerf_res_count(&c)), 0);
	t = kerf_tenants_add(&tt, "secure", KERF_TENANT_ROOT, NULL, 1, NULL);
	tt.t[t].isolation = KERF_ISOLATION_HARDWARE;
	kerf_classes_init(&cl);
	assert_int_equal(kerf_classes_add(&cl, &pc, NULL), 0);
	assert_int_equal(kerf_state_init(&st, &c, &tt, &cl, NULL), 0);
	w.tenant = t;
	w.sets[0] = (struct kerf_podset){
		.req = { .cpu_milli = 100, .mem_mib = 100, .nr_gpus = 1, .gpu_milli = 500 },
		.count = 1,
	};
	assert_int_equal(kerf_state_submit(&st, "x", &w, 0, NULL), 1);
	assert_int_equal(kerf_state_find(&st, 1)->sets[0].req.mig_slices, 2);
	/* charged as 2 of 4 slices */
	assert_int_equal(kerf_state_find(&st, 1)->sets[0].req.gpu_milli, 500);
	/* what it asked is kept: resolved again from it, not from the MIG shape */
	assert_non_null(kerf_state_find(&st, 1)->asked);
	assert_int_equal(kerf_workload_asked(kerf_state_find(&st, 1), 0).mig_slices, 0);
	/* a whole GPU is only given its owner: sets[] is what it asked */
	w.sets[0].req.gpu_milli = 1000;
	assert_int_equal(kerf_state_submit(&st, "y", &w, 0, NULL), 2);
	assert_null(kerf_state_find(&st, 2)->asked);
	assert_int_equal(kerf_state_find(&st, 2)->sets[0].req.tenant, (uint32_t)t);
	assert_int_equal(kerf_state_find(&st, 2)->sets[0].req.isolation,
			 KERF_ISOLATION_HARDWARE);
	assert_int_equal(kerf_workload_asked(kerf_state_find(&st, 2), 0).tenant, 0);
	/* MIG off: the half GPU becomes a whole one, the whole one stays */
	assert_int_equal(kerf_cluster_set_mig(&st.cluster, 0, 0, NULL), 0);
	kerf_state_resolve_pending(&st);
	assert_int_equal(kerf_state_find(&st, 1)->sets[0].req.mig_slices, 0);
	assert_int_equal(kerf_state_find(&st, 1)->sets[0].req.gpu_milli, 1000);
	assert_int_equal(kerf_state_find(&st, 2)->sets[0].req.gpu_milli, 1000);
	assert_int_equal(kerf_state_find(&st, 2)->sets[0].req.tenant, (uint32_t)t);
	assert_null(kerf_state_find(&st, 2)->asked);
	kerf_state_release(&st);
}

/*
 * A GPU model that appears after the state was made becomes a quota
 * dimension of every tenant: nothing guaranteed, borrowing unlimited, so
 * a gang can run on the new nodes at once; the root's nominal follows.
 */
static void test_model_late(void **state)
{
	struct fx f;
	struct kerf_err err = { 0 };
	struct kerf_node_spec s;
	int m, r;
	uint32_t a;

	(void)state;
	setup(&f);
	assert_int_equal(f.st.tenants.nr_res, KERF_RES_GPU0 + 1);
	/* junk left in the slot must not leak into the new dimension */
	f.st.tenants.t[f.a].quota.borrow_limit.v[KERF_RES_GPU0 + 1] = 0;
	m = kerf_state_model(&f.st, "b200", 184320, &err);
	assert_int_equal(m, 1);
	r = kerf_res_gpu(m);
	assert_int_equal(f.st.tenants.nr_res, r + 1);
	assert_int_equal(kerf_state_model(&f.st, "b200", 184320, NULL), 1);
	assert_int_equal(kerf_state_model(&f.st, "h100", 0, NULL), 0);
	assert_int_equal(f.st.tenants.nr_res, r + 1);
	assert_true(f.st.tenants.t[f.a].quota.borrow_limit.v[r] == KERF_QTY_INF);
	assert_int_equal(f.st.tenants.t[KERF_TENANT_ROOT].quota.borrow_limit.v[r], 0);
	assert_int_equal(kerf_state_model(&f.st, "", 0, &err), -KERF_EINVAL);
	assert_int_equal(f.st.tenants.nr_res, r + 1);
	memset(&s, 0, sizeof(s));
	s.name = "b0";
	s.rank = 5;
	s.cpu_milli = 64000;
	s.mem_mib = 524288;
	s.model = m;
	s.nr_gpus = 8;
	assert_true(kerf_state_node_upsert(&f.st, &s, 0, &f.dec, NULL) >= 0);
	assert_int_equal(f.st.tenants.t[KERF_TENANT_ROOT].quota.nominal.v[r], 8000);
	fx_state_ok(&f);
	/* a gang of 3 x 8 GPUs: two on h100 nodes, one on the b200 */
	a = fx_submit_gang(&f, f.a, f.batch, 3, 8, 0);
	fx_cycle(&f, 0);
	assert_int_equal(fx_wl(&f, a)->state, KERF_WL_RUNNING);
	assert_int_equal(f.st.tenants.t[f.a].usage.v[r], 8000);
	fx_state_ok(&f);
	fx_teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_adopt),
		cmocka_unit_test(test_adopt_over_quota),
		cmocka_unit_test(test_forget),
		cmocka_unit_test(test_acks),
		cmocka_unit_test(test_cycle_records),
		cmocka_unit_test(test_node_events),
		cmocka_unit_test(test_node_remove_lets_go),
		cmocka_unit_test(test_tenant_events),
		cmocka_unit_test(test_hardware_fraction_by_model_slices),
		cmocka_unit_test(test_model_late),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
