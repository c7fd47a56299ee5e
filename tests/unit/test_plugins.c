/*
 * Unit tests for the score plug-ins, each built with kerf_policy_build and
 * run through kerf_sched_select on small hand-built clusters, with the
 * per-node scores checked against the formula in the plug-in's file header:
 * best-fit (100 - ceil((cpu_rest + 16 gpu_rest) / 2560)), dotprod,
 * gpu-packing and gpu-clustering bands, first-fit, fgd (least increase of
 * fragmentation, and its GPU choice), kerf with a given distribution (same
 * as fgd), kerf weighing typical pods by the idle capacity of the models
 * they may use (a pod that may go anywhere leaves the scarce model to the
 * pods that need it; the weights follow the idle capacity, and only after
 * the next observe), and random (repeatable per seed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/rng.h"
#include "core/framework.h"
#include "core/policy.h"

struct fixture {
	struct kerf_cluster c;
	struct kerf_pod_dist dist;
	struct kerf_dist_entry entry;
	struct kerf_policy pol;
	struct kerf_sched sched;
	bool built;
};

static void start(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	kerf_cluster_init(&f->c);
	assert_int_equal(kerf_cluster_model(&f->c, "g", 16384, NULL), 0);
}

static int add_node(struct fixture *f, int64_t cpu, int nr_gpus)
{
	char name[16];

	snprintf(name, sizeof(name), "n%zu", f->c.nr_nodes);
	return kerf_cluster_add_node(&f->c, name, cpu, 1 << 20,
				     nr_gpus ? 0 : KERF_MODEL_NONE, nr_gpus,
				     NULL);
}

static void bind(struct fixture *f, uint32_t node, uint16_t gpus,
		 int32_t milli)
{
	struct kerf_pod p = { .nr_gpus = (uint8_t)__builtin_popcount(gpus),
			      .gpu_milli = milli };

	assert_int_equal(kerf_cluster_bind(&f->c, &p,
					   (struct kerf_binding){ node, gpus, 0 },
					   NULL), 0);
}

/* A one-entry typical distribution: the request dist_pod, weight 1. */
static void set_dist(struct fixture *f, struct kerf_pod dist_pod)
{
	f->entry = (struct kerf_dist_entry){ .pod = dist_pod, .weight = 1 };
	f->dist = (struct kerf_pod_dist){ .entries = &f->entry, .nr = 1,
					  .alloc = 1, .total_weight = 1 };
}

static void build(struct fixture *f, const char *name, uint64_t seed,
		  const char *options)
{
	struct kerf_policy_args args = { .cluster = &f->c, .dist = &f->dist,
					 .seed = seed, .options = options };
	struct kerf_err err = { 0 };

	if (kerf_policy_build(&f->pol, name, &args, &err) < 0)
		fail_msg("build %s: %s", name, err.msg);
	kerf_sched_init(&f->sched, &f->pol);
	f->built = true;
}

static void finish(struct fixture *f)
{
	if (f->built) {
		kerf_sched_release(&f->sched);
		kerf_policy_release(&f->pol);
	}
	kerf_cluster_release(&f->c);
}

/* The score plug-in's verdict on node i (and its GPU choice, if any). */
static int32_t score(struct fixture *f, size_t i, const struct kerf_pod *p,
		     uint16_t *gpus)
{
	const struct kerf_policy_slot *s = &f->pol.scorers[0];
	uint16_t unused = 0;

	return s->plugin->score(s->priv, &f->c, &f->c.nodes[i], p,
				gpus ? gpus : &unused);
}

static uint32_t select_node(struct fixture *f, const struct kerf_pod *p,
			    uint16_t *gpus)
{
	struct kerf_binding b = { 999, 0, 0 };
	struct kerf_status st;

	if (kerf_sched_select(&f->sched, &f->c, p, &b, &st) != KERF_FIT)
		fail_msg("no fit: %s", st.reason);
	if (gpus)
		*gpus = b.gpus;
	return b.node;
}

static int32_t best_fit_formula(const struct kerf_node *n,
				const struct kerf_pod *p)
{
	int64_t x = (n->cpu_free_milli - p->cpu_milli) +
		    16 * (n->gpu_free_milli_sum - kerf_pod_gpu_milli_total(p));

	return (int32_t)(100 - (x + 2559) / 2560);
}

