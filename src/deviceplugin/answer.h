/*
 * answer: what one container gets from an Allocate, decided from the
 * devices the kubelet chose and what kerf assigned (docs/agent.md, "What
 * a container gets").  Pure: no I/O; the MPS daemons are asked through a
 * callback.
 *
 * One plugin serves one kind of device (one resource), so the devices of
 * one container request are all whole GPUs, all MIG instances or all
 * shares:
 *  - whole GPUs: matched as match.h says; the container gets them;
 *  - a MIG instance (exactly one): the device must be the instance of
 *    kerf.io/assigned-mig (profile and first memory slice) on the one GPU
 *    of kerf.io/assigned-gpus of exactly one pending pod; the container
 *    gets the MIG device (its UUID, through NVIDIA_VISIBLE_DEVICES and
 *    CDI).  The device table holds only instances that exist (the agent
 *    builds it from the NVML inventory), so a pod whose instance is gone
 *    is refused;
 *  - a share (exactly one) of GPU g, for the pods whose fraction
 *    (kerf.io/assigned-fraction) is on g.  The container gets GPU g
 *    itself.  With kerf.io/gpu-sharing=mps it also gets the pipe
 *    directory of the MPS daemon of (g, the pod's UID), mounted at the
 *    same path, and
 *      CUDA_MPS_PIPE_DIRECTORY            the daemon's pipe directory
 *      CUDA_MPS_ACTIVE_THREAD_PERCENTAGE  the fraction's percentage
 *      CUDA_MPS_PINNED_DEVICE_MEM_LIMIT   "0=<MiB>M", the fraction's memory
 *    (mps/limits.h).  Refused when no daemon runs for (g, uid), when it
 *    is failed (its slices are failed: no new MPS client until it is
 *    healthy again), or when the fraction's limits exceed the daemon's
 *    (a client may only narrow them).  The kubelet does not say which pod
 *    a call is for: every pending pod with a fraction on g must agree
 *    (same sharing, same UID, same limits), else the call is refused as
 *    ambiguous rather than hand one pod another's limits.
 */
#ifndef KERF_DEVICEPLUGIN_ANSWER_H
#define KERF_DEVICEPLUGIN_ANSWER_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "deviceplugin/match.h"
#include "mps/limits.h"

enum { KERF_DP_PATH_MAX = 256, KERF_DP_MAX_ENVS = 3 };

/* An MPS daemon as the plugin needs it. */
struct kerf_dp_mps {
	int healthy;                    /* 0: failed (or not yet up) */
	char pipe_dir[KERF_DP_PATH_MAX];
	struct kerf_mps_limits limits;  /* what each of its clients may use */
	char why[KERF_DP_PATH_MAX];     /* why it is not healthy */
};

/*
 * The daemon of (gpu_index, uid) into *out: 0, or -KERF_ENOTFOUND when
 * there is none.
 */
typedef int (*kerf_dp_mps_fn)(void *arg, uint32_t gpu_index, uint32_t uid,
			      struct kerf_dp_mps *out);

struct kerf_dp_env {
	const char *key;
	char value[KERF_DP_PATH_MAX];
};

struct kerf_dp_answer {
	int pod;                             /* index into pods */
	enum kerf_dp_device_kind kind;
	const char *ids[KERF_DP_MAX_GPUS];   /* visible device IDs (devs' strings) */
	size_t n_ids;
	struct kerf_dp_env envs[KERF_DP_MAX_ENVS];  /* besides NVIDIA_VISIBLE_DEVICES */
	size_t n_envs;
	char mount_path[KERF_DP_PATH_MAX];   /* host path = container path; "" none */
};

/*
 * The answer for one container's ids (see above) into *out.  Returns 0,
 * or a negative code with err saying why: -KERF_EINVAL for a request no
 * kubelet makes (no device, kinds mixed, two instances), other codes when
 * it disagrees with kerf's assignment or the MPS daemon.  mps may be NULL
 * (no MPS daemons: an MPS share is refused).
 */
int kerf_dp_answer(const struct kerf_dp_device *devs, size_t n_devs,
		   char *const *ids, size_t n_ids,
		   const struct kerf_dp_pod_assign *pods, size_t n_pods,
		   kerf_dp_mps_fn mps, void *mps_arg,
		   struct kerf_dp_answer *out, struct kerf_err *err);

#endif /* KERF_DEVICEPLUGIN_ANSWER_H */
