#include "kobj/request.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/buf.h"
#include "kobj/time.h"

void kerf_kreq_release(struct kerf_kreq *r)
{
	if (!r)
		return;
	free(r->body);
	r->body = NULL;
}

int kerf_kreq_check_name(const char *what, const char *s, size_t max,
			 struct kerf_err *err)
{
	char shown[80];
	size_t n;

	if (!s || !*s)
		return kerf_err_set(err, -KERF_EINVAL, "%s: empty", what);
	n = strlen(s);
	if (n > max)
		return kerf_err_set(err, -KERF_EINVAL, "%s: %zu bytes, at most %zu",
				    what, n, max);
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			  ((c == '-' || c == '.') && i > 0 && i + 1 < n);

		if (!ok)
			return kerf_err_set(err, -KERF_EINVAL,
					    "%s '%s': not a DNS name (lower-case letters, digits, '-', '.')",
					    what, kerf_escape(shown, sizeof(shown), s));
	}
	return 0;
}

static int pod_path(struct kerf_kreq *r, const char *ns, const char *name,
		    const char *sub, struct kerf_err *err)
{
	int rc;

	if ((rc = kerf_kreq_check_name("namespace", ns, 63, err)) < 0 ||
	    (rc = kerf_kreq_check_name("pod name", name, 253, err)) < 0)
		return rc;
	snprintf(r->path, sizeof(r->path), "/api/v1/namespaces/%s/pods/%s%s%s",
		 ns, name, sub ? "/" : "", sub ? sub : "");
	return 0;
}

/* Serialize and take obj; compact, keys in the order built. */
static int finish(struct kerf_kreq *r, json_t *obj, struct kerf_err *err)
{
	if (!obj)
		return kerf_err_set(err, -KERF_EINVAL,
				    "%s %s: a field is missing or not UTF-8 (or out of memory)",
				    r->method, r->path);
	r->body = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(obj);
	if (!r->body)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	return 0;
}

int kerf_kreq_binding(struct kerf_kreq *r, const char *ns, const char *name,
		      const char *uid, const char *node,
		      const struct kerf_kv *annotations, size_t nr,
		      struct kerf_err *err)
{
	json_t *meta, *ann = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = pod_path(r, ns, name, "binding", err)) < 0 ||
	    (rc = kerf_kreq_check_name("node name", node, 253, err)) < 0)
		return rc;
	r->method = "POST";
	r->content_type = "application/json";
	meta = json_pack("{s:s, s:s}", "name", name, "namespace", ns);
	if (meta && uid && *uid)
		json_object_set_new(meta, "uid", json_string(uid));
	if (meta && nr) {
		ann = json_object();
		for (size_t i = 0; ann && i < nr; i++)
			json_object_set_new(ann, annotations[i].key,
					    json_string(annotations[i].value));
		json_object_set_new(meta, "annotations", ann);
	}
	return finish(r, meta ? json_pack("{s:s, s:s, s:o, s:{s:s, s:s, s:s}}",
					  "apiVersion", "v1", "kind", "Binding",
					  "metadata", meta, "target", "apiVersion",
					  "v1", "kind", "Node", "name", node)
			      : NULL,
		      err);
}

int kerf_kreq_pending(struct kerf_kreq *r, const char *ns, const char *name,
		      const char *reason, const char *message, int64_t now_ms,
		      struct kerf_err *err)
{
	char when[KERF_TIME_TEXT_MAX];
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = pod_path(r, ns, name, "status", err)) < 0)
		return rc;
	r->method = "PATCH";
	r->content_type = "application/strategic-merge-patch+json";
	kerf_time_format(now_ms, when);
	return finish(r, json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:n, s:s}]}}",
				   "status", "conditions", "type", "PodScheduled",
				   "status", "False", "reason", reason, "message",
				   message, "lastProbeTime", "lastTransitionTime",
				   when),
		      err);
}

