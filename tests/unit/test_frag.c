/*
 * Unit tests for core/frag: the typical-pod distribution (grouping by key,
 * order by count then larger key, the coverage cut and total_weight, the
 * memory flags), the fragment amount F on hand-computed nodes following the
 * formula in core/frag.h, and kerf_fgd_score against libm's
 * floor(100 / (1 + exp(-(delta / total) / 1000))).  The placement search
 * shared by fgd and kerf (kerf_frag_score_pod: GPUs tried, ties, no fit).
 * The bound on the typical set against a naive reference on random
 * workloads (never more than K entries, exact keys when they fit, else the
 * finest size classes that do, weights and weighted means kept, order
 * independence), distances over classes, and kerf's online model staying
 * within the bound under 20,000 arrivals of 10,000 distinct requests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/rng.h"
#include "core/frag.h"
#include "core/workload_model.h"

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

/* Counts the views a placement search measures; the measure is free CPU. */
struct measure_log {
	int calls;
};

static int64_t free_cpu_measure(const void *ctx, const struct kerf_pod_dist *d,
				const struct kerf_frag_view *v)
{
	struct measure_log *log = (struct measure_log *)(uintptr_t)ctx;
	int64_t m = 0;

	(void)d;
	log->calls++;
	/* less fragmentation where the GPU left has less room */
	for (int g = 0; g < v->nr_gpus; g++)
		m += v->gpu_free_milli[g] * v->gpu_free_milli[g];
	return m / 1000;
}

static void test_frag_score_pod(void **state)
{
	struct kerf_dist_entry e = { .pod = gpu_pod(1000, 500, 1), .weight = 1 };
	struct kerf_pod_dist d = { .entries = &e, .nr = 1, .total_weight = 1 };
	struct kerf_pod used = gpu_pod(0, 500, 1), p = gpu_pod(1000, 300, 1);
	struct measure_log log = { 0 };
	struct kerf_frag_view v;
	struct kerf_cluster c;
	uint16_t gpus = 0;
	int32_t s;

	(void)state;
	kerf_cluster_init(&c);
	assert_int_equal(kerf_cluster_model(&c, "a", 0, NULL), 0);
	assert_int_equal(kerf_cluster_add_node(&c, "n", 16000, 8192, 0, 4,
					       NULL), 0);
	/* free milli 500, 500, 1000, 200 */
	for (uint16_t g = 1; g <= 2; g++)
		assert_int_equal(kerf_cluster_bind(&c, &used,
						   (struct kerf_binding){ 0, g, 0 },
						   NULL), 0);
	used.gpu_milli = 800;
	assert_int_equal(kerf_cluster_bind(&c, &used,
					   (struct kerf_binding){ 0, 8, 0 }, NULL),
			 0);
	kerf_frag_view_of(&v, &c.nodes[0]);
	/*
	 * GPU 1 frees as much as GPU 0 and GPU 3 has no room: two views.
	 * Measures (sum of squares / 1000): now 1540, after GPU 0 1330,
	 * after GPU 2 1030 -- GPU 2 lowers it most.
	 */
	s = kerf_frag_score_pod(&c.nodes[0], &p, &v,
				free_cpu_measure(&log, &d, &v), &d,
				free_cpu_measure, &log, &gpus);
	assert_int_equal(log.calls, 3);
	assert_int_equal(gpus, 4);
	assert_int_equal(s, kerf_fgd_score(1540 - 1030, 1));
	/* equal scores (a weight that flattens every change): lowest index */
	log.calls = 0;
	p.gpu_milli = 100;
	d.total_weight = 1000000000;
	s = kerf_frag_score_pod(&c.nodes[0], &p, &v, 0, &d, free_cpu_measure,
				&log, &gpus);
	assert_int_equal(log.calls, 3);
	assert_int_equal(s, 49);
	assert_int_equal(gpus, 1);
	d.total_weight = 1;
	/* whole GPUs: the best-fit picker's, one view */
	log.calls = 0;
	p = gpu_pod(1000, 1000, 1);
	s = kerf_frag_score_pod(&c.nodes[0], &p, &v, 1540, &d,
				free_cpu_measure, &log, &gpus);
	assert_int_equal(log.calls, 1);
	assert_int_equal(gpus, 4);
	assert_int_equal(s, kerf_fgd_score(1540 - 540, 1));
	/* no GPU fits a fraction: 0, the GPUs untouched, nothing measured */
	used.gpu_milli = 900;
	assert_int_equal(kerf_cluster_bind(&c, &used,
					   (struct kerf_binding){ 0, 4, 0 }, NULL),
			 0);
	kerf_frag_view_of(&v, &c.nodes[0]);
	log.calls = 0;
	p = gpu_pod(1000, 600, 1);
	gpus = 0xff;
	s = kerf_frag_score_pod(&c.nodes[0], &p, &v, 0, &d, free_cpu_measure,
				&log, &gpus);
	assert_int_equal(s, 0);
	assert_int_equal(gpus, 0xff);
	assert_int_equal(log.calls, 0);
	kerf_cluster_release(&c);
}

