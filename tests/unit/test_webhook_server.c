/*
 * test_webhook_server: the admission webhook's HTTPS server
 * (src/admission/server.h) on loopback, reached with libcurl over TLS and
 * the server's certificate verified against the test CA.  Certificates are
 * made for the run by webhook_certs.sh (the openssl tool; without it the
 * whole program is skipped).  The handler is the policy-free
 * allow_handler, wrapped to record the deadline it was given.
 */
#define _DEFAULT_SOURCE                 /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <stdatomic.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "admission/allow_handler.h"
#include "admission/review.h"
#include "admission/server.h"
#include "base/buf.h"

static char dir[64];
static char cert_path[128], key_path[128], ca_path[128];

static struct kerf_webhook_allow_cfg allow_cfg = { .deny_label = "deny-me" };
static atomic_llong last_deadline_ms;
static atomic_llong last_called_ms;
static atomic_bool ready_flag;

static int recording_review(void *ctx, const char *path, const char *body,
			    size_t len, int64_t deadline_ms,
			    struct kerf_webhook_answer *ans)
{
	atomic_store(&last_deadline_ms, deadline_ms);
	atomic_store(&last_called_ms, kerf_webhook_now_ms());
	return kerf_webhook_allow_review(ctx, path, body, len, deadline_ms,
					 ans);
}

static bool is_ready(void *ctx)
{
	(void)ctx;
	return atomic_load(&ready_flag);
}

static void quiet_log(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "# webhook: %s\n", msg);
}

static const struct kerf_webhook_route routes[] = {
	{ .path = "/validate", .fn = recording_review, .ctx = &allow_cfg },
	{ .path = "/mutate", .fn = recording_review, .ctx = &allow_cfg },
};

static struct kerf_webhook_server *start(int64_t reload_interval_ms)
{
	struct kerf_webhook_opts o = {
		.addr = "127.0.0.1:0",
		.cert_path = cert_path,
		.key_path = key_path,
		.routes = routes,
		.nr_routes = 2,
		.reload_interval_ms = reload_interval_ms,
		.ready = is_ready,
		.log = quiet_log,
	};
	struct kerf_webhook_server *s = NULL;
	struct kerf_err err = { 0 };

	assert_int_equal(kerf_webhook_start(&o, &s, &err), 0);
	assert_non_null(s);
	assert_int_not_equal(kerf_webhook_port(s), 0);
	return s;
}

/* Make file dst a copy of src, atomically (write aside, rename). */
static void install(const char *src, const char *dst)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "cp '%s/%s' '%s.tmp' && mv '%s.tmp' '%s'",
		 dir, src, dst, dst, dst);
	assert_int_equal(system(cmd), 0);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* ---- the client ------------------------------------------------------ */

struct resp {
	CURLcode cc;
	long code;
	long connects;                  /* new connections this request made */
	struct kerf_buf body;
	struct kerf_buf headers;
	char subject[256];              /* the server certificate's */
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct kerf_buf *b = ud;

	return kerf_buf_add(b, p, size * n) < 0 ? 0 : size * n;
}

/* The body as a slow client sends it: each read waits first. */
struct slow_body {
	const char *data;
	size_t len, off;
	int delay_ms;
};

static size_t slow_read(char *p, size_t size, size_t n, void *ud)
{
	struct slow_body *sb = ud;
	size_t k = sb->len - sb->off;
	struct timespec ts = { 0, (long)sb->delay_ms * 1000000 };

	if (sb->delay_ms)
		nanosleep(&ts, NULL);
	if (k > size * n)
		k = size * n;
	memcpy(p, sb->data + sb->off, k);
	sb->off += k;
	return k;
}

/* Endless zeros, to send a chunked body past any limit. */
static size_t zeros_read(char *p, size_t size, size_t n, void *ud)
{
	size_t *left = ud, k = size * n < *left ? size * n : *left;

	memset(p, '0', k);
	*left -= k;
	return k;
}

