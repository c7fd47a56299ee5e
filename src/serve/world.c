/*
 * world: pods, nodes, namespaces and tenants as the core's state; see
 * world.h for the rules.  Every pod belongs to at most one group (the
 * workload it is part of, by key); whenever a member changes, the group
 * is brought in step with the core (sync_group): collected, submitted,
 * resubmitted when what it asks changed, adopted when its pods are bound
 * already, started, finished and forgotten.  Anything that walks many
 * pods or groups walks them sorted by key, so the same calls give the
 * same actions.
 */
#include "serve/world_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/assert.h"
#include "base/buf.h"
#include "base/grow.h"
#include "core/policy.h"
#include "core/preempt.h"
#include "kobj/names.h"

enum { NO_SLOT = UINT32_MAX };

void kerf_actions_init(struct kerf_actions *l)
{
	memset(l, 0, sizeof(*l));
}

void kerf_actions_release(struct kerf_actions *l)
{
	free(l->a);
	memset(l, 0, sizeof(*l));
}

/*
 * kerf's classes when the configuration gives none: production serving
 * is never preempted; normal work may be, with five minutes to
 * checkpoint; preemptible work has thirty seconds.  A pod without a
 * PriorityClass kerf knows takes the highest class at or below its
 * priority (0 when it has none): preemptible.
 */
static const struct kerf_priority_class default_classes[] = {
	{ .name = "production", .value = 1000, .preemptible = false },
	{ .name = "normal", .value = 100, .preemptible = true,
	  .checkpoint_grace_ms = 5 * 60 * 1000 },
	{ .name = "preemptible", .value = 0, .preemptible = true,
	  .checkpoint_grace_ms = 30 * 1000 },
};

