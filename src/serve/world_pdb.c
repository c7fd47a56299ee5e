/*
 * world_pdb: PodDisruptionBudgets as the core's protection of running
 * workloads (kerf_state_protect), so that kerf never starts a checkpoint
 * handshake whose eviction the API server would refuse.
 */
#include "serve/world_int.h"

#include "kobj/pdb.h"

/* Does a blocking budget of pdbs select pod p? */
static bool covered(const struct kerf_kpod *p, const struct kerf_kpdb *const *pdbs,
		    size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (kerf_kpdb_blocks(pdbs[i]) && !strcmp(pdbs[i]->ns, kerf_kpod_ns(p)) &&
		    kerf_kpdb_selects(pdbs[i], kerf_kpod_labels(p), p->nr_labels))
			return true;
	return false;
}

int kerf_world_protect(struct kerf_world *w, const struct kerf_kpdb *const *pdbs,
		       size_t nr, struct kerf_err *err)
{
	size_t blocking = 0;

	for (size_t i = 0; i < nr; i++)
		blocking += kerf_kpdb_blocks(pdbs[i]);
	/* nothing blocks and nothing is protected: no workload is walked */
	if (!blocking && !w->nr_protected)
		return 0;
	w->nr_protected = 0;
	for (size_t i = 0; i < w->nr_groupv; i++) {
		const struct wgroup *g = w->groupv[i];
		const struct kerf_workload *wl;
		bool on = false;
		int rc;

		if (!g->id || g->external || !(wl = kerf_state_find_const(&w->st, g->id)))
			continue;
		for (size_t k = 0; blocking && g->running && k < g->nr_m && !on; k++)
			on = covered(g->m[k]->p, pdbs, nr);
		w->nr_protected += on;
		if (on != wl->pdb_protected &&
		    (rc = kerf_state_protect(&w->st, g->id, on, err)) < 0) {
			w->nr_protected = 1;   /* walked again next time */
			return rc;
		}
	}
	return 0;
}
