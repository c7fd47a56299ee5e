/*
 * timesim_report: what a time-mode run says, per tenant and per priority
 * class: GPU-hours, long-run share of the GPUs in use against the
 * entitlement given demand (overall and per window of time), waits (p50/p95/p99), admissions, evictions, and for
 * non-preemptible classes the share that started within the SLO.
 */
#ifndef KERF_SIM_TIMESIM_REPORT_H
#define KERF_SIM_TIMESIM_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

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

/* Figures of a whole run, for the summaries. */
struct kerf_ts_totals {
	uint32_t gpus;
	uint64_t submitted, started;    /* workloads, every tenant */
	uint32_t preempted, idle_reclaimed, evicted;
	double gpu_hours, lost_gpu_hours;  /* leaves (a parent's include them) */
};

void kerf_ts_totals(const struct kerf_timesim *ts, struct kerf_ts_totals *tot);

/* When tenant t's GPU-hour budget was first all spent, ms; -1: never. */
int64_t kerf_ts_budget_spent_ms(const struct kerf_timesim *ts, int t);

/*
 * The tables of a run: per tenant (entitled, share, GPU-hours, started,
 * p99 wait, preemptions, lost GPU-hours), budgets and idle reclaims, per
 * class.  wide adds the p50 and p95 waits, evictions and the share against
 * the entitlement over sixths of the run.
 */
void kerf_ts_report_text(FILE *out, const struct kerf_timesim *ts, bool wide);

/*
 * The members of a SimulationRun document (docs/schema/SimulationRun.json)
 * set on doc: source (command as given), summary, tenants, classes,
 * pending.  0, or -1 out of memory.
 */
int kerf_ts_report_json(json_t *doc, const struct kerf_timesim *ts,
			const char *command);

#endif /* KERF_SIM_TIMESIM_REPORT_H */
