/*
 * workload: a gang of pods admitted all together or not at all.
 *
 * A workload has pod sets (a request and a count each), a min_count (the
 * pods that must be placed together; the whole gang by default), a topology
 * constraint, a tenant (a leaf of the tenant tree) and a priority class.
 * Plain pods are workloads of one.  While running it holds one binding per
 * placed pod and the quota it was charged, so that finishing or preemption
 * gives back exactly what admission took.
 */
#ifndef KERF_CORE_WORKLOAD_H
#define KERF_CORE_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/model.h"
#include "core/resources.h"
#include "core/status.h"

enum {
	KERF_MAX_PODSETS = 8,
	/* bytes of a key, without the NUL: "namespace/name" is 63 + 1 + 253 */
	KERF_WORKLOAD_KEY_MAX = 317,
	KERF_MAX_GANG_PODS = 4096,
};

enum kerf_topology {
	KERF_TOPO_ANY = 0,     /* anywhere */
	KERF_TOPO_NODE,        /* every pod on one node */
	KERF_TOPO_NVLINK,      /* every pod in one NVLink domain */
	KERF_TOPO_PACK,        /* one node if possible, else anywhere */
};

enum kerf_wl_state {
	KERF_WL_PENDING = 0,
	KERF_WL_RUNNING,
	KERF_WL_FINISHED,
};

/* Machine-readable reason a workload is pending. */
enum kerf_pending {
	KERF_PENDING_NONE = 0,
	KERF_PENDING_NEW,          /* not yet considered */
	KERF_PENDING_CLASS,        /* class not allowed for the tenant */
	KERF_PENDING_QUOTA,        /* would pass a quota limit */
	KERF_PENDING_CAPACITY,     /* does not fit the cluster now */
	KERF_PENDING_NEVER_FITS,   /* no node could ever host a pod */
	KERF_PENDING_REQUEUED,     /* lost its pods; waits to run again */
	KERF_PENDING_PREEMPTING,   /* victims are checkpointing to make room */
	KERF_PENDING_BUDGET,       /* the tenant's GPU-hour budget is spent */
	KERF_PENDING_COUNT_,
};

const char *kerf_pending_name(enum kerf_pending p);

struct kerf_podset {
	struct kerf_pod req;       /* as placed and charged (asked[] below) */
	uint32_t count;
};

struct kerf_wl_pod {
	uint8_t set;               /* pod set index */
	struct kerf_binding b;
};

/*
 * A workload's part in preemption (core/preempt.h, core/idle.h): allocated
 * the first time it is asked to leave or nominates victims
 * (kerf_workload_preempt) and kept with the workload, for its history.
 * Most workloads never take part: their pre is NULL, which reads as this
 * struct all zero (kerf_wl_pre).
 */
struct kerf_wl_preempt {
	int64_t preempt_deadline_ms; /* > 0: asked to checkpoint and leave */
	int64_t evicted_at[3];       /* its last three evictions (ring) */
	int64_t lost_gpu_milli_ms;   /* GPU time lost to evictions */
	uint32_t *asked_by;          /* every workload that asked it to leave
					(evicted or not: cancelled too), owned */
	uint32_t *nominated;         /* pending preemptor: its victims' nodes, owned */
	uint32_t preempted_by;       /* the workload it makes room for */
	uint32_t nr_asked_by;
	uint32_t nr_victims;         /* pending: victims still leaving */
	uint32_t nr_nominated;       /* entries in nominated[] */
	uint32_t nr_preemptions;     /* times it was evicted for others */
};

struct kerf_workload {
	/* 8-byte fields, then 4-byte, then bytes: no holes (50,000 of these
	   live in kerf serve) */
	const char *key;           /* the caller's key; in the state's
				      workload's allocation (a template's is
				      borrowed, for messages) */
	void *owner;               /* the caller's, copied from the template
				      and never read by the core (kerf
				      serve: the workload's group) */
	uint64_t seq;              /* order it was first submitted in: ties of
				      submission time go by it (persisted, so
				      a restart keeps the order) */
	int64_t submit_ms;
	/* running */
	struct kerf_wl_pod *pods;  /* nr_bound entries, owned; the charge
				      follows them in the same allocation */
	int64_t start_ms;
	/* work up to here survives an eviction (core/preempt.h): set when it
	   starts, so kept here rather than in pre */
	int64_t last_checkpoint_ms;
	/* its part in preemption; NULL (read as all zero) until it takes one */
	struct kerf_wl_preempt *pre;
	/* idle reclamation (core/idle.h) */
	int64_t idle_since_ms;       /* -1: not idle */
	/* pending */
	const char *pending_text;    /* kerf_wl_no_text, or owned while
					pending (kerf_workload_set_text) */
	uint64_t pending_hash;       /* of (pending, pending_text), kept with them */
	uint64_t pending_told;       /* hash of the reason last reported */
	/*
	 * Each set's request as the caller asked it (the state keeps it,
	 * apart from the fields the cycle walks): sets[].req is resolved from
	 * it for the cluster as it stands (a hardware tenant's fraction
	 * becomes a MIG instance or a whole GPU, a MIG instance is charged
	 * its slices' share), again for pending work when the GPUs in MIG
	 * mode change.  Only isolation and tenant are resolved for a request
	 * that is neither a fraction nor MIG, whatever the cluster or the
	 * tenant: when no set asks one, asked is NULL and sets[] says what
	 * was asked (a single-pod workload saves a kerf_pod).  Read it with
	 * kerf_workload_asked.
	 */
	struct kerf_pod *asked;      /* nr_sets entries or NULL, in the
					state's workload's allocation (a
					template's may be NULL: asked as in
					sets[]); isolation and tenant 0 */
	uint64_t resolved_for;       /* cluster.mig_models sets[] was resolved for */

