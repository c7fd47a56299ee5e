/*
 * test_mig_planner: plans for chosen nodes, and a seeded property test:
 * random layouts, instances in use and demand; every plan applied action
 * by action stays legal at every step, never touches an instance in use,
 * ends at the layouts it announced, serves at least what was served
 * before, and on one GPU serves as much as an exhaustive search over every
 * subset of placements (an oracle written independently of the planner).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/rng.h"
#include "core/mig/planner.h"

enum { P1G = 0, P1GME = 1, P1G2M = 2, P2G = 3, P3G = 4, P4G = 5, P7G = 6 };

static const struct kerf_mig_model *a100(void)
{
	return kerf_mig_model_find("A100-40GB");
}

static unsigned count(const struct kerf_mig_plan *pl, enum kerf_mig_action_kind k)
{
	unsigned n = 0;

	for (size_t i = 0; i < pl->nr_actions; i++)
		n += pl->actions[i].kind == k;
	return n;
}

static void test_empty_gpu_gets_7g(void **state)
{
	struct kerf_mig_node n = { .model = a100(), .nr_gpus = 1 };
	uint16_t want[KERF_MIG_MAX_PROFILES] = { [P7G] = 1 };
	struct kerf_mig_plan pl;

	(void)state;
	assert_int_equal(kerf_mig_plan_node(&n, want, &pl, NULL), 0);
	assert_int_equal(pl.nr_actions, 1);
	assert_int_equal(pl.actions[0].kind, KERF_MIG_CREATE);
	assert_int_equal(pl.actions[0].profile, P7G);
	assert_int_equal(pl.served[P7G], 1);
	assert_int_equal(pl.unserved[P7G], 0);
}

/* A 4g can only start at 0; a 3g in use there leaves it unserved. */
static void test_in_use_blocks(void **state)
{
	struct kerf_mig_node n = { .model = a100(), .nr_gpus = 1 };
	uint16_t want[KERF_MIG_MAX_PROFILES] = { [P4G] = 1 };
	struct kerf_mig_plan pl;

	(void)state;
	n.gpus[0] = (struct kerf_mig_layout){ .nr = 1, .inst = {
		{ .profile = P3G, .start = 0, .in_use = true } } };
	assert_int_equal(kerf_mig_plan_node(&n, want, &pl, NULL), 0);
	assert_int_equal(pl.nr_actions, 0);
	assert_int_equal(pl.unserved[P4G], 1);
}

/* A free 1g in the way of a wanted 3g is destroyed; the one in use stays. */
static void test_free_instance_destroyed(void **state)
{
	struct kerf_mig_node n = { .model = a100(), .nr_gpus = 1 };
	uint16_t want[KERF_MIG_MAX_PROFILES] = { [P3G] = 1 };
	struct kerf_mig_plan pl;
	struct kerf_err err = { 0 };

	(void)state;
	n.gpus[0] = (struct kerf_mig_layout){ .nr = 2, .inst = {
		{ .profile = P1G, .start = 0, .in_use = true },
		{ .profile = P1G, .start = 5 } } };
	assert_int_equal(kerf_mig_plan_node(&n, want, &pl, &err), 0);
	assert_int_equal(count(&pl, KERF_MIG_DESTROY), 1);
	assert_int_equal(count(&pl, KERF_MIG_CREATE), 1);
	assert_int_equal(pl.actions[0].start, 5);
	assert_int_equal(pl.actions[1].profile, P3G);
	assert_int_equal(pl.actions[1].start, 4);
	for (size_t i = 0; i < pl.nr_actions; i++)
		assert_int_equal(kerf_mig_apply(&n, &pl.actions[i], &err), 0);
	assert_int_equal(n.gpus[0].nr, 2);
	assert_true(n.gpus[0].inst[0].in_use);
}

/* A free instance of a wanted profile serves without any action. */
static void test_free_instance_reused(void **state)
{
	struct kerf_mig_node n = { .model = a100(), .nr_gpus = 2 };
	uint16_t want[KERF_MIG_MAX_PROFILES] = { [P2G] = 1 };
	struct kerf_mig_plan pl;

	(void)state;
	n.gpus[1] = (struct kerf_mig_layout){ .nr = 1, .inst = {
		{ .profile = P2G, .start = 2 } } };
	assert_int_equal(kerf_mig_plan_node(&n, want, &pl, NULL), 0);
	assert_int_equal(pl.nr_actions, 0);
	assert_int_equal(pl.served[P2G], 1);
	assert_int_equal(pl.served_before[P2G], 1);
}

/*
 * Fragmentation: a 1g goes onto the GPU already cut (a 3g in use at 4),
 * not onto the empty one, which keeps room for a 7g.
 */
