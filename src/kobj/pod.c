#include "kobj/pod.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/parse.h"
#include "base/quantity.h"
#include "base/slab.h"
#include "core/model.h"
#include "kobj/json_field.h"
#include "kobj/names.h"
#include "kobj/pdb.h"
#include "kobj/priorityclass.h"
#include "kobj/time.h"

/* One container's (or the pod's) request, per dimension kerf counts. */
struct req {
	int64_t cpu_milli;
	int64_t mem_bytes;
	int64_t gpus;
	int64_t mig;
};

/* Far beyond any node, and small enough that sums cannot overflow. */
#define REQ_MAX_CPU_MILLI ((int64_t)1 << 40)
#define REQ_MAX_MEM_BYTES ((int64_t)1 << 56)
#define REQ_MAX_DEVICES ((int64_t)1 << 20)

/* What the narrowed fields of struct kerf_kpod hold must fit them. */
_Static_assert(KERF_POD_MAX_SELECTOR <= UINT8_MAX, "nr_selector");
_Static_assert(KERF_POD_MAX_TOLERATIONS <= UINT8_MAX, "nr_tolerations");
_Static_assert(KERF_POD_MAX_LABELS <= UINT16_MAX, "nr_labels");
_Static_assert(KERF_GANG_MAX_SIZE <= UINT16_MAX, "gang_size");
_Static_assert(KERF_POD_MAX_STRING_BYTES <= UINT32_MAX / 2, "strings_len");

/* The pod as it is read: its strings borrowed from the object until packed. */
struct decode {
	struct kerf_kpod *p;
	struct kerf_err *err;
	const char *str[KERF_KPOD_NR_STR];
	struct kerf_label sel[KERF_POD_MAX_SELECTOR];
	struct kerf_toleration tols[KERF_POD_MAX_TOLERATIONS];
	uint64_t *labels;            /* 2 * p->nr_labels, owned */
	int64_t times[KERF_KPOD_NR_TIMES];
	const char *mig_profile;     /* borrowed from the object */
	char invalid[KERF_ERR_MSG_MAX];
};

static void req_add(struct req *a, const struct req *b)
{
	a->cpu_milli += b->cpu_milli;
	a->mem_bytes += b->mem_bytes;
	a->gpus += b->gpus;
	a->mig += b->mig;
}

static void req_max(struct req *a, const struct req *b)
{
	if (b->cpu_milli > a->cpu_milli)
		a->cpu_milli = b->cpu_milli;
	if (b->mem_bytes > a->mem_bytes)
		a->mem_bytes = b->mem_bytes;
	if (b->gpus > a->gpus)
		a->gpus = b->gpus;
	if (b->mig > a->mig)
		a->mig = b->mig;
}

#define set_invalid(d, ...) \
	kerf_note_first((d)->invalid, sizeof((d)->invalid), __VA_ARGS__)

/* One resource of a requests/limits map into *r. */
static int read_resource(struct decode *d, const char *path, const char *name,
			 const json_t *v, struct req *r)
{
	char field[KERF_JSON_PATH_MAX + 128], shown[96];
	const char *s;
	int64_t x;
	int rc;

	/* resource names are the user's: escaped wherever they are shown */
	snprintf(field, sizeof(field), "%s.%s", path,
		 kerf_escape(shown, sizeof(shown), name));
	if (!json_is_string(v)) {
		/* the API server sends quantities as strings; a number is tolerated */
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return kerf_err_set(d->err, -KERF_EPARSE,
					    "%s: expected a quantity, got %s",
					    field, kerf_json_type_name(v));
		x = (int64_t)json_integer_value(v);
		s = NULL;
	} else {
		s = json_string_value(v);
	}
	if (!strcmp(name, "cpu")) {
		if (s && (rc = kerf_quantity_parse_field(field, s, KERF_QTY_MILLI,
							 &x, d->err)) < 0)
			return rc;
		if (!s)
			x = x > REQ_MAX_CPU_MILLI / 1000 ? REQ_MAX_CPU_MILLI + 1 : x * 1000;
		if (x < 0 || x > REQ_MAX_CPU_MILLI)
			return kerf_err_set(d->err, -KERF_ERANGE, "%s: out of range", field);
		r->cpu_milli = x;
	} else if (!strcmp(name, "memory")) {
		if (s && (rc = kerf_quantity_parse_field(field, s, KERF_QTY_UNITS, &x, d->err)) < 0)
			return rc;
		if (x < 0 || x > REQ_MAX_MEM_BYTES)
			return kerf_err_set(d->err, -KERF_ERANGE, "%s: out of range", field);
		r->mem_bytes = x;
	} else if (!strcmp(name, KERF_RES_GPU) ||
		   !strncmp(name, KERF_RES_MIG_PREFIX, strlen(KERF_RES_MIG_PREFIX))) {
		if (s && (rc = kerf_quantity_parse_field(field, s, KERF_QTY_WHOLE, &x, d->err)) < 0)
			return rc;
		if (x < 0 || x > REQ_MAX_DEVICES)
			return kerf_err_set(d->err, -KERF_ERANGE, "%s: out of range", field);
		if (name[strlen("nvidia.com/")] == 'g') {
			r->gpus = x;
		} else if (x > 0) {
			const char *profile = name + strlen(KERF_RES_MIG_PREFIX);

			if (d->mig_profile && strcmp(d->mig_profile, profile)) {
				char a[64], b[64];

				set_invalid(d, "%s: a second MIG profile (%s after %s): kerf places one MIG instance per pod",
					    field, kerf_escape(a, sizeof(a), profile),
					    kerf_escape(b, sizeof(b), d->mig_profile));
			} else {
				d->mig_profile = profile;
			}
			r->mig = x;
		}
	}
	return 0;
}

