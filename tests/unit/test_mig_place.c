/*
 * test_mig_place: MIG in the scheduling core (core/mig/place.h and the
 * MIG paths of core/model.c and core/framework.c).
 *
 * Chosen cases: a GPU changes mode only when idle and only on a model
 * with MIG; a GPU in MIG mode is invisible to whole-GPU pods and
 * fractions and a MIG pod fits nothing else; placement order (best fit,
 * reuse of a free instance); bind refusals.  Then a seeded property test:
 * random MIG and whole-GPU pods placed through the scheduler and removed
 * at random on a cluster with GPUs in and out of MIG mode; after every
 * step the cluster check passes (legal layouts, counters), every pod's
 * instance is still in use where it was bound (no instance in use is ever
 * touched), and a pod refused had nowhere to go by an oracle that tries
 * every start on every GPU with the layout checker.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/rng.h"
#include "core/framework.h"
#include "core/mig/place.h"
#include "core/mig/planner.h"
#include "core/policy.h"

static struct kerf_pod mig_pod(unsigned slices, int32_t mem_mib)
{
	struct kerf_pod p = { .cpu_milli = 1000, .mem_mib = 1024, .nr_gpus = 1,
			      .gpu_milli = (int32_t)(slices * 1000 / 7),
			      .gpu_mem_mib = mem_mib, .mig_slices = (uint8_t)slices };
	return p;
}

/* One node "n" of 8 H100-80GB with the GPUs of mask in MIG mode. */
static void h100_node(struct kerf_cluster *c, uint16_t mask)
{
	int m;

	kerf_cluster_init(c);
	m = kerf_cluster_model(c, "H100-80GB", 81920, NULL);
	assert_int_equal(m, 0);
	assert_non_null(c->models[m].mig);
	assert_int_equal(kerf_cluster_add_node(c, "n", 192000, 1 << 20, m, 8, NULL), 0);
	assert_int_equal(kerf_cluster_set_mig(c, 0, mask, NULL), 0);
	assert_int_equal(kerf_cluster_check(c, NULL), 0);
}

