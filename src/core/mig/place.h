/*
 * mig/place: MIG instances as the scheduling core holds them on a node.
 *
 * A node's GPUs in MIG mode (kerf_cluster_set_mig) each keep a layout of
 * GPU instances: in use (a pod runs on it) or free (carved, idle); an
 * instance out of service (down) is held by nobody: never handed out and
 * never destroyed, whether a pod still runs on it or not.  A pod
 * asking MIG is served by one instance of the profile its request maps to
 * on the node's model (kerf_mig_profile_for).  What a GPU can still take
 * depends on its instances in use only: a free instance is destroyed when
 * it stands in the way.  Placement therefore never touches an instance in
 * use, and every layout it leaves is legal (checked by kerf_cluster_check).
 *
 * Where on a node (kerf_mig_pick_place): over every GPU in MIG mode and
 * every legal start of the profile where the instances in use leave room,
 *   1. best fit: the fewest compute slices left free on the GPU after it
 *      (a GPU already cut up is filled before an untouched one is cut, so
 *      whole GPUs stay whole for the large profiles);
 *   2. the least headroom lost on that GPU (core/mig/planner.h: how much
 *      of every profile could still be added), which picks the start;
 *   3. the fewest actions: reusing a free instance there costs none,
 *      carving one a create plus a destroy per free instance in the way;
 *   4. the lowest GPU, then the lowest start.
 * Across nodes the same order holds (kerf_mig_pick_score), then node rank.
 *
 * The layouts are the desired state a node agent reconciles: it creates
 * and destroys instances until the GPU matches, instances in use first
 * never being touched.  nr_created / nr_destroyed count the actions the
 * core asked for.
 *
 * Pure: no I/O, no clock, no globals.
 */
#ifndef KERF_CORE_MIG_PLACE_H
#define KERF_CORE_MIG_PLACE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "core/mig/geometry.h"

enum { KERF_MIG_NODE_GPUS = 16 };   /* = KERF_NODE_MAX_GPUS */

struct kerf_node_mig {
	struct kerf_mig_layout gpu[KERF_MIG_NODE_GPUS];
	/* 1000 minus the charges of the pods on the GPU's instances */
	int16_t free_milli[KERF_MIG_NODE_GPUS];
	/* the layouts last told to the caller (core/decision.h MIG steps) */
	struct kerf_mig_layout told[KERF_MIG_NODE_GPUS];
	uint32_t nr_created;         /* instances created, ever */
	uint32_t nr_destroyed;       /* free instances destroyed, ever */
};

struct kerf_mig_pick {
	int8_t gpu;                  /* -1: nowhere */
	uint8_t start;               /* first memory slice */
	uint8_t profile;
	uint8_t nr_destroys;         /* free instances destroyed first */
	uint8_t compute_left;        /* compute slices free on the GPU after */
	bool reuse;                  /* a free instance is there: no action */
	int32_t headroom_lost;
};

/*
 * Best place for an instance of profile pi charged milli on the GPUs of
 * mask (those in MIG mode).  True and *out, or false when none has room.
 */
bool kerf_mig_pick_place(const struct kerf_mig_model *m,
			 const struct kerf_node_mig *nm, uint16_t mask,
			 unsigned pi, int32_t milli, struct kerf_mig_pick *out);

/*
 * Could an instance of profile pi charged milli go on some GPU of mask?
 * (kerf_mig_pick_place would find a place; cheaper, no ranking.)
 */
bool kerf_mig_can_host(const struct kerf_mig_model *m,
		       const struct kerf_node_mig *nm, uint16_t mask,
		       unsigned pi, int32_t milli);

/* The pick as a node score: higher is better, never INT32_MIN. */
int32_t kerf_mig_pick_score(const struct kerf_mig_pick *pk);

/*
 * Put an instance of profile pi at start on GPU g in use, charging milli:
 * a free one there is reused, else the free instances in the way are
 * destroyed and it is created.  -KERF_ERANGE (nothing changed, the reason
 * in err) when the instances in use leave no room there.
 */
int kerf_mig_take(const struct kerf_mig_model *m, struct kerf_node_mig *nm,
		  int g, unsigned pi, unsigned start, int32_t milli,
		  struct kerf_err *err);

/*
 * The pod on instance (pi, start) of GPU g left: the instance stays,
 * free.  -KERF_ERANGE when no such instance is in use.
 */
int kerf_mig_give(const struct kerf_mig_model *m, struct kerf_node_mig *nm,
		  int g, unsigned pi, unsigned start, int32_t milli,
		  struct kerf_err *err);

/*
 * Mark the instances listed in down (profile and start; NULL or empty:
 * none) out of service on GPU g and every other instance of it back in
 * service.  A listed instance the core does not hold is added (the node
 * has it, so the core's free instances in its way are dropped, from the
 * layout told too).  -KERF_EBUSY when an instance in use or another one
 * out of service overlaps it, -KERF_EINVAL for an unknown profile:
 * nothing changed.  A pod leaving an instance out of service leaves it
 * held; a pod already running on one is bound to it (kerf_mig_take).
 */
int kerf_mig_mark_down(const struct kerf_mig_model *m, struct kerf_node_mig *nm,
		       int g, const struct kerf_mig_layout *down);

/*
 * The instances of l held (in use, or out of service: see
 * kerf_mig_inst_held), as a layout: what placement must work around.
 */
void kerf_mig_in_use(const struct kerf_mig_layout *l,
		     struct kerf_mig_layout *out);

#endif /* KERF_CORE_MIG_PLACE_H */
