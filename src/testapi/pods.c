/*
 * pods: what kube-apiserver adds to and checks of pods, and the pods/binding
 * and pods/eviction subresources.
 *
 * Create: limits copied to requests where requests are unset, container
 * and pod defaults, the DefaultTolerationSeconds tolerations (not-ready
 * and unreachable, NoExecute, 300 s), priority 0, qosClass, phase Pending.
 * Conditions are written back with lastProbeTime/lastTransitionTime null
 * where unset, as Go's struct without omitempty serialises them.
 *
 * Binding: 201 with a Success Status (not the Binding), nodeName set,
 * PodScheduled=True added, the Binding's annotations copied; the node need
 * not exist; errors as the transcripts show (400, 404, 409, 500).
 *
 * Eviction: policy/v1 PodDisruptionBudgets with no disruption controller:
 * a PDB whose status nobody wrote is 429 with Retry-After 10; one with
 * disruptionsAllowed 0 is 429; otherwise the server itself decrements it
 * and records the pod in disruptedPods.  Only Running pods count; two PDBs
 * over one pod are 500.
 */
#include "testapi/testapi_int.h"
#include "testapi/webhook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/quantity.h"

bool kerf_ta_pod_bound(const json_t *pod)
{
	const char *n = kerf_ta_str(pod, "spec.nodeName");

	return n && *n;
}

static void set_default(json_t *o, const char *key, json_t *v)
{
	if (!json_object_get(o, key))
		json_object_set_new(o, key, v);
	else
		json_decref(v);
}

/* Go's PodCondition key order, with the unset timestamps as null. */
void kerf_ta_pod_conditions_norm(json_t *pod)
{
	static const char *const order[] = {
		"type", "status", "observedGeneration", "lastProbeTime",
		"lastTransitionTime", "reason", "message",
	};
	json_t *conds = kerf_ta_path(pod, "status.conditions"), *c;
	size_t i, j;

	json_array_foreach(conds, i, c) {
		json_t *n = json_object();
		const char *key;
		json_t *v;

		if (!json_is_object(c) || !n) {
			json_decref(n);
			continue;
		}
		for (j = 0; j < sizeof(order) / sizeof(*order); j++) {
			v = json_object_get(c, order[j]);
			if (v)
				json_object_set(n, order[j], v);
			else if (j == 3 || j == 4)
				json_object_set_new(n, order[j], json_null());
		}
		json_object_foreach(c, key, v)
			if (!json_object_get(n, key))
				json_object_set(n, key, v);
		json_array_set_new(conds, i, n);
	}
}

static bool is_compute(const char *r)
{
	return !strcmp(r, "cpu") || !strcmp(r, "memory");
}

static const char *qos_class(const json_t *spec)
{
	json_t *ctr;
	size_t i;
	bool any = false, guaranteed = true;

	json_array_foreach(json_object_get(spec, "containers"), i, ctr) {
		json_t *req = kerf_ta_path(ctr, "resources.requests");
		json_t *lim = kerf_ta_path(ctr, "resources.limits");
		const char *r;
		json_t *v;
		int n = 0;

		json_object_foreach(req, r, v)
			if (is_compute(r))
				any = true;
		json_object_foreach(lim, r, v)
			if (is_compute(r)) {
				any = true;
				n++;
				if (!json_equal(v, json_object_get(req, r)))
					guaranteed = false;
			}
		if (n < 2)
			guaranteed = false;
	}
	return !any ? "BestEffort" : guaranteed ? "Guaranteed" : "Burstable";
}

static bool has_toleration(const json_t *tols, const char *key)
{
	json_t *t;
	size_t i;

	json_array_foreach(tols, i, t) {
		const char *k = json_string_value(json_object_get(t, "key"));
		const char *e = json_string_value(json_object_get(t, "effect"));

		if (k && !strcmp(k, key) && (!e || !strcmp(e, "NoExecute")))
			return true;
	}
	return false;
}

