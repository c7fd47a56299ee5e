/*
 * decision: what the core decided, as records a caller carries out.
 *
 * Every function that decides something (kerf_cycle_run, and the events
 * that make work leave: a checkpoint acknowledged, a deadline passed, a
 * node lost, removed or reshaped) appends records to a caller-provided
 * list.  A controller turns them into API calls (a binding per BIND, an
 * annotation per PREEMPT, an eviction per EVICT, a pod condition per
 * PENDING, a layout change per MIG); the simulator reads them to run its
 * world.  Nobody needs to dig decisions out of the state.
 *
 * Records name workloads by id (kerf_state_find gives the key) and nodes
 * by slot (kerf_cluster.nodes[slot].name).  Room for the records is made
 * before the state changes, so a list that cannot grow fails the call
 * with -KERF_ENOMEM and the state unchanged: a decision taken is never
 * lost.
 */
#ifndef KERF_CORE_DECISION_H
#define KERF_CORE_DECISION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/model.h"

enum kerf_decision_kind {
	KERF_DECIDE_BIND = 1,   /* a pod of an admitted workload: node, devices */
	KERF_DECIDE_PREEMPT,    /* a victim: checkpoint and leave by at_ms */
	KERF_DECIDE_CANCEL,     /* a victim's request is withdrawn: it stays */
	KERF_DECIDE_EVICT,      /* a workload's pods must go now */
	KERF_DECIDE_PENDING,    /* a pending workload's reason changed */
	KERF_DECIDE_MIG,        /* a MIG instance to create or destroy */
	KERF_DECIDE_NOTICE,     /* a tenant should hear something */
};

/* Why a workload's pods must go (EVICT). */
enum kerf_evict_reason {
	KERF_EVICT_PREEMPTED = 1,  /* asked to leave; acknowledged or due */
	KERF_EVICT_IDLE,           /* idle reclamation: it finishes */
	KERF_EVICT_NODE_LOST,      /* a node it ran on failed */
	KERF_EVICT_NODE_GONE,      /* a node it ran on was removed */
	KERF_EVICT_NODE_CHANGED,   /* a node it ran on changed shape */
};

struct kerf_decision {
	uint8_t kind;           /* enum kerf_decision_kind */
	uint8_t reason;         /* EVICT: enum kerf_evict_reason; PENDING:
				   enum kerf_pending; MIG: 1 create, 0 destroy;
				   NOTICE: enum kerf_notice_kind */
	uint8_t set;            /* BIND: pod set */
	uint8_t share;          /* BIND of a fraction: enum kerf_gpu_share */
	uint32_t workload;      /* id; 0 for MIG and budget notices */
	uint32_t pod;           /* BIND: the pod's index in the gang */
	uint32_t other;         /* PREEMPT, CANCEL: the workload making room
				   (0: idle reclamation); NOTICE: tenant */
	struct kerf_binding b;  /* BIND; MIG: node, gpus = 1 << GPU, start */
	int32_t value;          /* BIND: GPU milli per GPU; MIG: profile
				   index in the node model's table; NOTICE:
				   budget percent */
	bool requeued;          /* EVICT: pending again (false: finished) */
	int64_t at_ms;          /* PREEMPT: deadline; others: when */
};

struct kerf_decisions {
	struct kerf_decision *d;
	size_t nr;
	size_t alloc;
};

void kerf_decisions_init(struct kerf_decisions *l);
void kerf_decisions_release(struct kerf_decisions *l);

/* Forget the records, keeping the storage. */
static inline void kerf_decisions_clear(struct kerf_decisions *l)
{
	l->nr = 0;
}

/* Room for n more records: 0 or -KERF_ENOMEM / -KERF_ELIMIT. */
int kerf_decisions_reserve(struct kerf_decisions *l, size_t n)
	__attribute__((warn_unused_result));

/*
 * Append a record; room must have been reserved (the core reserves before
 * it changes anything, so this cannot fail).
 */
void kerf_decisions_push(struct kerf_decisions *l,
			 const struct kerf_decision *d);

const char *kerf_decision_kind_name(enum kerf_decision_kind k);
const char *kerf_evict_reason_name(enum kerf_evict_reason r);

#endif /* KERF_CORE_DECISION_H */