static void test_dist_class_keys(void **state)
{
	/* 3152 = 0b110001010000: level 1 keeps the top bit and 5 more */
	static const struct {
		int level;
		int64_t cpu_milli;
		int32_t gpu_milli;
	} want[] = {
		{ 0, 3152, 810 }, { 1, 3136, 800 }, { 4, 3072, 768 },
		{ 6, 2048, 512 }, { 7, 0, 0 },
	};
	struct kerf_pod p = gpu_pod(3152, 810, 1), k;

	(void)state;
	p.model_mask = 6;
	p.mem_mib = 77;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		k = kerf_pod_dist_class(&p, want[i].level);
		assert_int_equal(k.cpu_milli, want[i].cpu_milli);
		assert_int_equal(k.gpu_milli, want[i].gpu_milli);
		assert_int_equal(k.nr_gpus, 1);
		assert_int_equal(k.model_mask, 6);
		assert_int_equal(k.mem_mib, 0);
	}
	/* whole GPUs and CPU-only pods keep their GPU milli */
	p = gpu_pod(100, 1000, 8);
	assert_int_equal(kerf_pod_dist_class(&p, 7).gpu_milli, 1000);
	assert_int_equal(kerf_pod_dist_class(&p, 3).cpu_milli, 96);
	p = gpu_pod(1, 0, 0);
	assert_int_equal(kerf_pod_dist_class(&p, 5).cpu_milli, 1);
	assert_int_equal(kerf_pod_dist_class(&p, 5).gpu_milli, 0);
}

/* A random request: CPU-only, a fraction, or 1..8 GPUs, some model-bound. */
static struct kerf_pod random_pod(struct kerf_rng *rng)
{
	uint64_t kind = kerf_rng_below(rng, 4);
	struct kerf_pod p = {
		.cpu_milli = 1 + (int64_t)kerf_rng_below(rng, 130000),
		.mem_mib = (int64_t)kerf_rng_below(rng, 1 << 20),
		.gpu_mem_mib = (int32_t)kerf_rng_below(rng, 81920),
		.model_mask = (uint16_t)(kerf_rng_below(rng, 8) == 0
						 ? 1u << kerf_rng_below(rng, 3)
						 : 0),
	};

	if (kind == 1) {
		p.nr_gpus = 1;
		p.gpu_milli = 1 + (int32_t)kerf_rng_below(rng, 999);
	} else if (kind >= 2) {
		p.nr_gpus = (uint8_t)(1u << kerf_rng_below(rng, 4));
		p.gpu_milli = KERF_GPU_MILLI;
	}
	return p;
}

