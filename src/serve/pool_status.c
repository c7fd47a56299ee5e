#include "serve/pool_status.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *str_at(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

struct kerf_cpool *kerf_cpool_decode(const json_t *obj, struct kerf_err *err)
{
	const json_t *meta = json_object_get(obj, "metadata"), *c;
	const char *name = str_at(meta, "name");
	struct kerf_cpool *cp;
	size_t i;

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
	json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c) {
		const char *type = str_at(c, "type"), *st = str_at(c, "status"),
			   *at = str_at(c, "lastTransitionTime");

		if (type && !strcmp(type, "Accepted") && st && at &&
		    strlen(st) < sizeof(cp->was) && strlen(at) < sizeof(cp->since)) {
			snprintf(cp->was, sizeof(cp->was), "%s", st);
			snprintf(cp->since, sizeof(cp->since), "%s", at);
		}
	}
	return cp;
}

/* milli as a decimal: "2", "2.5", "2.25", "2.125". */
static void decimal(int64_t milli, char *out, size_t size)
{
	int64_t whole = milli / 1000, frac = milli % 1000;

	if (frac == 0)
		snprintf(out, size, "%" PRId64, whole);
	else if (frac % 100 == 0)
		snprintf(out, size, "%" PRId64 ".%" PRId64, whole, frac / 100);
	else if (frac % 10 == 0)
		snprintf(out, size, "%" PRId64 ".%02" PRId64, whole, frac / 10);
	else
		snprintf(out, size, "%" PRId64 ".%03" PRId64, whole, frac);
}

int kerf_pool_status_patch(const struct kerf_world *w, const struct kerf_cpool *cp,
			   int64_t now_ms, char **body)
{
	struct kerf_world_pool_usage u = { 0 };
	char alloc[32], since[KERF_TIME_TEXT_MAX], msg[KERF_ERR_MSG_MAX + 64];
	const char *status = cp->accepted ? "True" : "False";
	json_t *patch;

	*body = NULL;
	if (cp->accepted)
		kerf_world_pool_usage(w, cp->name, &u);
	decimal(u.allocated_milli, alloc, sizeof(alloc));
	/* the transition time moves only when the status does */
	if (!strcmp(cp->was, status))
		snprintf(since, sizeof(since), "%s", cp->since);
	else
		kerf_time_format(now_ms, since);
	if (cp->accepted)
		snprintf(msg, sizeof(msg), "the nodes it selects are of flavor '%s'", cp->name);
	else
		snprintf(msg, sizeof(msg), "left out: %s", cp->why);
	patch = json_pack("{s:{s:I, s:i, s:i, s:i, s:s, s:[{s:s, s:s, s:s, s:s, s:s, s:I}]}}",
			  "status", "observedGeneration", (json_int_t)cp->generation,
			  "nodes", (int)u.nodes, "gpus", (int)u.gpus, "migGPUs", (int)u.mig_gpus,
			  "allocated", alloc,
			  "conditions", "type", "Accepted", "status", status,
			  "reason", cp->accepted ? "Valid" : "Invalid", "message", msg,
			  "lastTransitionTime", since,
			  "observedGeneration", (json_int_t)cp->generation);
	if (patch)
		*body = json_dumps(patch, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(patch);
	return *body ? 0 : -KERF_ENOMEM;
}
