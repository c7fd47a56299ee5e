/*
 * gpus: GET /api/v1/gpus and a snapshot's "gpus" (view/view.h), every
 * GPU with its health, mode, free share and the pods on it.  The caller
 * says which pods are where (kerf serve from its pods, the simulator
 * from the running workloads' bindings): one entry per (pod, GPU), with
 * the request the core charged; they are sorted by the node's rank
 * position, the GPU, then the pod's namespace and name, so the list
 * reads in the order placement walks the nodes.
 */
#include "view/view.h"

#include <stdlib.h>
#include <string.h>

#include "core/mig/geometry.h"
#include "core/mig/place.h"
#include "view/api_json.h"

enum { NAME_MAX_BYTES = 254 };

static int by_place(const void *a, const void *b)
{
	const struct kerf_view_gpu_pod *x = a, *y = b;
	int c;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	c = strcmp(x->ns, y->ns);
	return c ? c : strcmp(x->name, y->name);
}

/*
 * How the pod uses the GPU: mig, whole, or a fraction's mechanism: MPS
 * when the pod asks for it or the GPU runs it, else time-slicing (the
 * device plugin's default for a fraction naming no mechanism).
 */
static const char *share_name(const struct kerf_node *n, const struct kerf_view_gpu_pod *e)
{
	if (kerf_pod_is_mig(e->req) || (n->mig_gpus >> e->gpu & 1))
		return "mig";
	if (!kerf_pod_is_fraction(e->req))
		return "whole";
	return e->req->share == KERF_SHARE_MPS || n->gpu_share[e->gpu] == KERF_SHARE_MPS ?
	       "mps" : "timeslice";
}

static json_t *pod_json(const struct kerf_state *st, const struct kerf_node *n,
			const struct kerf_view_gpu_pod *e, int *rc)
{
	json_t *o = json_object();
	bool whole = !kerf_pod_is_mig(e->req) && !kerf_pod_is_fraction(e->req);
	int32_t milli = whole ? KERF_GPU_MILLI : e->req->gpu_milli;

	kerf_api_put(o, "namespace", kerf_api_str(e->ns), rc);
	kerf_api_put(o, "name", kerf_api_str(e->name), rc);
	kerf_api_put(o, "tenant", kerf_api_str(kerf_api_tenant_name(st, e->tenant)), rc);
	kerf_api_put(o, "gpuMilli", json_integer(milli > KERF_GPU_MILLI ? KERF_GPU_MILLI : milli), rc);
	kerf_api_put(o, "share", json_string(share_name(n, e)), rc);
	return o;
}

/* The MIG instances of GPU g of n, each with its pod (from e[0..nr)). */
static json_t *mig_json(const struct kerf_state *st, const struct kerf_node *n, int g,
			const struct kerf_view_gpu_pod *e, size_t nr, int *rc)
{
	const struct kerf_cluster *c = &st->cluster;
	const struct kerf_mig_model *m = n->model < c->nr_models ? c->models[n->model].mig : NULL;
	const struct kerf_mig_layout *l = &n->mig->gpu[g];
	json_t *a = json_array();

	for (unsigned k = 0; m && k < l->nr; k++) {
		const struct kerf_view_gpu_pod *who = NULL;
		json_t *o = json_object();
		char pod[2 * NAME_MAX_BYTES + 1];

		for (size_t i = 0; i < nr && !who; i++)
			if (kerf_pod_is_mig(e[i].req) && e[i].mig_start == l->inst[k].start)
				who = &e[i];
		kerf_api_put(o, "profile", json_string(m->profiles[l->inst[k].profile].name), rc);
		kerf_api_put(o, "start", json_integer(l->inst[k].start), rc);
		kerf_api_put(o, "health", json_string(l->inst[k].down ? "down" : "ok"), rc);
		kerf_api_put(o, "tenant", who ? kerf_api_str(kerf_api_tenant_name(st, who->tenant)) : json_null(), rc);
		if (who)
			snprintf(pod, sizeof(pod), "%s/%s", who->ns, who->name);
		kerf_api_put(o, "pod", who ? kerf_api_str(pod) : json_null(), rc);
		kerf_api_push(a, o, rc);
	}
	return a;
}

