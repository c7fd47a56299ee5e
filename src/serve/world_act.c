/*
 * world_act: the core's decisions as the API calls that carry them out.
 * A BIND becomes one binding per pod (the pods of a pod set taken in name
 * order, so the same decisions give the same pod <-> binding pairs), a
 * PENDING a condition on every pod still waiting, a PREEMPT or CANCEL an
 * annotation on every pod of the victim, an EVICT an eviction of every pod
 * that is still somewhere to be evicted from.
 */
#include "serve/world_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "core/mig/geometry.h"

struct kerf_action *kerf_world_action(struct kerf_actions *l)
{
	struct kerf_action *a;

	if (KERF_GROW(l->a, l->alloc, l->nr + 1) < 0)
		return NULL;
	a = &l->a[l->nr++];
	memset(a, 0, sizeof(*a));
	return a;
}

/* An action about pod x of kind. */
static struct kerf_action *pod_action(struct kerf_actions *out,
				      const struct wpod *x, uint8_t kind,
				      uint32_t group)
{
	struct kerf_action *a = kerf_world_action(out);

	if (!a)
		return NULL;
	a->kind = kind;
	a->group = group;
	snprintf(a->ns, sizeof(a->ns), "%s", kerf_kpod_ns(x->p));
	snprintf(a->name, sizeof(a->name), "%s", kerf_kpod_name(x->p));
	char uid[KERF_KPOD_UID_BUF];

	snprintf(a->uid, sizeof(a->uid), "%s", kerf_kpod_uid(x->p, uid));
	return a;
}

/* The k-th pod of pod set s submitted, in name order. */
static struct wpod *nth_of_set(struct wgroup *g, unsigned s, uint32_t k)
{
	for (size_t i = 0; i < g->nr_m; i++) {
		struct wpod *x = g->m[i];

		if (x->sub && !x->in_run && x->set == s && k-- == 0)
			return x;
	}
	return NULL;
}

/* See world_int.h. */
int kerf_world_bind_action(struct kerf_world *w, const struct wpod *x,
			   const struct kerf_pod *req, int32_t milli,
			   uint8_t share, uint32_t group,
			   struct kerf_actions *out, struct kerf_err *err)
{
	const struct kerf_node *n = &w->st.cluster.nodes[x->b.node];
	struct kerf_action *a = pod_action(out, x, KERF_ACT_BIND, group);

	if (!a)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	snprintf(a->node, sizeof(a->node), "%s", n->name);
	kerf_world_gpus_text(x->b.gpus, a->gpus, sizeof(a->gpus));
	if (kerf_pod_is_mig(req)) {
		int p = kerf_pod_mig_profile(&w->st.cluster, n, req);
		const struct kerf_mig_model *mm = w->st.cluster.models[n->model].mig;

		if (p >= 0 && mm)
			snprintf(a->mig, sizeof(a->mig), "%s@%u", mm->profiles[p].name,
				 x->b.mig_start);
	} else if (kerf_pod_is_fraction(req)) {
		a->gpu_milli = milli;
		a->share = share;
	}
	return 0;
}

static int bind(struct kerf_world *w, struct wgroup *g,
		const struct kerf_decision *d, struct kerf_actions *out,
		struct kerf_err *err)
{
	const struct kerf_workload *cw = kerf_state_find((const struct kerf_state *)&w->st,
							 d->workload);
	struct wpod *x;

	if (d->set >= KERF_MAX_PODSETS)
		return 0;
	x = nth_of_set(g, d->set, 0);
	g->running = true;
	if (!x || !cw)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workload '%s': a binding of pod set %u has no pod",
				    g->key, d->set);
	x->in_run = true;
	x->b = d->b;
	kerf_world_set_why(w, x, NULL, NULL);
	return kerf_world_bind_action(w, x, &cw->sets[d->set].req, d->value,
				      d->share, d->workload, out, err);
}

static const char *evict_text(uint8_t reason)
{
	switch (reason) {
	case KERF_EVICT_PREEMPTED:
		return "preempted to make room for other work (checkpoint acknowledged or deadline passed)";
	case KERF_EVICT_IDLE:
		return "reclaimed: its GPUs stayed idle";
	case KERF_EVICT_NODE_LOST:
	case KERF_EVICT_NODE_GONE:
		return "a node of its gang is gone: the gang cannot run whole";
	default:
		return "a node it runs on changed shape under it";
	}
}

/*
 * Its pods must go.  Evicted (preempted, reclaimed), the workload stays in
 * the core, leaving: its devices stay held until its pods are gone (a pod
 * evicted terminates for its grace period, and a disruption budget may
 * refuse the eviction for long), so nothing is bound onto them meanwhile.
 * Pods on a removed node get no action: the node (and
 * its kubelet) is gone and the pod garbage collector deletes them.  Other
 * schedulers' pods are never evicted: they are counted again once they
 * fit (their node back, or reshaped).  The workload is forgotten in the
 * core: its pods are being deleted, and whoever owns them makes new ones,
 * which come as a new workload; until they are gone its pods are neither
 * placed nor adopted again.
 */
static int evict(struct kerf_world *w, struct wgroup *g,
		 const struct kerf_decision *d, int64_t now_ms,
		 struct kerf_actions *out, struct kerf_err *err)
{
	const struct kerf_workload *cw = kerf_state_find((const struct kerf_state *)&w->st,
							 d->workload);
	bool leaving = cw && cw->leaving;
	int rc;

