/*
 * restart: the simulator's controller stops and starts again mid-run, the
 * way a kerf serve pod is rescheduled.  Its state is exported (through the
 * JSON a real controller persists), torn down, and rebuilt from what the
 * cluster shows: nodes (listed in another order than they were added,
 * with their MIG layouts), tenants, running workloads with their bindings
 * (adopted, in another order), pending ones (submitted again), and the
 * export.  The world (sim records, events, clock) goes on untouched.
 */
#include "sim/restart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/grow.h"
#include "core/mig/place.h"
#include "core/persist.h"
#include "persist/state_json.h"

/* A workload as the cluster shows it: its pods (bound or not). */
struct seen_workload {
	char *key;
	struct kerf_workload tmpl;   /* tenant, class, sets, min_count, topology */
	int64_t submit_ms;
	int64_t start_ms;
	bool running;
	struct kerf_wl_pod *pods;    /* node slots are the old cluster's */
	uint32_t nr_pods;
	char **pod_nodes;            /* ... and by name, for the new one */
};

struct seen {
	struct kerf_node_spec *nodes;        /* names and layouts owned */
	struct kerf_mig_layout *layouts;     /* KERF_NODE_MAX_GPUS per node */
	size_t nr_nodes;
	struct kerf_tenant_spec *tenants;    /* [1..nr) names owned */
	bool *removed;
	size_t nr_tenants;
	struct seen_workload *wl;
	size_t nr_wl;
};

static void seen_release(struct seen *s)
{
	for (size_t i = 0; s->nodes && i < s->nr_nodes; i++)
		free((char *)s->nodes[i].name);
	for (size_t i = 1; s->tenants && i < s->nr_tenants; i++)
		free((char *)s->tenants[i].name);
	for (size_t i = 0; s->wl && i < s->nr_wl; i++) {
		free(s->wl[i].key);
		free(s->wl[i].pods);
		for (uint32_t k = 0; s->wl[i].pod_nodes && k < s->wl[i].nr_pods; k++)
			free(s->wl[i].pod_nodes[k]);
		free(s->wl[i].pod_nodes);
	}
	free(s->nodes);
	free(s->layouts);
	free(s->tenants);
	free(s->removed);
	free(s->wl);
}

/* What a controller could list: nodes in reverse rank order. */
static int see_nodes(const struct kerf_state *st, struct seen *s)
{
	const struct kerf_cluster *c = &st->cluster;
	size_t n = c->nr_nodes;

	s->nodes = calloc(n ? n : 1, sizeof(*s->nodes));
	s->layouts = calloc((n ? n : 1) * KERF_NODE_MAX_GPUS, sizeof(*s->layouts));
	if (!s->nodes || !s->layouts)
		return -KERF_ENOMEM;
	for (size_t k = 0; k < n; k++) {
		uint32_t i = c->order[n - 1 - k];
		struct kerf_node_spec *x = &s->nodes[s->nr_nodes];

		kerf_cluster_node_spec(c, i, x);
		if (x->mig_layout) {
			memcpy(&s->layouts[s->nr_nodes * KERF_NODE_MAX_GPUS], x->mig_layout,
			       KERF_NODE_MAX_GPUS * sizeof(*s->layouts));
			x->mig_layout = &s->layouts[s->nr_nodes * KERF_NODE_MAX_GPUS];
		}
		x->name = kerf_strdup(x->name);
		if (!x->name)
			return -KERF_ENOMEM;
		s->nr_nodes++;
	}
	return 0;
}

static int see_tenants(const struct kerf_state *st, struct seen *s)
{
	s->tenants = calloc(st->tenants.nr, sizeof(*s->tenants));
	s->removed = calloc(st->tenants.nr, sizeof(*s->removed));
	if (!s->tenants || !s->removed)
		return -KERF_ENOMEM;
	s->nr_tenants = 1;
	for (size_t t = 1; t < st->tenants.nr; t++) {
		kerf_state_tenant_spec(st, (int)t, &s->tenants[t]);
		s->tenants[t].name = kerf_strdup(s->tenants[t].name);
		s->removed[t] = st->tenants.t[t].removed;
		s->nr_tenants++;
		if (!s->tenants[t].name)
			return -KERF_ENOMEM;
	}
	return 0;
}

/* Workloads the cluster shows, newest first (another order than before). */
static int see_workloads(const struct kerf_state *st, struct seen *s)
{
	s->wl = calloc(st->nr_wl ? st->nr_wl : 1, sizeof(*s->wl));
	if (!s->wl)
		return -KERF_ENOMEM;
	for (size_t k = st->nr_wl; k-- > 0;) {
		const struct kerf_workload *w = st->wl[k];
		struct seen_workload *x;

		if (w->state == KERF_WL_FINISHED)
			continue;   /* its pods are gone: nothing to list */
		x = &s->wl[s->nr_wl++];
		x->key = kerf_strdup(w->key);
		kerf_workload_copy(&x->tmpl, w);
		/* pending: asked again as first asked; running: as bound */
		if (w->state == KERF_WL_PENDING)
			for (int i = 0; i < w->nr_sets; i++)
				x->tmpl.sets[i].req = kerf_workload_asked(w, i);
		x->submit_ms = w->submit_ms;
		x->start_ms = w->start_ms;
		x->running = w->state == KERF_WL_RUNNING;
		if (!x->key)
			return -KERF_ENOMEM;
		if (!x->running)
			continue;
		x->nr_pods = w->nr_bound;
		x->pods = malloc(w->nr_bound * sizeof(*x->pods));
		x->pod_nodes = calloc(w->nr_bound, sizeof(*x->pod_nodes));
		if (!x->pods || !x->pod_nodes)
			return -KERF_ENOMEM;
		memcpy(x->pods, w->pods, w->nr_bound * sizeof(*x->pods));
		for (uint32_t p = 0; p < w->nr_bound; p++)
			if (!(x->pod_nodes[p] = kerf_strdup(st->cluster.nodes[w->pods[p].b.node].name)))
				return -KERF_ENOMEM;
	}
	return 0;
}

