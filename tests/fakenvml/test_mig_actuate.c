/*
 * MIG actuation (src/actuate) against the fake libnvidia-ml: a plan from
 * the core carried out step by step, a failure injected half way (the
 * layout left legal, the report naming the step, NVML's error and what is
 * left, a second run completing it), refusals to touch an instance in
 * use, a driver that says done and did nothing, MIG mode, and the fake's
 * own rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "actuate/mig_actuate.h"

static struct kerf_nvml nv;

static void open_script(const char *script, const char *lib_env)
{
	const char *dir = getenv("KERF_TEST_FAKE_NVML_SCRIPTS"), *lib = getenv(lib_env);
	struct kerf_err err = { 0 };
	char path[1024];

	if (!dir || !lib)
		fail_msg("KERF_TEST_FAKE_NVML_SCRIPTS or %s is not set (run through meson test)",
			 lib_env);
	snprintf(path, sizeof(path), "%s/%s", dir, script);
	setenv("KERF_FAKE_NVML_SCRIPT", path, 1);
	if (kerf_nvml_open(&nv, lib, &err) < 0)
		fail_msg("%s", err.msg);
}

static void open_fake(const char *script)
{
	open_script(script, "KERF_TEST_FAKE_NVML");
}

static int teardown(void **state)
{
	(void)state;
	kerf_nvml_close(&nv);
	return 0;
}

/* GPU n of g as "1g.10gb@0/1,2g.20gb@2/2" (profile@start/CIs), by start. */
static const char *layout(const struct kerf_mig_gpus *g, unsigned n)
{
	static char buf[256];
	const struct kerf_mig_layout *l = &g->node.gpus[n];
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned s = 0; s < KERF_MIG_MAX_SLICES; s++)
		for (unsigned i = 0; i < l->nr; i++)
			if (l->inst[i].start == s)
				used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s@%u/%u",
							 used ? "," : "",
							 g->node.model->profiles[l->inst[i].profile].name,
							 s, g->nr_cis[n][i]);
	return buf;
}

static void read_gpus(struct kerf_mig_gpus *g, const struct kerf_mig_ref *in_use, size_t nr)
{
	struct kerf_err err = { 0 };

	if (kerf_mig_gpus_read(g, &nv, in_use, nr, &err) < 0)
		fail_msg("%s", err.msg);
}

/* The core's plan for want (profile name, count) and its NVML steps. */
static void plan_for(const struct kerf_mig_gpus *g, const char *profile, uint16_t count,
		     struct kerf_mig_plan *plan, struct kerf_mig_steps *steps)
{
	uint16_t want[KERF_MIG_MAX_PROFILES] = { 0 };
	struct kerf_err err = { 0 };
	int p = kerf_mig_profile_find(g->node.model, profile);

	assert_true(p >= 0);
	want[p] = count;
	assert_int_equal(kerf_mig_plan_node(&g->node, want, plan, &err), 0);
	assert_int_equal(kerf_mig_steps_of(g, plan, steps, &err), 0);
}

static struct kerf_mig_gpus gpus;
static struct kerf_mig_plan plan;
static struct kerf_mig_steps steps;
static struct kerf_mig_report rep;

static void test_read(void **state)
{
	(void)state;
	open_fake("mig_actuate.json");
	read_gpus(&gpus, NULL, 0);
	assert_string_equal(gpus.node.model->name, "H100-80GB");
	assert_int_equal(gpus.node.nr_gpus, 1);
	assert_int_equal(gpus.nvml_index[0], 0);
	assert_string_equal(layout(&gpus, 0), "1g.10gb@0/1,2g.20gb@2/2,3g.40gb@4/1");
	assert_string_equal(gpus.skipped, "gpu 1: MIG off");
	for (unsigned i = 0; i < gpus.node.gpus[0].nr; i++)
		assert_false(gpus.node.gpus[0].inst[i].in_use);
}

