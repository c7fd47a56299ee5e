/*
 * webhook_dispatch: the MutatingAdmissionWebhook and
 * ValidatingAdmissionWebhook plugins of kube-apiserver v1.34.9.
 *
 * Which: every webhook of every configuration (sorted by name, webhooks in
 * their listed order) whose rules and selectors match (webhook_match.c);
 * the configurations themselves are never admitted by webhooks.
 * Mutating: one after the other, each JSON Patch applied before the next
 * call; a webhook with reinvocationPolicy IfNeeded is called once more
 * when a webhook after it changed the object.  Validating: all of them
 * (the real server calls them in parallel), the first refusal in order
 * answered.  A call that fails is skipped under failurePolicy Ignore and
 * is a 500 InternalError under Fail; a denial is the webhook's status
 * (webhook_call.c); a patch that does not apply is a 500 whatever the
 * policy.  matchConditions (CEL) are not evaluated: such a webhook is
 * called as if every condition held (logged once).
 *
 * The store's lock is released while webhooks are called: the plan (the
 * matching webhooks, the namespace's labels, the request uids) is copied
 * under the lock, the calls touch nothing of the store, and the lock is
 * taken again before returning.
 */
#include "testapi/testapi_int.h"
#include "testapi/webhook.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

/* The one identity testapi knows (the fixtures' token user). */
#define TA_USER_NAME "kerf-admin"
#define TA_USER_UID "kerf-admin-uid"

struct plan {
	json_t *hooks;             /* array of webhook copies */
	json_t *ns_labels;         /* the namespace's labels, or NULL */
	char (*uids)[37];
	size_t nr_uids, next_uid;
};

static atomic_bool match_conditions_logged;

static int by_name(const void *a, const void *b)
{
	const json_t *const *x = a, *const *y = b;
	const char *nx = kerf_ta_str(*x, "metadata.name");
	const char *ny = kerf_ta_str(*y, "metadata.name");

	return strcmp(nx ? nx : "", ny ? ny : "");
}

static bool exempt(const struct kerf_ta_wh_attrs *a)
{
	return !strcmp(a->group, "admissionregistration.k8s.io");
}

/* Under the lock: the matching webhooks of one plug-in. */
static int plan_build(struct kerf_ta_ctx *c, const struct kerf_ta_admit *a,
		      bool mutating, struct plan *p)
{
	struct kerf_ta_res *r = kerf_ta_res_get(c->st, mutating ?
		"mutatingwebhookconfigurations.admissionregistration.k8s.io" :
		"validatingwebhookconfigurations.admissionregistration.k8s.io");
	const struct kerf_ta_obj *o;
	const json_t **cfgs = NULL;
	size_t i, n = 0, cap = 0, j;
	json_t *hook;

	memset(p, 0, sizeof(*p));
	if (!r || !r->objs.nr || exempt(&a->at))
		return 0;
	p->hooks = json_array();
	if (!p->hooks)
		return -1;
	if (*a->at.ns) {
		struct kerf_ta_res *nr = kerf_ta_res_get(c->st, "namespaces");
		struct kerf_ta_obj *ns = nr ? kerf_ta_obj_get(nr, NULL, a->at.ns) :
					      NULL;

		if (ns)
			p->ns_labels = json_deep_copy(kerf_ta_path(ns->obj,
								   "metadata.labels"));
	}
	for (i = 0; (o = kerf_map_next(&r->objs, &i));) {
		if (n == cap) {
			const json_t **m = realloc(cfgs, (cap ? cap * 2 : 8) *
						   sizeof(*cfgs));

			if (!m) {
				free(cfgs);
				return -1;
			}
			cfgs = m;
			cap = cap ? cap * 2 : 8;
		}
		cfgs[n++] = o->obj;
	}
	qsort(cfgs, n, sizeof(*cfgs), by_name);
	for (i = 0; i < n; i++) {
		json_array_foreach(json_object_get(cfgs[i], "webhooks"), j, hook) {
			if (!kerf_ta_wh_matches(hook, &a->at, p->ns_labels,
						a->obj, a->old))
				continue;
			if (json_array_size(json_object_get(hook, "matchConditions")) &&
			    !atomic_exchange(&match_conditions_logged, true))
				fprintf(stderr, "testapi: webhook \"%s\" has matchConditions, which testapi cannot evaluate: it is called as if every condition held (docs/testapi.md)\n",
					json_string_value(json_object_get(hook, "name")));
			json_array_append_new(p->hooks, json_deep_copy(hook));
		}
	}
	free(cfgs);
	n = json_array_size(p->hooks);
	if (!n)
		return 0;
	p->nr_uids = mutating ? 2 * n : n;
	p->uids = calloc(p->nr_uids, sizeof(*p->uids));
	if (!p->uids)
		return -1;
	for (i = 0; i < p->nr_uids; i++)
		kerf_ta_new_uid(c->st, p->uids[i]);
	return 0;
}

