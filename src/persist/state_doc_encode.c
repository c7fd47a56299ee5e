/*
 * state_doc_encode: the state as a document (persist/state_doc.h).  Every
 * builder takes the answer's ok flag: one allocation that fails turns the
 * whole document into NULL, never a document with a field left out.
 */
#include "persist/state_doc.h"

#include <stdlib.h>
#include <string.h>

#include "core/mig/geometry.h"
#include "core/mig/place.h"
#include "core/persist.h"
#include "persist/state_json.h"

void kerf_doc_put(json_t *o, const char *key, json_t *v, bool *ok)
{
	if (!o || !v || json_object_set_new(o, key, v) < 0) {
		json_decref(v);
		*ok = false;
	}
}

void kerf_doc_push(json_t *a, json_t *v, bool *ok)
{
	if (!a || !v || json_array_append_new(a, v) < 0) {
		json_decref(v);
		*ok = false;
	}
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* A limit: null for KERF_QTY_INF. */
static json_t *qty(int64_t v)
{
	return v == KERF_QTY_INF ? json_null() : json_integer(v);
}

/* Bit numbers of a mask, lowest first. */
static json_t *bits(uint64_t mask, bool *ok)
{
	json_t *a = json_array();

	for (int i = 0; i < 64; i++)
		if (mask & ((uint64_t)1 << i))
			kerf_doc_push(a, json_integer(i), ok);
	if (!a)
		*ok = false;
	return a;
}

static json_t *names(char *const *v, size_t n, bool *ok)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		kerf_doc_push(a, json_string(v[i]), ok);
	if (!a)
		*ok = false;
	return a;
}

/* The name of quota dimension i: "cpu", "memory", "gpu:<model>". */
static void dim_name(const struct kerf_cluster *c, int i, char *buf, size_t size)
{
	if (i == KERF_RES_CPU)
		snprintf(buf, size, "cpu");
	else if (i == KERF_RES_MEM)
		snprintf(buf, size, "memory");
	else
		snprintf(buf, size, "gpu:%s", c->models[i - KERF_RES_GPU0].name);
}

static json_t *models(const struct kerf_cluster *c, bool *ok)
{
	json_t *a = json_array();

	for (size_t m = 0; m < c->nr_models; m++) {
		const struct kerf_gpu_model *x = &c->models[m];
		json_t *o = json_object();

		kerf_doc_put(o, "name", json_string(x->name), ok);
		kerf_doc_put(o, "memMib", json_integer(x->mem_mib), ok);
		kerf_doc_put(o, "hw", str_or_null(x->mig ? x->mig->name : NULL), ok);
		kerf_doc_push(a, o, ok);
	}
	if (!a)
		*ok = false;
	return a;
}

static json_t *classes(const struct kerf_classes *cl, bool *ok)
{
	json_t *a = json_array();

	for (int i = 0; i < cl->nr; i++) {
		const struct kerf_priority_class *x = &cl->c[i];
		json_t *o = json_object();

		kerf_doc_put(o, "name", json_string(x->name), ok);
		kerf_doc_put(o, "value", json_integer(x->value), ok);
		kerf_doc_put(o, "preemptible", json_boolean(x->preemptible), ok);
		kerf_doc_put(o, "checkpointGraceMs", json_integer(x->checkpoint_grace_ms), ok);
		kerf_doc_put(o, "minRuntimeMs", json_integer(x->min_runtime_ms), ok);
		kerf_doc_push(a, o, ok);
	}
	if (!a)
		*ok = false;
	return a;
}

static json_t *mig_layouts(const struct kerf_node_spec *x, bool *ok)
{
	json_t *a = json_array();

	for (int g = 0; g < x->nr_gpus; g++) {
		json_t *l = json_array();

		for (int k = 0; x->mig_layout && k < x->mig_layout[g].nr; k++) {
			const struct kerf_mig_instance *in = &x->mig_layout[g].inst[k];
			json_t *o = json_object();

			kerf_doc_put(o, "profile", json_integer(in->profile), ok);
			kerf_doc_put(o, "start", json_integer(in->start), ok);
			kerf_doc_put(o, "down", json_boolean(in->down), ok);
			kerf_doc_push(l, o, ok);
		}
		kerf_doc_push(a, l, ok);
	}
	if (!a)
		*ok = false;
	return a;
}

