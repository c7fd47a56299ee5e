/*
 * whatif_json: a what-if result as a WhatIf document (docs/what-if.md,
 * "JSON"): one per run.
 */
#include "sim/whatif.h"

#include <stdio.h>
#include <string.h>

#include "persist/state_doc.h"

/*
 * One word for an outcome: Running, Leaving (asked to leave), Pending,
 * Gone (finished: reclaimed).
 */
static const char *word(const struct kerf_whatif_outcome *o)
{
	switch (o->state) {
	case KERF_WL_RUNNING:
		return o->leaving ? "Leaving" : "Running";
	case KERF_WL_PENDING:
		return "Pending";
	default:
		return "Gone";
	}
}

static json_t *outcome(const struct kerf_whatif_outcome *o, bool *ok)
{
	json_t *x = json_object();

	kerf_doc_put(x, "state", json_string(word(o)), ok);
	if (o->state == KERF_WL_RUNNING)
		kerf_doc_put(x, "nodes", json_string(o->nodes ? o->nodes : ""), ok);
	if (o->state == KERF_WL_PENDING) {
		kerf_doc_put(x, "code", json_string(kerf_pending_name(o->code)), ok);
		kerf_doc_put(x, "reason", json_string(o->reason ? o->reason : ""), ok);
	}
	return x;
}

/*
 * What the change does to a workload, against the run as it is:
 * Starts (waits as it is, runs with the change), StillWaits (waits in
 * both), Preempted (runs as it is, leaves with the change), Waits (starts
 * as it is, waits with the change), Moves (runs in both, elsewhere),
 * Same otherwise.
 */
const char *kerf_whatif_effect(const struct kerf_whatif_wl *w)
{
	const char *a = word(&w->as_is), *b = word(&w->what_if);
	bool run_a = w->as_is.state == KERF_WL_RUNNING && !w->as_is.leaving;
	bool run_b = w->what_if.state == KERF_WL_RUNNING && !w->what_if.leaving;

	if (!run_a && run_b)
		return w->as_is.state == KERF_WL_PENDING ? "Starts" : "Stays";
	if (run_a && !run_b)
		return w->before.state == KERF_WL_RUNNING ? "Preempted" : "Waits";
	if (run_a && run_b)
		return strcmp(w->as_is.nodes ? w->as_is.nodes : "",
			      w->what_if.nodes ? w->what_if.nodes : "") ? "Moves" : "Same";
	if (w->what_if.state == KERF_WL_PENDING && w->as_is.state == KERF_WL_PENDING)
		return "StillWaits";
	return strcmp(a, b) ? b : "Same";
}

static json_t *change(const struct kerf_whatif_change *c, bool *ok)
{
	json_t *x = json_object();

	kerf_doc_put(x, "option", json_string(c->option), ok);
	if (c->kind == KERF_WHATIF_POLICY) {
		kerf_doc_put(x, "policy", json_string(c->policy), ok);
		return x;
	}
	kerf_doc_put(x, "tenant", json_string(c->tenant), ok);
	if (c->kind == KERF_WHATIF_QUOTA || c->kind == KERF_WHATIF_BORROW)
		kerf_doc_put(x, "flavor", c->flavor[0] ? json_string(c->flavor) : json_null(), ok);
	kerf_doc_put(x, c->kind == KERF_WHATIF_WEIGHT ? "weight" :
	       c->kind == KERF_WHATIF_BUDGET ? "gpuMilliHours" : "gpuMilli",
	    json_integer(c->value), ok);
	return x;
}

json_t *kerf_whatif_json(const struct kerf_whatif_result *r,
			 const struct kerf_whatif_change *changes, size_t nr)
{
	json_t *o = json_object(), *ch = json_array(), *wl = json_array();
	json_t *tt = json_array(), *pol = json_object();
	bool ok = true;

	kerf_doc_put(o, "apiVersion", json_string("kerf.io/api/v1"), &ok);
	kerf_doc_put(o, "kind", json_string("WhatIf"), &ok);
	kerf_doc_put(o, "nowMs", json_integer(r->now_ms), &ok);
	kerf_doc_put(o, "horizonMs", json_integer(r->horizon_ms), &ok);
	kerf_doc_put(pol, "asIs", json_string(r->policy[0]), &ok);
	kerf_doc_put(pol, "whatIf", json_string(r->policy[1]), &ok);
	kerf_doc_put(o, "policy", pol, &ok);
	for (size_t i = 0; i < nr; i++)
		kerf_doc_push(ch, change(&changes[i], &ok), &ok);
	kerf_doc_put(o, "changes", ch, &ok);
	for (size_t i = 0; i < r->nr_wl; i++) {
		const struct kerf_whatif_wl *w = &r->wl[i];
		json_t *x = json_object();

		kerf_doc_put(x, "workload", json_string(w->key), &ok);
		kerf_doc_put(x, "tenant", json_string(w->tenant), &ok);
		kerf_doc_put(x, "effect", json_string(kerf_whatif_effect(w)), &ok);
		kerf_doc_put(x, "before", outcome(&w->before, &ok), &ok);
		kerf_doc_put(x, "asIs", outcome(&w->as_is, &ok), &ok);
		kerf_doc_put(x, "whatIf", outcome(&w->what_if, &ok), &ok);
		kerf_doc_push(wl, x, &ok);
	}
	kerf_doc_put(o, "workloads", wl, &ok);
	for (size_t i = 0; i < r->nr_tenants; i++) {
		const struct kerf_whatif_tenant *t = &r->tenants[i];
		json_t *x = json_object();

		kerf_doc_put(x, "name", json_string(t->name), &ok);
		kerf_doc_put(x, "gpuMilliBefore", json_integer(t->gpu_milli[0]), &ok);
		kerf_doc_put(x, "gpuMilliAsIs", json_integer(t->gpu_milli[1]), &ok);
		kerf_doc_put(x, "gpuMilliWhatIf", json_integer(t->gpu_milli[2]), &ok);
		kerf_doc_push(tt, x, &ok);
	}
	kerf_doc_put(o, "tenants", tt, &ok);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}
