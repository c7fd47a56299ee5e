/*
 * telemetry: one sample of each GPU's utilisation, memory and power read
 * through kerf's NVML ops table, and the Prometheus text of it with the
 * DCGM exporter's metric names where the meaning matches
 * (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_DEV_MEM_COPY_UTIL, DCGM_FI_DEV_FB_USED,
 * DCGM_FI_DEV_FB_FREE, DCGM_FI_DEV_POWER_USAGE) plus kerf_agent_* series.
 * Labels gpu, uuid, model_name and hostname: dcgm-exporter's meaning, in
 * the snake_case promtool's lint asks for (dcgm-exporter writes UUID,
 * modelName, Hostname; a scrape config can relabel for its dashboards).  A value NVML refused is left out
 * (and counted), never reported as 0.  Per-process GPU memory by pod and
 * tenant (kerf_gpu_process_memory_used_bytes,
 * kerf_tenant_gpu_memory_used_bytes) comes from process_map.h.
 */
#ifndef KERF_NVML_TELEMETRY_H
#define KERF_NVML_TELEMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "nvml/inventory.h"
#include "nvml/nvml_load.h"
#include "nvml/process_map.h"

struct kerf_gpu_sample {
	bool has_util, has_mem, has_power;
	uint32_t util_gpu_pct, util_mem_pct;
	uint64_t fb_used_mib, fb_free_mib;
	double power_w;
	uint32_t errors;                 /* NVML calls refused for this GPU */
};

/*
 * Sample every GPU of inv (read before through nv) into s[inv->nr_gpus].
 * A lost GPU (or an unknown inventory) gives nothing.
 */
void kerf_gpu_sample_read(const struct kerf_nvml *nv,
			  const struct kerf_gpu_inventory *inv,
			  struct kerf_gpu_sample *s);

/* The samples as Prometheus text (0 or kerf_buf's error). */
int kerf_gpu_metrics_text(const struct kerf_gpu_inventory *inv,
			  const struct kerf_gpu_sample *s, const char *hostname,
			  struct kerf_buf *out)
	__attribute__((warn_unused_result));

/* {gpu="0",uuid="...",model_name="...",hostname="..."}: the labels of a GPU's series. */
int kerf_gpu_prom_labels(struct kerf_buf *b, const struct kerf_gpu *g, const char *host)
	__attribute__((warn_unused_result));

/*
 * The per-process GPU memory of procs (process_map.h) as Prometheus text:
 *   kerf_gpu_process_memory_used_bytes{gpu,uuid,pod,namespace,tenant}:
 *     the sum of a pod's processes on a GPU (a label set names a pod, not
 *     a process).  pod is the pod's name when the agent's table (pods,
 *     may be NULL) knows its UID, else the UID, with namespace and tenant
 *     empty; processes in no pod make the series with pod="".
 *   kerf_tenant_gpu_memory_used_bytes{tenant}: the sum over the pods of
 *     each tenant the table names (pods without one are not summed).
 *   kerf_agent_gpu_process_errors: procs->errors.
 * A process gone, or whose memory NVML could not tell, is left out.
 * Returns 0, -KERF_ENOMEM or kerf_buf's error.
 */
int kerf_gpu_process_metrics_text(const struct kerf_gpu_inventory *inv,
				  const struct kerf_gpu_processes *procs,
				  const struct kerf_pod_table_ops *pods, void *ctx,
				  struct kerf_buf *out)
	__attribute__((warn_unused_result));

#endif /* KERF_NVML_TELEMETRY_H */
