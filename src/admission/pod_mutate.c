/*
 * pod_mutate: /mutate/pods, kerf's defaults for a GPU pod of a tenant
 * namespace, as a JSON Patch of "add" operations (docs/admission.md
 * "Mutation"):
 *
 *   labels kerf.io/tenant and kerf.io/queue from the namespace;
 *   schedulerName kerf (in place of the API server's default-scheduler);
 *   a default priority class with its value and preemption policy;
 *   tolerations of the GPU nodes' taints;
 *   node affinity to the pools the tenant holds quota in;
 *   kerf.io/dscp and NCCL_IB_TC / NCCL_IB_SL / NCCL_IB_FIFO_TC /
 *   NCCL_IB_HCA from the tenant's network class;
 *   CUDA_MPS_ACTIVE_THREAD_PERCENTAGE and CUDA_MPS_PINNED_DEVICE_MEM_LIMIT
 *   for a fraction;
 *   a downward-API volume with kerf.io/preempt-at, mounted read-only at
 *   /etc/kerf/checkpoint.
 *
 * Idempotent: every operation adds only what is missing, so a second
 * pass (reinvocation, or after another webhook) gives an empty patch, and
 * nothing a user set is overwritten (a value kerf forbids is the
 * validating webhook's to refuse).
 */
#include "admission/pod_rules.h"

#include <stdio.h>
#include <string.h>

#include "admission/netclass.h"
#include "kobj/json_field.h"
#include "kobj/names.h"

#define KERF_LABEL_QUEUE "kerf.io/queue"
#define KERF_ANN_DSCP "kerf.io/dscp"
#define CHECKPOINT_VOLUME "kerf-checkpoint"
#define CHECKPOINT_PATH "/etc/kerf/checkpoint"

struct mut {
	const struct kerf_admission_policy *p;
	const struct kerf_pod_facts *f;
	json_t *patch;
	int rc;
};

/* A JSON Pointer token: '~' as "~0", '/' as "~1". */
static const char *ptr_token(const char *s, char *out, size_t size)
{
	size_t n = 0;

	for (; *s && n + 3 < size; s++) {
		if (*s == '~' || *s == '/') {
			out[n++] = '~';
			out[n++] = *s == '~' ? '0' : '1';
		} else {
			out[n++] = *s;
		}
	}
	out[n] = 0;
	return out;
}

/* Append {"op":"add","path":path,"value":value} (value stolen). */
static void add(struct mut *m, const char *path, json_t *value)
{
	json_t *op;

	if (!value) {
		m->rc = -KERF_ENOMEM;
		return;
	}
	op = json_pack("{s:s,s:s,s:o}", "op", "add", "path", path, "value", value);
	if (!op || json_array_append_new(m->patch, op) < 0)
		m->rc = -KERF_ENOMEM;
}

/* Add key=value to the object at path (obj: what is there, NULL none). */
static void add_member(struct mut *m, const json_t *obj, const char *path,
		       const char *key, json_t *value)
{
	char tok[512], full[1024];

	if (!obj) {
		json_t *o = json_object();

		if (o && value)
			json_object_set_new(o, key, value);
		else
			json_decref(value);
		add(m, path, o);
		return;
	}
	snprintf(full, sizeof(full), "%s/%s", path, ptr_token(key, tok, sizeof(tok)));
	add(m, full, value);
}

static void mutate_labels(struct mut *m)
{
	const json_t *labels = m->f->labels;
	const char *t = m->f->tenant->name;
	json_t *add_all;

	if (labels && !json_is_object(labels))
		return;
	if (!labels) {
		add_all = json_pack("{s:s,s:s}", KERF_LABEL_TENANT, t, KERF_LABEL_QUEUE, t);
		add(m, "/metadata/labels", add_all);
		return;
	}
	if (!kerf_json_get(labels, KERF_LABEL_TENANT))
		add_member(m, labels, "/metadata/labels", KERF_LABEL_TENANT, json_string(t));
	if (!kerf_json_get(labels, KERF_LABEL_QUEUE))
		add_member(m, labels, "/metadata/labels", KERF_LABEL_QUEUE, json_string(t));
}

