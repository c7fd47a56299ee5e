/*
 * Unit tests for core/framework: a tiny hand-built policy (score plug-ins
 * reading a per-node table) checks that select takes the highest weighted
 * score with ties to the lowest node index, that filters exclude nodes and
 * explain why ("0/N nodes are available: ..." with counts), that select
 * changes nothing, that reserve binds and runs the reserve hooks, the score
 * cache's reuse and invalidation, and that cached and uncached selects agree
 * over a random placement sequence for every pure built-in policy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/rng.h"
#include "core/framework.h"
#include "core/policy.h"

enum { MAX_NODES = 16 };

/* State of the test plug-ins: scores and calls, indexed by node rank. */
struct table {
	int32_t score[MAX_NODES];
	uint16_t pick[MAX_NODES];     /* GPUs the scorer chooses; 0 = none */
	uint32_t deny;                /* filter: nodes refused (bit = rank) */
	uint32_t deny_forever;        /* filter: of those, unresolvable */
	bool numbered_reasons;        /* filter: reason "<reason>r<rank>" */
	const char *reason;           /* filter: reason text (may be NULL) */
	bool stale_on_observe;
	int nr_observe;
	int nr_reserve;
	uint32_t reserved_node;
	uint16_t reserved_gpus;
};

static uint32_t rank_of(const struct kerf_cluster *c, const struct kerf_node *n)
{
	return (uint32_t)(n - c->nodes);
}

static int32_t table_score(void *priv, const struct kerf_cluster *c,
			   const struct kerf_node *n, const struct kerf_pod *p,
			   uint16_t *gpus)
{
	struct table *t = priv;
	uint32_t i = rank_of(c, n);

	(void)p;
	if (t->pick[i])
		*gpus = t->pick[i];
	return t->score[i];
}

static enum kerf_code table_filter(void *priv, const struct kerf_cluster *c,
				   const struct kerf_node *n,
				   const struct kerf_pod *p, struct kerf_status *st)
{
	struct table *t = priv;
	uint32_t i = rank_of(c, n);
	enum kerf_code code;

	(void)p;
	if (!(t->deny >> i & 1))
		return KERF_FIT;
	code = t->deny_forever >> i & 1 ? KERF_UNRESOLVABLE
					: KERF_UNSCHEDULABLE;
	if (t->numbered_reasons)
		kerf_status_set(st, code, "table", "%sr%u",
				t->reason ? t->reason : "", i);
	else
		kerf_status_set(st, code, "table", "%s", t->reason);
	return code;
}

static bool table_observe(void *priv, const struct kerf_pod *p)
{
	struct table *t = priv;

	(void)p;
	t->nr_observe++;
	return t->stale_on_observe;
}

static void table_reserve(void *priv, const struct kerf_cluster *c,
			  const struct kerf_node *n, const struct kerf_pod *p,
			  uint16_t gpus)
{
	struct table *t = priv;

	(void)p;
	t->nr_reserve++;
	t->reserved_node = rank_of(c, n);
	t->reserved_gpus = gpus;
}

static const struct kerf_plugin table_plugin = {
	.name = "table",
	.flags = KERF_PLUGIN_PURE,
	.observe = table_observe,
	.filter = table_filter,
	.score = table_score,
	.reserve = table_reserve,
};

static const struct kerf_plugin impure_plugin = {
	.name = "impure",
	.score = table_score,
};

/* nr nodes "n0".., 32 cores, 64 GiB, 4 GPUs of model "g" from gpu_from on. */
static void make_cluster(struct kerf_cluster *c, int nr, int gpu_from)
{
	kerf_cluster_init(c);
	assert_int_equal(kerf_cluster_model(c, "g", 16384, NULL), 0);
	for (int i = 0; i < nr; i++) {
		char name[16];

		snprintf(name, sizeof(name), "n%d", i);
		assert_int_equal(kerf_cluster_add_node(c, name, 32000, 65536, 0,
						       i >= gpu_from ? 4 : 0,
						       NULL), i);
	}
}

/* A policy "tiny": the table filter (when filter) and one table scorer. */
static void make_policy(struct kerf_policy *pol, struct table *t,
			const struct kerf_cluster *c, bool filter)
{
	struct kerf_policy_args args = { .cluster = c };

	memset(pol, 0, sizeof(*pol));
	pol->name = "tiny";
	if (filter) {
		assert_int_equal(kerf_policy_add_filter(pol, &table_plugin,
							&args, NULL), 0);
		pol->filters[0].priv = t;
	}
	assert_int_equal(kerf_policy_add_scorer(pol, &table_plugin, 1, &args,
						NULL), 0);
	pol->scorers[0].priv = t;
}

