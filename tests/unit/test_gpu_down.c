/*
 * test_gpu_down: GPUs and MIG instances out of service in the core
 * (kerf_node_spec gpus_down and mig_down, core/model.c, core/mig/place.c).
 *
 * Chosen transitions: a GPU goes down while pods run on it (taken at once,
 * never -KERF_EBUSY); nothing new lands on it and kerf_node_misfit says
 * "GPU out of service"; its pods leave and its capacity stays out; a pod
 * already running there is still taken (adopted) but not past what it
 * holds; it comes up showing what its remaining pods leave.  A down GPU
 * changes MIG mode and stays down.  MIG: a down GPU in MIG mode is left
 * out of MIG placement; a down instance is never handed out nor destroyed,
 * in use or not; one the core does not hold is added; one overlapping an
 * instance in use takes its whole GPU out instead.  After every step
 * kerf_cluster_check passes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/gpu_pick.h"
#include "core/mig/place.h"
#include "core/model.h"

static struct kerf_pod whole(uint8_t nr)
{
	return (struct kerf_pod){ .cpu_milli = 1000, .mem_mib = 1024,
				  .nr_gpus = nr, .gpu_milli = KERF_GPU_MILLI };
}

static struct kerf_pod fraction(int32_t milli, int32_t mem_mib)
{
	return (struct kerf_pod){ .cpu_milli = 1000, .mem_mib = 1024, .nr_gpus = 1,
				  .gpu_milli = milli, .gpu_mem_mib = mem_mib };
}

static struct kerf_pod mig_pod(unsigned slices)
{
	return (struct kerf_pod){ .cpu_milli = 1000, .mem_mib = 1024, .nr_gpus = 1,
				  .gpu_milli = (int32_t)(slices * 1000 / 7),
				  .mig_slices = (uint8_t)slices };
}

static void check(const struct kerf_cluster *c)
{
	struct kerf_err err = { 0 };

	if (kerf_cluster_check(c, &err) < 0)
		fail_msg("kerf_cluster_check: %s", err.msg);
}

/* Node 0 of c to spec, with the GPUs of mask out of service. */
static void set_down(struct kerf_cluster *c, uint16_t mask)
{
	struct kerf_node_spec spec;
	struct kerf_err err = { 0 };

	kerf_cluster_node_spec(c, 0, &spec);
	spec.gpus_down = mask;
	if (kerf_cluster_upsert_node(c, &spec, &err) != 0)
		fail_msg("upsert: %s", err.msg);
	check(c);
}

/* One node "n" of 4 GPUs of 40960 MiB. */
static void four_gpus(struct kerf_cluster *c)
{
	kerf_cluster_init(c);
	assert_int_equal(kerf_cluster_model(c, "A100", 40960, NULL), 0);
	assert_int_equal(kerf_cluster_add_node(c, "n", 64000, 1 << 20, 0, 4, NULL), 0);
}