static void test_mode_changes(void **state)
{
	struct kerf_cluster c;
	struct kerf_err err = { 0 };
	struct kerf_pod whole = { .cpu_milli = 1000, .mem_mib = 1024, .nr_gpus = 1,
				  .gpu_milli = 1000 };
	struct kerf_pod p = mig_pod(1, 0);
	int l4;

	(void)state;
	h100_node(&c, 0);
	/* a whole GPU on GPU 0: it cannot enter MIG mode, GPU 1 can */
	assert_int_equal(kerf_cluster_bind(&c, &whole, (struct kerf_binding){ 0, 1, 0 }, NULL), 0);
	err = (struct kerf_err){ 0 };
	assert_int_equal(kerf_cluster_set_mig(&c, 0, 0x3, &err), -KERF_EBUSY);
	assert_string_equal(err.msg, "node 'n' GPU 0: work runs on it, its MIG mode cannot change");
	assert_int_equal(c.nodes[0].mig_gpus, 0);
	assert_int_equal(kerf_cluster_set_mig(&c, 0, 0x2, NULL), 0);
	assert_int_equal(c.nodes[0].nr_gpus_idle, 6);
	assert_int_equal(c.nodes[0].gpu_free_milli[1], 0);
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	/* an instance in use pins GPU 1 in MIG mode */
	assert_int_equal(kerf_cluster_bind(&c, &p, (struct kerf_binding){ 0, 2, 0 }, NULL), 0);
	err = (struct kerf_err){ 0 };
	assert_int_equal(kerf_cluster_set_mig(&c, 0, 0, &err), -KERF_EBUSY);
	assert_string_equal(err.msg, "node 'n' GPU 1: work runs on it, its MIG mode cannot change");
	assert_int_equal(kerf_cluster_unbind(&c, &p, (struct kerf_binding){ 0, 2, 0 }, NULL), 0);
	/* free instances go with the mode */
	assert_int_equal(c.nodes[0].mig->gpu[1].nr, 1);
	assert_int_equal(kerf_cluster_set_mig(&c, 0, 0, NULL), 0);
	assert_int_equal(c.nodes[0].nr_gpus_idle, 7);
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	/* beyond the GPUs, and a model without MIG */
	err = (struct kerf_err){ 0 };
	assert_int_equal(kerf_cluster_set_mig(&c, 0, 0x100, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "node 'n': MIG mode asked for a GPU beyond its 8");
	l4 = kerf_cluster_model(&c, "L4", 24576, NULL);
	assert_int_equal(kerf_cluster_add_node(&c, "l", 32000, 1 << 16, l4, 2, NULL), 1);
	err = (struct kerf_err){ 0 };
	assert_int_equal(kerf_cluster_set_mig(&c, 1, 0x1, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "node 'l': GPU model 'L4' has no MIG profiles");
	kerf_cluster_release(&c);
}

static void test_modes_do_not_mix(void **state)
{
	struct kerf_cluster c;
	struct kerf_err err = { 0 };
	struct kerf_pod whole = { .cpu_milli = 1000, .mem_mib = 1024, .nr_gpus = 8,
				  .gpu_milli = 1000 };
	struct kerf_pod frac = { .cpu_milli = 1000, .mem_mib = 1024, .nr_gpus = 1,
				 .gpu_milli = 300 };
	struct kerf_pod p = mig_pod(3, 0);

	(void)state;
	h100_node(&c, 0x1);
	/* 8 whole GPUs no longer fit: one is in MIG mode */
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[0], &whole), KERF_MISFIT_GPU);
	whole.nr_gpus = 7;
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[0], &whole), KERF_MISFIT_NONE);
	/* a fraction may not go on the MIG GPU, a MIG pod only there */
	err = (struct kerf_err){ 0 };
	assert_int_equal(kerf_cluster_bind(&c, &frac, (struct kerf_binding){ 0, 1, 0 }, &err),
			 -KERF_ERANGE);
	err = (struct kerf_err){ 0 };
	assert_int_equal(kerf_cluster_bind(&c, &p, (struct kerf_binding){ 0, 2, 0 }, &err),
			 -KERF_ERANGE);
	assert_string_equal(err.msg, "binding on 'n': GPU 1 is not in MIG mode or has no profile for the pod");
	/* a start the profile cannot take */
	err = (struct kerf_err){ 0 };
	assert_int_equal(kerf_cluster_bind(&c, &p, (struct kerf_binding){ 0, 1, 2 }, &err),
			 -KERF_ERANGE);
	assert_int_equal(kerf_cluster_bind(&c, &p, (struct kerf_binding){ 0, 1, 4 }, NULL), 0);
	/* more than the GPU has: no profile, then no room */
	p = mig_pod(8, 0);
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[0], &p), KERF_MISFIT_MIG_MODE);
	p = mig_pod(7, 0);
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[0], &p), KERF_MISFIT_MIG);
	/* beside a 3g at slice 4: a 4g (the 4+3 layout), a second 3g */
	p = mig_pod(4, 0);
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[0], &p), KERF_MISFIT_NONE);
	p = mig_pod(3, 0);
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[0], &p), KERF_MISFIT_NONE);
	/* unbind of an instance not in use is refused, nothing changes */
	err = (struct kerf_err){ 0 };
	assert_int_equal(kerf_cluster_unbind(&c, &p, (struct kerf_binding){ 0, 1, 0 }, &err),
			 -KERF_ERANGE);
	assert_string_equal(err.msg, "unbind on 'n': MIG GPU 0: no 3g.40gb at slice 0 in use");
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	/* GPU-milli used counts the instance's charge on the MIG GPU */
	assert_int_equal(kerf_cluster_gpu_milli_used(&c), 428);
	kerf_cluster_release(&c);
}

/* Place p through the scheduler; the binding, or node UINT32_MAX. */
static struct kerf_binding place(struct kerf_sched *s, struct kerf_cluster *c,
				 const struct kerf_pod *p)
{
	struct kerf_binding b = { UINT32_MAX, 0, 0 };

	if (kerf_sched_place(s, c, p, &b, NULL) != KERF_FIT)
		b.node = UINT32_MAX;
	return b;
}

