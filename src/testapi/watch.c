/*
 * watch: ?watch=1 streams, as kube-apiserver's watch cache serves them:
 * HTTP 200 at once with Content-Type application/json, one
 * {"type","object"} per line and per chunk; without resourceVersion or
 * with "0" (or with sendInitialEvents) synthetic ADDED events for the
 * current objects first; from an rv older than the window a single ERROR
 * event carrying a 410 Expired Status, then the end; bookmarks only with
 * allowWatchBookmarks, every bookmark interval and once more 2 s before
 * timeoutSeconds (Go's cacheWatcher.nextBookmarkTime), then a clean end
 * at the timeout.  An object that stops (starts) matching the selectors
 * is sent as DELETED (ADDED).
 */
#include "testapi/testapi_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include <microhttpd.h>

#include "base/buf.h"
#include "base/parse.h"

enum { DEFAULT_TIMEOUT_S = 1800 };

struct kerf_ta_watch {
	struct kerf_testapi *ta;
	struct kerf_ta_res *res;
	const struct kerf_ta_hooks *hooks;
	bool custom;
	char *kind;
	char *api;
	char *ns;                  /* NULL: all namespaces */
	struct kerf_ta_sel *sel;
	uint64_t pos;              /* events up to here are sent */
	json_t *initial;           /* objects to send as ADDED first */
	size_t initial_i;
	bool init_end;             /* then the initial-events-end bookmark */
	uint64_t init_rv;
	bool bookmarks;
	bool has_bookmark;
	struct timespec deadline;
	struct timespec next_bookmark;
	struct kerf_buf out;
	size_t out_off;
	bool done;
	bool end_after_out;
	uint32_t interval_ms;
};

static void ts_add_ms(struct timespec *t, int64_t ms)
{
	t->tv_sec += (time_t)(ms / 1000);
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	while (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
	while (t->tv_nsec < 0) {
		t->tv_sec--;
		t->tv_nsec += 1000000000L;
	}
}

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Go's nextBookmarkTime: an interval on, or 2 s before the deadline. */
static void next_bookmark(struct kerf_ta_watch *w)
{
	struct timespec now, next, pre;

	clock_gettime(CLOCK_REALTIME, &now);
	next = now;
	ts_add_ms(&next, w->interval_ms);
	pre = w->deadline;
	ts_add_ms(&pre, -2000);
	if (ts_before(&pre, &next))
		next = pre;
	w->has_bookmark = w->bookmarks && !ts_before(&next, &now);
	w->next_bookmark = next;
}

static int emit(struct kerf_ta_watch *w, const char *type, const json_t *obj)
{
	char *s = kerf_ta_dump(obj, w->custom, NULL);
	int rc;

	if (!s)
		return -1;
	rc = kerf_buf_addf(&w->out, "{\"type\":\"%s\",\"object\":%s}\n", type,
			   s);
	free(s);
	return rc;
}

static int emit_obj(struct kerf_ta_watch *w, const char *type,
		    const json_t *stored)
{
	json_t *v = w->hooks && w->hooks->view ? w->hooks->view(stored) :
						json_incref((json_t *)stored);
	int rc;

	if (!v)
		return -1;
	rc = emit(w, type, v);
	json_decref(v);
	return rc;
}

static int emit_bookmark(struct kerf_ta_watch *w, uint64_t rv, bool end)
{
	char rvs[24];
	json_t *b, *md;
	int rc;

	snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)rv);
	b = json_pack("{ssss}", "kind", w->kind, "apiVersion", w->api);
	md = json_pack("{ss}", "resourceVersion", rvs);
	if (!b || !md) {
		json_decref(b);
		json_decref(md);
		return -1;
	}
	if (end)
		json_object_set_new(md, "annotations",
				    json_pack("{ss}", "k8s.io/initial-events-end",
					      "true"));
	json_object_set_new(b, "metadata", md);
	if (!strcmp(w->kind, "Pod") && !strcmp(w->api, "v1")) {
		json_object_set_new(b, "spec", json_pack("{sn}", "containers"));
		json_object_set_new(b, "status", json_object());
	}
	rc = emit(w, "BOOKMARK", b);
	json_decref(b);
	return rc;
}

