#include "core/gpu_pick.h"

#include "core/mig/place.h"

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

int32_t kerf_mig_node_pick(const struct kerf_cluster *c,
			   const struct kerf_node *n, const struct kerf_pod *p,
			   uint16_t *gpus, uint8_t *start)
{
	struct kerf_mig_pick pk;
	int pi = kerf_pod_mig_profile(c, n, p);

	*gpus = 0;
	*start = 0;
	/* GPUs out of service are left out */
	if (pi < 0 || !(n->mig_gpus & ~n->gpus_down) ||
	    !kerf_mig_pick_place(c->models[n->model].mig, n->mig,
				 (uint16_t)(n->mig_gpus & ~n->gpus_down),
				 (unsigned)pi, p->gpu_milli, &pk))
		return INT32_MIN;
	*gpus = (uint16_t)(1u << pk.gpu);
	*start = pk.start;
	return kerf_mig_pick_score(&pk);
}
