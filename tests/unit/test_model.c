/*
 * Unit tests for core/model: adding models and nodes (and the messages of
 * each refusal), kerf_pod_validate, the order in which kerf_node_misfit
 * reports reasons, the arithmetic of bind/unbind, that a refused bind or
 * unbind changes nothing, that every change gives the node a new stamp,
 * kerf_cluster_check on corrupted counters, and kerf_cluster_copy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/model.h"

/* Models: 0 = "A100" (40960 MiB), 1 = "T4" (16384 MiB), 2 = "X" (untracked). */
static void setup_models(struct kerf_cluster *c)
{
	kerf_cluster_init(c);
	assert_int_equal(kerf_cluster_model(c, "A100", 40960, NULL), 0);
	assert_int_equal(kerf_cluster_model(c, "T4", 16384, NULL), 1);
	assert_int_equal(kerf_cluster_model(c, "X", 0, NULL), 2);
}

/*
 * Nodes: 0 "cpu" (no GPUs), 1 "a100x4", 2 "t4x2", 3 "xx2" (untracked GPU
 * memory); each 32 cores, 128 GiB.
 */
static void setup_cluster(struct kerf_cluster *c)
{
	setup_models(c);
	assert_int_equal(kerf_cluster_add_node(c, "cpu", 32000, 131072,
					       KERF_MODEL_NONE, 0, NULL), 0);
	assert_int_equal(kerf_cluster_add_node(c, "a100x4", 32000, 131072, 0,
					       4, NULL), 1);
	assert_int_equal(kerf_cluster_add_node(c, "t4x2", 32000, 131072, 1, 2,
					       NULL), 2);
	assert_int_equal(kerf_cluster_add_node(c, "xx2", 32000, 131072, 2, 2,
					       NULL), 3);
}

static struct kerf_pod fraction(int32_t milli, int32_t mem)
{
	return (struct kerf_pod){ .cpu_milli = 1000, .mem_mib = 2048,
				  .nr_gpus = 1, .gpu_milli = milli,
				  .gpu_mem_mib = mem };
}

static struct kerf_pod whole(uint8_t nr)
{
	return (struct kerf_pod){ .cpu_milli = 4000, .mem_mib = 8192,
				  .nr_gpus = nr, .gpu_milli = KERF_GPU_MILLI };
}

static void assert_has(const char *msg, const char *part)
{
	if (!strstr(msg, part))
		fail_msg("message \"%s\" lacks \"%s\"", msg, part);
}

static void test_models(void **state)
{
	struct kerf_cluster c;
	struct kerf_err err = { 0 };
	char name[KERF_MODEL_NAME_MAX + 1];

	(void)state;
	setup_models(&c);
	assert_int_equal(c.nr_models, 3);
	assert_string_equal(c.models[1].name, "T4");
	assert_int_equal(c.models[1].mem_mib, 16384);
	/* An existing name returns its index and keeps its memory. */
	assert_int_equal(kerf_cluster_model(&c, "T4", 999, &err), 1);
	assert_int_equal(c.models[1].mem_mib, 16384);
	assert_int_equal(err.code, 0);
	assert_int_equal(kerf_cluster_find_model(&c, "X"), 2);
	assert_int_equal(kerf_cluster_find_model(&c, "t4"), -KERF_ENOTFOUND);

	assert_int_equal(kerf_cluster_model(&c, "", 1, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "GPU model name '': must be 1 to 31 bytes");
	kerf_err_clear(&err);
	memset(name, 'm', KERF_MODEL_NAME_MAX);
	name[KERF_MODEL_NAME_MAX] = '\0';
	assert_int_equal(kerf_cluster_model(&c, name, 1, &err), -KERF_EINVAL);
	assert_has(err.msg, "must be 1 to 31 bytes");
	kerf_err_clear(&err);
	name[KERF_MODEL_NAME_MAX - 1] = '\0'; /* 31 bytes: allowed */
	assert_int_equal(kerf_cluster_model(&c, name, 1, &err), 3);
	assert_int_equal(kerf_cluster_model(&c, "neg", -1, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "GPU model 'neg': memory -1 MiB is negative");
	assert_int_equal(c.nr_models, 4);
	kerf_cluster_release(&c);
}

static void test_model_limit(void **state)
{
	struct kerf_cluster c;
	struct kerf_err err = { 0 };
	char name[16];

	(void)state;
	kerf_cluster_init(&c);
	for (int i = 0; i < KERF_MAX_MODELS; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		assert_int_equal(kerf_cluster_model(&c, name, 0, &err), i);
	}
	assert_int_equal(kerf_cluster_model(&c, "one-more", 0, &err),
			 -KERF_ELIMIT);
	assert_string_equal(err.msg, "GPU model 'one-more': more than 64 models");
	assert_int_equal(c.nr_models, KERF_MAX_MODELS);
	/* A known name is still found when the table is full. */
	assert_int_equal(kerf_cluster_model(&c, "m63", 0, NULL), 63);
	kerf_cluster_release(&c);
}

static void test_add_node(void **state)
{
	struct kerf_cluster c;
	const struct kerf_node *n;

	(void)state;
	setup_cluster(&c);
	assert_int_equal(c.nr_nodes, 4);
	n = &c.nodes[0];
	assert_string_equal(n->name, "cpu");
	assert_int_equal(n->model, KERF_MODEL_NONE);
	assert_int_equal(n->nr_gpus, 0);
	assert_int_equal(n->gpu_free_milli_sum, 0);
	n = &c.nodes[1];
	assert_string_equal(n->name, "a100x4");
	assert_int_equal(n->cpu_milli, 32000);
	assert_int_equal(n->cpu_free_milli, 32000);
	assert_int_equal(n->mem_mib, 131072);
	assert_int_equal(n->mem_free_mib, 131072);
	assert_int_equal(n->model, 0);
	assert_int_equal(n->nr_gpus, 4);
	assert_int_equal(n->nr_gpus_idle, 4);
	assert_int_equal(n->gpu_free_milli_sum, 4000);
	assert_int_equal(n->nr_pods, 0);
	for (int g = 0; g < 4; g++) {
		assert_int_equal(n->gpu_free_milli[g], 1000);
		assert_int_equal(n->gpu_mem_mib[g], 40960);
		assert_int_equal(n->gpu_mem_free_mib[g], 40960);
	}
	assert_int_equal(c.nodes[3].gpu_mem_mib[0], 0);
	/* Stamps are fresh and increasing. */
	for (size_t i = 0; i < c.nr_nodes; i++)
		assert_int_equal(c.nodes[i].stamp, i + 1);
	assert_int_equal(c.stamp_seq, 4);
	assert_int_equal(kerf_cluster_gpu_milli_capacity(&c), 8000);
	assert_int_equal(kerf_cluster_gpu_milli_used(&c), 0);
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	kerf_cluster_release(&c);
	assert_int_equal(c.nr_nodes, 0);
	assert_null(c.nodes);
}

static void test_add_node_many(void **state)
{
	struct kerf_cluster c;
	char name[32];

	(void)state;
	setup_models(&c);
	/* Past the first growth of the node array (64). */
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "n%03d", i);
		assert_int_equal(kerf_cluster_add_node(&c, name, 1000 + i, 10,
						       1, 1 + i % 16, NULL), i);
	}
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "n%03d", i);
		assert_string_equal(c.nodes[i].name, name);
		assert_int_equal(c.nodes[i].cpu_milli, 1000 + i);
		assert_int_equal(c.nodes[i].nr_gpus, 1 + i % 16);
	}
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	kerf_cluster_release(&c);
}

