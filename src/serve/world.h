/*
 * world: what kerf serve knows of the cluster, as the core sees it, and
 * what the core decided, as the API calls that carry it out.  Pure: the
 * informers feed it compact objects (kobj/pod.h, kobj/node.h), it keeps
 * the core's state in step, and kerf_world_cycle turns the core's
 * decisions into actions (bind, mark pending, ask to checkpoint, evict)
 * for the actuator to send.  The same code runs against the test API
 * server, a real cluster and a simulated one.
 *
 * Pods become workloads:
 *   - a pod of kerf's scheduler alone is one workload, key "ns/name";
 *   - pods of one namespace with the label kerf.io/gang = g form one gang,
 *     key "ns/gang:g", submitted once kerf.io/gang-size of them are there
 *     (all-or-nothing: nothing of it is placed before);
 *   - the tenant is the one the pod's namespace joined (label
 *     kerf.io/tenant on the Namespace, not on the pod, which its author
 *     controls);
 *   - the priority class is the kerf class of the pod's PriorityClass
 *     name, else the highest class at or below the pod's priority.
 * Pods already bound when kerf first sees them (a restart) are adopted
 * with the devices their kerf.io/assigned-* annotations name; a gang
 * found partly bound is finished from the plan written on its pods
 * before its first binding (kerf.io/planned-node), or its bound pods
 * evicted when the plan cannot be carried out.  Pods of
 * other schedulers holding GPUs on a node kerf knows are adopted into the
 * tenant "kerf-external" so their GPUs count as used.
 * Nodes are placed on by their rank (all equal: ties go by name), with
 * only the label terms some pod selects on and the NoSchedule/NoExecute
 * taints interned in the core.
 */
#ifndef KERF_SERVE_WORLD_H
#define KERF_SERVE_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/priority.h"
#include "core/state.h"
#include "kobj/gpupool.h"
#include "kobj/node.h"
#include "kobj/pod.h"

#define KERF_EXTERNAL_TENANT "kerf-external"

enum kerf_action_kind {
	KERF_ACT_BIND = 1,     /* POST pods/binding with the devices */
	KERF_ACT_PENDING,      /* PodScheduled=False with the reason, an Event */
	KERF_ACT_PREEMPT,      /* annotate kerf.io/preempt-at = at_ms */
	KERF_ACT_UNPREEMPT,    /* remove kerf.io/preempt-at */
	KERF_ACT_EVICT,        /* the Eviction API */
};

struct kerf_action {
	uint8_t kind;          /* enum kerf_action_kind */
	uint32_t group;        /* actions of one workload share it (a gang's
				  binds are sent together) */
	char ns[64];
	char name[254];
	char uid[64];
	char node[254];        /* BIND */
	char gpus[64];         /* BIND: "0,1,2,3"; MIG: the instance's GPU */
	char mig[32];          /* BIND: "3g.40gb@4"; "" */
	int32_t gpu_milli;     /* BIND of a fraction; 0 */
	uint8_t share;         /* BIND of a fraction: enum kerf_gpu_share */
	int64_t at_ms;         /* PREEMPT: deadline */
	char reason[32];       /* PENDING: "Unschedulable", "InvalidSpec" ... */
	char message[256];     /* PENDING, EVICT: the core's sentence */
};

struct kerf_actions {
	struct kerf_action *a;
	size_t nr;
	size_t alloc;
};

void kerf_actions_init(struct kerf_actions *l);
void kerf_actions_release(struct kerf_actions *l);

/*
 * Forget the actions; storage for more than KERF_ACTIONS_KEEP is given
 * back (a cycle that bound 40,000 pods must not hold 40 MB for ever).
 */
enum { KERF_ACTIONS_KEEP = 256 };
void kerf_actions_clear(struct kerf_actions *l);

struct kerf_world_config {
	const char *scheduler_name;     /* "kerf" */
	const char *policy;             /* "kerf" */
	const struct kerf_classes *classes; /* NULL: kerf's defaults */
	uint64_t seed;
};

/* Counters for /metrics and the tests. */
struct kerf_world_stats {
	uint64_t nr_submitted, nr_adopted, nr_finished, nr_forgotten;
	uint64_t nr_external;           /* other schedulers' GPU pods adopted */
	uint64_t nr_conflicts;          /* bindings the core could not take */
	uint64_t nr_invalid;            /* pods kerf will not place, told why */
	uint64_t nr_resubmitted;        /* after new label or taint terms */
	uint64_t nr_partial;            /* gangs found only partly bound */
	uint64_t nr_admitted;           /* workloads the cycles admitted */
	uint64_t nr_preempted;          /* victims the cycles asked to leave */
	uint64_t nr_plans_finished;     /* ... adopted whole from their plan */
	uint64_t nr_plans_undone;       /* ... whose bound pods were evicted */
	uint64_t nr_unplaced;           /* placements whose plan failed */
	uint64_t nr_util_samples;       /* idle samples from gpu-utilization */
	uint64_t nr_util_unreadable;    /* node values that did not read */
};

struct kerf_world;

int kerf_world_new(const struct kerf_world_config *cfg, struct kerf_world **out,
		   struct kerf_err *err);
void kerf_world_free(struct kerf_world *w);

/* The core state (read-only for reports; change it through the world). */
const struct kerf_state *kerf_world_state(const struct kerf_world *w);
const struct kerf_world_stats *kerf_world_stats(const struct kerf_world *w);

/* A node was added or changed (n is taken, released on error too). */
int kerf_world_node_set(struct kerf_world *w, struct kerf_knode *n,
			int64_t now_ms, struct kerf_err *err);
