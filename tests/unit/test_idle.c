/*
 * test_idle: idle reclamation.  Utilisation samples start and end an idle
 * stretch; a stretch as long as the policy's after_ms is reported once,
 * and under checkpoint-evict the workload is asked to checkpoint and
 * leave; exempt classes are never touched and non-preemptible work is
 * only reported; a workload reclaimed for idling finishes (it is not
 * queued again) at its acknowledgement or deadline, and its GPUs go to
 * waiting work in the same cycle.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/cycle.h"
#include "core/idle.h"
#include "core/policy.h"
#include "core/preempt.h"

#define GPU KERF_RES_GPU0

enum { GRACE_MS = 5000, AFTER_MS = 60000 };

struct fx {
	struct kerf_state st;
	struct kerf_policy pol;
	struct kerf_sched s;
	int org, a, b;                      /* tenants */
	int prod, high, batch, notebook;    /* classes */
};

static int add_class(struct kerf_classes *cl, const char *name, int32_t value,
		     bool preemptible)
{
	struct kerf_priority_class pc = {
		.value = value, .preemptible = preemptible,
		.checkpoint_grace_ms = GRACE_MS,
	};

	snprintf(pc.name, sizeof(pc.name), "%s", name);
	return kerf_classes_add(cl, &pc, NULL);
}

/* One node of 8 GPUs; cluster -> org -> team-a, team-b; no quotas. */
static void setup(struct fx *f)
{
	struct kerf_cluster c;
	struct kerf_tenants tt;
	struct kerf_classes cl;

	memset(f, 0, sizeof(*f));
	kerf_cluster_init(&c);
	assert_int_equal(kerf_cluster_model(&c, "h100", 81920, NULL), 0);
	assert_int_equal(kerf_cluster_add_node(&c, "n0", 64000, 524288, 0, 8,
					       NULL), 0);
	assert_int_equal(kerf_tenants_init(&tt, kerf_res_count(&c)), 0);
	f->org = kerf_tenants_add(&tt, "org", KERF_TENANT_ROOT, NULL, 1, NULL);
	f->a = kerf_tenants_add(&tt, "team-a", f->org, NULL, 1, NULL);
	f->b = kerf_tenants_add(&tt, "team-b", f->org, NULL, 1, NULL);
	assert_int_equal(f->b, 3);
	kerf_classes_init(&cl);
	f->prod = add_class(&cl, "production", 1000, false);
	f->high = add_class(&cl, "high", 500, true);
	f->batch = add_class(&cl, "batch", 100, true);
	f->notebook = add_class(&cl, "notebook", 50, true);
	assert_int_equal(f->notebook, 3);
	assert_int_equal(kerf_state_init(&f->st, &c, &tt, &cl, NULL), 0);
	assert_int_equal(kerf_policy_build(&f->pol, "first-fit",
					   &(struct kerf_policy_args){ .cluster = &f->st.cluster },
					   NULL), 0);
	kerf_sched_init(&f->s, &f->pol);
}

static void teardown(struct fx *f)
{
	kerf_sched_release(&f->s);
	kerf_policy_release(&f->pol);
	kerf_state_release(&f->st);
}

static void policy(struct fx *f, int tenant, enum kerf_idle_action action,
		   uint32_t exempt)
{
	f->st.tenants.t[tenant].idle = (struct kerf_idle_policy){
		.action = action, .below_pct = 10, .after_ms = AFTER_MS,
		.exempt_classes = exempt,
	};
}

static uint32_t submit(struct fx *f, int tenant, int cls, int gpus,
		       int64_t now)
{
	struct kerf_workload w = { .tenant = tenant, .class_idx = cls,
				   .nr_sets = 1, .min_count = 1 };
	int id;

	snprintf(w.name, sizeof(w.name), "w%u", f->st.next_id);
	w.sets[0] = (struct kerf_podset){
		.req = { .cpu_milli = 1000, .mem_mib = 1024,
			 .nr_gpus = (uint8_t)gpus, .gpu_milli = 1000 },
		.count = 1,
	};
	id = kerf_state_submit(&f->st, &w, now, NULL);
	assert_true(id > 0);
	return (uint32_t)id;
}

