/*
 * gpu_util: the node agent's utilisation of each GPU, as a node
 * annotation (docs/kubernetes.md, "GPU utilisation and idle GPUs"):
 *
 *   kerf.io/gpu-utilization  "0:40,1:10,2:0": GPU index : mean utilisation
 *                            percent over the agent's window (5 minutes);
 *                            a GPU without a sample is left out; "" = none
 *
 * Items "GPU:PCT", comma separated, GPU a decimal index below
 * KERF_GPU_UTIL_MAX_GPUS, each GPU at most once, PCT 0..100.  The agent
 * writes it (agent/util.h) and kerf serve reads it (kobj/node.h) with
 * this one reader.  A value that does not read is an error naming the
 * annotation, the item and why; the caller then takes no sample from it.
 */
#ifndef KERF_KOBJ_GPU_UTIL_H
#define KERF_KOBJ_GPU_UTIL_H

#include <stdint.h>

#include "base/err.h"

enum {
	KERF_GPU_UTIL_MAX_GPUS = 64,
};

/*
 * s into pct[gpu] (percent), -1 where a GPU has no value.  0, or
 * -KERF_EPARSE with err set (pct then all -1).
 */
int kerf_gpu_util_parse(const char *s, int8_t pct[KERF_GPU_UTIL_MAX_GPUS],
			struct kerf_err *err);

#endif /* KERF_KOBJ_GPU_UTIL_H */
