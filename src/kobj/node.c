#include "kobj/node.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/parse.h"
#include "base/quantity.h"
#include "base/slab.h"
#include "kobj/json_field.h"
#include "kobj/names.h"
#include "kobj/strtab.h"

#define NODE_MAX_CPU_MILLI ((int64_t)1 << 40)
#define NODE_MAX_MEM_BYTES ((int64_t)1 << 56)
#define NODE_MAX_GPUS 4096

struct decode {
	struct kerf_knode *n;
	struct kerf_strtab st;
	struct kerf_err *err;
	bool has_model;         /* fields of st are only set when finished */
	char invalid[KERF_ERR_MSG_MAX];
};

#define set_invalid(d, ...) \
	kerf_note_first((d)->invalid, sizeof((d)->invalid), __VA_ARGS__)

static int quantity(struct decode *d, const json_t *map, const char *path,
		    const char *name, enum kerf_quantity_unit unit, int64_t *out)
{
	char field[KERF_JSON_PATH_MAX];
	const char *s;
	int rc;

	snprintf(field, sizeof(field), "%s", path);
	rc = kerf_json_string(map, name, field, &s, d->err);
	if (rc != 0)
		return rc;
	snprintf(field, sizeof(field), "%s.%s", path, name);
	return kerf_quantity_parse_field(field, s, unit, out, d->err);
}

static int read_resources(struct decode *d, const json_t *status)
{
	struct kerf_knode *n = d->n;
	const json_t *alloc, *cap, *map;
	const char *path;
	int64_t x;
	int rc;

	if ((rc = kerf_json_object(status, "allocatable", "status", &alloc, d->err)) < 0 ||
	    (rc = kerf_json_object(status, "capacity", "status", &cap, d->err)) < 0)
		return rc;
	map = alloc ? alloc : cap;
	path = alloc ? "status.allocatable" : "status.capacity";
	if (!map)
		return 0;
	if ((rc = quantity(d, map, path, "cpu", KERF_QTY_MILLI, &x)) < 0)
		return rc;
	if (rc == 0) {
		if (x < 0 || x > NODE_MAX_CPU_MILLI)
			return kerf_err_set(d->err, -KERF_ERANGE, "%s.cpu: out of range", path);
		n->cpu_milli = x;
	}
	if ((rc = quantity(d, map, path, "memory", KERF_QTY_UNITS, &x)) < 0)
		return rc;
	if (rc == 0) {
		if (x < 0 || x > NODE_MAX_MEM_BYTES)
			return kerf_err_set(d->err, -KERF_ERANGE, "%s.memory: out of range", path);
		n->mem_mib = x >> 20;
	}
	if ((rc = quantity(d, map, path, KERF_RES_GPU, KERF_QTY_WHOLE, &x)) < 0)
		return rc;
	if (rc == 0) {
		if (x < 0 || x > NODE_MAX_GPUS)
			return kerf_err_set(d->err, -KERF_ERANGE, "%s.%s: %lld out of range (0..%d)",
					    path, KERF_RES_GPU, (long long)x, NODE_MAX_GPUS);
		n->nr_gpus = (int32_t)x;
	}
	return 0;
}

