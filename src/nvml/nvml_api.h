/*
 * nvml_api: kerf's own declarations of the NVML subset the node agent uses.
 *
 * Written from the NVML reference notes (values, struct layouts and struct
 * versions as NVML 13.3 defines them; the layouts did not move since 11.x).
 * No NVIDIA header is copied.  The names are NVML's so that the code reads
 * like NVML's documentation; the structs use natural alignment (never
 * packed) and the static asserts at the end pin their layouts.
 *
 * The library is loaded with dlopen (nvml_load.h); only the typedefs of
 * the function pointers below are used, never a direct call.
 */
#ifndef KERF_NVML_NVML_API_H
#define KERF_NVML_NVML_API_H

#include <stddef.h>

/* clang-format off */
typedef enum nvmlReturn_enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_ALREADY_INITIALIZED = 5,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_INSUFFICIENT_POWER = 8,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_IRQ_ISSUE = 11,
	NVML_ERROR_LIBRARY_NOT_FOUND = 12,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_CORRUPTED_INFOROM = 14,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_RESET_REQUIRED = 16,
	NVML_ERROR_OPERATING_SYSTEM = 17,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
	NVML_ERROR_IN_USE = 19,
	NVML_ERROR_MEMORY = 20,
	NVML_ERROR_NO_DATA = 21,
	NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
	NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
	NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
	NVML_ERROR_DEPRECATED = 26,
	NVML_ERROR_NOT_READY = 27,
	NVML_ERROR_GPU_NOT_FOUND = 28,
	NVML_ERROR_INVALID_STATE = 29,
	NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30,
	NVML_ERROR_UNKNOWN = 999,
} nvmlReturn_t;

