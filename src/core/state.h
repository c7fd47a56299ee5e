/*
 * state: everything the scheduling cycle decides over, and the events that
 * change it.  The cluster, the tenant tree with its accounting, the
 * priority classes, the workloads (pending, running, finished), plus the
 * usage history fairness uses.
 *
 * The state is driven the way a controller's cache is (kube-scheduler's
 * AddNode / UpdateNode / RemoveNode, AssumePod / ForgetPod):
 *   nodes      kerf_state_node_upsert, _node_remove, _node_lost;
 *   workloads  kerf_state_submit (pending), kerf_state_adopt (already
 *              running, after a restart), kerf_state_forget (drop it);
 *   tenants    kerf_state_tenant_add, _tenant_update, _tenant_remove;
 *   acks       kerf_state_started (its pods run), kerf_state_checkpointed,
 *              kerf_state_finish (its pods are gone), kerf_preempt_ack;
 * and kerf_cycle_run decides.  Every event is validated first and changes
 * nothing when it fails, with an error naming the field and the reason.
 * Events that make work leave append EVICT records to a decision list
 * (core/decision.h).
 *
 * Workloads are known by the caller's key (a Kubernetes UID or
 * namespace/name) and, inside the core, by an id the state assigns (never
 * reused within its life; ids differ after a restart, keys do not).
 * Nothing decided depends on ids or on the order workloads are held in:
 * ties break on submission time, then the order they were first
 * submitted in (seq, part of the exported state), then key.
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
#include "base/map.h"
#include "core/decision.h"
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

/* usage_avg's ceiling (persisted amounts stay within 2^62) */
#define KERF_USAGE_AVG_MAX ((int64_t)1 << 62)

struct kerf_state {
	struct kerf_cluster cluster;   /* owned */
	struct kerf_tenants tenants;   /* owned */
	struct kerf_classes classes;
	struct kerf_workload **wl;     /* owned, in no particular order */
	size_t nr_wl;
	size_t alloc_wl;
	struct kerf_map by_id;         /* id -> workload */
	struct kerf_map by_key;        /* key -> workload */
	uint32_t next_id;              /* ids start at 1 */
	uint64_t next_seq;             /* submission order, persisted */
	/* fairness: usage averaged over time, per tenant */
	/*
	 * One per tenant slot, in 1/65536 of the usage unit: a controller
	 * ages it every second, and a second's share of an hour's half-life
	 * is far below one unit.
	 */
	struct kerf_res *usage_avg;
	size_t alloc_usage_avg;
	int64_t avg_at_ms;
	int64_t half_life_ms;          /* of the usage history */
	uint32_t reserver_id;          /* holds the head-of-line reservation */
	uint8_t *reserved;             /* its nodes, one flag per slot, owned */
	size_t nr_reserved;            /* entries in reserved[] (>= slots
					  when reserver_id is set) */
	struct kerf_notice notices[KERF_NOTICES]; /* ring */
	uint64_t nr_notices;           /* ever issued */
	/* notices not yet reported as decisions (ring positions) */
	uint64_t notices_told;
	/*
	 * Evictions keep the evicted workload's devices until its pods are
	 * gone (kerf_state_finish): on a live cluster a pod evicted is
	 * still there for its grace period, or for as long as a disruption
	 * budget refuses.  Off (the simulator): an eviction frees them at
	 * once and queues the workload again.
	 */
	bool hold_evicted;
	/*
	 * The caller keeps workload keys unique and rarely looks one up by
	 * key (kerf serve's world has its own map of them): by_key is not
	 * kept, and kerf_state_find_key_* walk the workloads.  Set before
	 * the first submission.
	 */
	bool no_key_map;
	/*
	 * The caller keeps each workload's key alive and unchanged until the
	 * workload is forgotten (kerf serve's world: its group's key), so
	 * the state points at it rather than keeping a copy.  Set before
	 * the first submission.
	 */
	bool borrow_keys;
	/*
	 * No running workload's checkpoint deadline falls before this
	 * (kerf_preempt_expire walks the workloads only from then on; 0 on
	 * a fresh state: walk).  Lowered wherever a deadline is set.
	 */
	int64_t deadline_hint_ms;
};

void kerf_state_notice(struct kerf_state *st, enum kerf_notice_kind kind,
		       int tenant, uint32_t workload, int32_t pct, int64_t now_ms);

/*
 * Take ownership of a cluster, tenants and classes (the caller's structs are
 * left empty).  The root's capacity is set from the cluster and follows it.
 */
int kerf_state_init(struct kerf_state *st, struct kerf_cluster *cluster,
		    struct kerf_tenants *tenants,
		    const struct kerf_classes *classes, struct kerf_err *err);
void kerf_state_release(struct kerf_state *st);

/* The cluster's capacity per quota dimension. */
void kerf_state_capacity(const struct kerf_state *st, struct kerf_res *cap);

/* --- workloads ------------------------------------------------------- */

