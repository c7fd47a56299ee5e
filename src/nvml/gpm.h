/*
 * gpm: GPM telemetry (SM occupancy, SM activity, NVLink throughput) of
 * each GPU, read through kerf's NVML ops table (KERF_NVML_F_GPM).
 *
 * A GPM metric is computed by NVML from two samples of the GPU, so the
 * sampler keeps the latest sample of each GPU between calls: the first
 * call on a GPU gives no metric, each later one the rates over the time
 * since the call before (NVML wants the two at least 100 ms apart; a call
 * sooner than that gives the previous reading again).  Whether a GPU has
 * GPM (Hopper and newer) is asked once per GPU; one without it is said
 * once on the log and never reports a metric (never a 0).  Each metric
 * keeps its own NVML return: a metric NVML refuses is left out.
 *
 * Prometheus text with the DCGM exporter's names where the meaning
 * matches, and telemetry.h's labels (gpu, uuid, model_name, hostname):
 *   DCGM_FI_PROF_SM_OCCUPANCY   warps resident over the maximum, 0 to 1
 *                               (NVML_GPM_METRIC_SM_OCCUPANCY / 100)
 *   DCGM_FI_PROF_SM_ACTIVE      SMs busy, 0 to 1 (NVML_GPM_METRIC_SM_UTIL / 100)
 *   DCGM_FI_PROF_NVLINK_TX_BYTES, DCGM_FI_PROF_NVLINK_RX_BYTES
 *                               bytes/s over all links (NVML gives MiB/s)
 *   kerf_agent_gpm_supported    1 when the GPU has GPM, 0 not
 */
#ifndef KERF_NVML_GPM_H
#define KERF_NVML_GPM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/buf.h"
#include "base/err.h"
#include "nvml/inventory.h"
#include "nvml/nvml_load.h"

enum kerf_gpm_metric {
	KERF_GPM_SM_OCCUPANCY,       /* ratio 0..1 */
	KERF_GPM_SM_ACTIVE,          /* ratio 0..1 */
	KERF_GPM_NVLINK_TX,          /* bytes/s */
	KERF_GPM_NVLINK_RX,          /* bytes/s */
	KERF_GPM_NR_METRICS,
};

enum kerf_gpm_support {
	KERF_GPM_SUPPORT_UNKNOWN,    /* not asked yet, or the question failed */
	KERF_GPM_SUPPORTED,
	KERF_GPM_UNSUPPORTED,
};

struct kerf_gpm_value {
	int nvml_rc;                 /* the metric's nvmlReturn; the value only if 0 */
	double value;
};

/* One GPU's reading. */
struct kerf_gpm_reading {
	enum kerf_gpm_support support;
	bool valid;                  /* two samples made it: v[] holds NVML's answer */
	int nvml_rc;                 /* the last SampleGet/MetricsGet error, 0 none */
	struct kerf_gpm_value v[KERF_GPM_NR_METRICS];
};

struct kerf_gpm_sampler;

/*
 * A sampler over nv (which must outlive it).  log (may be NULL) gets one
 * line per GPU without GPM.  Errors: -KERF_EINVAL when nv lacks the GPM
 * feature (the message gives nv's reason), -KERF_ENOMEM.
 */
int kerf_gpm_sampler_new(struct kerf_gpm_sampler **out, const struct kerf_nvml *nv, FILE *log,
			 struct kerf_err *err) __attribute__((warn_unused_result));

/* Frees the samples held (nvmlGpmSampleFree); s may be NULL. */
void kerf_gpm_sampler_free(struct kerf_gpm_sampler *s);

/*
 * Sample every GPU of inv at now_ms (a monotonic clock) into r[inv->nr_gpus]
 * (at most KERF_GPU_MAX_GPUS).  Returns how many GPUs were sampled (have
 * GPM and answered), so that a caller knows whether a second call helps.
 */
int kerf_gpm_sample(struct kerf_gpm_sampler *s, const struct kerf_gpu_inventory *inv,
		    int64_t now_ms, struct kerf_gpm_reading *r);

/* The readings as Prometheus text (0 or kerf_buf's error). */
int kerf_gpm_metrics_text(const struct kerf_gpu_inventory *inv,
			  const struct kerf_gpm_reading *r, const char *hostname,
			  struct kerf_buf *out) __attribute__((warn_unused_result));

/* kerf_gpm_sample then kerf_gpm_metrics_text: what a /metrics scrape does. */
int kerf_gpm_metrics(struct kerf_gpm_sampler *s, const struct kerf_gpu_inventory *inv,
		     int64_t now_ms, const char *hostname, struct kerf_buf *out)
	__attribute__((warn_unused_result));

#endif /* KERF_NVML_GPM_H */
