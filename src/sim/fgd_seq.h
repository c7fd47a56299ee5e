/*
 * fgd_seq: the submission sequence of the FGD experiments.
 *
 * The trace (in file order) is shuffled with the seed; then, if its GPU
 * request is below inflate_pct percent of the cluster's GPU capacity, pods
 * drawn uniformly with replacement from the trace are appended until the next
 * draw would pass the target; if above, pods are removed at random until it
 * is not.  Pods are only created, never deleted.
 */
#ifndef KERF_SIM_FGD_SEQ_H
#define KERF_SIM_FGD_SEQ_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/model.h"

/* *seq receives indices into pods[] (malloc'd, caller frees). */
int kerf_fgd_seq_build(const struct kerf_pod *pods, size_t nr_pods,
		      int64_t capacity_gpu_milli, int inflate_pct,
		      uint64_t seed, uint32_t **seq, size_t *nr_seq,
		      struct kerf_err *err);

/* Seed of the node order of a run, derived from the run's seed. */
uint64_t kerf_fgd_seq_node_seed(uint64_t seed);

#endif /* KERF_SIM_FGD_SEQ_H */