static void test_best_fit(void **state)
{
	static const int32_t want[] = { 70, 20, 100, 99, 98 };
	struct fixture f;
	struct kerf_pod p = { .cpu_milli = 4000, .nr_gpus = 1,
			      .gpu_milli = 1000 };
	struct kerf_pod cpu = { .cpu_milli = 1000 };

	(void)state;
	start(&f);
	add_node(&f, 32000, 4);  /* X = 28000 + 16 * 3000 = 76000 */
	add_node(&f, 96000, 8);  /* X = 92000 + 16 * 7000 = 204000 */
	add_node(&f, 4000, 1);   /* X = 0 */
	add_node(&f, 6560, 1);   /* X = 2560 */
	add_node(&f, 6561, 1);   /* X = 2561 */
	build(&f, "best-fit", 0, NULL);
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(score(&f, i, &p, NULL), want[i]);
		assert_int_equal(want[i], best_fit_formula(&f.c.nodes[i], &p));
	}
	assert_int_equal(select_node(&f, &p, NULL), 2);
	/* Free GPUs count for a CPU-only pod too: X = 31000 + 64000. */
	assert_int_equal(score(&f, 0, &cpu, NULL), 62);
	/* The fuller node wins once it is fuller. */
	bind(&f, 0, 0x7, 1000);
	assert_int_equal(score(&f, 0, &p, NULL), 100 - (28000 + 2559) / 2560);
	assert_int_equal(score(&f, 0, &p, NULL), 89);
	finish(&f);
}

static void test_best_fit_formula_many(void **state)
{
	struct fixture f;
	struct kerf_rng rng;

	(void)state;
	start(&f);
	kerf_rng_seed(&rng, 5);
	for (int i = 0; i < 12; i++)
		add_node(&f, 1000 * (int64_t)(1 + kerf_rng_below(&rng, 128)),
			 (int)kerf_rng_below(&rng, 9));
	build(&f, "best-fit", 0, NULL);
	for (int k = 0; k < 500; k++) {
		struct kerf_pod p = { .cpu_milli = (int64_t)kerf_rng_below(&rng, 8000) };

		if (kerf_rng_below(&rng, 2)) {
			p.nr_gpus = 1;
			p.gpu_milli = 1 + (int32_t)kerf_rng_below(&rng, 1000);
		}
		for (size_t i = 0; i < f.c.nr_nodes; i++) {
			const struct kerf_node *n = &f.c.nodes[i];

			if (kerf_node_misfit(&f.c, n, &p) != KERF_MISFIT_NONE)
				continue;
			assert_int_equal(score(&f, i, &p, NULL),
					 best_fit_formula(n, &p));
		}
	}
	finish(&f);
}

static void test_dotprod(void **state)
{
	struct fixture f;
	struct kerf_pod p = { .cpu_milli = 8000, .nr_gpus = 1,
			      .gpu_milli = 1000 };
	struct kerf_pod big = { .cpu_milli = 16000, .nr_gpus = 8,
				.gpu_milli = 1000 };

	(void)state;
	start(&f);
	add_node(&f, 64000, 4);
	add_node(&f, 128000, 8);
	build(&f, "dotprod", 0, NULL);
	/* (64000 * 8000 + 256 * 4000 * 1000) / (2 * 128000^2) = 4.6875% */
	assert_int_equal(score(&f, 0, &p, NULL), 95);
	/* (128000 * 8000 + 256 * 8000 * 1000) / ... = 9.375% */
	assert_int_equal(score(&f, 1, &p, NULL), 90);
	/* (128000 * 16000 + 256 * 8000 * 8000) / ... = 56.25% */
	assert_int_equal(score(&f, 1, &big, NULL), 43);
	assert_int_equal(select_node(&f, &p, NULL), 0);
	finish(&f);
}