static void test_carves_where_little_is_lost(void **state)
{
	struct kerf_mig_node n = { .model = a100(), .nr_gpus = 2 };
	uint16_t want[KERF_MIG_MAX_PROFILES] = { [P1G] = 1 };
	struct kerf_mig_plan pl;

	(void)state;
	n.gpus[1] = (struct kerf_mig_layout){ .nr = 1, .inst = {
		{ .profile = P3G, .start = 4, .in_use = true } } };
	assert_int_equal(kerf_mig_plan_node(&n, want, &pl, NULL), 0);
	assert_int_equal(pl.nr_actions, 1);
	assert_int_equal(pl.actions[0].gpu, 1);
	assert_int_equal(pl.after[0].nr, 0);
	/* the same demand again: the second 1g lands beside the first */
	n.gpus[1] = pl.after[1];
	n.gpus[1].inst[1].in_use = true;
	assert_int_equal(kerf_mig_plan_node(&n, want, &pl, NULL), 0);
	assert_int_equal(pl.actions[0].gpu, 1);
}

static void test_apply_refuses(void **state)
{
	struct kerf_mig_node n = { .model = a100(), .nr_gpus = 1 };
	struct kerf_err err = { 0 };
	struct kerf_mig_action a;

	(void)state;
	n.gpus[0] = (struct kerf_mig_layout){ .nr = 1, .inst = {
		{ .profile = P3G, .start = 0, .in_use = true } } };
	a = (struct kerf_mig_action){ .kind = KERF_MIG_DESTROY, .gpu = 0,
				      .profile = P3G, .start = 0 };
	kerf_err_clear(&err);
	assert_int_equal(kerf_mig_apply(&n, &a, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "in use"));
	a = (struct kerf_mig_action){ .kind = KERF_MIG_CREATE, .gpu = 0,
				      .profile = P1G, .start = 2 };
	kerf_err_clear(&err);
	assert_int_equal(kerf_mig_apply(&n, &a, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "not legal"));
	a = (struct kerf_mig_action){ .kind = KERF_MIG_DESTROY, .gpu = 0,
				      .profile = P1G, .start = 5 };
	kerf_err_clear(&err);
	assert_int_equal(kerf_mig_apply(&n, &a, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "no such instance"));
	a.gpu = 3;
	kerf_err_clear(&err);
	assert_int_equal(kerf_mig_apply(&n, &a, &err), -KERF_EINVAL);
	assert_int_equal(n.gpus[0].nr, 1);
}

static void test_illegal_node_refused(void **state)
{
	struct kerf_mig_node n = { .model = a100(), .nr_gpus = 2 };
	uint16_t want[KERF_MIG_MAX_PROFILES] = { 0 };
	struct kerf_mig_plan pl;
	struct kerf_err err = { 0 };

	(void)state;
	n.gpus[1] = (struct kerf_mig_layout){ .nr = 2, .inst = {
		{ .profile = P7G, .start = 0 }, { .profile = P1G, .start = 3 } } };
	assert_int_equal(kerf_mig_plan_node(&n, want, &pl, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "gpu 1: instance 1"));
}

/* ---- the oracle: every subset of (profile, start) placements ---- */

struct oracle {
	const struct kerf_mig_model *m;
	const uint16_t *want;
	struct cand { uint8_t p, s; } cand[64];
	unsigned nr_cand;
	int32_t best;
};

static int32_t served_of(const struct kerf_mig_model *m, const struct kerf_mig_layout *l,
			 const uint16_t *want)
{
	uint16_t free_p[KERF_MIG_MAX_PROFILES] = { 0 };
	int32_t w = 0;

	for (unsigned i = 0; i < l->nr; i++)
		if (!l->inst[i].in_use)
			free_p[l->inst[i].profile]++;
	for (unsigned p = 0; p < m->nr_profiles; p++)
		w += (free_p[p] < want[p] ? free_p[p] : want[p]) * m->profiles[p].compute_slices;
	return w;
}

static void oracle_walk(struct oracle *o, struct kerf_mig_layout *l, unsigned k)
{
	int32_t w;

	if (k == o->nr_cand) {
		if (kerf_mig_layout_check(o->m, l, NULL) == 0 &&
		    (w = served_of(o->m, l, o->want)) > o->best)
			o->best = w;
		return;
	}
	oracle_walk(o, l, k + 1);
	if (l->nr < KERF_MIG_MAX_INSTANCES) {
		uint32_t span = kerf_mig_span(&o->m->profiles[o->cand[k].p], o->cand[k].s);

		if (kerf_mig_layout_used(o->m, l) & span)
			return;  /* overlapping subsets are never legal */
		l->inst[l->nr++] = (struct kerf_mig_instance){ .profile = o->cand[k].p,
							       .start = o->cand[k].s };
		oracle_walk(o, l, k + 1);
		l->nr--;
	}
}

