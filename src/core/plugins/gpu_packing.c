/*
 * gpu-packing: fill GPUs that are already shared, then GPUs of nodes already
 * in use, and touch an idle node last.  As published (scores 0..100):
 *   pod fits on partly used GPUs only  -> 100 - (their free %)/10, >= 50
 *   needs idle GPUs on a used node     -> 50 - (idle GPUs it takes), >= 33
 *   node entirely idle                 -> max(33 - GPUs, GPUs)
 * CPU-only pods score 0 everywhere (the node rank decides).  GPUs best-fit.
 */
#include "core/plugins/plugins.h"

#include "core/gpu_pick.h"

static int32_t gpu_packing_score(void *priv, const struct kerf_cluster *c,
				 const struct kerf_node *n,
				 const struct kerf_pod *p, uint16_t *gpus)
{
	int need = p->nr_gpus, idle_used = 0;
	int64_t free_pct = 0;

	(void)priv;
	(void)c;
	(void)gpus;
	if (p->nr_gpus == 0)
		return 0;
	if (n->nr_gpus_idle == n->nr_gpus) {
		int32_t s = 33 - n->nr_gpus_idle;

		return s > n->nr_gpus_idle ? s : n->nr_gpus_idle;
	}
	/* Walk GPUs from the least free up, as the best-fit picker does. */
	for (int pass_free = 0; pass_free <= KERF_GPU_MILLI && need > 0;) {
		int next = KERF_GPU_MILLI + 1;

		for (int g = 0; g < n->nr_gpus && need > 0; g++) {
			int f = n->gpu_free_milli[g];

			if (f == pass_free && kerf_gpu_fits(n, g, p)) {
				need--;
				idle_used += f == KERF_GPU_MILLI;
				free_pct += (int64_t)f * 100 / KERF_GPU_MILLI;
			}
			if (f > pass_free && f < next)
				next = f;
		}
		pass_free = next;
	}
	if (need > 0)
		return 0;
	if (idle_used > 0)
		return 50 - idle_used > 33 ? 50 - idle_used : 33;
	return 100 - free_pct / 10 > 50 ? (int32_t)(100 - free_pct / 10) : 50;
}

const struct kerf_plugin kerf_plugin_gpu_packing = {
	.name = "gpu-packing",
	.flags = KERF_PLUGIN_PURE,
	.score = gpu_packing_score,
};
