/*
 * status: answers, and errors as metav1.Status objects shaped exactly as
 * kube-apiserver writes them (key order kind, apiVersion, metadata, status,
 * message, reason, details, code; reason and details left out where the
 * real server leaves them out).
 */
#include "testapi/testapi_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

static void set_body(struct kerf_ta_resp *rs, unsigned code,
		     const char *ctype, char *body, size_t len)
{
	free(rs->body);
	rs->status = code;
	rs->ctype = ctype;
	rs->body = body;
	rs->len = len;
}

void kerf_ta_send_json(struct kerf_ta_resp *rs, unsigned code, json_t *j,
		       bool sorted)
{
	size_t len = 0;
	char *s = j ? kerf_ta_dump(j, sorted, &len) : NULL;

	json_decref(j);
	if (!s) {
		set_body(rs, 500, "text/plain; charset=utf-8",
			 kerf_strdup("out of memory\n"), 14);
		return;
	}
	set_body(rs, code, "application/json", s, len);
}

void kerf_ta_send_text(struct kerf_ta_resp *rs, unsigned code,
		       const char *ctype, const char *text)
{
	set_body(rs, code, ctype, kerf_strdup(text), strlen(text));
}

int kerf_ta_status(struct kerf_ta_resp *rs, unsigned code, const char *reason,
		   const char *message, json_t *details)
{
	json_t *s = json_object();

	json_object_set_new(s, "kind", json_string("Status"));
	json_object_set_new(s, "apiVersion", json_string("v1"));
	json_object_set_new(s, "metadata", json_object());
	json_object_set_new(s, "status",
			    json_string(code < 300 ? "Success" : "Failure"));
	if (message)
		json_object_set_new(s, "message", json_string(message));
	if (reason)
		json_object_set_new(s, "reason", json_string(reason));
	if (details)
		json_object_set_new(s, "details", details);
	if (code != 200 || !details)
		json_object_set_new(s, "code", json_integer(code));
	kerf_ta_send_json(rs, code, s, false);
	return -1;
}

int kerf_ta_statusf(struct kerf_ta_resp *rs, unsigned code,
		    const char *reason, json_t *details, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return kerf_ta_status(rs, code, reason, msg, details);
}

json_t *kerf_ta_details(const struct kerf_ta_kind *k, const char *name)
{
	json_t *d = json_object();

	if (name)
		json_object_set_new(d, "name", json_string(name));
	if (k && *k->group)
		json_object_set_new(d, "group", json_string(k->group));
	if (k)
		json_object_set_new(d, "kind", json_string(k->plural));
	return d;
}

int kerf_ta_not_found(struct kerf_ta_resp *rs, const struct kerf_ta_kind *k,
		      const char *name)
{
	char res[256];

	return kerf_ta_statusf(rs, 404, "NotFound", kerf_ta_details(k, name),
			       "%s \"%s\" not found",
			       kerf_ta_resource_name(k, res, sizeof(res)),
			       name);
}

int kerf_ta_conflict_modified(struct kerf_ta_resp *rs,
			      const struct kerf_ta_kind *k, const char *name)
{
	char res[256];

	return kerf_ta_statusf(rs, 409, "Conflict", kerf_ta_details(k, name),
			       "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please apply your changes to the latest version and try again",
			       kerf_ta_resource_name(k, res, sizeof(res)),
			       name);
}

int kerf_ta_page_not_found(struct kerf_ta_resp *rs)
{
	kerf_ta_send_text(rs, 404, "text/plain; charset=utf-8",
			  "404 page not found\n");
	return -1;
}

int kerf_ta_method_not_allowed(struct kerf_ta_resp *rs)
{
	return kerf_ta_status(rs, 405, "MethodNotAllowed",
			      "the server does not allow this method on the requested resource",
			      json_object());
}

int kerf_ta_cause_add(json_t *causes, const char *reason, const char *field,
		      const char *fmt, ...)
{
	char msg[1024];
	json_t *c = json_object();
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_set_new(c, "reason", json_string(reason));
	json_object_set_new(c, "message", json_string(msg));
	json_object_set_new(c, "field", json_string(field));
	return json_array_append_new(causes, c);
}

int kerf_ta_invalid(struct kerf_ta_resp *rs, const struct kerf_ta_kind *k,
		    const char *name, json_t *causes)
{
	struct kerf_buf b;
	char kn[256];
	json_t *d = json_object(), *c;
	size_t i, n = json_array_size(causes);
	int rc = 0;

	kerf_buf_init(&b, 64 * 1024);
	rc |= kerf_buf_addf(&b, "%s \"%s\" is invalid: %s",
			    kerf_ta_kind_name(k, kn, sizeof(kn)),
			    name ? name : "", n > 1 ? "[" : "");
	json_array_foreach(causes, i, c) {
		rc |= kerf_buf_addf(&b, "%s%s: %s", i ? ", " : "",
				    json_string_value(json_object_get(c, "field")),
				    json_string_value(json_object_get(c, "message")));
	}
	if (n > 1)
		rc |= kerf_buf_add_str(&b, "]");
	if (name)
		json_object_set_new(d, "name", json_string(name));
	if (*k->group)
		json_object_set_new(d, "group", json_string(k->group));
	json_object_set_new(d, "kind", json_string(k->kind));
	json_object_set_new(d, "causes", causes);
	kerf_ta_status(rs, 422, "Invalid", rc ? "invalid" : kerf_buf_str(&b),
		       d);
	kerf_buf_release(&b);
	return -1;
}

int kerf_ta_warn(struct kerf_ta_resp *rs, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (rs->nr_warnings == KERF_TA_MAX_WARNINGS)
		return -1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rs->warnings[rs->nr_warnings] = kerf_strdup(msg);
	if (rs->warnings[rs->nr_warnings])
		rs->nr_warnings++;
	return 0;
}
