#include "admission/review.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/buf.h"
#include "kobj/json_field.h"

enum { SHOWN_MAX = 64 };         /* bytes of a quoted value in a message */

static const char *const op_names[] = {
	[KERF_ADMISSION_CREATE] = "CREATE",
	[KERF_ADMISSION_UPDATE] = "UPDATE",
	[KERF_ADMISSION_DELETE] = "DELETE",
	[KERF_ADMISSION_CONNECT] = "CONNECT",
};

const char *kerf_admission_op_name(enum kerf_admission_op op)
{
	return (size_t)op < sizeof(op_names) / sizeof(op_names[0]) ?
		       op_names[op] : "?";
}

const char *kerf_admission_user_group(const struct kerf_admission_user *u,
				      size_t i)
{
	return json_string_value(json_array_get(u->groups, i));
}

/*
 * The deepest nesting of objects and arrays in body[0..len), counted on
 * the bytes (strings skipped) and stopped past max, so that jansson, whose
 * parser and json_decref recurse, never sees a deeper document.  Exact for
 * valid JSON; what is not JSON jansson refuses after.
 */
static size_t nesting_depth(const char *body, size_t len, size_t max)
{
	size_t depth = 0, deepest = 0;
	bool in_string = false;

	for (size_t i = 0; i < len && deepest <= max; i++) {
		char c = body[i];

		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
		} else if (c == '"') {
			in_string = true;
		} else if (c == '{' || c == '[') {
			if (++depth > deepest)
				deepest = depth;
		} else if ((c == '}' || c == ']') && depth > 0) {
			depth--;
		}
	}
	return deepest;
}

/* obj[key] as a string that must be there; "" allowed when may_be_empty. */
static int required_string(const json_t *obj, const char *key,
			   const char *path, bool may_be_empty,
			   const char **out, struct kerf_err *err)
{
	int rc = kerf_json_string(obj, key, path, out, err);

	if (rc < 0)
		return rc;
	if (rc == 1)
		return kerf_err_set(err, -KERF_EPARSE, "%s%s%s: missing", path,
				    *path ? "." : "", key);
	if (!may_be_empty && !**out)
		return kerf_err_set(err, -KERF_EINVAL, "%s%s%s: empty", path,
				    *path ? "." : "", key);
	return 0;
}

/* obj[key] as a string, "" when absent or null. */
static int optional_string(const json_t *obj, const char *key,
			   const char *path, const char **out,
			   struct kerf_err *err)
{
	int rc = kerf_json_string(obj, key, path, out, err);

	if (rc == 1)
		*out = "";
	return rc < 0 ? rc : 0;
}

/* A {group, version, X} object at path: group may be absent or "". */
static int decode_gv(const json_t *v, const char *path, const char *last,
		     const char **group, const char **version,
		     const char **name, struct kerf_err *err)
{
	int rc;

	if ((rc = optional_string(v, "group", path, group, err)) < 0 ||
	    (rc = required_string(v, "version", path, false, version, err)) < 0 ||
	    (rc = required_string(v, last, path, false, name, err)) < 0)
		return rc;
	return 0;
}

/* request[key] as a kind or resource: 1 when absent (and !required). */
static int decode_group_version(const json_t *request, const char *key,
				const char *last, bool required,
				const char **group, const char **version,
				const char **name, struct kerf_err *err)
{
	char path[64];
	const json_t *v;
	int rc = kerf_json_object(request, key, "request", &v, err);

	if (rc < 0)
		return rc;
	if (rc == 1)
		return required ? kerf_err_set(err, -KERF_EPARSE,
					       "request.%s: missing", key) : 1;
	snprintf(path, sizeof(path), "request.%s", key);
	return decode_gv(v, path, last, group, version, name, err);
}

/* request[key] as a kind; optional when has is given (set if there). */
static int decode_gvk(const json_t *request, const char *key,
		      struct kerf_admission_gvk *gvk, bool *has,
		      struct kerf_err *err)
{
	int rc = decode_group_version(request, key, "kind", !has, &gvk->group,
				      &gvk->version, &gvk->kind, err);

