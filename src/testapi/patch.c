/*
 * patch: JSON merge patch (RFC 7386), JSON patch (RFC 6902, with test),
 * the part of strategic merge patch the built-in kinds need (lists with a
 * merge key merge by it: conditions by type, containers by name; patch
 * items first, then the server's others, as kube-apiserver orders them;
 * other lists are replaced; $patch delete/replace), and the PATCH verb:
 * its content types (strategic merge on custom resources: 415; anything
 * else: 415), server-side apply (fieldManager required) through apply.c.
 */
#include "testapi/testapi_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "format/yaml_doc.h"
#include "format/yaml_json.h"
#include "format/json_patch.h"

int kerf_ta_merge_patch(json_t *target, const json_t *patch)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)patch, key, v) {
		json_t *t = json_object_get(target, key);

		if (json_is_null(v)) {
			json_object_del(target, key);
		} else if (json_is_object(v)) {
			if (!json_is_object(t)) {
				t = json_object();
				if (!t || json_object_set_new(target, key, t))
					return -1;
			}
			if (kerf_ta_merge_patch(t, v) < 0)
				return -1;
		} else if (json_object_set_new(target, key, json_deep_copy(v))) {
			return -1;
		}
	}
	return 0;
}

json_t *kerf_ta_merge_patch_apply(const json_t *doc, const json_t *patch)
{
	json_t *out;

	if (!json_is_object(patch))
		return json_deep_copy(patch);
	out = json_is_object(doc) ? json_deep_copy(doc) : json_object();
	if (out && kerf_ta_merge_patch(out, patch) < 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* -- RFC 6902 (kobj/json_patch.c) -- */

int kerf_ta_json_patch(json_t *doc, const json_t *ops, char *msg,
		       size_t size)
{
	return kerf_json_patch_apply(doc, ops, msg, size);
}

/* -- strategic merge -- */

static const char *merge_key(const char *field)
{
	static const char *const table[][2] = {
		{ "conditions", "type" },      { "containers", "name" },
		{ "initContainers", "name" },  { "ephemeralContainers", "name" },
		{ "volumes", "name" },         { "env", "name" },
		{ "volumeMounts", "mountPath" }, { "addresses", "type" },
		{ "ownerReferences", "uid" },  { "imagePullSecrets", "name" },
		{ "ports", "containerPort" },  { "resourceClaims", "name" },
	};
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(*table); i++)
		if (!strcmp(table[i][0], field))
			return table[i][1];
	return NULL;
}

static json_t *find_by(json_t *arr, const char *key, const json_t *val)
{
	json_t *it;
	size_t i;

	json_array_foreach(arr, i, it)
		if (json_equal(json_object_get(it, key), val))
			return it;
	return NULL;
}

static int merge_list(json_t *target, const char *field, const json_t *patch)
{
	const char *mk = merge_key(field);
	json_t *orig = json_object_get(target, field), *out, *it;
	size_t i;

	if (!mk || !json_is_array(orig)) {
		json_t *copy = json_array();

		json_array_foreach(patch, i, it) {
			const char *d = json_string_value(json_object_get(it, "$patch"));

			if (!d)
				json_array_append_new(copy, json_deep_copy(it));
		}
		return json_object_set_new(target, field, copy);
	}
	out = json_array();
	json_array_foreach(patch, i, it) {
		const json_t *kv = json_object_get(it, mk);
		const char *d = json_string_value(json_object_get(it, "$patch"));
		json_t *o = kv ? find_by(orig, mk, kv) : NULL;
		json_t *m;

		if (d && !strcmp(d, "delete"))
			continue;
		m = o ? json_deep_copy(o) : json_object();
		kerf_ta_strategic_merge(m, it);
		json_array_append_new(out, m);
	}
	json_array_foreach(orig, i, it) {
		const json_t *kv = json_object_get(it, mk);
		json_t *p = kv ? find_by((json_t *)patch, mk, kv) : NULL;

		if (!p)
			json_array_append(out, it);
	}
	return json_object_set_new(target, field, out);
}

int kerf_ta_strategic_merge(json_t *target, const json_t *patch)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)patch, key, v) {
		json_t *t = json_object_get(target, key);

		if (key[0] == '$')
			continue;
		if (json_is_null(v)) {
			json_object_del(target, key);
		} else if (json_is_object(v)) {
			const char *d = json_string_value(json_object_get(v, "$patch"));

			if (d && !strcmp(d, "delete")) {
				json_object_del(target, key);
				continue;
			}
			if (!json_is_object(t) || (d && !strcmp(d, "replace"))) {
				t = json_object();
				if (!t || json_object_set_new(target, key, t))
					return -1;
			}
			if (kerf_ta_strategic_merge(t, v) < 0)
				return -1;
		} else if (json_is_array(v)) {
			if (merge_list(target, key, v) < 0)
				return -1;
		} else if (json_object_set_new(target, key, json_deep_copy(v))) {
			return -1;
		}
	}
	return 0;
}

/* -- YAML bodies of apply patches (JSON is YAML too) -- */

