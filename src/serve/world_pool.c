/*
 * GPUPools in the world: each is a flavor, the nodes its selector
 * matches.  A node any pool selects (the first by name when several do)
 * is of the pool's flavor: a GPU model of the core named after the pool,
 * with the MIG geometry of the pool's gpuModel, and Tenants' quotas for
 * that flavor (spec.quotas[].flavor) apply to it.  A node no pool selects
 * keeps the flavor its nvidia.com/gpu.product label names.
 *
 * A node that holds pods keeps its flavor until it is idle (a pool made
 * over busy nodes must not evict what runs there): the change waits, and
 * is tried again when the node changes and every 10 s at the cycle.
 */
#include <stdlib.h>
#include <string.h>

#include "core/mig/place.h"
#include "serve/world_int.h"

enum { FLAVOR_RETRY_MS = 10000 };

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct kerf_kobj_gpupool *)a)->name,
		      ((const struct kerf_kobj_gpupool *)b)->name);
}

static ptrdiff_t pool_index(const struct kerf_world *w, const char *name)
{
	for (size_t i = 0; i < w->nr_pools; i++)
		if (!strcmp(w->pools[i].name, name))
			return (ptrdiff_t)i;
	return -1;
}

static bool selects(const struct kerf_kobj_gpupool *p, const struct kerf_knode *n)
{
	for (size_t i = 0; i < p->nr_match_labels; i++) {
		const char *v = kerf_knode_label(n, p->match_labels[i].key);

		if (!v || strcmp(v, p->match_labels[i].value))
			return false;
	}
	return p->nr_match_labels > 0;
}

const struct kerf_kobj_gpupool *kerf_world_pool_of(const struct kerf_world *w,
						   const struct kerf_knode *n)
{
	/* pools are kept in name order: the first that selects wins */
	for (size_t i = 0; i < w->nr_pools; i++)
		if (selects(&w->pools[i], n))
			return &w->pools[i];
	return NULL;
}

static const struct {
	const char *name;
	uint32_t need;           /* refused when none of these is allowed */
} ways[KERF_POOL_SHARING_COUNT] = {
	{ "Whole", KERF_KOBJ_SHARE_WHOLE },
	{ "MIG", KERF_KOBJ_SHARE_MIG },
	{ "MPS", KERF_KOBJ_SHARE_MPS },
	{ "TimeSlice", KERF_KOBJ_SHARE_TIMESLICE },
	{ "Fraction", KERF_KOBJ_SHARE_MPS | KERF_KOBJ_SHARE_TIMESLICE },
};

const char *kerf_pool_sharing_name(int way)
{
	return ways[way].name;
}

bool kerf_pool_refuses(const struct kerf_kobj_gpupool *p, int way)
{
	return p && !(p->sharing & ways[way].need);
}

bool kerf_pool_sharing_used(const struct kerf_kpod *p, const char *way)
{
	const char *mine;

	if (p->nr_gpus <= 0 && !kerf_kpod_mig_profile(p) && !p->gpu_milli)
		return false;
	if (kerf_kpod_mig_profile(p))
		mine = "MIG";
	else if (p->gpu_milli > 0 && p->gpu_milli < KERF_GPU_MILLI)
		mine = p->share == KERF_SHARE_MPS ? "MPS"
		       : p->share == KERF_SHARE_TIMESLICE ? "TimeSlice" : "Fraction";
	else
		mine = "Whole";
	return !strcmp(mine, way);
}

int kerf_world_node_model(struct kerf_world *w, const struct kerf_knode *n,
			  struct kerf_err *err)
{
	const struct kerf_kobj_gpupool *p = kerf_world_pool_of(w, n);
	const char *want = p ? p->name : n->gpu_model ? n->gpu_model : "unknown";
	int slot = kerf_cluster_find_node(&w->st.cluster, n->name);

	if (slot >= 0) {
		const struct kerf_node *x = &w->st.cluster.nodes[slot];

		if (x->nr_pods > 0 && x->model != KERF_MODEL_NONE &&
		    strcmp(w->st.cluster.models[x->model].name, want)) {
			/* busy: it keeps its flavor for now */
			w->flavor_waits = true;
			return x->model;
		}
	}
	if (p)
		return kerf_state_model_hw(&w->st, p->name, p->gpu_model,
					   n->gpu_mem_mib, err);
	/* a node without the product label is invalid, so cordoned */
	return kerf_state_model(&w->st, want, n->gpu_mem_mib, err);
}

