/*
 * Unit tests for the node lifecycle of core/model: upsert adds or updates
 * by name, slots stay put when other nodes come and go, freed slots are
 * reused, ranks follow (rank key, name) whatever the order of arrival,
 * placement ties go to the node ranked first (not the lowest slot),
 * busy nodes refuse removal and shape changes (-KERF_EBUSY, nothing
 * changed), every error names the node and the reason, labels and taints
 * keep pods off nodes, and kerf_cluster_check catches broken slot tables.
 * A seeded random sequence of upserts and removals is checked against a
 * naive model after every step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "base/rng.h"
#include "core/framework.h"
#include "core/model.h"
#include "core/policy.h"

static struct kerf_node_spec spec(const char *name, uint64_t rank, int gpus)
{
	return (struct kerf_node_spec){
		.name = name, .rank = rank, .cpu_milli = 8000, .mem_mib = 16384,
		.model = gpus ? 0 : -1, .nr_gpus = gpus,
	};
}

static void make(struct kerf_cluster *c)
{
	kerf_cluster_init(c);
	assert_int_equal(kerf_cluster_model(c, "A100-SXM4-80GB", 81920, NULL), 0);
}

static void test_upsert_find_remove(void **state)
{
	struct kerf_cluster c;
	struct kerf_node_spec s = spec("n1", 5, 4);
	struct kerf_err err = { 0 };

	(void)state;
	make(&c);
	assert_int_equal(kerf_cluster_upsert_node(&c, &s, NULL), 0);
	s = spec("n2", 5, 2);
	assert_int_equal(kerf_cluster_upsert_node(&c, &s, NULL), 1);
	assert_int_equal(kerf_cluster_find_node(&c, "n2"), 1);
	assert_int_equal(kerf_cluster_find_node(&c, "n3"), -KERF_ENOTFOUND);
	/* an update keeps the slot */
	s.cordoned = true;
	s.domain = 7;
	assert_int_equal(kerf_cluster_upsert_node(&c, &s, NULL), 1);
	assert_true(c.nodes[1].cordoned);
	assert_int_equal(c.nodes[1].domain, 7);
	assert_int_equal(c.nr_nodes, 2);
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	/* removal frees the slot; the other keeps its own */
	assert_int_equal(kerf_cluster_remove_node(&c, 0, NULL), 0);
	assert_int_equal(c.nr_nodes, 1);
	assert_int_equal(kerf_cluster_find_node(&c, "n1"), -KERF_ENOTFOUND);
	assert_int_equal(kerf_cluster_find_node(&c, "n2"), 1);
	assert_false(c.nodes[0].live);
	assert_int_equal(kerf_cluster_gpu_milli_capacity(&c), 2000);
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	assert_int_equal(kerf_cluster_remove_node(&c, 0, &err), -KERF_ENOTFOUND);
	assert_string_equal(err.msg, "node slot 0: no node");
	/* the freed slot is taken by the next new node */
	s = spec("n3", 1, 8);
	assert_int_equal(kerf_cluster_upsert_node(&c, &s, NULL), 0);
	assert_int_equal(c.nr_slots, 2);
	assert_int_equal(c.order[0], 0);   /* rank 1 before rank 5 */
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	kerf_cluster_release(&c);
}

