/*
 * timesim_record: a time-mode run's report data (report/report.h),
 * gathered through the run's own event loop: attached as the run's hook
 * (the hook already there, the checker's, still runs after it), it keeps
 * the allocation and the preemptions at fixed sample times and the GPU
 * map each time allocation reaches a new peak; kerf_ts_record_finish adds
 * the per-tenant and per-class figures when the run is over.  The state
 * between two events is the state after the first, so a sample time
 * between them takes that.
 */
#ifndef KERF_SIM_TIMESIM_RECORD_H
#define KERF_SIM_TIMESIM_RECORD_H

#include "report/report.h"
#include "sim/timesim.h"

struct kerf_ts_record {
	struct kerf_report *rep;    /* borrowed */
	kerf_ts_hook next;          /* the hook that was there */
	void *next_ctx;
	int next_sample;            /* first sample not yet filled */
	int64_t alloc_ppm;          /* after the last event */
	uint64_t preempted;
	int64_t lost_milli_ms;      /* GPU-milli x ms / 1000 */
	int rc;                     /* -KERF_ENOMEM while taking a map */
};

/*
 * Record ts's run into rep (kerf_report_init'd; its horizon set from ts).
 * Call before kerf_timesim_run and after setting any other hook.
 */
void kerf_ts_record_attach(struct kerf_ts_record *rec, struct kerf_timesim *ts,
			   struct kerf_report *rep);

/* After the run: the samples to the horizon, tenants, classes, totals. */
int kerf_ts_record_finish(struct kerf_ts_record *rec,
			  const struct kerf_timesim *ts, struct kerf_err *err);

#endif /* KERF_SIM_TIMESIM_RECORD_H */