static void test_pick_order(void **state)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched s;
	struct kerf_policy_args args = { 0 };
	struct kerf_pod p3 = mig_pod(3, 0), p1 = mig_pod(1, 0), p7 = mig_pod(7, 0);
	struct kerf_binding a, b, d;
	uint32_t created;

	(void)state;
	/* the pick's score packs headroom lost in 16 < x < 1024: it stays under 64 */
	{
		size_t nr;
		const struct kerf_mig_model *all = kerf_mig_models(&nr);
		struct kerf_mig_layout empty = { .nr = 0 };

		for (size_t i = 0; i < nr; i++)
			assert_true(kerf_mig_headroom(&all[i], &empty) < 64);
	}
	h100_node(&c, 0x3);
	args.cluster = &c;
	assert_int_equal(kerf_policy_build(&pol, "kerf", &args, NULL), 0);
	kerf_sched_init(&s, &pol);
	/* two 3g share a GPU: the second fills the cut one, not the empty one */
	a = place(&s, &c, &p3);
	b = place(&s, &c, &p3);
	assert_int_equal(a.gpus, b.gpus);
	assert_int_not_equal(a.mig_start, b.mig_start);
	/* a 1g now goes on the other GPU (no room left on the first) */
	d = place(&s, &c, &p1);
	assert_int_not_equal(d.gpus, a.gpus);
	/* the 7g cannot come: both GPUs hold instances in use */
	assert_int_equal(place(&s, &c, &p7).node, UINT32_MAX);
	/* the 3g leaves; another 3g reuses its free instance: no action */
	assert_int_equal(kerf_sched_unreserve(&s, &c, &p3, a, NULL), 0);
	created = c.nodes[0].mig->nr_created;
	b = place(&s, &c, &p3);
	assert_int_equal(b.gpus, a.gpus);
	assert_int_equal(b.mig_start, a.mig_start);
	assert_int_equal(c.nodes[0].mig->nr_created, created);
	kerf_sched_release(&s);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

/* ---- property test -------------------------------------------------- */

enum { NODES = 3, HELD_MAX = 256 };

struct held {
	struct kerf_pod p;
	struct kerf_binding b;
	int profile;                 /* MIG pods: the profile served */
};

/* Could p go anywhere?  Every start on every MIG GPU, by the checker. */
static bool oracle_fits(const struct kerf_cluster *c, const struct kerf_pod *p)
{
	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct kerf_node *n = &c->nodes[i];
		const struct kerf_mig_model *m = c->models[n->model].mig;
		int pi = kerf_pod_mig_profile(c, n, p);

		if (pi < 0 || n->cpu_free_milli < p->cpu_milli ||
		    n->mem_free_mib < p->mem_mib)
			continue;
		for (int g = 0; g < n->nr_gpus; g++) {
			struct kerf_mig_layout used;

			if (!(n->mig_gpus >> g & 1) || n->mig->free_milli[g] < p->gpu_milli)
				continue;
			kerf_mig_in_use(&n->mig->gpu[g], &used);
			for (unsigned s = 0; s < m->mem_slices; s++) {
				struct kerf_mig_layout t = used;

				t.inst[t.nr++] = (struct kerf_mig_instance){
					.profile = (uint8_t)pi, .start = (uint8_t)s };
				if (kerf_mig_layout_check(m, &t, NULL) == 0)
					return true;
			}
		}
	}
	return false;
}

/* Every held MIG pod's instance is in use where it was bound. */
static void check_held(const struct kerf_cluster *c, const struct held *h, size_t nr)
{
	for (size_t k = 0; k < nr; k++) {
		const struct kerf_node *n = &c->nodes[h[k].b.node];
		int g = __builtin_ctz(h[k].b.gpus);
		bool found = false;

		if (!h[k].p.mig_slices)
			continue;
		for (unsigned i = 0; i < n->mig->gpu[g].nr; i++) {
			const struct kerf_mig_instance *in = &n->mig->gpu[g].inst[i];

			found |= in->in_use && in->profile == h[k].profile &&
				 in->start == h[k].b.mig_start;
		}
		if (!found)
			fail_msg("pod %zu: its instance on GPU %d slice %u was touched", k, g,
				 h[k].b.mig_start);
	}
}