/* The node select picks for a CPU-only pod with scores s[0..nr-1]. */
static uint32_t pick_among(const int32_t *s, int nr)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct table t = { 0 };
	struct kerf_pod p = { .cpu_milli = 1000 };
	struct kerf_binding b = { 99, 99, 0 };
	struct kerf_status st;

	make_cluster(&c, nr, nr);
	memcpy(t.score, s, (size_t)nr * sizeof(*s));
	make_policy(&pol, &t, &c, false);
	kerf_sched_init(&sched, &pol);
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, &st), KERF_FIT);
	assert_int_equal(st.code, KERF_FIT);
	assert_string_equal(st.plugin, "tiny");
	assert_int_equal(b.gpus, 0);
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
	return b.node;
}

static void test_select_highest_score(void **state)
{
	static const int32_t s1[] = { 5, 9, 3, 7 };
	static const int32_t s2[] = { -50, -3, -40 };
	static const int32_t s3[] = { 0, 0, 0, 100000 };

	(void)state;
	assert_int_equal(pick_among(s1, 4), 1);
	assert_int_equal(pick_among(s2, 3), 1);
	assert_int_equal(pick_among(s3, 4), 3);
}

static void test_ties_to_lowest_index(void **state)
{
	static const int32_t s1[] = { 5, 9, 9, 1 };
	static const int32_t s2[] = { 4, 4, 4, 4, 4 };
	static const int32_t s3[] = { 1, 2, 3, 3, 3, 2 };
	static const int32_t s4[] = { INT32_MIN, INT32_MIN };

	(void)state;
	assert_int_equal(pick_among(s1, 4), 1);
	assert_int_equal(pick_among(s2, 5), 0);
	assert_int_equal(pick_among(s3, 6), 2);
	/* Even the lowest possible score is a fit. */
	assert_int_equal(pick_among(s4, 2), 0);
}

static void test_fit_reason_names_node(void **state)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct table t = { .score = { 1, 3, 2 } };
	struct kerf_pod p = { .cpu_milli = 1 };
	struct kerf_binding b;
	struct kerf_status st;

	(void)state;
	make_cluster(&c, 3, 3);
	make_policy(&pol, &t, &c, false);
	kerf_sched_init(&sched, &pol);
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, &st), KERF_FIT);
	assert_string_equal(st.reason, "node 'n1'");
	/* st may be NULL */
	b.node = 7;
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, NULL), KERF_FIT);
	assert_int_equal(b.node, 1);
	assert_int_equal(sched.stats.nr_selects, 2);
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

static void test_weights_combine(void **state)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct table a = { .score = { 1, 0, 0 } }, z = { .score = { 0, 2, 4 } };
	struct kerf_policy_args args = { .cluster = NULL };
	struct kerf_pod p = { .cpu_milli = 1 };
	struct kerf_binding b;

	(void)state;
	make_cluster(&c, 3, 3);
	args.cluster = &c;
	memset(&pol, 0, sizeof(pol));
	assert_int_equal(kerf_policy_add_scorer(&pol, &table_plugin, 3, &args,
						NULL), 0);
	assert_int_equal(kerf_policy_add_scorer(&pol, &table_plugin, 1, &args,
						NULL), 0);
	pol.scorers[0].priv = &a;
	pol.scorers[1].priv = &z;
	kerf_sched_init(&sched, &pol);
	/* 3, 2, 4 */
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, NULL), KERF_FIT);
	assert_int_equal(b.node, 2);
	kerf_sched_release(&sched);
	/* 5, 2, 4 */
	pol.scorers[0].weight = 5;
	kerf_sched_init(&sched, &pol);
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, NULL), KERF_FIT);
	assert_int_equal(b.node, 0);
	kerf_sched_release(&sched);
	/* -1 * a + z: -1, 2, 4 ... and a negative weight on z: 1, -2, -4 */
	pol.scorers[0].weight = 1;
	pol.scorers[1].weight = -1;
	kerf_sched_init(&sched, &pol);
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, NULL), KERF_FIT);
	assert_int_equal(b.node, 0);
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

