/*
 * crud: the generic verbs every kind shares (create, get, update, delete;
 * list and watch live in list.c and watch.c, patch in patch.c), with the
 * rules kube-apiserver applies to all of them: metadata the server owns is
 * kept from the stored object, a resourceVersion in the body is a
 * precondition (409 when stale), the /status subresource changes only
 * status and the main resource never does, metadata.generation moves only
 * when the spec does, and a write that changes nothing is not a write (no
 * new resourceVersion, no event).
 */
#include "testapi/testapi_int.h"
#include "testapi/webhook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

enum { MAX_JSON_DEPTH = 64 };

/* dst[key] = src[key], or no key when src has none. */
static void keep_key(json_t *dst, const json_t *src, const char *key)
{
	json_t *v = json_object_get(src, key);

	if (v)
		json_object_set(dst, key, v);
	else
		json_object_del(dst, key);
}

json_t *kerf_ta_out(const struct kerf_ta_kind *k, const json_t *stored)
{
	json_t *o;

	if (k->hooks && k->hooks->view)
		return k->hooks->view(stored);
	o = json_deep_copy(stored);
	if (o && (k->flags & KERF_TA_CUSTOM))
		return o;
	return o;
}

static int depth_of(const json_t *j, int d)
{
	const char *k;
	json_t *v;
	size_t i;
	int m = d;

	if (d > MAX_JSON_DEPTH)
		return d;
	if (json_is_object(j)) {
		json_object_foreach((json_t *)j, k, v) {
			int x = depth_of(v, d + 1);

			m = x > m ? x : m;
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) {
			int x = depth_of(v, d + 1);

			m = x > m ? x : m;
		}
	}
	return m;
}

/* The request body as an object of the route's kind, or -1 with rs set. */
int kerf_ta_decode_body(struct kerf_ta_ctx *c, json_t **out)
{
	json_error_t je;
	json_t *j;
	const char *kind, *api;
	char want_api[128];

	*out = NULL;
	j = json_loadb(c->rq->body, c->rq->len, JSON_DECODE_ANY, &je);
	if (!json_is_object(j)) {
		json_decref(j);
		return kerf_ta_statusf(c->rs, 400, "BadRequest", NULL,
				       "the object provided is unrecognized (must be of type %s): couldn't get version/kind; json parse error: %s (%.40s)",
				       c->k->kind, je.text, c->rq->body);
	}
	if (depth_of(j, 1) > MAX_JSON_DEPTH) {
		json_decref(j);
		return kerf_ta_statusf(c->rs, 400, "BadRequest", NULL,
				       "the object provided is nested more than %d levels deep",
				       MAX_JSON_DEPTH);
	}
	kind = json_string_value(json_object_get(j, "kind"));
	api = json_string_value(json_object_get(j, "apiVersion"));
	snprintf(want_api, sizeof(want_api), "%s%s%s", c->k->group,
		 *c->k->group ? "/" : "", c->k->version);
	if (kind && *kind && strcmp(kind, c->k->kind)) {
		kerf_ta_statusf(c->rs, 400, "BadRequest", NULL,
				"%s in version \"%s\" cannot be handled as a %s: converting (%s.%s) to (%s.%s): unknown conversion",
				kind, c->k->version, c->k->kind,
				c->k->version, kind,
				*c->k->group ? c->k->group : "core",
				c->k->kind);
		json_decref(j);
		return -1;
	}
	(void)api;
	if (c->k->hooks && c->k->hooks->unview) {
		json_t *u = c->k->hooks->unview(j);

		json_decref(j);
		j = u;
		if (!j)
			return kerf_ta_status(c->rs, 500, "InternalError",
					      "out of memory", NULL);
	}
	json_object_set_new(j, "kind", json_string(c->k->kind));
	if (!(c->k->hooks && c->k->hooks->view))
		json_object_set_new(j, "apiVersion", json_string(want_api));
	*out = j;
	return 0;
}

bool kerf_ta_ns_exists(struct kerf_testapi_store *st, const char *ns)
{
	struct kerf_ta_res *r = kerf_ta_res_get(st, "namespaces");

	return r && kerf_ta_obj_get(r, NULL, ns);
}