static void test_down_while_busy(void **state)
{
	struct kerf_cluster c;
	struct kerf_pod f = fraction(300, 10240), w = whole(1), two = whole(2);
	const struct kerf_node *n;
	uint32_t stamp;

	(void)state;
	four_gpus(&c);
	n = &c.nodes[0];
	assert_int_equal(kerf_cluster_bind(&c, &f, (struct kerf_binding){ 0, 0x1, 0 }, NULL), 0);
	assert_int_equal(kerf_cluster_bind(&c, &w, (struct kerf_binding){ 0, 0x4, 0 }, NULL), 0);
	stamp = n->stamp;
	/* GPU 0 (a fraction on it) and GPU 1 (idle) go down: taken at once */
	set_down(&c, 0x3);
	assert_true(n->stamp != stamp);
	assert_int_equal(n->gpus_down, 0x3);
	assert_int_equal(n->gpu_free_milli[0], 0);
	assert_int_equal(n->gpu_free_milli[1], 0);
	assert_int_equal(n->gpu_mem_free_mib[0], 0);
	assert_int_equal(n->gpu_mem_free_mib[1], 0);
	assert_int_equal(n->gpu_down_free_milli[0], 700);
	assert_int_equal(n->gpu_down_mem_free_mib[0], 40960 - 10240);
	assert_int_equal(n->gpu_down_free_milli[1], KERF_GPU_MILLI);
	assert_int_equal(n->nr_gpus_idle, 1);          /* GPU 3 */
	assert_int_equal(n->gpu_free_milli_sum, KERF_GPU_MILLI);
	/* used: the fraction and the whole GPU, not the down GPUs' room */
	assert_int_equal(kerf_cluster_gpu_milli_used(&c), 1300);
	/* nothing new lands on them */
	assert_int_equal(kerf_gpus_best_fit(n, &f), 0x8);
	assert_int_equal(kerf_gpus_best_fit(n, &w), 0x8);
	assert_int_equal(kerf_node_misfit(&c, n, &two), KERF_MISFIT_GPU_DOWN);
	assert_string_equal(kerf_misfit_text(KERF_MISFIT_GPU_DOWN), "GPU out of service");
	assert_int_equal(kerf_cluster_bind(&c, &w, (struct kerf_binding){ 0, 0x8, 0 }, NULL), 0);
	assert_int_equal(kerf_node_misfit(&c, n, &w), KERF_MISFIT_GPU_DOWN);
	assert_int_equal(kerf_node_misfit(&c, n, &f), KERF_MISFIT_GPU_DOWN);
	/* three GPUs would not fit even with all up: the plain reason */
	{
		struct kerf_pod three = whole(3);

		assert_int_equal(kerf_node_misfit(&c, n, &three), KERF_MISFIT_GPU);
	}
	/* the spec reports it, and a spec without it brings them up */
	{
		struct kerf_node_spec spec;

		kerf_cluster_node_spec(&c, 0, &spec);
		assert_int_equal(spec.gpus_down, 0x3);
	}
	check(&c);
	kerf_cluster_release(&c);
}

static void test_pods_leave_then_up(void **state)
{
	struct kerf_cluster c;
	struct kerf_pod f = fraction(300, 10240), g = fraction(200, 0), w = whole(1);
	struct kerf_err err = { 0 };
	const struct kerf_node *n;

	(void)state;
	four_gpus(&c);
	n = &c.nodes[0];
	assert_int_equal(kerf_cluster_bind(&c, &f, (struct kerf_binding){ 0, 0x1, 0 }, NULL), 0);
	assert_int_equal(kerf_cluster_bind(&c, &g, (struct kerf_binding){ 0, 0x1, 0 }, NULL), 0);
	set_down(&c, 0x1);
	assert_int_equal(n->gpu_down_free_milli[0], 500);
	/* a pod leaves: its share does not come back while the GPU is down */
	assert_int_equal(kerf_cluster_unbind(&c, &f, (struct kerf_binding){ 0, 0x1, 0 }, NULL), 0);
	check(&c);
	assert_int_equal(n->gpu_free_milli[0], 0);
	assert_int_equal(n->gpu_down_free_milli[0], 800);
	assert_int_equal(n->gpu_down_mem_free_mib[0], 40960);
	assert_int_equal(n->gpu_free_milli_sum, 3 * KERF_GPU_MILLI);
	/* a pod found running there is taken (adopted), within what it holds */
	assert_int_equal(kerf_cluster_bind(&c, &f, (struct kerf_binding){ 0, 0x1, 0 }, NULL), 0);
	assert_int_equal(n->gpu_down_free_milli[0], 500);
	assert_int_equal(kerf_cluster_bind(&c, &w, (struct kerf_binding){ 0, 0x1, 0 }, &err),
			 -KERF_ERANGE);
	assert_string_equal(err.msg, "binding on 'n': GPU 0 overcommitted");
	/* unbinding what was never there is refused on a down GPU too */
	err = (struct kerf_err){ 0 };
	assert_int_equal(kerf_cluster_unbind(&c, &w, (struct kerf_binding){ 0, 0x1, 0 }, &err),
			 -KERF_ERANGE);
	check(&c);
	/* up: it shows exactly what its remaining pods leave */
	set_down(&c, 0);
	assert_int_equal(n->gpu_free_milli[0], 500);
	assert_int_equal(n->gpu_mem_free_mib[0], 40960 - 10240);
	assert_int_equal(n->gpu_down_free_milli[0], 0);
	assert_int_equal(n->gpu_free_milli_sum, 3500);
	assert_int_equal(n->nr_gpus_idle, 3);
	/* both leave: idle again */
	assert_int_equal(kerf_cluster_unbind(&c, &f, (struct kerf_binding){ 0, 0x1, 0 }, NULL), 0);
	assert_int_equal(kerf_cluster_unbind(&c, &g, (struct kerf_binding){ 0, 0x1, 0 }, NULL), 0);
	assert_int_equal(n->nr_gpus_idle, 4);
	assert_int_equal(n->gpu_free_milli_sum, 4000);
	/* down and up while idle: counters come back exactly */
	set_down(&c, 0xf);
	assert_int_equal(n->nr_gpus_idle, 0);
	assert_int_equal(n->gpu_free_milli_sum, 0);
	set_down(&c, 0);
	assert_int_equal(n->nr_gpus_idle, 4);
	check(&c);
	kerf_cluster_release(&c);
}