static void test_add_node_errors(void **state)
{
	struct kerf_cluster c;
	struct kerf_err err = { 0 };

	(void)state;
	setup_models(&c);
	assert_int_equal(kerf_cluster_add_node(&c, "a", -1, 1, 0, 1, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "node 'a': cpu_milli -1 is outside 0..2147483648");
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_add_node(&c, "a", KERF_MAX_CPU_MILLI + 1,
					       1, 0, 1, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "node 'a': cpu_milli 2147483649 is outside 0..2147483648");
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_add_node(&c, "b", 1, -1, 0, 1, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "node 'b': memory_mib -1 is outside 0..1099511627776");
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_add_node(&c, "b", 1, KERF_MAX_MEM_MIB + 1,
					       0, 1, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "node 'b': memory_mib 1099511627777 is outside 0..1099511627776");
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_add_node(&c, "c", 1, 1, 0, 17, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "node 'c': gpu count 17 is outside 0..16");
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_add_node(&c, "d", 1, 1, 0, -1, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "node 'd': gpu count -1 is outside 0..16");
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_add_node(&c, "e", 1, 1, KERF_MODEL_NONE,
					       2, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "node 'e': has 2 GPUs but no GPU model");
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_add_node(&c, "f", 1, 1, 3, 2, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "node 'f': has 2 GPUs but no GPU model");
	kerf_err_clear(&err);
	assert_int_equal(kerf_cluster_add_node(&c, "g", 1, 1, -1, 2, &err),
			 -KERF_EINVAL);
	assert_int_equal(c.nr_nodes, 0);
	assert_int_equal(c.stamp_seq, 0);
	/* 16 GPUs is allowed; a GPU-less node ignores the model. */
	assert_int_equal(kerf_cluster_add_node(&c, "h", 1, 1, 1, 16, NULL), 0);
	assert_int_equal(kerf_cluster_add_node(&c, "i", 1, 1, 42, 0, NULL), 1);
	assert_int_equal(c.nodes[1].model, KERF_MODEL_NONE);
	/* The bounds themselves are allowed. */
	assert_int_equal(kerf_cluster_add_node(&c, "j", KERF_MAX_CPU_MILLI,
					       KERF_MAX_MEM_MIB, 0, 8, NULL), 2);
	kerf_cluster_release(&c);
}

static void expect_invalid(struct kerf_pod p, const char *msg)
{
	struct kerf_err err = { 0 };

	assert_int_equal(kerf_pod_validate(&p, &err), -KERF_EINVAL);
	assert_int_equal(err.code, -KERF_EINVAL);
	assert_string_equal(err.msg, msg);
}

static void test_pod_validate(void **state)
{
	struct kerf_pod p;

	(void)state;
	p = (struct kerf_pod){ .cpu_milli = 1000 };
	assert_int_equal(kerf_pod_validate(&p, NULL), 0);
	p = fraction(1, 0);
	assert_int_equal(kerf_pod_validate(&p, NULL), 0);
	p = fraction(999, 100);
	assert_int_equal(kerf_pod_validate(&p, NULL), 0);
	p = whole(16);
	assert_int_equal(kerf_pod_validate(&p, NULL), 0);

	p = (struct kerf_pod){ .cpu_milli = KERF_MAX_CPU_MILLI,
			       .mem_mib = KERF_MAX_MEM_MIB };
	assert_int_equal(kerf_pod_validate(&p, NULL), 0);

	p = (struct kerf_pod){ .cpu_milli = -1 };
	expect_invalid(p, "cpu_milli -1: must be 0..2147483648");
	p = (struct kerf_pod){ .cpu_milli = KERF_MAX_CPU_MILLI + 1 };
	expect_invalid(p, "cpu_milli 2147483649: must be 0..2147483648");
	p = (struct kerf_pod){ .mem_mib = -5 };
	expect_invalid(p, "memory_mib -5: must be 0..1099511627776");
	p = (struct kerf_pod){ .mem_mib = KERF_MAX_MEM_MIB + 1 };
	expect_invalid(p, "memory_mib 1099511627777: must be 0..1099511627776");
	p = whole(17);
	expect_invalid(p, "num_gpu 17: more than 16 GPUs on one node");
	p = (struct kerf_pod){ .gpu_milli = 5 };
	expect_invalid(p, "gpu_milli 5: set on a pod with no GPUs");
	p = fraction(0, 0);
	expect_invalid(p, "gpu_milli 0: must be 1..1000 for a GPU pod");
	p = fraction(1001, 0);
	expect_invalid(p, "gpu_milli 1001: must be 1..1000 for a GPU pod");
	p = fraction(-3, 0);
	expect_invalid(p, "gpu_milli -3: must be 1..1000 for a GPU pod");
	p = whole(2);
	p.gpu_milli = 500;
	expect_invalid(p, "gpu_milli 500: a fraction is only allowed with num_gpu 1");
	p = fraction(500, -1);
	expect_invalid(p, "gpu_memory_mib -1: must not be negative");
	/* The first problem is the one reported. */
	p = (struct kerf_pod){ .cpu_milli = -1, .mem_mib = -1, .nr_gpus = 20 };
	expect_invalid(p, "cpu_milli -1: must be 0..2147483648");
}

static void test_pod_class(void **state)
{
	struct kerf_pod p = { .cpu_milli = 1 };

	(void)state;
	assert_int_equal(kerf_pod_class(&p), -1);
	assert_false(kerf_pod_is_fraction(&p));
	p = fraction(300, 0);
	assert_int_equal(kerf_pod_class(&p), 0);
	assert_true(kerf_pod_is_fraction(&p));
	assert_int_equal(kerf_pod_gpu_milli_total(&p), 300);
	p = whole(1);
	assert_int_equal(kerf_pod_class(&p), 1);
	assert_false(kerf_pod_is_fraction(&p));
	p = whole(8);
	assert_int_equal(kerf_pod_class(&p), 8);
	assert_int_equal(kerf_pod_gpu_milli_total(&p), 8000);
}

static void test_misfit_order(void **state)
{
	struct kerf_cluster c;
	const struct kerf_node *a100;
	struct kerf_pod p;

	(void)state;
	setup_cluster(&c);
	a100 = &c.nodes[1];
	/* Wrong model beats every other shortfall. */
	p = (struct kerf_pod){ .cpu_milli = 1 << 30, .mem_mib = 1 << 30,
			       .nr_gpus = 8, .gpu_milli = 1000,
			       .model_mask = 1u << 1 };
	assert_int_equal(kerf_node_misfit(&c, a100, &p), KERF_MISFIT_MODEL);
	/* Allowed model, too many GPUs beats cpu and memory. */
	p.model_mask = (1u << 0) | (1u << 1);
	assert_int_equal(kerf_node_misfit(&c, a100, &p),
			 KERF_MISFIT_GPU_COUNT);
	/* Enough GPUs: cpu before memory. */
	p.nr_gpus = 4;
	assert_int_equal(kerf_node_misfit(&c, a100, &p), KERF_MISFIT_CPU);
	p.cpu_milli = 32000;
	assert_int_equal(kerf_node_misfit(&c, a100, &p), KERF_MISFIT_MEM);
	p.mem_mib = 131072;
	assert_int_equal(kerf_node_misfit(&c, a100, &p), KERF_MISFIT_NONE);
	/* A GPU pod on a node without GPUs is a model misfit. */
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[0], &p),
			 KERF_MISFIT_MODEL);
	/* A CPU-only pod fits anywhere with room, any mask. */
	p = (struct kerf_pod){ .cpu_milli = 32000, .model_mask = 1u << 5 };
	for (size_t i = 0; i < c.nr_nodes; i++)
		assert_int_equal(kerf_node_misfit(&c, &c.nodes[i], &p),
				 KERF_MISFIT_NONE);
	p.cpu_milli = 32001;
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[0], &p),
			 KERF_MISFIT_CPU);
	kerf_cluster_release(&c);
}

