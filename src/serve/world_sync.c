/*
 * world_sync: groups of pods (the workloads they form) brought in step
 * with the core: collected, submitted, resubmitted when what they ask
 * changed, adopted when bound already, started, finished, forgotten.
 */
#include "serve/world_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/grow.h"
#include "base/slab.h"
#include "core/preempt.h"
#include "kobj/names.h"
#include "kobj/priorityclass.h"

/* --- small helpers ----------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ULL;
	return h;
}

static int by_group_key(const void *a, const void *b)
{
	return strcmp((*(struct wgroup *const *)a)->key,
		      (*(struct wgroup *const *)b)->key);
}

/* See world_int.h. */
void kerf_world_set_why(struct kerf_world *w, struct wpod *x, const char *reason,
		    const char *fmt, ...)
{
	char text[32 + 256];
	size_t rlen, mlen;
	struct wwhy *y;
	va_list ap;
	uint64_t h;

	if (!reason) {
		if (x->why && x->why->refused) {
			/* the refusal told is kept; the reason goes */
			x->why->hash = x->why->told = 0;
		} else {
			free(x->why);
			x->why = NULL;
		}
		return;
	}
	rlen = (size_t)snprintf(text, 32, "%s", reason);
	rlen = rlen < 31 ? rlen : 31;
	va_start(ap, fmt);
	mlen = (size_t)vsnprintf(text + rlen + 1, 256, fmt, ap);
	va_end(ap);
	mlen = mlen < 255 ? mlen : 255;
	h = fnv(0xcbf29ce484222325ULL, text, rlen + 1);
	h = fnv(h, text + rlen + 1, mlen) | 1;
	if (x->why && h == x->why->hash)
		return;
	if (!strcmp(reason, "InvalidSpec") || !strcmp(reason, "UnsupportedAffinity"))
		w->stats.nr_invalid++;
	y = malloc(sizeof(*y) + rlen + 1 + mlen + 1);
	if (!y) {
		/* out of memory: nothing to tell, as if it had no reason */
		if (x->why)
			x->why->hash = 0;
		return;
	}
	*y = (struct wwhy){ .told = x->why ? x->why->told : 0,
			    .refused = x->why ? x->why->refused : 0, .hash = h };
	memcpy(y->text, text, rlen + 1 + mlen + 1);
	free(x->why);
	x->why = y;
}

/* --- groups ------------------------------------------------------------ */

struct wgroup *kerf_world_group_get(struct kerf_world *w, const char *key,
				bool external)
{
	struct wgroup *g = kerf_map_get_str(&w->groups, key);

	if (g)
		return g;
	g = kerf_slab_zalloc(sizeof(*g) + strlen(key) + 1);
	if (g)
		memcpy(g->key, key, strlen(key) + 1);
	if (!g || w->nr_groupv >= UINT32_MAX ||
	    KERF_GROW(w->groupv, w->alloc_groupv, w->nr_groupv + 1) < 0 ||
	    kerf_map_put_str(&w->groups, g->key, g) < 0) {
		if (g)
			kerf_world_group_record_free(g);
		return NULL;
	}
	g->external = external;
	g->index = (uint32_t)w->nr_groupv;
	w->groupv[w->nr_groupv++] = g;
	return g;
}

void kerf_world_group_free(struct kerf_world *w, struct wgroup *g)
{
	kerf_map_del_str(&w->groups, g->key);
	w->groupv[g->index] = w->groupv[--w->nr_groupv];
	w->groupv[g->index]->index = g->index;
	if (g->m != &g->one)
		free(g->m);
	kerf_world_group_record_free(g);
}

