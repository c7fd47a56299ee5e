/*
 * mig_node: a node description for the MIG planner, read from YAML: the
 * GPU model, the instances on each GPU (which are in use) and the pending
 * demand per profile.  `kerf plan-mig FILE` shows the plan for one.
 *
 *   node: gpu-a100-7              # optional, a name for the report
 *   model: A100-SXM4-40GB         # a model name or alias (core/mig/geometry.h)
 *   gpus:                         # 1 to KERF_MIG_MAX_GPUS entries
 *     - instances:                # required; [] = MIG on, no instances
 *         - {profile: 3g.20gb, start: 0, in_use: true}
 *         - {profile: 1g.5gb, start: 4}     # in_use defaults to false
 *     - instances: []
 *   demand:                       # optional: pending instances per profile
 *     1g.5gb: 3                   # 0 to KERF_MIG_NODE_MAX_DEMAND each
 *     3g.20gb: 1
 *
 * Every error names file:line, the field and the reason
 * ("n.yaml:7: gpus[0].instances[1].start: must be an integer from 0 to 7"):
 * an unknown model (the known ones listed), a profile the model does not
 * have (its profiles listed), a start or count that is not an integer or is
 * out of range, a demand key given twice, an unknown key, a value of the
 * wrong kind, too many GPUs or instances, and a GPU whose layout is illegal
 * (kerf_mig_layout_check's reason, at the line of that GPU's entry).  A
 * description that failed to load is never used: the struct is left all
 * zero.
 */
#ifndef KERF_SIM_MIG_NODE_H
#define KERF_SIM_MIG_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/mig/geometry.h"
#include "core/mig/planner.h"

enum {
	KERF_MIG_NODE_NAME_MAX = 64,       /* with the NUL */
	KERF_MIG_NODE_MAX_DEMAND = 1000,   /* pending instances per profile */
};

struct kerf_mig_node_desc {
	char name[KERF_MIG_NODE_NAME_MAX]; /* "" when not given */
	struct kerf_mig_node node;
	/* pending instances per profile of node.model; 0 past nr_profiles */
	uint16_t want[KERF_MIG_MAX_PROFILES];
};

/*
 * Parse YAML text of len bytes (path is for messages) into *d.  0, or a
 * negative code with "path:line: field: reason" in err and *d all zero.
 */
int kerf_mig_node_parse(struct kerf_mig_node_desc *d, const char *path,
			const char *yaml, size_t len, struct kerf_err *err);

/* Read the file at path and parse it; on error *d is all zero. */
int kerf_mig_node_load(struct kerf_mig_node_desc *d, const char *path,
		       struct kerf_err *err);

#endif /* KERF_SIM_MIG_NODE_H */
