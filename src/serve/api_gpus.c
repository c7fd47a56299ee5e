/*
 * api_gpus: GET /api/v1/gpus, every GPU of every node with what runs on
 * it (docs/api.md, "GPUList"), built by the simulator's snapshot's
 * builder (view/gpus.c) from the pods kerf serve knows.
 *
 * The pods are kerf's running workloads' and the other schedulers' GPU
 * pods kerf counts (tenant kerf-external), each where the core holds it
 * (wpod.b), with the request the core charged (the workload's pod set):
 * a whole GPU is 1000 milli, a fraction its milli, a MIG instance its
 * slices' charge.  One pass collects them, the view sorts them by
 * (rank, GPU, namespace, name): O(pods log pods + GPUs).
 */
#include "serve/api_int.h"

#include <stdlib.h>

#include "serve/api.h"
#include "view/view.h"

int kerf_api_gpus(const struct kerf_world *w, json_t **out)
{
	const struct kerf_cluster *c = &w->st.cluster;
	struct kerf_view_gpu_pod *v = NULL;
	size_t nr = 0, alloc = 0;
	int rc;

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
				struct kerf_view_gpu_pod *m = realloc(v, n * sizeof(*m));

				if (!m) {
					free(v);
					return -KERF_ENOMEM;
				}
				v = m;
				alloc = n;
			}
			v[nr++] = (struct kerf_view_gpu_pod){
				.pos = c->pos[x->b.node], .gpu = (uint8_t)g, .mig_start = x->b.mig_start,
				.tenant = cw->tenant, .req = &cw->sets[x->set].req,
				.ns = kerf_kpod_ns(x->p) ? kerf_kpod_ns(x->p) : "",
				.name = kerf_kpod_name(x->p) ? kerf_kpod_name(x->p) : "" };
		}
	}
	rc = kerf_view_gpu_list(&w->st, v, nr, out);
	free(v);
	return rc;
}
