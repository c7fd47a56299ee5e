/*
 * gpuspec: pod lists of the openb "gpuspecXX" family for any XX, derived
 * from a base trace (openb_pod_list_default.csv) the way the published
 * gpuspec05..33 files were made from it.
 *
 * What the published files show (compared row by row with default): every
 * column but gpu_spec is unchanged; CPU-only pods never get a spec; each GPU
 * pod is chosen independently (the shares are 5.2 / 10.4 / 20.4 / 24.9 /
 * 33.8 % of GPU pods, not exact), and which models a chosen pod names depends
 * on its kind: a fraction of a GPU names T4 or P100 (the models that are
 * shared in production) or a list of five; a whole GPU names T4, G2, V100
 * lists, G3, ...; a multi-GPU pod names an 8-GPU model.  Fractions are
 * chosen somewhat less often than whole GPUs (8.8 % against 11.6 % in
 * gpuspec10).  The sets of chosen pods of two files are unrelated.
 *
 * So a generator is learned from one published file of the family (the
 * reference, e.g. openb_pod_list_gpuspec10.csv): per pod kind (fraction,
 * one whole GPU, several GPUs), how often a pod of that kind names a model
 * relative to all GPU pods, and the spec strings it names with their counts.
 * A trace with share XX % is then drawn from the base with a seed: each GPU
 * pod is chosen with probability XX % times its kind's relative rate (at
 * most 1), and a chosen pod draws its spec from its kind's counts.  Nothing
 * of the trace is built in: the reference is read at run time.
 */
#ifndef KERF_SIM_GPUSPEC_H
#define KERF_SIM_GPUSPEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/arena.h"
#include "base/err.h"
#include "sim/openb.h"

enum {
	KERF_GPUSPEC_FRACTION,   /* one GPU, gpu_milli < 1000 */
	KERF_GPUSPEC_ONE,        /* one whole GPU */
	KERF_GPUSPEC_MULTI,      /* two GPUs or more */
	KERF_GPUSPEC_KINDS,
	KERF_GPUSPEC_MAX_SPECS = 1024, /* distinct spec strings per kind */
};

struct kerf_gpuspec_choice {
	const char *spec;        /* owned by the generator's arena */
	int64_t count;           /* pods of the reference naming it, > 0 */
};

struct kerf_gpuspec_kind {
	int64_t nr_pods;         /* GPU pods of this kind in the reference */
	int64_t nr_named;        /* ... of which name a model */
	struct kerf_gpuspec_choice *choices; /* sorted by spec string */
	size_t nr_choices;
	size_t alloc_choices;
};

struct kerf_gpuspec_gen {
	struct kerf_arena arena;
	struct kerf_gpuspec_kind kinds[KERF_GPUSPEC_KINDS];
	int64_t nr_pods;         /* GPU pods of the reference */
	int64_t nr_named;
};

/* The kind of a GPU pod, or -1 for a CPU-only pod. */
int kerf_gpuspec_kind_of(const struct kerf_openb_pod *p);

void kerf_gpuspec_init(struct kerf_gpuspec_gen *g);
void kerf_gpuspec_release(struct kerf_gpuspec_gen *g);

/*
 * Learn the rates and spec counts of the pods of ref (replaces g's).
 * -KERF_EINVAL when ref has no GPU pod naming a model.
 */
int kerf_gpuspec_learn(struct kerf_gpuspec_gen *g, const struct kerf_openb *ref,
		       struct kerf_err *err);

/*
 * Draw the specs of base's pods for share_pct percent of GPU pods (0..100)
 * with seed: specs[i] receives the spec of base->pods[i] ("" = none; the
 * strings belong to g).  specs must hold base->nr_pods entries.  Returns the
 * number of pods that name a model.
 */
int64_t kerf_gpuspec_draw(const struct kerf_gpuspec_gen *g,
			  const struct kerf_openb *base, int share_pct,
			  uint64_t seed, const char **specs);

/*
 * Copy the pod list in data (the base file's text, which must parse to the
 * same rows as base) to out with the gpu_spec column replaced by specs[]
 * (added as the last column if the file has none); every other byte of a
 * row is kept.  Returns 0 or a negative error with the row in err.
 */
int kerf_gpuspec_write(FILE *out, const char *path, const char *data,
		       size_t len, size_t nr_pods, const char *const *specs,
		       struct kerf_err *err);

#endif /* KERF_SIM_GPUSPEC_H */