static void default_container(json_t *ctr)
{
	const char *img = json_string_value(json_object_get(ctr, "image"));
	json_t *res = json_object_get(ctr, "resources");
	json_t *lim = json_object_get(res, "limits");
	const char *r;
	json_t *v;

	if (json_object_size(lim)) {
		json_t *req = kerf_ta_path_mk(ctr, "resources.requests");

		json_object_foreach(lim, r, v)
			set_default(req, r, json_deep_copy(v));
	}
	if (!res)
		json_object_set_new(ctr, "resources", json_object());
	set_default(ctr, "terminationMessagePath",
		    json_string("/dev/termination-log"));
	set_default(ctr, "terminationMessagePolicy", json_string("File"));
	set_default(ctr, "imagePullPolicy",
		    json_string(img && strchr(img, ':') &&
					!strstr(img, ":latest") ?
				"IfNotPresent" : "Always"));
}

static int check_quantities(struct kerf_ta_ctx *c, const json_t *spec,
			    json_t *causes)
{
	json_t *ctr;
	size_t i;

	json_array_foreach(json_object_get(spec, "containers"), i, ctr) {
		static const char *const kinds[] = { "limits", "requests" };
		size_t k;

		for (k = 0; k < 2; k++) {
			json_t *m = kerf_ta_path(ctr, kinds[k]), *v;
			const char *r;

			m = json_object_get(json_object_get(ctr, "resources"),
					    kinds[k]);
			json_object_foreach(m, r, v) {
				int64_t q;
				char field[512];
				const char *s = json_string_value(v);

				snprintf(field, sizeof(field),
					 "spec.containers[%zu].resources.%s[%s]",
					 i, kinds[k], r);
				if (!s || kerf_quantity_parse_milli(s, &q) < 0)
					kerf_ta_cause_add(causes,
							  "FieldValueInvalid",
							  field,
							  "Invalid value: \"%s\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
							  s ? s : "");
				else if (strchr(r, '/') && !is_compute(r) &&
					 q % 1000)
					kerf_ta_cause_add(causes,
							  "FieldValueInvalid",
							  field,
							  "Invalid value: \"%s\": must be an integer",
							  s);
			}
		}
	}
	(void)c;
	return 0;
}

static int pod_create(struct kerf_ta_ctx *c, json_t *pod)
{
	json_t *spec = json_object_get(pod, "spec"), *ctr, *tols, *status;
	json_t *causes = json_array();
	size_t i;

	if (!json_is_object(spec)) {
		spec = json_object();
		json_object_set_new(pod, "spec", spec);
	}
	if (!json_array_size(json_object_get(spec, "containers")))
		kerf_ta_cause_add(causes, "FieldValueRequired", "spec.containers",
				  "Required value");
	check_quantities(c, spec, causes);
	if (json_array_size(causes))
		return kerf_ta_invalid(c->rs, c->k,
				       kerf_ta_str(pod, "metadata.name"),
				       causes);
	json_decref(causes);
	json_array_foreach(json_object_get(spec, "containers"), i, ctr)
		default_container(ctr);
	json_array_foreach(json_object_get(spec, "initContainers"), i, ctr)
		default_container(ctr);
	set_default(spec, "restartPolicy", json_string("Always"));
	set_default(spec, "terminationGracePeriodSeconds", json_integer(30));
	set_default(spec, "dnsPolicy", json_string("ClusterFirst"));
	set_default(spec, "securityContext", json_object());
	set_default(spec, "schedulerName", json_string("default-scheduler"));
	tols = json_object_get(spec, "tolerations");
	if (!json_is_array(tols)) {
		tols = json_array();
		json_object_set_new(spec, "tolerations", tols);
	}
	if (!has_toleration(tols, "node.kubernetes.io/not-ready"))
		json_array_append_new(tols, json_pack("{sssssssi}", "key",
			"node.kubernetes.io/not-ready", "operator", "Exists",
			"effect", "NoExecute", "tolerationSeconds", 300));
	if (!has_toleration(tols, "node.kubernetes.io/unreachable"))
		json_array_append_new(tols, json_pack("{sssssssi}", "key",
			"node.kubernetes.io/unreachable", "operator", "Exists",
			"effect", "NoExecute", "tolerationSeconds", 300));
	if (kerf_ta_pod_priority(c, pod, spec) < 0)
		return -1;
	set_default(spec, "enableServiceLinks", json_true());
	status = json_object();
	json_object_set_new(status, "phase", json_string("Pending"));
	json_object_set_new(status, "qosClass", json_string(qos_class(spec)));
	json_object_set_new(pod, "status", status);
	return 0;
}

