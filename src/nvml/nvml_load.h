/*
 * nvml_load: NVML loaded with dlopen into an ops table.
 *
 * kerf never links libnvidia-ml: the agent must start (and report that it
 * sees no GPU) on a node without the driver.  kerf_nvml_open dlopens the
 * library (libnvidia-ml.so.1, or the path given, or $KERF_NVML_LIBRARY),
 * resolves the versioned symbols (nvmlInit_v2, nvmlDeviceGetCount_v2,
 * nvmlDeviceGetPciInfo_v3, ..., never the old unversioned ABI) and calls
 * nvmlInit_v2.  The symbols every inventory needs are required; any other
 * symbol that is missing turns its feature off (a bit cleared in
 * `features` and a line in `off`), and its function pointer stays NULL.
 *
 * In tests the library is the scriptable fake built in tests/fakenvml.
 */
#ifndef KERF_NVML_NVML_LOAD_H
#define KERF_NVML_NVML_LOAD_H

#include <stdbool.h>

#include "base/err.h"
#include "nvml/nvml_api.h"

#define KERF_NVML_DEFAULT_LIBRARY "libnvidia-ml.so.1"
#define KERF_NVML_LIBRARY_ENV "KERF_NVML_LIBRARY"

/* What the loaded library can do; a feature is on when all its symbols are. */
enum kerf_nvml_features {
	KERF_NVML_F_DRIVER_VERSION = 1u << 0,  /* nvmlSystemGetDriverVersion */
	KERF_NVML_F_NUMA = 1u << 1,            /* nvmlDeviceGetNumaNodeId (550+) */
	KERF_NVML_F_MIG = 1u << 2,             /* MIG mode and instance listing */
	KERF_NVML_F_NVLINK = 1u << 3,          /* link state and remote PCI info */
	KERF_NVML_F_EVENTS = 1u << 4,          /* event sets (Xid, ECC) */
	KERF_NVML_F_TELEMETRY = 1u << 5,       /* utilisation and power */
	KERF_NVML_F_MIG_ACTUATE = 1u << 6,     /* MIG mode and instance changes (R470+) */
	KERF_NVML_F_PROCESSES = 1u << 7,       /* per-process GPU memory (510+) */
	KERF_NVML_F_GPM = 1u << 8,             /* GPM samples and metrics (520+) */
};
#define KERF_NVML_F_ALL 0x1ffu

enum { KERF_NVML_OFF_MAX = 512 };

struct kerf_nvml {
	void *dl;                    /* the dlopen handle */
	bool initialised;            /* nvmlInit_v2 succeeded */
	unsigned features;           /* enum kerf_nvml_features */
	char off[KERF_NVML_OFF_MAX]; /* "numa (nvmlDeviceGetNumaNodeId missing); ..." */
	char path[256];              /* what was opened */

	/* required */
	nvml_init_fn init_v2;
	nvml_shutdown_fn shutdown;
	nvml_device_count_fn device_count_v2;
	nvml_handle_by_index_fn handle_by_index_v2;
	nvml_device_string_fn device_uuid;
	nvml_device_string_fn device_name;
	nvml_pci_info_fn pci_info_v3;
	nvml_memory_info_fn memory_info;
	/* optional: NULL when missing */
	nvml_error_string_fn error_string;
	nvml_driver_version_fn driver_version;
	nvml_device_uint_fn numa_node_id;
	nvml_mig_mode_fn mig_mode;
	nvml_gi_profile_info_fn gi_profile_info;
	nvml_gpu_instances_fn gpu_instances;
	nvml_gi_info_fn gi_info;
	nvml_ci_profile_info_fn ci_profile_info;
	nvml_compute_instances_fn compute_instances;
	nvml_ci_info_fn ci_info_v2;
	nvml_nvlink_state_fn nvlink_state;
	nvml_nvlink_remote_pci_fn nvlink_remote_pci_v2;
	nvml_utilization_fn utilization;
	nvml_device_uint_fn power_usage_mw;
	nvml_event_set_create_fn event_set_create;
	nvml_register_events_fn register_events;
	nvml_event_set_wait_fn event_set_wait_v2;
	nvml_event_set_free_fn event_set_free;
	/* MIG actuation (src/actuate) */
	nvml_set_mig_mode_fn set_mig_mode;
	nvml_gi_placements_fn gi_placements_v2;
	nvml_create_gi_fn create_gi_with_placement;
	nvml_gi_by_id_fn gi_by_id;
	nvml_gi_destroy_fn gi_destroy;
	nvml_create_ci_fn create_ci;
	nvml_ci_by_id_fn ci_by_id;
	nvml_ci_destroy_fn ci_destroy;
	nvml_running_processes_fn running_processes_v3;
	/* GPM (nvml/gpm.h) */
	nvml_gpm_support_fn gpm_query_device_support;
	nvml_gpm_sample_alloc_fn gpm_sample_alloc;
	nvml_gpm_sample_free_fn gpm_sample_free;
	nvml_gpm_sample_get_fn gpm_sample_get;
	nvml_gpm_metrics_get_fn gpm_metrics_get;
	nvml_gpm_mig_sample_get_fn gpm_mig_sample_get;  /* optional, no feature */
};

/*
 * Load and initialise NVML.  path NULL means $KERF_NVML_LIBRARY, else
 * libnvidia-ml.so.1.  Errors: -KERF_ENOTFOUND when the library cannot be
 * opened or lacks a required symbol, -KERF_EIO when nvmlInit_v2 fails
 * (the message names the NVML code).  On error nv holds nothing to close.
 */
int kerf_nvml_open(struct kerf_nvml *nv, const char *path, struct kerf_err *err);

/* nvmlShutdown (if initialised) and dlclose; nv may be unopened. */
void kerf_nvml_close(struct kerf_nvml *nv);

static inline bool kerf_nvml_has(const struct kerf_nvml *nv, unsigned feature)
{
	return (nv->features & feature) == feature;
}

/* "NVML_ERROR_GPU_IS_LOST"; "NVML_ERROR_<n>" for a code kerf does not know. */
const char *kerf_nvml_return_name(int rc);

/* The code called name ("NVML_ERROR_UNKNOWN" or "UNKNOWN"), or -1. */
int kerf_nvml_return_parse(const char *name);

#endif /* KERF_NVML_NVML_LOAD_H */
