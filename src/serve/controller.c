#include "serve/controller.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "admission/policy.h"
#include "base/buf.h"
#include "base/grow.h"
#include "base/map.h"
#include "base/rng.h"
#include "base/slab.h"
#include "kobj/names.h"
#include "kobj/request.h"
#include "kobj/pdb.h"
#include "kobj/priorityclass.h"
#include "kobj/tenant.h"
#include "kobj/time.h"
#include "kube/informer.h"
#include "serve/crash.h"
#include "serve/pool_status.h"
#include "serve/tenant_status.h"
#include "serve/tenants.h"

/* Pods last: every other cache is synced before the first pod is read. */
enum { INF_NODES, INF_NAMESPACES, INF_TENANTS, INF_PRIORITY_CLASSES, INF_PDBS,
       INF_GPUPOOLS, INF_PODS, NR_INF };

enum { MAX_RETRIES = 4096 };

/*
 * Writes of one field of one pod go out one at a time, newest last: two
 * PodScheduled patches in flight together could land in either order.
 * While one is in flight, the newest of its kind waits here.
 */
struct pod_writes {
	char key[320];              /* "ns/name" (the map's key) */
	bool busy[KERF_ACT_EVICT + 1];
	bool has_next[KERF_ACT_EVICT + 1];
	struct kerf_action next[KERF_ACT_EVICT + 1];
};

/* An eviction refused for now (a PodDisruptionBudget): sent again later. */
struct retry {
	char ns[64];
	char name[254];
	int64_t at_ms;
};

/*
 * A binding that was refused or failed: sent again at at_ms if the pod is
 * still unbound (by the pods' cache) and the world still places it there.
 * A 409 normally means the pod was bound already (a retry whose first
 * attempt landed, an earlier leader): the cache then shows it bound and
 * nothing is sent.  Sending again can never bind twice: the API server
 * refuses a second binding of a pod, and the uid is in every binding.
 */
struct bind_retry {
	struct kerf_action a;
	int64_t at_ms;
	unsigned attempt;
	struct plan *plan;          /* a plan's first binding: it waits on it */
};

/*
 * A gang's bindings while its plan is written: every member is patched
 * with kerf.io/planned-node and the devices; once all patches landed the
 * first binding goes alone, and the rest once it landed.  A patch that
 * fails gives the gang back to the world, which places it again (nothing
 * of it is bound).  The first binding is sent again while it fails (a 5xx
 * may have landed all the same): the plan waits on it, and goes on once
 * it landed or the cache shows the pod bound where planned; it is given
 * back only when that binding no longer stands or failed 8 times.  When
 * the world keeps a gang given back (one of its pods turned out bound),
 * the rest of its bindings go out.
 */
struct plan {
	struct plan *prev, *next;   /* the controller's list */
	uint32_t group;
	struct kerf_action *binds;  /* copies, in the cycle's order */
	size_t nr;
	unsigned waiting;           /* patches not answered */
	bool failed;
};

struct kerf_controller {
	struct kerf_controller_opts o;
	char scheduler[64], policy[64], identity[KERF_LEASE_HOLDER_MAX];
	struct kerf_world *w;
	struct kerf_rng rng;
	struct kerf_informer *inf[NR_INF];
	struct kerf_elector el;
	bool started;
	bool pods_started;          /* after nodes, namespaces and tenants synced */
	bool dirty;                 /* something changed since the last cycle */
	const struct kerf_kpdb **pdbs;     /* the budgets, for kerf_world_protect */
	size_t alloc_pdbs;
	int64_t now_ms;             /* of the step running */
	int64_t last_cycle_ms;
	unsigned in_flight;
	uint64_t event_seq;
	struct kerf_actions acts;
	struct kerf_actions told;          /* refusals told, out of a cycle */
	struct kerf_map writes;     /* "ns/name" -> struct pod_writes */
	struct retry *retries;
	size_t nr_retries, alloc_retries;
	/* Tenant status: the body last sent per tenant (name -> hash) */
	struct kerf_map status_sent;
	struct plan *plans;         /* in flight */
	struct sent *sent;          /* requests in flight (cancelled on free) */
	int64_t last_status_ms;
	/* Tenants refused because their parent was not known yet (a child
	   listed or created before its parent): set again once a tenant
	   joins, until none is left or no more can be placed. */
	size_t orphans;
	bool orphans_retrying;
	struct bind_retry *bind_retries;
	size_t nr_bind_retries, alloc_bind_retries;
	struct kerf_controller_stats st;
};

/* What a request in flight was, for its answer. */
struct sent {
	struct kerf_controller *c;
	uint64_t id;                /* of the client, to cancel it */
	struct sent *prev, *next;   /* the controller's requests in flight */
	uint8_t kind;               /* enum kerf_action_kind, 0: lease, 99: event */
	char ns[64];
	char name[254];
	struct kerf_action *bind;   /* KERF_ACT_BIND: what was sent (owned) */
	unsigned attempt;           /* of the binding: 0 the first */
	struct plan *plan;          /* a plan's patch, its first binding */
};

enum { SENT_LEASE = 0, SENT_PLAN = 97, SENT_TENANT_STATUS = 98, SENT_EVENT = 99 };

/* Pauses before a binding is sent again. */
enum {
	BIND_CONFLICT_RECHECK_MS = 1000,   /* time for the watch to tell */
	BIND_BACKOFF_BASE_MS = 250,
	BIND_BACKOFF_CAP_MS = 5000,
	/* a workload none of whose pods is bound is placed anew after this
	   many failed attempts (the node may refuse it for good) */
	BIND_GIVE_UP_ATTEMPTS = 8,
	BIND_REFUSED_RETRY_MS = 60000,     /* a 4xx: it will not change soon */
};

static void note_error(struct kerf_controller *c, const char *what,
		       const char *msg)
{
	struct kerf_buf b;

	/* cut to fit: the first part of a long message is the useful one */
	kerf_buf_init(&b, sizeof(c->st.last_error) - 1);
	if (kerf_buf_addf(&b, "%s: ", what) == 0 &&
	    kerf_buf_add(&b, msg, strnlen(msg, sizeof(c->st.last_error) - 1 - b.len)) == 0)
		memcpy(c->st.last_error, kerf_buf_str(&b), b.len + 1);
	kerf_buf_release(&b);
}

/* --- informer handlers ------------------------------------------------ */

/*
 * What the Priority admission copies onto a pod from its PriorityClass
 * (spec.priority, spec.preemptionPolicy), taken from the classes' cache
 * where the pod lacks it: a pod created before its class, or by an API
 * server without that admission plugin.  A pod naming no class takes
 * the globalDefault one, as the admission does.
 */
static void class_defaults(struct kerf_controller *c, struct kerf_kpod *p)
{
	const struct kerf_kpc *pc = NULL;

	if (p->has_priority && p->preemption)
		return;
	if (kerf_kpod_priority_class(p)) {
		pc = kerf_informer_get(c->inf[INF_PRIORITY_CLASSES],
				       kerf_kpod_priority_class(p));
	} else if (!p->has_priority) {
		for (size_t i = 0; !pc && i < kerf_informer_size(c->inf[INF_PRIORITY_CLASSES]); i++) {
			const struct kerf_kpc *k = kerf_informer_at(c->inf[INF_PRIORITY_CLASSES], i, NULL);

			if (k && k->global_default)
				pc = k;
		}
	}
	if (!pc)
		return;
	if (!p->has_priority) {
		p->priority = pc->value;
		p->has_priority = true;
	}
	if (!p->preemption)
		p->preemption = pc->preemption;
}

static void *pod_decode(void *arg, const json_t *obj)
{
	struct kerf_controller *c = arg;
	struct kerf_kpod *p = kerf_slab_alloc(sizeof(*p));
	struct kerf_err err = { 0 };

	if (p && kerf_kpod_decode(obj, p, &err) == 0) {
		class_defaults(c, p);
		return p;
	}
	c->st.objects_refused++;
	note_error(c, "pod", p ? err.msg : "out of memory");
	kerf_slab_free(p, sizeof(*p));
	return NULL;
}

static void pod_free(void *arg, void *obj)
{
	(void)arg;
	kerf_kpod_release(obj);
	kerf_slab_free(obj, sizeof(struct kerf_kpod));
}