/* Entries of up to nr_keys distinct random keys with random weights. */
static struct kerf_dist_entry *random_entries(uint64_t seed, size_t nr,
					      size_t nr_keys)
{
	struct kerf_dist_entry *e = calloc(nr, sizeof(*e));
	struct kerf_pod *keys = calloc(nr_keys, sizeof(*keys));
	struct kerf_rng rng;

	assert_non_null(e);
	assert_non_null(keys);
	kerf_rng_seed(&rng, seed);
	for (size_t i = 0; i < nr_keys; i++)
		keys[i] = random_pod(&rng);
	for (size_t i = 0; i < nr; i++) {
		e[i].pod = keys[i < nr_keys ? i : kerf_rng_below(&rng, nr_keys)];
		e[i].pod.mem_mib = (int64_t)kerf_rng_below(&rng, 1 << 20);
		e[i].weight = 1 + (int64_t)kerf_rng_below(&rng, 50);
	}
	free(keys);
	return e;
}

static bool same_class(const struct kerf_pod *a, const struct kerf_pod *b,
		       int level)
{
	struct kerf_pod ka = kerf_pod_dist_class(a, level);
	struct kerf_pod kb = kerf_pod_dist_class(b, level);

	return ka.cpu_milli == kb.cpu_milli && ka.gpu_milli == kb.gpu_milli &&
	       ka.nr_gpus == kb.nr_gpus && ka.model_mask == kb.model_mask;
}

static int by_weight_desc(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return a > b ? -1 : a < b;
}

/* FGD's rule over the classes of a level, counted naively. */
static size_t naive_typical_count(const struct kerf_dist_entry *e, size_t nr,
				  int level, int pct)
{
	int64_t *w = calloc(nr, sizeof(*w)), total = 0, covered = 0;
	bool *done = calloc(nr, sizeof(*done));
	size_t nr_classes = 0, keep = 0;

	assert_non_null(w);
	assert_non_null(done);
	for (size_t i = 0; i < nr; i++) {
		total += e[i].weight;
		if (done[i])
			continue;
		for (size_t j = i; j < nr; j++)
			if (!done[j] && same_class(&e[i].pod, &e[j].pod, level)) {
				w[nr_classes] += e[j].weight;
				done[j] = true;
			}
		nr_classes++;
	}
	qsort(w, nr_classes, sizeof(*w), by_weight_desc);
	while (keep < nr_classes && covered * 100 < total * pct)
		covered += w[keep++];
	free(w);
	free(done);
	return keep;
}

static int bounded(struct kerf_pod_dist *d, const struct kerf_dist_entry *e,
		   size_t nr, int pct, size_t k)
{
	return kerf_pod_dist_typical_bounded(d, e, nr, pct, k,
					     KERF_DIST_MEAN_MEM, NULL);
}

/* Each entry: its class's members' weight and weighted means. */
static int64_t check_classes(const struct kerf_pod_dist *d,
			     const struct kerf_dist_entry *e, size_t nr)
{
	int64_t kept = 0;

	for (size_t i = 0; i < d->nr; i++) {
		const struct kerf_pod *r = &d->entries[i].pod;
		__int128 cpu = 0, gpu = 0, mem = 0;
		int64_t w = 0;

		for (size_t j = 0; j < nr; j++) {
			if (!same_class(r, &e[j].pod, d->class_level))
				continue;
			w += e[j].weight;
			cpu += (__int128)e[j].pod.cpu_milli * e[j].weight;
			gpu += (__int128)e[j].pod.gpu_milli * e[j].weight;
			mem += (__int128)e[j].pod.mem_mib * e[j].weight;
		}
		assert_int_equal(d->entries[i].weight, w);
		assert_int_equal(r->cpu_milli, (int64_t)(cpu / w));
		assert_int_equal(r->gpu_milli, (int32_t)(gpu / w));
		assert_int_equal(r->mem_mib, (int64_t)(mem / w));
		assert_true(i == 0 || d->entries[i - 1].weight >= w);
		kept += w;
	}
	return kept;
}