static void test_misfit_gpu(void **state)
{
	struct kerf_cluster c;
	struct kerf_pod p, big;

	(void)state;
	setup_cluster(&c);
	/* t4x2: GPU 0 holds 700, GPU 1 one whole pod. */
	p = fraction(700, 0);
	assert_int_equal(kerf_cluster_bind(&c, &p,
					   (struct kerf_binding){ 2, 1u << 0, 0 },
					   NULL), 0);
	p = whole(1);
	assert_int_equal(kerf_cluster_bind(&c, &p,
					   (struct kerf_binding){ 2, 1u << 1, 0 },
					   NULL), 0);
	p = fraction(300, 0);
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[2], &p),
			 KERF_MISFIT_NONE);
	p = fraction(301, 0);
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[2], &p),
			 KERF_MISFIT_GPU);
	p = whole(1);
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[2], &p),
			 KERF_MISFIT_GPU);
	/* GPU memory: 16384 MiB per T4, untracked on model X. */
	p = fraction(100, 16384);
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[1], &p),
			 KERF_MISFIT_NONE);
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[3], &p),
			 KERF_MISFIT_GPU);
	big = whole(2);
	big.gpu_mem_mib = 40961;
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[1], &big),
			 KERF_MISFIT_GPU);
	big.gpu_mem_mib = 40960;
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[1], &big),
			 KERF_MISFIT_NONE);
	kerf_cluster_release(&c);
}

