/*
 * kobj/tenant: the Tenant custom resource (kerf.io/v1alpha1, schema in
 * deploy/crds/tenants.kerf.io.yaml, fields in docs/api.md) and kerf's
 * tenant spec, both ways.
 *
 *   kerf_kobj_tenant_decode   a Tenant object -> struct kerf_kobj_tenant:
 *                             every field checked, quantities in the core's
 *                             units, names kept as names;
 *   kerf_kobj_tenant_spec     -> struct kerf_tenant_spec for
 *                             kerf_state_tenant_add / _update, the names
 *                             resolved against the cluster's flavors and
 *                             the priority classes;
 *   kerf_kobj_tenant_status_* what kerf serve writes to /status, and reads
 *                             back after a restart: usage, borrowed,
 *                             pending, budget, conditions, and the
 *                             accumulators of core/persist.h for this
 *                             tenant (status.history).
 *
 * Units: a GPU flavor's quotas are GPU-milli (a quantity of GPUs: "2.5"
 * and "2500m" are 2500), cpu is milli-cores, memory MiB (bytes rounded
 * up).  The decoder never trusts that the API server validated: a CRD may
 * be installed without CEL, objects may be older than a rule.  Pure: no I/O.
 */
#ifndef KERF_KOBJ_TENANT_H
#define KERF_KOBJ_TENANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "core/persist.h"
#include "core/priority.h"
#include "core/resources.h"
#include "core/state.h"
#include "kobj/kobj.h"

enum {
	KERF_KOBJ_MAX_QUOTAS = KERF_MAX_RES,   /* cpu, memory, 64 GPU flavors */
	KERF_KOBJ_MAX_FLAVOR_WEIGHTS = KERF_MAX_MODELS,
};

/* Bounds of a quota, per flavor kind (the scenario files' bounds). */
#define KERF_KOBJ_MAX_QUOTA_GPU_MILLI ((int64_t)1000000000)  /* 1e6 GPUs */
/* GPU-hours of a budget: at most 1e9 (in GPU-milli-hours 1e12). */
#define KERF_KOBJ_MAX_BUDGET_MILLI_HOURS ((int64_t)1000000000000)

/* The quota of one flavor, in the flavor's unit. */
struct kerf_kobj_quota {
	char flavor[KERF_KOBJ_NAME_MAX];  /* a GPUPool, "cpu" or "memory" */
	int64_t nominal;
	int64_t borrow_limit;             /* KERF_QTY_INF: no limit */
	int64_t lend_limit;               /* KERF_QTY_INF: all of nominal */
};

struct kerf_kobj_flavor_weight {
	char flavor[KERF_KOBJ_NAME_MAX];
	int32_t pct;                      /* 0 .. 10000: 100 = one GPU-hour */
};

/* A decoded Tenant. */
struct kerf_kobj_tenant {
	char name[KERF_KOBJ_NAME_MAX];    /* metadata.name */
	int64_t generation;               /* metadata.generation, 0 if absent */
	char parent[KERF_KOBJ_NAME_MAX];  /* "": a top-level tenant */
	uint32_t weight;                  /* 1 .. 1000000 */
	struct kerf_kobj_quota quotas[KERF_KOBJ_MAX_QUOTAS];
	size_t nr_quotas;
	char allowed_classes[KERF_MAX_CLASSES][KERF_KOBJ_NAME_MAX];
	size_t nr_allowed_classes;        /* 0: any class */
	bool has_ceiling;
	char ceiling_class[KERF_KOBJ_NAME_MAX]; /* "": the value is given */
	int32_t ceiling_value;
	enum kerf_isolation isolation;
	/* gpuHourBudget; limit 0 = none */
	int64_t budget_limit_milli_ms;    /* GPU-milli x ms per window */
	int64_t budget_window_ms;
	enum kerf_budget_action budget_action;
	struct kerf_kobj_flavor_weight flavor_weights[KERF_KOBJ_MAX_FLAVOR_WEIGHTS];
	size_t nr_flavor_weights;
	/* idlePolicy; action KERF_IDLE_NONE = none */
	enum kerf_idle_action idle_action;
	int32_t idle_below_pct;
	int64_t idle_after_ms;
	char idle_exempt[KERF_MAX_CLASSES][KERF_KOBJ_NAME_MAX];
	size_t nr_idle_exempt;
	char network_class[KERF_KOBJ_NAME_MAX]; /* "": none */
};

/* The unit of a flavor's quantities: cpu milli, memory MiB, else GPU milli. */
enum kerf_kobj_unit kerf_kobj_flavor_unit(const char *flavor);