json_t *kerf_ta_yaml_to_json(const char *text, size_t len, char *msg,
			     size_t size)
{
	struct kerf_yaml_limits lim = {
		.max_bytes = 3 * 1024 * 1024,
		.max_depth = 64,
		.max_nodes = 200000,
	};
	struct kerf_yaml_doc doc;
	struct kerf_err err = { 0 };
	json_t *out;

	if (kerf_yaml_load(&doc, "body", text, len, &lim, &err) < 0) {
		snprintf(msg, size, "%s", err.msg);
		kerf_yaml_release(&doc);
		return NULL;
	}
	out = doc.root ? kerf_yaml_to_json(doc.root) : json_object();
	kerf_yaml_release(&doc);
	if (!out)
		snprintf(msg, size, "out of memory");
	return out;
}

/* -- the PATCH verb -- */

static const char *type_word(const json_t *j)
{
	if (json_is_string(j))
		return "string";
	if (json_is_array(j))
		return "[]interface {}";
	if (json_is_number(j))
		return "number";
	if (json_is_boolean(j))
		return "bool";
	return "map[string]interface {}";
}

static bool ctype_is(const char *ctype, const char *want)
{
	size_t n = strcspn(ctype, ";");

	while (n && ctype[n - 1] == ' ')
		n--;
	return strlen(want) == n && !strncmp(ctype, want, n);
}

static json_t *load_patch(struct kerf_ta_ctx *c, bool want_object)
{
	json_error_t je;
	json_t *p = json_loadb(c->rq->body, c->rq->len, JSON_DECODE_ANY, &je);

	if (!p) {
		kerf_ta_statusf(c->rs, 400, "BadRequest", NULL,
				"error decoding patch: %s", je.text);
		return NULL;
	}
	if (want_object ? !json_is_object(p) : !json_is_array(p)) {
		kerf_ta_statusf(c->rs, 400, "BadRequest", NULL,
				"error decoding patch: json: cannot unmarshal %s into Go value of type %s",
				type_word(p),
				want_object ? "map[string]interface {}" :
					      "jsonpatch.Patch");
		json_decref(p);
		return NULL;
	}
	return p;
}

void kerf_ta_patch(struct kerf_ta_ctx *c)
{
	const struct kerf_ta_kind *k = c->k;
	const char *ct = c->rq->ctype;
	const char *sub = c->rq->sub ? c->rq->sub : "";
	struct kerf_ta_obj *o;
	json_t *cur, *p = NULL, *res = NULL;
	char msg[512];
	int rc;

	o = kerf_ta_obj_get(k->res, c->rq->ns, c->rq->name);
	if (ctype_is(ct, "application/strategic-merge-patch+json") &&
	    (k->flags & KERF_TA_CUSTOM)) {
		kerf_ta_status(c->rs, 415, "UnsupportedMediaType",
			       "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
			       NULL);
		return;
	}
	if (!ctype_is(ct, "application/merge-patch+json") &&
	    !ctype_is(ct, "application/json-patch+json") &&
	    !ctype_is(ct, "application/strategic-merge-patch+json") &&
	    !ctype_is(ct, "application/apply-patch+yaml")) {
		kerf_ta_status(c->rs, 415, "UnsupportedMediaType",
			       "415: Unsupported Media Type", json_object());
		return;
	}
	if (ctype_is(ct, "application/apply-patch+yaml")) {
		const char *fm = kerf_ta_param(c->rq, "fieldManager");

		if (!fm || !*fm) {
			kerf_ta_status(c->rs, 422, "Invalid",
				       "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
				       json_pack("{sssss[{ssssss}]}", "group",
						 "meta.k8s.io", "kind",
						 "PatchOptions", "causes",
						 "reason", "FieldValueRequired",
						 "message",
						 "Required value: is required for apply patch",
						 "field", "fieldManager"));
			return;
		}
	}
	if (!o) {
		kerf_ta_not_found(c->rs, k, c->rq->name);
		return;
	}
	cur = kerf_ta_out(k, o->obj);
	if (ctype_is(ct, "application/merge-patch+json")) {
		p = load_patch(c, true);
		if (p)
			res = kerf_ta_merge_patch_apply(cur, p);
	} else if (ctype_is(ct, "application/strategic-merge-patch+json")) {
		p = load_patch(c, true);
		if (p) {
			res = json_deep_copy(cur);
			kerf_ta_strategic_merge(res, p);
		}
	} else if (ctype_is(ct, "application/json-patch+json")) {
		p = load_patch(c, false);
		if (p) {
			res = json_deep_copy(cur);
			rc = kerf_ta_json_patch(res, p, msg, sizeof(msg));
			if (rc < 0) {
				json_decref(res);
				res = NULL;
				kerf_ta_status(c->rs, 422, "Invalid",
					       "the server rejected our request due to an error in our request",
					       json_object());
			}
		}
	} else {
		p = kerf_ta_yaml_to_json(c->rq->body, c->rq->len, msg,
					 sizeof(msg));
		if (!json_is_object(p)) {
			kerf_ta_statusf(c->rs, 400, "BadRequest", NULL,
					"error decoding YAML: %s",
					p ? "not a mapping" : msg);
		} else if (kerf_ta_apply(c, cur, o->owners, p,
					 kerf_ta_param(c->rq, "force") &&
					 !strcmp(kerf_ta_param(c->rq, "force"), "true"),
					 &res, &c->apply_owners) < 0) {
			res = NULL;
		}
	}
	json_decref(p);
	json_decref(cur);
	if (!res)
		return;
	if (k->hooks && k->hooks->unview) {
		json_t *u = k->hooks->unview(res);

		json_decref(res);
		res = u;
	}
	kerf_ta_write_update(c, o, res, sub);
}
