/*
 * agent: the node agent's loop and its Node (agent.h).
 */
#include "agent/agent_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/node_doc.h"
#include "nvml/telemetry.h"
#include "base/quantity.h"
#include "kobj/names.h"
#include "kobj/pod.h"
#include "kobj/time.h"

enum { WRITE_RETRY_MS = 1000, INVENTORY_MS = 30000, UTIL_WINDOW_MS = 300000,
       EVENTS_PER_STEP = 256 };

static void now_text(char out[KERF_TIME_TEXT_MAX])
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	kerf_time_format((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, out);
}

/* --- informers ----------------------------------------------------------- */

static void *node_decode(void *arg, const json_t *obj)
{
	(void)arg;
	return json_deep_copy(obj);
}

static void node_free(void *arg, void *obj)
{
	(void)arg;
	json_decref(obj);
}

static void read_api_marks(struct kerf_agent *a);

/* A new Node (the watch's): its marks read once, here, not at every turn. */
static void node_seen(struct kerf_agent *a, void *obj)
{
	json_decref(a->node);
	a->node = json_incref(obj);
	read_api_marks(a);
	a->next_write_ms = 0;       /* look again at once */
}

static void node_add(void *arg, const char *key, void *obj)
{
	(void)key;
	node_seen(arg, obj);
}

static void node_update(void *arg, const char *key, void *old, void *obj)
{
	(void)key;
	(void)old;
	node_seen(arg, obj);
}

static void node_delete(void *arg, const char *key, void *old)
{
	struct kerf_agent *a = arg;

	(void)key;
	(void)old;
	json_decref(a->node);
	a->node = NULL;
}

/* securityContext.runAsUser (or Group) of the pod, else of its first container. */
static int64_t run_as(const json_t *spec, const char *field)
{
	const json_t *v = json_object_get(json_object_get(spec, "securityContext"), field);

	if (!json_is_integer(v))
		v = json_object_get(json_object_get(json_array_get(json_object_get(spec,
				"containers"), 0), "securityContext"), field);
	return json_is_integer(v) && json_integer_value(v) >= 0 ? json_integer_value(v) : -1;
}

static void *pod_decode(void *arg, const json_t *obj)
{
	struct agent_pod *p = calloc(1, sizeof(*p));
	struct kerf_err err = { 0 };
	const json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
	const json_t *spec = json_object_get(obj, "spec");
	const char *frac = json_string_value(json_object_get(ann, "kerf.io/assigned-fraction"));
	const char *sharing = json_string_value(json_object_get(ann, KERF_ANN_GPU_SHARING));
	int64_t milli;

	(void)arg;
	if (!p || kerf_kpod_decode(obj, &p->kp, &err) < 0) {
		free(p);
		return NULL;
	}
	if (frac && kerf_quantity_parse_milli(frac, &milli) == 0 && milli > 0 && milli < 1000)
		p->fraction_milli = (uint32_t)milli;
	p->mps = sharing && !strcmp(sharing, "mps");
	p->uid = run_as(spec, "runAsUser");
	p->gid = run_as(spec, "runAsGroup");
	if (p->gid < 0)
		p->gid = p->uid;
	return p;
}

static void pod_free(void *arg, void *obj)
{
	(void)arg;
	kerf_kpod_release(obj);
	free(obj);
}

/* --- marks --------------------------------------------------------------- */

void kerf_agent_effective(const struct kerf_agent *a, struct kerf_agent_marks *m)
{
	*m = a->api;
	kerf_agent_marks_union(m, &a->fresh);
	m->gpus_down = kerf_agent_gpus_down(a);
}

uint64_t kerf_agent_gpus_down(const struct kerf_agent *a)
{
	if (a->api_unreadable)
		return a->inv.nr_gpus >= 64 ? ~0ull : (1ull << a->inv.nr_gpus) - 1;
	return a->api.gpus_down | a->fresh.gpus_down;
}