static void test_gpu_packing_bands(void **state)
{
	struct fixture f;
	struct kerf_pod f300 = { .cpu_milli = 1, .nr_gpus = 1, .gpu_milli = 300 };
	struct kerf_pod f100 = { .cpu_milli = 1, .nr_gpus = 1, .gpu_milli = 100 };
	struct kerf_pod f950 = { .cpu_milli = 1, .nr_gpus = 1, .gpu_milli = 950 };
	struct kerf_pod w1 = { .cpu_milli = 1, .nr_gpus = 1, .gpu_milli = 1000 };
	struct kerf_pod w3 = { .cpu_milli = 1, .nr_gpus = 3, .gpu_milli = 1000 };
	struct kerf_pod cpu = { .cpu_milli = 1 };
	uint16_t gpus;

	(void)state;
	start(&f);
	add_node(&f, 64000, 4);  /* 0: idle */
	add_node(&f, 64000, 4);  /* 1: GPU 0 has 500 free */
	add_node(&f, 64000, 4);  /* 2: GPU 0 200 free, GPU 1 900 free */
	add_node(&f, 64000, 4);  /* 3: GPU 0 taken whole */
	add_node(&f, 64000, 8);  /* 4: idle, 8 GPUs */
	add_node(&f, 64000, 2);  /* 5: idle, 2 GPUs */
	bind(&f, 1, 0x1, 500);
	bind(&f, 2, 0x1, 800);
	bind(&f, 2, 0x2, 100);
	bind(&f, 3, 0x1, 1000);
	build(&f, "gpu-packing", 0, NULL);
	/* Idle node: max(33 - GPUs, GPUs). */
	assert_int_equal(score(&f, 0, &f300, NULL), 29);
	assert_int_equal(score(&f, 4, &f300, NULL), 25);
	assert_int_equal(score(&f, 5, &w1, NULL), 31);
	/* Shared GPU: 100 - free% / 10 of the GPU it lands on. */
	assert_int_equal(score(&f, 1, &f300, NULL), 95);
	assert_int_equal(score(&f, 2, &f100, NULL), 98);
	assert_int_equal(score(&f, 2, &f300, NULL), 91);
	/* Needs idle GPUs of a used node: 50 - GPUs taken. */
	assert_int_equal(score(&f, 2, &f950, NULL), 49);
	assert_int_equal(score(&f, 1, &w1, NULL), 49);
	assert_int_equal(score(&f, 3, &f300, NULL), 49);
	assert_int_equal(score(&f, 3, &w3, NULL), 47);
	assert_int_equal(score(&f, 1, &w3, NULL), 47);
	/* CPU-only pods: 0 everywhere. */
	for (size_t i = 0; i < f.c.nr_nodes; i++)
		assert_int_equal(score(&f, i, &cpu, NULL), 0);
	assert_int_equal(select_node(&f, &f300, &gpus), 1);
	assert_int_equal(gpus, 0x1);
	assert_int_equal(select_node(&f, &f100, &gpus), 2);
	assert_int_equal(gpus, 0x1);
	/* Whole GPU: a used node (49) before an idle one (<= 31). */
	assert_int_equal(select_node(&f, &w1, &gpus), 1);
	assert_int_equal(gpus, 0x2);
	assert_int_equal(select_node(&f, &cpu, NULL), 0);
	finish(&f);
}

static void test_gpu_clustering_bands(void **state)
{
	struct fixture f;
	struct kerf_pod frac = { .cpu_milli = 1, .nr_gpus = 1, .gpu_milli = 250 };
	struct kerf_pod one = { .cpu_milli = 1, .nr_gpus = 1, .gpu_milli = 1000 };
	struct kerf_pod two = { .cpu_milli = 1, .nr_gpus = 2, .gpu_milli = 1000 };
	struct kerf_pod cpu = { .cpu_milli = 1 };

	(void)state;
	start(&f);
	add_node(&f, 64000, 4);  /* 0: only fractions (500 on GPU 0) */
	add_node(&f, 64000, 4);  /* 1: a fraction and a 1-GPU pod */
	add_node(&f, 64000, 4);  /* 2: no GPU pod */
	add_node(&f, 64000, 4);  /* 3: only a 1-GPU pod */
	add_node(&f, 64000, 8);  /* 4: no GPU pod, 8 GPUs */
	bind(&f, 0, 0x1, 500);
	bind(&f, 1, 0x1, 500);
	bind(&f, 1, 0x2, 1000);
	bind(&f, 3, 0x1, 1000);
	build(&f, "gpu-clustering", 0, NULL);
	/* band + 25 * (8000 - gpu_free) / 8000 */
	assert_int_equal(score(&f, 0, &frac, NULL), 75 + 14);
	assert_int_equal(score(&f, 1, &frac, NULL), 50 + 17);
	assert_int_equal(score(&f, 2, &frac, NULL), 25 + 12);
	assert_int_equal(score(&f, 3, &frac, NULL), 0 + 15);
	assert_int_equal(score(&f, 4, &frac, NULL), 25 + 0);
	assert_int_equal(score(&f, 0, &one, NULL), 0 + 14);
	assert_int_equal(score(&f, 1, &one, NULL), 50 + 17);
	assert_int_equal(score(&f, 2, &one, NULL), 25 + 12);
	assert_int_equal(score(&f, 3, &one, NULL), 75 + 15);
	/* A class nobody holds yet: idle nodes before used ones. */
	assert_int_equal(score(&f, 2, &two, NULL), 25 + 12);
	assert_int_equal(score(&f, 3, &two, NULL), 0 + 15);
	for (size_t i = 0; i < f.c.nr_nodes; i++)
		assert_int_equal(score(&f, i, &cpu, NULL), 0);
	assert_int_equal(select_node(&f, &frac, NULL), 0);
	assert_int_equal(select_node(&f, &one, NULL), 3);
	assert_int_equal(select_node(&f, &two, NULL), 2);
	finish(&f);
}

