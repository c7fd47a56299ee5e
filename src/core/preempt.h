/*
 * preempt: making room for a workload that does not fit, by evicting others
 * through the checkpoint handshake.
 *
 * Who may be a victim of w:
 *   - running, preemptible, not already leaving, running for at least its
 *     class's minimum runtime, and evicted fewer than
 *     KERF_MAX_PREEMPTIONS_PER_HOUR times in the last hour (against
 *     thrashing);
 *   - of a lower priority class than w, or
 *   - admitted on borrowed quota (beyond its tenant's nominal), of no
 *     higher class than w, while w would stay within its own tenant's
 *     nominal: w reclaims quota it lent.
 * Evictions go up in (class value, admitted within nominal); and a
 * workload never evicts one that once evicted it, so no two workloads can
 * preempt each other in turn, whatever quota edits do to the labels.
 * Never across a non-preemptible class.  Among the candidates the set is
 * built greedily, least work lost first (GPU time since the last
 * checkpoint), then pruned to the smallest set that still makes w fit; the
 * whole search runs on the real state with every change rolled back.
 *
 * The handshake: each victim is asked to checkpoint by a deadline
 * (now + its class's checkpoint grace).  It leaves at its acknowledgement
 * (kerf_preempt_ack) or at the first cycle at or after the deadline
 * (kerf_preempt_expire), whichever is first; it is queued again, and the
 * GPU time from its last checkpoint to when it leaves is recorded as lost.  The preemptor waits (WaitingForPreemption) without
 * causing more preemptions, and goes first once its victims are gone.
 * Meanwhile it is nominated to its victims' nodes: the room they free is
 * held for it, and no workload of its class or below is placed there (a
 * victim must not come straight back onto the GPUs it just gave up).
 */
#ifndef KERF_CORE_PREEMPT_H
#define KERF_CORE_PREEMPT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "core/framework.h"
#include "core/state.h"

enum {
	KERF_MAX_VICTIMS = 64,
	/* a workload evicted this often within an hour is left alone */
	KERF_MAX_PREEMPTIONS_PER_HOUR = 3,
};

/* The decision of kerf_preempt_plan. */
struct kerf_preempt_plan {
	uint32_t victims[KERF_MAX_VICTIMS];
	uint32_t nr;
	bool reclaim;               /* by quota reclaim rather than priority */
	bool oom;                   /* no plan: out of memory, not "none helps" */
	uint32_t nr_protected;      /* would-be victims skipped: protected
				       (kerf_state_protect) */
};

/*
 * Find the smallest victim set that lets w (pending) fit, using fits() to
 * test: fits(ctx, w) places and quota-checks w without keeping anything.
 * Changes nothing.  true with a plan, false when no set helps.
 */
typedef bool (*kerf_fits_fn)(void *ctx, struct kerf_workload *w);

bool kerf_preempt_plan(struct kerf_state *st, struct kerf_sched *s,
		       struct kerf_workload *w, int64_t now_ms,
		       kerf_fits_fn fits, void *ctx,
		       struct kerf_preempt_plan *plan);

/*
 * Start the handshake for every victim of plan, for w; nominate w.  Each
 * victim records that w asked it to leave; a PREEMPT record per victim
 * (its deadline) is appended to out.  -KERF_ENOMEM: nothing started.
 */
int kerf_preempt_start(struct kerf_state *st, struct kerf_workload *w,
		       const struct kerf_preempt_plan *plan, int64_t now_ms,
		       struct kerf_decisions *out);

/* w no longer waits on its victims' nodes (admitted, or planning again). */
void kerf_preempt_unnominate(struct kerf_workload *w);

/*
 * A victim acknowledged its checkpoint: it leaves now, losing nothing
 * (EVICT appended to out: requeued, or finished when reclaimed for idling).
 */
int kerf_preempt_ack(struct kerf_state *st, uint32_t id, int64_t now_ms,
		     struct kerf_decisions *out, struct kerf_err *err);

/* Victim id leaves now (its deadline passed); lost work recorded; EVICT. */
int kerf_preempt_expire_one(struct kerf_state *st, uint32_t id, int64_t now_ms,
			    struct kerf_decisions *out, struct kerf_err *err);

/*
 * Victims whose deadline has passed leave now, in seq order (an EVICT
 * each); returns how many.
 */
int kerf_preempt_expire(struct kerf_state *st, int64_t now_ms,
			struct kerf_decisions *out, struct kerf_err *err);

/* Is a tenant (or an ancestor) beyond its nominal in a governed dimension? */
bool kerf_tenant_borrowing(const struct kerf_tenants *tt, int tenant);

/* Would work admitted within nominal, plus req, stay within nominal? */
bool kerf_quota_within_nominal(const struct kerf_tenants *tt, int leaf,
			       const struct kerf_res *req);

#endif /* KERF_CORE_PREEMPT_H */
