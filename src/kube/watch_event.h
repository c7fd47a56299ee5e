/*
 * watch_event: one line of a watch stream, {"type":..., "object":{...}},
 * decoded and checked.
 *
 * type is ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.  For every type but
 * ERROR the object must carry metadata.resourceVersion (a non-empty
 * string); name and namespace are taken when they are strings (an object
 * without a name is not refused here: the informer counts and skips it).
 * An ERROR's object is a Status (kube/status.h), decoded into status:
 * "too old resource version" comes as an ERROR with code 410 inside an
 * HTTP 200 stream.  Unknown fields are fine; anything else is
 * -KERF_EPARSE with a message starting "watch event: ".
 */
#ifndef KERF_KUBE_WATCH_EVENT_H
#define KERF_KUBE_WATCH_EVENT_H

#include <stddef.h>

#include <jansson.h>

#include "base/err.h"
#include "kube/status.h"

enum kerf_kube_event_type {
	KERF_KUBE_ADDED = 0,
	KERF_KUBE_MODIFIED,
	KERF_KUBE_DELETED,
	KERF_KUBE_BOOKMARK,
	KERF_KUBE_ERROR,
};

struct kerf_kube_event {
	enum kerf_kube_event_type type;
	json_t *object;                    /* owned reference */
	const char *name;                  /* in object; NULL when absent */
	const char *namespace_name;        /* in object; NULL: cluster-scoped */
	const char *resource_version;      /* in object; NULL only for ERROR */
	struct kerf_kube_status status;    /* ERROR only */
};

/* line[0..len) into ev (needs no init); on error ev holds nothing. */
int kerf_kube_event_decode(struct kerf_kube_event *ev, const char *line,
			   size_t len, struct kerf_err *err);
void kerf_kube_event_release(struct kerf_kube_event *ev);

/* "ADDED" ... for messages. */
const char *kerf_kube_event_type_name(enum kerf_kube_event_type t);

/*
 * metadata.name, .namespace and .resourceVersion of obj (NULL where
 * absent or not a string); for lists' items as well as events.
 */
void kerf_kube_object_meta(const json_t *obj, const char **name,
			   const char **namespace_name,
			   const char **resource_version);

#endif /* KERF_KUBE_WATCH_EVENT_H */