/* The Node's marks, and what of fresh they already hold. */
static void read_api_marks(struct kerf_agent *a)
{
	struct kerf_err err = { 0 };
	struct kerf_agent_marks m;

	if (!a->node)
		return;
	if (kerf_agent_marks_from_node(a->node, &m, &err) < 0) {
		if (!a->api_unreadable)
			fprintf(stderr, "kerf agent: node %s: %s: every GPU out of service until "
				"it is fixed\n", a->node_name, err.msg);
		a->api_unreadable = true;
		return;
	}
	a->api_unreadable = false;
	a->api = m;
	if (!a->fresh_since_ms)
		return;
	struct kerf_agent_marks both = m;
	kerf_agent_marks_union(&both, &a->fresh);
	if (kerf_agent_marks_equal(&both, &m) && (!a->fresh.node_failed || m.node_failed)) {
		memset(&a->fresh, 0, sizeof(a->fresh));
		a->fresh_since_ms = 0;
	}
}

/* --- writes -------------------------------------------------------------- */

static void wrote(struct kerf_agent *a, const struct kerf_kube_response *resp,
		  uint64_t *ok_counter)
{
	int64_t now = kerf_agent_now_ms();

	a->writing = false;
	if (resp->class == KERF_KUBE_OK) {
		json_t *node = json_loadb(resp->body, resp->body_len, 0, NULL);

		(*ok_counter)++;
		if (json_is_object(node)) {
			json_decref(a->node);
			a->node = node;
			node = NULL;
		}
		json_decref(node);
		if (a->fresh_since_ms) {
			a->c.last_report_ms = now - a->fresh_since_ms;
			if (a->c.last_report_ms > a->c.max_report_ms)
				a->c.max_report_ms = a->c.last_report_ms;
		}
		read_api_marks(a);
		a->next_write_ms = 0;
		return;
	}
	if (resp->http_status == 409)
		a->c.write_conflicts++;
	else {
		a->c.write_errors++;
		fprintf(stderr, "kerf agent: writing node %s: %s\n", a->node_name, resp->msg);
	}
	a->next_write_ms = now + WRITE_RETRY_MS;
}

static void node_written(void *arg, const struct kerf_kube_response *resp)
{
	struct kerf_agent *a = arg;

	wrote(a, resp, &a->c.node_writes);
}

static void status_written(void *arg, const struct kerf_kube_response *resp)
{
	struct kerf_agent *a = arg;

	wrote(a, resp, &a->c.status_writes);
}

/* One write at a time: a->writing until its answer (done) comes. */
static void send_patch(struct kerf_agent *a, const char *suffix, const char *ctype,
		       json_t *patch, kerf_kube_done_fn done, int64_t now_ms)
{
	char path[512];
	char *body = json_dumps(patch, JSON_COMPACT);
	struct kerf_kube_request req = {
		.method = "PATCH", .path = path, .content_type = ctype,
		.body = body, .body_len = body ? strlen(body) : 0,
		.flags = KERF_KUBE_REQ_RETRYABLE,
	};
	uint64_t id;

	snprintf(path, sizeof(path), "/api/v1/nodes/%s%s", a->node_name, suffix);
	a->writing = true;
	if (!body || a->o.ops->request(a->o.ops->ctx, &req, done, a, &id) < 0) {
		a->writing = false;
		a->next_write_ms = now_ms + WRITE_RETRY_MS;
	}
	free(body);
}

static void write_node(struct kerf_agent *a, int64_t now_ms)
{
	char now[KERF_TIME_TEXT_MAX];
	struct kerf_agent_marks m;
	json_t *patch = NULL;

	if (!a->node || a->writing || now_ms < a->next_write_ms)
		return;
	now_text(now);
	kerf_agent_effective(a, &m);
	struct kerf_agent_node_view v = {
		.inv = &a->inv, .marks = &m, .now = now,
		.nvlink_domain = a->nvlink_domain[0] ? a->nvlink_domain : NULL,
		.utilization = a->next_util_ms ? a->util_text : NULL,
		.mig_actuation = a->mig_result[0] ? a->mig_result : NULL,
		.mps_failed = a->mps ? a->mps_failed : 0, .mps_on = a->mps != NULL,
	};
	/* marks that cannot be read are never written over */
	if (!a->api_unreadable && kerf_agent_node_patch(a->node, &v, &patch) == 0 && patch) {
		send_patch(a, "", "application/merge-patch+json", patch, node_written, now_ms);
		json_decref(patch);
		return;
	}
	if (kerf_agent_condition_patch(a->node, &v, a->unknown[0] ? a->unknown : NULL,
				       &patch) == 0 && patch) {
		send_patch(a, "/status", "application/strategic-merge-patch+json", patch,
			   status_written, now_ms);
		json_decref(patch);
	}
}

