/*
 * Unit tests for the client's pure parts: the token bucket (exact, with
 * the clock given), backoff with full jitter (exact, with the rng seeded),
 * the retry budget, Status decoding and classes, Retry-After, the watch
 * line splitter across chunk boundaries, the watch event decoder, and
 * query encoding.
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
#include "kube/lines.h"
#include "kube/query.h"
#include "kube/ratelimit.h"
#include "kube/retry.h"
#include "kube/status.h"
#include "kube/watch_event.h"

static void test_ratelimit_exact(void **state)
{
	struct kerf_kube_ratelimit rl;
	int i;

	(void)state;
	/* 10 QPS, burst 3: three at once, then one per 100 ms */
	kerf_kube_ratelimit_init(&rl, 10000, 3, 1000);
	for (i = 0; i < 3; i++)
		assert_int_equal(kerf_kube_ratelimit_take(&rl, 1000), 0);
	assert_int_equal(kerf_kube_ratelimit_take(&rl, 1000), 100);
	assert_int_equal(kerf_kube_ratelimit_take(&rl, 1040), 60);
	assert_int_equal(kerf_kube_ratelimit_take(&rl, 1100), 0);
	assert_int_equal(kerf_kube_ratelimit_take(&rl, 1100), 100);
	/* a long idle refills only up to the burst */
	for (i = 0; i < 3; i++)
		assert_int_equal(kerf_kube_ratelimit_take(&rl, 99999999), 0);
	assert_int_equal(kerf_kube_ratelimit_take(&rl, 99999999), 100);
	/* a clock going back gives nothing */
	assert_int_equal(kerf_kube_ratelimit_take(&rl, 5), 100);
	/* 0.5 QPS: 2000 ms per token, exactly */
	kerf_kube_ratelimit_init(&rl, 500, 1, 0);
	assert_int_equal(kerf_kube_ratelimit_take(&rl, 0), 0);
	assert_int_equal(kerf_kube_ratelimit_take(&rl, 1), 1999);
	assert_int_equal(kerf_kube_ratelimit_take(&rl, 2000), 0);
	/* 3 QPS: 333.33 ms per token, rounded up */
	kerf_kube_ratelimit_init(&rl, 3000, 1, 0);
	assert_int_equal(kerf_kube_ratelimit_take(&rl, 0), 0);
	assert_int_equal(kerf_kube_ratelimit_take(&rl, 0), 334);
	assert_int_equal(kerf_kube_ratelimit_take(&rl, 333), 1);
	assert_int_equal(kerf_kube_ratelimit_take(&rl, 334), 0);
	/* no limit */
	kerf_kube_ratelimit_init(&rl, 0, 0, 0);
	for (i = 0; i < 1000; i++)
		assert_int_equal(kerf_kube_ratelimit_take(&rl, 0), 0);
}

static void test_backoff_full_jitter(void **state)
{
	struct kerf_kube_backoff b = { .base_ms = 100, .cap_ms = 1000,
				       .max_retry_after_ms = 5000 };
	struct kerf_rng rng, ref;
	unsigned a;
	uint64_t ceiling;

	(void)state;
	kerf_rng_seed(&rng, 42);
	kerf_rng_seed(&ref, 42);
	for (a = 0; a < 8; a++) {
		ceiling = 100u << a;
		if (ceiling > 1000)
			ceiling = 1000;
		/* exactly the draw a reference makes from the same seed */
		assert_int_equal(kerf_kube_backoff_ms(&b, a, -1, &rng),
				 kerf_rng_below(&ref, ceiling + 1));
	}
	/* Retry-After wins, capped; no draw is made */
	assert_int_equal(kerf_kube_backoff_ms(&b, 3, 2, &rng), 2000);
	assert_int_equal(kerf_kube_backoff_ms(&b, 3, 0, &rng), 0);
	assert_int_equal(kerf_kube_backoff_ms(&b, 3, 3600, &rng), 5000);
	assert_int_equal(kerf_kube_backoff_ms(&b, 0, -1, &rng),
			 kerf_rng_below(&ref, 101));
	/* huge attempt numbers do not overflow */
	assert_true(kerf_kube_backoff_ms(&b, 1000, -1, &rng) <= 1000);
}

