/*
 * plugin: kerf's kubelet device plugin (plugin.h).
 */
#include "deviceplugin/plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "deviceplugin/v1beta1/api.pb-c.h"
#include "grpc/client.h"
#include "grpc/frame.h"
#include "grpc/server.h"

enum { DP_MAX_WATCHERS = 8, DP_PATH_MAX = 108 };

struct kerf_dp_plugin {
	struct kerf_dp_config cfg;
	char sock_path[DP_PATH_MAX];
	char kubelet_path[DP_PATH_MAX];
	struct kerf_dp_device devs[KERF_DP_MAX_GPUS];
	size_t n_devs;
	struct kerf_dp_ops ops;
	struct kerf_grpc_server *srv;
	struct kerf_grpc_route routes[5];
	ino_t own_ino;
	ino_t kubelet_ino;            /* the kubelet.sock registered with; 0 none */
	int64_t retry_at_ms;
	unsigned registrations;
	char last_error[KERF_ERR_MSG_MAX];
	struct kerf_grpc_call *watchers[DP_MAX_WATCHERS];
	size_t n_watchers;
};

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int pack(const ProtobufCMessage *m, struct kerf_buf *out)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t *b = malloc(len ? len : 1);
	if (!b)
		return -KERF_ENOMEM;
	protobuf_c_message_pack(m, b);
	int rc = kerf_buf_add(out, b, len);
	free(b);
	return rc;
}

static int get_options(void *arg, const uint8_t *req, size_t len, struct kerf_buf *resp,
		       struct kerf_err *err)
{
	V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
	(void)arg;
	(void)req;
	(void)len;
	(void)err;
	o.get_preferred_allocation_available = 1;
	return pack(&o.base, resp) == 0 ? KERF_GRPC_OK : KERF_GRPC_RESOURCE_EXHAUSTED;
}

static int device_list(const struct kerf_dp_plugin *p, struct kerf_buf *out)
{
	V1beta1__ListAndWatchResponse r = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
	V1beta1__Device dev[KERF_DP_MAX_GPUS];
	V1beta1__Device *devp[KERF_DP_MAX_GPUS];
	V1beta1__TopologyInfo topo[KERF_DP_MAX_GPUS];
	V1beta1__NUMANode numa[KERF_DP_MAX_GPUS];
	V1beta1__NUMANode *numap[KERF_DP_MAX_GPUS];

	for (size_t i = 0; i < p->n_devs; i++) {
		v1beta1__device__init(&dev[i]);
		dev[i].id = (char *)p->devs[i].id;
		dev[i].health = p->devs[i].healthy ? "Healthy" : "Unhealthy";
		if (p->devs[i].numa_node >= 0) {
			v1beta1__topology_info__init(&topo[i]);
			v1beta1__numanode__init(&numa[i]);
			numa[i].id = p->devs[i].numa_node;
			numap[i] = &numa[i];
			topo[i].n_nodes = 1;
			topo[i].nodes = &numap[i];
			dev[i].topology = &topo[i];
		}
		devp[i] = &dev[i];
	}
	r.n_devices = p->n_devs;
	r.devices = devp;
	return pack(&r.base, out);
}

static int list_and_watch(void *arg, const uint8_t *req, size_t len,
			  struct kerf_grpc_call *call, struct kerf_err *err)
{
	struct kerf_dp_plugin *p = arg;
	struct kerf_buf b;
	(void)req;
	(void)len;
	if (p->n_watchers >= DP_MAX_WATCHERS) {
		kerf_err_set(err, -KERF_ELIMIT, "ListAndWatch: %d streams open already",
			     DP_MAX_WATCHERS);
		return KERF_GRPC_RESOURCE_EXHAUSTED;
	}
	kerf_buf_init(&b, 0);
	int rc = device_list(p, &b);
	if (rc == 0)
		rc = kerf_grpc_call_send(call, (const uint8_t *)b.data, b.len);
	kerf_buf_release(&b);
	if (rc < 0) {
		kerf_err_set(err, rc, "ListAndWatch: %s", kerf_strerror(rc));
		return kerf_grpc_status_from_err(rc);
	}
	p->watchers[p->n_watchers++] = call;
	return KERF_GRPC_OK;
}

static void watch_closed(void *arg, struct kerf_grpc_call *call)
{
	struct kerf_dp_plugin *p = arg;
	for (size_t i = 0; i < p->n_watchers; i++) {
		if (p->watchers[i] == call) {
			p->watchers[i] = p->watchers[--p->n_watchers];
			return;
		}
	}
}

