/*
 * fake_nvml_gpm: the GPM calls of the fake NVML, #included by fake_nvml.c
 * (not in the minimal build, which leaves GPM out as a pre-520 driver).
 *
 * A device's "gpm" object scripts it:
 *   "gpm": {"supported": true, "smOccupancyPct": 37.5, "smActivePct": 60,
 *           "nvlinkTxBytesPerSec": 1e9, "nvlinkRxBytesPerSec": 2e9}
 * No "gpm", or "supported" false: nvmlGpmQueryDeviceSupport says not
 * supported and a sample is refused (NOT_SUPPORTED), as on a pre-Hopper
 * GPU.  nvmlGpmMetricsGet answers each metric from the script of the two
 * samples' device, in NVML's units (percent; MiB/s for NVLink); a value
 * the script leaves out is NOT_SUPPORTED for that metric alone.  It takes
 * NVML's rules: version 1, two samples of the same device taken in order,
 * numMetrics entries written and no more.
 */

struct nvmlGpmSample_st {
	struct nvmlDevice_st *dev;   /* NULL until taken */
	unsigned long long seq;      /* when it was taken */
};

static unsigned long long gpm_seq;

static bool gpm_supported(const struct nvmlDevice_st *d)
{
	return json_is_true(json_object_get(json_object_get(device_script(d), "gpm"),
					    "supported"));
}

nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport)
{
	DEVICE_CALL(device);
	if (!gpmSupport)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (gpmSupport->version != NVML_GPM_SUPPORT_VERSION)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	gpmSupport->isSupportedDevice = gpm_supported(device);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *gpmSample)
{
	if (!fake.refs)
		return NVML_ERROR_UNINITIALIZED;
	if (!gpmSample)
		return NVML_ERROR_INVALID_ARGUMENT;
	*gpmSample = calloc(1, sizeof(**gpmSample));
	return *gpmSample ? NVML_SUCCESS : NVML_ERROR_MEMORY;
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample)
{
	if (!gpmSample)
		return NVML_ERROR_INVALID_ARGUMENT;
	free(gpmSample);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample)
{
	DEVICE_CALL(device);
	if (!gpmSample)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!gpm_supported(device))
		return NVML_ERROR_NOT_SUPPORTED;
	gpmSample->dev = device;
	gpmSample->seq = ++gpm_seq;
	return NVML_SUCCESS;
}

static const struct {
	unsigned id;
	const char *key;
	double scale;                /* script unit to NVML's */
} gpm_metrics[] = {
	{ NVML_GPM_METRIC_SM_OCCUPANCY, "smOccupancyPct", 1.0 },
	{ NVML_GPM_METRIC_SM_UTIL, "smActivePct", 1.0 },
	{ NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, "nvlinkTxBytesPerSec", 1.0 / 1048576.0 },
	{ NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, "nvlinkRxBytesPerSec", 1.0 / 1048576.0 },
};

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *get)
{
	if (!fake.refs)
		return NVML_ERROR_UNINITIALIZED;
	if (!get)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (get->version != NVML_GPM_METRICS_GET_VERSION)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if (!get->sample1 || !get->sample2 || !get->sample1->dev ||
	    get->sample1->dev != get->sample2->dev ||
	    get->sample1->seq >= get->sample2->seq || get->numMetrics > NVML_GPM_METRIC_MAX)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t inj = injected(__func__, get->sample1->dev);
	if (inj)
		return inj;
	const json_t *gpm = json_object_get(device_script(get->sample1->dev), "gpm");
	for (unsigned i = 0; i < get->numMetrics; i++) {
		nvmlGpmMetric_t *m = &get->metrics[i];

		m->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
		m->value = 0;
		for (size_t k = 0; k < sizeof(gpm_metrics) / sizeof(gpm_metrics[0]); k++) {
			const json_t *v = json_object_get(gpm, gpm_metrics[k].key);

			if (gpm_metrics[k].id == m->metricId && json_is_number(v)) {
				m->nvmlReturn = NVML_SUCCESS;
				m->value = json_number_value(v) * gpm_metrics[k].scale;
			}
		}
	}
	return NVML_SUCCESS;
}