/* --- small helpers ----------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ULL;
	return h;
}

static int by_pod_key(const void *a, const void *b)
{
	return strcmp((*(struct wpod *const *)a)->key, (*(struct wpod *const *)b)->key);
}

static int by_group_key(const void *a, const void *b)
{
	return strcmp((*(struct wgroup *const *)a)->key,
		      (*(struct wgroup *const *)b)->key);
}

/* Set (reason non-NULL) or clear x's world-level reason. */
static void set_why(struct kerf_world *w, struct wpod *x, const char *reason,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void set_why(struct kerf_world *w, struct wpod *x, const char *reason,
		    const char *fmt, ...)
{
	va_list ap;
	uint64_t h;

	if (!reason) {
		x->why_hash = x->told_hash = 0;
		x->reason[0] = x->message[0] = 0;
		return;
	}
	snprintf(x->reason, sizeof(x->reason), "%s", reason);
	va_start(ap, fmt);
	vsnprintf(x->message, sizeof(x->message), fmt, ap);
	va_end(ap);
	h = fnv(0xcbf29ce484222325ULL, x->reason, strlen(x->reason) + 1);
	h = fnv(h, x->message, strlen(x->message)) | 1;
	if (h != x->why_hash && (!strcmp(reason, "InvalidSpec") ||
				 !strcmp(reason, "UnsupportedAffinity")))
		w->stats.nr_invalid++;
	x->why_hash = h;
}

static bool pod_done(const struct wpod *x)
{
	return kerf_kpod_is_done(&x->p);
}

/* --- groups ------------------------------------------------------------ */

static struct wgroup *group_get(struct kerf_world *w, const char *key,
				bool external)
{
	struct wgroup *g = kerf_map_get_str(&w->groups, key);

	if (g)
		return g;
	g = calloc(1, sizeof(*g));
	if (!g || !(g->key = kerf_strdup(key)) ||
	    KERF_GROW(w->groupv, w->alloc_groupv, w->nr_groupv + 1) < 0 ||
	    kerf_map_put_str(&w->groups, g->key, g) < 0) {
		if (g)
			free(g->key);
		free(g);
		return NULL;
	}
	g->external = external;
	g->index = w->nr_groupv;
	w->groupv[w->nr_groupv++] = g;
	return g;
}

static void group_free(struct kerf_world *w, struct wgroup *g)
{
	kerf_map_del_str(&w->groups, g->key);
	w->groupv[g->index] = w->groupv[--w->nr_groupv];
	w->groupv[g->index]->index = g->index;
	free(g->m);
	free(g->key);
	free(g);
}

static int group_add(struct wgroup *g, struct wpod *x)
{
	size_t i = g->nr_m;

	if (KERF_GROW(g->m, g->alloc_m, g->nr_m + 1) < 0)
		return -KERF_ENOMEM;
	while (i > 0 && strcmp(g->m[i - 1]->key, x->key) > 0) {
		g->m[i] = g->m[i - 1];
		i--;
	}
	g->m[i] = x;
	g->nr_m++;
	x->g = g;
	return 0;
}

static void group_remove(struct wgroup *g, struct wpod *x)
{
	size_t i = 0;

	while (i < g->nr_m && g->m[i] != x)
		i++;
	if (i == g->nr_m)
		return;
	memmove(&g->m[i], &g->m[i + 1], (g->nr_m - i - 1) * sizeof(*g->m));
	g->nr_m--;
	x->g = NULL;
	x->in_run = x->sub = false;
}

int kerf_world_forget(struct kerf_world *w, struct wgroup *g, int64_t now_ms,
		      struct kerf_err *err)
{
	int rc;

	if (!g->id)
		return 0;
	rc = kerf_state_forget(&w->st, g->id, now_ms, &w->dec, err);
	if (rc < 0)
		return rc;
	kerf_map_del_u64(&w->by_id, g->id);
	g->id = 0;
	g->fp = 0;
	for (size_t i = 0; i < g->nr_m; i++)
		g->m[i]->sub = false;
	w->stats.nr_forgotten++;
	return 0;
}

void kerf_world_unrun(struct kerf_world *w, struct wgroup *g, bool evicting)
{
	(void)w;
	for (size_t i = 0; i < g->nr_m; i++) {
		struct wpod *x = g->m[i];

		if (x->in_run && evicting)
			x->evicting = true;
		x->in_run = false;
	}
	g->running = g->started = false;
	memset(g->binds, 0, sizeof(g->binds));
}

/* The tenant of namespace ns (a leaf), or negative with why. */
static int tenant_of(const struct kerf_world *w, const char *ns, char *why,
		     size_t size)
{
	const struct wns *m = kerf_map_get_str(&w->ns, ns);
	int t;

	if (!m) {
		snprintf(why, size, "namespace '%s' has joined no tenant (label %s on the Namespace)",
			 ns, KERF_LABEL_TENANT);
		return -KERF_ENOTFOUND;
	}
	t = kerf_tenants_find(&w->st.tenants, m->tenant);
	if (t < 0 || !strcmp(m->tenant, KERF_EXTERNAL_TENANT)) {
		snprintf(why, size, "namespace '%s' joined tenant '%s', which kerf does not know",
			 ns, m->tenant);
		return -KERF_ENOTFOUND;
	}
	if (!kerf_tenant_is_leaf(&w->st.tenants.t[t])) {
		snprintf(why, size, "namespace '%s' joined tenant '%s', which has tenants under it: work goes to leaves",
			 ns, m->tenant);
		return -KERF_EINVAL;
	}
	return t;
}

/* The class of pod p: by PriorityClass name, else by its priority. */
static int class_of(const struct kerf_world *w, const struct kerf_kpod *p)
{
	const struct kerf_classes *cl = &w->st.classes;
	int32_t prio = p->has_priority ? p->priority : 0;
	int best = -1, lowest = -1;

	if (p->priority_class) {
		int c = kerf_classes_find(cl, p->priority_class);

		if (c >= 0 && c != w->external_class)
			return c;
	}
	for (int c = 0; c < cl->nr; c++) {
		if (c == w->external_class)
			continue;
		if (cl->c[c].value <= prio && (best < 0 || cl->c[c].value > cl->c[best].value))
			best = c;
		if (lowest < 0 || cl->c[c].value < cl->c[lowest].value)
			lowest = c;
	}
	return best >= 0 ? best : lowest;
}

/*
 * Adopt the bound pods v[0..nr) of g as running (a restart, or another
 * scheduler's pod): the devices their annotations name, else the lowest
 * free.  Refused bindings are counted as conflicts, once.
 */
static int adopt(struct kerf_world *w, struct wgroup *g, struct wpod **v,
		 size_t nr, int tenant, int cls, int64_t now_ms,
		 struct kerf_err *err)
{
	struct kerf_workload wl = { .tenant = tenant, .class_idx = cls,
				    .min_count = (uint32_t)nr };
	struct kerf_wl_pod *pods = calloc(nr, sizeof(*pods));
	struct held { uint32_t slot; int16_t milli[KERF_NODE_MAX_GPUS]; } *held =
		calloc(nr, sizeof(*held));
	size_t nr_held = 0;
	struct kerf_err why = { 0 };
	char text[200] = "";
	int64_t submit_ms = INT64_MAX;
	int id = -1;
	bool running = false;

	if (!pods || !held) {
		free(pods);
		free(held);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	for (size_t k = 0; k < nr; k++) {
		struct wpod *x = v[k];
		struct kerf_pod req;
		struct kerf_binding b;
		int slot = x->p.node ? kerf_cluster_find_node(&w->st.cluster, x->p.node) : -1;
		size_t h = 0, s = 0;

		while (h < nr_held && (int)held[h].slot != slot)
			h++;
		if (h == nr_held)
			held[nr_held++].slot = (uint32_t)slot;
		if (kerf_world_pod_binding(w, x, held[h].milli, &req, &b, text,
					   sizeof(text)) < 0) {
			snprintf(why.msg, sizeof(why.msg), "pod '%s': %s", x->key, text);
			goto refused;
		}
		while (s < (size_t)wl.nr_sets && !kerf_world_same_req(&wl.sets[s].req, &req))
			s++;
		if (s == KERF_MAX_PODSETS) {
			snprintf(why.msg, sizeof(why.msg), "more than %d pod shapes", KERF_MAX_PODSETS);
			goto refused;
		}
		if (s == (size_t)wl.nr_sets) {
			wl.sets[s].req = req;
			wl.nr_sets++;
		}
		wl.sets[s].count++;
		pods[k].set = (uint8_t)s;
		pods[k].b = b;
		if (x->p.created_ms < submit_ms)
			submit_ms = x->p.created_ms;
		running |= x->p.phase == KERF_PHASE_RUNNING;
	}
	id = kerf_state_adopt(&w->st, g->key, &wl, submit_ms, now_ms, pods,
			      (uint32_t)nr, &why);
	if (id == -KERF_ENOMEM)
		goto out;
	if (id < 0)
		goto refused;
	if (kerf_map_put_u64(&w->by_id, (uint64_t)id, g) < 0) {
		/* cannot happen once reserved; undo to stay consistent */
		kerf_state_finish(&w->st, (uint32_t)id, now_ms, NULL);
		kerf_state_forget(&w->st, (uint32_t)id, now_ms, NULL, NULL);
		id = -KERF_ENOMEM;
		goto out;
	}
	g->id = (uint32_t)id;
	g->running = true;
	g->wants_adopt = false;
	for (size_t k = 0; k < nr; k++) {
		v[k]->in_run = true;
		v[k]->set = pods[k].set;
		v[k]->b = pods[k].b;
		set_why(w, v[k], NULL, NULL);
	}
	if (g->external)
		w->stats.nr_external++;
	else
		w->stats.nr_adopted++;
	if (running && kerf_state_started(&w->st, g->id, now_ms, NULL) == 0)
		g->started = true;
	id = 0;
	goto out;
refused:
	/* told once; tried again at every cycle (a node may come, room free) */
	g->wants_adopt = true;
	if (!v[0]->conflict_counted) {
		v[0]->conflict_counted = true;
		w->stats.nr_conflicts++;
	}
	id = 0;
out:
	free(pods);
	free(held);
	return id < 0 ? kerf_err_set(err, id, "out of memory") : 0;
}

static int finish(struct kerf_world *w, struct wgroup *g, int64_t now_ms,
		  struct kerf_err *err)
{
	int rc = kerf_state_finish(&w->st, g->id, now_ms, err);

	if (rc == 0)
		rc = kerf_world_forget(w, g, now_ms, err);
	if (rc < 0)
		return rc;
	kerf_world_unrun(w, g, false);
	w->stats.nr_finished++;
	return 0;
}

/* A victim's pod acknowledged its checkpoint: it leaves now. */
static int maybe_ack(struct kerf_world *w, struct wgroup *g, int64_t now_ms,
		     struct kerf_err *err)
{
	const struct kerf_workload *cw = kerf_state_find((const struct kerf_state *)&w->st,
							 g->id);
	int64_t asked;
	int rc;

	if (!cw || cw->preempt_deadline_ms <= 0)
		return 0;
	/* the request was made a grace before its deadline */
	asked = cw->preempt_deadline_ms - w->st.classes.c[cw->class_idx].checkpoint_grace_ms;
	for (size_t i = 0; i < g->nr_m; i++) {
		const struct wpod *x = g->m[i];

		if (!x->in_run || x->p.checkpoint_done_ms <= 0 ||
		    x->p.checkpoint_done_ms < asked)
			continue;
		rc = kerf_preempt_ack(&w->st, g->id, now_ms, &w->dec, err);
		if (rc == 0)
			rc = kerf_world_consume(w, now_ms, &w->queued, err);
		return rc;
	}
	return 0;
}

/* The fingerprint of a submission: what it asks, of whom, since when. */
static uint64_t fingerprint(const struct kerf_workload *wl, struct wpod **v,
			    size_t nr, int64_t submit_ms)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	h = fnv(h, &wl->tenant, sizeof(wl->tenant));
	h = fnv(h, &wl->class_idx, sizeof(wl->class_idx));
	h = fnv(h, &submit_ms, sizeof(submit_ms));
	for (int s = 0; s < wl->nr_sets; s++) {
		const struct kerf_pod *p = &wl->sets[s].req;
		int64_t f[] = { p->cpu_milli, p->mem_mib, p->gpu_milli, p->gpu_mem_mib,
				p->nr_gpus, p->share, p->mig_slices,
				(int64_t)p->need_labels, (int64_t)p->tolerates,
				wl->sets[s].count };

		h = fnv(h, f, sizeof(f));
	}
	for (size_t k = 0; k < nr; k++)
		h = fnv(h, v[k]->key, strlen(v[k]->key) + 1);
	return h | 1;
}

/* Submit the collected gang v[0..nr) unless the core has it as it is. */
static int submit(struct kerf_world *w, struct wgroup *g, struct wpod **v,
		  size_t nr, int64_t now_ms, struct kerf_err *err)
{
	struct kerf_workload wl = { .min_count = (uint32_t)nr };
	uint8_t set_of[KERF_MAX_GANG_PODS];
	int64_t submit_ms = INT64_MAX;
	char why[KERF_ERR_MSG_MAX];
	struct kerf_err e = { 0 };
	uint64_t fp;
	int t, id, rc;

	t = tenant_of(w, v[0]->p.ns, why, sizeof(why));
	if (t < 0)
		goto invalid;
	wl.tenant = t;
	wl.class_idx = class_of(w, &v[0]->p);
	for (size_t k = 0; k < nr; k++) {
		struct kerf_pod req;
		size_t s = 0;

		if (kerf_world_pod_req(w, v[k], &req, why, sizeof(why)) < 0)
			goto invalid;
		while (s < (size_t)wl.nr_sets && !kerf_world_same_req(&wl.sets[s].req, &req))
			s++;
		if (s == KERF_MAX_PODSETS) {
			snprintf(why, sizeof(why), "gang '%s': its pods have more than %d shapes",
				 g->key, KERF_MAX_PODSETS);
			goto invalid;
		}
		if (s == (size_t)wl.nr_sets) {
			wl.sets[s].req = req;
			wl.nr_sets++;
		}
		wl.sets[s].count++;
		set_of[k] = (uint8_t)s;
		if (v[k]->p.created_ms < submit_ms)
			submit_ms = v[k]->p.created_ms;
	}
	fp = fingerprint(&wl, v, nr, submit_ms);
	if (g->id && g->fp == fp)
		return 0;
	if (g->id) {
		rc = kerf_world_forget(w, g, now_ms, err);
		if (rc < 0)
			return rc;
		if (w->term_resync)
			w->stats.nr_resubmitted++;
	}
	id = kerf_state_submit(&w->st, g->key, &wl, submit_ms, &e);
	if (id == -KERF_ENOMEM)
		return kerf_err_set(err, id, "out of memory");
	if (id < 0) {
		snprintf(why, sizeof(why), "%s", e.msg);
		goto invalid;
	}
	if (kerf_map_put_u64(&w->by_id, (uint64_t)id, g) < 0) {
		kerf_state_forget(&w->st, (uint32_t)id, now_ms, NULL, NULL);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	g->id = (uint32_t)id;
	g->fp = fp;
	memset(g->binds, 0, sizeof(g->binds));
	for (size_t k = 0; k < nr; k++) {
		v[k]->sub = true;
		v[k]->set = set_of[k];
		set_why(w, v[k], NULL, NULL);
	}
	w->stats.nr_submitted++;
	return 0;
invalid:
	rc = kerf_world_forget(w, g, now_ms, err);
	for (size_t k = 0; k < nr; k++)
		set_why(w, v[k], "InvalidSpec", "%s", why);
	return rc;
}

static int sync_external(struct kerf_world *w, struct wgroup *g, int64_t now_ms,
			 struct kerf_err *err)
{
	struct wpod *x = g->nr_m ? g->m[0] : NULL;

	if (g->running) {
		if (!x || pod_done(x))
			return finish(w, g, now_ms, err);
		return 0;
	}
	if (!x || pod_done(x) || !x->p.node)
		return 0;
	return adopt(w, g, &x, 1, kerf_tenants_find(&w->st.tenants, KERF_EXTERNAL_TENANT),
		     w->external_class, now_ms, err);
}

/*
 * Bring group g in step with the core.  Members that count: not done, not
 * being evicted, and (unbound ones) not being deleted.
 */
static int sync_group(struct kerf_world *w, struct wgroup *g, int64_t now_ms,
		      struct kerf_err *err)
{
	struct wpod **v, **bound;
	size_t nr = 0, nr_bound = 0;
	uint32_t size = 0;
	bool disagree = false;
	int rc = 0;

	if (g->external)
		return sync_external(w, g, now_ms, err);
	if (g->running) {
		bool live = false, phase_running = false;

		for (size_t i = 0; i < g->nr_m; i++) {
			const struct wpod *x = g->m[i];

			if (!x->in_run)
				continue;
			live |= !pod_done(x);
			phase_running |= x->p.phase == KERF_PHASE_RUNNING;
		}
		if (!live) {
			/* every pod it ran is done or deleted: it finished */
			rc = finish(w, g, now_ms, err);
			if (rc < 0)
				return rc;
		} else {
			if (!g->started && phase_running &&
			    kerf_state_started(&w->st, g->id, now_ms, NULL) == 0)
				g->started = true;
			for (size_t i = 0; i < g->nr_m; i++) {
				struct wpod *x = g->m[i];

				if (!x->in_run && !x->evicting && !pod_done(x) && !x->p.node)
					set_why(w, x, "GangRunning",
						"workload '%s' already runs: this pod waits until it ends",
						g->key);
			}
			return maybe_ack(w, g, now_ms, err);
		}
	}
	v = calloc(g->nr_m + 1, sizeof(*v));
	bound = calloc(g->nr_m + 1, sizeof(*bound));
	if (!v || !bound) {
		free(v);
		free(bound);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < g->nr_m; i++) {
		struct wpod *x = g->m[i];
		uint32_t s = x->p.gang ? x->p.gang_size : 1;

		if (pod_done(x) || x->evicting || (!x->p.node && x->p.terminating))
			continue;
		if (size && s != size)
			disagree = true;
		if (!size || s > size)
			size = s;
		if (x->p.node)
			bound[nr_bound++] = x;
		else
			v[nr++] = x;
	}
	if (nr_bound) {
		/*
		 * Bound already: a restart.  A gang bound whole is adopted as
		 * it runs.  A gang only partly bound (kerf stopped between its
		 * bindings) is never adopted as whole nor placed again: only
		 * the pods bound are adopted, so the GPUs they hold are not
		 * given to anyone else, and the others wait, told why, for the
		 * controller to finish or undo the gang.
		 */
		char why[KERF_ERR_MSG_MAX];
		int t = tenant_of(w, bound[0]->p.ns, why, sizeof(why));

		if ((nr || nr_bound < size) && !w->at_cycle) {
			/* the informers may not have sent every member yet */
			g->wants_adopt = true;
			free(v);
			free(bound);
			return 0;
		}
		rc = kerf_world_forget(w, g, now_ms, err);
		if (rc == 0 && t >= 0)
			rc = adopt(w, g, bound, nr_bound, t, class_of(w, &bound[0]->p),
				   now_ms, err);
		if (rc == 0 && g->running && (nr || nr_bound < size) && !g->partial_counted) {
			g->partial_counted = true;
			w->stats.nr_partial++;
		}
		for (size_t k = 0; k < nr; k++)
			set_why(w, v[k], "GangPartlyBound",
				"gang '%s': %zu of %u pods were bound before kerf restarted; the rest waits for the gang to be finished or undone",
				g->key, nr_bound, size);
	} else if (disagree) {
		rc = kerf_world_forget(w, g, now_ms, err);
		for (size_t k = 0; k < nr; k++)
			set_why(w, v[k], "InvalidSpec",
				"gang '%s': its pods disagree on %s", g->key,
				KERF_ANN_GANG_SIZE);
	} else if (nr > size) {
		rc = kerf_world_forget(w, g, now_ms, err);
		for (size_t k = 0; k < nr; k++)
			set_why(w, v[k], "InvalidSpec",
				"gang '%s' has %zu pods, %s says %u", g->key, nr,
				KERF_ANN_GANG_SIZE, size);
	} else if (nr < size) {
		rc = kerf_world_forget(w, g, now_ms, err);
		for (size_t k = 0; k < nr; k++)
			set_why(w, v[k], "GangIncomplete",
				"GangIncomplete: %zu of %u pods of gang '%s' are there",
				nr, size, g->key);
	} else if (nr) {
		rc = submit(w, g, v, nr, now_ms, err);
	} else {
		rc = kerf_world_forget(w, g, now_ms, err);
	}
	free(v);
	free(bound);
	return rc;
}

/* Sync g, and let it go when nothing is left of it. */
static int sync_and_reap(struct kerf_world *w, struct wgroup *g, int64_t now_ms,
			 struct kerf_err *err)
{
	int rc = sync_group(w, g, now_ms, err);

	if (rc == 0 && g->nr_m == 0 && !g->id)
		group_free(w, g);
	return rc;
}

/* --- label and taint terms --------------------------------------------- */

/* The bit of term key=value (interned when new: *grew set). */
static int term(struct kerf_world *w, bool taint, const char *key,
		const char *value, uint8_t effect, bool *grew,
		struct kerf_err *err)
{
	struct wterm *v = taint ? w->taints : w->labels;
	size_t nr = taint ? w->st.cluster.nr_taints : w->st.cluster.nr_labels;
	char text[KERF_LABEL_MAX + 32];
	int bit;

	for (size_t i = 0; i < nr; i++)
		if (!strcmp(v[i].key, key) && !strcmp(v[i].value, value) &&
		    (!taint || v[i].effect == effect))
			return (int)i;
	if (taint)
		snprintf(text, sizeof(text), "%s=%s:%s", key, value,
			 kerf_taint_effect_name(effect));
	else
		snprintf(text, sizeof(text), "%s=%s", key, value);
	bit = taint ? kerf_cluster_taint(&w->st.cluster, text, err)
		    : kerf_cluster_label(&w->st.cluster, text, err);
	if (bit < 0)
		return bit;
	KERF_ASSERT((size_t)bit == nr);
	v[bit].key = kerf_strdup(key);
	v[bit].value = kerf_strdup(value);
	v[bit].effect = effect;
	if (!v[bit].key || !v[bit].value)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	*grew = true;
	return bit;
}

/* The node's spec as the core takes it (its terms interned first). */
static int node_spec(struct kerf_world *w, const struct kerf_knode *n, int model,
		     uint32_t domain, struct kerf_node_spec *s, bool *taints_grew,
		     struct kerf_err *err)
{
	bool cordon = false;

	memset(s, 0, sizeof(*s));
	s->name = n->name;
	s->cpu_milli = n->cpu_milli;
	s->mem_mib = n->mem_mib;
	s->model = n->nr_gpus > 0 ? model : KERF_MODEL_NONE;
	s->nr_gpus = n->nr_gpus;
	s->domain = domain;
	s->mig_gpus = (uint16_t)((1u << n->mig_gpus) - 1u);
	for (uint16_t i = 0; i < n->nr_taints; i++) {
		const struct kerf_taint *t = &n->taints[i];
		struct kerf_err e = { 0 };
		int bit;

		if (t->effect != KERF_EFFECT_NO_SCHEDULE && t->effect != KERF_EFFECT_NO_EXECUTE)
			continue;
		bit = term(w, true, t->key, t->value, t->effect, taints_grew, &e);
		if (bit == -KERF_ENOMEM)
			return kerf_err_set(err, bit, "out of memory");
		if (bit < 0)
			cordon = true;   /* a taint kerf cannot tell: no new pods */
		else
			s->taints |= 1ull << bit;
	}
	for (size_t i = 0; i < w->st.cluster.nr_labels; i++) {
		const char *v = kerf_knode_label(n, w->labels[i].key);

		if (v && !strcmp(v, w->labels[i].value))
			s->labels |= 1ull << i;
	}
	s->cordoned = cordon || !kerf_knode_is_usable(n) || n->invalid;
	return 0;
}

/* Every node again, with the label terms as they are now (by name). */
static int refresh_nodes(struct kerf_world *w, int64_t now_ms, struct kerf_err *err)
{
	size_t nr = w->st.cluster.nr_nodes;
	struct wnode **v = calloc(nr + 1, sizeof(*v));
	size_t k = 0;
	int rc = 0;

	if (!v)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < nr; i++) {
		const struct kerf_node *n = &w->st.cluster.nodes[w->st.cluster.order[i]];
		struct wnode *x = kerf_map_get_str(&w->nodes, n->name);

		if (x)
			v[k++] = x;
	}
	for (size_t i = 0; i < k && rc == 0; i++) {
		struct kerf_node_spec s;
		const struct kerf_node *n = &w->st.cluster.nodes[v[i]->slot];
		bool grew = false;

		rc = node_spec(w, &v[i]->n, n->model, n->domain, &s, &grew, err);
		if (rc == 0)
			rc = kerf_state_node_upsert(&w->st, &s, now_ms, &w->dec, err);
		if (rc >= 0)
			rc = kerf_world_consume(w, now_ms, &w->queued, err);
	}
	free(v);
	return rc < 0 ? rc : 0;
}

/* --- pods -------------------------------------------------------------- */

/* Sync every group (or only pending ones), sorted by key. */
static int sync_all(struct kerf_world *w, bool pending_only, bool adopting_only,
		    int64_t now_ms, struct kerf_err *err)
{
	struct wgroup **v = calloc(w->nr_groupv + 1, sizeof(*v));
	size_t nr = 0;
	int rc = 0;

	if (!v)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < w->nr_groupv; i++) {
		struct wgroup *g = w->groupv[i];

		if ((pending_only && (g->running || !g->id)) ||
		    (adopting_only && (g->running || !g->wants_adopt)))
			continue;
		v[nr++] = g;
	}
	qsort(v, nr, sizeof(*v), by_group_key);
	for (size_t i = 0; i < nr && rc == 0; i++)
		rc = sync_and_reap(w, v[i], now_ms, err);
	free(v);
	return rc;
}