/* The cluster and tenants of the new state: models first, in their order. */
static int rebuild(const struct kerf_state *old, const struct seen *s,
		   struct kerf_state *st, struct kerf_decisions *dec,
		   struct kerf_err *err)
{
	struct kerf_cluster c;
	struct kerf_tenants tt;
	int rc;

	kerf_cluster_init(&c);
	for (size_t m = 0; m < old->cluster.nr_models; m++)
		if ((rc = kerf_cluster_model(&c, old->cluster.models[m].name,
					     old->cluster.models[m].mem_mib, err)) < 0) {
			kerf_cluster_release(&c);
			return rc;
		}
	/* labels and taints interned in the same order: the same bits */
	for (size_t i = 0; i < old->cluster.nr_labels; i++)
		kerf_cluster_label(&c, old->cluster.labels[i], NULL);
	for (size_t i = 0; i < old->cluster.nr_taints; i++)
		kerf_cluster_taint(&c, old->cluster.taints[i], NULL);
	rc = kerf_tenants_init(&tt, old->tenants.nr_res);
	if (rc < 0) {
		kerf_cluster_release(&c);
		return kerf_err_set(err, rc, "out of memory");
	}
	rc = kerf_state_init(st, &c, &tt, &old->classes, err);
	kerf_cluster_release(&c);
	kerf_tenants_release(&tt);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < s->nr_nodes && rc >= 0; i++)
		rc = kerf_state_node_upsert(st, &s->nodes[i], 0, dec, err);
	/* tenants at the same indices: added in order, removed ones again */
	for (size_t t = 1; t < s->nr_tenants && rc >= 0; t++) {
		rc = kerf_state_tenant_add(st, &s->tenants[t], err);
		if (rc >= 0 && s->removed[t])
			rc = kerf_state_tenant_remove(st, (int)t, err);
	}
	return rc < 0 ? rc : 0;
}

/* Running workloads adopted, pending ones submitted again. */
static int relist(struct kerf_state *st, const struct seen *s, uint64_t *adopted,
		  struct kerf_err *err)
{
	for (size_t i = 0; i < s->nr_wl; i++) {
		const struct seen_workload *x = &s->wl[i];
		int rc;

		if (!x->running) {
			rc = kerf_state_submit(st, x->key, &x->tmpl, x->submit_ms, err);
		} else {
			for (uint32_t p = 0; p < x->nr_pods; p++) {
				int slot = kerf_cluster_find_node(&st->cluster, x->pod_nodes[p]);

				if (slot < 0)
					return kerf_err_set(err, -KERF_ENOTFOUND,
							    "restart: node '%s' is gone",
							    x->pod_nodes[p]);
				x->pods[p].b.node = (uint32_t)slot;
			}
			rc = kerf_state_adopt(st, x->key, &x->tmpl, x->submit_ms,
					      x->start_ms, x->pods, x->nr_pods, err);
			(*adopted)++;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The export, through the JSON a controller would store. */
static int export_json(const struct kerf_state *st, const struct kerf_sched *s,
		       struct kerf_persist *back, size_t *bytes, FILE *log,
		       struct kerf_err *err)
{
	struct kerf_persist p;
	char *text = NULL;
	size_t len = 0;
	int rc = kerf_state_export(st, s, &p);

	if (rc < 0)
		return kerf_err_set(err, rc, "restart: export: out of memory");
	rc = kerf_state_json_encode(&p, &text, &len, err);
	kerf_persist_release(&p);
	if (rc == 0 && log)
		fprintf(log, "# restart: %s\n", text);
	if (rc == 0)
		rc = kerf_state_json_decode(text, len, back, err);
	*bytes = len;
	free(text);
	return rc;
}

int kerf_timesim_restart(struct kerf_timesim *ts, struct kerf_err *err)
{
	struct kerf_persist saved;
	struct seen s = { 0 };
	struct kerf_state fresh = { 0 };
	size_t bytes = 0;
	int rc = export_json(&ts->st, &ts->sched, &saved, &bytes, ts->decision_log, err);

	if (rc < 0)
		return rc;
	rc = see_nodes(&ts->st, &s);
	if (rc == 0)
		rc = see_tenants(&ts->st, &s);
	if (rc == 0)
		rc = see_workloads(&ts->st, &s);
	if (rc < 0) {
		rc = kerf_err_set(err, rc, "restart: out of memory");
		goto out;
	}
	rc = rebuild(&ts->st, &s, &fresh, &ts->dec, err);
	if (rc == 0)
		rc = relist(&fresh, &s, &ts->nr_adopted, err);
	if (rc < 0)
		goto out;
	/* the old controller is gone; the new one takes its place */
	kerf_sched_release(&ts->sched);
	kerf_policy_release(&ts->pol);
	kerf_state_release(&ts->st);
	ts->st = fresh;
	memset(&fresh, 0, sizeof(fresh));
	rc = kerf_timesim_rebind(ts, err);
	if (rc == 0)
		rc = kerf_state_import(&ts->st, &ts->sched, &saved, err);
	ts->nr_restarts++;
	ts->restart_bytes = bytes;
out:
	if (fresh.cluster.nodes || fresh.tenants.t)
		kerf_state_release(&fresh);
	seen_release(&s);
	kerf_persist_release(&saved);
	return rc;
}