static int32_t oracle_best(const struct kerf_mig_model *m,
			   const struct kerf_mig_layout *cur, const uint16_t *want)
{
	struct oracle o = { .m = m, .want = want, .best = -1 };
	struct kerf_mig_layout base = { .nr = 0 };

	for (unsigned i = 0; i < cur->nr; i++)
		if (cur->inst[i].in_use)
			base.inst[base.nr++] = cur->inst[i];
	for (unsigned p = 0; p < m->nr_profiles; p++)
		for (unsigned s = 0; s < m->mem_slices; s++)
			if (m->profiles[p].starts >> s & 1)
				o.cand[o.nr_cand++] = (struct cand){ (uint8_t)p, (uint8_t)s };
	oracle_walk(&o, &base, 0);
	return o.best;
}

static void random_layout(struct kerf_rng *r, const struct kerf_mig_model *m,
			  struct kerf_mig_layout *l)
{
	unsigned tries = (unsigned)kerf_rng_below(r, 10);

	l->nr = 0;
	for (unsigned t = 0; t < tries; t++) {
		unsigned p = (unsigned)kerf_rng_below(r, m->nr_profiles);
		unsigned s = (unsigned)kerf_rng_below(r, m->mem_slices);

		if (kerf_mig_can_add(m, l, p, s))
			l->inst[l->nr++] = (struct kerf_mig_instance){
				.profile = (uint8_t)p, .start = (uint8_t)s,
				.in_use = kerf_rng_below(r, 2) == 0 };
	}
}

static bool same_set(const struct kerf_mig_layout *a, const struct kerf_mig_layout *b)
{
	if (a->nr != b->nr)
		return false;
	for (unsigned i = 0; i < a->nr; i++) {
		bool found = false;

		for (unsigned j = 0; j < b->nr && !found; j++)
			found = a->inst[i].profile == b->inst[j].profile &&
				a->inst[i].start == b->inst[j].start &&
				a->inst[i].in_use == b->inst[j].in_use;
		if (!found)
			return false;
	}
	return true;
}

static void test_property(void **state)
{
	size_t nr_models;
	const struct kerf_mig_model *models = kerf_mig_models(&nr_models);
	unsigned runs = 3000, oracle_runs = 0;

	(void)state;
	for (unsigned seed = 1; seed <= runs; seed++) {
		struct kerf_rng r;
		const struct kerf_mig_model *m;
		struct kerf_mig_node n, before;
		uint16_t want[KERF_MIG_MAX_PROFILES] = { 0 };
		struct kerf_mig_plan pl;
		struct kerf_err err = { 0 };

		kerf_rng_seed(&r, seed);
		m = &models[kerf_rng_below(&r, nr_models)];
		memset(&n, 0, sizeof(n));
		n.model = m;
		n.nr_gpus = (uint8_t)(1 + kerf_rng_below(&r, seed % 4 == 0 ? 1 : 8));
		for (unsigned g = 0; g < n.nr_gpus; g++)
			random_layout(&r, m, &n.gpus[g]);
		for (unsigned p = 0; p < m->nr_profiles; p++)
			if (kerf_rng_below(&r, 3) == 0)
				want[p] = (uint16_t)kerf_rng_below(&r, 6);
		before = n;
		if (kerf_mig_plan_node(&n, want, &pl, &err) < 0)
			fail_msg("seed %u: %s", seed, err.msg);
		/* the node itself is not changed by planning */
		assert_memory_equal(&n, &before, sizeof(n));
		for (unsigned p = 0; p < m->nr_profiles; p++) {
			assert_int_equal(pl.served[p] + pl.unserved[p], want[p]);
			assert_true(pl.served[p] <= want[p]);
		}
		{
			int32_t w0 = 0, w1 = 0;

			for (unsigned p = 0; p < m->nr_profiles; p++) {
				w0 += pl.served_before[p] * m->profiles[p].compute_slices;
				w1 += pl.served[p] * m->profiles[p].compute_slices;
			}
			if (w1 < w0)
				fail_msg("seed %u: plan serves less than nothing done", seed);
		}
		/* apply action by action: each step legal, nothing in use touched */
		for (size_t i = 0; i < pl.nr_actions; i++) {
			if (kerf_mig_apply(&n, &pl.actions[i], &err) < 0)
				fail_msg("seed %u action %zu: %s", seed, i, err.msg);
			for (unsigned g = 0; g < n.nr_gpus; g++)
				if (kerf_mig_layout_check(m, &n.gpus[g], &err) < 0)
					fail_msg("seed %u step %zu gpu %u: %s", seed, i, g, err.msg);
		}
		for (unsigned g = 0; g < n.nr_gpus; g++) {
			for (unsigned i = 0; i < before.gpus[g].nr; i++) {
				const struct kerf_mig_instance *in = &before.gpus[g].inst[i];
				bool kept = false;

				if (!in->in_use)
					continue;
				for (unsigned j = 0; j < n.gpus[g].nr; j++)
					kept |= n.gpus[g].inst[j].profile == in->profile &&
						n.gpus[g].inst[j].start == in->start &&
						n.gpus[g].inst[j].in_use;
				if (!kept)
					fail_msg("seed %u: in-use instance touched", seed);
			}
			if (!same_set(&n.gpus[g], &pl.after[g]))
				fail_msg("seed %u gpu %u: applied layout differs from the plan",
					 seed, g);
		}
		/* one GPU: as good as every subset of placements */
		if (n.nr_gpus == 1) {
			int32_t w = 0;

			for (unsigned p = 0; p < m->nr_profiles; p++)
				w += pl.served[p] * m->profiles[p].compute_slices;
			assert_int_equal(w, oracle_best(m, &before.gpus[0], want));
			oracle_runs++;
		}
	}
	assert_true(oracle_runs > runs / 5);
}

