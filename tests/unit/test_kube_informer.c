/*
 * Unit tests for kube/informer driven by the fake ops (kube/fake.h): paged
 * lists, a 410 on a continue token, an ERROR 410 in a watch and the relist
 * diff (updates only for changed objects, deletes for vanished ones),
 * bookmarks, a dropped stream resumed from the last resourceVersion after
 * a pause, an HTTP 410 on a watch, malformed lines, odd events, and the
 * synced flag.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/rng.h"
#include "kube/fake.h"
#include "kube/informer.h"

struct compact {
	char key[64];
	char rv[32];
};

struct world {
	struct kerf_kube_fake *fake;
	struct kerf_kube_ops ops;
	struct kerf_rng rng;
	struct kerf_informer *inf;
	struct kerf_buf log;             /* "add ns/a 1;upd ns/a 2;del ns/b;" */
	int nr_live;                     /* compact objects not yet freed */
};

static void *decode(void *arg, const json_t *obj)
{
	struct world *w = arg;
	const json_t *md = json_object_get(obj, "metadata");
	const char *name = json_string_value(json_object_get(md, "name"));
	const char *rv = json_string_value(json_object_get(md, "resourceVersion"));
	struct compact *c;

	if (json_object_get(obj, "undecodable"))
		return NULL;
	c = calloc(1, sizeof(*c));
	assert_non_null(c);
	snprintf(c->key, sizeof(c->key), "%s", name);
	snprintf(c->rv, sizeof(c->rv), "%s", rv ? rv : "");
	w->nr_live++;
	return c;
}

static void free_compact(void *arg, void *p)
{
	struct world *w = arg;

	w->nr_live--;
	free(p);
}

static void on_add(void *arg, const char *key, void *obj)
{
	struct world *w = arg;
	struct compact *c = obj;

	assert_int_equal(kerf_buf_addf(&w->log, "add %s %s;", key, c->rv), 0);
}

static void on_update(void *arg, const char *key, void *old_obj, void *new_obj)
{
	struct world *w = arg;
	struct compact *o = old_obj, *n = new_obj;

	assert_int_equal(kerf_buf_addf(&w->log, "upd %s %s>%s;", key, o->rv, n->rv), 0);
}

static void on_delete(void *arg, const char *key, void *old_obj)
{
	struct world *w = arg;

	(void)old_obj;
	assert_int_equal(kerf_buf_addf(&w->log, "del %s;", key), 0);
}

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	struct kerf_informer_handlers h = {
		.decode = decode, .free = free_compact, .on_add = on_add,
		.on_update = on_update, .on_delete = on_delete,
	};
	struct kerf_informer_opts o = { .path = "/api/v1/pods" };

	if (!w)
		return -1;
	h.arg = w;
	w->fake = kerf_kube_fake_new();
	kerf_kube_fake_ops(w->fake, &w->ops);
	kerf_rng_seed(&w->rng, 7);
	o.rng = &w->rng;
	w->inf = kerf_informer_new(&w->ops, &o, &h, NULL);
	kerf_buf_init(&w->log, 1 << 20);
	*state = w;
	return w->fake && w->inf ? 0 : -1;
}

static int teardown(void **state)
{
	struct world *w = *state;

	kerf_informer_free(w->inf);
	assert_int_equal(w->nr_live, 0);
	kerf_kube_fake_free(w->fake);
	kerf_buf_release(&w->log);
	free(w);
	return 0;
}

/* {"metadata":{"name":..,"namespace":"ns","resourceVersion":..}} */
static char *pod(char *buf, size_t size, const char *name, const char *rv)
{
	snprintf(buf, size, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"resourceVersion\":\"%s\"},\"spec\":{}}",
		 name, rv);
	return buf;
}

/* A PodList page of "name:rv" items, with a continue token or NULL. */
static void push_page(struct world *w, const char *list_rv, const char *cont,
		      const char *const *items, size_t nr)
{
	struct kerf_buf b;
	char one[256], name[32];
	size_t i;

	kerf_buf_init(&b, 1 << 20);
	assert_int_equal(kerf_buf_addf(&b, "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"%s\"%s%s%s},\"items\":[",
				       list_rv, cont ? ",\"continue\":\"" : "",
				       cont ? cont : "", cont ? "\"" : ""), 0);
	for (i = 0; i < nr; i++) {
		const char *colon = strchr(items[i], ':');

		snprintf(name, sizeof(name), "%.*s", (int)(colon - items[i]), items[i]);
		assert_int_equal(kerf_buf_addf(&b, "%s%s", i ? "," : "",
					       pod(one, sizeof(one), name, colon + 1)), 0);
	}
	assert_int_equal(kerf_buf_add_str(&b, "]}"), 0);
	assert_int_equal(kerf_kube_fake_push_answer(w->fake, "GET", "/api/v1/pods", 200,
						    kerf_buf_str(&b)), 0);
	kerf_buf_release(&b);
}

