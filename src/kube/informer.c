/*
 * informer: the list-then-watch state machine over kube/ops.h; the cache
 * is informer_store.c.
 */
#include "kube/informer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "kube/informer_int.h"
#include "kube/query.h"
#include "kube/watch_event.h"

enum inf_state {
	INF_IDLE = 0,
	INF_LISTING,          /* a list page in flight */
	INF_WATCHING,         /* a watch open */
	INF_PAUSED,           /* waiting for due_ms, then next_action */
};

enum inf_action { INF_DO_LIST, INF_DO_WATCH };

enum { INF_FAILURES_BEFORE_RELIST = 3 };

struct kerf_informer {
	struct kerf_kube_ops ops;
	struct kerf_informer_handlers h;
	struct kerf_informer_opts o;
	char *path, *label_selector, *field_selector;
	struct inf_store store;
	struct kerf_informer_stats st;
	enum inf_state state;
	enum inf_action next_action;
	uint64_t due_ms;
	uint64_t req_id;           /* the list page or watch in flight */
	uint64_t gen;              /* of the list in progress */
	unsigned failures;         /* in a row, for the backoff */
	bool synced;
	bool relist;               /* the watch saw a 410 or garbage */
	bool malformed_seen;       /* ... garbage: relist after a pause */
	char rv[256];              /* where the next watch starts */
	char list_rv[256];         /* of the list in progress */
};

static int start_list(struct kerf_informer *inf, const char *cont);
static int start_watch(struct kerf_informer *inf);

static char *dup_opt(const char *s, bool *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = kerf_strdup(s);
	if (!d)
		*oom = true;
	return d;
}

struct kerf_informer *kerf_informer_new(const struct kerf_kube_ops *ops,
					const struct kerf_informer_opts *opts,
					const struct kerf_informer_handlers *h,
					struct kerf_err *err)
{
	struct kerf_informer *inf;
	bool oom = false;

	if (!opts->path || opts->path[0] != '/' || strchr(opts->path, '?') ||
	    !opts->rng || !h->decode) {
		kerf_err_set(err, -KERF_EINVAL, "informer: needs a path without query, an rng and a decode handler");
		return NULL;
	}
	inf = calloc(1, sizeof(*inf));
	if (!inf) {
		kerf_err_set(err, -KERF_ENOMEM, "informer: out of memory");
		return NULL;
	}
	inf->ops = *ops;
	inf->h = *h;
	inf->o = *opts;
	inf->path = dup_opt(opts->path, &oom);
	inf->label_selector = dup_opt(opts->label_selector, &oom);
	inf->field_selector = dup_opt(opts->field_selector, &oom);
	if (!inf->o.page_limit)
		inf->o.page_limit = 500;
	if (!inf->o.watch_min_s)
		inf->o.watch_min_s = 300;
	if (!inf->o.watch_max_s)
		inf->o.watch_max_s = 600;
	if (inf->o.watch_max_s < inf->o.watch_min_s)
		inf->o.watch_max_s = inf->o.watch_min_s;
	if (!inf->o.backoff.base_ms)
		inf->o.backoff.base_ms = 1000;
	if (!inf->o.backoff.cap_ms)
		inf->o.backoff.cap_ms = 30000;
	if (!inf->o.backoff.max_retry_after_ms)
		inf->o.backoff.max_retry_after_ms = 120000;
	inf_store_init(&inf->store);
	if (oom) {
		kerf_informer_free(inf);
		kerf_err_set(err, -KERF_ENOMEM, "informer: out of memory");
		return NULL;
	}
	return inf;
}

void kerf_informer_free(struct kerf_informer *inf)
{
	if (!inf)
		return;
	if (inf->req_id)
		inf->ops.cancel(inf->ops.ctx, inf->req_id);
	inf_store_release(&inf->store, &inf->h);
	free(inf->path);
	free(inf->label_selector);
	free(inf->field_selector);
	free(inf);
}

/* last_error = "prefix: text", text escaped unless it already is. */
static void note_error(struct kerf_informer *inf, const char *prefix,
		       const char *text, bool escaped)
{
	char shown[256];

	if (!escaped)
		text = kerf_escape(shown, sizeof(shown), text);
	snprintf(inf->st.last_error, sizeof(inf->st.last_error), "%.40s: %.250s",
		 prefix, text);
}

