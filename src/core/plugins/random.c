/*
 * random: every feasible node is equally likely (the node with the largest
 * draw wins).  Draws come from the seed in the policy arguments, so a run is
 * repeatable.  Not pure: scores are never cached.
 */
#include "core/plugins/plugins.h"

#include <stdlib.h>

#include "base/rng.h"

static int random_create(void **priv, const struct kerf_policy_args *args,
			 struct kerf_err *err)
{
	struct kerf_rng *rng = malloc(sizeof(*rng));

	if (!rng)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	kerf_rng_seed(rng, args->seed);
	*priv = rng;
	return 0;
}

static void random_destroy(void *priv)
{
	free(priv);
}

static int32_t random_score(void *priv, const struct kerf_cluster *c,
			    const struct kerf_node *n,
			    const struct kerf_pod *p, uint16_t *gpus)
{
	(void)c;
	if (kerf_pod_is_fraction(p)) {
		/* A GPU that fits, uniformly. */
		int fits[KERF_NODE_MAX_GPUS], nr = 0;

		for (int g = 0; g < n->nr_gpus; g++)
			if (kerf_gpu_fits(n, g, p))
				fits[nr++] = g;
		if (nr > 0)
			*gpus = (uint16_t)(1u << fits[kerf_rng_below(priv, (uint64_t)nr)]);
	}
	return (int32_t)(kerf_rng_next(priv) >> 34);
}

const struct kerf_plugin kerf_plugin_random = {
	.name = "random",
	.create = random_create,
	.destroy = random_destroy,
	.score = random_score,
};