/* The class a pod of t gets without one, or NULL. */
static const struct kerf_kpc *default_class(const struct kerf_admission_policy *p,
					    const struct kerf_kobj_tenant *t)
{
	const struct kerf_kpc *best = NULL;

	if (p->cfg.default_priority_class[0])
		return kerf_admission_policy_class(p, p->cfg.default_priority_class);
	for (size_t i = 0; i < t->nr_allowed_classes; i++) {
		const struct kerf_kpc *c = kerf_admission_policy_class(p, t->allowed_classes[i]);

		if (c && (!best || c->value < best->value))
			best = c;
	}
	return best;
}

static void mutate_priority(struct mut *m)
{
	const json_t *spec = m->f->spec;
	const struct kerf_kpc *c;

	if (*kerf_str(spec, "priorityClassName"))
		return;
	c = default_class(m->p, m->f->tenant);
	if (!c)
		return;
	add(m, "/spec/priorityClassName", json_string(c->name));
	add(m, "/spec/priority", json_integer(c->value));
	if (c->preemption != KERF_PREEMPT_UNSET)
		add(m, "/spec/preemptionPolicy",
		    json_string(c->preemption == KERF_PREEMPT_NEVER ? "Never"
								    : "PreemptLowerPriority"));
}

static bool tolerated(const json_t *tols, const char *key, const char *effect)
{
	const json_t *t;
	size_t i;

	json_array_foreach(tols, i, t) {
		const char *k = kerf_str(t, "key"), *e = kerf_str(t, "effect");
		const char *op = kerf_str(t, "operator");

		if ((!*k && !strcmp(op, "Exists")) ||
		    (!strcmp(k, key) && (!*e || !strcmp(e, effect))))
			return true;
	}
	return false;
}

static void mutate_tolerations(struct mut *m)
{
	const json_t *tols = kerf_json_get(m->f->spec, "tolerations");
	json_t *fresh;

	if (tols && !json_is_array(tols))
		return;
	fresh = json_array();
	for (size_t i = 0; fresh && i < m->p->cfg.gpu_taints.nr; i++) {
		char key[KERF_ADMISSION_ENTRY_MAX], *colon;

		snprintf(key, sizeof(key), "%s", m->p->cfg.gpu_taints.v[i]);
		colon = strrchr(key, ':');
		if (!colon)
			continue;
		*colon = 0;
		if (tolerated(tols, key, colon + 1))
			continue;
		json_array_append_new(fresh, json_pack("{s:s,s:s,s:s}", "key", key,
						       "operator", "Exists",
						       "effect", colon + 1));
	}
	if (!fresh) {
		m->rc = -KERF_ENOMEM;
		return;
	}
	if (!json_array_size(fresh)) {
		json_decref(fresh);
		return;
	}
	if (!json_is_array(tols)) {
		add(m, "/spec/tolerations", fresh);
		return;
	}
	for (size_t i = 0; i < json_array_size(fresh); i++)
		add(m, "/spec/tolerations/-", json_incref(json_array_get(fresh, i)));
	json_decref(fresh);
}

/*
 * The expression that keeps the pod on its tenant's pools: one key In
 * the pools' values, when every pool is selected by one label of the
 * same key (the usual kerf.io/pool=NAME); NULL otherwise.
 */
static json_t *pool_expression(const struct kerf_admission_policy *p,
			       const struct kerf_kobj_tenant *t)
{
	const struct kerf_admission_pool *pools[64];
	size_t n = kerf_tenant_pools(p, t, pools, 64);
	const char *key;
	json_t *vals;

	if (!n || pools[0]->p.nr_match_labels != 1)
		return NULL;
	key = pools[0]->p.match_labels[0].key;
	vals = json_array();
	for (size_t i = 0; vals && i < n; i++) {
		if (pools[i]->p.nr_match_labels != 1 ||
		    strcmp(pools[i]->p.match_labels[0].key, key)) {
			json_decref(vals);
			return NULL;
		}
		json_array_append_new(vals, json_string(pools[i]->p.match_labels[0].value));
	}
	return vals ? json_pack("{s:s,s:s,s:o}", "key", key, "operator", "In",
				"values", vals) : NULL;
}

static bool has_expression(const json_t *term, const json_t *e)
{
	const json_t *x;
	size_t i;

	json_array_foreach(kerf_json_get(term, "matchExpressions"), i, x)
		if (json_equal((json_t *)x, (json_t *)e))
			return true;
	return false;
}

