/*
 * demo: the built-in scenario of `kerf sim`: a generated cluster of mixed GPU
 * models and a generated workload shaped like a production GPU-sharing
 * cluster (CPU-only pods, GPU fractions, whole GPUs, a few 8-GPU jobs, some
 * pinned to GPU models).  No external file; the same seed gives the same
 * scenario.
 */
#ifndef KERF_SIM_DEMO_H
#define KERF_SIM_DEMO_H

#include <stdint.h>

#include "base/err.h"
#include "sim/openb.h"

enum { KERF_DEMO_PODS = 4000 };

/* Fill an initialised trace with the demo's nodes and pods. */
int kerf_demo_trace(struct kerf_openb *o, uint64_t seed, struct kerf_err *err);

#endif /* KERF_SIM_DEMO_H */
