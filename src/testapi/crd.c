/*
 * crd: CustomResourceDefinitions and the custom objects they define.
 *
 * A CRD is answered as created (conditions null, empty acceptedNames) and
 * then, as the real server does a moment later, Established with its names
 * accepted; its served versions are served at once at /apis/G/V/PLURAL,
 * cluster or namespaced.  Custom objects are checked against the subset of
 * structural schemas kerf's CRDs use (type, required, minimum/maximum,
 * enum, maxLength, default, x-kubernetes-list-type set/map duplicates,
 * x-kubernetes-preserve-unknown-fields, additionalProperties); unknown
 * fields are pruned with a "Warning: 299" header, or 400 with
 * fieldValidation=Strict.  CEL rules (x-kubernetes-validations) are NOT
 * evaluated: only the "some validation rules were not checked" cause the
 * real server adds when a blocking error (required, type, enum) stops CEL
 * is reproduced.  Custom objects are written with sorted keys.
 */
#include "testapi/testapi_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

static const char verbs_custom[] =
	"[\"delete\",\"deletecollection\",\"get\",\"list\",\"patch\",\"create\",\"update\",\"watch\"]";

static const char *type_of(const json_t *v)
{
	if (json_is_string(v))
		return "string";
	if (json_is_integer(v))
		return "integer";
	if (json_is_real(v))
		return "number";
	if (json_is_boolean(v))
		return "boolean";
	if (json_is_object(v))
		return "object";
	if (json_is_array(v))
		return "array";
	return "null";
}

static bool type_ok(const char *want, const json_t *v)
{
	if (!strcmp(want, "number"))
		return json_is_number(v);
	return !strcmp(want, type_of(v));
}

struct walk {
	json_t *causes;
	json_t *unknown;           /* array of paths pruned */
	bool prune;
};

static void render(const json_t *v, char *out, size_t size)
{
	char *s;

	if (json_is_string(v)) {
		snprintf(out, size, "\"%s\"", json_string_value(v));
		return;
	}
	s = kerf_ta_dump(v, false, NULL);
	snprintf(out, size, "%s", s ? s : "null");
	free(s);
}

static void walk(struct walk *w, const json_t *sch, json_t *v,
		 const char *path, int depth);

static void walk_object(struct walk *w, const json_t *sch, json_t *v,
			const char *path, int depth)
{
	const json_t *props = json_object_get(sch, "properties");
	const json_t *addl = json_object_get(sch, "additionalProperties");
	bool keep = json_is_true(json_object_get(sch,
				"x-kubernetes-preserve-unknown-fields"));
	const char *key;
	json_t *x, *tmp;
	char sub[1024];
	size_t i;

	json_object_foreach((json_t *)props, key, x) {
		const json_t *d = json_object_get(x, "default");

		if (d && !json_object_get(v, key))
			json_object_set_new(v, key, json_deep_copy(d));
	}
	json_array_foreach(json_object_get(sch, "required"), i, x) {
		const char *r = json_string_value(x);

		if (r && !json_object_get(v, r)) {
			snprintf(sub, sizeof(sub), "%s%s%s", path,
				 *path ? "." : "", r);
			kerf_ta_cause_add(w->causes, "FieldValueRequired", sub,
					  "Required value");
		}
	}
	json_object_foreach_safe(v, tmp, key, x) {
		const json_t *ps = json_object_get(props, key);

		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "",
			 key);
		if (depth == 0 && (!strcmp(key, "metadata") ||
				   !strcmp(key, "apiVersion") ||
				   !strcmp(key, "kind")))
			continue;
		if (ps)
			walk(w, ps, x, sub, depth + 1);
		else if (json_is_object(addl))
			walk(w, addl, x, sub, depth + 1);
		else if (!keep && !json_is_true(addl)) {
			json_array_append_new(w->unknown, json_string(sub));
			if (w->prune)
				json_object_del(v, key);
		}
	}
}