static CURL *client(void)
{
	CURL *h = curl_easy_init();

	assert_non_null(h);
	curl_easy_setopt(h, CURLOPT_CAINFO, ca_path);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(h, CURLOPT_SSL_SESSIONID_CACHE, 0L);
	curl_easy_setopt(h, CURLOPT_CERTINFO, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	return h;
}

static void request(CURL *h, uint16_t port, const char *method,
		    const char *path, const char *ctype, const char *body,
		    struct slow_body *slow, struct resp *r)
{
	struct curl_slist *hdrs = NULL;
	struct curl_certinfo *ci = NULL;
	char url[256], line[128];

	memset(r, 0, sizeof(*r));
	kerf_buf_init(&r->body, 0);
	kerf_buf_init(&r->headers, 0);
	snprintf(url, sizeof(url), "https://127.0.0.1:%u%s", port, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_NOBODY, !strcmp(method, "HEAD") ? 1L : 0L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &r->body);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &r->headers);
	if (ctype) {
		snprintf(line, sizeof(line), "Content-Type: %s", ctype);
		hdrs = curl_slist_append(hdrs, line);
	}
	hdrs = curl_slist_append(hdrs, "Expect:");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	if (slow) {
		curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(h, CURLOPT_READFUNCTION, slow_read);
		curl_easy_setopt(h, CURLOPT_READDATA, slow);
		curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE,
				 (curl_off_t)slow->len);
	} else if (body) {
		curl_easy_setopt(h, CURLOPT_UPLOAD, 0L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)strlen(body));
	} else {
		curl_easy_setopt(h, CURLOPT_UPLOAD, 0L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	}
	r->cc = curl_easy_perform(h);
	curl_slist_free_all(hdrs);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->code);
	curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &r->connects);
	if (curl_easy_getinfo(h, CURLINFO_CERTINFO, &ci) == CURLE_OK && ci &&
	    ci->num_of_certs > 0)
		for (struct curl_slist *sl = ci->certinfo[0]; sl; sl = sl->next)
			if (!strncmp(sl->data, "Subject:", 8))
				snprintf(r->subject, sizeof(r->subject), "%s",
					 sl->data);
}

static void resp_release(struct resp *r)
{
	kerf_buf_release(&r->body);
	kerf_buf_release(&r->headers);
}

/* One request on a fresh handle. */
static void request1(uint16_t port, const char *method, const char *path,
		     const char *ctype, const char *body, struct resp *r)
{
	CURL *h = client();

	request(h, port, method, path, ctype, body, NULL, r);
	curl_easy_cleanup(h);
}

static char *review_body(const char *uid, const char *labels)
{
	static const char fmt[] =
		"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
		"\"request\":{\"uid\":\"%s\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
		"\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
		"\"name\":\"p\",\"namespace\":\"ns\",\"operation\":\"CREATE\","
		"\"userInfo\":{\"username\":\"u\"},"
		"\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
		"\"metadata\":{\"name\":\"p\",\"labels\":{%s}}}}}";
	char *s = malloc(sizeof(fmt) + strlen(uid) + strlen(labels));

	assert_non_null(s);
	sprintf(s, fmt, uid, labels);
	return s;
}

static char *metrics(struct kerf_webhook_server *s)
{
	struct kerf_buf b;

	kerf_buf_init(&b, 0);
	assert_int_equal(kerf_webhook_metrics_render(s, &b), 0);
	return kerf_buf_detach(&b, NULL);
}

