/*
 * Unit tests for core/score_cache: equal pods share a row, different pods
 * get different rows, invalidate empties every row, max_rows bounds the
 * number of rows (NULL beyond it), and a different cluster, a different
 * node count or a stamp counter that went back drops every row.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "core/score_cache.h"

enum { NODES = 3 };

static void make_cluster(struct kerf_cluster *c)
{
	kerf_cluster_init(c);
	assert_int_equal(kerf_cluster_model(c, "g", 0, NULL), 0);
	for (int i = 0; i < NODES; i++)
		assert_int_equal(kerf_cluster_add_node(c, i == 0 ? "a" : i == 1 ? "b" : "c",
						       8000, 8192, 0, 2, NULL),
				 i);
}

static struct kerf_pod pod(int64_t cpu)
{
	return (struct kerf_pod){ .cpu_milli = cpu, .mem_mib = 64,
				  .nr_gpus = 1, .gpu_milli = 250 };
}

/* Mark a row as filled in, the way the scheduler would. */
static void fill(struct kerf_cache_entry *row, int32_t score)
{
	for (int i = 0; i < NODES; i++) {
		row[i].stamp = 100 + (uint32_t)i;
		row[i].score = score;
		row[i].fit = 1;
		row[i].gpus = 1;
	}
}

static void assert_empty(const struct kerf_cache_entry *row)
{
	for (int i = 0; i < NODES; i++) {
		assert_int_equal(row[i].stamp, 0);
		assert_int_equal(row[i].score, 0);
		assert_int_equal(row[i].fit, 0);
		assert_int_equal(row[i].gpus, 0);
	}
}

static void test_equal_pods_share_a_row(void **state)
{
	struct kerf_cluster c;
	struct kerf_score_cache sc;
	struct kerf_pod p = pod(1000), q = pod(1000);
	struct kerf_cache_entry *r1, *r2;

	(void)state;
	make_cluster(&c);
	kerf_score_cache_init(&sc, 4);
	r1 = kerf_score_cache_row(&sc, &c, &p);
	assert_non_null(r1);
	assert_empty(r1);
	fill(r1, 42);
	r2 = kerf_score_cache_row(&sc, &c, &q);
	assert_ptr_equal(r1, r2);
	assert_int_equal(r2[2].score, 42);
	assert_int_equal(r2[2].stamp, 102);
	assert_int_equal(sc.nr_rows, 1);
	kerf_score_cache_release(&sc);
	kerf_cluster_release(&c);
}

static void test_different_pods_different_rows(void **state)
{
	struct kerf_cluster c;
	struct kerf_score_cache sc;
	struct kerf_pod base = pod(1000), v[7];
	struct kerf_cache_entry *rows[7], *r0;

	(void)state;
	make_cluster(&c);
	kerf_score_cache_init(&sc, 16);
	r0 = kerf_score_cache_row(&sc, &c, &base);
	fill(r0, 1);
	/* Each field of the request is part of the key. */
	for (int i = 0; i < 7; i++)
		v[i] = base;
	v[0].cpu_milli++;
	v[1].mem_mib++;
	v[2].gpu_milli++;
	v[3].gpu_mem_mib = 1;
	v[4].nr_gpus = 2;
	v[4].gpu_milli = 1000;
	v[5].model_mask = 1;
	v[6].gpu_milli = 1000;
	for (int i = 0; i < 7; i++) {
		rows[i] = kerf_score_cache_row(&sc, &c, &v[i]);
		assert_non_null(rows[i]);
		assert_ptr_not_equal(rows[i], r0);
		assert_empty(rows[i]);
		fill(rows[i], 10 + i);
		for (int k = 0; k < i; k++)
			assert_ptr_not_equal(rows[i], rows[k]);
	}
	assert_int_equal(sc.nr_rows, 8);
	/* Each row kept its own contents. */
	assert_int_equal(kerf_score_cache_row(&sc, &c, &base)[0].score, 1);
	for (int i = 0; i < 7; i++)
		assert_int_equal(kerf_score_cache_row(&sc, &c, &v[i])[1].score,
				 10 + i);
	kerf_score_cache_release(&sc);
	kerf_cluster_release(&c);
}