/*
 * Sequences: plan, apply, then work starts on some free instances and
 * some running work ends, twenty times over; every layout stays legal and
 * no plan ever destroys an instance in use.
 */
static void test_property_sequences(void **state)
{
	size_t nr_models;
	const struct kerf_mig_model *models = kerf_mig_models(&nr_models);

	(void)state;
	for (unsigned seed = 1; seed <= 300; seed++) {
		struct kerf_rng r;
		const struct kerf_mig_model *m;
		struct kerf_mig_node n;

		kerf_rng_seed(&r, seed * 7919u);
		m = &models[kerf_rng_below(&r, nr_models)];
		memset(&n, 0, sizeof(n));
		n.model = m;
		n.nr_gpus = (uint8_t)(1 + kerf_rng_below(&r, 4));
		for (unsigned step = 0; step < 20; step++) {
			uint16_t want[KERF_MIG_MAX_PROFILES] = { 0 };
			struct kerf_mig_node before = n;
			struct kerf_mig_plan pl;
			struct kerf_err err = { 0 };

			for (unsigned p = 0; p < m->nr_profiles; p++)
				if (kerf_rng_below(&r, 2) == 0)
					want[p] = (uint16_t)kerf_rng_below(&r, 4);
			if (kerf_mig_plan_node(&n, want, &pl, &err) < 0)
				fail_msg("seed %u step %u: %s", seed, step, err.msg);
			for (size_t i = 0; i < pl.nr_actions; i++) {
				if (pl.actions[i].kind == KERF_MIG_DESTROY)
					for (unsigned k = 0; k < before.gpus[pl.actions[i].gpu].nr; k++) {
						const struct kerf_mig_instance *in =
							&before.gpus[pl.actions[i].gpu].inst[k];

						if (in->profile == pl.actions[i].profile &&
						    in->start == pl.actions[i].start && in->in_use)
							fail_msg("seed %u step %u: destroys an instance in use",
								 seed, step);
					}
				if (kerf_mig_apply(&n, &pl.actions[i], &err) < 0)
					fail_msg("seed %u step %u action %zu: %s", seed, step, i, err.msg);
			}
			for (unsigned g = 0; g < n.nr_gpus; g++) {
				struct kerf_mig_layout *l = &n.gpus[g];

				if (kerf_mig_layout_check(m, l, &err) < 0)
					fail_msg("seed %u step %u gpu %u: %s", seed, step, g, err.msg);
				/* work starts on a wanted free instance, or ends */
				for (unsigned k = 0; k < l->nr; k++) {
					if (!l->inst[k].in_use && want[l->inst[k].profile] &&
					    kerf_rng_below(&r, 3) != 0)
						l->inst[k].in_use = true;
					else if (l->inst[k].in_use && kerf_rng_below(&r, 4) == 0)
						l->inst[k].in_use = false;
				}
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_gpu_gets_7g),
		cmocka_unit_test(test_in_use_blocks),
		cmocka_unit_test(test_free_instance_destroyed),
		cmocka_unit_test(test_free_instance_reused),
		cmocka_unit_test(test_carves_where_little_is_lost),
		cmocka_unit_test(test_apply_refuses),
		cmocka_unit_test(test_illegal_node_refused),
		cmocka_unit_test(test_property),
		cmocka_unit_test(test_property_sequences),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