/*
 * Submit a copy of w, pending, under key (1 .. KERF_WORKLOAD_KEY_MAX bytes,
 * unique among the state's workloads), submitted at submit_ms (the
 * caller's clock: a restart keeps a workload's age).  The tenant must be a
 * leaf, the class must exist.  Returns the id or negative.
 */
int kerf_state_submit(struct kerf_state *st, const char *key,
		      const struct kerf_workload *w, int64_t submit_ms,
		      struct kerf_err *err);

/*
 * A workload already running with the given bindings (pods[k].set names
 * its pod set; the counts per set must not exceed the sets', and at least
 * min_count pods are given): bound and charged to its tenant's quota as
 * admission would, running since start_ms.  Its sets' req is the shape it
 * was bound with, used as given (and asked, when not all zero, what it
 * asked first, when its asked is not NULL: struct kerf_workload).  Quota is charged even over a
 * limit (the work runs already); bindings that do not fit the nodes, name
 * a node that is not there, or break the topology constraint are refused
 * with the pod and the reason, nothing changed.  Returns the id.
 */
int kerf_state_adopt(struct kerf_state *st, const char *key,
		     const struct kerf_workload *w, int64_t submit_ms,
		     int64_t start_ms, const struct kerf_wl_pod *pods,
		     uint32_t nr_pods, struct kerf_err *err);

/*
 * Drop a workload that is pending (withdrawn) or finished.  A running one
 * must finish first (-KERF_EBUSY).  A pending preemptor's victims are let
 * stay (CANCEL records appended to out, which may be NULL when there are
 * none to tell).
 */
int kerf_state_forget(struct kerf_state *st, uint32_t id, int64_t now_ms,
		      struct kerf_decisions *out, struct kerf_err *err);

struct kerf_workload *kerf_state_find_mut(struct kerf_state *st, uint32_t id);
const struct kerf_workload *kerf_state_find_const(const struct kerf_state *st,
						  uint32_t id);
struct kerf_workload *kerf_state_find_key_mut(struct kerf_state *st,
					      const char *key);
const struct kerf_workload *
kerf_state_find_key_const(const struct kerf_state *st, const char *key);

/* A const state gives const workloads. */
#define kerf_state_find(st, id)                                                \
	_Generic((st), const struct kerf_state *: kerf_state_find_const,      \
		 struct kerf_state *: kerf_state_find_mut)(st, id)
#define kerf_state_find_key(st, key)                                           \
	_Generic((st), const struct kerf_state *: kerf_state_find_key_const,  \
		 struct kerf_state *: kerf_state_find_key_mut)(st, key)

/* Its pods run (from now on its work counts): the adapter saw them start. */
int kerf_state_started(struct kerf_state *st, uint32_t id, int64_t now_ms,
		       struct kerf_err *err);

/* It saved its work up to at_ms (<= now_ms): less is lost if it must go. */
int kerf_state_checkpointed(struct kerf_state *st, uint32_t id, int64_t at_ms,
			    int64_t now_ms, struct kerf_err *err);

/* A running workload finished (its pods are gone): give everything back. */
int kerf_state_finish(struct kerf_state *st, uint32_t id, int64_t now_ms,
		      struct kerf_err *err);

/*
 * A running workload's pods are being deleted (found so after a
 * restart): it leaves, holding its devices until kerf_state_finish, and
 * is never asked to leave again.  No decision.
 */
int kerf_state_leaving(struct kerf_state *st, uint32_t id, struct kerf_err *err);

/*
 * Workload id may (on false) or may not (on true) be chosen as a victim
 * of preemption: the caller knows its eviction would be refused (a
 * PodDisruptionBudget that allows no disruption).  A handshake already
 * started goes on.  -KERF_ENOTFOUND for an unknown id.  No decision.
 */
int kerf_state_protect(struct kerf_state *st, uint32_t id, bool on,
		       struct kerf_err *err);

/*
 * A running workload lost its pods (node failure, preemption): give
 * everything back and queue it again, keeping its submission time.
 */
int kerf_state_requeue(struct kerf_state *st, uint32_t id, int64_t now_ms,
		       struct kerf_err *err);

/* --- nodes ----------------------------------------------------------- */

/*
 * Add or update a node (core/model.h's kerf_cluster_upsert_node).  When
 * its shape changes under running work, that work is requeued first
 * (EVICT, NODE_CHANGED, appended to out).  The root's capacity follows.
 * Returns the slot.
 */
int kerf_state_node_upsert(struct kerf_state *st,
			   const struct kerf_node_spec *spec, int64_t now_ms,
			   struct kerf_decisions *out, struct kerf_err *err);

/*
 * The node failed: it is cordoned and everything with a pod there is
 * requeued (EVICT, NODE_LOST).  It stays, cordoned, until an upsert says it
 * is back or it is removed.
 */
int kerf_state_node_lost(struct kerf_state *st, uint32_t slot, int64_t now_ms,
			 struct kerf_decisions *out, struct kerf_err *err);

/*
 * The node is gone: what ran there is requeued (EVICT, NODE_GONE), room
 * held there for preemptors is let go, and its slot is freed.
 */