static void test_invalidate_resets_entries(void **state)
{
	struct kerf_cluster c;
	struct kerf_score_cache sc;
	struct kerf_pod p = pod(1000), q = pod(2000);
	struct kerf_cache_entry *rp, *rq;

	(void)state;
	make_cluster(&c);
	kerf_score_cache_init(&sc, 4);
	rp = kerf_score_cache_row(&sc, &c, &p);
	fill(rp, 5);
	rq = kerf_score_cache_row(&sc, &c, &q);
	fill(rq, 6);
	kerf_score_cache_invalidate(&sc);
	/* Same rows (no new allocation), but empty. */
	assert_ptr_equal(kerf_score_cache_row(&sc, &c, &p), rp);
	assert_empty(rp);
	assert_ptr_equal(kerf_score_cache_row(&sc, &c, &q), rq);
	assert_empty(rq);
	assert_int_equal(sc.nr_rows, 2);
	/* Filled again after the invalidation, they stay filled. */
	fill(rp, 7);
	assert_int_equal(kerf_score_cache_row(&sc, &c, &p)[0].score, 7);
	kerf_score_cache_release(&sc);
	kerf_cluster_release(&c);
}

static void test_max_rows(void **state)
{
	struct kerf_cluster c;
	struct kerf_score_cache sc;
	struct kerf_pod p1 = pod(1), p2 = pod(2), p3 = pod(3);
	struct kerf_cache_entry *r1, *r2;

	(void)state;
	make_cluster(&c);
	kerf_score_cache_init(&sc, 2);
	r1 = kerf_score_cache_row(&sc, &c, &p1);
	r2 = kerf_score_cache_row(&sc, &c, &p2);
	assert_non_null(r1);
	assert_non_null(r2);
	assert_null(kerf_score_cache_row(&sc, &c, &p3));
	assert_null(kerf_score_cache_row(&sc, &c, &p3));
	assert_int_equal(sc.nr_rows, 2);
	/* The rows that exist are still served. */
	assert_ptr_equal(kerf_score_cache_row(&sc, &c, &p1), r1);
	assert_ptr_equal(kerf_score_cache_row(&sc, &c, &p2), r2);
	kerf_score_cache_release(&sc);
	/* release keeps the bound */
	assert_int_equal(sc.max_rows, 2);
	assert_int_equal(sc.nr_rows, 0);

	/* 0 rows: caching off. */
	kerf_score_cache_init(&sc, 0);
	assert_null(kerf_score_cache_row(&sc, &c, &p1));
	kerf_score_cache_release(&sc);
	kerf_cluster_release(&c);
}

static void test_many_rows(void **state)
{
	struct kerf_cluster c;
	struct kerf_score_cache sc;
	struct kerf_cache_entry *rows[100];
	struct kerf_pod extra = pod(100);

	(void)state;
	make_cluster(&c);
	kerf_score_cache_init(&sc, 100);
	for (int i = 0; i < 100; i++) {
		struct kerf_pod p = pod(i);

		rows[i] = kerf_score_cache_row(&sc, &c, &p);
		assert_non_null(rows[i]);
		fill(rows[i], i);
	}
	for (int i = 0; i < 100; i++) {
		struct kerf_pod p = pod(i);

		assert_ptr_equal(kerf_score_cache_row(&sc, &c, &p), rows[i]);
		assert_int_equal(rows[i][0].score, i);
	}
	assert_null(kerf_score_cache_row(&sc, &c, &extra));
	kerf_score_cache_release(&sc);
	kerf_cluster_release(&c);
}

