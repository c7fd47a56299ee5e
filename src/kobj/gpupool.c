/*
 * kobj/gpupool: the GPUPool custom resource, decoded field by field, and
 * its status.
 */
#include "kobj/gpupool.h"

#include <stdio.h>
#include <string.h>

#include "base/buf.h"

static const char *const mig_names[] = {
	[KERF_KOBJ_MIG_NONE] = "None",
	[KERF_KOBJ_MIG_FIXED] = "Fixed",
	[KERF_KOBJ_MIG_DYNAMIC] = "Dynamic",
};
/* spec.sharing entry i is bit i */
static const char *const share_names[] = { "Whole", "MIG", "MPS", "TimeSlice" };

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

/* A label name or value part: alphanumeric ends, '-', '_', '.' inside. */
static bool label_part(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!alnum(s[i]) && (i == 0 || i + 1 == len ||
				     (s[i] != '-' && s[i] != '_' && s[i] != '.')))
			return false;
	return true;
}

/* [prefix/]name: prefix a DNS subdomain of at most 253, name 1 to 63. */
static bool label_key_ok(const char *k, size_t len)
{
	const char *slash = memchr(k, '/', len);
	const char *name = slash ? slash + 1 : k;
	size_t nlen = len - (size_t)(name - k);

	if (slash) {
		size_t plen = (size_t)(slash - k);

		if (plen == 0 || plen > 253)
			return false;
		for (size_t i = 0; i < plen; i++) {
			char c = k[i];

			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) &&
			    (i == 0 || i + 1 == plen || (c != '-' && c != '.')))
				return false;
		}
	}
	return nlen >= 1 && nlen <= 63 && label_part(name, nlen);
}

/* A GPU model name as the core holds it: 1 to 31 bytes, no cpu/memory. */
static int get_model(const json_t *v, char *out, struct kerf_err *err)
{
	const char *path = "spec.gpuModel";
	char shown[72];
	const char *s;
	size_t len;
	int rc = kerf_kobj_required(v, path, err);

	if (rc < 0)
		return rc;
	kerf_kobj_show(shown, sizeof(shown), v);
	if (!json_is_string(v))
		return kerf_kobj_fail(err, path, "must be a GPU model name, not %s", shown);
	s = json_string_value(v);
	len = json_string_length(v);
	if (len == 0 || len >= KERF_MODEL_NAME_MAX)
		return kerf_kobj_fail(err, path, "must be 1 to %d bytes long, not %s",
				      KERF_MODEL_NAME_MAX - 1, shown);
	if (!label_part(s, len))
		return kerf_kobj_fail(err, path,
				      "must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit, not %s",
				      shown);
	if (!strcmp(s, "cpu") || !strcmp(s, "memory"))
		return kerf_kobj_fail(err, path, "cpu and memory are not GPU models");
	memcpy(out, s, len + 1);
	return 0;
}

static int dec_selector(const json_t *sel, struct kerf_kobj_gpupool *p,
			struct kerf_err *err)
{
	const json_t *ml;
	const char *k;
	json_t *v;
	int rc = kerf_kobj_need_object(sel, "spec.nodeSelector", err);

	ml = rc == 0 ? kerf_kobj_field(sel, "matchLabels") : NULL;
	if (rc == 0)
		rc = kerf_kobj_need_object(ml, "spec.nodeSelector.matchLabels", err);
	if (rc < 0)
		return rc;
	if (json_object_size(ml) < 1 || json_object_size(ml) > KERF_KOBJ_MAX_MATCH_LABELS)
		return kerf_kobj_fail(err, "spec.nodeSelector.matchLabels",
				      "must have 1 to %d labels, not %zu",
				      KERF_KOBJ_MAX_MATCH_LABELS, json_object_size(ml));
	json_object_foreach((json_t *)ml, k, v) {
		struct kerf_kobj_label *l = &p->match_labels[p->nr_match_labels];
		char path[KERF_KOBJ_PATH_MAX + 80], esc[80], shown[72];
		size_t klen = strlen(k);

		snprintf(path, sizeof(path), "spec.nodeSelector.matchLabels.%s",
			 kerf_escape(esc, sizeof(esc), k));
		if (!label_key_ok(k, klen))
			return kerf_kobj_fail(err, path,
					      "not a label key ([prefix/]name, the name 1 to 63 letters, digits, '-', '_' and '.')");
		if (!json_is_string(v) ||
		    json_string_length(v) >= KERF_KOBJ_LABEL_VALUE_MAX ||
		    strlen(json_string_value(v)) != json_string_length(v) ||
		    !label_part(json_string_value(v), json_string_length(v)))
			return kerf_kobj_fail(err, path,
					      "must be a label value (at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit), not %s",
					      kerf_kobj_show(shown, sizeof(shown), v));
		memcpy(l->key, k, klen + 1);
		memcpy(l->value, json_string_value(v), json_string_length(v) + 1);
		p->nr_match_labels++;
	}
	return 0;
}

