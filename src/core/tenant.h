/*
 * tenant: the tenant tree, its quotas, and the quota accounting of admitted
 * work.
 *
 * The tree is organisation -> team -> project (any depth); index 0 is the
 * root, the cluster itself, whose nominal quota is the cluster's capacity.
 * Parents come before their children.  Work is charged to leaves only.
 *
 * Per tenant and quota dimension (core/resources.h):
 *   nominal       guaranteed: reachable at any time, by reclaiming what
 *                 others borrowed (children's nominals sum to at most the
 *                 parent's);
 *   borrow_limit  how far usage may go beyond nominal, using what siblings
 *                 lend (KERF_QTY_INF: no limit);
 *   lend_limit    how much of its idle nominal siblings may borrow
 *                 (KERF_QTY_INF: all of it).
 *
 * Admission rule, as claims.  The protected part of a tenant's nominal is
 * nominal - lend_limit: it is never lent.  A tenant's claim is
 *     leaf:      max(usage, protected)
 *     internal:  max(sum of children's claims, protected)
 * and every tenant's claim below the root must stay within nominal +
 * borrow_limit.  (The root is bounded by what physically fits, which
 * placement enforces: a failed node must not block every admission.)  So a
 * tenant may borrow what its
 * siblings do not use and do not protect, and a lender that wants its quota
 * back gets it by reclaiming (preempting) borrowed work.  Non-preemptible
 * work must in addition fit within nominal at every level, in every
 * dimension the tenant has a quota for (kerf_tenant_governs), so it never
 * depends on borrowed capacity.
 *
 * Pure: integers only, no I/O.
 */
#ifndef KERF_CORE_TENANT_H
#define KERF_CORE_TENANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/resources.h"

enum {
	KERF_MAX_TENANTS = 1 << 16,
	KERF_TENANT_NAME_MAX = 64,     /* bytes, including the NUL */
	KERF_TENANT_ROOT = 0,
};

/* What a tenant's exhausted GPU-hour budget does to its new work. */
enum kerf_budget_action {
	KERF_BUDGET_HOLD = 0,             /* hold all new work */
	KERF_BUDGET_PREEMPTIBLE_ONLY,     /* admit preemptible work only */
};

/* GPU-hour budget of a tenant (its whole subtree), per window. */
struct kerf_budget {
	int64_t limit_milli_ms;        /* GPU milli x ms per window; 0 = none */
	int64_t window_ms;
	enum kerf_budget_action action;
	int32_t model_weight_pct[KERF_MAX_MODELS]; /* cost of a GPU-hour per
						    * model, percent (100) */
	int64_t used_milli_ms;         /* in the current window */
	int64_t window_start_ms;
	int32_t warned_pct;            /* highest threshold warned this window */
};

enum kerf_idle_action {
	KERF_IDLE_NONE = 0,
	KERF_IDLE_NOTIFY,              /* say so, once per idle stretch */
	KERF_IDLE_CHECKPOINT_EVICT,    /* checkpoint handshake, then evict */
};

/* Idle reclamation of a tenant's workloads. */
struct kerf_idle_policy {
	enum kerf_idle_action action;
	int32_t below_pct;             /* utilisation under this is idle */
	int64_t after_ms;              /* for this long */
	uint32_t exempt_classes;       /* class mask never reclaimed */
};

struct kerf_quota {
	struct kerf_res nominal;
	struct kerf_res borrow_limit;  /* KERF_QTY_INF = unlimited */
	struct kerf_res lend_limit;    /* KERF_QTY_INF = all of nominal */
};

struct kerf_tenant {
	char name[KERF_TENANT_NAME_MAX];
	int parent;                    /* index; -1 for the root */
	int depth;                     /* root 0 */
	int nr_children;
	uint32_t weight;               /* fair-share weight, >= 1 */
	uint32_t allowed_classes;      /* bit i = priority class i; 0 = all */
	enum kerf_isolation isolation;
	struct kerf_quota quota;
	struct kerf_budget budget;
	struct kerf_idle_policy idle;
	/* accounting, kept by kerf_quota_charge / kerf_quota_release */
	struct kerf_res usage;         /* admitted work in the subtree */
	struct kerf_res usage_np;      /* of which non-preemptible */
	struct kerf_res usage_own;     /* of which admitted within nominal */
	struct kerf_res claim;         /* see the file header */
	struct kerf_res child_claims;  /* sum of the children's claims */
	/* kept by the state (core/state.h), leaves only */
	uint32_t nr_workloads;         /* held by the state, any state */
	uint32_t nr_pending;           /* of which pending */
	int64_t pending_gpu_milli;     /* GPU milli the pending ones ask */
	bool removed;                  /* gone: an empty slot, never found */
};

struct kerf_tenants {
	struct kerf_tenant *t;         /* [0] is the root */
	size_t nr;
	size_t alloc;
	int nr_res;                    /* dimensions in use */
};

