/*
 * state_doc_decode: a state from a document (persist/state_doc.h).  The
 * shape of every field is checked here, with its path; the core's events
 * check what the values mean (a node that does not fit its pods, a quota
 * over its parent's), naming the node, tenant or workload.
 */
#include "persist/state_doc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "core/mig/geometry.h"
#include "core/persist.h"
#include "persist/state_json.h"

enum { PATH_MAX_ = 160 };

struct rd {
	struct kerf_err *err;
	int rc;
};

static int fail(struct rd *r, const char *path, const char *key, const char *why)
{
	if (r->rc == 0)
		r->rc = kerf_err_set(r->err, -KERF_EINVAL, "state: %s%s%s: %s", path,
				     *path && *key ? "." : "", key, why);
	return r->rc;
}

/* o[key], which must be there (an object field) unless optional. */
static const json_t *field(struct rd *r, const json_t *o, const char *path,
			   const char *key, bool optional)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	if (!v && !optional)
		fail(r, path, key, "missing");
	return v;
}

static int64_t integer(struct rd *r, const json_t *o, const char *path,
		       const char *key, int64_t lo, int64_t hi, int64_t def)
{
	const json_t *v = field(r, o, path, key, true);
	char why[96];

	if (!v)
		return def;
	if (!json_is_integer(v) || json_integer_value(v) < lo ||
	    json_integer_value(v) > hi) {
		snprintf(why, sizeof(why), "must be an integer from %lld to %lld",
			 (long long)lo, (long long)hi);
		fail(r, path, key, why);
		return def;
	}
	return json_integer_value(v);
}

/* A limit: null is none (KERF_QTY_INF). */
static int64_t limit(struct rd *r, const json_t *o, const char *path, const char *key)
{
	const json_t *v = field(r, o, path, key, true);

	if (!v || json_is_null(v))
		return KERF_QTY_INF;
	return integer(r, o, path, key, 0, KERF_QTY_INF - 1, 0);
}

static bool boolean(struct rd *r, const json_t *o, const char *path, const char *key)
{
	const json_t *v = field(r, o, path, key, true);

	if (v && !json_is_boolean(v))
		fail(r, path, key, "must be true or false");
	return v && json_is_true(v);
}

/* A string, or NULL (null or absent when optional). */
static const char *string(struct rd *r, const json_t *o, const char *path,
			  const char *key, bool optional)
{
	const json_t *v = field(r, o, path, key, optional);

	if (!v || (optional && json_is_null(v)))
		return NULL;
	if (!json_is_string(v) || !json_string_length(v)) {
		fail(r, path, key, "must be a non-empty string");
		return NULL;
	}
	return json_string_value(v);
}

/* A list of bit numbers below nr_bits. */
static uint64_t mask(struct rd *r, const json_t *o, const char *path,
		     const char *key, int nr_bits)
{
	const json_t *v = field(r, o, path, key, true), *x;
	char why[96];
	uint64_t m = 0;
	size_t i;

	if (!v)
		return 0;
	if (!json_is_array(v))
		return fail(r, path, key, "must be a list of bit numbers"), 0;
	json_array_foreach(v, i, x) {
		if (!json_is_integer(x) || json_integer_value(x) < 0 ||
		    json_integer_value(x) >= nr_bits) {
			snprintf(why, sizeof(why), "item %zu: must be a bit number from 0 to %d",
				 i, nr_bits - 1);
			return fail(r, path, key, why), 0;
		}
		m |= (uint64_t)1 << json_integer_value(x);
	}
	return m;
}

/* o[key] as an array (empty when absent). */
static const json_t *list(struct rd *r, const json_t *o, const char *path,
			  const char *key, size_t max)
{
	const json_t *v = field(r, o, path, key, true);

	if (v && (!json_is_array(v) || json_array_size(v) > max))
		fail(r, path, key, "must be a list, not too long");
	return v && json_is_array(v) ? v : NULL;
}

static void item(char *buf, const char *what, size_t i)
{
	snprintf(buf, PATH_MAX_, "%s[%zu]", what, i);
}

/* --- the cluster --------------------------------------------------------- */

