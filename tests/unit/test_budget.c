/*
 * test_budget: GPU-hour budgets.  Use accrues as the state ages (GPU milli
 * held x ms, weighted per model, over a tenant's whole subtree, only while
 * work runs); warnings at 50, 80 and 100 % are notices, once each per
 * window; a new window starts the count again; an exhausted budget holds
 * new work (all of it, or only non-preemptible work) with a sentence that
 * names the tenant, and never stops work that already runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/budget.h"
#include "core/cycle.h"
#include "sched_fixture.h"

#define GPU KERF_RES_GPU0

enum { HOUR_MS = 3600 * 1000 };

/* One node of 8 GPUs; cluster -> org -> team-a, team-b; no quotas. */
static void setup(struct fx *f)
{
	fx_begin(f, 1, 2, NULL, NULL);
	f->prod = fx_add_class(f, "production", 1000, false, 0);
	f->batch = fx_add_class(f, "batch", 100, true, 0);
	fx_start(f);
}

static struct kerf_budget *budget(struct fx *f, int tenant, int64_t limit,
				  int64_t window_ms,
				  enum kerf_budget_action action)
{
	struct kerf_budget *b = &f->st.tenants.t[tenant].budget;

	b->limit_milli_ms = limit;
	b->window_ms = window_ms;
	b->action = action;
	b->model_weight_pct[0] = 100;
	return b;
}

/* One pod of gpu_milli (a fraction below 1000, else that many GPUs). */
static uint32_t submit(struct fx *f, int tenant, int cls, int32_t gpu_milli,
		       int64_t now)
{
	struct kerf_workload w = fx_gang(tenant, cls, 1, 1);

	if (gpu_milli < 1000)
		w.sets[0].req.gpu_milli = gpu_milli;
	else
		w.sets[0].req.nr_gpus = (uint8_t)(gpu_milli / 1000);
	return fx_submit_workload(f, &w, now);
}

static void assert_notice(const struct fx *f, uint64_t k, int64_t at_ms,
			  int tenant, int32_t pct)
{
	fx_assert_notice(f, k, at_ms, KERF_NOTICE_BUDGET, tenant, 0, pct);
}

static void test_use_accrues_while_running(void **state)
{
	struct fx f;
	struct kerf_budget *ba, *bb, *bo;
	uint32_t w;

	(void)state;
	setup(&f);
	ba = budget(&f, f.a, 1000 * (int64_t)HOUR_MS, 0, KERF_BUDGET_HOLD);
	bb = budget(&f, f.b, 1000 * (int64_t)HOUR_MS, 0, KERF_BUDGET_HOLD);
	bo = budget(&f, f.org, 1000 * (int64_t)HOUR_MS, 0, KERF_BUDGET_HOLD);
	bb->model_weight_pct[0] = 150;
	w = submit(&f, f.a, f.batch, 4000, 0);
	submit(&f, f.b, f.batch, 500, 0);
	fx_cycle(&f, 0);
	assert_int_equal(ba->used_milli_ms, 0);
	kerf_state_age(&f.st, 1000);
	assert_int_equal(ba->used_milli_ms, 4000 * 1000);
	assert_int_equal(bb->used_milli_ms, 750 * 1000);
	assert_int_equal(bo->used_milli_ms, 4500 * 1000);
	/* ageing to the same time again adds nothing */
	kerf_state_age(&f.st, 1000);
	assert_int_equal(ba->used_milli_ms, 4000 * 1000);
	/* finishing counts the use up to the finish, and then none */
	assert_int_equal(kerf_state_finish(&f.st, w, 3000, NULL), 0);
	assert_int_equal(ba->used_milli_ms, 4000 * 3000);
	kerf_state_age(&f.st, 10000);
	assert_int_equal(ba->used_milli_ms, 4000 * 3000);
	assert_int_equal(bb->used_milli_ms, 750 * 10000);
	assert_int_equal(kerf_budget_used_pct(&f.st.tenants.t[f.a]), 0);
	/* 12e6 of 3.6e9 is 0.33 %; a tenant without a budget reads 0 */
	ba->limit_milli_ms = 24000000;
	assert_int_equal(kerf_budget_used_pct(&f.st.tenants.t[f.a]), 50);
	assert_int_equal(kerf_budget_used_pct(&f.st.tenants.t[KERF_TENANT_ROOT]), 0);
	assert_int_equal(f.st.nr_notices, 0);
	fx_teardown(&f);
}