static int pending(struct kerf_dp_plugin *p, const struct kerf_dp_pod_assign **pods,
		   size_t *n, struct kerf_err *err)
{
	*pods = NULL;
	*n = 0;
	if (!p->ops.pending_pods)
		return 0;
	return p->ops.pending_pods(p->ops.arg, pods, n, err);
}

static int refuse(struct kerf_err *err, int rc, const char *what)
{
	char msg[KERF_ERR_MSG_MAX];
	snprintf(msg, sizeof(msg), "%s", err->msg);
	kerf_err_clear(err);
	kerf_err_set(err, rc, "kerf: %s: %s", what, msg);
	return kerf_grpc_status_from_err(rc);
}

static int get_preferred(void *arg, const uint8_t *req, size_t len, struct kerf_buf *resp,
			 struct kerf_err *err)
{
	struct kerf_dp_plugin *p = arg;
	V1beta1__PreferredAllocationRequest *r =
		v1beta1__preferred_allocation_request__unpack(NULL, len, req);
	const struct kerf_dp_pod_assign *pods;
	size_t n_pods;
	int st = KERF_GRPC_OK;

	if (!r) {
		kerf_err_set(err, -KERF_EPARSE, "PreferredAllocationRequest: malformed protobuf");
		return KERF_GRPC_INVALID_ARGUMENT;
	}
	V1beta1__PreferredAllocationResponse out = V1BETA1__PREFERRED_ALLOCATION_RESPONSE__INIT;
	size_t nc = r->n_container_requests;
	V1beta1__ContainerPreferredAllocationResponse *cr = calloc(nc ? nc : 1, sizeof(*cr));
	V1beta1__ContainerPreferredAllocationResponse **crp = calloc(nc ? nc : 1, sizeof(*crp));
	char **ids = calloc(nc * KERF_DP_MAX_GPUS + 1, sizeof(*ids));
	if (!cr || !crp || !ids) {
		st = KERF_GRPC_RESOURCE_EXHAUSTED;
		goto out;
	}
	int rc = pending(p, &pods, &n_pods, err);
	if (rc < 0) {
		st = refuse(err, rc, "GetPreferredAllocation: pods of this node");
		goto out;
	}
	for (size_t c = 0; c < nc; c++) {
		const V1beta1__ContainerPreferredAllocationRequest *q = r->container_requests[c];
		size_t idx[KERF_DP_MAX_GPUS];
		if (q->allocation_size < 0 || q->allocation_size > KERF_DP_MAX_GPUS) {
			kerf_err_set(err, -KERF_EINVAL,
				     "container_requests[%zu].allocation_size: %d, not 0..%d", c,
				     (int)q->allocation_size, KERF_DP_MAX_GPUS);
			st = KERF_GRPC_INVALID_ARGUMENT;
			goto out;
		}
		rc = kerf_dp_prefer(p->devs, p->n_devs, q->available_deviceids,
				    q->n_available_deviceids, q->must_include_deviceids,
				    q->n_must_include_deviceids, (size_t)q->allocation_size,
				    pods, n_pods, idx, err);
		if (rc < 0) {
			st = refuse(err, rc, "GetPreferredAllocation");
			goto out;
		}
		v1beta1__container_preferred_allocation_response__init(&cr[c]);
		cr[c].deviceids = ids + c * KERF_DP_MAX_GPUS;
		for (int i = 0; i < rc; i++)
			cr[c].deviceids[i] = q->available_deviceids[idx[i]];
		cr[c].n_deviceids = (size_t)rc;
		crp[c] = &cr[c];
	}
	out.n_container_responses = nc;
	out.container_responses = crp;
	if (pack(&out.base, resp) < 0)
		st = KERF_GRPC_RESOURCE_EXHAUSTED;
out:
	free(ids);
	free(crp);
	free(cr);
	v1beta1__preferred_allocation_request__free_unpacked(r, NULL);
	return st;
}

/*
 * One container's answer: NVIDIA_VISIBLE_DEVICES, the CDI names, and for an
 * MPS share its variables and the pipe directory's mount.
 */
struct alloc_out {
	V1beta1__ContainerAllocateResponse r;
	V1beta1__ContainerAllocateResponse__EnvsEntry env[1 + KERF_DP_MAX_ENVS];
	V1beta1__ContainerAllocateResponse__EnvsEntry *envp[1 + KERF_DP_MAX_ENVS];
	V1beta1__Mount mount;
	V1beta1__Mount *mountp;
	V1beta1__CDIDevice cdi[KERF_DP_MAX_GPUS];
	V1beta1__CDIDevice *cdip[KERF_DP_MAX_GPUS];
	struct kerf_dp_answer ans;
	char *names;
	char *visible;
};