static int pod_update(struct kerf_ta_ctx *c, const json_t *old, json_t *pod)
{
	(void)c;
	(void)old;
	kerf_ta_pod_conditions_norm(pod);
	return 0;
}

const struct kerf_ta_hooks kerf_ta_pod_hooks = {
	.create = pod_create,
	.update = pod_update,
};

static const struct kerf_ta_kind *pods_kind(struct kerf_ta_ctx *c)
{
	return kerf_ta_kind_find(c->st, "", "v1", "pods");
}

/*
 * Admission webhooks on a CREATE of pods/binding or pods/eviction: obj is
 * what the webhooks see (a Binding, a policy/v1 Eviction; mutating ones
 * may change it).  0, or -1 with rs set.
 */
static int admit_sub(struct kerf_ta_ctx *c, json_t *obj, const char *group,
		     const char *kind, const char *name)
{
	struct kerf_ta_ctx pc = *c;
	struct kerf_ta_admit a;
	bool unlocked = false;
	int rc;

	pc.k = pods_kind(c);
	kerf_ta_admit_init(&pc, &a, "CREATE");
	a.at.sub = !strcmp(kind, "Binding") ? "binding" : "eviction";
	a.kind_group = group;
	a.kind = kind;
	a.name = name;
	a.obj = obj;
	rc = kerf_ta_admit_mutate(&pc, &a, &unlocked);
	if (rc == 0)
		rc = kerf_ta_admit_validate(&pc, &a, &unlocked);
	kerf_ta_admit_release(&a);
	return rc;
}

/* The object a webhook sees of a pods/binding or pods/eviction body. */
static json_t *sub_object(struct kerf_ta_ctx *c, const json_t *body,
			  const char *api, const char *kind)
{
	json_t *o = json_pack("{ssss}", "kind", kind, "apiVersion", api);
	json_t *md = json_deep_copy(json_object_get(body, "metadata"));
	const char *key;
	json_t *v;

	if (!json_is_object(md)) {
		json_decref(md);
		md = json_object();
	}
	json_object_set_new(md, "namespace", json_string(c->rq->ns));
	json_object_set_new(o, "metadata", md);
	json_object_foreach((json_t *)body, key, v)
		if (strcmp(key, "kind") && strcmp(key, "apiVersion") &&
		    strcmp(key, "metadata"))
			json_object_set(o, key, v);
	return o;
}