static void test_warnings_at_50_80_100(void **state)
{
	struct fx f;
	struct kerf_budget *ba;

	(void)state;
	setup(&f);
	/* 4 GPUs for 10 s */
	ba = budget(&f, f.a, 4000 * 10000, 0, KERF_BUDGET_HOLD);
	submit(&f, f.a, f.batch, 4000, 0);
	fx_cycle(&f, 0);
	kerf_state_age(&f.st, 4999);
	assert_int_equal(f.st.nr_notices, 0);
	kerf_state_age(&f.st, 5000);
	assert_int_equal(f.st.nr_notices, 1);
	assert_notice(&f, 0, 5000, f.a, 50);
	assert_int_equal(ba->warned_pct, 50);
	kerf_state_age(&f.st, 7999);
	assert_int_equal(f.st.nr_notices, 1);
	kerf_state_age(&f.st, 8000);
	assert_int_equal(f.st.nr_notices, 2);
	assert_notice(&f, 1, 8000, f.a, 80);
	kerf_state_age(&f.st, 10000);
	assert_int_equal(f.st.nr_notices, 3);
	assert_notice(&f, 2, 10000, f.a, 100);
	/* over the budget: no more warnings in this window */
	kerf_state_age(&f.st, 20000);
	assert_int_equal(f.st.nr_notices, 3);
	assert_int_equal(kerf_budget_used_pct(&f.st.tenants.t[f.a]), 200);
	fx_teardown(&f);
}

static void test_warnings_all_at_once(void **state)
{
	struct fx f;

	(void)state;
	setup(&f);
	budget(&f, f.b, 1000 * 1000, 0, KERF_BUDGET_HOLD);
	submit(&f, f.b, f.batch, 1000, 0);
	fx_cycle(&f, 0);
	kerf_state_age(&f.st, 1000);
	assert_int_equal(f.st.nr_notices, 3);
	assert_notice(&f, 0, 1000, f.b, 50);
	assert_notice(&f, 1, 1000, f.b, 80);
	assert_notice(&f, 2, 1000, f.b, 100);
	fx_teardown(&f);
}

static void test_window_roll_resets(void **state)
{
	struct fx f;
	struct kerf_budget *ba;
	char text[KERF_REASON_MAX];
	uint32_t w2;

	(void)state;
	setup(&f);
	ba = budget(&f, f.a, 4000 * 10000, 20000, KERF_BUDGET_HOLD);
	submit(&f, f.a, f.batch, 4000, 0);
	fx_cycle(&f, 0);
	w2 = submit(&f, f.a, f.batch, 1000, 0);
	kerf_state_age(&f.st, 10000);
	assert_int_equal(f.st.nr_notices, 3);
	assert_true(kerf_budget_holds(&f.st, kerf_state_find(&f.st, w2), 10000,
				      text, sizeof(text)));
	/* the edge: a new window, nothing used in it yet */
	kerf_state_age(&f.st, 20000);
	assert_int_equal(ba->window_start_ms, 20000);
	assert_int_equal(ba->used_milli_ms, 0);
	assert_int_equal(ba->warned_pct, 0);
	assert_false(kerf_budget_holds(&f.st, kerf_state_find(&f.st, w2), 20000,
				       text, sizeof(text)));
	kerf_state_age(&f.st, 25000);
	assert_int_equal(ba->used_milli_ms, 4000 * 5000);
	assert_int_equal(f.st.nr_notices, 4);
	assert_notice(&f, 3, 25000, f.a, 50);
	/* two windows later: only the time inside the new window counts */
	kerf_state_age(&f.st, 65000);
	assert_int_equal(ba->window_start_ms, 60000);
	assert_int_equal(ba->used_milli_ms, 4000 * 5000);
	assert_int_equal(f.st.nr_notices, 5);
	assert_notice(&f, 4, 65000, f.a, 50);
	fx_teardown(&f);
}

/*
 * Regression (was a bug): the window
 * roll of one tenant shortens dt_ms, the function's parameter, for every
 * tenant after it in the loop, so team-b (window not rolled) is charged
 * 5000 of the 10000 ms it ran.
 */
static void test_window_roll_of_one_tenant_only(void **state)
{
	struct fx f;
	struct kerf_budget *ba, *bb;

	(void)state;
	setup(&f);
	ba = budget(&f, f.a, 1000 * (int64_t)HOUR_MS, 20000, KERF_BUDGET_HOLD);
	bb = budget(&f, f.b, 1000 * (int64_t)HOUR_MS, HOUR_MS, KERF_BUDGET_HOLD);
	submit(&f, f.a, f.batch, 4000, 0);
	submit(&f, f.b, f.batch, 4000, 0);
	fx_cycle(&f, 0);
	kerf_state_age(&f.st, 15000);
	assert_int_equal(bb->used_milli_ms, 4000 * 15000);
	kerf_state_age(&f.st, 25000);
	assert_int_equal(ba->used_milli_ms, 4000 * 5000);
	assert_int_equal(bb->used_milli_ms, 4000 * 25000);
	fx_teardown(&f);
}