/* A tree holding only the root, "cluster", with zero capacity. */
int kerf_tenants_init(struct kerf_tenants *tt, int nr_res);
void kerf_tenants_release(struct kerf_tenants *tt);
int kerf_tenants_copy(struct kerf_tenants *dst, const struct kerf_tenants *src);

/* Set the root's nominal (the capacity) to cap. */
void kerf_tenants_set_capacity(struct kerf_tenants *tt,
			       const struct kerf_res *cap);

/*
 * Add a tenant under parent (an existing index).  quota may be NULL (all
 * zero nominal, unlimited borrowing, all lendable).  Returns the index.
 */
int kerf_tenants_add(struct kerf_tenants *tt, const char *name, int parent,
		     const struct kerf_quota *quota, uint32_t weight,
		     struct kerf_err *err);

/* The index of the tenant called name (removed ones are not found). */
int kerf_tenants_find(const struct kerf_tenants *tt, const char *name);

/* Undo the last kerf_tenants_add. */
void kerf_tenants_pop(struct kerf_tenants *tt);

/*
 * Remove tenant t (no children, nothing charged): it keeps its index as an
 * empty slot with no quota, so no other index moves.
 */
void kerf_tenants_remove(struct kerf_tenants *tt, int t);

static inline bool kerf_tenant_is_leaf(const struct kerf_tenant *t)
{
	return t->nr_children == 0;
}

/*
 * Replace a tenant's quota (a quota edit).  Usage is kept; if it is now over
 * a limit, nothing new is admitted there until it is back under
 * (kerf_tenants_over_limit), and no counter ever goes negative.
 */
int kerf_tenants_set_quota(struct kerf_tenants *tt, int tenant,
			   const struct kerf_quota *quota);

/* Default quota: nominal 0, borrow unlimited, lend all. */
void kerf_quota_default(struct kerf_quota *q);

/*
 * Check the configuration: children's nominals fit in the parent's, lend
 * limits within nominal.  Names the tenant, dimension and numbers.
 */
int kerf_tenants_validate(const struct kerf_tenants *tt,
			  const struct kerf_cluster *c, struct kerf_err *err);

/*
 * The same for a change of tenant t alone: its quota, its children's
 * nominals within its own, and its siblings' within its parent's (below
 * the root only: the cluster may shrink under guarantees made).
 */
int kerf_tenants_validate_one(const struct kerf_tenants *tt, int t,
			      const struct kerf_cluster *c, struct kerf_err *err);

/* Why a request does not fit. */
struct kerf_quota_verdict {
	bool fits;
	int tenant;          /* where it does not fit */
	int res;             /* dimension */
	int64_t need;        /* claim or usage it would reach */
	int64_t limit;       /* what is allowed there */
	bool nominal_only;   /* failed the non-preemptible rule */
};

/*
 * Would charging req to leaf keep every claim within its limit (and, for
 * non-preemptible work, usage within nominal)?  Changes nothing.
 */
bool kerf_quota_fits(const struct kerf_tenants *tt, int leaf,
		     const struct kerf_res *req, bool nonpreemptible,
		     struct kerf_quota_verdict *why);

/* Charge / release admitted work; release refuses to go negative. */
void kerf_quota_charge(struct kerf_tenants *tt, int leaf,
		       const struct kerf_res *req, bool nonpreemptible);
int kerf_quota_release(struct kerf_tenants *tt, int leaf,
		       const struct kerf_res *req, bool nonpreemptible,
		       struct kerf_err *err);

/*
 * Work admitted within nominal ("own", not borrowed) is also counted apart,
 * so that which workloads are borrowed does not depend on admission order
 * (core/preempt.h).  Charged and released alongside the plain charge.
 */
void kerf_quota_charge_own(struct kerf_tenants *tt, int leaf,
			   const struct kerf_res *req);
void kerf_quota_release_own(struct kerf_tenants *tt, int leaf,
			    const struct kerf_res *req);

/*
 * Recompute usage sums and claims from the leaves and compare: the
 * invariant walker: counters in range, sums equal to the children's,
 * claims as recomputed.  A claim over its limit is not an error here (a
 * quota edit below usage leaves one until the work ends).
 */
int kerf_tenants_check(const struct kerf_tenants *tt, struct kerf_err *err);

/* Is a (claim over limit) anywhere on the path of leaf?  For quota edits. */
bool kerf_tenants_over_limit(const struct kerf_tenants *tt, int tenant,
			     int *res);

/*
 * Does the tenant have a quota in dimension i at all?  A dimension with no
 * nominal and unlimited borrowing is not governed: nothing is guaranteed
 * there, so "within nominal" and "borrowing" do not apply to it.
 */
bool kerf_tenant_governs(const struct kerf_tenants *tt, int tenant, int i);

/* The limit of a tenant's claim in dimension i. */
int64_t kerf_tenant_limit(const struct kerf_tenants *tt, int tenant, int i);

#endif /* KERF_CORE_TENANT_H */