static void test_misfit_text(void **state)
{
	(void)state;
	assert_string_equal(kerf_misfit_text(KERF_MISFIT_NONE), "fits");
	assert_string_equal(kerf_misfit_text(KERF_MISFIT_MODEL),
			    "GPU model not allowed");
	assert_string_equal(kerf_misfit_text(KERF_MISFIT_GPU_COUNT),
			    "node has too few GPUs");
	assert_string_equal(kerf_misfit_text(KERF_MISFIT_CPU),
			    "insufficient cpu");
	assert_string_equal(kerf_misfit_text(KERF_MISFIT_MEM),
			    "insufficient memory");
	assert_string_equal(kerf_misfit_text(KERF_MISFIT_GPU),
			    "insufficient GPU");
	assert_string_equal(kerf_misfit_text(KERF_MISFIT_COUNT_), "unknown");
}

static void test_bind_unbind_arithmetic(void **state)
{
	struct kerf_cluster c;
	struct kerf_node orig;
	const struct kerf_node *n;
	struct kerf_pod f = fraction(300, 10000), w = whole(2);
	struct kerf_binding bf = { 1, 1u << 1, 0 }, bw = { 1, (1u << 0) | (1u << 3), 0 };

	(void)state;
	setup_cluster(&c);
	n = &c.nodes[1];
	orig = *n;
	assert_int_equal(kerf_cluster_bind(&c, &f, bf, NULL), 0);
	assert_int_equal(n->cpu_free_milli, 31000);
	assert_int_equal(n->mem_free_mib, 131072 - 2048);
	assert_int_equal(n->gpu_free_milli[1], 700);
	assert_int_equal(n->gpu_mem_free_mib[1], 30960);
	assert_int_equal(n->gpu_free_milli_sum, 3700);
	assert_int_equal(n->nr_gpus_idle, 3);
	assert_int_equal(n->nr_pods, 1);
	assert_int_equal(n->nr_pods_by_class[0], 1);
	assert_int_equal(kerf_cluster_gpu_milli_used(&c), 300);

	assert_int_equal(kerf_cluster_bind(&c, &w, bw, NULL), 0);
	assert_int_equal(n->cpu_free_milli, 27000);
	assert_int_equal(n->mem_free_mib, 131072 - 2048 - 8192);
	assert_int_equal(n->gpu_free_milli[0], 0);
	assert_int_equal(n->gpu_free_milli[2], 1000);
	assert_int_equal(n->gpu_free_milli[3], 0);
	assert_int_equal(n->gpu_mem_free_mib[0], 40960); /* no memory asked */
	assert_int_equal(n->gpu_free_milli_sum, 1700);
	assert_int_equal(n->nr_gpus_idle, 1);
	assert_int_equal(n->nr_pods, 2);
	assert_int_equal(n->nr_pods_by_class[2], 1);
	assert_int_equal(kerf_cluster_gpu_milli_used(&c), 2300);
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);

	/* A second fraction on the shared GPU. */
	assert_int_equal(kerf_cluster_bind(&c, &f, bf, NULL), 0);
	assert_int_equal(n->gpu_free_milli[1], 400);
	assert_int_equal(n->gpu_mem_free_mib[1], 20960);
	assert_int_equal(n->nr_pods_by_class[0], 2);

	assert_int_equal(kerf_cluster_unbind(&c, &f, bf, NULL), 0);
	assert_int_equal(kerf_cluster_unbind(&c, &w, bw, NULL), 0);
	assert_int_equal(n->nr_gpus_idle, 3);
	assert_int_equal(kerf_cluster_unbind(&c, &f, bf, NULL), 0);
	/* Back to the start except for the stamp. */
	assert_int_not_equal(n->stamp, orig.stamp);
	orig.stamp = n->stamp;
	assert_memory_equal(n, &orig, sizeof(orig));
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	kerf_cluster_release(&c);
}

static void test_bind_cpu_only_and_exact_fill(void **state)
{
	struct kerf_cluster c;
	struct kerf_pod p = { .cpu_milli = 32000, .mem_mib = 131072 };
	struct kerf_pod f = fraction(1000, 0);

	(void)state;
	setup_cluster(&c);
	assert_int_equal(kerf_cluster_bind(&c, &p, (struct kerf_binding){ 0, 0, 0 },
					   NULL), 0);
	assert_int_equal(c.nodes[0].cpu_free_milli, 0);
	assert_int_equal(c.nodes[0].mem_free_mib, 0);
	assert_int_equal(c.nodes[0].nr_pods, 1);
	for (int k = 0; k < KERF_POD_CLASSES; k++)
		assert_int_equal(c.nodes[0].nr_pods_by_class[k], 0);
	/* Exactly the whole GPU memory and milli. */
	f.gpu_mem_mib = 16384;
	assert_int_equal(kerf_cluster_bind(&c, &f, (struct kerf_binding){ 2, 1, 0 },
					   NULL), 0);
	assert_int_equal(c.nodes[2].gpu_free_milli[0], 0);
	assert_int_equal(c.nodes[2].gpu_mem_free_mib[0], 0);
	assert_int_equal(c.nodes[2].nr_pods_by_class[1], 1);
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	kerf_cluster_release(&c);
}

