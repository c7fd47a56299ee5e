/*
 * histogram: a Prometheus histogram of durations in milliseconds, with
 * fixed buckets from 1 ms to 10 s (the cycle's latency: a cycle of 10,000
 * pending workloads on 5,000 nodes takes 13-60 ms, docs/state.md; 10 s is
 * far past anything healthy).  Counts are cumulative per bucket, as the
 * exposition format wants them.  Not thread-safe (the controller's loop
 * owns it).
 */
#ifndef KERF_SERVE_HISTOGRAM_H
#define KERF_SERVE_HISTOGRAM_H

#include <stdint.h>

enum { KERF_HIST_BUCKETS = 12 };

/* The upper bounds of the buckets, in milliseconds, ascending. */
extern const uint32_t kerf_hist_le_ms[KERF_HIST_BUCKETS];

struct kerf_hist_ms {
	uint64_t le[KERF_HIST_BUCKETS]; /* observations <= kerf_hist_le_ms[i] */
	uint64_t count;                 /* all observations (the +Inf bucket) */
	uint64_t sum_ms;
};

/* Count one observation of ms milliseconds. */
void kerf_hist_observe(struct kerf_hist_ms *h, uint64_t ms);

#endif
