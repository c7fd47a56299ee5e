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

/*
 * Where MIG pod p goes on n (core/mig/place.h, kerf_mig_pick_place): the
 * GPU as a mask in *gpus and the instance's first memory slice in *start;
 * returns the placement's score (higher is better), or INT32_MIN with
 * *gpus = 0 when n cannot host it.  Every policy places MIG pods so.
 */
int32_t kerf_mig_node_pick(const struct kerf_cluster *c,
			   const struct kerf_node *n, const struct kerf_pod *p,
			   uint16_t *gpus, uint8_t *start);

#endif /* KERF_CORE_GPU_PICK_H */