static void pod_set(void *arg, const char *key, void *obj)
{
	struct kerf_controller *c = arg;
	struct kerf_err err = { 0 };

	(void)key;
	c->dirty = true;
	/* the world reads the cache's pod: one copy of each pod, not two */
	if (kerf_world_pod_borrow(c->w, obj, c->now_ms, &err) < 0) {
		c->st.world_errors++;
		note_error(c, "pod", err.msg[0] ? err.msg : "out of memory");
	}
}

static void pod_update(void *arg, const char *key, void *old_obj, void *new_obj)
{
	(void)old_obj;
	pod_set(arg, key, new_obj);
}

static void pod_delete(void *arg, const char *key, void *old_obj)
{
	struct kerf_controller *c = arg;
	const struct kerf_kpod *p = old_obj;
	struct kerf_err err = { 0 };

	(void)key;
	c->dirty = true;
	if (kerf_world_pod_delete(c->w, kerf_kpod_ns(p), kerf_kpod_name(p),
				  c->now_ms, &err) < 0) {
		c->st.world_errors++;
		note_error(c, "pod delete", err.msg);
	}
}

static void relist_page(void *arg)
{
	struct kerf_controller *c = arg;

	kerf_crash_at(&c->o.crash, KERF_CRASH_DURING_RELIST);
}

static void *node_decode(void *arg, const json_t *obj)
{
	struct kerf_controller *c = arg;
	struct kerf_knode *n = malloc(sizeof(*n));
	struct kerf_err err = { 0 };

	if (n && kerf_knode_decode(obj, n, &err) == 0)
		return n;
	c->st.objects_refused++;
	note_error(c, "node", n ? err.msg : "out of memory");
	free(n);
	return NULL;
}

static void node_free(void *arg, void *obj)
{
	(void)arg;
	kerf_knode_release(obj);
	free(obj);
}

static void tenant_set(void *arg, const char *key, void *obj);

static int by_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * A GPU model came: a Tenant's quota for that flavor was left out while
 * no node had it (kobj/tenant: unresolved), so every Tenant is set again,
 * in name order.
 */
static void tenants_again(struct kerf_controller *c)
{
	size_t nr = kerf_informer_size(c->inf[INF_TENANTS]);
	const char **keys = calloc(nr + 1, sizeof(*keys));

	if (!keys) {
		note_error(c, "tenant", "out of memory");
		return;
	}
	for (size_t i = 0; i < nr; i++)
		kerf_informer_at(c->inf[INF_TENANTS], i, &keys[i]);
	qsort(keys, nr, sizeof(*keys), by_str);
	for (size_t i = 0; i < nr; i++)
		tenant_set(c, keys[i], kerf_informer_get(c->inf[INF_TENANTS], keys[i]));
	free(keys);
}

/* A node's annotation did not read: what follows, and why (NULL: it did). */
static void note_node(struct kerf_controller *c, const struct kerf_knode *n,
		      const char *what, const char *why)
{
	char msg[KERF_ERR_MSG_MAX + 300], shown[256];

	if (!why)
		return;
	snprintf(msg, sizeof(msg), "'%s': %s: %s", kerf_escape(shown, sizeof(shown), n->name),
		 what, why);
	note_error(c, "node", msg);
}

static void node_set(void *arg, const char *key, void *obj)
{
	struct kerf_controller *c = arg;
	struct kerf_err err = { 0 };
	struct kerf_knode copy;
	size_t models = kerf_world_state(c->w)->cluster.nr_models;

	(void)key;
	c->dirty = true;
	/* every GPU of it counts as out of service: say why */
	note_node(c, obj, "every GPU out of service", ((const struct kerf_knode *)obj)->marks_error);
	/* no idle samples from it: say why */
	note_node(c, obj, "no idle samples", ((const struct kerf_knode *)obj)->util_error);
	if (kerf_knode_clone(&copy, obj) < 0 ||
	    kerf_world_node_set(c->w, &copy, c->now_ms, &err) < 0) {
		c->st.world_errors++;
		note_error(c, "node", err.msg[0] ? err.msg : "out of memory");
	}
	if (kerf_world_state(c->w)->cluster.nr_models > models)
		tenants_again(c);
}

static void node_update(void *arg, const char *key, void *old_obj, void *new_obj)
{
	(void)old_obj;
	node_set(arg, key, new_obj);
}

static void node_delete(void *arg, const char *key, void *old_obj)
{
	struct kerf_controller *c = arg;
	struct kerf_err err = { 0 };

	(void)old_obj;
	c->dirty = true;
	if (kerf_world_node_delete(c->w, key, c->now_ms, &err) < 0) {
		c->st.world_errors++;
		note_error(c, "node delete", err.msg);
	}
}

/* A namespace: its name and the tenant it joined ("" for none). */
struct kns {
	char *name;
	char *tenant;
};

static void *ns_decode(void *arg, const json_t *obj)
{
	struct kerf_controller *c = arg;
	const json_t *meta = json_object_get(obj, "metadata");
	const char *name = json_string_value(json_object_get(meta, "name"));
	const json_t *t = json_object_get(json_object_get(meta, "labels"),
					  KERF_LABEL_TENANT);
	struct kns *n;

	if (!name || (t && !json_is_string(t))) {
		c->st.objects_refused++;
		note_error(c, "namespace", "metadata.name missing or label kerf.io/tenant not a string");
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n || !(n->name = kerf_strdup(name)) ||
	    !(n->tenant = kerf_strdup(t ? json_string_value(t) : ""))) {
		if (n)
			free(n->name);
		free(n);
		return NULL;
	}
	return n;
}

static void ns_free(void *arg, void *obj)
{
	struct kns *n = obj;

	(void)arg;
	free(n->name);
	free(n->tenant);
	free(n);
}

static void ns_set(void *arg, const char *key, void *obj)
{
	struct kerf_controller *c = arg;
	struct kns *n = obj;
	struct kerf_err err = { 0 };

	(void)key;
	c->dirty = true;
	if (kerf_world_namespace_set(c->w, n->name, n->tenant[0] ? n->tenant : NULL,
				     &err) < 0) {
		c->st.world_errors++;
		note_error(c, "namespace", err.msg);
	}
}

static void ns_update(void *arg, const char *key, void *old_obj, void *new_obj)
{
	(void)old_obj;
	ns_set(arg, key, new_obj);
}

static void ns_delete(void *arg, const char *key, void *old_obj)
{
	struct kerf_controller *c = arg;
	struct kerf_err err = { 0 };

	(void)old_obj;
	c->dirty = true;
	if (kerf_world_namespace_delete(c->w, key, &err) < 0) {
		c->st.world_errors++;
		note_error(c, "namespace delete", err.msg);
	}
}

static void *tenant_decode(void *arg, const json_t *obj)
{
	struct kerf_controller *c = arg;
	struct kerf_err err = { 0 };
	struct kerf_ctenant *ct = kerf_ctenant_decode(obj, &err);

	if (ct) {
		if (ct->status_error[0])
			note_error(c, "tenant status (rewritten)", ct->status_error);
		return ct;
	}
	c->st.objects_refused++;
	note_error(c, "tenant", err.msg);
	return NULL;
}

static void tenant_free(void *arg, void *obj)
{
	(void)arg;
	kerf_ctenant_free(obj);
}

static void tenant_set(void *arg, const char *key, void *obj)
{
	struct kerf_controller *c = arg;
	struct kerf_err err = { 0 };
	int rc;

	(void)key;
	c->dirty = true;
	rc = kerf_serve_tenant_set(c->w, &((struct kerf_ctenant *)obj)->t, &err);
	if (rc == -KERF_ENOTFOUND) {
		/* its parent may come later in the list or the watch */
		c->orphans++;
		note_error(c, "tenant", err.msg);
		return;
	}
	if (rc < 0) {
		c->st.world_errors++;
		note_error(c, "tenant", err.msg);
		return;
	}
	/* a tenant joined: the orphans waiting for it as a parent, again;
	   as often as that places one more (a chain listed leaf first) */
	while (c->orphans && !c->orphans_retrying) {
		size_t before = c->orphans;

		c->orphans_retrying = true;
		c->orphans = 0;
		tenants_again(c);
		c->orphans_retrying = false;
		if (c->orphans >= before)
			break;
	}
}

static void tenant_update(void *arg, const char *key, void *old_obj, void *new_obj)
{
	(void)old_obj;
	tenant_set(arg, key, new_obj);
}

