/*
 * world_int: the world's own records, shared by world.c (events and the
 * bookkeeping of pods into workloads), world_pod.c (pods as the core's
 * requests and bindings) and world_act.c (decisions as actions).
 */
#ifndef KERF_SERVE_WORLD_INT_H
#define KERF_SERVE_WORLD_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/map.h"
#include "base/slab.h"
#include "core/cycle.h"
#include "core/framework.h"
#include "serve/world.h"

/* What kerf does with a pod. */
enum wrole {
	ROLE_NONE = 0,     /* nothing: not a GPU pod of another scheduler, ... */
	ROLE_KERF,         /* placed by kerf, in its workload's group */
	ROLE_EXTERNAL,     /* another scheduler's bound GPU pod: counted */
	ROLE_TOLD,         /* kerf's, never placed as it stands: told why */
};

struct wgroup;

/*
 * Why kerf does not place a pod (world-level reasons), what was told of
 * it, and for an evicting pod the refusal last told: kept apart, for the
 * few pods that have one (most have none: wpod.why is NULL).
 */
struct wwhy {
	uint64_t hash;             /* of the reason; 0: none (text empty) */
	uint64_t told;             /* the reason's hash last told */
	uint64_t refused;          /* evicting: the refusal last told */
	char text[];               /* "Reason\0message" (at most 31 and 255
				      bytes) while hash != 0 */
};

struct wpod {
	/* pointers, then 4-byte fields, then bytes: no holes (50,000 of
	   these live in kerf serve) */
	struct kerf_kpod *p;       /* the informer's (borrowed), or owned */
	struct wgroup *g;          /* ROLE_KERF, ROLE_EXTERNAL */
	uint64_t need_labels;      /* label terms of its nodeSelector */
	struct wwhy *why;          /* owned; NULL: no reason, nothing told */
	uint32_t index;            /* in world->podv */
	struct kerf_binding b;     /* in_run: where it runs */
	bool owned;
	uint8_t role;              /* enum wrole */
	bool in_run;               /* one of its running workload's pods */
	bool evicting;             /* told to leave: never placed or adopted */
	bool conflict_counted;
	bool sub;                  /* in its group's pending submission */
	uint8_t set;               /* in_run: its pod set */
	char key[];                /* "ns/name", in the same allocation */
};

struct wgroup {
	struct wpod **m;           /* members, in name order: &one while
				      there is room for one (most groups
				      are a single pod), else owned */
	struct wpod *one;
	uint64_t fp;               /* the pending submission's fingerprint */
	uint32_t index;            /* in world->groupv */
	uint32_t nr_m, alloc_m;
	uint32_t id;               /* in the core; 0: none */
	bool external;
	bool running;              /* the core runs it */
	bool started;              /* kerf_state_started told */
	bool wants_adopt;          /* bound pods not yet in the core */
	bool partial_counted;
	char key[];                /* workload key, in the same allocation */
};

struct wnode {
	struct kerf_knode n;       /* owned */
	uint32_t slot;
};

struct wns {
	char *ns;                  /* owned; the map's key */
	char *tenant;              /* owned */
};

struct wdomain {
	char *name;                /* owned; the map's key */
	uint32_t id;
};

struct wterm {
	char *key, *value;         /* owned */
	uint8_t effect;            /* taints */
};

struct kerf_world {
	char *scheduler_name;
	char *policy_name;
	uint64_t seed;
	struct kerf_state st;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct kerf_decisions dec;
	struct kerf_actions queued;    /* decided by events, told at the cycle */
	struct kerf_map pods;          /* "ns/name" -> wpod */
	struct kerf_map groups;        /* key -> wgroup */
	struct kerf_map nodes;         /* name -> wnode */
	struct kerf_map ns;            /* namespace -> wns */
	struct kerf_map domains;       /* NVLink domain -> wdomain */
	struct kerf_map domain_ids;    /* id -> wdomain */
	struct wpod **podv;
	size_t nr_podv, alloc_podv;
	size_t nr_protected;       /* workloads a budget protected at the last pass */
	struct wgroup **groupv;
	size_t nr_groupv, alloc_groupv;
	struct wterm labels[KERF_MAX_LABELS];
	struct wterm taints[KERF_MAX_LABELS];
	int external_class;
	uint32_t removing;             /* slot of the node being removed */
	bool at_cycle;                 /* the cycle's adoption pass */
	bool term_resync;              /* resubmitting after new terms */
	int64_t now_ms;                /* the latest time a call gave */
	struct kerf_world_stats stats;
	/* GPUPools (world_pool.c), in name order */
	struct kerf_kobj_gpupool *pools;
	size_t nr_pools;
	bool flavor_waits;             /* a busy node keeps an old flavor */
	int64_t flavor_tried_ms;
};

