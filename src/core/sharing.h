/*
 * sharing: which mechanism realises a pod's GPU request, chosen from the
 * workload's profile unless the pod names one.
 *
 *   inference-latency  a MIG instance sized by memory (hardware isolation,
 *                      steady latency) when the GPU model has MIG; else a
 *                      fraction under MPS (a whole GPU when it asks one)
 *   inference-batch    MPS within the tenant (throughput, shared SMs)
 *   interactive        time-slicing (bursty, mostly idle notebooks)
 *   training           whole GPUs, exclusive, in one NVLink domain
 *   (none)             a fraction by the node's default mechanism, whole
 *                      GPUs exclusive
 *
 * A tenant isolated at `hardware` never gets MPS or time-slicing: its
 * fractions get MIG where the model has it, else a whole GPU.  An override
 * the request cannot use is an error naming the reason.
 *
 * MPS clients get an active-thread percentage (the fraction, rounded up)
 * and a pinned device memory limit (the memory asked, else the fraction of
 * the GPU's memory).  Pure: no I/O.
 */
#ifndef KERF_CORE_SHARING_H
#define KERF_CORE_SHARING_H

#include <stdint.h>

#include "base/err.h"
#include "core/mig/geometry.h"
#include "core/model.h"

enum kerf_wl_profile {
	KERF_PROFILE_NONE = 0,
	KERF_PROFILE_INFERENCE_LATENCY,
	KERF_PROFILE_INFERENCE_BATCH,
	KERF_PROFILE_INTERACTIVE,
	KERF_PROFILE_TRAINING,
	KERF_PROFILE_COUNT_,
};

enum kerf_mechanism {
	KERF_MECH_AUTO = 0,          /* as an override: none given */
	KERF_MECH_EXCLUSIVE,         /* whole GPUs */
	KERF_MECH_MIG,
	KERF_MECH_MPS,
	KERF_MECH_TIMESLICE,
	KERF_MECH_DEFAULT,           /* a fraction by the node's default */
	KERF_MECH_COUNT_,
};

struct kerf_sharing_choice {
	enum kerf_mechanism mech;
	int mig_profile;             /* MIG: index in the model's profiles, else -1 */
	int32_t mps_thread_pct;      /* MPS: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE */
	int32_t mps_pinned_mem_mib;  /* MPS: pinned device memory limit */
	bool nvlink_domain;          /* training: keep the gang in one domain */
	enum kerf_gpu_share share;   /* what the core places the fraction as */
};

/* Names as in configuration files; NULL when out of range. */
const char *kerf_profile_name(enum kerf_wl_profile p);
const char *kerf_mechanism_name(enum kerf_mechanism m);

/* The profile or mechanism called name, or -1. */
int kerf_profile_parse(const char *name);
int kerf_mechanism_parse(const char *name);

/*
 * Choose for request p (of a tenant at isolation iso) with profile prof
 * and an optional override (KERF_MECH_AUTO: none).  mig is the MIG table
 * of the GPU model, or NULL; gpu_mem_mib the memory of one GPU (0 when
 * unknown).  0 and *out, or -KERF_EINVAL with the reason.
 */
int kerf_sharing_choose(const struct kerf_pod *p, enum kerf_wl_profile prof,
			enum kerf_mechanism override, enum kerf_isolation iso,
			const struct kerf_mig_model *mig, int32_t gpu_mem_mib,
			struct kerf_sharing_choice *out, struct kerf_err *err);

#endif /* KERF_CORE_SHARING_H */