	uint32_t id;               /* the state's handle, never reused */
	uint32_t index;            /* its place in the state's wl[] (fewer
				      than ids: < UINT32_MAX) */
	int tenant;                /* leaf index */
	int class_idx;
	int nr_sets;
	uint32_t min_count;
	uint32_t nr_bound;
	int32_t util_pct;            /* last utilisation sample */
	/* a byte each: 50,000 workloads in kerf serve */
	enum kerf_topology topology : 8;
	enum kerf_wl_state state : 8;
	enum kerf_pending pending : 8;

	uint8_t nr_charged;
	bool nonpreemptible;
	bool borrowed;             /* admitted beyond its tenant's nominal */
	bool never_preempts;       /* preemptionPolicy Never: it queues by its
				      priority but never asks others to leave
				      (the caller's template sets it) */
	bool pdb_protected;        /* the API server would refuse its eviction
				      (a PodDisruptionBudget allows none):
				      never chosen as a victim
				      (kerf_state_protect) */
	bool idle_notified;          /* this idle stretch was reported */
	bool idle_reclaim;           /* leaving because idle: it finishes */
	bool leaving;                /* evicted, its pods not gone yet: it
					still holds its devices and charge
					(kerf_state.hold_evicted) */
	bool observed;               /* the policy has learned its pods */
	/*
	 * Last: the state allocates only the nr_sets used
	 * (kerf_workload_size), so a workload of one pod does not carry
	 * eight.  A caller's template has them all.
	 */
	struct kerf_podset sets[KERF_MAX_PODSETS];
};

/*
 * What admission charged: the first nr_charged quota dimensions (CPU,
 * memory, the GPU models known then), the others 0, after the pods in
 * their allocation (at the first multiple of 8); NULL when not running.
 * Read it whole with kerf_workload_charged.
 */
static inline size_t kerf_wl_charge_at(uint32_t nr_pods)
{
	return ((size_t)nr_pods * sizeof(struct kerf_wl_pod) + 7) & ~(size_t)7;
}

static inline int64_t *kerf_wl_charge(const struct kerf_workload *w)
{
	return w->pods ? (int64_t *)(void *)((char *)w->pods +
					     kerf_wl_charge_at(w->nr_bound)) : NULL;
}

/* The bytes of a workload with nr_sets pod sets (1 .. KERF_MAX_PODSETS). */
static inline size_t kerf_workload_size(int nr_sets)
{
	return offsetof(struct kerf_workload, sets) +
	       (size_t)nr_sets * sizeof(struct kerf_podset);
}

/*
 * w->pre, allocated (all zero) when it has none; NULL out of memory.  An
 * all-zero pre reads as none, so one made ahead of a step that may still
 * fail changes nothing.
 */
struct kerf_wl_preempt *kerf_workload_preempt(struct kerf_workload *w);

/* w->pre and its lists freed; NULL again. */
void kerf_workload_free_preempt(struct kerf_workload *w);

/*
 * What set i asked: asked[i], or without asked sets[i].req less what
 * resolving set (isolation and tenant 0).
 */
static inline struct kerf_pod kerf_workload_asked(const struct kerf_workload *w, int i)
{
	struct kerf_pod p = w->asked ? w->asked[i] : w->sets[i].req;

	p.isolation = 0;
	p.tenant = 0;
	return p;
}

/* All zero: what a workload without a part in preemption reads. */
extern const struct kerf_wl_preempt kerf_wl_no_preempt;

/* w->pre to read, kerf_wl_no_preempt without one: never written through. */
static inline const struct kerf_wl_preempt *kerf_wl_pre(const struct kerf_workload *w)
{
	return w->pre ? w->pre : &kerf_wl_no_preempt;
}

/*
 * src (the state's, sized for its sets) into a whole struct: the sets it
 * does not have zeroed.  Never copy a state's workload with '='.
 */
void kerf_workload_copy(struct kerf_workload *dst,
			const struct kerf_workload *src);

/* What w was charged, every dimension (zero when it does not run). */
void kerf_workload_charged(const struct kerf_workload *w, struct kerf_res *out);

/* Hash of a pending reason (code, sentence), never 0: w->pending_hash. */
uint64_t kerf_pending_hash(enum kerf_pending code, const char *text);

/* The text of a workload without a reason: "", shared, never freed. */
extern const char kerf_wl_no_text[];

/*
 * w->pending_text becomes a copy of text (kept as it is when equal; ""
 * is not allocated): a running workload carries no reason, so the bytes
 * are paid only while there is one.  Out of memory it says so instead.
 */
void kerf_workload_set_text(struct kerf_workload *w, const char *text);

/* w->pending_text freed (when owned), "" again. */
void kerf_workload_clear_text(struct kerf_workload *w);

/* Its key, or "(unnamed)" for a template without one: for messages. */
static inline const char *kerf_workload_name(const struct kerf_workload *w)
{
	return w->key ? w->key : "(unnamed)";
}

/*
 * Is key usable: 1 .. KERF_WORKLOAD_KEY_MAX bytes, no control
 * characters?  Names the key (escaped) and the reason.
 */
int kerf_workload_key_check(const char *key, struct kerf_err *err);

/* Total pods of all sets. */
uint32_t kerf_workload_pods(const struct kerf_workload *w);

/* Check sets, counts and min_count; names the field on error. */
int kerf_workload_validate(const struct kerf_workload *w, struct kerf_err *err);

/* Total GPU milli the whole gang asks. */
int64_t kerf_workload_gpu_milli(const struct kerf_workload *w);

#endif /* KERF_CORE_WORKLOAD_H */
