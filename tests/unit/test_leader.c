/*
 * serve/leader: leader election on a Lease, two replicas against a lease
 * kept by the test as the API server keeps it (resourceVersion bumped on
 * every write, a write with a stale one refused with 409): first create,
 * renew, a standby that waits a whole duration, takeover after the leader
 * stops renewing, never two leaders at once, release, refused configs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "serve/leader.h"

/* The API server's lease: NULL until created. */
struct server {
	json_t *lease;
	int rv;
	int writes;
};

/* Answer r as the API server does; fills status and body (malloc'd). */
static void serve(struct server *s, const struct kerf_kreq *r, long *status,
		  char **body)
{
	*body = NULL;
	if (!strcmp(r->method, "GET")) {
		assert_string_equal(r->path, "/apis/coordination.k8s.io/v1/namespaces/kerf-system/leases/kerf-scheduler");
		*status = s->lease ? 200 : 404;
		if (s->lease)
			*body = json_dumps(s->lease, 0);
		return;
	}
	json_t *in = json_loads(r->body, 0, NULL);
	const char *rv = json_string_value(json_object_get(json_object_get(in, "metadata"), "resourceVersion"));
	char now_rv[16];

	assert_non_null(in);
	/* MicroTime: exactly six fractional digits, as the server insists */
	const char *renew = json_string_value(json_object_get(json_object_get(in, "spec"), "renewTime"));
	assert_int_equal(strlen(renew), strlen("2026-12-02T18:32:07.653009Z"));
	if (!strcmp(r->method, "POST")) {
		assert_string_equal(r->path, "/apis/coordination.k8s.io/v1/namespaces/kerf-system/leases");
		if (s->lease) {
			*status = 409; /* AlreadyExists */
			json_decref(in);
			return;
		}
	} else {
		assert_string_equal(r->method, "PUT");
		if (!s->lease || !rv || atoi(rv) != s->rv) {
			*status = 409; /* Conflict: stale resourceVersion */
			json_decref(in);
			return;
		}
	}
	snprintf(now_rv, sizeof(now_rv), "%d", ++s->rv);
	json_object_set_new(json_object_get(in, "metadata"), "resourceVersion", json_string(now_rv));
	json_decref(s->lease);
	s->lease = in;
	s->writes++;
	*status = strcmp(r->method, "POST") ? 200 : 201;
	*body = json_dumps(in, 0);
}

/* One poll of e at now and, when it sent something, the answer. */
static void step(struct server *s, struct kerf_elector *e, int64_t now)
{
	struct kerf_err err = { 0 };
	struct kerf_kreq r;
	long status;
	char *body;
	int rc;

	/* several polls: an answer may make the next request due at once */
	for (int i = 0; i < 4; i++) {
		rc = kerf_elector_poll(e, now, &r, &err);
		assert_true(rc >= 0);
		if (rc == 0)
			return;
		serve(s, &r, &status, &body);
		kerf_kreq_release(&r);
		kerf_elector_answer(e, now, status, body);
		free(body);
	}
}

static void config(struct kerf_elector_config *c, const char *id)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->ns, sizeof(c->ns), "kerf-system");
	snprintf(c->name, sizeof(c->name), "kerf-scheduler");
	snprintf(c->identity, sizeof(c->identity), "%s", id);
	c->duration_ms = 15000;
	c->renew_deadline_ms = 10000;
	c->retry_ms = 2000;
}

static const char *holder(const struct server *s)
{
	return json_string_value(json_object_get(json_object_get(s->lease, "spec"), "holderIdentity"));
}

static json_int_t transitions(const struct server *s)
{
	return json_integer_value(json_object_get(json_object_get(s->lease, "spec"), "leaseTransitions"));
}

static void test_two_replicas(void **state)
{
	struct server s = { 0 };
	struct kerf_elector a, b;
	struct kerf_elector_config c;
	int64_t t, b_leader_at = -1;

	(void)state;
	config(&c, "kerf-0_a");
	assert_int_equal(kerf_elector_init(&a, &c, NULL), 0);
	config(&c, "kerf-1_b");
	assert_int_equal(kerf_elector_init(&b, &c, NULL), 0);
	/* a creates the lease and leads; b waits */
	step(&s, &a, 1000);
	assert_true(kerf_elector_is_leader(&a, 1000));
	assert_string_equal(holder(&s), "kerf-0_a");
	assert_int_equal(transitions(&s), 0);
	step(&s, &b, 1000);
	assert_false(kerf_elector_is_leader(&b, 1000));
	/* a renews for a minute; b never takes over */
	for (t = 1000; t <= 61000; t += 500) {
		step(&s, &a, t);
		step(&s, &b, t);
		assert_true(kerf_elector_is_leader(&a, t));
		assert_false(kerf_elector_is_leader(&b, t));
	}
	assert_string_equal(holder(&s), "kerf-0_a");
	/* a hangs (no more polls): b takes over, never while a believes it leads */
	for (; t <= 120000; t += 500) {
		step(&s, &b, t);
		if (kerf_elector_is_leader(&b, t) && b_leader_at < 0)
			b_leader_at = t;
		assert_false(kerf_elector_is_leader(&a, t) && kerf_elector_is_leader(&b, t));
	}
	assert_true(b_leader_at > 61000 + 10000);
	assert_true(b_leader_at <= 61000 + 15000 + 2 * 2000 + 500);
	assert_string_equal(holder(&s), "kerf-1_b");
	assert_int_equal(transitions(&s), 1);
	/* a wakes up: its renew is refused (stale rv), it follows */
	step(&s, &a, t);
	step(&s, &a, t + 2000);
	assert_false(kerf_elector_is_leader(&a, t + 2000));
	step(&s, &b, t + 2000);
	assert_true(kerf_elector_is_leader(&b, t + 2000));
	assert_string_equal(holder(&s), "kerf-1_b");
	json_decref(s.lease);
}

