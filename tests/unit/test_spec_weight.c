/*
 * Unit tests for core/spec_weight: idle capacity by model (cordoned nodes
 * and nodes without GPUs left out), the weights
 * w * max(1, F / f_S * min(1, lambda)) worked out by hand for single models,
 * lists and pods that may go anywhere,
 * a distribution without models left exactly as it is, a model with nothing
 * idle, and weights brought back under the bound with their ratios kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/spec_weight.h"

/* A one-GPU request: any model (mask 0) or the models in mask. */
static struct kerf_dist_entry one_gpu(uint64_t mask, int64_t weight)
{
	return (struct kerf_dist_entry){
		.pod = { .cpu_milli = 1000, .mem_mib = 512, .nr_gpus = 1,
			 .gpu_milli = 1000, .model_mask = mask },
		.weight = weight,
	};
}

static struct kerf_pod_dist dist_of(struct kerf_dist_entry *e, size_t nr)
{
	struct kerf_pod_dist d = { .entries = e, .nr = nr, .alloc = nr };

	for (size_t i = 0; i < nr; i++)
		d.total_weight += e[i].weight;
	return d;
}

static void weigh(struct kerf_pod_dist *out, const struct kerf_pod_dist *d,
		  const struct kerf_model_idle *idle)
{
	struct kerf_err err = { 0 };

	kerf_pod_dist_init(out);
	assert_int_equal(kerf_pod_dist_weigh_by_models(out, d, idle, &err), 0);
	assert_int_equal(out->nr, d->nr);
	for (size_t i = 0; i < d->nr; i++) {
		/* same keys, same memory, in the same order */
		assert_int_equal(out->entries[i].pod.model_mask,
				 d->entries[i].pod.model_mask);
		assert_int_equal(out->entries[i].pod.mem_mib,
				 d->entries[i].pod.mem_mib);
		assert_true(out->entries[i].weight >= 1);
	}
}

static void test_idle_of(void **state)
{
	struct kerf_cluster c;
	struct kerf_model_idle idle;
	struct kerf_pod p = { .cpu_milli = 1, .nr_gpus = 1, .gpu_milli = 300 };
	int t4, g2;

	(void)state;
	kerf_cluster_init(&c);
	t4 = kerf_cluster_model(&c, "T4", 16384, NULL);
	g2 = kerf_cluster_model(&c, "G2", 0, NULL);
	assert_true(t4 >= 0 && g2 >= 0);
	assert_true(kerf_cluster_add_node(&c, "a", 8000, 1 << 16, t4, 2, NULL) >= 0);
	assert_true(kerf_cluster_add_node(&c, "b", 8000, 1 << 16, g2, 8, NULL) >= 0);
	assert_true(kerf_cluster_add_node(&c, "cpu", 8000, 1 << 16,
					  KERF_MODEL_NONE, 0, NULL) >= 0);
	assert_true(kerf_cluster_add_node(&c, "off", 8000, 1 << 16, g2, 4, NULL) >= 0);
	c.nodes[3].cordoned = true;
	assert_int_equal(kerf_cluster_bind(&c, &p, (struct kerf_binding){ 0, 1, 0 },
					   NULL), 0);
	kerf_model_idle_of(&idle, &c);
	assert_int_equal(idle.milli[t4], 1700);
	assert_int_equal(idle.milli[g2], 8000);
	assert_int_equal(idle.total_milli, 9700);
	assert_int_equal(idle.capacity_milli, 10000);
	/*
	 * A removed node's slot is free: neither it nor a live node past
	 * nr_nodes in slot order may be missed or counted twice (a restarted
	 * controller, whose slots are packed, saw another capacity).
	 */
	assert_int_equal(kerf_cluster_remove_node(&c, 2, NULL), 0);
	kerf_model_idle_of(&idle, &c);
	assert_int_equal(idle.milli[t4], 1700);
	assert_int_equal(idle.milli[g2], 8000);
	assert_int_equal(idle.capacity_milli, 10000);
	c.nodes[3].cordoned = false;
	kerf_model_idle_of(&idle, &c);
	assert_int_equal(idle.milli[g2], 12000);
	assert_int_equal(idle.capacity_milli, 14000);
	kerf_cluster_release(&c);
}

static void test_no_models_unchanged(void **state)
{
	struct kerf_dist_entry e[3] = { one_gpu(0, 7), one_gpu(0, 2),
					{ .pod = { .cpu_milli = 4000 }, .weight = 5 } };
	struct kerf_pod_dist d = dist_of(e, 3), out;
	struct kerf_model_idle idle = { .milli = { 1000, 9000 },
					.total_milli = 10000,
					.capacity_milli = 16000 };

	(void)state;
	e[1].pod.gpu_milli = 250;
	assert_false(kerf_pod_dist_has_models(&d));
	weigh(&out, &d, &idle);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(out.entries[i].weight, e[i].weight);
	assert_int_equal(out.total_weight, 14);
	kerf_pod_dist_release(&out);
}

