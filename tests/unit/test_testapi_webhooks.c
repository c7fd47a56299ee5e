/*
 * testapi's admission webhooks (src/testapi/webhook_*.c): the matching
 * rules and the denial a client gets, as pure functions; then live, a
 * webhook over TLS in this test (libmicrohttpd, certificates made by
 * kube_certs.sh) registered through the API, answering as the capture's
 * test webhook did, and the client's view and the webhook's compared to
 * what a real kube-apiserver v1.34.9 gave (../shared/fixtures/k8s/
 * real-1.34.9/admission, compared only where present; the live checks
 * hold the same values written here).
 */
#define _DEFAULT_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <microhttpd.h>

#include "base/buf.h"
#include "format/file.h"
#include "testapi/testapi_int.h"
#include "testapi/webhook.h"

/* ---- pure: rules, selectors, denials --------------------------------- */

static json_t *J(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j)
		fail_msg("bad test JSON: %s: %s", e.text, text);
	return j;
}

static bool rules(const char *hook, const char *op, const char *res,
		  const char *sub, const char *ns)
{
	struct kerf_ta_wh_attrs a = { op, "", "v1", res, sub, ns };
	json_t *h = J(hook);
	bool m = kerf_ta_wh_rules_match(h, &a);

	json_decref(h);
	return m;
}

static void test_rules(void **state)
{
	const char *pods = "{\"rules\":[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"\"],"
			   "\"apiVersions\":[\"v1\"],\"resources\":[\"pods\",\"pods/binding\"],"
			   "\"scope\":\"Namespaced\"}]}";
	const char *star = "{\"rules\":[{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],"
			   "\"apiVersions\":[\"*\"],\"resources\":[\"*\"]}]}";
	const char *all = "{\"rules\":[{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],"
			  "\"apiVersions\":[\"*\"],\"resources\":[\"*/*\"],\"scope\":\"Cluster\"}]}";
	const char *subs = "{\"rules\":[{\"operations\":[\"UPDATE\"],\"apiGroups\":[\"\"],"
			   "\"apiVersions\":[\"v1\"],\"resources\":[\"*/status\",\"pods/*\"]}]}";

	(void)state;
	assert_true(rules(pods, "CREATE", "pods", "", "a"));
	assert_true(rules(pods, "CREATE", "pods", "binding", "a"));
	assert_false(rules(pods, "UPDATE", "pods", "", "a"));
	assert_false(rules(pods, "CREATE", "pods", "status", "a"));
	assert_false(rules(pods, "CREATE", "pods", "", ""));      /* scope */
	assert_false(rules(pods, "CREATE", "nodes", "", "a"));
	assert_true(rules(star, "DELETE", "nodes", "", ""));
	assert_false(rules(star, "UPDATE", "pods", "status", "a")); /* no subs */
	assert_true(rules(all, "UPDATE", "nodes", "status", ""));
	assert_false(rules(all, "UPDATE", "pods", "status", "a"));   /* Cluster */
	assert_true(rules(all, "CREATE", "namespaces", "", "x"));    /* a ns is cluster */
	assert_true(rules(subs, "UPDATE", "nodes", "status", ""));
	assert_true(rules(subs, "UPDATE", "pods", "ephemeralcontainers", "a"));
	assert_true(rules(subs, "UPDATE", "pods", "", "a"));    /* pods-slash-star has pods */
	assert_false(rules(subs, "UPDATE", "nodes", "", ""));
	assert_false(rules("{}", "CREATE", "pods", "", "a"));
}

static bool sel(const char *selector, const char *labels)
{
	json_t *s = selector ? J(selector) : NULL, *l = J(labels);
	bool m = kerf_ta_wh_selector_match(s, l);

	json_decref(s);
	json_decref(l);
	return m;
}