	if (has)
		*has = rc == 0;
	return rc < 0 ? rc : 0;
}

static int decode_gvr(const json_t *request, const char *key,
		      struct kerf_admission_gvr *gvr, bool *has,
		      struct kerf_err *err)
{
	int rc = decode_group_version(request, key, "resource", !has,
				      &gvr->group, &gvr->version,
				      &gvr->resource, err);

	if (has)
		*has = rc == 0;
	return rc < 0 ? rc : 0;
}

static int decode_operation(const json_t *request,
			    enum kerf_admission_op *op, struct kerf_err *err)
{
	char shown[SHOWN_MAX];
	const char *s;
	int rc = required_string(request, "operation", "request", true, &s,
				 err);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++) {
		if (!strcmp(s, op_names[i])) {
			*op = (enum kerf_admission_op)i;
			return 0;
		}
	}
	return kerf_err_set(err, -KERF_EINVAL,
			    "request.operation: '%s' is not one of CREATE, UPDATE, DELETE, CONNECT",
			    kerf_escape(shown, sizeof(shown), s));
}

static int decode_user(const json_t *request, struct kerf_admission_user *u,
		       struct kerf_err *err)
{
	const char *path = "request.userInfo";
	const json_t *info, *groups;
	int rc = kerf_json_object(request, "userInfo", "request", &info, err);

	if (rc < 0 ||
	    (rc = optional_string(info, "username", path, &u->username, err)) < 0 ||
	    (rc = optional_string(info, "uid", path, &u->uid, err)) < 0 ||
	    (rc = kerf_json_array(info, "groups", path, &groups, err)) < 0)
		return rc;
	for (size_t i = 0; i < json_array_size(groups); i++) {
		const json_t *g = json_array_get(groups, i);

		if (!json_is_string(g))
			return kerf_err_set(err, -KERF_EPARSE,
					    "%s.groups[%zu]: expected a string, got %s",
					    path, i, kerf_json_type_name(g));
	}
	u->groups = groups;
	u->nr_groups = json_array_size(groups);
	return 0;
}

static int decode_bool(const json_t *obj, const char *key, const char *path,
		       bool *out, struct kerf_err *err)
{
	const json_t *v = kerf_json_get(obj, key);

	*out = false;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return kerf_err_set(err, -KERF_EPARSE,
				    "%s.%s: expected a boolean, got %s", path,
				    key, kerf_json_type_name(v));
	*out = json_is_true(v);
	return 0;
}

static int decode_request(const json_t *request,
			  struct kerf_admission_request *r,
			  struct kerf_err *err)
{
	const char *p = "request";
	int rc;

	if ((rc = required_string(request, "uid", p, false, &r->uid, err)) < 0 ||
	    (rc = decode_gvk(request, "kind", &r->kind, NULL, err)) < 0 ||
	    (rc = decode_gvr(request, "resource", &r->resource, NULL, err)) < 0 ||
	    (rc = optional_string(request, "subResource", p, &r->sub_resource,
				  err)) < 0 ||
	    (rc = decode_gvk(request, "requestKind", &r->request_kind,
			     &r->has_request_kind, err)) < 0 ||
	    (rc = decode_gvr(request, "requestResource", &r->request_resource,
			     &r->has_request_resource, err)) < 0)
		return rc;
	if ((rc = optional_string(request, "requestSubResource", p,
				  &r->request_sub_resource, err)) < 0 ||
	    (rc = optional_string(request, "name", p, &r->name, err)) < 0 ||
	    (rc = optional_string(request, "namespace", p, &r->namespace,
				  err)) < 0 ||
	    (rc = decode_operation(request, &r->op, err)) < 0 ||
	    (rc = decode_user(request, &r->user, err)) < 0 ||
	    (rc = decode_bool(request, "dryRun", p, &r->dry_run, err)) < 0 ||
	    (rc = kerf_json_object(request, "object", p, &r->object, err)) < 0 ||
	    (rc = kerf_json_object(request, "oldObject", p, &r->old_object,
				   err)) < 0 ||
	    (rc = kerf_json_object(request, "options", p, &r->options, err)) < 0)
		return rc;
	if (!r->object && (r->op == KERF_ADMISSION_CREATE ||
			   r->op == KERF_ADMISSION_UPDATE))
		return kerf_err_set(err, -KERF_EPARSE,
				    "request.object: missing on %s",
				    op_names[r->op]);
	return 0;
}