static void check_bound(const struct kerf_dist_entry *e, size_t nr,
			int64_t total, size_t k, int pct)
{
	struct kerf_pod_dist d;
	int lv;

	kerf_pod_dist_init(&d);
	assert_int_equal(bounded(&d, e, nr, pct, k), 0);
	lv = d.class_level;
	assert_true(d.nr >= 1 && d.nr <= k);
	assert_true(lv >= 0 && lv < KERF_DIST_LEVELS);
	/* the finest level that fits, and FGD's rule at that level */
	if (lv > 0)
		assert_true(naive_typical_count(e, nr, lv - 1, pct) > k);
	if (lv < KERF_DIST_LEVELS - 1)
		assert_int_equal(d.nr, naive_typical_count(e, nr, lv, pct));
	assert_int_equal(d.total_weight, check_classes(&d, e, nr));
	if (pct == 100 && lv < KERF_DIST_LEVELS - 1)
		assert_int_equal(d.total_weight, total);
	kerf_pod_dist_release(&d);
}

/*
 * The bound against a naive reference on random workloads: never more than
 * K entries; exact keys whenever FGD's rule needs at most K of them, else
 * the finest level that fits; each entry the weight and weighted mean of
 * its class's members, lying within the class; with full coverage and room
 * at the level, the total weight kept.
 */
static void test_dist_bound(void **state)
{
	static const size_t ks[] = { 1, 3, 16, 40, KERF_DIST_MAX_ENTRIES };
	static const size_t nr_keys[] = { 1, 10, 39, 40, 41, 300, 3000 };
	static const int pcts[] = { 50, 95, 100 };

	(void)state;
	for (size_t a = 0; a < sizeof(nr_keys) / sizeof(nr_keys[0]); a++) {
		size_t nr = nr_keys[a] * 2;
		struct kerf_dist_entry *e = random_entries(a, nr, nr_keys[a]);
		int64_t total = 0;

		for (size_t i = 0; i < nr; i++)
			total += e[i].weight;
		for (size_t b = 0; b < sizeof(ks) / sizeof(ks[0]); b++)
			for (size_t c = 0; c < sizeof(pcts) / sizeof(pcts[0]); c++)
				check_bound(e, nr, total, ks[b], pcts[c]);
		free(e);
	}
}

/* The same entries in another order, or split, give the same bytes. */
static void test_dist_bound_deterministic(void **state)
{
	enum { NR = 2000 };
	struct kerf_dist_entry *e = random_entries(7, NR, 1500);
	struct kerf_dist_entry *f = calloc(NR + 1, sizeof(*f));
	struct kerf_pod_dist a, b;
	struct kerf_rng rng;

	(void)state;
	assert_non_null(f);
	kerf_pod_dist_init(&a);
	kerf_pod_dist_init(&b);
	assert_int_equal(bounded(&a, e, NR, 95, 64), 0);
	assert_true(a.class_level > 0);
	memcpy(f, e, NR * sizeof(*f));
	kerf_rng_seed(&rng, 3);
	kerf_rng_shuffle(&rng, f, NR, sizeof(*f));
	/* the first entry of weight 2 or more split in two */
	for (size_t i = 0; i < NR; i++)
		if (f[i].weight > 1) {
			f[NR] = f[i];
			f[NR].weight = 1;
			f[i].weight--;
			break;
		}
	assert_int_equal(bounded(&b, f, NR + 1, 95, 64), 0);
	assert_int_equal(a.nr, b.nr);
	assert_int_equal(a.class_level, b.class_level);
	assert_int_equal(a.total_weight, b.total_weight);
	assert_memory_equal(a.entries, b.entries, a.nr * sizeof(*a.entries));
	kerf_pod_dist_release(&a);
	kerf_pod_dist_release(&b);
	free(f);
	free(e);
}