static int check_labels(struct kerf_ta_ctx *c, const json_t *obj,
			json_t *causes)
{
	const char *key;
	json_t *v, *labels = kerf_ta_path(obj, "metadata.labels");

	json_object_foreach(labels, key, v) {
		const char *s = json_string_value(v);

		if (!kerf_ta_valid_qualified_name(key))
			kerf_ta_cause_add(causes, "FieldValueInvalid",
					  "metadata.labels",
					  "Invalid value: \"%s\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
					  key);
		if (!s || !kerf_ta_valid_label_value(s))
			kerf_ta_cause_add(causes, "FieldValueInvalid",
					  "metadata.labels",
					  "Invalid value: \"%s\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
					  s ? s : "");
	}
	(void)c;
	return 0;
}

/*
 * Admission webhooks on a create: the mutating ones see the object before
 * the server stamps it (no uid, creationTimestamp, generation; a pod's
 * status as sent), the validating ones the object as it will be stored.
 * 0, or -1 with rs set.
 */
static int admit_create(struct kerf_ta_ctx *c, json_t *obj)
{
	static const char *const stamps[] = { "uid", "creationTimestamp",
					      "generation" };
	const struct kerf_ta_kind *k = c->k;
	struct kerf_ta_admit a;
	json_t *view, *md, *causes;
	bool unlocked = false;
	char name[256];
	size_t i;
	int rc;

	kerf_ta_admit_init(c, &a, "CREATE");
	snprintf(name, sizeof(name), "%s", kerf_ta_str(obj, "metadata.name"));
	a.name = name;
	view = json_deep_copy(obj);
	md = json_object_get(view, "metadata");
	for (i = 0; i < sizeof(stamps) / sizeof(*stamps); i++)
		json_object_del(md, stamps[i]);
	if (k->hooks == &kerf_ta_pod_hooks)
		json_object_set_new(view, "status", json_object());
	a.obj = view;
	rc = kerf_ta_admit_mutate(c, &a, &unlocked);
	if (rc == 0 && unlocked) {
		/* the server's stamps and status again, over the webhooks' */
		md = kerf_ta_path_mk(view, "metadata");
		for (i = 0; i < sizeof(stamps) / sizeof(*stamps); i++) {
			json_t *v = kerf_ta_path(obj, "metadata");

			v = json_object_get(v, stamps[i]);
			if (v)
				json_object_set(md, stamps[i], v);
			else
				json_object_del(md, stamps[i]);
		}
		keep_key(view, obj, "status");
		keep_key(view, obj, "kind");
		keep_key(view, obj, "apiVersion");
		if (k->flags & KERF_TA_NAMESPACED)
			keep_key(md, kerf_ta_path(obj, "metadata"), "namespace");
		json_object_clear(obj);
		json_object_update(obj, view);
		causes = json_array();
		check_labels(c, obj, causes);
		if (json_array_size(causes)) {
			kerf_ta_invalid(c->rs, k, kerf_ta_str(obj, "metadata.name"),
					causes);
			rc = -1;
		} else {
			json_decref(causes);
		}
	}
	if (rc == 0) {
		a.obj = obj;
		rc = kerf_ta_admit_validate(c, &a, &unlocked);
	}
	json_decref(view);
	kerf_ta_admit_release(&a);
	return rc;
}

static const char gen_chars[] = "bcdfghjklmnpqrstvwxz2456789";

