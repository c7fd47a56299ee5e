/*
 * priority: priority classes.  A class has a value (higher goes first and may
 * preempt lower), whether its work may be preempted at all, the grace a
 * victim gets to checkpoint, and the minimum runtime before it may be
 * preempted (against thrashing).  Production inference is a
 * non-preemptible class and must fit inside nominal quota.
 */
#ifndef KERF_CORE_PRIORITY_H
#define KERF_CORE_PRIORITY_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"

enum {
	KERF_MAX_CLASSES = 32,         /* allowed_classes masks are 32-bit */
	KERF_CLASS_NAME_MAX = 64,
};

struct kerf_priority_class {
	char name[KERF_CLASS_NAME_MAX];
	int32_t value;
	bool preemptible;
	int64_t checkpoint_grace_ms;   /* time a victim has to checkpoint */
	int64_t min_runtime_ms;        /* not preempted before this */
};

struct kerf_classes {
	struct kerf_priority_class c[KERF_MAX_CLASSES];
	int nr;
};

void kerf_classes_init(struct kerf_classes *cl);

/* Add a class; returns its index. */
int kerf_classes_add(struct kerf_classes *cl,
		     const struct kerf_priority_class *pc, struct kerf_err *err);

int kerf_classes_find(const struct kerf_classes *cl, const char *name);

#endif /* KERF_CORE_PRIORITY_H */
