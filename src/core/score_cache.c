#include "core/score_cache.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

static uint64_t pod_hash(const struct kerf_pod *p)
{
	uint64_t h = 0x243f6a8885a308d3ULL;

	h = mix(h, (uint64_t)p->cpu_milli);
	h = mix(h, (uint64_t)p->mem_mib);
	h = mix(h, (uint64_t)(uint32_t)p->gpu_milli);
	h = mix(h, (uint64_t)(uint32_t)p->gpu_mem_mib);
	h = mix(h, p->nr_gpus);
	h = mix(h, p->model_mask);
	h = mix(h, (uint64_t)p->mig_slices << 48 | (uint64_t)p->share << 40 |
		   (uint64_t)p->isolation << 32 | p->tenant);
	h = mix(h, p->need_labels);
	h = mix(h, p->tolerates);
	return h ^ (h >> 29);
}

static bool pod_same(const struct kerf_pod *a, const struct kerf_pod *b)
{
	return a->cpu_milli == b->cpu_milli && a->mem_mib == b->mem_mib &&
	       a->gpu_milli == b->gpu_milli &&
	       a->gpu_mem_mib == b->gpu_mem_mib && a->nr_gpus == b->nr_gpus &&
	       a->model_mask == b->model_mask && a->share == b->share &&
	       a->isolation == b->isolation && a->tenant == b->tenant &&
	       a->mig_slices == b->mig_slices &&
	       a->need_labels == b->need_labels && a->tolerates == b->tolerates;
}

void kerf_score_cache_init(struct kerf_score_cache *sc, size_t max_rows)
{
	memset(sc, 0, sizeof(*sc));
	sc->max_rows = max_rows;
	sc->generation = 1;
}

static void drop_rows(struct kerf_score_cache *sc)
{
	for (size_t i = 0; i < sc->nr_slots; i++)
		free(sc->rows[i].entries);
	free(sc->rows);
	sc->rows = NULL;
	sc->nr_slots = 0;
	sc->nr_rows = 0;
}

void kerf_score_cache_release(struct kerf_score_cache *sc)
{
	drop_rows(sc);
	kerf_score_cache_init(sc, sc->max_rows);
}

void kerf_score_cache_invalidate(struct kerf_score_cache *sc)
{
	sc->generation++;
}

/* Every row gets entries for nr slots (new ones empty). */
static int widen(struct kerf_score_cache *sc, size_t nr)
{
	for (size_t i = 0; i < sc->nr_slots; i++) {
		struct kerf_cache_entry *e;

		if (!sc->rows[i].entries)
			continue;
		e = realloc(sc->rows[i].entries, nr * sizeof(*e));
		if (!e) {
			/* rows of two widths cannot be told apart: start again */
			drop_rows(sc);
			sc->nr_nodes = 0;
			return -1;
		}
		memset(e + sc->nr_nodes, 0, (nr - sc->nr_nodes) * sizeof(*e));
		sc->rows[i].entries = e;
	}
	sc->nr_nodes = nr;
	return 0;
}

static int ensure_table(struct kerf_score_cache *sc)
{
	size_t slots = 16;

	if (sc->rows)
		return 0;
	while (slots < sc->max_rows * 2)
		slots *= 2;
	sc->rows = calloc(slots, sizeof(*sc->rows));
	if (!sc->rows)
		return -1;
	sc->nr_slots = slots;
	return 0;
}

struct kerf_cache_entry *kerf_score_cache_row(struct kerf_score_cache *sc,
					      const struct kerf_cluster *c,
					      const struct kerf_pod *p)
{
	uint64_t h = pod_hash(p);
	struct kerf_cache_row *row;
	size_t i;

	if (sc->max_rows == 0 || c->nr_slots == 0)
		return NULL;
	/*
	 * Stamps are only comparable within one cluster whose stamp counter
	 * went forward; anything else starts the cache afresh.  New slots
	 * only widen the rows: every stamp is new, so no entry can match a
	 * node it was not computed for.
	 */
	if (sc->cluster != c || c->stamp_seq < sc->last_stamp_seq) {
		drop_rows(sc);
		sc->cluster = c;
		sc->nr_nodes = 0;
	}
	/* an eighth more than needed: nodes added one by one widen rarely */
	if (c->nr_slots > sc->nr_nodes && widen(sc, c->nr_slots + c->nr_slots / 8) < 0)
		return NULL;
	sc->last_stamp_seq = c->stamp_seq;
	if (ensure_table(sc) < 0)
		return NULL;
	for (i = h & (sc->nr_slots - 1);; i = (i + 1) & (sc->nr_slots - 1)) {
		row = &sc->rows[i];
		if (!row->entries)
			break;
		if (row->hash == h && pod_same(&row->key, p)) {
			if (row->generation != sc->generation) {
				memset(row->entries, 0,
				       sc->nr_nodes * sizeof(*row->entries));
				row->generation = sc->generation;
			}
			return row->entries;
		}
	}
	if (sc->nr_rows >= sc->max_rows)
		return NULL;
	row->entries = calloc(sc->nr_nodes, sizeof(*row->entries));
	if (!row->entries)
		return NULL;
	row->key = *p;
	row->hash = h;
	row->generation = sc->generation;
	sc->nr_rows++;
	return row->entries;
}
