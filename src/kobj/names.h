/*
 * names: the labels, annotations and resource names kerf reads and writes
 * on Kubernetes objects (docs/api.md describes each).
 */
#ifndef KERF_KOBJ_NAMES_H
#define KERF_KOBJ_NAMES_H

/* pods: what the user (or the webhook) says */
#define KERF_LABEL_TENANT          "kerf.io/tenant"      /* also on namespaces */
#define KERF_LABEL_GANG            "kerf.io/gang"
#define KERF_ANN_GANG_SIZE         "kerf.io/gang-size"
#define KERF_ANN_GPU_FRACTION      "kerf.io/gpu-fraction" /* quantity: 0.25, 250m */
#define KERF_ANN_GPU_MEMORY        "kerf.io/gpu-memory"   /* quantity: 10Gi */
#define KERF_ANN_GPU_SHARING       "kerf.io/gpu-sharing"  /* mps | timeslice */

/* pods: what kerf writes, and the workload's answer */
#define KERF_ANN_ASSIGNED_GPUS     "kerf.io/assigned-gpus"   /* "0,1,2,3" */
#define KERF_ANN_ASSIGNED_MIG      "kerf.io/assigned-mig"    /* "3g.40gb@4" */
#define KERF_ANN_ASSIGNED_FRACTION "kerf.io/assigned-fraction" /* "250m" */
#define KERF_ANN_PLANNED_NODE      "kerf.io/planned-node"    /* a gang's plan */
#define KERF_ANN_PREEMPT_AT        "kerf.io/preempt-at"      /* RFC 3339 */
#define KERF_ANN_CHECKPOINT_DONE   "kerf.io/checkpoint-done" /* RFC 3339 */
#define KERF_ANN_LAST_CHECKPOINT   "kerf.io/last-checkpoint" /* RFC 3339 */

/* nodes: what the node agent or GPU feature discovery writes */
#define KERF_LABEL_GPU_PRODUCT     "nvidia.com/gpu.product"
#define KERF_LABEL_GPU_MEMORY      "nvidia.com/gpu.memory"   /* MiB */
#define KERF_LABEL_NVLINK_DOMAIN   "kerf.io/nvlink-domain"
#define KERF_LABEL_MIG_GPUS        "kerf.io/mig-gpus"        /* GPUs in MIG mode */
/* GPUs and MIG instances out of service (kobj/gpu_marks.h): "1,3" and
   "0:3g.40gb@4,2:1g.10gb@6"; detail for humans in kerf.io/gpu-health */
#define KERF_ANN_UNHEALTHY_GPUS    "kerf.io/unhealthy-gpus"
#define KERF_ANN_UNHEALTHY_MIG     "kerf.io/unhealthy-mig"
#define KERF_ANN_MPS_FAILED_GPUS   "kerf.io/mps-failed-gpus"  /* MPS daemon not running */
#define KERF_ANN_GPU_HEALTH        "kerf.io/gpu-health"
/* each GPU's mean utilisation over the agent's window (kobj/gpu_util.h):
   "0:40,1:10,2:0", for idle reclamation */
#define KERF_ANN_GPU_UTILIZATION   "kerf.io/gpu-utilization"

/* resources */
#define KERF_RES_GPU               "nvidia.com/gpu"
#define KERF_RES_MIG_PREFIX        "nvidia.com/mig-"

#endif