static void test_policy_stage_limit(void **state)
{
	struct kerf_policy pol;
	struct kerf_policy_args args = { .cluster = NULL };
	struct kerf_err err = { 0 };
	static const struct kerf_plugin no_filter = { .name = "nf",
						      .score = table_score };
	static const struct kerf_plugin no_score = { .name = "ns",
						     .filter = table_filter };

	(void)state;
	memset(&pol, 0, sizeof(pol));
	for (int i = 0; i < KERF_POLICY_MAX_PLUGINS; i++)
		assert_int_equal(kerf_policy_add_scorer(&pol, &table_plugin, 1,
							&args, NULL), 0);
	assert_int_equal(kerf_policy_add_scorer(&pol, &table_plugin, 1, &args,
						&err), -KERF_ELIMIT);
	assert_string_equal(err.msg, "plug-in 'table': more than 8 in one stage");
	assert_int_equal(pol.nr_scorers, KERF_POLICY_MAX_PLUGINS);
	kerf_err_clear(&err);
	assert_int_equal(kerf_policy_add_filter(&pol, &no_filter, &args, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "plug-in 'nf' has no filter");
	kerf_err_clear(&err);
	assert_int_equal(kerf_policy_add_scorer(&pol, &no_score, 1, &args, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "plug-in 'ns' has no score");
	assert_int_equal(pol.nr_filters, 0);
	kerf_policy_release(&pol);
	assert_int_equal(pol.nr_scorers, 0);
}

static void test_filter_excludes(void **state)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct table t = { .score = { 1, 5, 9, 7 }, .deny = 1u << 2,
			   .reason = "no" };
	struct kerf_pod p = { .cpu_milli = 1 };
	struct kerf_binding b;

	(void)state;
	make_cluster(&c, 4, 4);
	make_policy(&pol, &t, &c, true);
	kerf_sched_init(&sched, &pol);
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, NULL), KERF_FIT);
	assert_int_equal(b.node, 3);
	kerf_sched_release(&sched);
	t.deny = (1u << 2) | (1u << 3);
	kerf_sched_init(&sched, &pol);
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, NULL), KERF_FIT);
	assert_int_equal(b.node, 1);
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

static void test_first_scorer_chooses_gpus(void **state)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct table t = { .score = { 1, 2 }, .pick = { 0, 1u << 2 } };
	struct table second = { .score = { 0, 0 }, .pick = { 1, 1 } };
	struct kerf_policy_args args = { .cluster = NULL };
	struct kerf_pod p = { .cpu_milli = 1, .nr_gpus = 1, .gpu_milli = 500 };
	struct kerf_binding b;

	(void)state;
	make_cluster(&c, 2, 0);
	args.cluster = &c;
	make_policy(&pol, &t, &c, false);
	assert_int_equal(kerf_policy_add_scorer(&pol, &table_plugin, 1, &args,
						NULL), 0);
	pol.scorers[1].priv = &second;
	kerf_sched_init(&sched, &pol);
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, NULL), KERF_FIT);
	assert_int_equal(b.node, 1);
	assert_int_equal(b.gpus, 1u << 2); /* the first scorer's, not 1 */
	/* No choice from the first scorer: best-fit GPUs (lowest index). */
	t.score[0] = 3;
	kerf_sched_release(&sched);
	kerf_sched_init(&sched, &pol);
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, NULL), KERF_FIT);
	assert_int_equal(b.node, 0);
	assert_int_equal(b.gpus, 1u << 0);
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

/* select must fail with code and exactly this reason. */
static void expect_no_fit(struct kerf_sched *s, const struct kerf_cluster *c,
			  const struct kerf_pod *p, enum kerf_code code,
			  const char *reason)
{
	struct kerf_binding b = { 77, 77, 0 };
	struct kerf_status st;

	memset(&st, 0, sizeof(st));
	assert_int_equal(kerf_sched_select(s, c, p, &b, &st), code);
	assert_int_equal(st.code, code);
	assert_string_equal(st.reason, reason);
	assert_int_equal(b.node, 77);
	assert_int_equal(b.gpus, 77);
}