/* apiVersion and kind of the envelope: exactly v1's. */
static int decode_envelope(const json_t *root, struct kerf_err *err)
{
	char shown[SHOWN_MAX];
	const char *s;
	int rc;

	if ((rc = required_string(root, "apiVersion", "", true, &s, err)) < 0)
		return rc;
	if (strcmp(s, KERF_ADMISSION_API_VERSION))
		return kerf_err_set(err, -KERF_EINVAL,
				    "apiVersion: '%s' is not served, only " KERF_ADMISSION_API_VERSION
				    " (admissionReviewVersions: [v1])",
				    kerf_escape(shown, sizeof(shown), s));
	if ((rc = required_string(root, "kind", "", true, &s, err)) < 0)
		return rc;
	if (strcmp(s, "AdmissionReview"))
		return kerf_err_set(err, -KERF_EINVAL,
				    "kind: '%s' is not AdmissionReview",
				    kerf_escape(shown, sizeof(shown), s));
	return 0;
}

int kerf_admission_request_decode(const char *body, size_t len,
				  struct kerf_admission_request *req,
				  struct kerf_err *err)
{
	char shown[KERF_ERR_MSG_MAX / 2];
	const json_t *request;
	json_error_t jerr;
	json_t *root;
	int rc;

	memset(req, 0, sizeof(*req));
	if (len > KERF_ADMISSION_BODY_MAX_BYTES)
		return kerf_err_set(err, -KERF_ELIMIT,
				    "AdmissionReview: %zu bytes, over the limit of %d",
				    len, KERF_ADMISSION_BODY_MAX_BYTES);
	if (nesting_depth(body, len, KERF_ADMISSION_DEPTH_MAX) >
	    KERF_ADMISSION_DEPTH_MAX)
		return kerf_err_set(err, -KERF_ELIMIT,
				    "AdmissionReview: nested deeper than %d levels",
				    KERF_ADMISSION_DEPTH_MAX);
	/* no JSON_ALLOW_NUL: no string a rule reads can hide a NUL */
	root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		if (json_error_code(&jerr) == json_error_out_of_memory)
			return kerf_err_set(err, -KERF_ENOMEM,
					    "AdmissionReview: out of memory");
		return kerf_err_set(err, -KERF_EPARSE,
				    "AdmissionReview: not JSON: %s (line %d, column %d)",
				    kerf_escape(shown, sizeof(shown), jerr.text),
				    jerr.line, jerr.column);
	}
	if (!json_is_object(root)) {
		rc = kerf_err_set(err, -KERF_EPARSE,
				  "AdmissionReview: expected an object, got %s",
				  kerf_json_type_name(root));
		goto fail;
	}
	if ((rc = decode_envelope(root, err)) < 0 ||
	    (rc = kerf_json_object(root, "request", "", &request, err)) < 0)
		goto fail;
	if (rc == 1) {
		rc = kerf_err_set(err, -KERF_EPARSE, "request: missing");
		goto fail;
	}
	req->doc = root;
	if ((rc = decode_request(request, req, err)) < 0) {
		kerf_admission_request_release(req);
		return rc;
	}
	return 0;
fail:
	json_decref(root);
	return rc;
}

void kerf_admission_request_release(struct kerf_admission_request *req)
{
	if (!req)
		return;
	json_decref(req->doc);
	memset(req, 0, sizeof(*req));
}

/*
 * The runes of s, or -1 when s is not UTF-8 as Go's utf8.ValidString
 * reads it (no overlong forms, no surrogates, nothing past U+10FFFF).
 * *control is set when a rune is a control character (unicode.IsControl:
 * U+0000..U+001F, U+007F..U+009F).
 */
