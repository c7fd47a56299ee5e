/*
 * fake_nvml: a scriptable libnvidia-ml.so.1 for tests (never shipped).
 *
 * nvmlInit_v2 reads the JSON script named by $KERF_FAKE_NVML_SCRIPT:
 *
 *   {"driverVersion": "550.54.15",
 *    "init": "DRIVER_NOT_LOADED",            nvmlInit_v2 fails with it
 *    "fail": [{"function": "nvmlDeviceGetUUID", "device": 1,
 *              "return": "UNKNOWN"}],        device omitted: every device
 *    "devices": [{"uuid", "name", "memoryMiB", "pciBusId",
 *                 "pciDeviceId": "0x233010DE", "numaNode",
 *                 "lost": true,               every call: GPU_IS_LOST
 *                 "mig": {"current": 1, "pending": 1, "gpuInstances":
 *                   [{"id", "profileId", "start", "size",
 *                     "computeInstances": [{"id", "profileId", "start",
 *                                           "size"}]}]},
 *                 "nvlinks": ["00000000:2A:00.0", ...],
 *                 "utilization": 40, "powerMilliwatts": 300000,
 *                 "processes": [{"pid": 4242, "usedMiB": 1024,
 *                                "gi": 1, "ci": 0}],     usedMiB omitted:
 *                                                        NOT_AVAILABLE
 *                 "gpm": {"supported": true, ...}}],     fake_nvml_gpm.c
 *    "events": [{"device": 0, "type": "xid", "xid": 79, "gi": 1,
 *                "ci": 0}, {"device": 1, "type": "dbe"}]}
 *
 * Events can also arrive while a test runs: when $KERF_FAKE_NVML_EVENTS
 * names a file, nvmlEventSetWait_v2 delivers each line appended to it (one
 * event object as above per line), and waits up to its timeout (in 10 ms
 * steps) for one, as the real call blocks; without it the wait returns
 * TIMEOUT at once when the script's events are spent.  A line
 * {"failWait": "UNKNOWN"} makes every later wait fail with that code, and
 * {"failWait": 0} ends it.
 *
 * It keeps NVML's rules for the subset kerf uses: handles only from the
 * calls that hand them out, buffers respected (INSUFFICIENT_SIZE when
 * short), UNINITIALIZED before init, profiles walked by index.  Built
 * with KERF_FAKE_NVML_MINIMAL it leaves out the NUMA, NVLink, telemetry,
 * event, running-process, MIG-actuation and GPM symbols, as an old driver
 * would.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "nvml/nvml_load.h"

enum { MAX_DEV = 16, MAX_GI = 8, MAX_CI = 8, MAX_LINKS = 18, MAX_EVENTS = 64 };

struct nvmlComputeInstance_st {
	struct nvmlGpuInstance_st *gi;
	unsigned id, profile_id, start, size;
};

struct nvmlGpuInstance_st {
	struct nvmlDevice_st *dev;
	unsigned id, profile_id, start, size;
	struct nvmlComputeInstance_st cis[MAX_CI];
	unsigned nr_cis;
};

struct nvmlDevice_st {
	unsigned index;
	const char *uuid, *name, *bus_id;
	unsigned pci_device_id, numa_node, util, power_mw;
	bool has_numa, lost;
	unsigned long long mem_mib;
	unsigned long long used_mib;      /* "memoryUsedMiB" */
	unsigned mig_current, mig_pending;
	struct nvmlGpuInstance_st gis[MAX_GI];
	unsigned nr_gis;
	const char *links[MAX_LINKS];
	unsigned nr_links;
	const json_t *processes;          /* "processes", the script's */
};

struct nvmlEventSet_st {
	int unused;
};

static struct {
	unsigned refs;
	json_t *script;
	struct nvmlDevice_st devs[MAX_DEV];
	unsigned nr_devs;
	nvmlEventData_t events[MAX_EVENTS];
	unsigned nr_events, next_event;
	struct nvmlEventSet_st set;
	long events_offset;               /* read so far of $KERF_FAKE_NVML_EVENTS */
	nvmlReturn_t wait_fail;           /* {"failWait": "UNKNOWN"} appended there */
} fake;