/* --- world_pool.c ------------------------------------------------------ */

/* The pool that selects n (the first by name), or NULL. */
const struct kerf_kobj_gpupool *kerf_world_pool_of(const struct kerf_world *w,
						   const struct kerf_knode *n);

/*
 * The core's model (flavor) of node n: its pool's, else its product
 * label's; a busy node keeps the one it has (flavor_waits).
 */
int kerf_world_node_model(struct kerf_world *w, const struct kerf_knode *n,
			  struct kerf_err *err);

/*
 * A GPUPool's sharing (spec.sharing): a node of a pool that does not
 * allow a way of sharing carries the term KERF_POOL_SHARING_TERM=way as
 * a NoSchedule taint that only pods not using that way tolerate (their
 * tolerations do not lift it).  "Fraction" stands for both MPS and
 * time-slicing, for fractions that name neither.
 */
#define KERF_POOL_SHARING_TERM "kerf.io/pool-sharing"
enum { KERF_POOL_SHARING_COUNT = 5 };
const char *kerf_pool_sharing_name(int way);
/* Does pool p (NULL: none) keep pods of way off its nodes? */
bool kerf_pool_refuses(const struct kerf_kobj_gpupool *p, int way);
/* Does pod p use way (a name of kerf_pool_sharing_name)? */
bool kerf_pool_sharing_used(const struct kerf_kpod *p, const char *way);

/* Every node set again for its flavor as the pools say now. */
int kerf_world_reflavor(struct kerf_world *w, int64_t now_ms, struct kerf_err *err);

/* --- world_pod.c ------------------------------------------------------- */

/*
 * p's request as the core takes it (labels and tolerations from the
 * terms interned), or -KERF_EINVAL with why (a sentence for the pod).
 */
int kerf_world_pod_req(const struct kerf_world *w, const struct wpod *x,
		       struct kerf_pod *req, char *why, size_t size);

/* The taint terms p tolerates. */
uint64_t kerf_world_tolerates(const struct kerf_world *w,
			      const struct kerf_kpod *p);

/*
 * The request and binding of bound pod x on its node as it runs there
 * (a gang's member not bound yet: on its kerf.io/planned-node), with its
 * kerf.io/assigned-* annotations, else the lowest GPUs free (held
 * counts the GPU milli taken by pods placed before it in the same
 * adoption); -KERF_EINVAL with why.
 */
int kerf_world_pod_binding(const struct kerf_world *w, const struct wpod *x,
			   int16_t held[KERF_NODE_MAX_GPUS], struct kerf_pod *req,
			   struct kerf_binding *b, char *why, size_t size);

/* "0,1,2" of a GPU mask; "3g.40gb@4" of a MIG binding. */
void kerf_world_gpus_text(uint16_t mask, char *buf, size_t size);

/* Are two requests the same shape? */
bool kerf_world_same_req(const struct kerf_pod *a, const struct kerf_pod *b);

/* --- world_act.c -------------------------------------------------------- */

/* Room for one more action, and the action appended (zeroed). */
struct kerf_action *kerf_world_action(struct kerf_actions *l);

/*
 * The binding of x as it runs in the core (x->b), for a pod of shape req
 * (a fraction: milli and share), appended to out.
 */
int kerf_world_bind_action(struct kerf_world *w, const struct wpod *x,
			   const struct kerf_pod *req, int32_t milli,
			   uint8_t share, uint32_t group,
			   struct kerf_actions *out, struct kerf_err *err);

/*
 * Carry out w->dec from index from on: actions appended to out, forgotten
 * work forgotten.  The list is cleared.
 */
int kerf_world_consume(struct kerf_world *w, int64_t now_ms,
		       struct kerf_actions *out, struct kerf_err *err);