static int alloc_one(const struct kerf_dp_plugin *p, struct alloc_out *a)
{
	const struct kerf_dp_answer *ans = &a->ans;
	size_t n = ans->n_ids;
	struct kerf_buf vis, names;
	kerf_buf_init(&vis, 0);
	kerf_buf_init(&names, 0);
	for (size_t i = 0; i < n; i++) {
		if (kerf_buf_addf(&vis, i ? ",%s" : "%s", ans->ids[i]) < 0 ||
		    kerf_buf_addf(&names, "%s=%s", p->cfg.cdi_kind, ans->ids[i]) < 0 ||
		    kerf_buf_add(&names, "", 1) < 0) {
			kerf_buf_release(&vis);
			kerf_buf_release(&names);
			return -KERF_ENOMEM;
		}
	}
	a->visible = kerf_buf_detach(&vis, NULL);
	a->names = kerf_buf_detach(&names, NULL);
	v1beta1__container_allocate_response__init(&a->r);
	for (size_t i = 0; i <= ans->n_envs; i++) {
		v1beta1__container_allocate_response__envs_entry__init(&a->env[i]);
		a->env[i].key = i ? (char *)ans->envs[i - 1].key : "NVIDIA_VISIBLE_DEVICES";
		a->env[i].value = i ? (char *)ans->envs[i - 1].value : a->visible;
		a->envp[i] = &a->env[i];
	}
	a->r.n_envs = 1 + ans->n_envs;
	a->r.envs = a->envp;
	if (ans->mount_path[0]) {
		v1beta1__mount__init(&a->mount);
		a->mount.container_path = (char *)ans->mount_path;
		a->mount.host_path = (char *)ans->mount_path;
		a->mount.read_only = 0;
		a->mountp = &a->mount;
		a->r.n_mounts = 1;
		a->r.mounts = &a->mountp;
	}
	char *name = a->names;
	for (size_t i = 0; i < n; i++) {
		v1beta1__cdidevice__init(&a->cdi[i]);
		a->cdi[i].name = name;
		a->cdip[i] = &a->cdi[i];
		name += strlen(name) + 1;
	}
	a->r.n_cdi_devices = n;
	a->r.cdi_devices = a->cdip;
	return 0;
}

static int allocate(void *arg, const uint8_t *req, size_t len, struct kerf_buf *resp,
		    struct kerf_err *err)
{
	struct kerf_dp_plugin *p = arg;
	V1beta1__AllocateRequest *r = v1beta1__allocate_request__unpack(NULL, len, req);
	const struct kerf_dp_pod_assign *pods;
	size_t n_pods;
	int st = KERF_GRPC_OK;

	if (!r) {
		kerf_err_set(err, -KERF_EPARSE, "AllocateRequest: malformed protobuf");
		return KERF_GRPC_INVALID_ARGUMENT;
	}
	size_t nc = r->n_container_requests;
	struct alloc_out *a = calloc(nc ? nc : 1, sizeof(*a));
	V1beta1__ContainerAllocateResponse **ap = calloc(nc ? nc : 1, sizeof(*ap));
	if (!a || !ap) {
		st = KERF_GRPC_RESOURCE_EXHAUSTED;
		goto out;
	}
	int rc = pending(p, &pods, &n_pods, err);
	if (rc < 0) {
		st = refuse(err, rc, "Allocate: pods of this node");
		goto out;
	}
	for (size_t c = 0; c < nc; c++) {
		const V1beta1__ContainerAllocateRequest *q = r->container_requests[c];
		if (q->n_devices_ids > KERF_DP_MAX_GPUS) {
			kerf_err_set(err, -KERF_EINVAL,
				     "container_requests[%zu].devices_ids: %zu devices, over %d", c,
				     q->n_devices_ids, KERF_DP_MAX_GPUS);
			st = KERF_GRPC_INVALID_ARGUMENT;
			goto out;
		}
		rc = kerf_dp_answer(p->devs, p->n_devs, q->devices_ids, q->n_devices_ids,
				    pods, n_pods, p->ops.mps_daemon, p->ops.arg, &a[c].ans, err);
		if (rc < 0) {
			/* Not kerf's assignment: the node is not in the state the
			 * kubelet assumed, so FAILED_PRECONDITION, whatever the cause. */
			refuse(err, rc, "allocation refused");
			st = rc == -KERF_EINVAL ? KERF_GRPC_INVALID_ARGUMENT
						: KERF_GRPC_FAILED_PRECONDITION;
			goto out;
		}
		if (alloc_one(p, &a[c]) < 0) {
			st = KERF_GRPC_RESOURCE_EXHAUSTED;
			goto out;
		}
		ap[c] = &a[c].r;
	}
	V1beta1__AllocateResponse out = V1BETA1__ALLOCATE_RESPONSE__INIT;
	out.n_container_responses = nc;
	out.container_responses = ap;
	if (pack(&out.base, resp) < 0)
		st = KERF_GRPC_RESOURCE_EXHAUSTED;
out:
	for (size_t c = 0; a && c < nc; c++) {
		free(a[c].names);
		free(a[c].visible);
	}
	free(a);
	free(ap);
	v1beta1__allocate_request__free_unpacked(r, NULL);
	return st;
}