static void test_first_fit(void **state)
{
	struct fixture f;
	struct kerf_pod p = { .cpu_milli = 8000, .nr_gpus = 1, .gpu_milli = 700 };
	uint16_t gpus;

	(void)state;
	start(&f);
	add_node(&f, 4000, 4);   /* 0: too little cpu */
	add_node(&f, 64000, 2);  /* 1: GPU 0 400 free, GPU 1 800 free */
	add_node(&f, 64000, 8);  /* 2: idle */
	bind(&f, 1, 0x1, 600);
	bind(&f, 1, 0x2, 200);
	build(&f, "first-fit", 0, NULL);
	for (size_t i = 0; i < f.c.nr_nodes; i++)
		assert_int_equal(score(&f, i, &p, NULL), 0);
	assert_int_equal(select_node(&f, &p, &gpus), 1);
	assert_int_equal(gpus, 0x2);
	p.cpu_milli = 1000;
	assert_int_equal(select_node(&f, &p, &gpus), 0);
	assert_int_equal(gpus, 0x1);
	finish(&f);
}

static void test_fgd_prefers_less_fragmentation(void **state)
{
	struct fixture f;
	struct kerf_pod p = { .nr_gpus = 1, .gpu_milli = 500 };
	uint16_t gpus = 0;

	(void)state;
	start(&f);
	/* The workload is all 500-milli fractions. */
	set_dist(&f, p);
	add_node(&f, 64000, 1);  /* 0: 600 free; 100 left would be stranded */
	add_node(&f, 64000, 1);  /* 1: idle; 500 left is still usable */
	add_node(&f, 64000, 2);  /* 2: 600 free and one idle GPU */
	bind(&f, 0, 0x1, 400);
	bind(&f, 2, 0x1, 400);
	build(&f, "fgd", 0, NULL);
	/* F goes 0 -> 100: floor(100 * sigmoid(-0.1)) = 47 */
	assert_int_equal(score(&f, 0, &p, &gpus), 47);
	assert_int_equal(gpus, 0x1);
	/* F stays 0: 50 */
	assert_int_equal(score(&f, 1, &p, &gpus), 50);
	assert_int_equal(gpus, 0x1);
	/* On node 2 the idle GPU is the better choice, unlike best fit. */
	assert_int_equal(score(&f, 2, &p, &gpus), 50);
	assert_int_equal(gpus, 0x2);
	assert_int_equal(select_node(&f, &p, &gpus), 1);
	assert_int_equal(gpus, 0x1);
	finish(&f);
}

static void test_fgd_whole_gpus(void **state)
{
	struct fixture f;
	struct kerf_pod dist_pod = { .nr_gpus = 2, .gpu_milli = 1000 };
	struct kerf_pod one = { .nr_gpus = 1, .gpu_milli = 1000 };
	uint16_t gpus = 0;

	(void)state;
	start(&f);
	/* The workload is all 2-GPU pods. */
	set_dist(&f, dist_pod);
	add_node(&f, 64000, 2);  /* 0: idle pair: taking one strands one */
	add_node(&f, 64000, 3);  /* 1: three idle: one leaves a usable pair */
	build(&f, "fgd", 0, NULL);
	/* 0 -> 1000 stranded: floor(100 * sigmoid(-1)) = 26 */
	assert_int_equal(score(&f, 0, &one, &gpus), 26);
	assert_int_equal(gpus, 0x1);
	/* 3000 with a fit and nothing small, 0 -> 0: 50 */
	assert_int_equal(score(&f, 1, &one, &gpus), 50);
	assert_int_equal(select_node(&f, &one, &gpus), 1);
	assert_int_equal(gpus, 0x1);
	finish(&f);
}

