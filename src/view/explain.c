/*
 * explain: the core's layers of an explanation (view/view.h): for a
 * workload, its class, budget, quota per flavor, capacity node by node,
 * topology, isolation and preemption, each marked blocking or not.  The
 * core's pending reason is the verdict of the last cycle; the layers are
 * recomputed from the state as it stands, so they say what blocks now.
 * The capacity layer counts, per pod set, the nodes that could take one
 * pod of it and why the others cannot (kerf_node_misfit), as
 * kube-scheduler's "0/5 nodes are available" does; it does not see the
 * room held for a head-of-line gang or for preemptors, which the core's
 * sentence does.  Every blocking layer says what would unblock it
 * ("unblock"): the GPUs missing in quota and the limits of the tenant
 * that limits it, the time a budget resets, the room that would let it
 * start.
 */
#include "view/view.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/units.h"
#include "core/budget.h"
#include "core/cycle.h"
#include "view/api_json.h"

const char *kerf_view_topology_text(enum kerf_topology t)
{
	switch (t) {
	case KERF_TOPO_NODE: return "every pod on one node";
	case KERF_TOPO_NVLINK: return "every pod in one NVLink domain";
	case KERF_TOPO_PACK: return "on one node if possible, else anywhere";
	default: return "anywhere";
	}
}

json_t *kerf_view_layer(json_t *a, const char *name, bool blocking, const char *message,
		     int *rc)
{
	json_t *o = json_object();

	kerf_api_put(o, "layer", json_string(name), rc);
	kerf_api_put(o, "blocking", json_boolean(blocking), rc);
	kerf_api_put(o, "message", kerf_api_str(message), rc);
	kerf_api_push(a, o, rc);
	return o;
}

void kerf_view_unblock(json_t *layer, const char *text, int *rc)
{
	kerf_api_put(layer, "unblock", kerf_api_str(text), rc);
}

/* An amount of dimension res as text: GPUs ("2", "0.5") or the unit's count. */
static void amount_text(int res, int64_t v, char *buf, size_t size)
{
	size_t n;

	if (res < KERF_RES_GPU0 || v % 1000 == 0) {
		snprintf(buf, size, "%" PRId64, res < KERF_RES_GPU0 ? v : v / 1000);
		return;
	}
	snprintf(buf, size, "%" PRId64 ".%03" PRId64, v / 1000, (v < 0 ? -v : v) % 1000);
	for (n = strlen(buf); n > 0 && buf[n - 1] == '0'; n--)
		buf[n - 1] = '\0';
}

static void class_layer(const struct kerf_state *st, const struct kerf_workload *wl,
			json_t *a, int *rc)
{
	const struct kerf_tenant *t = &st->tenants.t[wl->tenant];
	bool ok = !t->allowed_classes || (t->allowed_classes >> wl->class_idx & 1);
	char text[256];
	json_t *o;

	snprintf(text, sizeof(text), "priority class '%s' (%" PRId32 ") is %sallowed for tenant '%s'",
		 st->classes.c[wl->class_idx].name, st->classes.c[wl->class_idx].value,
		 ok ? "" : "not ", t->name);
	o = kerf_view_layer(a, "class", !ok, text, rc);
	if (!ok) {
		snprintf(text, sizeof(text), "a priority class tenant '%s' allows, or class '%s' allowed for it",
			 t->name, st->classes.c[wl->class_idx].name);
		kerf_view_unblock(o, text, rc);
	}
}

/* When the budget that holds wl frees it: its window's end, or a raise. */
static void budget_unblock(const struct kerf_state *st, const struct kerf_workload *wl,
			   int64_t now_ms, json_t *o, int *rc)
{
	char text[KERF_REASON_MAX], at[64], left[32];

	for (int k = wl->tenant; k > KERF_TENANT_ROOT; k = st->tenants.t[k].parent) {
		const struct kerf_tenant *t = &st->tenants.t[k];
		const struct kerf_budget *b = &t->budget;
		json_t *when;

		if (b->limit_milli_ms <= 0 || b->used_milli_ms < b->limit_milli_ms)
			continue;
		if (b->window_ms <= 0) {
			snprintf(text, sizeof(text), "the GPU-hour budget of tenant '%s' raised (it has no window to reset)",
				 t->name);
		} else {
			when = kerf_api_time(b->window_start_ms + b->window_ms);
			snprintf(at, sizeof(at), "%s", json_is_string(when) ? json_string_value(when) : "?");
			json_decref(when);
			kerf_units_duration(b->window_start_ms + b->window_ms - now_ms, left, sizeof(left));
			snprintf(text, sizeof(text), "the budget window of tenant '%s' resets at %s (in %s), or its GPU-hour budget raised",
				 t->name, at, left);
		}
		kerf_view_unblock(o, text, rc);
		return;
	}
}

