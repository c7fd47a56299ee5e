#include "serve/pool_status.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "base/err.h"

int kerf_pool_status_patch(const struct kerf_world *w,
			   const struct kerf_kobj_gpupool *p, char **body)
{
	struct kerf_world_pool_usage u;
	char alloc[32];
	json_t *st, *patch;
	int64_t whole, milli;

	*body = NULL;
	kerf_world_pool_usage(w, p->name, &u);
	whole = u.allocated_milli / 1000;
	milli = u.allocated_milli % 1000;
	if (milli == 0)
		snprintf(alloc, sizeof(alloc), "%" PRId64, whole);
	else if (milli % 100 == 0)
		snprintf(alloc, sizeof(alloc), "%" PRId64 ".%" PRId64, whole, milli / 100);
	else if (milli % 10 == 0)
		snprintf(alloc, sizeof(alloc), "%" PRId64 ".%02" PRId64, whole, milli / 10);
	else
		snprintf(alloc, sizeof(alloc), "%" PRId64 ".%03" PRId64, whole, milli);
	st = json_pack("{s:I, s:i, s:i, s:s}", "observedGeneration", (json_int_t)p->generation,
		       "nodes", (int)u.nodes, "gpus", (int)u.gpus, "allocated", alloc);
	patch = st ? json_pack("{s:o}", "status", st) : NULL;
	if (patch)
		*body = json_dumps(patch, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(patch);
	return *body ? 0 : -KERF_ENOMEM;
}