static void test_kerf_with_given_dist_matches_fgd(void **state)
{
	struct fixture a, b;
	struct kerf_rng rng;
	struct kerf_pod dist_pod = { .cpu_milli = 2000, .nr_gpus = 1,
				     .gpu_milli = 300 };

	(void)state;
	start(&a);
	start(&b);
	kerf_rng_seed(&rng, 17);
	for (int i = 0; i < 10; i++) {
		int64_t cpu = 8000 * (int64_t)(1 + kerf_rng_below(&rng, 8));
		int g = 1 + (int)kerf_rng_below(&rng, 8);

		add_node(&a, cpu, g);
		add_node(&b, cpu, g);
		for (int k = 0; k < g; k++) {
			int32_t used = 100 * (int32_t)kerf_rng_below(&rng, 11);

			if (used == 0)
				continue;
			bind(&a, (uint32_t)i, (uint16_t)(1u << k), used);
			bind(&b, (uint32_t)i, (uint16_t)(1u << k), used);
		}
	}
	set_dist(&a, dist_pod);
	set_dist(&b, dist_pod);
	build(&a, "fgd", 0, NULL);
	build(&b, "kerf", 0, "online=0,mem=0,cap=0");
	for (int k = 0; k < 200; k++) {
		struct kerf_pod p = { .cpu_milli = 500 * (int64_t)kerf_rng_below(&rng, 8),
				      .nr_gpus = 1,
				      .gpu_milli = 100 * (1 + (int32_t)kerf_rng_below(&rng, 10)) };

		for (size_t i = 0; i < a.c.nr_nodes; i++) {
			uint16_t ga = 0, gb = 0;

			if (kerf_node_misfit(&a.c, &a.c.nodes[i], &p))
				continue;
			assert_int_equal(score(&a, i, &p, &ga),
					 score(&b, i, &p, &gb));
			assert_int_equal(ga, gb);
		}
	}
	finish(&a);
	finish(&b);
}

/*
 * One T4 node (2 GPUs) and two G2 nodes (8 GPUs each); typical one-GPU pods:
 * 5 may go anywhere, 2 need a T4, 3 need a G2.
 */
static void start_models(struct fixture *f, struct kerf_dist_entry e[3])
{
	int t4, g2;

	memset(f, 0, sizeof(*f));
	kerf_cluster_init(&f->c);
	t4 = kerf_cluster_model(&f->c, "T4", 0, NULL);
	g2 = kerf_cluster_model(&f->c, "G2", 0, NULL);
	assert_true(t4 >= 0 && g2 >= 0);
	assert_int_equal(kerf_cluster_add_node(&f->c, "t4", 64000, 1 << 20, t4,
					       2, NULL), 0);
	assert_int_equal(kerf_cluster_add_node(&f->c, "g2a", 64000, 1 << 20, g2,
					       8, NULL), 1);
	assert_int_equal(kerf_cluster_add_node(&f->c, "g2b", 64000, 1 << 20, g2,
					       8, NULL), 2);
	for (int i = 0; i < 3; i++)
		e[i] = (struct kerf_dist_entry){
			.pod = { .cpu_milli = 1000, .nr_gpus = 1,
				 .gpu_milli = 1000,
				 .model_mask = i == 0 ? 0 : 1u << (i == 1 ? t4 : g2) },
			.weight = i == 0 ? 5 : i == 1 ? 2 : 3,
		};
	f->dist = (struct kerf_pod_dist){ .entries = e, .nr = 3, .alloc = 3,
					  .total_weight = 10 };
}

