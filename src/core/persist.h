/*
 * persist: what the state knows that the cluster cannot tell it again.
 *
 * After a restart a controller rebuilds the state from what it can list:
 * nodes (kerf_state_node_upsert), tenants (kerf_state_tenant_add), the
 * running workloads with their bindings (kerf_state_adopt) and the
 * pending ones (kerf_state_submit).  What remains is history, gathered
 * here in one struct:
 *   per tenant     the usage average fair share blends in, the GPU-hour
 *                  budget spent in the current window and its warnings;
 *   per workload   the order it was submitted in (ties of submission
 *                  time), its last checkpoint, its evictions (anti-thrash
 *                  ring, lost GPU time), every workload that ever asked it
 *                  to leave (no preemption cycles), a handshake in flight,
 *                  whether it was admitted on borrowed quota, its idle
 *                  stretch, and (pending) the reason last told, whether
 *                  the policy has learned its pods, the nodes held for it;
 *   the state      the usage clock, the head-of-line reservation, the
 *                  next submission number, notices not yet told;
 *   the policy     what a learning policy has learned (opaque words).
 * Everything is named the way the cluster names it (tenant names, workload
 * keys, node names, resource dimensions by name), never by index or id, so
 * it applies to a state rebuilt in any order.
 *
 * kerf_state_export fills it; kerf_state_import checks every field first
 * (ranges, lengths, references) and changes nothing when one is wrong,
 * naming the field and the reason.  Records of workloads, tenants or nodes
 * that are gone are skipped (they finished or left while no one watched).
 * The JSON form (src/persist/) is versioned; this struct is its contents.
 */
#ifndef KERF_CORE_PERSIST_H
#define KERF_CORE_PERSIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/framework.h"
#include "core/state.h"

enum {
	KERF_PERSIST_VERSION = 1,
	KERF_PERSIST_MAX_ASKED_BY = 4096,   /* per workload */
	KERF_PERSIST_MAX_NAMES = 1 << 20,   /* nodes, workloads, tenants */
	KERF_PERSIST_MAX_POLICY_WORDS = 1 << 22,
	KERF_PERSIST_DIM_NAME_MAX = 48,
};

/* Times and amounts are bounded so that sums of a few never overflow. */
#define KERF_PERSIST_MAX_MS ((int64_t)1 << 53)
#define KERF_PERSIST_MAX_AMOUNT ((int64_t)1 << 62)

/* A quantity per resource dimension, by the dimension's name. */
struct kerf_persist_dim {
	char name[KERF_PERSIST_DIM_NAME_MAX]; /* "cpu", "memory", "gpu:<model>" */
	int64_t value;
};

struct kerf_persist_tenant {
	char *name;
	struct kerf_persist_dim *usage_avg;
	size_t nr_usage_avg;
	int64_t budget_used_milli_ms;
	int64_t budget_window_start_ms;
	int32_t budget_warned_pct;
};

struct kerf_persist_workload {
	char *key;
	uint64_t seq;
	int64_t last_checkpoint_ms;
	int64_t evicted_at_ms[3];
	uint32_t nr_preemptions;
	int64_t lost_gpu_milli_ms;
	char **asked_by;                /* keys */
	uint32_t nr_asked_by;
	/* running */
	bool borrowed;
	int64_t preempt_deadline_ms;    /* 0: not asked to leave */
	char *preempted_by;             /* key; NULL: for idleness (or none) */
	bool idle_reclaim;
	bool idle_notified;
	int64_t idle_since_ms;          /* -1: not idle */
	int32_t util_pct;
	/* pending */
	uint8_t pending;                /* enum kerf_pending */
	uint64_t pending_told;
	bool observed;
	char **nominated;               /* node names */
	uint32_t nr_nominated;
};

/* A notice issued but not yet told (NOTICE records of the next cycle). */
struct kerf_persist_notice {
	uint8_t kind;                   /* enum kerf_notice_kind */
	char *tenant;
	char *workload;                 /* key; NULL for budget notices */
	int32_t pct;
	int64_t at_ms;
};

struct kerf_persist {
	uint32_t version;
	int64_t avg_at_ms;
	int64_t half_life_ms;
	uint64_t next_seq;
	struct kerf_persist_tenant *tenants;
	size_t nr_tenants;
	struct kerf_persist_workload *workloads;
	size_t nr_workloads;
	char *reserver;                 /* key; NULL: no reservation */
	char **reserved;                /* its node names */
	size_t nr_reserved;
	struct kerf_persist_notice *notices;
	size_t nr_notices;
	char *policy;                   /* the policy whose state follows */
	int64_t *policy_state;
	size_t nr_policy_state;
};

void kerf_persist_init(struct kerf_persist *p);
void kerf_persist_release(struct kerf_persist *p);

/*
 * Everything of st (and of the policy of s, which may be NULL) that
 * persists.  -KERF_ENOMEM with p released.
 */
int kerf_state_export(const struct kerf_state *st, const struct kerf_sched *s,
		      struct kerf_persist *p);

/*
 * Check p: version, every count, length, time, amount and enum in range;
 * keys well formed.  0, or -KERF_EINVAL naming the field and the reason.
 */
int kerf_persist_validate(const struct kerf_persist *p, struct kerf_err *err);

/*
 * Apply p to a rebuilt state (and the policy of s, when p has state for a
 * policy of that name).  Validates first; nothing changes on error.
 */
int kerf_state_import(struct kerf_state *st, struct kerf_sched *s,
		      const struct kerf_persist *p, struct kerf_err *err);

/*
 * One tenant's accumulators (fair-share usage history, budget), as
 * kerf serve keeps them in a Tenant's status: x's name and usage_avg are
 * malloc'd (free both; -KERF_ENOMEM).  Imported into a live state: the
 * tenant must exist; validated first, nothing changes on error.
 */
int kerf_state_export_tenant(const struct kerf_state *st, int t,
			     struct kerf_persist_tenant *x);
int kerf_state_import_tenant(struct kerf_state *st,
			     const struct kerf_persist_tenant *x,
			     struct kerf_err *err);

#endif /* KERF_CORE_PERSIST_H */
