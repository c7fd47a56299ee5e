/*
 * migsim: a day of mixed MIG demand on a cluster of MIG GPUs, served by a
 * static layout (the mig-parted presets) or by kerf's dynamic per-GPU
 * planning (core/mig/planner).
 *
 * Demand: inference replicas of several sizes, notebooks and training,
 * each asking for one instance of an exact profile (as a pod asking for
 * nvidia.com/mig-<profile> does), arriving at random with random
 * durations; the same requests (by seed) for every policy.  Requests wait
 * in arrival order; whenever something arrives or finishes, every waiting
 * request that a free instance of its profile can take starts (backfill).
 * Dynamic planning first plans each node, in a fixed order, for the
 * demand still waiting, and applies the plan action by action (a create
 * or destroy of a free instance; an instance in use is never touched).
 *
 * Reported per policy: requests started, still waiting at the end, wait
 * p50/p99 per kind (a request still waiting counts with its wait so far),
 * the allocated slice ratio (compute slices in use over all, averaged over
 * time), slice-hours served, reconfiguration actions, and instances in use
 * disturbed (checked after every event: must be 0).
 */
#ifndef KERF_SIM_MIGSIM_H
#define KERF_SIM_MIGSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

enum kerf_migsim_kind {
	KERF_MIGSIM_INFERENCE = 0,
	KERF_MIGSIM_NOTEBOOK,
	KERF_MIGSIM_TRAINING,
	KERF_MIGSIM_NR_KINDS,
};

enum kerf_migsim_policy {
	KERF_MIGSIM_ALL_1G = 0,      /* 7 x 1g (A30: 4) */
	KERF_MIGSIM_ALL_2G,          /* 3 x 2g */
	KERF_MIGSIM_ALL_3G,          /* 2 x 3g */
	KERF_MIGSIM_ALL_7G,          /* one instance of the whole GPU */
	KERF_MIGSIM_BALANCED,        /* 2 x 1g, 2g, 3g (mig-parted all-balanced) */
	KERF_MIGSIM_MATCHED,         /* GPUs split among presets in proportion
					to the expected demand of each profile */
	KERF_MIGSIM_DYNAMIC,         /* kerf: planned per GPU as demand comes */
	KERF_MIGSIM_NR_POLICIES,
};

struct kerf_migsim_opts {
	const char *model;           /* a model with a MIG table */
	uint32_t nodes;
	uint32_t gpus_per_node;      /* <= KERF_MIG_MAX_GPUS */
	uint32_t hours;              /* simulated time */
	uint32_t load_pct;           /* offered compute slices over capacity */
	uint64_t seed;
};

struct kerf_migsim_result {
	const char *policy;
	uint32_t requests;
	uint32_t started;
	uint32_t waiting_end;        /* never started */
	uint32_t requests_by_kind[KERF_MIGSIM_NR_KINDS];
	uint32_t started_by_kind[KERF_MIGSIM_NR_KINDS];
	double wait_p50_s[KERF_MIGSIM_NR_KINDS];
	double wait_p99_s[KERF_MIGSIM_NR_KINDS];
	double slice_ratio;          /* allocated compute slices / all, time average */
	double slice_hours;          /* compute slice-hours served */
	/* quota charged, in GPU-hours of the flavor (kerf_mig_gpu_milli) */
	double gpu_hours_by_kind[KERF_MIGSIM_NR_KINDS];
	uint64_t reconfig_actions;   /* creates + destroys (static: the initial layout excluded) */
	uint64_t disturbed;          /* in-use instances lost: must be 0 */
	uint64_t apply_refused;      /* plan actions refused by the checker */
};

const char *kerf_migsim_policy_name(enum kerf_migsim_policy p);
const char *kerf_migsim_kind_name(enum kerf_migsim_kind k);

/* Defaults: 4 nodes x 8 H100-80GB, 24 h, 90 % load, seed 1. */
void kerf_migsim_defaults(struct kerf_migsim_opts *o);

int kerf_migsim_run(const struct kerf_migsim_opts *o, enum kerf_migsim_policy policy,
		    struct kerf_migsim_result *out, struct kerf_err *err);

#endif /* KERF_SIM_MIGSIM_H */