/* A container's request: requests, else limits, per resource. */
static int container_req(struct decode *d, const json_t *c, const char *path,
			 struct req *r)
{
	const json_t *res, *requests, *limits, *v;
	char sub[KERF_JSON_PATH_MAX];
	const char *name;
	int rc;

	*r = (struct req){ 0 };
	snprintf(sub, sizeof(sub), "%s", path);
	if ((rc = kerf_json_object(c, "resources", sub, &res, d->err)) < 0)
		return rc;
	if (!res)
		return 0;
	snprintf(sub, sizeof(sub), "%s.resources", path);
	if ((rc = kerf_json_object(res, "requests", sub, &requests, d->err)) < 0 ||
	    (rc = kerf_json_object(res, "limits", sub, &limits, d->err)) < 0)
		return rc;
	/* limits first, requests over them: a request wins where both are */
	if (limits) {
		snprintf(sub, sizeof(sub), "%s.resources.limits", path);
		json_object_foreach((json_t *)limits, name, v)
			if (!json_object_get(requests, name) &&
			    (rc = read_resource(d, sub, name, v, r)) < 0)
				return rc;
	}
	if (requests) {
		snprintf(sub, sizeof(sub), "%s.resources.requests", path);
		json_object_foreach((json_t *)requests, name, v)
			if ((rc = read_resource(d, sub, name, v, r)) < 0)
				return rc;
	}
	return 0;
}

/* The pod's effective request (the rule in pod.h). */
static int effective_req(struct decode *d, const json_t *spec, struct req *out)
{
	struct req app = { 0 }, sidecars = { 0 }, init_peak = { 0 }, r;
	const json_t *list, *c, *overhead;
	char path[KERF_JSON_PATH_MAX];
	size_t i;
	int rc;

	if ((rc = kerf_json_array(spec, "containers", "spec", &list, d->err)) < 0)
		return rc;
	if (list && json_array_size(list) > KERF_POD_MAX_CONTAINERS)
		return kerf_err_set(d->err, -KERF_ELIMIT,
				    "spec.containers: %zu containers, at most %d",
				    json_array_size(list), KERF_POD_MAX_CONTAINERS);
	json_array_foreach(list, i, c) {
		snprintf(path, sizeof(path), "spec.containers[%zu]", i);
		if ((rc = container_req(d, c, path, &r)) < 0)
			return rc;
		req_add(&app, &r);
	}
	if ((rc = kerf_json_array(spec, "initContainers", "spec", &list, d->err)) < 0)
		return rc;
	if (list && json_array_size(list) > KERF_POD_MAX_CONTAINERS)
		return kerf_err_set(d->err, -KERF_ELIMIT,
				    "spec.initContainers: %zu containers, at most %d",
				    json_array_size(list), KERF_POD_MAX_CONTAINERS);
	json_array_foreach(list, i, c) {
		const char *policy;

		snprintf(path, sizeof(path), "spec.initContainers[%zu]", i);
		if ((rc = container_req(d, c, path, &r)) < 0 ||
		    (rc = kerf_json_string(c, "restartPolicy", path, &policy, d->err)) < 0)
			return rc;
		if (policy && !strcmp(policy, "Always")) {
			/* a native sidecar: runs on beside what follows */
			req_add(&sidecars, &r);
			req_max(&init_peak, &sidecars);
		} else {
			req_add(&r, &sidecars);
			req_max(&init_peak, &r);
		}
	}
	req_add(&app, &sidecars);
	req_max(&app, &init_peak);
	if ((rc = kerf_json_object(spec, "overhead", "spec", &overhead, d->err)) < 0)
		return rc;
	if (overhead) {
		const char *name;
		const json_t *v;

		r = (struct req){ 0 };
		json_object_foreach((json_t *)overhead, name, v)
			if ((rc = read_resource(d, "spec.overhead", name, v, &r)) < 0)
				return rc;
		r.gpus = r.mig = 0; /* overhead is never a device */
		req_add(&app, &r);
	}
	*out = app;
	return 0;
}