int kerf_world_group_add(struct wgroup *g, struct wpod *x)
{
	size_t i = g->nr_m;

	if (!g->m) {
		g->m = &g->one;
		g->alloc_m = 1;
	} else if (g->m == &g->one && g->nr_m > 0) {
		struct wpod **m = malloc(4 * sizeof(*m));

		if (!m)
			return -KERF_ENOMEM;
		m[0] = g->one;
		g->m = m;
		g->alloc_m = 4;
	}
	if (g->nr_m >= g->alloc_m) {
		size_t alloc = g->alloc_m;

		if (g->nr_m >= UINT32_MAX - 1 ||
		    KERF_GROW(g->m, alloc, (size_t)g->nr_m + 1) < 0)
			return -KERF_ENOMEM;
		g->alloc_m = alloc < UINT32_MAX ? (uint32_t)alloc : UINT32_MAX - 1;
	}
	while (i > 0 && strcmp(g->m[i - 1]->key, x->key) > 0) {
		g->m[i] = g->m[i - 1];
		i--;
	}
	g->m[i] = x;
	g->nr_m++;
	x->g = g;
	return 0;
}

void kerf_world_group_remove(struct wgroup *g, struct wpod *x)
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
}

/* The tenant of namespace ns (a leaf), or negative with why. */
int kerf_world_tenant_of(const struct kerf_world *w, const char *ns, char *why,
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

	if (kerf_kpod_priority_class(p)) {
		int c = kerf_classes_find(cl, kerf_kpod_priority_class(p));

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
 * scheduler's pod; a gang's members not bound yet where their plan says):
 * the devices their annotations name, else the lowest free.  0 adopted,
 * 1 refused (why in *refused), negative on error.
 */
static int adopt(struct kerf_world *w, struct wgroup *g, struct wpod **v,
		 size_t nr, int tenant, int cls, int64_t now_ms,
		 struct kerf_err *refused, struct kerf_err *err)
{
	struct kerf_workload wl = { .owner = g, .tenant = tenant, .class_idx = cls,
				    .min_count = (uint32_t)nr };
	struct kerf_wl_pod *pods = calloc(nr, sizeof(*pods));
	struct held { uint32_t slot; int16_t milli[KERF_NODE_MAX_GPUS]; } *held =
		calloc(nr, sizeof(*held));
	size_t nr_held = 0;
	struct kerf_err why = { 0 };
	char text[200] = "";
	int64_t submit_ms = INT64_MAX;
	int id = -1;
	bool running = false, terminating_all = true;

	if (!pods || !held) {
		free(pods);
		free(held);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	for (size_t k = 0; k < nr; k++) {
		struct wpod *x = v[k];
		struct kerf_pod req;
		struct kerf_binding b;
		const char *node = kerf_kpod_node(x->p) ? kerf_kpod_node(x->p) : kerf_kpod_planned_node(x->p);
		int slot = node ? kerf_cluster_find_node(&w->st.cluster, node) : -1;
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
		if (x->p->created_ms < submit_ms)
			submit_ms = x->p->created_ms;
		running |= x->p->phase == KERF_PHASE_RUNNING;
	}
	id = kerf_state_adopt(&w->st, g->key, &wl, submit_ms, now_ms, pods,
			      (uint32_t)nr, &why);
	if (id == -KERF_ENOMEM)
		goto out;
	if (id < 0)
		goto refused;
	g->id = (uint32_t)id;
	g->running = true;
	g->wants_adopt = false;
	for (size_t k = 0; k < nr; k++) {
		v[k]->in_run = true;
		v[k]->set = pods[k].set;
		v[k]->b = pods[k].b;
		kerf_world_set_why(w, v[k], NULL, NULL);
	}
	if (g->external)
		w->stats.nr_external++;
	else
		w->stats.nr_adopted++;
	if (running && kerf_state_started(&w->st, g->id, now_ms, NULL) == 0)
		g->started = true;
	kerf_world_util_group(w, g, now_ms);
	/* being deleted already (evicted before a restart): it only leaves */
	for (size_t k = 0; k < nr; k++)
		terminating_all &= v[k]->p->terminating;
	if (terminating_all && !g->external &&
	    kerf_state_leaving(&w->st, g->id, NULL) == 0)
		for (size_t k = 0; k < nr; k++)
			v[k]->evicting = true;
	id = 0;
	goto out;
refused:
	if (refused)
		*refused = why;
	id = 1;
out:
	free(pods);
	free(held);
	return id < 0 ? kerf_err_set(err, id, "out of memory") : id;
}

/* Bound pods that do not fit: told once, tried again at every cycle. */
static void adopt_refused(struct kerf_world *w, struct wgroup *g,
			  struct wpod *x)
{
	/* a node may come, room free */
	g->wants_adopt = true;
	if (!x->conflict_counted) {
		x->conflict_counted = true;
		w->stats.nr_conflicts++;
	}
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

	if (!cw || kerf_wl_pre(cw)->preempt_deadline_ms <= 0 || cw->leaving)
		return 0;
	/* the request was made a grace before its deadline */
	asked = kerf_wl_pre(cw)->preempt_deadline_ms - w->st.classes.c[cw->class_idx].checkpoint_grace_ms;
	for (size_t i = 0; i < g->nr_m; i++) {
		const struct wpod *x = g->m[i];
		int64_t done_ms = kerf_kpod_time_ms(x->p, KERF_KPOD_CHECKPOINT_DONE);

		if (!x->in_run || done_ms <= 0 || done_ms < asked)
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
	struct kerf_workload wl = { .owner = g, .min_count = (uint32_t)nr };
	uint8_t set_of[KERF_MAX_GANG_PODS];
	int64_t submit_ms = INT64_MAX;
	char why[KERF_ERR_MSG_MAX];
	struct kerf_err e = { 0 };
	uint64_t fp;
	int t, id, rc;

	t = kerf_world_tenant_of(w, kerf_kpod_ns(v[0]->p), why, sizeof(why));
	if (t < 0)
		goto invalid;
	wl.tenant = t;
	wl.class_idx = class_of(w, v[0]->p);
	wl.never_preempts = v[0]->p->preemption == KERF_PREEMPT_NEVER;
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
		if (v[k]->p->created_ms < submit_ms)
			submit_ms = v[k]->p->created_ms;
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
	g->id = (uint32_t)id;
	g->fp = fp;
	for (size_t k = 0; k < nr; k++) {
		v[k]->sub = true;
		v[k]->set = set_of[k];
		kerf_world_set_why(w, v[k], NULL, NULL);
	}
	w->stats.nr_submitted++;
	return 0;
invalid:
	rc = kerf_world_forget(w, g, now_ms, err);
	for (size_t k = 0; k < nr; k++)
		kerf_world_set_why(w, v[k], "InvalidSpec", "%s", why);
	return rc;
}

/*
 * A gang found partly bound: bound[0..nr_bound) bound, v[0..nr) not
 * (kerf stopped between its bindings).  Before binding any member of a
 * gang kerf writes its plan (kerf.io/planned-node and the devices) on
 * every member, so the whole gang is adopted as placed, the members not
 * bound yet where their plan says, and their bindings are sent again (at
 * the next cycle, first of its actions).  When the plan cannot be carried
 * out (a member gone or without a plan, a bound member elsewhere than
 * planned, the planned node gone or too full), the bound members are
 * evicted, told why, so that the gang is placed again whole once its
 * owner made them again; the others wait.
 */
static int adopt_plan(struct kerf_world *w, struct wgroup *g,
		      struct wpod **bound, size_t nr_bound, struct wpod **v,
		      size_t nr, uint32_t size, int t, int cls, int64_t now_ms,
		      struct kerf_err *err)
{
	struct kerf_err refused = { 0 };
	struct wpod **all = NULL;
	const struct kerf_workload *cw;
	int rc = 1;

	if (nr_bound + nr != size)
		snprintf(refused.msg, sizeof(refused.msg), "%zu of its %u pods are left",
			 nr_bound + nr, size);
	for (size_t k = 0; k < nr && !refused.msg[0]; k++)
		if (!kerf_kpod_planned_node(v[k]->p))
			snprintf(refused.msg, sizeof(refused.msg), "pod '%s' has no %s",
				 v[k]->key, KERF_ANN_PLANNED_NODE);
	for (size_t k = 0; k < nr_bound && !refused.msg[0]; k++)
		if (kerf_kpod_planned_node(bound[k]->p) &&
		    strcmp(kerf_kpod_planned_node(bound[k]->p), kerf_kpod_node(bound[k]->p)) != 0)
			snprintf(refused.msg, sizeof(refused.msg),
				 "pod '%s' is bound to node '%s', its plan said '%s'",
				 bound[k]->key, kerf_kpod_node(bound[k]->p), kerf_kpod_planned_node(bound[k]->p));
	if (!refused.msg[0]) {
		all = calloc(size, sizeof(*all));
		if (!all)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		memcpy(all, bound, nr_bound * sizeof(*all));
		memcpy(all + nr_bound, v, nr * sizeof(*all));
		rc = adopt(w, g, all, size, t, cls, now_ms, &refused, err);
		free(all);
		if (rc < 0)
			return rc;
	}
	if (rc == 0) {
		/* placed as planned: the bindings left go out */
		cw = kerf_state_find((const struct kerf_state *)&w->st, g->id);
		for (size_t k = 0; cw && k < nr && rc == 0; k++)
			rc = kerf_world_bind_action(w, v[k], &cw->sets[v[k]->set].req,
						    v[k]->p->gpu_milli, v[k]->p->share,
						    g->id, &w->queued, err);
		w->stats.nr_plans_finished++;
		return rc;
	}
	/* undone: the bound members leave, the others wait for the gang */
	for (size_t k = 0; k < nr_bound; k++) {
		struct kerf_action *a = kerf_world_action(&w->queued);

		if (!a)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		a->kind = KERF_ACT_EVICT;
		snprintf(a->ns, sizeof(a->ns), "%s", kerf_kpod_ns(bound[k]->p));
		snprintf(a->name, sizeof(a->name), "%s", kerf_kpod_name(bound[k]->p));
		char uid[KERF_KPOD_UID_BUF];

		snprintf(a->uid, sizeof(a->uid), "%s", kerf_kpod_uid(bound[k]->p, uid));
		snprintf(a->reason, sizeof(a->reason), "GangPlanUndone");
		snprintf(a->message, sizeof(a->message),
			 "gang '%.60s' was left partly bound (%zu of %u pods), its plan broken (%.70s): evicted to place it whole",
			 g->key, nr_bound, size, refused.msg);
		bound[k]->evicting = true;
		bound[k]->in_run = false;
	}
	for (size_t k = 0; k < nr; k++)
		kerf_world_set_why(w, v[k], "GangPlanUndone",
			"gang '%s': %zu of %u pods were bound before kerf restarted and the plan cannot be carried out (%.100s): they are evicted, and the gang is placed again whole once all its pods are back",
			g->key, nr_bound, size, refused.msg);
	g->wants_adopt = false;
	w->stats.nr_plans_undone++;
	return 0;
}

static int sync_external(struct kerf_world *w, struct wgroup *g, int64_t now_ms,
			 struct kerf_err *err)
{
	struct wpod *x = g->nr_m ? g->m[0] : NULL;
	int rc;

	if (g->running) {
		if (!x || kerf_world_pod_done(x))
			return finish(w, g, now_ms, err);
		return 0;
	}
	if (!x || kerf_world_pod_done(x) || !kerf_kpod_node(x->p))
		return 0;
	rc = adopt(w, g, &x, 1, kerf_tenants_find(&w->st.tenants, KERF_EXTERNAL_TENANT),
		   w->external_class, now_ms, NULL, err);
	if (rc == 1) {
		adopt_refused(w, g, x);
		rc = 0;
	}
	return rc;
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
			live |= !kerf_world_pod_done(x);
			phase_running |= x->p->phase == KERF_PHASE_RUNNING;
		}
		if (!live) {
			/* every pod it ran is done or deleted: it finished */
			rc = finish(w, g, now_ms, err);
			if (rc < 0)
				return rc;
		} else {
			if (!g->started && phase_running &&
			    kerf_state_started(&w->st, g->id, now_ms, NULL) == 0) {
				g->started = true;
				/* on GPUs whose node has values already */
				kerf_world_util_group(w, g, now_ms);
			}
			for (size_t i = 0; i < g->nr_m; i++) {
				struct wpod *x = g->m[i];

				if (!x->in_run && !x->evicting && !kerf_world_pod_done(x) && !kerf_kpod_node(x->p))
					kerf_world_set_why(w, x, "GangRunning",
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
		uint32_t s = kerf_kpod_gang(x->p) ? x->p->gang_size : 1;

		if (kerf_world_pod_done(x) || x->evicting || (!kerf_kpod_node(x->p) && x->p->terminating))
			continue;
		if (size && s != size)
			disagree = true;
		if (!size || s > size)
			size = s;
		if (kerf_kpod_node(x->p))
			bound[nr_bound++] = x;
		else
			v[nr++] = x;
	}
	if (nr_bound) {
		/*
		 * Bound already: a restart.  A gang bound whole is adopted as
		 * it runs (as are the live members of one whose other pods
		 * ended).  A gang only partly bound (kerf stopped between its
		 * bindings) is finished from its plan, or undone (adopt_plan).
		 */
		char why[KERF_ERR_MSG_MAX];
		int t = kerf_world_tenant_of(w, kerf_kpod_ns(bound[0]->p), why, sizeof(why));

		if ((nr || nr_bound < size) && !w->at_cycle) {
			/* the informers may not have sent every member yet */
			g->wants_adopt = true;
			free(v);
			free(bound);
			return 0;
		}
		rc = kerf_world_forget(w, g, now_ms, err);
		if (rc == 0 && t >= 0 && nr) {
			rc = adopt_plan(w, g, bound, nr_bound, v, nr, size, t,
					class_of(w, bound[0]->p), now_ms, err);
		} else if (rc == 0 && t >= 0) {
			rc = adopt(w, g, bound, nr_bound, t, class_of(w, bound[0]->p),
				   now_ms, NULL, err);
			if (rc == 1) {
				adopt_refused(w, g, bound[0]);
				rc = 0;
			}
		}
		if (rc == 0 && (nr || nr_bound < size) && !g->partial_counted) {
			g->partial_counted = true;
			w->stats.nr_partial++;
		}
	} else if (disagree) {
		rc = kerf_world_forget(w, g, now_ms, err);
		for (size_t k = 0; k < nr; k++)
			kerf_world_set_why(w, v[k], "InvalidSpec",
				"gang '%s': its pods disagree on %s", g->key,
				KERF_ANN_GANG_SIZE);
	} else if (nr > size) {
		rc = kerf_world_forget(w, g, now_ms, err);
		for (size_t k = 0; k < nr; k++)
			kerf_world_set_why(w, v[k], "InvalidSpec",
				"gang '%s' has %zu pods, %s says %u", g->key, nr,
				KERF_ANN_GANG_SIZE, size);
	} else if (nr < size) {
		rc = kerf_world_forget(w, g, now_ms, err);
		for (size_t k = 0; k < nr; k++)
			kerf_world_set_why(w, v[k], "GangIncomplete",
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
int kerf_world_sync(struct kerf_world *w, struct wgroup *g, int64_t now_ms,
			 struct kerf_err *err)
{
	int rc = sync_group(w, g, now_ms, err);

	if (rc == 0 && g->nr_m == 0 && !g->id)
		kerf_world_group_free(w, g);
	return rc;
}

/* See world_int.h. */
int kerf_world_sync_all(struct kerf_world *w, bool pending_only, bool adopting_only,
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
		rc = kerf_world_sync(w, v[i], now_ms, err);
	free(v);
	return rc;
}

