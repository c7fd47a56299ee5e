/*
 * timesim: the discrete-event simulator in time mode.  The real core (state,
 * cycle, placement) driven by a virtual clock: workloads arrive from the
 * scenario's generators, a scheduling cycle runs every cycle_ms, admitted
 * workloads run for their duration and finish; nodes may go down and come
 * back and quotas may be edited (sim check injects these).  Everything is
 * drawn from the scenario's seed: the same scenario gives the same run.
 */
#ifndef KERF_SIM_TIMESIM_H
#define KERF_SIM_TIMESIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "base/rng.h"
#include "core/cycle.h"
#include "core/policy.h"
#include "core/state.h"
#include "base/map.h"
#include "core/decision.h"
#include "sim/event_queue.h"
#include "sim/scenario.h"

enum { KERF_TS_SHARE_BUCKETS = 1024 };

/*
 * What the simulator keeps per workload: the world's side of it (how long
 * it runs, how much work it saved), found by a handle of the simulator's
 * own.  The core's id is looked up again by key after a restart.
 */
struct kerf_ts_workload {
	char key[KERF_WORKLOAD_KEY_MAX + 1];
	uint32_t id;                /* the core's id; 0 when free */
	int tenant;                 /* for the figures, once the core forgot it */
	int class_idx;
	int64_t submit_ms;
	int64_t duration_ms;        /* run time needed */
	int64_t done_ms;            /* work saved by checkpoints so far */
	int64_t run_start_ms;       /* start of the current run */
	int64_t checkpoint_every_ms;/* 0: never checkpoints */
	int64_t deadline_ms;        /* asked to leave by then; 0: not asked */
	int64_t gpu_milli;          /* held while running (its binds) */
	uint64_t token;             /* the current run (a FINISH names it) */
	uint32_t generator;
	int64_t first_start_ms;     /* -1 until started */
	bool running;
	bool waited;                /* wait recorded */
	uint32_t next_free;         /* free list */
};

/* Time a checkpointing workload needs to answer a preemption request. */
#define KERF_TS_CHECKPOINT_MS (30 * 1000)

/* Per tenant (by tenant index) and per class figures. */
struct kerf_ts_tenant_stats {
	int64_t *waits_ms;          /* admission - submission, one per start */
	size_t nr_waits;
	size_t alloc_waits;
	uint32_t submitted;
	uint32_t admitted;
	uint32_t finished;
	uint32_t evicted;           /* by node failures */
	uint32_t preempted;         /* evicted to make room for others */
	uint32_t idle_reclaimed;    /* ended for holding GPUs idle */
	__int128 lost_gpu_milli_ms; /* GPU time lost to preemption */
	__int128 gpu_milli_ms;      /* integral of GPU quota in use */
	__int128 owed_milli_ms;     /* integral of its entitlement (sim/entitlement.h) */
	int64_t share_milli_ms[KERF_TS_SHARE_BUCKETS]; /* GPU used per bucket */
	int64_t owed_share_milli_ms[KERF_TS_SHARE_BUCKETS]; /* GPU owed per bucket */
};

struct kerf_ts_quota_edit {
	int64_t at_ms;
	int tenant;
	struct kerf_quota quota;
};

/* A tenant added (its spec, name owned) or removed (by name) mid-run. */
struct kerf_ts_tenant_edit {
	struct kerf_tenant_spec spec;
	bool remove;
};

struct kerf_timesim;

/* Called after every event (the checker's hook); non-zero stops the run. */
typedef int (*kerf_ts_hook)(void *ctx, struct kerf_timesim *ts,
			    const struct kerf_event *ev);