static struct kerf_workload *wl(const struct fx *f, uint32_t id)
{
	struct kerf_workload *w = kerf_state_find(&f->st, id);

	assert_non_null(w);
	return w;
}

static void state_ok(const struct fx *f)
{
	struct kerf_err err = { 0 };

	if (kerf_state_check(&f->st, &err) < 0)
		fail_msg("%s", err.msg);
}

static struct kerf_cycle_stats cycle(struct fx *f, int64_t now)
{
	struct kerf_cycle_stats stats;
	struct kerf_err err = { 0 };

	if (kerf_cycle_run(&f->s, &f->st, now, &stats, &err) < 0)
		fail_msg("%s", err.msg);
	state_ok(f);
	return stats;
}

static void assert_notice(const struct fx *f, uint64_t k, int64_t at_ms,
			  enum kerf_notice_kind kind, int tenant, uint32_t id)
{
	const struct kerf_notice *n = &f->st.notices[k % KERF_NOTICES];

	assert_true(k < f->st.nr_notices);
	assert_int_equal(n->at_ms, at_ms);
	assert_int_equal(n->kind, kind);
	assert_int_equal(n->tenant, tenant);
	assert_int_equal(n->workload, id);
	assert_int_equal(n->pct, 0);
}

static void test_sample_starts_and_clears_stretch(void **state)
{
	struct fx f;
	uint32_t w, wb, pend;

	(void)state;
	setup(&f);
	policy(&f, f.a, KERF_IDLE_NOTIFY, 0);
	w = submit(&f, f.a, f.batch, 1, 0);
	wb = submit(&f, f.b, f.batch, 1, 0);
	cycle(&f, 0);
	pend = submit(&f, f.a, f.batch, 1, 0);
	assert_int_equal(wl(&f, w)->idle_since_ms, -1);
	assert_int_equal(wl(&f, w)->util_pct, 100);
	kerf_idle_sample(&f.st, w, 5, 100);
	assert_int_equal(wl(&f, w)->util_pct, 5);
	assert_int_equal(wl(&f, w)->idle_since_ms, 100);
	kerf_idle_sample(&f.st, w, 0, 200);
	assert_int_equal(wl(&f, w)->idle_since_ms, 100);
	/* at the threshold is not below it */
	kerf_idle_sample(&f.st, w, 10, 300);
	assert_int_equal(wl(&f, w)->util_pct, 10);
	assert_int_equal(wl(&f, w)->idle_since_ms, -1);
	assert_false(wl(&f, w)->idle_notified);
	kerf_idle_sample(&f.st, w, 9, 400);
	assert_int_equal(wl(&f, w)->idle_since_ms, 400);
	/* no policy for team-b: recorded, never idle */
	kerf_idle_sample(&f.st, wb, 0, 100);
	assert_int_equal(wl(&f, wb)->util_pct, 0);
	assert_int_equal(wl(&f, wb)->idle_since_ms, -1);
	/* pending work and unknown ids are ignored */
	kerf_idle_sample(&f.st, pend, 0, 100);
	assert_int_equal(wl(&f, pend)->util_pct, 100);
	assert_int_equal(wl(&f, pend)->idle_since_ms, -1);
	kerf_idle_sample(&f.st, 999, 0, 100);
	teardown(&f);
}

static void test_policy_of_nearest_tenant(void **state)
{
	struct fx f;

	(void)state;
	setup(&f);
	assert_int_equal(kerf_idle_policy_of(&f.st, f.a)->action, KERF_IDLE_NONE);
	policy(&f, f.org, KERF_IDLE_NOTIFY, 0);
	policy(&f, f.a, KERF_IDLE_CHECKPOINT_EVICT, 0);
	assert_ptr_equal(kerf_idle_policy_of(&f.st, f.a), &f.st.tenants.t[f.a].idle);
	assert_ptr_equal(kerf_idle_policy_of(&f.st, f.b),
			 &f.st.tenants.t[f.org].idle);
	assert_int_equal(kerf_idle_policy_of(&f.st, f.b)->action, KERF_IDLE_NOTIFY);
	teardown(&f);
}