static void mutate_affinity(struct mut *m)
{
	const json_t *spec = m->f->spec;
	const json_t *aff = kerf_json_get(spec, "affinity");
	const json_t *na = kerf_json_get(aff, "nodeAffinity");
	const char *req_key = "requiredDuringSchedulingIgnoredDuringExecution";
	const json_t *req = kerf_json_get(na, req_key);
	const json_t *terms = kerf_json_get(req, "nodeSelectorTerms");
	json_t *e = pool_expression(m->p, m->f->tenant);
	const json_t *term;
	char path[512];
	size_t i;

	if (!e)
		return;
	if ((aff && !json_is_object(aff)) || (na && !json_is_object(na)) ||
	    (req && !json_is_object(req)) || (terms && !json_is_array(terms))) {
		json_decref(e);
		return;
	}
	if (!json_is_array(terms) || !json_array_size(terms)) {
		json_t *v = json_pack("{s:[{s:[O]}]}", "nodeSelectorTerms",
				      "matchExpressions", e);

		if (!aff)
			add(m, "/spec/affinity", json_pack("{s:{s:o}}", "nodeAffinity", req_key, v));
		else if (!na)
			add(m, "/spec/affinity/nodeAffinity", json_pack("{s:o}", req_key, v));
		else
			add(m, "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution", v);
		json_decref(e);
		return;
	}
	json_array_foreach(terms, i, term) {
		const json_t *me = kerf_json_get(term, "matchExpressions");

		if (!json_is_object(term) || (me && !json_is_array(me)) ||
		    has_expression(term, e))
			continue;
		kerf_admission_field(path, "/spec/affinity/nodeAffinity/%s/nodeSelectorTerms/%zu/matchExpressions",
			 req_key, i);
		if (json_is_array(kerf_json_get(term, "matchExpressions"))) {
			strncat(path, "/-", sizeof(path) - strlen(path) - 1);
			add(m, path, json_incref(e));
		} else {
			add(m, path, json_pack("[O]", e));
		}
	}
	json_decref(e);
}

static bool has_env(const json_t *c, const char *name)
{
	const json_t *e;
	size_t i;

	json_array_foreach(kerf_json_get(c, "env"), i, e)
		if (!strcmp(kerf_str(e, "name"), name))
			return true;
	return false;
}

static void env_var(json_t *vars, const json_t *c, const char *name,
		    const char *value)
{
	if (!has_env(c, name))
		json_array_append_new(vars, json_pack("{s:s,s:s}", "name", name,
						      "value", value));
}

static bool has_mount(const json_t *c)
{
	const json_t *v;
	size_t i;

	json_array_foreach(kerf_json_get(c, "volumeMounts"), i, v)
		if (!strcmp(kerf_str(v, "name"), CHECKPOINT_VOLUME) ||
		    !strcmp(kerf_str(v, "mountPath"), CHECKPOINT_PATH))
			return true;
	return false;
}

/* Append the array items to c's array member key at base (or create). */
static void add_items(struct mut *m, const json_t *c, const char *base,
		      const char *key, json_t *items)
{
	char path[256];

	if (!json_array_size(items) ||
	    (kerf_json_get(c, key) && !json_is_array(kerf_json_get(c, key)))) {
		json_decref(items);
		return;
	}
	kerf_admission_field(path, "%s/%s", base, key);
	if (!json_is_array(kerf_json_get(c, key))) {
		add(m, path, items);
		return;
	}
	strncat(path, "/-", sizeof(path) - strlen(path) - 1);
	for (size_t i = 0; i < json_array_size(items); i++)
		add(m, path, json_incref(json_array_get(items, i)));
	json_decref(items);
}

