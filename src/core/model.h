/*
 * model: the cluster inventory and the resource arithmetic of the core.
 *
 * A cluster holds nodes in slots: a node keeps its slot from the time it is
 * added until it is removed, and bindings name that slot, so adding or
 * removing other nodes never renumbers anything.  A freed slot is reused
 * by a later node.  Separately, every node has a rank: the caller's rank
 * key, then its name, in ascending order (kerf_cluster_upsert_node).  The
 * rank is the tie-break of every placement decision; order[] lists the
 * live nodes in rank order and pos[] gives a slot's place in it.  Ranks
 * are set by the caller, so a cluster rebuilt in any order (after a
 * restart) ranks its nodes exactly as before.
 *
 * Each node has CPU, memory and up to KERF_NODE_MAX_GPUS GPUs of one
 * model; each GPU has gpu_milli (1000 = the whole GPU) and, when the
 * model's memory is known, GPU memory.  Every change to what a node holds
 * goes through kerf_cluster_bind or kerf_cluster_unbind, which refuse to
 * overcommit; every change to a node gives it a new stamp, unique within
 * the cluster's life, so that cached scores can tell a changed node (or a
 * new node in a reused slot) from an unchanged one.
 *
 * Pure: no I/O, no clock, no globals.  Integers only.
 */
#ifndef KERF_CORE_MODEL_H
#define KERF_CORE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/map.h"
#include "core/fit_index.h"

enum {
	KERF_GPU_MILLI = 1000,      /* gpu_milli of one whole GPU */
	KERF_NODE_MAX_GPUS = 16,    /* GPUs per node; gpu masks are uint16_t */
	KERF_MAX_MODELS = 64,       /* GPU models per cluster; masks are 64-bit */
	KERF_MODEL_NAME_MAX = 32,   /* bytes, including the NUL */
	KERF_MODEL_NONE = 0xffff,   /* model index of a node without GPUs */
	KERF_POD_CLASSES = KERF_NODE_MAX_GPUS + 1, /* 0 = fraction, k = k GPUs */
	KERF_NODE_NAME_MAX = 253,   /* bytes, without the NUL (a DNS name) */
	KERF_MAX_LABELS = 64,       /* interned label and taint terms each */
	KERF_LABEL_MAX = 317,       /* bytes of "key=value" (253 + 1 + 63) */
};

/* pos[] of a free slot */
#define KERF_NO_POS UINT32_MAX

/*
 * Bounds on capacities and requests: far beyond any real node (2 million
 * cores, an exbibyte), small enough that products of two of them fit in an
 * int64_t, so scores never overflow.
 */
#define KERF_MAX_CPU_MILLI ((int64_t)1 << 31)
#define KERF_MAX_MEM_MIB ((int64_t)1 << 40)

/*
 * Sharing a GPU among fractions.  A fraction is realised by MPS (a compute
 * share and a pinned memory limit per client) or by time-slicing (memory
 * accounted here, not enforced by the GPU), or by the default mechanism of
 * the node when the pod names none.  The first fraction on an idle GPU sets
 * its mode; only fractions of the same mode join it, so a GPU's mode
 * changes only when no work runs on it.
 */
enum kerf_gpu_share {
	KERF_SHARE_DEFAULT = 0,
	KERF_SHARE_MPS,
	KERF_SHARE_TIMESLICE,
	KERF_SHARE_COUNT_,
};

/*
 * A tenant's isolation level.  MPS and time-slicing put their clients in
 * one fault domain; whole GPUs and MIG instances do not.  Fractions of two
 * tenants share a GPU only if both are `shared`; a `tenant` fraction shares
 * only with its own tenant; a `hardware` fraction never shares a GPU with
 * another fraction (kerf_state_submit makes it a whole GPU until MIG
 * placement serves it).
 */
enum kerf_isolation {
	KERF_ISOLATION_SHARED = 0,     /* may share a fault domain with anyone */
	KERF_ISOLATION_TENANT,         /* MPS / time-slicing within the tenant */
	KERF_ISOLATION_HARDWARE,       /* exclusive GPUs or MIG only */
	KERF_ISOLATION_COUNT_,
};

/* gpu_tenant of a GPU whose fractions belong to more than one tenant. */
#define KERF_GPU_TENANTS_MIXED UINT32_MAX

struct kerf_mig_model;
struct kerf_node_mig;

struct kerf_gpu_model {
	char name[KERF_MODEL_NAME_MAX];
	int32_t mem_mib;            /* memory of one GPU; 0 = not tracked */
	const struct kerf_mig_model *mig; /* its MIG table, NULL: no MIG */
};