static int read_selector(struct decode *d, const json_t *spec)
{
	struct kerf_kpod *p = d->p;
	const json_t *sel, *v;
	const char *key;
	size_t n = 0;
	int rc;

	if ((rc = kerf_json_object(spec, "nodeSelector", "spec", &sel, d->err)) < 0)
		return rc;
	if (!sel || json_object_size(sel) == 0)
		return 0;
	if (json_object_size(sel) > KERF_POD_MAX_SELECTOR)
		return kerf_err_set(d->err, -KERF_ELIMIT,
				    "spec.nodeSelector: %zu terms, at most %d",
				    json_object_size(sel), KERF_POD_MAX_SELECTOR);
	json_object_foreach((json_t *)sel, key, v) {
		char shown[80];

		if (!json_is_string(v))
			return kerf_err_set(d->err, -KERF_EPARSE,
					    "spec.nodeSelector.%s: expected a string, got %s",
					    kerf_escape(shown, sizeof(shown), key),
					    kerf_json_type_name(v));
		d->sel[n].key = key;
		d->sel[n].value = json_string_value(v);
		n++;
	}
	p->nr_selector = (uint8_t)n;
	return 0;
}

int kerf_taint_effect_parse(const char *s)
{
	if (!strcmp(s, "NoSchedule"))
		return KERF_EFFECT_NO_SCHEDULE;
	if (!strcmp(s, "PreferNoSchedule"))
		return KERF_EFFECT_PREFER_NO_SCHEDULE;
	if (!strcmp(s, "NoExecute"))
		return KERF_EFFECT_NO_EXECUTE;
	return -KERF_EPARSE;
}

const char *kerf_taint_effect_name(uint8_t effect)
{
	switch (effect) {
	case KERF_EFFECT_NO_SCHEDULE: return "NoSchedule";
	case KERF_EFFECT_PREFER_NO_SCHEDULE: return "PreferNoSchedule";
	case KERF_EFFECT_NO_EXECUTE: return "NoExecute";
	}
	return "";
}

const struct kerf_toleration kerf_default_tolerations[2] = {
	{ "node.kubernetes.io/not-ready", "", KERF_TOL_EXISTS, KERF_EFFECT_NO_EXECUTE },
	{ "node.kubernetes.io/unreachable", "", KERF_TOL_EXISTS, KERF_EFFECT_NO_EXECUTE },
};

/* Is list exactly kerf_default_tolerations (tolerationSeconds aside)? */
static bool is_default_tolerations(const json_t *list)
{
	const json_t *t, *v;
	size_t i;

	if (json_array_size(list) != 2)
		return false;
	json_array_foreach(list, i, t) {
		if (!json_is_object(t) ||
		    !json_is_string(v = json_object_get(t, "key")) ||
		    strcmp(json_string_value(v), kerf_default_tolerations[i].key) ||
		    !json_is_string(v = json_object_get(t, "operator")) ||
		    strcmp(json_string_value(v), "Exists") ||
		    !json_is_string(v = json_object_get(t, "effect")) ||
		    strcmp(json_string_value(v), "NoExecute"))
			return false;
		v = json_object_get(t, "value");
		if (v && !json_is_null(v) &&
		    (!json_is_string(v) || json_string_value(v)[0]))
			return false;
	}
	return true;
}