/* Every node set again (in name order), for its flavor as pools say now. */
int kerf_world_reflavor(struct kerf_world *w, int64_t now_ms, struct kerf_err *err)
{
	size_t nr = w->st.cluster.nr_nodes, k = 0;
	char **names = calloc(nr + 1, sizeof(*names));
	int rc = 0;

	if (!names)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < nr; i++) {
		const struct kerf_node *n = &w->st.cluster.nodes[w->st.cluster.order[i]];

		if (kerf_map_get_str(&w->nodes, n->name) && !(names[k] = strdup(n->name)))
			rc = kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		else if (names[k])
			k++;
	}
	w->flavor_waits = false;
	w->flavor_tried_ms = now_ms;
	for (size_t i = 0; i < k && rc == 0; i++) {
		struct wnode *x = kerf_map_get_str(&w->nodes, names[i]);
		struct kerf_knode copy;

		if (!x)
			continue;
		if (kerf_knode_clone(&copy, &x->n) < 0)
			rc = kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		else
			rc = kerf_world_node_set(w, &copy, now_ms, err);
	}
	for (size_t i = 0; i < k; i++)
		free(names[i]);
	free(names);
	return rc;
}

int kerf_world_reflavor_due(struct kerf_world *w, int64_t now_ms, struct kerf_err *err)
{
	if (!w->flavor_waits || now_ms - w->flavor_tried_ms < FLAVOR_RETRY_MS)
		return 0;
	return kerf_world_reflavor(w, now_ms, err);
}

int kerf_world_pool_set(struct kerf_world *w, const struct kerf_kobj_gpupool *p,
			int64_t now_ms, struct kerf_err *err)
{
	ptrdiff_t i = pool_index(w, p->name);

	/* the same again (its status written, a relist): nothing to redo */
	if (i >= 0 && !memcmp(&w->pools[i], p, sizeof(*p)))
		return 0;
	if (i < 0) {
		struct kerf_kobj_gpupool *v = realloc(w->pools, (w->nr_pools + 1) * sizeof(*v));

		if (!v)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		w->pools = v;
		i = (ptrdiff_t)w->nr_pools++;
	}
	w->pools[i] = *p;
	qsort(w->pools, w->nr_pools, sizeof(*w->pools), by_name);
	return kerf_world_reflavor(w, now_ms, err);
}

int kerf_world_pool_delete(struct kerf_world *w, const char *name, int64_t now_ms,
			   struct kerf_err *err)
{
	ptrdiff_t i = pool_index(w, name);

	if (i < 0)
		return 0;
	memmove(&w->pools[i], &w->pools[i + 1],
		(w->nr_pools - (size_t)i - 1) * sizeof(*w->pools));
	w->nr_pools--;
	return kerf_world_reflavor(w, now_ms, err);
}

int kerf_world_each_gang(const struct kerf_world *w, kerf_world_gang_fn fn,
			 void *ctx)
{
	for (size_t i = 0; i < w->nr_groupv; i++) {
		const struct wgroup *g = w->groupv[i];
		const struct kerf_kpod *p;
		int rc;

		if (!g || g->external || !g->nr_m)
			continue;
		p = g->m[0]->p;
		if (!kerf_kpod_gang(p))
			continue;
		rc = fn(ctx, kerf_kpod_ns(p), kerf_kpod_gang(p),
			kerf_kpod_priority_class(p) ? kerf_kpod_priority_class(p) : "");
		if (rc < 0)
			return rc;
	}
	return 0;
}

void kerf_world_pool_usage(const struct kerf_world *w, const char *name,
			   struct kerf_world_pool_usage *out)
{
	const struct kerf_cluster *c = &w->st.cluster;
	int m = kerf_cluster_find_model(c, name);

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; m >= 0 && i < c->nr_nodes; i++) {
		const struct kerf_node *n = &c->nodes[c->order[i]];

		if (n->model != (uint16_t)m)
			continue;
		out->nodes++;
		out->gpus += n->nr_gpus;
		for (int g = 0; g < n->nr_gpus; g++) {
			/* a GPU in MIG mode shows 0 free: its instances' charges say */
			bool mig = n->mig_gpus >> g & 1u;

			out->mig_gpus += mig;
			out->allocated_milli += KERF_GPU_MILLI -
				(mig ? (n->mig && g < KERF_MIG_NODE_GPUS ? n->mig->free_milli[g]
									 : KERF_GPU_MILLI)
				     : n->gpu_free_milli[g]);
		}
	}
}