static void plan_release(struct plan *p)
{
	json_decref(p->hooks);
	json_decref(p->ns_labels);
	free(p->uids);
	memset(p, 0, sizeof(*p));
}

static json_t *gvk(const char *g, const char *v, const char *k)
{
	return json_pack("{ssssss}", "group", g, "version", v, "kind", k);
}

static json_t *gvr(const char *g, const char *v, const char *r)
{
	return json_pack("{ssssss}", "group", g, "version", v, "resource", r);
}

/* The AdmissionReview the real server sends (field order as its JSON). */
static json_t *review(const struct kerf_ta_admit *a, const char *uid)
{
	json_t *rq = json_object(), *rv;
	const char *ns = a->at.ns;

	if (!*a->at.sub && !*a->at.group && !strcmp(a->at.resource, "namespaces"))
		ns = a->name ? a->name : "";
	json_object_set_new(rq, "uid", json_string(uid));
	json_object_set_new(rq, "kind", gvk(a->kind_group, a->kind_version,
					    a->kind));
	json_object_set_new(rq, "resource", gvr(a->at.group, a->at.version,
						a->at.resource));
	if (*a->at.sub)
		json_object_set_new(rq, "subResource", json_string(a->at.sub));
	json_object_set_new(rq, "requestKind", gvk(a->kind_group,
						   a->kind_version, a->kind));
	json_object_set_new(rq, "requestResource", gvr(a->at.group,
						       a->at.version,
						       a->at.resource));
	if (*a->at.sub)
		json_object_set_new(rq, "requestSubResource",
				    json_string(a->at.sub));
	if (a->name && *a->name)
		json_object_set_new(rq, "name", json_string(a->name));
	if (*ns)
		json_object_set_new(rq, "namespace", json_string(ns));
	json_object_set_new(rq, "operation", json_string(a->at.op));
	json_object_set_new(rq, "userInfo",
			    json_pack("{sssss[ss]}", "username", TA_USER_NAME,
				      "uid", TA_USER_UID, "groups",
				      "system:masters", "system:authenticated"));
	json_object_set(rq, "object", a->obj ? a->obj : json_null());
	json_object_set(rq, "oldObject", a->old ? (json_t *)a->old : json_null());
	json_object_set_new(rq, "dryRun", json_boolean(a->dry_run));
	json_object_set(rq, "options", a->options ? a->options : json_null());
	rv = json_pack("{ssss}", "kind", "AdmissionReview", "apiVersion",
		       "admission.k8s.io/v1");
	json_object_set_new(rv, "request", rq);
	return rv;
}

/* apierrors.NewInternalError(err) */
static int internal_error(struct kerf_ta_resp *rs, const char *msg)
{
	char text[3072];

	snprintf(text, sizeof(text), "Internal error occurred: %s", msg);
	return kerf_ta_status(rs, 500, "InternalError", text,
			      json_pack("{s[{ss}]}", "causes", "message", msg));
}

static void add_warnings(struct kerf_ta_resp *rs, const json_t *w)
{
	const json_t *v;
	size_t i;

	json_array_foreach(w, i, v) {
		char esc[1024];
		const char *s = json_string_value(v);
		size_t o = 0;

		for (; *s && o + 3 < sizeof(esc); s++) {
			if (*s == '"' || *s == '\\')
				esc[o++] = '\\';
			esc[o++] = *s;
		}
		esc[o] = 0;
		kerf_ta_warn(rs, "299 - \"%s\"", esc);
	}
}

static bool ignore_failures(const json_t *hook)
{
	const char *fp = json_string_value(json_object_get(hook, "failurePolicy"));

	return fp && !strcmp(fp, "Ignore");
}

/* dryRun only to webhooks without side effects: the 400, or NULL. */
static json_t *dry_run_refusal(const struct kerf_ta_admit *a,
			       const json_t *hook)
{
	const char *se = json_string_value(json_object_get(hook, "sideEffects"));
	char msg[512];

	if (!a->dry_run || (se && (!strcmp(se, "None") ||
				   !strcmp(se, "NoneOnDryRun"))))
		return NULL;
	snprintf(msg, sizeof(msg),
		 "admission webhook \"%s\" does not support dry run",
		 json_string_value(json_object_get(hook, "name")));
	return json_pack("{sssss{}ssssssi}", "kind", "Status", "apiVersion",
			 "v1", "metadata", "status", "Failure", "message", msg,
			 "reason", "BadRequest", "code", 400);
}

