/*
 * route: a request's path to a resource, as kube-apiserver routes it:
 * an unknown group or version, or a cluster-scoped kind asked for under a
 * namespace, is plain text "404 page not found"; an unknown resource of a
 * known group/version is a JSON Status 404; a request without credentials
 * is system:anonymous and forbidden (403), a wrong token 401 (server.c).
 */
#include "testapi/testapi_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

enum { MAX_SEGS = 12 };

static size_t split(char *path, char **segs)
{
	size_t n = 0;
	char *p = path;

	while (*p && n < MAX_SEGS) {
		char *slash;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		segs[n++] = p;
		slash = strchr(p, '/');
		if (!slash)
			break;
		*slash = 0;
		p = slash + 1;
	}
	return n;
}

static bool accept_ok(const char *accept)
{
	if (!*accept)
		return true;
	return strstr(accept, "application/json") ||
	       strstr(accept, "*/*") || strstr(accept, "application/*") ||
	       strstr(accept, "application/yaml");
}

static void forbid_anonymous(struct kerf_ta_req *rq, struct kerf_ta_resp *rs)
{
	char res[256];
	const char *verb;

	if (!strcmp(rq->method, "GET"))
		verb = rq->name ? "get" :
		       (kerf_ta_param(rq, "watch") ? "watch" : "list");
	else if (!strcmp(rq->method, "POST"))
		verb = "create";
	else if (!strcmp(rq->method, "PUT"))
		verb = "update";
	else if (!strcmp(rq->method, "PATCH"))
		verb = "patch";
	else
		verb = rq->name ? "delete" : "deletecollection";
	if (!rq->kind) {
		kerf_ta_statusf(rs, 403, "Forbidden", json_object(),
				"forbidden: User \"system:anonymous\" cannot get path \"%s\"",
				rq->path);
		return;
	}
	snprintf(res, sizeof(res), "%s%s%s", rq->plural, rq->sub ? "/" : "",
		 rq->sub ? rq->sub : "");
	kerf_ta_statusf(rs, 403, "Forbidden",
			rq->name ? json_pack("{ssss}", "name", rq->name,
					     "kind", rq->plural) :
				   json_pack("{ss}", "kind", rq->plural),
			"%s%s%s%s is forbidden: User \"system:anonymous\" cannot %s resource \"%s\" in API group \"%s\"%s%s%s",
			rq->plural, rq->name ? " \"" : "",
			rq->name ? rq->name : "", rq->name ? "\"" : "", verb,
			res, rq->group, rq->ns ? " in the namespace \"" : "",
			rq->ns ? rq->ns : "", rq->ns ? "\"" : "");
}

static void ctx_init(struct kerf_ta_ctx *c, struct kerf_testapi *ta,
		     struct kerf_ta_req *rq, struct kerf_ta_resp *rs)
{
	const char *fm = kerf_ta_param(rq, "fieldManager");
	const char *dr = kerf_ta_param(rq, "dryRun");
	size_t n;

	memset(c, 0, sizeof(*c));
	c->ta = ta;
	c->st = &ta->st;
	c->rq = rq;
	c->rs = rs;
	c->k = rq->kind;
	c->dry_run = dr && !strcmp(dr, "All");
	if (fm && *fm) {
		snprintf(c->manager_buf, sizeof(c->manager_buf), "%s", fm);
	} else {
		n = strcspn(rq->user_agent, "/");
		if (n >= sizeof(c->manager_buf))
			n = sizeof(c->manager_buf) - 1;
		memcpy(c->manager_buf, rq->user_agent, n);
		c->manager_buf[n] = 0;
	}
	c->manager = c->manager_buf;
}

/* The route of /api/v1/... or /apis/G/V/...: 0, or -1 with rs set. */
static int resolve(struct kerf_testapi *ta, struct kerf_ta_req *rq,
		   struct kerf_ta_resp *rs, char **rest, size_t nr)
{
	const struct kerf_ta_kind *k;

