/*
 * gpu_pick: which GPUs of a node a pod uses, for policies that do not choose
 * themselves.  Best fit: a fraction goes to the GPU with the least room that
 * still fits it (lowest index on ties); whole GPUs are the lowest-indexed
 * GPUs that fit.
 */
#ifndef KERF_CORE_GPU_PICK_H
#define KERF_CORE_GPU_PICK_H

#include <stdint.h>

#include "core/model.h"

/* Mask of the chosen GPUs; 0 when p asks none or n cannot host it. */
uint16_t kerf_gpus_best_fit(const struct kerf_node *n,
			    const struct kerf_pod *p);

#endif /* KERF_CORE_GPU_PICK_H */