/* GPUPools: each a flavor of the nodes it selects (serve/world_pool.c). */
static void *pool_decode(void *arg, const json_t *obj)
{
	struct kerf_controller *c = arg;
	struct kerf_err err = { 0 };
	struct kerf_cpool *cp = kerf_cpool_decode(obj, &err);

	/* a pool refused is kept, left out: its status says why */
	if (!cp || !cp->accepted) {
		c->st.objects_refused++;
		note_error(c, "gpu pool", err.msg);
	}
	return cp;
}

/* Pool name set to cp, or deleted (cp NULL or refused: left out). */
static void pool_apply(struct kerf_controller *c, const char *name,
		       const struct kerf_cpool *cp)
{
	struct kerf_err err = { 0 };
	size_t models = kerf_world_state(c->w)->cluster.nr_models;
	int rc = cp && cp->accepted ? kerf_world_pool_set(c->w, &cp->p, c->now_ms, &err)
				    : kerf_world_pool_delete(c->w, name, c->now_ms, &err);

	c->dirty = true;
	if (rc < 0) {
		c->st.world_errors++;
		note_error(c, "gpu pool", err.msg);
	}
	/* a new flavor: the Tenants' quotas for it can be resolved now */
	if (kerf_world_state(c->w)->cluster.nr_models > models)
		tenants_again(c);
}

static void pool_set(void *arg, const char *key, void *obj)
{
	pool_apply(arg, key, obj);
}

static void pool_update(void *arg, const char *key, void *old_obj, void *new_obj)
{
	(void)old_obj;
	pool_set(arg, key, new_obj);
}

static void pool_delete(void *arg, const char *key, void *old_obj)
{
	(void)old_obj;
	pool_apply(arg, key, NULL);
}

/* PriorityClasses and PodDisruptionBudgets: kept, read when needed. */
static void *pc_decode(void *arg, const json_t *obj)
{
	struct kerf_controller *c = arg;
	struct kerf_kpc *pc = malloc(sizeof(*pc));
	struct kerf_err err = { 0 };

	if (pc && kerf_kpc_decode(obj, pc, &err) == 0)
		return pc;
	c->st.objects_refused++;
	note_error(c, "priority class", pc ? err.msg : "out of memory");
	free(pc);
	return NULL;
}

static void *pdb_decode(void *arg, const json_t *obj)
{
	struct kerf_controller *c = arg;
	struct kerf_kpdb *b = malloc(sizeof(*b));
	struct kerf_err err = { 0 };

	if (b && kerf_kpdb_decode(obj, b, &err) == 0)
		return b;
	c->st.objects_refused++;
	note_error(c, "pod disruption budget", b ? err.msg : "out of memory");
	free(b);
	return NULL;
}

static void plain_free(void *arg, void *obj)
{
	(void)arg;
	free(obj);
}

static void pdb_free(void *arg, void *obj)
{
	(void)arg;
	kerf_kpdb_release(obj);
	free(obj);
}

static void changed(void *arg, const char *key, void *obj)
{
	(void)key;
	(void)obj;
	((struct kerf_controller *)arg)->dirty = true;
}

static void changed_update(void *arg, const char *key, void *old_obj, void *new_obj)
{
	(void)old_obj;
	changed(arg, key, new_obj);
}

/* The budgets as they are into the world's protection of running work. */
static void protect(struct kerf_controller *c)
{
	size_t nr = kerf_informer_size(c->inf[INF_PDBS]), n = 0;
	struct kerf_err err = { 0 };

	if (KERF_GROW(c->pdbs, c->alloc_pdbs, nr ? nr : 1) < 0) {
		note_error(c, "pod disruption budgets", "out of memory");
		return;
	}
	for (size_t i = 0; i < nr; i++) {
		const struct kerf_kpdb *b = kerf_informer_at(c->inf[INF_PDBS], i, NULL);

		if (b)
			c->pdbs[n++] = b;
	}
	if (kerf_world_protect(c->w, c->pdbs, n, &err) < 0) {
		c->st.world_errors++;
		note_error(c, "pod disruption budgets", err.msg);
	}
}

/* --- requests -------------------------------------------------------- */

static void answered(void *arg, const struct kerf_kube_response *resp);
static bool ordered(uint8_t kind);
static void write_done(struct kerf_controller *c, uint8_t kind, const char *ns,
		       const char *name);

/* s went out as id: it is in flight until answered or cancelled. */
static void in_flight(struct kerf_controller *c, struct sent *s, uint64_t id)
{
	s->id = id;
	s->prev = NULL;
	s->next = c->sent;
	if (c->sent)
		c->sent->prev = s;
	c->sent = s;
	c->in_flight++;
}

static void landed(struct kerf_controller *c, struct sent *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		c->sent = s->next;
	if (s->next)
		s->next->prev = s->prev;
	c->in_flight--;
}

static void plan_answered(struct kerf_controller *c, struct plan *p,
			  uint8_t kind, bool ok);

/* Send r; its answer goes to answered() with what it was. */
static void send_for(struct kerf_controller *c, struct kerf_kreq *r, uint8_t kind,
		     const char *ns, const char *name, unsigned flags,
		     const struct kerf_action *bind, unsigned attempt,
		     struct plan *plan)
{
	struct kerf_kube_request req = {
		.method = r->method, .path = r->path,
		.content_type = r->content_type, .body = r->body,
		.body_len = r->body ? strlen(r->body) : 0, .flags = flags,
	};
	struct sent *s = calloc(1, sizeof(*s));
	uint64_t id;

	if (!s) {
		c->st.requests_failed++;
		note_error(c, r->path, "out of memory");
		kerf_kreq_release(r);
		return;
	}
	s->c = c;
	s->kind = kind;
	snprintf(s->ns, sizeof(s->ns), "%s", ns ? ns : "");
	snprintf(s->name, sizeof(s->name), "%s", name ? name : "");
	s->attempt = attempt;
	s->plan = plan;
	if (bind && !(s->bind = malloc(sizeof(*s->bind)))) {
		c->st.requests_failed++;
		note_error(c, r->path, "out of memory");
		free(s);
		kerf_kreq_release(r);
		return;
	}
	if (bind)
		*s->bind = *bind;
	if (c->o.ops->request(c->o.ops->ctx, &req, answered, s, &id) < 0) {
		c->st.requests_failed++;
		note_error(c, r->path, "could not be sent");
		free(s->bind);
		free(s);
		if (plan)
			plan_answered(c, plan, kind, false);
	} else {
		in_flight(c, s, id);
	}
	kerf_kreq_release(r);
}

static void send(struct kerf_controller *c, struct kerf_kreq *r, uint8_t kind,
		 const char *ns, const char *name, unsigned flags,
		 const struct kerf_action *bind, unsigned attempt)
{
	send_for(c, r, kind, ns, name, flags, bind, attempt, NULL);
}

/*
 * A binding refused because the pod is bound already, to node: the API
 * server says 409 'pod NAME is already assigned to node "NODE"'.
 */
static bool bound_there(const struct kerf_kube_response *resp,
			const char *node)
{
	static const char said[] = "already assigned to node \"";
	const char *at;
	size_t len = strlen(node);

	if (resp->class != KERF_KUBE_CONFLICT || !*node)
		return false;
	at = strstr(resp->status.message, said);
	if (!at)
		return false;
	at += sizeof(said) - 1;
	return !strncmp(at, node, len) && at[len] == '"';
}

static void retry_eviction(struct kerf_controller *c, const char *ns,
			   const char *name, int64_t at_ms)
{
	if (c->nr_retries == MAX_RETRIES ||
	    KERF_GROW(c->retries, c->alloc_retries, c->nr_retries + 1) < 0) {
		c->st.requests_failed++;
		note_error(c, "eviction", "too many waiting evictions");
		return;
	}
	snprintf(c->retries[c->nr_retries].ns, sizeof(c->retries[0].ns), "%s", ns);
	snprintf(c->retries[c->nr_retries].name, sizeof(c->retries[0].name), "%s", name);
	c->retries[c->nr_retries].at_ms = at_ms;
	c->nr_retries++;
}

/*
 * Send s's binding again after delay_ms, if it still stands then, with
 * plan (s's own, a plan's first binding: the plan waits on it; or NULL).
 * False when it cannot wait (too many waiting).
 */