/*
 * What kerf does with pod x, and the key of its group (ROLE_KERF,
 * ROLE_EXTERNAL); ROLE_TOLD sets its reason.  New label terms of its
 * nodeSelector are interned (*grew).
 */
static int role_of(struct kerf_world *w, struct wpod *x, char *key, size_t size,
		   bool *grew, struct kerf_err *err)
{
	const struct kerf_kpod *p = &x->p;
	const char *sched = p->scheduler ? p->scheduler : "default-scheduler";
	char why[KERF_ERR_MSG_MAX];
	struct kerf_pod req;

	snprintf(key, size, "%s/%s", p->ns, p->name);
	if (x->evicting || pod_done(x))
		return ROLE_NONE;
	if (strcmp(sched, w->scheduler_name) != 0)
		return kerf_kpod_wants_gpu(p) && p->node ? ROLE_EXTERNAL : ROLE_NONE;
	if (tenant_of(w, p->ns, why, sizeof(why)) < 0) {
		/* bound already, kerf cannot say whose: its GPUs still count */
		if (p->node)
			return kerf_kpod_wants_gpu(p) ? ROLE_EXTERNAL : ROLE_NONE;
		set_why(w, x, "NoTenant", "%s", why);
		return ROLE_TOLD;
	}
	if (!p->node) {
		if (p->terminating)
			return ROLE_NONE;
		if (p->invalid) {
			set_why(w, x, "InvalidSpec", "%s", p->invalid);
			return ROLE_TOLD;
		}
		if (p->required_affinity) {
			set_why(w, x, "UnsupportedAffinity",
				"kerf does not read required node affinity yet: use a nodeSelector");
			return ROLE_TOLD;
		}
		if (p->gang && p->gang_size == 0) {
			set_why(w, x, "InvalidSpec", "label %s '%s' without annotation %s",
				KERF_LABEL_GANG, p->gang, KERF_ANN_GANG_SIZE);
			return ROLE_TOLD;
		}
		x->need_labels = 0;
		for (uint16_t i = 0; i < p->nr_selector; i++) {
			struct kerf_err e = { 0 };
			int bit = term(w, false, p->selector[i].key, p->selector[i].value, 0,
				       grew, &e);

			if (bit == -KERF_ENOMEM)
				return kerf_err_set(err, bit, "out of memory");
			if (bit < 0) {
				set_why(w, x, "Unschedulable", "nodeSelector: %s", e.msg);
				return ROLE_TOLD;
			}
			x->need_labels |= 1ull << bit;
		}
		if (kerf_world_pod_req(w, x, &req, why, sizeof(why)) < 0) {
			set_why(w, x, "InvalidSpec", "%s", why);
			return ROLE_TOLD;
		}
	}
	if (p->gang)
		snprintf(key, size, "%s/gang:%s", p->ns, p->gang);
	return ROLE_KERF;
}

