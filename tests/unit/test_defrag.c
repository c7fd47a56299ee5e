/*
 * test_defrag: making room by moving movable pods.  A whole-GPU pod that
 * fits nowhere because lone fractions hold every GPU is placed once a
 * fraction moves next to another; pods that are not movable are never
 * moved; when the evicted pods would find no other place nothing changes
 * (exact rollback, the cluster as before); the hourly budget of moves and
 * lost GPU time refuses rescues that would pass it; consolidation empties
 * a GPU held by one movable fraction onto the partly used GPU it fits
 * best; and candidates of equal cost go by node rank, not slot.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/defrag.h"
#include "core/policy.h"

struct bed {
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched s;
	struct kerf_defrag d;
};

static const struct kerf_pod frac = { .cpu_milli = 1000, .mem_mib = 1024,
				      .nr_gpus = 1, .gpu_milli = 400 };
static const struct kerf_pod whole = { .cpu_milli = 1000, .mem_mib = 1024,
				       .nr_gpus = 1, .gpu_milli = 1000 };

/* nodes of gpus GPUs each, ranked in the order given (rank key = i). */
static void bed_init(struct bed *b, int nodes, int gpus, uint32_t max_moves)
{
	struct kerf_defrag_budget budget = {
		.max_moves_per_hour = max_moves,
		.max_lost_milli_ms_per_hour = INT64_MAX / 4,
		.max_nodes = 16,
		.max_moves_per_pod = 4,
	};

	kerf_cluster_init(&b->c);
	assert_int_equal(kerf_cluster_model(&b->c, "T4", 16384, NULL), 0);
	for (int i = 0; i < nodes; i++) {
		char name[8];

		snprintf(name, sizeof(name), "n%d", i);
		assert_int_equal(kerf_cluster_add_node(&b->c, name, 32000, 65536, 0,
						       gpus, NULL), i);
	}
	assert_int_equal(kerf_policy_build(&b->pol, "best-fit",
					   &(struct kerf_policy_args){ .cluster = &b->c },
					   NULL), 0);
	assert_int_equal(kerf_sched_init(&b->s, &b->pol), 0);
	assert_int_equal(kerf_defrag_init(&b->d, 64, b->c.nr_slots, &budget), 0);
}

static void bed_release(struct bed *b)
{
	kerf_defrag_release(&b->d);
	kerf_sched_release(&b->s);
	kerf_policy_release(&b->pol);
	kerf_cluster_release(&b->c);
}

/* Pod i of req bound at (node, gpu), recorded movable or not. */
static void put(struct bed *b, uint32_t i, const struct kerf_pod *req,
		uint32_t node, int gpu, bool movable)
{
	struct kerf_binding at = { .node = node, .gpus = (uint16_t)(1u << gpu) };

	assert_int_equal(kerf_sched_reserve(&b->s, &b->c, req, at, NULL), 0);
	kerf_defrag_placed(&b->d, i, req, at, movable, 0);
}

static void test_rescue_moves_a_fraction(void **state)
{
	struct bed b;
	struct kerf_binding at;

	(void)state;
	bed_init(&b, 2, 1, 100);
	/* each GPU holds one 400 fraction: no GPU for a whole-GPU pod */
	put(&b, 0, &frac, 0, 0, true);
	put(&b, 1, &frac, 1, 0, true);
	assert_int_equal(kerf_sched_select(&b.s, &b.c, &whole, &at, NULL),
			 KERF_UNSCHEDULABLE);
	assert_true(kerf_defrag_rescue(&b.d, &b.s, &b.c, 2, &whole, 1000, 0, &at));
	kerf_defrag_placed(&b.d, 2, &whole, at, false, 1000);
	/* the whole GPU got a node to itself; both fractions share the other */
	assert_int_equal(b.c.nodes[at.node].gpu_free_milli[0], 0);
	assert_int_equal(b.c.nodes[1 - at.node].gpu_free_milli[0], 200);
	assert_int_equal(b.d.stats.rescued, 1);
	assert_int_equal(b.d.stats.moves, 1);
	/* the mover lost the GPU time since it started (no checkpoints) */
	assert_int_equal(b.d.stats.lost_milli_ms, 1000 * 400);
	assert_int_equal(kerf_cluster_check(&b.c, NULL), 0);
	bed_release(&b);
}