static json_t *gpu_json(const struct kerf_state *st, const struct kerf_node *n, int g,
			const struct kerf_view_gpu_pod *e, size_t nr, int *rc)
{
	const struct kerf_cluster *c = &st->cluster;
	bool down = n->gpus_down >> g & 1, mig = n->mig && (n->mig_gpus >> g & 1);
	/* a GPU down shows nothing free to placement; say what its pods leave */
	int free_milli = mig ? 0 : down ? n->gpu_down_free_milli[g] : n->gpu_free_milli[g];
	const char *mode = mig ? "mig" : n->gpu_nr_fractions[g] ? "shared" :
			   nr ? "whole" : "free";
	bool gpus = n->model < c->nr_models;
	/* the node's own figure for this GPU first (an agent's), else the model's */
	int32_t mem_mib = n->gpu_mem_mib[g] > 0 ? n->gpu_mem_mib[g] :
			  gpus ? c->models[n->model].mem_mib : 0;
	int tenant = nr ? e[0].tenant : -1;
	json_t *o = json_object(), *pods = json_array();

	for (size_t i = 0; i < nr; i++) {
		if (e[i].tenant != tenant)
			tenant = -1;
		kerf_api_push(pods, pod_json(st, n, &e[i], rc), rc);
	}
	kerf_api_put(o, "node", kerf_api_str(n->name), rc);
	kerf_api_put(o, "index", json_integer(g), rc);
	kerf_api_put(o, "model", gpus ? kerf_api_str(c->models[n->model].name) : json_null(), rc);
	kerf_api_put(o, "memoryMiB", mem_mib > 0 ? json_integer(mem_mib) : json_null(), rc);
	kerf_api_put(o, "health", json_string(down ? "down" : "ok"), rc);
	kerf_api_put(o, "mode", json_string(mode), rc);
	kerf_api_put(o, "freeMilli", json_integer(free_milli < 0 ? 0 : free_milli), rc);
	kerf_api_put(o, "tenant", tenant >= 0 ? kerf_api_str(kerf_api_tenant_name(st, tenant)) : json_null(), rc);
	kerf_api_put(o, "pods", pods, rc);
	if (mig)
		kerf_api_put(o, "mig", mig_json(st, n, g, e, nr, rc), rc);
	return o;
}

int kerf_view_gpu_list(const struct kerf_state *st, struct kerf_view_gpu_pod *v, size_t nr,
		       json_t **out)
{
	const struct kerf_cluster *c = &st->cluster;
	size_t k = 0;
	json_t *o, *items;
	int rc = 0;

	if (nr)
		qsort(v, nr, sizeof(*v), by_place);
	o = kerf_api_list("GPUList", &rc);
	items = json_array();
	for (size_t p = 0; p < c->nr_nodes; p++) {
		const struct kerf_node *n = &c->nodes[c->order[p]];

		for (int g = 0; g < n->nr_gpus; g++) {
			size_t from;

			while (k < nr && (v[k].pos < p || (v[k].pos == p && v[k].gpu < g)))
				k++;
			from = k;
			while (k < nr && v[k].pos == p && v[k].gpu == g)
				k++;
			kerf_api_push(items, gpu_json(st, n, g, &v[from], k - from, &rc), &rc);
		}
	}
	kerf_api_put(o, "items", items, &rc);
	*out = o;
	return rc;
}

/* A pod's names, kept while its entry points at them. */
struct names {
	char ns[NAME_MAX_BYTES];
	char name[NAME_MAX_BYTES];
};

int kerf_view_gpus(const struct kerf_state *st, kerf_view_pod_fn pod_name, void *ctx,
		   json_t **out)
{
	const struct kerf_cluster *c = &st->cluster;
	struct kerf_view_gpu_pod *v;
	struct names *nm;
	size_t n = 0, k = 0, p_nr = 0;
	int rc;

	for (size_t i = 0; i < st->nr_wl; i++)
		for (uint32_t p = 0; p < st->wl[i]->nr_bound; p++) {
			n += (size_t)__builtin_popcount(st->wl[i]->pods[p].b.gpus);
			p_nr++;
		}
	v = calloc(n ? n : 1, sizeof(*v));
	nm = calloc(p_nr ? p_nr : 1, sizeof(*nm));
	if (!v || !nm) {
		free(v);
		free(nm);
		return -KERF_ENOMEM;
	}
	p_nr = 0;
	for (size_t i = 0; i < st->nr_wl; i++) {
		const struct kerf_workload *wl = st->wl[i];

		for (uint32_t p = 0; p < wl->nr_bound; p++) {
			const struct kerf_binding *b = &wl->pods[p].b;
			struct names *x = &nm[p_nr];

			if (b->node >= c->nr_slots || c->pos[b->node] == KERF_NO_POS ||
			    !pod_name(ctx, wl, p, x->ns, x->name, sizeof(x->ns)))
				continue;
			p_nr++;
			for (unsigned g = 0; g < KERF_NODE_MAX_GPUS && k < n; g++) {
				if (!(b->gpus >> g & 1))
					continue;
				v[k++] = (struct kerf_view_gpu_pod){
					.pos = c->pos[b->node], .gpu = (uint8_t)g, .mig_start = b->mig_start,
					.tenant = wl->tenant, .req = &wl->sets[wl->pods[p].set].req,
					.ns = x->ns, .name = x->name };
			}
		}
	}
	rc = kerf_view_gpu_list(st, v, k, out);
	free(v);
	free(nm);
	return rc;
}
