/*
 * serve/pool_status: a GPUPool decoded as kerf serve keeps it (accepted,
 * or refused with the decoder's reason but kept for its status), and the
 * status patch: the pool's nodes, GPUs and allocation from the world, and
 * the Accepted condition whose lastTransitionTime moves only when its
 * status does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "serve/pool_status.h"

#define T0 1767225600000LL      /* 2026-01-01T00:00:00Z */

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j)
		fail_msg("bad test JSON: %s: %s", e.text, text);
	return j;
}

static struct kerf_cpool *decode(const char *text)
{
	struct kerf_err err = { 0 };
	json_t *j = parse(text);
	struct kerf_cpool *cp = kerf_cpool_decode(j, &err);

	json_decref(j);
	assert_non_null(cp);
	return cp;
}

static json_t *status_of(const struct kerf_world *w, const struct kerf_cpool *cp, int64_t now)
{
	char *body = NULL;
	json_t *j;

	assert_int_equal(kerf_pool_status_patch(w, cp, now, &body), 0);
	j = parse(body);
	free(body);
	return j;
}

static const char *cond(const json_t *st, const char *key)
{
	return json_string_value(json_object_get(json_array_get(
		json_object_get(json_object_get(st, "status"), "conditions"), 0), key));
}

static void test_accepted_and_refused(void **state)
{
	struct kerf_world_config cfg = { .scheduler_name = "kerf", .seed = 1 };
	struct kerf_world *w;
	struct kerf_cpool *cp;
	struct kerf_err err = { 0 };
	json_t *st;

	(void)state;
	assert_int_equal(kerf_world_new(&cfg, &w, &err), 0);
	cp = decode("{\"metadata\":{\"name\":\"fast\",\"generation\":3},\"spec\":{\"gpuModel\":\"H100-80GB\","
		    "\"nodeSelector\":{\"matchLabels\":{\"kerf.io/pool\":\"fast\"}}}}");
	assert_true(cp->accepted);
	st = status_of(w, cp, T0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(st, "status"), "observedGeneration")), 3);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(st, "status"), "nodes")), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(st, "status"), "allocated")), "0");
	assert_string_equal(cond(st, "status"), "True");
	assert_string_equal(cond(st, "lastTransitionTime"), "2026-01-01T00:00:00Z");
	json_decref(st);
	free(cp);
	/* the object already says Accepted=True since an earlier time: kept */
	cp = decode("{\"metadata\":{\"name\":\"fast\",\"generation\":3},\"spec\":{\"gpuModel\":\"H100-80GB\","
		    "\"nodeSelector\":{\"matchLabels\":{\"kerf.io/pool\":\"fast\"}}},"
		    "\"status\":{\"conditions\":[{\"type\":\"Accepted\",\"status\":\"True\","
		    "\"lastTransitionTime\":\"2025-12-31T10:00:00Z\"}]}}");
	st = status_of(w, cp, T0 + 60000);
	assert_string_equal(cond(st, "lastTransitionTime"), "2025-12-31T10:00:00Z");
	json_decref(st);
	free(cp);
	/* a Fixed layout that does not fit one GPU: refused, told, time moves */
	cp = decode("{\"metadata\":{\"name\":\"fast\",\"generation\":4},\"spec\":{\"gpuModel\":\"H100-80GB\","
		    "\"nodeSelector\":{\"matchLabels\":{\"kerf.io/pool\":\"fast\"}},"
		    "\"mig\":{\"policy\":\"Fixed\",\"layout\":[\"7g.80gb\",\"7g.80gb\"]},\"sharing\":[\"MIG\"]},"
		    "\"status\":{\"conditions\":[{\"type\":\"Accepted\",\"status\":\"True\","
		    "\"lastTransitionTime\":\"2025-12-31T10:00:00Z\"}]}}");
	assert_false(cp->accepted);
	st = status_of(w, cp, T0 + 120000);
	assert_string_equal(cond(st, "status"), "False");
	assert_string_equal(cond(st, "reason"), "Invalid");
	assert_non_null(strstr(cond(st, "message"), "mig.layout"));
	assert_string_equal(cond(st, "lastTransitionTime"), "2026-01-01T00:02:00Z");
	json_decref(st);
	free(cp);
	kerf_world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted_and_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
