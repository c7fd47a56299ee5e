/*
 * kobj/gpupool: the GPUPool custom resource (kerf.io/v1alpha1, schema in
 * deploy/crds/gpupools.kerf.io.yaml, fields in docs/api.md): a flavor of
 * GPU capacity, the nodes its selector matches, their GPU model, the MIG
 * policy and the ways a GPU may be shared.
 *
 * The decoder checks every field as the CRD's schema and CEL rules do,
 * and more the API server cannot: a Fixed MIG layout must be made of the
 * model's profiles and fit on one GPU, placed in the order listed, each
 * instance at its lowest legal start (core/mig/geometry.h).  Pure: no I/O.
 */
#ifndef KERF_KOBJ_GPUPOOL_H
#define KERF_KOBJ_GPUPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "core/mig/geometry.h"
#include "core/model.h"
#include "kobj/kobj.h"

enum {
	KERF_KOBJ_MAX_MATCH_LABELS = 16,
	KERF_KOBJ_LABEL_KEY_MAX = 318,     /* prefix 253 + '/' + name 63 + NUL */
	KERF_KOBJ_LABEL_VALUE_MAX = 64,
	KERF_KOBJ_MIG_PROFILE_MAX = 16,
};

enum kerf_kobj_mig_policy {
	KERF_KOBJ_MIG_NONE = 0,            /* no MIG */
	KERF_KOBJ_MIG_FIXED,               /* every MIG GPU carries the layout */
	KERF_KOBJ_MIG_DYNAMIC,             /* the core's planner carves on demand */
};

/* spec.sharing, as a mask. */
enum kerf_kobj_sharing {
	KERF_KOBJ_SHARE_WHOLE = 1u << 0,
	KERF_KOBJ_SHARE_MIG = 1u << 1,
	KERF_KOBJ_SHARE_MPS = 1u << 2,
	KERF_KOBJ_SHARE_TIMESLICE = 1u << 3,
};

struct kerf_kobj_label {
	char key[KERF_KOBJ_LABEL_KEY_MAX];
	char value[KERF_KOBJ_LABEL_VALUE_MAX];
};

/* A decoded GPUPool. */
struct kerf_kobj_gpupool {
	char name[KERF_KOBJ_NAME_MAX];     /* metadata.name: the flavor */
	int64_t generation;
	char gpu_model[KERF_MODEL_NAME_MAX];
	struct kerf_kobj_label match_labels[KERF_KOBJ_MAX_MATCH_LABELS];
	size_t nr_match_labels;
	enum kerf_kobj_mig_policy mig_policy;
	int32_t mig_gpus_per_node;         /* -1: all of a node's GPUs */
	char layout[KERF_MIG_MAX_INSTANCES][KERF_KOBJ_MIG_PROFILE_MAX];
	size_t nr_layout;                  /* Fixed only */
	const struct kerf_mig_model *mig;  /* the model's MIG table, or NULL */
	uint32_t sharing;                  /* enum kerf_kobj_sharing bits */
};

/*
 * obj (a GPUPool as the API server returns it) into p.  0, or -KERF_EINVAL
 * naming the field's path and the reason.
 */
int kerf_kobj_gpupool_decode(const json_t *obj, struct kerf_kobj_gpupool *p,
			     struct kerf_err *err);

/*
 * Does a node with these labels (its metadata.labels, an object of
 * strings; NULL: none) belong to the pool?  Every matchLabels entry must
 * be there with its value.
 */
bool kerf_kobj_gpupool_selects(const struct kerf_kobj_gpupool *p,
			       const json_t *labels);

struct kerf_kobj_gpupool_status {
	int64_t observed_generation;
	struct kerf_kobj_condition conditions[KERF_KOBJ_MAX_CONDITIONS];
	size_t nr_conditions;
	int32_t nodes;                     /* the selector matches */
	int32_t gpus;                      /* on those nodes */
	int32_t mig_gpus;                  /* of which in MIG mode */
	int64_t allocated_gpu_milli;       /* held by running work */
};

/* s as the JSON of status (a new object), or NULL on OOM. */
json_t *kerf_kobj_gpupool_status_encode(const struct kerf_kobj_gpupool_status *s);

/* status (may be NULL: all zero) into s, every field checked. */
int kerf_kobj_gpupool_status_decode(const json_t *status,
				    struct kerf_kobj_gpupool_status *s,
				    struct kerf_err *err);

#endif /* KERF_KOBJ_GPUPOOL_H */