static void budget_layer(const struct kerf_state *st, const struct kerf_workload *wl,
			 int64_t now_ms, json_t *a, int *rc)
{
	char text[KERF_REASON_MAX];

	if (kerf_budget_holds(st, wl, now_ms, text, sizeof(text))) {
		json_t *o = kerf_view_layer(a, "budget", true, text, rc);

		budget_unblock(st, wl, now_ms, o, rc);
		return;
	}
	for (int t = wl->tenant; t >= 0; t = st->tenants.t[t].parent) {
		const struct kerf_tenant *tn = &st->tenants.t[t];

		if (tn->budget.limit_milli_ms > 0) {
			snprintf(text, sizeof(text), "tenant '%s' has used %" PRId32 "%% of its GPU-hour budget this window",
				 tn->name, kerf_budget_used_pct(tn));
			kerf_view_layer(a, "budget", false, text, rc);
		}
	}
}

/* The quota of wl if its GPU pods used model f (-1: none), as the cycle asks it. */
static void request_on(const struct kerf_workload *wl, int f, struct kerf_res *req)
{
	kerf_res_zero(req);
	for (int i = 0; i < wl->nr_sets; i++) {
		struct kerf_res one;

		kerf_res_of_pod(&one, &wl->sets[i].req, f, wl->sets[i].count);
		kerf_res_add(req, &one);
	}
}

static json_t *flavor_verdict(const struct kerf_state *st, const struct kerf_workload *wl,
			      int f, bool *fits, int *rc)
{
	struct kerf_quota_verdict v = { .fits = true, .tenant = -1, .res = -1 };
	const struct kerf_tenant *leaf = &st->tenants.t[wl->tenant];
	json_t *o = json_object();
	struct kerf_res req;
	int g = f >= 0 ? kerf_res_gpu(f) : -1;
	char text[512], dim[64];

	request_on(wl, f, &req);
	*fits = kerf_quota_fits(&st->tenants, wl->tenant, &req, wl->nonpreemptible, &v);
	kerf_api_put(o, "flavor", f >= 0 ? kerf_api_str(st->cluster.models[f].name) : json_null(), rc);
	kerf_api_put(o, "requestGPUMilli", json_integer(g >= 0 ? req.v[g] : 0), rc);
	if (g >= 0) {
		kerf_api_put(o, "nominalGPUMilli", kerf_api_qty(leaf->quota.nominal.v[g]), rc);
		kerf_api_put(o, "borrowingLimitGPUMilli", kerf_api_qty(leaf->quota.borrow_limit.v[g]), rc);
		kerf_api_put(o, "usageGPUMilli", json_integer(leaf->usage.v[g]), rc);
	}
	kerf_api_put(o, "fits", json_boolean(*fits), rc);
	if (*fits || v.tenant < 0 || v.res < 0)
		return o;
	kerf_res_name(&st->cluster, v.res, dim, sizeof(dim));
	if (v.nominal_only)
		snprintf(text, sizeof(text),
			 "non-preemptible work must fit in nominal quota: tenant '%s' %s would reach %" PRId64 " of nominal %" PRId64,
			 st->tenants.t[v.tenant].name, dim, v.need, v.limit);
	else
		snprintf(text, sizeof(text), "tenant '%s' %s would reach %" PRId64 ", over its limit %" PRId64 " (nominal %" PRId64 " + borrowing); it uses %" PRId64,
			 st->tenants.t[v.tenant].name, dim, v.need, v.limit,
			 st->tenants.t[v.tenant].quota.nominal.v[v.res],
			 st->tenants.t[v.tenant].usage.v[v.res]);
	{
		const struct kerf_tenant *lt = &st->tenants.t[v.tenant];
		char more[32], lim[32], nom[32], brw[32], use[32], how[600], what[96];

		amount_text(v.res, v.need - v.limit, more, sizeof(more));
		amount_text(v.res, v.limit, lim, sizeof(lim));
		amount_text(v.res, lt->quota.nominal.v[v.res], nom, sizeof(nom));
		amount_text(v.res, lt->usage.v[v.res], use, sizeof(use));
		if (lt->quota.borrow_limit.v[v.res] == KERF_QTY_INF)
			snprintf(brw, sizeof(brw), "unlimited");
		else
			amount_text(v.res, lt->quota.borrow_limit.v[v.res], brw, sizeof(brw));
		if (v.res >= KERF_RES_GPU0)
			snprintf(what, sizeof(what), "GPUs of flavor %s", st->cluster.models[v.res - KERF_RES_GPU0].name);
		else
			snprintf(what, sizeof(what), "%s", dim);
		if (v.nominal_only)
			snprintf(how, sizeof(how), "needs %s more %s within the nominal %s of tenant '%s' (non-preemptible work does not borrow): its work finishing, or a higher nominal",
				 more, what, nom, lt->name);
		else
			snprintf(how, sizeof(how), "needs %s more %s in quota: tenant '%s' may use up to %s (nominal %s, borrowing up to %s more) and uses %s; its work finishing, or a higher nominal or borrowing limit",
				 more, what, lt->name, lim, nom, brw, use);
		kerf_api_put(o, "unblock", kerf_api_str(how), rc);
	}
	kerf_api_put(o, "limitedBy", kerf_api_str(st->tenants.t[v.tenant].name), rc);
	kerf_api_put(o, "dimension", kerf_api_str(dim), rc);
	kerf_api_put(o, "need", json_integer(v.need), rc);
	kerf_api_put(o, "limit", kerf_api_qty(v.limit), rc);
	kerf_api_put(o, "message", kerf_api_str(text), rc);
	return o;
}

