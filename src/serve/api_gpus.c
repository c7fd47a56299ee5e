/*
 * api_gpus: GET /api/v1/gpus, every GPU of every node with what runs on
 * it (docs/api.md, "GPUList"): the shape `kerf get gpus` and the
 * simulator's snapshot share.  Items go by node rank (ties by name, as
 * placement breaks them), then GPU index; the pods on a GPU by
 * namespace/name.
 *
 * The pods are kerf's running workloads' and the other schedulers' GPU
 * pods kerf counts (tenant kerf-external), each where the core holds it
 * (wpod.b), with the request the core charged (the workload's pod set):
 * a whole GPU is 1000 milli, a fraction its milli, a MIG instance its
 * slices' charge.  One pass sorts them by (rank, GPU, key), so the
 * answer is O(pods log pods + GPUs).
 */
#include "serve/api_int.h"

#include <stdlib.h>
#include <string.h>

#include "core/mig/place.h"
#include "serve/api.h"

/* One pod on one GPU. */
struct gpu_pod {
	uint32_t pos;              /* the node's place in rank order */
	uint8_t gpu;
	const struct wpod *x;
	const struct kerf_pod *req;
	int tenant;
};

static int by_place(const void *pa, const void *pb)
{
	const struct gpu_pod *a = pa, *b = pb;

	if (a->pos != b->pos)
		return a->pos < b->pos ? -1 : 1;
	if (a->gpu != b->gpu)
		return a->gpu < b->gpu ? -1 : 1;
	return strcmp(a->x->key, b->x->key);
}

/* The running pods of w, one entry per GPU each holds, sorted. */
static int gather(const struct kerf_world *w, struct gpu_pod **out, size_t *nr_out)
{
	const struct kerf_cluster *c = &w->st.cluster;
	struct gpu_pod *v = NULL;
	size_t nr = 0, alloc = 0;

	for (size_t i = 0; i < w->nr_podv; i++) {
		const struct wpod *x = w->podv[i];
		const struct kerf_workload *cw;

		if (!x->in_run || kerf_world_pod_done(x) || !x->g ||
		    x->b.node >= c->nr_slots || !c->nodes[x->b.node].live)
			continue;
		cw = kerf_state_find(&w->st, x->g->id);
		if (!cw || x->set >= cw->nr_sets)
			continue;
		for (int g = 0; g < c->nodes[x->b.node].nr_gpus; g++) {
			if (!(x->b.gpus >> g & 1))
				continue;
			if (nr == alloc) {
				size_t n = alloc ? 2 * alloc : 64;
				struct gpu_pod *m = realloc(v, n * sizeof(*m));

				if (!m) {
					free(v);
					return -KERF_ENOMEM;
				}
				v = m;
				alloc = n;
			}
			v[nr++] = (struct gpu_pod){ .pos = c->pos[x->b.node], .gpu = (uint8_t)g,
						    .x = x, .req = &cw->sets[x->set].req,
						    .tenant = cw->tenant };
		}
	}
	if (nr)
		qsort(v, nr, sizeof(*v), by_place);
	*out = v;
	*nr_out = nr;
	return 0;
}

/*
 * How the pod uses its GPU.  A fraction naming no mechanism takes the
 * node's default, time-slicing (the device plugin's way without MPS).
 */
static const char *share_name(const struct kerf_pod *req)
{
	if (kerf_pod_is_mig(req))
		return "mig";
	if (!kerf_pod_is_fraction(req))
		return "whole";
	return req->share == KERF_SHARE_MPS ? "mps" : "timeslice";
}

static json_t *pod_json(const struct kerf_state *st, const struct gpu_pod *e, int *rc)
{
	json_t *o = json_object();
	bool whole = !kerf_pod_is_mig(e->req) && !kerf_pod_is_fraction(e->req);

	kerf_api_put(o, "namespace", kerf_api_str(kerf_kpod_ns(e->x->p)), rc);
	kerf_api_put(o, "name", kerf_api_str(kerf_kpod_name(e->x->p)), rc);
	kerf_api_put(o, "tenant", kerf_api_str(kerf_api_tenant_name(st, e->tenant)), rc);
	kerf_api_put(o, "gpuMilli", json_integer(whole ? KERF_GPU_MILLI : e->req->gpu_milli), rc);
	kerf_api_put(o, "share", json_string(share_name(e->req)), rc);
	return o;
}

