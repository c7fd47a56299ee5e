/*
 * world_util: the node agent's GPU utilisation (kerf.io/gpu-utilization,
 * kobj/gpu_util.h) as the core's idle samples (core/idle.h).
 *
 * A running workload's sample is the mean of the values of the GPUs its
 * pods hold whole, over all its nodes (a gang busy on one node is not
 * idle because its pods on another wait); GPUs without a value are left
 * out, and a workload none of whose GPUs has one gets no sample.  A MIG
 * or fraction pod gets none: the value is the whole GPU's, which others
 * share.  A node whose value does not read ends the idle stretch of what
 * runs there (core: util_pct < 0): an unreadable value never makes work
 * idle.
 */
#include "serve/world_int.h"

#include "core/idle.h"

enum { UTIL_NONE = 0, UTIL_SAMPLE = 1, UTIL_UNREADABLE = -1 };

/* g's sample into *pct: UTIL_SAMPLE, UTIL_NONE or UTIL_UNREADABLE. */
static int group_util(const struct kerf_world *w, const struct wgroup *g, int32_t *pct)
{
	uint32_t sum = 0, nr = 0;
	bool unreadable = false;

	for (uint32_t i = 0; i < g->nr_m; i++) {
		const struct wpod *x = g->m[i];
		const struct wnode *n;

		if (!x->in_run || kerf_world_pod_done(x) || x->b.node >= w->st.cluster.nr_slots)
			continue;
		if (x->p->nr_mig > 0 || x->p->gpu_milli > 0)
			return UTIL_NONE;       /* a share of a GPU */
		if (x->p->nr_gpus <= 0 || !x->b.gpus)
			continue;               /* no GPU: nothing to read */
		n = kerf_map_get_str(&w->nodes, w->st.cluster.nodes[x->b.node].name);
		if (!n)
			continue;
		if (n->n.util_error) {
			unreadable = true;
			continue;
		}
		for (unsigned k = 0; k < KERF_NODE_MAX_GPUS; k++)
			if ((x->b.gpus >> k & 1) && (n->n.util_gpus >> k & 1)) {
				sum += n->n.util_pct[k];
				nr++;
			}
	}
	if (unreadable)
		return UTIL_UNREADABLE;
	if (!nr)
		return UTIL_NONE;
	*pct = (int32_t)((sum + nr / 2) / nr);
	return UTIL_SAMPLE;
}

void kerf_world_util_group(struct kerf_world *w, const struct wgroup *g, int64_t now_ms)
{
	int32_t pct = 0;

	if (!g->running || g->external || !g->id)
		return;
	switch (group_util(w, g, &pct)) {
	case UTIL_SAMPLE:
		kerf_idle_sample(&w->st, g->id, pct, now_ms);
		w->stats.nr_util_samples++;
		break;
	case UTIL_UNREADABLE:
		kerf_idle_sample(&w->st, g->id, -1, now_ms);
		break;
	default:
		break;
	}
}

/* Does a pod of g run on node slot? */
static bool group_on(const struct wgroup *g, uint32_t slot)
{
	for (uint32_t i = 0; i < g->nr_m; i++)
		if (g->m[i]->in_run && g->m[i]->b.node == slot)
			return true;
	return false;
}

void kerf_world_util_node(struct kerf_world *w, const struct wnode *n, int64_t now_ms)
{
	if (n->n.util_error)
		w->stats.nr_util_unreadable++;
	if (!n->n.util_gpus && !n->n.util_error)
		return;
	for (size_t i = 0; i < w->nr_groupv; i++)
		if (w->groupv[i]->running && group_on(w->groupv[i], n->slot))
			kerf_world_util_group(w, w->groupv[i], now_ms);
}

void kerf_world_util_all(struct kerf_world *w, int64_t now_ms)
{
	for (size_t i = 0; i < w->nr_groupv; i++)
		kerf_world_util_group(w, w->groupv[i], now_ms);
}
