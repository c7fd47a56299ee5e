/*
 * apply: a small server-side apply.  Every object keeps, next to it, which
 * manager last set each leaf field (a path such as
 * .status.conditions[type="PodScheduled"].message, list items with a merge
 * key addressed by it); a manager is (name, Apply|Update, subresource,
 * apiVersion), so an Apply by "kerf" conflicts with what "kerf" wrote by
 * Update, as the real server does.  An apply conflicts on each field it
 * sets to a different value than another manager left there, unless
 * forced; it merges as strategic merge does.  Not reproduced: an apply
 * removing the fields its manager set before but no longer names, and
 * managedFields in the objects shown.
 */
#include "testapi/testapi_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

#define SEP "\x1f"

void kerf_ta_manager_id(char *out, size_t size, const char *manager,
			const char *op, const char *sub, const char *api)
{
	snprintf(out, size, "%s" SEP "%s" SEP "%s" SEP "%s", manager, op,
		 sub ? sub : "", api ? api : "");
}

static const char *list_key(const char *field)
{
	if (!strcmp(field, "conditions"))
		return "type";
	if (!strcmp(field, "containers") || !strcmp(field, "initContainers"))
		return "name";
	return NULL;
}

/* Leaves of v into out (path -> value). */
static void flatten(const json_t *v, const char *path, const char *field,
		    json_t *out, int depth)
{
	char sub[1024];
	const char *key;
	json_t *x;
	size_t i;

	if (depth > 32)
		return;
	if (json_is_object(v) && json_object_size(v)) {
		json_object_foreach((json_t *)v, key, x) {
			snprintf(sub, sizeof(sub), "%s.%s", path, key);
			flatten(x, sub, key, out, depth + 1);
		}
		return;
	}
	if (json_is_array(v) && field && list_key(field)) {
		const char *lk = list_key(field);
		bool keyed = true;

		json_array_foreach(v, i, x)
			keyed &= json_is_string(json_object_get(x, lk));
		if (keyed && json_array_size(v)) {
			json_array_foreach(v, i, x) {
				snprintf(sub, sizeof(sub), "%s[%s=\"%s\"]", path,
					 lk,
					 json_string_value(json_object_get(x, lk)));
				flatten(x, sub, NULL, out, depth + 1);
			}
			return;
		}
	}
	if (*path && !(json_is_object(v) && !json_object_size(v)))
		json_object_set(out, path, (json_t *)v);
}

static json_t *leaves(const json_t *obj)
{
	json_t *out = json_object(), *copy;
	json_t *md;

	if (!obj || !out)
		return out;
	copy = json_deep_copy(obj);
	json_object_del(copy, "apiVersion");
	json_object_del(copy, "kind");
	md = json_object_get(copy, "metadata");
	json_object_del(md, "name");
	json_object_del(md, "namespace");
	json_object_del(md, "resourceVersion");
	json_object_del(md, "uid");
	json_object_del(md, "creationTimestamp");
	json_object_del(md, "generation");
	json_object_del(md, "managedFields");
	flatten(copy, "", NULL, out, 0);
	json_decref(copy);
	return out;
}

void kerf_ta_owners_update(json_t **owners, const json_t *old,
			   const json_t *new_obj, const char *manager_id)
{
	json_t *ol = leaves(old), *nl = leaves(new_obj), *v;
	const char *path;

	if (!*owners)
		*owners = json_object();
	json_object_foreach(nl, path, v)
		if (!json_equal(v, json_object_get(ol, path)))
			json_object_set_new(*owners, path,
					    json_string(manager_id));
	json_object_foreach(ol, path, v)
		if (!json_object_get(nl, path))
			json_object_del(*owners, path);
	json_decref(ol);
	json_decref(nl);
}

/* `conflict with "m" with subresource "s" using api` */
static void describe(char *out, size_t size, const char *id)
{
	char buf[512], *f[4] = { buf, "", "", "" };
	size_t i = 1;
	char *p;

	snprintf(buf, sizeof(buf), "%s", id);
	for (p = buf; *p && i < 4; p++)
		if (*p == '\x1f') {
			*p = 0;
			f[i++] = p + 1;
		}
	snprintf(out, size, "conflict with \"%s\"%s%s%s%s%s", f[0],
		 *f[2] ? " with subresource \"" : "", f[2], *f[2] ? "\"" : "",
		 !strcmp(f[1], "Update") ? " using " : "",
		 !strcmp(f[1], "Update") ? f[3] : "");
}

int kerf_ta_apply(struct kerf_ta_ctx *c, const json_t *cur, json_t *owners,
		  const json_t *intent, bool force, json_t **out,
		  json_t **out_owners)
{
	const char *sub = c->rq->sub ? c->rq->sub : "";
	char me[256], api[160];
	json_t *il = leaves(intent), *cl = leaves(cur), *causes, *v, *no;
	const char *path;
	struct kerf_buf msg;
	size_t n = 0;

	snprintf(api, sizeof(api), "%s%s%s", c->k->group,
		 *c->k->group ? "/" : "", c->k->version);
	kerf_ta_manager_id(me, sizeof(me), c->manager, "Apply", sub, api);
	causes = json_array();
	kerf_buf_init(&msg, 64 * 1024);
	json_object_foreach(il, path, v) {
		const char *own = json_string_value(json_object_get(owners, path));
		char d[600];

		if (!own || !strcmp(own, me) ||
		    json_equal(v, json_object_get(cl, path)))
			continue;
		describe(d, sizeof(d), own);
		kerf_ta_cause_add(causes, "FieldManagerConflict", path, "%s", d);
		n++;
	}
	if (n && !force) {
		json_t *first = json_array_get(causes, 0);
		int rc = 0;

		if (n == 1) {
			rc |= kerf_buf_addf(&msg, "Apply failed with 1 conflict: %s: %s",
					    json_string_value(json_object_get(first, "message")),
					    json_string_value(json_object_get(first, "field")));
		} else {
			size_t i;
			json_t *cz;

			rc |= kerf_buf_addf(&msg, "Apply failed with %zu conflicts: ", n);
			json_array_foreach(causes, i, cz)
				rc |= kerf_buf_addf(&msg, "%s%s: %s", i ? "\n" : "",
						    json_string_value(json_object_get(cz, "message")),
						    json_string_value(json_object_get(cz, "field")));
		}
		kerf_ta_status(c->rs, 409, "Conflict",
			       rc ? "Apply failed" : kerf_buf_str(&msg),
			       json_pack("{so}", "causes", causes));
		kerf_buf_release(&msg);
		json_decref(il);
		json_decref(cl);
		return -1;
	}
	kerf_buf_release(&msg);
	json_decref(causes);
	*out = json_deep_copy(cur);
	{
		json_t *patch = json_deep_copy(intent);
		json_t *md = json_object_get(patch, "metadata");

		json_object_del(patch, "apiVersion");
		json_object_del(patch, "kind");
		json_object_del(md, "name");
		json_object_del(md, "namespace");
		json_object_del(md, "managedFields");
		kerf_ta_strategic_merge(*out, patch);
		json_decref(patch);
	}
	no = owners ? json_deep_copy(owners) : json_object();
	json_object_foreach(il, path, v)
		json_object_set_new(no, path, json_string(me));
	*out_owners = no;
	json_decref(il);
	json_decref(cl);
	return 0;
}
