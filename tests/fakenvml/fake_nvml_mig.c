/*
 * fake_nvml_mig: the fake's MIG writes (never shipped, tests only).
 *
 * Included at the end of fake_nvml.c, whose device, GPU instance and
 * compute instance structs and script helpers it uses; it is not compiled
 * on its own.  The calls change the fake's layout as NVML changes the
 * GPU's, and keep NVML's rules:
 *
 *   - a GPU instance only at one of its profile's placements (the 8-slice
 *     GPU's, as nvidia-smi mig -lgipp lists them), else INVALID_ARGUMENT;
 *   - overlap with another GPU instance, more instances of a profile than
 *     its instanceCount, or more than 7 compute slices in all:
 *     INSUFFICIENT_RESOURCES; the same for a compute instance that does
 *     not fit in its GPU instance;
 *   - destroying a GPU instance that has compute instances, or an instance
 *     with processes on it: IN_USE;
 *   - anything on a GPU not in MIG mode: NOT_SUPPORTED.
 *
 * A destroyed instance leaves its slot empty (profile id ~0u) so that the
 * handles of the others stay valid, as NVML's do.
 *
 * Script additions (see fake_nvml.c for the rest):
 *
 *   "failMigCall": {"after": 3, "rc": "UNKNOWN"}   the write call after
 *       the first 3 (set mode, create, destroy) fails once with rc; counted
 *       from nvmlInit_v2.  With "noop": true instead it returns SUCCESS
 *       and changes nothing (a create hands out a NULL handle): a driver
 *       that says done and did not do it
 *   devices[i].processes: [{"pid": 7, "usedMiB": 100, "gi": 1, "ci": 0}]
 *       what nvmlDeviceGetComputeRunningProcesses_v3 lists; an instance
 *       with a process is in use
 *   devices[i].migActivation: "RESET_REQUIRED"     nvmlDeviceSetMigMode
 *       leaves the new mode pending with this activation status
 */

enum { DEAD = ~0u, CI_PROFILES_USED = 7 };

/* The 8-slice GPU's placements per GI profile id: size, starts as bits. */
static const struct {
	unsigned id, size, starts;
} gi_place[] = {
	{ 19, 1, 0x7f }, { 20, 1, 0x7f }, { 15, 2, 0x55 }, { 14, 2, 0x15 },
	{ 9, 4, 0x11 },  { 5, 4, 0x01 },  { 0, 8, 0x01 },
};

static struct {
	unsigned nr_writes;          /* write calls since nvmlInit_v2 */
	bool noop;                   /* this write says SUCCESS, does nothing */
} mig_fake;

/* The key the fake marks its script with once its MIG state is reset. */
static const char mig_marker[] = "kerfFakeMigState";

/* The write counter belongs to one nvmlInit_v2: reset on a new script. */
static void mig_sync(void)
{
	if (!fake.script || json_object_get(fake.script, mig_marker))
		return;
	json_object_set_new(fake.script, mig_marker, json_true());
	mig_fake.nr_writes = 0;
}

/* The scripted failure of this write call, or NVML_SUCCESS. */
static nvmlReturn_t mig_write_fails(void)
{
	mig_sync();
	json_t *f = json_object_get(fake.script, "failMigCall");
	unsigned n = mig_fake.nr_writes++;
	mig_fake.noop = false;
	if (f && n == num(f, "after", 0) && json_is_true(json_object_get(f, "noop")))
		mig_fake.noop = true;
	else if (f && n == num(f, "after", 0))
		return code_of(json_object_get(f, "rc"));
	return NVML_SUCCESS;
}

static const json_t *device_script(const struct nvmlDevice_st *d)
{
	return json_array_get(json_object_get(fake.script, "devices"), d->index);
}

/* Processes on GI gi_id (and CI ci_id unless DEAD) of d. */
static unsigned processes_on(const struct nvmlDevice_st *d, unsigned gi_id, unsigned ci_id)
{
	json_t *procs = json_object_get(device_script(d), "processes"), *p;
	unsigned n = 0;
	size_t i;

	json_array_foreach(procs, i, p) {
		if (num(p, "gi", DEAD) == gi_id && (ci_id == DEAD || num(p, "ci", DEAD) == ci_id))
			n++;
	}
	return n;
}

static int gi_place_of(unsigned id)
{
	for (unsigned i = 0; i < sizeof(gi_place) / sizeof(gi_place[0]); i++)
		if (gi_place[i].id == id)
			return (int)i;
	return -1;
}

static int gi_profile_of(unsigned id)
{
	for (unsigned p = 0; p < NVML_GPU_INSTANCE_PROFILE_COUNT; p++)
		if (gi_profiles[p].count && gi_profiles[p].id == id)
			return (int)p;
	return -1;
}

