#include "core/idle.h"

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
	w->util_pct = util_pct;
	if (p->action != KERF_IDLE_NONE && util_pct < p->below_pct) {
		if (w->idle_since_ms < 0)
			w->idle_since_ms = now_ms;
	} else {
		w->idle_since_ms = -1;
		w->idle_notified = false;
	}
}

int kerf_idle_pass(struct kerf_state *st, int64_t now_ms)
{
	int n = 0;

	for (size_t i = 0; i < st->nr_wl; i++) {
		struct kerf_workload *w = st->wl[i];
		const struct kerf_idle_policy *p;
		int64_t grace;

		if (w->state != KERF_WL_RUNNING || w->idle_since_ms < 0 ||
		    w->preempt_deadline_ms > 0)
			continue;
		p = kerf_idle_policy_of(st, w->tenant);
		if (p->action == KERF_IDLE_NONE ||
		    (p->exempt_classes >> w->class_idx & 1) ||
		    now_ms - w->idle_since_ms < p->after_ms)
			continue;
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
		w->preempt_deadline_ms = now_ms + (grace > 0 ? grace : 1);
		w->preempted_by = 0;
		w->idle_reclaim = true;
		n++;
	}
	return n;
}