static bool retry_bind(struct kerf_controller *c, const struct sent *s,
		       int64_t delay_ms, struct plan *plan)
{
	struct bind_retry *br;

	if (!s->bind)
		return false;
	if (c->nr_bind_retries == MAX_RETRIES ||
	    KERF_GROW(c->bind_retries, c->alloc_bind_retries,
		      c->nr_bind_retries + 1) < 0) {
		c->st.requests_failed++;
		note_error(c, "bind", "too many bindings waiting to be sent again");
		return false;
	}
	br = &c->bind_retries[c->nr_bind_retries++];
	br->a = *s->bind;
	br->attempt = s->attempt + 1;
	br->at_ms = c->now_ms + delay_ms;
	br->plan = plan;
	return true;
}

static void carry_out(struct kerf_controller *c, const struct kerf_action *a);

/* The pod of a binding the API server refused is told why (PodScheduled, an Event). */
static void tell_refused(struct kerf_controller *c, const struct kerf_action *bind,
			 const struct kerf_kube_response *resp, uint64_t retry_ms)
{
	struct kerf_action a = { .kind = KERF_ACT_PENDING };
	char text[1024] = { 0 };

	snprintf(a.ns, sizeof(a.ns), "%s", bind->ns);
	snprintf(a.name, sizeof(a.name), "%s", bind->name);
	snprintf(a.uid, sizeof(a.uid), "%s", bind->uid);
	snprintf(a.reason, sizeof(a.reason), "BindingRejected");
	snprintf(text, sizeof(text),
		 "the API server refused its binding to node '%s' (%s); sent again in %" PRIu64 " s",
		 bind->node, resp->status.decoded && resp->status.message[0]
				 ? resp->status.message : resp->msg,
		 (retry_ms + 999) / 1000);
	memcpy(a.message, text, sizeof(a.message) - 1);
	a.message[sizeof(a.message) - 1] = '\0';
	carry_out(c, &a);
}

static void answered(void *arg, const struct kerf_kube_response *resp)
{
	struct sent *s = arg;
	struct kerf_controller *c = s->c;
	bool ok = resp->http_status >= 200 && resp->http_status < 300;

	landed(c, s);
	switch (s->kind) {
	case SENT_LEASE:
		kerf_elector_answer(&c->el, c->now_ms, resp->http_status, resp->body);
		break;
	case KERF_ACT_BIND: {
		bool waits = false;   /* a plan waits on the retry */

		if (ok) {
			c->st.binds_ok++;
		} else if (s->bind && bound_there(resp, s->bind->node)) {
			/* bound already where we bind it (a retry, or a
			   binding in flight when an earlier leader stopped);
			   the cache is still asked 1 s later, as for any 409:
			   the binding goes again if it shows the pod unbound */
			c->st.binds_already++;
			ok = true;
			retry_bind(c, s, BIND_CONFLICT_RECHECK_MS, NULL);
		} else if (resp->class == KERF_KUBE_CONFLICT ||
			   resp->class == KERF_KUBE_ALREADY_EXISTS) {
			/* bound already (by an earlier leader or a retry):
			   the pod's watch event says where; if it does not,
			   the binding did not land and goes again */
			c->st.binds_conflict++;
			waits = retry_bind(c, s, BIND_CONFLICT_RECHECK_MS, s->plan);
		} else {
			/* a failed binding may or may not have landed: the
			   cache tells before it is sent again */
			uint64_t ms = BIND_BACKOFF_BASE_MS << (s->attempt < 5 ? s->attempt : 5);
			/* refused (a 4xx): no sooner than a minute, and the pod told */
			bool refused = resp->http_status >= 400 && resp->http_status < 500;

			if (ms > BIND_BACKOFF_CAP_MS)
				ms = BIND_BACKOFF_CAP_MS;
			if (refused)
				ms = BIND_REFUSED_RETRY_MS;
			if (resp->retry_after_s > 0)
				ms = 1000 * (uint64_t)(resp->retry_after_s < 60 ? resp->retry_after_s : 60);
			ms += kerf_rng_below(&c->rng, ms / 2 + 1);
			c->st.binds_failed++;
			note_error(c, "bind", resp->msg);
			if (refused && s->attempt == 0 && s->bind)
				tell_refused(c, s->bind, resp, ms);
			waits = retry_bind(c, s, (int64_t)ms, s->plan);
		}
		if (s->plan && !waits)
			plan_answered(c, s->plan, s->kind, ok);
		break;
	}
	case SENT_PLAN:
		if (!ok)
			note_error(c, "plan", resp->msg);
		plan_answered(c, s->plan, s->kind, ok);
		break;
	case KERF_ACT_EVICT:
		if (ok)
			kerf_crash_at(&c->o.crash, KERF_CRASH_MID_PREEMPTION);
		if (!ok && resp->http_status != 404) {
			/*
			 * 429: a PodDisruptionBudget; ask again as it says.
			 * Any other failure (a 5xx or no answer: soon; a
			 * refusal such as 403: in 30 s) is asked again too,
			 * never dropped: the preemptor waits on it.  The pods
			 * waiting for this one are told why it is late.
			 */
			int64_t retry_s = resp->http_status == 429 ? 10
					  : resp->http_status == 0 || resp->http_status >= 500 ? 2 : 30;
			struct kerf_err err = { 0 };
			char why[KERF_ERR_MSG_MAX];

			if (resp->retry_after_s > 0)
				retry_s = resp->retry_after_s < 600 ? resp->retry_after_s : 600;
			if (resp->http_status == 429) {
				c->st.evictions_blocked++;
			} else {
				c->st.requests_failed++;
				note_error(c, "eviction", resp->msg);
			}
			if (resp->http_status == 429 && resp->status.decoded && resp->status.message[0])
				snprintf(why, sizeof(why), "%s", resp->status.message);
			else
				snprintf(why, sizeof(why), "%s", resp->msg);
			retry_eviction(c, s->ns, s->name, c->now_ms + 1000 * retry_s);
			kerf_actions_clear(&c->told);
			if (kerf_world_eviction_refused(c->w, s->ns, s->name, why,
							retry_s, &c->told, &err) < 0)
				note_error(c, "eviction refused", err.msg);
			for (size_t i = 0; i < c->told.nr; i++)
				carry_out(c, &c->told.a[i]);
		}
		break;
	default:
		if (!ok && resp->http_status != 404) {
			c->st.requests_failed++;
			note_error(c, s->kind == SENT_EVENT ? "event" : "patch", resp->msg);
		}
		if (ordered(s->kind))
			write_done(c, s->kind, s->ns, s->name);
		break;
	}
	free(s->bind);
	free(s);
}

static void send_event(struct kerf_controller *c, const struct kerf_action *a)
{
	struct kerf_kevent e = {
		.ns = a->ns, .pod = a->name, .pod_uid = a->uid,
		.type = "Warning",
		.reason = a->kind == KERF_ACT_EVICT ? a->reason : "FailedScheduling",
		.message = a->message, .component = "kerf-scheduler",
		.instance = c->identity, .now_ms = c->now_ms, .count = 1,
	};
	char name[254];
	struct kerf_kreq r;
	struct kerf_err err = { 0 };

	/* as the API server names them: the pod, then a unique hex stamp */
	snprintf(name, sizeof(name), "%.200s.%" PRIx64, a->name,
		 (uint64_t)c->now_ms * 1000000u + (c->event_seq++ % 1000000u));
	e.name = name;
	if (kerf_kreq_event(&r, &e, &err) == 0) {
		c->st.events_sent++;
		send(c, &r, SENT_EVENT, a->ns, a->name, 0, NULL, 0);
	}
}

static void carry_out_now(struct kerf_controller *c, const struct kerf_action *a);

static bool ordered(uint8_t kind)
{
	return kind == KERF_ACT_PENDING || kind == KERF_ACT_PREEMPT ||
	       kind == KERF_ACT_UNPREEMPT;
}

/* The write of its kind on a's pod now, or after the one in flight. */
static void carry_out(struct kerf_controller *c, const struct kerf_action *a)
{
	uint8_t slot = a->kind == KERF_ACT_UNPREEMPT ? KERF_ACT_PREEMPT : a->kind;
	struct pod_writes *pw;
	char key[320];

	if (!ordered(a->kind)) {
		carry_out_now(c, a);
		return;
	}
	snprintf(key, sizeof(key), "%s/%s", a->ns, a->name);
	pw = kerf_map_get_str(&c->writes, key);
	if (!pw) {
		pw = calloc(1, sizeof(*pw));
		if (!pw) {
			carry_out_now(c, a);
			return;
		}
		snprintf(pw->key, sizeof(pw->key), "%s", key);
		if (kerf_map_put_str(&c->writes, pw->key, pw) < 0) {
			free(pw);
			carry_out_now(c, a);
			return;
		}
	}
	if (pw->busy[slot]) {
		pw->next[slot] = *a;
		pw->has_next[slot] = true;
		return;
	}
	pw->busy[slot] = true;
	carry_out_now(c, a);
}