static int read_labels(struct decode *d, const json_t *meta)
{
	struct kerf_knode *n = d->n;
	const json_t *labels, *v;
	const char *key;
	char shown[80];
	size_t i = 0;
	int rc;

	if ((rc = kerf_json_object(meta, "labels", "metadata", &labels, d->err)) < 0)
		return rc;
	if (!labels || json_object_size(labels) == 0)
		return 0;
	if (json_object_size(labels) > KERF_KNODE_MAX_LABELS)
		return kerf_err_set(d->err, -KERF_ELIMIT,
				    "metadata.labels: %zu labels, at most %d",
				    json_object_size(labels), KERF_KNODE_MAX_LABELS);
	n->labels = calloc(json_object_size(labels), sizeof(*n->labels));
	if (!n->labels)
		return kerf_err_set(d->err, -KERF_ENOMEM, "out of memory");
	json_object_foreach((json_t *)labels, key, v) {
		if (!json_is_string(v))
			return kerf_err_set(d->err, -KERF_EPARSE,
					    "metadata.labels.%s: expected a string, got %s",
					    kerf_escape(shown, sizeof(shown), key),
					    kerf_json_type_name(v));
		kerf_strtab_add(&d->st, &n->labels[i].key, key);
		kerf_strtab_add(&d->st, &n->labels[i].value, json_string_value(v));
		if (!strcmp(key, KERF_LABEL_GPU_PRODUCT) && json_string_length(v)) {
			kerf_strtab_add(&d->st, &n->gpu_model, json_string_value(v));
			d->has_model = true;
		}
		else if (!strcmp(key, KERF_LABEL_NVLINK_DOMAIN) && json_string_length(v))
			kerf_strtab_add(&d->st, &n->nvlink_domain, json_string_value(v));
		else if (!strcmp(key, KERF_LABEL_GPU_MEMORY) ||
			 !strcmp(key, KERF_LABEL_MIG_GPUS)) {
			uint64_t x;

			if (kerf_parse_u64(json_string_value(v), &x) < 0 ||
			    x > (1u << 30))
				set_invalid(d, "metadata.labels.%s '%s': expected a whole number",
					    key, kerf_escape(shown, sizeof(shown), json_string_value(v)));
			else if (key[0] == 'n')
				n->gpu_mem_mib = (int32_t)x;
			else
				n->mig_gpus = (int32_t)x;
		}
		i++;
	}
	n->nr_labels = (uint16_t)i;
	return 0;
}

/*
 * The marks of GPUs and MIG instances out of service.  One that does not
 * read takes every GPU out (never one back in) and says why.
 */
static int read_marks(struct decode *d, const json_t *meta)
{
	struct kerf_knode *n = d->n;
	struct kerf_mig_mark marks[KERF_MIG_MARKS_MAX];
	struct kerf_err why = { 0 };
	const json_t *ann, *gpus, *mig;
	size_t nr = 0;
	int rc;

	if ((rc = kerf_json_object(meta, "annotations", "metadata", &ann, d->err)) < 0)
		return rc;
	gpus = kerf_json_get(ann, KERF_ANN_UNHEALTHY_GPUS);
	mig = kerf_json_get(ann, KERF_ANN_UNHEALTHY_MIG);
	if (gpus && !json_is_string(gpus))
		kerf_err_set(&why, -KERF_EPARSE, "annotation %s: expected a string, got %s",
			     KERF_ANN_UNHEALTHY_GPUS, kerf_json_type_name(gpus));
	else if (gpus)
		kerf_gpu_marks_parse_gpus(json_string_value(gpus), &n->gpus_down, &why);
	/* a GPU whose MPS daemon died takes no new pod until it runs again */
	const json_t *mps = kerf_json_get(ann, KERF_ANN_MPS_FAILED_GPUS);
	uint16_t mps_down = 0;
	if (mps && !json_is_string(mps))
		kerf_err_set(&why, -KERF_EPARSE, "annotation %s: expected a string, got %s",
			     KERF_ANN_MPS_FAILED_GPUS, kerf_json_type_name(mps));
	else if (mps && !why.code &&
		 kerf_gpu_marks_parse_gpus_of(KERF_ANN_MPS_FAILED_GPUS, json_string_value(mps),
					      &mps_down, &why) == 0)
		n->gpus_down |= mps_down;
	if (mig && !json_is_string(mig))
		kerf_err_set(&why, -KERF_EPARSE, "annotation %s: expected a string, got %s",
			     KERF_ANN_UNHEALTHY_MIG, kerf_json_type_name(mig));
	else if (mig)
		kerf_gpu_marks_parse_mig(json_string_value(mig), marks, KERF_MIG_MARKS_MAX,
					 &nr, &why);
	if (why.code) {
		n->gpus_down = UINT16_MAX;
		kerf_strtab_add(&d->st, &n->marks_error, why.msg);
		return 0;
	}
	if (nr == 0)
		return 0;
	n->mig_down = malloc(nr * sizeof(*n->mig_down));
	if (!n->mig_down)
		return kerf_err_set(d->err, -KERF_ENOMEM, "out of memory");
	memcpy(n->mig_down, marks, nr * sizeof(*marks));
	n->nr_mig_down = (uint16_t)nr;
	return 0;
}