struct kerf_node {
	const char *name;           /* owned by the cluster; "" in a free slot */
	uint64_t rank;              /* the caller's rank key (then the name) */
	bool live;                  /* false: a free slot (all zero, cordoned) */
	int64_t cpu_milli;          /* capacity */
	int64_t mem_mib;            /* capacity */
	int64_t cpu_free_milli;     /* 0 <= free <= capacity */
	int64_t mem_free_mib;       /* 0 <= free <= capacity */
	uint32_t stamp;             /* new value after every change */
	uint32_t nr_pods;           /* pods bound here */
	uint16_t model;             /* index in cluster->models or KERF_MODEL_NONE */
	uint8_t nr_gpus;            /* 0..KERF_NODE_MAX_GPUS */
	uint8_t nr_gpus_idle;       /* GPUs with all KERF_GPU_MILLI free */
	int32_t gpu_free_milli_sum; /* sum of gpu_free_milli[] */
	int16_t gpu_free_milli[KERF_NODE_MAX_GPUS];   /* 0..KERF_GPU_MILLI */
	int32_t gpu_mem_mib[KERF_NODE_MAX_GPUS];      /* capacity, 0 = not tracked */
	int32_t gpu_mem_free_mib[KERF_NODE_MAX_GPUS];
	uint16_t nr_pods_by_class[KERF_POD_CLASSES];  /* GPU pods by class */
	/*
	 * Fractions sharing each GPU: how many, their mode, the strictest
	 * isolation among them and their tenant (or KERF_GPU_TENANTS_MIXED).
	 * All zero when no fraction is there.  While fractions remain, the
	 * isolation and tenant never relax (conservative, never unsafe).
	 */
	uint16_t gpu_nr_fractions[KERF_NODE_MAX_GPUS];
	uint8_t gpu_share[KERF_NODE_MAX_GPUS];        /* enum kerf_gpu_share */
	uint8_t gpu_isolation[KERF_NODE_MAX_GPUS];    /* enum kerf_isolation */
	uint32_t gpu_tenant[KERF_NODE_MAX_GPUS];
	uint32_t domain;            /* NVLink domain id; 0 = none (node alone) */
	bool cordoned;              /* takes no new pods (down, draining) */
	uint64_t labels;            /* bit i: the node has label term i */
	uint64_t taints;            /* bit i: the node has taint term i */
	/*
	 * GPUs in MIG mode (bit g = GPU g) and their instances (core/mig/
	 * place.h), NULL when none.  A GPU in MIG mode shows 0 milli and 0
	 * memory free above, so whole-GPU pods and fractions never see it;
	 * pods asking MIG see only such GPUs.
	 */
	uint16_t mig_gpus;
	struct kerf_node_mig *mig;  /* owned by the cluster */
	/*
	 * GPUs out of service (bit g = GPU g; the node agent marks them
	 * unhealthy).  A down GPU shows 0 milli and 0 memory free above, as
	 * a GPU in MIG mode does, so no new pod of any kind lands on it;
	 * the pods already there keep it charged.  What it would have free
	 * is kept below while it is down (0 for GPUs up or in MIG mode), so
	 * pods leaving do not bring its capacity back and bringing it up
	 * shows exactly what its remaining pods leave.  A down GPU in MIG
	 * mode keeps its MIG charges where they are and is left out of MIG
	 * placement.
	 */
	uint16_t gpus_down;
	int16_t gpu_down_free_milli[KERF_NODE_MAX_GPUS];
	int32_t gpu_down_mem_free_mib[KERF_NODE_MAX_GPUS];
};

/*
 * A pod's request.  Exactly one of: nothing on GPUs (nr_gpus == 0), a
 * fraction of one GPU (nr_gpus == 1, gpu_milli < 1000), or nr_gpus whole
 * GPUs (gpu_milli == 1000).  gpu_mem_mib is per GPU and 0 when not asked.
 */
struct kerf_pod {
	/* widest first: no holes (a workload holds two per pod set) */
	int64_t cpu_milli;
	int64_t mem_mib;
	uint64_t model_mask;        /* bit i allows cluster model i; 0 = any */
	/* node selection: every label term of need_labels, and a taint term
	 * outside tolerates on the node keeps the pod off it */
	uint64_t need_labels;
	uint64_t tolerates;
	int32_t gpu_milli;          /* per GPU; 0 when nr_gpus == 0 */
	int32_t gpu_mem_mib;        /* per GPU; 0 = no GPU memory request */
	uint32_t tenant;            /* the pod's tenant; 0 = none given */
	uint8_t nr_gpus;
	/* fractions only: how the GPU is shared, and with whom */
	uint8_t share;              /* enum kerf_gpu_share */
	uint8_t isolation;          /* enum kerf_isolation of the pod's tenant */
	/*
	 * > 0: one MIG instance of at least this many compute slices and at
	 * least gpu_mem_mib of memory (nr_gpus 1; gpu_milli is the quota
	 * charge, kerf_state_submit sets it from the profile).
	 */
	uint8_t mig_slices;
};

