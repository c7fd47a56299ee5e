/*
 * gpm: two GPM samples per GPU, the metrics between them, and their
 * Prometheus text (gpm.h).
 */
#include "nvml/gpm.h"

#include <stdlib.h>
#include <string.h>

#include "nvml/telemetry.h"

enum { GPM_MIN_INTERVAL_MS = 100 };   /* NVML's sample refresh rate */

/* The NVML metric id of each kerf metric, and its scale to kerf's unit. */
static const struct {
	unsigned id;
	double scale;
} metric_ids[KERF_GPM_NR_METRICS] = {
	[KERF_GPM_SM_OCCUPANCY] = { NVML_GPM_METRIC_SM_OCCUPANCY, 0.01 },
	[KERF_GPM_SM_ACTIVE] = { NVML_GPM_METRIC_SM_UTIL, 0.01 },
	[KERF_GPM_NVLINK_TX] = { NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, 1048576.0 },
	[KERF_GPM_NVLINK_RX] = { NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, 1048576.0 },
};

/* What the sampler keeps of one GPU (by NVML index, checked by UUID). */
struct gpm_gpu {
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	enum kerf_gpm_support support;
	nvmlGpmSample_t prev, cur;   /* allocated once supported */
	bool have_prev;
	int64_t prev_ms;
	struct kerf_gpm_reading last;
};

struct kerf_gpm_sampler {
	const struct kerf_nvml *nv;
	FILE *log;
	struct gpm_gpu gpus[KERF_GPU_MAX_GPUS];
	nvmlGpmMetricsGet_t get;     /* 13 KiB: sized for the largest METRIC_MAX */
};

int kerf_gpm_sampler_new(struct kerf_gpm_sampler **out, const struct kerf_nvml *nv, FILE *log,
			 struct kerf_err *err)
{
	struct kerf_gpm_sampler *s;

	*out = NULL;
	if (!nv || !nv->initialised || !kerf_nvml_has(nv, KERF_NVML_F_GPM))
		return kerf_err_set(err, -KERF_EINVAL, "GPM is off: %s",
				    !nv || !nv->initialised ? "NVML is not loaded"
				    : nv->off[0] ? nv->off : "the library lacks it");
	s = calloc(1, sizeof(*s));
	if (!s)
		return kerf_err_set(err, -KERF_ENOMEM, "GPM sampler: out of memory");
	s->nv = nv;
	s->log = log;
	*out = s;
	return 0;
}

static void gpu_reset(const struct kerf_nvml *nv, struct gpm_gpu *g)
{
	if (g->prev)
		nv->gpm_sample_free(g->prev);
	if (g->cur)
		nv->gpm_sample_free(g->cur);
	memset(g, 0, sizeof(*g));
}

void kerf_gpm_sampler_free(struct kerf_gpm_sampler *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < KERF_GPU_MAX_GPUS; i++)
		gpu_reset(s->nv, &s->gpus[i]);
	free(s);
}

/* Ask NVML once whether the GPU has GPM (and say once when it has not). */
static void ask_support(struct kerf_gpm_sampler *s, struct gpm_gpu *g,
			const struct kerf_gpu *gpu, nvmlDevice_t dev)
{
	nvmlGpmSupport_t sup = { .version = NVML_GPM_SUPPORT_VERSION };
	nvmlReturn_t rc = s->nv->gpm_query_device_support(dev, &sup);

	if (rc == NVML_SUCCESS && sup.isSupportedDevice) {
		if (s->nv->gpm_sample_alloc(&g->prev) != NVML_SUCCESS ||
		    s->nv->gpm_sample_alloc(&g->cur) != NVML_SUCCESS) {
			gpu_reset(s->nv, g);   /* asked again next time */
			snprintf(g->uuid, sizeof(g->uuid), "%s", gpu->uuid);
			return;
		}
		g->support = KERF_GPM_SUPPORTED;
		return;
	}
	if (rc != NVML_SUCCESS && rc != NVML_ERROR_NOT_SUPPORTED) {
		g->last.nvml_rc = (int)rc;   /* unknown: asked again next time */
		return;
	}
	g->support = KERF_GPM_UNSUPPORTED;
	if (s->log)
		fprintf(s->log, "kerf agent: GPU %u (%s, %s): no GPM (NVML says not supported; Hopper or newer has it): "
			"no SM occupancy, SM activity or NVLink throughput\n",
			(unsigned)gpu->index, gpu->uuid, gpu->name);
}

