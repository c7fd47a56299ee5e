/*
 * fit_index: which nodes could hold a GPU pod at all, kept up to date by
 * every change to a node, so that a selection visits only those.
 *
 * Bitmaps over node slots: idle_ge[k] (k = 1 .. KERF_NODE_MAX_GPUS) marks
 * the nodes with at least k idle GPUs (every milli free), partial the nodes
 * with a GPU partly used (0 < free < 1000), mig the nodes with GPUs in MIG
 * mode (a MIG pod fits nowhere else), up every node that takes pods (the
 * candidates of a pod without GPUs).  Cordoned nodes and free slots are in
 * none.
 * A pod of k whole GPUs can only fit a node of idle_ge[k]; a fraction of
 * one GPU only a node of idle_ge[1] or partial.  Every other node fails
 * some filter for it, so skipping them changes no decision (ties are
 * broken by rank, not by the order of the visit).
 *
 * Owned by the cluster (core/model.h); pure, integers only.
 */
#ifndef KERF_CORE_FIT_INDEX_H
#define KERF_CORE_FIT_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct kerf_node;
struct kerf_pod;

struct kerf_fit_index {
	uint64_t *bits;         /* (KERF_NODE_MAX_GPUS + 2) maps of cap_words */
	size_t cap_words;       /* words per map */
};

void kerf_fit_index_release(struct kerf_fit_index *x);

/* Make room for nr nodes and set every bit from nodes[]; -KERF_ENOMEM. */
int kerf_fit_index_build(struct kerf_fit_index *x, const struct kerf_node *nodes,
			 size_t nr);

/* Node i changed (bind, unbind, cordon): set its bits again. */
void kerf_fit_index_update(struct kerf_fit_index *x, const struct kerf_node *n,
			   size_t i);

/* Room for node i without a rebuild? */
static inline int kerf_fit_index_has_room(const struct kerf_fit_index *x,
					  size_t i)
{
	return i / 64 < x->cap_words;
}

/*
 * Word w of the candidates for pod p: for a GPU pod the nodes whose idle
 * and partly used GPUs could hold it, else every node that is up.
 */
uint64_t kerf_fit_index_word(const struct kerf_fit_index *x,
			     const struct kerf_pod *p, size_t w);

/* Do the bits of node i agree with it?  0 or -KERF_ERANGE. */
int kerf_fit_index_check_node(const struct kerf_fit_index *x,
			      const struct kerf_node *n, size_t i);

#endif
