/*
 * request: the writes kerf serve sends, built exactly as the real API
 * server takes them (../shared/fixtures/k8s/real-1.34.9: binding/,
 * status/, eviction/, events/).  Pure: a method, a path and a JSON body;
 * the API client sends them.
 *
 *   binding       POST   .../pods/NAME/binding        (201 Status)
 *   pending       PATCH  .../pods/NAME/status         strategic merge:
 *                 PodScheduled=False merged by type, other conditions kept
 *   annotate      PATCH  .../pods/NAME                merge patch of
 *                 annotations (null removes one)
 *   eviction      POST   .../pods/NAME/eviction       policy/v1 Eviction
 *   event         POST   .../namespaces/NS/events     core/v1 Event
 *   event count   PATCH  .../events/NAME              count, lastTimestamp
 *
 * Binding carries the pod's uid (a pod deleted and made again under the
 * same name is never bound by a stale decision: 409) and the devices as
 * annotations, which the API server copies onto the pod with the binding.
 */
#ifndef KERF_KOBJ_REQUEST_H
#define KERF_KOBJ_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

enum { KERF_KREQ_PATH_MAX = 1024 };

struct kerf_kreq {
	const char *method;          /* "POST", "PATCH" */
	char path[KERF_KREQ_PATH_MAX];
	const char *content_type;
	char *body;                  /* malloc'd JSON */
};

void kerf_kreq_release(struct kerf_kreq *r);

struct kerf_kv {
	const char *key;
	const char *value;
};

int kerf_kreq_binding(struct kerf_kreq *r, const char *ns, const char *name,
		      const char *uid, const char *node,
		      const struct kerf_kv *annotations, size_t nr,
		      struct kerf_err *err);

/* PodScheduled=False with reason and message, at now_ms. */
int kerf_kreq_pending(struct kerf_kreq *r, const char *ns, const char *name,
		      const char *reason, const char *message, int64_t now_ms,
		      struct kerf_err *err);

/* Set (value non-NULL) or remove one annotation of a pod. */
int kerf_kreq_annotate(struct kerf_kreq *r, const char *ns, const char *name,
		       const char *key, const char *value,
		       struct kerf_err *err);

/*
 * Set (value non-NULL) or remove several annotations of a pod in one merge
 * patch (a gang's plan: kerf.io/planned-node and the devices).
 */
int kerf_kreq_annotations(struct kerf_kreq *r, const char *ns,
			  const char *name, const struct kerf_kv *kv, size_t nr,
			  struct kerf_err *err);

/* Evict with the given grace (seconds; negative: the pod's own). */
int kerf_kreq_eviction(struct kerf_kreq *r, const char *ns, const char *name,
		       int64_t grace_s, struct kerf_err *err);

struct kerf_kevent {
	const char *ns;
	const char *name;            /* the Event's own name */
	const char *pod;             /* involvedObject */
	const char *pod_uid;
	const char *type;            /* "Normal" or "Warning" */
	const char *reason;          /* "FailedScheduling", "Scheduled", ... */
	const char *message;
	const char *component;       /* "kerf-scheduler" */
	const char *instance;        /* reportingInstance (the replica) */
	int64_t now_ms;
	int32_t count;
};

int kerf_kreq_event(struct kerf_kreq *r, const struct kerf_kevent *e,
		    struct kerf_err *err);

/* The same event seen again: count and lastTimestamp. */
int kerf_kreq_event_count(struct kerf_kreq *r, const struct kerf_kevent *e,
			  struct kerf_err *err);

/* A name safe in a path segment: DNS labels and subdomains, nothing else. */
int kerf_kreq_check_name(const char *what, const char *s, size_t max,
			 struct kerf_err *err);

#endif