	for (size_t i = 0; i < g->nr_m && !g->external; i++) {
		struct wpod *x = g->m[i];
		struct kerf_action *a;

		if (!x->in_run || (d->reason == KERF_EVICT_NODE_GONE &&
				   x->b.node == w->removing))
			continue;
		a = pod_action(out, x, KERF_ACT_EVICT, d->workload);
		if (!a)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		snprintf(a->message, sizeof(a->message), "workload '%s': %s",
			 g->key, evict_text(d->reason));
		if (leaving)
			x->evicting = true;
	}
	/* still there: it holds its devices until its pods are gone */
	if (leaving)
		return 0;
	rc = kerf_world_forget(w, g, now_ms, err);
	if (rc < 0)
		return rc;
	kerf_world_unrun(w, g, !g->external);
	if (g->external)
		g->wants_adopt = true;
	return 0;
}

int kerf_world_consume(struct kerf_world *w, int64_t now_ms,
		       struct kerf_actions *out, struct kerf_err *err)
{
	int rc = 0;

	/* forget may append CANCELs: the loop reads nr each time */
	for (size_t i = 0; i < w->dec.nr && rc == 0; i++) {
		const struct kerf_decision d = w->dec.d[i];
		struct wgroup *g = kerf_world_group_of(w, d.workload);
		const struct kerf_workload *cw;
		uint8_t kind = 0;

		if (!g)
			continue;
		switch ((enum kerf_decision_kind)d.kind) {
		case KERF_DECIDE_BIND:
			rc = bind(w, g, &d, out, err);
			break;
		case KERF_DECIDE_PENDING:
			cw = kerf_state_find((const struct kerf_state *)&w->st, d.workload);
			for (size_t k = 0; cw && k < g->nr_m; k++) {
				struct wpod *x = g->m[k];
				struct kerf_action *a;

				if (!x->sub || x->in_run)
					continue;
				a = pod_action(out, x, KERF_ACT_PENDING, d.workload);
				if (!a) {
					rc = kerf_err_set(err, -KERF_ENOMEM, "out of memory");
					break;
				}
				snprintf(a->reason, sizeof(a->reason), "Unschedulable");
				snprintf(a->message, sizeof(a->message), "%s", cw->pending_text);
			}
			break;
		case KERF_DECIDE_PREEMPT:
			kind = KERF_ACT_PREEMPT;
			/* fall through */
		case KERF_DECIDE_CANCEL:
			if (!kind)
				kind = KERF_ACT_UNPREEMPT;
			for (size_t k = 0; !g->external && k < g->nr_m; k++) {
				struct kerf_action *a;

				if (!g->m[k]->in_run)
					continue;
				a = pod_action(out, g->m[k], kind, d.workload);
				if (!a) {
					rc = kerf_err_set(err, -KERF_ENOMEM, "out of memory");
					break;
				}
				if (kind == KERF_ACT_PREEMPT)
					a->at_ms = d.at_ms;
			}
			break;
		case KERF_DECIDE_EVICT:
			rc = evict(w, g, &d, now_ms, out, err);
			break;
		case KERF_DECIDE_MIG:
		case KERF_DECIDE_NOTICE:
			/* the node agent carves from the BIND's kerf.io/assigned-mig */
			break;
		}
	}
	kerf_decisions_clear(&w->dec);
	return rc;
}

/* See world.h. */
int kerf_world_eviction_refused(struct kerf_world *w, const char *ns,
				const char *name, const char *why,
				int64_t retry_s, struct kerf_actions *out,
				struct kerf_err *err)
{
	char key[KERF_WORKLOAD_KEY_MAX + 1];
	const struct kerf_workload *v, *p;
	struct wgroup *pg;
	struct wpod *x;
	uint64_t h;
	char text[1024];

	snprintf(key, sizeof(key), "%s/%s", ns, name);
	x = kerf_map_get_str(&w->pods, key);
	if (!x || !x->g || !x->g->id)
		return 0;
	v = kerf_state_find((const struct kerf_state *)&w->st, x->g->id);
	if (!v || !v->leaving || !kerf_wl_pre(v)->preempted_by)
		return 0;
	p = kerf_state_find((const struct kerf_state *)&w->st, kerf_wl_pre(v)->preempted_by);
	pg = kerf_world_group_of(w, kerf_wl_pre(v)->preempted_by);
	if (!p || !pg || p->state != KERF_WL_PENDING)
		return 0;
	h = kerf_hash_str(why) ^ kerf_hash_str(p->pending_text);
	if (x->why && h == x->why->refused)
		return 0;
	if (!x->why) {
		x->why = calloc(1, sizeof(*x->why) + 1);
		if (!x->why)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	x->why->refused = h;
	for (size_t k = 0; k < pg->nr_m; k++) {
		struct kerf_action *a;

		if (!pg->m[k]->sub || pg->m[k]->in_run)
			continue;
		a = pod_action(out, pg->m[k], KERF_ACT_PENDING, kerf_wl_pre(v)->preempted_by);
		if (!a)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		snprintf(a->reason, sizeof(a->reason), "Unschedulable");
		snprintf(text, sizeof(text),
			 "the eviction of %s/%s is refused for now (%s), asked again in %" PRId64 " s; %s",
			 ns, name, why, retry_s, p->pending_text);
		/* cut to the condition's room */
		memcpy(a->message, text, sizeof(a->message) - 1);
		a->message[sizeof(a->message) - 1] = '\0';
	}
	return 0;
}