static void test_selectors(void **state)
{
	struct kerf_ta_wh_attrs a = { "CREATE", "", "v1", "pods", "", "team" };
	json_t *hook, *nsl, *obj, *old;

	(void)state;
	assert_true(sel(NULL, "{}"));
	assert_true(sel("{}", "{}"));
	assert_true(sel("{\"matchLabels\":{\"a\":\"1\"}}", "{\"a\":\"1\",\"b\":\"2\"}"));
	assert_false(sel("{\"matchLabels\":{\"a\":\"1\"}}", "{\"a\":\"2\"}"));
	assert_true(sel("{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":[\"1\",\"2\"]}]}", "{\"a\":\"2\"}"));
	assert_false(sel("{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":[\"1\"]}]}", "{}"));
	assert_true(sel("{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"NotIn\",\"values\":[\"1\"]}]}", "{}"));
	assert_false(sel("{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"NotIn\",\"values\":[\"1\"]}]}", "{\"a\":\"1\"}"));
	assert_true(sel("{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\"}]}", "{\"a\":\"\"}"));
	assert_false(sel("{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"DoesNotExist\"}]}", "{\"a\":\"x\"}"));

	/* namespaceSelector on the namespace's labels, objectSelector on
	 * the new or the old object */
	hook = J("{\"rules\":[{\"operations\":[\"*\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"
		 "\"resources\":[\"pods\",\"namespaces\"]}],"
		 "\"namespaceSelector\":{\"matchLabels\":{\"kubernetes.io/metadata.name\":\"team\"}},"
		 "\"objectSelector\":{\"matchExpressions\":[{\"key\":\"skip\",\"operator\":\"DoesNotExist\"}]}}");
	nsl = J("{\"kubernetes.io/metadata.name\":\"team\"}");
	obj = J("{\"metadata\":{\"labels\":{\"skip\":\"1\"}}}");
	old = J("{\"metadata\":{\"labels\":{}}}");
	assert_true(kerf_ta_wh_matches(hook, &a, nsl, NULL, old));
	assert_false(kerf_ta_wh_matches(hook, &a, nsl, obj, NULL));
	assert_true(kerf_ta_wh_matches(hook, &a, nsl, obj, old));
	a.ns = "other";
	assert_false(kerf_ta_wh_matches(hook, &a, NULL, old, NULL));
	/* a Namespace is matched on its own labels */
	a.resource = "namespaces";
	a.ns = "";
	json_decref(obj);
	obj = J("{\"metadata\":{\"labels\":{\"kubernetes.io/metadata.name\":\"team\"}}}");
	assert_true(kerf_ta_wh_matches(hook, &a, NULL, obj, NULL));
	assert_false(kerf_ta_wh_matches(hook, &a, NULL, old, NULL));
	json_decref(hook);
	json_decref(nsl);
	json_decref(obj);
	json_decref(old);
}

static void check_denial(const char *status, const char *want)
{
	json_t *s = status ? J(status) : NULL, *w = J(want);
	json_t *d = kerf_ta_wh_denial("validate.kerf.io", s);

	if (!json_equal(d, w)) {
		char *got = json_dumps(d, JSON_COMPACT);

		fail_msg("denial: got %s, want %s", got, want);
	}
	json_decref(s);
	json_decref(w);
	json_decref(d);
}

static void test_denial(void **state)
{
	(void)state;
	check_denial(NULL,
		     "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
		     "\"message\":\"admission webhook \\\"validate.kerf.io\\\" denied the request without explanation\",\"code\":400}");
	check_denial("{\"code\":403,\"message\":\"no quota\"}",
		     "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
		     "\"message\":\"admission webhook \\\"validate.kerf.io\\\" denied the request: no quota\",\"code\":403}");
	check_denial("{\"code\":422,\"reason\":\"Invalid\",\"message\":\"m\",\"details\":{\"causes\":"
		     "[{\"type\":\"FieldValueInvalid\",\"field\":\"f\",\"message\":\"c\"}]}}",
		     "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
		     "\"message\":\"admission webhook \\\"validate.kerf.io\\\" denied the request: m\","
		     "\"reason\":\"Invalid\",\"details\":{\"causes\":[{\"message\":\"c\",\"field\":\"f\"}]},\"code\":422}");
	check_denial("{\"code\":200,\"status\":\"Success\",\"reason\":\"Nope\"}",
		     "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
		     "\"message\":\"admission webhook \\\"validate.kerf.io\\\" denied the request: Nope\","
		     "\"reason\":\"Nope\",\"code\":400}");
}

/* metadata.<map>[key] of an object, or NULL (keys hold dots) */
static const char *meta(const json_t *obj, const char *map, const char *key)
{
	return json_string_value(json_object_get(json_object_get(
		json_object_get(obj, "metadata"), map), key));
}

/* ---- the webhook of this test ---------------------------------------- */

static char dir[64];
static struct kerf_file ca, server_crt, server_key;
static struct MHD_Daemon *hook_d;
static uint16_t hook_port, down_port;
static char ca_b64[8192];
static struct kerf_testapi *ta;

enum { MAX_CALLS = 32 };
static pthread_mutex_t calls_lock = PTHREAD_MUTEX_INITIALIZER;
static json_t *calls;          /* [{path, headers{}, body}] */

struct upload {
	struct kerf_buf b;
};

static const char *const mutate_patch =
	"[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{}},"
	"{\"op\":\"add\",\"path\":\"/metadata/annotations/kerf.io~1admitted-by\",\"value\":\"kerf-webhook\"},"
	"{\"op\":\"add\",\"path\":\"/metadata/labels/kerf.io~1mutated\",\"value\":\"true\"},"
	"{\"op\":\"add\",\"path\":\"/spec/tolerations/-\",\"value\":{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}}]";

/* What the capture's test webhook answered, by path and labels. */
static json_t *answer(const char *path, const json_t *review)
{
	const json_t *rq = json_object_get(review, "request");
	const char *uid = json_string_value(json_object_get(rq, "uid"));
	const json_t *obj = json_object_get(rq, "object");
	const char *deny, *warn;
	json_t *r;

	if (!json_is_object(obj))
		obj = json_object_get(rq, "oldObject");
	deny = meta(obj, "labels", "kerf.io/deny");
	warn = meta(obj, "labels", "kerf.io/warn");
	r = json_pack("{sssb}", "uid", uid, "allowed", true);
	if (!strcmp(path, "/mutate")) {
		char b64[2048];

		kerf_ta_b64_encode(mutate_patch, strlen(mutate_patch), b64,
				   sizeof(b64));
		for (char *p = b64; *p; p++)   /* the standard alphabet */
			*p = *p == '-' ? '+' : *p == '_' ? '/' : *p;
		while (strlen(b64) % 4)
			strcat(b64, "=");
		json_object_set_new(r, "patchType", json_string("JSONPatch"));
		json_object_set_new(r, "patch", json_string(b64));
	} else if (!strcmp(path, "/baduid")) {
		json_object_set_new(r, "uid", json_string("not-the-request-uid"));
	} else if (!strcmp(path, "/slow")) {
		sleep(2);
	} else if (deny && !strcmp(deny, "403")) {
		json_object_set_new(r, "allowed", json_false());
		json_object_set_new(r, "status", J("{\"code\":403,\"message\":\"tenant team-x has no GPU quota left (8/8 in use)\"}"));
	} else if (deny && !strcmp(deny, "422")) {
		json_object_set_new(r, "allowed", json_false());
		json_object_set_new(r, "status", J("{\"code\":422,\"reason\":\"Invalid\",\"message\":\"gang size must be a power of two\","
						   "\"details\":{\"causes\":[{\"type\":\"FieldValueInvalid\",\"field\":\"metadata.labels[kerf.io/gang-size]\","
						   "\"message\":\"3 is not a power of two\"}]}}"));
	} else if (deny) {
		json_object_set_new(r, "allowed", json_false());
	} else if (warn) {
		json_object_set_new(r, "warnings", J("[\"kerf.io/gang label missing: pod scheduled alone\","
						     "\"nvidia.com/gpu request rounded to a whole GPU\"]"));
	}
	return json_pack("{ssssso}", "apiVersion", "admission.k8s.io/v1", "kind",
			 "AdmissionReview", "response", r);
}

static enum MHD_Result header_cb(void *cls, enum MHD_ValueKind kind,
				 const char *key, const char *value)
{
	(void)kind;
	json_object_set_new(cls, key, json_string(value));
	return MHD_YES;
}

static enum MHD_Result hook_handler(void *cls, struct MHD_Connection *conn,
				    const char *url, const char *method,
				    const char *version, const char *data,
				    size_t *size, void **con_cls)
{
	struct upload *u = *con_cls;
	struct MHD_Response *resp;
	json_t *review, *hdrs, *ans, *call;
	const char *timeout;
	char path[256], *text;
	enum MHD_Result ret;

	(void)cls;
	(void)method;
	(void)version;
	if (!u) {
		u = calloc(1, sizeof(*u));
		kerf_buf_init(&u->b, 1 << 24);
		*con_cls = u;
		return MHD_YES;
	}
	if (*size) {
		if (kerf_buf_add(&u->b, data, *size) < 0)
			return MHD_NO;
		*size = 0;
		return MHD_YES;
	}
	{
		json_error_t je;

		review = json_loads(kerf_buf_str(&u->b), 0, &je);
		if (!review)
			fprintf(stderr, "# webhook: a body that is not JSON (%s): %.300s\n",
				je.text, kerf_buf_str(&u->b));
	}
	hdrs = json_object();
	MHD_get_connection_values(conn, MHD_HEADER_KIND, header_cb, hdrs);
	timeout = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "timeout");
	snprintf(path, sizeof(path), "%s?timeout=%s", url, timeout ? timeout : "");
	call = json_pack("{sssoso}", "path", path, "headers", hdrs, "body",
			 review ? json_incref(review) : json_null());
	pthread_mutex_lock(&calls_lock);
	json_array_append_new(calls, call);
	pthread_mutex_unlock(&calls_lock);
	ans = answer(url, review);
	text = json_dumps(ans, JSON_COMPACT);
	resp = MHD_create_response_from_buffer(strlen(text), text,
					       MHD_RESPMEM_MUST_FREE);
	MHD_add_response_header(resp, "Content-Type", "application/json");
	ret = MHD_queue_response(conn, 200, resp);
	MHD_destroy_response(resp);
	json_decref(ans);
	json_decref(review);
	kerf_buf_release(&u->b);
	free(u);
	*con_cls = NULL;
	return ret;
}

/* ---- a client of testapi --------------------------------------------- */

struct reply {
	long code;
	json_t *body;
	json_t *warnings;          /* Warning header values */
	double secs;
};

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	return kerf_buf_add(arg, p, size * n) < 0 ? 0 : size * n;
}

