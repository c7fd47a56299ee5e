/*
 * kinds: the built-in kinds served and what kube-apiserver does to each on
 * create and update (nodes get TaintNodesByCondition's not-ready taint and
 * keep their status on create; namespaces get their name label, the
 * kubernetes finalizer and phase Active; leases and events check their
 * MicroTime fields exactly; events.k8s.io/v1 is a view of the core/v1
 * events, converted field by field both ways).
 */
#include "testapi/testapi_int.h"
#include "testapi/webhook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/quantity.h"

static const char verbs_all[] =
	"[\"create\",\"delete\",\"deletecollection\",\"get\",\"list\",\"patch\",\"update\",\"watch\"]";
static const char verbs_ns[] =
	"[\"create\",\"delete\",\"get\",\"list\",\"patch\",\"update\",\"watch\"]";

/* -- nodes -- */

static int node_quantities(struct kerf_ta_ctx *c, const json_t *node)
{
	static const char *const maps[] = { "capacity", "allocatable" };
	json_t *causes = json_array(), *v;
	const char *r;
	size_t i;

	for (i = 0; i < 2; i++) {
		json_object_foreach(kerf_ta_path(node, maps[i] == maps[0] ?
						 "status.capacity" :
						 "status.allocatable"), r, v) {
			const char *s = json_string_value(v);
			char field[512];
			int64_t q;

			snprintf(field, sizeof(field), "status.%s.%s", maps[i], r);
			if (!s || kerf_quantity_parse_milli(s, &q) < 0)
				kerf_ta_cause_add(causes, "FieldValueInvalid",
						  field,
						  "Invalid value: \"%s\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
						  s ? s : "");
			else if (strchr(r, '/') && !strstr(r, "kubernetes.io/") &&
				 q % 1000)
				kerf_ta_cause_add(causes, "FieldValueInvalid",
						  field,
						  "Invalid value: \"%s\": must be an integer",
						  s);
		}
	}
	if (json_array_size(causes))
		return kerf_ta_invalid(c->rs, c->k,
				       kerf_ta_str(node, "metadata.name"),
				       causes);
	json_decref(causes);
	return 0;
}

static void node_status_defaults(json_t *node)
{
	json_t *st = kerf_ta_path_mk(node, "status");

	if (!json_object_get(st, "daemonEndpoints"))
		json_object_set_new(st, "daemonEndpoints",
				    json_pack("{s{si}}", "kubeletEndpoint",
					      "Port", 0));
	if (!json_object_get(st, "nodeInfo"))
		json_object_set_new(st, "nodeInfo",
				    json_pack("{ssssssssssssssssssss}",
					      "machineID", "", "systemUUID", "",
					      "bootID", "", "kernelVersion", "",
					      "osImage", "",
					      "containerRuntimeVersion", "",
					      "kubeletVersion", "",
					      "kubeProxyVersion", "",
					      "operatingSystem", "",
					      "architecture", ""));
}

static int node_create(struct kerf_ta_ctx *c, json_t *node)
{
	json_t *spec = kerf_ta_path_mk(node, "spec"), *taints, *t;
	bool has = false;
	size_t i;

	if (node_quantities(c, node) < 0)
		return -1;
	taints = json_object_get(spec, "taints");
	if (!json_is_array(taints)) {
		taints = json_array();
		json_object_set_new(spec, "taints", taints);
	}
	json_array_foreach(taints, i, t) {
		const char *k = json_string_value(json_object_get(t, "key"));
		const char *e = json_string_value(json_object_get(t, "effect"));

		has |= k && e && !strcmp(k, "node.kubernetes.io/not-ready") &&
		       !strcmp(e, "NoSchedule");
	}
	if (!has)
		json_array_append_new(taints, json_pack("{ssss}", "key",
			"node.kubernetes.io/not-ready", "effect", "NoSchedule"));
	node_status_defaults(node);
	return 0;
}