static int pre_start(void *arg, const uint8_t *req, size_t len, struct kerf_buf *resp,
		     struct kerf_err *err)
{
	V1beta1__PreStartContainerResponse o = V1BETA1__PRE_START_CONTAINER_RESPONSE__INIT;
	(void)arg;
	(void)req;
	(void)len;
	(void)err;
	return pack(&o.base, resp) == 0 ? KERF_GRPC_OK : KERF_GRPC_RESOURCE_EXHAUSTED;
}

static int serve(struct kerf_dp_plugin *p, struct kerf_err *err)
{
	struct stat st;
	kerf_grpc_server_free(p->srv);
	p->srv = NULL;
	p->n_watchers = 0;
	int rc = kerf_grpc_server_new(&p->srv, p->sock_path, p->routes, 5,
				      KERF_GRPC_MAX_MSG_BYTES, NULL, err);
	if (rc < 0)
		return rc;
	p->own_ino = stat(p->sock_path, &st) == 0 ? st.st_ino : 0;
	return 0;
}

int kerf_dp_plugin_new(struct kerf_dp_plugin **out, const struct kerf_dp_config *cfg,
		       const struct kerf_dp_device *devs, size_t n_devs,
		       const struct kerf_dp_ops *ops, struct kerf_err *err)
{
	const char *dir = cfg->dir ? cfg->dir : KERF_DP_DEFAULT_DIR;
	struct kerf_dp_plugin *p;

	if (n_devs > KERF_DP_MAX_GPUS)
		return kerf_err_set(err, -KERF_ELIMIT, "device plugin: %zu devices, over %d",
				    n_devs, KERF_DP_MAX_GPUS);
	if (!cfg->endpoint || !*cfg->endpoint || strchr(cfg->endpoint, '/'))
		return kerf_err_set(err, -KERF_EINVAL,
				    "device plugin: endpoint must be a file name in %.100s", dir);
	if (!cfg->resource_name || !strchr(cfg->resource_name, '/'))
		return kerf_err_set(err, -KERF_EINVAL,
				    "device plugin: resource_name must be vendor-domain/resource");
	p = calloc(1, sizeof(*p));
	if (!p)
		return kerf_err_set(err, -KERF_ENOMEM, "device plugin: out of memory");
	p->cfg = *cfg;
	p->cfg.dir = dir;
	if (!p->cfg.cdi_kind)
		p->cfg.cdi_kind = "nvidia.com/gpu";
	if (p->cfg.register_timeout_ms <= 0)
		p->cfg.register_timeout_ms = 5000;
	if ((size_t)snprintf(p->sock_path, sizeof(p->sock_path), "%s/%s", dir, cfg->endpoint) >=
		    sizeof(p->sock_path) ||
	    (size_t)snprintf(p->kubelet_path, sizeof(p->kubelet_path), "%s/%s", dir,
			     KERF_DP_KUBELET_SOCKET) >= sizeof(p->kubelet_path)) {
		free(p);
		return kerf_err_set(err, -KERF_EINVAL, "device plugin: directory '%.100s' too long",
				    dir);
	}
	memcpy(p->devs, devs, n_devs * sizeof(*devs));
	p->n_devs = n_devs;
	if (ops)
		p->ops = *ops;
	const struct kerf_grpc_route r[5] = {
		{ .path = "/v1beta1.DevicePlugin/GetDevicePluginOptions", .unary = get_options, .arg = p },
		{ .path = "/v1beta1.DevicePlugin/ListAndWatch", .stream = list_and_watch,
		  .closed = watch_closed, .arg = p },
		{ .path = "/v1beta1.DevicePlugin/GetPreferredAllocation", .unary = get_preferred, .arg = p },
		{ .path = "/v1beta1.DevicePlugin/Allocate", .unary = allocate, .arg = p },
		{ .path = "/v1beta1.DevicePlugin/PreStartContainer", .unary = pre_start, .arg = p },
	};
	memcpy(p->routes, r, sizeof(r));
	int rc = serve(p, err);
	if (rc < 0) {
		free(p);
		return rc;
	}
	*out = p;
	return 0;
}

