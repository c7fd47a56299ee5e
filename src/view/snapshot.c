/*
 * snapshot: the simulator's core at one instant as kerf serve's API
 * would show it (view/snapshot.h, docs/api.md "Snapshots").  A workload
 * of the simulator is named as a pod would be: its tenant is the
 * namespace, the scenario's workload name the name, and a pod of a
 * workload of several pods is NAME-I (I its index in the gang).
 */
#include "view/snapshot.h"

#include <stdio.h>
#include <string.h>

#include "view/api_json.h"
#include "view/view.h"

static bool sim_pod_name(void *ctx, const struct kerf_workload *wl, uint32_t pod,
			 char *ns, char *name, size_t size)
{
	const struct kerf_state *st = ctx;

	snprintf(ns, size, "%s", kerf_api_tenant_name(st, wl->tenant));
	if (kerf_workload_pods(wl) > 1)
		snprintf(name, size, "%s-%u", wl->key, pod);
	else
		snprintf(name, size, "%s", wl->key);
	return true;
}

static bool sim_node_extra(void *ctx, const struct kerf_node *n, struct kerf_view_node_extra *x)
{
	char *domain = ctx;   /* one buffer: each item is built before the next call */

	if (n->cordoned)
		x->cordon_reason = "down in the simulation";
	if (n->domain) {
		snprintf(domain, 32, "domain-%u", n->domain);
		x->nvlink_domain = domain;
	}
	return n->cordoned || n->domain;
}

json_t *kerf_view_explain_sim(const struct kerf_state *st, const struct kerf_workload *wl,
			      int64_t now_ms, int *rc)
{
	json_t *o = json_object(), *pod = json_object(), *w = json_object(), *layers = json_array();
	char key[600];

	snprintf(key, sizeof(key), "%s/%s", kerf_api_tenant_name(st, wl->tenant), wl->key);
	kerf_api_put(o, "kind", json_string("Explanation"), rc);
	kerf_api_put(o, "apiVersion", json_string(KERF_API_VERSION), rc);
	kerf_api_put(pod, "namespace", kerf_api_str(kerf_api_tenant_name(st, wl->tenant)), rc);
	kerf_api_put(pod, "name", kerf_api_str(wl->key), rc);
	kerf_api_put(pod, "uid", json_null(), rc);
	kerf_api_put(pod, "node", json_null(), rc);
	kerf_api_put(pod, "placedOn", json_null(), rc);
	kerf_api_put(pod, "schedulerName", json_null(), rc);
	kerf_api_put(pod, "role", json_string("kerf"), rc);
	kerf_api_put(o, "pod", pod, rc);
	kerf_api_put(w, "key", kerf_api_str(key), rc);
	kerf_api_put(w, "podsThere", json_integer(kerf_workload_pods(wl)), rc);
	kerf_view_workload_fields(st, wl, now_ms, w, rc);
	kerf_api_put(o, "workload", w, rc);
	kerf_api_put(o, "reason", json_string(kerf_pending_name(wl->pending)), rc);
	kerf_api_put(o, "message", kerf_api_str(wl->pending_text), rc);
	kerf_view_core_layers(st, wl, now_ms, layers, rc);
	kerf_api_put(o, "layers", layers, rc);
	return o;
}

int kerf_view_snapshot(const struct kerf_state *st, int64_t now_ms,
		       const struct kerf_view_source *src, json_t **out)
{
	json_t *o = json_object(), *s = json_object(), *ex = json_array(), *v;
	char domain[32];
	int rc = 0;

	*out = o;
	kerf_api_put(o, "apiVersion", json_string(KERF_API_VERSION), &rc);
	kerf_api_put(o, "kind", json_string("Snapshot"), &rc);
	kerf_api_put(o, "atSeconds", json_real((double)now_ms / 1000.0), &rc);
	kerf_api_put(s, "scenario", kerf_api_str(src->scenario), &rc);
	kerf_api_put(s, "name", kerf_api_str(src->name), &rc);
	kerf_api_put(s, "seed", json_integer((json_int_t)src->seed), &rc);
	kerf_api_put(s, "policy", kerf_api_str(src->policy), &rc);
	kerf_api_put(o, "source", s, &rc);
	if (rc < 0)
		return rc;
	rc = kerf_view_tenants(st, &v);
	kerf_api_put(o, "tenants", v, &rc);
	if (rc >= 0)
		rc = kerf_view_queue(st, now_ms, &v);
	if (rc >= 0) {
		/* the simulator holds no pod back before the core sees it */
		kerf_api_put(v, "waiting", json_array(), &rc);
		kerf_api_put(o, "queue", v, &rc);
	}
	if (rc >= 0)
		rc = kerf_view_nodes(&st->cluster, sim_node_extra, domain, &v);
	if (rc >= 0)
		kerf_api_put(o, "nodes", v, &rc);
	if (rc >= 0)
		rc = kerf_view_gpus(st, sim_pod_name, (void *)st, &v);
	if (rc >= 0)
		kerf_api_put(o, "gpus", v, &rc);
	for (size_t i = 0; rc >= 0 && i < st->nr_wl; i++) {
		const struct kerf_workload *wl = st->wl[i];

		if (wl->state != KERF_WL_PENDING)
			continue;
		/* an array, not an object keyed TENANT/NAME: keys are names, not
		 * data (docs/schema/Snapshot.json); workload.key names each */
		kerf_api_push(ex, kerf_view_explain_sim(st, wl, now_ms, &rc), &rc);
	}
	kerf_api_put(o, "explanations", ex, &rc);
	return rc;
}