static void push_watch(struct world *w, const char *const *lines, size_t nr,
		       enum kerf_kube_fake_end end)
{
	struct kerf_kube_fake_script s = { .http_status = 200, .lines = lines,
					   .nr_lines = nr, .end = end };

	assert_int_equal(kerf_kube_fake_push(w->fake, "WATCH", "/api/v1/pods", &s), 0);
}

static char *event(char *buf, size_t size, const char *type, const char *name,
		   const char *rv)
{
	char obj[256];

	snprintf(buf, size, "{\"type\":\"%s\",\"object\":%s}", type,
		 pod(obj, sizeof(obj), name, rv));
	return buf;
}

static const char *call_path(struct world *w, size_t i)
{
	const struct kerf_kube_fake_call *c = kerf_kube_fake_call(w->fake, i);

	assert_non_null(c);
	return c->path;
}

static const char *call_method(struct world *w, size_t i)
{
	return kerf_kube_fake_call(w->fake, i)->method;
}

static void poll_n(struct world *w, int n)
{
	while (n-- > 0)
		kerf_kube_fake_poll(w->fake);
}

static void test_paged_list_then_watch(void **state)
{
	struct world *w = *state;
	const char *p1[] = { "a:3", "b:4" }, *p2[] = { "c:5" };
	const char *watch_prefix = "/api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion=10&timeoutSeconds=";
	const char *path;
	unsigned t;

	push_page(w, "10", "tok+/=1", p1, 2);
	push_page(w, "10", NULL, p2, 1);
	assert_int_equal(kerf_informer_start(w->inf), 0);
	assert_false(kerf_informer_has_synced(w->inf));
	poll_n(w, 1);
	assert_false(kerf_informer_has_synced(w->inf));
	poll_n(w, 1);
	assert_true(kerf_informer_has_synced(w->inf));
	assert_string_equal(kerf_buf_str(&w->log), "add ns/a 3;add ns/b 4;add ns/c 5;");
	assert_int_equal(kerf_informer_size(w->inf), 3);
	assert_non_null(kerf_informer_get(w->inf, "ns/b"));
	assert_string_equal(call_path(w, 0), "/api/v1/pods?limit=500");
	assert_string_equal(call_path(w, 1), "/api/v1/pods?limit=500&continue=tok%2B%2F%3D1");
	assert_string_equal(call_method(w, 2), "WATCH");
	path = call_path(w, 2);
	assert_int_equal(strncmp(path, watch_prefix, strlen(watch_prefix)), 0);
	t = (unsigned)strtoul(path + strlen(watch_prefix), NULL, 10);
	assert_true(t >= 300 && t <= 600);
	assert_string_equal(kerf_informer_resource_version(w->inf), "10");
	assert_int_equal(kerf_informer_stats(w->inf)->pages, 2);
	assert_int_equal(kerf_informer_stats(w->inf)->relists, 0);
}