/* Place the layout's instances in order, each at its lowest legal start. */
static int check_layout(const struct kerf_kobj_gpupool *p, struct kerf_err *err)
{
	struct kerf_mig_layout layout = { .nr = 0 };

	for (size_t i = 0; i < p->nr_layout; i++) {
		char path[KERF_KOBJ_PATH_MAX], esc[72];
		int prof = kerf_mig_profile_find(p->mig, p->layout[i]);
		unsigned start;

		snprintf(path, sizeof(path), "spec.mig.layout[%zu]", i);
		kerf_escape(esc, sizeof(esc), p->layout[i]);
		if (prof < 0)
			return kerf_kobj_fail(err, path,
					      "'%s' is not a MIG profile of %s",
					      esc, p->mig->name);
		for (start = 0; start < KERF_MIG_MAX_SLICES; start++)
			if (kerf_mig_can_add(p->mig, &layout, (unsigned)prof, start))
				break;
		if (start == KERF_MIG_MAX_SLICES)
			return kerf_kobj_fail(err, path,
					      "'%s' does not fit on the GPU beside the instances before it",
					      esc);
		layout.inst[layout.nr++] = (struct kerf_mig_instance){
			.profile = (uint8_t)prof, .start = (uint8_t)start,
		};
	}
	return 0;
}

static int dec_mig(const json_t *m, struct kerf_kobj_gpupool *p,
		   struct kerf_err *err)
{
	const json_t *v;
	int64_t x;
	int e = 0;
	int rc = kerf_kobj_need_object(m, "spec.mig", err);

	if (rc == 0 && (v = kerf_kobj_field(m, "policy")))
		rc = kerf_kobj_get_enum(v, "spec.mig.policy", mig_names, 3, &e, err);
	p->mig_policy = (enum kerf_kobj_mig_policy)e;
	if (rc == 0 && (v = kerf_kobj_field(m, "gpusPerNode"))) {
		rc = kerf_kobj_get_int(v, "spec.mig.gpusPerNode", 0,
				       KERF_NODE_MAX_GPUS, &x, err);
		p->mig_gpus_per_node = (int32_t)x;
	}
	v = kerf_kobj_field(m, "layout");
	if (rc == 0 && v && p->mig_policy != KERF_KOBJ_MIG_FIXED)
		rc = kerf_kobj_fail(err, "spec.mig.layout",
				    "is refused unless policy is Fixed");
	if (rc == 0 && !v && p->mig_policy == KERF_KOBJ_MIG_FIXED)
		rc = kerf_kobj_fail(err, "spec.mig.layout",
				    "is required with policy Fixed");
	if (rc == 0 && v)
		rc = kerf_kobj_need_array(v, "spec.mig.layout",
					  KERF_MIG_MAX_INSTANCES, err);
	if (rc == 0 && v && json_array_size(v) == 0)
		rc = kerf_kobj_fail(err, "spec.mig.layout", "must not be empty");
	for (size_t i = 0; rc == 0 && v && i < json_array_size(v); i++) {
		char path[KERF_KOBJ_PATH_MAX];

		snprintf(path, sizeof(path), "spec.mig.layout[%zu]", i);
		rc = kerf_kobj_get_text(json_array_get(v, i), path, p->layout[i],
					sizeof(p->layout[i]), false, err);
		if (rc == 0)
			p->nr_layout = i + 1;
	}
	if (rc == 0 && p->mig_policy != KERF_KOBJ_MIG_NONE && !p->mig)
		rc = kerf_kobj_fail(err, "spec.mig.policy",
				    "GPU model '%s' has no MIG table kerf knows (docs/mig.md)",
				    p->gpu_model);
	if (rc == 0 && p->mig_policy == KERF_KOBJ_MIG_FIXED)
		rc = check_layout(p, err);
	return rc;
}

static int dec_sharing(const json_t *v, struct kerf_kobj_gpupool *p,
		       struct kerf_err *err)
{
	int rc = kerf_kobj_need_array(v, "spec.sharing", 4, err);

	if (rc == 0 && json_array_size(v) == 0)
		rc = kerf_kobj_fail(err, "spec.sharing", "must not be empty");
	p->sharing = 0;
	for (size_t i = 0; rc == 0 && i < json_array_size(v); i++) {
		char path[KERF_KOBJ_PATH_MAX];
		int e;

		snprintf(path, sizeof(path), "spec.sharing[%zu]", i);
		rc = kerf_kobj_get_enum(json_array_get(v, i), path, share_names,
					4, &e, err);
		if (rc < 0)
			break;
		if (p->sharing & (1u << e))
			rc = kerf_kobj_fail(err, path, "'%s' is listed twice",
					    share_names[e]);
		p->sharing |= 1u << e;
	}
	return rc;
}

int kerf_kobj_gpupool_decode(const json_t *obj, struct kerf_kobj_gpupool *p,
			     struct kerf_err *err)
{
	const json_t *meta, *spec, *v;
	int rc;