int kerf_world_node_delete(struct kerf_world *w, const char *name,
			   int64_t now_ms, struct kerf_err *err);

/*
 * A GPUPool was added or changed (copied), or deleted: the nodes it
 * selects are of its flavor (serve/world_pool.c), every node is set
 * again.  A busy node keeps its flavor until idle, tried again every
 * 10 s at the cycle.
 */
int kerf_world_pool_set(struct kerf_world *w, const struct kerf_kobj_gpupool *p,
			int64_t now_ms, struct kerf_err *err);
int kerf_world_pool_delete(struct kerf_world *w, const char *name, int64_t now_ms,
			   struct kerf_err *err);

/* Flavor changes that waited for busy nodes, tried when due. */
int kerf_world_reflavor_due(struct kerf_world *w, int64_t now_ms, struct kerf_err *err);

/* What the nodes of pool name hold (the GPUPool's status). */
struct kerf_world_pool_usage {
	uint32_t nodes;
	uint32_t gpus;
	uint32_t mig_gpus;              /* of which in MIG mode */
	int64_t allocated_milli;        /* GPU milli held by what runs there */
};
void kerf_world_pool_usage(const struct kerf_world *w, const char *name,
			   struct kerf_world_pool_usage *out);

/*
 * Each gang kerf holds (pods of one namespace with a kerf.io/gang label):
 * fn(ctx, ns, gang, the priority class of its first member or "").  For
 * the admission webhook: a new member must have the gang's class.
 */
typedef int (*kerf_world_gang_fn)(void *ctx, const char *ns, const char *gang,
				  const char *priority_class);
int kerf_world_each_gang(const struct kerf_world *w, kerf_world_gang_fn fn,
			 void *ctx);

/* Namespace ns joined tenant (NULL: none). */
int kerf_world_namespace_set(struct kerf_world *w, const char *ns,
			     const char *tenant, struct kerf_err *err);
int kerf_world_namespace_delete(struct kerf_world *w, const char *ns,
				struct kerf_err *err);

/* A tenant added or changed; spec->parent is ignored for parent_name. */
int kerf_world_tenant_set(struct kerf_world *w,
			  const struct kerf_tenant_spec *spec,
			  const char *parent_name, struct kerf_err *err);

/* A tenant's accumulators, as persisted (core/persist.h), restored. */
struct kerf_persist_tenant;
int kerf_world_tenant_history(struct kerf_world *w,
			      const struct kerf_persist_tenant *pt,
			      struct kerf_err *err);

/* A pod was added or changed (p is taken, released on error too). */
int kerf_world_pod_set(struct kerf_world *w, struct kerf_kpod *p,
		       int64_t now_ms, struct kerf_err *err);

/*
 * The same with p borrowed, never copied: the caller keeps it alive and
 * unchanged until the next set, borrow or delete of that pod, or the
 * world's end (an informer's cache does; kerf_world_free does not read
 * borrowed pods, so the cache may go first).  One copy of each pod, not
 * two.
 */
int kerf_world_pod_borrow(struct kerf_world *w, const struct kerf_kpod *p,
			  int64_t now_ms, struct kerf_err *err);
int kerf_world_pod_delete(struct kerf_world *w, const char *ns,
			  const char *name, int64_t now_ms,
			  struct kerf_err *err);

/*
 * One scheduling cycle at now_ms; the actions to carry out are appended
 * to out (pending reasons of pods kerf will not place included).
 */
int kerf_world_cycle(struct kerf_world *w, int64_t now_ms,
		     struct kerf_actions *out, struct kerf_err *err);

/*
 * The eviction of pod ns/name was refused (429: a PodDisruptionBudget);
 * the caller asks again in retry_s.  The pods of the workload it leaves
 * for are told so (a PENDING action each, once per distinct refusal).
 */
int kerf_world_eviction_refused(struct kerf_world *w, const char *ns,
				const char *name, const char *why,
				int64_t retry_s, struct kerf_actions *out,
				struct kerf_err *err);

/* Is pod ns/name still one kerf asked to leave, and not gone yet? */
bool kerf_world_evicting(const struct kerf_world *w, const char *ns,
			 const char *name);

/*
 * Is pod ns/name (of uid) placed by kerf on node and not yet seen bound
 * there?  True while a BIND the world returned for it still stands (its
 * workload runs, the pod is neither evicted nor replaced): the binding
 * may be sent again.
 */
bool kerf_world_bind_stands(const struct kerf_world *w, const char *ns,
			    const char *name, const char *uid,
			    const char *node);

/*
 * The plan of workload group (a kerf_action's group: its BINDs) could not
 * be written on every pod, or its first binding failed: nothing of it is
 * bound, so it is pending again, placed anew at a later cycle.  Nothing
 * happens when the workload is gone, no longer runs in the core, or has a
 * pod bound already.
 */
int kerf_world_unplace(struct kerf_world *w, uint32_t group, int64_t now_ms,
		       struct kerf_err *err);

/*
 * PodDisruptionBudgets: a running workload any of whose pods one of
 * pdbs[0..nr) selects while it allows no disruption is protected (never
 * chosen as a victim: its eviction would be refused), every other is not.
 * Call it before a cycle with the budgets as they are.
 */
struct kerf_kpdb;
int kerf_world_protect(struct kerf_world *w, const struct kerf_kpdb *const *pdbs,
		       size_t nr, struct kerf_err *err);

/* The workload key of pod ns/name, or NULL when kerf does not place it. */
const char *kerf_world_pod_workload(const struct kerf_world *w, const char *ns,
				    const char *name);

#endif
