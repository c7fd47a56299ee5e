#include "nvml/health.h"

#include <stdio.h>
#include <string.h>

/* NVML's "no instance" in an event's gpuInstanceId / computeInstanceId. */
#define INSTANCE_NONE 0xFFFFFFFFu

enum kerf_xid_class kerf_xid_classify(unsigned long long xid)
{
	switch (xid) {
	case 13: case 31: case 43: case 45: case 68: case 109:
		return KERF_XID_APPLICATION;
	case 48: case 95:
		return KERF_XID_CRITICAL;
	case 94:
		return KERF_XID_CONTAINED;
	case 63: case 64:
		return KERF_XID_RESET_PENDING;
	case 79:
		return KERF_XID_NODE;
	default:
		return KERF_XID_UNKNOWN;
	}
}

const char *kerf_xid_class_name(enum kerf_xid_class c)
{
	static const char *const names[] = {
		"application", "critical", "contained", "reset-pending", "node",
		"unknown",
	};

	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

/* A MIG instance named by the event (both ids given). */
static int one_instance(const nvmlEventData_t *ev)
{
	return ev->gpuInstanceId != INSTANCE_NONE &&
	       ev->computeInstanceId != INSTANCE_NONE;
}

static void unhealthy(const nvmlEventData_t *ev, struct kerf_health_verdict *v,
		      unsigned extra)
{
	if (one_instance(ev)) {
		v->actions |= KERF_HEALTH_INSTANCE_UNHEALTHY | extra;
		v->gi = ev->gpuInstanceId;
		v->ci = ev->computeInstanceId;
	} else {
		v->actions |= KERF_HEALTH_GPU_UNHEALTHY | extra;
	}
}

void kerf_health_decide(nvmlReturn_t rc, const nvmlEventData_t *ev,
			struct kerf_health_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->gi = v->ci = INSTANCE_NONE;
	if (rc == NVML_ERROR_TIMEOUT)
		return;
	if (rc == NVML_ERROR_GPU_IS_LOST) {
		v->cls = KERF_XID_NODE;
		v->actions = KERF_HEALTH_GPU_UNHEALTHY | KERF_HEALTH_CORDON_NODE |
			     KERF_HEALTH_REMEDIATE;
		snprintf(v->reason, sizeof(v->reason),
			 "a GPU is lost (NVML_ERROR_GPU_IS_LOST): cordon the node, ask for a reboot");
		return;
	}
	if (rc != NVML_SUCCESS || !ev) {
		/* no signal is no health: never fail open */
		v->actions = KERF_HEALTH_ALL_UNKNOWN;
		snprintf(v->reason, sizeof(v->reason),
			 "waiting for NVML events failed (return %d): every GPU Unknown",
			 (int)rc);
		return;
	}
	if (ev->eventType & nvmlEventTypeDoubleBitEccError) {
		v->cls = KERF_XID_CRITICAL;
		unhealthy(ev, v, KERF_HEALTH_DRAIN | KERF_HEALTH_UNTRUSTED);
		snprintf(v->reason, sizeof(v->reason),
			 "double-bit ECC error: out of allocation, drained, results untrusted");
		return;
	}
	if (!(ev->eventType & nvmlEventTypeXidCriticalError)) {
		/* single-bit ECC and the like: counted, in service */
		v->actions = KERF_HEALTH_COUNT_POD;
		snprintf(v->reason, sizeof(v->reason), "event 0x%llx: counted",
			 ev->eventType);
		return;
	}
	v->xid = ev->eventData;
	v->cls = kerf_xid_classify(ev->eventData);
	switch (v->cls) {
	case KERF_XID_APPLICATION:
		v->actions = KERF_HEALTH_COUNT_POD;
		break;
	case KERF_XID_CRITICAL:
	case KERF_XID_UNKNOWN:
		unhealthy(ev, v, KERF_HEALTH_DRAIN | KERF_HEALTH_UNTRUSTED);
		break;
	case KERF_XID_CONTAINED:
		v->actions = KERF_HEALTH_KILL_POD | KERF_HEALTH_COUNT_POD;
		break;
	case KERF_XID_RESET_PENDING:
		unhealthy(ev, v, KERF_HEALTH_REMEDIATE);
		break;
	case KERF_XID_NODE:
		v->actions = KERF_HEALTH_GPU_UNHEALTHY | KERF_HEALTH_CORDON_NODE |
			     KERF_HEALTH_REMEDIATE;
		break;
	}
	snprintf(v->reason, sizeof(v->reason), "Xid %llu (%s)", v->xid,
		 kerf_xid_class_name(v->cls));
}