static void test_spec_errors(void **state)
{
	struct kerf_cluster c;
	struct kerf_err err = { 0 };
	struct kerf_node_spec s;
	char long_name[300];

	(void)state;
	make(&c);
	s = spec("", 0, 1);
	assert_int_equal(kerf_cluster_upsert_node(&c, &s, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "node name: must not be empty");
	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	s = spec(long_name, 0, 1);
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_upsert_node(&c, &s, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "longer than 253 bytes"));
	s = spec("bad\x1b[2Jname", 0, 1);
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_upsert_node(&c, &s, &err), -KERF_EINVAL);
	/* the control character is shown escaped, never raw */
	assert_string_equal(err.msg,
			    "node name 'bad\\x1b[2Jname': holds a space or control character");
	s = spec("n", 0, 17);
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_upsert_node(&c, &s, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "node 'n': gpu count 17 is outside 0..16");
	s = spec("n", 0, 2);
	s.model = 3;
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_upsert_node(&c, &s, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "node 'n': has 2 GPUs but no GPU model");
	s = spec("n", 0, 2);
	s.mig_gpus = 0x4;
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_upsert_node(&c, &s, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "node 'n': MIG mode asked for a GPU beyond its 2");
	s = spec("n", 0, 2);
	s.cpu_milli = -1;
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_upsert_node(&c, &s, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "node 'n': cpu_milli -1 is outside"));
	s = spec("n", 0, 2);
	s.labels = 1;
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_upsert_node(&c, &s, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "node 'n': label or taint term not interned");
	/* nothing was added by any of them */
	assert_int_equal(c.nr_nodes, 0);
	assert_int_equal(c.nr_slots, 0);
	/* add_node refuses a second node of the same name */
	assert_int_equal(kerf_cluster_add_node(&c, "x", 1, 1, KERF_MODEL_NONE, 0, NULL), 0);
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_add_node(&c, "x", 1, 1, KERF_MODEL_NONE, 0, &err),
			 -KERF_EEXIST);
	assert_string_equal(err.msg, "node 'x': added twice");
	kerf_cluster_release(&c);
}

static void test_busy_node(void **state)
{
	struct kerf_cluster c;
	struct kerf_err err = { 0 };
	struct kerf_node_spec s = spec("n", 0, 2);
	struct kerf_pod p = { .cpu_milli = 100, .mem_mib = 100, .nr_gpus = 1,
			      .gpu_milli = 1000 };
	struct kerf_binding b = { .node = 0, .gpus = 1 };
	struct kerf_node before;

	(void)state;
	make(&c);
	assert_int_equal(kerf_cluster_upsert_node(&c, &s, NULL), 0);
	assert_int_equal(kerf_cluster_bind(&c, &p, b, NULL), 0);
	assert_int_equal(kerf_cluster_remove_node(&c, 0, &err), -KERF_EBUSY);
	assert_string_equal(err.msg, "node 'n': pods run there; requeue them first");
	before = c.nodes[0];
	s.nr_gpus = 1;
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_upsert_node(&c, &s, &err), -KERF_EBUSY);
	assert_string_equal(err.msg, "node 'n': its capacity changes while pods run there");
	assert_memory_equal(&before, &c.nodes[0], sizeof(before));
	/* what does not touch the pods may change */
	s.nr_gpus = 2;
	s.taints = 0;
	s.cordoned = true;
	assert_int_equal(kerf_cluster_upsert_node(&c, &s, NULL), 0);
	assert_true(c.nodes[0].cordoned);
	assert_int_equal(c.nodes[0].nr_pods, 1);
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	/* empty again: the shape may change */
	assert_int_equal(kerf_cluster_unbind(&c, &p, b, NULL), 0);
	s.nr_gpus = 1;
	assert_int_equal(kerf_cluster_upsert_node(&c, &s, NULL), 0);
	assert_int_equal(c.nodes[0].nr_gpus, 1);
	assert_int_equal(c.nodes[0].gpu_free_milli_sum, 1000);
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	kerf_cluster_release(&c);
}

/* Ranks: key first, then name, however the nodes arrive. */
static void test_rank_order(void **state)
{
	static const char *const names[] = { "d", "b", "a", "c", "e" };
	static const uint64_t ranks[] = { 2, 1, 2, 1, 0 };
	struct kerf_cluster c;

	(void)state;
	make(&c);
	for (size_t i = 0; i < 5; i++) {
		struct kerf_node_spec s = spec(names[i], ranks[i], 1);

		assert_int_equal(kerf_cluster_upsert_node(&c, &s, NULL), (int)i);
	}
	/* e(0) b(1) c(1) a(2) d(2) */
	assert_string_equal(c.nodes[c.order[0]].name, "e");
	assert_string_equal(c.nodes[c.order[1]].name, "b");
	assert_string_equal(c.nodes[c.order[2]].name, "c");
	assert_string_equal(c.nodes[c.order[3]].name, "a");
	assert_string_equal(c.nodes[c.order[4]].name, "d");
	assert_true(kerf_cluster_before(&c, 4, 1));
	/* a new rank key moves the node */
	{
		struct kerf_node_spec s = spec("e", 9, 1);

		assert_int_equal(kerf_cluster_upsert_node(&c, &s, NULL), 4);
	}
	assert_string_equal(c.nodes[c.order[4]].name, "e");
	assert_int_equal(c.pos[4], 4);
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	kerf_cluster_release(&c);
}