/* x changed (or its namespace did): its group, then the core. */
static int pod_update(struct kerf_world *w, struct wpod *x, int64_t now_ms,
		      struct kerf_err *err)
{
	struct wgroup *old = x->g, *g = NULL;
	char key[KERF_WORKLOAD_KEY_MAX + 16];
	bool grew = false;
	int role, rc = 0;

	/* a pod that runs stays in its workload until it ends */
	if (x->in_run && old)
		return sync_and_reap(w, old, now_ms, err);
	role = role_of(w, x, key, sizeof(key), &grew, err);
	if (role < 0)
		return role;
	if (role != ROLE_TOLD)
		set_why(w, x, NULL, NULL);
	x->role = (uint8_t)role;
	if (role == ROLE_KERF || role == ROLE_EXTERNAL) {
		g = group_get(w, key, role == ROLE_EXTERNAL);
		if (!g)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	if (old != g) {
		if (old) {
			group_remove(old, x);
			rc = sync_and_reap(w, old, now_ms, err);
		}
		if (rc == 0 && g && group_add(g, x) < 0)
			rc = kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	if (grew && rc == 0)
		rc = refresh_nodes(w, now_ms, err);
	if (rc == 0 && g)
		rc = sync_and_reap(w, g, now_ms, err);
	else if (g && g->nr_m == 0 && !g->id)
		group_free(w, g);
	return rc;
}

static int check_pod_names(const char *ns, const char *name, struct kerf_err *err)
{
	char shown[80];

	if (!ns || !*ns || strlen(ns) > 63 || !name || !*name || strlen(name) > 253)
		return kerf_err_set(err, -KERF_EINVAL,
				    "pod '%s/%s': namespace must be 1 to 63 bytes, name 1 to 253",
				    kerf_escape(shown, sizeof(shown), ns ? ns : ""),
				    name ? name : "");
	return 0;
}

int kerf_world_pod_set(struct kerf_world *w, struct kerf_kpod *p,
		       int64_t now_ms, struct kerf_err *err)
{
	char key[KERF_WORKLOAD_KEY_MAX + 1];
	struct wpod *x;
	int rc = check_pod_names(p->ns, p->name, err);

	if (rc < 0) {
		kerf_kpod_release(p);
		return rc;
	}
	snprintf(key, sizeof(key), "%s/%s", p->ns, p->name);
	x = kerf_map_get_str(&w->pods, key);
	if (!x) {
		x = calloc(1, sizeof(*x));
		if (!x || !(x->key = kerf_strdup(key)) ||
		    KERF_GROW(w->podv, w->alloc_podv, w->nr_podv + 1) < 0 ||
		    kerf_map_put_str(&w->pods, x->key, x) < 0) {
			if (x)
				free(x->key);
			free(x);
			kerf_kpod_release(p);
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		}
		x->index = w->nr_podv;
		w->podv[w->nr_podv++] = x;
	} else {
		kerf_kpod_release(&x->p);
	}
	x->p = *p;
	memset(p, 0, sizeof(*p));
	return pod_update(w, x, now_ms, err);
}

int kerf_world_pod_delete(struct kerf_world *w, const char *ns, const char *name,
			  int64_t now_ms, struct kerf_err *err)
{
	char key[KERF_WORKLOAD_KEY_MAX + 1];
	struct wgroup *g;
	struct wpod *x;
	int rc = check_pod_names(ns, name, err);

	if (rc < 0)
		return rc;
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	x = kerf_map_get_str(&w->pods, key);
	if (!x)
		return kerf_err_set(err, -KERF_ENOTFOUND, "pod '%s': not known", key);
	g = x->g;
	if (g)
		group_remove(g, x);
	/* what was to be told about it goes with it */
	for (size_t i = 0, k = 0; i < w->queued.nr; i++) {
		const struct kerf_action *a = &w->queued.a[i];

		if (strcmp(a->ns, x->p.ns) || strcmp(a->name, x->p.name))
			w->queued.a[k++] = *a;
		if (i + 1 == w->queued.nr)
			w->queued.nr = k;
	}
	kerf_map_del_str(&w->pods, x->key);
	w->podv[x->index] = w->podv[--w->nr_podv];
	w->podv[x->index]->index = x->index;
	kerf_kpod_release(&x->p);
	free(x->key);
	free(x);
	return g ? sync_and_reap(w, g, now_ms, err) : 0;
}

const char *kerf_world_pod_workload(const struct kerf_world *w, const char *ns,
				    const char *name)
{
	char key[KERF_WORKLOAD_KEY_MAX + 1];
	const struct wpod *x;

	if (!ns || !name)
		return NULL;
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	x = kerf_map_get_str(&w->pods, key);
	return x && x->g && !x->g->external ? x->g->key : NULL;
}

/* Every pod of namespace ns (NULL: all) again, sorted by key. */
static int update_pods(struct kerf_world *w, const char *ns, int64_t now_ms,
		       struct kerf_err *err)
{
	struct wpod **v = calloc(w->nr_podv + 1, sizeof(*v));
	size_t nr = 0;
	int rc = 0;

	if (!v)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < w->nr_podv; i++)
		if (!ns || !strcmp(w->podv[i]->p.ns, ns))
			v[nr++] = w->podv[i];
	qsort(v, nr, sizeof(*v), by_pod_key);
	/* a pod's update may free no other pod: v stays valid */
	for (size_t i = 0; i < nr && rc == 0; i++)
		rc = pod_update(w, v[i], now_ms, err);
	free(v);
	return rc;
}

/* --- nodes ------------------------------------------------------------- */

/* A stable id for NVLink domain name: a hash, probing on collision, never 0. */
static int domain_id(struct kerf_world *w, const char *name, uint32_t *id,
		     struct kerf_err *err)
{
	struct wdomain *d = kerf_map_get_str(&w->domains, name);
	uint32_t h;

