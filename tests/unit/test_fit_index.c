/*
 * test_fit_index: the nodes a GPU pod's selection visits.  The index is
 * sound (a node outside it never fits the pod), exact in its bits after
 * every bind, unbind and cordon, survives growth and copies, and the
 * cluster check catches a bit out of step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/rng.h"
#include "core/fit_index.h"
#include "core/gpu_pick.h"
#include "core/model.h"

static bool candidate(const struct kerf_cluster *c, struct kerf_pod p, size_t i)
{
	return kerf_fit_index_word(&c->fit, &p, i / 64) >> (i % 64) & 1;
}

static struct kerf_pod whole(uint8_t k)
{
	return (struct kerf_pod){ .cpu_milli = 1000, .mem_mib = 1024,
				  .nr_gpus = k, .gpu_milli = KERF_GPU_MILLI };
}

static struct kerf_pod fraction(int32_t milli)
{
	return (struct kerf_pod){ .cpu_milli = 1000, .mem_mib = 1024,
				  .nr_gpus = 1, .gpu_milli = milli };
}

static void add_nodes(struct kerf_cluster *c, int nr, int gpus)
{
	for (int i = 0; i < nr; i++) {
		char name[16];

		snprintf(name, sizeof(name), "n%03d", (int)c->nr_nodes);
		assert_true(kerf_cluster_add_node(c, name, 64000, 262144,
						  gpus ? 0 : KERF_MODEL_NONE,
						  gpus, NULL) >= 0);
	}
}

static void test_bits_follow_binds(void **state)
{
	struct kerf_cluster c;
	struct kerf_pod two = whole(2), half = fraction(500), eight = whole(8), seven;

	(void)state;
	kerf_cluster_init(&c);
	assert_int_equal(kerf_cluster_model(&c, "h100", 81920, NULL), 0);
	add_nodes(&c, 3, 8);
	add_nodes(&c, 1, 0);                 /* a CPU node: never a candidate */
	assert_true(candidate(&c, eight, 0));
	assert_false(candidate(&c, half, 3));
	/* node 0: 7 of 8 GPUs taken, one idle */
	seven = whole(7);
	assert_int_equal(kerf_cluster_bind(&c, &seven, (struct kerf_binding){ 0, 0x7f, 0 }, NULL), 0);
	assert_false(candidate(&c, two, 0));
	assert_true(candidate(&c, whole(1), 0));
	/* the last GPU half used: only fractions may still come */
	assert_int_equal(kerf_cluster_bind(&c, &half, (struct kerf_binding){ 0, 0x80, 0 }, NULL), 0);
	assert_false(candidate(&c, whole(1), 0));
	assert_true(candidate(&c, half, 0));
	/* cordoned: nothing */
	kerf_cluster_cordon(&c, 1, true);
	assert_false(candidate(&c, half, 1));
	assert_false(candidate(&c, whole(1), 1));
	kerf_cluster_cordon(&c, 1, false);
	assert_true(candidate(&c, eight, 1));
	/* unbinding gives the bits back */
	assert_int_equal(kerf_cluster_unbind(&c, &half, (struct kerf_binding){ 0, 0x80, 0 }, NULL), 0);
	assert_true(candidate(&c, whole(1), 0));
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	kerf_cluster_release(&c);
}

/* Random binds and unbinds: outside the index, the pod never fits. */
static void test_sound_under_random_churn(void **state)
{
	static const uint8_t sizes[] = { 1, 1, 2, 4, 8 };
	struct { struct kerf_pod p; struct kerf_binding b; } held[4096];
	size_t nr_held = 0;
	struct kerf_cluster c, copy;
	struct kerf_rng rng;

	(void)state;
	kerf_rng_seed(&rng, 7);
	kerf_cluster_init(&c);
	assert_int_equal(kerf_cluster_model(&c, "a", 40960, NULL), 0);
	/* 200 nodes: the index grows past its first words */
	for (int i = 0; i < 200; i++)
		add_nodes(&c, 1, 1 + (int)kerf_rng_below(&rng, 8));
	for (int step = 0; step < 20000; step++) {
		struct kerf_pod p = kerf_rng_below(&rng, 2)
					    ? whole(sizes[kerf_rng_below(&rng, 5)])
					    : fraction(100 * (int32_t)(1 + kerf_rng_below(&rng, 9)));
		size_t i = (size_t)kerf_rng_below(&rng, c.nr_nodes);
		const struct kerf_node *n = &c.nodes[i];

		if (!candidate(&c, p, i))
			assert_int_not_equal(kerf_node_misfit(&c, n, &p), KERF_MISFIT_NONE);
		if (kerf_rng_below(&rng, 50) == 0)
			kerf_cluster_cordon(&c, i, !n->cordoned);
		if (kerf_node_misfit(&c, n, &p) == KERF_MISFIT_NONE &&
		    nr_held < sizeof(held) / sizeof(held[0]) &&
		    kerf_rng_below(&rng, 3)) {
			uint16_t gpus = kerf_gpus_best_fit(n, &p);

			assert_int_not_equal(gpus, 0);
			held[nr_held].p = p;
			held[nr_held].b = (struct kerf_binding){ (uint32_t)i, gpus, 0 };
			assert_int_equal(kerf_cluster_bind(&c, &p, held[nr_held].b, NULL), 0);
			nr_held++;
		} else if (nr_held > 0) {
			size_t k = (size_t)kerf_rng_below(&rng, nr_held);

			assert_int_equal(kerf_cluster_unbind(&c, &held[k].p, held[k].b, NULL), 0);
			held[k] = held[--nr_held];
		}
		if (step % 1000 == 0)
			assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	}
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	/* a copy carries an index of its own, equal in every bit */
	assert_int_equal(kerf_cluster_copy(&copy, &c), 0);
	assert_int_equal(kerf_cluster_check(&copy, NULL), 0);
	for (size_t i = 0; i < c.nr_nodes; i++)
		for (uint8_t k = 1; k <= 8; k++)
			assert_int_equal(candidate(&c, whole(k), i),
					 candidate(&copy, whole(k), i));
	kerf_cluster_release(&copy);
	kerf_cluster_release(&c);
}

static void test_check_catches_a_stale_bit(void **state)
{
	struct kerf_cluster c;
	struct kerf_err err = { 0 };

	(void)state;
	kerf_cluster_init(&c);
	assert_int_equal(kerf_cluster_model(&c, "a", 0, NULL), 0);
	add_nodes(&c, 70, 4);
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	/* node 65 claims a fifth idle GPU it does not have */
	c.fit.bits[5 * c.fit.cap_words + 1] |= (uint64_t)1 << 1;
	assert_int_equal(kerf_cluster_check(&c, &err), -KERF_ERANGE);
	assert_string_equal(err.msg, "node 'n065': fit index disagrees with its GPUs");
	kerf_cluster_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bits_follow_binds),
		cmocka_unit_test(test_sound_under_random_churn),
		cmocka_unit_test(test_check_catches_a_stale_bit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
