#include "nvml/telemetry.h"

#include <stdlib.h>
#include <string.h>

void kerf_gpu_sample_read(const struct kerf_nvml *nv,
			  const struct kerf_gpu_inventory *inv,
			  struct kerf_gpu_sample *s)
{
	for (uint32_t i = 0; i < inv->nr_gpus; i++) {
		const struct kerf_gpu *g = &inv->gpus[i];
		struct kerf_gpu_sample *x = &s[i];
		nvmlDevice_t dev;
		nvmlMemory_t mem;
		nvmlUtilization_t util;
		unsigned int mw;

		memset(x, 0, sizeof(*x));
		if (inv->state != KERF_GPU_INVENTORY_READ || g->lost ||
		    nv->handle_by_index_v2(g->index, &dev) != NVML_SUCCESS) {
			x->errors++;
			continue;
		}
		if (nv->memory_info(dev, &mem) == NVML_SUCCESS) {
			x->has_mem = true;
			x->fb_used_mib = mem.used >> 20;
			x->fb_free_mib = mem.free >> 20;
		} else {
			x->errors++;
		}
		if (nv->utilization) {
			if (nv->utilization(dev, &util) == NVML_SUCCESS) {
				x->has_util = true;
				x->util_gpu_pct = util.gpu;
				x->util_mem_pct = util.memory;
			} else {
				x->errors++;   /* MIG mode: not supported per GPU */
			}
		}
		if (nv->power_usage_mw) {
			if (nv->power_usage_mw(dev, &mw) == NVML_SUCCESS) {
				x->has_power = true;
				x->power_w = (double)mw / 1000.0;
			} else {
				x->errors++;
			}
		}
	}
}

int kerf_gpu_prom_labels(struct kerf_buf *b, const struct kerf_gpu *g, const char *host)
{
	int rc = kerf_buf_addf(b, "{gpu=\"%u\",uuid=\"", (unsigned)g->index);

	if (rc == 0)
		rc = kerf_buf_add_prom_label(b, g->uuid);
	if (rc == 0)
		rc = kerf_buf_add_str(b, "\",model_name=\"");
	if (rc == 0)
		rc = kerf_buf_add_prom_label(b, g->name);
	if (rc == 0)
		rc = kerf_buf_add_str(b, "\",hostname=\"");
	if (rc == 0)
		rc = kerf_buf_add_prom_label(b, host);
	if (rc == 0)
		rc = kerf_buf_add_str(b, "\"}");
	return rc;
}

enum { M_UTIL, M_MEMUTIL, M_USED, M_FREE, M_POWER, M_ERRORS, M_NR };

static const struct {
	const char *name, *type, *help;
} metrics[M_NR] = {
	{ "DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)." },
	{ "DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)." },
	{ "DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)." },
	{ "DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)." },
	{ "DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)." },
	{ "kerf_agent_nvml_errors", "gauge", "NVML calls refused in the last sample, per GPU." },
};

int kerf_gpu_metrics_text(const struct kerf_gpu_inventory *inv,
			  const struct kerf_gpu_sample *s, const char *hostname,
			  struct kerf_buf *out)
{
	int rc = kerf_buf_addf(out,
		"# HELP kerf_agent_nvml_up Whether NVML was loaded and read (1) or the GPUs are Unknown (0).\n"
		"# TYPE kerf_agent_nvml_up gauge\n"
		"kerf_agent_nvml_up %d\n"
		"# HELP kerf_agent_gpus GPUs NVML reports on this node.\n"
		"# TYPE kerf_agent_gpus gauge\n"
		"kerf_agent_gpus %u\n",
		inv->state == KERF_GPU_INVENTORY_READ, (unsigned)inv->nr_gpus);