/* Where a pod goes: a node's slot and the GPUs it uses there (bit i = GPU i). */
struct kerf_binding {
	uint32_t node;
	uint16_t gpus;
	uint8_t mig_start;          /* MIG pods: first memory slice of the instance */
};

struct kerf_cluster {
	struct kerf_node *nodes;    /* by slot: nodes[0 .. nr_slots) */
	uint32_t *stamps;           /* stamps[i] == nodes[i].stamp, packed for scans */
	size_t nr_slots;            /* slots ever used (live or free) */
	size_t alloc_nodes;         /* of nodes[], stamps[] and pos[] */
	size_t nr_nodes;            /* live nodes */
	uint32_t *order;            /* live slots in rank order, nr_nodes entries */
	uint32_t *pos;              /* pos[slot]: index in order[], or KERF_NO_POS */
	size_t alloc_order;
	uint32_t *free_slots;       /* reused last freed first */
	size_t nr_free;
	size_t alloc_free;
	struct kerf_map by_name;    /* name -> slot + 1 */
	uint64_t next_rank;         /* rank key of kerf_cluster_add_node */
	struct kerf_gpu_model models[KERF_MAX_MODELS];
	size_t nr_models;
	uint32_t stamp_seq;         /* last stamp handed to a node */
	uint64_t mig_models;        /* bit i: some node of model i has MIG GPUs */
	char *labels[KERF_MAX_LABELS]; /* interned "key=value" terms, owned */
	size_t nr_labels;
	char *taints[KERF_MAX_LABELS]; /* interned "key=value:Effect" terms, owned */
	size_t nr_taints;
	struct kerf_fit_index fit;  /* nodes that could hold a pod, by slot */
};

struct kerf_mig_layout;

/*
 * What a node is, as the caller sees it (kerf_cluster_upsert_node).  GPUs
 * in MIG mode carry the instances the node reports (mig_layout: one layout
 * per GPU, in_use ignored: pods say what is in use; an instance marked
 * down stays down, as one the core holds down does); NULL keeps the
 * layouts the core has (a new node's GPUs start empty, carved on demand).
 */
struct kerf_node_spec {
	const char *name;           /* 1 .. KERF_NODE_NAME_MAX bytes, unique */
	uint64_t rank;              /* rank key; equal keys rank by name */
	int64_t cpu_milli;
	int64_t mem_mib;
	int model;                  /* model index; ignored when nr_gpus is 0 */
	int nr_gpus;
	uint32_t domain;            /* NVLink domain; 0 = none */
	bool cordoned;
	uint16_t mig_gpus;          /* GPUs in MIG mode */
	const struct kerf_mig_layout *mig_layout; /* KERF_NODE_MAX_GPUS, or NULL */
	uint16_t gpus_down;         /* GPUs out of service (bit g = GPU g) */
	/*
	 * MIG instances out of service, one list per GPU (KERF_NODE_MAX_GPUS
	 * layouts; in_use and down ignored), or NULL: the marks the core
	 * has stay.  Such an instance is held by nobody: never handed out,
	 * never destroyed.  One the core cannot hold (an instance in use
	 * overlaps it) puts its whole GPU out of service instead, and
	 * kerf_cluster_node_spec reports that GPU in gpus_down.
	 */
	const struct kerf_mig_layout *mig_down;
	uint64_t labels;            /* interned label terms (kerf_cluster_label) */
	uint64_t taints;            /* interned taint terms (kerf_cluster_taint) */
};

void kerf_cluster_init(struct kerf_cluster *c);
void kerf_cluster_release(struct kerf_cluster *c);

/* Index of the model called name, adding it if new; negative on error. */
int kerf_cluster_model(struct kerf_cluster *c, const char *name,
		       int32_t gpu_mem_mib, struct kerf_err *err);

/*
 * The same for a flavor called name whose GPUs are of hardware model hw
 * (a GPUPool: its name and gpuModel): the MIG geometry is hw's.  A model
 * first added with another hardware name keeps it.
 */
int kerf_cluster_model_hw(struct kerf_cluster *c, const char *name,
			  const char *hw, int32_t gpu_mem_mib,
			  struct kerf_err *err);

/* Index of an existing model, or -KERF_ENOTFOUND. */
int kerf_cluster_find_model(const struct kerf_cluster *c, const char *name);