/* The value of the sample line that starts with name (with its labels). */
static double sample(struct kerf_webhook_server *s, const char *name)
{
	char *text = metrics(s), *p = text;
	size_t n = strlen(name);
	double v = -1;

	while (p && *p) {
		if (!strncmp(p, name, n) && p[n] == ' ') {
			v = strtod(p + n + 1, NULL);
			break;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	free(text);
	return v;
}

/* ---- tests ----------------------------------------------------------- */

static void test_timeout_parse(void **state)
{
	static const struct {
		const char *s;
		int64_t ms;              /* -1: refused */
	} cases[] = {
		{ "10s", 10000 }, { "30s", 30000 }, { "1s", 1000 },
		{ "1.5s", 1500 }, { "500ms", 500 }, { "1m30s", 90000 },
		{ "2h", 7200000 }, { "+3s", 3000 }, { ".5s", 500 },
		{ "1.s", 1000 }, { "1500000us", 1500 },
		{ "1500000\xc2\xb5s", 1500 }, { "2000000000ns", 2000 },
		{ "24h", 86400000 },
		{ "", -1 }, { "10", -1 }, { "s", -1 }, { "-1s", -1 },
		{ "0s", -1 }, { "0.5ms", -1 }, { "1x", -1 }, { "10 s", -1 },
		{ "24h1s", -1 }, { "99999999999999999999s", -1 },
		{ "1.5.5s", -1 }, { "1sm", -1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t ms = -7;
		int rc = kerf_webhook_timeout_parse(cases[i].s, &ms);

		if (cases[i].ms < 0) {
			if (rc != -KERF_EINVAL)
				fail_msg("'%s' accepted as %lld ms", cases[i].s,
					 (long long)ms);
		} else if (rc != 0 || ms != cases[i].ms) {
			fail_msg("'%s': rc %d, %lld ms, expected %lld",
				 cases[i].s, rc, (long long)ms,
				 (long long)cases[i].ms);
		}
	}
}

static void test_start_refuses(void **state)
{
	struct kerf_webhook_route bad[] = {
		{ .path = "/healthz", .fn = recording_review },
	};
	struct kerf_webhook_opts o = {
		.addr = "127.0.0.1:0", .cert_path = cert_path,
		.key_path = key_path, .routes = bad, .nr_routes = 1,
		.log = quiet_log,
	};
	struct kerf_webhook_server *s = NULL;
	struct kerf_err err = { 0 };
	char missing[160];

	(void)state;
	assert_int_equal(kerf_webhook_start(&o, &s, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "webhook route '/healthz'"));
	o.routes = routes;
	o.nr_routes = 2;
	o.addr = "nowhere";
	memset(&err, 0, sizeof(err));
	assert_int_equal(kerf_webhook_start(&o, &s, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "address 'nowhere'"));
	o.addr = "127.0.0.1:0";
	snprintf(missing, sizeof(missing), "%s/none.key", dir);
	o.key_path = missing;
	memset(&err, 0, sizeof(err));
	assert_int_equal(kerf_webhook_start(&o, &s, &err), -KERF_EIO);
	assert_non_null(strstr(err.msg, "none.key"));
	assert_null(s);
}

static void test_review_round_trip(void **state)
{
	struct kerf_webhook_server *s = start(-1);
	uint16_t port = kerf_webhook_port(s);
	char *allow = review_body("uid-allow", "\"app\":\"x\"");
	char *deny = review_body("uid-deny", "\"deny-me\":\"1\"");
	struct resp r;

	(void)state;
	request1(port, "POST", "/validate?timeout=10s", "application/json",
		 allow, &r);
	assert_int_equal(r.cc, CURLE_OK);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.subject, "kerf-webhook-a"));
	assert_non_null(strstr(kerf_buf_str(&r.headers),
			       "Content-Type: application/json"));
	assert_string_equal(kerf_buf_str(&r.body),
			    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
			    "\"response\":{\"uid\":\"uid-allow\",\"allowed\":true}}");
	resp_release(&r);

	request1(port, "POST", "/mutate?timeout=10s",
		 "application/json; charset=utf-8", deny, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(kerf_buf_str(&r.body), "\"allowed\":false"));
	assert_non_null(strstr(kerf_buf_str(&r.body),
			       "metadata.labels[deny-me]: denied by the test handler"));
	resp_release(&r);

	/* not an AdmissionReview: 400 with the codec's message */
	request1(port, "POST", "/validate", "application/json",
		 "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\"}",
		 &r);
	assert_int_equal(r.code, 400);
	assert_non_null(strstr(kerf_buf_str(&r.body), "v1beta1"));
	assert_non_null(strstr(kerf_buf_str(&r.body), "\"code\":400"));
	resp_release(&r);

	assert_true(sample(s, "kerf_webhook_requests_total{path=\"/validate\",verdict=\"allowed\"}") == 1);
	assert_true(sample(s, "kerf_webhook_requests_total{path=\"/mutate\",verdict=\"denied\"}") == 1);
	assert_true(sample(s, "kerf_webhook_requests_total{path=\"/validate\",verdict=\"error\"}") == 1);
	assert_true(sample(s, "kerf_webhook_denials_total{rule=\"deny-label\"}") == 1);
	assert_true(sample(s, "kerf_webhook_request_duration_seconds_count{path=\"/validate\"}") == 2);
	assert_true(sample(s, "kerf_webhook_request_duration_seconds_bucket{path=\"/validate\",le=\"+Inf\"}") == 2);
	assert_true(sample(s, "kerf_webhook_request_duration_seconds_bucket{path=\"/validate\",le=\"1\"}") == 2);
	assert_true(sample(s, "kerf_webhook_http_errors_total{code=\"400\"}") == 1);
	free(allow);
	free(deny);
	kerf_webhook_stop(s);
}

static void test_refusals(void **state)
{
	struct kerf_webhook_server *s = start(-1);
	uint16_t port = kerf_webhook_port(s);
	char *body = review_body("u", "");
	size_t big_len = (size_t)KERF_ADMISSION_BODY_MAX_BYTES + 1;
	char *big = malloc(big_len + 1);
	struct resp r;
	CURL *h;

	(void)state;
	request1(port, "GET", "/validate", NULL, NULL, &r);
	assert_int_equal(r.code, 405);
	assert_non_null(strstr(kerf_buf_str(&r.headers), "Allow: POST"));
	resp_release(&r);
	request1(port, "POST", "/nope", "application/json", body, &r);
	assert_int_equal(r.code, 404);
	resp_release(&r);
	request1(port, "POST", "/validate", "text/plain", body, &r);
	assert_int_equal(r.code, 415);
	resp_release(&r);
	request1(port, "POST", "/validate", NULL, body, &r);
	assert_int_equal(r.code, 415);  /* curl's default form type */
	resp_release(&r);
	request1(port, "POST", "/healthz", "application/json", body, &r);
	assert_int_equal(r.code, 405);
	assert_non_null(strstr(kerf_buf_str(&r.headers), "Allow: GET, HEAD"));
	resp_release(&r);

	/* over the limit by Content-Length: refused before the body */
	assert_non_null(big);
	memset(big, ' ', big_len);
	big[big_len] = '\0';
	h = client();
	{
		struct curl_slist *hd = curl_slist_append(NULL,
			"Content-Type: application/json");
		char url[64];

		hd = curl_slist_append(hd, "Expect: 100-continue");
		snprintf(url, sizeof(url), "https://127.0.0.1:%u/validate", port);
		curl_easy_setopt(h, CURLOPT_URL, url);
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, big);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)big_len);
		curl_easy_setopt(h, CURLOPT_EXPECT_100_TIMEOUT_MS, 10000L);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
		kerf_buf_init(&r.body, 0);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
		assert_int_equal(curl_easy_perform(h), CURLE_OK);
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.code);
		assert_int_equal(r.code, 413);
		kerf_buf_release(&r.body);
		curl_slist_free_all(hd);
	}
	curl_easy_cleanup(h);

	/* over the limit by bytes received (chunked, no Content-Length) */
	h = client();
	{
		struct curl_slist *hd = curl_slist_append(NULL,
			"Content-Type: application/json");
		size_t left = 64 * (size_t)1024 * 1024;
		char url[64];
		CURLcode cc;

		hd = curl_slist_append(hd, "Transfer-Encoding: chunked");
		hd = curl_slist_append(hd, "Expect:");
		snprintf(url, sizeof(url), "https://127.0.0.1:%u/validate", port);
		curl_easy_setopt(h, CURLOPT_URL, url);
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_READFUNCTION, zeros_read);
		curl_easy_setopt(h, CURLOPT_READDATA, &left);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
		kerf_buf_init(&r.body, 0);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
		cc = curl_easy_perform(h);
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.code);
		/* libmicrohttpd 0.9.75 closes rather than answer mid-body */
		if (cc == CURLE_OK)
			assert_int_equal(r.code, 413);
		/* the server stopped reading: the rest was never sent */
		assert_true(left > 0);
		kerf_buf_release(&r.body);
		curl_slist_free_all(hd);
	}
	curl_easy_cleanup(h);

	assert_true(sample(s, "kerf_webhook_http_errors_total{code=\"405\"}") == 2);
	assert_true(sample(s, "kerf_webhook_http_errors_total{code=\"404\"}") == 1);
	assert_true(sample(s, "kerf_webhook_http_errors_total{code=\"415\"}") == 2);
	assert_true(sample(s, "kerf_webhook_http_errors_total{code=\"413\"}") == 2);
	/* 405, 415 x2, 413 x2 on /validate: answered without the handler */
	assert_true(sample(s, "kerf_webhook_requests_total{path=\"/validate\",verdict=\"refused\"}") == 5);
	free(big);
	free(body);
	kerf_webhook_stop(s);
}

