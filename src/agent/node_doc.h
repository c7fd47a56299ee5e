/*
 * node_doc: what the agent writes on its Node, computed from the Node as
 * read, the GPU inventory and the health marks.  Pure: no I/O.
 *
 * Labels (what the scheduler places by; GPU feature discovery writes the
 * nvidia.com/ ones with the same values, so the two never fight):
 *   nvidia.com/gpu.product  NVML's name, spaces as '-' ("NVIDIA-H100-80GB-HBM3")
 *   nvidia.com/gpu.memory   MiB of the first GPU
 *   nvidia.com/gpu.count    GPUs NVML lists
 *   kerf.io/gpu-model       kerf's model ("H100-80GB"), when known
 *   kerf.io/mig-gpus        GPUs in MIG mode
 *   kerf.io/nvlink-domain   only when configured (a domain spans nodes:
 *                           NVML on one node cannot name it)
 * Annotations: the marks (marks.h), kerf.io/mig-layout, the instances of
 * each MIG GPU ("0:3g.40gb@0,3g.40gb@4;1:7g.80gb@0"), and
 * kerf.io/gpu-utilization when it moved (util.h).
 * A node mark adds the taint kerf.io/gpu-failed=node:NoSchedule, kerf's
 * cordon: no new pod lands there, and spec.unschedulable stays the
 * operator's (the agent's admission policy forbids it to the agent).
 *
 * The patch is a JSON merge patch carrying metadata.resourceVersion: the
 * API server applies it only to the Node as read (else 409), so a mark a
 * verification removed meanwhile is never written back.
 */
#ifndef KERF_AGENT_NODE_DOC_H
#define KERF_AGENT_NODE_DOC_H

#include <stdbool.h>

#include <jansson.h>

#include "agent/marks.h"
#include "nvml/inventory.h"

#define KERF_LABEL_GPU_COUNT    "nvidia.com/gpu.count"
#define KERF_LABEL_GPU_MODEL    "kerf.io/gpu-model"
#define KERF_ANN_MIG_LAYOUT     "kerf.io/mig-layout"
#define KERF_ANN_REMEDIATION    "kerf.io/remediation-requested"
#define KERF_ANN_MIG_ACTUATION  "kerf.io/mig-actuation"
#define KERF_COND_GPU_HEALTHY   "kerf.io/GPUHealthy"
#define KERF_AGENT_IDENTITY     "kerf-agent"

struct kerf_agent_node_view {
	const struct kerf_gpu_inventory *inv;  /* state Unknown: no GPU labels */
	const struct kerf_agent_marks *marks;
	const char *nvlink_domain;             /* NULL: not written */
	const char *now;                       /* RFC 3339 */
	const char *utilization;               /* util.h's text; NULL: not written */
	const char *mig_actuation;             /* the last MIG reconcile; NULL: none */
	uint64_t mps_failed;                   /* GPUs whose MPS daemon failed */
	bool mps_on;                           /* the agent runs MPS daemons */
};

/*
 * The merge patch bringing node to what v says, or NULL in *out when the
 * node already says it.  0 or -KERF_ENOMEM.
 */
int kerf_agent_node_patch(const json_t *node, const struct kerf_agent_node_view *v,
			  json_t **out);

/*
 * The strategic merge patch of nodes/NAME/status for the condition
 * kerf.io/GPUHealthy (True, False with the marks, Unknown when NVML is not
 * read or its events fail: unknown_reason), or NULL in *out when the
 * condition already says it.  lastTransitionTime moves only when the
 * status does.
 */
int kerf_agent_condition_patch(const json_t *node, const struct kerf_agent_node_view *v,
			       const char *unknown_reason, json_t **out);

/* GFD's form of an NVML name ("NVIDIA H100 80GB HBM3" -> "NVIDIA-H100-80GB-HBM3"). */
void kerf_agent_product_label(const char *nvml_name, char *out, size_t size);

#endif /* KERF_AGENT_NODE_DOC_H */