static int emit_expired(struct kerf_ta_watch *w, uint64_t from,
			uint64_t oldest)
{
	char msg[128];
	json_t *s;
	int rc;

	snprintf(msg, sizeof(msg), "too old resource version: %llu (%llu)",
		 (unsigned long long)from, (unsigned long long)oldest);
	s = json_pack("{sssss{}sssssssi}", "kind", "Status", "apiVersion",
		      "v1", "metadata", "status", "Failure", "message", msg,
		      "reason", "Expired", "code", 410);
	rc = s ? emit(w, "ERROR", s) : -1;
	json_decref(s);
	w->end_after_out = true;
	return rc;
}

static bool in_scope(const struct kerf_ta_watch *w, const char *key)
{
	size_t n;

	if (!w->ns)
		return true;
	n = strlen(w->ns);
	return !strncmp(key, w->ns, n) && key[n] == '/';
}

static bool matches(const struct kerf_ta_watch *w, const json_t *obj)
{
	return obj && kerf_ta_sel_match(w->sel, obj);
}

/* The next event after pos into out; false when there is none yet. */
static bool next_event(struct kerf_ta_watch *w)
{
	struct kerf_ta_res *r = w->res;
	size_t i;

	if (w->pos < r->window_rv) {
		emit_expired(w, w->pos, r->window_rv);
		return true;
	}
	for (i = 0; i < r->ring_nr; i++) {
		const struct kerf_ta_event *e =
			&r->ring[(r->ring_head + i) % r->ring_cap];
		bool now_in, was_in;

		if (e->rv <= w->pos)
			continue;
		w->pos = e->rv;
		if (!in_scope(w, e->key))
			continue;
		now_in = matches(w, e->obj);
		was_in = matches(w, e->prev);
		switch (e->type) {
		case KERF_TA_ADDED:
			if (now_in)
				emit_obj(w, "ADDED", e->obj);
			break;
		case KERF_TA_MODIFIED:
			if (now_in && was_in)
				emit_obj(w, "MODIFIED", e->obj);
			else if (now_in)
				emit_obj(w, "ADDED", e->obj);
			else if (was_in)
				emit_obj(w, "DELETED", e->obj);
			break;
		case KERF_TA_DELETED:
			if (was_in)
				emit_obj(w, "DELETED", e->obj);
			break;
		}
		if (w->out.len)
			return true;
	}
	return false;
}

/* Fill w->out under the lock, waiting as long as nothing is due. */
static void produce(struct kerf_ta_watch *w)
{
	struct kerf_testapi_store *st = &w->ta->st;

	pthread_mutex_lock(&st->lock);
	for (;;) {
		struct timespec now, wake;

		if (st->stopping) {
			w->done = true;
			break;
		}
		if (w->initial && w->initial_i < json_array_size(w->initial)) {
			emit_obj(w, "ADDED",
				 json_array_get(w->initial, w->initial_i++));
			break;
		}
		if (w->init_end) {
			w->init_end = false;
			emit_bookmark(w, w->init_rv, true);
			break;
		}
		if (next_event(w))
			break;
		clock_gettime(CLOCK_REALTIME, &now);
		if (!ts_before(&now, &w->deadline)) {
			w->done = true;
			break;
		}
		if (w->has_bookmark && !ts_before(&now, &w->next_bookmark)) {
			if (st->rv > w->pos)
				w->pos = st->rv;
			emit_bookmark(w, st->rv, false);
			next_bookmark(w);
			break;
		}
		wake = w->deadline;
		if (w->has_bookmark && ts_before(&w->next_bookmark, &wake))
			wake = w->next_bookmark;
		pthread_cond_timedwait(&st->cond, &st->lock, &wake);
	}
	pthread_mutex_unlock(&st->lock);
}

ssize_t kerf_ta_watch_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct kerf_ta_watch *w = cls;
	size_t n;

	(void)pos;
	for (;;) {
		if (w->out_off < w->out.len) {
			n = w->out.len - w->out_off;
			if (n > max)
				n = max;
			memcpy(buf, w->out.data + w->out_off, n);
			w->out_off += n;
			if (w->out_off == w->out.len) {
				kerf_buf_reset(&w->out);
				w->out_off = 0;
				if (w->end_after_out)
					w->done = true;
			}
			return (ssize_t)n;
		}
		if (w->done)
			return MHD_CONTENT_READER_END_OF_STREAM;
		produce(w);
	}
}

void kerf_ta_watch_free(void *cls)
{
	struct kerf_ta_watch *w = cls;

	if (!w)
		return;
	kerf_buf_release(&w->out);
	json_decref(w->initial);
	kerf_ta_sel_free(w->sel);
	free(w->kind);
	free(w->api);
	free(w->ns);
	free(w);
}

