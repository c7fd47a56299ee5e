/*
 * first-fit: every feasible node scores the same, so the node with the lowest
 * rank wins; GPUs are chosen best-fit.  Cheap, and with a fixed node order a
 * strong baseline (it packs implicitly).
 */
#include "core/plugins/plugins.h"

static int32_t first_fit_score(void *priv, const struct kerf_cluster *c,
			       const struct kerf_node *n,
			       const struct kerf_pod *p, uint16_t *gpus)
{
	(void)priv;
	(void)c;
	(void)n;
	(void)p;
	(void)gpus;
	return 0;
}

const struct kerf_plugin kerf_plugin_first_fit = {
	.name = "first-fit",
	.flags = KERF_PLUGIN_PURE,
	.score = first_fit_score,
};