/* Wait (backoff, or retry_after_s when >= 0), then do action. */
static void pause_then(struct kerf_informer *inf, enum inf_action action,
		       int64_t retry_after_s)
{
	uint64_t delay = kerf_kube_backoff_ms(&inf->o.backoff,
					      inf->failures ? inf->failures - 1 : 0,
					      retry_after_s, inf->o.rng);

	inf->state = INF_PAUSED;
	inf->next_action = action;
	inf->due_ms = inf->ops.now_ms(inf->ops.ctx) + delay;
}

static int base_query(struct kerf_informer *inf, struct kerf_buf *b)
{
	int rc = kerf_buf_add_str(b, inf->path);

	if (rc == 0 && inf->label_selector)
		rc = kerf_kube_query_add(b, "labelSelector", inf->label_selector);
	if (rc == 0 && inf->field_selector)
		rc = kerf_kube_query_add(b, "fieldSelector", inf->field_selector);
	return rc;
}

/* ---- list ------------------------------------------------------------ */

static void list_failed(struct kerf_informer *inf, int64_t retry_after_s)
{
	inf->failures++;
	inf->st.errors++;
	pause_then(inf, INF_DO_LIST, retry_after_s);
}

/* The items of a page into the cache; its continue token into *cont. */
static int apply_page(struct kerf_informer *inf, json_t *page,
		      const char **cont)
{
	json_t *md = json_object_get(page, "metadata");
	json_t *items = json_object_get(page, "items");
	const char *rv = json_string_value(json_object_get(md, "resourceVersion"));
	const char *name, *ns, *irv;
	size_t i;
	int rc;

	*cont = json_string_value(json_object_get(md, "continue"));
	if (!json_is_object(page) || !rv || !rv[0] || strlen(rv) >= sizeof(inf->list_rv) ||
	    !(json_is_array(items) || json_is_null(items) || !items))
		return -KERF_EPARSE;
	if (!inf->list_rv[0])
		snprintf(inf->list_rv, sizeof(inf->list_rv), "%s", rv);
	for (i = 0; i < json_array_size(items); i++) {
		json_t *it = json_array_get(items, i);

		kerf_kube_object_meta(it, &name, &ns, &irv);
		if (!json_is_object(it) || !name) {
			inf->st.no_name++;
			continue;
		}
		/* items without their own rv cannot be compared: take the list's */
		rc = inf_store_apply(&inf->store, &inf->h, &inf->st, it, name,
				     ns, irv ? irv : rv, inf->gen);
		if (rc < 0)
			return rc;
		/* drop the item's tree now: a page is large, the cache is not */
		json_array_set_new(items, i, json_null());
	}
	return 0;
}

static void on_list(void *arg, const struct kerf_kube_response *resp)
{
	struct kerf_informer *inf = arg;
	const char *cont = NULL;
	json_error_t jerr;
	json_t *page;
	char *next = NULL;
	int rc;

	inf->req_id = 0;
	if (resp->class == KERF_KUBE_GONE) {
		/* an expired continue token: begin again, from scratch */
		inf->st.expired++;
		note_error(inf, "list", resp->msg, true);
		if (start_list(inf, NULL) < 0)
			list_failed(inf, -1);
		return;
	}
	if (resp->class != KERF_KUBE_OK) {
		note_error(inf, "list", resp->msg, true);
		list_failed(inf, resp->retry_after_s >= 0 ? resp->retry_after_s :
				 resp->status.retry_after_s);
		return;
	}
	inf->st.pages++;
	page = json_loadb(resp->body, resp->body_len, 0, &jerr);
	rc = page ? apply_page(inf, page, &cont) : -KERF_EPARSE;
	if (rc == 0 && cont && cont[0] && !(next = kerf_strdup(cont)))
		rc = -KERF_ENOMEM;
	json_decref(page);
	/* every list after the first is a relist (lists never overlap) */
	if (rc == 0 && inf->st.relists && inf->h.on_relist_page)
		inf->h.on_relist_page(inf->h.arg);
	if (rc < 0) {
		inf->st.malformed += rc == -KERF_EPARSE;
		note_error(inf, "list", rc == -KERF_EPARSE ?
			   "not a list with metadata.resourceVersion and items" :
			   kerf_strerror(rc), true);
		list_failed(inf, -1);
		return;
	}
	if (next) {
		rc = start_list(inf, next);
		free(next);
		if (rc < 0)
			list_failed(inf, -1);
		return;
	}
	/* the whole list is in: what it did not hold is gone */
	inf_store_sweep(&inf->store, &inf->h, &inf->st, inf->gen);
	snprintf(inf->rv, sizeof(inf->rv), "%s", inf->list_rv);
	inf->synced = true;
	inf->failures = 0;
	if (start_watch(inf) < 0) {
		inf->failures++;
		pause_then(inf, INF_DO_WATCH, -1);
	}
}

