/*
 * check: `kerf sim check`.  Random multi-tenant scenarios (tenant trees with
 * nominal, borrowing and lending quotas, priority classes, gangs with
 * topology constraints, node failures, quota edits) run through the time
 * simulator, with every invariant checked after every event:
 *
 *   - the state's own walker (kerf_state_check): node counters, no GPU or
 *     slice held twice (node usage equals what running workloads hold),
 *     every running gang whole, quota usage equal to what was charged, no
 *     negative counter;
 *   - every tenant's claim within nominal + borrowing limit, and
 *     non-preemptible usage within nominal, unless a quota edit put it over
 *     and it has not grown since;
 *   - nothing newly placed on a cordoned (down) node.
 *
 * Nodes fail, come back, are removed and added again; quotas are edited; a
 * tenant comes late.  Every seed runs twice: the second time its
 * controller restarts at up to three random times (sim/restart.h: export
 * through JSON, rebuild from nodes and adopted workloads, import), and it
 * must make exactly the same decisions as the uninterrupted run.
 *
 * A run is fully determined by its seed; a failing seed replays alone.
 */
#ifndef KERF_SIM_CHECK_H
#define KERF_SIM_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "sim/scenario.h"

struct kerf_check_result {
	uint32_t runs;
	uint64_t events;
	uint64_t violations;
	uint64_t preemptions;           /* victims evicted for others */
	uint64_t evictions;             /* by node failures */
	uint64_t admissions;
	/* after each event, the GPUs holding two or more fractions, summed:
	 * how much the isolation invariant had to look at */
	uint64_t shared_gpu_checks;
	uint64_t tenant_gpu_checks;     /* of those, a tenant-level tenant's */
	/* after each event, MIG instances in use (each checked to be its
	 * pod's, in a legal layout) and GPUs holding two or more of them */
	uint64_t mig_instance_checks;
	uint64_t mig_shared_gpu_checks;
	uint64_t first_bad_seed;        /* valid when violations > 0 */
	char first_violation[512];
	/* restarts: each seed runs again with its controller restarted */
	uint64_t restarts;
	uint64_t adoptions;             /* running workloads adopted by them */
	uint64_t node_removals;
	uint64_t late_tenants;
	uint64_t decisions;             /* records compared, both runs */
	uint64_t mismatches;            /* seeds whose restarted run differed */
	uint64_t first_mismatch_seed;
	char first_mismatch[256];
	/* the first violation recorded since the caller cleared last.valid
	 * (kerf sim check clears it before each seed, to list them all) */
	struct {
		bool valid;
		uint64_t seed;
		int64_t time_ms;        /* simulated time of the event */
		uint64_t event;         /* the event's number in the run */
		const char *kind;       /* "arrival", "node", ... */
		char what[384];         /* the invariant broken, in words */
	} last;
};

/* Generate the random scenario of a seed (the caller releases it). */
int kerf_check_scenario(uint64_t seed, struct kerf_scenario *sc,
			struct kerf_err *err);

/*
 * The simulation of a seed, ready to run: its scenario (owned by the
 * caller, released after ts) and the node failures and quota edits.
 */
struct kerf_timesim;
int kerf_check_prepare(uint64_t seed, struct kerf_scenario *sc,
		       struct kerf_timesim *ts, struct kerf_err *err);

/* Run seeds first..first+runs-1; results accumulate into r. */
int kerf_check_run(uint64_t first, uint32_t runs, struct kerf_check_result *r,
		   struct kerf_err *err);

/*
 * The same, with tamper called after every event before the checks: a
 * test's hand that breaks the state, to show the checks catch it and the
 * run records it (tests/sim/test_check_status.c).  kerf sim check passes
 * none.
 */
typedef void (*kerf_check_tamper_fn)(void *ctx, struct kerf_timesim *ts);
int kerf_check_run_tampered(uint64_t first, uint32_t runs,
			    kerf_check_tamper_fn tamper, void *ctx,
			    struct kerf_check_result *r, struct kerf_err *err);

/* kerf sim check's exit status for r: 3 when an invariant was violated
 * or a restarted run decided differently, else 0. */
int kerf_check_status(const struct kerf_check_result *r);

#endif /* KERF_SIM_CHECK_H */