static int read_tolerations(struct decode *d, const json_t *spec)
{
	struct kerf_kpod *p = d->p;
	const json_t *list, *t;
	char path[KERF_JSON_PATH_MAX];
	size_t i;
	int rc;

	if ((rc = kerf_json_array(spec, "tolerations", "spec", &list, d->err)) < 0)
		return rc;
	if (!list || json_array_size(list) == 0)
		return 0;
	if (json_array_size(list) > KERF_POD_MAX_TOLERATIONS)
		return kerf_err_set(d->err, -KERF_ELIMIT,
				    "spec.tolerations: %zu, at most %d",
				    json_array_size(list), KERF_POD_MAX_TOLERATIONS);
	if (is_default_tolerations(list)) {
		p->default_tolerations = true;
		p->nr_tolerations = 2;
		return 0;
	}
	json_array_foreach(list, i, t) {
		struct kerf_toleration *x = &d->tols[i];
		const char *key, *op, *value, *effect;
		char shown[80];

		snprintf(path, sizeof(path), "spec.tolerations[%zu]", i);
		if (!json_is_object(t))
			return kerf_err_set(d->err, -KERF_EPARSE,
					    "%s: expected an object, got %s", path,
					    kerf_json_type_name(t));
		if ((rc = kerf_json_string(t, "key", path, &key, d->err)) < 0 ||
		    (rc = kerf_json_string(t, "operator", path, &op, d->err)) < 0 ||
		    (rc = kerf_json_string(t, "value", path, &value, d->err)) < 0 ||
		    (rc = kerf_json_string(t, "effect", path, &effect, d->err)) < 0)
			return rc;
		if (!op || !*op || !strcmp(op, "Equal")) {
			x->op = KERF_TOL_EQUAL;
		} else if (!strcmp(op, "Exists")) {
			x->op = KERF_TOL_EXISTS;
			value = "";
		} else {
			return kerf_err_set(d->err, -KERF_EPARSE,
					    "%s.operator '%s': expected Equal or Exists",
					    path, kerf_escape(shown, sizeof(shown), op));
		}
		if (!effect || !*effect) {
			x->effect = KERF_EFFECT_ANY;
		} else if ((rc = kerf_taint_effect_parse(effect)) < 0) {
			return kerf_err_set(d->err, -KERF_EPARSE,
					    "%s.effect '%s': expected NoSchedule, PreferNoSchedule or NoExecute",
					    path, kerf_escape(shown, sizeof(shown), effect));
		} else {
			x->effect = (uint8_t)rc;
		}
		x->key = key ? key : "";
		x->value = value ? value : "";
	}
	p->nr_tolerations = (uint8_t)json_array_size(list);
	return 0;
}

bool kerf_toleration_matches(const struct kerf_toleration *t, const char *key,
			     const char *value, uint8_t effect)
{
	if (t->effect != KERF_EFFECT_ANY && t->effect != effect)
		return false;
	if (t->op == KERF_TOL_EXISTS)
		return !t->key[0] || !strcmp(t->key, key);
	return !strcmp(t->key, key) && !strcmp(t->value, value);
}

/* An RFC 3339 annotation into *ms (0 when absent); bad ones invalidate. */
static void read_time_annotation(struct decode *d, const json_t *ann,
				 const char *name, int64_t *ms)
{
	const json_t *v = kerf_json_get(ann, name);
	char shown[80];

	*ms = 0;
	if (!v)
		return;
	if (!json_is_string(v) || kerf_time_parse_ms(json_string_value(v), ms) < 0 ||
	    *ms <= 0) {
		*ms = 0;
		set_invalid(d, "metadata.annotations.%s '%s': not an RFC 3339 time",
			    name, json_is_string(v) ? kerf_escape(shown, sizeof(shown), json_string_value(v)) : "");
	}
}

static void read_annotations(struct decode *d, const json_t *ann)
{
	struct kerf_kpod *p = d->p;
	const json_t *v;
	char shown[80];
	int64_t x;

	v = kerf_json_get(ann, KERF_ANN_GANG_SIZE);
	if (v) {
		uint64_t n = 0;

		if (!json_is_string(v) ||
		    kerf_parse_u64(json_string_value(v), &n) < 0 || n < 1 ||
		    n > KERF_GANG_MAX_SIZE)
			set_invalid(d, "metadata.annotations.%s '%s': expected a whole number 1..%d",
				    KERF_ANN_GANG_SIZE,
				    json_is_string(v) ? kerf_escape(shown, sizeof(shown), json_string_value(v)) : "",
				    KERF_GANG_MAX_SIZE);
		else
			p->gang_size = (uint16_t)n;
	}
	v = kerf_json_get(ann, KERF_ANN_GPU_FRACTION);
	if (v) {
		if (!json_is_string(v) ||
		    kerf_quantity_parse_milli(json_string_value(v), &x) < 0 ||
		    x < 1 || x > 999)
			set_invalid(d, "metadata.annotations.%s '%s': expected a fraction of a GPU above 0 and below 1 (0.25 or 250m)",
				    KERF_ANN_GPU_FRACTION,
				    json_is_string(v) ? kerf_escape(shown, sizeof(shown), json_string_value(v)) : "");
		else
			p->gpu_milli = (int16_t)x;
	}
	v = kerf_json_get(ann, KERF_ANN_GPU_MEMORY);
	if (v) {
		if (!json_is_string(v) ||
		    kerf_quantity_parse(json_string_value(v), &x) < 0 || x < 1 ||
		    x > ((int64_t)1 << 50))
			set_invalid(d, "metadata.annotations.%s '%s': expected GPU memory such as 10Gi",
				    KERF_ANN_GPU_MEMORY,
				    json_is_string(v) ? kerf_escape(shown, sizeof(shown), json_string_value(v)) : "");
		else
			p->gpu_mem_mib = (int32_t)((x + (1 << 20) - 1) >> 20);
	}
	v = kerf_json_get(ann, KERF_ANN_GPU_SHARING);
	if (v) {
		const char *s = json_is_string(v) ? json_string_value(v) : "";

		if (!strcmp(s, "mps"))
			p->share = KERF_SHARE_MPS;
		else if (!strcmp(s, "timeslice"))
			p->share = KERF_SHARE_TIMESLICE;
		else
			set_invalid(d, "metadata.annotations.%s '%s': expected mps or timeslice",
				    KERF_ANN_GPU_SHARING, kerf_escape(shown, sizeof(shown), s));
	}
	read_time_annotation(d, ann, KERF_ANN_PREEMPT_AT, &d->times[KERF_KPOD_PREEMPT_AT]);
	read_time_annotation(d, ann, KERF_ANN_CHECKPOINT_DONE,
			     &d->times[KERF_KPOD_CHECKPOINT_DONE]);
	read_time_annotation(d, ann, KERF_ANN_LAST_CHECKPOINT,
			     &d->times[KERF_KPOD_LAST_CHECKPOINT]);
	v = kerf_json_get(ann, KERF_ANN_ASSIGNED_GPUS);
	if (json_is_string(v))
		d->str[KERF_KPOD_ASSIGNED_GPUS] = json_string_value(v);
	v = kerf_json_get(ann, KERF_ANN_ASSIGNED_MIG);
	if (json_is_string(v))
		d->str[KERF_KPOD_ASSIGNED_MIG] = json_string_value(v);
	v = kerf_json_get(ann, KERF_ANN_PLANNED_NODE);
	if (json_is_string(v) && json_string_length(v) > 0)
		d->str[KERF_KPOD_PLANNED_NODE] = json_string_value(v);
}