static void test_not_movable_stays(void **state)
{
	struct bed b;
	struct kerf_binding at;
	struct kerf_node before[2];

	(void)state;
	bed_init(&b, 2, 1, 100);
	put(&b, 0, &frac, 0, 0, false);
	put(&b, 1, &frac, 1, 0, false);
	memcpy(before, b.c.nodes, sizeof(before));
	assert_false(kerf_defrag_rescue(&b.d, &b.s, &b.c, 2, &whole, 1000, 0, &at));
	assert_int_equal(b.d.stats.no_candidate, 1);
	assert_memory_equal(before[0].gpu_free_milli, b.c.nodes[0].gpu_free_milli,
			    sizeof(before[0].gpu_free_milli));
	assert_memory_equal(before[1].gpu_free_milli, b.c.nodes[1].gpu_free_milli,
			    sizeof(before[1].gpu_free_milli));
	bed_release(&b);
}

/* The evicted pod would fit nowhere else: everything as it was. */
static void test_no_place_for_the_moved(void **state)
{
	struct bed b;
	struct kerf_binding at;
	const struct kerf_pod big = { .cpu_milli = 1000, .mem_mib = 1024,
				      .nr_gpus = 1, .gpu_milli = 700 };
	uint32_t stamp0, stamp1;

	(void)state;
	bed_init(&b, 2, 1, 100);
	put(&b, 0, &big, 0, 0, true);
	put(&b, 1, &big, 1, 0, true);
	stamp0 = b.c.nodes[0].gpu_free_milli[0];
	stamp1 = b.c.nodes[1].gpu_free_milli[0];
	assert_false(kerf_defrag_rescue(&b.d, &b.s, &b.c, 2, &whole, 1000, 0, &at));
	assert_int_equal(b.c.nodes[0].gpu_free_milli[0], stamp0);
	assert_int_equal(b.c.nodes[1].gpu_free_milli[0], stamp1);
	assert_int_equal(b.d.stats.moves, 0);
	assert_int_equal(kerf_cluster_check(&b.c, NULL), 0);
	bed_release(&b);
}

static void test_budget_refuses(void **state)
{
	struct bed b;
	struct kerf_binding at;

	(void)state;
	bed_init(&b, 2, 1, 0);   /* no moves allowed this hour */
	put(&b, 0, &frac, 0, 0, true);
	put(&b, 1, &frac, 1, 0, true);
	assert_false(kerf_defrag_rescue(&b.d, &b.s, &b.c, 2, &whole, 1000, 0, &at));
	assert_int_equal(b.d.stats.over_budget, 1);
	assert_int_equal(b.d.stats.moves, 0);
	bed_release(&b);
}

static void test_consolidate(void **state)
{
	struct bed b;

	(void)state;
	bed_init(&b, 1, 3, 100);
	/* GPU 0: 400 + 400 (200 left), GPU 1: 400 alone, GPU 2: 200 alone */
	put(&b, 0, &frac, 0, 0, true);
	put(&b, 1, &frac, 0, 0, true);
	put(&b, 2, &frac, 0, 1, true);
	{
		struct kerf_pod small = frac;

		small.gpu_milli = 200;
		put(&b, 3, &small, 0, 2, true);
	}
	/*
	 * GPUs in order: the lone 400 on GPU 1 joins the 200 on GPU 2 (the
	 * partly used GPU it fits best; GPU 0 has 200 left, too little), so
	 * GPU 1 is free; GPU 2 then holds two and stays.
	 */
	assert_int_equal(kerf_defrag_consolidate(&b.d, &b.s, &b.c, 1000, 0, 8), 1);
	assert_int_equal(b.c.nodes[0].gpu_free_milli[1], 1000);
	assert_int_equal(b.c.nodes[0].gpu_free_milli[2], 400);
	assert_int_equal(b.c.nodes[0].gpu_free_milli[0], 200);
	assert_int_equal(kerf_cluster_check(&b.c, NULL), 0);
	bed_release(&b);
}

/* Two equal candidates: the node ranked first is used, not slot 0. */
static void test_ties_by_rank(void **state)
{
	struct bed b;
	struct kerf_binding at;
	struct kerf_node_spec s;

	(void)state;
	bed_init(&b, 3, 1, 100);
	/* slot 0 ranked last */
	kerf_cluster_node_spec(&b.c, 0, &s);
	s.rank = 99;
	assert_int_equal(kerf_cluster_upsert_node(&b.c, &s, NULL), 0);
	put(&b, 0, &frac, 0, 0, true);
	put(&b, 1, &frac, 1, 0, true);
	put(&b, 2, &frac, 2, 0, true);
	assert_true(kerf_defrag_rescue(&b.d, &b.s, &b.c, 3, &whole, 1000, 0, &at));
	/* cheapest: one move, no work lost differs: rank order n1 first */
	assert_int_equal(at.node, 1);
	bed_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rescue_moves_a_fraction),
		cmocka_unit_test(test_not_movable_stays),
		cmocka_unit_test(test_no_place_for_the_moved),
		cmocka_unit_test(test_budget_refuses),
		cmocka_unit_test(test_consolidate),
		cmocka_unit_test(test_ties_by_rank),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