static void test_retry_budget(void **state)
{
	struct kerf_kube_retry_budget b;
	int i;

	(void)state;
	kerf_kube_retry_budget_init(&b, 10, 100);
	for (i = 0; i < 5; i++)
		assert_true(kerf_kube_retry_budget_take(&b));
	assert_false(kerf_kube_retry_budget_take(&b));    /* half left */
	for (i = 0; i < 10; i++)
		kerf_kube_retry_budget_success(&b);          /* +1 token */
	assert_true(kerf_kube_retry_budget_take(&b));
	assert_false(kerf_kube_retry_budget_take(&b));
	for (i = 0; i < 1000; i++)
		kerf_kube_retry_budget_success(&b);
	assert_int_equal(b.tokens_milli, 10000);
}

static void test_status_decode(void **state)
{
	struct kerf_kube_status st;
	const char *s504 = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"Timeout: Too large resource version: 100218, current: 227\",\"reason\":\"Timeout\",\"details\":{\"causes\":[{\"reason\":\"ResourceVersionTooLarge\",\"message\":\"Too large resource version\"}],\"retryAfterSeconds\":1},\"code\":504}";
	const char *s409 = "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"pods \\\"a\\\" already exists\",\"reason\":\"AlreadyExists\",\"details\":{\"name\":\"a\",\"kind\":\"pods\"},\"code\":409}";

	(void)state;
	assert_true(kerf_kube_status_decode(&st, s504, strlen(s504)));
	assert_int_equal(st.code, 504);
	assert_string_equal(st.reason, "Timeout");
	assert_string_equal(st.cause, "ResourceVersionTooLarge");
	assert_int_equal(st.retry_after_s, 1);
	assert_int_equal(kerf_kube_classify(504, st.reason), KERF_KUBE_SERVER_TIMEOUT);
	assert_true(kerf_kube_status_decode(&st, s409, strlen(s409)));
	assert_string_equal(st.name, "a");
	assert_string_equal(st.kind, "pods");
	assert_string_equal(st.message, "pods \"a\" already exists");
	assert_int_equal(st.retry_after_s, -1);
	assert_int_equal(kerf_kube_classify(409, st.reason), KERF_KUBE_ALREADY_EXISTS);
	assert_int_equal(kerf_kube_class_errno(KERF_KUBE_ALREADY_EXISTS), -KERF_EEXIST);
	/* not a Status: nothing decoded, never an error */
	assert_false(kerf_kube_status_decode(&st, "404 page not found", 18));
	assert_false(st.decoded);
	assert_false(kerf_kube_status_decode(&st, "{\"kind\":\"Pod\"}", 14));
	assert_false(kerf_kube_status_decode(&st, NULL, 0));
	assert_true(kerf_kube_status_decode(&st, "{\"kind\":\"Status\",\"code\":\"x\",\"details\":{\"retryAfterSeconds\":-4}}", 63));
	assert_int_equal(st.code, 0);
	assert_int_equal(st.retry_after_s, -1);
}

