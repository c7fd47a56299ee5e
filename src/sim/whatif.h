/*
 * whatif: a state re-run with a change (docs/what-if.md).  The state comes
 * as a state document (persist/state_doc.h): from kerf serve's
 * GET /api/v1/state, or from a scenario run up to a point in time
 * (kerf_whatif_scenario_doc).  It is loaded twice; one copy is changed
 * (a tenant's quota, borrowing limit, weight or GPU-hour budget, or the
 * placement policy), and the core's cycle runs on both at the document's
 * clock (and every cycle_ms for a horizon, nothing arriving, nothing
 * finishing but what preemption evicts).  The result says, per workload,
 * what it was, what it becomes as things are and with the change, and
 * per tenant the GPUs in use before and after.  Deterministic: the same
 * document and changes give the same result.
 *
 * whatif_change.c parses and checks changes; whatif.c runs them.
 */
#ifndef KERF_SIM_WHATIF_H
#define KERF_SIM_WHATIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "core/state.h"
#include "sim/scenario.h"
#include "sim/timesim.h"

enum kerf_whatif_kind {
	KERF_WHATIF_QUOTA = 0,     /* --set-quota TENANT[:FLAVOR]=GPUS */
	KERF_WHATIF_BORROW,        /* --set-borrowing-limit TENANT[:FLAVOR]=GPUS */
	KERF_WHATIF_WEIGHT,        /* --set-weight TENANT=W */
	KERF_WHATIF_BUDGET,        /* --set-budget TENANT=GPU_HOURS */
	KERF_WHATIF_POLICY,        /* --policy NAME */
};

enum { KERF_WHATIF_MAX_CHANGES = 64 };

/* A tenant's budget set where it had none is per this window. */
#define KERF_WHATIF_BUDGET_WINDOW_MS (168LL * 3600 * 1000)

struct kerf_whatif_change {
	enum kerf_whatif_kind kind;
	const char *option;          /* "--set-quota", for messages */
	char tenant[KERF_SCN_NAME_MAX];
	char flavor[KERF_MODEL_NAME_MAX];  /* "": the cluster's only model */
	char policy[32];
	int64_t value;               /* gpu_milli; weight; GPU-milli-hours */
};

/* The option names of the kinds, and whether opt is one of them. */
const char *kerf_whatif_option(enum kerf_whatif_kind kind);
int kerf_whatif_kind_of(const char *opt);

/*
 * Parse the value arg of option opt (one of the options above) into *c:
 * the syntax, numbers (>= 0, at most 3 decimals; a weight 1..1000000)
 * and a policy's name.  Tenants and flavors are checked against a state
 * with kerf_whatif_change_check.  -KERF_EINVAL with a message naming
 * the option, the value and the reason.
 */
int kerf_whatif_change_parse(const char *opt, const char *arg,
			     struct kerf_whatif_change *c, struct kerf_err *err);

/*
 * The model index of flavor name in st, its case ignored (a Tenant's
 * quota says nvidia-h100-80gb-hbm3 for the product NVIDIA-H100-80GB-HBM3),
 * or -KERF_ENOTFOUND.
 */
int kerf_whatif_flavor(const struct kerf_state *st, const char *name);

/* Does c name a tenant (not the root, not removed) and flavor of st? */
int kerf_whatif_change_check(const struct kerf_state *st,
			     const struct kerf_whatif_change *c,
			     struct kerf_err *err);

/* What one workload is before, as things are, and with the changes. */
struct kerf_whatif_outcome {
	enum kerf_wl_state state;    /* FINISHED: gone (reclaimed) */
	bool leaving;                /* running, asked to leave */
	enum kerf_pending code;      /* pending */
	char *reason;                /* pending: the core's sentence */
	char *nodes;                 /* running: "n1,n2" (each node once) */
};

struct kerf_whatif_wl {
	char *key;
	char *tenant;
	struct kerf_whatif_outcome before, as_is, what_if;
};

struct kerf_whatif_tenant {
	char *name;
	int64_t gpu_milli[3];        /* in use: before, as is, with the change */
};

struct kerf_whatif_result {
	int64_t now_ms;
	int64_t horizon_ms;
	char policy[2][32];          /* as is, with the change */
	struct kerf_whatif_wl *wl;   /* in submission order */
	size_t nr_wl;
	struct kerf_whatif_tenant *tenants;  /* in tree order */
	size_t nr_tenants;
};

void kerf_whatif_result_release(struct kerf_whatif_result *r);

/*
 * Run doc as it is and with changes[0..nr) over horizon_ms (0: the one
 * cycle at the document's clock; else cycles every cycle_ms up to the
 * horizon).  A change that does not apply to the state (unknown tenant
 * or flavor, a quota the tree refuses) is -KERF_EINVAL, naming the
 * option; a document that does not load is its error.
 */
int kerf_whatif_run(const json_t *doc, const struct kerf_whatif_change *changes,
		    size_t nr, int64_t horizon_ms, int64_t cycle_ms,
		    struct kerf_whatif_result *r, struct kerf_err *err);

/*
 * What the change does to w, against the run as it is: "Starts" (waits as
 * it is, runs with the change), "StillWaits", "Preempted" (runs now,
 * asked to leave or evicted with the change), "Waits" (would start as it
 * is, waits with the change), "Moves" (runs in both, on other nodes),
 * "Same".
 */
const char *kerf_whatif_effect(const struct kerf_whatif_wl *w);

/* The result as a WhatIf document (docs/what-if.md); NULL out of memory. */
json_t *kerf_whatif_json(const struct kerf_whatif_result *r,
			 const struct kerf_whatif_change *changes, size_t nr);

/*
 * Run scenario sc up to at_ms (<= its horizon) and return its state as a
 * document (a new reference in *doc).  hook (may be NULL) is called after
 * every event of the run, as the simulator's hook (progress reports).
 */
int kerf_whatif_scenario_doc(const struct kerf_scenario *sc, int64_t at_ms,
			     kerf_ts_hook hook, void *ctx, json_t **doc,
			     struct kerf_err *err);

#endif /* KERF_SIM_WHATIF_H */