static void test_health_ready_metrics(void **state)
{
	struct kerf_webhook_server *s = start(-1);
	uint16_t port = kerf_webhook_port(s);
	struct resp r;

	(void)state;
	request1(port, "GET", "/healthz", NULL, NULL, &r);
	assert_int_equal(r.code, 200);
	assert_string_equal(kerf_buf_str(&r.body), "ok\n");
	resp_release(&r);
	atomic_store(&ready_flag, false);
	request1(port, "GET", "/readyz", NULL, NULL, &r);
	assert_int_equal(r.code, 503);
	resp_release(&r);
	atomic_store(&ready_flag, true);
	request1(port, "GET", "/readyz", NULL, NULL, &r);
	assert_int_equal(r.code, 200);
	resp_release(&r);
	request1(port, "GET", "/metrics", NULL, NULL, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(kerf_buf_str(&r.body),
			       "# TYPE kerf_webhook_requests_total counter\n"));
	assert_non_null(strstr(kerf_buf_str(&r.body),
			       "kerf_webhook_http_errors_total{code=\"503\"} 1\n"));
	assert_non_null(strstr(kerf_buf_str(&r.body),
			       "kerf_webhook_cert_reloads_total{result=\"success\"} 0\n"));
	assert_non_null(strstr(kerf_buf_str(&r.body),
			       "kerf_webhook_request_duration_seconds_bucket{path=\"/mutate\",le=\"0.0005\"} 0\n"));
	resp_release(&r);
	/* the certificate expires in 2 days (webhook_certs.sh) */
	{
		double t = sample(s, "kerf_webhook_cert_expiry_timestamp_seconds");
		double now = (double)time(NULL);

		assert_true(t > now + 86400 && t < now + 3 * 86400);
	}
	kerf_webhook_stop(s);
}