/* A write of an ordered kind was answered: send what waited, if anything. */
static void write_done(struct kerf_controller *c, uint8_t kind, const char *ns,
		       const char *name)
{
	uint8_t slot = kind == KERF_ACT_UNPREEMPT ? KERF_ACT_PREEMPT : kind;
	struct pod_writes *pw;
	char key[320];

	snprintf(key, sizeof(key), "%s/%s", ns, name);
	pw = kerf_map_get_str(&c->writes, key);
	if (!pw)
		return;
	pw->busy[slot] = false;
	if (pw->has_next[slot]) {
		struct kerf_action next = pw->next[slot];

		pw->has_next[slot] = false;
		pw->busy[slot] = true;
		carry_out_now(c, &next);
		return;
	}
	for (int k = 0; k <= KERF_ACT_EVICT; k++)
		if (pw->busy[k] || pw->has_next[k])
			return;
	kerf_map_del_str(&c->writes, key);
	free(pw);
}

/* The devices a binding carries (and a plan writes), into ann[0..3). */
static size_t bind_annotations(const struct kerf_action *a,
			       struct kerf_kv ann[3], char frac[16])
{
	size_t nr = 0;

	if (a->gpus[0])
		ann[nr++] = (struct kerf_kv){ KERF_ANN_ASSIGNED_GPUS, a->gpus };
	if (a->mig[0])
		ann[nr++] = (struct kerf_kv){ KERF_ANN_ASSIGNED_MIG, a->mig };
	if (a->gpu_milli > 0 && a->gpu_milli < 1000) {
		snprintf(frac, 16, "%dm", a->gpu_milli);
		ann[nr++] = (struct kerf_kv){ KERF_ANN_ASSIGNED_FRACTION, frac };
	}
	return nr;
}

/*
 * The binding of a (attempt 0 the first), with the devices it names; the
 * first binding of plan when plan is not NULL.
 */
static int send_bind(struct kerf_controller *c, const struct kerf_action *a,
		     unsigned attempt, struct plan *plan, struct kerf_err *err)
{
	struct kerf_kreq r;
	struct kerf_kv ann[3];
	char frac[16];
	size_t nr = bind_annotations(a, ann, frac);
	int rc = kerf_kreq_binding(&r, a->ns, a->name, a->uid, a->node, ann, nr, err);

	if (rc < 0) {
		if (plan)
			plan_answered(c, plan, KERF_ACT_BIND, false);
		return rc;
	}
	c->st.binds_sent++;
	/* a retried binding is refused (409) if the first landed */
	send_for(c, &r, KERF_ACT_BIND, a->ns, a->name, KERF_KUBE_REQ_RETRYABLE,
		 a, attempt, plan);
	return 0;
}

static void plan_free(struct kerf_controller *c, struct plan *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		c->plans = p->next;
	if (p->next)
		p->next->prev = p->prev;
	free(p->binds);
	free(p);
}

/* The gang is given back to the world: placed again at the next cycle. */
static void plan_abandon(struct kerf_controller *c, struct plan *p)
{
	struct kerf_err err = { 0 };

	c->st.plans_failed++;
	c->dirty = true;
	if (kerf_world_unplace(c->w, p->group, c->now_ms, &err) < 0) {
		c->st.world_errors++;
		note_error(c, "unplace", err.msg);
	}
	/* kept (a pod of it is bound): what stands of it is bound too */
	for (size_t i = 0; i < p->nr; i++) {
		const struct kerf_action *a = &p->binds[i];

		if (kerf_world_bind_stands(c->w, a->ns, a->name, a->uid, a->node) &&
		    send_bind(c, a, 0, NULL, &err) < 0)
			note_error(c, "bind", err.msg);
	}
	plan_free(c, p);
}

/* A plan's patch (kind SENT_PLAN) or its first binding was answered. */
static void plan_answered(struct kerf_controller *c, struct plan *p,
			  uint8_t kind, bool ok)
{
	struct kerf_err err = { 0 };

	if (kind == SENT_PLAN) {
		p->failed |= !ok;
		if (--p->waiting > 0)
			return;
		/* a replica that lost the lease meanwhile binds nothing */
		if (p->failed || !kerf_controller_leading(c, c->now_ms)) {
			plan_abandon(c, p);
			return;
		}
		if (send_bind(c, &p->binds[0], 0, p, &err) < 0)
			note_error(c, "bind", err.msg);
		return;
	}
	if (!ok) {
		plan_abandon(c, p);
		return;
	}
	kerf_crash_at(&c->o.crash, KERF_CRASH_AFTER_FIRST_BIND);
	for (size_t i = 1; i < p->nr; i++)
		if (send_bind(c, &p->binds[i], 0, NULL, &err) < 0)
			note_error(c, "bind", err.msg);
	plan_free(c, p);
}

/* Write the plan of a gang's binds a[0..nr) (copied), then bind. */
static void plan_start(struct kerf_controller *c, const struct kerf_action *const *a,
		       size_t nr)
{
	struct plan *p = calloc(1, sizeof(*p));

	if (!p || !(p->binds = calloc(nr, sizeof(*p->binds)))) {
		free(p);
		c->st.requests_failed++;
		note_error(c, "plan", "out of memory");
		c->dirty = true;
		return;
	}
	p->group = a[0]->group;
	p->nr = nr;
	for (size_t i = 0; i < nr; i++)
		p->binds[i] = *a[i];
	p->next = c->plans;
	if (c->plans)
		c->plans->prev = p;
	c->plans = p;
	/* the answers may come only once all are sent */
	p->waiting = (unsigned)nr + 1;
	for (size_t i = 0; i < nr; i++) {
		struct kerf_err err = { 0 };
		struct kerf_kv ann[4];
		struct kerf_kreq r;
		char frac[16];
		size_t k = bind_annotations(&p->binds[i], ann + 1, frac) + 1;

		ann[0] = (struct kerf_kv){ KERF_ANN_PLANNED_NODE, p->binds[i].node };
		if (kerf_kreq_annotations(&r, p->binds[i].ns, p->binds[i].name, ann, k,
					  &err) < 0) {
			note_error(c, "plan", err.msg);
			p->failed = true;
			p->waiting--;
			continue;
		}
		c->st.plans_sent++;
		send_for(c, &r, SENT_PLAN, p->binds[i].ns, p->binds[i].name,
			 KERF_KUBE_REQ_RETRYABLE, NULL, 0, p);
	}
	plan_answered(c, p, SENT_PLAN, true);
}

static int by_group(const void *x, const void *y)
{
	const struct kerf_action *a = *(const struct kerf_action *const *)x;
	const struct kerf_action *b = *(const struct kerf_action *const *)y;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	return a < b ? -1 : a > b;
}

/*
 * The cycle's actions, in order, but a gang's bindings (more than one
 * BIND of one group) after its plan: see struct plan.
 */
static void carry_out_all(struct kerf_controller *c)
{
	const struct kerf_action **v = calloc(c->acts.nr + 1, sizeof(*v));
	size_t nr = 0;

	if (!v) {
		/* gangs cannot be told apart: nothing is bound, placed again */
		for (size_t i = 0; i < c->acts.nr; i++) {
			struct kerf_err err = { 0 };

			if (c->acts.a[i].kind != KERF_ACT_BIND)
				carry_out(c, &c->acts.a[i]);
			else if (kerf_world_unplace(c->w, c->acts.a[i].group, c->now_ms, &err) < 0)
				note_error(c, "unplace", err.msg);
		}
		c->dirty = true;
		return;
	}
	for (size_t i = 0; i < c->acts.nr; i++)
		if (c->acts.a[i].kind == KERF_ACT_BIND)
			v[nr++] = &c->acts.a[i];
	qsort(v, nr, sizeof(*v), by_group);
	/* a gang's binds: marked by clearing their kind in place */
	for (size_t i = 0, j; i < nr; i = j) {
		for (j = i + 1; j < nr && v[j]->group == v[i]->group; j++)
			;
		if (j - i < 2)
			continue;
		plan_start(c, v + i, j - i);
		for (size_t k = i; k < j; k++)
			((struct kerf_action *)v[k])->kind = 0;
	}
	free(v);
	for (size_t i = 0; i < c->acts.nr; i++)
		if (c->acts.a[i].kind)
			carry_out(c, &c->acts.a[i]);
}

