/*
 * defrag: making room for a pod that fits nowhere by moving movable pods
 * (preemptible, checkpointed work) out of the way.
 *
 * Placement alone cannot undo stranding that earlier decisions caused: a
 * 470-milli fraction sitting alone on a GPU keeps a whole GPU from a
 * one-GPU pod, although it would pair with another 470 elsewhere.  When a
 * pod fits nowhere, defrag looks for a node where evicting a few movable
 * pods would let it fit and where every evicted pod fits somewhere else,
 * then does it: the moved pods are checkpointed, evicted and placed again,
 * and each loses the work since its last checkpoint.
 *
 * The choice per failing pod: candidate nodes are those where the pod would
 * fit with their movable pods gone, cheapest first (fewest moves, then
 * least work lost, then rank); on each (at most max_nodes per pod) the
 * fewest evictions that make room are tried, the pod is placed there and
 * the evicted pods are placed again anywhere else; if any of them fits
 * nowhere, everything is rolled back exactly.  A budget bounds the moves
 * and the lost GPU time per hour.
 *
 * The occupancy index (which pod sits where) is kept here, by the caller's
 * pod numbers, so the module needs nothing from any adapter.
 */
#ifndef KERF_CORE_DEFRAG_H
#define KERF_CORE_DEFRAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/framework.h"
#include "core/model.h"

enum { KERF_DEFRAG_MAX_MOVES = 16 };

struct kerf_defrag_budget {
	uint32_t max_moves_per_hour;
	int64_t max_lost_milli_ms_per_hour;  /* GPU milli x ms */
	uint32_t max_nodes;                  /* candidates tried per pod */
	uint32_t max_moves_per_pod;          /* <= KERF_DEFRAG_MAX_MOVES */
};

/* A placed pod, as the index sees it. */
struct kerf_defrag_pod {
	struct kerf_pod req;
	struct kerf_binding b;
	bool movable;
	bool placed;
	int64_t started_ms;         /* (re)started here; checkpoints from then */
	uint32_t next;              /* next pod on the same node, or NONE */
};

struct kerf_defrag_stats {
	uint64_t attempts;          /* pods that fit nowhere */
	uint64_t rescued;           /* placed thanks to moves */
	uint64_t moves;
	int64_t lost_milli_ms;      /* GPU time lost by moved pods */
	uint64_t over_budget;       /* rescues refused by the budget */
	uint64_t no_candidate;      /* no node could make room */
	uint64_t tries_failed;      /* moved pods found no other place */
};

struct kerf_defrag {
	struct kerf_defrag_budget budget;
	struct kerf_defrag_pod *pods;   /* by the caller's pod number */
	size_t nr_pods;
	uint32_t *head;                 /* first pod per node slot, or NONE */
	size_t nr_nodes;                /* the cluster's slots */
	uint8_t *only;                  /* scratch: the one target node */
	uint8_t *others;                /* scratch: every node but the target */
	/* the budget's hour */
	int64_t window_start_ms;
	uint32_t window_moves;
	int64_t window_lost;
	struct kerf_defrag_stats stats;
};

#define KERF_DEFRAG_NONE UINT32_MAX

/* nr_nodes: the cluster's node slots (kerf_cluster.nr_slots). */
int kerf_defrag_init(struct kerf_defrag *d, size_t nr_pods, size_t nr_nodes,
		     const struct kerf_defrag_budget *budget);
void kerf_defrag_release(struct kerf_defrag *d);

/* Pod i was bound at b at started_ms (movable or not). */
void kerf_defrag_placed(struct kerf_defrag *d, uint32_t i,
			const struct kerf_pod *req, struct kerf_binding b,
			bool movable, int64_t started_ms);

/*
 * Pod i (req) fits nowhere: try to make room by moving movable pods.  On
 * success the cluster holds i at *b and the moved pods at their new places
 * (all through the scheduler's reserve, so plug-ins see them), and true is
 * returned (record pod i with kerf_defrag_placed); otherwise nothing
 * changed.  Pods
 * checkpoint every checkpoint_every_ms from their start; a moved pod loses
 * the work since its last checkpoint and starts again where it lands.
 */
bool kerf_defrag_rescue(struct kerf_defrag *d, struct kerf_sched *s,
			struct kerf_cluster *c, uint32_t i,
			const struct kerf_pod *req, int64_t now_ms,
			int64_t checkpoint_every_ms, struct kerf_binding *b);

/*
 * Consolidation, ahead of need: a GPU held by a single movable fraction is
 * emptied by moving that fraction onto the partly used GPU it fits best
 * (least room left), freeing a whole GPU for the pods that need one.  At
 * most max_moves moves (and within the budget).  Returns the moves made.
 */
uint32_t kerf_defrag_consolidate(struct kerf_defrag *d, struct kerf_sched *s,
				 struct kerf_cluster *c, int64_t now_ms,
				 int64_t checkpoint_every_ms, uint32_t max_moves);

#endif /* KERF_CORE_DEFRAG_H */
