/*
 * match: which pod a kubelet Allocate is for, whether it agrees with what
 * kerf assigned, and which devices to prefer.  Pure: no I/O, no clock.
 *
 * The kubelet does not tell a device plugin which pod an Allocate call is
 * for; it sends only device IDs.  kerf assigns GPUs by index in the pod's
 * kerf.io/assigned-gpus annotation ("0,1"), so the plugin maps each
 * requested device ID to its GPU index through its device table, and
 * compares the set with the assignments of the pods bound to this node
 * that have not started yet (the caller's list, from the annotation):
 *  - exactly one pod's assignment equals the set: that pod, accepted;
 *  - no assignment equals the set but exactly one contains it: that pod
 *    (a pod of several containers is allocated container by container),
 *    accepted;
 *  - otherwise refused, with a message naming the devices and why: a
 *    device the plugin does not know, devices no pod was assigned, or two
 *    pods assigned the same devices (a double booking kerf never makes).
 */
#ifndef KERF_DEVICEPLUGIN_MATCH_H
#define KERF_DEVICEPLUGIN_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* GPU indices are bits of a 64-bit mask. */
enum { KERF_DP_MAX_GPUS = 64, KERF_DP_ID_MAX = 63 };
/* Bound on available_deviceIDs: the preferred choice is quadratic in it. */
enum { KERF_DP_MAX_AVAILABLE = 256 };

/* What a device ID stands for (one plugin serves one kind: one resource). */
enum kerf_dp_device_kind {
	KERF_DP_DEV_GPU = 0,          /* a whole GPU; id is its UUID */
	KERF_DP_DEV_MIG = 1,          /* a MIG instance; id is its MIG UUID */
	KERF_DP_DEV_SHARE = 2,        /* one share of a GPU for fractions; id e.g. "GPU-...::3" */
};

/* "3g.40gb", "1g.10gb+me": the longest profile name, with the NUL. */
enum { KERF_DP_MIG_PROFILE_MAX = 24, KERF_DP_MIG_MAX_START = 7 };

struct kerf_dp_device {
	char id[KERF_DP_ID_MAX + 1];  /* what the kubelet sees: a UUID, or a MIG UUID */
	uint32_t gpu_index;           /* the index kerf's annotation uses */
	int64_t numa_node;            /* -1 when unknown */
	int healthy;
	enum kerf_dp_device_kind kind;
	char mig_profile[KERF_DP_MIG_PROFILE_MAX];  /* MIG: the instance's profile */
	uint32_t mig_start;           /* MIG: its first memory slice */
	char gpu_id[KERF_DP_ID_MAX + 1];  /* SHARE: the GPU's UUID, what the container gets */
	uint64_t mem_mib;             /* SHARE: the GPU's memory, for the MPS limits */
};

/* kerf.io/gpu-sharing of a fraction. */
enum kerf_dp_sharing {
	KERF_DP_SHARE_NONE = 0,       /* absent: time-slicing as far as the plugin goes */
	KERF_DP_SHARE_MPS = 1,
	KERF_DP_SHARE_TIMESLICE = 2,
};

struct kerf_dp_pod_assign {
	const char *key;              /* namespace/name, for messages */
	uint64_t gpu_mask;            /* bit i: GPU index i assigned */
	/* kerf.io/assigned-mig: the instance on the one GPU of gpu_mask; "" none */
	char mig_profile[KERF_DP_MIG_PROFILE_MAX];
	uint32_t mig_start;
	uint32_t fraction_milli;      /* kerf.io/assigned-fraction, 1..999; 0 none */
	enum kerf_dp_sharing sharing; /* kerf.io/gpu-sharing */
	uint32_t uid;                 /* MPS: the UID its containers run as (runAsUser) */
};

/*
 * Parse kerf.io/assigned-gpus ("0,1,3") into a mask.  Returns 0, or
 * -KERF_EPARSE naming the value and the reason (empty item, not a number,
 * an index over 63, a repeat).
 */
int kerf_dp_assigned_parse(const char *value, uint64_t *mask, struct kerf_err *err);