void kerf_ta_binding(struct kerf_ta_ctx *c)
{
	const struct kerf_ta_kind *pk = pods_kind(c);
	struct kerf_ta_obj *o;
	json_t *b, *pod, *conds, *anns, *v, *cond;
	const char *name, *ns, *target, *uid, *key;
	char now[32];
	size_t i;

	b = json_loadb(c->rq->body, c->rq->len, 0, NULL);
	if (!json_is_object(b)) {
		json_decref(b);
		kerf_ta_status(c->rs, 400, "BadRequest",
			       "the object provided is unrecognized (must be of type Binding)",
			       NULL);
		return;
	}
	name = kerf_ta_str(b, "metadata.name");
	ns = kerf_ta_str(b, "metadata.namespace");
	target = kerf_ta_str(b, "target.name");
	uid = kerf_ta_str(b, "metadata.uid");
	if (ns && *ns && strcmp(ns, c->rq->ns)) {
		kerf_ta_status(c->rs, 400, "BadRequest",
			       "the namespace of the provided object does not match the namespace sent on the request",
			       NULL);
		goto out;
	}
	if (c->rq->name && (!name || strcmp(name, c->rq->name))) {
		kerf_ta_status(c->rs, 400, "BadRequest",
			       "name in URL does not match name in Binding object",
			       NULL);
		goto out;
	}
	if (!name || !*name) {
		kerf_ta_status(c->rs, 400, "BadRequest",
			       "name in URL does not match name in Binding object",
			       NULL);
		goto out;
	}
	if (!target || !*target) {
		kerf_ta_status(c->rs, 500, NULL, "target.name: Required value",
			       NULL);
		goto out;
	}
	{
		json_t *seen = sub_object(c, b, "v1", "Binding");
		int rc = admit_sub(c, seen, "", "Binding", name);

		if (rc == 0) {
			/* a mutating webhook's change is what is bound */
			json_decref(b);
			b = seen;
		} else {
			json_decref(seen);
			goto out;
		}
	}
	name = kerf_ta_str(b, "metadata.name");
	target = kerf_ta_str(b, "target.name");
	uid = kerf_ta_str(b, "metadata.uid");
	if (!name || !target) {
		kerf_ta_status(c->rs, 500, NULL, "target.name: Required value",
			       NULL);
		goto out;
	}
	o = kerf_ta_obj_get(pk->res, c->rq->ns, name);
	if (!o) {
		kerf_ta_not_found(c->rs, pk, name);
		goto out;
	}
	if (uid && *uid && strcmp(uid, kerf_ta_str(o->obj, "metadata.uid"))) {
		kerf_ta_statusf(c->rs, 409, "Conflict",
				kerf_ta_details(pk, name),
				"Operation cannot be fulfilled on pods \"%s\": StorageError: invalid object, Code: 4, Key: /registry/pods/%s/%s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in object meta: %s",
				name, c->rq->ns, name, uid,
				kerf_ta_str(o->obj, "metadata.uid"));
		goto out;
	}
	if (kerf_ta_pod_bound(o->obj)) {
		kerf_ta_statusf(c->rs, 409, "Conflict",
				json_pack("{ssss}", "name", name, "kind",
					  "pods/binding"),
				"Operation cannot be fulfilled on pods/binding \"%s\": pod %s is already assigned to node \"%s\"",
				name, name, kerf_ta_str(o->obj, "spec.nodeName"));
		goto out;
	}
	if (kerf_ta_path(o->obj, "metadata.deletionTimestamp")) {
		kerf_ta_statusf(c->rs, 409, "Conflict",
				json_pack("{ssss}", "name", name, "kind",
					  "pods/binding"),
				"Operation cannot be fulfilled on pods/binding \"%s\": pod %s is being deleted, cannot be assigned to a host",
				name, name);
		goto out;
	}
	if (c->dry_run) {
		kerf_ta_status(c->rs, 201, NULL, NULL, NULL);
		goto out;
	}
	pod = json_deep_copy(o->obj);
	json_object_set_new(json_object_get(pod, "spec"), "nodeName",
			    json_string(target));
	anns = kerf_ta_path(b, "metadata.annotations");
	if (json_object_size(anns)) {
		json_t *pa = kerf_ta_path_mk(pod, "metadata.annotations");

		json_object_foreach(anns, key, v)
			json_object_set(pa, key, v);
	}
	conds = kerf_ta_path(pod, "status.conditions");
	if (!json_is_array(conds)) {
		conds = json_array();
		json_object_set_new(kerf_ta_path_mk(pod, "status"), "conditions",
				    conds);
	}
	kerf_ta_now(now);
	json_array_foreach(conds, i, cond) {
		const char *t = json_string_value(json_object_get(cond, "type"));

		if (t && !strcmp(t, "PodScheduled")) {
			json_array_remove(conds, i);
			break;
		}
	}
	json_array_append_new(conds, json_pack("{ssssss}", "type",
					       "PodScheduled", "status", "True",
					       "lastTransitionTime", now));
	kerf_ta_pod_conditions_norm(pod);
	kerf_ta_obj_update(c->st, pk->res, o, pod);
	kerf_ta_status(c->rs, 201, NULL, NULL, NULL);
out:
	json_decref(b);
}

