/*
 * inventory: read the node's GPUs through NVML (inventory.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/mig/geometry.h"
#include "nvml/inventory_gpu.h"

bool kerf_gpu_note(struct kerf_gpu *g, const char *field, nvmlReturn_t rc)
{
	if (g->nr_errors < KERF_GPU_MAX_ERRORS) {
		struct kerf_gpu_field_error *e = &g->errors[g->nr_errors++];
		snprintf(e->field, sizeof(e->field), "%s", field);
		e->nvml_rc = (int)rc;
	} else {
		g->nr_errors_dropped++;
	}
	if (rc == NVML_ERROR_GPU_IS_LOST) {
		g->lost = true;
		return true;
	}
	return false;
}

/* kerf's model: by PCI device id first, then by NVML's name. */
static const char *model_of(const struct kerf_gpu *g)
{
	size_t nr;
	const struct kerf_mig_model *models = kerf_mig_models(&nr);

	for (size_t i = 0; i < nr; i++)
		for (size_t k = 0; k < KERF_MIG_MAX_PCI_IDS && models[i].pci_ids[k]; k++)
			if (g->pci_device_id && models[i].pci_ids[k] == g->pci_device_id)
				return models[i].name;
	const struct kerf_mig_model *m = g->name[0] ? kerf_mig_model_find(g->name) : NULL;
	return m ? m->name : NULL;
}

static void read_links(struct kerf_gpu *g, const struct kerf_nvml *nv, nvmlDevice_t dev)
{
	for (unsigned link = 0; link < KERF_GPU_MAX_LINKS; link++) {
		nvmlEnableState_t active = NVML_FEATURE_DISABLED;
		nvmlReturn_t rc = nv->nvlink_state(dev, link, &active);
		/* Links are numbered from 0 until the first link that is not there. */
		if (rc == NVML_ERROR_INVALID_ARGUMENT || rc == NVML_ERROR_NOT_SUPPORTED)
			return;
		if (rc != NVML_SUCCESS) {
			if (kerf_gpu_note(g, "nvlink.state", rc))
				return;
			continue;
		}
		if (active != NVML_FEATURE_ENABLED)
			continue;
		nvmlPciInfo_t pci;
		memset(&pci, 0, sizeof(pci));
		rc = nv->nvlink_remote_pci_v2(dev, link, &pci);
		if (rc != NVML_SUCCESS) {
			if (kerf_gpu_note(g, "nvlink.remote_pci", rc))
				return;
			continue;
		}
		struct kerf_gpu_link *l = &g->links[g->nr_links++];
		l->link = link;
		l->remote_gpu = -1;
		snprintf(l->remote_bus_id, sizeof(l->remote_bus_id), "%.*s",
			 (int)sizeof(pci.busId), pci.busId);
	}
}

static void read_gpu(struct kerf_gpu *g, const struct kerf_nvml *nv, unsigned index)
{
	nvmlDevice_t dev = NULL;
	nvmlReturn_t rc;

	g->index = index;
	g->numa_node = -1;
	g->mig_current = g->mig_pending = KERF_GPU_MIG_UNSUPPORTED;
	g->nvlink_domain = -1;

	rc = nv->handle_by_index_v2(index, &dev);
	if (rc != NVML_SUCCESS) {
		kerf_gpu_note(g, "handle", rc);
		return;
	}
	rc = nv->device_uuid(dev, g->uuid, sizeof(g->uuid));
	if (rc != NVML_SUCCESS && kerf_gpu_note(g, "uuid", rc))
		return;
	rc = nv->device_name(dev, g->name, sizeof(g->name));
	if (rc != NVML_SUCCESS && kerf_gpu_note(g, "name", rc))
		return;

	nvmlPciInfo_t pci;
	memset(&pci, 0, sizeof(pci));
	rc = nv->pci_info_v3(dev, &pci);
	if (rc == NVML_SUCCESS) {
		snprintf(g->bus_id, sizeof(g->bus_id), "%.*s", (int)sizeof(pci.busId), pci.busId);
		g->pci_device_id = pci.pciDeviceId;
	} else if (kerf_gpu_note(g, "pci", rc)) {
		return;
	}
	g->model = model_of(g);

	nvmlMemory_t mem;
	rc = nv->memory_info(dev, &mem);
	if (rc == NVML_SUCCESS)
		g->mem_mib = mem.total >> 20;
	else if (kerf_gpu_note(g, "memory", rc))
		return;

	if (nv->numa_node_id) {
		unsigned node = 0;
		rc = nv->numa_node_id(dev, &node);
		/* NOT_SUPPORTED: a discrete GPU, not a NUMA node of its own. */
		if (rc == NVML_SUCCESS)
			g->numa_node = (int)node;
		else if (rc != NVML_ERROR_NOT_SUPPORTED && kerf_gpu_note(g, "numa_node", rc))
			return;
	}
	if (kerf_nvml_has(nv, KERF_NVML_F_MIG)) {
		kerf_gpu_read_mig(g, nv, dev);
		if (g->lost)
			return;
	}
	if (kerf_nvml_has(nv, KERF_NVML_F_NVLINK))
		read_links(g, nv, dev);
}

