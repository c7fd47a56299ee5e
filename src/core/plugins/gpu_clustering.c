/*
 * gpu-clustering: keep pods of the same GPU class (fraction, 1 GPU, 2 GPUs,
 * ...) together.  As published, by bands of 25:
 *   node holds only this class       -> band 75
 *   node holds this class and others -> band 50
 *   node holds no GPU pod            -> band 25
 *   node holds only other classes    -> band 0
 * plus, within a band, more GPU in use scores higher:
 *   band + 25 * (8000 - gpu_free) / 8000 (integer division, so an idle
 * 8-GPU node scores exactly its band; a node with more than 8 free GPUs can
 * fall below it).  CPU-only pods score 0.
 */
#include "core/plugins/plugins.h"

static int32_t gpu_clustering_score(void *priv, const struct kerf_cluster *c,
				    const struct kerf_node *n,
				    const struct kerf_pod *p, uint16_t *gpus)
{
	int cls = kerf_pod_class(p), classes = 0;
	int32_t fill, band;

	(void)priv;
	(void)c;
	(void)gpus;
	if (cls < 0)
		return 0;
	for (int k = 0; k < KERF_POD_CLASSES; k++)
		classes += n->nr_pods_by_class[k] > 0;
	fill = 25 * (KERF_MAX_SPEC_GPU_MILLI - n->gpu_free_milli_sum) /
	       KERF_MAX_SPEC_GPU_MILLI;
	if (n->nr_pods_by_class[cls] > 0)
		band = classes == 1 ? 75 : 50;
	else
		band = classes == 0 ? 25 : 0;
	return band + fill;
}

const struct kerf_plugin kerf_plugin_gpu_clustering = {
	.name = "gpu-clustering",
	.flags = KERF_PLUGIN_PURE,
	.score = gpu_clustering_score,
};