/*
 * Parse kerf.io/assigned-mig ("3g.40gb@4": a profile, '@', the first
 * memory slice 0..7).  A profile is <n>g.<m>gb with an optional
 * +<attribute> ("1g.10gb+me").  Returns 0, or -KERF_EPARSE naming the
 * annotation and the reason.
 */
int kerf_dp_mig_parse(const char *value, char profile[KERF_DP_MIG_PROFILE_MAX],
		      uint32_t *start, struct kerf_err *err);

/*
 * Parse kerf.io/assigned-fraction ("250m", or any quantity of 1m..999m)
 * into thousandths of a GPU.  Returns 0, or -KERF_EPARSE / -KERF_ERANGE.
 */
int kerf_dp_fraction_parse(const char *value, uint32_t *milli, struct kerf_err *err);

/* Parse kerf.io/gpu-sharing: "mps" or "timeslice".  0 or -KERF_EPARSE. */
int kerf_dp_sharing_parse(const char *value, enum kerf_dp_sharing *out,
			  struct kerf_err *err);

/*
 * A pod's whole assignment from its annotations (NULL: absent): the GPUs
 * (required), the MIG instance or the fraction (not both; each on exactly
 * one GPU) and the sharing (only with a fraction).  uid is the pod's
 * runAsUser (for MPS).  key is kept as given.  Returns 0, or a negative
 * code naming the annotation and the reason.
 */
int kerf_dp_pod_assign_parse(struct kerf_dp_pod_assign *out, const char *key,
			     const char *gpus, const char *mig, const char *fraction,
			     const char *sharing, uint32_t uid, struct kerf_err *err);

/* Whether the pod was given whole GPUs (no MIG instance, no fraction). */
int kerf_dp_pod_is_whole(const struct kerf_dp_pod_assign *pod);

/*
 * Whether d is what pod was given: a MIG device that is its instance
 * (profile and start on its one GPU), or a share of its one GPU when it
 * has a fraction.  Whole GPUs go through kerf_dp_allocate_match.
 */
int kerf_dp_device_is_for(const struct kerf_dp_device *d,
			  const struct kerf_dp_pod_assign *pod);

/* The device with this ID in the table, or NULL. */
const struct kerf_dp_device *kerf_dp_device_find(const struct kerf_dp_device *devs,
						 size_t n_devs, const char *id);

/*
 * The mask of the requested IDs.  Returns 0, or -KERF_ENOTFOUND naming an
 * ID the plugin does not serve, -KERF_EINVAL for a repeat.
 */
int kerf_dp_ids_mask(const struct kerf_dp_device *devs, size_t n_devs,
		     char *const *ids, size_t n_ids, uint64_t *mask,
		     struct kerf_err *err);

/*
 * Match one container's requested whole GPUs against the pods given whole
 * GPUs (see above; pods with a MIG instance or a fraction are not
 * candidates).  Returns the index of the pod in pods, or a negative code with err
 * saying why the allocation disagrees with kerf's assignment.
 */
int kerf_dp_allocate_match(const struct kerf_dp_device *devs, size_t n_devs,
			   char *const *ids, size_t n_ids,
			   const struct kerf_dp_pod_assign *pods, size_t n_pods,
			   struct kerf_err *err);

/*
 * GetPreferredAllocation for one container: choose size IDs out of
 * available, all of must_include among them.  For one MIG instance or one
 * share: the instance a pod was assigned, or a share of a pod's GPU.
 * First choice for whole GPUs: the
 * assignment of a pod that has exactly size GPUs, all available, and
 * contains every must_include device (the first such pod in pods).  Else
 * by topology: must_include, then the available devices on the NUMA node
 * of the first chosen device (or the node with the most available
 * devices), then the rest, each in available's order.  Writes indices
 * into available to out (room for size) and returns how many (fewer than
 * size only when available is too short), or a negative code (over
 * KERF_DP_MAX_AVAILABLE available: -KERF_ELIMIT).
 */
int kerf_dp_prefer(const struct kerf_dp_device *devs, size_t n_devs,
		   char *const *available, size_t n_available,
		   char *const *must_include, size_t n_must,
		   size_t size,
		   const struct kerf_dp_pod_assign *pods, size_t n_pods,
		   size_t *out, struct kerf_err *err);

#endif /* KERF_DEVICEPLUGIN_MATCH_H */
