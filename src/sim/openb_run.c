#include "sim/openb_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/rng.h"
#include "core/policy.h"
#include "sim/fgd_seq.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* round(arrived * 100 / cap), halves to even, as Python's round(). */
static int64_t arrived_bin(int64_t arrived, int64_t cap)
{
	int64_t q = arrived * 100 / cap, r = arrived * 100 % cap;

	if (2 * r > cap || (2 * r == cap && (q & 1)))
		q++;
	return q;
}

struct curve_acc {
	double sum[KERF_CURVE_MAX_PCT + 2];
	uint32_t count[KERF_CURVE_MAX_PCT + 2];
};

static void curve_finish(const struct curve_acc *acc, int max_pct,
			 double *curve)
{
	for (int k = 0; k <= max_pct; k++) {
		double s = acc->sum[k];
		uint32_t n = acc->count[k];

		if (n == 0) {
			/* The artifact widens an empty bin to k-1..k+1. */
			for (int j = k - 1; j <= k + 1; j += 2)
				if (j >= 0 && j <= KERF_CURVE_MAX_PCT + 1) {
					s += acc->sum[j];
					n += acc->count[j];
				}
		}
		curve[k] = n ? s / n : NAN;
	}
	for (int k = max_pct + 1; k <= KERF_CURVE_MAX_PCT; k++)
		curve[k] = NAN;
}

static int build_requests(const struct kerf_openb *trace,
			  struct kerf_cluster *c, struct kerf_pod **out,
			  struct kerf_err *err)
{
	struct kerf_pod *reqs = calloc(trace->nr_pods, sizeof(*reqs));

	if (!reqs)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < trace->nr_pods; i++) {
		int rc = kerf_openb_pod_request(trace, i, c, &reqs[i], err);

		if (rc < 0) {
			free(reqs);
			return rc;
		}
	}
	*out = reqs;
	return 0;
}

static int run_sequence(struct kerf_sched *s, struct kerf_cluster *c,
			const struct kerf_pod *reqs, const uint32_t *seq,
			size_t nr_seq, const bool *movable,
			const struct kerf_run_opts *opts, struct kerf_defrag *d,
			struct kerf_run *out, struct curve_acc *acc)
{
	int64_t cap = out->gpu_milli_capacity, arrived = 0, used = 0;

	for (size_t i = 0; i < nr_seq; i++) {
		const struct kerf_pod *p = &reqs[seq[i]];
		struct kerf_binding b;
		struct kerf_status st = { .code = KERF_FIT };
		enum kerf_code code = kerf_sched_place(
			s, c, p, &b, out->nr_failed == 0 ? &st : NULL);
		int64_t g = kerf_pod_gpu_milli_total(p), bin;
		int64_t now = (int64_t)i * opts->arrival_ms;

		if (code == KERF_INTERNAL)
			return -KERF_EINVAL;
		if (d && code != KERF_FIT &&
		    kerf_defrag_rescue(d, s, c, (uint32_t)i, p, now,
				       opts->checkpoint_ms, &b))
			code = KERF_FIT;
		if (d && code == KERF_FIT)
			kerf_defrag_placed(d, (uint32_t)i, p, b, movable[seq[i]], now);
		/* consolidate ahead of need once the cluster fills up */
		if (d && opts->consolidate_every > 0 && i % opts->consolidate_every == 0 &&
		    used * 100 >= cap * opts->consolidate_from_pct)
			kerf_defrag_consolidate(d, s, c, now, opts->checkpoint_ms,
						opts->consolidate_moves);
		/* the moves that count toward the figure at 100 % arrival */
		if (d && (arrived + g) * 100 <= cap * 100 + cap / 2)
			out->defrag = d->stats;
		arrived += g;
		if (code == KERF_FIT) {
			used += g;
		} else {
			if (out->nr_failed == 0) {
				out->first_failure_pod = seq[i];
				memcpy(out->first_failure, st.reason,
				       sizeof(out->first_failure));
			}
			out->nr_failed++;
			out->gpu_milli_failed += g;
			out->failed_by_class[kerf_pod_class(p) + 1]++;
			if (arrived * 100 <= cap * 100 + cap / 2)
				out->failed_gpu_milli_100_by_class[kerf_pod_class(p) + 1] += g;
		}
		bin = arrived_bin(arrived, cap);
		if (bin <= KERF_CURVE_MAX_PCT + 1) {
			acc->sum[bin] += (double)used * 100.0 / (double)cap;
			acc->count[bin]++;
		}
	}
	out->nr_pods = nr_seq;
	return 0;
}