/* The plan's steps, each done and followed by a read that matched. */
static void test_plan_carried_out(void **state)
{
	struct kerf_err err = { 0 };

	(void)state;
	open_fake("mig_actuate.json");
	read_gpus(&gpus, NULL, 0);
	plan_for(&gpus, "1g.10gb", 3, &plan, &steps);
	/* the 3g is destroyed (its CI, then it), two 1g created with a CI each */
	assert_int_equal(plan.nr_actions, 3);
	assert_int_equal(steps.nr, 6);
	assert_int_equal(steps.steps[0].kind, KERF_MIG_STEP_DESTROY_CI);
	assert_int_equal(steps.steps[1].kind, KERF_MIG_STEP_DESTROY_GI);
	assert_int_equal(steps.steps[2].kind, KERF_MIG_STEP_CREATE_GI);
	assert_int_equal(steps.steps[3].kind, KERF_MIG_STEP_CREATE_CI);
	assert_int_equal(kerf_mig_run(&nv, &steps, NULL, 0, &rep, &err), 0);
	assert_int_equal(rep.failed, -1);
	assert_int_equal(rep.nr_done, 6);
	for (size_t k = 0; k < steps.nr; k++)
		assert_int_equal(steps.steps[k].state, KERF_MIG_STEP_DONE);
	assert_true(rep.legal);
	assert_string_equal(layout(&rep.now, 0), "1g.10gb@0/1,1g.10gb@1/1,2g.20gb@2/2,1g.10gb@6/1");
	/* what NVML holds now is what the report says */
	read_gpus(&gpus, NULL, 0);
	assert_string_equal(layout(&gpus, 0), "1g.10gb@0/1,1g.10gb@1/1,2g.20gb@2/2,1g.10gb@6/1");
	/* and a second plan for the same demand has nothing to do */
	plan_for(&gpus, "1g.10gb", 3, &plan, &steps);
	assert_int_equal(steps.nr, 0);
}

/* The 4th NVML write fails: the create-ci of the first new 1g. */
static void test_failure_half_way(void **state)
{
	struct kerf_err err = { 0 };

	(void)state;
	open_fake("mig_fail.json");
	read_gpus(&gpus, NULL, 0);
	plan_for(&gpus, "1g.10gb", 3, &plan, &steps);
	assert_int_equal(steps.nr, 6);
	assert_int_equal(kerf_mig_run(&nv, &steps, NULL, 0, &rep, &err), -KERF_EIO);
	assert_int_equal(rep.failed, 3);
	assert_int_equal(rep.nr_done, 3);
	assert_int_equal(rep.nvml_rc, NVML_ERROR_UNKNOWN);
	assert_string_equal(rep.error,
			    "nvmlGpuInstanceCreateComputeInstance: NVML_ERROR_UNKNOWN (999)");
	assert_string_equal(err.msg,
			    "step 4 of 6, create-ci 1g.10gb@1 on gpu 0: nvmlGpuInstanceCreateComputeInstance: NVML_ERROR_UNKNOWN (999)");
	assert_int_equal(steps.steps[2].state, KERF_MIG_STEP_DONE);
	assert_int_equal(steps.steps[3].state, KERF_MIG_STEP_FAILED);
	assert_int_equal(steps.steps[4].state, KERF_MIG_STEP_NOT_DONE);
	assert_int_equal(steps.steps[5].state, KERF_MIG_STEP_NOT_DONE);
	/* legal: the 3g is gone, the new 1g has no compute instance yet */
	assert_true(rep.legal);
	assert_string_equal(layout(&rep.now, 0), "1g.10gb@0/1,1g.10gb@1/0,2g.20gb@2/2");
	for (unsigned g = 0; g < rep.now.node.nr_gpus; g++)
		assert_int_equal(kerf_mig_layout_check(rep.now.node.model, &rep.now.node.gpus[g],
						       NULL), 0);

	/* a second run from what NVML holds now completes it */
	read_gpus(&gpus, NULL, 0);
	plan_for(&gpus, "1g.10gb", 3, &plan, &steps);
	assert_int_equal(steps.nr, 3);
	assert_int_equal(steps.steps[0].kind, KERF_MIG_STEP_CREATE_CI);  /* the 1g at 1 */
	assert_int_equal(steps.steps[0].start, 1);
	assert_int_equal(kerf_mig_run(&nv, &steps, NULL, 0, &rep, &err), 0);
	assert_true(rep.legal);
	assert_string_equal(layout(&rep.now, 0), "1g.10gb@0/1,1g.10gb@1/1,2g.20gb@2/2,1g.10gb@6/1");
}

