/*
 * test_sharing: the mechanism chosen per workload profile, overrides, the
 * hardware isolation rule, MIG sized by memory, and the MPS parameters.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/sharing.h"

static struct kerf_pod frac(int32_t milli, int32_t mem)
{
	return (struct kerf_pod){ .cpu_milli = 1000, .mem_mib = 1024, .nr_gpus = 1,
				  .gpu_milli = milli, .gpu_mem_mib = mem };
}

static struct kerf_pod whole(uint8_t n)
{
	return (struct kerf_pod){ .cpu_milli = 1000, .mem_mib = 1024, .nr_gpus = n,
				  .gpu_milli = KERF_GPU_MILLI };
}

static enum kerf_mechanism pick(struct kerf_pod p, enum kerf_wl_profile prof,
				enum kerf_isolation iso, const struct kerf_mig_model *m,
				struct kerf_sharing_choice *c)
{
	assert_int_equal(kerf_sharing_choose(&p, prof, KERF_MECH_AUTO, iso, m, 81920, c, NULL), 0);
	return c->mech;
}

static void test_by_profile(void **state)
{
	const struct kerf_mig_model *h100 = kerf_mig_model_find("H100-80GB");
	struct kerf_sharing_choice c;

	(void)state;
	/* latency inference: MIG sized by memory (15 GiB -> 1g.20gb) */
	assert_int_equal(pick(frac(100, 15 * 1024), KERF_PROFILE_INFERENCE_LATENCY,
			      KERF_ISOLATION_SHARED, h100, &c), KERF_MECH_MIG);
	assert_string_equal(h100->profiles[c.mig_profile].name, "1g.20gb");
	/* 30 GiB and 40 % of the SMs: 3g.40gb */
	assert_int_equal(pick(frac(400, 30 * 1024), KERF_PROFILE_INFERENCE_LATENCY,
			      KERF_ISOLATION_SHARED, h100, &c), KERF_MECH_MIG);
	assert_string_equal(h100->profiles[c.mig_profile].name, "3g.40gb");
	/* no memory asked: the fraction of the GPU's (250 milli of 80 GiB -> 20 GiB) */
	assert_int_equal(pick(frac(250, 0), KERF_PROFILE_INFERENCE_LATENCY,
			      KERF_ISOLATION_SHARED, h100, &c), KERF_MECH_MIG);
	assert_string_equal(h100->profiles[c.mig_profile].name, "2g.20gb");
	/* without MIG: MPS */
	assert_int_equal(pick(frac(250, 0), KERF_PROFILE_INFERENCE_LATENCY,
			      KERF_ISOLATION_SHARED, NULL, &c), KERF_MECH_MPS);
	assert_int_equal(c.share, KERF_SHARE_MPS);
	assert_int_equal(pick(frac(330, 0), KERF_PROFILE_INFERENCE_BATCH,
			      KERF_ISOLATION_TENANT, h100, &c), KERF_MECH_MPS);
	assert_int_equal(c.mps_thread_pct, 33);
	assert_int_equal(c.mps_pinned_mem_mib, 81920 * 330 / 1000);
	assert_int_equal(pick(frac(500, 8192), KERF_PROFILE_INTERACTIVE,
			      KERF_ISOLATION_SHARED, h100, &c), KERF_MECH_TIMESLICE);
	assert_int_equal(c.share, KERF_SHARE_TIMESLICE);
	assert_int_equal(pick(whole(8), KERF_PROFILE_TRAINING, KERF_ISOLATION_SHARED, h100, &c),
			 KERF_MECH_EXCLUSIVE);
	assert_true(c.nvlink_domain);
	assert_int_equal(pick(frac(500, 0), KERF_PROFILE_NONE, KERF_ISOLATION_SHARED, h100, &c),
			 KERF_MECH_DEFAULT);
	assert_int_equal(pick(whole(2), KERF_PROFILE_INFERENCE_BATCH, KERF_ISOLATION_SHARED,
			      h100, &c), KERF_MECH_EXCLUSIVE);
}