/* The 8-slice GPU profiles by NVML index: id, compute slices, count, MiB. */
static const struct {
	unsigned id, slices, count;
	unsigned long long mem_mib;
} gi_profiles[NVML_GPU_INSTANCE_PROFILE_COUNT] = {
	[0x0] = { 19, 1, 7, 9856 },  [0x1] = { 14, 2, 3, 20096 },
	[0x2] = { 9, 3, 2, 40192 },  [0x3] = { 5, 4, 1, 40192 },
	[0x4] = { 0, 7, 1, 80384 },  [0x7] = { 20, 1, 1, 9856 },
	[0x9] = { 15, 1, 4, 20096 },
};
static const unsigned ci_slices[NVML_COMPUTE_INSTANCE_PROFILE_COUNT] = {
	1, 2, 3, 4, 7, 8, 6, 1, 2,
};

static unsigned num(const json_t *o, const char *key, unsigned dflt)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (unsigned)json_integer_value(v) : dflt;
}

static const char *str(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) ? json_string_value(v) : "";
}

static nvmlReturn_t code_of(const json_t *v)
{
	if (json_is_integer(v))
		return (nvmlReturn_t)json_integer_value(v);
	int rc = json_is_string(v) ? kerf_nvml_return_parse(json_string_value(v)) : -1;
	return rc < 0 ? NVML_ERROR_UNKNOWN : (nvmlReturn_t)rc;
}

/* The failure scripted for fn on dev (NULL: a call without a device). */
static nvmlReturn_t injected(const char *fn, const struct nvmlDevice_st *dev)
{
	json_t *fail = json_object_get(fake.script, "fail"), *f;
	size_t i;

	json_array_foreach(fail, i, f) {
		if (strcmp(str(f, "function"), fn))
			continue;
		json_t *d = json_object_get(f, "device");
		if (d && (!dev || (unsigned)json_integer_value(d) != dev->index))
			continue;
		return code_of(json_object_get(f, "return"));
	}
	return NVML_SUCCESS;
}

/* The common prologue of a device call. */
#define DEVICE_CALL(dev)                                                  \
	do {                                                              \
		if (!fake.refs)                                           \
			return NVML_ERROR_UNINITIALIZED;                  \
		if (!(dev))                                               \
			return NVML_ERROR_INVALID_ARGUMENT;               \
		if ((dev)->lost)                                          \
			return NVML_ERROR_GPU_IS_LOST;                    \
		nvmlReturn_t inj_ = injected(__func__, (dev));            \
		if (inj_ != NVML_SUCCESS)                                 \
			return inj_;                                      \
	} while (0)

static nvmlReturn_t copy_out(char *buf, unsigned length, const char *s)
{
	if (!buf)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (strlen(s) + 1 > length)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(buf, s, strlen(s) + 1);
	return NVML_SUCCESS;
}

static void load_mig(struct nvmlDevice_st *d, const json_t *mig)
{
	json_t *gis = json_object_get(mig, "gpuInstances"), *g;
	size_t i;

	d->mig_current = num(mig, "current", 0);
	d->mig_pending = num(mig, "pending", d->mig_current);
	json_array_foreach(gis, i, g) {
		if (d->nr_gis == MAX_GI)
			break;
		struct nvmlGpuInstance_st *gi = &d->gis[d->nr_gis++];
		gi->dev = d;
		gi->id = num(g, "id", (unsigned)i + 1);
		gi->profile_id = num(g, "profileId", 0);
		gi->start = num(g, "start", 0);
		gi->size = num(g, "size", 1);
		json_t *cis = json_object_get(g, "computeInstances"), *c;
		size_t k;
		json_array_foreach(cis, k, c) {
			if (gi->nr_cis == MAX_CI)
				break;
			struct nvmlComputeInstance_st *ci = &gi->cis[gi->nr_cis++];
			ci->gi = gi;
			ci->id = num(c, "id", (unsigned)k);
			ci->profile_id = num(c, "profileId", 0);
			ci->start = num(c, "start", 0);
			ci->size = num(c, "size", 1);
		}
	}
}

static void load_device(struct nvmlDevice_st *d, unsigned index, const json_t *o)
{
	memset(d, 0, sizeof(*d));
	d->index = index;
	d->uuid = str(o, "uuid");
	d->name = str(o, "name");
	d->bus_id = str(o, "pciBusId");
	d->pci_device_id = (unsigned)strtoul(str(o, "pciDeviceId"), NULL, 0);
	d->mem_mib = num(o, "memoryMiB", 0);
	d->used_mib = num(o, "memoryUsedMiB", 0);
	d->has_numa = json_is_integer(json_object_get(o, "numaNode"));
	d->numa_node = num(o, "numaNode", 0);
	d->lost = json_is_true(json_object_get(o, "lost"));
	d->util = num(o, "utilization", 0);
	d->power_mw = num(o, "powerMilliwatts", 0);
	d->mig_current = d->mig_pending = ~0u;  /* no MIG */
	if (json_object_get(o, "mig"))
		load_mig(d, json_object_get(o, "mig"));
	d->processes = json_object_get(o, "processes");
	json_t *links = json_object_get(o, "nvlinks"), *l;
	size_t i;
	json_array_foreach(links, i, l) {
		if (d->nr_links < MAX_LINKS && json_is_string(l))
			d->links[d->nr_links++] = json_string_value(l);
	}
}