static void test_timeouts(void **state)
{
	struct kerf_webhook_server *s = start(-1);
	uint16_t port = kerf_webhook_port(s);
	char *body = review_body("u", "");
	struct slow_body slow = { body, strlen(body), 0, 0 };
	int64_t before, d;
	struct resp r;
	CURL *h;

	(void)state;
	/* ?timeout=2s: the deadline is arrival + 2 s - 100 ms */
	before = kerf_webhook_now_ms();
	request1(port, "POST", "/validate?timeout=2s", "application/json",
		 body, &r);
	assert_int_equal(r.code, 200);
	resp_release(&r);
	d = atomic_load(&last_deadline_ms) - before;
	assert_true(d >= 1900 && d <= 1900 + 1000);

	/* a bad value: ignored, the default 10 s, counted */
	before = kerf_webhook_now_ms();
	request1(port, "POST", "/validate?timeout=soon", "application/json",
		 body, &r);
	assert_int_equal(r.code, 200);
	resp_release(&r);
	d = atomic_load(&last_deadline_ms) - before;
	assert_true(d >= 9900 && d <= 9900 + 1000);
	assert_true(sample(s, "kerf_webhook_bad_timeout_total") == 1);

	/* headers at once, the body 300 ms later, past a 100 ms timeout
	 * (50 ms kept back): 503 without calling the handler */
	atomic_store(&last_called_ms, 0);
	slow.delay_ms = 300;
	h = client();
	request(h, port, "POST", "/validate?timeout=100ms", "application/json",
		NULL, &slow, &r);
	curl_easy_cleanup(h);
	assert_int_equal(r.cc, CURLE_OK);
	assert_int_equal(r.code, 503);
	resp_release(&r);
	assert_int_equal(atomic_load(&last_called_ms), 0);
	assert_true(sample(s, "kerf_webhook_late_total") == 1);
	free(body);
	kerf_webhook_stop(s);
}