#define NVML_STRUCT_VERSION(data, ver) \
	(unsigned int)(sizeof(nvml##data##_v##ver##_t) | ((ver) << 24U))

#define NVML_DEVICE_UUID_V2_BUFFER_SIZE        96
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE        96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE     32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE  16
#define NVML_NVLINK_MAX_LINKS                  36
#define NVML_DEVICE_MIG_DISABLE                0x0
#define NVML_DEVICE_MIG_ENABLE                 0x1
#define NVML_GPU_INSTANCE_PROFILE_COUNT        0x12
#define NVML_COMPUTE_INSTANCE_PROFILE_COUNT    0x9
#define NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED 0x0
#define NVML_INSTANCE_ID_NONE                  0xFFFFFFFFu  /* GI/CI id of an event not tied to one */

#define nvmlEventTypeSingleBitEccError  0x0000000000000001ULL
#define nvmlEventTypeDoubleBitEccError  0x0000000000000002ULL
#define nvmlEventTypeXidCriticalError   0x0000000000000008ULL
#define nvmlEventMigConfigChange        0x0000000000000100ULL
/* clang-format on */

typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlGpuInstance_st *nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st *nvmlComputeInstance_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;

typedef enum nvmlEnableState_enum {
	NVML_FEATURE_DISABLED = 0,
	NVML_FEATURE_ENABLED = 1,
} nvmlEnableState_t;

typedef struct nvmlPciInfo_st {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;    /* (device id << 16) | vendor id */
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];  /* "%08X:%02X:%02X.0" */
} nvmlPciInfo_t;

typedef struct nvmlMemory_st {
	unsigned long long total;    /* bytes */
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
	unsigned int version;        /* nvmlMemory_v2 */
	unsigned long long total;
	unsigned long long reserved;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_v2_t;
#define nvmlMemory_v2 NVML_STRUCT_VERSION(Memory, 2)

typedef struct nvmlUtilization_st {
	unsigned int gpu;            /* percent */
	unsigned int memory;
} nvmlUtilization_t;

typedef struct nvmlGpuInstancePlacement_st {
	unsigned int start;          /* first memory slice */
	unsigned int size;           /* memory slices */
} nvmlGpuInstancePlacement_t;

typedef struct nvmlGpuInstanceProfileInfo_st {
	unsigned int id;
	unsigned int isP2pSupported;
	unsigned int sliceCount;
	unsigned int instanceCount;
	unsigned int multiprocessorCount;
	unsigned int copyEngineCount;
	unsigned int decoderCount;
	unsigned int encoderCount;
	unsigned int jpegCount;
	unsigned int ofaCount;
	unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;

typedef struct nvmlGpuInstanceInfo_st {
	nvmlDevice_t device;
	unsigned int id;
	unsigned int profileId;
	nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct nvmlComputeInstancePlacement_st {
	unsigned int start;          /* first compute slice inside the GI */
	unsigned int size;
} nvmlComputeInstancePlacement_t;

typedef struct nvmlComputeInstanceProfileInfo_st {
	unsigned int id;
	unsigned int sliceCount;
	unsigned int instanceCount;
	unsigned int multiprocessorCount;
	unsigned int sharedCopyEngineCount;
	unsigned int sharedDecoderCount;
	unsigned int sharedEncoderCount;
	unsigned int sharedJpegCount;
	unsigned int sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;

typedef struct nvmlComputeInstanceInfo_st {
	nvmlDevice_t device;
	nvmlGpuInstance_t gpuInstance;
	unsigned int id;
	unsigned int profileId;
	nvmlComputeInstancePlacement_t placement;
} nvmlComputeInstanceInfo_t;

/*
 * The 32-byte element that nvmlDeviceGetComputeRunningProcesses_v3 took
 * in drivers 535.43.02 to 535.86.05 only (gpu-nvml-api notes, section 2).
 */
typedef struct nvmlProcessInfo535_st {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
	unsigned long long usedGpuCcProtectedMemory;
} nvmlProcessInfo535_t;

typedef struct nvmlEventData_st {
	nvmlDevice_t device;
	unsigned long long eventType;
	unsigned long long eventData;  /* the Xid for XidCriticalError */
	unsigned int gpuInstanceId;    /* NVML_INSTANCE_ID_NONE if none */
	unsigned int computeInstanceId;
} nvmlEventData_t;

/*
 * One process on a GPU: the element of the _v3 running-process calls,
 * which take nvmlProcessInfo_t, that is nvmlProcessInfo_v2_t (24 bytes;
 * the naming is NVML's).  Drivers 535.43.02 to 535.86.05 wrote a 32-byte
 * element from the same symbol (a trailing usedGpuCcProtectedMemory);
 * process_map.c reads by stride for them.
 */
typedef struct nvmlProcessInfo_v2_st {
	unsigned int pid;                /* in the host's PID namespace */
	unsigned long long usedGpuMemory; /* bytes; NVML_VALUE_NOT_AVAILABLE if unknown */
	unsigned int gpuInstanceId;      /* NVML_INSTANCE_ID_NONE if not MIG */
	unsigned int computeInstanceId;  /* NVML_INSTANCE_ID_NONE if not MIG */
} nvmlProcessInfo_v2_t, nvmlProcessInfo_t;
#define NVML_VALUE_NOT_AVAILABLE 0xFFFFFFFFFFFFFFFFULL

/*
 * GPM (GPU performance metrics, Hopper and newer; section 10 of the NVML
 * notes).  A metric is computed from two samples taken at least 100 ms
 * apart.  nvmlGpmMetricsGet_t ends in an array sized NVML_GPM_METRIC_MAX,
 * which grew with the driver (98 up to CUDA 12.8's header, 210, then 333
 * in 13.3): the struct here is declared with the largest, 333, so that a
 * driver built against any of them finds room for what it may touch; kerf
 * always passes numMetrics (4) and reads only those entries.
 */
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;

#define NVML_GPM_METRIC_SM_UTIL                 2   /* % SMs busy */
#define NVML_GPM_METRIC_SM_OCCUPANCY            3   /* % warps resident vs max */
#define NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC 60  /* MiB/s, all links */
#define NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC 61  /* MiB/s, all links */
#define NVML_GPM_METRIC_MAX                     333 /* 13.3; 98 in <= 12.8 */
#define NVML_GPM_METRICS_GET_VERSION            1   /* not NVML_STRUCT_VERSION */
#define NVML_GPM_SUPPORT_VERSION                1

typedef struct nvmlGpmMetric_st {
	unsigned int metricId;       /* IN: NVML_GPM_METRIC_* */
	nvmlReturn_t nvmlReturn;     /* OUT */
	double value;                /* OUT */
	struct {
		char *shortName;
		char *longName;
		char *unit;
	} metricInfo;                /* OUT, may be NULL */
} nvmlGpmMetric_t;

typedef struct nvmlGpmMetricsGet_st {
	unsigned int version;        /* NVML_GPM_METRICS_GET_VERSION */
	unsigned int numMetrics;
	nvmlGpmSample_t sample1;
	nvmlGpmSample_t sample2;
	nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

typedef struct nvmlGpmSupport_st {
	unsigned int version;        /* NVML_GPM_SUPPORT_VERSION */
	unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

_Static_assert(sizeof(nvmlReturn_t) == 4, "enum size");
_Static_assert(sizeof(nvmlPciInfo_t) == 68 && offsetof(nvmlPciInfo_t, busId) == 36 &&
	       offsetof(nvmlPciInfo_t, pciDeviceId) == 28, "pci");
_Static_assert(sizeof(nvmlMemory_t) == 24, "mem");
_Static_assert(sizeof(nvmlMemory_v2_t) == 40 && offsetof(nvmlMemory_v2_t, total) == 8 &&
	       offsetof(nvmlMemory_v2_t, used) == 32, "mem2");
_Static_assert(sizeof(nvmlUtilization_t) == 8, "util");
_Static_assert(sizeof(nvmlGpuInstancePlacement_t) == 8, "gip");
_Static_assert(sizeof(nvmlGpuInstanceProfileInfo_t) == 48 &&
	       offsetof(nvmlGpuInstanceProfileInfo_t, memorySizeMB) == 40, "gipi1");
_Static_assert(sizeof(nvmlGpuInstanceInfo_t) == 24 &&
	       offsetof(nvmlGpuInstanceInfo_t, placement) == 16, "gii");
_Static_assert(sizeof(nvmlComputeInstanceProfileInfo_t) == 36, "cipi1");
_Static_assert(sizeof(nvmlComputeInstanceInfo_t) == 32 &&
	       offsetof(nvmlComputeInstanceInfo_t, placement) == 24, "cii");
_Static_assert(sizeof(nvmlEventData_t) == 32 &&
	       offsetof(nvmlEventData_t, gpuInstanceId) == 24, "event");
_Static_assert(sizeof(nvmlProcessInfo_t) == 24 && offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8 &&
	       offsetof(nvmlProcessInfo_t, gpuInstanceId) == 16, "process");
_Static_assert(offsetof(nvmlProcessInfo_t, computeInstanceId) == 20, "proc");
_Static_assert(sizeof(nvmlProcessInfo535_t) == 32 &&
	       offsetof(nvmlProcessInfo535_t, computeInstanceId) == 20, "process535");
_Static_assert(sizeof(nvmlGpmMetric_t) == 40 && offsetof(nvmlGpmMetric_t, value) == 8 &&
	       offsetof(nvmlGpmMetric_t, metricInfo) == 16, "gpmm");
_Static_assert(offsetof(nvmlGpmMetricsGet_t, metrics) == 24 &&
	       sizeof(nvmlGpmMetricsGet_t) == 13344, "gpmg");
_Static_assert(sizeof(nvmlGpmSupport_t) == 8, "gpms");
_Static_assert(nvmlMemory_v2 == 0x02000028u, "versions");

/* The function types, one per symbol the agent resolves. */
typedef const char *(*nvml_error_string_fn)(nvmlReturn_t result);
typedef nvmlReturn_t (*nvml_init_fn)(void);
typedef nvmlReturn_t (*nvml_shutdown_fn)(void);
typedef nvmlReturn_t (*nvml_driver_version_fn)(char *version, unsigned int length);
typedef nvmlReturn_t (*nvml_device_count_fn)(unsigned int *count);
typedef nvmlReturn_t (*nvml_handle_by_index_fn)(unsigned int index, nvmlDevice_t *device);
typedef nvmlReturn_t (*nvml_device_string_fn)(nvmlDevice_t device, char *buf, unsigned int length);
typedef nvmlReturn_t (*nvml_pci_info_fn)(nvmlDevice_t device, nvmlPciInfo_t *pci);
typedef nvmlReturn_t (*nvml_memory_info_fn)(nvmlDevice_t device, nvmlMemory_t *memory);
typedef nvmlReturn_t (*nvml_device_uint_fn)(nvmlDevice_t device, unsigned int *value);
typedef nvmlReturn_t (*nvml_utilization_fn)(nvmlDevice_t device, nvmlUtilization_t *util);
typedef nvmlReturn_t (*nvml_mig_mode_fn)(nvmlDevice_t device, unsigned int *current,
					 unsigned int *pending);
typedef nvmlReturn_t (*nvml_gi_profile_info_fn)(nvmlDevice_t device, unsigned int profile,
						nvmlGpuInstanceProfileInfo_t *info);
typedef nvmlReturn_t (*nvml_gpu_instances_fn)(nvmlDevice_t device, unsigned int profileId,
					      nvmlGpuInstance_t *instances, unsigned int *count);
typedef nvmlReturn_t (*nvml_gi_info_fn)(nvmlGpuInstance_t gi, nvmlGpuInstanceInfo_t *info);
typedef nvmlReturn_t (*nvml_ci_profile_info_fn)(nvmlGpuInstance_t gi, unsigned int profile,
						unsigned int engProfile,
						nvmlComputeInstanceProfileInfo_t *info);
typedef nvmlReturn_t (*nvml_compute_instances_fn)(nvmlGpuInstance_t gi, unsigned int profileId,
						  nvmlComputeInstance_t *instances,
						  unsigned int *count);
typedef nvmlReturn_t (*nvml_ci_info_fn)(nvmlComputeInstance_t ci, nvmlComputeInstanceInfo_t *info);
typedef nvmlReturn_t (*nvml_nvlink_state_fn)(nvmlDevice_t device, unsigned int link,
					     nvmlEnableState_t *active);
typedef nvmlReturn_t (*nvml_nvlink_remote_pci_fn)(nvmlDevice_t device, unsigned int link,
						  nvmlPciInfo_t *pci);
typedef nvmlReturn_t (*nvml_event_set_create_fn)(nvmlEventSet_t *set);
typedef nvmlReturn_t (*nvml_register_events_fn)(nvmlDevice_t device, unsigned long long types,
						nvmlEventSet_t set);
typedef nvmlReturn_t (*nvml_event_set_wait_fn)(nvmlEventSet_t set, nvmlEventData_t *data,
					       unsigned int timeout_ms);
typedef nvmlReturn_t (*nvml_event_set_free_fn)(nvmlEventSet_t set);

/* MIG actuation (KERF_NVML_F_MIG_ACTUATE): changing modes and instances. */
typedef nvmlReturn_t (*nvml_set_mig_mode_fn)(nvmlDevice_t device, unsigned int mode,
					     nvmlReturn_t *activationStatus);
typedef nvmlReturn_t (*nvml_gi_placements_fn)(nvmlDevice_t device, unsigned int profileId,
					      nvmlGpuInstancePlacement_t *placements,
					      unsigned int *count);
typedef nvmlReturn_t (*nvml_create_gi_fn)(nvmlDevice_t device, unsigned int profileId,
					  const nvmlGpuInstancePlacement_t *placement,
					  nvmlGpuInstance_t *gpuInstance);
typedef nvmlReturn_t (*nvml_gi_by_id_fn)(nvmlDevice_t device, unsigned int id,
					 nvmlGpuInstance_t *gpuInstance);
typedef nvmlReturn_t (*nvml_gi_destroy_fn)(nvmlGpuInstance_t gpuInstance);
typedef nvmlReturn_t (*nvml_create_ci_fn)(nvmlGpuInstance_t gpuInstance, unsigned int profileId,
					  nvmlComputeInstance_t *computeInstance);
typedef nvmlReturn_t (*nvml_ci_by_id_fn)(nvmlGpuInstance_t gpuInstance, unsigned int id,
					 nvmlComputeInstance_t *computeInstance);
typedef nvmlReturn_t (*nvml_ci_destroy_fn)(nvmlComputeInstance_t computeInstance);
/* nvmlDeviceGetComputeRunningProcesses_v3: *count in/out, infos may be NULL */
typedef nvmlReturn_t (*nvml_running_processes_fn)(nvmlDevice_t device, unsigned int *infoCount,
						  nvmlProcessInfo_t *infos);

/* GPM (KERF_NVML_F_GPM) */
typedef nvmlReturn_t (*nvml_gpm_support_fn)(nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport);
typedef nvmlReturn_t (*nvml_gpm_sample_alloc_fn)(nvmlGpmSample_t *gpmSample);
typedef nvmlReturn_t (*nvml_gpm_sample_free_fn)(nvmlGpmSample_t gpmSample);
typedef nvmlReturn_t (*nvml_gpm_sample_get_fn)(nvmlDevice_t device, nvmlGpmSample_t gpmSample);
typedef nvmlReturn_t (*nvml_gpm_mig_sample_get_fn)(nvmlDevice_t device, unsigned int gpuInstanceId,
						   nvmlGpmSample_t gpmSample);
typedef nvmlReturn_t (*nvml_gpm_metrics_get_fn)(nvmlGpmMetricsGet_t *metricsGet);

#endif /* KERF_NVML_NVML_API_H */
