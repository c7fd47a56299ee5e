/*
 * whatif_json: a what-if result as a WhatIf document (docs/what-if.md,
 * "JSON"): one per run.
 */
#include "sim/whatif.h"

#include <stdio.h>
#include <string.h>

static void put(json_t *o, const char *key, json_t *v, bool *ok)
{
	if (!o || !v || json_object_set_new(o, key, v) < 0) {
		json_decref(v);
		*ok = false;
	}
}

static void push(json_t *a, json_t *v, bool *ok)
{
	if (!a || !v || json_array_append_new(a, v) < 0) {
		json_decref(v);
		*ok = false;
	}
}

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

	put(x, "state", json_string(word(o)), ok);
	if (o->state == KERF_WL_RUNNING)
		put(x, "nodes", json_string(o->nodes ? o->nodes : ""), ok);
	if (o->state == KERF_WL_PENDING) {
		put(x, "code", json_string(kerf_pending_name(o->code)), ok);
		put(x, "reason", json_string(o->reason ? o->reason : ""), ok);
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

	put(x, "option", json_string(c->option), ok);
	if (c->kind == KERF_WHATIF_POLICY) {
		put(x, "policy", json_string(c->policy), ok);
		return x;
	}
	put(x, "tenant", json_string(c->tenant), ok);
	if (c->kind == KERF_WHATIF_QUOTA || c->kind == KERF_WHATIF_BORROW)
		put(x, "flavor", c->flavor[0] ? json_string(c->flavor) : json_null(), ok);
	put(x, c->kind == KERF_WHATIF_WEIGHT ? "weight" :
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

	put(o, "apiVersion", json_string("kerf.io/api/v1"), &ok);
	put(o, "kind", json_string("WhatIf"), &ok);
	put(o, "nowMs", json_integer(r->now_ms), &ok);
	put(o, "horizonMs", json_integer(r->horizon_ms), &ok);
	put(pol, "asIs", json_string(r->policy[0]), &ok);
	put(pol, "whatIf", json_string(r->policy[1]), &ok);
	put(o, "policy", pol, &ok);
	for (size_t i = 0; i < nr; i++)
		push(ch, change(&changes[i], &ok), &ok);
	put(o, "changes", ch, &ok);
	for (size_t i = 0; i < r->nr_wl; i++) {
		const struct kerf_whatif_wl *w = &r->wl[i];
		json_t *x = json_object();

		put(x, "workload", json_string(w->key), &ok);
		put(x, "tenant", json_string(w->tenant), &ok);
		put(x, "effect", json_string(kerf_whatif_effect(w)), &ok);
		put(x, "before", outcome(&w->before, &ok), &ok);
		put(x, "asIs", outcome(&w->as_is, &ok), &ok);
		put(x, "whatIf", outcome(&w->what_if, &ok), &ok);
		push(wl, x, &ok);
	}
	put(o, "workloads", wl, &ok);
	for (size_t i = 0; i < r->nr_tenants; i++) {
		const struct kerf_whatif_tenant *t = &r->tenants[i];
		json_t *x = json_object();

		put(x, "name", json_string(t->name), &ok);
		put(x, "gpuMilliBefore", json_integer(t->gpu_milli[0]), &ok);
		put(x, "gpuMilliAsIs", json_integer(t->gpu_milli[1]), &ok);
		put(x, "gpuMilliWhatIf", json_integer(t->gpu_milli[2]), &ok);
		push(tt, x, &ok);
	}
	put(o, "tenants", tt, &ok);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}
