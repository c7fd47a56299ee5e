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
#include "core/preempt.h"
#include "sched_fixture.h"

#define GPU KERF_RES_GPU0

enum { GRACE_MS = 5000, AFTER_MS = 60000 };

/* One node of 8 GPUs; cluster -> org -> team-a, team-b; no quotas. */
static void setup(struct fx *f)
{
	fx_begin(f, 1, 2, NULL, NULL);
	f->prod = fx_add_class(f, "production", 1000, false, GRACE_MS);
	f->high = fx_add_class(f, "high", 500, true, GRACE_MS);
	f->batch = fx_add_class(f, "batch", 100, true, GRACE_MS);
	f->notebook = fx_add_class(f, "notebook", 50, true, GRACE_MS);
	assert_int_equal(f->notebook, 3);
	fx_start(f);
}

static void policy(struct fx *f, int tenant, enum kerf_idle_action action,
		   uint32_t exempt)
{
	f->st.tenants.t[tenant].idle = (struct kerf_idle_policy){
		.action = action, .below_pct = 10, .after_ms = AFTER_MS,
		.exempt_classes = exempt,
	};
}

static void assert_notice(const struct fx *f, uint64_t k, int64_t at_ms,
			  enum kerf_notice_kind kind, int tenant, uint32_t id)
{
	fx_assert_notice(f, k, at_ms, kind, tenant, id, 0);
}

static void test_sample_starts_and_clears_stretch(void **state)
{
	struct fx f;
	uint32_t w, wb, pend;

	(void)state;
	setup(&f);
	policy(&f, f.a, KERF_IDLE_NOTIFY, 0);
	w = fx_submit(&f, f.a, f.batch, 1, 0);
	wb = fx_submit(&f, f.b, f.batch, 1, 0);
	fx_cycle(&f, 0);
	pend = fx_submit(&f, f.a, f.batch, 1, 0);
	assert_int_equal(fx_wl(&f, w)->idle_since_ms, -1);
	assert_int_equal(fx_wl(&f, w)->util_pct, 100);
	kerf_idle_sample(&f.st, w, 5, 100);
	assert_int_equal(fx_wl(&f, w)->util_pct, 5);
	assert_int_equal(fx_wl(&f, w)->idle_since_ms, 100);
	kerf_idle_sample(&f.st, w, 0, 200);
	assert_int_equal(fx_wl(&f, w)->idle_since_ms, 100);
	/* at the threshold is not below it */
	kerf_idle_sample(&f.st, w, 10, 300);
	assert_int_equal(fx_wl(&f, w)->util_pct, 10);
	assert_int_equal(fx_wl(&f, w)->idle_since_ms, -1);
	assert_false(fx_wl(&f, w)->idle_notified);
	kerf_idle_sample(&f.st, w, 9, 400);
	assert_int_equal(fx_wl(&f, w)->idle_since_ms, 400);
	/* no reading (the source did not read): the stretch ends, never idle */
	kerf_idle_sample(&f.st, w, -1, 450);
	assert_int_equal(fx_wl(&f, w)->idle_since_ms, -1);
	assert_int_equal(fx_wl(&f, w)->util_pct, 9);
	kerf_idle_sample(&f.st, w, -1, 460);
	assert_int_equal(fx_wl(&f, w)->idle_since_ms, -1);
	kerf_idle_sample(&f.st, w, 9, 500);
	assert_int_equal(fx_wl(&f, w)->idle_since_ms, 500);
	/* no policy for team-b: recorded, never idle */
	kerf_idle_sample(&f.st, wb, 0, 100);
	assert_int_equal(fx_wl(&f, wb)->util_pct, 0);
	assert_int_equal(fx_wl(&f, wb)->idle_since_ms, -1);
	/* pending work and unknown ids are ignored */
	kerf_idle_sample(&f.st, pend, 0, 100);
	assert_int_equal(fx_wl(&f, pend)->util_pct, 100);
	assert_int_equal(fx_wl(&f, pend)->idle_since_ms, -1);
	kerf_idle_sample(&f.st, 999, 0, 100);
	fx_teardown(&f);
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
	fx_teardown(&f);
}