static long utf8_runes(const char *s, bool *control)
{
	const unsigned char *p = (const unsigned char *)s;
	long runes = 0;

	*control = false;
	while (*p) {
		uint32_t c = *p, min;
		int more;

		if (c < 0x80) {
			more = 0;
			min = 0;
		} else if ((c & 0xe0) == 0xc0) {
			more = 1;
			min = 0x80;
			c &= 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			more = 2;
			min = 0x800;
			c &= 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			more = 3;
			min = 0x10000;
			c &= 0x07;
		} else {
			return -1;
		}
		p++;
		for (int i = 0; i < more; i++, p++) {
			if ((*p & 0xc0) != 0x80)
				return -1;
			c = c << 6 | (*p & 0x3fu);
		}
		if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			return -1;
		if (c < 0x20 || (c >= 0x7f && c <= 0x9f))
			*control = true;
		runes++;
	}
	return runes;
}

/* obj[key] = s, s checked to be UTF-8 first (json_string refuses it). */
static int set_string(json_t *obj, const char *key, const char *s,
		      const char *path, struct kerf_err *err)
{
	bool control;

	if (utf8_runes(s, &control) < 0)
		return kerf_err_set(err, -KERF_EINVAL, "%s: not valid UTF-8",
				    path);
	if (json_object_set_new(obj, key, json_string(s)))
		return kerf_err_set(err, -KERF_ENOMEM, "%s: out of memory",
				    path);
	return 0;
}

static int set_new(json_t *obj, const char *key, json_t *v, const char *path,
		   struct kerf_err *err)
{
	if (json_object_set_new(obj, key, v))
		return kerf_err_set(err, -KERF_ENOMEM, "%s: out of memory",
				    path);
	return 0;
}

static int encode_causes(const struct kerf_admission_response *r,
			 json_t *status, struct kerf_err *err)
{
	json_t *details = json_object(), *causes = json_array();
	char path[96];
	int rc = 0;

	if (!details || !causes) {
		json_decref(details);
		json_decref(causes);
		return kerf_err_set(err, -KERF_ENOMEM,
				    "response.status.details: out of memory");
	}
	if (json_object_set_new(details, "causes", causes)) {
		json_decref(details);
		return kerf_err_set(err, -KERF_ENOMEM,
				    "response.status.details: out of memory");
	}
	rc = set_new(status, "details", details, "response.status.details",
		     err);
	for (size_t i = 0; rc == 0 && i < r->nr_causes; i++) {
		const struct kerf_admission_cause *c = &r->causes[i];
		json_t *o = json_object();

		snprintf(path, sizeof(path), "response.status.details.causes[%zu]", i);
		if (!o || json_array_append_new(causes, o))
			return kerf_err_set(err, -KERF_ENOMEM,
					    "%s: out of memory", path);
		if (!c->reason && !c->message && !c->field)
			return kerf_err_set(err, -KERF_EINVAL, "%s: empty", path);
		/* metav1.StatusCause: its Type is the JSON key "reason" */
		if ((c->reason && (rc = set_string(o, "reason", c->reason, path, err)) < 0) ||
		    (c->message && (rc = set_string(o, "message", c->message, path, err)) < 0) ||
		    (c->field && (rc = set_string(o, "field", c->field, path, err)) < 0))
			return rc;
	}
	return rc;
}

static int encode_status(const struct kerf_admission_response *r,
			 json_t *resp, struct kerf_err *err)
{
	json_t *status;
	int rc;

	if (!r->status_code && !r->status_reason && !r->status_message &&
	    !r->nr_causes)
		return 0;
	if (r->allowed)
		return kerf_err_set(err, -KERF_EINVAL,
				    "response.status: only a denial carries a status");
	if (r->status_code && (r->status_code < 400 || r->status_code > 599))
		return kerf_err_set(err, -KERF_EINVAL,
				    "response.status.code: %d is not an error code (400..599)",
				    r->status_code);
	if (r->nr_causes && !r->causes)
		return kerf_err_set(err, -KERF_EINVAL,
				    "response.status.details.causes: %zu causes but none given",
				    r->nr_causes);
	status = json_object();
	if ((rc = set_new(resp, "status", status, "response.status", err)) < 0)
		return rc;
	if (r->status_code &&
	    (rc = set_new(status, "code", json_integer(r->status_code),
			  "response.status.code", err)) < 0)
		return rc;
	if (r->status_reason &&
	    (rc = set_string(status, "reason", r->status_reason,
			     "response.status.reason", err)) < 0)
		return rc;
	if (r->status_message &&
	    (rc = set_string(status, "message", r->status_message,
			     "response.status.message", err)) < 0)
		return rc;
	return r->nr_causes ? encode_causes(r, status, err) : 0;
}

