/*
 * test_check_status: kerf sim check's exit status and its per-seed record
 * of a violation.  The random scenarios hold every invariant, so the
 * command cannot be made to exit 3 from the outside; its status comes from
 * kerf_check_status, tested here on results that say what a violation or
 * a restart mismatch leaves behind.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sim/check.h"
#include "sim/timesim.h"

static void test_clean_is_0(void **state)
{
	struct kerf_check_result r = { .runs = 5, .events = 1000 };

	(void)state;
	assert_int_equal(kerf_check_status(&r), 0);
}

static void test_violation_is_3(void **state)
{
	struct kerf_check_result r = { .runs = 5, .events = 1000, .violations = 1 };

	(void)state;
	assert_int_equal(kerf_check_status(&r), 3);
}

static void test_mismatch_is_3(void **state)
{
	struct kerf_check_result r = { .runs = 5, .events = 1000, .mismatches = 2 };

	(void)state;
	assert_int_equal(kerf_check_status(&r), 3);
}

/* A seed that holds: status 0, and no violation recorded for it. */
static void test_real_seed(void **state)
{
	struct kerf_check_result r = { 0 };
	struct kerf_err err = { 0 };

	(void)state;
	assert_int_equal(kerf_check_run(7, 1, &r, &err), 0);
	assert_int_equal(r.runs, 1);
	assert_true(r.events > 0);
	assert_false(r.last.valid);
	assert_int_equal(kerf_check_status(&r), 0);
}

/* After the 40th event, 1000 mCPU gone from the first live node's free
 * CPU as if a pod nobody knows held it: the node's counters no longer
 * match what its workloads hold. */
static void steal_cpu(void *ctx, struct kerf_timesim *ts)
{
	bool *done = ctx;

	if (*done || ts->nr_events < 40)
		return;
	for (size_t i = 0; i < ts->st.cluster.nr_slots; i++) {
		struct kerf_node *n = &ts->st.cluster.nodes[i];

		if (n->live && n->cpu_free_milli >= 1000) {
			n->cpu_free_milli -= 1000;
			*done = true;
			return;
		}
	}
}

static void test_tampered_seed_is_caught(void **state)
{
	struct kerf_check_result r = { 0 };
	struct kerf_err err = { 0 };
	bool done = false;

	(void)state;
	assert_int_equal(kerf_check_run_tampered(7, 1, steal_cpu, &done, &r, &err), 0);
	assert_true(done);
	assert_int_equal(r.runs, 1);
	assert_true(r.violations >= 1);
	assert_int_equal(r.first_bad_seed, 7);
	assert_non_null(strstr(r.first_violation, "seed 7 "));
	/* where: the seed, the event it broke at, what broke */
	assert_true(r.last.valid);
	assert_int_equal(r.last.seed, 7);
	assert_true(r.last.event >= 40);
	assert_non_null(r.last.kind);
	assert_non_null(strstr(r.last.what, "differs from the running workloads"));
	assert_int_equal(kerf_check_status(&r), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_is_0),
		cmocka_unit_test(test_violation_is_3),
		cmocka_unit_test(test_mismatch_is_3),
		cmocka_unit_test(test_real_seed),
		cmocka_unit_test(test_tampered_seed_is_caught),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
