#include "kube/status.h"

#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "base/parse.h"

#define KERF_KUBE_CLASS_TEXT(name, text) [name] = text,
static const char *const class_text[] = { KERF_KUBE_CLASSES(KERF_KUBE_CLASS_TEXT) };
#undef KERF_KUBE_CLASS_TEXT

_Static_assert(sizeof(class_text) / sizeof(class_text[0]) == KERF_KUBE_CLASS_COUNT_,
	       "class table must cover every class");

void kerf_kube_status_init(struct kerf_kube_status *st)
{
	memset(st, 0, sizeof(*st));
	st->retry_after_s = -1;
}

static void copy_str(char *out, size_t size, const json_t *v)
{
	const char *s = json_string_value(v);

	if (s)
		snprintf(out, size, "%s", s);
}

bool kerf_kube_status_from_json(struct kerf_kube_status *st, const json_t *obj)
{
	const json_t *details, *v, *causes;

	kerf_kube_status_init(st);
	if (!json_is_object(obj))
		return false;
	v = json_object_get(obj, "kind");
	if (!json_is_string(v) || strcmp(json_string_value(v), "Status") != 0)
		return false;
	st->decoded = true;
	v = json_object_get(obj, "code");
	if (json_is_integer(v) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) < 1000)
		st->code = (int32_t)json_integer_value(v);
	copy_str(st->reason, sizeof(st->reason), json_object_get(obj, "reason"));
	copy_str(st->message, sizeof(st->message), json_object_get(obj, "message"));
	details = json_object_get(obj, "details");
	if (!json_is_object(details))
		return true;
	copy_str(st->kind, sizeof(st->kind), json_object_get(details, "kind"));
	copy_str(st->name, sizeof(st->name), json_object_get(details, "name"));
	causes = json_object_get(details, "causes");
	if (json_is_array(causes) && json_array_size(causes) > 0)
		copy_str(st->cause, sizeof(st->cause),
			 json_object_get(json_array_get(causes, 0), "reason"));
	v = json_object_get(details, "retryAfterSeconds");
	if (json_is_integer(v) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) <= 86400)
		st->retry_after_s = json_integer_value(v);
	return true;
}

bool kerf_kube_status_decode(struct kerf_kube_status *st, const char *body,
			     size_t len)
{
	json_t *obj;
	bool ok;

	kerf_kube_status_init(st);
	if (!body || len == 0)
		return false;
	obj = json_loadb(body, len, 0, NULL);
	if (!obj)
		return false;
	ok = kerf_kube_status_from_json(st, obj);
	json_decref(obj);
	return ok;
}

enum kerf_kube_class kerf_kube_classify(long http_status, const char *reason)
{
	if (http_status == 0)
		return KERF_KUBE_TRANSPORT;
	if (http_status >= 200 && http_status < 300)
		return KERF_KUBE_OK;
	if (reason && (strcmp(reason, "Expired") == 0 || strcmp(reason, "Gone") == 0))
		return KERF_KUBE_GONE;
	switch (http_status) {
	case 400: return KERF_KUBE_BAD_REQUEST;
	case 401: return KERF_KUBE_UNAUTHORIZED;
	case 403: return KERF_KUBE_FORBIDDEN;
	case 404: return KERF_KUBE_NOT_FOUND;
	case 405: return KERF_KUBE_METHOD_NOT_ALLOWED;
	case 409:
		return reason && strcmp(reason, "AlreadyExists") == 0 ?
			KERF_KUBE_ALREADY_EXISTS : KERF_KUBE_CONFLICT;
	case 410: return KERF_KUBE_GONE;
	case 415: return KERF_KUBE_UNSUPPORTED_MEDIA_TYPE;
	case 422: return KERF_KUBE_INVALID;
	case 429: return KERF_KUBE_TOO_MANY_REQUESTS;
	case 500: return KERF_KUBE_INTERNAL;
	case 503: return KERF_KUBE_UNAVAILABLE;
	case 504: return KERF_KUBE_SERVER_TIMEOUT;
	default: return KERF_KUBE_OTHER_HTTP;
	}
}

const char *kerf_kube_class_name(enum kerf_kube_class c)
{
	if ((unsigned)c >= KERF_KUBE_CLASS_COUNT_)
		return "unknown";
	return class_text[c];
}

int kerf_kube_class_errno(enum kerf_kube_class c)
{
	switch (c) {
	case KERF_KUBE_OK: return 0;
	case KERF_KUBE_NOT_FOUND: return -KERF_ENOTFOUND;
	case KERF_KUBE_ALREADY_EXISTS: return -KERF_EEXIST;
	case KERF_KUBE_CONFLICT: return -KERF_EBUSY;
	case KERF_KUBE_GONE: return -KERF_EGONE;
	case KERF_KUBE_SERVER_TIMEOUT: return -KERF_ETIMEDOUT;
	case KERF_KUBE_TRANSPORT: return -KERF_ETRANSPORT;
	default: return -KERF_EHTTP;
	}
}

bool kerf_kube_class_is_retryable(enum kerf_kube_class c)
{
	return c == KERF_KUBE_TOO_MANY_REQUESTS || c == KERF_KUBE_UNAVAILABLE ||
	       c == KERF_KUBE_SERVER_TIMEOUT || c == KERF_KUBE_TRANSPORT;
}

int64_t kerf_kube_parse_retry_after(const char *value)
{
	uint64_t n;

	if (!value || kerf_parse_u64(value, &n) < 0 || n > 86400)
		return -1;
	return (int64_t)n;
}
