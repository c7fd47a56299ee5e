/*
 * inventory_mig: a GPU's MIG mode and its GPU and compute instances.
 *
 * Profiles are walked by NVML index (0 .. NVML_*_PROFILE_COUNT-1; the
 * index is what ProfileInfo takes, every other call takes the profile's
 * id): NOT_SUPPORTED means this GPU lacks the profile, INVALID_ARGUMENT
 * that the library knows no more indices.  Instance buffers are sized by
 * the profile's instanceCount, as NVML asks.
 */
#include <stdio.h>
#include <string.h>

#include "core/mig/geometry.h"
#include "nvml/inventory_gpu.h"

static void profile_name(struct kerf_gpu_gi *gi, const char *model)
{
	const struct kerf_mig_model *m = model ? kerf_mig_model_find(model) : NULL;

	for (unsigned p = 0; m && p < m->nr_profiles; p++)
		if (m->profiles[p].nvml_id == gi->profile_id) {
			snprintf(gi->profile, sizeof(gi->profile), "%s", m->profiles[p].name);
			return;
		}
}

/* The compute instances of gi; false when reading the GPU must stop. */
static bool read_cis(struct kerf_gpu *g, struct kerf_gpu_gi *gi, const struct kerf_nvml *nv,
		     nvmlGpuInstance_t handle)
{
	for (unsigned idx = 0; idx < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; idx++) {
		nvmlComputeInstanceProfileInfo_t info;
		memset(&info, 0, sizeof(info));
		nvmlReturn_t rc = nv->ci_profile_info(handle, idx,
						      NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED,
						      &info);
		if (rc == NVML_ERROR_NOT_SUPPORTED)
			continue;
		if (rc == NVML_ERROR_INVALID_ARGUMENT)
			break;
		if (rc != NVML_SUCCESS) {
			if (kerf_gpu_note(g, "mig.ci_profile", rc))
				return false;
			continue;
		}
		nvmlComputeInstance_t cis[KERF_GPU_MAX_CIS];
		unsigned count = info.instanceCount < KERF_GPU_MAX_CIS ? info.instanceCount
								     : KERF_GPU_MAX_CIS;
		if (!count)
			continue;
		rc = nv->compute_instances(handle, info.id, cis, &count);
		if (rc != NVML_SUCCESS) {
			if (kerf_gpu_note(g, "mig.compute_instances", rc))
				return false;
			continue;
		}
		for (unsigned k = 0; k < count && gi->nr_cis < KERF_GPU_MAX_CIS; k++) {
			nvmlComputeInstanceInfo_t ci;
			memset(&ci, 0, sizeof(ci));
			rc = nv->ci_info_v2(cis[k], &ci);
			if (rc != NVML_SUCCESS) {
				if (kerf_gpu_note(g, "mig.ci_info", rc))
					return false;
				continue;
			}
			gi->cis[gi->nr_cis++] = (struct kerf_gpu_ci){
				.id = ci.id,
				.profile_id = ci.profileId,
				.slices = info.sliceCount,
				.start = ci.placement.start,
				.size = ci.placement.size,
			};
		}
	}
	return true;
}

/* The GPU instances of one profile; false when reading must stop. */
static bool read_gis(struct kerf_gpu *g, const struct kerf_nvml *nv, nvmlDevice_t dev,
		     const nvmlGpuInstanceProfileInfo_t *info)
{
	nvmlGpuInstance_t gis[KERF_GPU_MAX_GIS];
	unsigned count = info->instanceCount < KERF_GPU_MAX_GIS ? info->instanceCount
								 : KERF_GPU_MAX_GIS;
	if (!count)
		return true;
	nvmlReturn_t rc = nv->gpu_instances(dev, info->id, gis, &count);
	if (rc != NVML_SUCCESS)
		return !kerf_gpu_note(g, "mig.gpu_instances", rc);
	for (unsigned k = 0; k < count && g->nr_gis < KERF_GPU_MAX_GIS; k++) {
		nvmlGpuInstanceInfo_t gii;
		memset(&gii, 0, sizeof(gii));
		rc = nv->gi_info(gis[k], &gii);
		if (rc != NVML_SUCCESS) {
			if (kerf_gpu_note(g, "mig.gi_info", rc))
				return false;
			continue;
		}
		struct kerf_gpu_gi *gi = &g->gis[g->nr_gis++];
		memset(gi, 0, sizeof(*gi));
		gi->id = gii.id;
		gi->profile_id = gii.profileId;
		gi->slices = info->sliceCount;
		gi->mem_mib = info->memorySizeMB;
		gi->start = gii.placement.start;
		gi->size = gii.placement.size;
		profile_name(gi, g->model);
		if (!read_cis(g, gi, nv, gis[k]))
			return false;
	}
	return true;
}

void kerf_gpu_read_mig(struct kerf_gpu *g, const struct kerf_nvml *nv, nvmlDevice_t dev)
{
	unsigned current = 0, pending = 0;
	nvmlReturn_t rc = nv->mig_mode(dev, &current, &pending);

	if (rc == NVML_ERROR_NOT_SUPPORTED)
		return;
	if (rc != NVML_SUCCESS) {
		kerf_gpu_note(g, "mig.mode", rc);
		return;
	}
	g->mig_current = (int)current;
	g->mig_pending = (int)pending;
	if (current != NVML_DEVICE_MIG_ENABLE)
		return;

	unsigned seen[NVML_GPU_INSTANCE_PROFILE_COUNT], nr_seen = 0;
	for (unsigned idx = 0; idx < NVML_GPU_INSTANCE_PROFILE_COUNT; idx++) {
		nvmlGpuInstanceProfileInfo_t info;
		memset(&info, 0, sizeof(info));
		rc = nv->gi_profile_info(dev, idx, &info);
		if (rc == NVML_ERROR_NOT_SUPPORTED)
			continue;
		if (rc == NVML_ERROR_INVALID_ARGUMENT)
			break;
		if (rc != NVML_SUCCESS) {
			if (kerf_gpu_note(g, "mig.gi_profile", rc))
				return;
			continue;
		}
		bool dup = false;
		for (unsigned s = 0; s < nr_seen; s++)
			dup |= seen[s] == info.id;
		if (dup)
			continue;
		seen[nr_seen++] = info.id;
		if (!read_gis(g, nv, dev, &info))
			return;
	}
}
