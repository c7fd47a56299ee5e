#include "sim/openb_report.h"

#include <jansson.h>
#include <math.h>

void kerf_report_table_head(FILE *out)
{
	fprintf(out, "%-15s %18s %11s %12s %10s %9s\n", "policy",
		"unalloc GPU @100%", "alloc @end", "failed pods",
		"pods/s", "wall");
}

void kerf_report_table_row(FILE *out, const struct kerf_batch_summary *s)
{
	fprintf(out, "%-15s %9.2f ± %4.2f %% %9.2f %% %12.1f %10.0f %7.2f s\n",
		s->policy, s->unalloc_pct_100_mean, s->unalloc_pct_100_sd,
		s->alloc_pct_end_mean, s->failed_pods_mean, s->decisions_per_s,
		s->wall_s);
	if (s->defrag)
		fprintf(out, "%-15s   defrag up to 100%% arrival: %.1f pods placed by %.1f moves, %.2f GPU-hours lost (means)\n",
			"", s->defrag_rescued_mean, s->defrag_moves_mean,
			s->defrag_lost_gpu_hours_mean);
}

static json_t *real_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

/*
 * GPUs dropped before arrivals reached 100 %, mean over runs, by class:
 * "fraction", "gpu1", "gpu2", ... (classes with none are left out).
 */
static json_t *failed_by_class(const struct kerf_run *runs, size_t nr_runs)
{
	json_t *cls = json_object();

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
		json_object_set_new(cls, name,
				    json_real(v / (double)nr_runs / KERF_GPU_MILLI));
	}
	return cls;
}

int kerf_report_json(FILE *out, const struct kerf_batch_summary *s,
		     const struct kerf_run *runs, size_t nr_runs)
{
	json_t *o = json_object(), *seeds = json_array(), *per = json_array();
	int rc;

	if (!o || !seeds || !per) {
		json_decref(o);
		json_decref(seeds);
		json_decref(per);
		return -1;
	}
	for (size_t i = 0; i < nr_runs; i++) {
		json_array_append_new(seeds, json_integer((json_int_t)runs[i].seed));
		json_array_append_new(per, real_or_null(runs[i].unalloc_pct_100));
	}
	json_object_set_new(o, "policy", json_string(s->policy));
	json_object_set_new(o, "seeds", seeds);
	json_object_set_new(o, "unalloc_pct_100_mean",
			    real_or_null(s->unalloc_pct_100_mean));
	json_object_set_new(o, "unalloc_pct_100_sd",
			    real_or_null(s->unalloc_pct_100_sd));
	json_object_set_new(o, "unalloc_pct_100", per);
	json_object_set_new(o, "alloc_pct_130_mean",
			    real_or_null(s->alloc_pct_130_mean));
	json_object_set_new(o, "alloc_pct_end_mean",
			    real_or_null(s->alloc_pct_end_mean));
	json_object_set_new(o, "pods_mean", json_real(s->pods_mean));
	json_object_set_new(o, "failed_gpus_100_by_class",
			    failed_by_class(runs, nr_runs));
	json_object_set_new(o, "failed_pods_mean", json_real(s->failed_pods_mean));
	if (s->defrag) {
		json_object_set_new(o, "defrag_moves_mean", json_real(s->defrag_moves_mean));
		json_object_set_new(o, "defrag_rescued_mean", json_real(s->defrag_rescued_mean));
		json_object_set_new(o, "defrag_lost_gpu_hours_mean",
				    json_real(s->defrag_lost_gpu_hours_mean));
		json_object_set_new(o, "defrag_attempts_mean",
				    json_real(s->defrag_attempts_mean));
		json_object_set_new(o, "defrag_no_candidate_mean",
				    json_real(s->defrag_no_candidate_mean));
		json_object_set_new(o, "defrag_tries_failed_mean",
				    json_real(s->defrag_tries_failed_mean));
		json_object_set_new(o, "defrag_over_budget_mean",
				    json_real(s->defrag_over_budget_mean));
	}
	json_object_set_new(o, "decisions_per_s", json_real(s->decisions_per_s));
	json_object_set_new(o, "node_evals_mean", json_real(s->node_evals_mean));
	json_object_set_new(o, "cache_hits_mean", json_real(s->cache_hits_mean));
	json_object_set_new(o, "wall_s", json_real(s->wall_s));
	rc = json_dumpf(o, out, JSON_COMPACT | JSON_REAL_PRECISION(6));
	fputc('\n', out);
	json_decref(o);
	return rc;
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
