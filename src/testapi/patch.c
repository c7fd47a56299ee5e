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

/* -- RFC 6902 -- */

static int pointer_parent(json_t *doc, const char *ptr, json_t **parent,
			  char *last, size_t size)
{
	const char *p = ptr;
	json_t *cur = doc;

	if (*p != '/')
		return -1;
	for (;;) {
		char tok[512];
		size_t n = 0;

		p++;
		while (*p && *p != '/' && n + 1 < sizeof(tok)) {
			if (p[0] == '~' && p[1] == '0') {
				tok[n++] = '~';
				p += 2;
			} else if (p[0] == '~' && p[1] == '1') {
				tok[n++] = '/';
				p += 2;
			} else {
				tok[n++] = *p++;
			}
		}
		tok[n] = 0;
		if (!*p) {
			*parent = cur;
			snprintf(last, size, "%s", tok);
			return 0;
		}
		if (*p != '/')
			return -1;
		if (json_is_object(cur)) {
			cur = json_object_get(cur, tok);
		} else if (json_is_array(cur)) {
			char *end;
			unsigned long i = strtoul(tok, &end, 10);

			if (*end || !*tok)
				return -1;
			cur = json_array_get(cur, i);
		} else {
			return -1;
		}
		if (!cur)
			return -1;
	}
}

static json_t *pointer_get(json_t *doc, const char *ptr)
{
	json_t *parent;
	char last[512];

	if (!*ptr)
		return doc;
	if (pointer_parent(doc, ptr, &parent, last, sizeof(last)) < 0)
		return NULL;
	if (json_is_object(parent))
		return json_object_get(parent, last);
	if (json_is_array(parent)) {
		char *end;
		unsigned long i = strtoul(last, &end, 10);

		return *end || !*last ? NULL : json_array_get(parent, i);
	}
	return NULL;
}

static int array_index(const json_t *arr, const char *tok, bool add,
		       size_t *out)
{
	char *end;
	unsigned long i;

	if (add && !strcmp(tok, "-")) {
		*out = json_array_size(arr);
		return 0;
	}
	i = strtoul(tok, &end, 10);
	if (*end || !*tok || i > json_array_size(arr) - (add ? 0 : 1) ||
	    (!add && !json_array_size(arr)))
		return -1;
	*out = i;
	return 0;
}

static int op_add(json_t *doc, const char *path, json_t *val)
{
	json_t *parent;
	char last[512];
	size_t i;

	if (pointer_parent(doc, path, &parent, last, sizeof(last)) < 0)
		goto fail;
	if (json_is_object(parent))
		return json_object_set_new(parent, last, val);
	if (json_is_array(parent) && array_index(parent, last, true, &i) == 0)
		return json_array_insert_new(parent, i, val);
fail:
	json_decref(val);
	return -1;
}

static json_t *op_remove(json_t *doc, const char *path)
{
	json_t *parent, *v;
	char last[512];
	size_t i;

	if (pointer_parent(doc, path, &parent, last, sizeof(last)) < 0)
		return NULL;
	if (json_is_object(parent)) {
		v = json_incref(json_object_get(parent, last));
		if (v)
			json_object_del(parent, last);
		return v;
	}
	if (json_is_array(parent) && array_index(parent, last, false, &i) == 0) {
		v = json_incref(json_array_get(parent, i));
		json_array_remove(parent, i);
		return v;
	}
	return NULL;
}

/* 0; -1 a malformed patch or a path that is not there; -2 a failed test */
int kerf_ta_json_patch(json_t *doc, const json_t *ops, char *msg,
		       size_t size)
{
	json_t *op;
	size_t i;

	if (!json_is_array(ops)) {
		snprintf(msg, size, "json patch is not an array");
		return -1;
	}
	json_array_foreach(ops, i, op) {
		const char *o = json_string_value(json_object_get(op, "op"));
		const char *path = json_string_value(json_object_get(op, "path"));
		const char *from = json_string_value(json_object_get(op, "from"));
		json_t *val = json_object_get(op, "value"), *v;

		if (!o || !path) {
			snprintf(msg, size, "operation %zu lacks op or path", i);
			return -1;
		}
		if (!strcmp(o, "test")) {
			if (!json_equal(pointer_get(doc, path), val)) {
				snprintf(msg, size, "testing value %s failed", path);
				return -2;
			}
		} else if (!strcmp(o, "add")) {
			if (!val || op_add(doc, path, json_deep_copy(val)) < 0)
				goto bad;
		} else if (!strcmp(o, "remove")) {
			v = op_remove(doc, path);
			if (!v)
				goto bad;
			json_decref(v);
		} else if (!strcmp(o, "replace")) {
			v = op_remove(doc, path);
			if (!v || !val)
				goto bad_v;
			json_decref(v);
			if (op_add(doc, path, json_deep_copy(val)) < 0)
				goto bad;
		} else if (!strcmp(o, "move") || !strcmp(o, "copy")) {
			if (!from)
				goto bad;
			v = !strcmp(o, "move") ? op_remove(doc, from) :
				json_deep_copy(pointer_get(doc, from));
			if (!v || op_add(doc, path, v) < 0)
				goto bad;
		} else {
			snprintf(msg, size, "unexpected kind: %s", o);
			return -1;
		}
		continue;
bad_v:
		json_decref(v);
bad:
		snprintf(msg, size, "%s operation does not apply: doc is missing path: \"%s\"",
			 o, path);
		return -1;
	}
	return 0;
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

static json_t *scalar(const struct kerf_yaml_node *n)
{
	const char *s = n->text;
	char *end;
	long long ll;
	double d;

	if (!n->plain)
		return json_stringn(s, n->len);
	if (kerf_yaml_is_null(n))
		return json_null();
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
		return json_true();
	if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
		return json_false();
	ll = strtoll(s, &end, 10);
	if (*s && !*end)
		return json_integer(ll);
	d = strtod(s, &end);
	if (*s && !*end && strpbrk(s, "0123456789"))
		return json_real(d);
	return json_stringn(s, n->len);
}

static json_t *convert(const struct kerf_yaml_node *n)
{
	json_t *out;
	size_t i;

	switch (n->kind) {
	case KERF_YAML_SCALAR:
		return scalar(n);
	case KERF_YAML_SEQ:
		out = json_array();
		for (i = 0; out && i < n->nr; i++)
			json_array_append_new(out, convert(n->items[i]));
		return out;
	case KERF_YAML_MAP:
		out = json_object();
		for (i = 0; out && i < n->nr; i++)
			json_object_set_new(out, n->pairs[i].key->text,
					    convert(n->pairs[i].value));
		return out;
	}
	return NULL;
}

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
	out = doc.root ? convert(doc.root) : json_object();
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