static int cluster(struct rd *r, const json_t *doc, struct kerf_cluster *c)
{
	const json_t *a, *x;
	char path[PATH_MAX_];
	size_t i;

	a = list(r, doc, "", "models", KERF_MAX_MODELS);
	json_array_foreach(a, i, x) {
		const char *name, *hw;
		int32_t mem;

		item(path, "models", i);
		name = string(r, x, path, "name", false);
		hw = string(r, x, path, "hw", true);
		mem = (int32_t)integer(r, x, path, "memMib", 0, INT32_MAX, 0);
		if (r->rc)
			return r->rc;
		r->rc = hw ? kerf_cluster_model_hw(c, name, hw, mem, r->err)
			   : kerf_cluster_model(c, name, mem, r->err);
		if (r->rc < 0)
			return r->rc;
		r->rc = 0;
	}
	a = list(r, doc, "", "labels", KERF_MAX_LABELS);
	json_array_foreach(a, i, x)
		if (!json_is_string(x) || kerf_cluster_label(c, json_string_value(x), r->err) < 0)
			return fail(r, "labels", "", "must be label terms key=value");
	a = list(r, doc, "", "taints", KERF_MAX_LABELS);
	json_array_foreach(a, i, x)
		if (!json_is_string(x) || kerf_cluster_taint(c, json_string_value(x), r->err) < 0)
			return fail(r, "taints", "", "must be taint terms key=value:Effect");
	return r->rc;
}

static int classes(struct rd *r, const json_t *doc, struct kerf_classes *cl)
{
	const json_t *a = list(r, doc, "", "classes", KERF_MAX_CLASSES), *x;
	char path[PATH_MAX_];
	size_t i;
	int rc;

	kerf_classes_init(cl);
	json_array_foreach(a, i, x) {
		struct kerf_priority_class pc = { 0 };
		const char *name;

		item(path, "classes", i);
		name = string(r, x, path, "name", false);
		if (name && strlen(name) >= sizeof(pc.name))
			fail(r, path, "name", "too long");
		if (r->rc)
			return r->rc;
		memcpy(pc.name, name, strlen(name) + 1);
		pc.value = (int32_t)integer(r, x, path, "value", INT32_MIN, INT32_MAX, 0);
		pc.preemptible = boolean(r, x, path, "preemptible");
		pc.checkpoint_grace_ms = integer(r, x, path, "checkpointGraceMs", 0,
						 KERF_PERSIST_MAX_MS, 0);
		pc.min_runtime_ms = integer(r, x, path, "minRuntimeMs", 0,
					    KERF_PERSIST_MAX_MS, 0);
		if (r->rc)
			return r->rc;
		if ((rc = kerf_classes_add(cl, &pc, r->err)) < 0)
			return r->rc = rc;
	}
	return r->rc;
}

static int node(struct rd *r, struct kerf_state *st, const json_t *x,
		const char *path, struct kerf_decisions *dec)
{
	struct kerf_mig_layout layout[KERF_NODE_MAX_GPUS];
	struct kerf_node_spec spec = { 0 };
	const json_t *mig = list(r, x, path, "mig", KERF_NODE_MAX_GPUS), *g;
	const char *model;
	size_t i;

	memset(layout, 0, sizeof(layout));
	spec.name = string(r, x, path, "name", false);
	spec.rank = (uint64_t)integer(r, x, path, "rank", 0, INT64_MAX, 0);
	spec.cpu_milli = integer(r, x, path, "cpuMilli", 0, KERF_MAX_CPU_MILLI, 0);
	spec.mem_mib = integer(r, x, path, "memMib", 0, KERF_MAX_MEM_MIB, 0);
	spec.nr_gpus = (int)integer(r, x, path, "gpus", 0, KERF_NODE_MAX_GPUS, 0);
	spec.domain = (uint32_t)integer(r, x, path, "domain", 0, UINT32_MAX, 0);
	spec.cordoned = boolean(r, x, path, "cordoned");
	spec.mig_gpus = (uint16_t)mask(r, x, path, "migGpus", KERF_NODE_MAX_GPUS);
	spec.gpus_down = (uint16_t)mask(r, x, path, "gpusDown", KERF_NODE_MAX_GPUS);
	spec.labels = mask(r, x, path, "labels", (int)st->cluster.nr_labels);
	spec.taints = mask(r, x, path, "taints", (int)st->cluster.nr_taints);
	model = string(r, x, path, "model", true);
	spec.model = KERF_MODEL_NONE;
	if (model && (spec.model = kerf_cluster_find_model(&st->cluster, model)) < 0)
		fail(r, path, "model", "not among the document's models");
	json_array_foreach(mig, i, g) {
		const json_t *in;
		size_t k;

		if (!json_is_array(g) || json_array_size(g) > KERF_MIG_MAX_INSTANCES)
			return fail(r, path, "mig", "each GPU's instances must be a short list");
		json_array_foreach(g, k, in) {
			struct kerf_mig_instance *o = &layout[i].inst[k];

			o->profile = (uint8_t)integer(r, in, path, "mig.profile", 0, 255, 0);
			o->start = (uint8_t)integer(r, in, path, "mig.start", 0, 255, 0);
			o->down = boolean(r, in, path, "mig.down");
		}
		layout[i].nr = (uint8_t)json_array_size(g);
	}
	if (r->rc)
		return r->rc;
	spec.mig_layout = spec.mig_gpus ? layout : NULL;
	r->rc = kerf_state_node_upsert(st, &spec, 0, dec, r->err);
	return r->rc < 0 ? r->rc : (r->rc = 0);
}