/*
 * Append an empty node ranked after every node added this way (rank key =
 * how many were added before).  model is a model index or KERF_MODEL_NONE
 * when nr_gpus is 0.  Returns the slot or negative.
 */
int kerf_cluster_add_node(struct kerf_cluster *c, const char *name,
			  int64_t cpu_milli, int64_t mem_mib, int model,
			  int nr_gpus, struct kerf_err *err);

/* Is spec a valid node?  Names the node, the field and the reason. */
int kerf_node_spec_validate(const struct kerf_cluster *c,
			    const struct kerf_node_spec *spec,
			    struct kerf_err *err);

/*
 * Add the node, or bring the node of that name up to spec.  A node that
 * holds pods keeps them as long as its shape (CPU, memory, model, GPU
 * count), the MIG mode of its busy GPUs and their instances in use do not
 * change; otherwise -KERF_EBUSY (the caller requeues what runs there
 * first: see kerf_state_node_upsert).  Labels, taints, domain, cordon,
 * GPUs and MIG instances out of service and rank may change at any time.  Nothing changes on error.  Returns the slot.
 */
int kerf_cluster_upsert_node(struct kerf_cluster *c,
			     const struct kerf_node_spec *spec,
			     struct kerf_err *err);

/*
 * The spec of live node i (name and MIG layouts borrowed from the
 * cluster, valid until the node changes).
 */
void kerf_cluster_node_spec(const struct kerf_cluster *c, size_t i,
			    struct kerf_node_spec *spec);

/*
 * Remove the node in slot i; its slot is freed for reuse.  -KERF_EBUSY
 * while pods are bound there, -KERF_ENOTFOUND for a free slot.
 */
int kerf_cluster_remove_node(struct kerf_cluster *c, size_t i,
			     struct kerf_err *err);

/* The slot of the live node called name, or -KERF_ENOTFOUND. */
int kerf_cluster_find_node(const struct kerf_cluster *c, const char *name);

/*
 * The bit of label term "key=value" (or taint term "key=value:Effect"),
 * interned on first use; -KERF_ELIMIT past KERF_MAX_LABELS terms,
 * -KERF_EINVAL for an empty or over-long term.
 */
int kerf_cluster_label(struct kerf_cluster *c, const char *term,
		       struct kerf_err *err);
int kerf_cluster_taint(struct kerf_cluster *c, const char *term,
		       struct kerf_err *err);

/* Does a ranks before b (slots of live nodes)? */
static inline bool kerf_cluster_before(const struct kerf_cluster *c, size_t a,
				       size_t b)
{
	return c->pos[a] < c->pos[b];
}

/* Cordon (true) or uncordon node i; its pods stay, new ones do not fit. */
void kerf_cluster_cordon(struct kerf_cluster *c, size_t i, bool cordoned);

/*
 * Put the GPUs of mask of node i in MIG mode and the others out of it.  A
 * GPU changes mode only when nothing runs on it (no pod, no instance in
 * use); the model must have a MIG table.  -KERF_EINVAL with the GPU and
 * the reason, nothing changed.  Instances are carved on demand.
 */
int kerf_cluster_set_mig(struct kerf_cluster *c, size_t i, uint16_t mask,
			 struct kerf_err *err);

/*
 * The MIG profile (index in the node model's table) serving MIG pod p on
 * node n, or -1 when the model has no MIG or no profile large enough.
 */
int kerf_pod_mig_profile(const struct kerf_cluster *c, const struct kerf_node *n,
			 const struct kerf_pod *p);

/*
 * MIG layouts back to what was last told (core/decision.h): free instances
 * carved or destroyed for placements that were rolled back are undone, so
 * between cycles the core holds exactly the instances the nodes were told
 * to have.  Instances in use are told ones and stay.  Returns the GPUs
 * changed.
 */
int kerf_cluster_mig_reconcile(struct kerf_cluster *c);

/* Put node i in NVLink domain d (0 = none). */
void kerf_cluster_set_domain(struct kerf_cluster *c, size_t i, uint32_t d);

/* Deep copy of src into dst (dst uninitialised); negative on OOM. */
int kerf_cluster_copy(struct kerf_cluster *dst, const struct kerf_cluster *src);

/* Check a request's shape: names the field and the reason on error. */
int kerf_pod_validate(const struct kerf_pod *p, struct kerf_err *err);

/* A share of one GPU by software (MPS, time-slicing); not MIG. */
static inline bool kerf_pod_is_fraction(const struct kerf_pod *p)
{
	return p->nr_gpus == 1 && p->gpu_milli < KERF_GPU_MILLI && !p->mig_slices;
}

