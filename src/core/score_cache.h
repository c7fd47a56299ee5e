/*
 * score_cache: verdicts of pure plug-ins per (pod shape, node).
 *
 * A row per distinct pod request (the shape), an entry per node slot
 * holding the node stamp it was computed at.  Rows widen as the cluster
 * gains slots; adding or removing nodes never empties the cache (stamps
 * are unique within a cluster, so an entry never matches another node).  An entry is valid while the node's stamp is
 * unchanged and the cache generation is the row's.  Bounded: at most
 * max_shapes rows; a shape beyond that is simply not cached.
 */
#ifndef KERF_CORE_SCORE_CACHE_H
#define KERF_CORE_SCORE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "core/model.h"

struct kerf_cache_entry {
	uint32_t stamp;      /* node stamp when computed; 0 = empty */
	int32_t score;
	uint16_t gpus;
	uint8_t fit;         /* 1 = passed every filter */
	uint8_t pad;
};

struct kerf_cache_row {
	struct kerf_pod key;
	uint64_t hash;
	uint64_t generation;
	struct kerf_cache_entry *entries; /* nr_nodes entries */
};

struct kerf_score_cache {
	struct kerf_cache_row *rows;   /* open addressing, nr_slots slots */
	size_t nr_slots;
	size_t nr_rows;
	size_t max_rows;
	size_t nr_nodes;               /* entries per row: node slots covered */
	uint64_t generation;
	const struct kerf_cluster *cluster;
	uint32_t last_stamp_seq;
};

void kerf_score_cache_init(struct kerf_score_cache *sc, size_t max_rows);
void kerf_score_cache_release(struct kerf_score_cache *sc);

/* Every entry becomes invalid (O(1)). */
void kerf_score_cache_invalidate(struct kerf_score_cache *sc);

/*
 * The row for p in cluster c, created if there is room; NULL when the cache
 * is full or out of memory (the caller then evaluates without caching).
 */
struct kerf_cache_entry *kerf_score_cache_row(struct kerf_score_cache *sc,
					      const struct kerf_cluster *c,
					      const struct kerf_pod *p);

#endif /* KERF_CORE_SCORE_CACHE_H */