static int read_phase(struct decode *d, const json_t *obj)
{
	static const char *names[] = { "Pending", "Running", "Succeeded",
				       "Failed", "Unknown" };
	const json_t *status;
	const char *phase;
	int rc;

	if ((rc = kerf_json_object(obj, "status", "", &status, d->err)) < 0 ||
	    (rc = kerf_json_string(status, "phase", "status", &phase, d->err)) < 0)
		return rc;
	d->p->phase = KERF_PHASE_PENDING;
	if (!phase)
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(phase, names[i])) {
			d->p->phase = (uint8_t)i;
			return 0;
		}
	{
		char shown[80];

		return kerf_err_set(d->err, -KERF_EPARSE,
				    "status.phase '%s': not a pod phase",
				    kerf_escape(shown, sizeof(shown), phase));
	}
}

static int required_string(struct decode *d, const json_t *obj,
			   const char *key, const char *path, const char **out)
{
	int rc = kerf_json_string(obj, key, path, out, d->err);

	if (rc < 0)
		return rc;
	if (rc == 1 || !**out)
		return kerf_err_set(d->err, -KERF_EPARSE, "%s.%s: missing", path, key);
	return 0;
}

/* metadata.labels, hashed for PodDisruptionBudgets' selectors */
static int read_labels(struct decode *d, const json_t *labels)
{
	struct kerf_kpod *p = d->p;
	const char *key;
	const json_t *v;
	char shown[80];

	if (!json_object_size(labels))
		return 0;
	if (json_object_size(labels) > KERF_POD_MAX_LABELS)
		return kerf_err_set(d->err, -KERF_EPARSE, "metadata.labels: more than %d labels",
				    KERF_POD_MAX_LABELS);
	d->labels = malloc(2 * json_object_size(labels) * sizeof(*d->labels));
	if (!d->labels)
		return kerf_err_set(d->err, -KERF_ENOMEM, "out of memory");
	json_object_foreach((json_t *)labels, key, v) {
		if (!json_is_string(v))
			return kerf_err_set(d->err, -KERF_EPARSE,
					    "metadata.labels.%s: expected a string, got %s",
					    kerf_escape(shown, sizeof(shown), key),
					    kerf_json_type_name(v));
		d->labels[2 * p->nr_labels] = kerf_label_hash(key, NULL);
		d->labels[2 * p->nr_labels + 1] = kerf_label_hash(key, json_string_value(v));
		p->nr_labels++;
	}
	return 0;
}

