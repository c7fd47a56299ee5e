/*
 * testapi_replay: see testapi_replay.h.  What is compared: the status code
 * exactly; Content-Type, Retry-After and Warning headers where recorded;
 * Status bodies field by field (message with the recorded run's names,
 * rvs and uids replaced by this run's); objects after normalising what
 * differs between runs by nature (uid, resourceVersion, creationTimestamp,
 * managedFields, every timestamp, generated names), every other key and
 * value exactly; watch streams as their sequence of event types and
 * object names (bookmarks: kind, containers null, the initial-events-end
 * annotation).
 */
#include "testapi_replay.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

static const char *const TOKEN = "golden-token";

struct hdrs {
	char ctype[128];
	char retry_after[16];
	json_t *warnings;
};

struct sink {
	char *data;
	size_t len;
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t len = size * n;
	char *d = realloc(s->data, s->len + len + 1);

	if (!d)
		return 0;
	memcpy(d + s->len, p, len);
	s->data = d;
	s->len += len;
	d[s->len] = 0;
	return len;
}

static void trim_copy(char *out, size_t size, const char *v, size_t n)
{
	while (n && (v[n - 1] == '\r' || v[n - 1] == '\n'))
		n--;
	while (n && *v == ' ') {
		v++;
		n--;
	}
	snprintf(out, size, "%.*s", (int)n, v);
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	struct hdrs *h = arg;
	size_t len = size * n;
	char val[1024];

	if (!strncasecmp(p, "Content-Type:", 13))
		trim_copy(h->ctype, sizeof(h->ctype), p + 13, len - 13);
	else if (!strncasecmp(p, "Retry-After:", 12))
		trim_copy(h->retry_after, sizeof(h->retry_after), p + 12,
			  len - 12);
	else if (!strncasecmp(p, "Warning:", 8)) {
		trim_copy(val, sizeof(val), p + 8, len - 8);
		json_array_append_new(h->warnings, json_string(val));
	}
	return len;
}

