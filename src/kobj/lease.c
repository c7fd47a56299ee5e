#include "kobj/lease.h"

#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "kobj/json_field.h"
#include "kobj/time.h"

static int micro_time(const json_t *spec, const char *key, int64_t *ms,
		      struct kerf_err *err)
{
	const char *s;
	char shown[80];
	int rc = kerf_json_string(spec, key, "spec", &s, err);

	*ms = 0;
	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (kerf_time_parse_ms(s, ms) < 0)
		return kerf_err_set(err, -KERF_EPARSE, "spec.%s '%s': not a time",
				    key, kerf_escape(shown, sizeof(shown), s));
	return 0;
}

int kerf_lease_decode(const json_t *obj, struct kerf_lease *l,
		      struct kerf_err *err)
{
	const json_t *meta, *spec;
	const char *holder, *rv;
	long long v;
	int rc;

	memset(l, 0, sizeof(*l));
	if (!json_is_object(obj))
		return kerf_err_set(err, -KERF_EPARSE, "lease: expected an object, got %s",
				    kerf_json_type_name(obj));
	if ((rc = kerf_json_object(obj, "metadata", "", &meta, err)) < 0 ||
	    (rc = kerf_json_object(obj, "spec", "", &spec, err)) < 0 ||
	    (rc = kerf_json_string(meta, "resourceVersion", "metadata", &rv, err)) < 0 ||
	    (rc = kerf_json_string(spec, "holderIdentity", "spec", &holder, err)) < 0)
		return rc;
	if (rv && strlen(rv) >= sizeof(l->rv))
		return kerf_err_set(err, -KERF_EPARSE, "metadata.resourceVersion: too long");
	if (holder && strlen(holder) >= sizeof(l->holder))
		return kerf_err_set(err, -KERF_EPARSE, "spec.holderIdentity: too long");
	snprintf(l->rv, sizeof(l->rv), "%s", rv ? rv : "");
	snprintf(l->holder, sizeof(l->holder), "%s", holder ? holder : "");
	rc = kerf_json_int(spec, "leaseDurationSeconds", "spec", 0, 1 << 30, &v, err);
	if (rc < 0)
		return rc;
	l->duration_s = rc == 0 ? (int32_t)v : 0;
	rc = kerf_json_int(spec, "leaseTransitions", "spec", 0, INT32_MAX, &v, err);
	if (rc < 0)
		return rc;
	l->transitions = rc == 0 ? (int32_t)v : 0;
	if ((rc = micro_time(spec, "acquireTime", &l->acquire_ms, err)) < 0 ||
	    (rc = micro_time(spec, "renewTime", &l->renew_ms, err)) < 0)
		return rc;
	return 0;
}

char *kerf_lease_encode(const struct kerf_lease *l, const char *ns,
			const char *name)
{
	char acquire[KERF_TIME_TEXT_MAX], renew[KERF_TIME_TEXT_MAX];
	json_t *meta, *obj;
	char *text;

	kerf_time_format_micro(l->acquire_ms, acquire);
	kerf_time_format_micro(l->renew_ms, renew);
	meta = json_pack("{s:s, s:s}", "name", name, "namespace", ns);
	if (meta && l->rv[0])
		json_object_set_new(meta, "resourceVersion", json_string(l->rv));
	obj = meta ? json_pack("{s:s, s:s, s:o, s:{s:s, s:i, s:s, s:s, s:i}}",
			       "apiVersion", "coordination.k8s.io/v1", "kind", "Lease",
			       "metadata", meta, "spec", "holderIdentity", l->holder,
			       "leaseDurationSeconds", l->duration_s, "acquireTime",
			       acquire, "renewTime", renew, "leaseTransitions",
			       l->transitions)
		   : NULL;
	if (!obj)
		return NULL;
	text = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(obj);
	return text;
}
