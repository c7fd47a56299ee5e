/*
 * lease: a coordination.k8s.io/v1 Lease, the lock of leader election, both
 * ways.  Times are MicroTime on the wire (exactly six fractional digits,
 * the API server refuses anything else) and milliseconds here.
 */
#ifndef KERF_KOBJ_LEASE_H
#define KERF_KOBJ_LEASE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"

enum { KERF_LEASE_HOLDER_MAX = 256, KERF_LEASE_RV_MAX = 64 };

struct kerf_lease {
	char holder[KERF_LEASE_HOLDER_MAX];   /* "" when released */
	int32_t duration_s;
	int64_t acquire_ms;                   /* 0 when absent */
	int64_t renew_ms;
	int32_t transitions;
	char rv[KERF_LEASE_RV_MAX];           /* metadata.resourceVersion */
};

int kerf_lease_decode(const json_t *obj, struct kerf_lease *l,
		      struct kerf_err *err);

/* The Lease ns/name as JSON text (malloc'd); rv "" for a create. */
char *kerf_lease_encode(const struct kerf_lease *l, const char *ns,
			const char *name);

#endif