static void test_holds_new_work(void **state)
{
	struct fx f;
	struct kerf_cycle_stats stats;
	char text[KERF_REASON_MAX] = "";
	uint32_t run, w;

	(void)state;
	setup(&f);
	/* one GPU-hour per two-hour window */
	budget(&f, f.a, 1000 * (int64_t)HOUR_MS, 2 * HOUR_MS, KERF_BUDGET_HOLD);
	run = submit(&f, f.a, f.batch, 1000, 0);
	fx_cycle(&f, 0);
	w = submit(&f, f.a, f.batch, 1000, HOUR_MS - 1);
	assert_false(kerf_budget_holds(&f.st, kerf_state_find(&f.st, w),
				       HOUR_MS - 1, text, sizeof(text)));
	assert_string_equal(text, "");
	kerf_state_age(&f.st, HOUR_MS);
	assert_true(kerf_budget_holds(&f.st, kerf_state_find(&f.st, w), HOUR_MS,
				      text, sizeof(text)));
	assert_string_equal(text,
			    "tenant 'team-a' spent its GPU-hour budget (1.0 GPU-h of 1.0 GPU-h this window); new work waits until the window resets in 60m");
	/* through the cycle: held with that sentence; running work stays */
	stats = fx_cycle(&f, HOUR_MS);
	assert_int_equal(stats.nr_admitted, 0);
	assert_int_equal(stats.nr_other, 1);
	assert_int_equal(kerf_state_find(&f.st, w)->pending, KERF_PENDING_BUDGET);
	assert_string_equal(kerf_state_find(&f.st, w)->pending_text, text);
	assert_int_equal(kerf_state_find(&f.st, run)->state, KERF_WL_RUNNING);
	/* team-b has no budget of its own and org none: not held */
	assert_false(kerf_budget_holds(&f.st,
				       kerf_state_find(&f.st,
						       submit(&f, f.b, f.batch, 1000,
							      HOUR_MS)),
				       HOUR_MS, text, sizeof(text)));
	/* the next window admits it */
	fx_cycle(&f, 2 * HOUR_MS);
	assert_int_equal(kerf_state_find(&f.st, w)->state, KERF_WL_RUNNING);
	fx_teardown(&f);
}

static void test_preemptible_only(void **state)
{
	struct fx f;
	char text[KERF_REASON_MAX] = "";
	uint32_t p, np;

	(void)state;
	setup(&f);
	budget(&f, f.a, 1000 * (int64_t)HOUR_MS, 4 * HOUR_MS,
	       KERF_BUDGET_PREEMPTIBLE_ONLY);
	submit(&f, f.a, f.batch, 1000, 0);
	fx_cycle(&f, 0);
	kerf_state_age(&f.st, HOUR_MS);
	p = submit(&f, f.a, f.batch, 1000, HOUR_MS);
	np = submit(&f, f.a, f.prod, 1000, HOUR_MS);
	assert_false(kerf_budget_holds(&f.st, kerf_state_find(&f.st, p), HOUR_MS,
				       text, sizeof(text)));
	assert_true(kerf_budget_holds(&f.st, kerf_state_find(&f.st, np), HOUR_MS,
				      text, sizeof(text)));
	assert_string_equal(text,
			    "tenant 'team-a' spent its GPU-hour budget (1.0 GPU-h of 1.0 GPU-h this window); non-preemptible work waits until the window resets in 3h");
	fx_cycle(&f, HOUR_MS);
	assert_int_equal(kerf_state_find(&f.st, p)->state, KERF_WL_RUNNING);
	assert_int_equal(kerf_state_find(&f.st, np)->pending, KERF_PENDING_BUDGET);
	fx_teardown(&f);
}

static void test_ancestor_budget_holds(void **state)
{
	struct fx f;
	char text[KERF_REASON_MAX] = "";
	uint32_t wb;

	(void)state;
	setup(&f);
	/* org: 2 GPU-h, no window; team-a uses them */
	budget(&f, f.org, 2000 * (int64_t)HOUR_MS, 0, KERF_BUDGET_HOLD);
	submit(&f, f.a, f.batch, 4000, 0);
	fx_cycle(&f, 0);
	kerf_state_age(&f.st, HOUR_MS / 2);
	wb = submit(&f, f.b, f.prod, 1000, HOUR_MS / 2);
	assert_true(kerf_budget_holds(&f.st, kerf_state_find(&f.st, wb),
				      HOUR_MS / 2, text, sizeof(text)));
	assert_string_equal(text,
			    "tenant 'org' spent its GPU-hour budget (2.0 GPU-h of 2.0 GPU-h, no window); new work waits until the budget is raised");
	fx_teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_use_accrues_while_running),
		cmocka_unit_test(test_warnings_at_50_80_100),
		cmocka_unit_test(test_warnings_all_at_once),
		cmocka_unit_test(test_window_roll_resets),
		cmocka_unit_test(test_window_roll_of_one_tenant_only),
		cmocka_unit_test(test_holds_new_work),
		cmocka_unit_test(test_preemptible_only),
		cmocka_unit_test(test_ancestor_budget_holds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
