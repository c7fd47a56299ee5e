/*
 * agent_dp: the device plugin inside the agent's loop: one device per GPU
 * (its UUID), unhealthy while a mark keeps it out or health is Unknown
 * (then the kubelet stops offering it), and the assignments the plugin
 * checks Allocate against read from the pods bound here that have not
 * started.
 */
#include "agent/agent_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deviceplugin/plugin.h"
#include "kobj/pod.h"

enum { DP_MAX_PODS = 256 };

struct agent_dp {
	struct kerf_dp_plugin *plugin;
	struct kerf_dp_device devs[KERF_DP_MAX_GPUS];
	size_t nr_devs;
	struct kerf_dp_pod_assign pods[DP_MAX_PODS];
	char keys[DP_MAX_PODS][256];
	struct kerf_agent *a;
};

static int pending_pods(void *arg, const struct kerf_dp_pod_assign **pods, size_t *n_pods,
			struct kerf_err *err)
{
	struct agent_dp *d = arg;
	size_t n = kerf_informer_size(d->a->pods_inf), k = 0;

	(void)err;
	for (size_t i = 0; i < n && k < DP_MAX_PODS; i++) {
		const struct kerf_kpod *p = kerf_informer_at(d->a->pods_inf, i, NULL);
		const char *gpus = p ? kerf_kpod_assigned_gpus(p) : NULL;
		struct kerf_err e = { 0 };
		uint64_t mask;

		if (!gpus || p->phase != KERF_PHASE_PENDING ||
		    kerf_dp_assigned_parse(gpus, &mask, &e) < 0)
			continue;
		snprintf(d->keys[k], sizeof(d->keys[k]), "%s/%s", kerf_kpod_ns(p),
			 kerf_kpod_name(p));
		d->pods[k] = (struct kerf_dp_pod_assign){ .key = d->keys[k], .gpu_mask = mask };
		k++;
	}
	*pods = d->pods;
	*n_pods = k;
	return 0;
}

int kerf_agent_dp_start(struct kerf_agent *a, struct kerf_err *err)
{
	struct agent_dp *d;
	int rc;

	if (!a->o.dp_dir)
		return 0;
	if (!(d = calloc(1, sizeof(*d))))
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	d->a = a;
	for (uint32_t i = 0; i < a->inv.nr_gpus && d->nr_devs < KERF_DP_MAX_GPUS; i++) {
		struct kerf_dp_device *dev = &d->devs[d->nr_devs++];

		snprintf(dev->id, sizeof(dev->id), "%.63s", a->inv.gpus[i].uuid);
		dev->gpu_index = a->inv.gpus[i].index;
		dev->numa_node = a->inv.gpus[i].numa_node;
		dev->healthy = 1;
	}
	struct kerf_dp_config cfg = {
		.dir = a->o.dp_dir, .endpoint = "kerf-gpu.sock", .resource_name = "nvidia.com/gpu",
		.cdi_kind = "nvidia.com/gpu",
	};
	struct kerf_dp_ops ops = { .pending_pods = pending_pods, .arg = d };
	/* N-01: no NVML, no devices: the kubelet is told 0 GPUs */
	if ((rc = kerf_dp_plugin_new(&d->plugin, &cfg, d->devs, d->nr_devs, &ops, err)) < 0) {
		free(d);
		return rc;
	}
	a->dp = d;
	return 0;
}

void kerf_agent_dp_step(struct kerf_agent *a)
{
	struct agent_dp *d = a->dp;
	struct kerf_agent_marks m;

	if (!d)
		return;
	kerf_agent_effective(a, &m);
	for (size_t i = 0; i < d->nr_devs; i++) {
		uint32_t g = d->devs[i].gpu_index;
		int healthy = !a->unknown[0] && !(g < 64 && (m.gpus_down >> g & 1));

		if (healthy != d->devs[i].healthy) {
			d->devs[i].healthy = healthy;
			kerf_dp_plugin_set_health(d->plugin, d->devs[i].id, healthy);
		}
	}
	kerf_dp_plugin_poll(d->plugin, 0);
}

void kerf_agent_dp_stop(struct kerf_agent *a)
{
	struct agent_dp *d = a->dp;

	if (!d)
		return;
	kerf_dp_plugin_free(d->plugin);
	free(d);
	a->dp = NULL;
}
