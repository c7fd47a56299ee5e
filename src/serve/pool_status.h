/*
 * pool_status: a GPUPool as kerf serve keeps it, and its status as kerf
 * writes it so that `kubectl get gpupools` shows what the pool holds:
 * observedGeneration; nodes (the nodes of its flavor), gpus (their GPUs),
 * migGPUs (of which in MIG mode) and allocated (GPUs held by what runs
 * there, a decimal: "2.5" for 2,500 GPU-milli); and the condition Accepted: True, or False with the
 * decoder's reason (a rule the API server cannot check, such as a Fixed
 * MIG layout that does not fit) while the pool is left out.
 */
#ifndef KERF_SERVE_POOL_STATUS_H
#define KERF_SERVE_POOL_STATUS_H

#include <stdbool.h>

#include <jansson.h>

#include "base/err.h"
#include "kobj/gpupool.h"
#include "serve/world.h"

struct kerf_cpool {
	struct kerf_kobj_gpupool p;         /* valid only when accepted */
	bool accepted;
	char why[KERF_ERR_MSG_MAX];         /* not accepted: the decoder's reason */
	char name[KERF_KOBJ_NAME_MAX];
	int64_t generation;
	/* the Accepted condition the object carries: kept while unchanged */
	char was[8];                        /* "True", "False" or "" */
	char since[KERF_KOBJ_TIME_MAX];     /* its lastTransitionTime */
};

/* obj (a GPUPool) into a new cpool (accepted or not); NULL: no name, or memory. */
struct kerf_cpool *kerf_cpool_decode(const json_t *obj, struct kerf_err *err);

/* The merge patch of the pool's /status from the world at now_ms: body (malloc'd). */
int kerf_pool_status_patch(const struct kerf_world *w, const struct kerf_cpool *cp,
			   int64_t now_ms, char **body);

#endif
