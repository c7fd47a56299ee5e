/*
 * state: everything the scheduling cycle decides over.  The cluster, the
 * tenant tree with its accounting, the priority classes, and the workloads
 * (pending, running, finished), plus the usage history fairness uses.
 *
 * The state owns its workloads.  Only the functions here and the cycle
 * change it, so the accounting (quota usage = what running workloads were
 * charged; node free = capacity - what running workloads hold) can be
 * re-derived and checked at any time (kerf_state_check).
 */
#ifndef KERF_CORE_STATE_H
#define KERF_CORE_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/model.h"
#include "core/priority.h"
#include "core/tenant.h"
#include "core/workload.h"

/* Things a tenant should hear about (budget warnings, idle work). */
enum kerf_notice_kind {
	KERF_NOTICE_BUDGET = 0,        /* pct of the window's budget used */
	KERF_NOTICE_IDLE,              /* a workload has been idle too long */
	KERF_NOTICE_IDLE_EVICT,        /* ... and is being reclaimed */
};

struct kerf_notice {
	int64_t at_ms;
	enum kerf_notice_kind kind;
	int tenant;
	uint32_t workload;             /* 0 for budget notices */
	int32_t pct;                   /* budget notices */
};

enum { KERF_NOTICES = 256 };           /* the last ones kept */

struct kerf_state {
	struct kerf_cluster cluster;   /* owned */
	struct kerf_tenants tenants;   /* owned */
	struct kerf_classes classes;
	struct kerf_workload **wl;     /* owned, in submission order */
	size_t nr_wl;
	size_t alloc_wl;
	uint32_t next_id;              /* ids start at 1 */
	/* fairness: usage averaged over time, per tenant */
	struct kerf_res *usage_avg;    /* nr tenants entries */
	int64_t avg_at_ms;
	int64_t half_life_ms;          /* of the usage history */
	uint32_t reserver_id;          /* holds the head-of-line reservation */
	uint8_t *reserved;             /* its nodes, one flag per slot, owned */
	size_t nr_reserved;            /* entries in reserved[] (>= slots
					  when reserver_id is set) */
	struct kerf_notice notices[KERF_NOTICES]; /* ring */
	uint64_t nr_notices;           /* ever issued */
};

void kerf_state_notice(struct kerf_state *st, enum kerf_notice_kind kind,
		       int tenant, uint32_t workload, int32_t pct, int64_t now_ms);

/*
 * Take ownership of a cluster, tenants and classes (the caller's structs are
 * left empty).  The root's capacity is set from the cluster.
 */
int kerf_state_init(struct kerf_state *st, struct kerf_cluster *cluster,
		    struct kerf_tenants *tenants,
		    const struct kerf_classes *classes, struct kerf_err *err);
void kerf_state_release(struct kerf_state *st);

/* The cluster's capacity per quota dimension. */
void kerf_state_capacity(const struct kerf_state *st, struct kerf_res *cap);

/*
 * Submit a copy of w (pending).  The tenant must be a leaf, the class must
 * exist; w->id is assigned.  Returns the id or negative.
 */
int kerf_state_submit(struct kerf_state *st, const struct kerf_workload *w,
		      int64_t now_ms, struct kerf_err *err);

struct kerf_workload *kerf_state_find(const struct kerf_state *st,
				      uint32_t id);

/* A running workload finished (or was evicted): give everything back. */
int kerf_state_finish(struct kerf_state *st, uint32_t id, int64_t now_ms,
		      struct kerf_err *err);

/*
 * A running workload lost its pods (node failure, preemption): give
 * everything back and queue it again, keeping its submission time.
 */
int kerf_state_requeue(struct kerf_state *st, uint32_t id, int64_t now_ms,
		       struct kerf_err *err);

/* Bring the usage history up to now. */
void kerf_state_age(struct kerf_state *st, int64_t now_ms);

/*
 * The invariant walker: cluster counters, tenant accounting, every running
 * gang whole (at least min_count pods bound), node usage equal to what the
 * running workloads hold, quota usage equal to what they were charged.
 */
int kerf_state_check(const struct kerf_state *st, struct kerf_err *err);

#endif /* KERF_CORE_STATE_H */
