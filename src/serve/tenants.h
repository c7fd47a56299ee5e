/*
 * tenants: a Tenant object (kobj/tenant.h) into the world.  Quota flavors
 * name GPU models: the nodes' nvidia.com/gpu.product label in lower case
 * (GPUPools are not read yet); "cpu" and "memory" are the other two.  A flavor no
 * node has yet is left out until the Tenant is applied again.
 */
#ifndef KERF_SERVE_TENANTS_H
#define KERF_SERVE_TENANTS_H

#include "base/err.h"
#include "kobj/tenant.h"
#include "serve/world.h"

int kerf_serve_tenant_set(struct kerf_world *w, const struct kerf_kobj_tenant *t,
			  struct kerf_err *err);

#endif
