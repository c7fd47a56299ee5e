/*
 * nodes: GET /api/v1/nodes's items (view/view.h): each node as the core
 * keeps it, with what only the caller knows (why it is cordoned, its
 * NVLink domain's name, the agent's marks and utilisation) passed in.
 */
#include "view/view.h"

#include "core/mig/geometry.h"
#include "core/mig/place.h"
#include "view/api_json.h"

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
static json_t *util_json(const struct kerf_view_node_extra *x, int *rc)
{
	json_t *a = json_array();

	for (unsigned g = 0; x && x->util_pct && g < 64; g++)
		if (x->util_gpus >> g & 1) {
			json_t *e = json_object();

			kerf_api_put(e, "gpu", json_integer(g), rc);
			kerf_api_put(e, "percent", json_integer(x->util_pct[g]), rc);
			kerf_api_push(a, e, rc);
		}
	return a;
}

json_t *kerf_view_node(const struct kerf_cluster *c, const struct kerf_node *n,
		       const struct kerf_view_node_extra *x, int *rc)
{
	const char *why = x ? x->cordon_reason : NULL;
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
	kerf_api_put(o, "nvlinkDomain", kerf_api_str(x ? x->nvlink_domain : NULL), rc);
	kerf_api_put(o, "mig", mig_json(c, n, rc), rc);
	kerf_api_put(o, "gpusDown", down_json(n, rc), rc);
	kerf_api_put(o, "gpuMarksError", kerf_api_str(x ? x->marks_error : NULL), rc);
	kerf_api_put(o, "gpuUtilization", util_json(x, rc), rc);
	kerf_api_put(o, "gpuUtilizationError", kerf_api_str(x ? x->util_error : NULL), rc);
	return o;
}

int kerf_view_nodes(const struct kerf_cluster *c, kerf_view_node_fn extra, void *ctx,
		    json_t **out)
{
	int rc = 0;
	json_t *o = kerf_api_list("NodeList", &rc), *items = json_array();

	/* by rank: ties by name, as placement breaks them */
	for (size_t p = 0; p < c->nr_nodes; p++) {
		const struct kerf_node *n = &c->nodes[c->order[p]];
		struct kerf_view_node_extra x = { 0 };
		bool have = extra && extra(ctx, n, &x);

		kerf_api_push(items, kerf_view_node(c, n, have ? &x : NULL, &rc), &rc);
	}
	kerf_api_put(o, "items", items, &rc);
	*out = o;
	return rc;
}