/* b must be refused with -KERF_ERANGE, msg, and leave c as it was. */
static void expect_refused(struct kerf_cluster *c, const struct kerf_pod *p,
			   struct kerf_binding b, bool unbind, const char *msg)
{
	struct kerf_node before[8];
	uint32_t seq = c->stamp_seq;
	struct kerf_err err = { 0 };
	int rc;

	assert_true(c->nr_nodes <= 8);
	memcpy(before, c->nodes, c->nr_nodes * sizeof(*before));
	if (unbind)
		rc = kerf_cluster_unbind(c, p, b, &err);
	else
		rc = kerf_cluster_bind(c, p, b, &err);
	assert_int_equal(rc, -KERF_ERANGE);
	assert_string_equal(err.msg, msg);
	assert_memory_equal(before, c->nodes, c->nr_nodes * sizeof(*before));
	assert_int_equal(c->stamp_seq, seq);
}

static void test_bind_refusals(void **state)
{
	struct kerf_cluster c;
	struct kerf_pod p;

	(void)state;
	setup_cluster(&c);
	/* Some state first, so that "unchanged" is not trivially zero. */
	p = fraction(600, 8000);
	assert_int_equal(kerf_cluster_bind(&c, &p, (struct kerf_binding){ 2, 1, 0 },
					   NULL), 0);

	p = whole(1);
	expect_refused(&c, &p, (struct kerf_binding){ 4, 1, 0 }, false,
		       "binding: no node in slot 4");
	expect_refused(&c, &p, (struct kerf_binding){ 1, 3, 0 }, false,
		       "binding on 'a100x4': 2 GPUs chosen for a pod asking 1");
	expect_refused(&c, &p, (struct kerf_binding){ 1, 0, 0 }, false,
		       "binding on 'a100x4': 0 GPUs chosen for a pod asking 1");
	expect_refused(&c, &p, (struct kerf_binding){ 1, 1u << 4, 0 }, false,
		       "binding on 'a100x4': GPU index beyond 4 GPUs");
	expect_refused(&c, &p, (struct kerf_binding){ 0, 1, 0 }, false,
		       "binding on 'cpu': GPU index beyond 0 GPUs");
	p.model_mask = 1u << 1;
	expect_refused(&c, &p, (struct kerf_binding){ 1, 1, 0 }, false,
		       "binding on 'a100x4': GPU model A100 not allowed");
	/* A whole GPU on the shared one. */
	expect_refused(&c, &p, (struct kerf_binding){ 2, 1, 0 }, false,
		       "binding on 't4x2': GPU 0 overcommitted");
	p = fraction(401, 0);
	expect_refused(&c, &p, (struct kerf_binding){ 2, 1, 0 }, false,
		       "binding on 't4x2': GPU 0 overcommitted");
	p = fraction(400, 8385); /* 8384 MiB left on GPU 0 */
	expect_refused(&c, &p, (struct kerf_binding){ 2, 1, 0 }, false,
		       "binding on 't4x2': GPU 0 overcommitted");
	p = fraction(100, 1);    /* memory on a GPU that does not track it */
	expect_refused(&c, &p, (struct kerf_binding){ 3, 1, 0 }, false,
		       "binding on 'xx2': GPU 0 overcommitted");
	p = (struct kerf_pod){ .cpu_milli = 32001 };
	expect_refused(&c, &p, (struct kerf_binding){ 0, 0, 0 }, false,
		       "binding on 'cpu': cpu or memory overcommitted");
	p = (struct kerf_pod){ .mem_mib = 131073 };
	expect_refused(&c, &p, (struct kerf_binding){ 0, 0, 0 }, false,
		       "binding on 'cpu': cpu or memory overcommitted");
	p = (struct kerf_pod){ .cpu_milli = 1 };
	expect_refused(&c, &p, (struct kerf_binding){ 0, 1, 0 }, false,
		       "binding on 'cpu': 1 GPUs chosen for a pod asking 0");
	/* Just fits: 400 milli and 8384 MiB. */
	p = fraction(400, 8384);
	assert_int_equal(kerf_cluster_bind(&c, &p, (struct kerf_binding){ 2, 1, 0 },
					   NULL), 0);
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	kerf_cluster_release(&c);
}