/* More GPU counts and model sets than K: the K heaviest at level 7. */
static void test_dist_bound_cut(void **state)
{
	struct kerf_dist_entry e[] = {
		{ .pod = gpu_pod(1000, 1000, 1), .weight = 5 },
		{ .pod = gpu_pod(2000, 1000, 2), .weight = 4 },
		{ .pod = gpu_pod(3000, 1000, 4), .weight = 3 },
		{ .pod = gpu_pod(4000, 1000, 8), .weight = 2 },
	};
	struct kerf_pod_dist d;
	struct kerf_err err = { 0 };

	(void)state;
	kerf_pod_dist_init(&d);
	assert_int_equal(kerf_pod_dist_typical_bounded(&d, e, 4, 100, 2, 0,
						       NULL), 0);
	assert_int_equal(d.class_level, KERF_DIST_LEVELS - 1);
	assert_int_equal(d.nr, 2);
	assert_int_equal(d.total_weight, 9);
	assert_entry(&d, 0, gpu_pod(1000, 1000, 1), 5);
	assert_entry(&d, 1, gpu_pod(2000, 1000, 2), 4);
	/* three of them fit exactly */
	assert_int_equal(kerf_pod_dist_typical_bounded(&d, e, 4, 80, 3, 0,
						       NULL), 0);
	assert_int_equal(d.class_level, 0);
	assert_int_equal(d.nr, 3);
	assert_int_equal(kerf_pod_dist_typical_bounded(&d, e, 4, 80, 0, 0,
						       &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "typical pods: at most 0 entries");
	assert_int_equal(d.nr, 3);
	kerf_pod_dist_release(&d);
}

/* Distributions over classes compare class by class, never across levels. */
static void test_dist_distance_classes(void **state)
{
	struct kerf_dist_entry ea[2], eb[2];
	struct kerf_pod_dist a = { .entries = ea, .nr = 2, .total_weight = 4,
				   .class_level = 3 };
	struct kerf_pod_dist b = { .entries = eb, .nr = 2, .total_weight = 4,
				   .class_level = 3 };

	(void)state;
	/* level 3: CPU classes of 1/8 octave, fractions in 64 milli */
	ea[0] = (struct kerf_dist_entry){ .pod = gpu_pod(4100, 300, 1), .weight = 2 };
	ea[1] = (struct kerf_dist_entry){ .pod = gpu_pod(9000, 1000, 1), .weight = 2 };
	eb[0] = (struct kerf_dist_entry){ .pod = gpu_pod(9200, 1000, 1), .weight = 2 };
	eb[1] = (struct kerf_dist_entry){ .pod = gpu_pod(4500, 310, 1), .weight = 2 };
	assert_int_equal(kerf_pod_dist_distance(&a, &b), 0);
	eb[1].pod.gpu_milli = 330;
	assert_int_equal(kerf_pod_dist_distance(&a, &b), 500);
	eb[1].pod.gpu_milli = 310;
	b.class_level = 2;
	assert_int_equal(kerf_pod_dist_distance(&a, &b), 1000);
}

/*
 * The online model of kerf under 10,000 distinct requests: its typical
 * distribution never holds more than KERF_DIST_MAX_ENTRIES.
 */
static void test_workload_model_bounded(void **state)
{
	struct kerf_workload_model m;
	struct kerf_rng rng;
	size_t most = 0;
	int levels = 0;

	(void)state;
	assert_int_equal(kerf_workload_model_init(&m, 95, 1024, 10, 1u << 16), 0);
	kerf_rng_seed(&rng, 11);
	for (int i = 0; i < 20000; i++) {
		struct kerf_pod p = random_pod(&rng);

		p.cpu_milli = 1 + i % 10000 * 13;
		if (kerf_workload_model_observe(&m, &p)) {
			assert_true(m.dist.nr <= KERF_DIST_MAX_ENTRIES);
			levels |= 1 << m.dist.class_level;
		}
		if (m.dist.nr > most)
			most = m.dist.nr;
	}
	assert_true(most <= KERF_DIST_MAX_ENTRIES);
	assert_true(levels & 1);   /* exact while few keys were seen */
	assert_true(levels & ~1);  /* classes once many were */
	kerf_workload_model_release(&m);
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
		cmocka_unit_test(test_frag_score_pod),
		cmocka_unit_test(test_dist_class_keys),
		cmocka_unit_test(test_dist_bound),
		cmocka_unit_test(test_dist_bound_deterministic),
		cmocka_unit_test(test_dist_bound_cut),
		cmocka_unit_test(test_dist_distance_classes),
		cmocka_unit_test(test_workload_model_bounded),
		cmocka_unit_test(test_fgd_score_matches_libm),
		cmocka_unit_test(test_fgd_score_fixed_points),
		cmocka_unit_test(test_fgd_thresholds_are_rounded_libm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
