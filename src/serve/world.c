/*
 * world: pods as the core's workloads, the world's life and its cycle;
 * see world.h for the rules.  Every pod belongs to at most one group (the
 * workload it is part of, by key); whenever a member changes, its group
 * is brought in step with the core (world_sync.c).  Nodes, namespaces
 * and tenants are in world_node.c, decisions become actions in
 * world_act.c.  Anything that walks many pods or groups walks them
 * sorted by key, so the same calls give the same actions.
 */
#include "serve/world_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/grow.h"
#include "base/slab.h"
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

void kerf_actions_clear(struct kerf_actions *l)
{
	if (l->alloc > KERF_ACTIONS_KEEP)
		kerf_actions_release(l);
	l->nr = 0;
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

/* --- pods -------------------------------------------------------------- */

static int by_pod_key(const void *a, const void *b)
{
	return strcmp((*(struct wpod *const *)a)->key, (*(struct wpod *const *)b)->key);
}

/*
 * What kerf does with pod x, and the key of its group (ROLE_KERF,
 * ROLE_EXTERNAL); ROLE_TOLD sets its reason.  New label terms of its
 * nodeSelector are interned (*grew).
 */
static int role_of(struct kerf_world *w, struct wpod *x, char *key, size_t size,
		   bool *grew, struct kerf_err *err)
{
	const struct kerf_kpod *p = x->p;
	const char *sched = kerf_kpod_scheduler(p) ? kerf_kpod_scheduler(p) : "default-scheduler";
	char why[KERF_ERR_MSG_MAX];
	struct kerf_pod req;

	snprintf(key, size, "%s/%s", kerf_kpod_ns(p), kerf_kpod_name(p));
	if (x->evicting || kerf_world_pod_done(x))
		return ROLE_NONE;
	if (strcmp(sched, w->scheduler_name) != 0)
		return kerf_kpod_wants_gpu(p) && kerf_kpod_node(p) ? ROLE_EXTERNAL : ROLE_NONE;
	if (kerf_world_tenant_of(w, kerf_kpod_ns(p), why, sizeof(why)) < 0) {
		/* bound already, kerf cannot say whose: its GPUs still count */
		if (kerf_kpod_node(p))
			return kerf_kpod_wants_gpu(p) ? ROLE_EXTERNAL : ROLE_NONE;
		kerf_world_set_why(w, x, "NoTenant", "%s", why);
		return ROLE_TOLD;
	}
	if (!kerf_kpod_node(p)) {
		if (p->terminating)
			return ROLE_NONE;
		if (kerf_kpod_invalid(p)) {
			kerf_world_set_why(w, x, "InvalidSpec", "%s", kerf_kpod_invalid(p));
			return ROLE_TOLD;
		}
		if (p->required_affinity) {
			kerf_world_set_why(w, x, "UnsupportedAffinity",
				"kerf does not read required node affinity yet: use a nodeSelector");
			return ROLE_TOLD;
		}
		if (kerf_kpod_gang(p) && p->gang_size == 0) {
			kerf_world_set_why(w, x, "InvalidSpec", "label %s '%s' without annotation %s",
				KERF_LABEL_GANG, kerf_kpod_gang(p), KERF_ANN_GANG_SIZE);
			return ROLE_TOLD;
		}
		x->need_labels = 0;
		for (uint16_t i = 0; i < p->nr_selector; i++) {
			struct kerf_err e = { 0 };
			int bit = kerf_world_term(w, false, kerf_kpod_selector(p)[i].key, kerf_kpod_selector(p)[i].value, 0,
				       grew, &e);

			if (bit == -KERF_ENOMEM)
				return kerf_err_set(err, bit, "out of memory");
			if (bit < 0) {
				kerf_world_set_why(w, x, "Unschedulable", "nodeSelector: %s", e.msg);
				return ROLE_TOLD;
			}
			x->need_labels |= 1ull << bit;
		}
		if (kerf_world_pod_req(w, x, &req, why, sizeof(why)) < 0) {
			kerf_world_set_why(w, x, "InvalidSpec", "%s", why);
			return ROLE_TOLD;
		}
	}
	if (kerf_kpod_gang(p))
		snprintf(key, size, "%s/gang:%s", kerf_kpod_ns(p), kerf_kpod_gang(p));
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
		return kerf_world_sync(w, old, now_ms, err);
	role = role_of(w, x, key, sizeof(key), &grew, err);
	if (role < 0)
		return role;
	if (role != ROLE_TOLD)
		kerf_world_set_why(w, x, NULL, NULL);
	x->role = (uint8_t)role;
	if (role == ROLE_KERF || role == ROLE_EXTERNAL) {
		g = kerf_world_group_get(w, key, role == ROLE_EXTERNAL);
		if (!g)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	if (old != g) {
		if (old) {
			kerf_world_group_remove(old, x);
			rc = kerf_world_sync(w, old, now_ms, err);
		}
		if (rc == 0 && g && kerf_world_group_add(g, x) < 0)
			rc = kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	if (grew && rc == 0)
		rc = kerf_world_refresh_nodes(w, now_ms, err);
	if (rc == 0 && g)
		rc = kerf_world_sync(w, g, now_ms, err);
	else if (g && g->nr_m == 0 && !g->id)
		kerf_world_group_free(w, g);
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

/* x's pod goes (when it is the world's own). */
static void drop_pod(struct wpod *x)
{
	if (x->owned) {
		kerf_kpod_release(x->p);
		kerf_slab_free(x->p, sizeof(*x->p));
	}
	x->p = NULL;
}

/* p (owned: the world's, freed on error too; else borrowed) as its pod. */
static int put_pod(struct kerf_world *w, struct kerf_kpod *p, bool owned,
		   int64_t now_ms, struct kerf_err *err)
{
	char key[KERF_WORKLOAD_KEY_MAX + 1];
	struct wpod *x;
	int rc = check_pod_names(kerf_kpod_ns(p), kerf_kpod_name(p), err);

	if (rc < 0)
		goto fail;
	snprintf(key, sizeof(key), "%s/%s", kerf_kpod_ns(p), kerf_kpod_name(p));
	x = kerf_map_get_str(&w->pods, key);
	if (!x) {
		x = kerf_slab_zalloc(sizeof(*x) + strlen(key) + 1);
		if (x)
			memcpy(x->key, key, strlen(key) + 1);
		if (!x || w->nr_podv >= UINT32_MAX ||
		    KERF_GROW(w->podv, w->alloc_podv, w->nr_podv + 1) < 0 ||
		    kerf_map_put_str(&w->pods, x->key, x) < 0) {
			if (x)
				kerf_slab_free(x, sizeof(*x) + strlen(key) + 1);
			rc = kerf_err_set(err, -KERF_ENOMEM, "out of memory");
			goto fail;
		}
		x->index = (uint32_t)w->nr_podv;
		w->podv[w->nr_podv++] = x;
	} else {
		drop_pod(x);
	}
	x->p = p;
	x->owned = owned;
	return pod_update(w, x, now_ms, err);
fail:
	if (owned) {
		kerf_kpod_release(p);
		kerf_slab_free(p, sizeof(*p));
	}
	return rc;
}

int kerf_world_pod_set(struct kerf_world *w, struct kerf_kpod *p,
		       int64_t now_ms, struct kerf_err *err)
{
	struct kerf_kpod *own = kerf_slab_alloc(sizeof(*own));

	if (!own) {
		kerf_kpod_release(p);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	*own = *p;
	memset(p, 0, sizeof(*p));
	return put_pod(w, own, true, now_ms, err);
}

int kerf_world_pod_borrow(struct kerf_world *w, const struct kerf_kpod *p,
			  int64_t now_ms, struct kerf_err *err)
{
	/* never written through: the world only reads its pods */
	return put_pod(w, (struct kerf_kpod *)p, false, now_ms, err);
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
		kerf_world_group_remove(g, x);
	/* what was to be told about it goes with it */
	for (size_t i = 0, k = 0; i < w->queued.nr; i++) {
		const struct kerf_action *a = &w->queued.a[i];

		if (strcmp(a->ns, kerf_kpod_ns(x->p)) || strcmp(a->name, kerf_kpod_name(x->p)))
			w->queued.a[k++] = *a;
		if (i + 1 == w->queued.nr)
			w->queued.nr = k;
	}
	kerf_map_del_str(&w->pods, x->key);
	w->podv[x->index] = w->podv[--w->nr_podv];
	w->podv[x->index]->index = x->index;
	drop_pod(x);
	free(x->why);
	kerf_world_pod_record_free(x);
	return g ? kerf_world_sync(w, g, now_ms, err) : 0;
}

int kerf_world_unplace(struct kerf_world *w, uint32_t group, int64_t now_ms,
		       struct kerf_err *err)
{
	struct wgroup *g = kerf_world_group_of(w, group);
	int rc;

	if (!g || !g->running || g->external)
		return 0;
	for (size_t i = 0; i < g->nr_m; i++)
		if (g->m[i]->in_run && kerf_kpod_node(g->m[i]->p))
			return 0;
	/* pending again under the same id and submission time */
	rc = kerf_state_requeue(&w->st, g->id, now_ms, err);
	if (rc < 0)
		return rc;
	kerf_world_unrun(w, g, false);
	w->stats.nr_unplaced++;
	return kerf_world_sync(w, g, now_ms, err);
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

bool kerf_world_evicting(const struct kerf_world *w, const char *ns,
			 const char *name)
{
	char key[KERF_WORKLOAD_KEY_MAX + 1];
	const struct wpod *x;

	snprintf(key, sizeof(key), "%s/%s", ns, name);
	x = kerf_map_get_str(&w->pods, key);
	return x && x->evicting && !kerf_world_pod_done(x);
}

bool kerf_world_bind_stands(const struct kerf_world *w, const char *ns,
			    const char *name, const char *uid,
			    const char *node)
{
	char key[KERF_WORKLOAD_KEY_MAX + 1], buf[KERF_KPOD_UID_BUF];
	const struct wpod *x;
	const char *has;

	snprintf(key, sizeof(key), "%s/%s", ns, name);
	x = kerf_map_get_str(&w->pods, key);
	if (!x || x->role != ROLE_KERF || !x->g || !x->g->running ||
	    !x->in_run || x->evicting || kerf_kpod_node(x->p))
		return false;
	has = kerf_kpod_uid(x->p, buf);

	if (uid && uid[0] && has && strcmp(uid, has))
		return false;
	return x->b.node < w->st.cluster.nr_slots &&
	       !strcmp(w->st.cluster.nodes[x->b.node].name, node);
}

/* See world_int.h. */
int kerf_world_update_pods(struct kerf_world *w, const char *ns, int64_t now_ms,
		       struct kerf_err *err)
{
	struct wpod **v = calloc(w->nr_podv + 1, sizeof(*v));
	size_t nr = 0;
	int rc = 0;

	if (!v)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < w->nr_podv; i++)
		if (!ns || !strcmp(kerf_kpod_ns(w->podv[i]->p), ns))
			v[nr++] = w->podv[i];
	qsort(v, nr, sizeof(*v), by_pod_key);
	/* a pod's update may free no other pod: v stays valid */
	for (size_t i = 0; i < nr && rc == 0; i++)
		rc = pod_update(w, v[i], now_ms, err);
	free(v);
	return rc;
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
	/* an evicted pod keeps its devices until it is gone */
	w->st.hold_evicted = true;
	w->st.no_key_map = true;    /* its groups map has the keys */
	w->st.borrow_keys = true;   /* a group outlives its workload */
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
	struct wnode *x;
	struct wns *m;
	struct wdomain *d;

	if (!w)
		return;
	for (size_t i = 0; i < w->nr_podv; i++) {
		drop_pod(w->podv[i]);
		free(w->podv[i]->why);
		kerf_world_pod_record_free(w->podv[i]);
	}
	free(w->podv);
	for (size_t i = 0; i < w->nr_groupv; i++) {
		if (w->groupv[i]->m != &w->groupv[i]->one)
			free(w->groupv[i]->m);
		kerf_world_group_record_free(w->groupv[i]);
	}
	free(w->groupv);
	for (size_t i = 0; (x = kerf_map_next(&w->nodes, &i));) {
		kerf_knode_release(&x->n);
		free(x);
	}
	for (size_t i = 0; (m = kerf_map_next(&w->ns, &i));) {
		free(m->ns);
		free(m->tenant);
		free(m);
	}
	for (size_t i = 0; (d = kerf_map_next(&w->domains, &i));) {
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
	free(w->pools);
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
	/* a flavor change that waited for a busy node */
	rc = kerf_world_reflavor_due(w, now_ms, err);
	if (rc < 0)
		return rc;
	/*
	 * Bound pods not counted yet: their node may be there, room free;
	 * by now every member of a gang has been sent (a gang still only
	 * partly bound is finished from its plan or undone: actions queued).
	 */
	w->at_cycle = true;
	rc = kerf_world_sync_all(w, false, true, now_ms, err);
	w->at_cycle = false;
	/* what events and adoptions decided, in the order they decided it */
	for (size_t i = 0; rc == 0 && i < w->queued.nr; i++) {
		struct kerf_action *a = kerf_world_action(out);

		if (!a)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		*a = w->queued.a[i];
	}
	kerf_actions_clear(&w->queued);
	/* victims past their deadline leave (and are forgotten) first */
	if (rc == 0 && kerf_preempt_expire(&w->st, now_ms, &w->dec, err) >= 0)
		rc = kerf_world_consume(w, now_ms, out, err);
	if (rc == 0) {
		int crc = kerf_cycle_run(&w->sched, &w->st, now_ms, &w->dec, &cs, err);

		w->stats.nr_admitted += cs.nr_admitted;
		w->stats.nr_preempted += cs.nr_preempted;

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
		if (kerf_world_why_hash(w->podv[i]) &&
		    w->podv[i]->why->hash != w->podv[i]->why->told)
			v[nr++] = w->podv[i];
	qsort(v, nr, sizeof(*v), by_pod_key);
	for (size_t i = 0; i < nr; i++) {
		struct kerf_action *a = kerf_world_action(out);

		if (!a) {
			free(v);
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		}
		a->kind = KERF_ACT_PENDING;
		snprintf(a->ns, sizeof(a->ns), "%s", kerf_kpod_ns(v[i]->p));
		snprintf(a->name, sizeof(a->name), "%s", kerf_kpod_name(v[i]->p));
		char uid[KERF_KPOD_UID_BUF];

		snprintf(a->uid, sizeof(a->uid), "%s", kerf_kpod_uid(v[i]->p, uid));
		snprintf(a->reason, sizeof(a->reason), "%s", kerf_world_why_reason(v[i]));
		snprintf(a->message, sizeof(a->message), "%s",
			 kerf_world_why_message(v[i]));
		v[i]->why->told = v[i]->why->hash;
	}
	free(v);
	return 0;
}
