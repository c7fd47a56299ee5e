/*
 * world_node: nodes (their label and taint terms, NVLink domains, GPU
 * models), namespaces and tenants as the core takes them.
 */
#include "serve/world_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/assert.h"
#include "base/buf.h"
#include "core/persist.h"

enum { NO_SLOT = UINT32_MAX };

/* --- label and taint terms --------------------------------------------- */

/* The bit of term key=value (interned when new: *grew set). */
int kerf_world_term(struct kerf_world *w, bool taint, const char *key,
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

/*
 * The GPUs and MIG instances the node agent marked out of service, into
 * s (mig_down: the layouts s->mig_down points to).  A mark kerf cannot
 * place takes the whole GPU out: on a GPU not in MIG mode, a profile the
 * model lacks, instances that overlap.  Marks of GPUs beyond the node's
 * count have no GPU to take out.
 */
static void node_marks(const struct kerf_world *w, const struct kerf_knode *n,
		       int model, struct kerf_node_spec *s,
		       struct kerf_mig_layout *mig_down)
{
	const struct kerf_cluster *c = &w->st.cluster;
	const struct kerf_mig_model *m;
	uint16_t all;

	if (n->nr_gpus <= 0 || model < 0 || (size_t)model >= c->nr_models)
		return;
	all = (uint16_t)((1u << n->nr_gpus) - 1u);
	m = c->models[model].mig;
	s->gpus_down = n->gpus_down & all;
	memset(mig_down, 0, KERF_NODE_MAX_GPUS * sizeof(*mig_down));
	s->mig_down = mig_down;
	for (uint16_t i = 0; i < n->nr_mig_down; i++) {
		const struct kerf_mig_mark *k = &n->mig_down[i];
		struct kerf_mig_layout *l = &mig_down[k->gpu];
		int pi;

		if (!(all >> k->gpu & 1))
			continue;
		pi = m ? kerf_mig_profile_find(m, k->profile) : -1;
		if (!(s->mig_gpus >> k->gpu & 1) || pi < 0 || l->nr >= KERF_MIG_MAX_INSTANCES) {
			s->gpus_down = (uint16_t)(s->gpus_down | 1u << k->gpu);
			continue;
		}
		l->inst[l->nr++] = (struct kerf_mig_instance){ .profile = (uint8_t)pi,
							       .start = k->start };
	}
	for (int g = 0; g < n->nr_gpus; g++)
		if (mig_down[g].nr && kerf_mig_layout_check(m, &mig_down[g], NULL) < 0) {
			mig_down[g].nr = 0;
			s->gpus_down = (uint16_t)(s->gpus_down | 1u << g);
		}
}

/* The node's spec as the core takes it (its terms interned first). */
static int node_spec(struct kerf_world *w, const struct kerf_knode *n, int model,
		     uint32_t domain, struct kerf_node_spec *s,
		     struct kerf_mig_layout *mig_down, bool *taints_grew,
		     struct kerf_err *err)
{
	const struct kerf_kobj_gpupool *pool;
	bool cordon = false;

	memset(s, 0, sizeof(*s));
	s->name = n->name;
	s->cpu_milli = n->cpu_milli;
	s->mem_mib = n->mem_mib;
	s->model = n->nr_gpus > 0 ? model : KERF_MODEL_NONE;
	s->nr_gpus = n->nr_gpus;
	s->domain = domain;
	s->mig_gpus = (uint16_t)((1u << n->mig_gpus) - 1u);
	node_marks(w, n, model, s, mig_down);
	for (uint16_t i = 0; i < n->nr_taints; i++) {
		const struct kerf_taint *t = &n->taints[i];
		struct kerf_err e = { 0 };
		int bit;

		if (t->effect != KERF_EFFECT_NO_SCHEDULE && t->effect != KERF_EFFECT_NO_EXECUTE)
			continue;
		bit = kerf_world_term(w, true, t->key, t->value, t->effect, taints_grew, &e);
		if (bit == -KERF_ENOMEM)
			return kerf_err_set(err, bit, "out of memory");
		if (bit < 0)
			cordon = true;   /* a taint kerf cannot tell: no new pods */
		else
			s->taints |= 1ull << bit;
	}
	/* the ways of sharing its GPUPool does not allow: terms no pod of
	   that way tolerates (world_pool.c) */
	pool = kerf_world_pool_of(w, n);
	for (int m = 0; m < KERF_POOL_SHARING_COUNT; m++) {
		struct kerf_err e = { 0 };
		int bit;

		if (!kerf_pool_refuses(pool, m))
			continue;
		bit = kerf_world_term(w, true, KERF_POOL_SHARING_TERM, kerf_pool_sharing_name(m),
				      KERF_EFFECT_NO_SCHEDULE, taints_grew, &e);
		if (bit == -KERF_ENOMEM)
			return kerf_err_set(err, bit, "out of memory");
		if (bit < 0)
			cordon = true;
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
int kerf_world_refresh_nodes(struct kerf_world *w, int64_t now_ms, struct kerf_err *err)
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
		struct kerf_mig_layout mig_down[KERF_NODE_MAX_GPUS];
		const struct kerf_node *n = &w->st.cluster.nodes[v[i]->slot];
		bool grew = false;

		rc = node_spec(w, &v[i]->n, n->model, n->domain, &s, mig_down, &grew, err);
		if (rc == 0)
			rc = kerf_state_node_upsert(&w->st, &s, now_ms, &w->dec, err);
		if (rc >= 0)
			rc = kerf_world_consume(w, now_ms, &w->queued, err);
	}
	free(v);
	return rc < 0 ? rc : 0;
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
	struct kerf_mig_layout mig_down[KERF_NODE_MAX_GPUS];
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
		/* its GPUPool's flavor, else its product label's */
		model = kerf_world_node_model(w, n, err);
		rc = model < 0 ? model : 0;
	}
	if (rc == 0 && n->nvlink_domain)
		rc = domain_id(w, n->nvlink_domain, &domain, err);
	if (rc == 0)
		rc = node_spec(w, n, model, domain, &s, mig_down, &grew, err);
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
		rc = kerf_world_sync_all(w, true, false, now_ms, err);
		w->term_resync = false;
	}
	/* pods bound to it may be counted now */
	if (rc == 0 && fresh)
		rc = kerf_world_sync_all(w, false, true, now_ms, err);
	/* what runs there: idle samples from its GPUs' utilisation */
	if (rc == 0)
		kerf_world_util_node(w, x, now_ms);
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
	return kerf_world_update_pods(w, ns, w->now_ms, err);
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
	return kerf_world_update_pods(w, ns, w->now_ms, err);
}