	if (d) {
		*id = d->id;
		return 0;
	}
	h = (uint32_t)kerf_hash_str(name);
	while (h == 0 || kerf_map_get_u64(&w->domain_ids, h))
		h++;
	d = calloc(1, sizeof(*d));
	if (!d || !(d->name = kerf_strdup(name)) ||
	    kerf_map_put_str(&w->domains, d->name, d) < 0 ||
	    kerf_map_put_u64(&w->domain_ids, h, d) < 0) {
		if (d && d->name)
			kerf_map_del_str(&w->domains, d->name);
		if (d)
			free(d->name);
		free(d);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	d->id = h;
	*id = h;
	return 0;
}

int kerf_world_node_set(struct kerf_world *w, struct kerf_knode *n,
			int64_t now_ms, struct kerf_err *err)
{
	struct wnode *x;
	struct kerf_node_spec s;
	uint32_t domain = 0;
	bool grew = false, fresh;
	int model = KERF_MODEL_NONE, rc;
	char shown[80];

	if (now_ms > w->now_ms)
		w->now_ms = now_ms;
	rc = 0;
	if (!n->name || !*n->name)
		rc = kerf_err_set(err, -KERF_EINVAL, "node without a name");
	else if (n->nr_gpus < 0 || n->nr_gpus > KERF_NODE_MAX_GPUS)
		rc = kerf_err_set(err, -KERF_ELIMIT,
				  "node '%s': %" PRId32 " GPUs, kerf places on nodes of at most %d",
				  kerf_escape(shown, sizeof(shown), n->name), n->nr_gpus,
				  KERF_NODE_MAX_GPUS);
	else if (n->mig_gpus < 0 || n->mig_gpus > n->nr_gpus)
		rc = kerf_err_set(err, -KERF_EINVAL, "node '%s': %" PRId32 " GPUs in MIG mode of %" PRId32,
				  kerf_escape(shown, sizeof(shown), n->name), n->mig_gpus,
				  n->nr_gpus);
	if (rc == 0 && n->nr_gpus > 0) {
		/* a node without the product label is invalid, so cordoned */
		model = kerf_state_model(&w->st, n->gpu_model ? n->gpu_model : "unknown",
					 n->gpu_mem_mib, err);
		rc = model < 0 ? model : 0;
	}
	if (rc == 0 && n->nvlink_domain)
		rc = domain_id(w, n->nvlink_domain, &domain, err);
	if (rc == 0)
		rc = node_spec(w, n, model, domain, &s, &grew, err);
	if (rc == 0)
		rc = kerf_node_spec_validate(&w->st.cluster, &s, err);
	if (rc == 0)
		rc = kerf_state_node_upsert(&w->st, &s, now_ms, &w->dec, err);
	if (rc < 0) {
		kerf_knode_release(n);
		return rc;
	}
	x = kerf_map_get_str(&w->nodes, n->name);
	fresh = !x;
	if (!x) {
		x = calloc(1, sizeof(*x));
		if (!x) {
			kerf_knode_release(n);
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		}
	} else {
		kerf_map_del_str(&w->nodes, x->n.name);
		kerf_knode_release(&x->n);
	}
	x->n = *n;
	memset(n, 0, sizeof(*n));
	x->slot = (uint32_t)rc;
	if (kerf_map_put_str(&w->nodes, x->n.name, x) < 0)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	rc = kerf_world_consume(w, now_ms, &w->queued, err);
	/* new taint terms: what waits may tolerate them or not */
	if (rc == 0 && grew) {
		w->term_resync = true;
		rc = sync_all(w, true, false, now_ms, err);
		w->term_resync = false;
	}
	/* pods bound to it may be counted now */
	if (rc == 0 && fresh)
		rc = sync_all(w, false, true, now_ms, err);
	return rc;
}

int kerf_world_node_delete(struct kerf_world *w, const char *name,
			   int64_t now_ms, struct kerf_err *err)
{
	struct wnode *x = name ? kerf_map_get_str(&w->nodes, name) : NULL;
	char shown[80];
	int rc;

	if (now_ms > w->now_ms)
		w->now_ms = now_ms;
	if (!x)
		return kerf_err_set(err, -KERF_ENOTFOUND, "node '%s': not known",
				    kerf_escape(shown, sizeof(shown), name ? name : ""));
	/*
	 * What ran there is requeued by the core (EVICT): its pods there
	 * need no eviction (the kubelet is gone with the node), its pods on
	 * other nodes do (the gang is broken); the workload is forgotten.
	 */
	w->removing = x->slot;
	rc = kerf_state_node_remove(&w->st, x->slot, now_ms, &w->dec, err);
	if (rc == 0)
		rc = kerf_world_consume(w, now_ms, &w->queued, err);
	w->removing = NO_SLOT;
	if (rc < 0)
		return rc;
	kerf_map_del_str(&w->nodes, x->n.name);
	kerf_knode_release(&x->n);
	free(x);
	return 0;
}

/* --- namespaces and tenants ------------------------------------------- */

int kerf_world_namespace_set(struct kerf_world *w, const char *ns,
			     const char *tenant, struct kerf_err *err)
{
	struct wns *m;
	char shown[80];

	if (!ns || !*ns || strlen(ns) > 63)
		return kerf_err_set(err, -KERF_EINVAL, "namespace '%s': must be 1 to 63 bytes",
				    kerf_escape(shown, sizeof(shown), ns ? ns : ""));
	if (!tenant || !*tenant)
		return kerf_world_namespace_delete(w, ns, err);
	if (strlen(tenant) >= KERF_TENANT_NAME_MAX)
		return kerf_err_set(err, -KERF_EINVAL, "namespace '%s': tenant name '%s' is too long",
				    ns, kerf_escape(shown, sizeof(shown), tenant));
	m = kerf_map_get_str(&w->ns, ns);
	if (m && !strcmp(m->tenant, tenant))
		return 0;
	if (m) {
		char *t = kerf_strdup(tenant);

		if (!t)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		free(m->tenant);
		m->tenant = t;
	} else {
		m = calloc(1, sizeof(*m));
		if (!m || !(m->ns = kerf_strdup(ns)) || !(m->tenant = kerf_strdup(tenant)) ||
		    kerf_map_put_str(&w->ns, m->ns, m) < 0) {
			if (m) {
				free(m->ns);
				free(m->tenant);
			}
			free(m);
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		}
	}
	return update_pods(w, ns, w->now_ms, err);
}

int kerf_world_namespace_delete(struct kerf_world *w, const char *ns,
				struct kerf_err *err)
{
	struct wns *m = ns ? kerf_map_get_str(&w->ns, ns) : NULL;