static void carry_out_now(struct kerf_controller *c, const struct kerf_action *a)
{
	struct kerf_err err = { 0 };
	struct kerf_kreq r;
	char when[KERF_TIME_TEXT_MAX];
	int rc = -KERF_EINVAL;

	switch (a->kind) {
	case KERF_ACT_BIND:
		rc = send_bind(c, a, 0, NULL, &err);
		break;
	case KERF_ACT_PENDING:
		rc = kerf_kreq_pending(&r, a->ns, a->name, a->reason, a->message,
				       c->now_ms, &err);
		if (rc == 0) {
			c->st.pending_sent++;
			send(c, &r, KERF_ACT_PENDING, a->ns, a->name, KERF_KUBE_REQ_RETRYABLE,
			     NULL, 0);
			send_event(c, a);
		}
		break;
	case KERF_ACT_PREEMPT:
	case KERF_ACT_UNPREEMPT:
		kerf_time_format(a->at_ms, when);
		rc = kerf_kreq_annotate(&r, a->ns, a->name, KERF_ANN_PREEMPT_AT,
					a->kind == KERF_ACT_PREEMPT ? when : NULL, &err);
		if (rc == 0) {
			c->st.preempts_sent++;
			send(c, &r, a->kind, a->ns, a->name, KERF_KUBE_REQ_RETRYABLE,
			     NULL, 0);
		}
		break;
	case KERF_ACT_EVICT:
		rc = kerf_kreq_eviction(&r, a->ns, a->name, -1, &err);
		if (rc == 0) {
			c->st.evictions_sent++;
			send(c, &r, KERF_ACT_EVICT, a->ns, a->name,
			     KERF_KUBE_REQ_RETRYABLE | KERF_KUBE_REQ_OWN_429, NULL, 0);
			/* kerf's own reason to evict (a gang undone): told */
			if (a->reason[0])
				send_event(c, a);
		}
		break;
	}
	if (rc < 0) {
		c->st.requests_failed++;
		note_error(c, "action", err.msg);
	}
}

/* --- life ------------------------------------------------------------ */

static const struct {
	const char *path;
	void *(*decode)(void *, const json_t *);
	void (*free)(void *, void *);
	void (*on_add)(void *, const char *, void *);
	void (*on_update)(void *, const char *, void *, void *);
	void (*on_delete)(void *, const char *, void *);
} kinds[NR_INF] = {
	[INF_NODES] = { "/api/v1/nodes", node_decode, node_free, node_set,
			node_update, node_delete },
	[INF_NAMESPACES] = { "/api/v1/namespaces", ns_decode, ns_free, ns_set,
			     ns_update, ns_delete },
	[INF_TENANTS] = { "/apis/kerf.io/v1alpha1/tenants", tenant_decode,
			  tenant_free, tenant_set, tenant_update, NULL },
	[INF_PRIORITY_CLASSES] = { "/apis/scheduling.k8s.io/v1/priorityclasses",
				   pc_decode, plain_free, changed, changed_update,
				   changed },
	[INF_PDBS] = { "/apis/policy/v1/poddisruptionbudgets", pdb_decode,
		       pdb_free, changed, changed_update, changed },
	[INF_GPUPOOLS] = { "/apis/kerf.io/v1alpha1/gpupools", pool_decode,
			   plain_free, pool_set, pool_update, pool_delete },
	[INF_PODS] = { "/api/v1/pods", pod_decode, pod_free, pod_set,
		       pod_update, pod_delete },
};

int kerf_controller_new(const struct kerf_controller_opts *opts,
			struct kerf_controller **out, struct kerf_err *err)
{
	struct kerf_controller *c = calloc(1, sizeof(*c));
	struct kerf_world_config wc = { 0 };
	int rc;

