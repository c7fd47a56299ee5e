/*
 * fgd: fragmentation gradient descent (Weng et al., USENIX ATC'23), exactly
 * as the published artifact scores: the placement that increases the
 * expected fragmentation of the node least wins,
 *   score = floor(100 * sigmoid((F(n) - F(n after pod)) / 1000)),
 * F against the typical pods of the trace (see core/frag.h).  A fraction
 * tries every GPU that fits and keeps the best (lowest index on ties); whole
 * GPUs take the lowest-indexed idle ones.  The truncated score makes many
 * ties, which the fixed node rank then breaks: that implicit packing is part
 * of why FGD works.
 */
#include "core/plugins/plugins.h"

#include "core/gpu_pick.h"

static int fgd_create(void **priv, const struct kerf_policy_args *args,
		      struct kerf_err *err)
{
	if (!args->dist || args->dist->nr == 0 || args->dist->total_weight <= 0)
		return kerf_err_set(err, -KERF_EINVAL,
				    "fgd: needs the typical pods of the workload");
	*priv = (void *)args->dist;
	return 0;
}

static int32_t fgd_score(void *priv, const struct kerf_cluster *c,
			 const struct kerf_node *n, const struct kerf_pod *p,
			 uint16_t *gpus)
{
	const struct kerf_pod_dist *d = priv;
	struct kerf_frag_view v, after;
	int64_t f0;
	int best = -1;

	(void)c;
	kerf_frag_view_of(&v, n);
	f0 = kerf_frag_amount(d, &v, 0);
	if (!kerf_pod_is_fraction(p)) {
		uint16_t mask = kerf_gpus_best_fit(n, p);

		after = v;
		kerf_frag_view_sub(&after, p, mask);
		*gpus = mask;
		return kerf_fgd_score(f0 - kerf_frag_amount(d, &after, 0),
				      d->total_weight);
	}
	for (int g = 0; g < n->nr_gpus; g++) {
		int s, seen = 0;

		if (!kerf_gpu_fits(n, g, p))
			continue;
		/* Equal free values give equal scores: the first one stands. */
		for (int h = 0; h < g && !seen; h++)
			seen = kerf_gpu_fits(n, h, p) &&
			       n->gpu_free_milli[h] == n->gpu_free_milli[g];
		if (seen)
			continue;
		after = v;
		kerf_frag_view_sub(&after, p, (uint16_t)(1u << g));
		s = kerf_fgd_score(f0 - kerf_frag_amount(d, &after, 0),
				   d->total_weight);
		if (s > best) {
			best = s;
			*gpus = (uint16_t)(1u << g);
		}
	}
	return best < 0 ? 0 : best;
}

const struct kerf_plugin kerf_plugin_fgd = {
	.name = "fgd",
	.flags = KERF_PLUGIN_PURE,
	.create = fgd_create,
	.score = fgd_score,
};