/* A plan made before a pod got the 2g: its step is refused, NVML untouched. */
static void test_refuses_instance_of_a_pod(void **state)
{
	struct kerf_mig_ref in_use[1];
	struct kerf_err err = { 0 };
	size_t nr;

	(void)state;
	open_fake("mig_actuate.json");
	read_gpus(&gpus, NULL, 0);
	plan_for(&gpus, "7g.80gb", 1, &plan, &steps);
	assert_int_equal(steps.nr, 9);  /* 1g: ci+gi, 2g: 2 ci+gi, 3g: ci+gi, 7g: gi+ci */
	assert_int_equal(kerf_mig_refs_parse("0:2g.20gb@2", "in use", in_use, 1, &nr, &err), 0);
	assert_int_equal(kerf_mig_run(&nv, &steps, in_use, nr, &rep, &err), -KERF_EIO);
	assert_int_equal(rep.failed, 2);
	assert_int_equal(rep.nvml_rc, 0);  /* refused by kerf, not NVML */
	assert_string_equal(rep.error,
			    "gpu 0: 2g.20gb@2 is in use: its compute instance is not destroyed");
	assert_true(rep.legal);
	assert_string_equal(layout(&rep.now, 0), "2g.20gb@2/2,3g.40gb@4/1");

	/* planned knowing it, the 7g is simply not served */
	read_gpus(&gpus, in_use, nr);
	plan_for(&gpus, "7g.80gb", 1, &plan, &steps);
	assert_int_equal(steps.nr, 0);
	assert_int_equal(plan.unserved[kerf_mig_profile_find(gpus.node.model, "7g.80gb")], 1);
}

/* A process on the 3g (GI 1): in use per NVML. */
static void test_refuses_instance_with_processes(void **state)
{
	struct kerf_err err = { 0 };

	(void)state;
	open_fake("mig_busy.json");
	read_gpus(&gpus, NULL, 0);
	int i3 = -1;
	for (unsigned i = 0; i < gpus.node.gpus[0].nr; i++)
		if (gpus.gi_id[0][i] == 1)
			i3 = (int)i;
	assert_true(i3 >= 0);
	assert_true(gpus.node.gpus[0].inst[i3].in_use);
	/* a stale plan that ignores it */
	struct kerf_mig_gpus stale = gpus;
	stale.node.gpus[0].inst[i3].in_use = false;
	plan_for(&stale, "7g.80gb", 1, &plan, &steps);
	assert_int_equal(kerf_mig_run(&nv, &steps, NULL, 0, &rep, &err), -KERF_EIO);
	assert_int_equal(steps.steps[rep.failed].kind, KERF_MIG_STEP_DESTROY_CI);
	assert_int_equal(steps.steps[rep.failed].start, 4);
	assert_int_equal(rep.nvml_rc, 0);
	assert_non_null(strstr(rep.error, "3g.40gb@4 is in use"));
	assert_true(rep.legal);
	assert_string_equal(layout(&rep.now, 0), "3g.40gb@4/1");
}

/* The driver says SUCCESS to a destroy and does nothing: the read-back catches it. */
static void test_read_back_mismatch(void **state)
{
	struct kerf_err err = { 0 };

	(void)state;
	open_fake("mig_noop.json");
	read_gpus(&gpus, NULL, 0);
	plan_for(&gpus, "1g.10gb", 3, &plan, &steps);
	assert_int_equal(kerf_mig_run(&nv, &steps, NULL, 0, &rep, &err), -KERF_EIO);
	assert_int_equal(rep.failed, 1);  /* destroy-gi 3g.40gb@4, the 2nd write */
	assert_string_equal(rep.error,
			    "gpu 0 read back from NVML: 1g.10gb@0 (1 CI), 2g.20gb@2 (2 CI), 3g.40gb@4 (0 CI); kerf expected: 1g.10gb@0 (1 CI), 2g.20gb@2 (2 CI)");
	assert_true(rep.legal);
}