/* --- world_node.c ------------------------------------------------------- */

/* The bit of label (or taint) term key=value, interned when new (*grew). */
int kerf_world_term(struct kerf_world *w, bool taint, const char *key,
		    const char *value, uint8_t effect, bool *grew,
		    struct kerf_err *err);

/* Every node again, with the label terms as they are now. */
int kerf_world_refresh_nodes(struct kerf_world *w, int64_t now_ms,
			     struct kerf_err *err);

/* --- world_sync.c ------------------------------------------------------- */

/* The records themselves (kerf_slab's: their size is their key's). */
static inline void kerf_world_pod_record_free(struct wpod *x)
{
	kerf_slab_free(x, sizeof(*x) + strlen(x->key) + 1);
}

static inline void kerf_world_group_record_free(struct wgroup *g)
{
	kerf_slab_free(g, sizeof(*g) + strlen(g->key) + 1);
}

/* The group of the core's workload id (its owner), or NULL. */
static inline struct wgroup *kerf_world_group_of(const struct kerf_world *w,
						 uint32_t id)
{
	const struct kerf_workload *cw = id ? kerf_state_find(&w->st, id) : NULL;

	return cw ? cw->owner : NULL;
}

/* Set (reason non-NULL) or clear x's world-level reason. */
/* x's world-level reason and its message ("" when it has none). */
static inline uint64_t kerf_world_why_hash(const struct wpod *x)
{
	return x->why ? x->why->hash : 0;
}

static inline const char *kerf_world_why_reason(const struct wpod *x)
{
	return kerf_world_why_hash(x) ? x->why->text : "";
}

static inline const char *kerf_world_why_message(const struct wpod *x)
{
	return kerf_world_why_hash(x) ? x->why->text + strlen(x->why->text) + 1 : "";
}

void kerf_world_set_why(struct kerf_world *w, struct wpod *x, const char *reason,
			const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static inline bool kerf_world_pod_done(const struct wpod *x)
{
	return kerf_kpod_is_done(x->p);
}

/* The group of key (made when new), NULL on OOM; free an empty one. */
struct wgroup *kerf_world_group_get(struct kerf_world *w, const char *key,
				    bool external);
void kerf_world_group_free(struct kerf_world *w, struct wgroup *g);

/* x joins g (kept in name order) or leaves it. */
int kerf_world_group_add(struct wgroup *g, struct wpod *x);
void kerf_world_group_remove(struct wgroup *g, struct wpod *x);

/* The tenant of namespace ns (a leaf), or negative with why. */
int kerf_world_tenant_of(const struct kerf_world *w, const char *ns, char *why,
			 size_t size);

/* Bring g in step with the core, and let it go when nothing is left. */
int kerf_world_sync(struct kerf_world *w, struct wgroup *g, int64_t now_ms,
		    struct kerf_err *err);

/* --- world_util.c -------------------------------------------------------- */

/*
 * Idle samples from the nodes' kerf.io/gpu-utilization: of running
 * workload g, of every running workload with a pod on node n, of every
 * running workload.
 */
void kerf_world_util_group(struct kerf_world *w, const struct wgroup *g, int64_t now_ms);
void kerf_world_util_node(struct kerf_world *w, const struct wnode *n, int64_t now_ms);
void kerf_world_util_all(struct kerf_world *w, int64_t now_ms);

/* --- world.c ------------------------------------------------------------ */

/*
 * Sync every group, sorted by key (pending_only: those pending in the
 * core; adopting_only: those with bound pods not yet counted).
 */
int kerf_world_sync_all(struct kerf_world *w, bool pending_only,
			bool adopting_only, int64_t now_ms, struct kerf_err *err);

/* Every pod of namespace ns (NULL: all) again, sorted by key. */
int kerf_world_update_pods(struct kerf_world *w, const char *ns, int64_t now_ms,
			   struct kerf_err *err);

/* Forget g's workload in the core (pending or finished). */
int kerf_world_forget(struct kerf_world *w, struct wgroup *g, int64_t now_ms,
		      struct kerf_err *err);

/* g's pods no longer run in the core (finished, evicted, node gone). */
void kerf_world_unrun(struct kerf_world *w, struct wgroup *g, bool evicting);

#endif
