/*
 * pool_status: a GPUPool's status as kerf serve writes it, so that
 * `kubectl get gpupools` shows what the pool holds: observedGeneration,
 * nodes (the nodes of its flavor), gpus (their GPUs) and allocated (GPUs
 * held by what runs there, a decimal: "2.5" for 2,500 GPU-milli).
 */
#ifndef KERF_SERVE_POOL_STATUS_H
#define KERF_SERVE_POOL_STATUS_H

#include "kobj/gpupool.h"
#include "serve/world.h"

/* The merge patch of p's /status from the world now: body (malloc'd JSON). */
int kerf_pool_status_patch(const struct kerf_world *w,
			   const struct kerf_kobj_gpupool *p, char **body);

#endif