static bool event_of(const json_t *e, nvmlEventData_t *ev)
{
	unsigned dev = num(e, "device", 0);
	const char *type = str(e, "type");

	if (!json_is_object(e) || dev >= fake.nr_devs)
		return false;
	ev->device = &fake.devs[dev];
	ev->eventType = !strcmp(type, "dbe")   ? nvmlEventTypeDoubleBitEccError
			: !strcmp(type, "sbe") ? nvmlEventTypeSingleBitEccError
					       : nvmlEventTypeXidCriticalError;
	ev->eventData = num(e, "xid", 0);
	ev->gpuInstanceId = num(e, "gi", NVML_INSTANCE_ID_NONE);
	ev->computeInstanceId = num(e, "ci", NVML_INSTANCE_ID_NONE);
	return true;
}

static void load_events(void)
{
	json_t *events = json_object_get(fake.script, "events"), *e;
	size_t i;

	json_array_foreach(events, i, e) {
		if (fake.nr_events < MAX_EVENTS &&
		    event_of(e, &fake.events[fake.nr_events]))
			fake.nr_events++;
	}
}

#ifndef KERF_FAKE_NVML_MINIMAL
/* The next whole line appended to $KERF_FAKE_NVML_EVENTS as an event. */
static bool event_appended(nvmlEventData_t *ev)
{
	const char *path = getenv("KERF_FAKE_NVML_EVENTS");
	char line[512];
	bool got = false;
	FILE *f;

	if (!path || !(f = fopen(path, "r")))
		return false;
	while (!got && fseek(f, fake.events_offset, SEEK_SET) == 0 &&
	       fgets(line, sizeof(line), f) && strchr(line, '\n')) {
		json_t *e = json_loads(line, 0, NULL);

		fake.events_offset = ftell(f);
		if (json_object_get(e, "failWait"))
			fake.wait_fail = code_of(json_object_get(e, "failWait"));
		else
			got = event_of(e, ev);
		json_decref(e);
	}
	fclose(f);
	return got;
}
#endif