int kerf_kreq_annotations(struct kerf_kreq *r, const char *ns,
			  const char *name, const struct kerf_kv *kv, size_t nr,
			  struct kerf_err *err)
{
	json_t *ann;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = pod_path(r, ns, name, NULL, err)) < 0)
		return rc;
	r->method = "PATCH";
	r->content_type = "application/merge-patch+json";
	ann = json_object();
	for (size_t i = 0; ann && i < nr; i++)
		json_object_set_new(ann, kv[i].key,
				    kv[i].value ? json_string(kv[i].value) : json_null());
	return finish(r, ann ? json_pack("{s:{s:o}}", "metadata", "annotations", ann)
			     : NULL,
		      err);
}

int kerf_kreq_annotate(struct kerf_kreq *r, const char *ns, const char *name,
		       const char *key, const char *value,
		       struct kerf_err *err)
{
	struct kerf_kv kv = { key, value };

	return kerf_kreq_annotations(r, ns, name, &kv, 1, err);
}

int kerf_kreq_eviction(struct kerf_kreq *r, const char *ns, const char *name,
		       int64_t grace_s, struct kerf_err *err)
{
	json_t *obj;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = pod_path(r, ns, name, "eviction", err)) < 0)
		return rc;
	r->method = "POST";
	r->content_type = "application/json";
	obj = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "policy/v1",
			"kind", "Eviction", "metadata", "name", name,
			"namespace", ns);
	if (obj && grace_s >= 0)
		json_object_set_new(obj, "deleteOptions",
				    json_pack("{s:I}", "gracePeriodSeconds",
					      (json_int_t)grace_s));
	return finish(r, obj, err);
}

/* The events collection of e's namespace, or e itself. */
static int event_path(struct kerf_kreq *r, const struct kerf_kevent *e,
		      bool itself, struct kerf_err *err)
{
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = kerf_kreq_check_name("namespace", e->ns, 63, err)) < 0 ||
	    (rc = kerf_kreq_check_name("event name", e->name, 253, err)) < 0)
		return rc;
	snprintf(r->path, sizeof(r->path), "/api/v1/namespaces/%s/events%s%s",
		 e->ns, itself ? "/" : "", itself ? e->name : "");
	return 0;
}

int kerf_kreq_event(struct kerf_kreq *r, const struct kerf_kevent *e,
		    struct kerf_err *err)
{
	char when[KERF_TIME_TEXT_MAX];
	int rc;

	if ((rc = event_path(r, e, false, err)) < 0)
		return rc;
	r->method = "POST";
	r->content_type = "application/json";
	kerf_time_format(e->now_ms, when);
	return finish(r, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s, s:s},"
				   " s:s, s:s, s:{s:s}, s:s, s:s, s:i, s:s, s:n, s:s, s:s}",
				   "apiVersion", "v1", "kind", "Event",
				   "metadata", "name", e->name, "namespace", e->ns,
				   "involvedObject", "kind", "Pod", "namespace", e->ns,
				   "name", e->pod, "uid", e->pod_uid ? e->pod_uid : "",
				   "apiVersion", "v1",
				   "reason", e->reason, "message", e->message,
				   "source", "component", e->component,
				   "firstTimestamp", when, "lastTimestamp", when,
				   "count", e->count > 0 ? e->count : 1,
				   "type", e->type, "eventTime",
				   "reportingComponent", e->component,
				   "reportingInstance", e->instance ? e->instance : ""),
		      err);
}

int kerf_kreq_event_count(struct kerf_kreq *r, const struct kerf_kevent *e,
			  struct kerf_err *err)
{
	char when[KERF_TIME_TEXT_MAX];
	int rc;

	if ((rc = event_path(r, e, true, err)) < 0)
		return rc;
	r->method = "PATCH";
	r->content_type = "application/strategic-merge-patch+json";
	kerf_time_format(e->now_ms, when);
	return finish(r, json_pack("{s:i, s:s, s:s}", "count", e->count,
				   "lastTimestamp", when, "message", e->message),
		      err);
}