/* The MIG instances of GPU g of n, each with the pod on it (of p[0..nr)). */
static json_t *mig_json(const struct kerf_state *st, const struct kerf_node *n, int g,
			const struct gpu_pod *p, size_t nr, int *rc)
{
	const struct kerf_cluster *c = &st->cluster;
	const struct kerf_mig_model *m = n->model < c->nr_models ? c->models[n->model].mig : NULL;
	const struct kerf_mig_layout *l = n->mig ? &n->mig->gpu[g] : NULL;
	json_t *a = json_array();

	for (unsigned k = 0; m && l && k < l->nr; k++) {
		const struct kerf_mig_instance *in = &l->inst[k];
		const struct gpu_pod *on = NULL;
		json_t *o = json_object();

		for (size_t i = 0; i < nr && !on; i++)
			if (kerf_pod_is_mig(p[i].req) && p[i].x->b.mig_start == in->start)
				on = &p[i];
		kerf_api_put(o, "profile", json_string(m->profiles[in->profile].name), rc);
		kerf_api_put(o, "start", json_integer(in->start), rc);
		kerf_api_put(o, "health", json_string(in->down ? "down" : "ok"), rc);
		kerf_api_put(o, "tenant", on ? kerf_api_str(kerf_api_tenant_name(st, on->tenant)) : json_null(), rc);
		kerf_api_put(o, "pod", on ? kerf_api_str(on->x->key) : json_null(), rc);
		kerf_api_push(a, o, rc);
	}
	return a;
}

static json_t *gpu_json(const struct kerf_state *st, const struct kerf_node *n, int g,
			const struct gpu_pod *p, size_t nr, int *rc)
{
	const struct kerf_cluster *c = &st->cluster;
	const struct kerf_gpu_model *model = n->model < c->nr_models ? &c->models[n->model] : NULL;
	bool mig = n->mig_gpus >> g & 1, down = n->gpus_down >> g & 1;
	int32_t mem_mib = n->gpu_mem_mib[g] > 0 ? n->gpu_mem_mib[g] : model ? model->mem_mib : 0;
	/* a GPU down shows nothing free to placement; say what its pods leave */
	int32_t free_milli = mig ? 0 : down ? n->gpu_down_free_milli[g] : n->gpu_free_milli[g];
	const char *mode = mig ? "mig" : !nr ? "free" : n->gpu_nr_fractions[g] ? "shared" : "whole";
	const char *tenant = nr ? kerf_api_tenant_name(st, p[0].tenant) : NULL;
	json_t *o = json_object(), *pods = json_array();

	for (size_t i = 0; i < nr; i++) {
		if (p[i].tenant != p[0].tenant)
			tenant = NULL;
		kerf_api_push(pods, pod_json(st, &p[i], rc), rc);
	}
	kerf_api_put(o, "node", kerf_api_str(n->name), rc);
	kerf_api_put(o, "index", json_integer(g), rc);
	kerf_api_put(o, "model", model ? kerf_api_str(model->name) : json_null(), rc);
	kerf_api_put(o, "memoryMiB", mem_mib > 0 ? json_integer(mem_mib) : json_null(), rc);
	kerf_api_put(o, "health", json_string(down ? "down" : "ok"), rc);
	kerf_api_put(o, "mode", json_string(mode), rc);
	kerf_api_put(o, "freeMilli", json_integer(free_milli < 0 ? 0 : free_milli), rc);
	kerf_api_put(o, "tenant", kerf_api_str(tenant), rc);
	kerf_api_put(o, "pods", pods, rc);
	if (mig)
		kerf_api_put(o, "mig", mig_json(st, n, g, p, nr, rc), rc);
	return o;
}

int kerf_api_gpus(const struct kerf_world *w, json_t **out)
{
	const struct kerf_cluster *c = &w->st.cluster;
	struct gpu_pod *v;
	size_t nr, k = 0;
	json_t *o, *items;
	int rc = gather(w, &v, &nr);

	if (rc < 0)
		return rc;
	o = json_object();
	kerf_api_put(o, "apiVersion", json_string(KERF_API_VERSION), &rc);
	kerf_api_put(o, "kind", json_string("GPUList"), &rc);
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
			kerf_api_push(items, gpu_json(&w->st, n, g, v + from, k - from, &rc), &rc);
		}
	}
	kerf_api_put(o, "items", items, &rc);
	free(v);
	*out = o;
	return rc;
}