static void test_classify(void **state)
{
	static const struct {
		long http;
		const char *reason;
		enum kerf_kube_class c;
		int err;
	} cases[] = {
		{ 0, NULL, KERF_KUBE_TRANSPORT, -KERF_ETRANSPORT },
		{ 200, NULL, KERF_KUBE_OK, 0 },
		{ 201, "", KERF_KUBE_OK, 0 },
		{ 400, "BadRequest", KERF_KUBE_BAD_REQUEST, -KERF_EHTTP },
		{ 401, "Unauthorized", KERF_KUBE_UNAUTHORIZED, -KERF_EHTTP },
		{ 403, "Forbidden", KERF_KUBE_FORBIDDEN, -KERF_EHTTP },
		{ 404, "NotFound", KERF_KUBE_NOT_FOUND, -KERF_ENOTFOUND },
		{ 405, "MethodNotAllowed", KERF_KUBE_METHOD_NOT_ALLOWED, -KERF_EHTTP },
		{ 409, "Conflict", KERF_KUBE_CONFLICT, -KERF_EBUSY },
		{ 409, "AlreadyExists", KERF_KUBE_ALREADY_EXISTS, -KERF_EEXIST },
		{ 409, NULL, KERF_KUBE_CONFLICT, -KERF_EBUSY },
		{ 410, "Expired", KERF_KUBE_GONE, -KERF_EGONE },
		{ 410, NULL, KERF_KUBE_GONE, -KERF_EGONE },
		{ 500, "Expired", KERF_KUBE_GONE, -KERF_EGONE },
		{ 415, "UnsupportedMediaType", KERF_KUBE_UNSUPPORTED_MEDIA_TYPE, -KERF_EHTTP },
		{ 422, "Invalid", KERF_KUBE_INVALID, -KERF_EHTTP },
		{ 429, "TooManyRequests", KERF_KUBE_TOO_MANY_REQUESTS, -KERF_EHTTP },
		{ 500, "InternalError", KERF_KUBE_INTERNAL, -KERF_EHTTP },
		{ 503, "ServiceUnavailable", KERF_KUBE_UNAVAILABLE, -KERF_EHTTP },
		{ 504, "Timeout", KERF_KUBE_SERVER_TIMEOUT, -KERF_ETIMEDOUT },
		{ 418, NULL, KERF_KUBE_OTHER_HTTP, -KERF_EHTTP },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum kerf_kube_class c = kerf_kube_classify(cases[i].http, cases[i].reason);

		assert_int_equal(c, cases[i].c);
		assert_int_equal(kerf_kube_class_errno(c), cases[i].err);
	}
	assert_true(kerf_kube_class_is_retryable(KERF_KUBE_TOO_MANY_REQUESTS));
	assert_true(kerf_kube_class_is_retryable(KERF_KUBE_UNAVAILABLE));
	assert_true(kerf_kube_class_is_retryable(KERF_KUBE_SERVER_TIMEOUT));
	assert_true(kerf_kube_class_is_retryable(KERF_KUBE_TRANSPORT));
	assert_false(kerf_kube_class_is_retryable(KERF_KUBE_INTERNAL));
	assert_false(kerf_kube_class_is_retryable(KERF_KUBE_CONFLICT));
	assert_string_equal(kerf_kube_class_name(KERF_KUBE_GONE), "expired");
	assert_string_equal(kerf_kube_class_name((enum kerf_kube_class)99), "unknown");
	assert_int_equal(kerf_kube_parse_retry_after("10"), 10);
	assert_int_equal(kerf_kube_parse_retry_after("0"), 0);
	assert_int_equal(kerf_kube_parse_retry_after(" 1"), -1);
	assert_int_equal(kerf_kube_parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), -1);
	assert_int_equal(kerf_kube_parse_retry_after("99999999999999999999999"), -1);
	assert_int_equal(kerf_kube_parse_retry_after(NULL), -1);
}

struct collected {
	struct kerf_buf all;
	int nr;
	int stop_at;
};

static int collect(void *arg, const char *line, size_t len)
{
	struct collected *c = arg;

	c->nr++;
	assert_int_equal(kerf_buf_add(&c->all, line, len), 0);
	assert_int_equal(kerf_buf_add_str(&c->all, "|"), 0);
	return c->nr == c->stop_at ? 42 : 0;
}

static void test_lines_across_chunks(void **state)
{
	const char *stream = "{\"a\":1}\n{\"b\":\r\n2}\r\n\n{\"c\":3}\n{\"d\"";
	struct kerf_kube_lines l;
	struct collected c = { .stop_at = -1 };
	size_t cut, len = strlen(stream);

	(void)state;
	/* every way of cutting the stream in two gives the same lines */
	for (cut = 0; cut <= len; cut++) {
		kerf_buf_init(&c.all, 0);
		c.nr = 0;
		kerf_kube_lines_init(&l, 64);
		assert_int_equal(kerf_kube_lines_feed(&l, stream, cut, collect, &c), 0);
		assert_int_equal(kerf_kube_lines_feed(&l, stream + cut, len - cut, collect, &c), 0);
		assert_string_equal(kerf_buf_str(&c.all), "{\"a\":1}|{\"b\":|2}|{\"c\":3}|");
		assert_int_equal(kerf_kube_lines_pending(&l), 4);
		kerf_kube_lines_release(&l);
		kerf_buf_release(&c.all);
	}
	/* one byte at a time */
	kerf_buf_init(&c.all, 0);
	c.nr = 0;
	kerf_kube_lines_init(&l, 64);
	for (cut = 0; cut < len; cut++)
		assert_int_equal(kerf_kube_lines_feed(&l, stream + cut, 1, collect, &c), 0);
	assert_int_equal(c.nr, 4);
	kerf_kube_lines_release(&l);
	kerf_buf_release(&c.all);
}