static void test_assigned(void **state)
{
	struct kerf_mig_ref refs[4];
	struct kerf_err err = { 0 };
	size_t nr;

	(void)state;
	open_fake("mig_actuate.json");
	/* 3g at 0 over the free 1g@0 and 2g@2; the 3g@4 stays */
	assert_int_equal(kerf_mig_refs_parse("0:3g.40gb@0,0:3g.40gb@4", "assigned", refs, 4, &nr,
					     &err), 0);
	read_gpus(&gpus, refs, nr);
	assert_int_equal(kerf_mig_plan_assigned(&gpus, refs, nr, &plan, &err), 0);
	assert_int_equal(plan.nr_actions, 3);
	assert_int_equal(kerf_mig_steps_of(&gpus, &plan, &steps, &err), 0);
	assert_int_equal(kerf_mig_run(&nv, &steps, refs, nr, &rep, &err), 0);
	assert_string_equal(layout(&rep.now, 0), "3g.40gb@0/1,3g.40gb@4/1");
	assert_true(rep.legal);

	/* the same through the one entry the agent loop calls: nothing left to do */
	assert_int_equal(kerf_mig_reconcile(&nv, refs, nr, &steps, &rep, &err), 0);
	assert_int_equal(steps.nr, 0);
	assert_string_equal(layout(&rep.now, 0), "3g.40gb@0/1,3g.40gb@4/1");

	/* a pod on the 1g@0 blocks a 3g at 0 */
	kerf_nvml_close(&nv);
	open_fake("mig_actuate.json");
	assert_int_equal(kerf_mig_refs_parse("0:1g.10gb@0,0:3g.40gb@0", "assigned", refs, 4, &nr,
					     &err), 0);
	read_gpus(&gpus, refs, nr);
	assert_int_equal(kerf_mig_plan_assigned(&gpus, refs, nr, &plan, &err), -KERF_EINVAL);
	assert_string_equal(err.msg,
			    "assigned '0:3g.40gb@0' cannot be made: it overlaps 1g.10gb@0 in use (gpu 0: create 3g.40gb at 0: not legal beside the instances there)");
	kerf_err_clear(&err);
	assert_int_equal(kerf_mig_reconcile(&nv, refs, nr, &steps, &rep, &err), -KERF_EINVAL);
	assert_int_equal(steps.nr, 0);
	kerf_err_clear(&err);
	/* one assigned instance, reconciled in one call: the free 1g@0 and 2g@2 go */
	assert_int_equal(kerf_mig_refs_parse("0:4g.40gb@0", "assigned", refs, 4, &nr, &err), 0);
	assert_int_equal(kerf_mig_reconcile(&nv, refs, nr, &steps, &rep, &err), 0);
	assert_int_equal(steps.nr, 7);
	assert_true(rep.legal);
	assert_string_equal(layout(&rep.now, 0), "4g.40gb@0/1,3g.40gb@4/1");
	/* nor on a GPU kerf does not change */
	kerf_err_clear(&err);
	assert_int_equal(kerf_mig_refs_parse("1:1g.10gb@0", "assigned", refs, 4, &nr, &err), 0);
	assert_int_equal(kerf_mig_plan_assigned(&gpus, refs, nr, &plan, &err), -KERF_EINVAL);
	assert_string_equal(err.msg,
			    "assigned '1:1g.10gb@0': gpu 1 is not a MIG GPU kerf changes (gpu 1: MIG off)");
}

static void test_refs_parse(void **state)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "0:3g.40gb", "--in-use: '0:3g.40gb': missing '@START'" },
		{ "3g.40gb@4", "--in-use: '3g.40gb@4': missing 'GPU:'" },
		{ "x:3g.40gb@4", "--in-use: 'x:3g.40gb@4': GPU must be an index from 0 to 63" },
		{ "0:3g.40gb@9", "--in-use: '0:3g.40gb@9': START must be a memory slice from 0 to 7" },
		{ "0:@4", "--in-use: '0:@4': PROFILE empty or too long" },
		{ "0:1g.10gb@0,", "--in-use: an entry is empty or longer than 63 bytes" },
		{ "0:1g.10gb@0,0:1g.10gb@0", "--in-use: '0:1g.10gb@0' given twice" },
	};
	struct kerf_mig_ref refs[4];
	size_t nr;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kerf_err err = { 0 };
		assert_int_equal(kerf_mig_refs_parse(bad[i].text, "--in-use", refs, 4, &nr, &err),
				 -KERF_EINVAL);
		assert_string_equal(err.msg, bad[i].msg);
	}
	struct kerf_err err = { 0 };
	assert_int_equal(kerf_mig_refs_parse("0:3g.40gb@4,2:1g.10gb@6", "x", refs, 4, &nr, &err), 0);
	assert_int_equal(nr, 2);
	assert_int_equal(refs[1].gpu, 2);
	assert_string_equal(refs[1].profile, "1g.10gb");
	assert_int_equal(refs[1].start, 6);
	assert_int_equal(kerf_mig_refs_parse("", "x", refs, 4, &nr, &err), 0);
	assert_int_equal(nr, 0);
	assert_int_equal(kerf_mig_refs_parse("0:a@0,0:b@0", "x", refs, 1, &nr, &err), -KERF_EINVAL);
}

