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

#include "deviceplugin/answer.h"
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
		const struct agent_pod *p = kerf_informer_at(d->a->pods_inf, i, NULL);
		const char *gpus = p ? kerf_kpod_assigned_gpus(&p->kp) : NULL;
		char frac[16] = "";
		struct kerf_err e = { 0 };

		if (!gpus || p->kp.phase != KERF_PHASE_PENDING)
			continue;
		snprintf(d->keys[k], sizeof(d->keys[k]), "%s/%s", kerf_kpod_ns(&p->kp),
			 kerf_kpod_name(&p->kp));
		if (p->fraction_milli)
			snprintf(frac, sizeof(frac), "%um", p->fraction_milli);
		if (kerf_dp_pod_assign_parse(&d->pods[k], d->keys[k], gpus,
					     kerf_kpod_assigned_mig(&p->kp), frac[0] ? frac : NULL,
					     p->fraction_milli ? (p->mps ? "mps" : "timeslice") : NULL,
					     p->uid >= 0 ? (uint32_t)p->uid : 0, &e) == 0)
			k++;
	}
	*pods = d->pods;
	*n_pods = k;
	return 0;
}

/* The device plugin's view of an MPS daemon (deviceplugin/answer.h). */
static int mps_daemon(void *arg, uint32_t gpu, uint32_t uid, struct kerf_dp_mps *out)
{
	struct agent_dp *d = arg;
	struct kerf_mps_view v;

	if (kerf_agent_mps_lookup(d->a, gpu, uid, &v) < 0)
		return -KERF_ENOTFOUND;
	memset(out, 0, sizeof(*out));
	out->healthy = v.state == KERF_MPS_RUNNING;
	snprintf(out->pipe_dir, sizeof(out->pipe_dir), "%s", v.pipe_dir);
	out->limits = v.limits;
	snprintf(out->why, sizeof(out->why), "%s", v.why ? v.why : "");
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
	struct kerf_dp_ops ops = { .pending_pods = pending_pods, .arg = d,
				   .mps_daemon = a->mps ? mps_daemon : NULL };
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
	uint64_t down;

	if (!d)
		return;
	down = kerf_agent_gpus_down(a);
	for (size_t i = 0; i < d->nr_devs; i++) {
		uint32_t g = d->devs[i].gpu_index;
		int healthy = !a->unknown[0] && !(g < 64 && (down >> g & 1));

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