/* Metrics from g->prev to g->cur into g->last. */
static void metrics_between(struct kerf_gpm_sampler *s, struct gpm_gpu *g)
{
	nvmlGpmMetricsGet_t *get = &s->get;
	nvmlReturn_t rc;

	memset(get, 0, offsetof(nvmlGpmMetricsGet_t, metrics) +
			       KERF_GPM_NR_METRICS * sizeof(get->metrics[0]));
	get->version = NVML_GPM_METRICS_GET_VERSION;
	get->numMetrics = KERF_GPM_NR_METRICS;
	get->sample1 = g->prev;
	get->sample2 = g->cur;
	for (int m = 0; m < KERF_GPM_NR_METRICS; m++)
		get->metrics[m].metricId = metric_ids[m].id;
	rc = s->nv->gpm_metrics_get(get);
	g->last.valid = rc == NVML_SUCCESS;
	g->last.nvml_rc = (int)rc;
	for (int m = 0; m < KERF_GPM_NR_METRICS; m++) {
		struct kerf_gpm_value *v = &g->last.v[m];

		v->nvml_rc = rc != NVML_SUCCESS ? (int)rc : (int)get->metrics[m].nvmlReturn;
		v->value = v->nvml_rc ? 0 : get->metrics[m].value * metric_ids[m].scale;
	}
}

/* One GPU: a sample, and the metrics since the one before. */
static void sample_gpu(struct kerf_gpm_sampler *s, struct gpm_gpu *g, nvmlDevice_t dev,
		       int64_t now_ms)
{
	nvmlGpmSample_t t;
	nvmlReturn_t rc;

	if (g->have_prev && now_ms - g->prev_ms < GPM_MIN_INTERVAL_MS)
		return;   /* too soon for NVML: the reading before */
	rc = s->nv->gpm_sample_get(dev, g->cur);
	if (rc != NVML_SUCCESS) {
		g->have_prev = false;   /* a gap: start again from the next sample */
		g->last.valid = false;
		g->last.nvml_rc = (int)rc;
		return;
	}
	if (g->have_prev)
		metrics_between(s, g);
	else
		g->last.nvml_rc = 0;
	t = g->prev;
	g->prev = g->cur;
	g->cur = t;
	g->have_prev = true;
	g->prev_ms = now_ms;
}

int kerf_gpm_sample(struct kerf_gpm_sampler *s, const struct kerf_gpu_inventory *inv,
		    int64_t now_ms, struct kerf_gpm_reading *r)
{
	const struct kerf_nvml *nv = s->nv;
	int sampled = 0;

	for (uint32_t i = 0; i < inv->nr_gpus && i < KERF_GPU_MAX_GPUS; i++) {
		const struct kerf_gpu *gpu = &inv->gpus[i];
		struct gpm_gpu *g;
		nvmlDevice_t dev;

		memset(&r[i], 0, sizeof(r[i]));
		if (inv->state != KERF_GPU_INVENTORY_READ || gpu->index >= KERF_GPU_MAX_GPUS ||
		    gpu->lost)
			continue;
		g = &s->gpus[gpu->index];
		if (strcmp(g->uuid, gpu->uuid)) {   /* another GPU at this index */
			gpu_reset(nv, g);
			snprintf(g->uuid, sizeof(g->uuid), "%s", gpu->uuid);
		}
		if (nv->handle_by_index_v2(gpu->index, &dev) != NVML_SUCCESS)
			continue;
		if (g->support == KERF_GPM_SUPPORT_UNKNOWN)
			ask_support(s, g, gpu, dev);
		if (g->support == KERF_GPM_SUPPORTED) {
			sample_gpu(s, g, dev, now_ms);
			sampled += g->have_prev;
		}
		r[i] = g->last;
		r[i].support = g->support;
	}
	return sampled;
}