static void create(struct kerf_ta_ctx *c)
{
	struct kerf_ta_req *rq = c->rq;
	const struct kerf_ta_kind *k = c->k;
	struct kerf_ta_obj *o = NULL;
	json_t *obj, *md, *causes;
	const char *ns, *name;
	char uid[37], now[32], genname[300];

	if (kerf_ta_decode_body(c, &obj) < 0)
		return;
	md = kerf_ta_path_mk(obj, "metadata");
	ns = json_string_value(json_object_get(md, "namespace"));
	if (k->flags & KERF_TA_NAMESPACED) {
		if (ns && *ns && strcmp(ns, rq->ns)) {
			kerf_ta_status(c->rs, 400, "BadRequest",
				       "the namespace of the provided object does not match the namespace sent on the request",
				       NULL);
			goto out;
		}
		json_object_set_new(md, "namespace", json_string(rq->ns));
	} else {
		json_object_del(md, "namespace");
	}
	name = json_string_value(json_object_get(md, "name"));
	if ((!name || !*name) &&
	    json_string_value(json_object_get(md, "generateName"))) {
		size_t i;

		snprintf(genname, sizeof(genname), "%.250s",
			 json_string_value(json_object_get(md, "generateName")));
		for (i = 0; i < 5; i++) {
			char ch[2] = { 0, 0 };
			uint64_t r = c->st->uid_state * 6364136223846793005ull +
				     1442695040888963407ull;

			c->st->uid_state = r;
			ch[0] = gen_chars[(r >> 33) % (sizeof(gen_chars) - 1)];
			strncat(genname, ch, sizeof(genname) - strlen(genname) - 1);
		}
		json_object_set_new(md, "name", json_string(genname));
		name = json_string_value(json_object_get(md, "name"));
	}
	if (!name || !*name) {
		causes = json_array();
		kerf_ta_cause_add(causes, "FieldValueRequired",
				  "metadata.name",
				  "Required value: name or generateName is required");
		kerf_ta_invalid(c->rs, k, "", causes);
		goto out;
	}
	if ((k->flags & KERF_TA_NAMESPACED) && !kerf_ta_ns_exists(c->st, rq->ns)) {
		kerf_ta_statusf(c->rs, 404, "NotFound",
				json_pack("{ssss}", "name", rq->ns, "kind",
					  "namespaces"),
				"namespaces \"%s\" not found", rq->ns);
		goto out;
	}
	kerf_ta_new_uid(c->st, uid);
	kerf_ta_now(now);
	json_object_del(md, "resourceVersion");
	json_object_del(md, "managedFields");
	json_object_del(md, "deletionTimestamp");
	json_object_del(md, "deletionGracePeriodSeconds");
	json_object_del(md, "selfLink");
	json_object_set_new(md, "uid", json_string(uid));
	if (k->flags & KERF_TA_GENERATION)
		json_object_set_new(md, "generation", json_integer(1));
	else
		json_object_del(md, "generation");
	json_object_set_new(md, "creationTimestamp", json_string(now));
	if ((k->flags & KERF_TA_STATUS) && !(k->flags & KERF_TA_KEEP_STATUS))
		json_object_del(obj, "status");
	causes = json_array();
	check_labels(c, obj, causes);
	if (json_array_size(causes) && k->hooks == &kerf_ta_pod_hooks &&
	    !json_array_size(kerf_ta_path(obj, "spec.containers")))
		kerf_ta_cause_add(causes, "FieldValueRequired",
				  "spec.containers", "Required value");
	if (json_array_size(causes)) {
		kerf_ta_invalid(c->rs, k, name, causes);
		goto out;
	}
	json_decref(causes);
	if (k->hooks && k->hooks->create && k->hooks->create(c, obj) < 0)
		goto out;
	if (admit_create(c, obj) < 0)
		goto out;
	name = kerf_ta_str(obj, "metadata.name");
	if (kerf_ta_obj_get(k->res, (k->flags & KERF_TA_NAMESPACED) ? rq->ns : NULL,
			    name)) {
		char res[256];

		kerf_ta_statusf(c->rs, 409, "AlreadyExists",
				kerf_ta_details(k, name),
				"%s \"%s\" already exists",
				kerf_ta_resource_name(k, res, sizeof(res)), name);
		goto out;
	}
	if (c->dry_run) {
		kerf_ta_send_json(c->rs, 201, kerf_ta_out(k, obj),
				  k->flags & KERF_TA_CUSTOM);
		goto out;
	}
	if (kerf_ta_obj_create(c->st, k->res, json_incref(obj), &o) < 0) {
		kerf_ta_status(c->rs, 500, "InternalError", "out of memory",
			       NULL);
		goto out;
	}
	{
		char id[256];

		kerf_ta_manager_id(id, sizeof(id), c->manager, "Update", "",
				   "");
		kerf_ta_owners_update(&o->owners, NULL, o->obj, id);
	}
	kerf_ta_send_json(c->rs, 201, kerf_ta_out(k, o->obj),
			  k->flags & KERF_TA_CUSTOM);
	if (k->hooks == &kerf_ta_crd_hooks)
		kerf_ta_crd_serve(c, o->obj);
out:
	json_decref(obj);
}

