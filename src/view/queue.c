/*
 * queue: GET /api/v1/queue's items (view/view.h), pending work in the
 * order the next cycle takes it, from the core alone.
 */
#include "view/view.h"

#include <stdlib.h>

#include "core/cycle.h"
#include "view/api_json.h"

static json_t *queued_json(const struct kerf_state *st, const struct kerf_workload *wl,
			   size_t pos, int64_t now_ms, int *rc)
{
	json_t *i = json_object();

	kerf_api_put(i, "position", json_integer((json_int_t)pos), rc);
	kerf_api_put(i, "key", kerf_api_str(kerf_workload_name(wl)), rc);
	kerf_api_put(i, "tenant", kerf_api_str(kerf_api_tenant_name(st, wl->tenant)), rc);
	kerf_api_put(i, "class", kerf_api_str(st->classes.c[wl->class_idx].name), rc);
	kerf_api_put(i, "priority", json_integer(st->classes.c[wl->class_idx].value), rc);
	kerf_api_put(i, "pods", json_integer(kerf_workload_pods(wl)), rc);
	kerf_api_put(i, "minCount", json_integer(wl->min_count), rc);
	kerf_api_put(i, "gpuMilli", json_integer(kerf_workload_gpu_milli(wl)), rc);
	kerf_api_put(i, "submitTime", kerf_api_time(wl->submit_ms), rc);
	kerf_api_put(i, "waitSeconds", kerf_api_seconds(wl->submit_ms, now_ms), rc);
	kerf_api_put(i, "reason", json_string(kerf_pending_name(wl->pending)), rc);
	kerf_api_put(i, "message", kerf_api_str(wl->pending_text), rc);
	return i;
}

int kerf_view_queue(const struct kerf_state *st, int64_t now_ms, json_t **out)
{
	struct kerf_workload **v = malloc((st->nr_wl ? st->nr_wl : 1) * sizeof(*v));
	size_t nr = 0;
	json_t *o, *items;
	int rc = v ? kerf_cycle_queue(st, v, &nr) : -KERF_ENOMEM;

	if (rc < 0) {
		free(v);
		return rc;
	}
	o = kerf_api_list("Queue", &rc);
	items = json_array();
	for (size_t k = 0; k < nr; k++)
		kerf_api_push(items, queued_json(st, v[k], k + 1, now_ms, &rc), &rc);
	kerf_api_put(o, "items", items, &rc);
	free(v);
	*out = o;
	return rc;
}