static void test_mig_mode(void **state)
{
	struct kerf_mig_mode mode;
	struct kerf_err err = { 0 };

	(void)state;
	open_fake("mig_mode.json");
	assert_int_equal(kerf_mig_set_mode(&nv, 0, NVML_DEVICE_MIG_ENABLE, &mode, &err), 0);
	assert_int_equal(mode.current, 1);
	assert_int_equal(mode.pending, 1);
	/* GPU 1 needs a reset: pending, said so */
	assert_int_equal(kerf_mig_set_mode(&nv, 1, NVML_DEVICE_MIG_ENABLE, &mode, &err), 1);
	assert_int_equal(mode.current, 0);
	assert_int_equal(mode.pending, 1);
	assert_int_equal(mode.activation_rc, NVML_ERROR_RESET_REQUIRED);
	assert_string_equal(err.msg,
			    "gpu 1: MIG on is pending, not current: NVML_ERROR_RESET_REQUIRED: the GPU must be reset (or the machine rebooted) to apply it");
	/* GPU 0 is now MIG with no instances: create one there */
	read_gpus(&gpus, NULL, 0);
	assert_int_equal(gpus.node.nr_gpus, 1);
	assert_string_equal(layout(&gpus, 0), "");
	assert_string_equal(gpus.skipped, "gpu 1: MIG off");
	kerf_err_clear(&err);
	assert_int_equal(kerf_mig_set_mode(&nv, 7, NVML_DEVICE_MIG_ENABLE, &mode, &err), -KERF_EIO);
	assert_string_equal(err.msg,
			    "gpu 7: MIG on: nvmlDeviceGetHandleByIndex_v2: NVML_ERROR_INVALID_ARGUMENT (2)");
}

/* An old driver without the write calls: actuation off, and said why. */
static void test_actuation_off(void **state)
{
	struct kerf_err err = { 0 };

	(void)state;
	open_script("mig_actuate.json", "KERF_TEST_FAKE_NVML_MINIMAL");
	assert_false(kerf_nvml_has(&nv, KERF_NVML_F_MIG_ACTUATE));
	assert_null(nv.gi_destroy);
	assert_non_null(strstr(nv.off, "mig-actuation (nvmlDeviceSetMigMode missing)"));
	read_gpus(&gpus, NULL, 0);  /* reading still works */
	/* processes are unknown: every instance counts as in use */
	assert_true(gpus.node.gpus[0].inst[0].in_use);
	plan_for(&gpus, "1g.10gb", 1, &plan, &steps);
	assert_int_equal(kerf_mig_run(&nv, &steps, NULL, 0, &rep, &err), -KERF_ENOTFOUND);
	assert_non_null(strstr(err.msg, "MIG actuation is off: "));
}