static void get(struct kerf_ta_ctx *c)
{
	const struct kerf_ta_kind *k = c->k;
	struct kerf_ta_obj *o = kerf_ta_obj_get(k->res, c->rq->ns,
						c->rq->name);

	if (!o) {
		kerf_ta_not_found(c->rs, k, c->rq->name);
		return;
	}
	kerf_ta_send_json(c->rs, 200, kerf_ta_out(k, o->obj),
			  k->flags & KERF_TA_CUSTOM);
}

/* Everything of a custom object but metadata and status: its "spec". */
static bool spec_changed(const struct kerf_ta_kind *k, const json_t *a,
			 const json_t *b)
{
	const char *key;
	json_t *v;

	if (!(k->flags & KERF_TA_CUSTOM))
		return !json_equal(json_object_get(a, "spec"),
				   json_object_get(b, "spec")) &&
		       (json_object_get(a, "spec") || json_object_get(b, "spec"));
	json_object_foreach((json_t *)a, key, v) {
		if (!strcmp(key, "metadata") || !strcmp(key, "status") ||
		    !strcmp(key, "apiVersion") || !strcmp(key, "kind"))
			continue;
		if (!json_equal(v, json_object_get(b, key)))
			return true;
	}
	json_object_foreach((json_t *)b, key, v) {
		if (!strcmp(key, "metadata") || !strcmp(key, "status") ||
		    !strcmp(key, "apiVersion") || !strcmp(key, "kind"))
			continue;
		if (!json_object_get(a, key))
			return true;
	}
	return false;
}

/*
 * After webhooks were called without the lock: *op looked up again by the
 * name of old, which must still be there at resourceVersion rv (gone:
 * 404; changed meanwhile: 409).  0 or -1 with rs set.
 */
static int look_again(struct kerf_ta_ctx *c, struct kerf_ta_obj **op,
		      const json_t *old, const char *rv)
{
	const char *name = kerf_ta_str(old, "metadata.name");
	struct kerf_ta_obj *o = kerf_ta_obj_get(c->k->res,
						kerf_ta_str(old, "metadata.namespace"),
						name);
	const char *now = o ? kerf_ta_str(o->obj, "metadata.resourceVersion") :
			      NULL;

	if (!o)
		return kerf_ta_not_found(c->rs, c->k, name);
	if (!rv || !now || strcmp(rv, now))
		return kerf_ta_conflict_modified(c->rs, c->k, name);
	*op = o;
	return 0;
}

/* The DeleteOptions a webhook sees: the body's, with the query's. */
static json_t *delete_options(struct kerf_ta_ctx *c, const json_t *opts)
{
	static const char *const keys[] = { "gracePeriodSeconds",
		"preconditions", "orphanDependents", "propagationPolicy",
		"dryRun" };
	const char *g = kerf_ta_param(c->rq, "gracePeriodSeconds");
	const char *pp = kerf_ta_param(c->rq, "propagationPolicy");
	json_t *o = json_pack("{ssss}", "kind", "DeleteOptions", "apiVersion",
			      "meta.k8s.io/v1");
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
		json_t *v = json_object_get(opts, keys[i]);

		if (!v && i == 0 && g)
			v = json_integer(strtoll(g, NULL, 10));
		else if (!v && i == 3 && pp)
			v = json_string(pp);
		else if (!v && i == 4 && c->dry_run)
			v = json_pack("[s]", "All");
		else
			json_incref(v);
		if (v)
			json_object_set_new(o, keys[i], v);
	}
	return o;
}

