/*
 * timesim_pending: the workloads a time-mode run leaves pending at its
 * end, in the order the next cycle would take them, each with the core's
 * reason (its code and its sentence: quota, budget, gang, topology,
 * isolation, MIG geometry, fragmentation ...), as text or JSON.
 */
#ifndef KERF_SIM_TIMESIM_PENDING_H
#define KERF_SIM_TIMESIM_PENDING_H

#include <jansson.h>
#include <stdio.h>

#include "sim/timesim.h"

/* How many workloads are pending now. */
size_t kerf_ts_nr_pending(const struct kerf_timesim *ts);

/*
 * The section "pending at the end: N", then one line per workload
 * "tenant/name: reason" (nothing when none is pending).  Returns N, or
 * -KERF_ENOMEM.
 */
int kerf_ts_pending_text(FILE *out, const struct kerf_timesim *ts);

/*
 * The same as a JSON array of { tenant, name, code, reason,
 * waitingSeconds }, or NULL when out of memory.
 */
json_t *kerf_ts_pending_json(const struct kerf_timesim *ts);

#endif /* KERF_SIM_TIMESIM_PENDING_H */
