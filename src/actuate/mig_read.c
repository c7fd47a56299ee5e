/*
 * mig_read: the node's MIG GPUs read from NVML (through the inventory) as
 * the core's struct kerf_mig_node, with the NVML ids the steps need and
 * the instances in use marked (mig_actuate.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actuate/mig_actuate.h"
#include "nvml/inventory.h"

enum { MAX_PROCESSES = 256 };

static void skip(struct kerf_mig_gpus *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void skip(struct kerf_mig_gpus *out, const char *fmt, ...)
{
	size_t used = strlen(out->skipped);
	va_list ap;

	if (used && used + 2 < sizeof(out->skipped))
		used += (size_t)snprintf(out->skipped + used, sizeof(out->skipped) - used, "; ");
	if (used >= sizeof(out->skipped))
		return;
	va_start(ap, fmt);
	vsnprintf(out->skipped + used, sizeof(out->skipped) - used, fmt, ap);
	va_end(ap);
}

/*
 * Drivers 535.43.02 to 535.86.05 took 32-byte elements in
 * nvmlDeviceGetComputeRunningProcesses_v3 (gpu-nvml-api notes, section 2).
 */
static size_t process_stride(const struct kerf_nvml *nv)
{
	char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = "";
	unsigned major = 0, minor = 0;

	if (nv->driver_version && nv->driver_version(version, sizeof(version)) == NVML_SUCCESS &&
	    sscanf(version, "%u.%u", &major, &minor) == 2 && major == 535 && minor >= 43 &&
	    minor < 104)
		return sizeof(nvmlProcessInfo535_t);
	return sizeof(nvmlProcessInfo_t);
}

/*
 * The GPU instance ids with processes on GPU index into has[] (by GI id
 * below 64); NVML's code when they cannot be read.
 */
static nvmlReturn_t processes(const struct kerf_nvml *nv, uint32_t index, uint64_t *has)
{
	size_t stride = process_stride(nv);
	unsigned char *buf = calloc(MAX_PROCESSES, sizeof(nvmlProcessInfo535_t));
	unsigned count = MAX_PROCESSES;
	nvmlDevice_t dev;
	nvmlReturn_t rc;

	*has = 0;
	if (!buf)
		return NVML_ERROR_MEMORY;
	rc = nv->handle_by_index_v2(index, &dev);
	if (rc == NVML_SUCCESS)
		rc = nv->running_processes_v3(dev, &count, (nvmlProcessInfo_t *)(void *)buf);
	for (unsigned i = 0; rc == NVML_SUCCESS && i < count && i < MAX_PROCESSES; i++) {
		nvmlProcessInfo_t p;
		memcpy(&p, buf + i * stride, sizeof(p));
		if (p.gpuInstanceId < 64)
			*has |= 1ull << p.gpuInstanceId;
	}
	free(buf);
	return rc;
}

/* The GPU g of the inventory as node GPU n of out; false when skipped. */
static bool take_gpu(struct kerf_mig_gpus *out, const struct kerf_gpu *g)
{
	struct kerf_mig_node *node = &out->node;
	const struct kerf_mig_model *m = g->model ? kerf_mig_model_find(g->model) : NULL;

	if (g->lost) {
		skip(out, "gpu %u: lost", g->index);
		return false;
	}
	if (g->mig_current != NVML_DEVICE_MIG_ENABLE) {
		skip(out, "gpu %u: MIG %s", g->index,
		     g->mig_current == KERF_GPU_MIG_UNSUPPORTED ? "not supported" : "off");
		return false;
	}
	for (unsigned e = 0; e < g->nr_errors; e++)
		if (!strncmp(g->errors[e].field, "mig.", 4)) {
			skip(out, "gpu %u: its MIG layout could not be read (%s: %s)", g->index,
			     g->errors[e].field, kerf_nvml_return_name(g->errors[e].nvml_rc));
			return false;
		}
	if (!m) {
		skip(out, "gpu %u: model '%s' has no MIG table in kerf", g->index, g->name);
		return false;
	}
	if (node->model && node->model != m) {
		skip(out, "gpu %u: model %s, not the node's first MIG model %s", g->index,
		     m->name, node->model->name);
		return false;
	}
	if (node->nr_gpus == KERF_MIG_MAX_GPUS) {
		skip(out, "gpu %u: more than %d MIG GPUs", g->index, KERF_MIG_MAX_GPUS);
		return false;
	}
	unsigned n = node->nr_gpus;
	struct kerf_mig_layout l = { .nr = 0 };
	for (unsigned k = 0; k < g->nr_gis && k < KERF_MIG_MAX_INSTANCES; k++) {
		const struct kerf_gpu_gi *gi = &g->gis[k];
		int p = gi->profile[0] ? kerf_mig_profile_find(m, gi->profile) : -1;
		if (p < 0) {
			skip(out, "gpu %u: GPU instance %u has profile id %u, unknown to kerf",
			     g->index, gi->id, gi->profile_id);
			return false;
		}
		l.inst[l.nr] = (struct kerf_mig_instance){ .profile = (uint8_t)p,
							   .start = (uint8_t)gi->start };
		out->gi_id[n][l.nr] = gi->id;
		out->nr_cis[n][l.nr] = (uint8_t)gi->nr_cis;
		for (unsigned c = 0; c < gi->nr_cis && c < KERF_MIG_MAX_INSTANCES; c++)
			out->ci_id[n][l.nr][c] = gi->cis[c].id;
		l.nr++;
	}
	node->model = m;
	node->gpus[n] = l;
	out->nvml_index[n] = g->index;
	node->nr_gpus++;
	return true;
}