	if (!kerf_ta_group_known(&ta->st, rq->group, rq->version))
		return kerf_ta_page_not_found(rs);
	if (nr >= 2 && !strcmp(rest[0], "namespaces") && *rq->group == 0 &&
	    (nr == 2 || (nr == 3 && (!strcmp(rest[2], "status") ||
				     !strcmp(rest[2], "finalize"))))) {
		rq->plural = rest[0];
		rq->name = rest[1];
		rq->sub = nr == 3 ? rest[2] : NULL;
	} else {
		if (nr >= 2 && !strcmp(rest[0], "namespaces")) {
			rq->ns = rest[1];
			rest += 2;
			nr -= 2;
		}
		if (nr == 0 || nr > 3)
			return kerf_ta_page_not_found(rs);
		rq->plural = rest[0];
		rq->name = nr > 1 ? rest[1] : NULL;
		rq->sub = nr > 2 ? rest[2] : NULL;
	}
	k = kerf_ta_kind_find(&ta->st, rq->group, rq->version, rq->plural);
	if (!k)
		return kerf_ta_status(rs, 404, "NotFound",
				      "the server could not find the requested resource",
				      json_object());
	if (rq->ns && !(k->flags & KERF_TA_NAMESPACED))
		return kerf_ta_page_not_found(rs);
	rq->kind = k;
	return 0;
}

static void dispatch(struct kerf_ta_ctx *c)
{
	struct kerf_ta_req *rq = c->rq;

	if (!strcmp(rq->plural, "bindings") && !*rq->group) {
		if (strcmp(rq->method, "POST") || rq->name)
			kerf_ta_method_not_allowed(c->rs);
		else
			kerf_ta_binding(c);
		return;
	}
	if (rq->sub && (!strcmp(rq->sub, "binding") ||
			!strcmp(rq->sub, "eviction")) &&
	    !strcmp(rq->plural, "pods") && !*rq->group) {
		if (strcmp(rq->method, "POST"))
			kerf_ta_method_not_allowed(c->rs);
		else if (!strcmp(rq->sub, "binding"))
			kerf_ta_binding(c);
		else
			kerf_ta_eviction(c);
		return;
	}
	if (rq->sub && (strcmp(rq->sub, "status") ||
			!(c->k->flags & KERF_TA_STATUS))) {
		kerf_ta_status(c->rs, 404, "NotFound",
			       "the server could not find the requested resource",
			       json_object());
		return;
	}
	kerf_ta_crud(c);
}

void kerf_ta_handle(struct kerf_testapi *ta, struct kerf_ta_req *rq,
		    struct kerf_ta_resp *rs)
{
	struct kerf_ta_ctx c;
	char *segs[MAX_SEGS];
	size_t nr;
	bool public_path;

	rq->path_copy = kerf_strdup(rq->path);
	if (!rq->path_copy) {
		kerf_ta_status(rs, 500, "InternalError", "out of memory",
			       NULL);
		return;
	}
	nr = split(rq->path_copy, segs);
	public_path = nr == 1 && (!strcmp(segs[0], "readyz") ||
				  !strcmp(segs[0], "healthz") ||
				  !strcmp(segs[0], "livez") ||
				  !strcmp(segs[0], "version"));
	if (!accept_ok(rq->accept)) {
		kerf_ta_status(rs, 406, "NotAcceptable",
			       "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf",
			       json_object());
		return;
	}
	pthread_mutex_lock(&ta->st.lock);
	ctx_init(&c, ta, rq, rs);
	if (nr >= 2 && !strcmp(segs[0], "api") && !strcmp(segs[1], "v1") &&
	    nr > 2) {
		rq->group = "";
		rq->version = "v1";
		if (resolve(ta, rq, rs, segs + 2, nr - 2) < 0)
			goto out;
	} else if (nr > 3 && !strcmp(segs[0], "apis")) {
		rq->group = segs[1];
		rq->version = segs[2];
		if (resolve(ta, rq, rs, segs + 3, nr - 3) < 0)
			goto out;
	} else {
		if (rq->anonymous && !public_path) {
			forbid_anonymous(rq, rs);
			goto out;
		}
		if (!kerf_ta_discovery(&c, segs, nr))
			kerf_ta_page_not_found(rs);
		goto out;
	}
	if (rq->anonymous) {
		forbid_anonymous(rq, rs);
		goto out;
	}
	c.k = rq->kind;
	dispatch(&c);
out:
	json_decref(c.apply_owners);
	pthread_mutex_unlock(&ta->st.lock);
}