static void quota_layer(const struct kerf_state *st, const struct kerf_workload *wl,
			json_t *a, int *rc)
{
	const struct kerf_cluster *c = &st->cluster;
	uint64_t common = c->nr_models >= 64 ? UINT64_MAX : ((uint64_t)1 << c->nr_models) - 1;
	bool gpu = false, any = false, fits;
	json_t *fl = json_array(), *o;
	char text[600] = "", how[700] = "";

	for (int i = 0; i < wl->nr_sets; i++)
		if (wl->sets[i].req.nr_gpus > 0) {
			gpu = true;
			if (wl->sets[i].req.model_mask)
				common &= wl->sets[i].req.model_mask;
		}
	if (!gpu) {
		json_t *v = flavor_verdict(st, wl, -1, &fits, rc);

		any = fits;
		if (!fits) {
			snprintf(text, sizeof(text), "%s", json_string_value(json_object_get(v, "message")));
			snprintf(how, sizeof(how), "%s", json_string_value(json_object_get(v, "unblock")));
		}
		kerf_api_push(fl, v, rc);
	}
	for (int f = 0; gpu && f < (int)c->nr_models; f++) {
		json_t *v;

		if (!(common >> f & 1))
			continue;
		v = flavor_verdict(st, wl, f, &fits, rc);
		if (!fits && !text[0] && json_object_get(v, "message")) {
			snprintf(text, sizeof(text), "%s", json_string_value(json_object_get(v, "message")));
			snprintf(how, sizeof(how), "%s", json_string_value(json_object_get(v, "unblock")));
		}
		any |= fits;
		kerf_api_push(fl, v, rc);
	}
	if (any || !text[0])
		snprintf(text, sizeof(text), any ? "its tenant's quota has room in at least one flavor" : "no GPU flavor it may use is in the cluster");
	o = kerf_view_layer(a, "quota", !any, text, rc);
	if (!any)
		kerf_view_unblock(o, how[0] ? how : "a node with a GPU flavor it may use added to the cluster", rc);
	kerf_api_put(o, "flavors", fl, rc);
}