/* The PDBs of ns selecting pod: 0 none, 1 (*out set), 2 more. */
static int find_pdb(struct kerf_ta_ctx *c, const json_t *pod,
		    struct kerf_ta_obj **out)
{
	const struct kerf_ta_kind *k =
		kerf_ta_kind_find(c->st, "policy", "v1", "poddisruptionbudgets");
	const json_t *labels = kerf_ta_path(pod, "metadata.labels");
	const char *ns = kerf_ta_str(pod, "metadata.namespace");
	struct kerf_ta_obj *o;
	int n = 0;
	size_t i;

	if (!k)
		return 0;
	for (i = 0; (o = kerf_map_next(&k->res->objs, &i));) {
		const char *pns;

		pns = kerf_ta_str(o->obj, "metadata.namespace");
		if (!pns || strcmp(pns, ns) ||
		    !kerf_ta_labels_match(kerf_ta_path(o->obj, "spec.selector"),
					  labels))
			continue;
		*out = o;
		n++;
	}
	return n > 1 ? 2 : n;
}

static int disruption_budget(struct kerf_ta_ctx *c, const json_t *pod,
			     bool dry)
{
	const struct kerf_ta_kind *k =
		kerf_ta_kind_find(c->st, "policy", "v1", "poddisruptionbudgets");
	struct kerf_ta_obj *pdb = NULL;
	const char *phase = kerf_ta_str(pod, "status.phase");
	const char *pname;
	json_t *st, *n, *conds;
	int64_t allowed;
	char now[32];
	int found;

	if (!phase || strcmp(phase, "Running"))
		return 0;
	found = find_pdb(c, pod, &pdb);
	if (!found)
		return 0;
	if (found > 1)
		return kerf_ta_status(c->rs, 500, NULL,
				      "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
				      NULL);
	pname = kerf_ta_str(pdb->obj, "metadata.name");
	st = json_object_get(pdb->obj, "status");
	if (json_integer_value(json_object_get(st, "observedGeneration")) <
	    json_integer_value(kerf_ta_path(pdb->obj, "metadata.generation"))) {
		char m[512];

		snprintf(m, sizeof(m),
			 "The disruption budget %s is still being processed by the server.",
			 pname);
		c->rs->retry_after_s = 10;
		return kerf_ta_status(c->rs, 429, "TooManyRequests",
				      "Cannot evict pod as it would violate the pod's disruption budget.",
				      json_pack("{s[{ssss}]si}", "causes",
						"reason", "DisruptionBudget",
						"message", m,
						"retryAfterSeconds", 10));
	}
	allowed = json_integer_value(json_object_get(st, "disruptionsAllowed"));
	if (allowed <= 0) {
		char m[512];

		snprintf(m, sizeof(m),
			 "The disruption budget %s needs %lld healthy pods and has %lld currently",
			 pname,
			 (long long)json_integer_value(json_object_get(st, "desiredHealthy")),
			 (long long)json_integer_value(json_object_get(st, "currentHealthy")));
		return kerf_ta_status(c->rs, 429, "TooManyRequests",
				      "Cannot evict pod as it would violate the pod's disruption budget.",
				      json_pack("{s[{ssss}]}", "causes",
						"reason", "DisruptionBudget",
						"message", m));
	}
	if (dry)
		return 0;
	n = json_deep_copy(pdb->obj);
	st = json_object_get(n, "status");
	kerf_ta_now(now);
	json_object_set_new(st, "disruptionsAllowed", json_integer(allowed - 1));
	json_object_set_new(kerf_ta_path_mk(n, "status.disruptedPods"),
			    kerf_ta_str(pod, "metadata.name"), json_string(now));
	if (allowed - 1 == 0) {
		json_t *cond;
		size_t i;

		conds = json_object_get(st, "conditions");
		json_array_foreach(conds, i, cond) {
			const char *t = json_string_value(json_object_get(cond, "type"));
			const char *s = json_string_value(json_object_get(cond, "status"));

			if (!t || strcmp(t, "DisruptionAllowed"))
				continue;
			if (!s || strcmp(s, "False"))
				json_object_set_new(cond, "lastTransitionTime",
						    json_string(now));
			json_object_set_new(cond, "status", json_string("False"));
			json_object_set_new(cond, "reason",
					    json_string("InsufficientPods"));
			json_object_set_new(cond, "message", json_string(""));
		}
	}
	kerf_ta_obj_update(c->st, k->res, pdb, n);
	return 0;
}

