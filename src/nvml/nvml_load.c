/*
 * nvml_load: dlopen libnvidia-ml, resolve the symbols kerf uses into
 * struct kerf_nvml, and initialise NVML (nvml_load.h).
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml/nvml_load.h"

/* One symbol: where it goes and which feature needs it (0: required). */
struct sym {
	const char *name;
	size_t offset;
	unsigned feature;
};

#define S(field, symbol, feat) { symbol, offsetof(struct kerf_nvml, field), feat }
static const struct sym syms[] = {
	S(init_v2, "nvmlInit_v2", 0),
	S(shutdown, "nvmlShutdown", 0),
	S(device_count_v2, "nvmlDeviceGetCount_v2", 0),
	S(handle_by_index_v2, "nvmlDeviceGetHandleByIndex_v2", 0),
	S(device_uuid, "nvmlDeviceGetUUID", 0),
	S(device_name, "nvmlDeviceGetName", 0),
	S(pci_info_v3, "nvmlDeviceGetPciInfo_v3", 0),
	S(memory_info, "nvmlDeviceGetMemoryInfo", 0),
	S(error_string, "nvmlErrorString", ~0u),  /* optional, no feature */
	S(driver_version, "nvmlSystemGetDriverVersion", KERF_NVML_F_DRIVER_VERSION),
	S(numa_node_id, "nvmlDeviceGetNumaNodeId", KERF_NVML_F_NUMA),
	S(mig_mode, "nvmlDeviceGetMigMode", KERF_NVML_F_MIG),
	S(gi_profile_info, "nvmlDeviceGetGpuInstanceProfileInfo", KERF_NVML_F_MIG),
	S(gpu_instances, "nvmlDeviceGetGpuInstances", KERF_NVML_F_MIG),
	S(gi_info, "nvmlGpuInstanceGetInfo", KERF_NVML_F_MIG),
	S(ci_profile_info, "nvmlGpuInstanceGetComputeInstanceProfileInfo", KERF_NVML_F_MIG),
	S(compute_instances, "nvmlGpuInstanceGetComputeInstances", KERF_NVML_F_MIG),
	S(ci_info_v2, "nvmlComputeInstanceGetInfo_v2", KERF_NVML_F_MIG),
	S(nvlink_state, "nvmlDeviceGetNvLinkState", KERF_NVML_F_NVLINK),
	S(nvlink_remote_pci_v2, "nvmlDeviceGetNvLinkRemotePciInfo_v2", KERF_NVML_F_NVLINK),
	S(utilization, "nvmlDeviceGetUtilizationRates", KERF_NVML_F_TELEMETRY),
	S(power_usage_mw, "nvmlDeviceGetPowerUsage", KERF_NVML_F_TELEMETRY),
	S(event_set_create, "nvmlEventSetCreate", KERF_NVML_F_EVENTS),
	S(register_events, "nvmlDeviceRegisterEvents", KERF_NVML_F_EVENTS),
	S(event_set_wait_v2, "nvmlEventSetWait_v2", KERF_NVML_F_EVENTS),
	S(event_set_free, "nvmlEventSetFree", KERF_NVML_F_EVENTS),
	S(set_mig_mode, "nvmlDeviceSetMigMode", KERF_NVML_F_MIG_ACTUATE),
	S(gi_placements_v2, "nvmlDeviceGetGpuInstancePossiblePlacements_v2", KERF_NVML_F_MIG_ACTUATE),
	S(create_gi_with_placement, "nvmlDeviceCreateGpuInstanceWithPlacement",
	  KERF_NVML_F_MIG_ACTUATE),
	S(gi_by_id, "nvmlDeviceGetGpuInstanceById", KERF_NVML_F_MIG_ACTUATE),
	S(gi_destroy, "nvmlGpuInstanceDestroy", KERF_NVML_F_MIG_ACTUATE),
	S(create_ci, "nvmlGpuInstanceCreateComputeInstance", KERF_NVML_F_MIG_ACTUATE),
	S(ci_by_id, "nvmlGpuInstanceGetComputeInstanceById", KERF_NVML_F_MIG_ACTUATE),
	S(ci_destroy, "nvmlComputeInstanceDestroy", KERF_NVML_F_MIG_ACTUATE),
	S(running_processes_v3, "nvmlDeviceGetComputeRunningProcesses_v3",
	  KERF_NVML_F_PROCESSES),
	S(gpm_query_device_support, "nvmlGpmQueryDeviceSupport", KERF_NVML_F_GPM),
	S(gpm_sample_alloc, "nvmlGpmSampleAlloc", KERF_NVML_F_GPM),
	S(gpm_sample_free, "nvmlGpmSampleFree", KERF_NVML_F_GPM),
	S(gpm_sample_get, "nvmlGpmSampleGet", KERF_NVML_F_GPM),
	S(gpm_metrics_get, "nvmlGpmMetricsGet", KERF_NVML_F_GPM),
	S(gpm_mig_sample_get, "nvmlGpmMigSampleGet", ~0u),  /* optional, no feature */
};
#undef S

