/*
 * dotprod: Tetris-style alignment (Grandl et al., SIGCOMM'14) as used by the
 * FGD artifact: the dot product of the node's free vector and the pod's
 * request vector, both normalised by the largest node (128 cores, 8 GPUs),
 * averaged over the two dimensions; score = floor(100 * (1 - dot)).  A node
 * whose free resources line up with the pod scores low, so the pod goes where
 * it aligns least with what is left, packing small requests together.
 * GPUs are chosen best-fit.
 */
#include "core/plugins/plugins.h"

static int32_t dotprod_score(void *priv, const struct kerf_cluster *c,
			     const struct kerf_node *n,
			     const struct kerf_pod *p, uint16_t *gpus)
{
	const int64_t cs = KERF_MAX_SPEC_CPU_MILLI;
	const int64_t gs = KERF_MAX_SPEC_GPU_MILLI;
	/* dot * 2 * cs^2 = cl*cp + (cs/gs)^2 * gl*gp */
	int64_t num = n->cpu_free_milli * p->cpu_milli +
		      (cs / gs) * (cs / gs) *
			      (int64_t)n->gpu_free_milli_sum *
			      kerf_pod_gpu_milli_total(p);
	int64_t den = 2 * cs * cs;

	(void)priv;
	(void)c;
	(void)gpus;
	/*
	 * 100 * (1 - num / den), floored: 100 - ceil(100 num / den), split
	 * as 100 q + ceil(100 r / den) so that 100 * num cannot overflow
	 * (num < 2^63 by the model's capacity bounds).
	 */
	return (int32_t)(100 - 100 * (num / den) - (100 * (num % den) + den - 1) / den);
}

const struct kerf_plugin kerf_plugin_dotprod = {
	.name = "dotprod",
	.flags = KERF_PLUGIN_PURE,
	.score = dotprod_score,
};