static void test_explain_fit_reasons(void **state)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct kerf_policy_args args = { .cluster = NULL };
	struct kerf_pod w = { .cpu_milli = 4000, .mem_mib = 8192, .nr_gpus = 1,
			      .gpu_milli = 1000 };
	struct kerf_pod p = { .cpu_milli = 4000, .mem_mib = 8192, .nr_gpus = 2,
			      .gpu_milli = 1000 };
	struct kerf_status st;

	(void)state;
	kerf_cluster_init(&c);
	assert_int_equal(kerf_cluster_model(&c, "g", 0, NULL), 0);
	assert_int_equal(kerf_cluster_add_node(&c, "cpu", 32000, 65536,
					       KERF_MODEL_NONE, 0, NULL), 0);
	assert_int_equal(kerf_cluster_add_node(&c, "small-cpu", 2000, 65536, 0,
					       4, NULL), 1);
	assert_int_equal(kerf_cluster_add_node(&c, "busy", 32000, 65536, 0, 4,
					       NULL), 2);
	assert_int_equal(kerf_cluster_add_node(&c, "one-gpu", 32000, 65536, 0,
					       1, NULL), 3);
	assert_int_equal(kerf_cluster_add_node(&c, "small-cpu2", 3999, 65536,
					       0, 4, NULL), 4);
	assert_int_equal(kerf_cluster_add_node(&c, "small-mem", 32000, 1000, 0,
					       2, NULL), 5);
	for (uint16_t g = 0; g < 3; g++)
		assert_int_equal(kerf_cluster_bind(&c, &w,
			(struct kerf_binding){ 2, (uint16_t)(1u << g), 0 }, NULL), 0);
	args.cluster = &c;
	assert_int_equal(kerf_policy_build(&pol, "first-fit", &args, NULL), 0);
	kerf_sched_init(&sched, &pol);
	expect_no_fit(&sched, &c, &p, KERF_UNSCHEDULABLE,
		      "0/6 nodes are available: 1 GPU model not allowed, "
		      "2 insufficient cpu, 1 insufficient GPU, "
		      "1 node has too few GPUs, 1 insufficient memory");
	memset(&st, 0, sizeof(st));
	kerf_sched_select(&sched, &c, &p, NULL, &st);
	assert_string_equal(st.plugin, "first-fit");
	/* Without a status the code is still "not now". */
	assert_int_equal(kerf_sched_select(&sched, &c, &p, NULL, NULL),
			 KERF_UNSCHEDULABLE);
	/* Only permanent reasons: unresolvable. */
	p.nr_gpus = 8;
	expect_no_fit(&sched, &c, &p, KERF_UNRESOLVABLE,
		      "0/6 nodes are available: 1 GPU model not allowed, "
		      "5 node has too few GPUs");
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

static void test_explain_empty_cluster(void **state)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct kerf_policy_args args = { .cluster = NULL };
	struct kerf_pod p = { .cpu_milli = 1 };

	(void)state;
	kerf_cluster_init(&c);
	args.cluster = &c;
	assert_int_equal(kerf_policy_build(&pol, "best-fit", &args, NULL), 0);
	kerf_sched_init(&sched, &pol);
	expect_no_fit(&sched, &c, &p, KERF_UNRESOLVABLE,
		      "0/0 nodes are available");
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

static void test_explain_no_gpu_choice(void **state)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct table t = { .score = { 1, 1 } };
	struct kerf_pod f = { .cpu_milli = 1, .nr_gpus = 1, .gpu_milli = 600 };

	(void)state;
	make_cluster(&c, 2, 0);
	/* Filters that let everything pass, no GPU with 600 milli free. */
	for (uint32_t i = 0; i < 2; i++)
		for (uint16_t g = 0; g < 4; g++)
			assert_int_equal(kerf_cluster_bind(&c, &f,
				(struct kerf_binding){ i, (uint16_t)(1u << g), 0 },
				NULL), 0);
	make_policy(&pol, &t, &c, true);
	kerf_sched_init(&sched, &pol);
	expect_no_fit(&sched, &c, &f, KERF_UNSCHEDULABLE,
		      "0/2 nodes are available: 2 no GPU choice");
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

static void test_explain_reason_kinds_bounded(void **state)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct table t = { .deny = 0x3ff, .numbered_reasons = true };
	struct kerf_pod p = { .cpu_milli = 1 };

	(void)state;
	make_cluster(&c, 10, 10);
	make_policy(&pol, &t, &c, true);
	kerf_sched_init(&sched, &pol);
	/* At most 8 kinds of reason are listed. */
	expect_no_fit(&sched, &c, &p, KERF_UNSCHEDULABLE,
		      "0/10 nodes are available: 1 r0, 1 r1, 1 r2, 1 r3, "
		      "1 r4, 1 r5, 1 r6, 1 r7");
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