static void test_hardware_isolation(void **state)
{
	const struct kerf_mig_model *a100 = kerf_mig_model_find("A100-40GB");
	struct kerf_sharing_choice c;
	struct kerf_pod p = frac(250, 4096);
	struct kerf_err err = { 0 };

	(void)state;
	/* batch inference would be MPS: hardware isolation makes it MIG */
	assert_int_equal(pick(p, KERF_PROFILE_INFERENCE_BATCH, KERF_ISOLATION_HARDWARE, a100, &c),
			 KERF_MECH_MIG);
	assert_string_equal(a100->profiles[c.mig_profile].name, "2g.10gb");
	/* without MIG: a whole GPU */
	assert_int_equal(pick(p, KERF_PROFILE_INTERACTIVE, KERF_ISOLATION_HARDWARE, NULL, &c),
			 KERF_MECH_EXCLUSIVE);
	/* and an override to MPS is refused, naming the reason */
	assert_int_equal(kerf_sharing_choose(&p, KERF_PROFILE_NONE, KERF_MECH_MPS,
					     KERF_ISOLATION_HARDWARE, a100, 40960, &c, &err),
			 -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "isolation is hardware"));
}

static void test_overrides(void **state)
{
	const struct kerf_mig_model *a100 = kerf_mig_model_find("A100-40GB");
	struct kerf_sharing_choice c;
	struct kerf_pod p = frac(250, 0), w = whole(2), big = frac(900, 39 * 1024);
	struct kerf_err err = { 0 };

	(void)state;
	assert_int_equal(kerf_sharing_choose(&p, KERF_PROFILE_INFERENCE_LATENCY,
					     KERF_MECH_TIMESLICE, KERF_ISOLATION_SHARED, a100,
					     40960, &c, NULL), 0);
	assert_int_equal(c.mech, KERF_MECH_TIMESLICE);
	assert_int_equal(kerf_sharing_choose(&w, KERF_PROFILE_NONE, KERF_MECH_MPS,
					     KERF_ISOLATION_SHARED, a100, 40960, &c, &err),
			 -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "only a fraction"));
	kerf_err_clear(&err);
	assert_int_equal(kerf_sharing_choose(&p, KERF_PROFILE_NONE, KERF_MECH_MIG,
					     KERF_ISOLATION_SHARED, NULL, 40960, &c, &err),
			 -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "no MIG profiles"));
	/* 900 milli and 39 GiB: only 7g.40gb */
	assert_int_equal(kerf_sharing_choose(&big, KERF_PROFILE_NONE, KERF_MECH_MIG,
					     KERF_ISOLATION_SHARED, a100, 40960, &c, NULL), 0);
	assert_string_equal(a100->profiles[c.mig_profile].name, "7g.40gb");
	big.gpu_mem_mib = 41 * 1024;
	kerf_err_clear(&err);
	assert_int_equal(kerf_sharing_choose(&big, KERF_PROFILE_NONE, KERF_MECH_MIG,
					     KERF_ISOLATION_SHARED, a100, 40960, &c, &err),
			 -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "no A100-40GB profile"));
}

static void test_names(void **state)
{
	(void)state;
	for (int i = 0; i < KERF_PROFILE_COUNT_; i++)
		assert_int_equal(kerf_profile_parse(kerf_profile_name((enum kerf_wl_profile)i)), i);
	for (int i = 0; i < KERF_MECH_COUNT_; i++)
		assert_int_equal(kerf_mechanism_parse(kerf_mechanism_name((enum kerf_mechanism)i)), i);
	assert_int_equal(kerf_profile_parse("batch"), -1);
	assert_int_equal(kerf_mechanism_parse(NULL), -1);
	assert_null(kerf_profile_name(KERF_PROFILE_COUNT_));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_profile),
		cmocka_unit_test(test_hardware_isolation),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
