/*
 * fgd: fragmentation gradient descent (Weng et al., USENIX ATC'23), exactly
 * as the published artifact scores: the placement that increases the
 * expected fragmentation of the node least wins,
 *   score = floor(100 * sigmoid((F(n) - F(n after pod)) / 1000)),
 * F against the typical pods of the trace (see core/frag.h; where FGD's
 * rule takes more than 64 of them, size classes stand in for the keys).  A
 * fraction tries every GPU that fits and keeps the best (lowest index on
 * ties); whole GPUs take the lowest-indexed idle ones.  The truncated score
 * makes many ties, which the fixed node rank then breaks: that implicit
 * packing is part of why FGD works.
 */
#include "core/plugins/plugins.h"

static int fgd_create(void **priv, const struct kerf_policy_args *args,
		      struct kerf_err *err)
{
	if (!args->dist || args->dist->nr == 0 || args->dist->total_weight <= 0)
		return kerf_err_set(err, -KERF_EINVAL,
				    "fgd: needs the typical pods of the workload");
	*priv = (void *)args->dist;
	return 0;
}

static int64_t fgd_measure(const void *ctx, const struct kerf_pod_dist *d,
			   const struct kerf_frag_view *v)
{
	(void)ctx;
	return kerf_frag_amount(d, v, 0);
}

static int32_t fgd_score(void *priv, const struct kerf_cluster *c,
			 const struct kerf_node *n, const struct kerf_pod *p,
			 uint16_t *gpus)
{
	const struct kerf_pod_dist *d = priv;
	struct kerf_frag_view v;

	(void)c;
	kerf_frag_view_of(&v, n);
	return kerf_frag_score_pod(n, p, &v, kerf_frag_amount(d, &v, 0), d,
				   fgd_measure, NULL, gpus);
}

const struct kerf_plugin kerf_plugin_fgd = {
	.name = "fgd",
	.flags = KERF_PLUGIN_PURE,
	.create = fgd_create,
	.score = fgd_score,
};
