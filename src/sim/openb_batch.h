/*
 * openb_batch: the runs of one policy over a list of seeds, spread over
 * worker threads (each run is independent and single-threaded), and the
 * summary across seeds.
 */
#ifndef KERF_SIM_OPENB_BATCH_H
#define KERF_SIM_OPENB_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "sim/openb_run.h"

struct kerf_batch_summary {
	const char *policy;
	size_t nr_runs;
	double unalloc_pct_100_mean;
	double unalloc_pct_100_sd;      /* sample sd (n - 1); 0 for one run */
	double alloc_pct_end_mean;      /* at arrived = inflate */
	double alloc_pct_130_mean;      /* NaN when inflate < 130 */
	double failed_pods_mean;
	double pods_mean;
	double wall_s;                  /* elapsed for the whole batch */
	double run_wall_s_sum;          /* sum over runs */
	double decisions_per_s;         /* pods per second of run time */
	double node_evals_mean;         /* filter + score runs of a node */
	double cache_hits_mean;         /* verdicts found in the score cache */
	/* defragmentation, up to 100 % arrival, mean over runs */
	bool defrag;
	double defrag_moves_mean;
	double defrag_rescued_mean;
	double defrag_lost_gpu_hours_mean;
	double defrag_attempts_mean;    /* pods that fit nowhere */
	double defrag_no_candidate_mean;/* ... with no node where moves help */
	double defrag_tries_failed_mean;/* plans whose moved pods found no place */
	double defrag_over_budget_mean; /* rescues the budget refused */
	double curve_mean[KERF_CURVE_MAX_PCT + 1];
	double curve_sd[KERF_CURVE_MAX_PCT + 1];
};

/* Called from the calling thread as runs finish (may be NULL). */
typedef void (*kerf_batch_progress_fn)(void *ctx, size_t done, size_t total);

/*
 * Run opts->policy for each of seeds[] with up to jobs threads; runs[]
 * receives one result per seed, in seed order.
 */
int kerf_batch_run(const struct kerf_openb *trace,
		   const struct kerf_run_opts *opts, const uint64_t *seeds,
		   size_t nr_seeds, int jobs, struct kerf_run *runs,
		   kerf_batch_progress_fn progress, void *ctx,
		   struct kerf_batch_summary *sum, struct kerf_err *err);

#endif /* KERF_SIM_OPENB_BATCH_H */