static void test_notify_once_per_stretch(void **state)
{
	struct fx f;
	uint32_t w;

	(void)state;
	setup(&f);
	policy(&f, f.org, KERF_IDLE_NOTIFY, 0);
	w = submit(&f, f.a, f.batch, 1, 0);
	cycle(&f, 0);
	kerf_idle_sample(&f.st, w, 5, 100);
	assert_int_equal(kerf_idle_pass(&f.st, 100 + AFTER_MS - 1), 0);
	assert_int_equal(f.st.nr_notices, 0);
	assert_int_equal(kerf_idle_pass(&f.st, 100 + AFTER_MS), 0);
	assert_int_equal(f.st.nr_notices, 1);
	assert_notice(&f, 0, 100 + AFTER_MS, KERF_NOTICE_IDLE, f.a, w);
	assert_true(wl(&f, w)->idle_notified);
	assert_int_equal(kerf_idle_pass(&f.st, 200000), 0);
	assert_int_equal(f.st.nr_notices, 1);
	/* notify never asks the workload to go */
	assert_int_equal(wl(&f, w)->preempt_deadline_ms, 0);
	assert_false(wl(&f, w)->idle_reclaim);
	/* busy again, then idle again: a new stretch, a new notice */
	kerf_idle_sample(&f.st, w, 50, 210000);
	kerf_idle_sample(&f.st, w, 5, 220000);
	assert_int_equal(kerf_idle_pass(&f.st, 220000 + AFTER_MS - 1), 0);
	assert_int_equal(f.st.nr_notices, 1);
	kerf_idle_pass(&f.st, 220000 + AFTER_MS);
	assert_int_equal(f.st.nr_notices, 2);
	assert_notice(&f, 1, 220000 + AFTER_MS, KERF_NOTICE_IDLE, f.a, w);
	assert_int_equal(wl(&f, w)->state, KERF_WL_RUNNING);
	teardown(&f);
}

static void test_checkpoint_evict_starts_handshake(void **state)
{
	struct fx f;
	struct kerf_workload *x;
	uint32_t w, busy;

	(void)state;
	setup(&f);
	policy(&f, f.a, KERF_IDLE_CHECKPOINT_EVICT, 0);
	w = submit(&f, f.a, f.batch, 2, 0);
	busy = submit(&f, f.a, f.batch, 2, 0);
	cycle(&f, 0);
	kerf_idle_sample(&f.st, w, 0, 1000);
	kerf_idle_sample(&f.st, busy, 80, 1000);
	assert_int_equal(kerf_idle_pass(&f.st, 1000 + AFTER_MS - 1), 0);
	assert_int_equal(wl(&f, w)->preempt_deadline_ms, 0);
	assert_int_equal(kerf_idle_pass(&f.st, 1000 + AFTER_MS), 1);
	x = wl(&f, w);
	assert_int_equal(x->preempt_deadline_ms, 1000 + AFTER_MS + GRACE_MS);
	assert_int_equal(x->preempted_by, 0);
	assert_true(x->idle_reclaim);
	assert_int_equal(x->state, KERF_WL_RUNNING);
	assert_int_equal(f.st.nr_notices, 1);
	assert_notice(&f, 0, 1000 + AFTER_MS, KERF_NOTICE_IDLE_EVICT, f.a, w);
	assert_int_equal(wl(&f, busy)->preempt_deadline_ms, 0);
	/* asked once */
	assert_int_equal(kerf_idle_pass(&f.st, 1000 + AFTER_MS + 1), 0);
	assert_int_equal(f.st.nr_notices, 1);
	assert_int_equal(x->preempt_deadline_ms, 1000 + AFTER_MS + GRACE_MS);
	state_ok(&f);
	teardown(&f);
}

