#include "serve/tenants.h"

#include <ctype.h>

#include "core/model.h"
#include "core/resources.h"

/*
 * The GPU model a flavor names: its nvidia.com/gpu.product label in lower
 * case (flavors are DNS names: NVIDIA-H100-80GB-HBM3 is
 * nvidia-h100-80gb-hbm3).
 */
static int flavor_dim(void *ctx, const char *flavor)
{
	const struct kerf_state *st = ctx;

	for (size_t m = 0; m < st->cluster.nr_models; m++) {
		const char *a = st->cluster.models[m].name, *b = flavor;

		while (*a && *b && tolower((unsigned char)*a) == *b)
			a++, b++;
		if (!*a && !*b)
			return KERF_RES_GPU0 + (int)m;
	}
	return -1;
}

int kerf_serve_tenant_set(struct kerf_world *w, const struct kerf_kobj_tenant *t,
			  struct kerf_err *err)
{
	const struct kerf_state *st = kerf_world_state(w);
	struct kerf_kobj_resolver r = {
		.flavor_dim = flavor_dim, .ctx = (void *)st,
		.classes = &st->classes, .nr_res = st->tenants.nr_res,
	};
	struct kerf_tenant_spec spec;
	size_t unresolved = 0;
	int rc;

	/* the parent is named; kerf_world_tenant_set resolves it */
	rc = kerf_kobj_tenant_spec(t, 0, &r, &spec, &unresolved, err);
	if (rc < 0)
		return rc;
	return kerf_world_tenant_set(w, &spec, t->parent[0] ? t->parent : NULL, err);
}