static void test_other_cluster_drops_rows(void **state)
{
	struct kerf_cluster c1, c2;
	struct kerf_score_cache sc;
	struct kerf_pod p = pod(1000);
	struct kerf_cache_entry *r;

	(void)state;
	make_cluster(&c1);
	assert_int_equal(kerf_cluster_copy(&c2, &c1), 0);
	kerf_score_cache_init(&sc, 4);
	fill(kerf_score_cache_row(&sc, &c1, &p), 9);
	/* Same size and stamps, but another cluster: start afresh. */
	r = kerf_score_cache_row(&sc, &c2, &p);
	assert_non_null(r);
	assert_empty(r);
	assert_int_equal(sc.nr_rows, 1);
	assert_ptr_equal(sc.cluster, &c2);
	fill(r, 3);
	/* And back again. */
	r = kerf_score_cache_row(&sc, &c1, &p);
	assert_empty(r);
	kerf_score_cache_release(&sc);
	kerf_cluster_release(&c2);
	kerf_cluster_release(&c1);
}

static void test_stamp_and_size_changes(void **state)
{
	struct kerf_cluster c;
	struct kerf_score_cache sc;
	struct kerf_pod p = pod(1000), q = pod(500);
	struct kerf_cache_entry *r;

	(void)state;
	make_cluster(&c);
	kerf_score_cache_init(&sc, 4);
	fill(kerf_score_cache_row(&sc, &c, &p), 9);
	/* Stamps moving forward keep the rows (entries are per node stamp). */
	assert_int_equal(kerf_cluster_bind(&c, &q, (struct kerf_binding){ 1, 1, 0 },
					   NULL), 0);
	r = kerf_score_cache_row(&sc, &c, &p);
	assert_int_equal(r[0].score, 9);
	/* A counter that went back means stamps are not comparable. */
	c.stamp_seq = 1;
	r = kerf_score_cache_row(&sc, &c, &p);
	assert_empty(r);
	fill(r, 8);
	/*
	 * A new node widens the rows and keeps every entry: stamps are
	 * unique, so the new slot's empty entry matches nothing.
	 */
	assert_int_equal(kerf_cluster_add_node(&c, "d", 1, 1, KERF_MODEL_NONE, 0,
					       NULL), NODES);
	r = kerf_score_cache_row(&sc, &c, &p);
	assert_non_null(r);
	assert_true(sc.nr_nodes >= NODES + 1);
	for (int i = 0; i < NODES; i++)
		assert_int_equal(r[i].score, 8);
	assert_int_equal(r[NODES].stamp, 0);
	/* a node with a pod cannot go; an empty one can, the others stay */
	assert_int_equal(kerf_cluster_remove_node(&c, 1, NULL), -KERF_EBUSY);
	assert_int_equal(kerf_cluster_remove_node(&c, 2, NULL), 0);
	r = kerf_score_cache_row(&sc, &c, &p);
	assert_int_equal(r[0].score, 8);
	assert_int_equal(r[1].score, 8);
	assert_int_not_equal(r[2].stamp, c.stamps[2]);
	/* the freed slot is reused by the next node, with a stamp no entry has */
	assert_int_equal(kerf_cluster_add_node(&c, "e", 1, 1, KERF_MODEL_NONE, 0,
					       NULL), 2);
	r = kerf_score_cache_row(&sc, &c, &p);
	assert_int_not_equal(r[2].stamp, c.stamps[2]);
	kerf_score_cache_release(&sc);
	kerf_cluster_release(&c);
}

static void test_empty_cluster(void **state)
{
	struct kerf_cluster c;
	struct kerf_score_cache sc;
	struct kerf_pod p = pod(1);

	(void)state;
	kerf_cluster_init(&c);
	kerf_score_cache_init(&sc, 4);
	assert_null(kerf_score_cache_row(&sc, &c, &p));
	kerf_score_cache_release(&sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equal_pods_share_a_row),
		cmocka_unit_test(test_different_pods_different_rows),
		cmocka_unit_test(test_invalidate_resets_entries),
		cmocka_unit_test(test_max_rows),
		cmocka_unit_test(test_many_rows),
		cmocka_unit_test(test_other_cluster_drops_rows),
		cmocka_unit_test(test_stamp_and_size_changes),
		cmocka_unit_test(test_empty_cluster),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
