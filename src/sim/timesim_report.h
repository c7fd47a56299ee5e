/*
 * timesim_report: what a time-mode run says, per tenant and per priority
 * class: GPU-hours, long-run share of the GPUs in use against the
 * entitlement given demand (overall and per window of time), waits (p50/p95/p99), admissions, evictions, and for
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

/*
 * Long-run entitlement of tenant t given demand (sim/entitlement.h): what
 * it was owed over all that was owed, ppm.  Under contention this is what
 * its share should come to.
 */
int64_t kerf_ts_owed_ppm(const struct kerf_timesim *ts, int t);

/* Windows of the share-over-time series in the reports. */
enum { KERF_TS_WINDOWS = 24 };

/*
 * Share of the GPUs in use and entitlement of tenant t in window k of
 * KERF_TS_WINDOWS, ppm (-1: nothing in use, nothing owed).
 */
void kerf_ts_window_ppm(const struct kerf_timesim *ts, int t, int k,
			int64_t *share, int64_t *owed);

/* Tenant t's path, "org/team", into buf. */
void kerf_ts_tenant_path(const struct kerf_tenants *tt, int t, char *buf,
			 size_t size);

/* Share of a class's workloads that started within KERF_START_SLO_MS, ppm. */
int64_t kerf_ts_slo_ppm(const struct kerf_ts_tenant_stats *s);

void kerf_ts_report_text(FILE *out, const struct kerf_timesim *ts);
int kerf_ts_report_json(FILE *out, const struct kerf_timesim *ts);

#endif /* KERF_SIM_TIMESIM_REPORT_H */