/* Equal scores go to the node ranked first, not the lowest slot. */
static void test_ties_follow_rank(void **state)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched s;
	struct kerf_pod p = { .cpu_milli = 100, .mem_mib = 100, .nr_gpus = 1,
			      .gpu_milli = 1000 };
	struct kerf_binding b;
	struct kerf_policy_args args = { .cluster = &c };

	(void)state;
	make(&c);
	/* slot 0 is ranked last */
	{
		struct kerf_node_spec a = spec("z", 9, 1), bb = spec("y", 1, 1);

		assert_int_equal(kerf_cluster_upsert_node(&c, &a, NULL), 0);
		assert_int_equal(kerf_cluster_upsert_node(&c, &bb, NULL), 1);
	}
	assert_int_equal(kerf_policy_build(&pol, "first-fit", &args, NULL), 0);
	assert_int_equal(kerf_sched_init(&s, &pol), 0);
	assert_int_equal(kerf_sched_select(&s, &c, &p, &b, NULL), KERF_FIT);
	assert_int_equal(b.node, 1);
	/* the same once cached */
	assert_int_equal(kerf_sched_select(&s, &c, &p, &b, NULL), KERF_FIT);
	assert_int_equal(b.node, 1);
	kerf_sched_release(&s);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

static void test_labels_and_taints(void **state)
{
	struct kerf_cluster c;
	struct kerf_err err = { 0 };
	struct kerf_node_spec s = spec("n", 0, 1);
	struct kerf_pod p = { .cpu_milli = 100, .mem_mib = 100, .nr_gpus = 1,
			      .gpu_milli = 1000 };
	int pool, gpu_taint;
	char term[400];

	(void)state;
	make(&c);
	pool = kerf_cluster_label(&c, "kerf.io/pool=a100", NULL);
	assert_int_equal(pool, 0);
	assert_int_equal(kerf_cluster_label(&c, "kerf.io/pool=a100", NULL), 0);
	assert_int_equal(kerf_cluster_label(&c, "kerf.io/pool=h100", NULL), 1);
	gpu_taint = kerf_cluster_taint(&c, "nvidia.com/gpu=present:NoSchedule", NULL);
	assert_int_equal(gpu_taint, 0);
	s.labels = 1;
	s.taints = 1;
	assert_int_equal(kerf_cluster_upsert_node(&c, &s, NULL), 0);
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[0], &p), KERF_MISFIT_TAINT);
	p.tolerates = 1;
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[0], &p), KERF_MISFIT_NONE);
	p.need_labels = 2;   /* h100 pool */
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[0], &p), KERF_MISFIT_LABELS);
	p.need_labels = 1;
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[0], &p), KERF_MISFIT_NONE);
	/* interning limits */
	assert_int_equal(kerf_cluster_label(&c, "", &err), -KERF_EINVAL);
	memset(term, 'k', sizeof(term) - 1);
	term[sizeof(term) - 1] = '\0';
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_label(&c, term, &err), -KERF_EINVAL);
	for (int i = 2; i < KERF_MAX_LABELS; i++) {
		snprintf(term, sizeof(term), "k=%d", i);
		assert_int_equal(kerf_cluster_label(&c, term, NULL), i);
	}
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_label(&c, "one=toomany", &err), -KERF_ELIMIT);
	assert_string_equal(err.msg, "label term 'one=toomany': more than 64 distinct terms");
	kerf_cluster_release(&c);
}