static bool is_true(const char *v)
{
	return v && (!strcmp(v, "true") || !strcmp(v, "1"));
}

/* The current objects in scope, sorted by key, as an array. */
static json_t *initial_objects(struct kerf_ta_watch *w)
{
	json_t *snap = kerf_ta_res_snapshot(w->res, UINT64_MAX);
	json_t *arr = json_array(), *key;
	size_t i;

	if (!snap || !arr) {
		json_decref(snap);
		json_decref(arr);
		return NULL;
	}
	json_array_foreach(json_object_get(snap, "keys"), i, key) {
		const char *k = json_string_value(key);
		json_t *o = json_object_get(json_object_get(snap, "objs"), k);

		if (in_scope(w, k) && matches(w, o))
			json_array_append(arr, o);
	}
	json_decref(snap);
	return arr;
}

void kerf_ta_watch_start(struct kerf_ta_ctx *c)
{
	struct kerf_ta_req *rq = c->rq;
	const struct kerf_ta_kind *k = c->k;
	const char *rvs = kerf_ta_param(rq, "resourceVersion");
	const char *rvm = kerf_ta_param(rq, "resourceVersionMatch");
	const char *sie = kerf_ta_param(rq, "sendInitialEvents");
	const char *ls = kerf_ta_param(rq, "labelSelector");
	const char *fs = kerf_ta_param(rq, "fieldSelector");
	const char *ts = kerf_ta_param(rq, "timeoutSeconds");
	struct kerf_ta_watch *w;
	uint64_t timeout_s = DEFAULT_TIMEOUT_S, rv = 0;
	char msg[512], api[160];
	bool initial = !rvs || !*rvs || !strcmp(rvs, "0");

	if (is_true(sie) && (!rvm || strcmp(rvm, "NotOlderThan"))) {
		kerf_ta_rvmatch_invalid(c, "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan");
		return;
	}
	if (!sie && rvm && *rvm) {
		kerf_ta_rvmatch_invalid(c, "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided");
		return;
	}
	if (ts && *ts && kerf_parse_u64(ts, &timeout_s) < 0) {
		kerf_ta_statusf(c->rs, 400, "BadRequest", NULL,
				"invalid timeoutSeconds: %s", ts);
		return;
	}
	if (!initial && kerf_parse_u64(rvs, &rv) < 0) {
		kerf_ta_statusf(c->rs, 400, "BadRequest", NULL,
				"invalid resource version: %s", rvs);
		return;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		kerf_ta_status(c->rs, 500, "InternalError", "out of memory",
			       NULL);
		return;
	}
	kerf_buf_init(&w->out, 0);
	w->ta = c->ta;
	w->res = k->res;
	w->hooks = k->hooks;
	w->custom = k->flags & KERF_TA_CUSTOM;
	snprintf(api, sizeof(api), "%s%s%s", k->group, *k->group ? "/" : "",
		 k->version);
	w->kind = kerf_strdup(k->kind);
	w->api = kerf_strdup(api);
	w->ns = rq->ns ? kerf_strdup(rq->ns) : NULL;
	if (((ls && *ls) || (fs && *fs)) &&
	    kerf_ta_sel_parse(ls && *ls ? ls : NULL, fs && *fs ? fs : NULL,
			      k, &w->sel, msg, sizeof(msg)) < 0) {
		kerf_ta_status(c->rs, 400, "BadRequest", msg, NULL);
		kerf_ta_watch_free(w);
		return;
	}
	w->bookmarks = is_true(kerf_ta_param(rq, "allowWatchBookmarks"));
	w->interval_ms = c->ta->opts.bookmark_interval_ms;
	clock_gettime(CLOCK_REALTIME, &w->deadline);
	ts_add_ms(&w->deadline, (int64_t)(timeout_s > 100000000 ?
					  100000000 : timeout_s) * 1000);
	next_bookmark(w);
	if (is_true(sie) || (initial && !(sie && !is_true(sie)))) {
		w->initial = initial_objects(w);
		w->pos = c->st->rv;
		w->init_rv = c->st->rv;
		w->init_end = is_true(sie) && w->bookmarks;
	} else {
		w->pos = rv;
	}
	c->rs->status = 200;
	c->rs->ctype = "application/json";
	c->rs->watch = w;
}