/*
 * Each GPU's utilisation.  One that does not read gives no value at all
 * (no sample is ever taken from it) and says why.
 */
static int read_util(struct decode *d, const json_t *meta)
{
	struct kerf_knode *n = d->n;
	int8_t pct[KERF_GPU_UTIL_MAX_GPUS];
	struct kerf_err why = { 0 };
	const json_t *ann, *v;
	int rc;

	if ((rc = kerf_json_object(meta, "annotations", "metadata", &ann, d->err)) < 0)
		return rc;
	v = kerf_json_get(ann, KERF_ANN_GPU_UTILIZATION);
	if (!v)
		return 0;
	if (!json_is_string(v))
		kerf_err_set(&why, -KERF_EPARSE, "annotation %s: expected a string, got %s",
			     KERF_ANN_GPU_UTILIZATION, kerf_json_type_name(v));
	else
		kerf_gpu_util_parse(json_string_value(v), pct, &why);
	if (why.code) {
		kerf_strtab_add(&d->st, &n->util_error, why.msg);
		return 0;
	}
	for (unsigned g = 0; g < KERF_GPU_UTIL_MAX_GPUS; g++)
		if (pct[g] >= 0) {
			n->util_gpus |= 1ull << g;
			n->util_pct[g] = (uint8_t)pct[g];
		}
	return 0;
}

static int read_taints(struct decode *d, const json_t *spec)
{
	struct kerf_knode *n = d->n;
	const json_t *list, *t;
	char path[KERF_JSON_PATH_MAX], shown[80];
	size_t i;
	int rc;

	if ((rc = kerf_json_array(spec, "taints", "spec", &list, d->err)) < 0)
		return rc;
	if (!list || json_array_size(list) == 0)
		return 0;
	if (json_array_size(list) > KERF_KNODE_MAX_TAINTS)
		return kerf_err_set(d->err, -KERF_ELIMIT, "spec.taints: %zu, at most %d",
				    json_array_size(list), KERF_KNODE_MAX_TAINTS);
	n->taints = calloc(json_array_size(list), sizeof(*n->taints));
	if (!n->taints)
		return kerf_err_set(d->err, -KERF_ENOMEM, "out of memory");
	json_array_foreach(list, i, t) {
		const char *key, *value, *effect;

		snprintf(path, sizeof(path), "spec.taints[%zu]", i);
		if (!json_is_object(t))
			return kerf_err_set(d->err, -KERF_EPARSE, "%s: expected an object, got %s",
					    path, kerf_json_type_name(t));
		if ((rc = kerf_json_string(t, "key", path, &key, d->err)) < 0 ||
		    (rc = kerf_json_string(t, "value", path, &value, d->err)) < 0 ||
		    (rc = kerf_json_string(t, "effect", path, &effect, d->err)) < 0)
			return rc;
		if (!key || !*key)
			return kerf_err_set(d->err, -KERF_EPARSE, "%s.key: missing", path);
		if (!effect || (rc = kerf_taint_effect_parse(effect)) < 0)
			return kerf_err_set(d->err, -KERF_EPARSE,
					    "%s.effect '%s': expected NoSchedule, PreferNoSchedule or NoExecute",
					    path, effect ? kerf_escape(shown, sizeof(shown), effect) : "");
		n->taints[i].effect = (uint8_t)rc;
		kerf_strtab_add(&d->st, &n->taints[i].key, key);
		kerf_strtab_add(&d->st, &n->taints[i].value, value ? value : "");
	}
	n->nr_taints = (uint16_t)json_array_size(list);
	return 0;
}

