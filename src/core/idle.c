#include "core/idle.h"

#include <stdlib.h>

static const struct kerf_idle_policy no_policy = { .action = KERF_IDLE_NONE };

const struct kerf_idle_policy *kerf_idle_policy_of(const struct kerf_state *st,
						   int tenant)
{
	for (int t = tenant; t > KERF_TENANT_ROOT; t = st->tenants.t[t].parent)
		if (st->tenants.t[t].idle.action != KERF_IDLE_NONE)
			return &st->tenants.t[t].idle;
	return &no_policy;
}

void kerf_idle_sample(struct kerf_state *st, uint32_t id, int32_t util_pct,
		      int64_t now_ms)
{
	struct kerf_workload *w = kerf_state_find(st, id);
	const struct kerf_idle_policy *p;

	if (!w || w->state != KERF_WL_RUNNING)
		return;
	p = kerf_idle_policy_of(st, w->tenant);
	if (util_pct >= 0)
		w->util_pct = util_pct;
	if (p->action != KERF_IDLE_NONE && util_pct >= 0 && util_pct < p->below_pct) {
		if (w->idle_since_ms < 0)
			w->idle_since_ms = now_ms;
	} else {
		w->idle_since_ms = -1;
		w->idle_notified = false;
	}
}

/* Is w idle past its policy's time (and not already leaving)? */
static const struct kerf_idle_policy *due_idle(const struct kerf_state *st,
					       const struct kerf_workload *w,
					       int64_t now_ms)
{
	const struct kerf_idle_policy *p;

	if (w->state != KERF_WL_RUNNING || w->idle_since_ms < 0 ||
	    kerf_wl_pre(w)->preempt_deadline_ms > 0 || w->leaving)
		return NULL;
	p = kerf_idle_policy_of(st, w->tenant);
	if (p->action == KERF_IDLE_NONE || (p->exempt_classes >> w->class_idx & 1) ||
	    now_ms - w->idle_since_ms < p->after_ms)
		return NULL;
	return p;
}

int kerf_idle_pass(struct kerf_state *st, int64_t now_ms,
		   struct kerf_decisions *out)
{
	struct kerf_workload **due;
	size_t nr = 0;
	int n = 0;
	bool any = false;

	/* no tenant with an idle policy: no workload is walked */
	for (size_t t = 0; t < st->tenants.nr && !any; t++)
		any = st->tenants.t[t].idle.action != KERF_IDLE_NONE;
	if (!any)
		return 0;
	for (size_t i = 0; i < st->nr_wl; i++)
		nr += due_idle(st, st->wl[i], now_ms) != NULL;
	if (nr == 0)
		return 0;
	due = malloc(nr * sizeof(*due));
	if (!due || kerf_decisions_reserve(out, nr) < 0) {
		free(due);
		return -KERF_ENOMEM;
	}
	nr = 0;
	for (size_t i = 0; i < st->nr_wl; i++)
		if (due_idle(st, st->wl[i], now_ms))
			due[nr++] = st->wl[i];
	kerf_state_sort_by_seq(due, nr);
	/* room for the deadlines first: out of memory, nothing has changed */
	for (size_t i = 0; i < nr; i++) {
		const struct kerf_idle_policy *p = due_idle(st, due[i], now_ms);

		if (p->action == KERF_IDLE_CHECKPOINT_EVICT && !due[i]->nonpreemptible &&
		    !kerf_workload_preempt(due[i])) {
			free(due);
			return -KERF_ENOMEM;
		}
	}
	for (size_t i = 0; i < nr; i++) {
		struct kerf_workload *w = due[i];
		const struct kerf_idle_policy *p = due_idle(st, w, now_ms);
		int64_t grace;

		if (!w->idle_notified) {
			w->idle_notified = true;
			kerf_state_notice(st, p->action == KERF_IDLE_NOTIFY ||
							      w->nonpreemptible
						      ? KERF_NOTICE_IDLE
						      : KERF_NOTICE_IDLE_EVICT,
					  w->tenant, w->id, 0, now_ms);
		}
		/* non-preemptible work is never evicted, idle or not: told only */
		if (p->action != KERF_IDLE_CHECKPOINT_EVICT || w->nonpreemptible)
			continue;
		grace = st->classes.c[w->class_idx].checkpoint_grace_ms;
		w->pre->preempt_deadline_ms = now_ms + (grace > 0 ? grace : 1);
		if (w->pre->preempt_deadline_ms < st->deadline_hint_ms)
			st->deadline_hint_ms = w->pre->preempt_deadline_ms;
		w->pre->preempted_by = 0;
		w->idle_reclaim = true;
		kerf_decisions_push(out, &(struct kerf_decision){
			.kind = KERF_DECIDE_PREEMPT, .workload = w->id,
			.other = 0, .at_ms = w->pre->preempt_deadline_ms,
		});
		n++;
	}
	free(due);
	return n;
}
