/*
 * entitlement: what each tenant is owed of the GPUs right now, given who
 * wants GPUs.  The cluster's GPUs are split among the top-level tenants by
 * weight, each capped at its subtree's demand (what it runs plus what
 * waits), the excess going again by weight to those still short (weighted
 * max-min, "water-filling"); each tenant's part is split the same way among
 * its children.  A tenant with no demand is owed nothing, so under
 * contention the parts sum to the cluster and compare directly with use.
 *
 * Integer GPU milli throughout; ties and remainders go in tenant order.
 */
#ifndef KERF_SIM_ENTITLEMENT_H
#define KERF_SIM_ENTITLEMENT_H

#include <stdint.h>

#include "core/tenant.h"

/*
 * demand[t]: GPU milli tenant t's own workloads run or wait for (leaves;
 * inner tenants are summed here).  Writes owed[t] for every tenant, the
 * root owed min(capacity, total demand).  scratch: tt->nr int64_t.
 */
void kerf_entitlement(const struct kerf_tenants *tt, int64_t capacity,
		      const int64_t *demand, int64_t *owed, int64_t *scratch);

#endif
