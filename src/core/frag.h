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
 * floor(100 * sigmoid(dF / 1000)), decided in integers against a
 * fixed-point threshold table instead of a floating exp().
 */
#ifndef KERF_CORE_FRAG_H
#define KERF_CORE_FRAG_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/model.h"

struct kerf_dist_entry {
	struct kerf_pod pod;   /* typical request; memory 0 unless MEAN_MEM */
	int64_t weight;        /* > 0 */
};

struct kerf_pod_dist {
	struct kerf_dist_entry *entries; /* heaviest first */
	size_t nr;
	size_t alloc;
	int64_t total_weight;  /* sum of weights, <= KERF_DIST_MAX_WEIGHT */
	int class_level;       /* 0: exact keys; 1..7: size classes */
};

enum {
	/*
	 * Record the weighted mean memory of each key (the key itself stays
	 * cpu, gpu_milli, nr_gpus, model mask, as FGD's).
	 */
	KERF_DIST_MEAN_MEM = 1u << 0,
};

/* Bound on total_weight so that scaled comparisons fit in int64. */
#define KERF_DIST_MAX_WEIGHT ((int64_t)1 << 30)

/*
 * Bound on the entries of a typical distribution.  Every fragment measure
 * costs one step per entry, for every node scored and every GPU a fraction
 * tries, and a cluster sending many distinct requests defeats the score
 * cache, so this bounds the cost of a decision: 64 steps of 4-7 ns are a
 * few best-fit evaluations.  FGD's rule takes 32 to 40 keys on five of
 * the six openb traces, which keep them exactly; gpuspec10's 74 become 62
 * size classes (kerf_pod_dist_typical_bounded), as thousands of distinct
 * requests do.  docs/placement.md §6 has the figures.
 */
enum { KERF_DIST_MAX_ENTRIES = 64 };

/* Class levels: 0 (exact keys) .. KERF_DIST_LEVELS - 1 (coarsest). */
enum { KERF_DIST_LEVELS = 8 };

void kerf_pod_dist_init(struct kerf_pod_dist *d);
void kerf_pod_dist_release(struct kerf_pod_dist *d);

/*
 * FGD's "typical pods": group pods by key (cpu, gpu_milli, nr_gpus, model
 * mask), sort by count (ties by larger cpu, gpu_milli, nr_gpus, model mask),
 * take keys until coverage_pct percent of the pods are covered.  With
 * KERF_DIST_MEAN_MEM each key carries the mean memory of its pods, else 0.
 * Replaces d's contents.
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

/*
 * The typical pods with at most max_entries entries (the two functions
 * above use KERF_DIST_MAX_ENTRIES).  FGD's rule is applied to the exact
 * keys; when it needs more than max_entries of them, the workload is too
 * diverse for single requests to be typical, and the rule is applied to
 * size classes instead, at the finest level whose typical set fits:
 *
 *   level  CPU class (geometric)       fraction class    GPUs, models
 *   0      exact                       exact             exact
 *   1..6   top 6 - level bits kept     16 << (level-1)   exact
 *          (level 1: 3 %, 6: octaves)  milli wide
 *   7      one class                   one class         exact
 *
 * (kerf_pod_dist_class).  Whole-GPU and CPU-only requests keep their GPU
 * milli.  A class's entry weighs what its keys weigh together and asks
 * their weighted mean CPU and GPU milli (floored: it lies within the class)
 * and, with KERF_DIST_MEAN_MEM, mean memory; ties in weight go by larger
 * representative, as for keys.  Only when even level 7 needs more than
 * max_entries classes (more GPU counts times model sets than that) is the
 * set cut to the max_entries heaviest.  d->class_level records the level.
 * Integer-only and independent of the order of entries.
 */
int kerf_pod_dist_typical_bounded(struct kerf_pod_dist *d,
				  const struct kerf_dist_entry *entries,
				  size_t nr, int coverage_pct,
				  size_t max_entries, unsigned flags,
				  struct kerf_err *err);

/* The class key of p at a level of kerf_pod_dist_typical_bounded. */
struct kerf_pod kerf_pod_dist_class(const struct kerf_pod *p, int level);

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
};

void kerf_frag_view_of(struct kerf_frag_view *v, const struct kerf_node *n);

/* The view after placing p on the GPUs in mask gpus. */
void kerf_frag_view_sub(struct kerf_frag_view *v, const struct kerf_pod *p,
			uint16_t gpus);

/* F(v) * total_weight, in milli-GPU. */
int64_t kerf_frag_amount(const struct kerf_pod_dist *d,
			 const struct kerf_frag_view *v, unsigned flags);

/*
 * The capacity-bounded fragment amount (kerf's second measure):
 *
 *   C(n) = sum_m w_m * (idle(n) - usable_m(n))
 *
 * usable_m(n) is the GPU capacity a stream of pods like m alone could still
 * use on n: the GPUs with room for m (for whole-GPU pods, whole multiples of
 * m's GPU count), but no more than n's free CPU (and, with KERF_FRAG_MEM,
 * memory) leaves room for.  Where F asks "can one more m fit", C asks "how
 * much of the idle GPU can m-pods still reach", so it sees the GPUs that
 * CPU or memory will strand before the last one is gone.  Times total weight.
 */
int64_t kerf_frag_capacity(const struct kerf_pod_dist *d,
			   const struct kerf_frag_view *v, unsigned flags);

/* F and C together, in one pass (c_out may be NULL). */
void kerf_frag_measures(const struct kerf_pod_dist *d,
			const struct kerf_frag_view *v, unsigned flags,
			int64_t *f_out, int64_t *c_out);

/*
 * A fragment measure of a view, times the distribution's total weight:
 * FGD's F for fgd, F + cap% * C for kerf.  ctx is the caller's.
 */
typedef int64_t (*kerf_frag_measure_fn)(const void *ctx,
					const struct kerf_pod_dist *d,
					const struct kerf_frag_view *v);

/*
 * FGD's score of placing p on node n (v: n's view; m0: measure(v)), and the
 * GPUs in *gpus.  Whole GPUs are the best-fit picker's.  A fraction tries
 * each GPU that fits, scoring measure(v after p on it), and keeps the best;
 * GPUs with equal free milli score alike, so only the first of them is
 * tried, and ties go to the lowest index.  0, *gpus untouched, when no GPU
 * fits a fraction.  The one placement search of the fgd and kerf plug-ins.
 */
int32_t kerf_frag_score_pod(const struct kerf_node *n, const struct kerf_pod *p,
			    const struct kerf_frag_view *v, int64_t m0,
			    const struct kerf_pod_dist *d,
			    kerf_frag_measure_fn measure, const void *ctx,
			    uint16_t *gpus);

/*
 * Total variation distance of two distributions over keys (over classes
 * when they are size classes), per mille; 1000 when their levels differ.
 */
int64_t kerf_pod_dist_distance(const struct kerf_pod_dist *a,
			       const struct kerf_pod_dist *b);

/*
 * floor(100 * sigmoid(delta / total / 1000)), as FGD scores a placement,
 * decided against a table of thresholds in 1/65536 milli-GPU (rounded to
 * nearest) instead of a floating exp(): it can differ from libm by one point
 * only when dF lies within 2^-16 milli-GPU of a score boundary.
 */
int kerf_fgd_score(int64_t delta_weighted, int64_t total_weight);

#endif /* KERF_CORE_FRAG_H */