nvmlReturn_t nvmlInit_v2(void)
{
	if (fake.refs) {
		fake.refs++;
		return NVML_SUCCESS;
	}
	const char *path = getenv("KERF_FAKE_NVML_SCRIPT");
	json_error_t jerr;
	json_t *script = path ? json_load_file(path, 0, &jerr) : json_object();
	if (!script) {
		fprintf(stderr, "fake NVML: cannot read script '%s': %s\n", path, jerr.text);
		return NVML_ERROR_UNKNOWN;
	}
	json_t *init = json_object_get(script, "init");
	if (init) {
		nvmlReturn_t rc = code_of(init);
		json_decref(script);
		return rc;
	}
	memset(&fake, 0, sizeof(fake));
	fake.script = script;
	json_t *devs = json_object_get(script, "devices"), *d;
	size_t i;
	json_array_foreach(devs, i, d) {
		if (fake.nr_devs < MAX_DEV)
			load_device(&fake.devs[fake.nr_devs], fake.nr_devs, d), fake.nr_devs++;
	}
	load_events();
	fake.refs = 1;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
	if (!fake.refs)
		return NVML_ERROR_UNINITIALIZED;
	if (--fake.refs == 0) {
		json_decref(fake.script);
		fake.script = NULL;
	}
	return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
	return kerf_nvml_return_name(result);
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	if (!fake.refs)
		return NVML_ERROR_UNINITIALIZED;
	nvmlReturn_t inj = injected(__func__, NULL);
	return inj ? inj : copy_out(version, length, str(fake.script, "driverVersion"));
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	if (!fake.refs)
		return NVML_ERROR_UNINITIALIZED;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t inj = injected(__func__, NULL);
	if (inj)
		return inj;
	*count = fake.nr_devs;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	if (!fake.refs)
		return NVML_ERROR_UNINITIALIZED;
	if (index >= fake.nr_devs || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t inj = injected(__func__, &fake.devs[index]);
	if (inj)
		return inj;
	*device = &fake.devs[index];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	DEVICE_CALL(device);
	return copy_out(uuid, length, device->uuid);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	DEVICE_CALL(device);
	return copy_out(name, length, device->name);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	DEVICE_CALL(device);
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(pci, 0, sizeof(*pci));
	snprintf(pci->busId, sizeof(pci->busId), "%s", device->bus_id);
	pci->pciDeviceId = device->pci_device_id;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	DEVICE_CALL(device);
	if (!memory)
		return NVML_ERROR_INVALID_ARGUMENT;
	memory->total = device->mem_mib << 20;
	memory->used = device->used_mib << 20;
	memory->free = memory->total > memory->used ? memory->total - memory->used : 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *current, unsigned int *pending)
{
	DEVICE_CALL(device);
	if (!current || !pending)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (device->mig_current == ~0u)
		return NVML_ERROR_NOT_SUPPORTED;
	*current = device->mig_current;
	*pending = device->mig_pending;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned int profile,
						 nvmlGpuInstanceProfileInfo_t *info)
{
	DEVICE_CALL(device);
	if (profile >= NVML_GPU_INSTANCE_PROFILE_COUNT || !info)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (device->mig_current == ~0u || !gi_profiles[profile].count)
		return NVML_ERROR_NOT_SUPPORTED;
	memset(info, 0, sizeof(*info));
	info->id = gi_profiles[profile].id;
	info->sliceCount = gi_profiles[profile].slices;
	info->instanceCount = gi_profiles[profile].count;
	info->memorySizeMB = gi_profiles[profile].mem_mib;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profileId,
				       nvmlGpuInstance_t *instances, unsigned int *count)
{
	DEVICE_CALL(device);
	if (!instances || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (device->mig_current != NVML_DEVICE_MIG_ENABLE)
		return NVML_ERROR_NOT_SUPPORTED;
	unsigned n = 0;
	for (unsigned i = 0; i < device->nr_gis; i++) {
		if (device->gis[i].profile_id != profileId)
			continue;
		if (n == *count)
			return NVML_ERROR_INSUFFICIENT_SIZE;
		instances[n++] = &device->gis[i];
	}
	*count = n;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gi, nvmlGpuInstanceInfo_t *info)
{
	if (!gi || !info)
		return NVML_ERROR_INVALID_ARGUMENT;
	DEVICE_CALL(gi->dev);
	info->device = gi->dev;
	info->id = gi->id;
	info->profileId = gi->profile_id;
	info->placement.start = gi->start;
	info->placement.size = gi->size;
	return NVML_SUCCESS;
}

/* Compute slices of a GI: those of its profile. */
static unsigned gi_slices(const struct nvmlGpuInstance_st *gi)
{
	for (unsigned p = 0; p < NVML_GPU_INSTANCE_PROFILE_COUNT; p++)
		if (gi_profiles[p].count && gi_profiles[p].id == gi->profile_id)
			return gi_profiles[p].slices;
	return 0;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gi, unsigned int profile,
							  unsigned int engProfile,
							  nvmlComputeInstanceProfileInfo_t *info)
{
	if (!gi || !info)
		return NVML_ERROR_INVALID_ARGUMENT;
	DEVICE_CALL(gi->dev);
	if (profile >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT ||
	    engProfile != NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		return NVML_ERROR_INVALID_ARGUMENT;
	unsigned slices = gi_slices(gi);
	if (profile >= 7 || ci_slices[profile] > slices)
		return NVML_ERROR_NOT_SUPPORTED;
	memset(info, 0, sizeof(*info));
	info->id = profile;
	info->sliceCount = ci_slices[profile];
	info->instanceCount = slices / ci_slices[profile];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gi, unsigned int profileId,
						nvmlComputeInstance_t *instances, unsigned int *count)
{
	if (!gi || !instances || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	DEVICE_CALL(gi->dev);
	unsigned n = 0;
	for (unsigned i = 0; i < gi->nr_cis; i++) {
		if (gi->cis[i].profile_id != profileId)
			continue;
		if (n == *count)
			return NVML_ERROR_INSUFFICIENT_SIZE;
		instances[n++] = &gi->cis[i];
	}
	*count = n;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t ci, nvmlComputeInstanceInfo_t *info)
{
	if (!ci || !info)
		return NVML_ERROR_INVALID_ARGUMENT;
	DEVICE_CALL(ci->gi->dev);
	info->device = ci->gi->dev;
	info->gpuInstance = ci->gi;
	info->id = ci->id;
	info->profileId = ci->profile_id;
	info->placement.start = ci->start;
	info->placement.size = ci->size;
	return NVML_SUCCESS;
}

#ifndef KERF_FAKE_NVML_MINIMAL
nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t device, unsigned int *node)
{
	DEVICE_CALL(device);
	if (!node)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!device->has_numa)
		return NVML_ERROR_NOT_SUPPORTED;
	*node = device->numa_node;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
				      nvmlEnableState_t *active)
{
	DEVICE_CALL(device);
	if (!active || link >= MAX_LINKS)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!device->nr_links)
		return NVML_ERROR_NOT_SUPPORTED;
	if (link >= device->nr_links)
		return NVML_ERROR_INVALID_ARGUMENT;
	*active = device->links[link][0] ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
						 nvmlPciInfo_t *pci)
{
	DEVICE_CALL(device);
	if (!pci || link >= device->nr_links)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(pci, 0, sizeof(*pci));
	snprintf(pci->busId, sizeof(pci->busId), "%s", device->links[link]);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *util)
{
	DEVICE_CALL(device);
	if (!util)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (device->mig_current == NVML_DEVICE_MIG_ENABLE)
		return NVML_ERROR_NOT_SUPPORTED;
	util->gpu = device->util;
	util->memory = 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
	DEVICE_CALL(device);
	if (!power)
		return NVML_ERROR_INVALID_ARGUMENT;
	*power = device->power_mw;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
	if (!fake.refs)
		return NVML_ERROR_UNINITIALIZED;
	if (!set)
		return NVML_ERROR_INVALID_ARGUMENT;
	*set = &fake.set;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long types,
				      nvmlEventSet_t set)
{
	DEVICE_CALL(device);
	return set == &fake.set && types ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeout_ms)
{
	if (!fake.refs)
		return NVML_ERROR_UNINITIALIZED;
	if (set != &fake.set || !data)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t inj = injected(__func__, NULL);
	if (inj)
		return inj;
	if (fake.next_event < fake.nr_events) {
		*data = fake.events[fake.next_event++];
		return NVML_SUCCESS;
	}
	if (!getenv("KERF_FAKE_NVML_EVENTS"))
		return NVML_ERROR_TIMEOUT;   /* no sleep: a timeout at once */
	for (unsigned waited_ms = 0;; waited_ms += 10) {
		if (event_appended(data))
			return NVML_SUCCESS;
		if (fake.wait_fail)
			return fake.wait_fail;
		if (waited_ms >= timeout_ms)
			return NVML_ERROR_TIMEOUT;
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
	return set == &fake.set ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}
/*
 * NVML's protocol: *count too small (0 with infos NULL to ask) gives
 * INSUFFICIENT_SIZE and the number needed, or SUCCESS when there is none.
 * With driverVersion 535.x, x < 104, the elements are 32 bytes, as those
 * drivers wrote them (a trailing usedGpuCcProtectedMemory).
 */
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
						     nvmlProcessInfo_t *infos)
{
	DEVICE_CALL(device);
	unsigned n = (unsigned)json_array_size(device->processes);
	if (!count || (*count && !infos))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (*count < n) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	unsigned minor;
	size_t size = sscanf(str(fake.script, "driverVersion"), "535.%u", &minor) == 1 &&
		      minor < 104 ? 32 : sizeof(*infos);
	for (unsigned i = 0; i < n; i++) {
		const json_t *p = json_array_get(device->processes, i);
		const json_t *mib = json_object_get(p, "usedMiB");
		nvmlProcessInfo_t *e = (nvmlProcessInfo_t *)((char *)infos + i * size);

		memset(e, 0, size);
		e->pid = num(p, "pid", 0);
		e->usedGpuMemory = json_is_integer(mib) ?
			(unsigned long long)json_integer_value(mib) << 20 : NVML_VALUE_NOT_AVAILABLE;
		e->gpuInstanceId = num(p, "gi", NVML_INSTANCE_ID_NONE);
		e->computeInstanceId = num(p, "ci", NVML_INSTANCE_ID_NONE);
	}
	*count = n;
	return NVML_SUCCESS;
}
#endif /* KERF_FAKE_NVML_MINIMAL */

/* The MIG writes (create, destroy, mode), in their own file; not in the
 * minimal build, so that it also shows MIG actuation turned off. */
#ifndef KERF_FAKE_NVML_MINIMAL
#include "fake_nvml_mig.c"
/* GPM ("gpm" of a device), also left out of the minimal build. */
#include "fake_nvml_gpm.c"
#endif