static const struct {
	const char *name, *help;
} series[KERF_GPM_NR_METRICS] = {
	[KERF_GPM_SM_OCCUPANCY] = { "DCGM_FI_PROF_SM_OCCUPANCY",
		"Ratio of warps resident on the SMs to the maximum (0 to 1, NVML GPM)." },
	[KERF_GPM_SM_ACTIVE] = { "DCGM_FI_PROF_SM_ACTIVE",
		"Ratio of SMs busy, at least one warp assigned (0 to 1, NVML GPM)." },
	[KERF_GPM_NVLINK_TX] = { "DCGM_FI_PROF_NVLINK_TX_BYTES",
		"NVLink bytes transmitted per second, all links (NVML GPM)." },
	[KERF_GPM_NVLINK_RX] = { "DCGM_FI_PROF_NVLINK_RX_BYTES",
		"NVLink bytes received per second, all links (NVML GPM)." },
};

int kerf_gpm_metrics_text(const struct kerf_gpu_inventory *inv,
			  const struct kerf_gpm_reading *r, const char *hostname,
			  struct kerf_buf *out)
{
	uint32_t nr = inv->nr_gpus < KERF_GPU_MAX_GPUS ? inv->nr_gpus : KERF_GPU_MAX_GPUS;
	bool any = false;
	int rc = 0;

	for (int m = 0; rc == 0 && m < KERF_GPM_NR_METRICS; m++) {
		any = false;
		for (uint32_t i = 0; rc == 0 && i < nr; i++) {
			if (!r[i].valid || r[i].v[m].nvml_rc != 0)
				continue;   /* refused or not yet: left out, never 0 */
			if (!any)
				rc = kerf_buf_addf(out, "# HELP %s %s\n# TYPE %s gauge\n",
						   series[m].name, series[m].help, series[m].name);
			any = true;
			if (rc == 0)
				rc = kerf_buf_add_str(out, series[m].name);
			if (rc == 0)
				rc = kerf_gpu_prom_labels(out, &inv->gpus[i], hostname);
			if (rc == 0)
				rc = kerf_buf_addf(out, " %.15g\n", r[i].v[m].value);
		}
	}
	any = false;
	for (uint32_t i = 0; rc == 0 && i < nr; i++) {
		if (r[i].support == KERF_GPM_SUPPORT_UNKNOWN)
			continue;
		if (!any)
			rc = kerf_buf_add_str(out,
				"# HELP kerf_agent_gpm_supported 1 when the GPU has GPM (SM occupancy, SM activity, NVLink throughput), 0 when not.\n"
				"# TYPE kerf_agent_gpm_supported gauge\n");
		any = true;
		if (rc == 0)
			rc = kerf_buf_add_str(out, "kerf_agent_gpm_supported");
		if (rc == 0)
			rc = kerf_gpu_prom_labels(out, &inv->gpus[i], hostname);
		if (rc == 0)
			rc = kerf_buf_addf(out, " %d\n", r[i].support == KERF_GPM_SUPPORTED);
	}
	return rc;
}

int kerf_gpm_metrics(struct kerf_gpm_sampler *s, const struct kerf_gpu_inventory *inv,
		     int64_t now_ms, const char *hostname, struct kerf_buf *out)
{
	struct kerf_gpm_reading *r;
	int rc;

	if (!inv->nr_gpus)
		return 0;
	r = calloc(inv->nr_gpus, sizeof(*r));
	if (!r)
		return -KERF_ENOMEM;
	kerf_gpm_sample(s, inv, now_ms, r);
	rc = kerf_gpm_metrics_text(inv, r, hostname, out);
	free(r);
	return rc;
}