	for (int m = 0; rc == 0 && m < M_NR; m++) {
		bool any = false;

		for (uint32_t i = 0; rc == 0 && i < inv->nr_gpus; i++) {
			const struct kerf_gpu_sample *x = &s[i];
			bool has = m == M_UTIL || m == M_MEMUTIL ? x->has_util
				 : m == M_USED || m == M_FREE ? x->has_mem
				 : m == M_POWER ? x->has_power : true;

			if (!has)
				continue;
			if (!any)
				rc = kerf_buf_addf(out, "# HELP %s %s\n# TYPE %s %s\n",
						   metrics[m].name, metrics[m].help,
						   metrics[m].name, metrics[m].type);
			any = true;
			if (rc == 0)
				rc = kerf_buf_add_str(out, metrics[m].name);
			if (rc == 0)
				rc = kerf_gpu_prom_labels(out, &inv->gpus[i], hostname);
			if (rc)
				break;
			switch (m) {
			case M_UTIL: rc = kerf_buf_addf(out, " %u\n", x->util_gpu_pct); break;
			case M_MEMUTIL: rc = kerf_buf_addf(out, " %u\n", x->util_mem_pct); break;
			case M_USED: rc = kerf_buf_addf(out, " %llu\n", (unsigned long long)x->fb_used_mib); break;
			case M_FREE: rc = kerf_buf_addf(out, " %llu\n", (unsigned long long)x->fb_free_mib); break;
			case M_POWER: rc = kerf_buf_addf(out, " %.3f\n", x->power_w); break;
			default: rc = kerf_buf_addf(out, " %u\n", x->errors); break;
			}
		}
	}
	return rc;
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* One {gpu, uuid, pod, namespace, tenant} series of a pod's memory on a GPU. */
static int pod_row_text(struct kerf_buf *b, const struct kerf_gpu_inventory *inv,
			const struct kerf_pod_gpu_memory *r)
{
	const char *uuid = "";
	int rc;

	for (uint32_t i = 0; i < inv->nr_gpus; i++)
		if (inv->gpus[i].index == r->gpu)
			uuid = inv->gpus[i].uuid;
	rc = kerf_buf_addf(b, "kerf_gpu_process_memory_used_bytes{gpu=\"%u\",uuid=\"",
			   (unsigned)r->gpu);
	if (rc == 0)
		rc = kerf_buf_add_prom_label(b, uuid);
	if (rc == 0)
		rc = kerf_buf_add_str(b, "\",pod=\"");
	/* a pod the table does not know keeps its UID */
	if (rc == 0)
		rc = kerf_buf_add_prom_label(b, r->known ? or_empty(r->ref.name) : r->pod_uid);
	if (rc == 0)
		rc = kerf_buf_add_str(b, "\",namespace=\"");
	if (rc == 0)
		rc = kerf_buf_add_prom_label(b, r->known ? or_empty(r->ref.ns) : "");
	if (rc == 0)
		rc = kerf_buf_add_str(b, "\",tenant=\"");
	if (rc == 0)
		rc = kerf_buf_add_prom_label(b, r->known ? or_empty(r->ref.tenant) : "");
	if (rc == 0)
		rc = kerf_buf_addf(b, "\"} %llu\n", (unsigned long long)r->used_bytes);
	return rc;
}

/* The tenants' sums, tenant by tenant in name order. */
static int tenant_text(struct kerf_buf *b, const struct kerf_pod_gpu_memory *rows, size_t nr)
{
	const char *last = NULL;
	int rc = 0;

	for (;;) {
		const char *next = NULL;
		uint64_t sum = 0;

		/* the smallest tenant name after last */
		for (size_t i = 0; i < nr; i++) {
			const char *t = rows[i].known ? rows[i].ref.tenant : NULL;

			if (t && *t && (!last || strcmp(t, last) > 0) && (!next || strcmp(t, next) < 0))
				next = t;
		}
		if (!next)
			return rc;
		for (size_t i = 0; i < nr; i++)
			if (rows[i].known && rows[i].ref.tenant && !strcmp(rows[i].ref.tenant, next))
				sum += rows[i].used_bytes;
		if (!last)
			rc = kerf_buf_add_str(b,
				"# HELP kerf_tenant_gpu_memory_used_bytes GPU memory used by the tenant's pods on this node, in bytes.\n"
				"# TYPE kerf_tenant_gpu_memory_used_bytes gauge\n");
		if (rc == 0)
			rc = kerf_buf_add_str(b, "kerf_tenant_gpu_memory_used_bytes{tenant=\"");
		if (rc == 0)
			rc = kerf_buf_add_prom_label(b, next);
		if (rc == 0)
			rc = kerf_buf_addf(b, "\"} %llu\n", (unsigned long long)sum);
		if (rc)
			return rc;
		last = next;
	}
}

int kerf_gpu_process_metrics_text(const struct kerf_gpu_inventory *inv,
				  const struct kerf_gpu_processes *procs,
				  const struct kerf_pod_table_ops *pods, void *ctx,
				  struct kerf_buf *out)
{
	struct kerf_pod_gpu_memory *rows;
	size_t nr;
	int rc = kerf_pod_gpu_memory_sum(procs, pods, ctx, &rows, &nr);

	if (rc)
		return rc;
	rc = kerf_buf_addf(out,
		"# HELP kerf_agent_gpu_process_errors GPUs whose processes NVML refused and processes whose cgroup could not be read, in the last sample.\n"
		"# TYPE kerf_agent_gpu_process_errors gauge\n"
		"kerf_agent_gpu_process_errors %u\n", (unsigned)procs->errors);
	if (rc == 0 && nr)
		rc = kerf_buf_add_str(out,
			"# HELP kerf_gpu_process_memory_used_bytes GPU memory used by the processes of a pod on a GPU, in bytes (pod empty: processes in no pod).\n"
			"# TYPE kerf_gpu_process_memory_used_bytes gauge\n");
	for (size_t i = 0; rc == 0 && i < nr; i++)
		rc = pod_row_text(out, inv, &rows[i]);
	if (rc == 0)
		rc = tenant_text(out, rows, nr);
	free(rows);
	return rc;
}