static void test_spec_errors(void **state)
{
	struct kerf_cluster c;
	struct kerf_node_spec spec;
	struct kerf_err err = { 0 };
	struct kerf_mig_layout down[KERF_NODE_MAX_GPUS] = { 0 };

	(void)state;
	four_gpus(&c);
	kerf_cluster_node_spec(&c, 0, &spec);
	spec.gpus_down = 0x10;
	assert_int_equal(kerf_cluster_upsert_node(&c, &spec, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "node 'n': a GPU out of service beyond its 4");
	/* a MIG instance out of service on a GPU not in MIG mode */
	kerf_cluster_node_spec(&c, 0, &spec);
	down[1].nr = 1;
	spec.mig_down = down;
	err = (struct kerf_err){ 0 };
	assert_int_equal(kerf_cluster_upsert_node(&c, &spec, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "node 'n' GPU 1: MIG instances out of service on a GPU not in MIG mode");
	assert_int_equal(c.nodes[0].gpus_down, 0);
	check(&c);
	kerf_cluster_release(&c);
}

/* One node "n" of 8 H100-80GB with the GPUs of mig in MIG mode. */
static void h100_node(struct kerf_cluster *c, uint16_t mig)
{
	kerf_cluster_init(c);
	assert_int_equal(kerf_cluster_model(c, "H100-80GB", 81920, NULL), 0);
	assert_int_equal(kerf_cluster_add_node(c, "n", 192000, 1 << 20, 0, 8, NULL), 0);
	assert_int_equal(kerf_cluster_set_mig(c, 0, mig, NULL), 0);
}

static void test_down_changes_mig_mode(void **state)
{
	struct kerf_cluster c;
	const struct kerf_node *n;

	(void)state;
	h100_node(&c, 0);
	n = &c.nodes[0];
	set_down(&c, 0x1);
	/* an idle GPU out of service may change mode, and stays out */
	assert_int_equal(kerf_cluster_set_mig(&c, 0, 0x1, NULL), 0);
	check(&c);
	assert_int_equal(n->gpus_down, 0x1);
	assert_int_equal(n->gpu_down_free_milli[0], 0);     /* MIG: kept in n->mig */
	assert_int_equal(kerf_cluster_set_mig(&c, 0, 0, NULL), 0);
	check(&c);
	assert_int_equal(n->gpu_free_milli[0], 0);
	assert_int_equal(n->gpu_down_free_milli[0], KERF_GPU_MILLI);
	assert_int_equal(n->nr_gpus_idle, 7);
	set_down(&c, 0);
	assert_int_equal(n->nr_gpus_idle, 8);
	kerf_cluster_release(&c);
}

static void test_mig_gpu_down(void **state)
{
	struct kerf_cluster c;
	struct kerf_pod p = mig_pod(3);
	const struct kerf_node *n;
	uint16_t gpus;
	uint8_t start;

	(void)state;
	h100_node(&c, 0x3);
	n = &c.nodes[0];
	set_down(&c, 0x1);
	/* placement takes GPU 1 only */
	assert_true(kerf_mig_node_pick(&c, n, &p, &gpus, &start) != INT32_MIN);
	assert_int_equal(gpus, 0x2);
	assert_int_equal(kerf_cluster_bind(&c, &p, (struct kerf_binding){ 0, gpus, start }, NULL), 0);
	assert_int_equal(kerf_mig_node_pick(&c, n, &p, &gpus, &start) != INT32_MIN, 1);
	assert_int_equal(gpus, 0x2);
	assert_int_equal(kerf_cluster_bind(&c, &p, (struct kerf_binding){ 0, gpus, start }, NULL), 0);
	/* GPU 1 full: only the down GPU 0 had room */
	assert_int_equal(kerf_mig_node_pick(&c, n, &p, &gpus, &start), INT32_MIN);
	assert_int_equal(kerf_node_misfit(&c, n, &p), KERF_MISFIT_GPU_DOWN);
	/* a pod running on the down GPU is adopted */
	assert_int_equal(kerf_cluster_bind(&c, &p, (struct kerf_binding){ 0, 0x1, 0 }, NULL), 0);
	check(&c);
	set_down(&c, 0);
	assert_int_equal(kerf_node_misfit(&c, n, &p), KERF_MISFIT_NONE);
	kerf_cluster_release(&c);
}

/* Node 0's MIG instances out of service: profile pi at start on GPU g. */
static int mark(struct kerf_cluster *c, int g, const char *profile, unsigned start,
		struct kerf_err *err)
{
	struct kerf_mig_layout down[KERF_NODE_MAX_GPUS] = { 0 };
	struct kerf_node_spec spec;
	int pi = profile ? kerf_mig_profile_find(c->models[0].mig, profile) : 0;

	assert_true(pi >= 0);
	if (profile)
		down[g] = (struct kerf_mig_layout){
			.inst = { { .profile = (uint8_t)pi, .start = (uint8_t)start } },
			.nr = 1 };
	kerf_cluster_node_spec(c, 0, &spec);
	spec.gpus_down = 0;
	spec.mig_down = down;
	return kerf_cluster_upsert_node(c, &spec, err);
}

static void test_mig_instance_down(void **state)
{
	struct kerf_cluster c;
	struct kerf_pod p = mig_pod(3), small = mig_pod(1);
	const struct kerf_node *n;
	struct kerf_mig_layout *l;
	uint16_t gpus;
	uint8_t start;

	(void)state;
	h100_node(&c, 0x1);
	n = &c.nodes[0];
	l = &c.nodes[0].mig->gpu[0];
	/* a pod on 3g.40gb@4, then that instance goes down: the pod stays */
	assert_int_equal(kerf_cluster_bind(&c, &p, (struct kerf_binding){ 0, 0x1, 4 }, NULL), 0);
	assert_int_equal(mark(&c, 0, "3g.40gb", 4, NULL), 0);
	check(&c);
	assert_int_equal(l->nr, 1);
	assert_true(l->inst[0].in_use && l->inst[0].down);
	/* the pod leaves: the instance is held by nobody, never handed out */
	assert_int_equal(kerf_cluster_unbind(&c, &p, (struct kerf_binding){ 0, 0x1, 4 }, NULL), 0);
	assert_int_equal(l->nr, 1);
	assert_true(!l->inst[0].in_use && l->inst[0].down);
	assert_true(kerf_mig_node_pick(&c, n, &p, &gpus, &start) != INT32_MIN);
	assert_int_equal(start, 0);                 /* beside it, not on it */
	/* a 7g would need it destroyed: never */
	{
		struct kerf_pod all = mig_pod(7);

		assert_int_equal(kerf_node_misfit(&c, n, &all), KERF_MISFIT_GPU_DOWN);
	}
	/* a pod found running on it is adopted */
	assert_int_equal(kerf_cluster_bind(&c, &p, (struct kerf_binding){ 0, 0x1, 4 }, NULL), 0);
	assert_int_equal(kerf_cluster_unbind(&c, &p, (struct kerf_binding){ 0, 0x1, 4 }, NULL), 0);
	/* back in service: a free instance, reused */
	assert_int_equal(mark(&c, 0, NULL, 0, NULL), 0);
	check(&c);
	assert_int_equal(l->nr, 1);
	assert_false(l->inst[0].down);
	assert_true(kerf_mig_node_pick(&c, n, &p, &gpus, &start) != INT32_MIN);
	assert_int_equal(start, 4);
	/* an instance the core does not hold is added, free ones in its way go */
	assert_int_equal(kerf_cluster_bind(&c, &small, (struct kerf_binding){ 0, 0x1, 0 }, NULL), 0);
	assert_int_equal(mark(&c, 0, "1g.10gb", 1, NULL), 0);
	check(&c);
	assert_int_equal(n->gpus_down, 0);
	assert_int_equal(l->nr, 3);
	/* one overlapping an instance in use: the whole GPU goes out */
	assert_int_equal(mark(&c, 0, "3g.40gb", 0, NULL), 0);
	check(&c);
	assert_int_equal(n->gpus_down, 0x1);
	assert_int_equal(kerf_mig_node_pick(&c, n, &small, &gpus, &start), INT32_MIN);
	assert_int_equal(kerf_node_misfit(&c, n, &small), KERF_MISFIT_GPU_DOWN);
	/* and back once the mark is gone */
	assert_int_equal(mark(&c, 0, NULL, 0, NULL), 0);
	assert_int_equal(n->gpus_down, 0);
	check(&c);
	kerf_cluster_release(&c);
}

/* A node's spec read back (as a restart rebuilds it) keeps its marks. */
static void test_spec_round_trip(void **state)
{
	struct kerf_cluster c, d;
	struct kerf_node_spec spec;
	struct kerf_pod p = mig_pod(3);
	uint16_t gpus;
	uint8_t start;

	(void)state;
	h100_node(&c, 0x1);
	set_down(&c, 0x4);
	assert_int_equal(mark(&c, 0, "3g.40gb", 4, NULL), 0);
	kerf_cluster_node_spec(&c, 0, &spec);
	spec.gpus_down |= 0x4;
	h100_node(&d, 0);
	assert_int_equal(kerf_cluster_upsert_node(&d, &spec, NULL), 0);
	check(&d);
	assert_int_equal(d.nodes[0].gpus_down, 0x4);
	assert_int_equal(d.nodes[0].mig->gpu[0].nr, 1);
	assert_true(d.nodes[0].mig->gpu[0].inst[0].down);
	assert_true(kerf_mig_node_pick(&d, &d.nodes[0], &p, &gpus, &start) != INT32_MIN);
	assert_int_equal(start, 0);
	kerf_cluster_release(&d);
	kerf_cluster_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_down_while_busy),
		cmocka_unit_test(test_pods_leave_then_up),
		cmocka_unit_test(test_spec_errors),
		cmocka_unit_test(test_down_changes_mig_mode),
		cmocka_unit_test(test_mig_gpu_down),
		cmocka_unit_test(test_mig_instance_down),
		cmocka_unit_test(test_spec_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
