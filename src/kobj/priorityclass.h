/*
 * priorityclass: a scheduling.k8s.io/v1 PriorityClass, what kerf needs of
 * it: its value and preemption policy.  The API server's Priority
 * admission copies both onto each pod it creates (spec.priority,
 * spec.preemptionPolicy); kerf reads a pod's class only where the pod
 * lacks them (created before its class, or by an API server without that
 * admission plugin).
 */
#ifndef KERF_KOBJ_PRIORITYCLASS_H
#define KERF_KOBJ_PRIORITYCLASS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"

/* spec.preemptionPolicy of a pod, the preemptionPolicy of a class. */
enum kerf_preemption_policy {
	KERF_PREEMPT_UNSET = 0,        /* absent */
	KERF_PREEMPT_LOWER_PRIORITY,   /* PreemptLowerPriority (the default) */
	KERF_PREEMPT_NEVER,            /* Never */
};

struct kerf_kpc {
	char name[254];
	int32_t value;
	uint8_t preemption;            /* enum kerf_preemption_policy */
	bool global_default;
};

/* "Never" and the others, or -KERF_EPARSE. */
int kerf_preemption_policy_parse(const char *s);

/* obj into *out; the error names the field. */
int kerf_kpc_decode(const json_t *obj, struct kerf_kpc *out,
		    struct kerf_err *err);

#endif