/*
 * Validating webhooks on a delete of *op, old being what is deleted (the
 * stored object, or the pod after its graceful step).  0 or -1.
 */
static int admit_delete(struct kerf_ta_ctx *c, struct kerf_ta_obj **op,
			const json_t *old, const json_t *opts)
{
	struct kerf_ta_admit a;
	json_t *keep_old = json_incref((json_t *)old);
	char *rv = kerf_strdup(kerf_ta_str((*op)->obj, "metadata.resourceVersion"));
	bool unlocked = false;
	int rc;

	if (c->no_admission) {
		json_decref(keep_old);
		free(rv);
		return 0;
	}
	kerf_ta_admit_init(c, &a, "DELETE");
	json_decref(a.options);
	a.options = delete_options(c, opts);
	a.name = kerf_ta_str(old, "metadata.name");
	a.at.sub = "";
	a.old = keep_old;
	rc = kerf_ta_admit_validate(c, &a, &unlocked);
	if (rc == 0 && unlocked)
		rc = look_again(c, op, (*op)->obj, rv);
	kerf_ta_admit_release(&a);
	json_decref(keep_old);
	free(rv);
	return rc;
}

/*
 * Admission webhooks on an update of *op to obj (mutating ones change
 * obj).  When the store's lock was released, the object is looked up
 * again: gone is 404, changed meanwhile is 409 (the real server would
 * try again; see docs/testapi.md).  0, or -1 with rs set.
 */
static int admit_update(struct kerf_ta_ctx *c, struct kerf_ta_obj **op,
			json_t *obj, bool mutating)
{
	struct kerf_ta_admit a;
	json_t *old = json_incref((*op)->obj);
	char *rv = kerf_strdup(kerf_ta_str(old, "metadata.resourceVersion"));
	bool unlocked = false;
	int rc;

	kerf_ta_admit_init(c, &a, "UPDATE");
	a.obj = obj;
	a.old = old;
	rc = mutating ? kerf_ta_admit_mutate(c, &a, &unlocked) :
			kerf_ta_admit_validate(c, &a, &unlocked);
	if (rc == 0 && unlocked)
		rc = look_again(c, op, old, rv);
	kerf_ta_admit_release(&a);
	json_decref(old);
	free(rv);
	return rc;
}

/*
 * Store obj (stolen) as the new version of o through subresource sub
 * ("" or "status"), answering 200 with what is stored; -1 with rs set.
 */
