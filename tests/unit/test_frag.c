/*
 * Unit tests for core/frag: the typical-pod distribution (grouping by key,
 * order by count then larger key, the coverage cut and total_weight, the
 * memory flags), the fragment amount F on hand-computed nodes following the
 * formula in core/frag.h, and kerf_fgd_score against libm's
 * floor(100 / (1 + exp(-(delta / total) / 1000))).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "core/frag.h"

static struct kerf_pod gpu_pod(int64_t cpu, int32_t milli, uint8_t nr)
{
	return (struct kerf_pod){ .cpu_milli = cpu, .gpu_milli = milli,
				  .nr_gpus = nr };
}

/* Append count copies of p (with memory mem_mib) to pods[*n]. */
static void add(struct kerf_pod *pods, size_t *n, struct kerf_pod p,
		int64_t mem_mib, int count)
{
	p.mem_mib = mem_mib;
	for (int i = 0; i < count; i++)
		pods[(*n)++] = p;
}

static void assert_entry(const struct kerf_pod_dist *d, size_t i,
			 struct kerf_pod key, int64_t weight)
{
	const struct kerf_pod *e = &d->entries[i].pod;

	assert_true(i < d->nr);
	assert_int_equal(e->cpu_milli, key.cpu_milli);
	assert_int_equal(e->mem_mib, key.mem_mib);
	assert_int_equal(e->gpu_milli, key.gpu_milli);
	assert_int_equal(e->gpu_mem_mib, key.gpu_mem_mib);
	assert_int_equal(e->nr_gpus, key.nr_gpus);
	assert_int_equal(e->model_mask, key.model_mask);
	assert_int_equal(d->entries[i].weight, weight);
}

static void test_dist_groups_by_key(void **state)
{
	struct kerf_pod pods[16];
	struct kerf_pod_dist d;
	size_t n = 0;

	(void)state;
	/* Memory is not part of the key by default. */
	add(pods, &n, gpu_pod(2000, 1000, 1), 100, 1);
	add(pods, &n, gpu_pod(1000, 500, 1), 100, 1);
	add(pods, &n, gpu_pod(4000, 0, 0), 100, 1);
	add(pods, &n, gpu_pod(1000, 500, 1), 200, 1);
	add(pods, &n, gpu_pod(2000, 1000, 1), 300, 1);
	add(pods, &n, gpu_pod(1000, 500, 1), 300, 1);
	kerf_pod_dist_init(&d);
	assert_int_equal(kerf_pod_dist_typical(&d, pods, n, 100, 0, NULL), 0);
	assert_int_equal(d.nr, 3);
	assert_int_equal(d.total_weight, 6);
	assert_entry(&d, 0, gpu_pod(1000, 500, 1), 3);
	assert_entry(&d, 1, gpu_pod(2000, 1000, 1), 2);
	assert_entry(&d, 2, gpu_pod(4000, 0, 0), 1);
	kerf_pod_dist_release(&d);
	assert_null(d.entries);
	assert_int_equal(d.nr, 0);
}

static void test_dist_tie_order(void **state)
{
	struct kerf_pod pods[16], h = gpu_pod(1000, 300, 1);
	struct kerf_pod_dist d;
	size_t n = 0;

	(void)state;
	h.model_mask = 2;
	/* Equal counts: larger cpu, then gpu_milli, nr_gpus, model mask. */
	add(pods, &n, gpu_pod(1000, 300, 1), 0, 2);  /* G */
	add(pods, &n, gpu_pod(1000, 1000, 1), 0, 2); /* E */
	add(pods, &n, h, 0, 2);                      /* H */
	add(pods, &n, gpu_pod(3000, 0, 0), 0, 2);    /* F */
	add(pods, &n, gpu_pod(1000, 1000, 2), 0, 2); /* D */
	add(pods, &n, gpu_pod(500, 1000, 4), 0, 3);  /* most pods */
	kerf_pod_dist_init(&d);
	assert_int_equal(kerf_pod_dist_typical(&d, pods, n, 100, 0, NULL), 0);
	assert_int_equal(d.nr, 6);
	assert_int_equal(d.total_weight, 13);
	assert_entry(&d, 0, gpu_pod(500, 1000, 4), 3);
	assert_entry(&d, 1, gpu_pod(3000, 0, 0), 2);
	assert_entry(&d, 2, gpu_pod(1000, 1000, 2), 2);
	assert_entry(&d, 3, gpu_pod(1000, 1000, 1), 2);
	assert_entry(&d, 4, h, 2);
	assert_entry(&d, 5, gpu_pod(1000, 300, 1), 2);
	kerf_pod_dist_release(&d);
}