static int start_list(struct kerf_informer *inf, const char *cont)
{
	struct kerf_buf b;
	struct kerf_kube_request req = { .method = "GET" };
	char limit[24];
	int rc;

	if (!cont) {
		if (inf->st.lists++ > 0)
			inf->st.relists++;
		inf->gen++;
		inf->list_rv[0] = '\0';
	}
	snprintf(limit, sizeof(limit), "%u", inf->o.page_limit);
	kerf_buf_init(&b, 64 << 10);
	rc = base_query(inf, &b);
	if (rc == 0)
		rc = kerf_kube_query_add(&b, "limit", limit);
	if (rc == 0 && cont)
		rc = kerf_kube_query_add(&b, "continue", cont);
	if (rc == 0) {
		req.path = kerf_buf_str(&b);
		rc = inf->ops.request(inf->ops.ctx, &req, on_list, inf,
				      &inf->req_id);
	}
	kerf_buf_release(&b);
	if (rc == 0)
		inf->state = INF_LISTING;
	return rc;
}

/* ---- watch ----------------------------------------------------------- */

static int apply_event(struct kerf_informer *inf, const struct kerf_kube_event *ev)
{
	switch (ev->type) {
	case KERF_KUBE_ERROR:
		if (kerf_kube_classify(ev->status.code ? ev->status.code : 500,
				       ev->status.reason) == KERF_KUBE_GONE) {
			inf->st.expired++;
			note_error(inf, "watch", ev->status.message, false);
		} else {
			inf->st.errors++;
			note_error(inf, "watch ERROR event", ev->status.message, false);
		}
		inf->relist = true;
		return 1;
	case KERF_KUBE_BOOKMARK:
		inf->st.bookmarks++;
		break;
	case KERF_KUBE_DELETED:
		if (ev->name)
			inf_store_delete(&inf->store, &inf->h, &inf->st,
					 ev->name, ev->namespace_name);
		else
			inf->st.no_name++;
		break;
	case KERF_KUBE_ADDED:
	case KERF_KUBE_MODIFIED:
		if (!ev->name) {
			inf->st.no_name++;
			break;
		}
		if (inf_store_apply(&inf->store, &inf->h, &inf->st, ev->object,
				    ev->name, ev->namespace_name,
				    ev->resource_version, inf->gen) < 0) {
			note_error(inf, "watch", "out of memory", true);
			inf->relist = true;
			return 1;
		}
		break;
	}
	if (strlen(ev->resource_version) < sizeof(inf->rv))
		snprintf(inf->rv, sizeof(inf->rv), "%s", ev->resource_version);
	return 0;
}

int kerf_informer_apply_line(struct kerf_informer *inf, const char *line,
			     size_t len)
{
	struct kerf_kube_event ev;
	struct kerf_err err = { 0 };
	int rc;

	inf->st.events++;
	if (kerf_kube_event_decode(&ev, line, len, &err) < 0) {
		inf->st.malformed++;
		note_error(inf, "watch", err.msg, true);
		inf->relist = true;
		inf->malformed_seen = true;
		return 1;
	}
	rc = apply_event(inf, &ev);
	kerf_kube_event_release(&ev);
	return rc;
}

static int on_watch_line(void *arg, const char *line, size_t len)
{
	struct kerf_informer *inf = arg;
	int rc = kerf_informer_apply_line(inf, line, len);

	if (rc == 0)
		inf->failures = 0;
	return rc;
}