static void walk_array(struct walk *w, const json_t *sch, json_t *v,
		       const char *path, int depth)
{
	const json_t *items = json_object_get(sch, "items");
	const char *lt = json_string_value(json_object_get(sch,
					"x-kubernetes-list-type"));
	const json_t *mk = json_object_get(sch, "x-kubernetes-list-map-keys");
	char sub[1024], val[512];
	json_t *x;
	size_t i, j;

	json_array_foreach(v, i, x) {
		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		if (items)
			walk(w, items, x, sub, depth + 1);
		if (!lt)
			continue;
		for (j = 0; j < i; j++) {
			const json_t *y = json_array_get(v, j);
			bool dup;

			if (!strcmp(lt, "set")) {
				dup = json_equal(x, y);
			} else if (!strcmp(lt, "map") && json_is_array(mk)) {
				json_t *k;
				size_t n;

				dup = true;
				json_array_foreach(mk, n, k)
					dup &= json_equal(json_object_get(x, json_string_value(k)),
							  json_object_get(y, json_string_value(k)));
			} else {
				dup = false;
			}
			if (dup) {
				render(x, val, sizeof(val));
				kerf_ta_cause_add(w->causes,
						  "FieldValueDuplicate", sub,
						  "Duplicate value: %s", val);
				break;
			}
		}
	}
}

static void walk(struct walk *w, const json_t *sch, json_t *v,
		 const char *path, int depth)
{
	const char *type = json_string_value(json_object_get(sch, "type"));
	const json_t *e = json_object_get(sch, "enum");
	const json_t *min = json_object_get(sch, "minimum");
	const json_t *max = json_object_get(sch, "maximum");
	const json_t *maxlen = json_object_get(sch, "maxLength");
	char val[512];

	if (depth > 64 || !json_is_object(sch))
		return;
	if (json_is_null(v) && json_is_true(json_object_get(sch, "nullable")))
		return;
	if (type && !type_ok(type, v)) {
		kerf_ta_cause_add(w->causes, "FieldValueTypeInvalid", path,
				  "Invalid value: \"%s\": %s in body must be of type %s: \"%s\"",
				  type_of(v), path, type, type_of(v));
		return;
	}
	if (json_is_array(e) && json_array_size(e)) {
		json_t *x;
		size_t i;
		bool ok = false;

		json_array_foreach(e, i, x)
			ok |= json_equal(x, v);
		if (!ok) {
			struct kerf_buf b;
			int rc = 0;

			kerf_buf_init(&b, 8192);
			json_array_foreach(e, i, x) {
				render(x, val, sizeof(val));
				rc |= kerf_buf_addf(&b, "%s%s", i ? ", " : "",
						    val);
			}
			render(v, val, sizeof(val));
			kerf_ta_cause_add(w->causes, "FieldValueNotSupported",
					  path,
					  "Unsupported value: %s: supported values: %s",
					  val, rc ? "" : kerf_buf_str(&b));
			kerf_buf_release(&b);
		}
	}
	if (json_is_number(v) && json_is_number(min) &&
	    json_number_value(v) < json_number_value(min)) {
		render(v, val, sizeof(val));
		kerf_ta_cause_add(w->causes, "FieldValueInvalid", path,
				  "Invalid value: %s: %s in body should be greater than or equal to %g",
				  val, path, json_number_value(min));
	}
	if (json_is_number(v) && json_is_number(max) &&
	    json_number_value(v) > json_number_value(max)) {
		render(v, val, sizeof(val));
		kerf_ta_cause_add(w->causes, "FieldValueInvalid", path,
				  "Invalid value: %s: %s in body should be less than or equal to %g",
				  val, path, json_number_value(max));
	}
	if (json_is_string(v) && json_is_integer(maxlen) &&
	    (json_int_t)json_string_length(v) > json_integer_value(maxlen))
		kerf_ta_cause_add(w->causes, "FieldValueTooLong", path,
				  "Too long: may not be more than %lld bytes",
				  (long long)json_integer_value(maxlen));
	if (json_is_object(v))
		walk_object(w, sch, v, path, depth);
	else if (json_is_array(v))
		walk_array(w, sch, v, path, depth);
}

static bool blocking(const json_t *causes)
{
	json_t *c;
	size_t i;

	json_array_foreach(causes, i, c) {
		const char *r = json_string_value(json_object_get(c, "reason"));

		if (!strcmp(r, "FieldValueRequired") ||
		    !strcmp(r, "FieldValueTypeInvalid") ||
		    !strcmp(r, "FieldValueNotSupported"))
			return true;
	}
	return false;
}