static void test_continue_expired_relists_from_scratch(void **state)
{
	struct world *w = *state;
	const char *p1[] = { "a:3", "b:4" }, *again[] = { "a:3", "c:6" };

	push_page(w, "10", "tok1", p1, 2);
	assert_int_equal(kerf_kube_fake_push_answer(w->fake, "GET", "/api/v1/pods", 410,
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{\"continue\":\"x\"},\"status\":\"Failure\",\"message\":\"The provided continue parameter is too old\",\"reason\":\"Expired\",\"code\":410}"), 0);
	push_page(w, "20", NULL, again, 2);
	assert_int_equal(kerf_informer_start(w->inf), 0);
	poll_n(w, 3);
	assert_true(kerf_informer_has_synced(w->inf));
	assert_string_equal(call_path(w, 2), "/api/v1/pods?limit=500");
	/* b came from the abandoned list and is not in the new one */
	assert_string_equal(kerf_buf_str(&w->log), "add ns/a 3;add ns/b 4;add ns/c 6;del ns/b;");
	assert_int_equal(kerf_informer_stats(w->inf)->expired, 1);
	assert_int_equal(kerf_informer_stats(w->inf)->relists, 1);
	assert_string_equal(kerf_informer_resource_version(w->inf), "20");
}

/* The watch event a real API server sends when the rv is compacted away. */
static const char *const expired_410 = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource version: 2 (9)\",\"reason\":\"Expired\",\"code\":410}}";

static void test_watch_error_410_relist_diff(void **state)
{
	struct world *w = *state;
	const char *p1[] = { "a:1", "b:1", "c:1" }, *p2[] = { "a:2", "b:3", "d:4" };
	char l1[512];
	const char *lines[2];

	push_page(w, "1", NULL, p1, 3);
	lines[0] = event(l1, sizeof(l1), "MODIFIED", "a", "2");
	lines[1] = expired_410;
	push_watch(w, lines, 2, KERF_KUBE_FAKE_END_CLEAN);
	push_page(w, "9", NULL, p2, 3);
	assert_int_equal(kerf_informer_start(w->inf), 0);
	poll_n(w, 3);
	assert_string_equal(kerf_buf_str(&w->log),
			    "add ns/a 1;add ns/b 1;add ns/c 1;"
			    "upd ns/a 1>2;"
			    "upd ns/b 1>3;add ns/d 4;del ns/c;");
	assert_string_equal(call_path(w, 2), "/api/v1/pods?limit=500");
	assert_int_equal(kerf_informer_stats(w->inf)->expired, 1);
	assert_int_equal(kerf_informer_stats(w->inf)->relists, 1);
	assert_string_equal(kerf_informer_stats(w->inf)->last_error,
			    "watch: too old resource version: 2 (9)");
	assert_int_equal(kerf_informer_size(w->inf), 3);
	assert_null(kerf_informer_get(w->inf, "ns/c"));
	/* a new watch from the relist's rv */
	assert_string_equal(call_method(w, 3), "WATCH");
	assert_non_null(strstr(call_path(w, 3), "&resourceVersion=9&"));
}

/*
 * resourceVersions are opaque: one that is not a canonical number is kept
 * as its string, and a relist updates exactly the objects whose string
 * changed ("007" and "7" differ; the same 20 digits do not).
 */
static void test_opaque_resource_versions(void **state)
{
	struct world *w = *state;
	const char *p1[] = { "a:x1", "b:007", "c:18446744073709551615", "d:12" },
		   *p2[] = { "a:x1", "b:7", "c:18446744073709551615", "d:12" };
	const char *lines[1];

	push_page(w, "1", NULL, p1, 4);
	lines[0] = expired_410;
	push_watch(w, lines, 1, KERF_KUBE_FAKE_END_CLEAN);
	push_page(w, "9", NULL, p2, 4);
	assert_int_equal(kerf_informer_start(w->inf), 0);
	poll_n(w, 3);
	assert_string_equal(kerf_buf_str(&w->log),
			    "add ns/a x1;add ns/b 007;add ns/c 18446744073709551615;"
			    "add ns/d 12;upd ns/b 007>7;");
	assert_int_equal(kerf_informer_size(w->inf), 4);
}

static void test_bookmark_moves_rv_only(void **state)
{
	struct world *w = *state;
	const char *p1[] = { "a:1" };
	const char *lines[] = {
		"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"384\"},\"spec\":{\"containers\":null},\"status\":{}}}",
	};

	push_page(w, "1", NULL, p1, 1);
	push_watch(w, lines, 1, KERF_KUBE_FAKE_END_CLEAN);
	assert_int_equal(kerf_informer_start(w->inf), 0);
	poll_n(w, 2);
	assert_string_equal(kerf_buf_str(&w->log), "add ns/a 1;");
	assert_int_equal(kerf_informer_stats(w->inf)->bookmarks, 1);
	/* the server ended the stream: a new watch at once, from the bookmark */
	assert_int_equal(kerf_kube_fake_nr_calls(w->fake), 3);
	assert_non_null(strstr(call_path(w, 2), "&resourceVersion=384&"));
	assert_int_equal(kerf_informer_stats(w->inf)->watch_restarts, 1);
	assert_int_equal(kerf_informer_tick(w->inf), UINT64_MAX);
}

static void test_dropped_stream_resumes_after_pause(void **state)
{
	struct world *w = *state;
	const char *p1[] = { "a:1" };
	char l1[512];
	const char *lines[1];
	uint64_t wait;

	push_page(w, "1", NULL, p1, 1);
	lines[0] = event(l1, sizeof(l1), "ADDED", "b", "7");
	push_watch(w, lines, 1, KERF_KUBE_FAKE_END_DROP);
	kerf_kube_fake_set_now(w->fake, 1000);
	assert_int_equal(kerf_informer_start(w->inf), 0);
	poll_n(w, 2);
	assert_string_equal(kerf_buf_str(&w->log), "add ns/a 1;add ns/b 7;");
	assert_int_equal(kerf_kube_fake_nr_calls(w->fake), 2);
	wait = kerf_informer_tick(w->inf);
	assert_true(wait <= 1000);     /* full jitter under the 1 s ceiling */
	assert_int_equal(kerf_kube_fake_nr_calls(w->fake), 2);
	kerf_kube_fake_set_now(w->fake, 1000 + wait);
	assert_int_equal(kerf_informer_tick(w->inf), UINT64_MAX);
	assert_int_equal(kerf_kube_fake_nr_calls(w->fake), 3);
	assert_string_equal(call_method(w, 2), "WATCH");
	assert_non_null(strstr(call_path(w, 2), "&resourceVersion=7&"));
	assert_int_equal(kerf_informer_stats(w->inf)->errors, 1);
	assert_int_equal(kerf_informer_stats(w->inf)->relists, 0);
}

static void test_http_410_on_watch_relists(void **state)
{
	struct world *w = *state;
	const char *p1[] = { "a:1", "b:1" }, *p2[] = { "a:1" };
	struct kerf_kube_fake_script s = {
		.http_status = 410,
		.body = "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Gone\",\"code\":410}",
	};

	push_page(w, "1", NULL, p1, 2);
	assert_int_equal(kerf_kube_fake_push(w->fake, "WATCH", "/api/v1/pods", &s), 0);
	push_page(w, "5", NULL, p2, 1);
	assert_int_equal(kerf_informer_start(w->inf), 0);
	poll_n(w, 3);
	assert_string_equal(kerf_buf_str(&w->log), "add ns/a 1;add ns/b 1;del ns/b;");
	assert_int_equal(kerf_informer_stats(w->inf)->relists, 1);
}

static void test_odd_events(void **state)
{
	struct world *w = *state;
	const char *p1[] = { "a:1" };
	char l[6][512];
	const char *lines[7];

	push_page(w, "1", NULL, p1, 1);
	lines[0] = event(l[0], sizeof(l[0]), "ADDED", "a", "1");       /* duplicate: nothing */
	lines[1] = event(l[1], sizeof(l[1]), "ADDED", "a", "2");       /* known: update */
	lines[2] = event(l[2], sizeof(l[2]), "MODIFIED", "z", "3");    /* unknown: add */
	lines[3] = event(l[3], sizeof(l[3]), "DELETED", "ghost", "4"); /* unknown: ignored */
	lines[4] = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"resourceVersion\":\"5\"}}}";
	lines[5] = "{\"type\":\"MODIFIED\",\"object\":{\"undecodable\":1,\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"resourceVersion\":\"6\"}}}";
	lines[6] = event(l[4], sizeof(l[4]), "DELETED", "z", "7");
	push_watch(w, lines, 7, KERF_KUBE_FAKE_END_OPEN);
	assert_int_equal(kerf_informer_start(w->inf), 0);
	poll_n(w, 2);
	assert_string_equal(kerf_buf_str(&w->log),
			    "add ns/a 1;upd ns/a 1>2;add ns/z 3;del ns/z;");
	assert_int_equal(kerf_informer_stats(w->inf)->no_name, 1);
	assert_int_equal(kerf_informer_stats(w->inf)->decode_failed, 1);
	assert_int_equal(kerf_informer_stats(w->inf)->malformed, 0);
	assert_string_equal(kerf_informer_resource_version(w->inf), "7");
	assert_int_equal(kerf_kube_fake_nr_open_watches(w->fake), 1);
	/* the compact object of the last good version stays */
	assert_string_equal(((struct compact *)kerf_informer_get(w->inf, "ns/a"))->rv, "2");
}

static void test_malformed_line_relists_after_pause(void **state)
{
	struct world *w = *state;
	const char *p1[] = { "a:1" }, *p2[] = { "a:1" };
	const char *lines[] = { "{\"type\":\"ADDED\",\"obj", "never read" };
	uint64_t wait;

	push_page(w, "1", NULL, p1, 1);
	push_watch(w, lines, 2, KERF_KUBE_FAKE_END_OPEN);
	push_page(w, "3", NULL, p2, 1);
	assert_int_equal(kerf_informer_start(w->inf), 0);
	poll_n(w, 2);
	assert_int_equal(kerf_informer_stats(w->inf)->malformed, 1);
	assert_int_equal(strncmp(kerf_informer_stats(w->inf)->last_error,
				 "watch: watch event: not JSON", 28), 0);
	assert_int_equal(kerf_kube_fake_nr_open_watches(w->fake), 0);
	wait = kerf_informer_tick(w->inf);
	assert_true(wait <= 1000);
	kerf_kube_fake_set_now(w->fake, wait);
	kerf_informer_tick(w->inf);
	poll_n(w, 1);
	assert_int_equal(kerf_informer_stats(w->inf)->relists, 1);
	assert_string_equal(kerf_buf_str(&w->log), "add ns/a 1;");
	assert_string_equal(kerf_informer_resource_version(w->inf), "3");
}

static void test_synced_only_after_first_list(void **state)
{
	struct world *w = *state;
	const char *p1[] = { "a:1" };
	struct kerf_informer *infs[1] = { w->inf };
	uint64_t wait;

	kerf_kube_fake_fail_nth(w->fake, 1, 503, 0);
	push_page(w, "1", NULL, p1, 1);
	assert_int_equal(kerf_informer_start(w->inf), 0);
	poll_n(w, 1);
	assert_false(kerf_informers_synced(infs, 1));
	assert_int_equal(kerf_informer_stats(w->inf)->errors, 1);
	wait = kerf_informer_tick(w->inf);
	kerf_kube_fake_set_now(w->fake, wait);
	kerf_informer_tick(w->inf);
	poll_n(w, 1);
	assert_true(kerf_informers_synced(infs, 1));
	assert_true(kerf_informers_synced(NULL, 0));
	/* the page was not used by the failed call */
	assert_int_equal(kerf_kube_fake_nr_scripts_left(w->fake), 0);
}

static void test_transport_error_on_list_retried(void **state)
{
	struct world *w = *state;
	const char *p1[] = { "a:1" };

	kerf_kube_fake_fail_nth(w->fake, 1, 0, -KERF_ETIMEDOUT);
	push_page(w, "1", NULL, p1, 1);
	assert_int_equal(kerf_informer_start(w->inf), 0);
	poll_n(w, 1);
	assert_string_equal(kerf_informer_stats(w->inf)->last_error,
			    "list: fake: transport error");
	kerf_kube_fake_set_now(w->fake, 60000);
	kerf_informer_tick(w->inf);
	poll_n(w, 1);
	assert_true(kerf_informer_has_synced(w->inf));
}

static void test_selectors_escaped(void **state)
{
	struct world *w = *state;
	struct kerf_informer_handlers h = { .decode = decode, .free = free_compact, .arg = w };
	struct kerf_informer_opts o = {
		.path = "/apis/kerf.io/v1alpha1/tenants",
		.label_selector = "kerf.io/tier in (gold,silver)",
		.field_selector = "metadata.name!=x",
		.page_limit = 2, .watch_min_s = 5, .watch_max_s = 5,
		.rng = &w->rng,
	};
	struct kerf_informer *inf = kerf_informer_new(&w->ops, &o, &h, NULL);

	assert_non_null(inf);
	assert_int_equal(kerf_informer_start(inf), 0);
	assert_string_equal(call_path(w, 0), "/apis/kerf.io/v1alpha1/tenants?labelSelector=kerf.io%2Ftier%20in%20%28gold%2Csilver%29&fieldSelector=metadata.name%21%3Dx&limit=2");
	kerf_informer_free(inf);
	o.path = "/api/v1/pods?watch=1";
	assert_null(kerf_informer_new(&w->ops, &o, &h, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_paged_list_then_watch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_continue_expired_relists_from_scratch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_error_410_relist_diff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opaque_resource_versions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bookmark_moves_rv_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropped_stream_resumes_after_pause, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_410_on_watch_relists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_odd_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_line_relists_after_pause, setup, teardown),
		cmocka_unit_test_setup_teardown(test_synced_only_after_first_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transport_error_on_list_retried, setup, teardown),
		cmocka_unit_test_setup_teardown(test_selectors_escaped, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
