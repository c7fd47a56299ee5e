/*
 * openb_run: one run of the FGD experiment (one policy, one seed) and the
 * allocation curve it produces.
 *
 * The cluster is the trace's nodes in a random order drawn from the seed (the
 * published simulator renames nodes with a random prefix and breaks ties by
 * name, which is the same thing).  Pods arrive one at a time in the
 * workload's order; a pod that fits nowhere is dropped.  After every pod the
 * run records (arrived GPU request, allocated GPU); the curve bins these by
 * arrived request in 1 % steps of capacity (rounded half to even) and
 * averages the allocation in each bin, as the artifact's analysis does.
 */
#ifndef KERF_SIM_OPENB_RUN_H
#define KERF_SIM_OPENB_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/defrag.h"
#include "core/framework.h"
#include "sim/openb.h"

enum { KERF_CURVE_MAX_PCT = 1000 };

struct kerf_run {
	const char *policy;             /* static registry name */
	uint64_t seed;
	int inflate_pct;
	size_t nr_pods;                 /* submitted */
	size_t nr_failed;
	int64_t gpu_milli_capacity;
	int64_t gpu_milli_failed;       /* GPU request of dropped pods */
	size_t failed_by_class[KERF_POD_CLASSES + 1]; /* [0] CPU-only, [1+k] */
	/* GPU request dropped before arrivals reached 100 % of capacity. */
	int64_t failed_gpu_milli_100_by_class[KERF_POD_CLASSES + 1];
	double curve[KERF_CURVE_MAX_PCT + 1]; /* alloc % by arrived %, NaN = none */
	double unalloc_pct_100;
	double alloc_pct_end;           /* allocation at arrived = inflate_pct */
	double wall_s;
	struct kerf_sched_stats stats;
	struct kerf_defrag_stats defrag; /* moves made before 100 % arrival */
	struct kerf_defrag_stats defrag_all; /* over the whole run */
	size_t first_failure_pod;       /* trace index of the first dropped pod */
	char first_failure[KERF_REASON_MAX]; /* why it was dropped; "" if none */
};

struct kerf_run_opts {
	const char *policy;
	const char *policy_options;     /* may be NULL */
	uint64_t seed;
	int inflate_pct;                /* 130 = the published 1.3 */
	/*
	 * Defragmentation (core/defrag.h): best-effort (qos BE) pods may be
	 * moved to make room for a pod that fits nowhere.  The FGD method has
	 * no clock, so arrivals are taken to come arrival_ms apart and pods to
	 * checkpoint every checkpoint_ms from their start.
	 */
	bool defrag;
	struct kerf_defrag_budget defrag_budget;
	int64_t arrival_ms;
	int64_t checkpoint_ms;
	uint32_t consolidate_every;     /* arrivals between passes; 0 = never */
	uint32_t consolidate_moves;     /* moves per pass */
	int consolidate_from_pct;       /* of GPU allocated */
};

int kerf_openb_run(const struct kerf_openb *trace,
		   const struct kerf_run_opts *opts, struct kerf_run *out,
		   struct kerf_err *err);

#endif /* KERF_SIM_OPENB_RUN_H */