static void test_kerf_spec_leaves_scarce_model(void **state)
{
	struct kerf_dist_entry e[3];
	struct fixture f;
	struct kerf_pod any = { .cpu_milli = 1000, .nr_gpus = 1, .gpu_milli = 1000 };

	(void)state;
	/*
	 * By arrivals alone (spec=0, as FGD) the G2-only pods, more numerous,
	 * make the T4 node the better place: dF + 10 % dC is 3300 there (the
	 * G2-only pods' idle T4 shrinks) against 2200 on a G2 node, over 10.
	 */
	start_models(&f, e);
	build(&f, "kerf", 0, "online=0,spec=0");
	assert_int_equal(score(&f, 0, &any, NULL), 58);
	assert_int_equal(score(&f, 1, &any, NULL), 55);
	assert_int_equal(select_node(&f, &any, NULL), 0);
	finish(&f);
	/*
	 * Weighed by their models' idle capacity, the T4-only pods, whose T4s
	 * will run out (F / f = 9), weigh 18 and the G2-only pods still 3:
	 * 3300 against 19800 over 26, and the pod that may go anywhere leaves
	 * the T4s alone.
	 */
	start_models(&f, e);
	build(&f, "kerf", 0, "online=0");
	assert_int_equal(score(&f, 0, &any, NULL), 53);
	assert_int_equal(score(&f, 1, &any, NULL), 68);
	assert_int_equal(select_node(&f, &any, NULL), 1);
	finish(&f);
}

static void test_kerf_spec_follows_idle(void **state)
{
	struct kerf_dist_entry e[3];
	struct fixture f;
	struct kerf_pod any = { .cpu_milli = 1000, .nr_gpus = 1, .gpu_milli = 1000 };
	struct kerf_pod eight = { .cpu_milli = 1000, .nr_gpus = 8,
				  .gpu_milli = 1000 };
	struct kerf_pod four = { .cpu_milli = 1000, .nr_gpus = 4,
				 .gpu_milli = 1000 };
	struct kerf_err err = { 0 };

	(void)state;
	start_models(&f, e);
	build(&f, "kerf", 0, "online=0");
	assert_int_equal(score(&f, 0, &any, NULL), 53);
	/*
	 * 12 of the 16 G2 GPUs taken: idle is 2000 T4 + 4000 G2, so the
	 * T4-only pods weigh 2 * 3 * 0.6 -> 4 and the G2-only pods still 3
	 * (1.5 * 0.45 < 1).  The new weights wait for the next arrival.
	 */
	assert_int_equal(kerf_sched_reserve(&f.sched, &f.c, &eight,
					    (struct kerf_binding){ 1, 0xff, 0 },
					    &err), 0);
	assert_int_equal(kerf_sched_reserve(&f.sched, &f.c, &four,
					    (struct kerf_binding){ 2, 0x0f, 0 },
					    &err), 0);
	assert_int_equal(score(&f, 0, &any, NULL), 53);
	kerf_sched_observe(&f.sched, &any);
	/* (3000 + 300) / 12 milli-GPU less fragment: floor(100 sigmoid(0.275)) */
	assert_int_equal(score(&f, 0, &any, NULL), 56);
	finish(&f);
}

/*
 * Weights taken while a bind waits for the next arrival are dropped when a
 * later take finds the idle capacity as the weights in use saw it.
 */
static void test_kerf_spec_pending_dropped(void **state)
{
	struct kerf_dist_entry e[3];
	struct fixture f;
	struct kerf_pod any = { .cpu_milli = 1000, .nr_gpus = 1, .gpu_milli = 1000 };
	struct kerf_pod eight = { .cpu_milli = 1000, .nr_gpus = 8,
				  .gpu_milli = 1000 };
	struct kerf_binding b = { 1, 0xff, 0 };
	struct kerf_err err = { 0 };

	(void)state;
	start_models(&f, e);
	build(&f, "kerf", 0, "online=0");
	assert_int_equal(kerf_sched_reserve(&f.sched, &f.c, &eight, b, &err), 0);
	assert_int_equal(kerf_sched_unreserve(&f.sched, &f.c, &eight, b, &err), 0);
	kerf_sched_observe(&f.sched, &any);
	assert_int_equal(score(&f, 0, &any, NULL), 53);
	finish(&f);
}

