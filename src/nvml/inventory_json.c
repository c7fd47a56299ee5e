/*
 * inventory_json: the inventory as JSON (inventory.h).
 *
 * {"state": "Read"|"Unknown", "reason"?, "driverVersion", "features":
 *  [...], "featuresOff": "...", "nvlinkDomains": n, "gpus": [{"index",
 *  "uuid", "name", "model"|null, "pciBusId", "pciDeviceId": "0x233010DE",
 *  "memoryMiB", "numaNode"|null, "mig": {"current", "pending",
 *  "gpuInstances": [{"id", "profileId", "profile", "slices", "memoryMiB",
 *  "start", "size", "computeInstances": [{"id", "profileId", "slices",
 *  "start", "size"}]}]} | null, "nvlinks": [{"link", "remotePciBusId",
 *  "remoteGpu"|null}], "nvlinkDomain"|null, "lost", "errors": [{"field",
 *  "nvml", "code"}]}]}
 */
#include <stdio.h>

#include "nvml/inventory.h"

/* By bit (enum kerf_nvml_features). */
static const char *const feature_names[] = {
	"driver-version", "numa", "mig", "nvlink", "events", "telemetry", "mig-actuation",
	"processes", "gpm",
};

/* json_object_set_new that remembers a failure instead of returning it. */
static void put(json_t *o, const char *key, json_t *v, int *bad)
{
	if (!v || json_object_set_new(o, key, v))
		*bad = 1;
}

static void append(json_t *a, json_t *v, int *bad)
{
	if (!v || json_array_append_new(a, v))
		*bad = 1;
}

static json_t *int_or_null(long long v, bool have)
{
	return have ? json_integer(v) : json_null();
}

static json_t *gi_json(const struct kerf_gpu_gi *gi, int *bad)
{
	json_t *o = json_object(), *cis = json_array();

	put(o, "id", json_integer(gi->id), bad);
	put(o, "profileId", json_integer(gi->profile_id), bad);
	put(o, "profile", gi->profile[0] ? json_string(gi->profile) : json_null(), bad);
	put(o, "slices", json_integer(gi->slices), bad);
	put(o, "memoryMiB", json_integer((json_int_t)gi->mem_mib), bad);
	put(o, "start", json_integer(gi->start), bad);
	put(o, "size", json_integer(gi->size), bad);
	for (unsigned k = 0; cis && k < gi->nr_cis; k++) {
		const struct kerf_gpu_ci *c = &gi->cis[k];
		json_t *co = json_object();
		put(co, "id", json_integer(c->id), bad);
		put(co, "profileId", json_integer(c->profile_id), bad);
		put(co, "slices", json_integer(c->slices), bad);
		put(co, "start", json_integer(c->start), bad);
		put(co, "size", json_integer(c->size), bad);
		append(cis, co, bad);
	}
	put(o, "computeInstances", cis, bad);
	return o;
}

static json_t *gpu_json(const struct kerf_gpu *g, int *bad)
{
	json_t *o = json_object();
	char pci_id[16];

	if (!o) {
		*bad = 1;
		return NULL;
	}
	snprintf(pci_id, sizeof(pci_id), "0x%08X", g->pci_device_id);
	put(o, "index", json_integer(g->index), bad);
	put(o, "uuid", json_string(g->uuid), bad);
	put(o, "name", json_string(g->name), bad);
	put(o, "model", g->model ? json_string(g->model) : json_null(), bad);
	put(o, "pciBusId", json_string(g->bus_id), bad);
	put(o, "pciDeviceId", json_string(pci_id), bad);
	put(o, "memoryMiB", json_integer((json_int_t)g->mem_mib), bad);
	put(o, "numaNode", int_or_null(g->numa_node, g->numa_node >= 0), bad);
	if (g->mig_current == KERF_GPU_MIG_UNSUPPORTED) {
		put(o, "mig", json_null(), bad);
	} else {
		json_t *mig = json_object(), *gis = json_array();
		put(mig, "current", json_string(g->mig_current ? "Enabled" : "Disabled"), bad);
		put(mig, "pending", json_string(g->mig_pending ? "Enabled" : "Disabled"), bad);
		for (unsigned k = 0; gis && k < g->nr_gis; k++)
			append(gis, gi_json(&g->gis[k], bad), bad);
		put(mig, "gpuInstances", gis, bad);
		put(o, "mig", mig, bad);
	}
	json_t *links = json_array();
	for (unsigned k = 0; links && k < g->nr_links; k++) {
		const struct kerf_gpu_link *l = &g->links[k];
		json_t *lo = json_object();
		put(lo, "link", json_integer(l->link), bad);
		put(lo, "remotePciBusId", json_string(l->remote_bus_id), bad);
		put(lo, "remoteGpu", int_or_null(l->remote_gpu, l->remote_gpu >= 0), bad);
		append(links, lo, bad);
	}
	put(o, "nvlinks", links, bad);
	put(o, "nvlinkDomain", int_or_null(g->nvlink_domain, g->nvlink_domain >= 0), bad);
	put(o, "lost", json_boolean(g->lost), bad);
	json_t *errors = json_array();
	for (unsigned k = 0; errors && k < g->nr_errors; k++) {
		json_t *eo = json_object();
		put(eo, "field", json_string(g->errors[k].field), bad);
		put(eo, "nvml", json_string(kerf_nvml_return_name(g->errors[k].nvml_rc)), bad);
		put(eo, "code", json_integer(g->errors[k].nvml_rc), bad);
		append(errors, eo, bad);
	}
	put(o, "errors", errors, bad);
	if (g->nr_errors_dropped)
		put(o, "errorsDropped", json_integer(g->nr_errors_dropped), bad);
	return o;
}

json_t *kerf_gpu_inventory_json(const struct kerf_gpu_inventory *inv)
{
	json_t *o = json_object(), *features = json_array(), *gpus = json_array();
	int bad = 0;

	if (!o || !features || !gpus) {
		json_decref(o);
		json_decref(features);
		json_decref(gpus);
		return NULL;
	}
	bool known = inv->state == KERF_GPU_INVENTORY_READ;
	put(o, "state", json_string(known ? "Read" : "Unknown"), &bad);
	if (!known)
		put(o, "reason", json_string(inv->reason), &bad);
	put(o, "driverVersion", json_string(inv->driver_version), &bad);
	for (unsigned b = 0; b < sizeof(feature_names) / sizeof(feature_names[0]); b++)
		if (inv->features & (1u << b))
			append(features, json_string(feature_names[b]), &bad);
	put(o, "features", features, &bad);
	put(o, "featuresOff", json_string(inv->features_off), &bad);
	put(o, "nvlinkDomains", json_integer(inv->nr_domains), &bad);
	for (unsigned i = 0; i < inv->nr_gpus; i++)
		append(gpus, gpu_json(&inv->gpus[i], &bad), &bad);
	put(o, "gpus", gpus, &bad);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}