static void test_check_catches_broken_slots(void **state)
{
	struct kerf_cluster c;
	struct kerf_err err = { 0 };
	struct kerf_node_spec a = spec("a", 0, 1), b = spec("b", 1, 1);

	(void)state;
	make(&c);
	assert_int_equal(kerf_cluster_upsert_node(&c, &a, NULL), 0);
	assert_int_equal(kerf_cluster_upsert_node(&c, &b, NULL), 1);
	c.order[0] = 1;
	c.order[1] = 0;
	assert_int_equal(kerf_cluster_check(&c, &err), -KERF_ERANGE);
	assert_string_equal(err.msg, "cluster: rank 0 names slot 1, not a live node ranked there");
	c.order[0] = 0;
	c.order[1] = 1;
	c.nodes[1].rank = 0;   /* "b" now ranks after "a" by name: still fine */
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	c.nodes[0].rank = 5;
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_check(&c, &err), -KERF_ERANGE);
	assert_string_equal(err.msg, "cluster: node 'b' out of rank order");
	c.nodes[0].rank = 0;
	assert_int_equal(kerf_cluster_remove_node(&c, 0, NULL), 0);
	c.nodes[0].cpu_milli = 5;
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_check(&c, &err), -KERF_ERANGE);
	assert_string_equal(err.msg, "cluster: free slot 0 is not empty");
	c.nodes[0].cpu_milli = 0;
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	kerf_cluster_release(&c);
}

/* Random upserts and removals against a naive list of (name, rank). */
static void test_random_against_model(void **state)
{
	enum { NAMES = 40, STEPS = 4000 };
	struct kerf_cluster c;
	struct kerf_rng rng;
	uint64_t rank[NAMES];
	bool live[NAMES] = { false };
	int slot[NAMES];
	char names[NAMES][8];

	(void)state;
	make(&c);
	kerf_rng_seed(&rng, 7);
	for (int i = 0; i < NAMES; i++)
		snprintf(names[i], sizeof(names[i]), "n%02d", i);
	for (int step = 0; step < STEPS; step++) {
		int i = (int)kerf_rng_below(&rng, NAMES);
		size_t nr_live = 0;

		if (live[i] && kerf_rng_below(&rng, 3) == 0) {
			assert_int_equal(kerf_cluster_remove_node(&c, (size_t)slot[i], NULL), 0);
			live[i] = false;
		} else {
			struct kerf_node_spec s = spec(names[i], kerf_rng_below(&rng, 4),
						       (int)kerf_rng_below(&rng, 3));
			int got = kerf_cluster_upsert_node(&c, &s, NULL);

			assert_true(got >= 0);
			if (live[i])
				assert_int_equal(got, slot[i]);   /* slots never move */
			slot[i] = got;
			rank[i] = s.rank;
			live[i] = true;
		}
		assert_int_equal(kerf_cluster_check(&c, NULL), 0);
		/* order[] is the sorted (rank, name) of the live names */
		for (int k = 0; k < NAMES; k++)
			nr_live += live[k];
		assert_int_equal(c.nr_nodes, nr_live);
		for (size_t p = 1; p < c.nr_nodes; p++) {
			const struct kerf_node *x = &c.nodes[c.order[p - 1]];
			const struct kerf_node *y = &c.nodes[c.order[p]];

			assert_true(x->rank < y->rank ||
				    (x->rank == y->rank && strcmp(x->name, y->name) < 0));
		}
		for (int k = 0; k < NAMES; k++) {
			assert_int_equal(kerf_cluster_find_node(&c, names[k]),
					 live[k] ? slot[k] : -KERF_ENOTFOUND);
			if (live[k])
				assert_int_equal(c.nodes[slot[k]].rank, rank[k]);
		}
		/* slots stay bounded by the names ever live at once */
		assert_true(c.nr_slots <= NAMES);
	}
	kerf_cluster_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_upsert_find_remove),
		cmocka_unit_test(test_spec_errors),
		cmocka_unit_test(test_busy_node),
		cmocka_unit_test(test_rank_order),
		cmocka_unit_test(test_ties_follow_rank),
		cmocka_unit_test(test_labels_and_taints),
		cmocka_unit_test(test_check_catches_broken_slots),
		cmocka_unit_test(test_random_against_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
