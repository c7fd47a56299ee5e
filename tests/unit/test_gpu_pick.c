/*
 * Unit tests for core/gpu_pick (kerf_gpus_best_fit): a fraction goes to the
 * GPU with the least room that still fits it, the lowest index on ties;
 * whole GPUs are the lowest-indexed idle ones; a GPU memory request rules
 * out GPUs without enough (or without tracked) memory; 0 when nothing fits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/gpu_pick.h"

static struct kerf_pod frac(int32_t milli, int32_t mem)
{
	return (struct kerf_pod){ .cpu_milli = 100, .nr_gpus = 1,
				  .gpu_milli = milli, .gpu_mem_mib = mem };
}

static struct kerf_pod whole(uint8_t nr)
{
	return (struct kerf_pod){ .cpu_milli = 100, .nr_gpus = nr,
				  .gpu_milli = KERF_GPU_MILLI };
}

/*
 * One node of model "T" (16384 MiB per GPU, or untracked when mem is 0)
 * whose GPU g has used[g] milli taken by a fraction pod.
 */
static void node_with_used(struct kerf_cluster *c, int32_t mem,
			   const int16_t *used, int nr_gpus)
{
	kerf_cluster_init(c);
	assert_int_equal(kerf_cluster_model(c, "T", mem, NULL), 0);
	assert_int_equal(kerf_cluster_add_node(c, "n", 64000, 262144, 0,
					       nr_gpus, NULL), 0);
	for (int g = 0; g < nr_gpus; g++) {
		struct kerf_pod p = frac(used[g], 0);

		if (used[g] == 0)
			continue;
		if (used[g] == KERF_GPU_MILLI)
			p = whole(1);
		assert_int_equal(kerf_cluster_bind(c, &p,
			(struct kerf_binding){ 0, (uint16_t)(1u << g), 0 }, NULL), 0);
	}
}

static void test_fraction_best_fit(void **state)
{
	/* free: 1000, 400, 600, 400, 150 */
	static const int16_t used[] = { 0, 600, 400, 600, 850 };
	struct kerf_cluster c;
	struct kerf_pod p;

	(void)state;
	node_with_used(&c, 16384, used, 5);
	p = frac(300, 0);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 1u << 1);
	p = frac(400, 0);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 1u << 1);
	p = frac(150, 0);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 1u << 4);
	p = frac(401, 0);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 1u << 2);
	p = frac(601, 0);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 1u << 0);
	p = whole(1);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 1u << 0);
	kerf_cluster_release(&c);
}

static void test_fraction_ties_lowest_index(void **state)
{
	static const int16_t used[] = { 0, 0, 0, 0 };
	static const int16_t used2[] = { 500, 0, 500, 500 };
	struct kerf_cluster c;
	struct kerf_pod p = frac(500, 0);

	(void)state;
	node_with_used(&c, 16384, used, 4);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 1u << 0);
	kerf_cluster_release(&c);
	node_with_used(&c, 16384, used2, 4);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 1u << 0);
	p = frac(501, 0);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 1u << 1);
	kerf_cluster_release(&c);
}

static void test_whole_lowest_idle(void **state)
{
	/* free: 600, 1000, 1000, 300, 1000, 1000 */
	static const int16_t used[] = { 400, 0, 0, 700, 0, 0 };
	struct kerf_cluster c;
	struct kerf_pod p;

	(void)state;
	node_with_used(&c, 16384, used, 6);
	p = whole(1);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 0x02);
	p = whole(2);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 0x06);
	p = whole(3);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 0x16);
	p = whole(4);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 0x36);
	p = whole(5);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 0);
	kerf_cluster_release(&c);
}

static void test_sixteen_gpus(void **state)
{
	static const int16_t used[16] = { 0 };
	struct kerf_cluster c;
	struct kerf_pod p = whole(16);

	(void)state;
	node_with_used(&c, 16384, used, 16);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 0xffff);
	kerf_cluster_release(&c);
}

static void test_nothing_to_pick(void **state)
{
	static const int16_t used[] = { 900, 1000 };
	struct kerf_cluster c;
	struct kerf_pod p = { .cpu_milli = 1000, .mem_mib = 10 };

	(void)state;
	node_with_used(&c, 16384, used, 2);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 0);
	p = frac(101, 0);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 0);
	p = frac(100, 0);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 1u << 0);
	p = whole(1);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 0);
	kerf_cluster_release(&c);
}

static void test_memory_request(void **state)
{
	static const int16_t used[] = { 0, 0, 0 };
	struct kerf_cluster c;
	struct kerf_pod p, big;

	(void)state;
	node_with_used(&c, 16384, used, 3);
	/* GPU 0: 900 milli and 4000 MiB free; GPU 1: 500 milli, all memory. */
	p = frac(100, 12384);
	assert_int_equal(kerf_cluster_bind(&c, &p, (struct kerf_binding){ 0, 1, 0 },
					   NULL), 0);
	p = frac(500, 0);
	assert_int_equal(kerf_cluster_bind(&c, &p, (struct kerf_binding){ 0, 2, 0 },
					   NULL), 0);
	/* Best fit by milli would be GPU 1, then GPU 0; memory decides. */
	p = frac(100, 4000);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 1u << 1);
	p = frac(100, 16384);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 1u << 1);
	p = frac(600, 4001);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 1u << 2);
	p = frac(600, 4000);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 1u << 0);
	p = frac(100, 16385);
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 0);
	big = whole(1);
	big.gpu_mem_mib = 16384;
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &big), 1u << 2);
	big.gpu_mem_mib = 16385;
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &big), 0);
	kerf_cluster_release(&c);
}

static void test_memory_untracked(void **state)
{
	static const int16_t used[] = { 0, 0 };
	struct kerf_cluster c;
	struct kerf_pod p = frac(100, 1);

	(void)state;
	node_with_used(&c, 0, used, 2);
	/* A memory request needs a GPU whose memory is known. */
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 0);
	p.gpu_mem_mib = 0;
	assert_int_equal(kerf_gpus_best_fit(&c.nodes[0], &p), 1u << 0);
	kerf_cluster_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fraction_best_fit),
		cmocka_unit_test(test_fraction_ties_lowest_index),
		cmocka_unit_test(test_whole_lowest_idle),
		cmocka_unit_test(test_sixteen_gpus),
		cmocka_unit_test(test_nothing_to_pick),
		cmocka_unit_test(test_memory_request),
		cmocka_unit_test(test_memory_untracked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
