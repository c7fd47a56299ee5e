#include "serve/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "core/budget.h"
#include "core/cycle.h"
#include "core/mig/geometry.h"
#include "core/mig/place.h"
#include "kobj/time.h"
#include "serve/api_int.h"

/* --- JSON values --------------------------------------------------------- */

void kerf_api_put(json_t *o, const char *key, json_t *v, int *rc)
{
	if (!o || !v || json_object_set_new(o, key, v) < 0)
		*rc = -KERF_ENOMEM;
}

void kerf_api_push(json_t *a, json_t *v, int *rc)
{
	if (!a || !v || json_array_append_new(a, v) < 0)
		*rc = -KERF_ENOMEM;
}

json_t *kerf_api_str(const char *s)
{
	json_t *j;
	char shown[1024];

	if (!s)
		return json_null();
	j = json_string(s);
	/* not UTF-8 (a name kerf did not make): shown escaped */
	return j ? j : json_string(kerf_escape(shown, sizeof(shown), s));
}

json_t *kerf_api_time(int64_t ms)
{
	char text[KERF_TIME_TEXT_MAX];

	if (ms <= 0)
		return json_null();
	kerf_time_format(ms, text);
	return json_string(text);
}

json_t *kerf_api_qty(int64_t v)
{
	return v == KERF_QTY_INF ? json_null() : json_integer(v);
}

json_t *kerf_api_seconds(int64_t from_ms, int64_t to_ms)
{
	return json_real(to_ms > from_ms ? (double)(to_ms - from_ms) / 1000.0 : 0.0);
}

const char *kerf_api_wl_state(enum kerf_wl_state s)
{
	return s == KERF_WL_PENDING ? "Pending" : s == KERF_WL_RUNNING ? "Running" : "Finished";
}

const char *kerf_api_tenant_name(const struct kerf_state *st, int t)
{
	return t >= 0 && (size_t)t < st->tenants.nr ? st->tenants.t[t].name : "";
}