static void on_watch_done(void *arg, const struct kerf_kube_response *resp)
{
	struct kerf_informer *inf = arg;
	bool relist = inf->relist, malformed = inf->malformed_seen;

	inf->req_id = 0;
	inf->relist = false;
	inf->malformed_seen = false;
	if (resp->class == KERF_KUBE_GONE) {
		inf->st.expired++;
		note_error(inf, "watch", resp->msg, true);
		relist = true;
	}
	if (relist) {
		/* malformed input gets a pause; an expired rv does not */
		if (malformed) {
			inf->failures++;
			pause_then(inf, INF_DO_LIST, -1);
		} else if (start_list(inf, NULL) < 0) {
			list_failed(inf, -1);
		}
		return;
	}
	if (resp->class == KERF_KUBE_OK && resp->err == 0) {
		/* the server ended it (timeoutSeconds): go on at once */
		if (start_watch(inf) < 0) {
			inf->failures++;
			pause_then(inf, INF_DO_WATCH, -1);
		}
		return;
	}
	inf->st.errors++;
	inf->failures++;
	note_error(inf, "watch", resp->msg, true);
	pause_then(inf, inf->failures >= INF_FAILURES_BEFORE_RELIST ?
		   INF_DO_LIST : INF_DO_WATCH,
		   resp->retry_after_s >= 0 ? resp->retry_after_s :
		   resp->status.retry_after_s);
}

static int start_watch(struct kerf_informer *inf)
{
	struct kerf_buf b;
	struct kerf_kube_request req = { .method = "GET" };
	uint32_t span = inf->o.watch_max_s - inf->o.watch_min_s;
	uint32_t timeout_s = inf->o.watch_min_s +
			     (uint32_t)kerf_rng_below(inf->o.rng, (uint64_t)span + 1);
	char num[24];
	int rc;

	kerf_buf_init(&b, 64 << 10);
	rc = base_query(inf, &b);
	if (rc == 0)
		rc = kerf_kube_query_add(&b, "watch", "1");
	if (rc == 0)
		rc = kerf_kube_query_add(&b, "allowWatchBookmarks", "true");
	if (rc == 0)
		rc = kerf_kube_query_add(&b, "resourceVersion", inf->rv);
	snprintf(num, sizeof(num), "%u", timeout_s);
	if (rc == 0)
		rc = kerf_kube_query_add(&b, "timeoutSeconds", num);
	if (rc == 0) {
		req.path = kerf_buf_str(&b);
		/* the server ends it at timeout_s; past a minute more it is dead */
		req.timeout_ms = (timeout_s + 60) * 1000;
		rc = inf->ops.watch(inf->ops.ctx, &req, on_watch_line,
				    on_watch_done, inf, &inf->req_id);
	}
	kerf_buf_release(&b);
	if (rc < 0)
		return rc;
	if (inf->st.watches++ > 0)
		inf->st.watch_restarts++;
	inf->state = INF_WATCHING;
	return 0;
}

/* ---- driving --------------------------------------------------------- */

int kerf_informer_start(struct kerf_informer *inf)
{
	if (inf->state != INF_IDLE)
		return -KERF_EBUSY;
	return start_list(inf, NULL);
}

uint64_t kerf_informer_tick(struct kerf_informer *inf)
{
	uint64_t now = inf->ops.now_ms(inf->ops.ctx);
	int rc;

	if (inf->state != INF_PAUSED)
		return UINT64_MAX;
	if (now < inf->due_ms)
		return inf->due_ms - now;
	rc = inf->next_action == INF_DO_LIST ? start_list(inf, NULL) :
					       start_watch(inf);
	if (rc < 0) {
		inf->failures++;
		pause_then(inf, inf->next_action, -1);
		return inf->due_ms - now;
	}
	return UINT64_MAX;
}

bool kerf_informer_has_synced(const struct kerf_informer *inf)
{
	return inf->synced;
}

bool kerf_informers_synced(struct kerf_informer *const *infs, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (!infs[i] || !infs[i]->synced)
			return false;
	return true;
}

void *kerf_informer_get(const struct kerf_informer *inf, const char *key)
{
	struct inf_entry *e = kerf_map_get_str(&inf->store.map, key);

	return e ? e->obj : NULL;
}

size_t kerf_informer_size(const struct kerf_informer *inf)
{
	return inf->store.nr_entries;
}

void *kerf_informer_at(const struct kerf_informer *inf, size_t i,
		       const char **key)
{
	if (i >= inf->store.nr_entries)
		return NULL;
	if (key)
		*key = inf->store.entries[i]->key;
	return inf->store.entries[i]->obj;
}

const char *kerf_informer_resource_version(const struct kerf_informer *inf)
{
	return inf->rv;
}

const struct kerf_informer_stats *
kerf_informer_stats(const struct kerf_informer *inf)
{
	return &inf->st;
}