static void test_explain_long_reasons_truncated(void **state)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched sched;
	char longer[150];
	struct table t = { .deny = 0x7, .deny_forever = 0x7,
			   .numbered_reasons = true };
	struct kerf_pod p = { .cpu_milli = 1 };
	struct kerf_status st;
	struct kerf_binding b;

	(void)state;
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	t.reason = longer;
	make_cluster(&c, 3, 3);
	make_policy(&pol, &t, &c, true);
	kerf_sched_init(&sched, &pol);
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, &st),
			 KERF_UNRESOLVABLE);
	/* Three reasons of ~150 bytes: cut at the end of the buffer. */
	assert_int_equal(strlen(st.reason), KERF_REASON_MAX - 1);
	assert_memory_equal(st.reason, "0/3 nodes are available: 1 xxx", 30);
	assert_non_null(strstr(st.reason, "xr0, 1 xxx"));
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

static void test_select_changes_nothing(void **state)
{
	struct kerf_cluster c;
	struct kerf_node before[4];
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct kerf_policy_args args = { .cluster = NULL };
	struct kerf_pod p = { .cpu_milli = 1000, .mem_mib = 10, .nr_gpus = 1,
			      .gpu_milli = 300 };
	struct kerf_binding b;

	(void)state;
	make_cluster(&c, 4, 1);
	args.cluster = &c;
	assert_int_equal(kerf_policy_build(&pol, "gpu-packing", &args, NULL),
			 0);
	kerf_sched_init(&sched, &pol);
	memcpy(before, c.nodes, sizeof(before));
	for (int i = 0; i < 3; i++) {
		assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, NULL),
				 KERF_FIT);
		assert_int_equal(b.node, 1);
		assert_int_equal(b.gpus, 1);
	}
	assert_memory_equal(before, c.nodes, sizeof(before));
	assert_int_equal(c.stamp_seq, 4);
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

static void test_reserve_binds(void **state)
{
	struct kerf_cluster c;
	struct kerf_node before[3];
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct table t = { .score = { 1, 2, 3 } };
	struct kerf_pod p = { .cpu_milli = 1000, .mem_mib = 100, .nr_gpus = 1,
			      .gpu_milli = 250 };
	struct kerf_binding b;
	struct kerf_err err = { 0 };

	(void)state;
	make_cluster(&c, 3, 0);
	make_policy(&pol, &t, &c, true);
	kerf_sched_init(&sched, &pol);
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, NULL), KERF_FIT);
	assert_int_equal(b.node, 2);
	assert_int_equal(b.gpus, 1);
	assert_int_equal(kerf_sched_reserve(&sched, &c, &p, b, &err), 0);
	assert_int_equal(c.nodes[2].cpu_free_milli, 31000);
	assert_int_equal(c.nodes[2].mem_free_mib, 65436);
	assert_int_equal(c.nodes[2].gpu_free_milli[0], 750);
	assert_int_equal(c.nodes[2].nr_pods, 1);
	/* Each plug-in slot's reserve hook ran (filter and scorer). */
	assert_int_equal(t.nr_reserve, 2);
	assert_int_equal(t.reserved_node, 2);
	assert_int_equal(t.reserved_gpus, 1);
	/* A refused bind changes nothing and runs no hook. */
	memcpy(before, c.nodes, sizeof(before));
	b.gpus = 3;
	assert_int_equal(kerf_sched_reserve(&sched, &c, &p, b, &err),
			 -KERF_ERANGE);
	assert_string_equal(err.msg, "binding on 'n2': 2 GPUs chosen for a pod asking 1");
	assert_memory_equal(before, c.nodes, sizeof(before));
	assert_int_equal(t.nr_reserve, 2);
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

static void test_place(void **state)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct table t = { .score = { 2, 1 } };
	struct kerf_pod p = { .cpu_milli = 20000 };
	struct kerf_binding b;
	struct kerf_status st;

	(void)state;
	make_cluster(&c, 2, 2);
	make_policy(&pol, &t, &c, false);
	kerf_sched_init(&sched, &pol);
	assert_int_equal(kerf_sched_place(&sched, &c, &p, &b, &st), KERF_FIT);
	assert_int_equal(b.node, 0);
	assert_int_equal(c.nodes[0].cpu_free_milli, 12000);
	assert_int_equal(t.nr_observe, 1);
	assert_int_equal(t.nr_reserve, 1);
	/*
	 * Node 0 no longer fits, but without the fit filter the policy
	 * picks it again: the bind is refused and reported as internal.
	 */
	assert_int_equal(kerf_sched_place(&sched, &c, &p, &b, &st),
			 KERF_INTERNAL);
	assert_string_equal(st.reason, "binding on 'n0': cpu or memory overcommitted");
	assert_int_equal(t.nr_observe, 2);
	assert_int_equal(t.nr_reserve, 1);
	assert_int_equal(c.nodes[0].cpu_free_milli, 12000);
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

