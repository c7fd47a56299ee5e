/*
 * spec_weight: the typical pods weighted by the GPU capacity their model
 * constraints (gpu_spec) leave them.
 *
 * FGD's measure, and kerf's, weigh a typical pod by how often it arrives.
 * That is right for pods that may use any GPU: a pod lost here finds room
 * elsewhere until the whole cluster is full.  A pod that may use only T4s
 * has only the T4s; if they are gone it fails however much else is idle.
 * So a unit of capacity matters to it in proportion to how little capacity
 * of its models is left -- but only if its kind will need that capacity at
 * all.  For a typical pod m with model mask S (0 = any):
 *
 *   F       idle GPU milli of the whole cluster
 *   f_S     idle GPU milli on nodes of the models in S
 *   q_S     share of the typical GPU demand (weight * GPUs * milli) of the
 *           typical pods that may use only models in S
 *   lambda  q_S * F / f_S: the part of f_S that pods confined to S will ask
 *           if arrivals go on until the cluster is full (>= 1: all of it)
 *   w'_m    w_m * max(1, F / f_S * min(1, lambda))
 *
 * F / f_S is m's demand density on its own capacity relative to a pod that
 * may go anywhere; min(1, lambda) keeps of it only the part of the capacity
 * that confined pods will actually need.  So a T4-only pod whose T4s will
 * run out weighs F / f_T4 times its arrivals.  It never weighs less than
 * its arrivals: pods that may go anywhere fill its models too, so its
 * capacity runs out no later than the cluster's, which is all a pod that
 * may go anywhere depends on.  Such a pod keeps w_m (S is everything:
 * F / f_S = 1 and lambda = 1); so does every pod when no typical pod names
 * a model, and the measures are FGD's and kerf's unchanged.  When f_S is 0
 * (nothing of its models is idle) the weight is left as it is.
 *
 * Integers only: F / f_S and lambda in 1/65536 (16 fractional bits), the
 * weight rounded to the nearest integer.  When the weights would pass
 * KERF_DIST_MAX_WEIGHT they are halved together (rounded, at least 1).
 */
#ifndef KERF_CORE_SPEC_WEIGHT_H
#define KERF_CORE_SPEC_WEIGHT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "core/frag.h"
#include "core/model.h"

/* Idle GPU capacity by model, as the weights see it. */
struct kerf_model_idle {
	int64_t milli[KERF_MAX_MODELS]; /* idle GPU milli on nodes of model i */
	int64_t total_milli;            /* over every node with GPUs */
	int64_t capacity_milli;         /* GPU milli of those nodes, idle or not */
};

/* Idle GPU milli of c by model (cordoned nodes and MIG GPUs count 0). */
void kerf_model_idle_of(struct kerf_model_idle *idle,
			const struct kerf_cluster *c);

/* True when some typical pod of d names GPU models. */
bool kerf_pod_dist_has_models(const struct kerf_pod_dist *d);

/*
 * out = d with the weights w'_m above (same keys or size classes, order
 * and memory).
 * Replaces out's contents; out must not be d.  -KERF_ENOMEM leaves out
 * empty.
 */
int kerf_pod_dist_weigh_by_models(struct kerf_pod_dist *out,
				  const struct kerf_pod_dist *d,
				  const struct kerf_model_idle *idle,
				  struct kerf_err *err);

#endif /* KERF_CORE_SPEC_WEIGHT_H */
