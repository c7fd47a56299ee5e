/*
 * mig/planner: which MIG instances to create and destroy on a node so that
 * pending demand is served, without touching an instance in use and
 * without ever passing through an illegal layout.
 *
 * Demand is a count of instances wanted per profile.  A free (not in use)
 * instance of a wanted profile serves one; the planner may destroy free
 * instances and create new ones.  Per GPU it searches every legal layout
 * that keeps the instances in use (a few hundred at most on an 8-slice
 * GPU) and takes, in this order:
 *   1. the most demand served, weighted by compute slices (a 3g wanted
 *      counts three times a 1g);
 *   2. the fewest actions (creates + destroys);
 *   3. the least headroom lost: headroom is, summed over the profiles, how
 *      many of each could still be added alone times its compute slices,
 *      so carving into a GPU already cut up beats cutting into an empty
 *      one that a 7g could still use;
 *   4. the first in a fixed order (GPU index, then the layout found first).
 * Across the GPUs of a node it is greedy: the GPU whose best layout scores
 * best is fixed first, then the demand left is planned on the others.
 *
 * Actions come destroys first, then creates, so applying them one by one
 * in order only ever shrinks then grows a legal layout: every step is
 * legal (kerf_mig_apply checks each).
 */
#ifndef KERF_CORE_MIG_PLANNER_H
#define KERF_CORE_MIG_PLANNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/mig/geometry.h"

enum {
	KERF_MIG_MAX_GPUS = 16,      /* per node */
	KERF_MIG_MAX_ACTIONS = KERF_MIG_MAX_GPUS * 2 * KERF_MIG_MAX_INSTANCES,
};

enum kerf_mig_action_kind {
	KERF_MIG_DESTROY = 0,
	KERF_MIG_CREATE = 1,
};

struct kerf_mig_action {
	enum kerf_mig_action_kind kind;
	uint8_t gpu;                 /* index in the node */
	uint8_t profile;             /* index into the model's profiles */
	uint8_t start;               /* memory slice */
};

/* A node as the planner sees it: GPUs of one model, each with its layout. */
struct kerf_mig_node {
	const struct kerf_mig_model *model;
	struct kerf_mig_layout gpus[KERF_MIG_MAX_GPUS];
	uint8_t nr_gpus;
};

struct kerf_mig_plan {
	struct kerf_mig_action actions[KERF_MIG_MAX_ACTIONS];
	size_t nr_actions;
	struct kerf_mig_layout after[KERF_MIG_MAX_GPUS];
	/* per profile: demand met by free instances after the plan, and not */
	uint16_t served[KERF_MIG_MAX_PROFILES];
	uint16_t unserved[KERF_MIG_MAX_PROFILES];
	/* free instances serving demand before the plan (nothing done) */
	uint16_t served_before[KERF_MIG_MAX_PROFILES];
	int32_t headroom_lost;       /* summed over the GPUs */
};

/*
 * Headroom of a layout: summed over the profiles, the most instances of
 * the profile that could be added alone, times its compute slices.
 */
int32_t kerf_mig_headroom(const struct kerf_mig_model *m,
			  const struct kerf_mig_layout *layout);

/*
 * Plan node for want[p] pending instances of each profile p of its model
 * (nr_profiles entries).  0 and *plan filled, or -KERF_EINVAL (a layout of
 * the node is illegal, a GPU count over KERF_MIG_MAX_GPUS, no model) with
 * the reason in err.  The node is not changed.
 */
int kerf_mig_plan_node(const struct kerf_mig_node *node, const uint16_t *want,
		       struct kerf_mig_plan *plan, struct kerf_err *err);

/*
 * Apply one action to node, refusing (-KERF_EINVAL, the reason in err) a
 * destroy of an instance that does not exist or is in use, and a create
 * that is not legal where it lands.  On refusal node is unchanged.
 */
int kerf_mig_apply(struct kerf_mig_node *node, const struct kerf_mig_action *a,
		   struct kerf_err *err);

#endif /* KERF_CORE_MIG_PLANNER_H */