	*out = NULL;
	if (!c)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	c->o = *opts;
	snprintf(c->scheduler, sizeof(c->scheduler), "%s",
		 opts->scheduler_name ? opts->scheduler_name : "kerf");
	snprintf(c->policy, sizeof(c->policy), "%s", opts->policy ? opts->policy : "kerf");
	snprintf(c->identity, sizeof(c->identity), "%s",
		 opts->identity ? opts->identity : "kerf");
	if (c->o.resync_ms <= 0)
		c->o.resync_ms = 1000;
	if (c->o.status_ms <= 0)
		c->o.status_ms = 10000;
	kerf_rng_seed(&c->rng, opts->seed);
	kerf_actions_init(&c->acts);
	kerf_actions_init(&c->told);
	kerf_map_init(&c->writes, true);
	kerf_map_init(&c->status_sent, true);
	wc.scheduler_name = c->scheduler;
	wc.policy = c->policy;
	wc.seed = opts->seed;
	rc = kerf_world_new(&wc, &c->w, err);
	if (rc == 0 && opts->leader_elect)
		rc = kerf_elector_init(&c->el, &opts->lease, err);
	for (int k = 0; rc == 0 && k < NR_INF; k++) {
		struct kerf_informer_opts io = { .path = kinds[k].path, .rng = &c->rng };
		struct kerf_informer_handlers h = {
			.decode = kinds[k].decode, .free = kinds[k].free,
			.on_add = kinds[k].on_add, .on_update = kinds[k].on_update,
			.on_delete = kinds[k].on_delete,
			.on_relist_page = relist_page, .arg = c,
		};

		c->inf[k] = kerf_informer_new(opts->ops, &io, &h, err);
		if (!c->inf[k])
			rc = err && err->code ? err->code : -KERF_ENOMEM;
	}
	if (rc < 0) {
		kerf_controller_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void kerf_controller_free(struct kerf_controller *c)
{
	void *v;

	if (!c)
		return;
	/* what is in flight is not answered to a controller that is gone */
	while (c->sent) {
		struct sent *s = c->sent;

		c->o.ops->cancel(c->o.ops->ctx, s->id);
		landed(c, s);
		free(s->bind);
		free(s);
	}
	/* pods first: their deletes need the world, nodes and namespaces last */
	for (int k = NR_INF - 1; k >= 0; k--)
		kerf_informer_free(c->inf[k]);
	kerf_world_free(c->w);
	kerf_actions_release(&c->acts);
	kerf_actions_release(&c->told);
	for (size_t i = 0; (v = kerf_map_next(&c->writes, &i));)
		free(v);
	kerf_map_release(&c->writes);
	for (size_t i = 0; (v = kerf_map_next(&c->status_sent, &i));)
		free(v);
	kerf_map_release(&c->status_sent);
	free(c->retries);
	while (c->plans)
		plan_free(c, c->plans);
	free(c->bind_retries);
	free(c->pdbs);
	free(c);
}

int kerf_controller_start(struct kerf_controller *c, struct kerf_err *err)
{
	/*
	 * Pods last: the world reads a pod against its namespace's tenant and
	 * its node, so those caches fill first (kerf_controller_step starts
	 * the pods' informer once they synced).
	 */
	for (int k = 0; k < INF_PODS; k++) {
		int rc = kerf_informer_start(c->inf[k]);

		if (rc < 0)
			return kerf_err_set(err, rc, "informer %s: could not start",
					    kinds[k].path);
	}
	c->started = true;
	return 0;
}

bool kerf_controller_synced(const struct kerf_controller *c)
{
	return c->started && c->pods_started &&
	       kerf_informers_synced((struct kerf_informer *const *)c->inf, NR_INF);
}

void kerf_controller_waiting(const struct kerf_controller *c, char *out,
			     size_t size)
{
	struct kerf_buf b;
	int rc = 0;

	/* a message cut short where it no longer fits is fine here */
	kerf_buf_init(&b, size ? size - 1 : 0);
	for (int k = 0; k < NR_INF && rc == 0; k++) {
		const struct kerf_informer_stats *s;

		if (kerf_informer_has_synced(c->inf[k]))
			continue;
		if (k == INF_PODS && !c->pods_started) {
			rc = kerf_buf_addf(&b, "%s%s (after the others)", b.len ? "; " : "",
					   kinds[k].path);
			continue;
		}
		s = kerf_informer_stats(c->inf[k]);
		rc = kerf_buf_addf(&b, "%s%s%s%s%s", b.len ? "; " : "", kinds[k].path,
				   s->last_error[0] ? ": " : "", s->last_error,
				   (k == INF_TENANTS || k == INF_GPUPOOLS) &&
						   strstr(s->last_error, "404")
					   ? " (are kerf's CRDs installed? kubectl apply -k deploy/)"
					   : "");
	}
	if (size) {
		snprintf(out, size, "%s", kerf_buf_str(&b));
	}
	kerf_buf_release(&b);
}

bool kerf_controller_leading(const struct kerf_controller *c, int64_t now_ms)
{
	return !c->o.leader_elect || kerf_elector_is_leader(&c->el, now_ms);
}

unsigned kerf_controller_in_flight(const struct kerf_controller *c)
{
	return c->in_flight;
}

const struct kerf_controller_stats *
kerf_controller_stats(const struct kerf_controller *c)
{
	return &c->st;
}

const struct kerf_world *kerf_controller_world(const struct kerf_controller *c)
{
	return c->w;
}

const struct kerf_informer *
kerf_controller_informer(const struct kerf_controller *c, unsigned k,
			 const char **resource)
{
	if (k >= NR_INF)
		return NULL;
	*resource = strrchr(kinds[k].path, '/') + 1;
	return c->inf[k];
}

void kerf_controller_informer_totals(const struct kerf_controller *c,
				     struct kerf_informer_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (int k = 0; k < NR_INF; k++) {
		const struct kerf_informer_stats *s = kerf_informer_stats(c->inf[k]);

		sum->lists += s->lists;
		sum->relists += s->relists;
		sum->pages += s->pages;
		sum->watches += s->watches;
		sum->watch_restarts += s->watch_restarts;
		sum->events += s->events;
		sum->bookmarks += s->bookmarks;
		sum->expired += s->expired;
		sum->malformed += s->malformed;
		sum->no_name += s->no_name;
		sum->decode_failed += s->decode_failed;
		sum->errors += s->errors;
		sum->adds += s->adds;
		sum->updates += s->updates;
		sum->deletes += s->deletes;
		if (!sum->last_error[0] && s->last_error[0])
			memcpy(sum->last_error, s->last_error, sizeof(sum->last_error));
	}
}

/* Send a lease request; its answer goes to the elector. */
static void send_lease(struct kerf_controller *c, struct kerf_kreq *r,
		       int64_t now_ms)
{
	struct kerf_kube_request req = {
		.method = r->method, .path = r->path,
		.content_type = r->content_type, .body = r->body,
		.body_len = r->body ? strlen(r->body) : 0,
		.flags = KERF_KUBE_REQ_NO_RETRY,
	};
	struct sent *s = calloc(1, sizeof(*s));
	uint64_t id;

	if (s) {
		s->c = c;
		s->kind = SENT_LEASE;
		if (c->o.ops->request(c->o.ops->ctx, &req, answered, s, &id) == 0) {
			in_flight(c, s, id);
			s = NULL;
		}
	}
	free(s); /* NULL once sent */
	kerf_kreq_release(r);
	(void)now_ms;
}

static void lease_step(struct kerf_controller *c, int64_t now_ms)
{
	struct kerf_err err = { 0 };
	struct kerf_kreq r;
	int rc;

	if (!c->o.leader_elect)
		return;
	rc = kerf_elector_poll(&c->el, now_ms, &r, &err);
	if (rc == 1) {
		unsigned before = c->in_flight;

		send_lease(c, &r, now_ms);
		if (c->in_flight == before) /* not sent: as if unanswered */
			kerf_elector_answer(&c->el, now_ms, 0, NULL);
	} else if (rc < 0) {
		note_error(c, "lease", err.msg);
	}
}

/* Evictions a PodDisruptionBudget held back, now due again. */
static void evictions_due(struct kerf_controller *c, int64_t now_ms)
{
	struct retry *due = NULL;
	size_t nr_due = 0, alloc = 0, k = 0;

	for (size_t i = 0; i < c->nr_retries; i++) {
		if (c->retries[i].at_ms > now_ms) {
			c->retries[k++] = c->retries[i];
		} else if (KERF_GROW(due, alloc, nr_due + 1) == 0) {
			due[nr_due++] = c->retries[i];
		} else {
			c->retries[k++] = c->retries[i]; /* next step, then */
		}
	}
	c->nr_retries = k;
	for (size_t i = 0; i < nr_due; i++) {
		struct kerf_action a = { .kind = KERF_ACT_EVICT };

		/* a pod gone meanwhile is not asked again (and would
		   answer 404, which is fine) */
		if (!kerf_world_evicting(c->w, due[i].ns, due[i].name))
			continue;
		snprintf(a.ns, sizeof(a.ns), "%s", due[i].ns);
		snprintf(a.name, sizeof(a.name), "%s", due[i].name);
		carry_out(c, &a);
	}
	free(due);
}

/*
 * Every Tenant's status.history into the core, once, when nodes,
 * namespaces and tenants are known and before any pod is: a restarted or
 * new leader keeps the fair-share history and the budgets.
 */
static void tenants_restore(struct kerf_controller *c)
{
	for (size_t i = 0; i < kerf_informer_size(c->inf[INF_TENANTS]); i++) {
		const struct kerf_ctenant *ct = kerf_informer_at(c->inf[INF_TENANTS], i, NULL);
		struct kerf_err err = { 0 };
		int rc = ct ? kerf_ctenant_restore(c->w, ct, &err) : 0;

		if (rc < 0) {
			c->st.world_errors++;
			note_error(c, "tenant history", err.msg);
		}
		c->st.tenants_restored += rc > 0;
	}
}

/* Each Tenant's status, where it changed, every status interval. */
/*
 * Send body (taken) as the merge patch of the /status of kerf.io resource
 * plural/name, unless it is what was sent last; false when out of memory.
 */
static bool status_send(struct kerf_controller *c, const char *plural,
			const char *name, char *body)
{
	struct kerf_kreq r = { .method = "PATCH", .body = body,
			       .content_type = "application/merge-patch+json" };
	uint64_t *sent, h = kerf_hash_str(body);
	char key[320];

	snprintf(key, sizeof(key), "%s/%s", plural, name);
	sent = kerf_map_get_str(&c->status_sent, key);
	if (sent && *sent == h) {
		kerf_kreq_release(&r);
		return true;
	}
	if (!sent) {
		char *k = malloc(sizeof(uint64_t) + strlen(key) + 1);

		if (!k || kerf_map_put_str(&c->status_sent, strcpy(k + sizeof(uint64_t), key),
					   k) < 0) {
			free(k);
			kerf_kreq_release(&r);
			return false;
		}
		sent = (uint64_t *)(void *)k;
	}
	*sent = h;
	snprintf(r.path, sizeof(r.path), "/apis/kerf.io/v1alpha1/%s/%s/status", plural, name);
	c->st.statuses_sent++;
	send(c, &r, SENT_TENANT_STATUS, NULL, name, KERF_KUBE_REQ_RETRYABLE, NULL, 0);
	return true;
}

/* Every Tenant's and GPUPool's status, each when it changed, at most every status_ms. */
static void tenants_write(struct kerf_controller *c, int64_t now_ms)
{
	const struct kerf_state *st = kerf_world_state(c->w);

	if (now_ms - c->last_status_ms < c->o.status_ms)
		return;
	c->last_status_ms = now_ms;
	for (size_t i = 0; i < kerf_informer_size(c->inf[INF_TENANTS]); i++) {
		const char *key;
		const struct kerf_ctenant *ct = kerf_informer_at(c->inf[INF_TENANTS], i, &key);
		char *body = NULL;

		if (!ct)
			continue;
		if (kerf_ctenant_status_patch(st, ct, &body) < 0 ||
		    (body && !status_send(c, "tenants", key, body))) {
			note_error(c, "tenant status", "out of memory");
			return;
		}
	}
	for (size_t i = 0; i < kerf_informer_size(c->inf[INF_GPUPOOLS]); i++) {
		const char *key;
		const struct kerf_cpool *cp = kerf_informer_at(c->inf[INF_GPUPOOLS], i, &key);
		char *body = NULL;

		if (!cp)
			continue;
		if (kerf_pool_status_patch(c->w, cp, now_ms, &body) < 0 ||
		    !status_send(c, "gpupools", key, body)) {
			note_error(c, "gpu pool status", "out of memory");
			return;
		}
	}
}

/*
 * Bindings due to be sent again: only while the pod is still unbound and
 * of the same uid in the cache, and the world still places it there.
 */
static void binds_due(struct kerf_controller *c, int64_t now_ms)
{
	struct bind_retry *list = c->bind_retries;
	size_t nr = c->nr_bind_retries;

	/* taken out first: an answer may queue new retries meanwhile */
	c->bind_retries = NULL;
	c->nr_bind_retries = c->alloc_bind_retries = 0;
	for (size_t i = 0; i < nr; i++) {
		const struct kerf_action *a = &list[i].a;
		const struct kerf_kpod *p;
		const char *uid, *node;
		struct kerf_err err = { 0 };
		char key[320], uid_buf[KERF_KPOD_UID_BUF];

		if (list[i].at_ms > now_ms) {
			if (KERF_GROW(c->bind_retries, c->alloc_bind_retries,
				      c->nr_bind_retries + 1) == 0)
				c->bind_retries[c->nr_bind_retries++] = list[i];
			continue;
		}
		snprintf(key, sizeof(key), "%s/%s", a->ns, a->name);
		p = kerf_informer_get(c->inf[INF_PODS], key);
		uid = p ? kerf_kpod_uid(p, uid_buf) : NULL;
		node = p ? kerf_kpod_node(p) : NULL;
		if (!p || node || (uid && strcmp(uid, a->uid)) ||
		    !kerf_world_bind_stands(c->w, a->ns, a->name, a->uid, a->node)) {
			/* a plan waiting on it goes on if it landed there */
			if (list[i].plan)
				plan_answered(c, list[i].plan, KERF_ACT_BIND,
					      node && !strcmp(node, a->node) &&
					      !(uid && strcmp(uid, a->uid)));
			continue;
		}
		if (list[i].plan && list[i].attempt >= BIND_GIVE_UP_ATTEMPTS) {
			c->st.binds_given_up++;
			plan_answered(c, list[i].plan, KERF_ACT_BIND, false);
			continue;
		}
		if (list[i].attempt >= BIND_GIVE_UP_ATTEMPTS) {
			/* given back to the world unless part of it is bound */
			if (kerf_world_unplace(c->w, a->group, now_ms, &err) < 0) {
				c->st.world_errors++;
				note_error(c, "unplace", err.msg);
			}
			if (!kerf_world_bind_stands(c->w, a->ns, a->name, a->uid, a->node)) {
				c->st.binds_given_up++;
				c->dirty = true;
				continue;
			}
		}
		c->st.binds_retried++;
		if (send_bind(c, a, list[i].attempt, list[i].plan, &err) < 0) {
			c->st.requests_failed++;
			note_error(c, "bind", err.msg);
		}
	}
	free(list);
}

int64_t kerf_controller_step(struct kerf_controller *c, int64_t now_ms)
{
	int64_t wait = c->o.resync_ms;
	struct kerf_err err = { 0 };

	c->now_ms = now_ms;
	for (int k = 0; k < NR_INF; k++) {
		uint64_t t = kerf_informer_tick(c->inf[k]);

		if ((int64_t)t >= 0 && t < (uint64_t)wait)
			wait = (int64_t)t;
	}
	if (!c->pods_started &&
	    kerf_informers_synced((struct kerf_informer *const *)c->inf, INF_PODS)) {
		tenants_restore(c);
		if (kerf_informer_start(c->inf[INF_PODS]) == 0)
			c->pods_started = true;
		else
			note_error(c, "informer /api/v1/pods", "could not start");
	}
	lease_step(c, now_ms);
	if (c->o.leader_elect && c->el.next_ms - now_ms < wait)
		wait = c->el.next_ms > now_ms ? c->el.next_ms - now_ms : 0;
	if (!kerf_controller_synced(c) || !kerf_controller_leading(c, now_ms))
		return wait < 50 ? wait : 50;
	evictions_due(c, now_ms);
	binds_due(c, now_ms);
	if (c->dirty || now_ms - c->last_cycle_ms >= c->o.resync_ms) {
		uint64_t t0 = c->o.ops->now_ms(c->o.ops->ctx), ms;

		c->dirty = false;
		c->last_cycle_ms = now_ms;
		kerf_actions_clear(&c->acts);
		protect(c);
		if (kerf_world_cycle(c->w, now_ms, &c->acts, &err) < 0) {
			c->st.world_errors++;
			note_error(c, "cycle", err.msg);
		}
		/* the API client's clock counts milliseconds: so do these */
		ms = c->o.ops->now_ms(c->o.ops->ctx) - t0;
		c->st.cycles++;
		c->st.cycle_ms_total += ms;
		if (ms > c->st.cycle_ms_max)
			c->st.cycle_ms_max = ms;
		kerf_hist_observe(&c->st.cycle_hist, ms);
		carry_out_all(c);
	}
	tenants_write(c, now_ms);
	return wait;
}

void kerf_controller_stop(struct kerf_controller *c, int64_t now_ms)
{
	struct kerf_err err = { 0 };
	struct kerf_kreq r;

	c->now_ms = now_ms;
	if (c->o.leader_elect && kerf_elector_release(&c->el, now_ms, &r, &err) == 1)
		send_lease(c, &r, now_ms);
}

/* --- the admission webhook's snapshot ------------------------------------ */

uint64_t kerf_controller_policy_generation(const struct kerf_controller *c)
{
	static const int inputs[] = { INF_NAMESPACES, INF_TENANTS,
				      INF_PRIORITY_CLASSES, INF_GPUPOOLS, INF_NODES };
	uint64_t gen = 0;

	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		const struct kerf_informer_stats *st = kerf_informer_stats(c->inf[inputs[i]]);

		gen += st->adds + st->updates + st->deletes + st->lists;
	}
	/* gangs come and go with their pods (a pod's update changes none) */
	{
		const struct kerf_informer_stats *st = kerf_informer_stats(c->inf[INF_PODS]);

		gen += st->adds + st->deletes + st->lists;
	}
	return gen;
}

static int add_gang(void *ctx, const char *ns, const char *gang,
		    const char *priority_class)
{
	return kerf_admission_policy_add_gang(ctx, ns, gang, priority_class);
}

int kerf_controller_admission_policy(const struct kerf_controller *c,
				     const struct kerf_admission_config *cfg,
				     struct kerf_admission_policy **out)
{
	struct kerf_admission_policy *p;
	int rc = kerf_admission_policy_new(cfg, &p);

