/*
 * view: kerf's read-only views of the scheduling core (docs/api.md), the
 * JSON that kerf serve's API answers and that a simulator snapshot holds,
 * built from struct kerf_state alone so both give the same shapes:
 *   tenants   TenantList: the tree, quota and usage per flavor, budgets
 *   queue     Queue: pending work in the order the next cycle takes it
 *   nodes     NodeList: nodes, free GPUs, MIG, what the caller adds
 *   gpus      GPUList: every GPU, its mode, what is free, whose pods
 *   explain   the core's layers of an Explanation, for one workload
 * What only the caller knows (kerf serve's pods and Node marks, the
 * simulator's names) comes in through small callbacks.  Every builder
 * returns 0 or -KERF_ENOMEM and leaves *out (the caller decrefs it).
 */
#ifndef KERF_VIEW_VIEW_H
#define KERF_VIEW_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/state.h"

/* TenantList of st. */
int kerf_view_tenants(const struct kerf_state *st, json_t **out);

/* Queue of st at now_ms: kind, apiVersion, items (the caller may add). */
int kerf_view_queue(const struct kerf_state *st, int64_t now_ms, json_t **out);

/* What a node item says beyond the core: NULL fields are null. */
struct kerf_view_node_extra {
	const char *cordon_reason;     /* why cordoned; NULL: "lost" */
	const char *nvlink_domain;     /* the domain's name */
	const char *marks_error;       /* the GPU marks did not read */
	const char *util_error;        /* the utilisation did not read */
	uint64_t util_gpus;            /* bit g: util_pct[g] has a value */
	const uint8_t *util_pct;       /* 64 entries, or NULL */
};

/* Fill *x for n: true when there is something (else the defaults). */
typedef bool (*kerf_view_node_fn)(void *ctx, const struct kerf_node *n,
				  struct kerf_view_node_extra *x);

/* One NodeList item (x may be NULL); rc as kerf_api_put. */
json_t *kerf_view_node(const struct kerf_cluster *c, const struct kerf_node *n,
		       const struct kerf_view_node_extra *x, int *rc);

/* NodeList of c in rank order (then name); extra may be NULL. */
int kerf_view_nodes(const struct kerf_cluster *c, kerf_view_node_fn extra, void *ctx,
		    json_t **out);

/*
 * A pod on a GPU, as the caller names it: namespace and name (written
 * into ns and name, each of size bytes).  false: leave the pod out.
 */
typedef bool (*kerf_view_pod_fn)(void *ctx, const struct kerf_workload *wl,
				 uint32_t pod, char *ns, char *name, size_t size);

/*
 * GPUList of st: every GPU of every node in rank order (then name), then
 * by index; the pods on each from the running workloads' bindings, named
 * by pod_name (ctx is its).  The simulator's way to kerf_view_gpu_list.
 */
int kerf_view_gpus(const struct kerf_state *st, kerf_view_pod_fn pod_name,
		   void *ctx, json_t **out);

/* One pod on one GPU, as its caller knows it (kerf serve: its pods). */
struct kerf_view_gpu_pod {
	uint32_t pos;                  /* the node's place in rank order */
	uint8_t gpu;                   /* the GPU's index on the node */
	uint8_t mig_start;             /* MIG pods: the instance's first slice */
	int tenant;                    /* index in st->tenants */
	const struct kerf_pod *req;    /* the request the core charged */
	const char *ns, *name;         /* borrowed */
};

/*
 * GPUList of st with the pods v[0..nr) (sorted here, by place then
 * namespace and name): the one builder of kerf serve's GET /api/v1/gpus
 * and of a snapshot's "gpus", so both have the same shape and meaning.
 */
int kerf_view_gpu_list(const struct kerf_state *st, struct kerf_view_gpu_pod *v, size_t nr,
		       json_t **out);

/* "every pod on one node", ... (the workload's topology in words). */
const char *kerf_view_topology_text(enum kerf_topology t);

/* A layer {layer, blocking, message} appended to a; returned (borrowed). */
json_t *kerf_view_layer(json_t *a, const char *name, bool blocking,
			const char *message, int *rc);

/* layer["unblock"] = text: what would unblock a blocking layer. */
void kerf_view_unblock(json_t *layer, const char *text, int *rc);

/* The workload's fields from state to message (docs/api.md) into o. */
void kerf_view_workload_fields(const struct kerf_state *st, const struct kerf_workload *wl,
			       int64_t now_ms, json_t *o, int *rc);

/* The core's layers for wl, blocking as its last verdict says, onto a. */
void kerf_view_core_layers(const struct kerf_state *st, const struct kerf_workload *wl,
			   int64_t now_ms, json_t *a, int *rc);

#endif /* KERF_VIEW_VIEW_H */