static void test_place_with_fit_filter(void **state)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct kerf_policy_args args = { .cluster = NULL };
	struct kerf_pod p = { .cpu_milli = 20000 };
	struct kerf_binding b;
	struct kerf_status st;

	(void)state;
	make_cluster(&c, 2, 2);
	args.cluster = &c;
	assert_int_equal(kerf_policy_build(&pol, "first-fit", &args, NULL), 0);
	kerf_sched_init(&sched, &pol);
	assert_int_equal(kerf_sched_place(&sched, &c, &p, &b, &st), KERF_FIT);
	assert_int_equal(b.node, 0);
	assert_int_equal(kerf_sched_place(&sched, &c, &p, &b, &st), KERF_FIT);
	assert_int_equal(b.node, 1);
	assert_int_equal(kerf_sched_place(&sched, &c, &p, &b, &st),
			 KERF_UNSCHEDULABLE);
	assert_string_equal(st.reason, "0/2 nodes are available: 2 insufficient cpu");
	assert_int_equal(c.nodes[0].nr_pods + c.nodes[1].nr_pods, 2);
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

static void test_cache_reuse_and_invalidation(void **state)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct table t = { .score = { 1, 2, 3, 4 } };
	struct kerf_pod p = { .cpu_milli = 1000 };
	struct kerf_binding b;

	(void)state;
	make_cluster(&c, 4, 4);
	make_policy(&pol, &t, &c, true);
	kerf_sched_init(&sched, &pol);
	assert_true(sched.cacheable);
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, NULL), KERF_FIT);
	assert_int_equal(sched.stats.nr_node_evals, 4);
	assert_int_equal(sched.stats.nr_cache_hits, 0);
	/* Cached verdicts are used even if the plug-in would now disagree. */
	t.score[0] = 100;
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, NULL), KERF_FIT);
	assert_int_equal(b.node, 3);
	assert_int_equal(sched.stats.nr_node_evals, 4);
	assert_int_equal(sched.stats.nr_cache_hits, 4);
	/* A changed node is evaluated again, the others are not. */
	assert_int_equal(kerf_sched_reserve(&sched, &c, &p, b, NULL), 0);
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, NULL), KERF_FIT);
	assert_int_equal(sched.stats.nr_node_evals, 5);
	assert_int_equal(sched.stats.nr_cache_hits, 7);
	assert_int_equal(b.node, 3);
	/* An observe that does not say "stale" keeps the cache... */
	kerf_sched_observe(&sched, &p);
	kerf_sched_select(&sched, &c, &p, &b, NULL);
	assert_int_equal(sched.stats.nr_node_evals, 5);
	assert_int_equal(sched.stats.nr_cache_hits, 11);
	/* ...one that does drops everything. */
	t.stale_on_observe = true;
	kerf_sched_observe(&sched, &p);
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, NULL), KERF_FIT);
	assert_int_equal(sched.stats.nr_node_evals, 9);
	assert_int_equal(b.node, 0);
	/* Uncached: every select evaluates every node. */
	sched.cacheable = false;
	kerf_sched_select(&sched, &c, &p, &b, NULL);
	kerf_sched_select(&sched, &c, &p, &b, NULL);
	assert_int_equal(sched.stats.nr_node_evals, 17);
	assert_int_equal(sched.stats.nr_cache_hits, 11);
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

/* A cluster rebuilt in the same storage needs kerf_sched_forget. */
static void test_forget_after_rebuilt_cluster(void **state)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct kerf_pod p = { .cpu_milli = 1, .nr_gpus = 1, .gpu_milli = 1000 };
	struct kerf_binding b;

	(void)state;
	make_cluster(&c, 3, 0);
	assert_int_equal(kerf_policy_build(&pol, "first-fit",
					   &(struct kerf_policy_args){ .cluster = &c },
					   NULL), 0);
	kerf_sched_init(&sched, &pol);
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, NULL), KERF_FIT);
	assert_int_equal(b.node, 0);
	kerf_cluster_release(&c);
	make_cluster(&c, 3, 1); /* node 0 now has no GPUs */
	kerf_sched_forget(&sched);
	assert_int_equal(kerf_sched_select(&sched, &c, &p, &b, NULL), KERF_FIT);
	assert_int_equal(b.node, 1);
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