static int node_update(struct kerf_ta_ctx *c, const json_t *old, json_t *node)
{
	(void)old;
	if (node_quantities(c, node) < 0)
		return -1;
	node_status_defaults(node);
	return 0;
}

static const struct kerf_ta_hooks node_hooks = {
	.create = node_create,
	.update = node_update,
};

/* -- namespaces -- */

static int ns_create(struct kerf_ta_ctx *c, json_t *ns)
{
	const char *name = kerf_ta_str(ns, "metadata.name");

	(void)c;
	json_object_set_new(kerf_ta_path_mk(ns, "metadata.labels"),
			    "kubernetes.io/metadata.name", json_string(name));
	json_object_set_new(kerf_ta_path_mk(ns, "spec"), "finalizers",
			    json_pack("[s]", "kubernetes"));
	json_object_set_new(ns, "status", json_pack("{ss}", "phase", "Active"));
	return 0;
}

static const struct kerf_ta_hooks ns_hooks = {
	.create = ns_create,
};

/* -- leases -- */

static int microtimes(struct kerf_ta_ctx *c, const json_t *obj,
		      const char *const *paths, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const json_t *v = kerf_ta_path(obj, paths[i]);
		char msg[512];

		if (!v || json_is_null(v))
			continue;
		if (!json_is_string(v) ||
		    kerf_ta_microtime_check(json_string_value(v), msg,
					    sizeof(msg)) < 0) {
			if (!json_is_string(v))
				snprintf(msg, sizeof(msg),
					 "%s: expected a string", paths[i]);
			return kerf_ta_statusf(c->rs, 400, "BadRequest", NULL,
					       "%s in version \"%s\" cannot be handled as a %s: %s",
					       c->k->kind, c->k->version,
					       c->k->kind, msg);
		}
	}
	return 0;
}

static int lease_check(struct kerf_ta_ctx *c, json_t *lease)
{
	static const char *const times[] = { "spec.acquireTime",
					     "spec.renewTime" };
	const json_t *d = kerf_ta_path(lease, "spec.leaseDurationSeconds");
	json_t *causes;

	if (microtimes(c, lease, times, 2) < 0)
		return -1;
	if (d && json_integer_value(d) <= 0) {
		causes = json_array();
		kerf_ta_cause_add(causes, "FieldValueInvalid",
				  "spec.leaseDurationSeconds",
				  "Invalid value: %lld: must be greater than 0",
				  (long long)json_integer_value(d));
		return kerf_ta_invalid(c->rs, c->k,
				       kerf_ta_str(lease, "metadata.name"),
				       causes);
	}
	return 0;
}

static int lease_update(struct kerf_ta_ctx *c, const json_t *old, json_t *l)
{
	(void)old;
	return lease_check(c, l);
}

static const struct kerf_ta_hooks lease_hooks = {
	.create = lease_check,
	.update = lease_update,
};

/* -- events -- */

static int core_event_check(struct kerf_ta_ctx *c, json_t *ev)
{
	static const char *const times[] = { "eventTime", "series.lastObservedTime" };

	return microtimes(c, ev, times, 2);
}

static int core_event_update(struct kerf_ta_ctx *c, const json_t *old,
			     json_t *ev)
{
	(void)old;
	return core_event_check(c, ev);
}

static const struct kerf_ta_hooks core_event_hooks = {
	.create = core_event_check,
	.update = core_event_update,
};

static void move(json_t *dst, const char *dk, const json_t *src,
		 const char *sk, bool null_if_absent)
{
	json_t *v = json_object_get(src, sk);

	if (v)
		json_object_set_new(dst, dk, json_deep_copy(v));
	else if (null_if_absent)
		json_object_set_new(dst, dk, json_null());
}