/*
 * obj (a Tenant as the API server returns it) into t.  0, or -KERF_EINVAL
 * with err naming the field's path and the reason ("spec.quotas[1].nominal:
 * must be GPUs from 0 to 1000000, not '-1'"); t is then unspecified.
 */
int kerf_kobj_tenant_decode(const json_t *obj, struct kerf_kobj_tenant *t,
			    struct kerf_err *err);

/*
 * How kerf_kobj_tenant_spec resolves names.  flavor_dim gives the quota
 * dimension of a GPU flavor (a GPUPool name; core/resources.h: 2 + the
 * model index) or -1 when the cluster has no such flavor yet: its quota
 * and budget weight are then left out (counted in *nr_unresolved) and
 * apply once the flavor exists and the spec is made again.  cpu and
 * memory are dimensions 0 and 1 without asking.
 */
struct kerf_kobj_resolver {
	int (*flavor_dim)(void *ctx, const char *flavor);
	void *ctx;
	const struct kerf_classes *classes;
	int nr_res;                       /* the tenants' dimensions in use */
};

/*
 * t as the core's tenant spec under parent (an index).  spec->name points
 * into t.  The priority classes the tenant may use are those of
 * allowedPriorityClasses (names kerf does not know are left out) at or
 * below priorityCeiling; the idle policy's exempt classes likewise.
 * -KERF_ENOTFOUND when the ceiling names a class kerf does not know, and
 * -KERF_EINVAL when no known class is left to use (the core reads an empty
 * set as "any"), both naming the field.
 */
int kerf_kobj_tenant_spec(const struct kerf_kobj_tenant *t, int parent,
			  const struct kerf_kobj_resolver *r,
			  struct kerf_tenant_spec *spec, size_t *nr_unresolved,
			  struct kerf_err *err);

/* What one flavor holds (status.usage[]), in the flavor's unit. */
struct kerf_kobj_usage {
	char flavor[KERF_KOBJ_NAME_MAX];
	int64_t used;
	int64_t borrowed;                 /* of used, beyond nominal (0 where the
					     tenant has no quota) */
};

/* A Tenant's status. */
struct kerf_kobj_tenant_status {
	int64_t observed_generation;
	struct kerf_kobj_condition conditions[KERF_KOBJ_MAX_CONDITIONS];
	size_t nr_conditions;
	/* totals over the GPU flavors, GPU-milli */
	int64_t gpus_nominal;
	int64_t gpus_used;
	int64_t gpus_borrowed;
	int64_t gpus_pending;
	int64_t pending_workloads;
	struct kerf_kobj_usage usage[KERF_MAX_RES];
	size_t nr_usage;
	bool has_budget;                  /* budgetUsed is written */
	int32_t budget_pct;
	/* status.history: the accumulators of core/persist.h */
	int64_t averaged_at_ms;
	struct kerf_persist_dim usage_avg[KERF_MAX_RES];
	size_t nr_usage_avg;
	int64_t budget_used_milli_ms;
	int64_t budget_window_start_ms;
	int32_t budget_warned_pct;
};

/*
 * The status of tenant t of st as it stands, but for observedGeneration
 * and conditions (left as they are in s).  dim_flavor[i] names the flavor
 * of quota dimension i for status.usage (NULL: "cpu", "memory" or the
 * core's "gpu:<model>"); dim_flavor may be NULL.
 */
void kerf_kobj_tenant_status_fill(const struct kerf_state *st, int t,
				  const char *const *dim_flavor,
				  struct kerf_kobj_tenant_status *s);

/* The history of s from / into a persisted tenant (core/persist.h). */
void kerf_kobj_tenant_history_set(struct kerf_kobj_tenant_status *s,
				  const struct kerf_persist_tenant *pt,
				  int64_t avg_at_ms);
/* pt's name and usage_avg are malloc'd (kerf_persist_release frees them). */
int kerf_kobj_tenant_history_get(const struct kerf_kobj_tenant_status *s,
				 const char *name, struct kerf_persist_tenant *pt);

/* s as the JSON of status (a new object) or NULL on OOM. */
json_t *kerf_kobj_tenant_status_encode(const struct kerf_kobj_tenant_status *s);

/*
 * status (the object's "status", may be NULL: all zero) into s, every
 * field checked as the decoder does; paths start with "status.".
 */
int kerf_kobj_tenant_status_decode(const json_t *status,
				   struct kerf_kobj_tenant_status *s,
				   struct kerf_err *err);

#endif /* KERF_KOBJ_TENANT_H */