static void test_dist_coverage_cut(void **state)
{
	static const struct {
		int pct;
		size_t nr;
		int64_t total;
	} want[] = {
		{ 1, 1, 10 },  { 50, 1, 10 },  { 51, 2, 16 },  { 80, 2, 16 },
		{ 81, 3, 19 }, { 95, 3, 19 },  { 96, 4, 20 },  { 100, 4, 20 },
	};
	struct kerf_pod pods[20];
	struct kerf_pod_dist d;
	size_t n = 0;

	(void)state;
	add(pods, &n, gpu_pod(1000, 250, 1), 0, 10);
	add(pods, &n, gpu_pod(1000, 1000, 1), 0, 6);
	add(pods, &n, gpu_pod(8000, 1000, 8), 0, 3);
	add(pods, &n, gpu_pod(2000, 0, 0), 0, 1);
	kerf_pod_dist_init(&d);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int64_t sum = 0;

		assert_int_equal(kerf_pod_dist_typical(&d, pods, n, want[i].pct,
						       0, NULL), 0);
		assert_int_equal(d.nr, want[i].nr);
		assert_int_equal(d.total_weight, want[i].total);
		for (size_t k = 0; k < d.nr; k++)
			sum += d.entries[k].weight;
		assert_int_equal(sum, d.total_weight);
		assert_entry(&d, 0, gpu_pod(1000, 250, 1), 10);
	}
	kerf_pod_dist_release(&d);
}

static void test_dist_memory_flags(void **state)
{
	struct kerf_pod pods[8], key = gpu_pod(1000, 500, 1);
	struct kerf_pod_dist d;
	size_t n = 0;

	(void)state;
	add(pods, &n, gpu_pod(1000, 500, 1), 100, 1);
	add(pods, &n, gpu_pod(1000, 500, 1), 600, 1);
	add(pods, &n, gpu_pod(1000, 500, 1), 200, 1);
	kerf_pod_dist_init(&d);
	/* Mean memory: one key with the mean of the group. */
	add(pods, &n, gpu_pod(1000, 500, 1), 300, 1);
	assert_int_equal(kerf_pod_dist_typical(&d, pods, n, 100,
					       KERF_DIST_MEAN_MEM, NULL), 0);
	assert_int_equal(d.nr, 1);
	key.mem_mib = (100 + 600 + 200 + 300) / 4;
	assert_entry(&d, 0, key, 4);
	/* Without the flag: memory is dropped. */
	assert_int_equal(kerf_pod_dist_typical(&d, pods, n, 100, 0, NULL), 0);
	key.mem_mib = 0;
	assert_entry(&d, 0, key, 4);
	/* GPU memory is not part of the key either: keys stay merged. */
	n = 0;
	add(pods, &n, gpu_pod(1000, 500, 1), 100, 1);
	add(pods, &n, gpu_pod(1000, 500, 1), 200, 1);
	pods[1].gpu_mem_mib = 5;
	add(pods, &n, gpu_pod(1000, 500, 1), 300, 1);
	assert_int_equal(kerf_pod_dist_typical(&d, pods, n, 100,
					       KERF_DIST_MEAN_MEM, NULL), 0);
	assert_int_equal(d.nr, 1);
	assert_int_equal(d.entries[0].weight, 3);
	assert_int_equal(d.entries[0].pod.mem_mib, 200);
	assert_int_equal(d.entries[0].pod.gpu_mem_mib, 1);
	kerf_pod_dist_release(&d);
}