static size_t on_hdr(char *p, size_t size, size_t n, void *arg)
{
	size_t len = size * n;

	if (len > 9 && !strncasecmp(p, "Warning: ", 9)) {
		size_t l = len - 9;

		while (l && (p[9 + l - 1] == '\r' || p[9 + l - 1] == '\n'))
			l--;
		json_array_append_new(arg, json_stringn(p + 9, l));
	}
	return len;
}

static struct reply send_req(const char *method, const char *path,
			     const char *ctype, const char *body)
{
	struct reply r = { 0 };
	struct kerf_buf b;
	struct curl_slist *h = NULL;
	char url[512], ct[128];
	CURL *c = curl_easy_init();
	struct timespec t0, t1;

	kerf_buf_init(&b, 1 << 24);
	r.warnings = json_array();
	snprintf(url, sizeof(url), "%s%s", kerf_testapi_url(ta), path);
	snprintf(ct, sizeof(ct), "Content-Type: %s", ctype ? ctype : "application/json");
	h = curl_slist_append(h, "Authorization: Bearer t");
	h = curl_slist_append(h, ct);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "kerf/0.1 (linux/amd64) test");
	if (body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_hdr);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r.warnings);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r.secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.code);
	r.body = json_loads(kerf_buf_str(&b), 0, NULL);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	kerf_buf_release(&b);
	return r;
}

static void reply_free(struct reply *r)
{
	json_decref(r->body);
	json_decref(r->warnings);
}

static json_t *take_calls(void)
{
	json_t *c;

	pthread_mutex_lock(&calls_lock);
	c = calls;
	calls = json_array();
	pthread_mutex_unlock(&calls_lock);
	return c;
}

