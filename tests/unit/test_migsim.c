/*
 * test_migsim: the mixed MIG day.  Dynamic planning starts more of the
 * requests than every static layout, on several seeds and models, and
 * never disturbs an instance in use; static layouts never reconfigure;
 * the same seed gives the same day.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/mig/geometry.h"
#include "sim/migsim.h"

static void day(const char *model, uint64_t seed)
{
	struct kerf_migsim_opts o;
	struct kerf_migsim_result r[KERF_MIGSIM_NR_POLICIES];
	struct kerf_err err = { 0 };

	kerf_migsim_defaults(&o);
	o.model = model;
	o.seed = seed;
	for (int p = 0; p < KERF_MIGSIM_NR_POLICIES; p++) {
		assert_int_equal(kerf_migsim_run(&o, (enum kerf_migsim_policy)p, &r[p], &err), 0);
		assert_int_equal(r[p].disturbed, 0);
		assert_int_equal(r[p].apply_refused, 0);
		assert_int_equal(r[p].requests, r[0].requests);
		assert_int_equal(r[p].started + r[p].waiting_end, r[p].requests);
		assert_true(r[p].slice_ratio >= 0 && r[p].slice_ratio <= 1.0);
		if (p != KERF_MIGSIM_DYNAMIC)
			assert_int_equal(r[p].reconfig_actions, 0);
	}
	assert_true(r[KERF_MIGSIM_DYNAMIC].reconfig_actions > 0);
	/* quota charged is the compute slices' share, rounded down (1g: 142 of 142.9) */
	for (int p = 0; p < KERF_MIGSIM_NR_POLICIES; p++) {
		const struct kerf_mig_model *m = kerf_mig_model_find(model);
		double charged = 0, exact = r[p].slice_hours / m->compute_slices;

		for (unsigned k = 0; k < KERF_MIGSIM_NR_KINDS; k++)
			charged += r[p].gpu_hours_by_kind[k];
		assert_true(charged <= exact * 1.0001 && charged >= exact * 0.993 - 0.01);
	}
	for (int p = 0; p < KERF_MIGSIM_DYNAMIC; p++)
		if (r[KERF_MIGSIM_DYNAMIC].started <= r[p].started)
			fail_msg("%s seed %u: dynamic started %u, %s %u", model, (unsigned)seed,
				 r[KERF_MIGSIM_DYNAMIC].started, r[p].policy, r[p].started);
}

static void test_dynamic_serves_more(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 3; seed++)
		day("H100-80GB", seed);
	day("A100-40GB", 1);
	day("A30-24GB", 1);
}

static void test_deterministic(void **state)
{
	struct kerf_migsim_opts o;
	struct kerf_migsim_result a, b;

	(void)state;
	kerf_migsim_defaults(&o);
	o.hours = 6;
	assert_int_equal(kerf_migsim_run(&o, KERF_MIGSIM_DYNAMIC, &a, NULL), 0);
	assert_int_equal(kerf_migsim_run(&o, KERF_MIGSIM_DYNAMIC, &b, NULL), 0);
	assert_memory_equal(&a, &b, sizeof(a));
}

static void test_bad_options(void **state)
{
	struct kerf_migsim_opts o;
	struct kerf_migsim_result r;
	struct kerf_err err = { 0 };

	(void)state;
	kerf_migsim_defaults(&o);
	o.model = "V100-16GB";
	assert_int_equal(kerf_migsim_run(&o, KERF_MIGSIM_DYNAMIC, &r, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "V100-16GB"));
	kerf_migsim_defaults(&o);
	o.gpus_per_node = 17;
	kerf_err_clear(&err);
	assert_int_equal(kerf_migsim_run(&o, KERF_MIGSIM_DYNAMIC, &r, &err), -KERF_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dynamic_serves_more),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_bad_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