/* Per pod set: the nodes that could take one pod now, and why not the rest. */
static bool capacity_layer(const struct kerf_state *st, const struct kerf_workload *wl,
			   bool blocked, uint32_t *sharing, json_t *a, int *rc)
{
	const struct kerf_cluster *c = &st->cluster;
	json_t *sets = json_array(), *o;
	struct kerf_buf b;
	bool short_of = false;
	int cut = 0;    /* a message cut short at 1 KiB: the numbers are whole */

	kerf_buf_init(&b, 1024);
	*sharing = 0;
	for (int s = 0; s < wl->nr_sets; s++) {
		const struct kerf_pod *p = &wl->sets[s].req;
		uint32_t why[KERF_MISFIT_COUNT_] = { 0 };
		json_t *so = json_object(), *mis = json_array();

		for (size_t k = 0; k < c->nr_nodes; k++)
			why[kerf_node_misfit(c, &c->nodes[c->order[k]], p)]++;
		*sharing += why[KERF_MISFIT_SHARING];
		if (why[KERF_MISFIT_NONE] < wl->sets[s].count)
			short_of = true;
		kerf_api_put(so, "set", json_integer(s), rc);
		kerf_api_put(so, "pods", json_integer(wl->sets[s].count), rc);
		kerf_api_put(so, "gpusPerPod", json_integer(p->nr_gpus), rc);
		kerf_api_put(so, "gpuMilliPerGPU", json_integer(p->gpu_milli), rc);
		kerf_api_put(so, "nodesFit", json_integer(why[KERF_MISFIT_NONE]), rc);
		cut |= kerf_buf_addf(&b, "%s%u/%zu nodes could take a pod of set %d", s ? "; " : "",
				    why[KERF_MISFIT_NONE], c->nr_nodes, s);
		for (int m = 1, first = 1; m < KERF_MISFIT_COUNT_; m++) {
			if (!why[m])
				continue;
			json_t *r = json_object();

			kerf_api_put(r, "reason", json_string(kerf_misfit_text((enum kerf_misfit)m)), rc);
			kerf_api_put(r, "nodes", json_integer(why[m]), rc);
			kerf_api_push(mis, r, rc);
			cut |= kerf_buf_addf(&b, "%s %u %s", first ? ":" : ",", why[m],
					    kerf_misfit_text((enum kerf_misfit)m));
			first = 0;
		}
		kerf_api_put(so, "nodesNot", mis, rc);
		kerf_api_push(sets, so, rc);
	}
	(void)cut;
	o = kerf_view_layer(a, "capacity", blocked, kerf_buf_str(&b), rc);
	if (blocked)
		kerf_view_unblock(o, wl->pending == KERF_PENDING_NEVER_FITS ?
				  "a node that could ever host its pods (enough GPUs, CPU, memory, the labels and taints it needs) added to the cluster" :
				  short_of ? "room on more nodes for its pods (counted per reason above): running work there finishing, MIG instances freed, GPUs back in service, or nodes added" :
				  "enough room at once where its pods must go together: running work there finishing, or nodes added",
				  rc);
	kerf_api_put(o, "sets", sets, rc);
	kerf_buf_release(&b);
	return short_of;
}

static void isolation_layer(const struct kerf_state *st, const struct kerf_workload *wl,
			    bool blocked, uint32_t sharing, json_t *a, int *rc)
{
	static const char *const what[] = {
		"may share a GPU with any tenant's fractions",
		"shares GPUs only with its own tenant's fractions",
		"never shares a GPU (whole GPUs or MIG instances only)",
	};
	const struct kerf_tenant *t = &st->tenants.t[wl->tenant];
	char text[300];
	json_t *o;

	snprintf(text, sizeof(text), "tenant '%s' is isolated at level %s: its work %s%s", t->name,
		 t->isolation == KERF_ISOLATION_TENANT ? "Tenant" : t->isolation == KERF_ISOLATION_HARDWARE ? "Hardware" : "Shared",
		 what[t->isolation < KERF_ISOLATION_COUNT_ ? t->isolation : 0],
		 sharing ? "; GPUs with room are shared against it on some nodes" : "");
	o = kerf_view_layer(a, "isolation", blocked && sharing > 0, text, rc);
	if (blocked && sharing > 0)
		kerf_view_unblock(o, "a GPU with room free of fractions it may not share with: those fractions finishing, or a tenant isolation level that allows sharing", rc);
}