static inline bool kerf_pod_is_mig(const struct kerf_pod *p)
{
	return p->mig_slices > 0;
}

/* Class used by gpu-clustering: 0 = fraction or MIG, k = k whole GPUs. */
int kerf_pod_class(const struct kerf_pod *p);

/* Total GPU request in milli (nr_gpus * gpu_milli). */
static inline int64_t kerf_pod_gpu_milli_total(const struct kerf_pod *p)
{
	return (int64_t)p->nr_gpus * p->gpu_milli;
}

/*
 * May fraction p join the fractions already on GPU g of n (same mode, and
 * the isolation of everyone there allows it)?  True on a GPU without
 * fractions, and for pods that are not fractions.
 */
bool kerf_gpu_share_ok(const struct kerf_node *n, int g, const struct kerf_pod *p);

/* Is GPU g of n out of service with its free kept aside (not in MIG mode)? */
static inline bool kerf_gpu_is_down(const struct kerf_node *n, int g)
{
	return (n->gpus_down >> g & 1) && !(n->mig_gpus >> g & 1);
}

/* What GPU g of n has free (milli, memory), out of service or not. */
static inline int32_t kerf_gpu_held_free_milli(const struct kerf_node *n, int g)
{
	return kerf_gpu_is_down(n, g) ? n->gpu_down_free_milli[g] : n->gpu_free_milli[g];
}

static inline int32_t kerf_gpu_held_mem_free_mib(const struct kerf_node *n, int g)
{
	return kerf_gpu_is_down(n, g) ? n->gpu_down_mem_free_mib[g] : n->gpu_mem_free_mib[g];
}

/* Does GPU g of n have room for one GPU's share of p (and may p share it)? */
bool kerf_gpu_fits(const struct kerf_node *n, int g, const struct kerf_pod *p);

/* Reasons a node cannot take a pod, in the order they are checked. */
enum kerf_misfit {
	KERF_MISFIT_NONE = 0,
	KERF_MISFIT_CORDONED,       /* node takes no new pods */
	KERF_MISFIT_LABELS,         /* node lacks a label the pod selects */
	KERF_MISFIT_TAINT,          /* node has a taint the pod does not tolerate */
	KERF_MISFIT_MODEL,          /* GPU model not allowed / node has no GPUs */
	KERF_MISFIT_GPU_COUNT,      /* fewer GPUs than asked */
	KERF_MISFIT_CPU,
	KERF_MISFIT_MEM,
	KERF_MISFIT_GPU,            /* not enough GPUs with room */
	KERF_MISFIT_SHARING,        /* GPUs with room are shared against p's
				       isolation or sharing mode */
	KERF_MISFIT_MIG_MODE,       /* MIG pod: no GPU in MIG mode with a
				       profile large enough */
	KERF_MISFIT_MIG,            /* MIG pod: the instances in use leave no
				       room for one more */
	KERF_MISFIT_GPU_DOWN,       /* it would fit but for GPUs (or MIG
				       instances) out of service */
	KERF_MISFIT_COUNT_,
};

const char *kerf_misfit_text(enum kerf_misfit m);

/* First reason n cannot host p, or KERF_MISFIT_NONE. */
enum kerf_misfit kerf_node_misfit(const struct kerf_cluster *c,
				  const struct kerf_node *n,
				  const struct kerf_pod *p);

/*
 * Apply p to the node and GPUs of b.  Refuses (-KERF_ERANGE, nothing
 * changed) when the binding is malformed or would overcommit anything.
 * A GPU out of service takes a binding that fits what it holds (a pod
 * already running there, adopted); placement never chooses it, since
 * kerf_gpu_fits is false there.
 */
int kerf_cluster_bind(struct kerf_cluster *c, const struct kerf_pod *p,
		      struct kerf_binding b, struct kerf_err *err);

/* Undo a bind of the same pod and binding. */
int kerf_cluster_unbind(struct kerf_cluster *c, const struct kerf_pod *p,
			struct kerf_binding b, struct kerf_err *err);

/* Give every node a new stamp: cached verdicts about any node are stale. */
void kerf_cluster_touch_all(struct kerf_cluster *c);

/* Whole-structure invariant walk: free within capacity, sums consistent. */
int kerf_cluster_check(const struct kerf_cluster *c, struct kerf_err *err);

/* Totals over the cluster, for reports. */
int64_t kerf_cluster_gpu_milli_capacity(const struct kerf_cluster *c);
int64_t kerf_cluster_gpu_milli_used(const struct kerf_cluster *c);

#endif /* KERF_CORE_MODEL_H */