static void test_notify_once_per_stretch(void **state)
{
	struct fx f;
	uint32_t w;

	(void)state;
	setup(&f);
	policy(&f, f.org, KERF_IDLE_NOTIFY, 0);
	w = fx_submit(&f, f.a, f.batch, 1, 0);
	fx_cycle(&f, 0);
	kerf_idle_sample(&f.st, w, 5, 100);
	assert_int_equal(kerf_idle_pass(&f.st, 100 + AFTER_MS - 1, &f.dec), 0);
	assert_int_equal(f.st.nr_notices, 0);
	assert_int_equal(kerf_idle_pass(&f.st, 100 + AFTER_MS, &f.dec), 0);
	assert_int_equal(f.st.nr_notices, 1);
	assert_notice(&f, 0, 100 + AFTER_MS, KERF_NOTICE_IDLE, f.a, w);
	assert_true(fx_wl(&f, w)->idle_notified);
	assert_int_equal(kerf_idle_pass(&f.st, 200000, &f.dec), 0);
	assert_int_equal(f.st.nr_notices, 1);
	/* notify never asks the workload to go */
	assert_int_equal(kerf_wl_pre(fx_wl(&f, w))->preempt_deadline_ms, 0);
	assert_false(fx_wl(&f, w)->idle_reclaim);
	/* busy again, then idle again: a new stretch, a new notice */
	kerf_idle_sample(&f.st, w, 50, 210000);
	kerf_idle_sample(&f.st, w, 5, 220000);
	assert_int_equal(kerf_idle_pass(&f.st, 220000 + AFTER_MS - 1, &f.dec), 0);
	assert_int_equal(f.st.nr_notices, 1);
	kerf_idle_pass(&f.st, 220000 + AFTER_MS, &f.dec);
	assert_int_equal(f.st.nr_notices, 2);
	assert_notice(&f, 1, 220000 + AFTER_MS, KERF_NOTICE_IDLE, f.a, w);
	assert_int_equal(fx_wl(&f, w)->state, KERF_WL_RUNNING);
	fx_teardown(&f);
}

static void test_checkpoint_evict_starts_handshake(void **state)
{
	struct fx f;
	struct kerf_workload *x;
	uint32_t w, busy;

	(void)state;
	setup(&f);
	policy(&f, f.a, KERF_IDLE_CHECKPOINT_EVICT, 0);
	w = fx_submit(&f, f.a, f.batch, 2, 0);
	busy = fx_submit(&f, f.a, f.batch, 2, 0);
	fx_cycle(&f, 0);
	kerf_idle_sample(&f.st, w, 0, 1000);
	kerf_idle_sample(&f.st, busy, 80, 1000);
	assert_int_equal(kerf_idle_pass(&f.st, 1000 + AFTER_MS - 1, &f.dec), 0);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, w))->preempt_deadline_ms, 0);
	assert_int_equal(kerf_idle_pass(&f.st, 1000 + AFTER_MS, &f.dec), 1);
	x = fx_wl(&f, w);
	assert_int_equal(kerf_wl_pre(x)->preempt_deadline_ms, 1000 + AFTER_MS + GRACE_MS);
	assert_int_equal(kerf_wl_pre(x)->preempted_by, 0);
	assert_true(x->idle_reclaim);
	assert_int_equal(x->state, KERF_WL_RUNNING);
	assert_int_equal(f.st.nr_notices, 1);
	assert_notice(&f, 0, 1000 + AFTER_MS, KERF_NOTICE_IDLE_EVICT, f.a, w);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, busy))->preempt_deadline_ms, 0);
	/* asked once */
	assert_int_equal(kerf_idle_pass(&f.st, 1000 + AFTER_MS + 1, &f.dec), 0);
	assert_int_equal(f.st.nr_notices, 1);
	assert_int_equal(kerf_wl_pre(x)->preempt_deadline_ms, 1000 + AFTER_MS + GRACE_MS);
	fx_state_ok(&f);
	fx_teardown(&f);
}

