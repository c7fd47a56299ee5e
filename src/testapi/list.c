/*
 * list: collection GETs and DELETEs with kube-apiserver's rules for
 * resourceVersion (unset: current; "0": current, limit ignored; N with
 * Exact, or with a limit: the state at N, 410 once N left the window; a
 * future N: wait, then 504), and paging: an opaque continue token, base64
 * of {"v":"meta.k8s.io/v1","rv":N,"start":"/key\u0000"}, every page at
 * the rv of page 1, remainingItemCount, no continue key on the last page,
 * and an expired token answered 410 with a fresh token (rv -1) that goes
 * on inconsistently at the current rv.
 */
#include "testapi/testapi_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "base/parse.h"

/* start gets a NUL appended: the next key after it, as etcd pages. */
int kerf_ta_token_encode(int64_t rv, const char *start, char *out,
			 size_t size)
{
	json_t *t = json_pack("{sssI}", "v", "meta.k8s.io/v1", "rv",
			      (json_int_t)rv);
	char *s;
	int rc = -1;

	if (!t)
		return -1;
	json_object_set_new(t, "start", json_stringn(start, strlen(start) + 1));
	s = json_dumps(t, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(t);
	if (s)
		rc = kerf_ta_b64_encode(s, strlen(s), out, size);
	free(s);
	return rc;
}

int kerf_ta_token_decode(const char *tok, int64_t *rv, char *start,
			 size_t size)
{
	char raw[1024];
	size_t len;
	json_t *t;
	const char *s;

	if (kerf_ta_b64_decode(tok, raw, sizeof(raw), &len) < 0)
		return -1;
	t = json_loadb(raw, len, JSON_ALLOW_NUL, NULL);
	s = json_string_value(json_object_get(t, "start"));
	if (!t || !json_is_integer(json_object_get(t, "rv")) || !s ||
	    strcmp(json_string_value(json_object_get(t, "v")) ?
			   json_string_value(json_object_get(t, "v")) : "",
		   "meta.k8s.io/v1")) {
		json_decref(t);
		return -1;
	}
	*rv = json_integer_value(json_object_get(t, "rv"));
	if (*s == '/')
		s++;
	snprintf(start, size, "%s", s);
	json_decref(t);
	return 0;
}

static int parse_rv(const char *s, uint64_t *out)
{
	return s && *s ? kerf_parse_u64(s, out) : -1;
}

/* Wait (lock held) for the store to reach rv; false on timeout. */
static bool wait_rv(struct kerf_ta_ctx *c, uint64_t rv)
{
	struct timespec ts;
	uint32_t ms = c->ta->opts.too_large_rv_wait_ms;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	while (c->st->rv < rv && !c->st->stopping)
		if (pthread_cond_timedwait(&c->st->cond, &c->st->lock, &ts) ==
		    ETIMEDOUT)
			break;
	return c->st->rv >= rv;
}

static void too_large(struct kerf_ta_ctx *c, const char *rv)
{
	json_t *d = json_pack("{s[{ssss}]si}", "causes", "reason",
			      "ResourceVersionTooLarge", "message",
			      "Too large resource version",
			      "retryAfterSeconds", 1);

	kerf_ta_statusf(c->rs, 504, "Timeout", d,
			"Timeout: Too large resource version: %s, current: %llu",
			rv, (unsigned long long)c->st->rv);
	c->rs->retry_after_s = 1;
}

/* See testapi_int.h. */
int kerf_ta_rvmatch_invalid(struct kerf_ta_ctx *c, const char *msg)
{
	json_t *d = json_pack("{sssss[{ssssss}]}", "group", "meta.k8s.io",
			      "kind", "ListOptions", "causes", "reason",
			      "FieldValueForbidden", "message", msg, "field",
			      "resourceVersionMatch");

	return kerf_ta_statusf(c->rs, 422, "Invalid", d,
			       "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: %s",
			       msg);
}

struct list_plan {
	json_t *snap;              /* {"keys", "objs"} */
	uint64_t rv;
	char start[512];           /* first key allowed is > this; "" */
	size_t limit;
	struct kerf_ta_sel *sel;
	bool has_sel;
};

/* Which objects a list shows: 0, or -1 with rs set. */
static int plan(struct kerf_ta_ctx *c, struct list_plan *p)
{
	struct kerf_ta_req *rq = c->rq;
	const struct kerf_ta_kind *k = c->k;
	const char *rvs = kerf_ta_param(rq, "resourceVersion");
	const char *rvm = kerf_ta_param(rq, "resourceVersionMatch");
	const char *cont = kerf_ta_param(rq, "continue");
	const char *lim = kerf_ta_param(rq, "limit");
	const char *ls = kerf_ta_param(rq, "labelSelector");
	const char *fs = kerf_ta_param(rq, "fieldSelector");
	uint64_t rv = 0, limit = 0;
	char msg[512];

	memset(p, 0, sizeof(*p));
	if (rvm && *rvm && (!rvs || !*rvs))
		return kerf_ta_rvmatch_invalid(c, "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided");
	if (rvm && *rvm && strcmp(rvm, "Exact") && strcmp(rvm, "NotOlderThan"))
		return kerf_ta_rvmatch_invalid(c, "Unsupported value");
	if (lim && *lim && kerf_parse_u64(lim, &limit) < 0)
		return kerf_ta_statusf(c->rs, 400, "BadRequest", NULL,
				       "invalid limit: %s", lim);
	if ((ls && *ls) || (fs && *fs)) {
		if (kerf_ta_sel_parse(ls && *ls ? ls : NULL,
				      fs && *fs ? fs : NULL, k, &p->sel, msg,
				      sizeof(msg)) < 0)
			return kerf_ta_status(c->rs, 400, "BadRequest", msg,
					      NULL);
		p->has_sel = true;
	}
	p->rv = c->st->rv;
	if (cont && *cont) {
		int64_t trv;

		if (kerf_ta_token_decode(cont, &trv, p->start,
					 sizeof(p->start)) < 0)
			return kerf_ta_statusf(c->rs, 400, "BadRequest", NULL,
					       "continue key is not valid: %s",
					       "malformed token");
		if (trv >= 0 && (uint64_t)trv < k->res->window_rv) {
			char tok[1024];
			json_t *s;

			kerf_ta_token_encode(-1, p->start, tok, sizeof(tok));
			/* the fresh token carries the key with its NUL */
			s = json_pack("{sssssssssssi}", "kind", "Status",
				      "apiVersion", "v1", "status", "Failure",
				      "message",
				      "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
				      "reason", "Expired", "code", 410);
			json_object_set_new(s, "metadata",
					    json_pack("{ss}", "continue", tok));
			kerf_ta_send_json(c->rs, 410, s, false);
			return -1;
		}
		if (trv >= 0)
			p->rv = (uint64_t)trv;
	} else if (rvs && *rvs && strcmp(rvs, "0")) {
		bool exact = (rvm && !strcmp(rvm, "Exact")) ||
			     ((!rvm || !*rvm) && limit);

		if (parse_rv(rvs, &rv) < 0)
			return kerf_ta_statusf(c->rs, 400, "BadRequest", NULL,
					       "invalid resource version: %s",
					       rvs);
		if (rv > c->st->rv && !wait_rv(c, rv)) {
			too_large(c, rvs);
			return -1;
		}
		if (exact) {
			if (rv < k->res->window_rv)
				return kerf_ta_status(c->rs, 410, "Expired",
						      "The resourceVersion for the provided list is too old.",
						      NULL);
			p->rv = rv;
		}
	}
	if (rvs && !strcmp(rvs, "0"))
		limit = 0;
	p->limit = (size_t)limit;
	p->snap = kerf_ta_res_snapshot(k->res, p->rv);
	if (!p->snap)
		return kerf_ta_status(c->rs, 500, "InternalError",
				      "out of memory", NULL);
	return 0;
}

static bool in_scope(const struct kerf_ta_req *rq, const char *key)
{
	size_t n;

	if (!rq->ns)
		return true;
	n = strlen(rq->ns);
	return !strncmp(key, rq->ns, n) && key[n] == '/';
}

/* The key relative to the list's prefix, as a token's start holds it. */
static const char *rel_key(const struct kerf_ta_req *rq, const char *key)
{
	return rq->ns ? key + strlen(rq->ns) + 1 : key;
}

static json_t *list_object(const struct kerf_ta_kind *k)
{
	char api[160];

	snprintf(api, sizeof(api), "%s%s%s", k->group, *k->group ? "/" : "",
		 k->version);
	return json_pack("{sssss{}s[]}", "kind", k->list_kind, "apiVersion",
			 api, "metadata", "items");
}

void kerf_ta_list(struct kerf_ta_ctx *c)
{
	const struct kerf_ta_kind *k = c->k;
	struct list_plan p;
	json_t *list, *items, *keys, *objs, *md, *key;
	size_t i, n = 0, remaining = 0;
	const char *last = NULL;
	char rvbuf[24];

	if (plan(c, &p) < 0)
		goto out;
	list = list_object(k);
	items = json_object_get(list, "items");
	md = json_object_get(list, "metadata");
	keys = json_object_get(p.snap, "keys");
	objs = json_object_get(p.snap, "objs");
	json_array_foreach(keys, i, key) {
		const char *ks = json_string_value(key);
		const json_t *o = json_object_get(objs, ks);
		json_t *v;

		if (!in_scope(c->rq, ks) || !kerf_ta_sel_match(p.sel, o))
			continue;
		if (*p.start && strcmp(rel_key(c->rq, ks), p.start) <= 0)
			continue;
		if (p.limit && n == p.limit) {
			remaining++;
			continue;
		}
		v = kerf_ta_out(k, o);
		if (!(k->flags & KERF_TA_CUSTOM)) {
			json_object_del(v, "kind");
			json_object_del(v, "apiVersion");
		}
		json_array_append_new(items, v);
		last = ks;
		n++;
	}
	snprintf(rvbuf, sizeof(rvbuf), "%llu", (unsigned long long)p.rv);
	json_object_set_new(md, "resourceVersion", json_string(rvbuf));
	if (remaining && last) {
		char start[600], tok[1024];

		snprintf(start, sizeof(start), "/%s", rel_key(c->rq, last));
		if (kerf_ta_token_encode((int64_t)p.rv, start, tok,
					 sizeof(tok)) < 0)
			tok[0] = 0;
		json_object_set_new(md, "continue", json_string(tok));
		if (!p.has_sel)
			json_object_set_new(md, "remainingItemCount",
					    json_integer((json_int_t)remaining));
	} else if (k->flags & KERF_TA_CUSTOM) {
		json_object_set_new(md, "continue", json_string(""));
	}
	kerf_ta_send_json(c->rs, 200, list, k->flags & KERF_TA_CUSTOM);
out:
	json_decref(p.snap);
	kerf_ta_sel_free(p.sel);
}

void kerf_ta_delete_collection(struct kerf_ta_ctx *c)
{
	const struct kerf_ta_kind *k = c->k;
	const char *ls = kerf_ta_param(c->rq, "labelSelector");
	const char *fs = kerf_ta_param(c->rq, "fieldSelector");
	struct kerf_ta_sel *sel = NULL;
	json_t *list, *items, *keys, *objs, *key, *snap;
	char msg[512], rvbuf[24];
	size_t i;

	if (((ls && *ls) || (fs && *fs)) &&
	    kerf_ta_sel_parse(ls && *ls ? ls : NULL, fs && *fs ? fs : NULL,
			      k, &sel, msg, sizeof(msg)) < 0) {
		kerf_ta_status(c->rs, 400, "BadRequest", msg, NULL);
		return;
	}
	snap = kerf_ta_res_snapshot(k->res, c->st->rv);
	list = list_object(k);
	items = json_object_get(list, "items");
	keys = json_object_get(snap, "keys");
	objs = json_object_get(snap, "objs");
	json_array_foreach(keys, i, key) {
		const char *ks = json_string_value(key);
		struct kerf_ta_obj *o = kerf_map_get_str(&k->res->objs, ks);
		json_t *shown = NULL;

		if (!o || !in_scope(c->rq, ks) ||
		    !kerf_ta_sel_match(sel, json_object_get(objs, ks)))
			continue;
		if (kerf_ta_delete_obj(c, o, NULL, &shown) < 0)
			break;
		if (shown) {
			/* gone at once: shown as it was; else as it is now */
			json_t *v = kerf_ta_out(k,
				kerf_map_get_str(&k->res->objs, ks) ? shown :
				json_object_get(objs, ks));

			if (!(k->flags & KERF_TA_CUSTOM)) {
				json_object_del(v, "kind");
				json_object_del(v, "apiVersion");
			}
			json_array_append_new(items, v);
		}
		json_decref(shown);
	}
	snprintf(rvbuf, sizeof(rvbuf), "%llu", (unsigned long long)c->st->rv);
	json_object_set_new(json_object_get(list, "metadata"),
			    "resourceVersion", json_string(rvbuf));
	if (c->rs->status < 400)
		kerf_ta_send_json(c->rs, 200, list, k->flags & KERF_TA_CUSTOM);
	else
		json_decref(list);
	json_decref(snap);
	kerf_ta_sel_free(sel);
}