static int read_ready(struct decode *d, const json_t *status)
{
	const json_t *conds, *c;
	size_t i;
	int rc;

	d->n->ready = false;
	if ((rc = kerf_json_array(status, "conditions", "status", &conds, d->err)) < 0)
		return rc;
	json_array_foreach(conds, i, c) {
		const char *type = json_string_value(kerf_json_get(c, "type"));
		const char *st = json_string_value(kerf_json_get(c, "status"));

		if (type && !strcmp(type, "Ready"))
			d->n->ready = st && !strcmp(st, "True");
	}
	return 0;
}

static int decode(struct decode *d, const json_t *obj)
{
	struct kerf_knode *n = d->n;
	const json_t *meta, *spec, *status, *v;
	const char *name, *uid, *s;
	int rc;

	if (!json_is_object(obj))
		return kerf_err_set(d->err, -KERF_EPARSE, "node: expected an object, got %s",
				    kerf_json_type_name(obj));
	if ((rc = kerf_json_object(obj, "metadata", "", &meta, d->err)) < 0 ||
	    (rc = kerf_json_string(meta, "name", "metadata", &name, d->err)) < 0 ||
	    (rc = kerf_json_string(meta, "uid", "metadata", &uid, d->err)) < 0)
		return rc;
	if (!name || !*name)
		return kerf_err_set(d->err, -KERF_EPARSE, "metadata.name: missing");
	kerf_strtab_add(&d->st, &n->name, name);
	kerf_strtab_add(&d->st, &n->uid, uid ? uid : "");
	if ((rc = kerf_json_string(meta, "deletionTimestamp", "metadata", &s, d->err)) < 0)
		return rc;
	n->terminating = s != NULL;
	if ((rc = read_labels(d, meta)) < 0 || (rc = read_marks(d, meta)) < 0 ||
	    (rc = read_util(d, meta)) < 0)
		return rc;
	if ((rc = kerf_json_object(obj, "spec", "", &spec, d->err)) < 0 ||
	    (rc = kerf_json_object(obj, "status", "", &status, d->err)) < 0)
		return rc;
	v = kerf_json_get(spec, "unschedulable");
	if (v && !json_is_boolean(v) && !json_is_null(v))
		return kerf_err_set(d->err, -KERF_EPARSE, "spec.unschedulable: expected a boolean, got %s",
				    kerf_json_type_name(v));
	n->unschedulable = json_is_true(v);
	if ((rc = read_taints(d, spec)) < 0 || (rc = read_resources(d, status)) < 0 ||
	    (rc = read_ready(d, status)) < 0)
		return rc;
	if (n->nr_gpus > 0 && !d->has_model)
		set_invalid(d, "metadata.labels.%s: missing on a node with %d GPUs (GPU feature discovery labels it)",
			    KERF_LABEL_GPU_PRODUCT, n->nr_gpus);
	if (n->mig_gpus > n->nr_gpus)
		set_invalid(d, "metadata.labels.%s: %d GPUs in MIG mode of %d",
			    KERF_LABEL_MIG_GPUS, n->mig_gpus, n->nr_gpus);
	if (d->invalid[0])
		kerf_strtab_add(&d->st, &n->invalid, d->invalid);
	return 0;
}

int kerf_knode_decode(const json_t *obj, struct kerf_knode *out,
		      struct kerf_err *err)
{
	struct decode *d = calloc(1, sizeof(*d));
	struct kerf_knode n = { 0 };
	int rc;

	if (!d)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	d->n = &n;
	d->err = err;
	kerf_strtab_init(&d->st);
	rc = decode(d, obj);
	if (rc == 0) {
		n.strings = kerf_strtab_finish(&d->st, &n.strings_len, &rc);
		if (rc < 0)
			rc = kerf_err_set(err, rc, "node: %s",
					  rc == -KERF_ENOMEM ? "out of memory" : "too many strings");
	}
	kerf_strtab_release(&d->st);
	free(d);
	if (rc < 0) {
		free(n.labels);
		free(n.taints);
		free(n.mig_down);
		return rc;
	}
	*out = n;
	return 0;
}