json_t *kerf_api_status(int code, const char *reason, const char *message)
{
	json_t *o = json_object();
	int rc = 0;

	kerf_api_put(o, "kind", json_string("Status"), &rc);
	kerf_api_put(o, "apiVersion", json_string(KERF_API_VERSION), &rc);
	kerf_api_put(o, "status", json_string("Failure"), &rc);
	kerf_api_put(o, "message", kerf_api_str(message), &rc);
	kerf_api_put(o, "reason", json_string(reason), &rc);
	kerf_api_put(o, "code", json_integer(code), &rc);
	if (rc < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *list(const char *kind, int *rc)
{
	json_t *o = json_object();

	kerf_api_put(o, "kind", json_string(kind), rc);
	kerf_api_put(o, "apiVersion", json_string(KERF_API_VERSION), rc);
	return o;
}

static const char *isolation_name(unsigned i)
{
	return i == KERF_ISOLATION_TENANT ? "Tenant" : i == KERF_ISOLATION_HARDWARE ? "Hardware" : "Shared";
}

/* --- tenants --------------------------------------------------------------- */

static json_t *budget_json(const struct kerf_tenant *t, int *rc)
{
	const struct kerf_budget *b = &t->budget;
	json_t *o;

	if (b->limit_milli_ms <= 0)
		return json_null();
	o = json_object();
	/* GPU milli x ms: 3.6e9 of them make one GPU-hour */
	kerf_api_put(o, "limitGPUHours", json_real((double)b->limit_milli_ms / 3.6e9), rc);
	kerf_api_put(o, "usedGPUHours", json_real((double)b->used_milli_ms / 3.6e9), rc);
	kerf_api_put(o, "usedPercent", json_integer(kerf_budget_used_pct(t)), rc);
	kerf_api_put(o, "windowSeconds", json_integer(b->window_ms / 1000), rc);
	kerf_api_put(o, "windowStart", kerf_api_time(b->window_start_ms), rc);
	kerf_api_put(o, "action", json_string(b->action == KERF_BUDGET_HOLD ? "Hold" : "PreemptibleOnly"), rc);
	return o;
}

static json_t *flavors_json(const struct kerf_state *st, const struct kerf_tenant *t,
			    int *rc)
{
	json_t *a = json_array();

	for (size_t m = 0; m < st->cluster.nr_models; m++) {
		int i = kerf_res_gpu((int)m);
		json_t *o = json_object();
		int64_t use = t->usage.v[i], nom = t->quota.nominal.v[i];

		kerf_api_put(o, "flavor", kerf_api_str(st->cluster.models[m].name), rc);
		kerf_api_put(o, "nominal", kerf_api_qty(nom), rc);
		kerf_api_put(o, "borrowingLimit", kerf_api_qty(t->quota.borrow_limit.v[i]), rc);
		kerf_api_put(o, "lendingLimit", kerf_api_qty(t->quota.lend_limit.v[i]), rc);
		kerf_api_put(o, "usage", json_integer(use), rc);
		kerf_api_put(o, "borrowed", json_integer(use > nom ? use - nom : 0), rc);
		kerf_api_push(a, o, rc);
	}
	return a;
}

static int tenants(const struct kerf_world *w, json_t **out)
{
	const struct kerf_state *st = &w->st;
	const struct kerf_tenants *tt = &st->tenants;
	/* leaves count workloads: each tenant shows its subtree's */
	uint64_t *sum = calloc(3 * (tt->nr ? tt->nr : 1), sizeof(*sum));
	json_t *o, *items;
	int rc = 0;

	if (!sum)
		return -KERF_ENOMEM;
	for (size_t t = tt->nr; t-- > 0;) {
		const struct kerf_tenant *tn = &tt->t[t];

		sum[3 * t] += tn->nr_workloads;
		sum[3 * t + 1] += tn->nr_pending;
		sum[3 * t + 2] += (uint64_t)(tn->pending_gpu_milli > 0 ? tn->pending_gpu_milli : 0);
		if (tn->parent >= 0)
			for (int k = 0; k < 3; k++)
				sum[3 * (size_t)tn->parent + (size_t)k] += sum[3 * t + (size_t)k];
	}
	o = list("TenantList", &rc);
	items = json_array();
	for (size_t t = 0; t < tt->nr; t++) {
		const struct kerf_tenant *tn = &tt->t[t];
		json_t *i;

		if (tn->removed)
			continue;
		i = json_object();
		kerf_api_put(i, "name", kerf_api_str(tn->name), &rc);
		kerf_api_put(i, "parent", tn->parent >= 0 ? kerf_api_str(tt->t[tn->parent].name) : json_null(), &rc);
		kerf_api_put(i, "leaf", json_boolean(kerf_tenant_is_leaf(tn)), &rc);
		kerf_api_put(i, "weight", json_integer(tn->weight), &rc);
		kerf_api_put(i, "isolation", json_string(isolation_name(tn->isolation)), &rc);
		kerf_api_put(i, "workloads", json_integer((json_int_t)sum[3 * t]), &rc);
		kerf_api_put(i, "pending", json_integer((json_int_t)sum[3 * t + 1]), &rc);
		kerf_api_put(i, "pendingGPUMilli", json_integer((json_int_t)sum[3 * t + 2]), &rc);
		kerf_api_put(i, "flavors", flavors_json(st, tn, &rc), &rc);
		kerf_api_put(i, "budget", budget_json(tn, &rc), &rc);
		kerf_api_push(items, i, &rc);
	}
	kerf_api_put(o, "items", items, &rc);
	free(sum);
	*out = o;
	return rc;
}

/* --- queue ---------------------------------------------------------------- */

static json_t *queued_json(const struct kerf_state *st, const struct kerf_workload *wl,
			   size_t pos, int64_t now_ms, int *rc)
{
	json_t *i = json_object();

	kerf_api_put(i, "position", json_integer((json_int_t)pos), rc);
	kerf_api_put(i, "key", kerf_api_str(kerf_workload_name(wl)), rc);
	kerf_api_put(i, "tenant", kerf_api_str(kerf_api_tenant_name(st, wl->tenant)), rc);
	kerf_api_put(i, "class", kerf_api_str(st->classes.c[wl->class_idx].name), rc);
	kerf_api_put(i, "priority", json_integer(st->classes.c[wl->class_idx].value), rc);
	kerf_api_put(i, "pods", json_integer(kerf_workload_pods(wl)), rc);
	kerf_api_put(i, "minCount", json_integer(wl->min_count), rc);
	kerf_api_put(i, "gpuMilli", json_integer(kerf_workload_gpu_milli(wl)), rc);
	kerf_api_put(i, "submitTime", kerf_api_time(wl->submit_ms), rc);
	kerf_api_put(i, "waitSeconds", kerf_api_seconds(wl->submit_ms, now_ms), rc);
	kerf_api_put(i, "reason", json_string(kerf_pending_name(wl->pending)), rc);
	kerf_api_put(i, "message", kerf_api_str(wl->pending_text), rc);
	return i;
}

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
	const struct kerf_state *st = &w->st;
	struct kerf_workload **v = malloc((st->nr_wl ? st->nr_wl : 1) * sizeof(*v));
	size_t nr = 0;
	json_t *o, *items;
	int rc = v ? kerf_cycle_queue(st, v, &nr) : -KERF_ENOMEM;

	if (rc < 0) {
		free(v);
		return rc;
	}
	o = list("Queue", &rc);
	items = json_array();
	for (size_t k = 0; k < nr; k++)
		kerf_api_push(items, queued_json(st, v[k], k + 1, now_ms, &rc), &rc);
	kerf_api_put(o, "items", items, &rc);
	kerf_api_put(o, "waiting", waiting_json(w, now_ms, &rc), &rc);
	free(v);
	*out = o;
	return rc;
}

/* --- nodes ---------------------------------------------------------------- */

static json_t *mig_json(const struct kerf_cluster *c, const struct kerf_node *n, int *rc)
{
	const struct kerf_mig_model *m = n->model < c->nr_models ? c->models[n->model].mig : NULL;
	json_t *a;

	if (!n->mig_gpus || !n->mig || !m)
		return json_null();
	a = json_array();
	for (int g = 0; g < n->nr_gpus; g++) {
		const struct kerf_mig_layout *l = &n->mig->gpu[g];
		json_t *o, *inst;

		if (!(n->mig_gpus >> g & 1))
			continue;
		o = json_object();
		inst = json_array();
		kerf_api_put(o, "gpu", json_integer(g), rc);
		for (unsigned k = 0; k < l->nr; k++) {
			json_t *i = json_object();

			kerf_api_put(i, "profile", json_string(m->profiles[l->inst[k].profile].name), rc);
			kerf_api_put(i, "start", json_integer(l->inst[k].start), rc);
			kerf_api_put(i, "inUse", json_boolean(l->inst[k].in_use), rc);
			kerf_api_put(i, "down", json_boolean(l->inst[k].down), rc);
			kerf_api_push(inst, i, rc);
		}
		kerf_api_put(o, "instances", inst, rc);
		kerf_api_push(a, o, rc);
	}
	return a;
}

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

/* The GPUs of n out of service, as indexes ascending. */
static json_t *down_json(const struct kerf_node *n, int *rc)
{
	json_t *a = json_array();

	for (int g = 0; g < n->nr_gpus; g++)
		if (n->gpus_down >> g & 1)
			kerf_api_push(a, json_integer(g), rc);
	return a;
}

/* The agent's utilisation of each GPU with a value: [{gpu, percent}]. */
static json_t *util_json(const struct wnode *x, int *rc)
{
	json_t *a = json_array();

	for (unsigned g = 0; x && g < KERF_GPU_UTIL_MAX_GPUS; g++)
		if (x->n.util_gpus >> g & 1) {
			json_t *e = json_object();

			kerf_api_put(e, "gpu", json_integer(g), rc);
			kerf_api_put(e, "percent", json_integer(x->n.util_pct[g]), rc);
			kerf_api_push(a, e, rc);
		}
	return a;
}

static json_t *node_json(const struct kerf_world *w, const struct kerf_node *n, int *rc)
{
	const struct kerf_cluster *c = &w->st.cluster;
	const struct wnode *x = kerf_map_get_str(&w->nodes, n->name);
	const char *why = cordon_reason(x);
	json_t *o = json_object();
	bool gpus = n->nr_gpus > 0 && n->model < c->nr_models;

	kerf_api_put(o, "name", kerf_api_str(n->name), rc);
	kerf_api_put(o, "model", gpus ? kerf_api_str(c->models[n->model].name) : json_null(), rc);
	kerf_api_put(o, "gpus", json_integer(n->nr_gpus), rc);
	kerf_api_put(o, "gpusFree", json_integer(n->nr_gpus_idle), rc);
	kerf_api_put(o, "gpuMilliFree", json_integer(n->gpu_free_milli_sum), rc);
	kerf_api_put(o, "cpuMilli", json_integer(n->cpu_milli), rc);
	kerf_api_put(o, "cpuMilliFree", json_integer(n->cpu_free_milli), rc);
	kerf_api_put(o, "memoryMiB", json_integer(n->mem_mib), rc);
	kerf_api_put(o, "memoryMiBFree", json_integer(n->mem_free_mib), rc);
	kerf_api_put(o, "pods", json_integer(n->nr_pods), rc);
	kerf_api_put(o, "cordoned", json_boolean(n->cordoned), rc);
	kerf_api_put(o, "usable", json_boolean(!n->cordoned), rc);
	kerf_api_put(o, "cordonReason", n->cordoned ? kerf_api_str(why ? why : "lost") : json_null(), rc);
	kerf_api_put(o, "nvlinkDomain", kerf_api_str(x ? x->n.nvlink_domain : NULL), rc);
	kerf_api_put(o, "mig", mig_json(c, n, rc), rc);
	kerf_api_put(o, "gpusDown", down_json(n, rc), rc);
	kerf_api_put(o, "gpuMarksError", kerf_api_str(x ? x->n.marks_error : NULL), rc);
	kerf_api_put(o, "gpuUtilization", util_json(x, rc), rc);
	kerf_api_put(o, "gpuUtilizationError", kerf_api_str(x ? x->n.util_error : NULL), rc);
	return o;
}

static int nodes(const struct kerf_world *w, json_t **out)
{
	const struct kerf_cluster *c = &w->st.cluster;
	int rc = 0;
	json_t *o = list("NodeList", &rc), *items = json_array();

	/* by rank: ties by name, as placement breaks them */
	for (size_t p = 0; p < c->nr_nodes; p++)
		kerf_api_push(items, node_json(w, &c->nodes[c->order[p]], &rc), &rc);
	kerf_api_put(o, "items", items, &rc);
	*out = o;
	return rc;
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
		return tenants(w, out) < 0 ? 500 : 200;
	if (!strcmp(path, "/api/v1/queue"))
		return queue(w, now_ms, out) < 0 ? 500 : 200;
	if (!strcmp(path, "/api/v1/nodes"))
		return nodes(w, out) < 0 ? 500 : 200;
	if (!strcmp(path, "/api/v1/gpus"))
		return kerf_api_gpus(w, out) < 0 ? 500 : 200;
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