void kerf_ta_eviction(struct kerf_ta_ctx *c)
{
	const struct kerf_ta_kind *pk = pods_kind(c);
	struct kerf_ta_obj *o;
	json_t *ev, *opts, *shown = NULL, *pod, *conds;
	const char *name;
	bool dry = c->dry_run;
	char now[32];

	ev = json_loadb(c->rq->body, c->rq->len, 0, NULL);
	if (!json_is_object(ev)) {
		json_decref(ev);
		kerf_ta_status(c->rs, 400, "BadRequest",
			       "the object provided is unrecognized (must be of type Eviction)",
			       NULL);
		return;
	}
	name = kerf_ta_str(ev, "metadata.name");
	if (!name || strcmp(name, c->rq->name)) {
		kerf_ta_status(c->rs, 400, "BadRequest",
			       "name in URL does not match name in Eviction object",
			       NULL);
		goto out;
	}
	{
		json_t *seen = sub_object(c, ev, "policy/v1", "Eviction");
		int rc = admit_sub(c, seen, "policy", "Eviction", name);

		json_decref(seen);
		if (rc < 0)
			goto out;
	}
	o = kerf_ta_obj_get(pk->res, c->rq->ns, name);
	if (!o) {
		kerf_ta_not_found(c->rs, pk, name);
		goto out;
	}
	opts = json_object_get(ev, "deleteOptions");
	dry |= json_array_size(json_object_get(opts, "dryRun")) > 0;
	if (disruption_budget(c, o->obj, dry) < 0)
		goto out;
	if (dry) {
		kerf_ta_status(c->rs, 201, NULL, NULL, NULL);
		goto out;
	}
	if (kerf_ta_pod_bound(o->obj)) {
		json_t *cond;
		size_t i;

		pod = json_deep_copy(o->obj);
		conds = kerf_ta_path(pod, "status.conditions");
		if (!json_is_array(conds)) {
			conds = json_array();
			json_object_set_new(kerf_ta_path_mk(pod, "status"),
					    "conditions", conds);
		}
		json_array_foreach(conds, i, cond) {
			const char *t = json_string_value(json_object_get(cond, "type"));

			if (t && !strcmp(t, "DisruptionTarget")) {
				json_array_remove(conds, i);
				break;
			}
		}
		kerf_ta_now(now);
		json_array_append_new(conds, json_pack("{ssssssssss}", "type",
			"DisruptionTarget", "status", "True",
			"lastTransitionTime", now, "reason",
			"EvictionByEvictionAPI", "message",
			"Eviction API: evicting"));
		kerf_ta_pod_conditions_norm(pod);
		kerf_ta_obj_update(c->st, pk->res, o, pod);
	}
	{
		struct kerf_ta_ctx pc = *c;

		pc.k = pk;
		pc.dry_run = false;
		pc.no_admission = true; /* only the eviction is admitted */
		if (kerf_ta_delete_obj(&pc, o, opts, &shown) < 0)
			goto out;
	}
	json_decref(shown);
	kerf_ta_status(c->rs, 201, NULL, NULL, NULL);
out:
	json_decref(ev);
}
