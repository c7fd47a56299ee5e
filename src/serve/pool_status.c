#include "serve/pool_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kobj/time.h"

struct kerf_cpool *kerf_cpool_decode(const json_t *obj, struct kerf_err *err)
{
	const json_t *meta = json_object_get(obj, "metadata");
	const char *name = json_string_value(json_object_get(meta, "name"));
	struct kerf_kobj_gpupool_status st;
	struct kerf_err ignored = { 0 };
	struct kerf_cpool *cp;

	if (!name || !*name || strlen(name) >= KERF_KOBJ_NAME_MAX) {
		kerf_err_set(err, -KERF_EINVAL, "metadata.name: missing or too long");
		return NULL;
	}
	cp = calloc(1, sizeof(*cp));
	if (!cp) {
		kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		return NULL;
	}
	snprintf(cp->name, sizeof(cp->name), "%s", name);
	cp->generation = json_integer_value(json_object_get(meta, "generation"));
	cp->accepted = kerf_kobj_gpupool_decode(obj, &cp->p, err) == 0;
	if (!cp->accepted)
		snprintf(cp->why, sizeof(cp->why), "%s", err->msg);
	/* a status kerf cannot read is written anew: nothing kept from it */
	if (kerf_kobj_gpupool_status_decode(json_object_get(obj, "status"), &st, &ignored) == 0)
		for (size_t i = 0; i < st.nr_conditions; i++)
			if (!strcmp(st.conditions[i].type, "Accepted")) {
				snprintf(cp->was, sizeof(cp->was), "%s", st.conditions[i].status);
				snprintf(cp->since, sizeof(cp->since), "%s",
					 st.conditions[i].last_transition);
			}
	return cp;
}

int kerf_pool_status_patch(const struct kerf_world *w, const struct kerf_cpool *cp,
			   int64_t now_ms, char **body)
{
	struct kerf_kobj_gpupool_status st = { .observed_generation = cp->generation,
					       .nr_conditions = 1 };
	struct kerf_kobj_condition *c = &st.conditions[0];
	struct kerf_world_pool_usage u = { 0 };
	json_t *patch;

	*body = NULL;
	if (cp->accepted)
		kerf_world_pool_usage(w, cp->name, &u);
	st.nodes = (int32_t)u.nodes;
	st.gpus = (int32_t)u.gpus;
	st.mig_gpus = (int32_t)u.mig_gpus;
	st.allocated_gpu_milli = u.allocated_milli;
	snprintf(c->type, sizeof(c->type), "Accepted");
	snprintf(c->status, sizeof(c->status), "%s", cp->accepted ? "True" : "False");
	snprintf(c->reason, sizeof(c->reason), "%s", cp->accepted ? "Valid" : "Invalid");
	if (cp->accepted)
		snprintf(c->message, sizeof(c->message),
			 "the nodes it selects are of flavor '%s'", cp->name);
	else
		snprintf(c->message, sizeof(c->message), "left out: %s", cp->why);
	c->observed_generation = cp->generation;
	/* the transition time moves only when the status does */
	if (!strcmp(cp->was, c->status) && cp->since[0])
		snprintf(c->last_transition, sizeof(c->last_transition), "%s", cp->since);
	else {
		char now[KERF_TIME_TEXT_MAX];

		/* RFC 3339 to the second: 20 bytes, well inside */
		kerf_time_format(now_ms, now);
		snprintf(c->last_transition, sizeof(c->last_transition), "%.39s", now);
	}
	patch = json_pack("{s:o}", "status", kerf_kobj_gpupool_status_encode(&st));
	if (patch)
		*body = json_dumps(patch, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(patch);
	return *body ? 0 : -KERF_ENOMEM;
}