	for (size_t i = 0; rc == 0 && i < kerf_informer_size(c->inf[INF_NAMESPACES]); i++) {
		const struct kns *n = kerf_informer_at(c->inf[INF_NAMESPACES], i, NULL);

		if (n)
			rc = kerf_admission_policy_add_ns(p, n->name, n->tenant);
	}
	for (size_t i = 0; rc == 0 && i < kerf_informer_size(c->inf[INF_TENANTS]); i++) {
		const struct kerf_ctenant *ct = kerf_informer_at(c->inf[INF_TENANTS], i, NULL);

		if (ct)
			rc = kerf_admission_policy_add_tenant(p, &ct->t);
	}
	for (size_t i = 0; rc == 0 && i < kerf_informer_size(c->inf[INF_PRIORITY_CLASSES]); i++) {
		const struct kerf_kpc *pc = kerf_informer_at(c->inf[INF_PRIORITY_CLASSES], i, NULL);

		if (pc)
			rc = kerf_admission_policy_add_class(p, pc);
	}
	for (size_t i = 0; rc == 0 && i < kerf_informer_size(c->inf[INF_GPUPOOLS]); i++) {
		const struct kerf_cpool *cp = kerf_informer_at(c->inf[INF_GPUPOOLS], i, NULL);
		struct kerf_world_pool_usage u;

		if (!cp || !cp->accepted)
			continue;
		kerf_world_pool_usage(c->w, cp->p.name, &u);
		rc = kerf_admission_policy_add_pool(p, &cp->p, (int32_t)u.gpus);
	}
	if (rc == 0)
		rc = kerf_world_each_gang(c->w, add_gang, p);
	if (rc < 0) {
		kerf_admission_policy_put(p);
		return rc;
	}
	kerf_admission_policy_seal(p);
	*out = p;
	return 0;
}