static void test_unbind_refusals(void **state)
{
	struct kerf_cluster c;
	struct kerf_pod f = fraction(600, 0), w = whole(1), cpu;

	(void)state;
	setup_cluster(&c);
	expect_refused(&c, &f, (struct kerf_binding){ 1, 1, 0 }, true,
		       "unbind on 'a100x4': pod was not bound here");
	assert_int_equal(kerf_cluster_bind(&c, &f, (struct kerf_binding){ 1, 1, 0 },
					   NULL), 0);
	/* More cpu or memory back than the node has in use. */
	cpu = (struct kerf_pod){ .cpu_milli = 1001 };
	expect_refused(&c, &cpu, (struct kerf_binding){ 1, 0, 0 }, true,
		       "unbind on 'a100x4': pod was not bound here");
	cpu = (struct kerf_pod){ .mem_mib = 2049 };
	expect_refused(&c, &cpu, (struct kerf_binding){ 1, 0, 0 }, true,
		       "unbind on 'a100x4': pod was not bound here");
	/* The GPU holds 600: giving back a whole GPU would pass 1000. */
	w.cpu_milli = 0;
	w.mem_mib = 0;
	expect_refused(&c, &w, (struct kerf_binding){ 1, 1, 0 }, true,
		       "unbind on 'a100x4': GPU 0 was not held");
	/* GPU 1 was never used. */
	expect_refused(&c, &f, (struct kerf_binding){ 1, 2, 0 }, true,
		       "unbind on 'a100x4': GPU 1 was not held");
	/* GPU memory that was never taken cannot come back. */
	{
		struct kerf_pod more = f;

		more.gpu_mem_mib = 4096;
		expect_refused(&c, &more, (struct kerf_binding){ 1, 1, 0 }, true,
			       "unbind on 'a100x4': GPU 0 was not held");
	}
	expect_refused(&c, &w, (struct kerf_binding){ 9, 1, 0 }, true,
		       "binding: no node in slot 9");
	expect_refused(&c, &f, (struct kerf_binding){ 1, 0, 0 }, true,
		       "binding on 'a100x4': 0 GPUs chosen for a pod asking 1");
	/* The real pod comes back fine. */
	assert_int_equal(kerf_cluster_unbind(&c, &f, (struct kerf_binding){ 1, 1, 0 },
					     NULL), 0);
	assert_int_equal(c.nodes[1].gpu_free_milli[0], 1000);
	assert_int_equal(c.nodes[1].nr_pods, 0);
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	kerf_cluster_release(&c);
}

static void test_unbind_class_not_bound(void **state)
{
	struct kerf_cluster c;
	struct kerf_pod two = whole(2), one = whole(1);

	(void)state;
	setup_cluster(&c);
	/* One 2-GPU pod; giving back two 1-GPU pods is not the same class. */
	assert_int_equal(kerf_cluster_bind(&c, &two, (struct kerf_binding){ 1, 3, 0 },
					   NULL), 0);
	expect_refused(&c, &one, (struct kerf_binding){ 1, 1, 0 }, true,
		       "unbind on 'a100x4': no pod of this class bound");
	kerf_cluster_release(&c);
}

static void test_stamps(void **state)
{
	struct kerf_cluster c;
	struct kerf_pod f = fraction(100, 0);
	uint32_t seen[64];
	int nr_seen = 0;

	(void)state;
	setup_cluster(&c);
	for (size_t i = 0; i < c.nr_nodes; i++)
		seen[nr_seen++] = c.nodes[i].stamp;
	for (int step = 0; step < 20; step++) {
		int j = step < 10 ? step : 19 - step; /* unbind in reverse */
		struct kerf_binding b = { 1 + (uint32_t)(j % 3),
					  (uint16_t)(1u << (j % 2)), 0 };
		uint32_t others[4];
		int rc;

		for (size_t i = 0; i < c.nr_nodes; i++)
			others[i] = c.nodes[i].stamp;
		if (step < 10)
			rc = kerf_cluster_bind(&c, &f, b, NULL);
		else
			rc = kerf_cluster_unbind(&c, &f, b, NULL);
		assert_int_equal(rc, 0);
		/* The changed node has a stamp never seen before... */
		for (int k = 0; k < nr_seen; k++)
			assert_int_not_equal(c.nodes[b.node].stamp, seen[k]);
		assert_int_equal(c.nodes[b.node].stamp, c.stamp_seq);
		seen[nr_seen++] = c.nodes[b.node].stamp;
		/* ...and the others kept theirs. */
		for (size_t i = 0; i < c.nr_nodes; i++)
			if (i != b.node)
				assert_int_equal(c.nodes[i].stamp, others[i]);
	}
	kerf_cluster_touch_all(&c);
	for (size_t i = 0; i < c.nr_nodes; i++) {
		for (int k = 0; k < nr_seen; k++)
			assert_int_not_equal(c.nodes[i].stamp, seen[k]);
		if (i > 0)
			assert_int_not_equal(c.nodes[i].stamp,
					     c.nodes[i - 1].stamp);
	}
	kerf_cluster_release(&c);
}

/* Corrupt one field of node 1 and expect check to name the problem. */
static void expect_check_fails(void (*corrupt)(struct kerf_node *n),
			       const char *msg)
{
	struct kerf_cluster c;
	struct kerf_err err = { 0 };
	struct kerf_pod f = fraction(250, 1000);

	setup_cluster(&c);
	assert_int_equal(kerf_cluster_bind(&c, &f, (struct kerf_binding){ 1, 1, 0 },
					   NULL), 0);
	assert_int_equal(kerf_cluster_check(&c, &err), 0);
	corrupt(&c.nodes[1]);
	assert_int_equal(kerf_cluster_check(&c, &err), -KERF_ERANGE);
	assert_string_equal(err.msg, msg);
	kerf_cluster_release(&c);
}

static void corrupt_sum(struct kerf_node *n)
{
	n->gpu_free_milli_sum += 1;
}

static void corrupt_idle(struct kerf_node *n)
{
	n->nr_gpus_idle = 4;
}

static void corrupt_gpu_milli(struct kerf_node *n)
{
	n->gpu_free_milli[2] = 1001;
}

static void corrupt_gpu_negative(struct kerf_node *n)
{
	n->gpu_free_milli[3] = -1;
}