	if (!m)
		return 0;
	kerf_map_del_str(&w->ns, m->ns);
	free(m->ns);
	free(m->tenant);
	free(m);
	return update_pods(w, ns, w->now_ms, err);
}

int kerf_world_tenant_set(struct kerf_world *w,
			  const struct kerf_tenant_spec *spec,
			  const char *parent_name, struct kerf_err *err)
{
	struct kerf_tenant_spec s;
	int parent = KERF_TENANT_ROOT, t, rc;
	char shown[80];

	if (!spec || !spec->name || !*spec->name)
		return kerf_err_set(err, -KERF_EINVAL, "tenant without a name");
	if (parent_name && *parent_name) {
		parent = kerf_tenants_find(&w->st.tenants, parent_name);
		if (parent < 0)
			return kerf_err_set(err, -KERF_ENOTFOUND,
					    "tenant '%s': parent '%s' is not known",
					    kerf_escape(shown, sizeof(shown), spec->name),
					    parent_name);
	}
	s = *spec;
	s.parent = parent;
	/* dimensions of models not seen yet: the core's defaults */
	for (int i = w->st.tenants.nr_res; i < KERF_MAX_RES; i++) {
		s.quota.nominal.v[i] = 0;
		s.quota.borrow_limit.v[i] = KERF_QTY_INF;
		s.quota.lend_limit.v[i] = KERF_QTY_INF;
	}
	t = kerf_tenants_find(&w->st.tenants, spec->name);
	if (t >= 0 && w->st.tenants.t[t].parent != parent)
		return kerf_err_set(err, -KERF_EINVAL,
				    "tenant '%s': cannot move from parent '%s' to '%s'",
				    kerf_escape(shown, sizeof(shown), spec->name),
				    w->st.tenants.t[w->st.tenants.t[t].parent].name,
				    w->st.tenants.t[parent].name);
	rc = t >= 0 ? kerf_state_tenant_update(&w->st, t, &s, err)
		    : kerf_state_tenant_add(&w->st, &s, err);
	if (rc < 0)
		return rc;
	/* pods of namespaces that joined it (or its parent) may be placed now */
	return update_pods(w, NULL, w->now_ms, err);
}

/* --- the world --------------------------------------------------------- */

int kerf_world_new(const struct kerf_world_config *cfg, struct kerf_world **out,
		   struct kerf_err *err)
{
	struct kerf_world *w;
	struct kerf_cluster c;
	struct kerf_tenants tt;
	struct kerf_classes cl;
	struct kerf_tenant_spec ext = { .name = KERF_EXTERNAL_TENANT,
					.parent = KERF_TENANT_ROOT, .weight = 1 };
	struct kerf_priority_class xc = { .name = KERF_EXTERNAL_TENANT,
					  .preemptible = false };
	const char *sched = cfg && cfg->scheduler_name ? cfg->scheduler_name : "kerf";
	const char *policy = cfg && cfg->policy ? cfg->policy : KERF_POLICY_DEFAULT;
	int rc;