int kerf_ta_write_update(struct kerf_ta_ctx *c, struct kerf_ta_obj *o,
			 json_t *obj, const char *sub)
{
	const struct kerf_ta_kind *k = c->k;
	const json_t *old = o->obj;
	json_t *md, *omd = json_object_get(old, "metadata"), *causes, *cmp;
	const char *rv;
	char id[256];
	int64_t gen;

	md = kerf_ta_path_mk(obj, "metadata");
	rv = json_string_value(json_object_get(md, "resourceVersion"));
	if (rv && *rv &&
	    strcmp(rv, json_string_value(json_object_get(omd,
							 "resourceVersion")))) {
		json_decref(obj);
		return kerf_ta_conflict_modified(c->rs, k, c->rq->name);
	}
	if (admit_update(c, &o, obj, true) < 0) {
		json_decref(obj);
		return -1;
	}
	old = o->obj;
	omd = json_object_get(old, "metadata");
	md = kerf_ta_path_mk(obj, "metadata");
	if (!strcmp(sub, "status")) {
		json_t *n = json_deep_copy(old);
		json_t *nmd = json_object_get(n, "metadata");

		keep_key(n, obj, "status");
		if (!strcmp(k->plural, "pods") && !*k->group) {
			keep_key(nmd, md, "labels");
			keep_key(nmd, md, "annotations");
		}
		json_decref(obj);
		obj = n;
		md = nmd;
	} else if (k->flags & KERF_TA_STATUS) {
		keep_key(obj, old, "status");
	}
	keep_key(md, omd, "name");
	keep_key(md, omd, "namespace");
	keep_key(md, omd, "uid");
	keep_key(md, omd, "creationTimestamp");
	keep_key(md, omd, "generation");
	keep_key(md, omd, "deletionTimestamp");
	keep_key(md, omd, "deletionGracePeriodSeconds");
	keep_key(md, omd, "resourceVersion");
	json_object_del(md, "managedFields");
	keep_key(obj, old, "apiVersion");
	keep_key(obj, old, "kind");
	causes = json_array();
	check_labels(c, obj, causes);
	if (json_array_size(causes)) {
		json_decref(obj);
		return kerf_ta_invalid(c->rs, k, c->rq->name, causes);
	}
	json_decref(causes);
	if (k->hooks && k->hooks->update && k->hooks->update(c, old, obj) < 0) {
		json_decref(obj);
		return -1;
	}
	if ((k->flags & KERF_TA_GENERATION) && spec_changed(k, old, obj)) {
		gen = json_integer_value(json_object_get(md, "generation"));
		json_object_set_new(md, "generation", json_integer(gen + 1));
	}
	if (admit_update(c, &o, obj, false) < 0) {
		json_decref(obj);
		return -1;
	}
	old = o->obj;
	cmp = obj;
	if (json_equal(cmp, old) || c->dry_run) {
		kerf_ta_send_json(c->rs, 200,
				  kerf_ta_out(k, c->dry_run ? obj : old),
				  k->flags & KERF_TA_CUSTOM);
		json_decref(obj);
		return 0;
	}
	if (c->apply_owners) {
		json_decref(o->owners);
		o->owners = c->apply_owners;
		c->apply_owners = NULL;
	} else {
		char api[160];

		snprintf(api, sizeof(api), "%s%s%s", k->group,
			 *k->group ? "/" : "", k->version);
		kerf_ta_manager_id(id, sizeof(id), c->manager, "Update", sub,
				   api);
		kerf_ta_owners_update(&o->owners, old, obj, id);
	}
	kerf_ta_obj_update(c->st, k->res, o, obj);
	kerf_ta_send_json(c->rs, 200, kerf_ta_out(k, o->obj),
			  k->flags & KERF_TA_CUSTOM);
	return 0;
}

static void update(struct kerf_ta_ctx *c)
{
	const struct kerf_ta_kind *k = c->k;
	struct kerf_ta_obj *o;
	json_t *obj;
	const char *name, *ns, *rv;

	if (kerf_ta_decode_body(c, &obj) < 0)
		return;
	name = kerf_ta_str(obj, "metadata.name");
	ns = kerf_ta_str(obj, "metadata.namespace");
	if (c->rq->ns && ns && *ns && strcmp(ns, c->rq->ns)) {
		kerf_ta_status(c->rs, 400, "BadRequest",
			       "the namespace of the provided object does not match the namespace sent on the request",
			       NULL);
		json_decref(obj);
		return;
	}
	if (!name || strcmp(name, c->rq->name)) {
		kerf_ta_statusf(c->rs, 400, "BadRequest", NULL,
				"the name of the object (%s) does not match the name on the URL (%s)",
				name ? name : "", c->rq->name);
		json_decref(obj);
		return;
	}
	o = kerf_ta_obj_get(k->res, c->rq->ns, c->rq->name);
	if (!o) {
		kerf_ta_not_found(c->rs, k, c->rq->name);
		json_decref(obj);
		return;
	}
	rv = kerf_ta_str(obj, "metadata.resourceVersion");
	if ((k->flags & KERF_TA_CUSTOM) && (!rv || !*rv)) {
		json_t *causes = json_array();

		kerf_ta_cause_add(causes, "FieldValueInvalid",
				  "metadata.resourceVersion",
				  "Invalid value: 0x0: must be specified for an update");
		kerf_ta_invalid(c->rs, k, c->rq->name, causes);
		json_decref(obj);
		return;
	}
	kerf_ta_write_update(c, o, obj, c->rq->sub ? c->rq->sub : "");
}

