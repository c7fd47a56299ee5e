#include "core/gpu_pick.h"

uint16_t kerf_gpus_best_fit(const struct kerf_node *n,
			    const struct kerf_pod *p)
{
	uint16_t mask = 0;
	int taken = 0, best = -1;

	if (p->nr_gpus == 0)
		return 0;
	if (kerf_pod_is_fraction(p)) {
		for (int g = 0; g < n->nr_gpus; g++)
			if (kerf_gpu_fits(n, g, p) &&
			    (best < 0 ||
			     n->gpu_free_milli[g] < n->gpu_free_milli[best]))
				best = g;
		return (uint16_t)(best < 0 ? 0u : 1u << best);
	}
	for (int g = 0; g < n->nr_gpus && taken < p->nr_gpus; g++) {
		if (kerf_gpu_fits(n, g, p)) {
			mask |= (uint16_t)(1u << g);
			taken++;
		}
	}
	return taken == p->nr_gpus ? mask : 0;
}