static int custom_check(struct kerf_ta_ctx *c, json_t *obj)
{
	const char *fv = kerf_ta_param(c->rq, "fieldValidation");
	bool strict = fv && !strcmp(fv, "Strict");
	bool ignore = fv && !strcmp(fv, "Ignore");
	struct walk w = { .causes = json_array(), .unknown = json_array(),
			  .prune = true };
	json_t *u;
	size_t i;

	if (c->k->schema)
		walk(&w, c->k->schema, obj, "", 0);
	if (strict && json_array_size(w.unknown)) {
		struct kerf_buf b;
		int rc = 0;

		kerf_buf_init(&b, 64 * 1024);
		json_array_foreach(w.unknown, i, u)
			rc |= kerf_buf_addf(&b, "%sunknown field \"%s\"",
					    i ? ", " : "",
					    json_string_value(u));
		kerf_ta_statusf(c->rs, 400, "BadRequest", NULL,
				"%s in version \"%s\" cannot be handled as a %s: strict decoding error: %s",
				c->k->kind, c->k->version, c->k->kind,
				rc ? "" : kerf_buf_str(&b));
		kerf_buf_release(&b);
		goto fail;
	}
	if (json_array_size(w.causes)) {
		if (c->k->has_cel && blocking(w.causes))
			kerf_ta_cause_add(w.causes, "FieldValueInvalid", "<nil>",
					  "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation");
		json_decref(w.unknown);
		return kerf_ta_invalid(c->rs, c->k,
				       kerf_ta_str(obj, "metadata.name"),
				       w.causes);
	}
	if (!ignore)
		json_array_foreach(w.unknown, i, u)
			kerf_ta_warn(c->rs, "299 - \"unknown field \\\"%s\\\"\"",
				     json_string_value(u));
	json_decref(w.causes);
	json_decref(w.unknown);
	return 0;
fail:
	json_decref(w.causes);
	json_decref(w.unknown);
	return -1;
}

static int custom_update(struct kerf_ta_ctx *c, const json_t *old,
			 json_t *obj)
{
	(void)old;
	return custom_check(c, obj);
}

const struct kerf_ta_hooks kerf_ta_custom_hooks = {
	.create = custom_check,
	.update = custom_update,
};

/* -- the CRDs themselves -- */

static int crd_create(struct kerf_ta_ctx *c, json_t *crd)
{
	const char *group = kerf_ta_str(crd, "spec.group");
	const char *plural = kerf_ta_str(crd, "spec.names.plural");
	const char *kind = kerf_ta_str(crd, "spec.names.kind");
	const char *name = kerf_ta_str(crd, "metadata.name");
	json_t *causes = json_array(), *stored = json_array(), *v;
	char want[512];
	size_t i;

	if (!group || !*group)
		kerf_ta_cause_add(causes, "FieldValueRequired", "spec.group",
				  "Required value");
	if (!plural || !*plural)
		kerf_ta_cause_add(causes, "FieldValueRequired",
				  "spec.names.plural", "Required value");
	if (!kind || !*kind)
		kerf_ta_cause_add(causes, "FieldValueRequired",
				  "spec.names.kind", "Required value");
	snprintf(want, sizeof(want), "%s.%s", plural ? plural : "",
		 group ? group : "");
	if (group && plural && strcmp(want, name))
		kerf_ta_cause_add(causes, "FieldValueInvalid", "metadata.name",
				  "Invalid value: \"%s\": must be spec.names.plural+\".\"+spec.group",
				  name);
	if (!json_array_size(kerf_ta_path(crd, "spec.versions")))
		kerf_ta_cause_add(causes, "FieldValueRequired",
				  "spec.versions", "Required value");
	if (json_array_size(causes)) {
		json_decref(stored);
		return kerf_ta_invalid(c->rs, c->k, name, causes);
	}
	json_decref(causes);
	json_array_foreach(kerf_ta_path(crd, "spec.versions"), i, v)
		if (json_is_true(json_object_get(v, "storage")))
			json_array_append(stored, json_object_get(v, "name"));
	if (!json_object_get(json_object_get(crd, "spec"), "conversion"))
		json_object_set_new(json_object_get(crd, "spec"), "conversion",
				    json_pack("{ss}", "strategy", "None"));
	json_object_set_new(crd, "status",
			    json_pack("{sns{ssss}so}", "conditions",
				      "acceptedNames", "plural", "", "kind", "",
				      "storedVersions", stored));
	return 0;
}

const struct kerf_ta_hooks kerf_ta_crd_hooks = {
	.create = crd_create,
};