/* The fake's rules, called through NVML's symbols directly. */
static void test_fake_rules(void **state)
{
	nvmlDevice_t dev, off;
	nvmlGpuInstance_t gi, g3;
	nvmlComputeInstance_t ci;
	nvmlGpuInstancePlacement_t at = { .start = 4, .size = 4 }, list[8];
	nvmlReturn_t act;
	unsigned count = 0;

	(void)state;
	open_fake("mig_busy.json");
	assert_int_equal(nv.handle_by_index_v2(0, &dev), NVML_SUCCESS);
	assert_int_equal(nv.gi_placements_v2(dev, 9, NULL, &count), NVML_SUCCESS);
	assert_int_equal(count, 2);
	count = 1;
	assert_int_equal(nv.gi_placements_v2(dev, 9, list, &count), NVML_ERROR_INSUFFICIENT_SIZE);
	count = 8;
	assert_int_equal(nv.gi_placements_v2(dev, 9, list, &count), NVML_SUCCESS);
	assert_int_equal(list[1].start, 4);
	/* overlap with the 3g at 4 */
	assert_int_equal(nv.create_gi_with_placement(dev, 9, &at, &gi),
			 NVML_ERROR_INSUFFICIENT_RESOURCES);
	/* not one of the profile's placements */
	at = (nvmlGpuInstancePlacement_t){ .start = 2, .size = 4 };
	assert_int_equal(nv.create_gi_with_placement(dev, 9, &at, &gi), NVML_ERROR_INVALID_ARGUMENT);
	at = (nvmlGpuInstancePlacement_t){ .start = 1, .size = 2 };
	assert_int_equal(nv.create_gi_with_placement(dev, 19, &at, &gi), NVML_ERROR_INVALID_ARGUMENT);
	/* a GI with compute instances, a CI with a process: in use */
	assert_int_equal(nv.gi_by_id(dev, 1, &g3), NVML_SUCCESS);
	assert_int_equal(nv.gi_destroy(g3), NVML_ERROR_IN_USE);
	assert_int_equal(nv.ci_by_id(g3, 0, &ci), NVML_SUCCESS);
	assert_int_equal(nv.ci_destroy(ci), NVML_ERROR_IN_USE);
	assert_int_equal(nv.ci_by_id(g3, 5, &ci), NVML_ERROR_NOT_FOUND);
	assert_int_equal(nv.gi_by_id(dev, 9, &gi), NVML_ERROR_NOT_FOUND);
	/* the GI of the 1g: destroy its CI, then it; then a 1g at 1 fits */
	assert_int_equal(nv.gi_by_id(dev, 3, &gi), NVML_SUCCESS);
	assert_int_equal(nv.ci_by_id(gi, 0, &ci), NVML_SUCCESS);
	assert_int_equal(nv.ci_destroy(ci), NVML_SUCCESS);
	assert_int_equal(nv.gi_destroy(gi), NVML_SUCCESS);
	assert_int_equal(nv.gi_destroy(gi), NVML_ERROR_INVALID_ARGUMENT);  /* gone */
	at = (nvmlGpuInstancePlacement_t){ .start = 1, .size = 1 };
	assert_int_equal(nv.create_gi_with_placement(dev, 19, &at, &gi), NVML_SUCCESS);
	/* a 2-slice CI does not fit in a 1-slice GI; two 1-slice ones neither */
	assert_int_equal(nv.create_ci(gi, 1, &ci), NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(nv.create_ci(gi, 0, &ci), NVML_SUCCESS);
	assert_int_equal(nv.create_ci(gi, 0, &ci), NVML_ERROR_INSUFFICIENT_RESOURCES);
	/* a 2g at 0 overlaps the new 1g at 1 */
	at = (nvmlGpuInstancePlacement_t){ .start = 0, .size = 2 };
	assert_int_equal(nv.create_gi_with_placement(dev, 14, &at, &gi),
			 NVML_ERROR_INSUFFICIENT_RESOURCES);
	/* MIG mode: not on a GPU without MIG; disabling a busy GPU stays pending */
	assert_int_equal(nv.set_mig_mode(dev, NVML_DEVICE_MIG_DISABLE, &act), NVML_SUCCESS);
	assert_int_equal(act, NVML_ERROR_IN_USE);
	kerf_nvml_close(&nv);
	open_fake("two_gpu.json");
	assert_int_equal(nv.handle_by_index_v2(0, &off), NVML_SUCCESS);
	assert_int_equal(nv.set_mig_mode(off, NVML_DEVICE_MIG_ENABLE, &act),
			 NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(nv.create_gi_with_placement(off, 19, &at, &gi), NVML_ERROR_NOT_SUPPORTED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_read, teardown),
		cmocka_unit_test_teardown(test_plan_carried_out, teardown),
		cmocka_unit_test_teardown(test_failure_half_way, teardown),
		cmocka_unit_test_teardown(test_refuses_instance_of_a_pod, teardown),
		cmocka_unit_test_teardown(test_refuses_instance_with_processes, teardown),
		cmocka_unit_test_teardown(test_read_back_mismatch, teardown),
		cmocka_unit_test_teardown(test_assigned, teardown),
		cmocka_unit_test(test_refs_parse),
		cmocka_unit_test_teardown(test_mig_mode, teardown),
		cmocka_unit_test_teardown(test_actuation_off, teardown),
		cmocka_unit_test_teardown(test_fake_rules, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