/* op[key], a string that must be there. */
static int patch_string(const json_t *op, const char *key, const char *path,
			const char **out, struct kerf_err *err)
{
	const json_t *v = json_object_get(op, key);

	if (!json_is_string(v))
		return kerf_err_set(err, -KERF_EINVAL,
				    "%s.%s: expected a string, got %s", path,
				    key, v ? kerf_json_type_name(v) : "nothing");
	*out = json_string_value(v);
	return 0;
}

/* One RFC 6902 operation: op known, path a JSON pointer, its operands. */
static int check_patch_op(const json_t *op, size_t i, struct kerf_err *err)
{
	static const char *const ops[] = { "add", "remove", "replace",
					   "move", "copy", "test" };
	char path[48], shown[SHOWN_MAX];
	const char *name, *ptr, *from;
	size_t k;
	int rc;

	snprintf(path, sizeof(path), "response.patch[%zu]", i);
	if (!json_is_object(op))
		return kerf_err_set(err, -KERF_EINVAL,
				    "%s: expected an object, got %s", path,
				    kerf_json_type_name(op));
	if ((rc = patch_string(op, "op", path, &name, err)) < 0 ||
	    (rc = patch_string(op, "path", path, &ptr, err)) < 0)
		return rc;
	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (!strcmp(name, ops[k]))
			break;
	if (k == sizeof(ops) / sizeof(ops[0]))
		return kerf_err_set(err, -KERF_EINVAL,
				    "%s.op: '%s' is not a JSON Patch operation",
				    path, kerf_escape(shown, sizeof(shown), name));
	if (*ptr && *ptr != '/')
		return kerf_err_set(err, -KERF_EINVAL,
				    "%s.path: '%s' is not a JSON pointer", path,
				    kerf_escape(shown, sizeof(shown), ptr));
	if ((k == 0 || k == 2 || k == 5) && !json_object_get(op, "value"))
		return kerf_err_set(err, -KERF_EINVAL, "%s.value: missing for %s",
				    path, name);
	if (k == 3 || k == 4) {
		if ((rc = patch_string(op, "from", path, &from, err)) < 0)
			return rc;
		if (*from && *from != '/')
			return kerf_err_set(err, -KERF_EINVAL,
					    "%s.from: '%s' is not a JSON pointer",
					    path, kerf_escape(shown, sizeof(shown), from));
	}
	return 0;
}

static int encode_patch(const struct kerf_admission_response *r,
			json_t *resp, struct kerf_err *err)
{
	char *text, *b64;
	size_t b64_len;
	int rc;

	if (!r->patch)
		return 0;
	if (!r->allowed)
		return kerf_err_set(err, -KERF_EINVAL,
				    "response.patch: a denial carries no patch");
	if (!json_is_array(r->patch))
		return kerf_err_set(err, -KERF_EINVAL,
				    "response.patch: expected an array of JSON Patch operations, got %s",
				    kerf_json_type_name(r->patch));
	for (size_t i = 0; i < json_array_size(r->patch); i++)
		if ((rc = check_patch_op(json_array_get(r->patch, i), i, err)) < 0)
			return rc;
	text = json_dumps(r->patch, JSON_COMPACT);
	if (!text)
		return kerf_err_set(err, -KERF_ENOMEM,
				    "response.patch: out of memory");
	rc = kerf_base64_encode(text, strlen(text), &b64, &b64_len);
	free(text);
	if (rc < 0)
		return kerf_err_set(err, rc, "response.patch: out of memory");
	rc = set_new(resp, "patchType", json_string("JSONPatch"),
		     "response.patchType", err);
	if (rc == 0)
		rc = set_new(resp, "patch", json_stringn(b64, b64_len),
			     "response.patch", err);
	free(b64);
	return rc;
}