/* A configuration like the capture's setup files, with this test's port. */
static void add_config(const char *kind, const char *name, const char *hook,
		       const char *path, uint16_t port, const char *rules,
		       const char *objsel, const char *extra)
{
	char *body = NULL, url[64];
	struct reply r;
	size_t n;
	const char *plural = !strcmp(kind, "MutatingWebhookConfiguration") ?
		"mutatingwebhookconfigurations" : "validatingwebhookconfigurations";
	char p[160];

	snprintf(url, sizeof(url), "https://127.0.0.1:%u%s", port, path);
	n = (size_t)snprintf(NULL, 0, "x") + 16384;
	body = malloc(n);
	snprintf(body, n,
		 "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":\"%s\","
		 "\"metadata\":{\"name\":\"%s\"},\"webhooks\":[{\"name\":\"%s\","
		 "\"clientConfig\":{\"url\":\"%s\",\"caBundle\":\"%s\"},\"rules\":%s,"
		 "\"namespaceSelector\":{\"matchLabels\":{\"kubernetes.io/metadata.name\":\"webhook-test\"}},"
		 "\"objectSelector\":%s,\"sideEffects\":\"None\",\"admissionReviewVersions\":[\"v1\"]%s}]}",
		 kind, name, hook, url, ca_b64, rules, objsel, extra);
	snprintf(p, sizeof(p), "/apis/admissionregistration.k8s.io/v1/%s", plural);
	r = send_req("POST", p, NULL, body);
	if (r.code != 201) {
		char *t = json_dumps(r.body, JSON_COMPACT);

		fail_msg("config %s: %ld %s", name, r.code, t);
	}
	reply_free(&r);
	free(body);
}

static const char *const pod_rules =
	"[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],\"resources\":[\"pods\"]}]";
static const char *const validate_rules =
	"[{\"operations\":[\"CREATE\",\"UPDATE\",\"DELETE\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"
	"\"resources\":[\"pods\",\"pods/binding\",\"pods/eviction\",\"pods/ephemeralcontainers\",\"pods/status\"],"
	"\"scope\":\"Namespaced\"}]";
static const char *const no_case =
	"{\"matchExpressions\":[{\"key\":\"kerf.io/case\",\"operator\":\"DoesNotExist\"}]}";

static char *pod_body(const char *name, const char *extra_labels)
{
	static char b[1024];

	snprintf(b, sizeof(b),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"webhook-test\","
		 "\"labels\":{\"app\":\"train\",\"kerf.io/gang\":\"gw\",\"kerf.io/tenant\":\"team-a\"%s}},"
		 "\"spec\":{\"schedulerName\":\"kerf\",\"containers\":[{\"name\":\"train\",\"image\":\"busybox:1.36\","
		 "\"command\":[\"sleep\",\"infinity\"],\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}",
		 name, extra_labels);
	return b;
}