/*
 * Delete o as DELETE would with DeleteOptions opts (may be NULL): pods
 * bound to a node go Terminating (graceful; no kubelet ever finishes
 * them), others go at once, after a MODIFIED carrying deletionTimestamp
 * for pods.  *shown gets what the answer shows (new ref).  0 or -1.
 */
int kerf_ta_delete_obj(struct kerf_ta_ctx *c, struct kerf_ta_obj *o,
		       const json_t *opts, json_t **shown)
{
	const struct kerf_ta_kind *k = c->k;
	const char *q = kerf_ta_param(c->rq, "gracePeriodSeconds");
	const char *puid = kerf_ta_str(opts, "preconditions.uid");
	const char *prv = kerf_ta_str(opts, "preconditions.resourceVersion");
	const char *uid = kerf_ta_str(o->obj, "metadata.uid");
	const char *orv = kerf_ta_str(o->obj, "metadata.resourceVersion");
	const json_t *g = json_object_get(opts, "gracePeriodSeconds");
	const json_t *dr = json_object_get(opts, "dryRun");
	bool dry = c->dry_run || json_array_size(dr) > 0;
	bool is_pod = !strcmp(k->plural, "pods") && !*k->group;
	bool is_ns = !strcmp(k->plural, "namespaces") && !*k->group;
	int64_t grace = -1;
	json_t *n, *md;
	char now[32];

	*shown = NULL;
	if (puid && uid && strcmp(puid, uid))
		return kerf_ta_statusf(c->rs, 409, "Conflict",
				       json_pack("{ssss}", "name",
						 kerf_ta_str(o->obj, "metadata.name"),
						 "kind", k->kind),
				       "Operation cannot be fulfilled on %s \"%s\": the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated",
				       k->kind,
				       kerf_ta_str(o->obj, "metadata.name"),
				       puid, uid);
	if (prv && orv && strcmp(prv, orv))
		return kerf_ta_statusf(c->rs, 409, "Conflict",
				       json_pack("{ssss}", "name",
						 kerf_ta_str(o->obj, "metadata.name"),
						 "kind", k->kind),
				       "Operation cannot be fulfilled on %s \"%s\": the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified",
				       k->kind,
				       kerf_ta_str(o->obj, "metadata.name"),
				       prv, orv);
	if (json_is_integer(g))
		grace = json_integer_value(g);
	else if (q)
		grace = strtoll(q, NULL, 10);
	if (!is_pod && admit_delete(c, &o, o->obj, opts) < 0)
		return -1;
	if (!is_pod && !is_ns) {
		*shown = json_pack("{sssss{}ss}", "kind", "Status",
				   "apiVersion", "v1", "metadata", "status",
				   "Success");
		json_object_set_new(*shown, "details",
				    kerf_ta_details(k, kerf_ta_str(o->obj,
								   "metadata.name")));
		json_object_set_new(json_object_get(*shown, "details"), "uid",
				    json_string(uid));
		if (!dry && k->hooks == &kerf_ta_crd_hooks)
			kerf_ta_kinds_remove_crd(c->st, o->key);
		if (!dry)
			kerf_ta_obj_delete(c->st, k->res, o);
		return 0;
	}
	n = json_deep_copy(o->obj);
	md = json_object_get(n, "metadata");
	if (is_ns) {
		if (!json_object_get(md, "deletionTimestamp")) {
			kerf_ta_now(now);
			json_object_set_new(md, "deletionTimestamp",
					    json_string(now));
			json_object_set_new(kerf_ta_path_mk(n, "status"),
					    "phase", json_string("Terminating"));
			if (!dry) {
				kerf_ta_obj_update(c->st, k->res, o, n);
				*shown = json_deep_copy(o->obj);
				return 0;
			}
		}
		*shown = n;
		return 0;
	}
	if (grace < 0)
		grace = json_integer_value(kerf_ta_path(n, "spec.terminationGracePeriodSeconds"));
	if (!kerf_ta_pod_bound(n))
		grace = 0;
	if (json_object_get(md, "deletionTimestamp") &&
	    grace >= json_integer_value(json_object_get(md, "deletionGracePeriodSeconds"))) {
		*shown = n;
		return 0;
	}
	if (admit_delete(c, &o, o->obj, opts) < 0) {
		json_decref(n);
		return -1;
	}
	kerf_ta_now_plus(now, grace);
	json_object_set_new(md, "deletionTimestamp", json_string(now));
	json_object_set_new(md, "deletionGracePeriodSeconds",
			    json_integer(grace));
	if (!json_object_get(o->obj, "metadata") ||
	    !kerf_ta_path(o->obj, "metadata.deletionTimestamp"))
		json_object_set_new(md, "generation",
				    json_integer(json_integer_value(json_object_get(md, "generation")) + 1));
	if (dry) {
		*shown = n;
		if (grace == 0 && admit_delete(c, &o, n, opts) < 0) {
			json_decref(n);
			*shown = NULL;
			return -1;
		}
		return 0;
	}
	kerf_ta_obj_update(c->st, k->res, o, n);
	*shown = json_deep_copy(o->obj);
	if (grace == 0) {
		/* the real server's second step: the delete itself */
		if (admit_delete(c, &o, o->obj, opts) < 0) {
			json_decref(*shown);
			*shown = NULL;
			return -1;
		}
		kerf_ta_obj_delete(c->st, k->res, o);
	}
	return 0;
}