static json_t *nodes(const struct kerf_cluster *c, bool *ok)
{
	json_t *a = json_array();

	for (size_t p = 0; p < c->nr_nodes; p++) {
		struct kerf_node_spec x;
		json_t *o = json_object();

		kerf_cluster_node_spec(c, c->order[p], &x);
		kerf_doc_put(o, "name", json_string(x.name), ok);
		kerf_doc_put(o, "rank", json_integer((json_int_t)(x.rank & INT64_MAX)), ok);
		kerf_doc_put(o, "cpuMilli", json_integer(x.cpu_milli), ok);
		kerf_doc_put(o, "memMib", json_integer(x.mem_mib), ok);
		kerf_doc_put(o, "model", x.nr_gpus ? json_string(c->models[x.model].name) : json_null(), ok);
		kerf_doc_put(o, "gpus", json_integer(x.nr_gpus), ok);
		kerf_doc_put(o, "domain", json_integer(x.domain), ok);
		kerf_doc_put(o, "cordoned", json_boolean(x.cordoned), ok);
		kerf_doc_put(o, "migGpus", bits(x.mig_gpus, ok), ok);
		kerf_doc_put(o, "gpusDown", bits(x.gpus_down, ok), ok);
		kerf_doc_put(o, "labels", bits(x.labels, ok), ok);
		kerf_doc_put(o, "taints", bits(x.taints, ok), ok);
		kerf_doc_put(o, "mig", mig_layouts(&x, ok), ok);
		kerf_doc_push(a, o, ok);
	}
	if (!a)
		*ok = false;
	return a;
}

static json_t *quota(const struct kerf_state *st, const struct kerf_quota *q, bool *ok)
{
	json_t *o = json_object();
	char name[KERF_MODEL_NAME_MAX + 8];

	for (int i = 0; i < st->tenants.nr_res; i++) {
		json_t *d = json_object();

		dim_name(&st->cluster, i, name, sizeof(name));
		kerf_doc_put(d, "nominal", json_integer(q->nominal.v[i]), ok);
		kerf_doc_put(d, "borrowingLimit", qty(q->borrow_limit.v[i]), ok);
		kerf_doc_put(d, "lendingLimit", qty(q->lend_limit.v[i]), ok);
		kerf_doc_put(o, name, d, ok);
	}
	if (!o)
		*ok = false;
	return o;
}

static json_t *tenant(const struct kerf_state *st, int t, bool *ok)
{
	struct kerf_tenant_spec x;
	json_t *o = json_object(), *b = json_object(), *idle = json_object();
	json_t *w = json_array();

	kerf_state_tenant_spec(st, t, &x);
	kerf_doc_put(o, "name", json_string(x.name), ok);
	kerf_doc_put(o, "parent", x.parent > 0 ? json_string(st->tenants.t[x.parent].name) : json_null(), ok);
	kerf_doc_put(o, "weight", json_integer(x.weight), ok);
	kerf_doc_put(o, "allowedClasses", bits(x.allowed_classes, ok), ok);
	kerf_doc_put(o, "isolation", json_integer(x.isolation), ok);
	kerf_doc_put(o, "quota", quota(st, &x.quota, ok), ok);
	kerf_doc_put(b, "limitMilliMs", json_integer(x.budget_limit_milli_ms), ok);
	kerf_doc_put(b, "windowMs", json_integer(x.budget_window_ms), ok);
	kerf_doc_put(b, "action", json_integer(x.budget_action), ok);
	for (size_t m = 0; m < st->cluster.nr_models; m++)
		kerf_doc_push(w, json_integer(x.budget_model_weight_pct[m]), ok);
	kerf_doc_put(b, "modelWeightPct", w, ok);
	kerf_doc_put(o, "budget", b, ok);
	kerf_doc_put(idle, "action", json_integer(x.idle.action), ok);
	kerf_doc_put(idle, "belowPct", json_integer(x.idle.below_pct), ok);
	kerf_doc_put(idle, "afterMs", json_integer(x.idle.after_ms), ok);
	kerf_doc_put(idle, "exemptClasses", bits(x.idle.exempt_classes, ok), ok);
	kerf_doc_put(o, "idle", idle, ok);
	kerf_doc_put(o, "removed", json_boolean(st->tenants.t[t].removed), ok);
	return o;
}