/* core/v1 Event -> events.k8s.io/v1 Event */
static json_t *event_view(const json_t *s)
{
	json_t *o = json_object();
	json_t *cnt = json_object_get(s, "count");

	json_object_set_new(o, "kind", json_string("Event"));
	json_object_set_new(o, "apiVersion", json_string("events.k8s.io/v1"));
	move(o, "metadata", s, "metadata", false);
	move(o, "eventTime", s, "eventTime", true);
	move(o, "series", s, "series", false);
	move(o, "reportingController", s, "reportingComponent", false);
	move(o, "reportingInstance", s, "reportingInstance", false);
	move(o, "action", s, "action", false);
	move(o, "reason", s, "reason", false);
	move(o, "regarding", s, "involvedObject", false);
	move(o, "related", s, "related", false);
	move(o, "note", s, "message", false);
	move(o, "type", s, "type", false);
	move(o, "deprecatedSource", s, "source", false);
	if (!json_object_get(o, "deprecatedSource"))
		json_object_set_new(o, "deprecatedSource", json_object());
	move(o, "deprecatedFirstTimestamp", s, "firstTimestamp", true);
	move(o, "deprecatedLastTimestamp", s, "lastTimestamp", true);
	if (json_integer_value(cnt))
		json_object_set_new(o, "deprecatedCount", json_deep_copy(cnt));
	if (!json_string_length(json_object_get(o, "reportingInstance")))
		json_object_del(o, "reportingInstance");
	return o;
}

/* events.k8s.io/v1 Event -> core/v1 Event */
static json_t *event_unview(const json_t *b)
{
	json_t *o = json_object();
	json_t *cnt = json_object_get(b, "deprecatedCount");

	json_object_set_new(o, "kind", json_string("Event"));
	json_object_set_new(o, "apiVersion", json_string("v1"));
	move(o, "metadata", b, "metadata", false);
	move(o, "involvedObject", b, "regarding", false);
	move(o, "reason", b, "reason", false);
	move(o, "message", b, "note", false);
	move(o, "source", b, "deprecatedSource", false);
	if (!json_object_get(o, "source"))
		json_object_set_new(o, "source", json_object());
	move(o, "firstTimestamp", b, "deprecatedFirstTimestamp", true);
	move(o, "lastTimestamp", b, "deprecatedLastTimestamp", true);
	if (json_integer_value(cnt))
		json_object_set_new(o, "count", json_deep_copy(cnt));
	move(o, "type", b, "type", false);
	move(o, "eventTime", b, "eventTime", true);
	move(o, "series", b, "series", false);
	move(o, "related", b, "related", false);
	move(o, "action", b, "action", false);
	move(o, "reportingComponent", b, "reportingController", false);
	move(o, "reportingInstance", b, "reportingInstance", false);
	return o;
}

static int new_event_check(struct kerf_ta_ctx *c, json_t *ev)
{
	json_t *causes = json_array();

	if (core_event_check(c, ev) < 0) {
		json_decref(causes);
		return -1;
	}
	/* a missing eventTime is reported alone, as 1.34 does */
	if (!json_is_string(json_object_get(ev, "eventTime")))
		kerf_ta_cause_add(causes, "FieldValueRequired", "eventTime",
				  "Required value");
	else if (!json_string_length(json_object_get(ev, "reportingComponent")))
		kerf_ta_cause_add(causes, "FieldValueRequired",
				  "reportingController", "Required value");
	else if (!json_string_length(json_object_get(ev, "reportingInstance")))
		kerf_ta_cause_add(causes, "FieldValueRequired",
				  "reportingInstance", "Required value");
	else if (!json_string_length(json_object_get(ev, "action")))
		kerf_ta_cause_add(causes, "FieldValueRequired", "action",
				  "Required value");
	if (json_array_size(causes)) {
		static const struct kerf_ta_kind shown = {
			.group = "", .kind = "Event",
		};

		return kerf_ta_invalid(c->rs, &shown,
				       kerf_ta_str(ev, "metadata.name"),
				       causes);
	}
	json_decref(causes);
	return 0;
}