static void corrupt_cpu(struct kerf_node *n)
{
	n->cpu_free_milli = n->cpu_milli + 1;
}

static void corrupt_mem(struct kerf_node *n)
{
	n->mem_free_mib = -1;
}

static void corrupt_gpu_mem(struct kerf_node *n)
{
	n->gpu_mem_free_mib[0] = 40961;
}

static void corrupt_model(struct kerf_node *n)
{
	n->model = 3;
}

static void test_check_detects_corruption(void **state)
{
	(void)state;
	expect_check_fails(corrupt_sum,
			   "node 'a100x4': GPU free counters disagree with GPUs");
	expect_check_fails(corrupt_idle,
			   "node 'a100x4': GPU free counters disagree with GPUs");
	expect_check_fails(corrupt_gpu_milli,
			   "node 'a100x4' GPU 2: free 1001 milli outside 0..1000");
	expect_check_fails(corrupt_gpu_negative,
			   "node 'a100x4' GPU 3: free -1 milli outside 0..1000");
	expect_check_fails(corrupt_cpu,
			   "node 'a100x4': cpu free 32001 outside 0..32000");
	expect_check_fails(corrupt_mem,
			   "node 'a100x4': memory free -1 outside 0..131072");
	expect_check_fails(corrupt_gpu_mem,
			   "node 'a100x4' GPU 0: memory free outside capacity");
	expect_check_fails(corrupt_model,
			   "node 'a100x4': unknown GPU model");
}

static void test_copy_is_deep(void **state)
{
	struct kerf_cluster src, dst;
	struct kerf_pod f = fraction(500, 0);
	struct kerf_node saved[4];

	(void)state;
	setup_cluster(&src);
	assert_int_equal(kerf_cluster_bind(&src, &f, (struct kerf_binding){ 2, 2, 0 },
					   NULL), 0);
	assert_int_equal(kerf_cluster_copy(&dst, &src), 0);
	assert_int_equal(dst.nr_nodes, 4);
	assert_int_equal(dst.nr_models, 3);
	assert_int_equal(dst.stamp_seq, src.stamp_seq);
	assert_memory_equal(dst.models, src.models, sizeof(src.models));
	for (size_t i = 0; i < 4; i++) {
		struct kerf_node a = src.nodes[i], b = dst.nodes[i];

		assert_ptr_not_equal(a.name, b.name);
		assert_string_equal(a.name, b.name);
		a.name = b.name = NULL;
		assert_memory_equal(&a, &b, sizeof(a));
	}
	assert_ptr_not_equal(dst.nodes, src.nodes);
	memcpy(saved, dst.nodes, sizeof(saved));
	/* Changing or freeing the source leaves the copy alone. */
	assert_int_equal(kerf_cluster_bind(&src, &f, (struct kerf_binding){ 2, 1, 0 },
					   NULL), 0);
	kerf_cluster_release(&src);
	assert_memory_equal(saved, dst.nodes, sizeof(saved));
	assert_string_equal(dst.nodes[1].name, "a100x4");
	assert_int_equal(dst.nodes[2].gpu_free_milli[1], 500);
	assert_int_equal(dst.nodes[2].gpu_free_milli[0], 1000);
	/* The copy can grow on its own. */
	assert_int_equal(kerf_cluster_add_node(&dst, "new", 1, 1, 1, 1, NULL), 4);
	assert_int_equal(kerf_cluster_check(&dst, NULL), 0);
	kerf_cluster_release(&dst);
}

static void test_copy_empty(void **state)
{
	struct kerf_cluster src, dst;

	(void)state;
	setup_models(&src);
	assert_int_equal(kerf_cluster_copy(&dst, &src), 0);
	assert_int_equal(dst.nr_nodes, 0);
	assert_null(dst.nodes);
	assert_int_equal(dst.nr_models, 3);
	assert_string_equal(dst.models[2].name, "X");
	kerf_cluster_release(&dst);
	kerf_cluster_release(&src);
}

/* A fraction of a tenant with an isolation level and a sharing mode. */
static struct kerf_pod frac_of(uint32_t tenant, enum kerf_isolation iso,
			       enum kerf_gpu_share share)
{
	struct kerf_pod p = fraction(250, 0);

	p.tenant = tenant;
	p.isolation = (uint8_t)iso;
	p.share = (uint8_t)share;
	return p;
}

/* Bind p on GPU 0 of the T4 node (two GPUs). */
static int bind0(struct kerf_cluster *c, const struct kerf_pod *p)
{
	return kerf_cluster_bind(c, p, (struct kerf_binding){ .node = 2, .gpus = 1 },
				 NULL);
}

