/*
 * test_testapi_server: the server over HTTP: bounded bodies (413), JSON
 * nesting (400), malformed input never crashing it, tokens, a watch that
 * ends cleanly at timeoutSeconds, a watch from an rv that left the window,
 * and the store access tests use to act as a kubelet.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "testapi/testapi.h"

struct sink {
	char *data;
	size_t len;
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	char *d = realloc(s->data, s->len + size * n + 1);

	if (!d)
		return 0;
	memcpy(d + s->len, p, size * n);
	s->data = d;
	s->len += size * n;
	d[s->len] = 0;
	return size * n;
}

static long req(struct kerf_testapi *ta, const char *method, const char *path,
		const char *ctype, const char *body, size_t len, char **out)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	struct sink s = { 0 };
	char url[512], ct[128];
	long code = 0;

	snprintf(url, sizeof(url), "%s%s", kerf_testapi_url(ta), path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
	h = curl_slist_append(h, "Authorization: Bearer t0k");
	h = curl_slist_append(h, "Expect:");
	if (ctype) {
		snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
		h = curl_slist_append(h, ct);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)len);
	}
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (out)
		*out = s.data;
	else
		free(s.data);
	return code;
}

static struct kerf_testapi *start(uint32_t window)
{
	struct kerf_testapi_opts o = {
		.token = "t0k",
		.max_body_bytes = 4096,
		.watch_window = window,
		.bookmark_interval_ms = 200,
	};
	struct kerf_testapi *ta;
	struct kerf_err err = { 0 };

	assert_int_equal(kerf_testapi_start(&o, &ta, &err), 0);
	assert_non_null(strstr(kerf_testapi_url(ta), "http://127.0.0.1:"));
	return ta;
}

static const char pod[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
	"\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i:1\"}]}}";

static void test_bounds(void **state)
{
	struct kerf_testapi *ta = start(0);
	char *big = malloc(10000), *deep = malloc(2000), *out = NULL;
	size_t i;

	(void)state;
	memset(big, ' ', 10000);
	assert_int_equal(req(ta, "POST", "/api/v1/namespaces/default/pods",
			     "application/json", big, 10000, &out), 413);
	assert_non_null(strstr(out, "RequestEntityTooLarge"));
	free(out);
	for (i = 0; i < 1000; i++)
		deep[i] = '[';
	for (; i < 2000; i++)
		deep[i] = ']';
	assert_int_equal(req(ta, "POST", "/api/v1/namespaces/default/pods",
			     "application/json", deep, 1000, NULL), 400);
	memcpy(deep, "{\"a\":", 5);
	for (i = 0; i < 100; i++)
		memcpy(deep + 5 + i * 5, "{\"a\":", 5);
	assert_int_equal(req(ta, "POST", "/api/v1/namespaces/default/pods",
			     "application/json", deep, 505, NULL), 400);
	assert_int_equal(req(ta, "POST", "/api/v1/namespaces/default/pods",
			     "application/json", "\x01\xff{", 3, NULL), 400);
	assert_int_equal(req(ta, "PATCH", "/api/v1/namespaces/default/pods/x",
			     "application/json-patch+json", "[", 1, NULL), 404);
	assert_int_equal(req(ta, "GET", "/api/v1/namespaces/default/pods?labelSelector=%28%28",
			     NULL, NULL, 0, NULL), 400);
	assert_int_equal(req(ta, "GET", "/api/v1/namespaces/default/pods?continue=%01%02",
			     NULL, NULL, 0, NULL), 400);
	assert_int_equal(req(ta, "GET", "/api/v1/namespaces/default/pods?limit=-1",
			     NULL, NULL, 0, NULL), 400);
	assert_int_equal(req(ta, "GET", "/apis/x/y/z/a/b/c/d/e/f", NULL, NULL, 0,
			     NULL), 404);
	assert_int_equal(req(ta, "GET", "/healthz", NULL, NULL, 0, NULL), 200);
	free(big);
	free(deep);
	kerf_testapi_stop(ta);
}

static void set_running(struct kerf_testapi_store *st, void *arg)
{
	assert_int_equal(kerf_testapi_set_pod_phase(st, "default", arg,
						    "Running"), 0);
	assert_int_equal(kerf_testapi_set_pod_phase(st, "default", "nope",
						    "Running"), -KERF_ENOTFOUND);
}

static void test_store_access_and_watch(void **state)
{
	struct kerf_testapi *ta = start(4);
	char *out = NULL;
	int i;

	(void)state;
	assert_int_equal(req(ta, "POST", "/api/v1/namespaces/default/pods",
			     "application/json", pod, strlen(pod), NULL), 201);
	kerf_testapi_with_store(ta, set_running, "p");
	assert_int_equal(req(ta, "GET", "/api/v1/namespaces/default/pods/p",
			     NULL, NULL, 0, &out), 200);
	assert_non_null(strstr(out, "\"phase\":\"Running\""));
	free(out);
	/* a watch with bookmarks ends cleanly at its timeout */
	assert_int_equal(req(ta, "GET",
			     "/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=3&allowWatchBookmarks=true",
			     NULL, NULL, 0, &out), 200);
	assert_non_null(strstr(out, "{\"type\":\"ADDED\""));
	assert_non_null(strstr(out, "{\"type\":\"BOOKMARK\""));
	free(out);
	for (i = 0; i < 6; i++)
		assert_int_equal(req(ta, "PATCH", "/api/v1/namespaces/default/pods/p",
				     "application/merge-patch+json",
				     i % 2 ? "{\"metadata\":{\"labels\":{\"x\":\"1\"}}}" :
					     "{\"metadata\":{\"labels\":{\"x\":\"2\"}}}",
				     33, NULL), 200);
	assert_int_equal(req(ta, "GET",
			     "/api/v1/namespaces/default/pods?watch=1&resourceVersion=2&timeoutSeconds=1",
			     NULL, NULL, 0, &out), 200);
	assert_non_null(strstr(out, "\"type\":\"ERROR\""));
	assert_non_null(strstr(out, "\"code\":410"));
	free(out);
	kerf_testapi_stop(ta);
}