static int send_status(struct kerf_ta_resp *rs, json_t *st)
{
	kerf_ta_send_json(rs, (unsigned)json_integer_value(
			  json_object_get(st, "code")), st, false);
	return -1;
}

/* One mutating call; 0 (*changed set), or -1 with rs set. */
static int mutate_one(struct kerf_ta_ctx *c, struct kerf_ta_admit *a,
		      const json_t *hook, const char *uid, bool *changed)
{
	const char *name = json_string_value(json_object_get(hook, "name"));
	struct kerf_ta_wh_result res;
	json_t *rv, *doc = NULL;
	char msg[1024];
	int rc = 0;

	*changed = false;
	doc = dry_run_refusal(a, hook);
	if (doc)
		return send_status(c->rs, doc);
	rv = review(a, uid);
	if (!rv || kerf_ta_wh_call(hook, true, rv, uid, &res) < 0) {
		json_decref(rv);
		return kerf_ta_status(c->rs, 500, "InternalError",
				      "out of memory", NULL);
	}
	json_decref(rv);
	add_warnings(c->rs, res.warnings);
	if (res.outcome == KERF_TA_WH_ALLOWED && res.patch_type &&
	    strcmp(res.patch_type, "JSONPatch")) {
		res.outcome = KERF_TA_WH_CALL_FAILED;
		snprintf(res.msg, sizeof(res.msg),
			 "failed calling webhook \"%s\": unsupported patch type \"%s\"",
			 name, res.patch_type);
	}
	switch (res.outcome) {
	case KERF_TA_WH_CALL_FAILED:
		if (!ignore_failures(hook))
			rc = internal_error(c->rs, res.msg);
		goto out;
	case KERF_TA_WH_DENIED:
		rc = send_status(c->rs, json_incref(res.status));
		goto out;
	case KERF_TA_WH_ALLOWED:
		break;
	}
	if (res.patch_type && !res.patch) {
		rc = internal_error(c->rs, res.msg);
		goto out;
	}
	if (!res.patch)
		goto out;
	if (!json_is_array(res.patch)) {
		snprintf(msg, sizeof(msg),
			 "json: cannot unmarshal %s into Go value of type jsonpatch.Patch",
			 json_is_object(res.patch) ? "object" : "value");
		rc = internal_error(c->rs, msg);
		goto out;
	}
	if (!json_array_size(res.patch))
		goto out;
	if (!a->obj) {
		snprintf(msg, sizeof(msg),
			 "admission webhook \"%s\" attempted to modify the object, which is not supported for this operation",
			 name);
		rc = internal_error(c->rs, msg);
		goto out;
	}
	doc = json_deep_copy(a->obj);
	if (!doc || kerf_ta_json_patch(doc, res.patch, msg, sizeof(msg)) < 0) {
		rc = internal_error(c->rs, doc ? msg : "out of memory");
		goto out;
	}
	if (!json_is_object(doc)) {
		rc = internal_error(c->rs, "the patched object is not an object");
		goto out;
	}
	if (!json_equal(doc, a->obj)) {
		*changed = true;
		json_object_clear(a->obj);
		json_object_update(a->obj, doc);
	}
out:
	json_decref(doc);
	kerf_ta_wh_result_release(&res);
	return rc;
}

static const char *next_uid(struct plan *p)
{
	if (p->next_uid >= p->nr_uids)
		return p->uids[p->nr_uids - 1];
	return p->uids[p->next_uid++];
}

static int run_mutating(struct kerf_ta_ctx *c, struct kerf_ta_admit *a,
			struct plan *p)
{
	size_t n = json_array_size(p->hooks), i, pass;
	bool *invoked = calloc(n, 1), *again = calloc(n, 1), any = false;
	int rc = 0;

	if (!invoked || !again) {
		rc = kerf_ta_status(c->rs, 500, "InternalError",
				    "out of memory", NULL);
		goto out;
	}
	for (pass = 0; pass < 2 && rc == 0; pass++) {
		for (i = 0; i < n; i++) {
			const json_t *hook = json_array_get(p->hooks, i);
			const char *rp = json_string_value(json_object_get(hook,
							"reinvocationPolicy"));
			bool changed;
			size_t j;

			if (pass == 1 && !again[i])
				continue;
			if (!kerf_ta_wh_matches(hook, &a->at, p->ns_labels,
						a->obj, a->old))
				continue;
			rc = mutate_one(c, a, hook, next_uid(p), &changed);
			if (rc < 0)
				break;
			if (changed && pass == 0) {
				for (j = 0; j < n; j++) {
					again[j] |= invoked[j];
					invoked[j] = false;
				}
				any = true;
			}
			if (rp && !strcmp(rp, "IfNeeded"))
				invoked[i] = true;
		}
		if (!any)
			break;
	}
out:
	free(invoked);
	free(again);
	return rc;
}

