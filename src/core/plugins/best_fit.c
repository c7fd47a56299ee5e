/*
 * best-fit: prefer the node left with the least free CPU and GPU after the
 * pod, each normalised by the largest node (128 cores, 8 GPUs), weighted
 * half and half.  As published: score = floor(100 * (1 - raw)) with
 * raw = 0.5 (cpu_left - cpu) / 128000 + 0.5 (gpu_left - gpu) / 8000.
 * In integers, 100 * raw = X / 2560 with X = cpu_rest + 16 * gpu_rest, so the
 * score is 100 - ceil(X / 2560).  GPUs are chosen best-fit.
 */
#include "core/plugins/plugins.h"

static int32_t best_fit_score(void *priv, const struct kerf_cluster *c,
			      const struct kerf_node *n,
			      const struct kerf_pod *p, uint16_t *gpus)
{
	int64_t cpu_rest = n->cpu_free_milli - p->cpu_milli;
	int64_t gpu_rest = n->gpu_free_milli_sum - kerf_pod_gpu_milli_total(p);
	int64_t x = cpu_rest + 16 * gpu_rest;

	(void)priv;
	(void)c;
	(void)gpus;
	_Static_assert(KERF_MAX_SPEC_CPU_MILLI / KERF_MAX_SPEC_GPU_MILLI == 16,
		       "the integer form assumes cpu spec = 16 x gpu spec");
	return (int32_t)(100 - (x + 2559) / 2560);
}

const struct kerf_plugin kerf_plugin_best_fit = {
	.name = "best-fit",
	.flags = KERF_PLUGIN_PURE,
	.score = best_fit_score,
};
