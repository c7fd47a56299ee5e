/*
 * budget: GPU-hour budgets per tenant and window.
 *
 * A tenant's budget covers its whole subtree: the GPU time it holds
 * (gpu_milli x ms, each model weighted by model_weight_pct) adds up over a
 * window; when the window ends, the count starts again.  Warnings are
 * issued at 50, 80 and 100 % (kerf_state_notice).  An exhausted budget holds
 * the tenant's new work (or admits only preemptible work, by its action)
 * until the next window; work already running is never stopped by it.
 */
#ifndef KERF_CORE_BUDGET_H
#define KERF_CORE_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/state.h"

/* Add dt_ms of the GPU in use to every budget; roll windows; warn. */
void kerf_budget_account(struct kerf_state *st, int64_t dt_ms, int64_t now_ms);

/* Percent of the window's budget used (0 when the tenant has none). */
int32_t kerf_budget_used_pct(const struct kerf_tenant *t);

/*
 * Must w wait for its tenant's (or an ancestor's) budget?  If so, text
 * says why and when it resets.
 */
bool kerf_budget_holds(const struct kerf_state *st,
		       const struct kerf_workload *w, int64_t now_ms, char *text,
		       size_t size);

#endif /* KERF_CORE_BUDGET_H */