static void test_exempt_and_nonpreemptible(void **state)
{
	struct fx f;
	uint32_t nb, np, batch;

	(void)state;
	setup(&f);
	policy(&f, f.a, KERF_IDLE_CHECKPOINT_EVICT, 1u << f.notebook);
	nb = submit(&f, f.a, f.notebook, 1, 0);
	np = submit(&f, f.a, f.prod, 1, 0);
	batch = submit(&f, f.a, f.batch, 1, 0);
	cycle(&f, 0);
	kerf_idle_sample(&f.st, nb, 0, 0);
	kerf_idle_sample(&f.st, np, 0, 0);
	kerf_idle_sample(&f.st, batch, 0, 0);
	assert_int_equal(kerf_idle_pass(&f.st, AFTER_MS), 1);
	/* the exempt class: neither told nor touched */
	assert_false(wl(&f, nb)->idle_notified);
	assert_int_equal(wl(&f, nb)->preempt_deadline_ms, 0);
	/* non-preemptible: told, as plain idle, never evicted */
	assert_true(wl(&f, np)->idle_notified);
	assert_int_equal(wl(&f, np)->preempt_deadline_ms, 0);
	assert_false(wl(&f, np)->idle_reclaim);
	assert_true(wl(&f, batch)->idle_reclaim);
	assert_int_equal(f.st.nr_notices, 2);
	assert_notice(&f, 0, AFTER_MS, KERF_NOTICE_IDLE, f.a, np);
	assert_notice(&f, 1, AFTER_MS, KERF_NOTICE_IDLE_EVICT, f.a, batch);
	assert_int_equal(kerf_idle_pass(&f.st, 10 * AFTER_MS), 0);
	assert_int_equal(f.st.nr_notices, 2);
	assert_int_equal(wl(&f, np)->state, KERF_WL_RUNNING);
	assert_int_equal(wl(&f, nb)->state, KERF_WL_RUNNING);
	teardown(&f);
}

static void test_reclaimed_finishes_at_deadline(void **state)
{
	const int64_t asked = 1000 + AFTER_MS, deadline = asked + GRACE_MS;
	struct fx f;
	struct kerf_workload *x;
	uint32_t w, q;

	(void)state;
	setup(&f);
	policy(&f, f.a, KERF_IDLE_CHECKPOINT_EVICT, 0);
	w = submit(&f, f.a, f.batch, 8, 0);
	cycle(&f, 0);
	wl(&f, w)->last_checkpoint_ms = 30000;
	kerf_idle_sample(&f.st, w, 1, 1000);
	/* the cycle applies the policy */
	q = submit(&f, f.b, f.batch, 8, asked);
	cycle(&f, asked);
	assert_int_equal(wl(&f, w)->preempt_deadline_ms, deadline);
	assert_int_equal(wl(&f, q)->state, KERF_WL_PENDING);
	assert_int_equal(kerf_preempt_expire(&f.st, deadline - 1, NULL), 0);
	assert_int_equal(kerf_preempt_expire(&f.st, deadline, NULL), 1);
	state_ok(&f);
	x = wl(&f, w);
	assert_int_equal(x->state, KERF_WL_FINISHED);
	assert_int_equal(x->nr_bound, 0);
	assert_int_equal(x->lost_gpu_milli_ms, (deadline - 30000) * 8000);
	assert_int_equal(x->nr_preemptions, 1);
	assert_int_equal(x->evicted_by[0], 0);
	assert_int_equal(f.st.tenants.t[f.a].usage.v[GPU], 0);
	assert_int_equal(kerf_cluster_gpu_milli_used(&f.st.cluster), 0);
	/* it is not queued again; the waiting work gets its GPUs */
	cycle(&f, deadline);
	assert_int_equal(wl(&f, w)->state, KERF_WL_FINISHED);
	assert_int_equal(wl(&f, q)->state, KERF_WL_RUNNING);
	teardown(&f);
}