/* Mark in use: named by a pod, or with processes per NVML. */
static int mark_in_use(struct kerf_mig_gpus *out, const struct kerf_nvml *nv,
		       const struct kerf_mig_ref *in_use, size_t nr_in_use, struct kerf_err *err)
{
	const struct kerf_mig_model *m = out->node.model;

	for (size_t r = 0; r < nr_in_use; r++) {
		int n = kerf_mig_gpus_find(out, in_use[r].gpu);
		int p = kerf_mig_profile_find(m, in_use[r].profile);
		if (p < 0)
			return kerf_err_set(err, -KERF_EINVAL,
					    "in use: '%u:%s@%u': %s has no profile '%s'",
					    in_use[r].gpu, in_use[r].profile, in_use[r].start,
					    m->name, in_use[r].profile);
		for (unsigned i = 0; n >= 0 && i < out->node.gpus[n].nr; i++) {
			struct kerf_mig_instance *in = &out->node.gpus[n].inst[i];
			if (in->profile == p && in->start == in_use[r].start)
				in->in_use = true;
		}
	}
	for (unsigned n = 0; n < out->node.nr_gpus; n++) {
		struct kerf_mig_layout *l = &out->node.gpus[n];
		uint64_t has = 0;
		nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
		if (nv->running_processes_v3)
			rc = processes(nv, out->nvml_index[n], &has);
		if (rc != NVML_SUCCESS) {
			skip(out, "gpu %u: processes unknown (%s), every instance counts as in use",
			     out->nvml_index[n], kerf_nvml_return_name(rc));
			has = ~0ull;
		}
		for (unsigned i = 0; i < l->nr; i++)
			if (out->gi_id[n][i] >= 64 ? has == ~0ull : (has >> out->gi_id[n][i]) & 1u)
				l->inst[i].in_use = true;
	}
	return 0;
}

int kerf_mig_gpus_find(const struct kerf_mig_gpus *g, uint32_t gpu)
{
	for (unsigned n = 0; n < g->node.nr_gpus; n++)
		if (g->nvml_index[n] == gpu)
			return (int)n;
	return -1;
}

int kerf_mig_gpus_instance(const struct kerf_mig_gpus *g, unsigned n, unsigned profile,
			   unsigned start)
{
	const struct kerf_mig_layout *l = &g->node.gpus[n];

	for (unsigned i = 0; i < l->nr; i++)
		if (l->inst[i].profile == profile && l->inst[i].start == start)
			return (int)i;
	return -1;
}

int kerf_mig_gpus_read(struct kerf_mig_gpus *out, const struct kerf_nvml *nv,
		       const struct kerf_mig_ref *in_use, size_t nr_in_use,
		       struct kerf_err *err)
{
	struct kerf_gpu_inventory inv = { 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	if (!kerf_nvml_has(nv, KERF_NVML_F_MIG))
		return kerf_err_set(err, -KERF_ENOTFOUND, "NVML cannot list MIG instances: %s",
				    nv->off);
	rc = kerf_gpu_inventory_read(&inv, nv, err);
	for (unsigned i = 0; rc == 0 && i < inv.nr_gpus; i++)
		take_gpu(out, &inv.gpus[i]);
	kerf_gpu_inventory_release(&inv);
	if (rc < 0)
		return rc;
	if (!out->node.nr_gpus)
		return kerf_err_set(err, -KERF_ENOTFOUND, "no GPU kerf can change MIG on: %s",
				    out->skipped[0] ? out->skipped : "no GPUs");
	return mark_in_use(out, nv, in_use, nr_in_use, err);
}
