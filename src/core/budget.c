#include "core/budget.h"

#include <inttypes.h>
#include <stdio.h>

#include "base/units.h"

static const int32_t thresholds[] = { 50, 80, 100 };

int32_t kerf_budget_used_pct(const struct kerf_tenant *t)
{
	if (t->budget.limit_milli_ms <= 0)
		return 0;
	return (int32_t)((__int128)t->budget.used_milli_ms * 100 /
			 t->budget.limit_milli_ms);
}

void kerf_budget_account(struct kerf_state *st, int64_t dt_ms, int64_t now_ms)
{
	for (size_t k = 1; k < st->tenants.nr; k++) {
		struct kerf_tenant *t = &st->tenants.t[k];
		struct kerf_budget *b = &t->budget;
		int64_t weighted = 0, ran_ms = dt_ms;
		int32_t pct;

		if (b->limit_milli_ms <= 0)
			continue;
		if (b->window_ms > 0 && now_ms - b->window_start_ms >= b->window_ms) {
			/* a new window: what ran across the edge counts in it */
			b->window_start_ms += (now_ms - b->window_start_ms) /
					      b->window_ms * b->window_ms;
			b->used_milli_ms = 0;
			b->warned_pct = 0;
			if (now_ms - b->window_start_ms < ran_ms)
				ran_ms = now_ms - b->window_start_ms;
		}
		for (int m = 0; m < (int)st->cluster.nr_models; m++)
			weighted = kerf_qty_add(
				weighted, kerf_qty_mul(t->usage.v[kerf_res_gpu(m)],
						       b->model_weight_pct[m]) / 100);
		b->used_milli_ms = kerf_qty_add(b->used_milli_ms,
						kerf_qty_mul(weighted, ran_ms));
		pct = kerf_budget_used_pct(t);
		for (size_t i = 0; i < sizeof(thresholds) / sizeof(thresholds[0]); i++)
			if (pct >= thresholds[i] && b->warned_pct < thresholds[i]) {
				b->warned_pct = thresholds[i];
				kerf_state_notice(st, KERF_NOTICE_BUDGET, (int)k, 0,
						  thresholds[i], now_ms);
			}
	}
}

/*
 * The time left to a window's reset as the sentence says it: up to the
 * next whole hour (ten minutes under an hour).  The sentence is a pod's
 * condition message; a countdown by the minute would change it, and
 * have it written again, every minute.
 */
static int64_t countdown_ms(int64_t ms)
{
	int64_t step = ms >= 3600000 ? 3600000 : 600000;

	if (ms <= 0)
		return 0;
	return (ms + step - 1) / step * step;
}

bool kerf_budget_holds(const struct kerf_state *st,
		       const struct kerf_workload *w, int64_t now_ms, char *text,
		       size_t size)
{
	for (int k = w->tenant; k > KERF_TENANT_ROOT; k = st->tenants.t[k].parent) {
		const struct kerf_tenant *t = &st->tenants.t[k];
		const struct kerf_budget *b = &t->budget;
		char spent[32], limit[32], left[32];

		if (b->limit_milli_ms <= 0 || b->used_milli_ms < b->limit_milli_ms)
			continue;
		if (b->action == KERF_BUDGET_PREEMPTIBLE_ONLY && !w->nonpreemptible)
			continue;
		/* quantities as every output writes them (base/units.h) */
		kerf_units_gpu_hours((double)b->used_milli_ms / 3.6e9, spent, sizeof(spent));
		kerf_units_gpu_hours((double)b->limit_milli_ms / 3.6e9, limit, sizeof(limit));
		kerf_units_duration(countdown_ms(b->window_start_ms + b->window_ms - now_ms),
				    left, sizeof(left));
		if (b->window_ms > 0)
			snprintf(text, size,
				 "tenant '%s' spent its GPU-hour budget (%s of %s this window); %s waits until the window resets in %s",
				 t->name, spent, limit,
				 b->action == KERF_BUDGET_HOLD ? "new work"
							       : "non-preemptible work",
				 left);
		else
			snprintf(text, size,
				 "tenant '%s' spent its GPU-hour budget (%s of %s, no window); %s waits until the budget is raised",
				 t->name, spent, limit,
				 b->action == KERF_BUDGET_HOLD ? "new work"
							       : "non-preemptible work");
		return true;
	}
	return false;
}