/* Warnings the API server passes on whole: none dropped, none cut. */
static int encode_warnings(const struct kerf_admission_response *r,
			   json_t *resp, struct kerf_err *err)
{
	long total = 0;
	json_t *arr;
	int rc;

	if (!r->nr_warnings)
		return 0;
	if (!r->warnings)
		return kerf_err_set(err, -KERF_EINVAL,
				    "response.warnings: %zu warnings but none given",
				    r->nr_warnings);
	arr = json_array();
	if ((rc = set_new(resp, "warnings", arr, "response.warnings", err)) < 0)
		return rc;
	for (size_t i = 0; i < r->nr_warnings; i++) {
		const char *w = r->warnings[i];
		bool control;
		long runes = w ? utf8_runes(w, &control) : 0;

		if (!w || !*w)
			return kerf_err_set(err, -KERF_EINVAL,
					    "response.warnings[%zu]: empty (the API server drops it)",
					    i);
		if (runes < 0)
			return kerf_err_set(err, -KERF_EINVAL,
					    "response.warnings[%zu]: not valid UTF-8 (the API server drops it)",
					    i);
		if (control)
			return kerf_err_set(err, -KERF_EINVAL,
					    "response.warnings[%zu]: a control character (the API server drops it)",
					    i);
		if (runes > KERF_ADMISSION_WARNING_MAX_RUNES)
			return kerf_err_set(err, -KERF_EINVAL,
					    "response.warnings[%zu]: %ld characters, over the %d the API server keeps",
					    i, runes, KERF_ADMISSION_WARNING_MAX_RUNES);
		total += runes;
		if (total > KERF_ADMISSION_WARNINGS_MAX_RUNES)
			return kerf_err_set(err, -KERF_EINVAL,
					    "response.warnings: over %d characters in all, which the API server cuts",
					    KERF_ADMISSION_WARNINGS_MAX_RUNES);
		if (json_array_append_new(arr, json_string(w)))
			return kerf_err_set(err, -KERF_ENOMEM,
					    "response.warnings: out of memory");
	}
	return 0;
}

int kerf_admission_response_json(const struct kerf_admission_response *r,
				 json_t **out, struct kerf_err *err)
{
	json_t *root, *resp;
	int rc;

	*out = NULL;
	if (!r->uid || !*r->uid)
		return kerf_err_set(err, -KERF_EINVAL, "response.uid: missing");
	root = json_object();
	resp = json_object();
	if (!root || !resp ||
	    json_object_set_new(root, "apiVersion",
				json_string(KERF_ADMISSION_API_VERSION)) ||
	    json_object_set_new(root, "kind", json_string("AdmissionReview"))) {
		json_decref(root);
		json_decref(resp);
		return kerf_err_set(err, -KERF_ENOMEM, "response: out of memory");
	}
	/* set_new takes resp, also when it fails */
	if ((rc = set_new(root, "response", resp, "response", err)) < 0 ||
	    (rc = set_string(resp, "uid", r->uid, "response.uid", err)) < 0 ||
	    (rc = set_new(resp, "allowed", json_boolean(r->allowed),
			  "response.allowed", err)) < 0 ||
	    (rc = encode_status(r, resp, err)) < 0 ||
	    (rc = encode_patch(r, resp, err)) < 0 ||
	    (rc = encode_warnings(r, resp, err)) < 0)
		goto fail;
	*out = root;
	return 0;
fail:
	json_decref(root);
	return rc;
}

int kerf_admission_response_encode(const struct kerf_admission_response *r,
				   char **body, size_t *len,
				   struct kerf_err *err)
{
	json_t *root;
	int rc = kerf_admission_response_json(r, &root, err);

	*body = NULL;
	*len = 0;
	if (rc < 0)
		return rc;
	*body = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	if (!*body)
		return kerf_err_set(err, -KERF_ENOMEM, "response: out of memory");
	*len = strlen(*body);
	return 0;
}