void kerf_dp_plugin_free(struct kerf_dp_plugin *p)
{
	if (!p)
		return;
	kerf_grpc_server_free(p->srv);
	free(p);
}

static void serve_tick(void *arg)
{
	struct kerf_dp_plugin *p = arg;
	kerf_grpc_server_poll(p->srv, 0);
}

static int do_register(struct kerf_dp_plugin *p, struct kerf_err *err)
{
	V1beta1__RegisterRequest r = V1BETA1__REGISTER_REQUEST__INIT;
	V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
	struct kerf_buf req, resp;
	struct kerf_grpc_client_opts co = {
		.timeout_ms = p->cfg.register_timeout_ms, .max_msg_bytes = 4096,
		.tick = serve_tick, .tick_arg = p,
	};

	o.get_preferred_allocation_available = 1;
	r.version = KERF_DP_API_VERSION;
	r.endpoint = (char *)p->cfg.endpoint;
	r.resource_name = (char *)p->cfg.resource_name;
	r.options = &o;
	kerf_buf_init(&req, 0);
	kerf_buf_init(&resp, 4096);
	int rc = pack(&r.base, &req);
	if (rc == 0)
		rc = kerf_grpc_unary_call(p->kubelet_path, "/v1beta1.Registration/Register",
					  (const uint8_t *)req.data, req.len, &resp, &co, err);
	kerf_buf_release(&req);
	kerf_buf_release(&resp);
	if (rc > 0)
		return -KERF_EHTTP; /* err holds the kubelet's message */
	return rc;
}

int kerf_dp_plugin_poll(struct kerf_dp_plugin *p, int timeout_ms)
{
	struct stat st;
	struct kerf_err err = { 0 };

	/* Our socket removed or replaced: serve again, then register again. */
	if (stat(p->sock_path, &st) != 0 || st.st_ino != p->own_ino) {
		if (serve(p, &err) < 0) {
			snprintf(p->last_error, sizeof(p->last_error), "%s", err.msg);
			return err.code;
		}
		p->kubelet_ino = 0;
	}
	if (stat(p->kubelet_path, &st) != 0) {
		p->kubelet_ino = 0;  /* kubelet gone: register when it is back */
	} else if (st.st_ino != p->kubelet_ino && mono_ms() >= p->retry_at_ms) {
		ino_t ino = st.st_ino;
		kerf_err_clear(&err);
		if (do_register(p, &err) == 0) {
			p->kubelet_ino = ino;
			p->registrations++;
			p->last_error[0] = '\0';
		} else {
			snprintf(p->last_error, sizeof(p->last_error), "%s", err.msg);
			p->retry_at_ms = mono_ms() + 1000;
		}
	}
	return kerf_grpc_server_poll(p->srv, timeout_ms);
}

int kerf_dp_plugin_set_health(struct kerf_dp_plugin *p, const char *id, int healthy)
{
	struct kerf_dp_device *d = NULL;
	for (size_t i = 0; i < p->n_devs; i++)
		if (strcmp(p->devs[i].id, id) == 0)
			d = &p->devs[i];
	if (!d)
		return -KERF_ENOTFOUND;
	if (!d->healthy == !healthy)
		return 0;
	d->healthy = healthy != 0;
	struct kerf_buf b;
	kerf_buf_init(&b, 0);
	int rc = device_list(p, &b);
	for (size_t i = 0; rc == 0 && i < p->n_watchers; i++)
		rc = kerf_grpc_call_send(p->watchers[i], (const uint8_t *)b.data, b.len);
	kerf_buf_release(&b);
	return rc;
}

unsigned kerf_dp_plugin_registrations(const struct kerf_dp_plugin *p)
{
	return p->registrations;
}

const char *kerf_dp_plugin_last_error(const struct kerf_dp_plugin *p)
{
	return p->last_error;
}
