/*
 * frag: the fragmentation measure of FGD (Weng et al., USENIX ATC'23) and
 * the workload distribution it is taken against.
 *
 * A distribution is a list of typical requests with integer weights (counts
 * of pods).  The fragment amount of a node is the expected GPU capacity, in
 * milli-GPU, that a pod drawn from the distribution could not use there:
 *
 *   F(n) = sum_m w_m * f_m(n)            (0 when the node has no idle GPU)
 *   f_m(n) = idle(n)                     m asks no GPU, or not this model
 *          = sum of GPUs too small for m m fits (enough GPUs, cpu[, memory])
 *          = idle(n)                     otherwise
 *
 * F is kept multiplied by the total weight so all arithmetic stays integer.
 * kerf_fgd_score turns a decrease of F into FGD's 0..100 score:
 * floor(100 * sigmoid(dF / 1000)), decided exactly against a fixed-point
 * threshold table instead of a floating exp().
 */
#ifndef KERF_CORE_FRAG_H
#define KERF_CORE_FRAG_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/model.h"

struct kerf_dist_entry {
	struct kerf_pod pod;   /* typical request; mem_mib 0 unless kept */
	int64_t weight;        /* > 0 */
};

struct kerf_pod_dist {
	struct kerf_dist_entry *entries; /* heaviest first */
	size_t nr;
	size_t alloc;
	int64_t total_weight;  /* sum of weights, <= KERF_DIST_MAX_WEIGHT */
};

enum {
	/* Keep memory in the key (FGD's key is cpu, gpu, count, model). */
	KERF_DIST_KEEP_MEM = 1u << 0,
	/* Key without memory, but record the mean memory of each key. */
	KERF_DIST_MEAN_MEM = 1u << 1,
};

/* Bound on total_weight so that scaled comparisons fit in int64. */
#define KERF_DIST_MAX_WEIGHT ((int64_t)1 << 30)

void kerf_pod_dist_init(struct kerf_pod_dist *d);
void kerf_pod_dist_release(struct kerf_pod_dist *d);

/*
 * FGD's "typical pods": group pods by key, sort by count (ties by larger
 * cpu, gpu_milli, nr_gpus, model mask), take keys until coverage_pct percent
 * of the pods are covered.  Replaces d's contents.
 */
int kerf_pod_dist_typical(struct kerf_pod_dist *d, const struct kerf_pod *pods,
			  size_t nr_pods, int coverage_pct, unsigned flags,
			  struct kerf_err *err);

/*
 * The same from weighted requests (entries[i].weight > 0; equal keys may
 * repeat and are merged).
 */
int kerf_pod_dist_typical_weighted(struct kerf_pod_dist *d,
				   const struct kerf_dist_entry *entries,
				   size_t nr, int coverage_pct, unsigned flags,
				   struct kerf_err *err);

/* The free resources F is computed from; a node or a node after a pod. */
struct kerf_frag_view {
	int64_t cpu_free_milli;
	int64_t mem_free_mib;
	uint16_t model;
	uint8_t nr_gpus;
	int16_t gpu_free_milli[KERF_NODE_MAX_GPUS];
};

enum {
	/* A typical pod that lacks memory cannot use the node either. */
	KERF_FRAG_MEM = 1u << 0,
	/* Count what copies of each typical pod leave unused, not one copy. */
	KERF_FRAG_MULTI = 1u << 1,
	/* With MULTI: an idle GPU counts as wholly usable by a fraction. */
	KERF_FRAG_IDLE_USABLE = 1u << 2,
	/* With MULTI: CPU does not limit the copies. */
	KERF_FRAG_NO_CPU = 1u << 3,
	/* With MULTI: a fraction's copies are not cut to whole multiples. */
	KERF_FRAG_NO_REM = 1u << 4,
	/* With MULTI: only typical pods of at most one GPU count. */
	KERF_FRAG_SMALL_ONLY = 1u << 5,
	/* With MULTI: only fractions count. */
	KERF_FRAG_FRACTION_ONLY = 1u << 6,
	/* With MULTI: count only GPU capacity that CPU or memory strands. */
	KERF_FRAG_STRANDED = 1u << 7,
};

void kerf_frag_view_of(struct kerf_frag_view *v, const struct kerf_node *n);

/* The view after placing p on the GPUs in mask gpus. */
void kerf_frag_view_sub(struct kerf_frag_view *v, const struct kerf_pod *p,
			uint16_t gpus);

/* F(v) * total_weight, in milli-GPU. */
int64_t kerf_frag_amount(const struct kerf_pod_dist *d,
			 const struct kerf_frag_view *v, unsigned flags);

/* floor(100 * sigmoid(delta / total / 1000)), as FGD scores a placement. */
int kerf_fgd_score(int64_t delta_weighted, int64_t total_weight);

#endif /* KERF_CORE_FRAG_H */