/* --- tenants ------------------------------------------------------------- */

static void quota(struct rd *r, const struct kerf_state *st, const json_t *x,
		  const char *path, struct kerf_quota *q)
{
	const json_t *o = field(r, x, path, "quota", true), *d;
	char sub[PATH_MAX_ + 96];
	const char *name;

	for (int i = 0; i < KERF_MAX_RES; i++) {
		q->nominal.v[i] = 0;
		q->borrow_limit.v[i] = KERF_QTY_INF;
		q->lend_limit.v[i] = KERF_QTY_INF;
	}
	if (o && !json_is_object(o)) {
		fail(r, path, "quota", "must be a mapping of dimensions");
		return;
	}
	json_object_foreach((json_t *)o, name, d) {
		int i = !strcmp(name, "cpu") ? KERF_RES_CPU : !strcmp(name, "memory") ? KERF_RES_MEM : -1;

		if (i < 0 && !strncmp(name, "gpu:", 4)) {
			int m = kerf_cluster_find_model(&st->cluster, name + 4);

			i = m < 0 ? -1 : kerf_res_gpu(m);
		}
		snprintf(sub, sizeof(sub), "%s.quota.%.60s", path, name);
		if (i < 0) {
			fail(r, sub, "", "not a dimension: cpu, memory or gpu:<model of the document>");
			return;
		}
		q->nominal.v[i] = integer(r, d, sub, "nominal", 0, KERF_QTY_INF - 1, 0);
		q->borrow_limit.v[i] = limit(r, d, sub, "borrowingLimit");
		q->lend_limit.v[i] = limit(r, d, sub, "lendingLimit");
	}
}