static json_t *pod(const struct kerf_pod *p, bool *ok)
{
	json_t *o = json_object();

	kerf_doc_put(o, "cpuMilli", json_integer(p->cpu_milli), ok);
	kerf_doc_put(o, "memMib", json_integer(p->mem_mib), ok);
	kerf_doc_put(o, "models", bits(p->model_mask, ok), ok);
	kerf_doc_put(o, "needLabels", bits(p->need_labels, ok), ok);
	kerf_doc_put(o, "tolerates", bits(p->tolerates, ok), ok);
	kerf_doc_put(o, "gpuMilli", json_integer(p->gpu_milli), ok);
	kerf_doc_put(o, "gpuMemMib", json_integer(p->gpu_mem_mib), ok);
	kerf_doc_put(o, "nrGpus", json_integer(p->nr_gpus), ok);
	kerf_doc_put(o, "share", json_integer(p->share), ok);
	kerf_doc_put(o, "migSlices", json_integer(p->mig_slices), ok);
	return o;
}

static json_t *workload(const struct kerf_state *st, const struct kerf_workload *w,
			bool *ok)
{
	bool running = w->state == KERF_WL_RUNNING;
	json_t *o = json_object(), *sets = json_array(), *pods = json_array();

	kerf_doc_put(o, "key", json_string(w->key), ok);
	kerf_doc_put(o, "tenant", json_string(st->tenants.t[w->tenant].name), ok);
	kerf_doc_put(o, "class", json_string(st->classes.c[w->class_idx].name), ok);
	kerf_doc_put(o, "submitMs", json_integer(w->submit_ms), ok);
	kerf_doc_put(o, "state", json_string(running ? "Running" : "Pending"), ok);
	kerf_doc_put(o, "startMs", json_integer(running ? w->start_ms : 0), ok);
	kerf_doc_put(o, "minCount", json_integer(w->min_count), ok);
	kerf_doc_put(o, "topology", json_integer(w->topology), ok);
	kerf_doc_put(o, "neverPreempts", json_boolean(w->never_preempts), ok);
	kerf_doc_put(o, "pdbProtected", json_boolean(w->pdb_protected), ok);
	kerf_doc_put(o, "leaving", json_boolean(w->leaving), ok);
	kerf_doc_put(o, "utilPct", json_integer(w->util_pct), ok);
	for (int i = 0; i < w->nr_sets; i++) {
		struct kerf_pod asked = kerf_workload_asked(w, i);
		json_t *s = json_object();

		kerf_doc_put(s, "count", json_integer(w->sets[i].count), ok);
		/* pending: asked again as first asked; running: as bound */
		kerf_doc_put(s, "req", pod(running ? &w->sets[i].req : &asked, ok), ok);
		if (running && w->asked)
			kerf_doc_put(s, "asked", pod(&asked, ok), ok);
		kerf_doc_push(sets, s, ok);
	}
	kerf_doc_put(o, "sets", sets, ok);
	for (uint32_t k = 0; running && k < w->nr_bound; k++) {
		const struct kerf_wl_pod *p = &w->pods[k];
		json_t *x = json_object();

		kerf_doc_put(x, "set", json_integer(p->set), ok);
		kerf_doc_put(x, "node", json_string(st->cluster.nodes[p->b.node].name), ok);
		kerf_doc_put(x, "gpus", bits(p->b.gpus, ok), ok);
		kerf_doc_put(x, "migStart", json_integer(p->b.mig_start), ok);
		kerf_doc_push(pods, x, ok);
	}
	kerf_doc_put(o, "pods", pods, ok);
	return o;
}

