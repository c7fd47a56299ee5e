/*
 * telemetry: one sample of each GPU's utilisation, memory and power read
 * through kerf's NVML ops table, and the Prometheus text of it with the
 * DCGM exporter's metric names where the meaning matches
 * (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_DEV_MEM_COPY_UTIL, DCGM_FI_DEV_FB_USED,
 * DCGM_FI_DEV_FB_FREE, DCGM_FI_DEV_POWER_USAGE) plus kerf_agent_* series.
 * Labels gpu, uuid, model_name and hostname: dcgm-exporter's meaning, in
 * the snake_case promtool's lint asks for (dcgm-exporter writes UUID,
 * modelName, Hostname; a scrape config can relabel for its dashboards).  A value NVML refused is left out
 * (and counted), never reported as 0.
 */
#ifndef KERF_NVML_TELEMETRY_H
#define KERF_NVML_TELEMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "nvml/inventory.h"
#include "nvml/nvml_load.h"

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

#endif