static void run_seed(uint64_t seed, uint64_t *placed, uint64_t *refused)
{
	static const char *const models[] = { "A100-40GB", "H100-80GB", "A30-24GB" };
	struct kerf_rng r;
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched s;
	struct kerf_policy_args args = { 0 };
	struct held h[HELD_MAX];
	size_t nr = 0;
	struct kerf_err err = { 0 };

	kerf_rng_seed(&r, seed);
	kerf_cluster_init(&c);
	for (int i = 0; i < NODES; i++) {
		const char *model = models[kerf_rng_below(&r, 3)];
		int m = kerf_cluster_model(&c, model, 0, NULL);
		int gpus = 1 + (int)kerf_rng_below(&r, 8);
		char name[8];

		snprintf(name, sizeof(name), "n%d", i);
		assert_int_equal(kerf_cluster_add_node(&c, name, 64000, 1 << 20, m, gpus, NULL), i);
		assert_int_equal(kerf_cluster_set_mig(&c, (size_t)i,
			(uint16_t)kerf_rng_below(&r, 1u << gpus), NULL), 0);
	}
	args.cluster = &c;
	assert_int_equal(kerf_policy_build(&pol, kerf_rng_below(&r, 2) ? "kerf" : "best-fit",
					   &args, NULL), 0);
	kerf_sched_init(&s, &pol);
	for (int step = 0; step < 200; step++) {
		if (nr > 0 && (nr == HELD_MAX || kerf_rng_below(&r, 3) == 0)) {
			size_t k = kerf_rng_below(&r, nr);

			if (kerf_sched_unreserve(&s, &c, &h[k].p, h[k].b, &err) < 0)
				fail_msg("seed %llu: unbind: %s", (unsigned long long)seed, err.msg);
			h[k] = h[--nr];
		} else {
			struct kerf_pod p;
			struct kerf_binding b;

			if (kerf_rng_below(&r, 4) == 0) {
				p = (struct kerf_pod){ .cpu_milli = 1000, .mem_mib = 1024,
						       .nr_gpus = (uint8_t)(1 + kerf_rng_below(&r, 2)),
						       .gpu_milli = 1000 };
			} else {
				p = mig_pod(1 + (unsigned)kerf_rng_below(&r, 7),
					    kerf_rng_below(&r, 3) ? 0
						: (int32_t)(1 + kerf_rng_below(&r, 40)) * 1024);
			}
			b = place(&s, &c, &p);
			if (b.node == UINT32_MAX) {
				(*refused)++;
				if (p.mig_slices && oracle_fits(&c, &p))
					fail_msg("seed %llu step %d: a %ug pod refused but fits",
						 (unsigned long long)seed, step, p.mig_slices);
			} else {
				(*placed)++;
				h[nr].p = p;
				h[nr].b = b;
				h[nr].profile = p.mig_slices
					? kerf_pod_mig_profile(&c, &c.nodes[b.node], &p) : -1;
				nr++;
			}
		}
		if (kerf_cluster_check(&c, &err) < 0)
			fail_msg("seed %llu step %d: %s", (unsigned long long)seed, step, err.msg);
		check_held(&c, h, nr);
	}
	kerf_sched_release(&s);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

static void test_random_sequences(void **state)
{
	uint64_t placed = 0, refused = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 2000; seed++)
		run_seed(seed, &placed, &refused);
	printf("# 2000 seeds: %llu pods placed, %llu refused (each checked against the oracle)\n",
	       (unsigned long long)placed, (unsigned long long)refused);
	assert_true(placed > 40000 && refused > 4000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mode_changes),
		cmocka_unit_test(test_modes_do_not_mix),
		cmocka_unit_test(test_pick_order),
		cmocka_unit_test(test_random_sequences),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