/* --- NVML ---------------------------------------------------------------- */

static void inventory_read(struct kerf_agent *a)
{
	struct kerf_err err = { 0 };
	struct kerf_gpu_inventory inv;

	a->c.inventory_reads++;
	if (!a->o.nv || !a->o.nv->initialised) {
		kerf_gpu_inventory_unknown(&a->inv, a->o.nvml_error ? a->o.nvml_error
								    : "NVML not loaded");
		snprintf(a->unknown, sizeof(a->unknown), "NVML: %.480s", a->inv.reason);
		return;
	}
	memset(&inv, 0, sizeof(inv));
	if (kerf_gpu_inventory_read(&inv, a->o.nv, &err) < 0) {
		snprintf(a->unknown, sizeof(a->unknown), "NVML: %.480s", err.msg);
		kerf_gpu_inventory_release(&inv);
		return;
	}
	kerf_gpu_inventory_release(&a->inv);
	a->inv = inv;
}

static void apply_verdict(struct kerf_agent *a, const struct kerf_health_verdict *v, int gpu,
			  int64_t at_ms)
{
	char now[KERF_TIME_TEXT_MAX], reason[KERF_MARK_REASON_MAX];
	struct agent_job job = { .gpu = gpu, .actions = v->actions };
	struct kerf_health_verdict vv = *v;

	if ((int)v->cls < (int)AGENT_XID_CLASSES && v->xid)
		a->xid_by_class[v->cls]++;
	if (gpu >= 0)
		snprintf(reason, sizeof(reason), "GPU %d: %.140s", gpu, v->reason);
	else
		snprintf(reason, sizeof(reason), "%s", v->reason);
	snprintf(vv.reason, sizeof(vv.reason), "%s", reason);
	now_text(now);
	if (kerf_agent_marks_apply(&a->fresh, &vv, gpu, &a->inv, now)) {
		a->c.marks_added++;
		if (!a->fresh_since_ms)
			a->fresh_since_ms = at_ms;
		a->next_write_ms = 0;
	}
	if (v->actions & KERF_HEALTH_INSTANCE_UNHEALTHY && gpu >= 0 &&
	    (uint32_t)gpu < a->inv.nr_gpus) {
		const struct kerf_gpu *g = &a->inv.gpus[gpu];

		for (uint32_t k = 0; k < g->nr_gis; k++)
			if (g->gis[k].id == v->gi)
				snprintf(job.mig, sizeof(job.mig), "%s@%u", g->gis[k].profile,
					 g->gis[k].start);
	}
	snprintf(job.reason, sizeof(job.reason), "%s", reason);
	if (gpu >= 0 && v->actions & (KERF_HEALTH_COUNT_POD | KERF_HEALTH_DRAIN |
				      KERF_HEALTH_UNTRUSTED | KERF_HEALTH_KILL_POD))
		kerf_agent_pod_job(a, &job);
}

static void take_events(struct kerf_agent *a)
{
	struct kerf_agent_event evs[EVENTS_PER_STEP];
	size_t n = kerf_agent_events_take(a->events, evs, EVENTS_PER_STEP);

	for (size_t i = 0; i < n; i++) {
		struct kerf_health_verdict v;

		if (evs[i].kind == KERF_AGENT_EV_RECOVERED) {
			if (a->o.nv && a->o.nv->initialised)
				a->unknown[0] = '\0';
			a->next_write_ms = 0;
			continue;
		}
		kerf_health_decide(evs[i].rc, evs[i].kind == KERF_AGENT_EV_NVML ? &evs[i].ev : NULL,
				   &v);
		a->c.events++;
		if (v.actions & KERF_HEALTH_ALL_UNKNOWN) {
			snprintf(a->unknown, sizeof(a->unknown), "%s", v.reason);
			a->next_write_ms = 0;
			continue;
		}
		if (v.actions == KERF_HEALTH_COUNT_POD)
			a->c.app_errors++;
		apply_verdict(a, &v, evs[i].gpu, evs[i].at_ms);
	}
}

