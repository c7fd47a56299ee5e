/*
 * idle: reclaiming GPUs that running work holds without using.
 *
 * Adapters report each running workload's GPU utilisation
 * (kerf_idle_sample).  A workload whose utilisation stays below its
 * tenant's threshold (the nearest tenant on its path with an idle policy)
 * for the policy's duration is idle: with action notify the tenant is told
 * once per idle stretch; with checkpoint-evict it is asked to checkpoint
 * and leave through the preemption handshake, and then it finishes (it is
 * not queued again: an idle notebook would only come back idle).  Classes
 * the policy exempts are never touched, and non-preemptible work is only
 * ever reported, never evicted.
 */
#ifndef KERF_CORE_IDLE_H
#define KERF_CORE_IDLE_H

#include <stdint.h>

#include "core/state.h"

/* The idle policy that applies to tenant t (action NONE when none). */
const struct kerf_idle_policy *kerf_idle_policy_of(const struct kerf_state *st,
						   int tenant);

/*
 * A utilisation sample (percent) of a running workload.  util_pct < 0: no
 * reading could be had (the source did not read): the idle stretch, if
 * any, ends, as a busy sample would end it (an unknown is never idle);
 * the last sample is kept.
 */
void kerf_idle_sample(struct kerf_state *st, uint32_t id, int32_t util_pct,
		      int64_t now_ms);

/*
 * Apply the policies at now: notices, and for checkpoint-evict a PREEMPT
 * record (other 0: for no workload) per workload asked to go, in seq
 * order.  Returns how many, or -KERF_ENOMEM with nothing changed.
 */
int kerf_idle_pass(struct kerf_state *st, int64_t now_ms,
		   struct kerf_decisions *out);

#endif /* KERF_CORE_IDLE_H */
