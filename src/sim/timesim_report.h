/*
 * timesim_report: what a time-mode run says, per tenant and per priority
 * class: GPU-hours, long-run share of the GPUs in use against the weighted
 * entitlement, waits (p50/p95/p99), admissions, evictions, and for
 * non-preemptible classes the share that started within the SLO.
 */
#ifndef KERF_SIM_TIMESIM_REPORT_H
#define KERF_SIM_TIMESIM_REPORT_H

#include <stdio.h>

#include "sim/timesim.h"

/* Time a non-preemptible workload may wait before its SLO is missed. */
#define KERF_START_SLO_MS (60 * 1000)

/* Weighted entitlement of tenant t, in parts per million of the cluster. */
int64_t kerf_ts_entitlement_ppm(const struct kerf_tenants *tt, int t);

/* Long-run share of tenant t: its GPU use over all GPU use, ppm. */
int64_t kerf_ts_share_ppm(const struct kerf_timesim *ts, int t);

/* Share of a class's workloads that started within KERF_START_SLO_MS, ppm. */
int64_t kerf_ts_slo_ppm(const struct kerf_ts_tenant_stats *s);

void kerf_ts_report_text(FILE *out, const struct kerf_timesim *ts);
int kerf_ts_report_json(FILE *out, const struct kerf_timesim *ts);

#endif /* KERF_SIM_TIMESIM_REPORT_H */