static void preemption_layer(const struct kerf_state *st, const struct kerf_workload *wl,
			     json_t *a, int *rc)
{
	char text[400];

	if (wl->state == KERF_WL_PENDING && kerf_wl_pre(wl)->nr_victims) {
		snprintf(text, sizeof(text), "waiting for %u workload%s to checkpoint and leave",
			 kerf_wl_pre(wl)->nr_victims, kerf_wl_pre(wl)->nr_victims == 1 ? "" : "s");
		kerf_view_unblock(kerf_view_layer(a, "preemption", true, text, rc),
				  "the workloads asked to leave checkpointing and leaving (each has a deadline; kerf evicts those that miss it)", rc);
	} else if (wl->state == KERF_WL_RUNNING && kerf_wl_pre(wl)->preempt_deadline_ms > 0) {
		const struct kerf_workload *by = kerf_state_find(st, kerf_wl_pre(wl)->preempted_by);
		json_t *o;

		snprintf(text, sizeof(text), "asked to checkpoint and leave for '%s'",
			 by ? kerf_workload_name(by) : "(gone)");
		o = kerf_view_layer(a, "preemption", false, text, rc);
		kerf_api_put(o, "deadline", kerf_api_time(kerf_wl_pre(wl)->preempt_deadline_ms), rc);
	}
}

void kerf_view_workload_fields(const struct kerf_state *st, const struct kerf_workload *wl,
			       int64_t now_ms, json_t *o, int *rc)
{
	kerf_api_put(o, "state", json_string(kerf_api_wl_state(wl->state)), rc);
	kerf_api_put(o, "tenant", kerf_api_str(kerf_api_tenant_name(st, wl->tenant)), rc);
	kerf_api_put(o, "class", kerf_api_str(st->classes.c[wl->class_idx].name), rc);
	kerf_api_put(o, "priority", json_integer(st->classes.c[wl->class_idx].value), rc);
	kerf_api_put(o, "pods", json_integer(kerf_workload_pods(wl)), rc);
	kerf_api_put(o, "minCount", json_integer(wl->min_count), rc);
	kerf_api_put(o, "gpuMilli", json_integer(kerf_workload_gpu_milli(wl)), rc);
	kerf_api_put(o, "topology", json_string(kerf_view_topology_text(wl->topology)), rc);
	kerf_api_put(o, "submitTime", kerf_api_time(wl->submit_ms), rc);
	kerf_api_put(o, "startTime", wl->state == KERF_WL_RUNNING ? kerf_api_time(wl->start_ms) : json_null(), rc);
	kerf_api_put(o, "waitSeconds", wl->state == KERF_WL_PENDING ? kerf_api_seconds(wl->submit_ms, now_ms) : json_null(), rc);
	kerf_api_put(o, "reason", wl->state == KERF_WL_PENDING ? json_string(kerf_pending_name(wl->pending)) : json_null(), rc);
	kerf_api_put(o, "message", wl->state == KERF_WL_PENDING ? kerf_api_str(wl->pending_text) : json_null(), rc);
}

/* The core's layers for wl, blocking as its last verdict says. */
void kerf_view_core_layers(const struct kerf_state *st, const struct kerf_workload *wl,
			int64_t now_ms, json_t *a, int *rc)
{
	bool pending = wl->state == KERF_WL_PENDING;
	bool cap = pending && (wl->pending == KERF_PENDING_CAPACITY || wl->pending == KERF_PENDING_NEVER_FITS);
	uint32_t sharing = 0;
	bool short_of;

	class_layer(st, wl, a, rc);
	budget_layer(st, wl, now_ms, a, rc);
	if (!pending) {
		preemption_layer(st, wl, a, rc);
		return;
	}
	quota_layer(st, wl, a, rc);
	short_of = capacity_layer(st, wl, cap, &sharing, a, rc);
	if (wl->topology != KERF_TOPO_ANY) {
		char text[200];

		snprintf(text, sizeof(text), "%u of %u pods must be placed together, %s",
			 wl->min_count, kerf_workload_pods(wl), kerf_view_topology_text(wl->topology));
		bool held = cap && !short_of && wl->topology != KERF_TOPO_PACK;
		json_t *o;

		/* enough nodes for each pod alone, yet it waits: the constraint */
		o = kerf_view_layer(a, "topology", held, text, rc);
		if (held) {
			snprintf(text, sizeof(text), "room for %u pods at once %s: running work there finishing, or nodes added",
				 wl->min_count, wl->topology == KERF_TOPO_NODE ? "on one node" : "in one NVLink domain");
			kerf_view_unblock(o, text, rc);
		}
	}
	isolation_layer(st, wl, cap, sharing, a, rc);
	preemption_layer(st, wl, a, rc);
}
