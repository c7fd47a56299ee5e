/*
 * inventory: the node's GPUs as NVML reports them.
 *
 * kerf_gpu_inventory_read walks every device through the ops table
 * (nvml_load.h): identity (index, UUID, name and kerf's model name, PCI bus
 * id and device id, memory, NUMA node), MIG mode and, in MIG mode, the GPU
 * and compute instances with their profiles and placements, and the NVLink
 * links with their remote PCI bus ids.  GPUs linked to each other, directly
 * or through the same NVSwitch, form one NVLink domain.
 *
 * A GPU is never dropped: an NVML error on one field is recorded for that
 * GPU (field and NVML code) and the other fields and GPUs are still read;
 * NVML_ERROR_GPU_IS_LOST marks the GPU lost and ends reading it.  When NVML
 * cannot be loaded at all the inventory is Unknown with 0 GPUs and the
 * reason (reliability N-01).
 */
#ifndef KERF_NVML_INVENTORY_H
#define KERF_NVML_INVENTORY_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "nvml/nvml_load.h"

enum {
	KERF_GPU_MAX_GIS = 8,
	KERF_GPU_MAX_CIS = 8,       /* per GPU instance */
	KERF_GPU_MAX_LINKS = NVML_NVLINK_MAX_LINKS,
	KERF_GPU_MAX_ERRORS = 8,
	KERF_GPU_MAX_GPUS = 64,
};

enum kerf_gpu_inventory_state {
	KERF_GPU_INVENTORY_UNKNOWN = 0,  /* NVML not loaded: no GPUs known */
	KERF_GPU_INVENTORY_READ,         /* read; per-GPU errors may exist */
};

/* MIG mode values; KERF_GPU_MIG_UNSUPPORTED when the GPU has no MIG. */
#define KERF_GPU_MIG_UNSUPPORTED (-1)

struct kerf_gpu_field_error {
	char field[24];              /* "uuid", "memory", "mig.gpu_instances", ... */
	int nvml_rc;                 /* nvmlReturn_t */
};

struct kerf_gpu_ci {
	uint32_t id;
	uint32_t profile_id;
	uint32_t slices;             /* compute slices (the profile's sliceCount) */
	uint32_t start;              /* first compute slice inside the GI */
	uint32_t size;
};

struct kerf_gpu_gi {
	uint32_t id;
	uint32_t profile_id;         /* nvidia-smi's ID */
	char profile[24];            /* kerf's name ("3g.40gb"), "" if unknown */
	uint32_t slices;             /* compute slices */
	uint64_t mem_mib;
	uint32_t start;              /* first memory slice */
	uint32_t size;               /* memory slices */
	struct kerf_gpu_ci cis[KERF_GPU_MAX_CIS];
	uint32_t nr_cis;
};

struct kerf_gpu_link {
	uint32_t link;
	char remote_bus_id[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
	int remote_gpu;              /* index into gpus, -1: not a GPU here (NVSwitch) */
};

struct kerf_gpu {
	uint32_t index;              /* NVML index */
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];  /* NVML's, "NVIDIA H100 80GB HBM3" */
	const char *model;           /* kerf's ("H100-80GB"), NULL if unknown; static */
	char bus_id[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
	uint32_t pci_device_id;      /* (device << 16) | vendor */
	uint64_t mem_mib;
	int numa_node;               /* -1 unknown / not a NUMA GPU */
	int mig_current;             /* NVML_DEVICE_MIG_*, or KERF_GPU_MIG_UNSUPPORTED */
	int mig_pending;
	struct kerf_gpu_gi gis[KERF_GPU_MAX_GIS];
	uint32_t nr_gis;
	struct kerf_gpu_link links[KERF_GPU_MAX_LINKS];
	uint32_t nr_links;
	int nvlink_domain;           /* lowest GPU index of its domain, -1 none */
	bool lost;                   /* NVML_ERROR_GPU_IS_LOST */
	struct kerf_gpu_field_error errors[KERF_GPU_MAX_ERRORS];
	uint32_t nr_errors;
	uint32_t nr_errors_dropped;  /* beyond KERF_GPU_MAX_ERRORS */
};

struct kerf_gpu_inventory {
	enum kerf_gpu_inventory_state state;
	char reason[KERF_ERR_MSG_MAX];  /* why Unknown */
	char driver_version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	unsigned features;           /* of the library read */
	char features_off[KERF_NVML_OFF_MAX];
	struct kerf_gpu *gpus;       /* malloc'd, nr_gpus long */
	uint32_t nr_gpus;
	uint32_t nr_domains;         /* NVLink domains of 2+ GPUs */
};

/*
 * Read every GPU through nv.  0, or -KERF_ENOMEM, or -KERF_EIO with a
 * message when the device count itself cannot be read.  inv is filled in
 * either case and must be released.
 */
int kerf_gpu_inventory_read(struct kerf_gpu_inventory *inv, const struct kerf_nvml *nv,
			    struct kerf_err *err);

/* The N-01 inventory: Unknown, 0 GPUs, reason copied. */
void kerf_gpu_inventory_unknown(struct kerf_gpu_inventory *inv, const char *reason);

void kerf_gpu_inventory_release(struct kerf_gpu_inventory *inv);

/* The inventory as a JSON object (new reference), NULL on OOM. */
json_t *kerf_gpu_inventory_json(const struct kerf_gpu_inventory *inv);

#endif /* KERF_NVML_INVENTORY_H */