struct kerf_timesim {
	const struct kerf_scenario *sc;  /* borrowed */
	struct kerf_state st;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct kerf_event_queue q;
	int64_t now_ms;
	int64_t horizon_ms;
	int64_t cycle_ms;
	int64_t share_bucket_ms;     /* width of a share bucket */
	struct kerf_rng *gen_rng;    /* one stream per generator */
	uint32_t *gen_next;          /* next workload index per generator */
	int *gen_tenant;             /* resolved */
	int *gen_class;
	struct kerf_ts_workload *wl; /* by handle, [0] unused */
	size_t nr_wl;                /* handles handed out (+1) */
	size_t alloc_wl;
	uint32_t free_wl;            /* first free handle, 0 = none */
	size_t live_wl;              /* handles in use */
	struct kerf_map by_id;       /* core id -> handle */
	uint32_t *victims;           /* handles asked to leave, not gone yet */
	size_t nr_victims;
	size_t alloc_victims;
	struct kerf_decisions dec;   /* what the last call decided */
	uint64_t next_token;
	bool keep_finished;          /* tests: finished work stays in the state */
	bool no_waits;               /* keep no waits (their percentiles store
					16 bytes per start: long replays) */
	uint64_t nr_mig_steps;       /* MIG instances to create or destroy */
	uint64_t nr_binds;           /* BIND records */
	uint64_t nr_pending_told;    /* PENDING records */
	uint64_t nr_forgotten;       /* finished workloads dropped */
	uint64_t nr_restarts;        /* controller restarts (sim/restart.h) */
	uint64_t nr_adopted;         /* running workloads adopted by them */
	size_t restart_bytes;        /* JSON of the last export */
	/* the decision stream, hashed as the world sees it (keys, node names) */
	uint64_t decision_hash;
	uint64_t nr_decisions;
	FILE *decision_log;          /* each decision as a line, or NULL */
	struct kerf_ts_tenant_stats *tenant;  /* by tenant index */
	size_t nr_tenant_stats;
	struct kerf_ts_tenant_stats *cls;     /* by class index */
	int64_t *fair;               /* 3 x tenants: demand, owed, scratch */
	int64_t gpu_capacity_milli;
	struct kerf_ts_quota_edit *edits;
	size_t nr_edits;
	size_t alloc_edits;
	uint64_t nr_edits_refused;   /* quota edits the core refused */
	struct kerf_ts_tenant_edit *tenant_edits;
	size_t nr_tenant_edits;
	size_t alloc_tenant_edits;
	uint64_t nr_tenants_added;   /* late tenants that came */
	uint64_t nr_arrivals_dropped;/* arrivals for a tenant not there (yet) */
	uint64_t nr_node_removals;
	/* the nodes as the run started, for node events (names owned) */
	struct kerf_node_spec *node_specs;
	size_t nr_node_specs;
	uint64_t nr_events;
	uint64_t nr_cycles;          /* cycles run */
	uint64_t nr_cycles_skipped;  /* nothing changed since the last one */
	bool dirty;                  /* something a cycle could act on changed */
	struct kerf_cycle_stats last_cycle;
	kerf_ts_hook hook;
	void *hook_ctx;
};

int kerf_timesim_init(struct kerf_timesim *ts, const struct kerf_scenario *sc,
		      struct kerf_err *err);

/*
 * The same with a state built by the caller (taken over; left empty), for
 * trace replays whose cluster and tenants do not come from a scenario file.
 */
int kerf_timesim_init_state(struct kerf_timesim *ts,
			    const struct kerf_scenario *sc,
			    struct kerf_state *st, struct kerf_err *err);
void kerf_timesim_release(struct kerf_timesim *ts);

/* What happens to a node (kerf_timesim_node_event). */
enum kerf_ts_node_change {
	KERF_TS_NODE_UP = 0,        /* back (uncordoned), or added again */
	KERF_TS_NODE_DOWN,          /* failed: its work is requeued */
	KERF_TS_NODE_REMOVE,        /* gone from the cluster */
	KERF_TS_GPU_DOWN,           /* one GPU out of service: nothing new
				       there, its pods stay */
	KERF_TS_GPU_UP,             /* that GPU back in service */
};

/*
 * Schedule a change of node i (the i-th node in rank order when the run
 * started) at at_ms.  A removed node comes back with UP, as it was.
 */
int kerf_timesim_node_event(struct kerf_timesim *ts, int64_t at_ms,
			    uint32_t node, enum kerf_ts_node_change change);

/*
 * Schedule GPU gpu of node i (as kerf_timesim_node_event) out of service
 * (KERF_TS_GPU_DOWN) or back (KERF_TS_GPU_UP) at at_ms, as the node
 * agent's mark does in kerf serve; a GPU the node lacks is ignored.
 */
int kerf_timesim_gpu_event(struct kerf_timesim *ts, int64_t at_ms,
			   uint32_t node, unsigned gpu,
			   enum kerf_ts_node_change change);

/* Schedule a quota edit. */
int kerf_timesim_quota_event(struct kerf_timesim *ts, int64_t at_ms,
			     int tenant, const struct kerf_quota *quota);

/*
 * After the state was replaced (sim/restart.h): a new policy and scheduler
 * for it, and the simulator's records found again by key.
 */
int kerf_timesim_rebind(struct kerf_timesim *ts, struct kerf_err *err);

/*
 * Schedule a tenant added (spec; its parent by index as the tree stands
 * then) or removed (spec->name) at at_ms.  A generator of a tenant not
 * there when a workload would arrive drops that workload.
 */
int kerf_timesim_tenant_event(struct kerf_timesim *ts, int64_t at_ms,
			      const struct kerf_tenant_spec *spec, bool remove);

/* Run to the horizon. */
int kerf_timesim_run(struct kerf_timesim *ts, struct kerf_err *err);

/* Workloads submitted so far (finished ones included). */
uint64_t kerf_timesim_submitted(const struct kerf_timesim *ts);

/* Percentile p (0..100) of a tenant's or class's waits, -1 when none. */
int64_t kerf_ts_wait_pct(const struct kerf_ts_tenant_stats *s, int p);

#endif /* KERF_SIM_TIMESIM_H */