static void test_reclaimed_finishes_at_ack(void **state)
{
	struct fx f;
	uint32_t w;

	(void)state;
	setup(&f);
	policy(&f, f.a, KERF_IDLE_CHECKPOINT_EVICT, 0);
	w = submit(&f, f.a, f.batch, 8, 0);
	cycle(&f, 0);
	kerf_idle_sample(&f.st, w, 1, 0);
	cycle(&f, AFTER_MS);
	assert_true(wl(&f, w)->idle_reclaim);
	assert_int_equal(kerf_preempt_ack(&f.st, w, AFTER_MS + 10, NULL), 0);
	state_ok(&f);
	assert_int_equal(wl(&f, w)->state, KERF_WL_FINISHED);
	assert_int_equal(wl(&f, w)->lost_gpu_milli_ms, 0);
	teardown(&f);
}

/*
 * Regression (was a bug): the idle fields of a run survived a requeue.
 * A workload sampled
 * idle, then queued again (node lost) and admitted anew, is asked to leave
 * at the first idle pass without a single sample of its new run.
 */
static void test_new_run_starts_without_idle_stretch(void **state)
{
	struct fx f;
	uint32_t w;

	(void)state;
	setup(&f);
	policy(&f, f.a, KERF_IDLE_CHECKPOINT_EVICT, 0);
	w = submit(&f, f.a, f.batch, 8, 0);
	cycle(&f, 0);
	kerf_idle_sample(&f.st, w, 0, 0);
	assert_int_equal(kerf_state_requeue(&f.st, w, 1000, NULL), 0);
	cycle(&f, 1000);
	assert_int_equal(wl(&f, w)->state, KERF_WL_RUNNING);
	assert_int_equal(wl(&f, w)->idle_since_ms, -1);
	assert_int_equal(kerf_idle_pass(&f.st, AFTER_MS), 0);
	assert_int_equal(wl(&f, w)->preempt_deadline_ms, 0);
	teardown(&f);
}

/*
 * Regression (was a bug): idle_reclaim survives a requeue, so a
 * workload once asked to leave for idling that lost its node, ran again
 * and was busy, is finished -- not queued again -- when a higher class
 * preempts it.
 */
static void test_priority_eviction_after_requeue_requeues(void **state)
{
	struct fx f;
	uint32_t w, h;

	(void)state;
	setup(&f);
	policy(&f, f.a, KERF_IDLE_CHECKPOINT_EVICT, 0);
	w = submit(&f, f.a, f.batch, 8, 0);
	cycle(&f, 0);
	kerf_idle_sample(&f.st, w, 0, 0);
	cycle(&f, AFTER_MS);
	assert_true(wl(&f, w)->idle_reclaim);
	assert_int_equal(kerf_state_requeue(&f.st, w, AFTER_MS + 1, NULL), 0);
	cycle(&f, AFTER_MS + 2);
	assert_int_equal(wl(&f, w)->state, KERF_WL_RUNNING);
	kerf_idle_sample(&f.st, w, 90, AFTER_MS + 3);
	h = submit(&f, f.b, f.high, 8, AFTER_MS + 4);
	cycle(&f, AFTER_MS + 4);
	assert_int_equal(wl(&f, w)->preempted_by, h);
	assert_int_equal(kerf_preempt_ack(&f.st, w, AFTER_MS + 5, NULL), 0);
	assert_int_equal(wl(&f, w)->state, KERF_WL_PENDING);
	assert_int_equal(wl(&f, w)->pending, KERF_PENDING_REQUEUED);
	teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample_starts_and_clears_stretch),
		cmocka_unit_test(test_policy_of_nearest_tenant),
		cmocka_unit_test(test_notify_once_per_stretch),
		cmocka_unit_test(test_checkpoint_evict_starts_handshake),
		cmocka_unit_test(test_exempt_and_nonpreemptible),
		cmocka_unit_test(test_reclaimed_finishes_at_deadline),
		cmocka_unit_test(test_reclaimed_finishes_at_ack),
		cmocka_unit_test(test_new_run_starts_without_idle_stretch),
		cmocka_unit_test(test_priority_eviction_after_requeue_requeues),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
