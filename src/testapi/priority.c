/*
 * priority: the Priority admission plugin of a real API server, on pod
 * create.  spec.priorityClassName names a PriorityClass (the two system
 * classes are built in); none: the globalDefault class, else priority 0.
 * The plugin sets spec.priority and spec.preemptionPolicy from the class
 * and refuses (403 Forbidden) a class that does not exist, or a priority
 * or policy the pod gave that disagrees with the class.
 */
#include "testapi/testapi_int.h"

#include <string.h>

static const struct {
	const char *name;
	long long value;
} system_classes[] = {
	{ "system-node-critical", 2000001000 },
	{ "system-cluster-critical", 2000000000 },
};

/* The globalDefault PriorityClass, or NULL. */
static const json_t *global_default(const struct kerf_ta_kind *k)
{
	const struct kerf_ta_obj *o;

	for (size_t i = 0; k && (o = kerf_map_next(&k->res->objs, &i));)
		if (json_is_true(json_object_get(o->obj, "globalDefault")))
			return o->obj;
	return NULL;
}

static int forbidden(struct kerf_ta_ctx *c, const json_t *pod, const char *why)
{
	const char *name = kerf_ta_str(pod, "metadata.name");
	json_t *d = json_object();

	json_object_set_new(d, "name", json_string(name ? name : ""));
	json_object_set_new(d, "kind", json_string("pods"));
	return kerf_ta_statusf(c->rs, 403, "Forbidden", d,
			       "pods \"%s\" is forbidden: %s", name ? name : "", why);
}

int kerf_ta_pod_priority(struct kerf_ta_ctx *c, json_t *pod, json_t *spec)
{
	const struct kerf_ta_kind *k =
		kerf_ta_kind_find(c->st, "scheduling.k8s.io", "v1", "priorityclasses");
	const char *cname = json_string_value(json_object_get(spec, "priorityClassName"));
	const char *policy = "PreemptLowerPriority", *given_policy;
	const json_t *pc = NULL, *given;
	long long value = 0;
	char why[512];

	if (cname && *cname) {
		for (size_t i = 0; i < sizeof(system_classes) / sizeof(system_classes[0]); i++)
			if (!strcmp(cname, system_classes[i].name))
				value = system_classes[i].value;
		if (!value) {
			const struct kerf_ta_obj *o = k ? kerf_ta_obj_get(k->res, NULL, cname) : NULL;

			if (!o) {
				snprintf(why, sizeof(why),
					 "no PriorityClass with name %s was found", cname);
				return forbidden(c, pod, why);
			}
			pc = o->obj;
		}
	} else if ((pc = global_default(k))) {
		json_object_set_new(spec, "priorityClassName",
				    json_string(kerf_ta_str(pc, "metadata.name")));
	}
	if (pc) {
		value = json_integer_value(json_object_get(pc, "value"));
		if (json_is_string(json_object_get(pc, "preemptionPolicy")))
			policy = json_string_value(json_object_get(pc, "preemptionPolicy"));
	}
	given = json_object_get(spec, "priority");
	if (given && !json_is_null(given) &&
	    (!json_is_integer(given) || json_integer_value(given) != value)) {
		snprintf(why, sizeof(why),
			 "the integer value of priority (%lld) must not be provided in pod spec; priority admission controller computed %lld from the given PriorityClass name",
			 (long long)json_integer_value(given), value);
		return forbidden(c, pod, why);
	}
	given_policy = json_string_value(json_object_get(spec, "preemptionPolicy"));
	if (given_policy && strcmp(given_policy, policy)) {
		snprintf(why, sizeof(why),
			 "the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name",
			 given_policy, policy);
		return forbidden(c, pod, why);
	}
	json_object_set_new(spec, "priority", json_integer(value));
	json_object_set_new(spec, "preemptionPolicy", json_string(policy));
	return 0;
}
