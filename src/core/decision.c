#include "core/decision.h"

#include <stdlib.h>

#include "base/assert.h"
#include "base/grow.h"

void kerf_decisions_init(struct kerf_decisions *l)
{
	l->d = NULL;
	l->nr = 0;
	l->alloc = 0;
}

void kerf_decisions_release(struct kerf_decisions *l)
{
	free(l->d);
	kerf_decisions_init(l);
}

int kerf_decisions_reserve(struct kerf_decisions *l, size_t n)
{
	size_t need;

	if (__builtin_add_overflow(l->nr, n, &need))
		return -KERF_ELIMIT;
	return KERF_GROW(l->d, l->alloc, need);
}

void kerf_decisions_push(struct kerf_decisions *l, const struct kerf_decision *d)
{
	KERF_ASSERT(l->nr < l->alloc);
	l->d[l->nr++] = *d;
}

const char *kerf_decision_kind_name(enum kerf_decision_kind k)
{
	switch (k) {
	case KERF_DECIDE_BIND:
		return "Bind";
	case KERF_DECIDE_PREEMPT:
		return "Preempt";
	case KERF_DECIDE_CANCEL:
		return "CancelPreempt";
	case KERF_DECIDE_EVICT:
		return "Evict";
	case KERF_DECIDE_PENDING:
		return "Pending";
	case KERF_DECIDE_MIG:
		return "MIG";
	case KERF_DECIDE_NOTICE:
		return "Notice";
	}
	return "Unknown";
}

const char *kerf_evict_reason_name(enum kerf_evict_reason r)
{
	switch (r) {
	case KERF_EVICT_PREEMPTED:
		return "Preempted";
	case KERF_EVICT_IDLE:
		return "IdleReclaimed";
	case KERF_EVICT_NODE_LOST:
		return "NodeLost";
	case KERF_EVICT_NODE_GONE:
		return "NodeRemoved";
	case KERF_EVICT_NODE_CHANGED:
		return "NodeChanged";
	}
	return "Unknown";
}