static int decode(struct decode *d, const json_t *obj)
{
	struct kerf_kpod *p = d->p;
	const json_t *meta, *spec, *labels, *ann, *affinity, *na;
	const char *ns, *name, *uid, *s;
	long long prio;
	struct req r = { 0 };
	int rc;

	if (!json_is_object(obj))
		return kerf_err_set(d->err, -KERF_EPARSE, "pod: expected an object, got %s",
				    kerf_json_type_name(obj));
	if ((rc = kerf_json_object(obj, "metadata", "", &meta, d->err)) < 0 ||
	    (rc = required_string(d, meta, "namespace", "metadata", &ns)) < 0 ||
	    (rc = required_string(d, meta, "name", "metadata", &name)) < 0 ||
	    (rc = required_string(d, meta, "uid", "metadata", &uid)) < 0)
		return rc;
	d->str[KERF_KPOD_NS] = ns;
	d->str[KERF_KPOD_NAME] = name;
	d->str[KERF_KPOD_UID] = uid;
	if ((rc = kerf_json_string(meta, "creationTimestamp", "metadata", &s, d->err)) < 0)
		return rc;
	if (s && kerf_time_parse_ms(s, &p->created_ms) < 0) {
		char shown[80];

		return kerf_err_set(d->err, -KERF_EPARSE,
				    "metadata.creationTimestamp '%s': not an RFC 3339 time",
				    kerf_escape(shown, sizeof(shown), s));
	}
	if ((rc = kerf_json_string(meta, "deletionTimestamp", "metadata", &s, d->err)) < 0)
		return rc;
	p->terminating = s != NULL;
	if ((rc = kerf_json_object(meta, "labels", "metadata", &labels, d->err)) < 0 ||
	    (rc = kerf_json_object(meta, "annotations", "metadata", &ann, d->err)) < 0)
		return rc;
	if ((rc = kerf_json_string(labels, KERF_LABEL_TENANT, "metadata.labels", &s, d->err)) < 0)
		return rc;
	d->str[KERF_KPOD_TENANT] = s;
	if ((rc = kerf_json_string(labels, KERF_LABEL_GANG, "metadata.labels", &s, d->err)) < 0)
		return rc;
	d->str[KERF_KPOD_GANG] = s;
	if ((rc = read_labels(d, labels)) < 0)
		return rc;
	read_annotations(d, ann);

	if ((rc = kerf_json_object(obj, "spec", "", &spec, d->err)) < 0)
		return rc;
	if (!spec)
		return kerf_err_set(d->err, -KERF_EPARSE, "spec: missing");
	if ((rc = kerf_json_string(spec, "nodeName", "spec", &s, d->err)) < 0)
		return rc;
	if (s && *s)
		d->str[KERF_KPOD_NODE] = s;
	if ((rc = kerf_json_string(spec, "schedulerName", "spec", &s, d->err)) < 0)
		return rc;
	d->str[KERF_KPOD_SCHEDULER] = s && *s ? s : "default-scheduler";
	if ((rc = kerf_json_string(spec, "priorityClassName", "spec", &s, d->err)) < 0)
		return rc;
	if (s && *s)
		d->str[KERF_KPOD_PRIORITY_CLASS] = s;
	rc = kerf_json_int(spec, "priority", "spec", INT32_MIN, INT32_MAX, &prio, d->err);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		p->priority = (int32_t)prio;
		p->has_priority = true;
	}
	if ((rc = kerf_json_string(spec, "preemptionPolicy", "spec", &s, d->err)) < 0)
		return rc;
	if (s) {
		char shown[80];

		rc = kerf_preemption_policy_parse(s);
		if (rc < 0)
			set_invalid(d, "spec.preemptionPolicy '%s': expected PreemptLowerPriority or Never",
				    kerf_escape(shown, sizeof(shown), s));
		else
			p->preemption = (uint8_t)rc;
	}
	if ((rc = effective_req(d, spec, &r)) < 0 ||
	    (rc = read_selector(d, spec)) < 0 ||
	    (rc = read_tolerations(d, spec)) < 0)
		return rc;
	p->cpu_milli = r.cpu_milli;
	p->mem_mib = (r.mem_bytes + (1 << 20) - 1) >> 20;
	p->nr_gpus = (int32_t)r.gpus;
	p->nr_mig = (int32_t)r.mig;
	if (d->mig_profile && r.mig > 0)
		d->str[KERF_KPOD_MIG_PROFILE] = d->mig_profile;
	if (p->gpu_milli && (p->nr_gpus || p->nr_mig))
		set_invalid(d, "metadata.annotations.%s: a fraction of a GPU together with whole GPUs or MIG instances",
			    KERF_ANN_GPU_FRACTION);
	if (p->nr_gpus && p->nr_mig)
		set_invalid(d, "spec.containers: whole GPUs (%s) and MIG instances together",
			    KERF_RES_GPU);
	if ((rc = kerf_json_object(spec, "affinity", "spec", &affinity, d->err)) < 0 ||
	    (rc = kerf_json_object(affinity, "nodeAffinity", "spec.affinity", &na, d->err)) < 0)
		return rc;
	p->required_affinity =
		kerf_json_get(na, "requiredDuringSchedulingIgnoredDuringExecution") != NULL;
	if ((rc = read_phase(d, obj)) < 0)
		return rc;
	if (d->invalid[0])
		d->str[KERF_KPOD_INVALID] = d->invalid;
	return 0;
}