static int tenant(struct rd *r, struct kerf_state *st, const json_t *x,
		  const char *path)
{
	struct kerf_tenant_spec s = { 0 };
	const json_t *b = field(r, x, path, "budget", true);
	const json_t *idle = field(r, x, path, "idle", true);
	const json_t *w = field(r, b, path, "budget.modelWeightPct", true), *v;
	const char *parent;
	char sub[PATH_MAX_ + 96];
	size_t i;
	int t;

	s.name = string(r, x, path, "name", false);
	parent = string(r, x, path, "parent", true);
	s.parent = 0;
	if (parent && (s.parent = kerf_tenants_find(&st->tenants, parent)) < 0)
		fail(r, path, "parent", "not a tenant listed before it");
	s.weight = (uint32_t)integer(r, x, path, "weight", 1, 1000000, 1);
	s.allowed_classes = (uint32_t)mask(r, x, path, "allowedClasses", st->classes.nr);
	s.isolation = (enum kerf_isolation)integer(r, x, path, "isolation", 0,
						   KERF_ISOLATION_COUNT_ - 1, 0);
	quota(r, st, x, path, &s.quota);
	snprintf(sub, sizeof(sub), "%s.budget", path);
	s.budget_limit_milli_ms = integer(r, b, sub, "limitMilliMs", 0, KERF_PERSIST_MAX_AMOUNT, 0);
	s.budget_window_ms = integer(r, b, sub, "windowMs", 0, KERF_PERSIST_MAX_MS, 0);
	s.budget_action = (enum kerf_budget_action)integer(r, b, sub, "action", 0, 1, 0);
	for (size_t m = 0; m < KERF_MAX_MODELS; m++)
		s.budget_model_weight_pct[m] = 100;
	if (w && (!json_is_array(w) || json_array_size(w) > st->cluster.nr_models))
		fail(r, sub, "modelWeightPct", "must be a list, one per model");
	json_array_foreach(w, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 10000)
			fail(r, sub, "modelWeightPct", "must be percentages from 0 to 10000");
		else
			s.budget_model_weight_pct[i] = (int32_t)json_integer_value(v);
	}
	snprintf(sub, sizeof(sub), "%s.idle", path);
	s.idle.action = (enum kerf_idle_action)integer(r, idle, sub, "action", 0, 2, 0);
	s.idle.below_pct = (int32_t)integer(r, idle, sub, "belowPct", 0, 100, 0);
	s.idle.after_ms = integer(r, idle, sub, "afterMs", 0, KERF_PERSIST_MAX_MS, 0);
	s.idle.exempt_classes = (uint32_t)mask(r, idle, sub, "exemptClasses", st->classes.nr);
	if (r->rc)
		return r->rc;
	if ((t = kerf_state_tenant_add(st, &s, r->err)) < 0)
		return r->rc = t;
	if (boolean(r, x, path, "removed") && (r->rc = kerf_state_tenant_remove(st, t, r->err)) < 0)
		return r->rc;
	return r->rc;
}

/* --- workloads ----------------------------------------------------------- */

static void pod(struct rd *r, const struct kerf_state *st, const json_t *x,
		const char *path, struct kerf_pod *p)
{
	memset(p, 0, sizeof(*p));
	if (!json_is_object(x)) {
		fail(r, path, "", "must be a pod request");
		return;
	}
	p->cpu_milli = integer(r, x, path, "cpuMilli", 0, KERF_MAX_CPU_MILLI, 0);
	p->mem_mib = integer(r, x, path, "memMib", 0, KERF_MAX_MEM_MIB, 0);
	p->model_mask = mask(r, x, path, "models", (int)st->cluster.nr_models);
	p->need_labels = mask(r, x, path, "needLabels", (int)st->cluster.nr_labels);
	p->tolerates = mask(r, x, path, "tolerates", (int)st->cluster.nr_taints);
	p->gpu_milli = (int32_t)integer(r, x, path, "gpuMilli", 0, KERF_GPU_MILLI, 0);
	p->gpu_mem_mib = (int32_t)integer(r, x, path, "gpuMemMib", 0, INT32_MAX, 0);
	p->nr_gpus = (uint8_t)integer(r, x, path, "nrGpus", 0, KERF_NODE_MAX_GPUS, 0);
	p->share = (uint8_t)integer(r, x, path, "share", 0, KERF_SHARE_COUNT_ - 1, 0);
	p->mig_slices = (uint8_t)integer(r, x, path, "migSlices", 0, 8, 0);
}

static int bound_pods(struct rd *r, const struct kerf_state *st, const json_t *x,
		      const char *path, struct kerf_wl_pod **out, uint32_t *nr)
{
	const json_t *a = list(r, x, path, "pods", KERF_MAX_GANG_PODS), *p;
	char sub[PATH_MAX_ + 96];
	size_t i;

	*nr = 0;
	*out = calloc(a && json_array_size(a) ? json_array_size(a) : 1, sizeof(**out));
	if (!*out)
		return r->rc = kerf_err_set(r->err, -KERF_ENOMEM, "out of memory");
	json_array_foreach(a, i, p) {
		const char *node;
		int slot;

		snprintf(sub, sizeof(sub), "%s.pods[%zu]", path, i);
		(*out)[i].set = (uint8_t)integer(r, p, sub, "set", 0, KERF_MAX_PODSETS - 1, 0);
		node = string(r, p, sub, "node", false);
		(*out)[i].b.gpus = (uint16_t)mask(r, p, sub, "gpus", KERF_NODE_MAX_GPUS);
		(*out)[i].b.mig_start = (uint8_t)integer(r, p, sub, "migStart", 0, 255, 0);
		if (r->rc)
			return r->rc;
		if ((slot = kerf_cluster_find_node(&st->cluster, node)) < 0)
			return fail(r, sub, "node", "not a node of the document");
		(*out)[i].b.node = (uint32_t)slot;
	}
	*nr = (uint32_t)(a ? json_array_size(a) : 0);
	return r->rc;
}