/* The Priority admission plugin, as a real server runs it on pod create. */
static void test_priority_admission(void **state)
{
	struct kerf_testapi *ta = start(0);
	static const char pc[] =
		"{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\","
		"\"metadata\":{\"name\":\"hi\"},\"value\":1000,\"preemptionPolicy\":\"Never\"}";
	static const char p_hi[] =
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"h\"},"
		"\"spec\":{\"priorityClassName\":\"hi\",\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}";
	static const char p_nope[] =
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"n\"},"
		"\"spec\":{\"priorityClassName\":\"nope\",\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}";
	static const char p_lie[] =
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"l\"},"
		"\"spec\":{\"priorityClassName\":\"hi\",\"priority\":5,\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}";
	char *out = NULL;

	(void)state;
	assert_int_equal(req(ta, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
			     "application/json", pc, strlen(pc), NULL), 201);
	assert_int_equal(req(ta, "POST", "/api/v1/namespaces/default/pods",
			     "application/json", p_hi, strlen(p_hi), &out), 201);
	assert_non_null(strstr(out, "\"priority\":1000"));
	assert_non_null(strstr(out, "\"preemptionPolicy\":\"Never\""));
	free(out);
	assert_int_equal(req(ta, "POST", "/api/v1/namespaces/default/pods",
			     "application/json", p_nope, strlen(p_nope), &out), 403);
	assert_non_null(strstr(out, "pods \\\"n\\\" is forbidden: no PriorityClass with name nope was found"));
	free(out);
	assert_int_equal(req(ta, "POST", "/api/v1/namespaces/default/pods",
			     "application/json", p_lie, strlen(p_lie), &out), 403);
	assert_non_null(strstr(out, "the integer value of priority (5) must not be provided"));
	free(out);
	/* no class: priority 0 */
	assert_int_equal(req(ta, "POST", "/api/v1/namespaces/default/pods",
			     "application/json", pod, strlen(pod), &out), 201);
	assert_non_null(strstr(out, "\"priority\":0"));
	free(out);
	kerf_testapi_stop(ta);
}

static void test_stop_ends_watches(void **state)
{
	struct kerf_testapi *ta = start(0);

	(void)state;
	/* nothing to wait on: stop with no client must be quick and clean */
	kerf_testapi_stop(ta);
	kerf_testapi_stop(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_store_access_and_watch),
		cmocka_unit_test(test_stop_ends_watches),
		cmocka_unit_test(test_priority_admission),
	};
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