static void wait_for(struct kerf_webhook_server *s, const char *name,
		     double want)
{
	for (int i = 0; i < 500; i++) {
		struct timespec ts = { 0, 10000000 };

		if (sample(s, name) == want)
			return;
		nanosleep(&ts, NULL);
	}
	fail_msg("%s never reached %g", name, want);
}

/*
 * The pair is swapped as the kubelet updates a Secret volume: the files
 * are reached through a directory symlink, replaced in one rename.
 */
static void swap_pair(const char *pair)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && mkdir -p 'pair-%s' && cp '%s.crt' 'pair-%s/tls.crt' && "
		 "cp '%s.key' 'pair-%s/tls.key' && ln -sfn 'pair-%s' live.tmp && "
		 "mv -T live.tmp live",
		 dir, pair, pair, pair, pair, pair, pair);
	assert_int_equal(system(cmd), 0);
}

static void test_hot_reload(void **state)
{
	struct kerf_webhook_opts o = {
		.addr = "127.0.0.1:0",
		.routes = routes,
		.nr_routes = 2,
		.reload_interval_ms = 50,
		.log = quiet_log,
	};
	struct kerf_webhook_server *s = NULL;
	struct kerf_err err = { 0 };
	char *body = review_body("u", "");
	char live_crt[160], live_key[160], garbage[160];
	uint16_t port;
	struct resp r;
	CURL *old;

	(void)state;
	swap_pair("a");
	snprintf(live_crt, sizeof(live_crt), "%s/live/tls.crt", dir);
	snprintf(live_key, sizeof(live_key), "%s/live/tls.key", dir);
	o.cert_path = live_crt;
	o.key_path = live_key;
	assert_int_equal(kerf_webhook_start(&o, &s, &err), 0);
	port = kerf_webhook_port(s);
	/* a keep-alive connection opened with pair a */
	old = client();
	request(old, port, "POST", "/validate", "application/json", body,
		NULL, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.subject, "kerf-webhook-a"));
	resp_release(&r);

	/* swap in pair b: new connections see b */
	swap_pair("b");
	wait_for(s, "kerf_webhook_cert_reloads_total{result=\"success\"}", 1);
	request1(port, "GET", "/healthz", NULL, NULL, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.subject, "kerf-webhook-b"));
	resp_release(&r);
	/* the old connection carries on, on the same connection */
	request(old, port, "POST", "/validate", "application/json", body,
		NULL, &r);
	assert_int_equal(r.code, 200);
	assert_int_equal(r.connects, 0);
	resp_release(&r);
	curl_easy_cleanup(old);

	/* a garbage key: refused, b still serves */
	snprintf(garbage, sizeof(garbage), "%s/garbage.key", dir);
	write_file(garbage, "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n");
	install("garbage.key", live_key);
	wait_for(s, "kerf_webhook_cert_reloads_total{result=\"failure\"}", 1);
	request1(port, "GET", "/healthz", NULL, NULL, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.subject, "kerf-webhook-b"));
	resp_release(&r);
	/* a key that is not the certificate's: refused too */
	install("a.key", live_key);
	wait_for(s, "kerf_webhook_cert_reloads_total{result=\"failure\"}", 2);
	request1(port, "GET", "/healthz", NULL, NULL, &r);
	assert_non_null(strstr(r.subject, "kerf-webhook-b"));
	resp_release(&r);
	/* and the matching certificate completes pair a again */
	install("a.crt", live_crt);
	wait_for(s, "kerf_webhook_cert_reloads_total{result=\"success\"}", 2);
	request1(port, "GET", "/healthz", NULL, NULL, &r);
	assert_non_null(strstr(r.subject, "kerf-webhook-a"));
	resp_release(&r);
	assert_int_equal(kerf_webhook_reload_check(s), 0);
	assert_true(sample(s, "kerf_webhook_cert_reloads_total{result=\"failure\"}") == 2);
	free(body);
	kerf_webhook_stop(s);
}