static void test_impure_plugins_not_cached(void **state)
{
	const struct kerf_plugin *impure[] = { &impure_plugin };
	struct kerf_cluster c;

	(void)state;
	make_cluster(&c, 3, 3);
	for (int k = 0; k < 1; k++) {
		struct kerf_policy pol;
		struct kerf_sched sched;
		struct table t = { .score = { 1, 2, 3 } };
		struct kerf_policy_args args = { .cluster = &c };
		struct kerf_pod p = { .cpu_milli = 1 };
		struct kerf_binding b;

		make_policy(&pol, &t, &c, true);
		assert_int_equal(kerf_policy_add_scorer(&pol, impure[k], 1,
							&args, NULL), 0);
		pol.scorers[1].priv = &t;
		kerf_sched_init(&sched, &pol);
		assert_false(sched.cacheable);
		kerf_sched_select(&sched, &c, &p, &b, NULL);
		kerf_sched_select(&sched, &c, &p, &b, NULL);
		assert_int_equal(b.node, 2);
		assert_int_equal(sched.stats.nr_node_evals, 6);
		assert_int_equal(sched.stats.nr_cache_hits, 0);
		kerf_sched_release(&sched);
		kerf_policy_release(&pol);
	}
	kerf_cluster_release(&c);
}

/* A random request: CPU-only, a fraction, or 1, 2, 4 or 8 whole GPUs. */
static struct kerf_pod random_pod(struct kerf_rng *rng)
{
	static const uint8_t whole[] = { 1, 1, 2, 4, 8 };
	struct kerf_pod p = {
		.cpu_milli = 500 * (int64_t)kerf_rng_below(rng, 24),
		.mem_mib = 1024 * (int64_t)kerf_rng_below(rng, 32),
	};
	uint64_t kind = kerf_rng_below(rng, 10);

	if (kind < 2)
		return p;
	p.nr_gpus = 1;
	if (kind < 6) {
		p.gpu_milli = 100 * (int32_t)(1 + kerf_rng_below(rng, 9));
	} else {
		p.nr_gpus = whole[kerf_rng_below(rng, 5)];
		p.gpu_milli = KERF_GPU_MILLI;
	}
	if (kerf_rng_below(rng, 8) == 0)
		p.model_mask = 1u << kerf_rng_below(rng, 2);
	if (kerf_rng_below(rng, 8) == 0)
		p.gpu_mem_mib = 2048 * (int32_t)kerf_rng_below(rng, 10);
	return p;
}

static void random_cluster(struct kerf_cluster *c, struct kerf_rng *rng)
{
	static const int gpus[] = { 0, 1, 2, 4, 8, 8 };

	kerf_cluster_init(c);
	assert_int_equal(kerf_cluster_model(c, "A", 16384, NULL), 0);
	assert_int_equal(kerf_cluster_model(c, "B", 0, NULL), 1);
	for (int i = 0; i < 14; i++) {
		char name[16];
		int g = gpus[kerf_rng_below(rng, 6)];

		snprintf(name, sizeof(name), "r%02d", i);
		assert_int_equal(kerf_cluster_add_node(c, name,
			16000 * (int64_t)(1 + kerf_rng_below(rng, 6)),
			65536 * (int64_t)(1 + kerf_rng_below(rng, 4)),
			(int)kerf_rng_below(rng, 2), g, NULL), i);
	}
}

struct placed {
	struct kerf_pod pod;
	struct kerf_binding b;
};