static void test_dist_errors_and_empty(void **state)
{
	struct kerf_pod pods[1] = { { .cpu_milli = 1 } };
	struct kerf_dist_entry e[2] = {
		{ .pod = { .cpu_milli = 1 }, .weight = 1 },
		{ .pod = { .cpu_milli = 2 }, .weight = 0 },
	};
	struct kerf_pod_dist d;
	struct kerf_err err = { 0 };

	(void)state;
	kerf_pod_dist_init(&d);
	assert_int_equal(kerf_pod_dist_typical(&d, pods, 1, 100, 0, NULL), 0);
	assert_int_equal(kerf_pod_dist_typical(&d, pods, 1, 0, 0, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "coverage 0%: must be 1..100");
	kerf_err_clear(&err);
	assert_int_equal(kerf_pod_dist_typical(&d, pods, 1, 101, 0, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "coverage 101%: must be 1..100");
	kerf_err_clear(&err);
	/* d is untouched by a failed call. */
	assert_int_equal(d.nr, 1);
	assert_int_equal(d.total_weight, 1);
	assert_int_equal(kerf_pod_dist_typical_weighted(&d, e, 2, 100, 0, &err),
			 -KERF_ELIMIT);
	assert_string_equal(err.msg, "typical pods: weights must be positive and sum below 2^30");
	kerf_err_clear(&err);
	e[1].weight = KERF_DIST_MAX_WEIGHT;
	assert_int_equal(kerf_pod_dist_typical_weighted(&d, e, 2, 100, 0, &err),
			 -KERF_ELIMIT);
	e[1].weight = KERF_DIST_MAX_WEIGHT - 1;
	assert_int_equal(kerf_pod_dist_typical_weighted(&d, e, 2, 100, 0, NULL),
			 0);
	assert_int_equal(d.total_weight, KERF_DIST_MAX_WEIGHT);
	assert_int_equal(d.entries[0].pod.cpu_milli, 2);
	assert_int_equal(kerf_pod_dist_typical(&d, pods, 0, 95, 0, NULL), 0);
	assert_int_equal(d.nr, 0);
	assert_int_equal(d.total_weight, 0);
	kerf_pod_dist_release(&d);
}

static void test_dist_weighted_merges(void **state)
{
	struct kerf_dist_entry e[] = {
		{ .pod = { .cpu_milli = 1000, .nr_gpus = 1, .gpu_milli = 200,
			   .mem_mib = 7 }, .weight = 2 },
		{ .pod = { .cpu_milli = 3000 }, .weight = 5 },
		{ .pod = { .cpu_milli = 1000, .nr_gpus = 1, .gpu_milli = 200,
			   .mem_mib = 9 }, .weight = 4 },
	};
	struct kerf_pod_dist d;

	(void)state;
	kerf_pod_dist_init(&d);
	assert_int_equal(kerf_pod_dist_typical_weighted(&d, e, 3, 100, 0, NULL),
			 0);
	assert_int_equal(d.nr, 2);
	assert_int_equal(d.total_weight, 11);
	assert_entry(&d, 0, gpu_pod(1000, 200, 1), 6);
	assert_entry(&d, 1, gpu_pod(3000, 0, 0), 5);
	kerf_pod_dist_release(&d);
}

/* A view of a node of model 0 with the given free GPU milli. */
static struct kerf_frag_view view(int64_t cpu, int64_t mem,
				  const int16_t *free_milli, int nr)
{
	struct kerf_frag_view v;

	memset(&v, 0, sizeof(v));
	v.cpu_free_milli = cpu;
	v.mem_free_mib = mem;
	v.model = 0;
	v.nr_gpus = (uint8_t)nr;
	for (int g = 0; g < nr; g++)
		v.gpu_free_milli[g] = free_milli[g];
	return v;
}

static void test_frag_amount_hand_computed(void **state)
{
	static const int16_t free_milli[] = { 1000, 300, 600, 0 };
	struct kerf_dist_entry e[7];
	struct kerf_pod_dist d = { .entries = e, .nr = 7, .total_weight = 11 };
	struct kerf_frag_view v = view(10000, 5000, free_milli, 4);
	int64_t idle = 1900;

	(void)state;
	memset(e, 0, sizeof(e));
	/* fits: GPUs 0 and 2 hold 500, the 300 and 0 left are too small */
	e[0] = (struct kerf_dist_entry){ .pod = gpu_pod(1000, 500, 1), .weight = 3 };
	/* two whole GPUs: only one idle GPU -> all of it is fragment */
	e[1] = (struct kerf_dist_entry){ .pod = gpu_pod(2000, 1000, 2), .weight = 2 };
	/* no GPU asked -> idle */
	e[2] = (struct kerf_dist_entry){ .pod = gpu_pod(1000, 0, 0), .weight = 1 };
	/* not enough cpu -> idle */
	e[3] = (struct kerf_dist_entry){ .pod = gpu_pod(20000, 200, 1), .weight = 1 };
	/* another model only -> idle */
	e[4] = (struct kerf_dist_entry){ .pod = gpu_pod(0, 100, 1), .weight = 1 };
	e[4].pod.model_mask = 1u << 1;
	/* this model among others; every GPU with room fits -> 0 */
	e[5] = (struct kerf_dist_entry){ .pod = gpu_pod(0, 100, 1), .weight = 1 };
	e[5].pod.model_mask = (1u << 0) | (1u << 1);
	/* a whole GPU, memory too large only counts with KERF_FRAG_MEM */
	e[6] = (struct kerf_dist_entry){ .pod = gpu_pod(0, 1000, 1), .weight = 2 };
	e[6].pod.mem_mib = 6000;
	assert_int_equal(kerf_frag_amount(&d, &v, 0),
			 3 * 300 + 2 * idle + idle + idle + idle + 0 + 2 * 900);
	assert_int_equal(kerf_frag_amount(&d, &v, KERF_FRAG_MEM),
			 3 * 300 + 2 * idle + idle + idle + idle + 0 + 2 * idle);
	/* Exactly enough cpu and memory still fits. */
	v.cpu_free_milli = 20000;
	v.mem_free_mib = 6000;
	assert_int_equal(kerf_frag_amount(&d, &v, KERF_FRAG_MEM),
			 3 * 300 + 2 * idle + idle + 0 + idle + 0 + 2 * 900);
}

static void test_frag_amount_no_idle(void **state)
{
	static const int16_t busy[] = { 0, 0 };
	struct kerf_dist_entry e = { .pod = gpu_pod(0, 0, 0), .weight = 5 };
	struct kerf_pod_dist d = { .entries = &e, .nr = 1, .total_weight = 5 };
	struct kerf_frag_view v = view(10000, 100, busy, 2);

	(void)state;
	assert_int_equal(kerf_frag_amount(&d, &v, 0), 0);
	v = view(10000, 100, busy, 0);
	assert_int_equal(kerf_frag_amount(&d, &v, 0), 0);
	v.nr_gpus = 1;
	v.gpu_free_milli[0] = 1;
	assert_int_equal(kerf_frag_amount(&d, &v, 0), 5);
}

static void test_frag_capacity(void **state)
{
	static const int16_t free_milli[] = { 1000, 700, 0, 0 };
	static const int16_t three_idle[] = { 1000, 1000, 1000, 0 };
	struct kerf_dist_entry e[2];
	struct kerf_pod_dist d = { .entries = e, .nr = 2, .total_weight = 2 };
	struct kerf_frag_view v = view(10000, 5000, free_milli, 4);

	(void)state;
	/* 300-milli pods reach all 1700 milli; one-GPU pods only the idle GPU */
	e[0] = (struct kerf_dist_entry){ .pod = gpu_pod(1000, 300, 1), .weight = 1 };
	e[1] = (struct kerf_dist_entry){ .pod = gpu_pod(1000, 1000, 1), .weight = 1 };
	assert_int_equal(kerf_frag_capacity(&d, &v, 0), 0 + 700);
	/* CPU for only 3 copies of the fraction: 900 reachable */
	e[0].pod.cpu_milli = 3000;
	assert_int_equal(kerf_frag_capacity(&d, &v, 0), 800 + 700);
	/* memory for 2 copies, only counted with KERF_FRAG_MEM */
	e[0].pod.cpu_milli = 1000;
	e[0].pod.mem_mib = 2000;
	assert_int_equal(kerf_frag_capacity(&d, &v, 0), 0 + 700);
	assert_int_equal(kerf_frag_capacity(&d, &v, KERF_FRAG_MEM), 1100 + 700);
	/* FGD's measure sees neither: 700 and 1000 both fit a 300 */
	assert_int_equal(kerf_frag_amount(&d, &v, 0), 0 + 700);
	/* two-GPU pods use whole pairs: one pair of three idle GPUs */
	d.nr = 1;
	e[0] = (struct kerf_dist_entry){ .pod = gpu_pod(1000, 1000, 2), .weight = 1 };
	d.total_weight = 1;
	v = view(10000, 5000, three_idle, 4);
	assert_int_equal(kerf_frag_capacity(&d, &v, 0), 1000);
	/* CPU-only typical pods count every idle GPU, as in F */
	e[0] = (struct kerf_dist_entry){ .pod = gpu_pod(1000, 0, 0), .weight = 1 };
	assert_int_equal(kerf_frag_capacity(&d, &v, 0), 3000);
}

static void test_dist_distance(void **state)
{
	struct kerf_dist_entry ea[2], eb[2];
	struct kerf_pod_dist a = { .entries = ea, .nr = 2, .total_weight = 4 };
	struct kerf_pod_dist b = { .entries = eb, .nr = 2, .total_weight = 4 };

	(void)state;
	ea[0] = (struct kerf_dist_entry){ .pod = gpu_pod(1000, 300, 1), .weight = 2 };
	ea[1] = (struct kerf_dist_entry){ .pod = gpu_pod(1000, 1000, 1), .weight = 2 };
	eb[0] = ea[1];
	eb[1] = ea[0];
	assert_int_equal(kerf_pod_dist_distance(&a, &b), 0);
	/* 3:1 against 1:1 -> total variation 0.25 */
	eb[0].weight = 3;
	eb[1].weight = 1;
	assert_int_equal(kerf_pod_dist_distance(&a, &b), 250);
	/* disjoint keys -> 1 */
	eb[0].pod = gpu_pod(2000, 300, 1);
	eb[1].pod = gpu_pod(2000, 1000, 1);
	assert_int_equal(kerf_pod_dist_distance(&a, &b), 1000);
	b.total_weight = 0;
	assert_int_equal(kerf_pod_dist_distance(&a, &b), 1000);
}

static void test_frag_view(void **state)
{
	struct kerf_cluster c;
	struct kerf_pod p = gpu_pod(3000, 300, 1);
	struct kerf_frag_view v;

	(void)state;
	p.mem_mib = 1024;
	kerf_cluster_init(&c);
	assert_int_equal(kerf_cluster_model(&c, "a", 0, NULL), 0);
	assert_int_equal(kerf_cluster_model(&c, "b", 0, NULL), 1);
	assert_int_equal(kerf_cluster_add_node(&c, "n", 16000, 8192, 1, 3,
					       NULL), 0);
	assert_int_equal(kerf_cluster_bind(&c, &p, (struct kerf_binding){ 0, 4, 0 },
					   NULL), 0);
	kerf_frag_view_of(&v, &c.nodes[0]);
	assert_int_equal(v.cpu_free_milli, 13000);
	assert_int_equal(v.mem_free_mib, 7168);
	assert_int_equal(v.model, 1);
	assert_int_equal(v.nr_gpus, 3);
	assert_int_equal(v.gpu_free_milli[0], 1000);
	assert_int_equal(v.gpu_free_milli[2], 700);
	kerf_frag_view_sub(&v, &p, 2);
	assert_int_equal(v.cpu_free_milli, 10000);
	assert_int_equal(v.mem_free_mib, 6144);
	assert_int_equal(v.gpu_free_milli[0], 1000);
	assert_int_equal(v.gpu_free_milli[1], 700);
	assert_int_equal(v.gpu_free_milli[2], 700);
	p = gpu_pod(0, 1000, 2);
	kerf_frag_view_sub(&v, &p, 3);
	assert_int_equal(v.gpu_free_milli[0], 0);
	assert_int_equal(v.gpu_free_milli[1], -300);
	kerf_cluster_release(&c);
}

static int libm_score(int64_t delta, int64_t total, double *exact)
{
	double x = (double)delta / (double)total / 1000.0;

	*exact = 100.0 / (1.0 + exp(-x));
	return (int)floor(*exact);
}

static void test_fgd_score_matches_libm(void **state)
{
	static const int64_t totals[] = { 1, 2, 3, 7, 10, 19, 100, 997,
					  1000, 4096 };
	long checked = 0, near_boundary = 0;

	(void)state;
	for (size_t t = 0; t < sizeof(totals) / sizeof(totals[0]); t++) {
		int64_t total = totals[t];

		/* x from -6 to 6, past both ends of the 0..99 range */
		for (int64_t i = -60000; i <= 60000; i++) {
			int64_t delta = i * total / 10 + i % 7;
			double exact;
			int want = libm_score(delta, total, &exact);
			int got = kerf_fgd_score(delta, total);

			checked++;
			if (got == want)
				continue;
			/* Only where the double sits on an integer boundary. */
			if (fabs(exact - nearbyint(exact)) >= 1e-9)
				fail_msg("delta %lld total %lld: got %d, libm %.12f",
					 (long long)delta, (long long)total,
					 got, exact);
			near_boundary++;
		}
	}
	assert_true(checked > 1000000);
	assert_int_equal(near_boundary, 0);
}

static void test_fgd_score_fixed_points(void **state)
{
	double exact;

	(void)state;
	assert_int_equal(kerf_fgd_score(0, 1), 50);
	assert_int_equal(kerf_fgd_score(0, 12345), 50);
	assert_int_equal(kerf_fgd_score(-1, 1), 49);
	assert_int_equal(kerf_fgd_score(-1, 1000000), 49);
	assert_int_equal(kerf_fgd_score(1, 1000000), 50);
	/* no distribution: neutral */
	assert_int_equal(kerf_fgd_score(123456, 0), 50);
	assert_int_equal(kerf_fgd_score(-123456, -5), 50);
	/* saturation; 16000 milli-GPU per pod is the largest delta */
	assert_int_equal(kerf_fgd_score(16000, 1), 99);
	assert_int_equal(kerf_fgd_score(-16000, 1), 0);
	assert_int_equal(kerf_fgd_score(16000 * KERF_DIST_MAX_WEIGHT,
					KERF_DIST_MAX_WEIGHT), 99);
	assert_int_equal(kerf_fgd_score(-16000 * KERF_DIST_MAX_WEIGHT,
					KERF_DIST_MAX_WEIGHT), 0);
	/*
	 * Far out the double rounds to exactly 100.0 while the true value is
	 * below 100: the one place where floor() of libm may differ.
	 */
	assert_int_equal(libm_score(40000, 1, &exact), 100);
	assert_int_equal(kerf_fgd_score(40000, 1), 99);
	/* one sigmoid step: 100 / (1 + e^-1) = 73.1 */
	assert_int_equal(kerf_fgd_score(1000, 1), 73);
	assert_int_equal(kerf_fgd_score(-1000, 1), 26);
}

static void test_fgd_thresholds_are_rounded_libm(void **state)
{
	int prev = 0;

	(void)state;
	/*
	 * With total 65536, the smallest delta scoring s is the table's
	 * round(1000 * ln(s / (100 - s)) * 65536).
	 */
	for (int s = 1; s <= 99; s++) {
		int64_t lo = -400000000, hi = 400000000;
		double want = 1000.0 * log(s / (100.0 - s)) * 65536.0;

		while (lo < hi) {
			int64_t mid = lo + (hi - lo) / 2;

			if (kerf_fgd_score(mid, 65536) >= s)
				hi = mid;
			else
				lo = mid + 1;
		}
		assert_true(fabs((double)lo - want) <= 0.5 + 1e-6);
		assert_int_equal(kerf_fgd_score(lo, 65536), s);
		assert_int_equal(kerf_fgd_score(lo - 1, 65536), s - 1);
		assert_true(s == 1 || lo > prev);
		prev = (int)lo;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dist_groups_by_key),
		cmocka_unit_test(test_dist_tie_order),
		cmocka_unit_test(test_dist_coverage_cut),
		cmocka_unit_test(test_dist_memory_flags),
		cmocka_unit_test(test_dist_errors_and_empty),
		cmocka_unit_test(test_dist_weighted_merges),
		cmocka_unit_test(test_frag_amount_hand_computed),
		cmocka_unit_test(test_frag_amount_no_idle),
		cmocka_unit_test(test_frag_capacity),
		cmocka_unit_test(test_dist_distance),
		cmocka_unit_test(test_frag_view),
		cmocka_unit_test(test_fgd_score_matches_libm),
		cmocka_unit_test(test_fgd_score_fixed_points),
		cmocka_unit_test(test_fgd_thresholds_are_rounded_libm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