static int live_setup(void **state)
{
	const char *root = getenv("KERF_SOURCE_ROOT");
	struct kerf_testapi_opts o = { .token = "t" };
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct kerf_err err = { 0 };
	char cmd[512], path[160];
	struct reply r;
	int fd;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/kerf-test-webhooks-XXXXXX");
	if (!mkdtemp(dir) || !root)
		return -1;
	snprintf(cmd, sizeof(cmd), "sh '%s/tests/unit/kube_certs.sh' '%s'", root, dir);
	if (system(cmd) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/ca.crt", dir);
	if (kerf_file_read(&ca, path, 1 << 20, NULL) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/server.crt", dir);
	if (kerf_file_read(&server_crt, path, 1 << 20, NULL) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/server.key", dir);
	if (kerf_file_read(&server_key, path, 1 << 20, NULL) < 0)
		return -1;
	kerf_ta_b64_encode(ca.data, ca.len, ca_b64, sizeof(ca_b64));
	for (char *p = ca_b64; *p; p++)
		*p = *p == '-' ? '+' : *p == '_' ? '/' : *p;
	calls = json_array();
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	hook_d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
				  MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_TLS,
				  0, NULL, NULL, hook_handler, NULL,
				  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				  MHD_OPTION_HTTPS_MEM_KEY, server_key.data,
				  MHD_OPTION_HTTPS_MEM_CERT, server_crt.data,
				  MHD_OPTION_END);
	if (!hook_d)
		return -1;
	hook_port = MHD_get_daemon_info(hook_d, MHD_DAEMON_INFO_BIND_PORT)->port;
	/* a port nobody listens on: bind, read its number, close */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	{
		socklen_t l = sizeof(sa);

		getsockname(fd, (struct sockaddr *)&sa, &l);
		down_port = ntohs(sa.sin_port);
		close(fd);
	}
	if (kerf_testapi_start(&o, &ta, &err) < 0)
		return -1;
	r = send_req("POST", "/api/v1/namespaces", NULL,
		     "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"webhook-test\"}}");
	reply_free(&r);
	add_config("MutatingWebhookConfiguration", "kerf-mutate", "mutate.kerf.io",
		   "/mutate", hook_port, pod_rules, no_case, "");
	add_config("ValidatingWebhookConfiguration", "kerf-validate", "validate.kerf.io",
		   "/validate", hook_port, validate_rules, no_case, ",\"timeoutSeconds\":10");
	add_config("ValidatingWebhookConfiguration", "t1-down", "down.kerf.io",
		   "/validate", down_port, validate_rules,
		   "{\"matchLabels\":{\"kerf.io/case\":\"down\"}}", "");
	add_config("ValidatingWebhookConfiguration", "t2-down-ignore", "down-ignore.kerf.io",
		   "/validate", down_port, validate_rules,
		   "{\"matchLabels\":{\"kerf.io/case\":\"down-ignore\"}}", ",\"failurePolicy\":\"Ignore\"");
	add_config("ValidatingWebhookConfiguration", "t3-baduid", "baduid.kerf.io",
		   "/baduid", hook_port, validate_rules,
		   "{\"matchLabels\":{\"kerf.io/case\":\"baduid\"}}", "");
	add_config("ValidatingWebhookConfiguration", "t4-slow", "slow.kerf.io",
		   "/slow", hook_port, validate_rules,
		   "{\"matchLabels\":{\"kerf.io/case\":\"slow\"}}", ",\"timeoutSeconds\":1");
	add_config("ValidatingWebhookConfiguration", "t5-slow-ignore", "slow-ignore.kerf.io",
		   "/slow", hook_port, validate_rules,
		   "{\"matchLabels\":{\"kerf.io/case\":\"slow-ignore\"}}",
		   ",\"timeoutSeconds\":1,\"failurePolicy\":\"Ignore\"");
	json_decref(take_calls());
	return 0;
}

static int live_teardown(void **state)
{
	char cmd[128];

	(void)state;
	kerf_testapi_stop(ta);
	if (hook_d)
		MHD_stop_daemon(hook_d);
	json_decref(calls);
	kerf_file_release(&ca);
	kerf_file_release(&server_crt);
	kerf_file_release(&server_key);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int live_setup_maybe(void **state)
{
	if (system("command -v openssl >/dev/null 2>&1") != 0)
		return 0;
	return live_setup(state);
}

static const char *str(const json_t *j, const char *path)
{
	const char *s = kerf_ta_str(j, path);

	return s ? s : "(none)";
}

/* ---- the real captures ---------------------------------------------- */

static char fixtures[4096];

static json_t *fixture(const char *name)
{
	char path[8192];

	if (!*fixtures)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", fixtures, name);
	return json_load_file(path, 0, NULL);
}

/*
 * The client's status and Status body as the capture's, the capture's
 * port and request uid replaced by this run's.
 */
static void compare_client(const char *file, const struct reply *r,
			   const char *uid)
{
	json_t *f = fixture(file), *want;
	char *text, *got, port[16];
	const char *m;

	if (!f)
		return;
	assert_int_equal(r->code, json_integer_value(kerf_ta_path(f, "response.status")));
	want = json_deep_copy(kerf_ta_path(f, "response.body"));
	if (!strcmp(str(want, "kind"), "Status")) {
		/* the run's values: port and uids differ, nothing else */
		text = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
		got = json_dumps(r->body, JSON_COMPACT | JSON_SORT_KEYS);
		m = str(want, "message");
		snprintf(port, sizeof(port), "%u", hook_port);
		if (strstr(m, "127.0.0.1:")) {
			/* compare with the port numbers blanked */
			for (char *p = text; (p = strstr(p, "127.0.0.1:"));)
				for (p += 10; *p >= '0' && *p <= '9'; p++)
					*p = 'P';
			for (char *p = got; (p = strstr(p, "127.0.0.1:"));)
				for (p += 10; *p >= '0' && *p <= '9'; p++)
					*p = 'P';
		}
		if (uid && strstr(m, "expected response.uid=")) {
			const char *u = strstr(text, "expected response.uid=\\\"");
			char *g2 = strstr(got, "expected response.uid=\\\"");

			while (u && g2) {
				memcpy(g2 + 24, u + 24, 36);
				u = strstr(u + 1, "expected response.uid=\\\"");
				g2 = strstr(g2 + 1, "expected response.uid=\\\"");
			}
		}
		/* the blanked ports may differ in length */
		for (char *s = text, *d = text;; s++) {
			if (*s == 'P' && s > text && s[-1] == 'P')
				continue;
			if (!(*d++ = *s))
				break;
		}
		for (char *s = got, *d = got;; s++) {
			if (*s == 'P' && s > got && s[-1] == 'P')
				continue;
			if (!(*d++ = *s))
				break;
		}
		if (strcmp(text, got))
			fail_msg("%s: got\n  %s\nwant\n  %s", file, got, text);
		free(text);
		free(got);
	}
	json_decref(want);
	json_decref(f);
}

/* What the webhook got compared with the capture's webhook-N file. */
static void compare_call(const char *file, const json_t *call)
{
	static const char *const hdrs[] = { "User-Agent", "Accept",
					    "Content-Type", "Accept-Encoding" };
	static const char *const same[] = { "kind", "resource", "subResource",
		"requestKind", "requestResource", "requestSubResource", "name",
		"namespace", "operation", "userInfo", "dryRun", "options" };
	json_t *f = fixture(file);
	const json_t *wr, *gr;
	const char *k;
	json_t *v;
	size_t i;

	if (!f)
		return;
	assert_string_equal(str(call, "path"), str(f, "request.path"));
	for (i = 0; i < 4; i++) {
		const char *w = json_string_value(json_object_get(kerf_ta_path(f, "request.headers"), hdrs[i]));
		const char *g = json_string_value(json_object_get(json_object_get(call, "headers"), hdrs[i]));

		if (!g || !w || strcmp(w, g))
			fail_msg("%s: header %s: got %s, want %s", file, hdrs[i], g ? g : "(none)", w ? w : "(none)");
	}
	wr = kerf_ta_path(f, "request.body.request");
	gr = kerf_ta_path(call, "body.request");
	json_object_foreach((json_t *)wr, k, v)
		if (!json_object_get(gr, k))
			fail_msg("%s: the request lacks %s", file, k);
	json_object_foreach((json_t *)gr, k, v)
		if (!json_object_get(wr, k))
			fail_msg("%s: the request has %s, the real one not", file, k);
	for (i = 0; i < sizeof(same) / sizeof(*same); i++)
		if ((json_object_get(wr, same[i]) || json_object_get(gr, same[i])) &&
		    !json_equal(json_object_get(wr, same[i]), json_object_get(gr, same[i]))) {
			char *a = json_dumps(json_object_get(gr, same[i]), JSON_COMPACT | JSON_ENCODE_ANY);
			char *b = json_dumps(json_object_get(wr, same[i]), JSON_COMPACT | JSON_ENCODE_ANY);

			fail_msg("%s: %s: got %s, want %s", file, same[i], a, b);
		}
	/* the object's metadata keys the webhook saw (uid set or not) */
	if (json_is_object(json_object_get(wr, "object"))) {
		const json_t *wm = kerf_ta_path(wr, "object.metadata");
		const json_t *gm = kerf_ta_path(gr, "object.metadata");
		static const char *const stamps[] = { "uid", "creationTimestamp",
			"generation", "resourceVersion", "deletionTimestamp" };

		for (i = 0; i < 5; i++)
			if (!json_object_get(wm, stamps[i]) != !json_object_get(gm, stamps[i]))
				fail_msg("%s: object.metadata.%s present: got %d, want %d",
					 file, stamps[i], json_object_get(gm, stamps[i]) != NULL,
					 json_object_get(wm, stamps[i]) != NULL);
		if ((json_object_get(wm, "labels") || json_object_get(gm, "labels")) &&
		    !json_equal(json_object_get(wm, "labels"), json_object_get(gm, "labels")))
			fail_msg("%s: object.metadata.labels differ", file);
	}
	json_decref(f);
}

/* ---- live ------------------------------------------------------------ */

static void test_create_mutated_then_validated(void **state)
{
	struct reply r;
	json_t *c, *cfg;

	(void)state;
	r = send_req("POST", "/api/v1/namespaces/webhook-test/pods", NULL,
		     pod_body("wh1", ""));
	assert_int_equal(r.code, 201);
	assert_string_equal(meta(r.body, "labels", "kerf.io/mutated"), "true");
	assert_string_equal(meta(r.body, "annotations", "kerf.io/admitted-by"), "kerf-webhook");
	assert_int_equal(json_array_size(kerf_ta_path(r.body, "spec.tolerations")), 3);
	reply_free(&r);
	c = take_calls();
	assert_int_equal(json_array_size(c), 2);
	assert_string_equal(str(json_array_get(c, 0), "path"), "/mutate?timeout=10s");
	assert_string_equal(str(json_array_get(c, 1), "path"), "/validate?timeout=10s");
	assert_null(kerf_ta_path(json_array_get(c, 0), "body.request.object.metadata.uid"));
	assert_non_null(kerf_ta_path(json_array_get(c, 1), "body.request.object.metadata.uid"));
	assert_string_equal(meta(kerf_ta_path(json_array_get(c, 1), "body.request.object"),
				 "labels", "kerf.io/mutated"), "true");
	assert_string_equal(json_string_value(json_object_get(json_object_get(
		json_array_get(c, 0), "headers"), "User-Agent")), "kube-apiserver-admission");
	compare_call("pod-create.webhook-1-mutate.json", json_array_get(c, 0));
	compare_call("pod-create.webhook-2-validate.json", json_array_get(c, 1));
	json_decref(c);

	/* the stored configuration, defaulted as the real server does */
	r = send_req("GET", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/kerf-mutate",
		     NULL, NULL);
	cfg = json_array_get(json_object_get(r.body, "webhooks"), 0);
	assert_int_equal(json_integer_value(json_object_get(cfg, "timeoutSeconds")), 10);
	assert_string_equal(str(cfg, "reinvocationPolicy"), "Never");
	assert_string_equal(str(cfg, "matchPolicy"), "Equivalent");
	assert_string_equal(str(cfg, "failurePolicy"), "Fail");
	assert_string_equal(str(json_array_get(json_object_get(cfg, "rules"), 0), "scope"), "*");
	reply_free(&r);

	/* dryRun: called with dryRun true, nothing stored */
	r = send_req("POST", "/api/v1/namespaces/webhook-test/pods?dryRun=All", NULL,
		     pod_body("wh2", ""));
	assert_int_equal(r.code, 201);
	reply_free(&r);
	c = take_calls();
	assert_int_equal(json_array_size(c), 2);
	assert_true(json_is_true(kerf_ta_path(json_array_get(c, 0), "body.request.dryRun")));
	compare_call("pod-create-dryRun.webhook-1-mutate.json", json_array_get(c, 0));
	compare_call("pod-create-dryRun.webhook-2-validate.json", json_array_get(c, 1));
	json_decref(c);
}

static void deny_case(const char *label, long code, const char *msg,
		      const char *file)
{
	char extra[128];
	struct reply r;

	snprintf(extra, sizeof(extra), ",\"kerf.io/deny\":\"%s\"", label);
	r = send_req("POST", "/api/v1/namespaces/webhook-test/pods", NULL,
		     pod_body("wh-deny", extra));
	assert_int_equal(r.code, code);
	assert_string_equal(str(r.body, "message"), msg);
	compare_client(file, &r, NULL);
	reply_free(&r);
	json_decref(take_calls());
}

static void test_denials(void **state)
{
	struct reply r;

	(void)state;
	deny_case("403", 403, "admission webhook \"validate.kerf.io\" denied the request: tenant team-x has no GPU quota left (8/8 in use)",
		  "deny-403-message.client.json");
	deny_case("422", 422, "admission webhook \"validate.kerf.io\" denied the request: gang size must be a power of two",
		  "deny-422-reason-details.client.json");
	deny_case("plain", 400, "admission webhook \"validate.kerf.io\" denied the request without explanation",
		  "deny-no-status.client.json");
	r = send_req("GET", "/api/v1/namespaces/webhook-test/pods/wh-deny", NULL, NULL);
	assert_int_equal(r.code, 404);
	reply_free(&r);
}

static void test_warnings(void **state)
{
	struct reply r;

	(void)state;
	r = send_req("POST", "/api/v1/namespaces/webhook-test/pods", NULL,
		     pod_body("wh-warn", ",\"kerf.io/warn\":\"yes\""));
	assert_int_equal(r.code, 201);
	assert_int_equal(json_array_size(r.warnings), 2);
	assert_string_equal(json_string_value(json_array_get(r.warnings, 0)),
			    "299 - \"kerf.io/gang label missing: pod scheduled alone\"");
	assert_string_equal(json_string_value(json_array_get(r.warnings, 1)),
			    "299 - \"nvidia.com/gpu request rounded to a whole GPU\"");
	reply_free(&r);
	json_decref(take_calls());
}

static void failure_case(const char *label, long code, const char *msg_prefix,
			 const char *file, double min_s, double max_s)
{
	char extra[128], name[64];
	struct reply r;

	snprintf(extra, sizeof(extra), ",\"kerf.io/case\":\"%s\"", label);
	snprintf(name, sizeof(name), "wh-%s", label);
	r = send_req("POST", "/api/v1/namespaces/webhook-test/pods", NULL,
		     pod_body(name, extra));
	if (r.code != code) {
		char *t = json_dumps(r.body, JSON_COMPACT);

		fail_msg("%s: %ld %s", label, r.code, t);
	}
	if (msg_prefix) {
		assert_non_null(strstr(str(r.body, "message"), msg_prefix));
		assert_string_equal(str(r.body, "reason"), "InternalError");
		assert_string_equal(str(json_array_get(kerf_ta_path(r.body, "details.causes"), 0), "message"),
				    str(r.body, "message") + strlen("Internal error occurred: "));
	}
	if (r.secs < min_s || r.secs > max_s)
		fail_msg("%s: answered after %.2f s, want %.1f..%.1f", label, r.secs, min_s, max_s);
	if (file)
		compare_client(file, &r, "uid");
	reply_free(&r);
	json_decref(take_calls());
}

static void test_failure_policy(void **state)
{
	char want[256];

	(void)state;
	snprintf(want, sizeof(want),
		 "Internal error occurred: failed calling webhook \"down.kerf.io\": failed to call webhook: Post \"https://127.0.0.1:%u/validate?timeout=10s\": dial tcp 127.0.0.1:%u: connect: connection refused",
		 down_port, down_port);
	failure_case("down", 500, want, "webhook-down-failurePolicy-Fail.client.json", 0, 2);
	failure_case("down-ignore", 201, NULL, NULL, 0, 2);
	failure_case("baduid", 500,
		     "failed calling webhook \"baduid.kerf.io\": received invalid webhook response: expected response.uid=",
		     "webhook-response-wrong-uid.client.json", 0, 2);
	snprintf(want, sizeof(want),
		 "Internal error occurred: failed calling webhook \"slow.kerf.io\": failed to call webhook: Post \"https://127.0.0.1:%u/slow?timeout=1s\": context deadline exceeded",
		 hook_port);
	failure_case("slow", 500, want, NULL, 0.9, 1.9);
	failure_case("slow-ignore", 201, NULL, NULL, 0.9, 1.9);
}

struct slow_arg {
	struct reply r;
};

static void *slow_create(void *arg)
{
	struct slow_arg *a = arg;

	a->r = send_req("POST", "/api/v1/namespaces/webhook-test/pods", NULL,
			pod_body("wh-slow-2", ",\"kerf.io/case\":\"slow-ignore\""));
	return NULL;
}

/* Other requests are served while a webhook keeps one waiting. */
static void test_lock_released(void **state)
{
	struct slow_arg a;
	pthread_t t;
	struct reply r;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, slow_create, &a), 0);
	usleep(300 * 1000);
	r = send_req("GET", "/api/v1/namespaces/webhook-test/pods", NULL, NULL);
	assert_int_equal(r.code, 200);
	if (r.secs > 0.5)
		fail_msg("a list waited %.2f s behind a webhook call", r.secs);
	reply_free(&r);
	pthread_join(t, NULL);
	assert_int_equal(a.r.code, 201);
	reply_free(&a.r);
	json_decref(take_calls());
}

static void test_subresources(void **state)
{
	struct reply r;
	json_t *c;

	(void)state;
	/* wh1 of the first test, as the capture's steps use it */
	r = send_req("PATCH", "/api/v1/namespaces/webhook-test/pods/wh1",
		     "application/merge-patch+json",
		     "{\"metadata\":{\"labels\":{\"kerf.io/gang\":\"gw2\"}}}");
	assert_int_equal(r.code, 200);
	reply_free(&r);
	c = take_calls();
	assert_int_equal(json_array_size(c), 1);
	assert_string_equal(str(json_array_get(c, 0), "body.request.operation"), "UPDATE");
	assert_non_null(kerf_ta_path(json_array_get(c, 0), "body.request.oldObject.metadata"));
	compare_call("pod-update.webhook-1-validate.json", json_array_get(c, 0));
	json_decref(c);

	r = send_req("PATCH", "/api/v1/namespaces/webhook-test/pods/wh1/status",
		     "application/strategic-merge-patch+json",
		     "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\"}]}}");
	assert_int_equal(r.code, 200);
	reply_free(&r);
	c = take_calls();
	assert_int_equal(json_array_size(c), 1);
	assert_string_equal(str(json_array_get(c, 0), "body.request.subResource"), "status");
	json_decref(c);

	r = send_req("POST", "/api/v1/namespaces/webhook-test/pods/wh1/binding", NULL,
		     "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"wh1\",\"namespace\":\"webhook-test\"},"
		     "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"gpu-node-1\"}}");
	assert_int_equal(r.code, 201);
	reply_free(&r);
	c = take_calls();
	assert_int_equal(json_array_size(c), 1);
	assert_string_equal(str(json_array_get(c, 0), "body.request.kind.kind"), "Binding");
	assert_string_equal(str(json_array_get(c, 0), "body.request.subResource"), "binding");
	compare_call("pod-binding.webhook-1-validate.json", json_array_get(c, 0));
	json_decref(c);

	r = send_req("POST", "/api/v1/namespaces/webhook-test/pods/wh1/eviction", NULL,
		     "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"wh1\",\"namespace\":\"webhook-test\"}}");
	assert_int_equal(r.code, 201);
	reply_free(&r);
	c = take_calls();
	assert_int_equal(json_array_size(c), 1);   /* not the delete */
	assert_string_equal(str(json_array_get(c, 0), "body.request.kind.group"), "policy");
	compare_call("pod-eviction.webhook-1-validate.json", json_array_get(c, 0));
	json_decref(c);

	/* a Terminating pod deleted at once: two reviews, as the real one */
	r = send_req("DELETE", "/api/v1/namespaces/webhook-test/pods/wh1?gracePeriodSeconds=0", NULL, NULL);
	assert_int_equal(r.code, 200);
	reply_free(&r);
	c = take_calls();
	assert_int_equal(json_array_size(c), 2);
	assert_true(json_is_null(kerf_ta_path(json_array_get(c, 0), "body.request.object")));
	assert_int_equal(json_integer_value(kerf_ta_path(json_array_get(c, 1),
			 "body.request.oldObject.metadata.deletionGracePeriodSeconds")), 0);
	compare_call("pod-delete.webhook-1-validate.json", json_array_get(c, 0));
	compare_call("pod-delete.webhook-2-validate.json", json_array_get(c, 1));
	json_decref(c);
}

static void test_config_refused(void **state)
{
	struct reply r;

	(void)state;
	r = send_req("POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", NULL,
		     "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":\"ValidatingWebhookConfiguration\","
		     "\"metadata\":{\"name\":\"bad\"},\"webhooks\":[{\"name\":\"svc.kerf.io\","
		     "\"clientConfig\":{\"service\":{\"name\":\"s\",\"namespace\":\"n\"}},"
		     "\"admissionReviewVersions\":[\"v1\"],\"timeoutSeconds\":31}]}");
	assert_int_equal(r.code, 422);
	assert_string_equal(str(r.body, "message"),
			    "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"bad\" is invalid: ["
			    "webhooks[0].clientConfig.service: Forbidden: testapi cannot reach a Service (no cluster network): give clientConfig.url, "
			    "webhooks[0].sideEffects: Required value, "
			    "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds]");
	reply_free(&r);
	assert_int_equal(json_array_size(calls), 0);
}

int main(void)
{
	static const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_selectors),
		cmocka_unit_test(test_denial),
	};
	static const struct CMUnitTest live[] = {
		cmocka_unit_test(test_create_mutated_then_validated),
		cmocka_unit_test(test_denials),
		cmocka_unit_test(test_warnings),
		cmocka_unit_test(test_failure_policy),
		cmocka_unit_test(test_lock_released),
		cmocka_unit_test(test_subresources),
		cmocka_unit_test(test_config_refused),
	};
	const char *root = getenv("KERF_SOURCE_ROOT");
	DIR *d;
	int rc;

	/* the captures are compared where the reference material is */
	snprintf(fixtures, sizeof(fixtures),
		 "%s/../shared/fixtures/k8s/real-1.34.9/admission", root ? root : ".");
	d = opendir(fixtures);
	if (d)
		closedir(d);
	else {
		printf("# %s absent: the live checks run without the captures\n", fixtures);
		fixtures[0] = 0;
	}
	enum { NR_PURE = sizeof(pure) / sizeof(*pure),
	       NR_LIVE = sizeof(live) / sizeof(*live) };
	struct CMUnitTest tests[NR_PURE + NR_LIVE];
	size_t nr = NR_PURE;

	memcpy(tests, pure, sizeof(pure));
	/* the live ones need certificates (openssl); meson counts a skip
	 * inside a run as a failure, so they are not registered without */
	if (system("command -v openssl >/dev/null 2>&1") == 0) {
		memcpy(tests + nr, live, sizeof(live));
		nr += NR_LIVE;
	} else {
		printf("# openssl absent: the %d live tests not run\n", (int)NR_LIVE);
	}
	(void)rc;
	return _cmocka_run_group_tests("testapi_webhooks", tests, nr,
				       live_setup_maybe, live_teardown);
}