void kerf_knode_release(struct kerf_knode *n)
{
	if (!n)
		return;
	kerf_slab_free(n->strings, n->strings_len);
	free(n->labels);
	free(n->taints);
	free(n->mig_down);
	memset(n, 0, sizeof(*n));
}

const char *kerf_knode_label(const struct kerf_knode *n, const char *key)
{
	for (size_t i = 0; i < n->nr_labels; i++)
		if (!strcmp(n->labels[i].key, key))
			return n->labels[i].value;
	return NULL;
}

bool kerf_knode_is_usable(const struct kerf_knode *n)
{
	/* as kube-scheduler: readiness shows as the not-ready taint, which
	   the node lifecycle controller keeps; the condition is not read */
	return !n->unschedulable && !n->terminating && !n->invalid;
}

bool kerf_knode_tolerated(const struct kerf_knode *n,
			  const struct kerf_kpod *p)
{
	for (size_t i = 0; i < n->nr_taints; i++) {
		const struct kerf_taint *t = &n->taints[i];
		bool ok = t->effect == KERF_EFFECT_PREFER_NO_SCHEDULE;

		for (size_t k = 0; !ok && k < p->nr_tolerations; k++)
			ok = kerf_toleration_matches(&kerf_kpod_tolerations(p)[k], t->key,
						     t->value, t->effect);
		if (!ok)
			return false;
	}
	return true;
}

bool kerf_knode_selected(const struct kerf_knode *n,
			 const struct kerf_kpod *p)
{
	for (size_t i = 0; i < p->nr_selector; i++) {
		const char *v = kerf_knode_label(n, kerf_kpod_selector(p)[i].key);

		if (!v || strcmp(v, kerf_kpod_selector(p)[i].value))
			return false;
	}
	return true;
}

int kerf_knode_clone(struct kerf_knode *dst, const struct kerf_knode *src)
{
	struct kerf_knode c = *src;
	const char **fields[7 + 2 * (KERF_KNODE_MAX_LABELS + KERF_KNODE_MAX_TAINTS)];
	size_t nr = 0;

	c.labels = NULL;
	c.taints = NULL;
	c.mig_down = NULL;
	if (src->nr_mig_down &&
	    !(c.mig_down = malloc(src->nr_mig_down * sizeof(*c.mig_down))))
		goto oom;
	if (c.mig_down)
		memcpy(c.mig_down, src->mig_down, src->nr_mig_down * sizeof(*c.mig_down));
	if (src->nr_labels &&
	    !(c.labels = malloc(src->nr_labels * sizeof(*c.labels))))
		goto oom;
	if (src->nr_taints && !(c.taints = malloc(src->nr_taints * sizeof(*c.taints))))
		goto oom;
	if (c.labels)
		memcpy(c.labels, src->labels, src->nr_labels * sizeof(*c.labels));
	if (c.taints)
		memcpy(c.taints, src->taints, src->nr_taints * sizeof(*c.taints));
	fields[nr++] = &c.name;
	fields[nr++] = &c.uid;
	fields[nr++] = &c.gpu_model;
	fields[nr++] = &c.nvlink_domain;
	fields[nr++] = &c.invalid;
	fields[nr++] = &c.marks_error;
	fields[nr++] = &c.util_error;
	for (size_t i = 0; i < src->nr_labels; i++) {
		fields[nr++] = &c.labels[i].key;
		fields[nr++] = &c.labels[i].value;
	}
	for (size_t i = 0; i < src->nr_taints; i++) {
		fields[nr++] = &c.taints[i].key;
		fields[nr++] = &c.taints[i].value;
	}
	if (kerf_strtab_clone(src->strings, src->strings_len, &c.strings,
			      (const char **const *)fields, nr) < 0)
		goto oom;
	*dst = c;
	return 0;
oom:
	free(c.labels);
	free(c.taints);
	free(c.mig_down);
	return -KERF_ENOMEM;
}