static int workload(struct rd *r, struct kerf_state *st, const json_t *x,
		    const char *path)
{
	struct kerf_workload w;          /* a template: whole, 8 sets */
	struct kerf_pod asked[KERF_MAX_PODSETS];
	const json_t *sets = list(r, x, path, "sets", KERF_MAX_PODSETS), *s;
	const char *key, *tn, *cn, *state;
	struct kerf_wl_pod *pods = NULL;
	bool has_asked = false, running;
	char sub[PATH_MAX_ + 96];
	uint32_t nr_pods = 0;
	int64_t submit_ms, start_ms;
	size_t i;
	int id;

	memset(&w, 0, sizeof(w));
	key = string(r, x, path, "key", false);
	tn = string(r, x, path, "tenant", false);
	cn = string(r, x, path, "class", false);
	state = string(r, x, path, "state", false);
	if (r->rc)
		return r->rc;
	running = !strcmp(state, "Running");
	if (!running && strcmp(state, "Pending"))
		return fail(r, path, "state", "must be Running or Pending");
	if ((w.tenant = kerf_tenants_find(&st->tenants, tn)) < 0)
		return fail(r, path, "tenant", "not a tenant of the document");
	if ((w.class_idx = kerf_classes_find(&st->classes, cn)) < 0)
		return fail(r, path, "class", "not a priority class of the document");
	w.key = key;
	submit_ms = integer(r, x, path, "submitMs", 0, KERF_PERSIST_MAX_MS, 0);
	start_ms = integer(r, x, path, "startMs", 0, KERF_PERSIST_MAX_MS, 0);
	w.min_count = (uint32_t)integer(r, x, path, "minCount", 1, KERF_MAX_GANG_PODS, 1);
	w.topology = (enum kerf_topology)integer(r, x, path, "topology", 0, KERF_TOPO_PACK, 0);
	w.never_preempts = boolean(r, x, path, "neverPreempts");
	w.util_pct = (int32_t)integer(r, x, path, "utilPct", 0, 100, 100);
	if (!sets || !json_array_size(sets))
		return fail(r, path, "sets", "must list at least one pod set");
	json_array_foreach(sets, i, s) {
		snprintf(sub, sizeof(sub), "%s.sets[%zu]", path, i);
		w.sets[i].count = (uint32_t)integer(r, s, sub, "count", 1, KERF_MAX_GANG_PODS, 1);
		pod(r, st, field(r, s, sub, "req", false), sub, &w.sets[i].req);
		asked[i] = w.sets[i].req;
		if (running && field(r, s, sub, "asked", true)) {
			pod(r, st, field(r, s, sub, "asked", true), sub, &asked[i]);
			has_asked = true;
		}
	}
	w.nr_sets = (int)json_array_size(sets);
	if (has_asked)
		w.asked = asked;
	if (r->rc)
		return r->rc;
	if (!running) {
		id = kerf_state_submit(st, key, &w, submit_ms, r->err);
	} else {
		if (bound_pods(r, st, x, path, &pods, &nr_pods) < 0) {
			free(pods);
			return r->rc;
		}
		id = kerf_state_adopt(st, key, &w, submit_ms, start_ms, pods, nr_pods, r->err);
		free(pods);
	}
	if (id < 0)
		return r->rc = id;
	if (boolean(r, x, path, "pdbProtected") &&
	    (r->rc = kerf_state_protect(st, (uint32_t)id, true, r->err)) < 0)
		return r->rc;
	if (running && boolean(r, x, path, "leaving") &&
	    (r->rc = kerf_state_leaving(st, (uint32_t)id, r->err)) < 0)
		return r->rc;
	return r->rc;
}

/* --- the whole ----------------------------------------------------------- */

