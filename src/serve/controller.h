/*
 * controller: kerf serve's loop, without its process concerns (flags,
 * signals, the HTTP endpoints).  Informers keep caches of Nodes, Pods,
 * Namespaces and Tenants and feed every change to the world
 * (serve/world.h); once every cache has synced and this replica leads
 * (serve/leader.h, when leader election is on), a scheduling cycle runs
 * whenever something changed (and at least every resync interval), and
 * its actions go out through the API (kobj/request.h): bindings,
 * PodScheduled=False with an Event, checkpoint requests, evictions.
 * A gang's bindings go out only after its plan (kerf.io/planned-node and
 * the devices) was written on every member, the first alone, the rest
 * once it landed; so a gang a crash left partly bound carries what it
 * needs to be finished (serve/world.h).  Single pods bind at once.
 *
 * Single-threaded: kerf_controller_step does what is due and says how
 * long the caller may wait in the API client's poll.
 */
#ifndef KERF_SERVE_CONTROLLER_H
#define KERF_SERVE_CONTROLLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "kube/informer.h"
#include "kube/ops.h"
#include "serve/crash.h"
#include "serve/histogram.h"
#include "serve/leader.h"
#include "serve/world.h"

struct kerf_controller_opts {
	const struct kerf_kube_ops *ops;   /* borrowed */
	const char *scheduler_name;        /* "kerf" */
	const char *policy;                /* "kerf" */
	const char *identity;              /* reportingInstance, lease holder */
	bool leader_elect;
	struct kerf_elector_config lease;  /* with leader_elect */
	int64_t resync_ms;                 /* cycle at least this often (1 s) */
	int64_t status_ms;                 /* Tenant status at most this often (10 s) */
	uint64_t seed;
	struct kerf_crash crash;           /* a crash point (serve/crash.h) */
};

/* What the controller did, for /metrics and the tests. */
struct kerf_controller_stats {
	uint64_t cycles;
	uint64_t cycle_ms_total;
	uint64_t cycle_ms_max;
	struct kerf_hist_ms cycle_hist;    /* the cycles' durations */
	uint64_t binds_sent, binds_ok, binds_conflict, binds_failed;
	uint64_t binds_already;            /* 409: bound already, where we bind */
	uint64_t plans_sent;               /* gangs' plan patches sent */
	uint64_t plans_failed;             /* gangs placed again: plan failed */
	uint64_t binds_retried;            /* sent again: the pod stayed unbound */
	uint64_t binds_given_up;           /* placed anew after failing attempts */
	uint64_t pending_sent, events_sent;
	uint64_t preempts_sent, evictions_sent, evictions_blocked;
	uint64_t requests_failed;
	uint64_t statuses_sent;     /* Tenant and GPUPool /status patches */
	uint64_t tenants_restored;         /* histories restored at start */
	uint64_t objects_refused;          /* objects that did not decode */
	uint64_t world_errors;             /* world calls that failed */
	char last_error[256];
};

struct kerf_controller;
struct kerf_informer;

int kerf_controller_new(const struct kerf_controller_opts *opts,
			struct kerf_controller **out, struct kerf_err *err);
void kerf_controller_free(struct kerf_controller *c);

/* Start the informers (and the election). */
int kerf_controller_start(struct kerf_controller *c, struct kerf_err *err);

/*
 * Do what is due at now_ms: informer pauses, the lease, a cycle and its
 * actions.  Returns the milliseconds the caller may wait in poll.
 */
int64_t kerf_controller_step(struct kerf_controller *c, int64_t now_ms);

/*
 * What readiness waits for, into out[size]: each cache not synced yet
 * with its last error ("" when every cache synced).
 */
void kerf_controller_waiting(const struct kerf_controller *c, char *out,
			     size_t size);

/* Every cache synced (readiness). */
bool kerf_controller_synced(const struct kerf_controller *c);
bool kerf_controller_leading(const struct kerf_controller *c, int64_t now_ms);
/* Requests of ours still in flight. */
unsigned kerf_controller_in_flight(const struct kerf_controller *c);

const struct kerf_controller_stats *
kerf_controller_stats(const struct kerf_controller *c);
const struct kerf_world *kerf_controller_world(const struct kerf_controller *c);

/*
 * Informer k (0, 1, ... until NULL) and its resource ("pods", "nodes",
 * ...), for metrics.
 */
const struct kerf_informer *
kerf_controller_informer(const struct kerf_controller *c, unsigned k,
			 const char **resource);

/*
 * The counters of every informer summed into *sum (lists, relists, watch
 * restarts, 410s, errors ...; last_error is the first informer's that has
 * one), for tests and metrics that ask whether the caches saw faults.
 */
void kerf_controller_informer_totals(const struct kerf_controller *c,
				     struct kerf_informer_stats *sum);

/*
 * A number that changes whenever a cached Namespace, Tenant,
 * PriorityClass, GPUPool or Node changes: the inputs of the admission
 * webhook's policy snapshot.
 */
uint64_t kerf_controller_policy_generation(const struct kerf_controller *c);

/*
 * A new sealed admission snapshot (admission/policy.h) of what the caches
 * hold now, with settings cfg: every namespace and its tenant, every
 * Tenant, PriorityClass and accepted GPUPool (with the GPUs of the nodes
 * it selects).  0 or -KERF_ENOMEM.
 */
struct kerf_admission_config;
struct kerf_admission_policy;
int kerf_controller_admission_policy(const struct kerf_controller *c,
				     const struct kerf_admission_config *cfg,
				     struct kerf_admission_policy **out);

/* On shutdown: give the lease back (a request; poll until in_flight is 0). */
void kerf_controller_stop(struct kerf_controller *c, int64_t now_ms);

#endif
