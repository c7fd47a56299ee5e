#include "serve/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "serve/api_int.h"
#include "view/view.h"

/* --- queue ---------------------------------------------------------------- */

static int by_key(const void *a, const void *b)
{
	return strcmp((*(struct wpod *const *)a)->key, (*(struct wpod *const *)b)->key);
}

/* Pods the world holds back before the core sees them (GangIncomplete...). */
static json_t *waiting_json(const struct kerf_world *w, int64_t now_ms, int *rc)
{
	json_t *a = json_array();
	struct wpod **v = calloc(w->nr_podv + 1, sizeof(*v));
	size_t nr = 0;

	if (!v) {
		*rc = -KERF_ENOMEM;
		return a;
	}
	for (size_t i = 0; i < w->nr_podv; i++)
		if (kerf_world_why_hash(w->podv[i]) && !kerf_kpod_node(w->podv[i]->p) &&
		    !kerf_world_pod_done(w->podv[i]))
			v[nr++] = w->podv[i];
	qsort(v, nr, sizeof(*v), by_key);
	for (size_t k = 0; k < nr; k++) {
		json_t *i = json_object();

		kerf_api_put(i, "pod", kerf_api_str(v[k]->key), rc);
		kerf_api_put(i, "workload", v[k]->g ? kerf_api_str(v[k]->g->key) : json_null(), rc);
		kerf_api_put(i, "createTime", kerf_api_time(v[k]->p->created_ms), rc);
		kerf_api_put(i, "waitSeconds", kerf_api_seconds(v[k]->p->created_ms, now_ms), rc);
		kerf_api_put(i, "reason", kerf_api_str(kerf_world_why_reason(v[k])), rc);
		kerf_api_put(i, "message", kerf_api_str(kerf_world_why_message(v[k])), rc);
		kerf_api_push(a, i, rc);
	}
	free(v);
	return a;
}

static int queue(const struct kerf_world *w, int64_t now_ms, json_t **out)
{
	int rc = kerf_view_queue(&w->st, now_ms, out);

	if (rc < 0)
		return rc;
	kerf_api_put(*out, "waiting", waiting_json(w, now_ms, &rc), &rc);
	return rc;
}

/* --- nodes ---------------------------------------------------------------- */

/* Why the world keeps new pods off a node (kobj/node.h), or NULL. */
static const char *cordon_reason(const struct wnode *x)
{
	if (!x)
		return NULL;
	if (x->n.invalid)
		return x->n.invalid;
	if (x->n.terminating)
		return "the node is being deleted";
	if (x->n.unschedulable)
		return "spec.unschedulable (cordoned)";
	if (!x->n.ready)
		return "not Ready";
	return NULL;
}

/* What the world knows of a node beyond the core (kobj/node.h). */
static bool node_extra(void *ctx, const struct kerf_node *n, struct kerf_view_node_extra *e)
{
	const struct kerf_world *w = ctx;
	const struct wnode *x = kerf_map_get_str(&w->nodes, n->name);

	if (!x)
		return false;
	e->cordon_reason = cordon_reason(x);
	e->nvlink_domain = x->n.nvlink_domain;
	e->marks_error = x->n.marks_error;
	e->util_error = x->n.util_error;
	e->util_gpus = x->n.util_gpus;
	e->util_pct = x->n.util_pct;
	return true;
}

/* --- routing -------------------------------------------------------------- */

/* "NS/POD" after prefix into ns and name; false when it is not that. */
static bool pod_path(const char *path, const char *prefix, char *ns, size_t ns_size,
		     char *name, size_t name_size)
{
	size_t n = strlen(prefix);
	const char *slash;

	if (strncmp(path, prefix, n))
		return false;
	path += n;
	slash = strchr(path, '/');
	if (!slash || slash == path || !slash[1] || strchr(slash + 1, '/') ||
	    (size_t)(slash - path) >= ns_size || strlen(slash + 1) >= name_size)
		return false;
	memcpy(ns, path, (size_t)(slash - path));
	ns[slash - path] = '\0';
	memcpy(name, slash + 1, strlen(slash + 1) + 1);
	return true;
}

static int route(const struct kerf_world *w, const char *path, int64_t now_ms,
		 json_t **out)
{
	char ns[256], name[256];

	if (!strcmp(path, "/api/v1/tenants"))
		return kerf_view_tenants(&w->st, out) < 0 ? 500 : 200;
	if (!strcmp(path, "/api/v1/queue"))
		return queue(w, now_ms, out) < 0 ? 500 : 200;
	if (!strcmp(path, "/api/v1/nodes"))
		return kerf_view_nodes(&w->st.cluster, node_extra, (void *)w, out) < 0 ? 500 : 200;
	if (!strcmp(path, "/api/v1/gpus"))
		return kerf_api_gpus(w, out) < 0 ? 500 : 200;
	if (!strcmp(path, "/api/v1/state"))
		return kerf_api_state(w, now_ms, out);
	if (pod_path(path, "/api/v1/explain/", ns, sizeof(ns), name, sizeof(name)) ||
	    pod_path(path, "/api/v1/workloads/", ns, sizeof(ns), name, sizeof(name)))
		return kerf_api_explain(w, ns, name, now_ms, out);
	return 404;
}

int kerf_api_answer(const struct kerf_world *w, const char *method,
		    const char *url, int64_t now_ms, char **body)
{
	char path[600], text[700], shown[300];
	const char *q = strchr(url, '?');
	size_t len = q ? (size_t)(q - url) : strlen(url);
	json_t *out = NULL;
	int code;

	*body = NULL;
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		snprintf(text, sizeof(text), "method %s is not allowed: the API is read-only (GET)",
			 kerf_escape(shown, sizeof(shown), method));
		out = kerf_api_status(405, "MethodNotAllowed", text);
		code = 405;
	} else {
		if (len >= sizeof(path))
			len = sizeof(path) - 1;
		memcpy(path, url, len);
		path[len] = '\0';
		code = route(w, path, now_ms, &out);
		if (code == 404 && !out) {
			snprintf(text, sizeof(text), "the path '%s' is not served (see docs/api.md)",
				 kerf_escape(shown, sizeof(shown), path));
			out = kerf_api_status(404, "NotFound", text);
		}
	}
	if (code == 500 || !out) {
		json_decref(out);
		return 500;
	}
	*body = json_dumps(out, JSON_INDENT(2));
	json_decref(out);
	return *body ? code : 500;
}