/* The weights and what waits survive save and load, as for a restart. */
static void test_kerf_spec_saved(void **state)
{
	struct kerf_dist_entry ea[3], eb[3];
	struct fixture a, b;
	struct kerf_pod any = { .cpu_milli = 1000, .nr_gpus = 1, .gpu_milli = 1000 };
	struct kerf_pod eight = { .cpu_milli = 1000, .nr_gpus = 8,
				  .gpu_milli = 1000 };
	struct kerf_err err = { 0 };
	int64_t *words = NULL;
	size_t nr = 0;

	(void)state;
	start_models(&a, ea);
	start_models(&b, eb);
	build(&a, "kerf", 0, "online=0");
	/* a restarted controller sees the bound pods, not the binds */
	assert_int_equal(kerf_sched_reserve(&a.sched, &a.c, &eight,
					    (struct kerf_binding){ 1, 0xff, 0 },
					    &err), 0);
	bind(&b, 1, 0xff, 1000);
	build(&b, "kerf", 0, "online=0");
	assert_int_equal(kerf_sched_save(&a.sched, &words, &nr), 0);
	assert_true(nr > 0);
	assert_int_equal(kerf_sched_load(&b.sched, words, nr, &err), 0);
	/* the weights in use, then those that waited for this arrival */
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(score(&a, i, &any, NULL), score(&b, i, &any, NULL));
	assert_int_equal(score(&b, 0, &any, NULL), 53);
	kerf_sched_observe(&a.sched, &any);
	kerf_sched_observe(&b.sched, &any);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(score(&a, i, &any, NULL), score(&b, i, &any, NULL));
	/* T4-only 2 * 5, G2-only 3: (3000 + 300) / 18 */
	assert_int_equal(score(&b, 0, &any, NULL), 54);
	/* a damaged idle capacity is refused, changing nothing */
	words[2 + 3] = -1;
	assert_int_equal(kerf_sched_load(&b.sched, words, nr, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "out of range"));
	free(words);
	finish(&a);
	finish(&b);
}

/* Nodes picked for 60 CPU-only selects on 10 equal nodes. */
static void random_picks(uint64_t seed, uint32_t *picks)
{
	struct fixture f;
	struct kerf_pod p = { .cpu_milli = 1 };

	start(&f);
	for (int i = 0; i < 10; i++)
		add_node(&f, 64000, 0);
	build(&f, "random", seed, NULL);
	assert_false(f.sched.cacheable);
	for (int k = 0; k < 60; k++)
		picks[k] = select_node(&f, &p, NULL);
	finish(&f);
}

static void test_random_repeatable_per_seed(void **state)
{
	uint32_t a[60], b[60], c[60];
	int seen[10] = { 0 }, distinct = 0;

	(void)state;
	random_picks(42, a);
	random_picks(42, b);
	random_picks(43, c);
	assert_memory_equal(a, b, sizeof(a));
	assert_memory_not_equal(a, c, sizeof(a));
	for (int k = 0; k < 60; k++) {
		assert_true(a[k] < 10);
		seen[a[k]] = 1;
	}
	for (int i = 0; i < 10; i++)
		distinct += seen[i];
	assert_true(distinct >= 7);
}

static void test_random_fraction_gpu(void **state)
{
	struct fixture f;
	struct kerf_pod p = { .cpu_milli = 1, .nr_gpus = 1, .gpu_milli = 500 };
	int seen[4] = { 0 };

	(void)state;
	start(&f);
	add_node(&f, 64000, 4);
	bind(&f, 0, 0x4, 600); /* GPU 2 cannot take 500 */
	build(&f, "random", 9, NULL);
	for (int k = 0; k < 200; k++) {
		uint16_t gpus;

		assert_int_equal(select_node(&f, &p, &gpus), 0);
		assert_int_equal(__builtin_popcount(gpus), 1);
		seen[__builtin_ctz(gpus)]++;
	}
	assert_int_equal(seen[2], 0);
	assert_true(seen[0] > 30 && seen[1] > 30 && seen[3] > 30);
	finish(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_best_fit),
		cmocka_unit_test(test_best_fit_formula_many),
		cmocka_unit_test(test_dotprod),
		cmocka_unit_test(test_gpu_packing_bands),
		cmocka_unit_test(test_gpu_clustering_bands),
		cmocka_unit_test(test_first_fit),
		cmocka_unit_test(test_fgd_prefers_less_fragmentation),
		cmocka_unit_test(test_fgd_whole_gpus),
		cmocka_unit_test(test_kerf_with_given_dist_matches_fgd),
		cmocka_unit_test(test_kerf_spec_leaves_scarce_model),
		cmocka_unit_test(test_kerf_spec_follows_idle),
		cmocka_unit_test(test_kerf_spec_pending_dropped),
		cmocka_unit_test(test_kerf_spec_saved),
		cmocka_unit_test(test_random_repeatable_per_seed),
		cmocka_unit_test(test_random_fraction_gpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