/* Env and the checkpoint mount of each app container that runs GPU work. */
static void mutate_containers(struct mut *m, const struct kerf_netclass *nc)
{
	const struct kerf_pod_facts *f = m->f;
	const json_t *cs = kerf_json_get(f->spec, "containers");
	const json_t *c;
	char base[64], text[32];
	size_t i;

	json_array_foreach(cs, i, c) {
		json_t *vars = json_array(), *mounts = json_array();

		if (!vars || !mounts) {
			json_decref(vars);
			json_decref(mounts);
			m->rc = -KERF_ENOMEM;
			return;
		}
		if (!json_is_object(c) ||
		    (!f->fraction_milli && !kerf_container_has_gpu(c))) {
			json_decref(vars);
			json_decref(mounts);
			continue;
		}
		snprintf(base, sizeof(base), "/spec/containers/%zu", i);
		if (nc && nc->nccl_ib_tc >= 0) {
			snprintf(text, sizeof(text), "%d", nc->nccl_ib_tc);
			env_var(vars, c, "NCCL_IB_TC", text);
			snprintf(text, sizeof(text), "%d", nc->nccl_ib_sl);
			env_var(vars, c, "NCCL_IB_SL", text);
			if (nc->nccl_ib_fifo_tc >= 0) {
				snprintf(text, sizeof(text), "%d", nc->nccl_ib_fifo_tc);
				env_var(vars, c, "NCCL_IB_FIFO_TC", text);
			}
			if (m->p->cfg.nccl_ib_hca[0])
				env_var(vars, c, "NCCL_IB_HCA", m->p->cfg.nccl_ib_hca);
		}
		if (f->fraction_milli && (!f->sharing || !strcmp(f->sharing, "mps"))) {
			snprintf(text, sizeof(text), "%lld",
				 (long long)((f->fraction_milli + 9) / 10));
			env_var(vars, c, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", text);
			if (f->gpu_mem_bytes > 0) {
				snprintf(text, sizeof(text), "%lldM",
					 (long long)kerf_mib_up(f->gpu_mem_bytes));
				env_var(vars, c, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", text);
			}
		}
		add_items(m, c, base, "env", vars);
		if (!has_mount(c))
			json_array_append_new(mounts, json_pack("{s:s,s:s,s:b}",
				"name", CHECKPOINT_VOLUME, "mountPath", CHECKPOINT_PATH,
				"readOnly", 1));
		add_items(m, c, base, "volumeMounts", mounts);
	}
}

static void mutate_volume(struct mut *m)
{
	const json_t *vols = kerf_json_get(m->f->spec, "volumes");
	const json_t *v;
	size_t i;
	json_t *vol;

	if (vols && !json_is_array(vols))
		return;
	json_array_foreach(vols, i, v)
		if (!strcmp(kerf_str(v, "name"), CHECKPOINT_VOLUME))
			return;
	vol = json_pack("{s:s,s:{s:[{s:s,s:{s:s}}]}}", "name", CHECKPOINT_VOLUME,
			"downwardAPI", "items", "path", "preempt-at", "fieldRef",
			"fieldPath", "metadata.annotations['" KERF_ANN_PREEMPT_AT "']");
	if (!json_is_array(vols))
		add(m, "/spec/volumes", json_pack("[o]", vol));
	else
		add(m, "/spec/volumes/-", vol);
}

int kerf_admission_mutate_pod(const struct kerf_admission_policy *p,
			      const struct kerf_admission_request *req,
			      struct kerf_admission_decision *d)
{
	struct kerf_pod_facts f;
	struct mut m = { .p = p, .f = &f };
	const struct kerf_netclass *nc = NULL;
	const char *sched;

	if (strcmp(req->kind.kind, "Pod") || *req->kind.group ||
	    req->op != KERF_ADMISSION_CREATE || *req->sub_resource ||
	    !req->object)
		return 0;
	kerf_pod_facts(p, req, req->object, &f);
	if (f.excluded || f.mirror || !f.requests_gpu || !f.tenant ||
	    !json_is_object(f.meta) || !json_is_object(f.spec))
		return 0;   /* a shape the API server never sends: nothing to add */
	m.patch = json_array();
	if (!m.patch)
		return -KERF_ENOMEM;
	mutate_labels(&m);
	sched = kerf_str(f.spec, "schedulerName");
	if (!*sched || !strcmp(sched, "default-scheduler"))
		add(&m, "/spec/schedulerName", json_string(p->cfg.scheduler_name));
	mutate_priority(&m);
	mutate_tolerations(&m);
	mutate_affinity(&m);
	if (f.tenant->network_class[0])
		nc = kerf_netclass_find(f.tenant->network_class);
	if (nc && !kerf_json_get(f.annotations, KERF_ANN_DSCP) &&
	    (!f.annotations || json_is_object(f.annotations))) {
		char dscp[16];

		snprintf(dscp, sizeof(dscp), "%d", nc->dscp);
		add_member(&m, f.annotations, "/metadata/annotations", KERF_ANN_DSCP,
			   json_string(dscp));
	}
	mutate_volume(&m);
	mutate_containers(&m, nc);
	if (m.rc < 0 || !json_array_size(m.patch)) {
		json_decref(m.patch);
		return m.rc;
	}
	d->patch = m.patch;
	return 0;
}
