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

struct kerf_dp_device {
	char id[KERF_DP_ID_MAX + 1];  /* what the kubelet sees: a UUID, or a MIG UUID */
	uint32_t gpu_index;           /* the index kerf's annotation uses */
	int64_t numa_node;            /* -1 when unknown */
	int healthy;
};

struct kerf_dp_pod_assign {
	const char *key;              /* namespace/name, for messages */
	uint64_t gpu_mask;            /* bit i: GPU index i assigned */
};

/*
 * Parse kerf.io/assigned-gpus ("0,1,3") into a mask.  Returns 0, or
 * -KERF_EPARSE naming the value and the reason (empty item, not a number,
 * an index over 63, a repeat).
 */
int kerf_dp_assigned_parse(const char *value, uint64_t *mask, struct kerf_err *err);

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
 * Match one container's requested IDs against the pods (see above).
 * Returns the index of the pod in pods, or a negative code with err
 * saying why the allocation disagrees with kerf's assignment.
 */
int kerf_dp_allocate_match(const struct kerf_dp_device *devs, size_t n_devs,
			   char *const *ids, size_t n_ids,
			   const struct kerf_dp_pod_assign *pods, size_t n_pods,
			   struct kerf_err *err);

/*
 * GetPreferredAllocation for one container: choose size IDs out of
 * available, all of must_include among them.  First choice: the
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