static int new_event_update(struct kerf_ta_ctx *c, const json_t *old,
			    json_t *ev)
{
	static const struct kerf_ta_kind shown = { .group = "", .kind = "Event" };
	static const char *const fixed[] = { "message", "eventTime" };
	json_t *causes;
	size_t i;

	if (core_event_check(c, ev) < 0)
		return -1;
	causes = json_array();
	for (i = 0; i < 2; i++) {
		const json_t *a = json_object_get(old, fixed[i]);
		const json_t *b = json_object_get(ev, fixed[i]);
		char *s;

		if (json_equal(a, b) || (!a && json_is_null(b)) ||
		    (json_is_null(a) && !b))
			continue;
		s = json_is_string(b) ? NULL : kerf_ta_dump(b, false, NULL);
		kerf_ta_cause_add(causes, "FieldValueInvalid", fixed[i],
				  "Invalid value: \"%s\": field is immutable",
				  s ? s : json_string_value(b));
		free(s);
	}
	if (json_array_size(causes))
		return kerf_ta_invalid(c->rs, &shown,
				       kerf_ta_str(ev, "metadata.name"),
				       causes);
	json_decref(causes);
	return 0;
}

static const struct kerf_ta_hooks new_event_hooks = {
	.create = new_event_check,
	.update = new_event_update,
	.view = event_view,
	.unview = event_unview,
};

/* -- PodDisruptionBudgets -- */

static int pdb_create(struct kerf_ta_ctx *c, json_t *pdb)
{
	(void)c;
	json_object_set_new(pdb, "status",
			    json_pack("{sisisisi}", "disruptionsAllowed", 0,
				      "currentHealthy", 0, "desiredHealthy", 0,
				      "expectedPods", 0));
	return 0;
}

static const struct kerf_ta_hooks pdb_hooks = {
	.create = pdb_create,
};

/* -- the table -- */

struct builtin {
	const char *group, *version, *plural, *singular, *kind, *res;
	const char *short_names;
	unsigned flags;
	const char *verbs;
	const struct kerf_ta_hooks *hooks;
};

static const struct builtin builtins[] = {
	{ "", "v1", "namespaces", "namespace", "Namespace", "namespaces",
	  "[\"ns\"]", KERF_TA_STATUS, verbs_ns, &ns_hooks },
	{ "", "v1", "nodes", "node", "Node", "nodes", "[\"no\"]",
	  KERF_TA_STATUS | KERF_TA_KEEP_STATUS, verbs_all, &node_hooks },
	{ "", "v1", "pods", "pod", "Pod", "pods", "[\"po\"]",
	  KERF_TA_NAMESPACED | KERF_TA_STATUS | KERF_TA_GENERATION, verbs_all,
	  &kerf_ta_pod_hooks },
	{ "", "v1", "bindings", "binding", "Binding", "bindings", NULL,
	  KERF_TA_NAMESPACED, "[\"create\"]", NULL },
	{ "", "v1", "events", "event", "Event", "events", "[\"ev\"]",
	  KERF_TA_NAMESPACED, verbs_all, &core_event_hooks },
	{ "", "v1", "configmaps", "configmap", "ConfigMap", "configmaps",
	  "[\"cm\"]", KERF_TA_NAMESPACED, verbs_all, NULL },
	{ "events.k8s.io", "v1", "events", "event", "Event", "events",
	  "[\"ev\"]", KERF_TA_NAMESPACED, verbs_all, &new_event_hooks },
	{ "coordination.k8s.io", "v1", "leases", "lease", "Lease",
	  "leases.coordination.k8s.io", NULL, KERF_TA_NAMESPACED, verbs_all,
	  &lease_hooks },
	{ "policy", "v1", "poddisruptionbudgets", "poddisruptionbudget",
	  "PodDisruptionBudget", "poddisruptionbudgets.policy", "[\"pdb\"]",
	  KERF_TA_NAMESPACED | KERF_TA_STATUS | KERF_TA_GENERATION, verbs_all,
	  &pdb_hooks },
	{ "scheduling.k8s.io", "v1", "priorityclasses", "priorityclass",
	  "PriorityClass", "priorityclasses.scheduling.k8s.io", "[\"pc\"]",
	  KERF_TA_GENERATION, verbs_all, NULL },
	{ "admissionregistration.k8s.io", "v1",
	  "mutatingwebhookconfigurations", "mutatingwebhookconfiguration",
	  "MutatingWebhookConfiguration",
	  "mutatingwebhookconfigurations.admissionregistration.k8s.io", NULL,
	  KERF_TA_GENERATION, verbs_all, &kerf_ta_mwc_hooks },
	{ "admissionregistration.k8s.io", "v1",
	  "validatingwebhookconfigurations", "validatingwebhookconfiguration",
	  "ValidatingWebhookConfiguration",
	  "validatingwebhookconfigurations.admissionregistration.k8s.io", NULL,
	  KERF_TA_GENERATION, verbs_all, &kerf_ta_vwc_hooks },
	{ "apiextensions.k8s.io", "v1", "customresourcedefinitions",
	  "customresourcedefinition", "CustomResourceDefinition",
	  "customresourcedefinitions.apiextensions.k8s.io", "[\"crd\",\"crds\"]",
	  KERF_TA_STATUS | KERF_TA_GENERATION, verbs_all, &kerf_ta_crd_hooks },
};