static void test_exempt_and_nonpreemptible(void **state)
{
	struct fx f;
	uint32_t nb, np, batch;

	(void)state;
	setup(&f);
	policy(&f, f.a, KERF_IDLE_CHECKPOINT_EVICT, 1u << f.notebook);
	nb = fx_submit(&f, f.a, f.notebook, 1, 0);
	np = fx_submit(&f, f.a, f.prod, 1, 0);
	batch = fx_submit(&f, f.a, f.batch, 1, 0);
	fx_cycle(&f, 0);
	kerf_idle_sample(&f.st, nb, 0, 0);
	kerf_idle_sample(&f.st, np, 0, 0);
	kerf_idle_sample(&f.st, batch, 0, 0);
	assert_int_equal(kerf_idle_pass(&f.st, AFTER_MS, &f.dec), 1);
	/* the exempt class: neither told nor touched */
	assert_false(fx_wl(&f, nb)->idle_notified);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, nb))->preempt_deadline_ms, 0);
	/* non-preemptible: told, as plain idle, never evicted */
	assert_true(fx_wl(&f, np)->idle_notified);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, np))->preempt_deadline_ms, 0);
	assert_false(fx_wl(&f, np)->idle_reclaim);
	assert_true(fx_wl(&f, batch)->idle_reclaim);
	assert_int_equal(f.st.nr_notices, 2);
	assert_notice(&f, 0, AFTER_MS, KERF_NOTICE_IDLE, f.a, np);
	assert_notice(&f, 1, AFTER_MS, KERF_NOTICE_IDLE_EVICT, f.a, batch);
	assert_int_equal(kerf_idle_pass(&f.st, 10 * AFTER_MS, &f.dec), 0);
	assert_int_equal(f.st.nr_notices, 2);
	assert_int_equal(fx_wl(&f, np)->state, KERF_WL_RUNNING);
	assert_int_equal(fx_wl(&f, nb)->state, KERF_WL_RUNNING);
	fx_teardown(&f);
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
	w = fx_submit(&f, f.a, f.batch, 8, 0);
	fx_cycle(&f, 0);
	fx_wl(&f, w)->last_checkpoint_ms = 30000;
	kerf_idle_sample(&f.st, w, 1, 1000);
	/* the cycle applies the policy */
	q = fx_submit(&f, f.b, f.batch, 8, asked);
	fx_cycle(&f, asked);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, w))->preempt_deadline_ms, deadline);
	assert_int_equal(fx_wl(&f, q)->state, KERF_WL_PENDING);
	assert_int_equal(kerf_preempt_expire(&f.st, deadline - 1, &f.dec, NULL), 0);
	assert_int_equal(kerf_preempt_expire(&f.st, deadline, &f.dec, NULL), 1);
	fx_state_ok(&f);
	x = fx_wl(&f, w);
	assert_int_equal(x->state, KERF_WL_FINISHED);
	assert_int_equal(x->nr_bound, 0);
	assert_int_equal(kerf_wl_pre(x)->lost_gpu_milli_ms, (deadline - 30000) * 8000);
	assert_int_equal(kerf_wl_pre(x)->nr_preemptions, 1);
	assert_int_equal(kerf_wl_pre(x)->nr_asked_by, 0);   /* idle: nobody asked */
	assert_int_equal(f.st.tenants.t[f.a].usage.v[GPU], 0);
	assert_int_equal(kerf_cluster_gpu_milli_used(&f.st.cluster), 0);
	/* it is not queued again; the waiting work gets its GPUs */
	fx_cycle(&f, deadline);
	assert_int_equal(fx_wl(&f, w)->state, KERF_WL_FINISHED);
	assert_int_equal(fx_wl(&f, q)->state, KERF_WL_RUNNING);
	fx_teardown(&f);
}

static void test_reclaimed_finishes_at_ack(void **state)
{
	struct fx f;
	uint32_t w;

	(void)state;
	setup(&f);
	policy(&f, f.a, KERF_IDLE_CHECKPOINT_EVICT, 0);
	w = fx_submit(&f, f.a, f.batch, 8, 0);
	fx_cycle(&f, 0);
	kerf_idle_sample(&f.st, w, 1, 0);
	fx_cycle(&f, AFTER_MS);
	assert_true(fx_wl(&f, w)->idle_reclaim);
	assert_int_equal(kerf_preempt_ack(&f.st, w, AFTER_MS + 10, &f.dec, NULL), 0);
	fx_state_ok(&f);
	assert_int_equal(fx_wl(&f, w)->state, KERF_WL_FINISHED);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, w))->lost_gpu_milli_ms, 0);
	fx_teardown(&f);
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
	w = fx_submit(&f, f.a, f.batch, 8, 0);
	fx_cycle(&f, 0);
	kerf_idle_sample(&f.st, w, 0, 0);
	assert_int_equal(kerf_state_requeue(&f.st, w, 1000, NULL), 0);
	fx_cycle(&f, 1000);
	assert_int_equal(fx_wl(&f, w)->state, KERF_WL_RUNNING);
	assert_int_equal(fx_wl(&f, w)->idle_since_ms, -1);
	assert_int_equal(kerf_idle_pass(&f.st, AFTER_MS, &f.dec), 0);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, w))->preempt_deadline_ms, 0);
	fx_teardown(&f);
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
	w = fx_submit(&f, f.a, f.batch, 8, 0);
	fx_cycle(&f, 0);
	kerf_idle_sample(&f.st, w, 0, 0);
	fx_cycle(&f, AFTER_MS);
	assert_true(fx_wl(&f, w)->idle_reclaim);
	assert_int_equal(kerf_state_requeue(&f.st, w, AFTER_MS + 1, NULL), 0);
	fx_cycle(&f, AFTER_MS + 2);
	assert_int_equal(fx_wl(&f, w)->state, KERF_WL_RUNNING);
	kerf_idle_sample(&f.st, w, 90, AFTER_MS + 3);
	h = fx_submit(&f, f.b, f.high, 8, AFTER_MS + 4);
	fx_cycle(&f, AFTER_MS + 4);
	assert_int_equal(kerf_wl_pre(fx_wl(&f, w))->preempted_by, h);
	assert_int_equal(kerf_preempt_ack(&f.st, w, AFTER_MS + 5, &f.dec, NULL), 0);
	assert_int_equal(fx_wl(&f, w)->state, KERF_WL_PENDING);
	assert_int_equal(fx_wl(&f, w)->pending, KERF_PENDING_REQUEUED);
	fx_teardown(&f);
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