/* One utilisation sample of every GPU into the window. */
static void sample_util(struct kerf_agent *a, int64_t now_ms)
{
	struct kerf_gpu_sample s[KERF_GPU_MAX_GPUS];

	if (now_ms < a->next_util_ms)
		return;
	a->next_util_ms = now_ms + a->o.util_window_ms / KERF_UTIL_SAMPLES;
	if (!a->o.nv || !a->o.nv->initialised || a->inv.state != KERF_GPU_INVENTORY_READ ||
	    a->inv.nr_gpus > KERF_GPU_MAX_GPUS)
		return;
	kerf_gpu_sample_read(a->o.nv, &a->inv, s);
	for (uint32_t i = 0; i < a->inv.nr_gpus; i++)
		kerf_util_add(&a->util, a->inv.gpus[i].index, s[i].has_util, s[i].util_gpu_pct);
	kerf_util_text(&a->util, a->util_text, sizeof(a->util_text));
}

/* A GPU the inventory found lost is a lost GPU, events or not. */
static void lost_gpus(struct kerf_agent *a)
{
	for (uint32_t i = 0; i < a->inv.nr_gpus; i++) {
		struct kerf_health_verdict v;

		if (!a->inv.gpus[i].lost)
			continue;
		kerf_health_decide(NVML_ERROR_GPU_IS_LOST, NULL, &v);
		apply_verdict(a, &v, (int)i, kerf_agent_now_ms());
	}
}

/* --- the agent ----------------------------------------------------------- */

int kerf_agent_new(const struct kerf_agent_opts *o, struct kerf_agent **out,
		   struct kerf_err *err)
{
	struct kerf_agent *a;
	char sel[300];