static bool has_key(const json_t *j, const char *key, int depth)
{
	const char *k;
	json_t *v;
	size_t i;

	if (depth > 64)
		return false;
	if (json_is_object(j)) {
		json_object_foreach((json_t *)j, k, v)
			if (!strcmp(k, key) || has_key(v, key, depth + 1))
				return true;
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			if (has_key(v, key, depth + 1))
				return true;
	}
	return false;
}

static int serve_version(struct kerf_testapi_store *st, const json_t *crd,
			 const json_t *ver)
{
	const json_t *names = kerf_ta_path(crd, "spec.names");
	const char *kind = json_string_value(json_object_get(names, "kind"));
	const char *singular = json_string_value(json_object_get(names,
								 "singular"));
	const char *lk = json_string_value(json_object_get(names, "listKind"));
	const char *scope = kerf_ta_str(crd, "spec.scope");
	struct kerf_ta_kind *k = calloc(1, sizeof(*k));
	char buf[256];
	size_t i;

	if (!k)
		return -KERF_ENOMEM;
	k->group = kerf_strdup(kerf_ta_str(crd, "spec.group"));
	k->version = kerf_strdup(json_string_value(json_object_get(ver, "name")));
	k->plural = kerf_strdup(json_string_value(json_object_get(names,
								  "plural")));
	k->kind = kerf_strdup(kind);
	if (singular) {
		k->singular = kerf_strdup(singular);
	} else {
		snprintf(buf, sizeof(buf), "%s", kind);
		for (i = 0; buf[i]; i++)
			buf[i] = (char)tolower((unsigned char)buf[i]);
		k->singular = kerf_strdup(buf);
	}
	snprintf(buf, sizeof(buf), "%sList", kind);
	k->list_kind = kerf_strdup(lk ? lk : buf);
	k->short_names = json_deep_copy(json_object_get(names, "shortNames"));
	k->categories = json_deep_copy(json_object_get(names, "categories"));
	k->schema = json_deep_copy(kerf_ta_path(ver, "schema.openAPIV3Schema"));
	k->has_cel = has_key(k->schema, "x-kubernetes-validations", 0);
	k->flags = KERF_TA_CUSTOM | KERF_TA_GENERATION;
	if (scope && !strcmp(scope, "Namespaced"))
		k->flags |= KERF_TA_NAMESPACED;
	if (kerf_ta_path(ver, "subresources.status"))
		k->flags |= KERF_TA_STATUS;
	k->verbs = verbs_custom;
	k->hooks = &kerf_ta_custom_hooks;
	k->crd = kerf_strdup(kerf_ta_str(crd, "metadata.name"));
	snprintf(buf, sizeof(buf), "%s.%s", k->plural ? k->plural : "",
		 k->group ? k->group : "");
	k->res = kerf_ta_res_get(st, buf);
	if (!k->group || !k->version || !k->plural || !k->kind ||
	    !k->singular || !k->list_kind || !k->crd || !k->res ||
	    kerf_ta_kind_add(st, k) < 0) {
		kerf_ta_kind_free(k);
		return -KERF_ENOMEM;
	}
	return 0;
}

int kerf_ta_crd_serve(struct kerf_ta_ctx *c, const json_t *crd)
{
	const char *name = kerf_ta_str(crd, "metadata.name");
	struct kerf_ta_obj *o = kerf_ta_obj_get(c->k->res, NULL, name);
	json_t *n, *st, *ver;
	char now[32];
	size_t i;

	if (!o)
		return -KERF_ENOTFOUND;
	kerf_ta_kinds_remove_crd(c->st, name);
	json_array_foreach(kerf_ta_path(crd, "spec.versions"), i, ver)
		if (json_is_true(json_object_get(ver, "served")) &&
		    serve_version(c->st, crd, ver) < 0)
			return -KERF_ENOMEM;
	n = json_deep_copy(o->obj);
	st = json_object_get(n, "status");
	kerf_ta_now(now);
	json_object_set_new(st, "conditions",
			    json_pack("[{ssssssssss}{ssssssssss}]", "type",
				      "NamesAccepted", "status", "True",
				      "lastTransitionTime", now, "reason",
				      "NoConflicts", "message",
				      "no conflicts found", "type",
				      "Established", "status", "True",
				      "lastTransitionTime", now, "reason",
				      "InitialNamesAccepted", "message",
				      "the initial names have been accepted"));
	json_object_set_new(st, "acceptedNames",
			    json_deep_copy(kerf_ta_path(n, "spec.names")));
	kerf_ta_obj_update(c->st, c->k->res, o, n);
	return 0;
}