static void compare_cached_uncached(const char *policy, uint64_t seed)
{
	enum { STEPS = 600 };
	static struct placed placed[STEPS];
	static struct kerf_pod pods[STEPS];
	struct kerf_cluster ca, cu;
	struct kerf_pod_dist dist;
	struct kerf_policy pa, pu;
	struct kerf_sched sa, su;
	struct kerf_policy_args a = { .dist = &dist, .seed = seed };
	struct kerf_policy_args u = { .dist = &dist, .seed = seed };
	struct kerf_rng rng;
	size_t nr_placed = 0;

	kerf_rng_seed(&rng, seed);
	random_cluster(&ca, &rng);
	assert_int_equal(kerf_cluster_copy(&cu, &ca), 0);
	for (int i = 0; i < STEPS; i++)
		pods[i] = random_pod(&rng);
	kerf_pod_dist_init(&dist);
	assert_int_equal(kerf_pod_dist_typical(&dist, pods, STEPS, 95, 0, NULL),
			 0);
	a.cluster = &ca;
	u.cluster = &cu;
	assert_int_equal(kerf_policy_build(&pa, policy, &a, NULL), 0);
	assert_int_equal(kerf_policy_build(&pu, policy, &u, NULL), 0);
	kerf_sched_init(&sa, &pa);
	kerf_sched_init(&su, &pu);
	assert_true(sa.cacheable);
	su.cacheable = false;
	for (int i = 0; i < STEPS; i++) {
		struct kerf_binding ba = { 0, 0, 0 }, bu = { 0, 0, 0 };
		struct kerf_status sta, stu;
		enum kerf_code ka, ku;

		ka = kerf_sched_place(&sa, &ca, &pods[i], &ba, &sta);
		ku = kerf_sched_place(&su, &cu, &pods[i], &bu, &stu);
		if (ka != ku || (ka == KERF_FIT && (ba.node != bu.node ||
						    ba.gpus != bu.gpus)))
			fail_msg("%s seed %llu step %d: cached %d node %u gpus %#x, uncached %d node %u gpus %#x",
				 policy, (unsigned long long)seed, i, ka,
				 ba.node, ba.gpus, ku, bu.node, bu.gpus);
		if (ka == KERF_FIT)
			placed[nr_placed++] = (struct placed){ pods[i], ba };
		else
			assert_string_equal(sta.reason, stu.reason);
		/* Pods leave now and then, the same ones on both sides. */
		if (nr_placed > 0 && kerf_rng_below(&rng, 3) == 0) {
			size_t k = (size_t)kerf_rng_below(&rng, nr_placed);

			assert_int_equal(kerf_cluster_unbind(&ca, &placed[k].pod,
							     placed[k].b, NULL), 0);
			assert_int_equal(kerf_cluster_unbind(&cu, &placed[k].pod,
							     placed[k].b, NULL), 0);
			placed[k] = placed[--nr_placed];
		}
	}
	/*
	 * kerf learns its typical pods online here, and each adoption empties
	 * the cache; with only candidate nodes visited it may never hit.
	 */
	if (strcmp(policy, "kerf") != 0) {
		assert_true(sa.stats.nr_cache_hits > 0);
		assert_true(sa.stats.nr_node_evals < su.stats.nr_node_evals);
	}
	assert_int_equal(su.stats.nr_cache_hits, 0);
	assert_true(sa.stats.nr_node_evals <= su.stats.nr_node_evals);
	for (size_t i = 0; i < ca.nr_nodes; i++) {
		struct kerf_node x = ca.nodes[i], y = cu.nodes[i];

		x.name = y.name = NULL;
		assert_memory_equal(&x, &y, sizeof(x));
	}
	assert_int_equal(kerf_cluster_check(&ca, NULL), 0);
	kerf_sched_release(&sa);
	kerf_sched_release(&su);
	kerf_policy_release(&pa);
	kerf_policy_release(&pu);
	kerf_pod_dist_release(&dist);
	kerf_cluster_release(&ca);
	kerf_cluster_release(&cu);
}

static void test_cached_equals_uncached(void **state)
{
	static const char *const pure[] = {
		"dotprod", "gpu-packing", "gpu-clustering", "best-fit",
		"first-fit", "fgd", "kerf",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(pure) / sizeof(pure[0]); i++)
		for (uint64_t seed = 1; seed <= 3; seed++)
			compare_cached_uncached(pure[i], seed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_select_highest_score),
		cmocka_unit_test(test_ties_to_lowest_index),
		cmocka_unit_test(test_fit_reason_names_node),
		cmocka_unit_test(test_weights_combine),
		cmocka_unit_test(test_policy_stage_limit),
		cmocka_unit_test(test_filter_excludes),
		cmocka_unit_test(test_first_scorer_chooses_gpus),
		cmocka_unit_test(test_explain_fit_reasons),
		cmocka_unit_test(test_explain_empty_cluster),
		cmocka_unit_test(test_explain_no_gpu_choice),
		cmocka_unit_test(test_explain_reason_kinds_bounded),
		cmocka_unit_test(test_explain_long_reasons_truncated),
		cmocka_unit_test(test_select_changes_nothing),
		cmocka_unit_test(test_reserve_binds),
		cmocka_unit_test(test_place),
		cmocka_unit_test(test_place_with_fit_filter),
		cmocka_unit_test(test_cache_reuse_and_invalidation),
		cmocka_unit_test(test_impure_plugins_not_cached),
		cmocka_unit_test(test_forget_after_rebuilt_cluster),
		cmocka_unit_test(test_cached_equals_uncached),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