static long do_send(struct replay *r, const char *method, const char *path,
		    const char *ctype, const char *accept, const char *body,
		    unsigned flags, struct hdrs *h, struct sink *s)
{
	CURL *c = curl_easy_init();
	struct curl_slist *hl = NULL;
	char url[4096], line[512];
	long code = 0;

	snprintf(url, sizeof(url), "%s%s", kerf_testapi_url(r->ta), path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	if (body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	if (ctype) {
		snprintf(line, sizeof(line), "Content-Type: %s", ctype);
		hl = curl_slist_append(hl, line);
	}
	snprintf(line, sizeof(line), "Accept: %s", accept ? accept : "application/json");
	hl = curl_slist_append(hl, line);
	hl = curl_slist_append(hl, "User-Agent: kerf/0.1 (linux/amd64) fixtures");
	if (!(flags & RP_NO_TOKEN)) {
		snprintf(line, sizeof(line), "Authorization: Bearer %s",
			 flags & RP_BAD_TOKEN ? "wrong" : TOKEN);
		hl = curl_slist_append(hl, line);
	}
	hl = curl_slist_append(hl, "Expect:");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_slist_free_all(hl);
	curl_easy_cleanup(c);
	return code;
}

bool replay_begin(struct replay *r, const char *folder, uint32_t window)
{
	static char dir[4096];
	const char *root = getenv("KERF_SOURCE_ROOT");
	struct kerf_testapi_opts o = {
		.token = TOKEN,
		.watch_window = window,
		.bookmark_interval_ms = 1000,
		.too_large_rv_wait_ms = 200,
	};
	struct kerf_err err = { 0 };
	FILE *f;
	char probe[4200];

	memset(r, 0, sizeof(*r));
	snprintf(dir, sizeof(dir), "%s/../shared/fixtures/k8s/real-1.34.9/%s",
		 root ? root : ".", folder);
	snprintf(probe, sizeof(probe), "%s/../README.md", dir);
	f = fopen(probe, "r");
	if (!f)
		return false;
	fclose(f);
	r->dir = dir;
	r->map = json_object();
	r->token = TOKEN;
	if (kerf_testapi_start(&o, &r->ta, &err) < 0) {
		fprintf(stderr, "cannot start: %s\n", err.msg);
		return false;
	}
	return true;
}

void replay_end(struct replay *r)
{
	kerf_testapi_stop(r->ta);
	json_decref(r->map);
	printf("# %s: %d replayed, %d failed\n", r->dir, r->nr_replayed,
	       r->nr_failed);
}

void replay_map(struct replay *r, const char *recorded, const char *live)
{
	if (recorded && live && *recorded && strcmp(recorded, live))
		json_object_set_new(r->map, recorded, json_string(live));
}

/* Tokens of a path (between / ? & =) replaced through the map. */
static void subst_path(struct replay *r, const char *in, char *out,
		       size_t size)
{
	size_t o = 0;

	while (*in && o + 1 < size) {
		size_t n = strcspn(in, "/?&=");
		char tok[2048];
		const char *m;

		snprintf(tok, sizeof(tok), "%.*s", (int)n, in);
		m = json_string_value(json_object_get(r->map, tok));
		o += (size_t)snprintf(out + o, size - o, "%s", m ? m : tok);
		in += n;
		if (*in && o + 1 < size) {
			out[o++] = *in++;
			out[o] = 0;
		}
	}
	out[o < size ? o : size - 1] = 0;
}

static json_t *subst_json(struct replay *r, const json_t *j)
{
	json_t *out, *v;
	const char *k;
	size_t i;

	if (json_is_string(j)) {
		const char *m = json_string_value(json_object_get(r->map,
						json_string_value(j)));

		return m ? json_string(m) : json_deep_copy(j);
	}
	if (json_is_object(j)) {
		out = json_object();
		json_object_foreach((json_t *)j, k, v)
			json_object_set_new(out, k, subst_json(r, v));
		return out;
	}
	if (json_is_array(j)) {
		out = json_array();
		json_array_foreach(j, i, v)
			json_array_append_new(out, subst_json(r, v));
		return out;
	}
	return json_deep_copy(j);
}

/* Substrings of s that are recorded values (4+ chars) replaced. */
static char *subst_text(struct replay *r, const char *s)
{
	char *cur = strdup(s);
	const char *k;
	json_t *v;

	json_object_foreach(r->map, k, v) {
		const char *to = json_string_value(v);
		char *p;

		if (strlen(k) < 3)
			continue;
		while ((p = strstr(cur, k))) {
			size_t a = (size_t)(p - cur), kl = strlen(k);
			size_t nl = strlen(cur) - kl + strlen(to) + 1;
			char *n = malloc(nl);

			snprintf(n, nl, "%.*s%s%s", (int)a, cur, to, p + kl);
			free(cur);
			cur = n;
		}
	}
	return cur;
}

static void learn(struct replay *r, const json_t *rec, const json_t *live)
{
	const json_t *ri, *li;
	size_t i, j;

	if (!json_is_object(rec) || !json_is_object(live))
		return;
	replay_map(r, json_string_value(json_object_get(json_object_get(rec, "metadata"), "resourceVersion")),
		   json_string_value(json_object_get(json_object_get(live, "metadata"), "resourceVersion")));
	replay_map(r, json_string_value(json_object_get(json_object_get(rec, "metadata"), "uid")),
		   json_string_value(json_object_get(json_object_get(live, "metadata"), "uid")));
	replay_map(r, json_string_value(json_object_get(json_object_get(rec, "metadata"), "continue")),
		   json_string_value(json_object_get(json_object_get(live, "metadata"), "continue")));
	json_array_foreach(json_object_get(rec, "items"), i, ri) {
		const char *n = json_string_value(json_object_get(json_object_get(ri, "metadata"), "name"));

		json_array_foreach(json_object_get(live, "items"), j, li) {
			const char *m = json_string_value(json_object_get(json_object_get(li, "metadata"), "name"));

			if (n && m && !strcmp(n, m))
				learn(r, ri, li);
		}
	}
}

static bool is_time(const char *s)
{
	static regex_t re;
	static bool ready;

	if (!ready) {
		regcomp(&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}",
			REG_EXTENDED | REG_NOSUB);
		ready = true;
	}
	return !regexec(&re, s, 0, NULL, 0);
}

static void norm(json_t *j, int depth)
{
	json_t *v, *md;
	const char *k;
	size_t i;

	if (json_is_object(j)) {
		md = json_object_get(j, "metadata");
		if (json_is_object(md) && depth <= 2) {
			json_object_del(md, "uid");
			json_object_del(md, "resourceVersion");
			json_object_del(md, "creationTimestamp");
			json_object_del(md, "managedFields");
			if (json_object_get(md, "continue") &&
			    json_string_length(json_object_get(md, "continue")))
				json_object_set_new(md, "continue", json_string("<set>"));
			if (json_object_get(md, "generateName"))
				json_object_set(md, "name", json_object_get(md, "generateName"));
		}
		json_object_foreach(j, k, v) {
			if (json_is_string(v) && is_time(json_string_value(v)))
				json_object_set_new(j, k, json_string("<time>"));
			else
				norm(v, depth + 1);
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) {
			if (json_is_string(v) && is_time(json_string_value(v)))
				json_array_set_new(j, i, json_string("<time>"));
			else
				norm(v, depth + 1);
		}
	}
}

static char *dump(const json_t *j)
{
	return json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

/* The first paths where want and got differ, for the log. */
static void diff(const char *path, const json_t *w, const json_t *g, int *n)
{
	char sub[1024];
	const char *k;
	json_t *v;
	size_t i;

	if (*n > 6 || json_equal(w, g))
		return;
	if (json_is_object(w) && json_is_object(g)) {
		json_object_foreach((json_t *)w, k, v) {
			snprintf(sub, sizeof(sub), "%s.%s", path, k);
			diff(sub, v, json_object_get(g, k), n);
		}
		json_object_foreach((json_t *)g, k, v)
			if (!json_object_get(w, k)) {
				snprintf(sub, sizeof(sub), "%s.%s", path, k);
				diff(sub, NULL, v, n);
			}
		return;
	}
	if (json_is_array(w) && json_is_array(g) &&
	    json_array_size(w) == json_array_size(g)) {
		json_array_foreach(w, i, v) {
			snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
			diff(sub, v, json_array_get(g, i), n);
		}
		return;
	}
	{
		char *a = w ? dump(w) : NULL, *b = g ? dump(g) : NULL;

		printf("#   at %s: want %.600s got %.600s\n", path,
		       a ? a : "(none)", b ? b : "(none)");
		free(a);
		free(b);
		(*n)++;
	}
}

static void fail(struct replay *r, const char *file, const char *what,
		 const json_t *want, const json_t *got)
{
	int n = 0;

	printf("# MISMATCH %s: %s\n", file, what);
	diff("", want, got, &n);
	r->nr_failed++;
}

static json_t *names_of(const json_t *list)
{
	json_t *out = json_array(), *it;
	size_t i;

	json_array_foreach(json_object_get(list, "items"), i, it)
		json_array_append(out, json_object_get(json_object_get(it, "metadata"), "name"));
	return out;
}

static int cause_cmp(const void *a, const void *b)
{
	char *x = dump(*(json_t *const *)a), *y = dump(*(json_t *const *)b);
	int c = strcmp(x, y);

	free(x);
	free(y);
	return c;
}

/* Causes in a fixed order: the real server's follows Go's map order. */
static void sort_causes(json_t *status)
{
	json_t *causes = json_object_get(json_object_get(status, "details"), "causes");
	json_t *arr[64], *sorted;
	size_t i, n = json_array_size(causes);

	if (n > 64)
		return;
	for (i = 0; i < n; i++)
		arr[i] = json_array_get(causes, i);
	qsort(arr, n, sizeof(*arr), cause_cmp);
	sorted = json_array();
	for (i = 0; i < n; i++)
		json_array_append(sorted, arr[i]);
	json_object_set_new(json_object_get(status, "details"), "causes", sorted);
}

static void compare_status(struct replay *r, const char *file,
			   const json_t *want, const json_t *got,
			   unsigned flags)
{
	json_t *w = json_deep_copy(want), *g = json_deep_copy(got);
	const char *m = json_string_value(json_object_get(w, "message"));

	if (m) {
		char *s = subst_text(r, m);

		json_object_set_new(w, "message", json_string(s));
		free(s);
	}
	json_object_set_new(w, "details", subst_json(r, json_object_get(want, "details")));
	if (!json_object_get(want, "details"))
		json_object_del(w, "details");
	if (flags & RP_LOOSE_MSG) {
		json_object_del(w, "message");
		json_object_del(g, "message");
		sort_causes(w);
		sort_causes(g);
	}
	norm(w, 0);
	norm(g, 0);
	if (!json_equal(w, g))
		fail(r, file, "Status", w, g);
	json_decref(w);
	json_decref(g);
}

static void compare_object(struct replay *r, const char *file,
			   const json_t *want, const json_t *got,
			   unsigned flags)
{
	json_t *w, *g;

	if (flags & RP_NAMES) {
		w = names_of(want);
		g = names_of(got);
	} else {
		w = json_deep_copy(want);
		g = json_deep_copy(got);
		norm(w, 0);
		norm(g, 0);
	}
	if (!json_equal(w, g))
		fail(r, file, "body", w, g);
	json_decref(w);
	json_decref(g);
}

static json_t *event_summary(const json_t *ev)
{
	const json_t *o = json_object_get(ev, "object");
	const json_t *md = json_object_get(o, "metadata");
	const char *type = json_string_value(json_object_get(ev, "type"));
	json_t *s = json_pack("{ss}", "type", type ? type : "?");

	if (type && !strcmp(type, "BOOKMARK")) {
		json_object_set(s, "kind", json_object_get(o, "kind"));
		json_object_set(s, "annotations", json_object_get(md, "annotations"));
		json_object_set(s, "spec", json_object_get(o, "spec"));
	} else if (type && !strcmp(type, "ERROR")) {
		json_object_set(s, "reason", json_object_get(o, "reason"));
		json_object_set(s, "code", json_object_get(o, "code"));
	} else {
		json_object_set(s, "name", json_object_get(md, "name"));
		json_object_set_new(s, "terminating",
				    json_boolean(json_object_get(md, "deletionTimestamp") != NULL));
	}
	return s;
}

/* Recorded and live events; trailing periodic bookmarks may differ in number. */
static void compare_stream(struct replay *r, const char *file,
			   const json_t *want, const char *body)
{
	json_t *w = json_array(), *g = json_array(), *ev;
	const char *p = body;
	size_t i;

	json_array_foreach(want, i, ev)
		json_array_append_new(w, event_summary(ev));
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		json_t *e = json_loadb(p, nl ? (size_t)(nl - p) : strlen(p), 0, NULL);

		if (e)
			json_array_append_new(g, event_summary(e));
		else
			json_array_append_new(g, json_string("<unparsable line>"));
		json_decref(e);
		p = nl ? nl + 1 : NULL;
	}
	/* periodic bookmarks come by the clock: drop the trailing ones */
	while (json_array_size(w) &&
	    !json_object_get(json_object_get(json_array_get(w, json_array_size(w) - 1), "annotations"), "k8s.io/initial-events-end") &&
	    !strcmp(json_string_value(json_object_get(json_array_get(w, json_array_size(w) - 1), "type")), "BOOKMARK"))
		json_array_remove(w, json_array_size(w) - 1);
	while (json_array_size(g) && json_array_size(g) > json_array_size(w) &&
	    json_is_object(json_array_get(g, json_array_size(g) - 1)) &&
	    !strcmp(json_string_value(json_object_get(json_array_get(g, json_array_size(g) - 1), "type")), "BOOKMARK"))
		json_array_remove(g, json_array_size(g) - 1);
	if (!json_equal(w, g))
		fail(r, file, "stream", w, g);
	json_decref(w);
	json_decref(g);
}

static char *request_body(const json_t *b)
{
	struct sink s = { 0 };
	json_t *x;
	size_t i;

	if (!b || json_is_null(b))
		return NULL;
	if (json_is_array(b) && json_array_size(b) &&
	    json_is_string(json_array_get(b, 0)) &&
	    !json_is_object(json_array_get(b, 0))) {
		bool lines = true;

		json_array_foreach(b, i, x)
			lines &= json_is_string(x);
		if (lines) {
			json_array_foreach(b, i, x) {
				on_body((char *)json_string_value(x), 1,
					json_string_length(x), &s);
				on_body("\n", 1, 1, &s);
			}
			return s.data;
		}
	}
	return dump(b);
}

/* Replace timeoutSeconds=N in a query by timeout_s. */
static void set_timeout(char *path, size_t size, unsigned timeout_s)
{
	char *p = strstr(path, "timeoutSeconds=");
	char rest[4096];

	if (!p || !timeout_s)
		return;
	p += 15;
	snprintf(rest, sizeof(rest), "%s", p + strspn(p, "0123456789"));
	snprintf(p, size - (size_t)(p - path), "%u%s", timeout_s, rest);
}

void replay_timeout(struct replay *r, const char *file, unsigned flags,
		    unsigned timeout_s)
{
	char path[4096], fpath[4300], *body;
	json_t *t, *rq, *rs, *want, *hw, *live, *b;
	json_error_t je;
	struct hdrs h = { .warnings = json_array() };
	struct sink s = { 0 };
	const char *ctype, *accept, *wct, *wra;
	long code;

	snprintf(fpath, sizeof(fpath), "%s/%s", r->dir, file);
	t = json_load_file(fpath, 0, &je);
	if (!t) {
		printf("# cannot read %s: %s\n", fpath, je.text);
		r->nr_failed++;
		return;
	}
	r->nr_replayed++;
	rq = json_object_get(t, "request");
	rs = json_object_get(t, "response");
	subst_path(r, json_string_value(json_object_get(rq, "path")), path,
		   sizeof(path));
	set_timeout(path, sizeof(path), timeout_s);
	ctype = json_string_value(json_object_get(json_object_get(rq, "headers"), "Content-Type"));
	accept = json_string_value(json_object_get(json_object_get(rq, "headers"), "Accept"));
	b = subst_json(r, json_object_get(rq, "body"));
	body = request_body(b);
	json_decref(b);
	code = do_send(r, json_string_value(json_object_get(rq, "method")), path,
		       ctype, accept, body, flags, &h, &s);
	free(body);
	want = json_object_get(rs, "body");
	hw = json_object_get(rs, "headers");
	if (code != json_integer_value(json_object_get(rs, "status"))) {
		json_t *a = json_object_get(rs, "status"), *g = json_integer(code);

		fail(r, file, "status code", a, g);
		printf("#   body %.800s\n", s.data ? s.data : "");
		json_decref(g);
		goto out;
	}
	wct = json_string_value(json_object_get(hw, "Content-Type"));
	if (wct && strcmp(wct, h.ctype)) {
		json_t *a = json_string(wct), *g = json_string(h.ctype);

		fail(r, file, "Content-Type", a, g);
		json_decref(a);
		json_decref(g);
	}
	wra = json_string_value(json_object_get(hw, "Retry-After"));
	if ((wra || *h.retry_after) && strcmp(wra ? wra : "", h.retry_after)) {
		json_t *a = json_string(wra ? wra : ""), *g = json_string(h.retry_after);

		fail(r, file, "Retry-After", a, g);
		json_decref(a);
		json_decref(g);
	}
	if (json_object_get(hw, "Warning")) {
		json_t *ww = json_object_get(hw, "Warning");
		json_t *wa = json_is_array(ww) ? json_incref(ww) : json_pack("[O]", ww);

		if (!json_equal(wa, h.warnings))
			fail(r, file, "Warning", wa, h.warnings);
		json_decref(wa);
	}
	if (flags & RP_STREAM) {
		compare_stream(r, file, want, s.data);
		goto out;
	}
	if (json_is_string(want)) {
		json_t *g = json_string(s.data ? s.data : "");

		if (!json_equal(want, g))
			fail(r, file, "text", want, g);
		json_decref(g);
		goto out;
	}
	live = s.data ? json_loads(s.data, 0, NULL) : NULL;
	if (!live) {
		fail(r, file, "body is not JSON", want, NULL);
		goto out;
	}
	if (!strcmp(json_string_value(json_object_get(want, "kind")) ?
			    json_string_value(json_object_get(want, "kind")) : "",
		    "Status") && json_object_get(want, "status"))
		compare_status(r, file, want, live, flags);
	else
		compare_object(r, file, want, live, flags);
	learn(r, want, live);
	json_decref(live);
out:
	free(s.data);
	json_decref(h.warnings);
	json_decref(t);
}

void replay(struct replay *r, const char *file, unsigned flags)
{
	replay_timeout(r, file, flags, 0);
}

long replay_send(struct replay *r, const char *method, const char *path,
		 const char *ctype, const char *body, json_t **out)
{
	struct hdrs h = { .warnings = json_array() };
	struct sink s = { 0 };
	long code = do_send(r, method, path, ctype, NULL, body, 0, &h, &s);

	if (out)
		*out = s.data ? json_loads(s.data, 0, NULL) : NULL;
	free(s.data);
	json_decref(h.warnings);
	return code;
}

void replay_ns(struct replay *r, const char *ns)
{
	char body[256];

	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
		 ns);
	replay_send(r, "POST", "/api/v1/namespaces", "application/json", body,
		    NULL);
}

void replay_pod(struct replay *r, const char *ns, const char *name,
		const char *gang, int gpus, const char *node,
		const char *scheduler)
{
	char body[1024], path[256], extra[128] = "";

	if (node)
		snprintf(extra, sizeof(extra), "\"nodeName\":\"%s\",", node);
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"labels\":{\"app\":\"train\",\"kerf.io/gang\":\"%s\",\"kerf.io/tenant\":\"team-a\"}},"
		 "\"spec\":{%s\"schedulerName\":\"%s\",\"containers\":[{\"name\":\"train\",\"image\":\"busybox:1.36\",\"command\":[\"sleep\",\"infinity\"],\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"%d\"}}}]}}",
		 name, ns, gang, extra, scheduler ? scheduler : "kerf", gpus);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	replay_send(r, "POST", path, "application/json", body, NULL);
}
