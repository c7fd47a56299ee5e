#include "kube/watch_event.h"

#include <string.h>

#include "base/buf.h"

static const char *const type_names[] = {
	[KERF_KUBE_ADDED] = "ADDED",
	[KERF_KUBE_MODIFIED] = "MODIFIED",
	[KERF_KUBE_DELETED] = "DELETED",
	[KERF_KUBE_BOOKMARK] = "BOOKMARK",
	[KERF_KUBE_ERROR] = "ERROR",
};

const char *kerf_kube_event_type_name(enum kerf_kube_event_type t)
{
	if ((unsigned)t > KERF_KUBE_ERROR)
		return "?";
	return type_names[t];
}

static const char *str_or_null(const json_t *v)
{
	const char *s = json_string_value(v);

	return s && s[0] ? s : NULL;
}

void kerf_kube_object_meta(const json_t *obj, const char **name,
			   const char **namespace_name,
			   const char **resource_version)
{
	const json_t *md = json_object_get(obj, "metadata");

	*name = str_or_null(json_object_get(md, "name"));
	*namespace_name = str_or_null(json_object_get(md, "namespace"));
	*resource_version = str_or_null(json_object_get(md, "resourceVersion"));
}

void kerf_kube_event_release(struct kerf_kube_event *ev)
{
	json_decref(ev->object);
	memset(ev, 0, sizeof(*ev));
}

static int fail(struct kerf_kube_event *ev, struct kerf_err *err,
		const char *what)
{
	kerf_kube_event_release(ev);
	return kerf_err_set(err, -KERF_EPARSE, "watch event: %s", what);
}

int kerf_kube_event_decode(struct kerf_kube_event *ev, const char *line,
			   size_t len, struct kerf_err *err)
{
	json_error_t jerr;
	json_t *root, *obj;
	const char *type;
	char shown[48];
	int t;

	memset(ev, 0, sizeof(*ev));
	kerf_kube_status_init(&ev->status);
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		kerf_escape(shown, sizeof(shown), jerr.text);
		return kerf_err_set(err, -KERF_EPARSE, "watch event: not JSON (%s at byte %d)", shown, jerr.position);
	}
	type = json_string_value(json_object_get(root, "type"));
	obj = json_object_get(root, "object");
	if (!json_is_object(root) || !type || !json_is_object(obj)) {
		json_decref(root);
		return kerf_err_set(err, -KERF_EPARSE, "watch event: not {\"type\": string, \"object\": {...}}");
	}
	for (t = 0; t <= KERF_KUBE_ERROR; t++)
		if (strcmp(type, type_names[t]) == 0)
			break;
	if (t > KERF_KUBE_ERROR) {
		kerf_escape(shown, sizeof(shown), type);
		json_decref(root);
		return kerf_err_set(err, -KERF_EPARSE, "watch event: unknown type '%s'", shown);
	}
	ev->type = (enum kerf_kube_event_type)t;
	ev->object = json_incref(obj);
	json_decref(root);
	if (ev->type == KERF_KUBE_ERROR) {
		if (!kerf_kube_status_from_json(&ev->status, ev->object))
			return fail(ev, err, "ERROR without a Status object");
		return 0;
	}
	kerf_kube_object_meta(ev->object, &ev->name, &ev->namespace_name,
			      &ev->resource_version);
	if (!ev->resource_version)
		return fail(ev, err, "object without metadata.resourceVersion");
	return 0;
}