static int by_seq(const void *a, const void *b)
{
	uint64_t x = (*(struct kerf_workload *const *)a)->seq;
	uint64_t y = (*(struct kerf_workload *const *)b)->seq;

	return x < y ? -1 : x > y;
}

static json_t *workloads(const struct kerf_state *st, bool *ok)
{
	struct kerf_workload **v = malloc((st->nr_wl ? st->nr_wl : 1) * sizeof(*v));
	json_t *a = json_array();
	size_t n = 0;

	if (!v || !a) {
		free(v);
		json_decref(a);
		*ok = false;
		return NULL;
	}
	for (size_t i = 0; i < st->nr_wl; i++)
		if (st->wl[i]->state != KERF_WL_FINISHED)
			v[n++] = st->wl[i];
	qsort(v, n, sizeof(*v), by_seq);
	for (size_t i = 0; i < n && *ok; i++)
		kerf_doc_push(a, workload(st, v[i], ok), ok);
	free(v);
	return a;
}

/* The persisted history, through its own JSON form. */
static json_t *history(const struct kerf_state *st, const struct kerf_sched *s,
		       bool *ok, struct kerf_err *err)
{
	struct kerf_persist p;
	char *text = NULL;
	size_t len = 0;
	json_t *h = NULL;

	if (kerf_state_export(st, s, &p) < 0) {
		*ok = false;
		return NULL;
	}
	if (kerf_state_json_encode(&p, &text, &len, err) == 0)
		h = json_loadb(text, len, 0, NULL);
	kerf_persist_release(&p);
	free(text);
	if (!h)
		*ok = false;
	return h;
}

json_t *kerf_state_doc_encode(const struct kerf_state *st,
			      const struct kerf_sched *s,
			      const struct kerf_state_doc_info *info,
			      struct kerf_err *err)
{
	const struct kerf_cluster *c = &st->cluster;
	json_t *o = json_object(), *tt = json_array();
	bool ok = true;

	kerf_doc_put(o, "apiVersion", json_string("kerf.io/api/v1"), &ok);
	kerf_doc_put(o, "kind", json_string("State"), &ok);
	kerf_doc_put(o, "version", json_integer(KERF_STATE_DOC_VERSION), &ok);
	kerf_doc_put(o, "nowMs", json_integer(info->now_ms), &ok);
	kerf_doc_put(o, "policy", json_string(info->policy), &ok);
	kerf_doc_put(o, "seed", json_integer((json_int_t)(info->seed & INT64_MAX)), &ok);
	kerf_doc_put(o, "models", models(c, &ok), &ok);
	kerf_doc_put(o, "labels", names(c->labels, c->nr_labels, &ok), &ok);
	kerf_doc_put(o, "taints", names(c->taints, c->nr_taints, &ok), &ok);
	kerf_doc_put(o, "classes", classes(&st->classes, &ok), &ok);
	kerf_doc_put(o, "nodes", nodes(c, &ok), &ok);
	for (size_t t = 1; t < st->tenants.nr; t++)
		kerf_doc_push(tt, tenant(st, (int)t, &ok), &ok);
	kerf_doc_put(o, "tenants", tt, &ok);
	kerf_doc_put(o, "workloads", workloads(st, &ok), &ok);
	if (ok)
		kerf_doc_put(o, "history", history(st, s, &ok, err), &ok);
	if (!ok) {
		json_decref(o);
		kerf_err_set(err, -KERF_ENOMEM, "state document: out of memory");
		return NULL;
	}
	return o;
}