/* Union-find over GPUs [0, n) and NVSwitches [n, ...): a node per bus id. */
static unsigned find(unsigned *parent, unsigned x)
{
	while (parent[x] != x)
		x = parent[x] = parent[parent[x]];
	return x;
}

static void join(unsigned *parent, unsigned a, unsigned b)
{
	a = find(parent, a);
	b = find(parent, b);
	if (a < b)
		parent[b] = a;
	else if (b < a)
		parent[a] = b;
}

static int domains(struct kerf_gpu_inventory *inv)
{
	unsigned n = inv->nr_gpus, nr_links = 0;

	for (unsigned i = 0; i < n; i++)
		nr_links += inv->gpus[i].nr_links;
	if (!nr_links)
		return 0;
	/* Each link's remote end that is not a GPU here is a switch node. */
	unsigned *parent = calloc(n + nr_links, sizeof(*parent));
	const char **switch_ids = calloc(nr_links + 1, sizeof(*switch_ids));
	if (!parent || !switch_ids) {
		free(parent);
		free(switch_ids);
		return -KERF_ENOMEM;
	}
	unsigned nr_switches = 0;
	for (unsigned i = 0; i < n + nr_links; i++)
		parent[i] = i;
	for (unsigned i = 0; i < n; i++) {
		struct kerf_gpu *g = &inv->gpus[i];
		for (unsigned k = 0; k < g->nr_links; k++) {
			struct kerf_gpu_link *l = &g->links[k];
			for (unsigned j = 0; j < n; j++)
				if (inv->gpus[j].bus_id[0] &&
				    !strcasecmp(inv->gpus[j].bus_id, l->remote_bus_id))
					l->remote_gpu = (int)j;
			if (l->remote_gpu >= 0) {
				join(parent, i, (unsigned)l->remote_gpu);
				continue;
			}
			unsigned s = 0;
			while (s < nr_switches && strcasecmp(switch_ids[s], l->remote_bus_id))
				s++;
			if (s == nr_switches)
				switch_ids[nr_switches++] = l->remote_bus_id;
			join(parent, i, n + s);
		}
	}
	/* A domain is two or more GPUs with one root (the lowest GPU index). */
	for (unsigned i = 0; i < n; i++) {
		unsigned root = find(parent, i), size = 0;
		for (unsigned j = 0; j < n; j++)
			size += find(parent, j) == root;
		if (size >= 2) {
			inv->gpus[i].nvlink_domain = (int)root;
			inv->nr_domains += root == i;
		}
	}
	free(parent);
	free(switch_ids);
	return 0;
}

static void copy_features(struct kerf_gpu_inventory *inv, const struct kerf_nvml *nv)
{
	inv->features = nv->features;
	snprintf(inv->features_off, sizeof(inv->features_off), "%s", nv->off);
}

int kerf_gpu_inventory_read(struct kerf_gpu_inventory *inv, const struct kerf_nvml *nv,
			    struct kerf_err *err)
{
	unsigned count = 0;

	memset(inv, 0, sizeof(*inv));
	inv->state = KERF_GPU_INVENTORY_READ;
	copy_features(inv, nv);
	if (nv->driver_version) {
		nvmlReturn_t rc = nv->driver_version(inv->driver_version,
						     sizeof(inv->driver_version));
		if (rc != NVML_SUCCESS)
			inv->driver_version[0] = '\0';
	}
	nvmlReturn_t rc = nv->device_count_v2(&count);
	if (rc != NVML_SUCCESS) {
		int ret = kerf_err_set(err, -KERF_EIO, "nvmlDeviceGetCount_v2 failed: %s (%d)",
				       kerf_nvml_return_name(rc), (int)rc);
		kerf_gpu_inventory_unknown(inv, err ? err->msg : "nvmlDeviceGetCount_v2 failed");
		copy_features(inv, nv);
		return ret;
	}
	if (count > KERF_GPU_MAX_GPUS)
		count = KERF_GPU_MAX_GPUS;
	if (count) {
		inv->gpus = calloc(count, sizeof(*inv->gpus));
		if (!inv->gpus)
			return kerf_err_set(err, -KERF_ENOMEM, "no memory for %u GPUs", count);
	}
	inv->nr_gpus = count;
	for (unsigned i = 0; i < count; i++)
		read_gpu(&inv->gpus[i], nv, i);
	int ret = domains(inv);
	if (ret < 0)
		return kerf_err_set(err, ret, "no memory for the NVLink domains");
	return 0;
}

void kerf_gpu_inventory_unknown(struct kerf_gpu_inventory *inv, const char *reason)
{
	free(inv->gpus);
	memset(inv, 0, sizeof(*inv));
	inv->state = KERF_GPU_INVENTORY_UNKNOWN;
	snprintf(inv->reason, sizeof(inv->reason), "%s", reason ? reason : "");
}

void kerf_gpu_inventory_release(struct kerf_gpu_inventory *inv)
{
	free(inv->gpus);
	inv->gpus = NULL;
	inv->nr_gpus = 0;
}
