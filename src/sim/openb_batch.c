#include "sim/openb_batch.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct batch {
	const struct kerf_openb *trace;
	const struct kerf_run_opts *opts;
	const uint64_t *seeds;
	struct kerf_run *runs;
	int *rcs;
	struct kerf_err *errs;
	size_t nr;
	size_t next;          /* next seed to start, under lock */
	size_t done;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static void *worker(void *arg)
{
	struct batch *b = arg;

	for (;;) {
		struct kerf_run_opts o;
		size_t i;

		pthread_mutex_lock(&b->lock);
		i = b->next++;
		pthread_mutex_unlock(&b->lock);
		if (i >= b->nr)
			return NULL;
		o = *b->opts;
		o.seed = b->seeds[i];
		b->rcs[i] = kerf_openb_run(b->trace, &o, &b->runs[i], &b->errs[i]);
		pthread_mutex_lock(&b->lock);
		b->done++;
		pthread_cond_signal(&b->cond);
		pthread_mutex_unlock(&b->lock);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void mean_sd(const double *v, size_t n, double *mean, double *sd)
{
	double s = 0, ss = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	*mean = n ? s / (double)n : NAN;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - *mean) * (v[i] - *mean);
	*sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
}

static void summarise(const struct kerf_run *runs, size_t n, int inflate,
		      struct kerf_batch_summary *sum)
{
	double *v = calloc(n ? n : 1, sizeof(*v));
	double pods = 0, failed = 0, wall = 0, unused;

	if (!v)
		return;
	sum->nr_runs = n;
	for (size_t i = 0; i < n; i++)
		v[i] = runs[i].unalloc_pct_100;
	mean_sd(v, n, &sum->unalloc_pct_100_mean, &sum->unalloc_pct_100_sd);
	for (size_t i = 0; i < n; i++)
		v[i] = runs[i].alloc_pct_end;
	mean_sd(v, n, &sum->alloc_pct_end_mean, &unused);
	for (int k = 0; k <= KERF_CURVE_MAX_PCT; k++) {
		for (size_t i = 0; i < n; i++)
			v[i] = runs[i].curve[k];
		mean_sd(v, n, &sum->curve_mean[k], &sum->curve_sd[k]);
	}
	sum->alloc_pct_130_mean = inflate >= 130 ? sum->curve_mean[130] : NAN;
	for (size_t i = 0; i < n; i++) {
		pods += (double)runs[i].nr_pods;
		failed += (double)runs[i].nr_failed;
		wall += runs[i].wall_s;
		sum->node_evals_mean +=
			(double)runs[i].stats.nr_node_evals / (double)n;
		sum->cache_hits_mean +=
			(double)runs[i].stats.nr_cache_hits / (double)n;
	}
	sum->pods_mean = n ? pods / (double)n : 0;
	for (size_t i = 0; i < n; i++) {
		sum->defrag_moves_mean += (double)runs[i].defrag.moves / (double)n;
		sum->defrag_rescued_mean += (double)runs[i].defrag.rescued / (double)n;
		sum->defrag_lost_gpu_hours_mean +=
			(double)runs[i].defrag.lost_milli_ms / 3.6e9 / (double)n;
		sum->defrag_attempts_mean += (double)runs[i].defrag.attempts / (double)n;
		sum->defrag_no_candidate_mean +=
			(double)runs[i].defrag.no_candidate / (double)n;
		sum->defrag_tries_failed_mean +=
			(double)runs[i].defrag.tries_failed / (double)n;
		sum->defrag_over_budget_mean +=
			(double)runs[i].defrag.over_budget / (double)n;
	}
	sum->failed_pods_mean = n ? failed / (double)n : 0;
	sum->run_wall_s_sum = wall;
	sum->decisions_per_s = wall > 0 ? pods / wall : 0;
	free(v);
}

int kerf_batch_run(const struct kerf_openb *trace,
		   const struct kerf_run_opts *opts, const uint64_t *seeds,
		   size_t nr_seeds, int jobs, struct kerf_run *runs,
		   kerf_batch_progress_fn progress, void *ctx,
		   struct kerf_batch_summary *sum, struct kerf_err *err)
{
	struct batch b = {
		.trace = trace, .opts = opts, .seeds = seeds, .runs = runs,
		.nr = nr_seeds,
	};
	pthread_t threads[64];
	int nr_threads = 0, rc = 0;
	size_t reported = 0;
	double t0 = now_s();

	memset(sum, 0, sizeof(*sum));
	sum->policy = opts->policy;
	if (nr_seeds == 0)
		return kerf_err_set(err, -KERF_EINVAL, "no seeds to run");
	if (jobs < 1)
		jobs = 1;
	if (jobs > 64)
		jobs = 64;
	if ((size_t)jobs > nr_seeds)
		jobs = (int)nr_seeds;
	b.rcs = calloc(nr_seeds, sizeof(*b.rcs));
	b.errs = calloc(nr_seeds, sizeof(*b.errs));
	if (!b.rcs || !b.errs) {
		free(b.rcs);
		free(b.errs);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	pthread_mutex_init(&b.lock, NULL);
	pthread_cond_init(&b.cond, NULL);
	for (int t = 0; t < jobs; t++)
		if (pthread_create(&threads[nr_threads], NULL, worker, &b) == 0)
			nr_threads++;
	if (nr_threads == 0)
		worker(&b);
	pthread_mutex_lock(&b.lock);
	while (reported < nr_seeds) {
		while (b.done == reported && nr_threads > 0)
			pthread_cond_wait(&b.cond, &b.lock);
		reported = b.done;
		pthread_mutex_unlock(&b.lock);
		if (progress)
			progress(ctx, reported, nr_seeds);
		pthread_mutex_lock(&b.lock);
	}
	pthread_mutex_unlock(&b.lock);
	for (int t = 0; t < nr_threads; t++)
		pthread_join(threads[t], NULL);
	for (size_t i = 0; i < nr_seeds && rc == 0; i++)
		if (b.rcs[i] < 0)
			rc = kerf_err_set(err, b.rcs[i], "seed %llu: %s",
					  (unsigned long long)seeds[i],
					  b.errs[i].msg);
	if (rc == 0) {
		summarise(runs, nr_seeds, opts->inflate_pct, sum);
		sum->defrag = opts->defrag;
		sum->wall_s = now_s() - t0;
	}
	pthread_mutex_destroy(&b.lock);
	pthread_cond_destroy(&b.cond);
	free(b.rcs);
	free(b.errs);
	return rc;
}