static int run_validating(struct kerf_ta_ctx *c, const struct kerf_ta_admit *a,
			  struct plan *p)
{
	size_t n = json_array_size(p->hooks), i;
	json_t *first = NULL;
	int rc = 0;

	for (i = 0; i < n; i++) {
		const json_t *hook = json_array_get(p->hooks, i);
		const char *uid = next_uid(p);
		struct kerf_ta_wh_result res;
		json_t *rv;

		rv = dry_run_refusal(a, hook);
		if (rv) {
			if (!first)
				first = rv;
			else
				json_decref(rv);
			continue;
		}
		rv = review(a, uid);
		if (!rv || kerf_ta_wh_call(hook, false, rv, uid, &res) < 0) {
			json_decref(rv);
			json_decref(first);
			return kerf_ta_status(c->rs, 500, "InternalError",
					      "out of memory", NULL);
		}
		json_decref(rv);
		add_warnings(c->rs, res.warnings);
		if (!first && res.outcome == KERF_TA_WH_DENIED)
			first = json_incref(res.status);
		else if (!first && res.outcome == KERF_TA_WH_CALL_FAILED &&
			 !ignore_failures(hook))
			first = json_pack("{ss}", "internal", res.msg);
		kerf_ta_wh_result_release(&res);
	}
	if (first) {
		const char *internal = json_string_value(json_object_get(first,
								 "internal"));

		if (internal) {
			internal_error(c->rs, internal);
			json_decref(first);
		} else {
			send_status(c->rs, first);
		}
		rc = -1;
	}
	return rc;
}

static int admit(struct kerf_ta_ctx *c, struct kerf_ta_admit *a,
		 bool mutating, bool *unlocked)
{
	struct plan p;
	int rc;

	if (plan_build(c, a, mutating, &p) < 0) {
		plan_release(&p);
		return kerf_ta_status(c->rs, 500, "InternalError",
				      "out of memory", NULL);
	}
	if (!json_array_size(p.hooks)) {
		plan_release(&p);
		return 0;
	}
	*unlocked = true;
	pthread_mutex_unlock(&c->st->lock);
	rc = mutating ? run_mutating(c, a, &p) : run_validating(c, a, &p);
	pthread_mutex_lock(&c->st->lock);
	plan_release(&p);
	return rc;
}

int kerf_ta_admit_mutate(struct kerf_ta_ctx *c, struct kerf_ta_admit *a,
			 bool *unlocked)
{
	return admit(c, a, true, unlocked);
}

int kerf_ta_admit_validate(struct kerf_ta_ctx *c,
			   const struct kerf_ta_admit *a, bool *unlocked)
{
	return admit(c, (struct kerf_ta_admit *)a, false, unlocked);
}

void kerf_ta_admit_init(struct kerf_ta_ctx *c, struct kerf_ta_admit *a,
			const char *op)
{
	const struct kerf_ta_kind *k = c->k;
	const char *fm = kerf_ta_param(c->rq, "fieldManager");
	const char *okind = !strcmp(op, "CREATE") ? "CreateOptions" :
			    !strcmp(op, "UPDATE") ? "UpdateOptions" :
						    "DeleteOptions";

	memset(a, 0, sizeof(*a));
	a->at.op = op;
	a->at.group = k->group;
	a->at.version = k->version;
	a->at.resource = k->plural;
	a->at.sub = c->rq->sub ? c->rq->sub : "";
	a->at.ns = (k->flags & KERF_TA_NAMESPACED) && c->rq->ns ? c->rq->ns : "";
	a->kind_group = k->group;
	a->kind_version = k->version;
	a->kind = k->kind;
	a->name = c->rq->name;
	a->dry_run = c->dry_run;
	a->options = json_pack("{ssss}", "kind", okind, "apiVersion",
			       "meta.k8s.io/v1");
	if (c->dry_run)
		json_object_set_new(a->options, "dryRun", json_pack("[s]", "All"));
	if (fm && *fm && strcmp(op, "DELETE"))
		json_object_set_new(a->options, "fieldManager", json_string(fm));
}

void kerf_ta_admit_release(struct kerf_ta_admit *a)
{
	json_decref(a->options);
	a->options = NULL;
}