static bool gi_live(const struct nvmlGpuInstance_st *gi)
{
	return gi->profile_id != DEAD;
}

static bool ci_live(const struct nvmlComputeInstance_st *ci)
{
	return ci->profile_id != DEAD;
}

static unsigned live_cis(const struct nvmlGpuInstance_st *gi)
{
	unsigned n = 0;

	for (unsigned i = 0; i < gi->nr_cis; i++)
		n += ci_live(&gi->cis[i]);
	return n;
}

nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t device,
							    unsigned int profileId,
							    nvmlGpuInstancePlacement_t *placements,
							    unsigned int *count)
{
	DEVICE_CALL(device);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (device->mig_current == DEAD)
		return NVML_ERROR_NOT_SUPPORTED;
	int k = gi_place_of(profileId);
	if (k < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	unsigned n = 0;
	for (unsigned s = 0; s < 8; s++)
		n += (gi_place[k].starts >> s) & 1u;
	if (!placements) {
		*count = n;
		return NVML_SUCCESS;
	}
	if (*count < n)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	n = 0;
	for (unsigned s = 0; s < 8; s++)
		if ((gi_place[k].starts >> s) & 1u)
			placements[n++] = (nvmlGpuInstancePlacement_t){ s, gi_place[k].size };
	*count = n;
	return NVML_SUCCESS;
}

/* Would a GI of profile index p at [start, start+size) fit on d? */
static bool gi_fits(const struct nvmlDevice_st *d, int p, unsigned start, unsigned size)
{
	unsigned slices = gi_profiles[p].slices, same = 0;

	for (unsigned i = 0; i < d->nr_gis; i++) {
		const struct nvmlGpuInstance_st *g = &d->gis[i];
		if (!gi_live(g))
			continue;
		if (g->start < start + size && start < g->start + g->size)
			return false;
		int q = gi_profile_of(g->profile_id);
		slices += q >= 0 ? gi_profiles[q].slices : 0;
		same += g->profile_id == gi_profiles[p].id;
	}
	return slices <= 7 && same < gi_profiles[p].count;
}

nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t device, unsigned int profileId,
						      const nvmlGpuInstancePlacement_t *placement,
						      nvmlGpuInstance_t *gpuInstance)
{
	DEVICE_CALL(device);
	if (!placement || !gpuInstance)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (device->mig_current != NVML_DEVICE_MIG_ENABLE)
		return NVML_ERROR_NOT_SUPPORTED;
	int k = gi_place_of(profileId), p = gi_profile_of(profileId);
	if (k < 0 || p < 0 || placement->size != gi_place[k].size || placement->start >= 8 ||
	    !((gi_place[k].starts >> placement->start) & 1u))
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t rc = mig_write_fails();
	if (rc != NVML_SUCCESS || mig_fake.noop) {
		*gpuInstance = NULL;
		return rc;
	}
	if (!gi_fits(device, p, placement->start, placement->size))
		return NVML_ERROR_INSUFFICIENT_RESOURCES;

	struct nvmlGpuInstance_st *slot = NULL;
	unsigned id = 1;
	for (bool taken = true; taken; id += taken) {
		taken = false;
		for (unsigned i = 0; i < device->nr_gis; i++)
			taken |= gi_live(&device->gis[i]) && device->gis[i].id == id;
	}
	for (unsigned i = 0; i < device->nr_gis && !slot; i++)
		if (!gi_live(&device->gis[i]))
			slot = &device->gis[i];
	if (!slot && device->nr_gis < MAX_GI)
		slot = &device->gis[device->nr_gis++];
	if (!slot)
		return NVML_ERROR_INSUFFICIENT_RESOURCES;
	*slot = (struct nvmlGpuInstance_st){ .dev = device, .id = id, .profile_id = profileId,
					     .start = placement->start, .size = placement->size };
	*gpuInstance = slot;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t device, unsigned int id,
					  nvmlGpuInstance_t *gpuInstance)
{
	DEVICE_CALL(device);
	if (!gpuInstance)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (device->mig_current != NVML_DEVICE_MIG_ENABLE)
		return NVML_ERROR_NOT_SUPPORTED;
	for (unsigned i = 0; i < device->nr_gis; i++)
		if (gi_live(&device->gis[i]) && device->gis[i].id == id) {
			*gpuInstance = &device->gis[i];
			return NVML_SUCCESS;
		}
	return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gpuInstance)
{
	if (!gpuInstance)
		return NVML_ERROR_INVALID_ARGUMENT;
	DEVICE_CALL(gpuInstance->dev);
	if (!gi_live(gpuInstance))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (live_cis(gpuInstance) || processes_on(gpuInstance->dev, gpuInstance->id, DEAD))
		return NVML_ERROR_IN_USE;
	nvmlReturn_t rc = mig_write_fails();
	if (rc != NVML_SUCCESS || mig_fake.noop)
		return rc;
	gpuInstance->profile_id = DEAD;
	gpuInstance->id = DEAD;
	gpuInstance->nr_cis = 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gpuInstance,
						  unsigned int profileId,
						  nvmlComputeInstance_t *computeInstance)
{
	if (!gpuInstance || !computeInstance)
		return NVML_ERROR_INVALID_ARGUMENT;
	DEVICE_CALL(gpuInstance->dev);
	if (!gi_live(gpuInstance) || profileId >= CI_PROFILES_USED)
		return NVML_ERROR_INVALID_ARGUMENT;
	unsigned size = ci_slices[profileId], slices = gi_slices(gpuInstance), used = 0;
	if (size > slices)
		return NVML_ERROR_NOT_SUPPORTED;
	nvmlReturn_t rc = mig_write_fails();
	if (rc != NVML_SUCCESS || mig_fake.noop) {
		*computeInstance = NULL;
		return rc;
	}

	/* first fit on the GI's compute slices */
	for (unsigned i = 0; i < gpuInstance->nr_cis; i++)
		if (ci_live(&gpuInstance->cis[i]))
			used |= ((1u << gpuInstance->cis[i].size) - 1u) << gpuInstance->cis[i].start;
	unsigned start = 0, span = (1u << size) - 1u;
	while (start + size <= slices && (used & (span << start)))
		start++;
	if (start + size > slices)
		return NVML_ERROR_INSUFFICIENT_RESOURCES;

	struct nvmlComputeInstance_st *slot = NULL;
	unsigned id = 0;
	for (bool taken = true; taken; id += taken) {
		taken = false;
		for (unsigned i = 0; i < gpuInstance->nr_cis; i++)
			taken |= ci_live(&gpuInstance->cis[i]) && gpuInstance->cis[i].id == id;
	}
	for (unsigned i = 0; i < gpuInstance->nr_cis && !slot; i++)
		if (!ci_live(&gpuInstance->cis[i]))
			slot = &gpuInstance->cis[i];
	if (!slot && gpuInstance->nr_cis < MAX_CI)
		slot = &gpuInstance->cis[gpuInstance->nr_cis++];
	if (!slot)
		return NVML_ERROR_INSUFFICIENT_RESOURCES;
	*slot = (struct nvmlComputeInstance_st){ .gi = gpuInstance, .id = id,
						 .profile_id = profileId, .start = start,
						 .size = size };
	*computeInstance = slot;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceById(nvmlGpuInstance_t gpuInstance, unsigned int id,
						   nvmlComputeInstance_t *computeInstance)
{
	if (!gpuInstance || !computeInstance)
		return NVML_ERROR_INVALID_ARGUMENT;
	DEVICE_CALL(gpuInstance->dev);
	for (unsigned i = 0; i < gpuInstance->nr_cis; i++)
		if (ci_live(&gpuInstance->cis[i]) && gpuInstance->cis[i].id == id) {
			*computeInstance = &gpuInstance->cis[i];
			return NVML_SUCCESS;
		}
	return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t computeInstance)
{
	if (!computeInstance)
		return NVML_ERROR_INVALID_ARGUMENT;
	DEVICE_CALL(computeInstance->gi->dev);
	if (!ci_live(computeInstance))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (processes_on(computeInstance->gi->dev, computeInstance->gi->id, computeInstance->id))
		return NVML_ERROR_IN_USE;
	nvmlReturn_t rc = mig_write_fails();
	if (rc != NVML_SUCCESS || mig_fake.noop)
		return rc;
	computeInstance->profile_id = DEAD;
	computeInstance->id = DEAD;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetMigMode(nvmlDevice_t device, unsigned int mode,
				  nvmlReturn_t *activationStatus)
{
	DEVICE_CALL(device);
	if (!activationStatus || mode > NVML_DEVICE_MIG_ENABLE)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (device->mig_current == DEAD)
		return NVML_ERROR_NOT_SUPPORTED;
	nvmlReturn_t rc = mig_write_fails();
	if (rc != NVML_SUCCESS || mig_fake.noop) {
		*activationStatus = NVML_SUCCESS;
		return rc;
	}
	device->mig_pending = mode;
	json_t *act = json_object_get(device_script(device), "migActivation");
	bool busy = json_array_size(json_object_get(device_script(device), "processes")) > 0;
	*activationStatus = act ? code_of(act) : busy ? NVML_ERROR_IN_USE : NVML_SUCCESS;
	if (*activationStatus == NVML_SUCCESS && device->mig_current != mode) {
		device->mig_current = mode;
		device->nr_gis = 0;  /* a mode change starts with no instances */
	}
	return NVML_SUCCESS;
}

/* nvmlDeviceGetComputeRunningProcesses_v3 is fake_nvml.c's (the same "processes"). */
