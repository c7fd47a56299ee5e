/*
 * informer: a local cache of one kind of object (one resource path, with
 * optional label and field selectors), kept current by list then watch,
 * and handlers told of every change, as client-go's informers do.
 *
 * List: pages of page_limit (500) objects, following metadata.continue;
 * all pages carry the list's resourceVersion.  A 410 on a continue token
 * (it expired) starts the list again from scratch.  Once the first list
 * completed the informer has synced.
 *
 * Watch: from the list's (or the last event's) resourceVersion with
 * allowWatchBookmarks=true and timeoutSeconds drawn from [watch_min_s,
 * watch_max_s] (300..600) so that many informers do not reconnect at once.
 * A bookmark only moves the resourceVersion.  A stream the server ends is
 * resumed at once from the last resourceVersion; one that drops, or a
 * watch refused with anything but 410, is resumed after a backoff pause
 * (kube/retry.h; relisting after three failures in a row).  "Too old
 * resource version" (an ERROR event with code 410 inside an HTTP 200
 * stream, or an HTTP 410) means relist.
 *
 * Relist: the new list is compared with the cache: objects whose
 * resourceVersion changed are updates, new ones adds, and the objects the
 * list no longer holds are deleted (on_delete), so a delete missed while
 * the watch was down is not lost.  Unchanged objects cause no call.
 *
 * Events: ADDED of a known object is an update (no call when its
 * resourceVersion is the same: duplicates are harmless), MODIFIED of an
 * unknown one an add, DELETED of an unknown one is ignored.  A line that
 * does not decode is counted, kept in last_error and answered with a
 * relist; an object without metadata.name is counted and skipped.
 *
 * Memory: the cache holds no JSON.  Each object goes through the handlers'
 * decode (a transform to a compact struct of the caller's own) and only
 * what it returns is kept, with the key (namespace/name, or name for
 * cluster-scoped kinds) and the resourceVersion.  The informer owns the
 * compact objects: it frees them with the handlers' free once a handler
 * call that hands over an old one returned.
 *
 * Driving: everything happens inside the ops' poll (answers) and
 * kerf_informer_tick (pauses that ended), both from the owner's loop.
 */
#ifndef KERF_KUBE_INFORMER_H
#define KERF_KUBE_INFORMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "base/rng.h"
#include "kube/ops.h"
#include "kube/retry.h"

struct kerf_informer_handlers {
	/* A compact copy of obj (a list item or an event's object), or NULL
	 * when it cannot be used (counted in decode_failed, not cached). */
	void *(*decode)(void *arg, const json_t *obj);
	void (*free)(void *arg, void *compact);
	/* Any of these may be NULL.  Objects are the informer's: borrowed. */
	void (*on_add)(void *arg, const char *key, void *obj);
	void (*on_update)(void *arg, const char *key, void *old_obj,
			  void *new_obj);
	void (*on_delete)(void *arg, const char *key, void *old_obj);
	/* A page of a list made again (not the first list) was applied;
	 * what the list no longer holds is not deleted yet. */
	void (*on_relist_page)(void *arg);
	void *arg;
};

struct kerf_informer_opts {
	const char *path;              /* "/api/v1/pods", no query (copied) */
	const char *label_selector;    /* or NULL (copied) */
	const char *field_selector;    /* or NULL (copied) */
	uint32_t page_limit;           /* 0: 500 */
	uint32_t watch_min_s;          /* 0: 300 */
	uint32_t watch_max_s;          /* 0: 600 */
	struct kerf_kube_backoff backoff;  /* zeros: 1 s .. 30 s */
	struct kerf_rng *rng;          /* jitter and backoff; borrowed, required */
};

struct kerf_informer_stats {
	uint64_t lists;                /* lists started (the first included) */
	uint64_t relists;              /* lists after the first */
	uint64_t pages;
	uint64_t watches;              /* watches started */
	uint64_t watch_restarts;       /* watches after the first */
	uint64_t events;               /* watch lines applied */
	uint64_t bookmarks;
	uint64_t expired;              /* 410s seen (list or watch) */
	uint64_t malformed;            /* lines or lists that did not decode */
	uint64_t no_name;              /* objects without metadata.name */
	uint64_t decode_failed;        /* decode returned NULL */
	uint64_t errors;               /* failed lists and watches */
	uint64_t adds, updates, deletes;
	char last_error[KERF_KUBE_MSG_MAX];  /* escaped; "" when none yet */
};

struct kerf_informer;

/* An informer (not started); NULL with err on bad opts or out of memory. */
struct kerf_informer *kerf_informer_new(const struct kerf_kube_ops *ops,
					const struct kerf_informer_opts *opts,
					const struct kerf_informer_handlers *h,
					struct kerf_err *err);

/* Cancel what is in flight and free the cache (through h->free). */
void kerf_informer_free(struct kerf_informer *inf);

/* Start the first list; 0 or a negative error. */
int kerf_informer_start(struct kerf_informer *inf);

/*
 * Start what a pause was waiting for once it is over; returns the
 * milliseconds until the next pause ends (UINT64_MAX: none pending).
 */
uint64_t kerf_informer_tick(struct kerf_informer *inf);

bool kerf_informer_has_synced(const struct kerf_informer *inf);

/* Every one of infs[0..nr) has synced (readiness, F-09). */
bool kerf_informers_synced(struct kerf_informer *const *infs, size_t nr);

/* The cached object under key ("ns/name" or "name"), or NULL. */
void *kerf_informer_get(const struct kerf_informer *inf, const char *key);

size_t kerf_informer_size(const struct kerf_informer *inf);

/* The i-th cached object (i < size; no order) and its key, or NULL. */
void *kerf_informer_at(const struct kerf_informer *inf, size_t i,
		       const char **key);

/* The resourceVersion the next watch starts from ("" before a list). */
const char *kerf_informer_resource_version(const struct kerf_informer *inf);

const struct kerf_informer_stats *
kerf_informer_stats(const struct kerf_informer *inf);

/* Apply one watch line as if it had arrived (for the fuzz target). */
int kerf_informer_apply_line(struct kerf_informer *inf, const char *line,
			     size_t len);

#endif /* KERF_KUBE_INFORMER_H */
