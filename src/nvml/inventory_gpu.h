/*
 * inventory_gpu: what the inventory's files share (internal).
 */
#ifndef KERF_NVML_INVENTORY_GPU_H
#define KERF_NVML_INVENTORY_GPU_H

#include "nvml/inventory.h"

/*
 * Record an NVML failure of field on g; true when reading g must stop
 * (GPU_IS_LOST, which also marks g lost).
 */
bool kerf_gpu_note(struct kerf_gpu *g, const char *field, nvmlReturn_t rc);

/* The MIG mode and, in MIG mode, the instances of g (inventory_mig.c). */
void kerf_gpu_read_mig(struct kerf_gpu *g, const struct kerf_nvml *nv, nvmlDevice_t dev);

#endif /* KERF_NVML_INVENTORY_GPU_H */