/* An idle server, its reload thread included, costs no CPU. */
static void test_idle(void **state)
{
	struct kerf_webhook_server *s = start(0);   /* reload every 1 s */
	struct timespec a, b, nap = { 0, 300000000 };
	int64_t used_us;

	(void)state;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	nanosleep(&nap, NULL);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	used_us = (b.tv_sec - a.tv_sec) * 1000000 +
		  (b.tv_nsec - a.tv_nsec) / 1000;
	if (used_us > 30000)
		fail_msg("%lld us of CPU in 300 ms idle", (long long)used_us);
	kerf_webhook_stop(s);
}

struct worker {
	uint16_t port;
	int ok;
	int requests;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char uid[32], *body;
	CURL *h = curl_easy_init();
	struct curl_slist *hd = curl_slist_append(NULL,
		"Content-Type: application/json");
	char url[64];

	snprintf(uid, sizeof(uid), "uid-%p", (void *)w);
	body = review_body(uid, "\"app\":\"x\"");
	snprintf(url, sizeof(url), "https://127.0.0.1:%u/validate?timeout=10s",
		 w->port);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CAINFO, ca_path);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
	for (int i = 0; i < w->requests; i++) {
		struct kerf_buf b;
		long code = 0;

		kerf_buf_init(&b, 0);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
		if (curl_easy_perform(h) == CURLE_OK &&
		    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK &&
		    code == 200 && strstr(kerf_buf_str(&b), uid) &&
		    strstr(kerf_buf_str(&b), "\"allowed\":true"))
			w->ok++;
		kerf_buf_release(&b);
	}
	curl_slist_free_all(hd);
	curl_easy_cleanup(h);
	free(body);
	return NULL;
}

static void test_concurrency(void **state)
{
	enum { THREADS = 50, REQUESTS = 20 };
	struct kerf_webhook_server *s = start(-1);
	struct worker w[THREADS];
	pthread_t t[THREADS];
	int ok = 0;

	(void)state;
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ kerf_webhook_port(s), 0, REQUESTS };
		assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		ok += w[i].ok;
	}
	assert_int_equal(ok, THREADS * REQUESTS);
	assert_true(sample(s, "kerf_webhook_requests_total{path=\"/validate\",verdict=\"allowed\"}") ==
		    THREADS * REQUESTS);
	kerf_webhook_stop(s);
}

static int group_setup(void **state)
{
	const char *root = getenv("KERF_SOURCE_ROOT");
	char cmd[512];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/kerf-test-webhook-XXXXXX");
	if (!mkdtemp(dir) || !root)
		return -1;
	snprintf(cmd, sizeof(cmd), "sh '%s/tests/unit/webhook_certs.sh' '%s'",
		 root, dir);
	if (system(cmd) != 0)
		return -1;
	snprintf(cert_path, sizeof(cert_path), "%s/serving.crt", dir);
	snprintf(key_path, sizeof(key_path), "%s/serving.key", dir);
	snprintf(ca_path, sizeof(ca_path), "%s/ca.crt", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s/a.crt' '%s' && cp '%s/a.key' '%s'",
		 dir, cert_path, dir, key_path);
	if (system(cmd) != 0)
		return -1;
	atomic_store(&ready_flag, true);
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

static int group_teardown(void **state)
{
	char cmd[128];

	(void)state;
	curl_global_cleanup();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeout_parse),
		cmocka_unit_test(test_start_refuses),
		cmocka_unit_test(test_review_round_trip),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_health_ready_metrics),
		cmocka_unit_test(test_timeouts),
		cmocka_unit_test(test_hot_reload),
		cmocka_unit_test(test_idle),
		cmocka_unit_test(test_concurrency),
	};

	if (system("command -v openssl >/dev/null 2>&1") != 0) {
		printf("1..0 # SKIP the openssl tool is missing\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