	*out = NULL;
	if (!o->node_name || !o->node_name[0] || strlen(o->node_name) >= 254)
		return kerf_err_set(err, -KERF_EINVAL, "--node-name: required, at most 253 bytes");
	if (!o->ops)
		return kerf_err_set(err, -KERF_EINVAL, "no API client");
	if (!(a = calloc(1, sizeof(*a))))
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	a->o = *o;
	snprintf(a->node_name, sizeof(a->node_name), "%s", o->node_name);
	snprintf(a->nvlink_domain, sizeof(a->nvlink_domain), "%s",
		 o->nvlink_domain ? o->nvlink_domain : "");
	a->o.node_name = a->node_name;
	if (a->o.inventory_ms <= 0)
		a->o.inventory_ms = INVENTORY_MS;
	if (a->o.util_window_ms <= 0)
		a->o.util_window_ms = UTIL_WINDOW_MS;
	kerf_rng_seed(&a->rng, o->seed);
	if (!(a->notes = calloc(AGENT_MAX_NOTES, sizeof(*a->notes)))) {
		free(a);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	snprintf(sel, sizeof(sel), "metadata.name=%s", a->node_name);
	struct kerf_informer_opts no = { .path = "/api/v1/nodes", .field_selector = sel,
					 .rng = &a->rng };
	struct kerf_informer_handlers nh = { .decode = node_decode, .free = node_free,
					     .on_add = node_add, .on_update = node_update,
					     .on_delete = node_delete, .arg = a };
	a->node_inf = kerf_informer_new(o->ops, &no, &nh, err);
	snprintf(sel, sizeof(sel), "spec.nodeName=%s", a->node_name);
	struct kerf_informer_opts po = { .path = "/api/v1/pods", .field_selector = sel,
					 .rng = &a->rng };
	struct kerf_informer_handlers ph = { .decode = pod_decode, .free = pod_free, .arg = a };
	if (a->node_inf)
		a->pods_inf = kerf_informer_new(o->ops, &po, &ph, err);
	if (!a->node_inf || !a->pods_inf) {
		kerf_agent_free(a);
		return err && err->code ? err->code : -KERF_ENOMEM;
	}
	inventory_read(a);
	*out = a;
	return 0;
}

int kerf_agent_start(struct kerf_agent *a, struct kerf_err *err)
{
	int rc;

	if ((rc = kerf_informer_start(a->node_inf)) < 0 ||
	    (rc = kerf_informer_start(a->pods_inf)) < 0)
		return kerf_err_set(err, rc, "starting the informers");
	a->next_inventory_ms = kerf_agent_now_ms() + a->o.inventory_ms;
	if (a->inv.state == KERF_GPU_INVENTORY_READ && a->inv.nr_gpus) {
		struct kerf_err e2 = { 0 };
		unsigned nr = a->inv.nr_gpus < KERF_GPU_MAX_GPUS ? a->inv.nr_gpus
								 : KERF_GPU_MAX_GPUS;

		for (unsigned i = 0; i < nr; i++)
			if (a->o.nv->handle_by_index_v2(i, &a->handles[i]) != NVML_SUCCESS)
				a->handles[i] = NULL;
		if (kerf_agent_events_start(&a->events, a->o.nv, a->handles, nr, &e2) < 0) {
			/* no signal is no health: never report healthy without it */
			snprintf(a->unknown, sizeof(a->unknown), "no NVML health events: %.400s",
				 e2.msg);
			fprintf(stderr, "kerf agent: %s\n", a->unknown);
		}
	}
	lost_gpus(a);
	if (a->o.nv && a->o.nv->initialised && kerf_nvml_has(a->o.nv, KERF_NVML_F_GPM) &&
	    (rc = kerf_gpm_sampler_new(&a->gpm, a->o.nv, stderr, err)) < 0)
		return rc;   /* out of memory: the feature is there */
	if ((rc = kerf_agent_http_start(a, err)) < 0 || (rc = kerf_agent_mps_start(a, err)) < 0 ||
	    (rc = kerf_agent_dp_start(a, err)) < 0)
		return rc;
	return 0;
}

int kerf_agent_step(struct kerf_agent *a, int timeout_ms)
{
	int64_t now;
	int rc = a->o.ops->poll(a->o.ops->ctx, timeout_ms);

	kerf_informer_tick(a->node_inf);
	kerf_informer_tick(a->pods_inf);
	take_events(a);
	now = kerf_agent_now_ms();
	if (now >= a->next_inventory_ms) {
		a->next_inventory_ms = now + a->o.inventory_ms;
		inventory_read(a);
		lost_gpus(a);
		a->next_write_ms = 0;
	}
	sample_util(a, now);
	write_node(a, now);
	if (kerf_informer_has_synced(a->pods_inf)) {
		kerf_agent_pods_step(a, now);
		kerf_agent_mig_step(a, now);
		kerf_agent_mps_step(a, now);
	}
	kerf_agent_dp_step(a);
	kerf_agent_http_run(a);
	return rc < 0 ? rc : 0;
}

bool kerf_agent_ready(const struct kerf_agent *a)
{
	return a->node && kerf_informer_has_synced(a->pods_inf) && !a->fresh_since_ms;
}

const struct kerf_agent_counters *kerf_agent_counters(const struct kerf_agent *a)
{
	return &a->c;
}

void kerf_agent_free(struct kerf_agent *a)
{
	if (!a)
		return;
	kerf_agent_http_stop(a);
	kerf_agent_dp_stop(a);
	kerf_agent_mps_stop(a);
	kerf_agent_events_stop(a->events);
	kerf_gpm_sampler_free(a->gpm);
	kerf_informer_free(a->node_inf);
	kerf_informer_free(a->pods_inf);
	json_decref(a->node);
	kerf_gpu_inventory_release(&a->inv);
	free(a->notes);
	free(a);
}