static void test_lines_bound_and_stop(void **state)
{
	struct kerf_kube_lines l;
	struct collected c = { .stop_at = 2 };
	char big[40];

	(void)state;
	memset(big, 'x', sizeof(big));
	kerf_buf_init(&c.all, 0);
	kerf_kube_lines_init(&l, 8);
	assert_int_equal(kerf_kube_lines_feed(&l, "12345678\n", 9, collect, &c), 0);
	assert_int_equal(kerf_kube_lines_feed(&l, "12345678\r\n", 10, collect, &c), 42);
	assert_int_equal(kerf_kube_lines_feed(&l, "123456789\n", 10, collect, &c), -KERF_ELIMIT);
	kerf_kube_lines_release(&l);
	kerf_kube_lines_init(&l, 8);
	assert_int_equal(kerf_kube_lines_feed(&l, "1234", 4, collect, &c), 0);
	assert_int_equal(kerf_kube_lines_feed(&l, big, sizeof(big), collect, &c), -KERF_ELIMIT);
	kerf_kube_lines_release(&l);
	kerf_buf_release(&c.all);
}

static void test_watch_event_decode(void **state)
{
	struct kerf_kube_event ev;
	struct kerf_err err = { 0 };
	const char *ok = "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"resourceVersion\":\"9\"},\"x\":[]}}";
	const char *e410 = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource version: 227 (270)\",\"reason\":\"Expired\",\"code\":410}}";
	static const struct {
		const char *line;
		const char *msg;
	} bad[] = {
		{ "nope", "watch event: not JSON (" },
		{ "[1]", "watch event: not {\"type\": string, \"object\": {...}}" },
		{ "{\"type\":\"ADDED\"}", "watch event: not {\"type\": string, \"object\": {...}}" },
		{ "{\"type\":\"ADDED\",\"object\":[]}", "watch event: not {\"type\": string, \"object\": {...}}" },
		{ "{\"type\":\"X\\u001b\",\"object\":{}}", "watch event: unknown type 'X\\x1b'" },
		{ "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}", "watch event: object without metadata.resourceVersion" },
		{ "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Pod\"}}", "watch event: ERROR without a Status object" },
		{ "{\"type\":\"ADDED\",\"type\":\"DELETED\",\"object\":{}}", "watch event: not JSON (" },
	};
	size_t i;

	(void)state;
	assert_int_equal(kerf_kube_event_decode(&ev, ok, strlen(ok), &err), 0);
	assert_int_equal(ev.type, KERF_KUBE_MODIFIED);
	assert_string_equal(ev.name, "a");
	assert_string_equal(ev.namespace_name, "n");
	assert_string_equal(ev.resource_version, "9");
	kerf_kube_event_release(&ev);
	assert_int_equal(kerf_kube_event_decode(&ev, e410, strlen(e410), &err), 0);
	assert_int_equal(ev.type, KERF_KUBE_ERROR);
	assert_int_equal(ev.status.code, 410);
	assert_int_equal(kerf_kube_classify(ev.status.code, ev.status.reason), KERF_KUBE_GONE);
	kerf_kube_event_release(&ev);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		kerf_err_clear(&err);
		assert_int_equal(kerf_kube_event_decode(&ev, bad[i].line, strlen(bad[i].line), &err), -KERF_EPARSE);
		assert_int_equal(strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)), 0);
		assert_null(ev.object);
	}
	assert_string_equal(kerf_kube_event_type_name(KERF_KUBE_BOOKMARK), "BOOKMARK");
}

static void test_query(void **state)
{
	struct kerf_buf b;

	(void)state;
	kerf_buf_init(&b, 0);
	assert_int_equal(kerf_buf_add_str(&b, "/api/v1/pods"), 0);
	assert_int_equal(kerf_kube_query_add(&b, "labelSelector", "a=b,c in (d e)"), 0);
	assert_int_equal(kerf_kube_query_add(&b, "continue", "eyJ2Ijo+/="), 0);
	assert_string_equal(kerf_buf_str(&b), "/api/v1/pods?labelSelector=a%3Db%2Cc%20in%20%28d%20e%29&continue=eyJ2Ijo%2B%2F%3D");
	kerf_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ratelimit_exact),
		cmocka_unit_test(test_backoff_full_jitter),
		cmocka_unit_test(test_retry_budget),
		cmocka_unit_test(test_status_decode),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_lines_across_chunks),
		cmocka_unit_test(test_lines_bound_and_stop),
		cmocka_unit_test(test_watch_event_decode),
		cmocka_unit_test(test_query),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
