/*
 * health: what an NVML health event means for the control plane
 * (reliability.md §5, the device plugin's ignore list; docs/agent.md
 * "Health"), as a pure decision.  The agent's loop reads events
 * (nvmlEventSetWait_v2) and applies the verdict: the marks it asks for
 * are written to the API (taints, conditions), never kept only in memory,
 * so an agent restart forgets nothing.
 *
 *   application Xids (13, 31, 43, 45, 68, 109), single-bit ECC: counted
 *     against the pod, the GPU stays in service (0 false cordons);
 *   Xid 48 and double-bit ECC, 95 (uncontained): the GPU (or only its MIG
 *     instance, when the event names one) is unhealthy, drained, and the
 *     results of the jobs on it are untrusted;
 *   Xid 94 (contained ECC): only the affected pod is killed, counted;
 *   Xid 63, 64 (page retirement / row remap pending or failed): the GPU is
 *     out of allocation until a reset;
 *   Xid 79 and GPU_IS_LOST (fell off the bus): the node is cordoned and a
 *     remediation asked; allocations are released only once the pods are
 *     gone;
 *   any other Xid: unhealthy (fail safe, as the device plugin does);
 *   a wait that fails other than by timeout: every GPU Unknown.
 * A GPU marked unhealthy returns to service only by an explicit
 * verification, never because an event stopped or the agent restarted.
 */
#ifndef KERF_NVML_HEALTH_H
#define KERF_NVML_HEALTH_H

#include <stdint.h>

#include "nvml/nvml_api.h"

enum kerf_xid_class {
	KERF_XID_APPLICATION = 0,   /* the app's fault: count it */
	KERF_XID_CRITICAL,          /* the GPU's memory can no longer be trusted */
	KERF_XID_CONTAINED,         /* contained: the affected pod only */
	KERF_XID_RESET_PENDING,     /* out of allocation until a reset */
	KERF_XID_NODE,              /* the GPU left the bus: the node */
	KERF_XID_UNKNOWN,           /* not in the table: treated as critical */
};

/* What the agent must do; bits. */
enum kerf_health_action {
	KERF_HEALTH_COUNT_POD = 1u << 0,       /* count against the pod(s) on it */
	KERF_HEALTH_GPU_UNHEALTHY = 1u << 1,   /* the whole GPU out of allocation */
	KERF_HEALTH_INSTANCE_UNHEALTHY = 1u << 2, /* only the MIG instance */
	KERF_HEALTH_DRAIN = 1u << 3,           /* evict what runs on it */
	KERF_HEALTH_UNTRUSTED = 1u << 4,       /* mark those jobs' results untrusted */
	KERF_HEALTH_KILL_POD = 1u << 5,        /* kill the affected pod only */
	KERF_HEALTH_CORDON_NODE = 1u << 6,
	KERF_HEALTH_REMEDIATE = 1u << 7,       /* ask for a reset or reboot */
	KERF_HEALTH_ALL_UNKNOWN = 1u << 8,     /* every GPU Unknown (no signal) */
};

enum kerf_xid_class kerf_xid_classify(unsigned long long xid);
const char *kerf_xid_class_name(enum kerf_xid_class c);

struct kerf_health_verdict {
	unsigned actions;                  /* enum kerf_health_action bits */
	enum kerf_xid_class cls;
	unsigned long long xid;            /* 0 when not an Xid event */
	unsigned int gi, ci;               /* with INSTANCE_UNHEALTHY */
	char reason[160];
};

/*
 * The verdict for what nvmlEventSetWait_v2 returned: rc and, when rc is
 * NVML_SUCCESS, the event.  NVML_ERROR_TIMEOUT gives no action.
 */
void kerf_health_decide(nvmlReturn_t rc, const nvmlEventData_t *ev,
			struct kerf_health_verdict *v);

#endif