/* s into the block at *off: its offset. */
static uint32_t put_string(char *block, size_t *off, const char *s)
{
	size_t n = strlen(s) + 1;
	uint32_t at = (uint32_t)*off;

	memcpy(block + *off, s, n);
	*off += n;
	return at;
}

/* The bytes of a block of len bytes of strings and p's arrays. */
static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* s as the 16 bytes of a canonical UID ("8-4-4-4-12" lowercase hex)? */
static bool uid_bytes(const char *s, uint8_t out[KERF_KPOD_UID_BYTES])
{
	size_t k = 0, i = 0;

	if (!s || strlen(s) != 36)
		return false;
	while (i < 36) {
		int hi, lo;

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i++] != '-')
				return false;
			continue;
		}
		hi = hex_digit(s[i]);
		lo = hex_digit(s[i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[k++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	return k == KERF_KPOD_UID_BYTES;
}

const char *kerf_kpod_uid(const struct kerf_kpod *p, char buf[KERF_KPOD_UID_BUF])
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *b;
	size_t o = 0;

	if (!p->uid_bin)
		return kerf_kpod_at(p, KERF_KPOD_UID);
	b = (const uint8_t *)kerf_kpod_uid_bytes(p);
	for (int i = 0; i < KERF_KPOD_UID_BYTES; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			buf[o++] = '-';
		buf[o++] = hex[b[i] >> 4];
		buf[o++] = hex[b[i] & 15];
	}
	buf[o] = '\0';
	return buf;
}

static size_t block_bytes(const struct kerf_kpod *p, size_t len)
{
	size_t nr_tols = p->default_tolerations ? 0 : p->nr_tolerations;
	/* the arrays at the first multiple of 8 after the strings (pod.h) */
	size_t arrays = (len + 7) & ~(size_t)7;
	size_t total = arrays +
		       (p->has_times ? sizeof(int64_t) * KERF_KPOD_NR_TIMES : 0) +
		       (p->uid_bin ? KERF_KPOD_UID_BYTES : 0) +
		       2 * sizeof(uint64_t) * p->nr_labels +
		       sizeof(struct kerf_label) * p->nr_selector +
		       sizeof(struct kerf_toleration) * nr_tols;

	return total == arrays ? len : total;   /* no array: no padding */
}

/*
 * A new block for p (kerf_slab's: freed with kerf_slab_free(p->strings,
 * block_bytes(p, p->strings_len))) of the strings str[] (str[KERF_KPOD_NS] required) and
 * the arrays labels, sel and tols (as many as p's nr_ fields say; tols not
 * when p->default_tolerations), none of them in p's old block unless the
 * caller frees that only after: p->strings, strings_len and str_off set.
 * 0, -KERF_ELIMIT or -KERF_ENOMEM (p unchanged).
 */
static int pack(struct kerf_kpod *p, const char *const str[KERF_KPOD_NR_STR],
		const int64_t *times, const uint64_t *labels,
		const struct kerf_label *sel, const struct kerf_toleration *tols)
{
	size_t nr_tols = p->default_tolerations ? 0 : p->nr_tolerations;
	size_t len = 1, off = 1, arrays, total;
	uint32_t str_off[KERF_KPOD_NR_OFF];
	struct kerf_toleration *t;
	struct kerf_label *l;
	uint8_t uid[KERF_KPOD_UID_BYTES];
	bool uid_bin = uid_bytes(str[KERF_KPOD_UID], uid);
	char *block;

	for (size_t i = 0; i < KERF_KPOD_NR_STR; i++)
		if (str[i] && !(i == KERF_KPOD_UID && uid_bin))
			len += strlen(str[i]) + 1;
	for (size_t i = 0; i < p->nr_selector; i++)
		len += strlen(sel[i].key) + strlen(sel[i].value) + 2;
	for (size_t i = 0; i < nr_tols; i++)
		len += strlen(tols[i].key) + strlen(tols[i].value) + 2;
	if (len > KERF_POD_MAX_STRING_BYTES)
		return -KERF_ELIMIT;
	p->has_times = times != NULL;
	p->uid_bin = uid_bin;
	arrays = (len + 7) & ~(size_t)7;
	total = block_bytes(p, len);
	block = kerf_slab_alloc(total);
	if (!block)
		return -KERF_ENOMEM;
	block[0] = '\0';
	memset(block + len, 0, total - len);
	put_string(block, &off, str[KERF_KPOD_NS]);
	for (size_t i = 0; i < KERF_KPOD_NR_OFF; i++)
		str_off[i] = str[i] && !(i == KERF_KPOD_UID && uid_bin) ?
			     put_string(block, &off, str[i]) : 0;
	if (total == len)
		arrays = len;   /* not past the end, even with nothing to point at */
	if (times) {
		memcpy(block + arrays, times, sizeof(*times) * KERF_KPOD_NR_TIMES);
		arrays += sizeof(*times) * KERF_KPOD_NR_TIMES;
	}
	if (uid_bin) {
		memcpy(block + arrays, uid, sizeof(uid));
		arrays += sizeof(uid);
	}
	if (p->nr_labels)
		memcpy(block + arrays, labels, 2 * sizeof(*labels) * p->nr_labels);
	l = (struct kerf_label *)(void *)(block + arrays +
					  2 * sizeof(*labels) * p->nr_labels);
	for (size_t i = 0; i < p->nr_selector; i++) {
		l[i].key = block + put_string(block, &off, sel[i].key);
		l[i].value = block + put_string(block, &off, sel[i].value);
	}
	t = (struct kerf_toleration *)(void *)(l + p->nr_selector);
	for (size_t i = 0; i < nr_tols; i++) {
		t[i] = tols[i];
		t[i].key = block + put_string(block, &off, tols[i].key);
		t[i].value = block + put_string(block, &off, tols[i].value);
	}
	p->strings = block;
	p->strings_len = (uint32_t)len;
	memcpy(p->str_off, str_off, sizeof(str_off));
	return 0;
}

int kerf_kpod_decode(const json_t *obj, struct kerf_kpod *out,
		     struct kerf_err *err)
{
	struct decode *d = calloc(1, sizeof(*d));
	struct kerf_kpod p = { 0 };
	int rc;

	if (!d)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	d->p = &p;
	d->err = err;
	rc = decode(d, obj);
	if (rc == 0 &&
	    (rc = pack(&p, d->str,
		       d->times[0] || d->times[1] || d->times[2] ? d->times : NULL,
		       d->labels, d->sel, d->tols)) < 0)
		rc = kerf_err_set(err, rc, "pod %s: %s", "strings",
				  rc == -KERF_ENOMEM ? "out of memory" : "too long");
	free(d->labels);
	free(d);
	if (rc < 0)
		return rc;
	*out = p;
	return 0;
}

void kerf_kpod_release(struct kerf_kpod *p)
{
	if (!p)
		return;
	kerf_slab_free(p->strings, block_bytes(p, p->strings_len));
	memset(p, 0, sizeof(*p));
}

bool kerf_kpod_wants_gpu(const struct kerf_kpod *p)
{
	return p->nr_gpus > 0 || p->nr_mig > 0 || p->gpu_milli > 0;
}

bool kerf_kpod_is_done(const struct kerf_kpod *p)
{
	return p->phase == KERF_PHASE_SUCCEEDED || p->phase == KERF_PHASE_FAILED;
}

/* p's block again from vals[] and what p has: p unchanged on error. */
static int repack(struct kerf_kpod *p, const struct kerf_kpod *src,
		  const char *const vals[KERF_KPOD_NR_STR])
{
	struct kerf_kpod c = *src;
	int64_t times[KERF_KPOD_NR_TIMES];
	int rc;

	for (int i = 0; i < KERF_KPOD_NR_TIMES; i++)
		times[i] = kerf_kpod_time_ms(src, (enum kerf_kpod_time)i);
	rc = pack(&c, vals, src->has_times ? times : NULL, kerf_kpod_labels(src),
		  kerf_kpod_selector(src), kerf_kpod_tolerations(src));

	if (rc < 0)
		return rc;
	*p = c;
	return 0;
}

int kerf_kpod_clone(struct kerf_kpod *dst, const struct kerf_kpod *src)
{
	const char *vals[KERF_KPOD_NR_STR];

	if (!src->strings) {  /* never decoded: nothing to copy */
		*dst = *src;
		return 0;
	}
	char uid[KERF_KPOD_UID_BUF];

	for (int i = 0; i < KERF_KPOD_NR_STR; i++)
		vals[i] = kerf_kpod_at(src, (enum kerf_kpod_str)i);
	vals[KERF_KPOD_UID] = kerf_kpod_uid(src, uid);
	return repack(dst, src, vals) < 0 ? -KERF_ENOMEM : 0;
}

int kerf_kpod_set_strings(struct kerf_kpod *p,
			  const char *const vals[KERF_KPOD_NR_STR])
{
	char *old = p->strings;
	size_t old_bytes = block_bytes(p, p->strings_len);
	int rc;

	if (!vals[KERF_KPOD_NS] || !vals[KERF_KPOD_NAME] ||
	    !vals[KERF_KPOD_UID] || !vals[KERF_KPOD_SCHEDULER])
		return -KERF_EINVAL;
	if ((rc = repack(p, p, vals)) < 0)
		return rc;
	kerf_slab_free(old, old_bytes);
	return 0;
}