static bool same_idle(const struct kerf_idle_policy *a, const struct kerf_idle_policy *b)
{
	return a->action == b->action && a->below_pct == b->below_pct &&
	       a->after_ms == b->after_ms && a->exempt_classes == b->exempt_classes;
}

int kerf_world_tenant_set(struct kerf_world *w,
			  const struct kerf_tenant_spec *spec,
			  const char *parent_name, struct kerf_err *err)
{
	struct kerf_tenant_spec s;
	struct kerf_idle_policy before;
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
	before = (struct kerf_idle_policy){ .action = KERF_IDLE_NONE };
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
	if (t >= 0)
		before = w->st.tenants.t[t].idle;
	rc = t >= 0 ? kerf_state_tenant_update(&w->st, t, &s, err)
		    : kerf_state_tenant_add(&w->st, &s, err);
	if (rc < 0)
		return rc;
	/* a new idle policy: what runs is judged by it from now on */
	t = kerf_tenants_find(&w->st.tenants, spec->name);
	if (t >= 0 && !same_idle(&before, &w->st.tenants.t[t].idle))
		kerf_world_util_all(w, w->now_ms);
	/* pods of namespaces that joined it (or its parent) may be placed now */
	return kerf_world_update_pods(w, NULL, w->now_ms, err);
}


/* See world.h. */
int kerf_world_tenant_history(struct kerf_world *w,
			      const struct kerf_persist_tenant *pt,
			      struct kerf_err *err)
{
	return kerf_state_import_tenant(&w->st, pt, err);
}