int kerf_openb_run(const struct kerf_openb *trace,
		   const struct kerf_run_opts *opts, struct kerf_run *out,
		   struct kerf_err *err)
{
	const struct kerf_policy_info *info = kerf_policy_lookup(opts->policy);
	struct kerf_cluster cluster;
	struct kerf_pod_dist dist;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct curve_acc *acc = NULL;
	struct kerf_pod *reqs = NULL;
	struct kerf_defrag defrag;
	bool *movable = NULL;
	uint32_t *order = NULL, *seq = NULL;
	size_t nr_seq = 0;
	struct kerf_rng rng;
	double t0 = now_s();
	int rc;

	memset(out, 0, sizeof(*out));
	if (!info)
		return kerf_err_set(err, -KERF_ENOTFOUND, "policy '%s': unknown",
				    opts->policy);
	if (opts->inflate_pct < 1 || opts->inflate_pct > KERF_CURVE_MAX_PCT)
		return kerf_err_set(err, -KERF_EINVAL,
				    "inflate %d%%: must be 1..%d", opts->inflate_pct,
				    KERF_CURVE_MAX_PCT);
	if (trace->nr_nodes == 0 || trace->nr_pods == 0)
		return kerf_err_set(err, -KERF_EINVAL,
				    "openb: the trace needs nodes and pods");
	out->policy = info->name;
	out->seed = opts->seed;
	out->inflate_pct = opts->inflate_pct;
	kerf_pod_dist_init(&dist);
	order = malloc(trace->nr_nodes * sizeof(*order));
	acc = calloc(1, sizeof(*acc));
	if (!order || !acc) {
		rc = kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		goto out_free;
	}
	kerf_rng_seed(&rng, kerf_fgd_seq_node_seed(opts->seed));
	kerf_rng_perm(&rng, order, trace->nr_nodes);
	rc = kerf_openb_cluster(trace, order, &cluster, err);
	if (rc < 0)
		goto out_free;
	out->gpu_milli_capacity = kerf_cluster_gpu_milli_capacity(&cluster);
	if (out->gpu_milli_capacity == 0) {
		rc = kerf_err_set(err, -KERF_EINVAL, "openb: the nodes have no GPUs");
		goto out_cluster;
	}
	rc = build_requests(trace, &cluster, &reqs, err);
	if (rc < 0)
		goto out_cluster;
	/*
	 * FGD is given the typical pods of the original trace, as published.
	 * kerf learns online and ignores them unless asked for the oracle
	 * ablation (policy option online=0).
	 */
	{
		rc = kerf_pod_dist_typical(&dist, reqs, trace->nr_pods, 95,
					   KERF_DIST_MEAN_MEM, err);
		if (rc < 0)
			goto out_cluster;
	}
	rc = kerf_fgd_seq_build(reqs, trace->nr_pods, out->gpu_milli_capacity,
			       opts->inflate_pct, opts->seed, &seq, &nr_seq, err);
	if (rc < 0)
		goto out_cluster;
	rc = kerf_policy_build(&pol, opts->policy,
			       &(struct kerf_policy_args){
				       .cluster = &cluster,
				       .dist = &dist,
				       .seed = opts->seed,
				       .options = opts->policy_options,
			       },
			       err);
	if (rc < 0)
		goto out_cluster;
	kerf_sched_init(&sched, &pol);
	if (opts->defrag) {
		movable = calloc(trace->nr_pods, sizeof(*movable));
		if (!movable || kerf_defrag_init(&defrag, nr_seq, cluster.nr_slots,
						 &opts->defrag_budget) < 0) {
			rc = kerf_err_set(err, -KERF_ENOMEM, "out of memory");
			kerf_sched_release(&sched);
			kerf_policy_release(&pol);
			goto out_cluster;
		}
		for (size_t i = 0; i < trace->nr_pods; i++)
			movable[i] = !strcmp(trace->pods[i].qos, "BE");
	}
	rc = run_sequence(&sched, &cluster, reqs, seq, nr_seq, movable, opts,
			  opts->defrag ? &defrag : NULL, out, acc);
	if (opts->defrag) {
		out->defrag_all = defrag.stats;
		kerf_defrag_release(&defrag);
	}
	if (rc < 0)
		kerf_err_set(err, rc, "policy '%s' produced an invalid binding",
			     opts->policy);
	out->stats = sched.stats;
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	if (rc == 0) {
		curve_finish(acc, opts->inflate_pct, out->curve);
		out->unalloc_pct_100 = opts->inflate_pct >= 100
					       ? 100.0 - out->curve[100]
					       : NAN;
		out->alloc_pct_end = out->curve[opts->inflate_pct];
	}
out_cluster:
	kerf_cluster_release(&cluster);
out_free:
	kerf_pod_dist_release(&dist);
	free(reqs);
	free(seq);
	free(order);
	free(acc);
	free(movable);
	out->wall_s = now_s() - t0;
	return rc;
}