int kerf_state_node_remove(struct kerf_state *st, uint32_t slot,
			   int64_t now_ms, struct kerf_decisions *out,
			   struct kerf_err *err);

/*
 * The index of GPU model name, added when new (kerf_cluster_model): a
 * model that appears after the state was made (a node of a new kind
 * joins a live cluster) also becomes a quota dimension of every tenant,
 * with nothing guaranteed and no limit on borrowing, so work can use it
 * at once and a tenant's quota can be given for it.  Nothing changes on
 * error.
 */
int kerf_state_model(struct kerf_state *st, const char *name,
		     int32_t gpu_mem_mib, struct kerf_err *err);

/* The same for a flavor of hardware model hw (kerf_cluster_model_hw). */
int kerf_state_model_hw(struct kerf_state *st, const char *name, const char *hw,
			int32_t gpu_mem_mib, struct kerf_err *err);

/* --- tenants --------------------------------------------------------- */

/*
 * What a tenant is, as configured (everything but its accounting): name,
 * parent (index), quota, weight, classes, isolation, budget limits and
 * idle policy.
 */
struct kerf_tenant_spec {
	const char *name;
	int parent;
	struct kerf_quota quota;
	uint32_t weight;               /* >= 1 */
	uint32_t allowed_classes;      /* 0 = all */
	enum kerf_isolation isolation;
	int64_t budget_limit_milli_ms; /* 0 = none */
	int64_t budget_window_ms;
	enum kerf_budget_action budget_action;
	int32_t budget_model_weight_pct[KERF_MAX_MODELS]; /* cost of a GPU-hour
							     per model (100 %) */
	struct kerf_idle_policy idle;
};

/*
 * Add a tenant under parent.  A parent that is a leaf with workloads of its
 * own cannot take children (-KERF_EBUSY).  Returns the index.
 */
int kerf_state_tenant_add(struct kerf_state *st,
			  const struct kerf_tenant_spec *spec,
			  struct kerf_err *err);

/*
 * Change tenant t to spec (its name and parent must stay).  Usage is kept;
 * a quota now below it only holds new work back.  The isolation level
 * applies to work submitted from now on.
 */
int kerf_state_tenant_update(struct kerf_state *st, int t,
			     const struct kerf_tenant_spec *spec,
			     struct kerf_err *err);

/*
 * Remove tenant t: a leaf without workloads, or a tenant whose children
 * are all gone (-KERF_EBUSY otherwise).  Its index is not reused.
 */
int kerf_state_tenant_remove(struct kerf_state *st, int t, struct kerf_err *err);

/* The spec of tenant t as it stands. */
void kerf_state_tenant_spec(const struct kerf_state *st, int t,
			    struct kerf_tenant_spec *spec);

/* --- for the cycle ---------------------------------------------------- */

/* The quota of w's pods at these bindings (models of their nodes). */
void kerf_state_charge_of(const struct kerf_state *st,
			  const struct kerf_workload *w,
			  const struct kerf_wl_pod *pods, uint32_t nr,
			  struct kerf_res *req);

/*
 * Admit pending w: its pods are bound in the cluster already (placed by
 * the cycle through the scheduler), charge is the quota of that placement.
 * w holds the bindings and the charge and runs from now_ms; a BIND record
 * per pod (after the MIG steps its instances need) is appended to out.
 * -KERF_ENOMEM with nothing recorded (the pods stay bound: the caller
 * rolls them back).  Its undo is kerf_state_finish / kerf_state_requeue.
 */
int kerf_state_admit(struct kerf_state *st, struct kerf_workload *w,
		     const struct kerf_wl_pod *pods, uint32_t nr,
		     const struct kerf_res *charge, int64_t now_ms,
		     struct kerf_decisions *out, struct kerf_err *err);

/*
 * The victims still leaving for w may stay: a CANCEL each, in seq order
 * (room for w->nr_victims records must be in out; out may be NULL).
 */
void kerf_state_cancel_victims(struct kerf_state *st, struct kerf_workload *w,
			       int64_t now_ms, struct kerf_decisions *out);

/*
 * Pending work resolved for other models in MIG mode than the cluster has
 * now is resolved again from what it asked (kerf_workload.asked), so
 * what waits is sized for the cluster as it is, whenever it was submitted.
 */
void kerf_state_resolve_pending(struct kerf_state *st);

/* Sort workloads by seq (the order decisions are told in). */
void kerf_state_sort_by_seq(struct kerf_workload **v, size_t n);

/* --- time ------------------------------------------------------------ */

/* Bring the usage history up to now. */
void kerf_state_age(struct kerf_state *st, int64_t now_ms);

/*
 * The invariant walker: cluster counters, tenant accounting, every running
 * gang whole (at least min_count pods bound), node usage equal to what the
 * running workloads hold, quota usage equal to what they were charged, the
 * id and key maps equal to the workloads.
 */
int kerf_state_check(const struct kerf_state *st, struct kerf_err *err);

#endif /* KERF_CORE_STATE_H */
