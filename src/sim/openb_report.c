#include "sim/openb_report.h"

#include <inttypes.h>
#include <math.h>

#include <jansson.h>

#include "base/units.h"

void kerf_report_table_head(FILE *out)
{
	fprintf(out, "%-15s %18s %11s %12s %10s %9s\n", "policy",
		"unalloc GPU @100%", "alloc @end", "failed pods",
		"pods/s", "wall");
}

void kerf_report_table_row(FILE *out, const struct kerf_batch_summary *s,
			   const struct kerf_run *runs, size_t nr_runs, bool wide)
{
	char mean[24], sd[24], unalloc[64], end[24], wall[24], lost[32];

	kerf_units_percent(s->unalloc_pct_100_mean, 2, mean, sizeof(mean));
	kerf_units_percent(s->unalloc_pct_100_sd, 2, sd, sizeof(sd));
	snprintf(unalloc, sizeof(unalloc), "%s ± %s", mean, sd);
	kerf_units_percent(s->alloc_pct_end_mean, 2, end, sizeof(end));
	kerf_units_elapsed(s->wall_s, wall, sizeof(wall));
	/* '±' is two bytes and one column: one more byte of width */
	fprintf(out, "%-15s %19s %11s %12.1f %10.0f %9s\n", s->policy, unalloc,
		end, s->failed_pods_mean, s->decisions_per_s, wall);
	if (s->defrag) {
		kerf_units_gpu_hours(s->defrag_lost_gpu_hours_mean, lost, sizeof(lost));
		fprintf(out, "%-15s   defrag up to 100%% arrival: %.1f pods placed by %.1f moves, %s lost (means)\n",
			"", s->defrag_rescued_mean, s->defrag_moves_mean, lost);
		if (wide)
			fprintf(out, "%-15s   defrag tries: %.1f pods fit nowhere, %.1f with no node where moves help, %.1f plans failed, %.1f over budget (means)\n",
				"", s->defrag_attempts_mean, s->defrag_no_candidate_mean,
				s->defrag_tries_failed_mean, s->defrag_over_budget_mean);
	}
	if (!wide)
		return;
	/* wide: each seed's unallocated GPU, so a spread can be traced to
	 * the seed that makes it */
	fprintf(out, "%-15s   unalloc @100%% by seed:", "");
	for (size_t i = 0; i < nr_runs; i++) {
		char pct[24];

		kerf_units_percent(runs[i].unalloc_pct_100, 2, pct, sizeof(pct));
		fprintf(out, "%s %" PRIu64 " %s", i ? "," : "", runs[i].seed, pct);
	}
	fputc('\n', out);
}

static json_t *real_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

/*
 * GPUs dropped before arrivals reached 100 %, mean over runs, by class:
 * [{"name": "fraction", "gpus": X}, {"name": "gpu1", ...}, ...] (classes
 * with none are left out).
 */
static json_t *failed_by_class(const struct kerf_run *runs, size_t nr_runs)
{
	json_t *cls = json_array();

	for (int k = 0; k < KERF_POD_CLASSES && cls; k++) {
		char name[16];
		double v = 0;

		for (size_t i = 0; i < nr_runs; i++)
			v += (double)runs[i].failed_gpu_milli_100_by_class[k + 1];
		if (v == 0)
			continue;
		if (k == 0)
			snprintf(name, sizeof(name), "fraction");
		else
			snprintf(name, sizeof(name), "gpu%d", k);
		json_array_append_new(cls, json_pack("{s:s, s:f}", "name", name,
						     "gpus", v / (double)nr_runs / KERF_GPU_MILLI));
	}
	return cls;
}

static json_t *defrag_item(const struct kerf_batch_summary *s)
{
	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
			 "movesMean", s->defrag_moves_mean,
			 "rescuedPodsMean", s->defrag_rescued_mean,
			 "lostGPUHoursMean", s->defrag_lost_gpu_hours_mean,
			 "attemptsMean", s->defrag_attempts_mean,
			 "noCandidateMean", s->defrag_no_candidate_mean,
			 "triesFailedMean", s->defrag_tries_failed_mean,
			 "overBudgetMean", s->defrag_over_budget_mean);
}

json_t *kerf_report_item(const struct kerf_batch_summary *s,
			 const struct kerf_run *runs, size_t nr_runs)
{
	json_t *o, *per = json_array();

	for (size_t i = 0; per && i < nr_runs; i++)
		json_array_append_new(per, json_pack("{s:I, s:o}", "seed",
						     (json_int_t)runs[i].seed,
						     "unallocPercentAt100",
						     real_or_null(runs[i].unalloc_pct_100)));
	o = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:f, s:o, s:f, s:f, s:f, s:f, s:f}",
		      "policy", s->policy,
		      "unallocPercentAt100Mean", real_or_null(s->unalloc_pct_100_mean),
		      "unallocPercentAt100Sd", real_or_null(s->unalloc_pct_100_sd),
		      "seeds", per,
		      "allocPercentAt130Mean", real_or_null(s->alloc_pct_130_mean),
		      "allocPercentAtEndMean", real_or_null(s->alloc_pct_end_mean),
		      "podsMean", s->pods_mean,
		      "failedGPUsAt100ByClass", failed_by_class(runs, nr_runs),
		      "failedPodsMean", s->failed_pods_mean,
		      "podsPerSecond", s->decisions_per_s,
		      "nodeEvalsMean", s->node_evals_mean,
		      "cacheHitsMean", s->cache_hits_mean,
		      "wallSeconds", s->wall_s);
	if (o && s->defrag && json_object_set_new(o, "defrag", defrag_item(s)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

void kerf_report_curve_head(FILE *out)
{
	fprintf(out, "policy,arrived_pct,alloc_pct_mean,alloc_pct_sd,unalloc_pct_mean\n");
}

void kerf_report_curve_rows(FILE *out, const struct kerf_batch_summary *s,
			    int inflate_pct)
{
	for (int k = 0; k <= inflate_pct && k <= KERF_CURVE_MAX_PCT; k++) {
		double m = s->curve_mean[k];

		if (isnan(m))
			continue;
		fprintf(out, "%s,%d,%.4f,%.4f,%.4f\n", s->policy, k, m,
			s->curve_sd[k], 100.0 - m);
	}
}
