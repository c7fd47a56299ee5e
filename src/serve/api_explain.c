/*
 * api_explain: why a pod waits, as every layer kerf can tell it: the
 * world's own reasons (the pod as written, its tenant, its gang), then the
 * core's for its workload (view/explain.c: class, budget, quota per
 * flavor, capacity node by node, topology, isolation, preemption).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "serve/api.h"
#include "serve/api_int.h"
#include "view/view.h"

static const char *role_name(uint8_t r)
{
	switch (r) {
	case ROLE_KERF: return "kerf";
	case ROLE_EXTERNAL: return "external";
	case ROLE_TOLD: return "held";
	default: return "ignored";
	}
}

/* The pod's own layer: what the world holds it back for, if anything. */
static void pod_layer(const struct kerf_world *w, const struct wpod *x, json_t *a, int *rc)
{
	char text[512];

	if (kerf_world_why_hash(x)) {
		json_t *o = kerf_view_layer(a, !strncmp(kerf_world_why_reason(x), "Gang", 4) ? "gang" : !strcmp(kerf_world_why_reason(x), "NoTenant") ? "tenant" : "pod",
				  true, kerf_world_why_message(x), rc);

		kerf_api_put(o, "reason", kerf_api_str(kerf_world_why_reason(x)), rc);
		if (kerf_kpod_gang(x->p)) {
			kerf_api_put(o, "gang", kerf_api_str(kerf_kpod_gang(x->p)), rc);
			kerf_api_put(o, "gangSize", json_integer(x->p->gang_size), rc);
			kerf_api_put(o, "podsThere", json_integer(x->g ? (json_int_t)x->g->nr_m : 1), rc);
		}
		return;
	}
	if (x->role == ROLE_NONE) {
		snprintf(text, sizeof(text), "not kerf's pod: its schedulerName is '%s', kerf's is '%s'",
			 kerf_kpod_scheduler(x->p) ? kerf_kpod_scheduler(x->p) : "",
			 w->scheduler_name);
		kerf_view_layer(a, "pod", false, text, rc);
	} else if (x->role == ROLE_EXTERNAL) {
		kerf_view_layer(a, "pod", false, "another scheduler's GPU pod: kerf counts its GPUs as used (tenant " KERF_EXTERNAL_TENANT ")", rc);
	}
}

static json_t *workload_json(const struct kerf_world *w, const struct wgroup *g,
			     const struct kerf_workload *wl, int64_t now_ms, int *rc)
{
	const struct kerf_state *st = &w->st;
	json_t *o = json_object();

	kerf_api_put(o, "key", kerf_api_str(g->key), rc);
	kerf_api_put(o, "podsThere", json_integer((json_int_t)g->nr_m), rc);
	if (!wl) {
		kerf_api_put(o, "state", json_string("Collecting"), rc);
		return o;
	}
	kerf_view_workload_fields(st, wl, now_ms, o, rc);
	return o;
}

int kerf_api_explain(const struct kerf_world *w, const char *ns,
		     const char *name, int64_t now_ms, json_t **out)
{
	const struct kerf_state *st = &w->st;
	const struct wpod *x;
	const struct kerf_workload *wl = NULL;
	const char *placed = NULL;
	char key[600], text[700], uid[KERF_KPOD_UID_BUF];
	json_t *o, *pod, *layers;
	int rc = 0;

	snprintf(key, sizeof(key), "%s/%s", ns, name);
	x = kerf_map_get_str(&w->pods, key);
	if (!x) {
		snprintf(text, sizeof(text), "pod '%s' is not in kerf's cache", key);
		*out = kerf_api_status(404, "NotFound", text);
		return *out ? 404 : 500;
	}
	if (x->g && x->g->id)
		wl = kerf_state_find(st, x->g->id);
	o = json_object();
	pod = json_object();
	layers = json_array();
	kerf_api_put(o, "kind", json_string("Explanation"), &rc);
	kerf_api_put(o, "apiVersion", json_string(KERF_API_VERSION), &rc);
	kerf_api_put(pod, "namespace", kerf_api_str(kerf_kpod_ns(x->p)), &rc);
	kerf_api_put(pod, "name", kerf_api_str(kerf_kpod_name(x->p)), &rc);
	kerf_api_put(pod, "uid", kerf_api_str(kerf_kpod_uid(x->p, uid)), &rc);
	kerf_api_put(pod, "node", kerf_api_str(kerf_kpod_node(x->p)), &rc);
	/* where the core placed it, before the API server shows the binding */
	if (x->in_run && x->b.node < st->cluster.nr_slots && st->cluster.nodes[x->b.node].live)
		placed = st->cluster.nodes[x->b.node].name;
	kerf_api_put(pod, "placedOn", kerf_api_str(placed), &rc);
	kerf_api_put(pod, "schedulerName", kerf_api_str(kerf_kpod_scheduler(x->p)), &rc);
	kerf_api_put(pod, "role", json_string(role_name(x->role)), &rc);
	kerf_api_put(o, "pod", pod, &rc);
	kerf_api_put(o, "workload", x->g ? workload_json(w, x->g, wl, now_ms, &rc) : json_null(), &rc);
	/* the summary: the world's reason first, then the core's, then where it runs */
	if (kerf_world_why_hash(x)) {
		kerf_api_put(o, "reason", kerf_api_str(kerf_world_why_reason(x)), &rc);
		kerf_api_put(o, "message", kerf_api_str(kerf_world_why_message(x)), &rc);
	} else if (wl && wl->state == KERF_WL_PENDING) {
		kerf_api_put(o, "reason", json_string(kerf_pending_name(wl->pending)), &rc);
		kerf_api_put(o, "message", kerf_api_str(wl->pending_text), &rc);
	} else if (kerf_kpod_node(x->p)) {
		snprintf(text, sizeof(text), "bound to node %s", kerf_kpod_node(x->p));
		kerf_api_put(o, "reason", json_string("Bound"), &rc);
		kerf_api_put(o, "message", kerf_api_str(text), &rc);
	} else if (placed) {
		snprintf(text, sizeof(text), "placed on node %s; the API server has not shown the binding yet", placed);
		kerf_api_put(o, "reason", json_string("Placed"), &rc);
		kerf_api_put(o, "message", kerf_api_str(text), &rc);
	} else {
		kerf_api_put(o, "reason", json_string(x->role == ROLE_NONE ? "NotKerfs" : "Unknown"), &rc);
		kerf_api_put(o, "message", json_string(x->role == ROLE_NONE ? "kerf does not place this pod" : "kerf knows no workload for this pod yet"), &rc);
	}
	pod_layer(w, x, layers, &rc);
	if (wl)
		kerf_view_core_layers(st, wl, now_ms, layers, &rc);
	kerf_api_put(o, "layers", layers, &rc);
	*out = o;
	return rc < 0 ? 500 : 200;
}
