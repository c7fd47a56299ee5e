/*
 * mig/geometry: the MIG profiles of each GPU model and the rules that make
 * a layout of GPU instances legal.
 *
 * A GPU in MIG mode has 8 memory slices (A30: 4) and 7 compute slices
 * (A30: 4).  A GPU instance of a profile occupies `mem_slices` consecutive
 * memory slices from one of the profile's legal starts; instances never
 * overlap on the memory axis, their compute slices add up to at most the
 * GPU's, and no profile has more instances than its `max_instances`.
 *
 * The tables are for planning, simulation and tests.  On a real node the
 * agent reads the profiles and placements from NVML, because values change
 * with the driver (memory sizes differ by a few hundred MiB); every table
 * cites the NVIDIA document it follows (geometry.c).
 */
#ifndef KERF_CORE_MIG_GEOMETRY_H
#define KERF_CORE_MIG_GEOMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

enum {
	KERF_MIG_MAX_PROFILES = 8,   /* per model */
	KERF_MIG_MAX_SLICES = 8,     /* memory slices of a GPU */
	KERF_MIG_MAX_INSTANCES = 8,  /* instances on one GPU */
	KERF_MIG_MAX_PCI_IDS = 4,
};

struct kerf_mig_profile {
	const char *name;            /* "1g.10gb", "1g.10gb+me" */
	uint8_t nvml_id;             /* info.id, what nvidia-smi prints as ID */
	uint8_t compute_slices;      /* the "g" number (NVML sliceCount) */
	uint8_t mem_slices;          /* placement size */
	uint8_t max_instances;       /* NVML instanceCount */
	uint8_t starts;              /* bit s set: may start at memory slice s */
	bool media_ext;              /* "+me": owns the media engines */
	uint32_t mem_mib;            /* as listed; 0 when unpublished */
	uint16_t sm_count;           /* multiprocessors; 0 when unpublished */
};

struct kerf_mig_model {
	const char *name;            /* "A100-SXM4-40GB" */
	const char *aliases;         /* other names, '|'-separated ("A100-40GB|...") */
	uint32_t pci_ids[KERF_MIG_MAX_PCI_IDS];  /* 0xDDDD10DE; 0 ends */
	uint8_t mem_slices;          /* 8, A30: 4 */
	uint8_t compute_slices;      /* 7, A30: 4 */
	uint32_t mem_mib;            /* of the whole GPU */
	const struct kerf_mig_profile *profiles;
	uint8_t nr_profiles;
	const char *source;          /* the NVIDIA document the table follows */
};

/* Every model with a table, in a fixed order. */
const struct kerf_mig_model *kerf_mig_models(size_t *nr);

/*
 * The model called name (its name or one of its aliases, compared without
 * case, a space and a '-' alike: NVML's name and GPU feature discovery's
 * product label both find it), or NULL.
 */
const struct kerf_mig_model *kerf_mig_model_find(const char *name);

/* Index of the profile called name in m (exact), or -1. */
int kerf_mig_profile_find(const struct kerf_mig_model *m, const char *name);

/*
 * What an instance of profile p counts against a quota, in GPU-milli of
 * the flavor: its share of the GPU's compute slices, rounded down (a 3g
 * on a 7-slice GPU counts 428, a 1g 142, a 7g 1000).  Rounding down keeps
 * the charges of a legal layout within 1000, since its compute slices
 * never add up to more than the GPU's: seven 1g count 994, a 3g and a 4g
 * 999.  The charges are what a node's MIG GPU holds in use.
 */
static inline int32_t kerf_mig_gpu_milli(const struct kerf_mig_model *m, unsigned p)
{
	return (int32_t)(m->profiles[p].compute_slices * 1000 / m->compute_slices);
}

/*
 * Memory of an instance of profile p in MiB: as listed, or where no size
 * was published its share of the GPU's memory slices.
 */
uint32_t kerf_mig_profile_mem_mib(const struct kerf_mig_model *m, unsigned p);

/*
 * The profile that serves a request of at least `slices` compute slices
 * and `mem_mib` of memory: the fewest compute slices, then the fewest
 * memory slices, never a "+me" profile (media engines are asked for by
 * name), lowest index on ties.  -1 when no profile is large enough.
 */
int kerf_mig_profile_for(const struct kerf_mig_model *m, unsigned slices,
			 uint32_t mem_mib);

/* The memory slices an instance of profile p at start covers, as a bitmask. */
static inline uint32_t kerf_mig_span(const struct kerf_mig_profile *p,
				     unsigned start)
{
	return ((1u << p->mem_slices) - 1u) << start;
}

/* One GPU instance. */
struct kerf_mig_instance {
	uint8_t profile;             /* index into the model's profiles */
	uint8_t start;               /* first memory slice */
	bool in_use;                 /* work runs on it: never destroyed */
	bool down;                   /* out of service: never handed out,
					never destroyed (in use or not) */
};

/* May placement neither hand out nor destroy the instance? */
static inline bool kerf_mig_inst_held(const struct kerf_mig_instance *in)
{
	return in->in_use || in->down;
}

/* The instances of one GPU. */
struct kerf_mig_layout {
	struct kerf_mig_instance inst[KERF_MIG_MAX_INSTANCES];
	uint8_t nr;
};

/*
 * Is layout legal on a GPU of model m?  0, or -KERF_EINVAL with a sentence
 * naming the instance (by index, profile and start) and the rule broken:
 * unknown profile, start not among the profile's placements, overlap with
 * another instance, more than max_instances of a profile, compute slices
 * over the GPU's.
 */
int kerf_mig_layout_check(const struct kerf_mig_model *m,
			  const struct kerf_mig_layout *layout,
			  struct kerf_err *err);

/* Memory slices the layout covers, as a bitmask. */
uint32_t kerf_mig_layout_used(const struct kerf_mig_model *m,
			      const struct kerf_mig_layout *layout);

/*
 * Could an instance of profile p be added at start without breaking any
 * rule (placement, overlap, instance count, compute slices)?
 */
bool kerf_mig_can_add(const struct kerf_mig_model *m,
		      const struct kerf_mig_layout *layout, unsigned p,
		      unsigned start);

#endif /* KERF_CORE_MIG_GEOMETRY_H */
