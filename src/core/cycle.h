/*
 * cycle: one scheduling cycle over the pending workloads.
 *
 * 1. Order: priority class value (higher first), then hierarchical weighted
 *    dominant share (lower first; compared between the two subtrees where
 *    the tenants' paths part, on usage blended with its history, as it
 *    stands at the start of the cycle), then submission time, then id.
 * 2. For each in order: the class must be allowed for the tenant; a quota
 *    pre-check per GPU flavor; then the whole gang is placed pod by pod
 *    (placement policy of the sched, topology constraint honoured) and the
 *    quota of what was actually placed is checked.  Anything short of
 *    min_count pods, or over quota, is rolled back: nothing is held for a
 *    gang that does not fit whole.
 * 3. A workload that does not fit may make room by preemption
 *    (core/preempt.h): lower priority work, or work borrowing the quota this
 *    one reclaims, is asked to checkpoint and leave; at most
 *    PREEMPT_PLANS_PER_CYCLE searches per cycle.
 * 4. Every workload left pending carries a reason code and a sentence.
 *
 * The sched must have been built for st->cluster and be used with no other
 * cluster.  Pure: time comes in as now_ms.
 */
#ifndef KERF_CORE_CYCLE_H
#define KERF_CORE_CYCLE_H

#include <stdint.h>

#include "base/err.h"
#include "core/decision.h"
#include "core/framework.h"
#include "core/state.h"

struct kerf_cycle_stats {
	uint32_t nr_pending;       /* pending at the start */
	uint32_t nr_admitted;
	uint32_t nr_quota;         /* left pending for quota */
	uint32_t nr_capacity;      /* left pending for capacity */
	uint32_t nr_other;         /* class not allowed, never fits */
	uint32_t nr_placements;    /* gang placement attempts */
	uint32_t nr_preempted;     /* victims asked to checkpoint and leave */
};

/*
 * Run one cycle at now_ms.  Admitted workloads are RUNNING afterwards, with
 * bindings and charges; every decision is appended to out (core/decision.h):
 * evictions of victims whose deadline passed, idle reclamation requests,
 * binds (after the MIG steps they need), preemption requests and their
 * cancellations, pending reasons that changed, notices.  Out of memory is
 * returned as -KERF_ENOMEM, never a silently different decision: the
 * records appended before it are real decisions (the state holds them)
 * and must still be carried out.
 */
int kerf_cycle_run(struct kerf_sched *s, struct kerf_state *st, int64_t now_ms,
		   struct kerf_decisions *out, struct kerf_cycle_stats *stats,
		   struct kerf_err *err);

/*
 * The pending workloads of st in the order a cycle takes them (step 1,
 * the shares as the last cycle aged them; a preemptor whose victims made
 * room first), into v (room for st->nr_wl), their count in *nr.  For
 * reports: changes nothing.  -KERF_ENOMEM.
 */
int kerf_cycle_queue(const struct kerf_state *st, struct kerf_workload **v,
		     size_t *nr);

#endif /* KERF_CORE_CYCLE_H */