static void delete(struct kerf_ta_ctx *c)
{
	const struct kerf_ta_kind *k = c->k;
	struct kerf_ta_obj *o = kerf_ta_obj_get(k->res, c->rq->ns,
						c->rq->name);
	json_t *opts = NULL, *shown;
	bool is_status;

	if (!o) {
		kerf_ta_not_found(c->rs, k, c->rq->name);
		return;
	}
	if (c->rq->len) {
		opts = json_loadb(c->rq->body, c->rq->len, 0, NULL);
		if (!json_is_object(opts)) {
			json_decref(opts);
			kerf_ta_status(c->rs, 400, "BadRequest",
				       "the object provided is unrecognized (must be of type DeleteOptions)",
				       NULL);
			return;
		}
	}
	if (kerf_ta_delete_obj(c, o, opts, &shown) == 0) {
		is_status = !strcmp(json_string_value(json_object_get(shown, "kind")) ?
					    json_string_value(json_object_get(shown, "kind")) : "",
				    "Status");
		if (is_status)
			kerf_ta_send_json(c->rs, 200, shown, false);
		else {
			kerf_ta_send_json(c->rs, 200, kerf_ta_out(k, shown),
					  k->flags & KERF_TA_CUSTOM);
			json_decref(shown);
		}
	}
	json_decref(opts);
}

void kerf_ta_crud(struct kerf_ta_ctx *c)
{
	const char *m = c->rq->method;
	const char *w = kerf_ta_param(c->rq, "watch");
	bool watch = w && (!strcmp(w, "1") || !strcmp(w, "true"));

	if (c->rq->sub && !c->rq->name) {
		kerf_ta_page_not_found(c->rs);
		return;
	}
	if (!strcmp(m, "GET")) {
		if (c->rq->name)
			get(c);
		else if (watch)
			kerf_ta_watch_start(c);
		else
			kerf_ta_list(c);
	} else if (!strcmp(m, "POST")) {
		if (c->rq->name)
			kerf_ta_method_not_allowed(c->rs);
		else
			create(c);
	} else if (!strcmp(m, "PUT")) {
		if (!c->rq->name)
			kerf_ta_method_not_allowed(c->rs);
		else
			update(c);
	} else if (!strcmp(m, "PATCH")) {
		if (!c->rq->name)
			kerf_ta_method_not_allowed(c->rs);
		else
			kerf_ta_patch(c);
	} else if (!strcmp(m, "DELETE")) {
		if (c->rq->sub)
			kerf_ta_method_not_allowed(c->rs);
		else if (c->rq->name)
			delete(c);
		else
			kerf_ta_delete_collection(c);
	} else {
		kerf_ta_method_not_allowed(c->rs);
	}
}