static int header(struct rd *r, const json_t *doc, struct kerf_state_doc_info *info)
{
	const char *kind = string(r, doc, "", "kind", false);
	const char *policy;

	if (!r->rc && strcmp(kind, "State"))
		return fail(r, "", "kind", "must be State");
	if (!r->rc && integer(r, doc, "", "version", 0, INT32_MAX, 0) != KERF_STATE_DOC_VERSION)
		return fail(r, "", "version", "must be 1");
	info->now_ms = integer(r, doc, "", "nowMs", 0, KERF_PERSIST_MAX_MS, 0);
	info->seed = (uint64_t)integer(r, doc, "", "seed", 0, INT64_MAX, 1);
	policy = string(r, doc, "", "policy", true);
	if (policy && strlen(policy) >= sizeof(info->policy))
		return fail(r, "", "policy", "too long");
	snprintf(info->policy, sizeof(info->policy), "%s", policy ? policy : "kerf");
	return r->rc;
}

static int body(struct rd *r, const json_t *doc, struct kerf_state *st)
{
	struct kerf_decisions dec;
	const json_t *a, *x;
	char path[PATH_MAX_];
	size_t i;

	kerf_decisions_init(&dec);
	a = list(r, doc, "", "nodes", KERF_PERSIST_MAX_NAMES);
	json_array_foreach(a, i, x) {
		item(path, "nodes", i);
		if (node(r, st, x, path, &dec) < 0)
			break;
	}
	kerf_decisions_release(&dec);
	if (r->rc)
		return r->rc;
	a = list(r, doc, "", "tenants", KERF_PERSIST_MAX_NAMES);
	json_array_foreach(a, i, x) {
		item(path, "tenants", i);
		if (tenant(r, st, x, path) < 0)
			return r->rc;
	}
	a = list(r, doc, "", "workloads", KERF_PERSIST_MAX_NAMES);
	json_array_foreach(a, i, x) {
		item(path, "workloads", i);
		if (workload(r, st, x, path) < 0)
			return r->rc;
	}
	return r->rc;
}

static int history(struct rd *r, const json_t *doc, struct kerf_persist *hist,
		   bool *has)
{
	const json_t *h = field(r, doc, "", "history", true);
	char *text;
	int rc;

	*has = h != NULL;
	if (!h) {
		kerf_persist_init(hist);
		return r->rc;
	}
	text = json_dumps(h, JSON_COMPACT);
	if (!text)
		return r->rc = kerf_err_set(r->err, -KERF_ENOMEM, "out of memory");
	rc = kerf_state_json_decode(text, strlen(text), hist, r->err);
	free(text);
	if (rc < 0)
		kerf_persist_init(hist);
	return rc < 0 ? (r->rc = rc) : r->rc;
}

int kerf_state_doc_decode(const json_t *doc, struct kerf_state *st,
			  struct kerf_state_doc_info *info,
			  struct kerf_persist *hist, struct kerf_err *err)
{
	struct rd r = { .err = err };
	struct kerf_cluster c;
	struct kerf_tenants tt;
	struct kerf_classes cl;

	memset(st, 0, sizeof(*st));
	kerf_persist_init(hist);
	if (!json_is_object(doc))
		return kerf_err_set(err, -KERF_EINVAL, "state: must be a JSON object");
	kerf_cluster_init(&c);
	if (header(&r, doc, info) < 0 || cluster(&r, doc, &c) < 0 ||
	    classes(&r, doc, &cl) < 0) {
		kerf_cluster_release(&c);
		return r.rc;
	}
	if (kerf_tenants_init(&tt, KERF_RES_GPU0 + (int)c.nr_models) < 0) {
		kerf_cluster_release(&c);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	r.rc = kerf_state_init(st, &c, &tt, &cl, err);
	kerf_cluster_release(&c);
	kerf_tenants_release(&tt);
	if (r.rc < 0) {
		memset(st, 0, sizeof(*st));
		return r.rc;
	}
	if (body(&r, doc, st) < 0 || history(&r, doc, hist, &info->history) < 0 ||
	    kerf_state_check(st, err) < 0) {
		kerf_state_release(st);
		memset(st, 0, sizeof(*st));
		kerf_persist_release(hist);
		return r.rc < 0 ? r.rc : -KERF_EINVAL;
	}
	return 0;
}