	memset(p, 0, sizeof(*p));
	p->mig_gpus_per_node = -1;
	p->sharing = KERF_KOBJ_SHARE_WHOLE;
	rc = kerf_kobj_need_object(obj, "GPUPool", err);
	if (rc < 0)
		return rc;
	meta = kerf_kobj_field(obj, "metadata");
	rc = kerf_kobj_need_object(meta, "metadata", err);
	if (rc == 0)
		rc = kerf_kobj_required(kerf_kobj_field(meta, "name"),
					"metadata.name", err);
	if (rc == 0)
		rc = kerf_kobj_get_name(kerf_kobj_field(meta, "name"),
					"metadata.name", false, p->name, err);
	if (rc == 0 && (!strcmp(p->name, "cpu") || !strcmp(p->name, "memory")))
		rc = kerf_kobj_fail(err, "metadata.name",
				    "'%s' is reserved for tenant quotas", p->name);
	if (rc == 0 && (v = kerf_kobj_field(meta, "generation")))
		rc = kerf_kobj_get_int(v, "metadata.generation", 0, INT64_MAX,
				       &p->generation, err);
	spec = kerf_kobj_field(obj, "spec");
	if (rc == 0)
		rc = kerf_kobj_need_object(spec, "spec", err);
	if (rc == 0)
		rc = get_model(kerf_kobj_field(spec, "gpuModel"), p->gpu_model, err);
	if (rc == 0) {
		p->mig = kerf_mig_model_find(p->gpu_model);
		rc = dec_selector(kerf_kobj_field(spec, "nodeSelector"), p, err);
	}
	if (rc == 0 && (v = kerf_kobj_field(spec, "mig")))
		rc = dec_mig(v, p, err);
	if (rc == 0 && (v = kerf_kobj_field(spec, "sharing")))
		rc = dec_sharing(v, p, err);
	if (rc == 0 && (p->mig_policy != KERF_KOBJ_MIG_NONE) !=
			       !!(p->sharing & KERF_KOBJ_SHARE_MIG))
		rc = kerf_kobj_fail(err, "spec.sharing",
				    "lists MIG if and only if mig.policy is Fixed or Dynamic");
	return rc;
}

bool kerf_kobj_gpupool_selects(const struct kerf_kobj_gpupool *p,
			       const json_t *labels)
{
	for (size_t i = 0; i < p->nr_match_labels; i++) {
		const json_t *v = json_object_get(labels, p->match_labels[i].key);

		if (!json_is_string(v) ||
		    strcmp(json_string_value(v), p->match_labels[i].value) ||
		    json_string_length(v) != strlen(p->match_labels[i].value))
			return false;
	}
	return true;
}

json_t *kerf_kobj_gpupool_status_encode(const struct kerf_kobj_gpupool_status *s)
{
	char text[KERF_KOBJ_QTY_TEXT_MAX];
	json_t *o = json_object();
	bool ok = o &&
		  kerf_kobj_status_head_put(o, s->observed_generation,
					    s->conditions, s->nr_conditions) &&
		  kerf_kobj_put(o, "nodes", json_integer(s->nodes)) &&
		  kerf_kobj_put(o, "gpus", json_integer(s->gpus)) &&
		  kerf_kobj_put(o, "migGPUs", json_integer(s->mig_gpus)) &&
		  kerf_kobj_put(o, "allocated",
				json_string(kerf_kobj_format_milli(text, sizeof(text),
								   s->allocated_gpu_milli)));

	if (ok)
		return o;
	json_decref(o);
	return NULL;
}

static int get_i32(const json_t *o, const char *key, int32_t *out,
		   struct kerf_err *err)
{
	char path[KERF_KOBJ_PATH_MAX];
	const json_t *v = kerf_kobj_field(o, key);
	int64_t x = 0;
	int rc;

	if (!v)
		return 0;
	snprintf(path, sizeof(path), "status.%s", key);
	rc = kerf_kobj_get_int(v, path, 0, INT32_MAX, &x, err);
	*out = (int32_t)x;
	return rc;
}

int kerf_kobj_gpupool_status_decode(const json_t *status,
				    struct kerf_kobj_gpupool_status *s,
				    struct kerf_err *err)
{
	const json_t *v;
	int rc;

	memset(s, 0, sizeof(*s));
	if (!status || json_is_null(status))
		return 0;
	rc = kerf_kobj_status_head_decode(status, &s->observed_generation,
					  s->conditions, &s->nr_conditions, err);
	if (rc == 0)
		rc = get_i32(status, "nodes", &s->nodes, err);
	if (rc == 0)
		rc = get_i32(status, "gpus", &s->gpus, err);
	if (rc == 0)
		rc = get_i32(status, "migGPUs", &s->mig_gpus, err);
	if (rc == 0 && (v = kerf_kobj_field(status, "allocated")))
		rc = kerf_kobj_get_quantity(v, "status.allocated", KERF_KOBJ_MILLI, 0,
					    INT64_MAX, "GPUs", &s->allocated_gpu_milli,
					    err);
	return rc;
}