static const struct {
	unsigned bit;
	const char *name;
} feature_names[] = {
	{ KERF_NVML_F_DRIVER_VERSION, "driver-version" },
	{ KERF_NVML_F_NUMA, "numa" },
	{ KERF_NVML_F_MIG, "mig" },
	{ KERF_NVML_F_NVLINK, "nvlink" },
	{ KERF_NVML_F_EVENTS, "events" },
	{ KERF_NVML_F_TELEMETRY, "telemetry" },
	{ KERF_NVML_F_MIG_ACTUATE, "mig-actuation" },
	{ KERF_NVML_F_PROCESSES, "processes" },
	{ KERF_NVML_F_GPM, "gpm" },
};

static void note_off(struct kerf_nvml *nv, unsigned bit, const char *symbol)
{
	const char *feature = "?";
	size_t used = strlen(nv->off);

	for (size_t i = 0; i < sizeof(feature_names) / sizeof(feature_names[0]); i++)
		if (feature_names[i].bit == bit)
			feature = feature_names[i].name;
	snprintf(nv->off + used, sizeof(nv->off) - used, "%s%s (%s missing)",
		 used ? "; " : "", feature, symbol);
}

int kerf_nvml_open(struct kerf_nvml *nv, const char *path, struct kerf_err *err)
{
	int ret;

	memset(nv, 0, sizeof(*nv));
	if (!path || !*path)
		path = getenv(KERF_NVML_LIBRARY_ENV);
	if (!path || !*path)
		path = KERF_NVML_DEFAULT_LIBRARY;
	snprintf(nv->path, sizeof(nv->path), "%s", path);

	/* RTLD_LOCAL: nothing else in kerf should bind to NVML's symbols. */
	nv->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!nv->dl) {
		const char *why = dlerror();
		return kerf_err_set(err, -KERF_ENOTFOUND,
				    "cannot load NVML from '%s': %s (no NVIDIA driver on this node?)",
				    path, why ? why : "unknown error");
	}

	nv->features = KERF_NVML_F_ALL;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *fn = dlsym(nv->dl, syms[i].name);
		if (fn) {
			memcpy((char *)nv + syms[i].offset, &fn, sizeof(fn));
			continue;
		}
		if (syms[i].feature == 0) {
			ret = kerf_err_set(err, -KERF_ENOTFOUND,
				     "NVML library '%s' lacks required symbol '%s' (driver too old?)",
				     path, syms[i].name);
			goto out_close;
		}
		if (syms[i].feature == ~0u)
			continue;
		if (nv->features & syms[i].feature)
			note_off(nv, syms[i].feature, syms[i].name);
		nv->features &= ~syms[i].feature;
	}
	/* A feature with one symbol missing has all its pointers cleared. */
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		unsigned f = syms[i].feature;
		if (f && f != ~0u && !(nv->features & f))
			memset((char *)nv + syms[i].offset, 0, sizeof(void (*)(void)));
	}

	nvmlReturn_t rc = nv->init_v2();
	if (rc != NVML_SUCCESS) {
		ret = kerf_err_set(err, -KERF_EIO, "nvmlInit_v2 failed: %s (%d)",
			     kerf_nvml_return_name(rc), (int)rc);
		goto out_close;
	}
	nv->initialised = true;
	return 0;

out_close:
	dlclose(nv->dl);
	nv->dl = NULL;
	return ret;
}

void kerf_nvml_close(struct kerf_nvml *nv)
{
	if (nv->initialised && nv->shutdown)
		nv->shutdown();
	nv->initialised = false;
	if (nv->dl)
		dlclose(nv->dl);
	nv->dl = NULL;
}
