/*
 * api_json: the JSON values every view is made of (view/api_json.h).
 */
#include "view/api_json.h"

#include <stdio.h>

#include "base/buf.h"
#include "base/err.h"
#include "kobj/time.h"

/* --- JSON values --------------------------------------------------------- */

void kerf_api_put(json_t *o, const char *key, json_t *v, int *rc)
{
	if (!o || !v || json_object_set_new(o, key, v) < 0)
		*rc = -KERF_ENOMEM;
}

void kerf_api_push(json_t *a, json_t *v, int *rc)
{
	if (!a || !v || json_array_append_new(a, v) < 0)
		*rc = -KERF_ENOMEM;
}

json_t *kerf_api_str(const char *s)
{
	json_t *j;
	char shown[1024];

	if (!s)
		return json_null();
	j = json_string(s);
	/* not UTF-8 (a name kerf did not make): shown escaped */
	return j ? j : json_string(kerf_escape(shown, sizeof(shown), s));
}

json_t *kerf_api_time(int64_t ms)
{
	char text[KERF_TIME_TEXT_MAX];

	if (ms <= 0)
		return json_null();
	kerf_time_format(ms, text);
	return json_string(text);
}

json_t *kerf_api_qty(int64_t v)
{
	return v == KERF_QTY_INF ? json_null() : json_integer(v);
}

json_t *kerf_api_seconds(int64_t from_ms, int64_t to_ms)
{
	return json_real(to_ms > from_ms ? (double)(to_ms - from_ms) / 1000.0 : 0.0);
}

const char *kerf_api_wl_state(enum kerf_wl_state s)
{
	return s == KERF_WL_PENDING ? "Pending" : s == KERF_WL_RUNNING ? "Running" : "Finished";
}

const char *kerf_api_tenant_name(const struct kerf_state *st, int t)
{
	return t >= 0 && (size_t)t < st->tenants.nr ? st->tenants.t[t].name : "";
}

json_t *kerf_api_status(int code, const char *reason, const char *message)
{
	json_t *o = json_object();
	int rc = 0;

	kerf_api_put(o, "kind", json_string("Status"), &rc);
	kerf_api_put(o, "apiVersion", json_string(KERF_API_VERSION), &rc);
	kerf_api_put(o, "status", json_string("Failure"), &rc);
	kerf_api_put(o, "message", kerf_api_str(message), &rc);
	kerf_api_put(o, "reason", json_string(reason), &rc);
	kerf_api_put(o, "code", json_integer(code), &rc);
	if (rc < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *kerf_api_list(const char *kind, int *rc)
{
	json_t *o = json_object();

	kerf_api_put(o, "kind", json_string(kind), rc);
	kerf_api_put(o, "apiVersion", json_string(KERF_API_VERSION), rc);
	return o;
}
