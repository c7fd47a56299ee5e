#include "serve/tenant_status.h"

#include <stdlib.h>
#include <string.h>

#include "core/persist.h"

struct kerf_ctenant *kerf_ctenant_decode(const json_t *obj, struct kerf_err *err)
{
	struct kerf_ctenant *ct = calloc(1, sizeof(*ct));
	const json_t *status = json_object_get(obj, "status");
	struct kerf_err serr = { 0 };

	if (!ct) {
		kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		return NULL;
	}
	if (kerf_kobj_tenant_decode(obj, &ct->t, err) < 0) {
		free(ct);
		return NULL;
	}
	if (!status || json_is_null(status))
		return ct;
	ct->status = calloc(1, sizeof(*ct->status));
	if (!ct->status) {
		free(ct);
		kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		return NULL;
	}
	/* a status kerf cannot read is rewritten, never trusted */
	if (kerf_kobj_tenant_status_decode(status, ct->status, &serr) < 0) {
		snprintf(ct->status_error, sizeof(ct->status_error), "%s", serr.msg);
		free(ct->status);
		ct->status = NULL;
	}
	return ct;
}

void kerf_ctenant_free(struct kerf_ctenant *ct)
{
	if (!ct)
		return;
	free(ct->status);
	free(ct);
}

/* Dimensions the API has in usageAverage that s no longer has: 0. */
static int zero_vanished(json_t *status, const struct kerf_kobj_tenant_status *had,
			 const struct kerf_kobj_tenant_status *s)
{
	json_t *avg = json_object_get(json_object_get(status, "history"), "usageAverage");

	if (!had || !json_is_object(avg))
		return 0;
	for (size_t i = 0; i < had->nr_usage_avg; i++) {
		bool kept = false;

		for (size_t k = 0; k < s->nr_usage_avg && !kept; k++)
			kept = !strcmp(had->usage_avg[i].name, s->usage_avg[k].name);
		if (!kept && json_object_set_new(avg, had->usage_avg[i].name, json_integer(0)) < 0)
			return -KERF_ENOMEM;
	}
	return 0;
}

int kerf_ctenant_status_patch(const struct kerf_state *st,
			      const struct kerf_ctenant *ct, char **body)
{
	int t = kerf_tenants_find(&st->tenants, ct->t.name);
	struct kerf_kobj_tenant_status *s;
	struct kerf_persist_tenant pt = { 0 };
	json_t *status = NULL, *patch = NULL;
	int rc = -KERF_ENOMEM;

	*body = NULL;
	if (t <= KERF_TENANT_ROOT)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -KERF_ENOMEM;
	if (ct->status) {
		/* conditions are kept as they are */
		memcpy(s->conditions, ct->status->conditions, sizeof(s->conditions));
		s->nr_conditions = ct->status->nr_conditions;
	}
	kerf_kobj_tenant_status_fill(st, t, NULL, s);
	s->observed_generation = ct->t.generation;
	if (kerf_state_export_tenant(st, t, &pt) < 0)
		goto out;
	kerf_kobj_tenant_history_set(s, &pt, st->avg_at_ms);
	status = kerf_kobj_tenant_status_encode(s);
	if (!status || zero_vanished(status, ct->status, s) < 0)
		goto out;
	patch = json_pack("{sO}", "status", status);
	if (patch && (*body = json_dumps(patch, JSON_COMPACT | JSON_SORT_KEYS)))
		rc = 0;
out:
	json_decref(patch);
	json_decref(status);
	free(pt.name);
	free(pt.usage_avg);
	free(s);
	return rc;
}

int kerf_ctenant_restore(struct kerf_world *w, const struct kerf_ctenant *ct,
			 struct kerf_err *err)
{
	struct kerf_persist_tenant pt = { 0 };
	int rc;

	if (!ct->status || (!ct->status->nr_usage_avg && !ct->status->budget_used_milli_ms &&
			    !ct->status->budget_window_start_ms))
		return 0;
	rc = kerf_kobj_tenant_history_get(ct->status, ct->t.name, &pt);
	if (rc < 0)
		return kerf_err_set(err, rc, "out of memory");
	rc = kerf_world_tenant_history(w, &pt, err);
	free(pt.name);
	free(pt.usage_avg);
	return rc < 0 ? rc : 1;
}