	*out = NULL;
	if (!*sched)
		return kerf_err_set(err, -KERF_EINVAL, "world: empty scheduler name");
	if (cfg && cfg->classes) {
		cl = *cfg->classes;
		if (cl.nr < 1)
			return kerf_err_set(err, -KERF_EINVAL, "world: no priority classes");
		if (kerf_classes_find(&cl, KERF_EXTERNAL_TENANT) >= 0)
			return kerf_err_set(err, -KERF_EINVAL,
					    "world: priority class '%s' is kerf's own",
					    KERF_EXTERNAL_TENANT);
	} else {
		kerf_classes_init(&cl);
		for (size_t i = 0; i < sizeof(default_classes) / sizeof(default_classes[0]); i++)
			if ((rc = kerf_classes_add(&cl, &default_classes[i], err)) < 0)
				return rc;
	}
	/* other schedulers' pods: never preempted by kerf */
	for (int i = 0; i < cl.nr; i++)
		if (cl.c[i].value > xc.value)
			xc.value = cl.c[i].value;
	rc = kerf_classes_add(&cl, &xc, err);
	if (rc < 0)
		return rc;
	w = calloc(1, sizeof(*w));
	if (!w || !(w->scheduler_name = kerf_strdup(sched)) ||
	    !(w->policy_name = kerf_strdup(policy))) {
		if (w)
			free(w->scheduler_name);
		free(w);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	w->external_class = rc;
	w->seed = cfg ? cfg->seed : 0;
	w->removing = NO_SLOT;
	kerf_decisions_init(&w->dec);
	kerf_actions_init(&w->queued);
	kerf_map_init(&w->pods, true);
	kerf_map_init(&w->groups, true);
	kerf_map_init(&w->by_id, false);
	kerf_map_init(&w->nodes, true);
	kerf_map_init(&w->ns, true);
	kerf_map_init(&w->domains, true);
	kerf_map_init(&w->domain_ids, false);
	kerf_cluster_init(&c);
	if (kerf_tenants_init(&tt, kerf_res_count(&c)) < 0) {
		kerf_cluster_release(&c);
		kerf_world_free(w);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	rc = kerf_state_init(&w->st, &c, &tt, &cl, err);
	if (rc < 0) {
		kerf_cluster_release(&c);
		kerf_tenants_release(&tt);
		free(w->scheduler_name);
		free(w->policy_name);
		free(w);
		return rc;
	}
	kerf_quota_default(&ext.quota);
	for (int m = 0; m < KERF_MAX_MODELS; m++)
		ext.budget_model_weight_pct[m] = 100;
	rc = kerf_state_tenant_add(&w->st, &ext, err);
	if (rc >= 0)
		rc = kerf_policy_build(&w->pol, policy,
				       &(struct kerf_policy_args){ .cluster = &w->st.cluster,
								   .seed = w->seed },
				       err);
	if (rc < 0) {
		kerf_state_release(&w->st);
		free(w->scheduler_name);
		free(w->policy_name);
		free(w);
		return rc;
	}
	kerf_sched_init(&w->sched, &w->pol);
	*out = w;
	return 0;
}

void kerf_world_free(struct kerf_world *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nr_podv; i++) {
		kerf_kpod_release(&w->podv[i]->p);
		free(w->podv[i]->key);
		free(w->podv[i]);
	}
	free(w->podv);
	for (size_t i = 0; i < w->nr_groupv; i++) {
		free(w->groupv[i]->m);
		free(w->groupv[i]->key);
		free(w->groupv[i]);
	}
	free(w->groupv);
	for (size_t i = 0; i < w->nodes.cap; i++)
		if (w->nodes.e[i].used == 1) {
			struct wnode *x = w->nodes.e[i].val;

			kerf_knode_release(&x->n);
			free(x);
		}
	for (size_t i = 0; i < w->ns.cap; i++)
		if (w->ns.e[i].used == 1) {
			struct wns *m = w->ns.e[i].val;

			free(m->ns);
			free(m->tenant);
			free(m);
		}
	for (size_t i = 0; i < w->domains.cap; i++)
		if (w->domains.e[i].used == 1) {
			struct wdomain *d = w->domains.e[i].val;

			free(d->name);
			free(d);
		}
	for (int i = 0; i < KERF_MAX_LABELS; i++) {
		free(w->labels[i].key);
		free(w->labels[i].value);
		free(w->taints[i].key);
		free(w->taints[i].value);
	}
	kerf_map_release(&w->pods);
	kerf_map_release(&w->groups);
	kerf_map_release(&w->by_id);
	kerf_map_release(&w->nodes);
	kerf_map_release(&w->ns);
	kerf_map_release(&w->domains);
	kerf_map_release(&w->domain_ids);
	if (w->pol.name || w->pol.nr_filters || w->pol.nr_scorers) {
		kerf_sched_release(&w->sched);
		kerf_policy_release(&w->pol);
	}
	kerf_state_release(&w->st);
	kerf_decisions_release(&w->dec);
	kerf_actions_release(&w->queued);
	free(w->scheduler_name);
	free(w->policy_name);
	free(w);
}

const struct kerf_state *kerf_world_state(const struct kerf_world *w)
{
	return &w->st;
}

const struct kerf_world_stats *kerf_world_stats(const struct kerf_world *w)
{
	return &w->stats;
}

int kerf_world_cycle(struct kerf_world *w, int64_t now_ms,
		     struct kerf_actions *out, struct kerf_err *err)
{
	struct kerf_cycle_stats cs;
	struct wpod **v;
	size_t nr = 0;
	int rc = 0;

