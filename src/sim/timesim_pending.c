/*
 * timesim_pending: the workloads left pending at the end of a run, with
 * the core's reason for each.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "core/cycle.h"
#include "sim/timesim_pending.h"

/* The pending workloads in queue order, *v owned by the caller. */
static int queue(const struct kerf_timesim *ts, struct kerf_workload ***v,
		 size_t *nr)
{
	int rc;

	*v = malloc((ts->st.nr_wl ? ts->st.nr_wl : 1) * sizeof(**v));
	if (!*v)
		return -KERF_ENOMEM;
	rc = kerf_cycle_queue(&ts->st, *v, nr);
	if (rc < 0) {
		free(*v);
		*v = NULL;
	}
	return rc;
}

/* The sentence, or the code's name for a workload no cycle saw yet. */
static const char *reason_of(const struct kerf_workload *w)
{
	return w->pending_text && w->pending_text[0] ? w->pending_text
						     : kerf_pending_name(w->pending);
}

size_t kerf_ts_nr_pending(const struct kerf_timesim *ts)
{
	size_t n = 0;

	for (size_t i = 0; i < ts->st.nr_wl; i++)
		n += ts->st.wl[i]->state == KERF_WL_PENDING;
	return n;
}

int kerf_ts_pending_text(FILE *out, const struct kerf_timesim *ts)
{
	struct kerf_workload **v;
	size_t nr;
	int rc = queue(ts, &v, &nr);

	if (rc < 0)
		return rc;
	if (nr > 0)
		fprintf(out, "\npending at the end: %zu\n", nr);
	for (size_t i = 0; i < nr; i++)
		fprintf(out, "%s/%s: %s\n", ts->st.tenants.t[v[i]->tenant].name,
			v[i]->key, reason_of(v[i]));
	free(v);
	return nr > INT32_MAX ? INT32_MAX : (int)nr;
}

json_t *kerf_ts_pending_json(const struct kerf_timesim *ts)
{
	struct kerf_workload **v;
	size_t nr;
	json_t *a;

	if (queue(ts, &v, &nr) < 0)
		return NULL;
	a = json_array();
	for (size_t i = 0; a && i < nr; i++) {
		const struct kerf_workload *w = v[i];
		json_t *x = json_pack("{s:s, s:s, s:s, s:s, s:f}",
				      "tenant", ts->st.tenants.t[w->tenant].name,
				      "name", w->key,
				      "code", kerf_pending_name(w->pending),
				      "reason", reason_of(w),
				      "waitingSeconds", (double)(ts->now_ms - w->submit_ms) / 1e3);

		if (!x || json_array_append_new(a, x) < 0) {
			json_decref(a);
			a = NULL;
		}
	}
	free(v);
	return a;
}