/*
 * T4 idle 2000, G2 idle 16000 (F = 18000); demand 10 GPUs of typical pods:
 * 5 any, 2 T4-only, 3 G2-only, plus CPU-only pods.
 *   T4-only: F/f = 9, lambda = 0.2 * 9 = 1.8 -> 1: w' = 2 * 9 = 18
 *   G2-only: F/f = 1.125, lambda = 0.3 * 1.125 = 0.3375: 0.38 < 1, so
 *            w' = 3 (never below its arrivals)
 *   any, CPU-only: unchanged
 */
static void test_single_models(void **state)
{
	struct kerf_dist_entry e[4] = {
		one_gpu(0, 5), one_gpu(1u << 0, 2), one_gpu(1u << 1, 3),
		{ .pod = { .cpu_milli = 4000 }, .weight = 4 },
	};
	struct kerf_pod_dist d = dist_of(e, 4), out;
	struct kerf_model_idle idle = { .milli = { 2000, 16000 },
					.total_milli = 18000,
					.capacity_milli = 18000 };

	(void)state;
	assert_true(kerf_pod_dist_has_models(&d));
	weigh(&out, &d, &idle);
	assert_int_equal(out.entries[0].weight, 5);
	assert_int_equal(out.entries[1].weight, 18);
	assert_int_equal(out.entries[2].weight, 3);
	assert_int_equal(out.entries[3].weight, 4);
	assert_int_equal(out.total_weight, 30);
	kerf_pod_dist_release(&out);

	/* T4 half used: F/f = 17000/1000 = 17, still binding: w' = 34 */
	idle.milli[0] = 1000;
	idle.total_milli = 17000;
	weigh(&out, &d, &idle);
	assert_int_equal(out.entries[1].weight, 34);
	kerf_pod_dist_release(&out);

	/* nothing idle on T4: the weight is left as it is */
	idle.milli[0] = 0;
	idle.total_milli = 16000;
	weigh(&out, &d, &idle);
	assert_int_equal(out.entries[1].weight, 2);
	kerf_pod_dist_release(&out);
}

/*
 * Idle 2000 / 2000 / 14000 on models 0, 1, 2; demand 12 GPUs: 10 any, 1
 * model 0 only, 1 model 0 or 1.
 *   {0}:    F/f = 9,   q = 1/12:  lambda = 0.75, w' = 6.75 -> 7
 *   {0,1}:  F/f = 4.5, q = 2/12 (both pods are confined to it): lambda =
 *           0.75, w' = 3.375 -> 3
 */
static void test_lists(void **state)
{
	struct kerf_dist_entry e[3] = { one_gpu(0, 10), one_gpu(1u << 0, 1),
					one_gpu(3u, 1) };
	struct kerf_pod_dist d = dist_of(e, 3), out;
	struct kerf_model_idle idle = { .milli = { 2000, 2000, 14000 },
					.total_milli = 18000,
					.capacity_milli = 18000 };

	(void)state;
	weigh(&out, &d, &idle);
	assert_int_equal(out.entries[0].weight, 10);
	assert_int_equal(out.entries[1].weight, 7);
	assert_int_equal(out.entries[2].weight, 3);
	kerf_pod_dist_release(&out);
}

static void test_bounded(void **state)
{
	struct kerf_dist_entry e[3] = {
		one_gpu(0, (int64_t)1 << 28), one_gpu(1u << 0, (int64_t)1 << 28),
		one_gpu(1u << 1, 1),
	};
	struct kerf_pod_dist d = dist_of(e, 3), out;
	struct kerf_model_idle idle = { .milli = { 1000, 1000000 },
					.total_milli = 1001000,
					.capacity_milli = 1001000 };

	(void)state;
	/* model 0: F/f = 1001, binding: 2^28 * 1001 is far beyond 2^30 */
	weigh(&out, &d, &idle);
	assert_true(out.total_weight <= KERF_DIST_MAX_WEIGHT);
	/* the ratio survives the halving */
	assert_in_range(out.entries[1].weight / out.entries[0].weight, 1000, 1002);
	assert_true(out.entries[2].weight >= 1);
	kerf_pod_dist_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_of),
		cmocka_unit_test(test_no_models_unchanged),
		cmocka_unit_test(test_single_models),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