static void test_sharing_modes(void **state)
{
	struct kerf_cluster c;
	struct kerf_pod def = frac_of(1, KERF_ISOLATION_SHARED, KERF_SHARE_DEFAULT);
	struct kerf_pod mps = frac_of(1, KERF_ISOLATION_SHARED, KERF_SHARE_MPS);
	struct kerf_pod ts = frac_of(2, KERF_ISOLATION_SHARED, KERF_SHARE_TIMESLICE);

	(void)state;
	setup_cluster(&c);
	assert_int_equal(bind0(&c, &mps), 0);
	/* the GPU is in MPS mode now: only MPS fractions join */
	assert_false(kerf_gpu_fits(&c.nodes[2], 0, &def));
	assert_false(kerf_gpu_fits(&c.nodes[2], 0, &ts));
	assert_true(kerf_gpu_fits(&c.nodes[2], 1, &ts));
	assert_true(kerf_gpu_fits(&c.nodes[2], 0, &mps));
	assert_int_equal(bind0(&c, &ts), -KERF_ERANGE);
	/* whole GPUs do not care; a full GPU does */
	assert_int_equal(c.nodes[2].gpu_share[0], KERF_SHARE_MPS);
	assert_int_equal(c.nodes[2].gpu_nr_fractions[0], 1);
	/* leaving resets the mode: the GPU may change when no work runs */
	assert_int_equal(kerf_cluster_unbind(&c, &mps, (struct kerf_binding){ .node = 2, .gpus = 1 },
					     NULL), 0);
	assert_int_equal(c.nodes[2].gpu_nr_fractions[0], 0);
	assert_int_equal(c.nodes[2].gpu_share[0], KERF_SHARE_DEFAULT);
	assert_int_equal(bind0(&c, &ts), 0);
	assert_int_equal(c.nodes[2].gpu_share[0], KERF_SHARE_TIMESLICE);
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	kerf_cluster_release(&c);
}

static void test_sharing_isolation(void **state)
{
	struct kerf_cluster c;
	struct kerf_pod a_shared = frac_of(1, KERF_ISOLATION_SHARED, KERF_SHARE_MPS);
	struct kerf_pod b_shared = frac_of(2, KERF_ISOLATION_SHARED, KERF_SHARE_MPS);
	struct kerf_pod a_tenant = frac_of(1, KERF_ISOLATION_TENANT, KERF_SHARE_MPS);
	struct kerf_pod b_tenant = frac_of(2, KERF_ISOLATION_TENANT, KERF_SHARE_MPS);
	struct kerf_pod a_hw = frac_of(1, KERF_ISOLATION_HARDWARE, KERF_SHARE_MPS);
	struct kerf_binding b0 = { .node = 2, .gpus = 1 };

	(void)state;
	setup_cluster(&c);
	/* two shared tenants share */
	assert_int_equal(bind0(&c, &a_shared), 0);
	assert_true(kerf_gpu_fits(&c.nodes[2], 0, &b_shared));
	/* a tenant-level pod joins only its own tenant's GPU */
	assert_true(kerf_gpu_fits(&c.nodes[2], 0, &a_tenant));
	assert_false(kerf_gpu_fits(&c.nodes[2], 0, &b_tenant));
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[2], &b_tenant), KERF_MISFIT_NONE);
	assert_int_equal(bind0(&c, &a_tenant), 0);
	/* now the GPU holds a tenant-level pod of tenant 1: tenant 2 may not join */
	assert_false(kerf_gpu_fits(&c.nodes[2], 0, &b_shared));
	assert_int_equal(bind0(&c, &b_shared), -KERF_ERANGE);
	/* hardware: never joins, and nobody joins it */
	assert_false(kerf_gpu_fits(&c.nodes[2], 0, &a_hw));
	assert_true(kerf_gpu_fits(&c.nodes[2], 1, &a_hw));
	assert_int_equal(kerf_cluster_bind(&c, &a_hw, (struct kerf_binding){ .node = 2, .gpus = 2 },
					   NULL), 0);
	assert_false(kerf_gpu_fits(&c.nodes[2], 1, &a_shared));
	/* no GPU of the node may take tenant 2's pod: the reason says why */
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[2], &b_shared), KERF_MISFIT_SHARING);
	assert_has(kerf_misfit_text(KERF_MISFIT_SHARING), "isolation");
	/* mixed tenants stay mixed until the GPU empties (never relaxed) */
	assert_int_equal(kerf_cluster_unbind(&c, &a_tenant, b0, NULL), 0);
	assert_int_equal(kerf_cluster_unbind(&c, &a_shared, b0, NULL), 0);
	assert_int_equal(c.nodes[2].gpu_nr_fractions[0], 0);
	assert_true(kerf_gpu_fits(&c.nodes[2], 0, &b_tenant));
	/* a fraction unbound from a GPU without fractions is refused */
	assert_int_equal(kerf_cluster_unbind(&c, &a_shared, b0, NULL), -KERF_ERANGE);
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	/* the check sees a sharing state without fractions */
	c.nodes[2].gpu_tenant[0] = 7;
	assert_int_equal(kerf_cluster_check(&c, NULL), -KERF_ERANGE);
	kerf_cluster_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_models),
		cmocka_unit_test(test_model_limit),
		cmocka_unit_test(test_add_node),
		cmocka_unit_test(test_add_node_many),
		cmocka_unit_test(test_add_node_errors),
		cmocka_unit_test(test_pod_validate),
		cmocka_unit_test(test_pod_class),
		cmocka_unit_test(test_misfit_order),
		cmocka_unit_test(test_misfit_gpu),
		cmocka_unit_test(test_misfit_text),
		cmocka_unit_test(test_sharing_modes),
		cmocka_unit_test(test_sharing_isolation),
		cmocka_unit_test(test_bind_unbind_arithmetic),
		cmocka_unit_test(test_bind_cpu_only_and_exact_fill),
		cmocka_unit_test(test_bind_refusals),
		cmocka_unit_test(test_unbind_refusals),
		cmocka_unit_test(test_unbind_class_not_bound),
		cmocka_unit_test(test_stamps),
		cmocka_unit_test(test_check_detects_corruption),
		cmocka_unit_test(test_copy_is_deep),
		cmocka_unit_test(test_copy_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
