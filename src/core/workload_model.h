/*
 * workload_model: what kerf has learned of the arriving workload, from pods
 * that have arrived and nothing else.
 *
 * Arrivals are counted by key (cpu, gpu_milli, nr_gpus, model mask), with the
 * memory they asked kept as a running sum so each key knows its mean.  On a
 * geometric schedule (after 1, 2, 4, ... arrivals, then every rebuild_max)
 * a candidate typical distribution is derived from the counts; it replaces
 * the one in use only when it differs from it by at least adopt_permille in
 * total variation.  So the distribution settles once the workload does, and
 * scores cached against it stay valid, yet a shift in the workload is
 * followed.  Bounded: at most max_keys distinct keys (later new keys are
 * counted only in nr_seen), and counts are halved when their sum nears the
 * distribution's weight bound, which also lets old arrivals fade.
 */
#ifndef KERF_CORE_WORKLOAD_MODEL_H
#define KERF_CORE_WORKLOAD_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/frag.h"

struct kerf_workload_key;

struct kerf_workload_model {
	struct kerf_workload_key *keys; /* distinct keys with counts */
	size_t nr_keys;
	size_t alloc_keys;
	size_t max_keys;
	uint32_t *slots;                /* hash index: key position + 1 */
	size_t nr_slots;
	int64_t nr_seen;
	int64_t weight_sum;
	int64_t next_rebuild;           /* nr_seen at the next rebuild */
	int64_t rebuild_max;            /* longest gap between rebuilds */
	int64_t adopt_permille;         /* distance that replaces the dist */
	int coverage_pct;
	uint32_t nr_adopted;            /* times the distribution changed */
	struct kerf_pod_dist dist;      /* current typical distribution */
};

int kerf_workload_model_init(struct kerf_workload_model *m, int coverage_pct,
			     int64_t rebuild_max, int64_t adopt_permille,
			     size_t max_keys);
void kerf_workload_model_release(struct kerf_workload_model *m);

/*
 * What the model has learned, as words (malloc'd): its counts and the
 * distribution in use, so a restarted controller goes on where it was
 * (core/persist.h).  Load checks the words whole (counts, ranges, sums,
 * no key twice, at most max_keys) and changes nothing when they are wrong.
 */
int kerf_workload_model_save(const struct kerf_workload_model *m,
			     int64_t **words, size_t *nr);
int kerf_workload_model_load(struct kerf_workload_model *m, const int64_t *words,
			     size_t nr, struct kerf_err *err);

/* Count one arrival; true when m->dist changed. */
bool kerf_workload_model_observe(struct kerf_workload_model *m,
				 const struct kerf_pod *p);

#endif /* KERF_CORE_WORKLOAD_MODEL_H */
