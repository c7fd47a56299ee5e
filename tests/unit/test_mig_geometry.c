/*
 * test_mig_geometry: the MIG tables against the published profile lists
 * (NVIDIA MIG User Guide, "Supported MIG Profiles"; the mig-parted presets
 * that NVIDIA ships), and the rules of a legal layout.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/mig/geometry.h"

/* The profile names each model lists, as published (typed from the guide,
 * not from our tables). */
static const struct {
	const char *model;
	const char *names[8];
} published[] = {
	{ "A30-24GB", { "1g.6gb", "1g.6gb+me", "2g.12gb", "2g.12gb+me", "4g.24gb" } },
	{ "A100-40GB", { "1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb" } },
	{ "A100-80GB", { "1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb" } },
	{ "H100-80GB", { "1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb" } },
	{ "H100-94GB", { "1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb" } },
	{ "H100-96GB", { "1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.48gb", "4g.48gb", "7g.96gb" } },
	{ "GH200-144GB", { "1g.18gb", "1g.18gb+me", "1g.36gb", "2g.36gb", "3g.72gb", "4g.72gb", "7g.144gb" } },
	{ "H200-141GB", { "1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb" } },
	{ "B200-180GB", { "1g.23gb", "1g.23gb+me", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb" } },
};

/* mig-parted "all-<profile>" presets: instances of one profile a GPU holds. */
static const struct {
	const char *model;
	const char *profile;
	unsigned count;
} presets[] = {
	{ "A100-40GB", "1g.5gb", 7 },  { "A100-40GB", "1g.5gb+me", 1 },
	{ "A100-40GB", "2g.10gb", 3 }, { "A100-40GB", "3g.20gb", 2 },
	{ "A100-40GB", "4g.20gb", 1 }, { "A100-40GB", "7g.40gb", 1 },
	{ "A100-40GB", "1g.10gb", 4 },
	{ "A100-80GB", "1g.10gb", 7 }, { "A100-80GB", "1g.20gb", 4 },
	{ "A100-80GB", "2g.20gb", 3 }, { "A100-80GB", "3g.40gb", 2 },
	{ "H100-80GB", "1g.10gb", 7 }, { "H100-80GB", "1g.10gb+me", 1 },
	{ "H100-80GB", "1g.20gb", 4 }, { "H100-80GB", "2g.20gb", 3 },
	{ "H100-80GB", "3g.40gb", 2 }, { "H100-80GB", "4g.40gb", 1 },
	{ "H100-80GB", "7g.80gb", 1 },
	{ "A30-24GB", "1g.6gb", 4 },   { "A30-24GB", "1g.6gb+me", 1 },
	{ "A30-24GB", "2g.12gb", 2 },  { "A30-24GB", "2g.12gb+me", 1 },
	{ "A30-24GB", "4g.24gb", 1 },
	{ "H100-94GB", "1g.12gb", 7 }, { "H100-94GB", "1g.24gb", 4 },
	{ "H100-94GB", "2g.24gb", 3 }, { "H100-94GB", "3g.47gb", 2 },
	{ "H100-94GB", "7g.94gb", 1 },
	{ "H100-96GB", "3g.48gb", 2 }, { "H100-96GB", "7g.96gb", 1 },
	{ "GH200-144GB", "1g.18gb", 7 }, { "GH200-144GB", "1g.36gb", 4 },
	{ "GH200-144GB", "2g.36gb", 3 }, { "GH200-144GB", "3g.72gb", 2 },
	{ "H200-141GB", "1g.18gb", 7 }, { "H200-141GB", "1g.35gb", 4 },
	{ "H200-141GB", "2g.35gb", 3 }, { "H200-141GB", "3g.71gb", 2 },
	{ "H200-141GB", "4g.71gb", 1 }, { "H200-141GB", "7g.141gb", 1 },
	{ "B200-180GB", "1g.23gb", 7 }, { "B200-180GB", "1g.45gb", 4 },
	{ "B200-180GB", "2g.45gb", 3 }, { "B200-180GB", "3g.90gb", 2 },
	{ "B200-180GB", "4g.90gb", 1 }, { "B200-180GB", "7g.180gb", 1 },
};

static void test_profile_lists(void **state)
{
	size_t nr;
	const struct kerf_mig_model *all = kerf_mig_models(&nr);

	(void)state;
	assert_int_equal(nr, sizeof(published) / sizeof(published[0]));
	for (size_t i = 0; i < nr; i++) {
		const struct kerf_mig_model *m = kerf_mig_model_find(published[i].model);
		unsigned n = 0;

		assert_non_null(m);
		assert_ptr_equal(m, &all[i]);
		assert_non_null(m->source);
		while (n < 8 && published[i].names[n])
			n++;
		assert_int_equal(m->nr_profiles, n);
		for (unsigned p = 0; p < n; p++) {
			const struct kerf_mig_profile *pr = &m->profiles[p];
			char want[16];

			assert_string_equal(pr->name, published[i].names[p]);
			/* the name starts with the compute slices: "<C>g." */
			snprintf(want, sizeof(want), "%ug.", pr->compute_slices);
			assert_memory_equal(pr->name, want, strlen(want));
			assert_int_equal(pr->media_ext, strstr(pr->name, "+me") != NULL);
			/* every start is inside the GPU */
			for (unsigned s = 0; s < 8; s++)
				if (pr->starts >> s & 1)
					assert_true(s + pr->mem_slices <= m->mem_slices);
		}
	}
}

/* NVML's name and GPU feature discovery's product label find the model. */
static void test_find_names(void **state)
{
	const struct kerf_mig_model *h100 = kerf_mig_model_find("H100-80GB");

	(void)state;
	assert_non_null(h100);
	assert_ptr_equal(kerf_mig_model_find("NVIDIA H100 80GB HBM3"), h100);
	assert_ptr_equal(kerf_mig_model_find("NVIDIA-H100-80GB-HBM3"), h100);
	assert_ptr_equal(kerf_mig_model_find("nvidia-h100-80gb-hbm3"), h100);
	assert_ptr_equal(kerf_mig_model_find("h100 80gb"), h100);
	assert_null(kerf_mig_model_find("NVIDIA-H100-80GB-HBM"));
	assert_null(kerf_mig_model_find("NVIDIA_H100_80GB_HBM3"));
}

/* The IDs nvidia-smi prints, per family (MIG User Guide listings). */
static void test_nvml_ids(void **state)
{
	const struct kerf_mig_model *a100 = kerf_mig_model_find("A100-40GB");
	const struct kerf_mig_model *a30 = kerf_mig_model_find("A30");
	static const uint8_t a100_ids[] = { 19, 20, 15, 14, 9, 5, 0 };
	static const uint8_t a30_ids[] = { 14, 21, 5, 6, 0 };

	(void)state;
	for (unsigned p = 0; p < 7; p++)
		assert_int_equal(a100->profiles[p].nvml_id, a100_ids[p]);
	for (unsigned p = 0; p < 5; p++)
		assert_int_equal(a30->profiles[p].nvml_id, a30_ids[p]);
	/* the A100-40GB listing: 4864, 9856, 19968, 40192 MiB */
	assert_int_equal(a100->profiles[0].mem_mib, 4864);
	assert_int_equal(a100->profiles[3].mem_mib, 9856);
	assert_int_equal(a100->profiles[4].mem_mib, 19968);
	assert_int_equal(a100->profiles[6].mem_mib, 40192);
}

/* Placing a profile as many times as fits gives the preset's count. */
static void test_presets(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
		const struct kerf_mig_model *m = kerf_mig_model_find(presets[i].model);
		int p = kerf_mig_profile_find(m, presets[i].profile);
		struct kerf_mig_layout l = { .nr = 0 };
		unsigned n = 0;

		assert_true(p >= 0);
		for (unsigned s = 0; s < m->mem_slices; s++)
			if (kerf_mig_can_add(m, &l, (unsigned)p, s)) {
				l.inst[l.nr++] = (struct kerf_mig_instance){
					.profile = (uint8_t)p, .start = (uint8_t)s };
				n++;
			}
		if (n != presets[i].count)
			fail_msg("%s %s: %u fit, preset says %u", presets[i].model,
				 presets[i].profile, n, presets[i].count);
		assert_int_equal(kerf_mig_layout_check(m, &l, NULL), 0);
	}
}

/* mig-parted all-balanced: 2 x 1g, 1 x 2g, 1 x 3g (A30: 2 x 1g, 1 x 2g). */
static void test_balanced(void **state)
{
	size_t nr;
	const struct kerf_mig_model *all = kerf_mig_models(&nr);

	(void)state;
	for (size_t i = 0; i < nr; i++) {
		const struct kerf_mig_model *m = &all[i];
		struct kerf_mig_layout l;

		if (m->mem_slices == 4)
			l = (struct kerf_mig_layout){ .nr = 3, .inst = {
				{ .profile = 0, .start = 0 }, { .profile = 0, .start = 1 },
				{ .profile = 2, .start = 2 } } };
		else
			/* 3g at 4, 2g at 0, 1g at 2 and 3 */
			l = (struct kerf_mig_layout){ .nr = 4, .inst = {
				{ .profile = 4, .start = 4 }, { .profile = 3, .start = 0 },
				{ .profile = 0, .start = 2 }, { .profile = 0, .start = 3 } } };
		assert_int_equal(kerf_mig_layout_check(m, &l, NULL), 0);
	}
}

struct enum_acc {
	const struct kerf_mig_model *m;
	unsigned sets;              /* non-empty legal layouts */
	unsigned max_compute;
	/* maximal multisets, as counts per profile packed in a key */
	uint64_t maximal[128];
	unsigned nr_maximal;
};

static uint64_t multiset_key(const struct kerf_mig_layout *l)
{
	uint64_t key = 0;

	for (unsigned i = 0; i < l->nr; i++)
		key += (uint64_t)1 << (8 * l->inst[i].profile);
	return key;
}

/* Every legal layout of the profiles without media extensions. */
static void enum_layouts(struct enum_acc *a, struct kerf_mig_layout *l, unsigned s)
{
	const struct kerf_mig_model *m = a->m;

	while (s < m->mem_slices && (kerf_mig_layout_used(m, l) >> s & 1))
		s++;
	if (s >= m->mem_slices) {
		unsigned compute = 0;
		bool maximal = true;

		if (l->nr == 0)
			return;
		a->sets++;
		for (unsigned i = 0; i < l->nr; i++)
			compute += m->profiles[l->inst[i].profile].compute_slices;
		if (compute > a->max_compute)
			a->max_compute = compute;
		for (unsigned p = 0; p < m->nr_profiles && maximal; p++)
			for (unsigned t = 0; t < m->mem_slices && maximal; t++)
				if (!m->profiles[p].media_ext && kerf_mig_can_add(m, l, p, t))
					maximal = false;
		if (maximal) {
			uint64_t key = multiset_key(l);
			unsigned k;

			for (k = 0; k < a->nr_maximal; k++)
				if (a->maximal[k] == key)
					break;
			if (k == a->nr_maximal && a->nr_maximal < 128)
				a->maximal[a->nr_maximal++] = key;
		}
		return;
	}
	enum_layouts(a, l, s + 1);
	for (unsigned p = 0; p < m->nr_profiles; p++) {
		if (m->profiles[p].media_ext || !kerf_mig_can_add(m, l, p, s))
			continue;
		l->inst[l->nr++] = (struct kerf_mig_instance){ .profile = (uint8_t)p,
							       .start = (uint8_t)s };
		enum_layouts(a, l, s + 1);
		l->nr--;
	}
}

/*
 * The geometry reference enumerated the layouts of an 8-slice GPU: 38
 * distinct maximal multisets, compute slices never over 7 (A30: 4).
 */
static void test_enumeration(void **state)
{
	struct enum_acc a = { .m = kerf_mig_model_find("H100-80GB") };
	struct enum_acc b = { .m = kerf_mig_model_find("A30-24GB") };
	struct kerf_mig_layout l = { .nr = 0 };

	(void)state;
	enum_layouts(&a, &l, 0);
	assert_int_equal(a.nr_maximal, 38);
	assert_int_equal(a.max_compute, 7);
	assert_true(a.sets > 100);
	enum_layouts(&b, &l, 0);
	assert_int_equal(b.max_compute, 4);
}

static void test_check_errors(void **state)
{
	const struct kerf_mig_model *m = kerf_mig_model_find("a100-sxm4-40gb");
	struct kerf_err err = { 0 };
	struct kerf_mig_layout l;

	(void)state;
	assert_non_null(m);
	assert_string_equal(m->name, "A100-40GB");
	/* 3g may start only at 0 or 4 */
	l = (struct kerf_mig_layout){ .nr = 1, .inst = { { .profile = 4, .start = 2 } } };
	kerf_err_clear(&err);
	assert_int_equal(kerf_mig_layout_check(m, &l, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "may not start at memory slice 2"));
	/* overlap */
	l = (struct kerf_mig_layout){ .nr = 2, .inst = {
		{ .profile = 4, .start = 0 }, { .profile = 0, .start = 3 } } };
	kerf_err_clear(&err);
	assert_int_equal(kerf_mig_layout_check(m, &l, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "instance 1 (1g.5gb at 3): overlaps"));
	/* two +me */
	l = (struct kerf_mig_layout){ .nr = 2, .inst = {
		{ .profile = 1, .start = 0 }, { .profile = 1, .start = 1 } } };
	kerf_err_clear(&err);
	assert_int_equal(kerf_mig_layout_check(m, &l, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "more than 1 instances of 1g.5gb+me"));
	/* unknown profile */
	l = (struct kerf_mig_layout){ .nr = 1, .inst = { { .profile = 9, .start = 0 } } };
	kerf_err_clear(&err);
	assert_int_equal(kerf_mig_layout_check(m, &l, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "no profile 9"));
	/* 4g at 0 + 3g at 4 is legal (R510+); 7g beside anything is not */
	l = (struct kerf_mig_layout){ .nr = 2, .inst = {
		{ .profile = 5, .start = 0 }, { .profile = 4, .start = 4 } } };
	assert_int_equal(kerf_mig_layout_check(m, &l, NULL), 0);
	assert_false(kerf_mig_can_add(m, &l, 0, 3));
	l.nr = 0;
	assert_true(kerf_mig_can_add(m, &l, 6, 0));
	assert_false(kerf_mig_can_add(m, &l, 6, 1));
	assert_false(kerf_mig_can_add(m, &l, 0, 7));  /* no 1g at slice 7 */
	assert_true(kerf_mig_can_add(m, &l, 2, 6));   /* the 2-slice 1g may */
	assert_null(kerf_mig_model_find("V100-16GB"));
	assert_int_equal(kerf_mig_profile_find(m, "3g.40gb"), -1);
}

/* Quota in GPU-milli of the flavor: the share of the compute slices. */
static void test_gpu_milli(void **state)
{
	const struct kerf_mig_model *h100 = kerf_mig_model_find("H100-80GB");
	const struct kerf_mig_model *a30 = kerf_mig_model_find("A30-24GB");
	size_t nr;
	const struct kerf_mig_model *all = kerf_mig_models(&nr);

	(void)state;
	assert_int_equal(kerf_mig_gpu_milli(h100, (unsigned)kerf_mig_profile_find(h100, "1g.10gb")), 142);
	assert_int_equal(kerf_mig_gpu_milli(h100, (unsigned)kerf_mig_profile_find(h100, "1g.20gb")), 142);
	assert_int_equal(kerf_mig_gpu_milli(h100, (unsigned)kerf_mig_profile_find(h100, "3g.40gb")), 428);
	assert_int_equal(kerf_mig_gpu_milli(h100, (unsigned)kerf_mig_profile_find(h100, "7g.80gb")), 1000);
	assert_int_equal(kerf_mig_gpu_milli(a30, (unsigned)kerf_mig_profile_find(a30, "2g.12gb")), 500);
	/*
	 * Rounded down: within one milli of the exact share, and the charges
	 * of every legal layout (the maximal ones of the enumeration are
	 * built below by filling greedily) never pass 1000.
	 */
	for (size_t i = 0; i < nr; i++)
		for (unsigned p = 0; p < all[i].nr_profiles; p++) {
			int32_t one = kerf_mig_gpu_milli(&all[i], p);
			int32_t exact = 1000 * all[i].profiles[p].compute_slices;
			struct kerf_mig_layout l = { .nr = 0 };
			int32_t sum = 0;

			assert_true(one * all[i].compute_slices <= exact);
			assert_true((one + 1) * all[i].compute_slices > exact);
			/* as many of p as fit, then 1g-sized fill: still <= 1000 */
			for (unsigned q = p; q < all[i].nr_profiles + p; q++) {
				unsigned r = q % all[i].nr_profiles;

				for (unsigned s = 0; s < all[i].mem_slices; s++)
					if (kerf_mig_can_add(&all[i], &l, r, s)) {
						l.inst[l.nr++] = (struct kerf_mig_instance){
							.profile = (uint8_t)r, .start = (uint8_t)s };
						sum += kerf_mig_gpu_milli(&all[i], r);
					}
			}
			assert_int_equal(kerf_mig_layout_check(&all[i], &l, NULL), 0);
			assert_true(sum <= 1000);
		}
}

/* The profile serving a request: fewest compute slices, then memory. */
static void test_profile_for(void **state)
{
	const struct kerf_mig_model *h100 = kerf_mig_model_find("H100-80GB");
	const struct kerf_mig_model *a100 = kerf_mig_model_find("A100-40GB");
	const struct kerf_mig_model *a80 = kerf_mig_model_find("A100-80GB");

	(void)state;
	assert_string_equal(h100->profiles[kerf_mig_profile_for(h100, 1, 0)].name, "1g.10gb");
	assert_string_equal(h100->profiles[kerf_mig_profile_for(h100, 1, 15 * 1024)].name, "1g.20gb");
	assert_string_equal(h100->profiles[kerf_mig_profile_for(h100, 2, 0)].name, "2g.20gb");
	assert_string_equal(h100->profiles[kerf_mig_profile_for(h100, 1, 30 * 1024)].name, "3g.40gb");
	assert_string_equal(h100->profiles[kerf_mig_profile_for(h100, 5, 0)].name, "7g.80gb");
	assert_int_equal(kerf_mig_profile_for(h100, 8, 0), -1);
	assert_int_equal(kerf_mig_profile_for(h100, 1, 200 * 1024), -1);
	/* A100-40GB: 15 GiB needs the 3g.20gb (the 2g.10gb has 9856 MiB) */
	assert_string_equal(a100->profiles[kerf_mig_profile_for(a100, 1, 15 * 1024)].name, "3g.20gb");
	/* unpublished sizes: the share of the memory slices */
	assert_int_equal(kerf_mig_profile_mem_mib(a80, (unsigned)kerf_mig_profile_find(a80, "1g.10gb")),
			 a80->mem_mib / 8);
	assert_string_equal(a80->profiles[kerf_mig_profile_for(a80, 1, a80->mem_mib / 8)].name, "1g.10gb");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_lists),
		cmocka_unit_test(test_find_names),
		cmocka_unit_test(test_nvml_ids),
		cmocka_unit_test(test_presets),
		cmocka_unit_test(test_balanced),
		cmocka_unit_test(test_enumeration),
		cmocka_unit_test(test_check_errors),
		cmocka_unit_test(test_gpu_milli),
		cmocka_unit_test(test_profile_for),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
