/*
 * plugin: kerf's kubelet device plugin, API v1beta1 (docs/agent.md).
 *
 * Serves DevicePlugin on <dir>/<endpoint> and registers with the kubelet
 * on <dir>/kubelet.sock.  Single-threaded: kerf_dp_plugin_poll() serves,
 * notices a kubelet restart (kubelet.sock replaced: registers again) and
 * its own socket removed (serves again on a new one, and registers), and
 * returns after at most timeout_ms.  Which pods may receive which GPUs,
 * MIG instances or shares comes from ops (the agent reads the kerf.io/
 * assigned-* annotations of the pods bound to its node); an Allocate that
 * disagrees is refused (match.h, answer.h).
 */
#ifndef KERF_DEVICEPLUGIN_PLUGIN_H
#define KERF_DEVICEPLUGIN_PLUGIN_H

#include <stddef.h>

#include "base/err.h"
#include "deviceplugin/answer.h"
#include "deviceplugin/match.h"

#define KERF_DP_DEFAULT_DIR "/var/lib/kubelet/device-plugins"
#define KERF_DP_KUBELET_SOCKET "kubelet.sock"
#define KERF_DP_API_VERSION "v1beta1"

struct kerf_dp_ops {
	/*
	 * The pods bound to this node that have not started, with their
	 * assignment; the array is the callee's until the next call.
	 */
	int (*pending_pods)(void *arg, const struct kerf_dp_pod_assign **pods,
			    size_t *n_pods, struct kerf_err *err);
	void *arg;
	/*
	 * The MPS daemon of a GPU and UID (answer.h), called with arg; NULL:
	 * no MPS on this node (an MPS share is refused).
	 */
	kerf_dp_mps_fn mps_daemon;
};

struct kerf_dp_config {
	const char *dir;             /* NULL: KERF_DP_DEFAULT_DIR */
	const char *endpoint;        /* socket file name in dir: "kerf-gpu.sock" */
	const char *resource_name;   /* "nvidia.com/gpu" */
	const char *cdi_kind;        /* CDI vendor/class: "nvidia.com/gpu" */
	int register_timeout_ms;     /* 0: 5000 */
};

struct kerf_dp_plugin;

/* Copies devs (at most KERF_DP_MAX_GPUS).  Listens at once; registers on poll. */
int kerf_dp_plugin_new(struct kerf_dp_plugin **out, const struct kerf_dp_config *cfg,
		       const struct kerf_dp_device *devs, size_t n_devs,
		       const struct kerf_dp_ops *ops, struct kerf_err *err);
void kerf_dp_plugin_free(struct kerf_dp_plugin *p);

/* Serve for at most timeout_ms; register when the kubelet is new. */
int kerf_dp_plugin_poll(struct kerf_dp_plugin *p, int timeout_ms);

/* Change a device's health; every ListAndWatch stream gets the new list. */
int kerf_dp_plugin_set_health(struct kerf_dp_plugin *p, const char *id, int healthy);

/* Successful Register calls so far, and the last registration error. */
unsigned kerf_dp_plugin_registrations(const struct kerf_dp_plugin *p);
const char *kerf_dp_plugin_last_error(const struct kerf_dp_plugin *p);

#endif /* KERF_DEVICEPLUGIN_PLUGIN_H */