static void test_release(void **state)
{
	struct server s = { 0 };
	struct kerf_elector a, b;
	struct kerf_elector_config c;
	struct kerf_kreq r;
	long status;
	char *body;

	(void)state;
	config(&c, "kerf-0_a");
	assert_int_equal(kerf_elector_init(&a, &c, NULL), 0);
	config(&c, "kerf-1_b");
	assert_int_equal(kerf_elector_init(&b, &c, NULL), 0);
	step(&s, &a, 0);
	step(&s, &b, 0);
	assert_true(kerf_elector_is_leader(&a, 0));
	/* a releases on shutdown: holder emptied, duration 1 */
	assert_int_equal(kerf_elector_release(&a, 3000, &r, NULL), 1);
	assert_false(kerf_elector_is_leader(&a, 3000));
	serve(&s, &r, &status, &body);
	kerf_kreq_release(&r);
	kerf_elector_answer(&a, 3000, status, body);
	free(body);
	assert_string_equal(holder(&s), "");
	/* b takes it at its next try, not a lease duration later */
	step(&s, &b, 3000);
	assert_true(kerf_elector_is_leader(&b, 3000));
	assert_int_equal(transitions(&s), 1);
	/* a released replica sends nothing more */
	assert_int_equal(kerf_elector_poll(&a, 9000, &r, NULL), 0);
	assert_int_equal(kerf_elector_release(&a, 9000, &r, NULL), 0);
	json_decref(s.lease);
}

static void test_create_race_and_errors(void **state)
{
	struct server s = { 0 };
	struct kerf_elector a, b;
	struct kerf_elector_config c;
	struct kerf_kreq ra, rb;
	struct kerf_err err = { 0 };
	long status;
	char *body;

	(void)state;
	config(&c, "kerf-0_a");
	assert_int_equal(kerf_elector_init(&a, &c, NULL), 0);
	config(&c, "kerf-1_b");
	assert_int_equal(kerf_elector_init(&b, &c, NULL), 0);
	/* both read 404, both create: one wins, the other sees 409 */
	assert_int_equal(kerf_elector_poll(&a, 0, &ra, NULL), 1);
	assert_int_equal(kerf_elector_poll(&b, 0, &rb, NULL), 1);
	kerf_elector_answer(&a, 0, 404, NULL);
	kerf_elector_answer(&b, 0, 404, NULL);
	kerf_kreq_release(&ra);
	kerf_kreq_release(&rb);
	assert_int_equal(kerf_elector_poll(&a, 0, &ra, NULL), 1);
	assert_int_equal(kerf_elector_poll(&b, 0, &rb, NULL), 1);
	assert_string_equal(ra.method, "POST");
	serve(&s, &ra, &status, &body);
	kerf_elector_answer(&a, 0, status, body);
	free(body);
	serve(&s, &rb, &status, &body);
	assert_int_equal(status, 409);
	kerf_elector_answer(&b, 0, status, body);
	kerf_kreq_release(&ra);
	kerf_kreq_release(&rb);
	assert_true(kerf_elector_is_leader(&a, 0));
	assert_false(kerf_elector_is_leader(&b, 0));
	/* the API server unreachable: the leader stops leading at its deadline */
	assert_int_equal(kerf_elector_poll(&a, 2000, &ra, NULL), 1);
	kerf_elector_answer(&a, 2000, 0, NULL);
	kerf_kreq_release(&ra);
	assert_true(kerf_elector_is_leader(&a, 9999));
	assert_false(kerf_elector_is_leader(&a, 10000));
	/* configurations that could give two leaders are refused */
	config(&c, "x");
	c.renew_deadline_ms = 15000;
	assert_int_equal(kerf_elector_init(&a, &c, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "retry < renew deadline < lease duration"));
	kerf_err_clear(&err);
	config(&c, "");
	assert_int_equal(kerf_elector_init(&a, &c, &err), -KERF_EINVAL);
	kerf_err_clear(&err);
	config(&c, "x");
	snprintf(c.ns, sizeof(c.ns), "Kerf/../x");
	assert_int_equal(kerf_elector_init(&a, &c, &err), -KERF_EINVAL);
	json_decref(s.lease);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_replicas),
		cmocka_unit_test(test_release),
		cmocka_unit_test(test_create_race_and_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
