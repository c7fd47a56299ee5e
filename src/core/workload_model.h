/*
 * workload_model: what kerf has learned of the arriving workload, from pods
 * that have arrived and nothing else.
 *
 * Counts of requests by key (cpu, gpu_milli, nr_gpus, model mask, and memory
 * when asked), and the typical distribution derived from them, rebuilt on a
 * geometric schedule (after 1, 2, 4, ... pods, then every rebuild_max pods)
 * so that scores cached against it stay valid between rebuilds.  Bounded:
 * at most max_keys distinct keys are tracked (later new keys are counted
 * only in nr_seen), and counts are halved when their sum nears the
 * distribution's weight bound, which also lets old arrivals fade.
 */
#ifndef KERF_CORE_WORKLOAD_MODEL_H
#define KERF_CORE_WORKLOAD_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/frag.h"

struct kerf_workload_model {
	struct kerf_dist_entry *keys;   /* distinct keys with counts */
	size_t nr_keys;
	size_t alloc_keys;
	size_t max_keys;
	uint32_t *slots;                /* hash index: key position + 1 */
	size_t nr_slots;
	int64_t nr_seen;
	int64_t weight_sum;
	int64_t next_rebuild;           /* nr_seen at the next rebuild */
	int64_t rebuild_max;            /* longest gap between rebuilds */
	int coverage_pct;
	unsigned dist_flags;            /* KERF_DIST_* */
	int weigh_gpu;                  /* 0 count, 1 count x (1 + GPUs), 2 GPUs */
	struct kerf_pod_dist dist;      /* current typical distribution */
};

int kerf_workload_model_init(struct kerf_workload_model *m, int coverage_pct,
			     unsigned dist_flags, int64_t rebuild_max,
			     size_t max_keys);
void kerf_workload_model_release(struct kerf_workload_model *m);

/* Count one arrival; true when m->dist was rebuilt. */
bool kerf_workload_model_observe(struct kerf_workload_model *m,
				 const struct kerf_pod *p);

#endif /* KERF_CORE_WORKLOAD_MODEL_H */