int kerf_ta_kinds_builtin(struct kerf_testapi_store *st)
{
	static const char *const namespaces[] = {
		"default", "kube-system", "kube-public", "kube-node-lease",
	};
	size_t i;

	for (i = 0; i < sizeof(builtins) / sizeof(*builtins); i++) {
		const struct builtin *b = &builtins[i];
		struct kerf_ta_kind *k = calloc(1, sizeof(*k));
		char lk[128];

		if (!k)
			return -KERF_ENOMEM;
		snprintf(lk, sizeof(lk), "%sList", b->kind);
		k->group = kerf_strdup(b->group);
		k->version = kerf_strdup(b->version);
		k->plural = kerf_strdup(b->plural);
		k->singular = kerf_strdup(b->singular);
		k->kind = kerf_strdup(b->kind);
		k->list_kind = kerf_strdup(lk);
		k->short_names = b->short_names ?
			json_loads(b->short_names, 0, NULL) : NULL;
		k->flags = b->flags;
		if (!strcmp(b->group, "admissionregistration.k8s.io"))
			k->categories = json_pack("[s]", "api-extensions");
		k->verbs = b->verbs;
		k->hooks = b->hooks;
		k->res = kerf_ta_res_get(st, b->res);
		if (!k->group || !k->version || !k->plural || !k->singular ||
		    !k->kind || !k->list_kind || !k->res ||
		    kerf_ta_kind_add(st, k) < 0) {
			kerf_ta_kind_free(k);
			return -KERF_ENOMEM;
		}
	}
	for (i = 0; i < sizeof(namespaces) / sizeof(*namespaces); i++)
		kerf_ta_ensure_ns(st, namespaces[i]);
	return 0;
}

void kerf_ta_ensure_ns(struct kerf_testapi_store *st, const char *ns)
{
	struct kerf_ta_res *r = kerf_ta_res_get(st, "namespaces");
	char uid[37], now[32];
	json_t *o;

	if (!r || kerf_ta_obj_get(r, NULL, ns))
		return;
	kerf_ta_new_uid(st, uid);
	kerf_ta_now(now);
	o = json_pack("{sssss{sssssss{ss}}s{s[s]}s{ss}}", "kind", "Namespace",
		      "apiVersion", "v1", "metadata", "name", ns, "uid", uid,
		      "creationTimestamp", now, "labels",
		      "kubernetes.io/metadata.name", ns, "spec", "finalizers",
		      "kubernetes", "status", "phase", "Active");
	if (o)
		kerf_ta_obj_create(st, r, o, NULL);
}