	if (now_ms > w->now_ms)
		w->now_ms = now_ms;
	/* what events decided, in the order they decided it */
	for (size_t i = 0; i < w->queued.nr; i++) {
		struct kerf_action *a = kerf_world_action(out);

		if (!a)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		*a = w->queued.a[i];
	}
	kerf_actions_clear(&w->queued);
	/*
	 * Bound pods not counted yet: their node may be there, room free;
	 * by now every member of a gang has been sent (a gang still only
	 * partly bound is adopted for what it holds).
	 */
	w->at_cycle = true;
	rc = sync_all(w, false, true, now_ms, err);
	w->at_cycle = false;
	/* victims past their deadline leave (and are forgotten) first */
	if (rc == 0 && kerf_preempt_expire(&w->st, now_ms, &w->dec, err) >= 0)
		rc = kerf_world_consume(w, now_ms, out, err);
	if (rc == 0) {
		int crc = kerf_cycle_run(&w->sched, &w->st, now_ms, &w->dec, &cs, err);

		/* what was decided before an error is real: carry it out */
		rc = kerf_world_consume(w, now_ms, out, err);
		if (crc < 0)
			rc = crc;
	}
	if (rc < 0)
		return rc;
	/* the reasons kerf does not place pods, where they changed */
	v = calloc(w->nr_podv + 1, sizeof(*v));
	if (!v)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < w->nr_podv; i++)
		if (w->podv[i]->why_hash && w->podv[i]->why_hash != w->podv[i]->told_hash)
			v[nr++] = w->podv[i];
	qsort(v, nr, sizeof(*v), by_pod_key);
	for (size_t i = 0; i < nr; i++) {
		struct kerf_action *a = kerf_world_action(out);

		if (!a) {
			free(v);
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		}
		a->kind = KERF_ACT_PENDING;
		snprintf(a->ns, sizeof(a->ns), "%s", v[i]->p.ns);
		snprintf(a->name, sizeof(a->name), "%s", v[i]->p.name);
		snprintf(a->uid, sizeof(a->uid), "%s", v[i]->p.uid);
		snprintf(a->reason, sizeof(a->reason), "%s", v[i]->reason);
		snprintf(a->message, sizeof(a->message), "%s", v[i]->message);
		v[i]->told_hash = v[i]->why_hash;
	}
	free(v);
	return 0;
}
