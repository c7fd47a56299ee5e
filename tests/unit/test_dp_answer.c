/*
 * dp_answer (deviceplugin/answer.h, and the annotation decoders of
 * match.h): kerf.io/assigned-mig, -fraction and gpu-sharing parsing and a
 * pod's whole assignment; each container's answer for whole GPUs, a MIG
 * instance (the assigned one, refused otherwise) and a share (time-slicing:
 * the GPU; MPS: the GPU, the pipe directory's mount and the CUDA_MPS_*
 * variables of the fraction), and the refusals: no daemon, a failed
 * daemon, a fraction over the daemon's limits, pods that disagree, kinds
 * mixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "deviceplugin/answer.h"

#define DEV(i, g) { .id = i, .gpu_index = g, .numa_node = 0, .healthy = 1 }
#define MIG(i, g, prof, s) { .id = i, .gpu_index = g, .numa_node = 0, .healthy = 1, \
	.kind = KERF_DP_DEV_MIG, .mig_profile = prof, .mig_start = s }
#define SHARE(i, g, gid) { .id = i, .gpu_index = g, .numa_node = 0, .healthy = 1, \
	.kind = KERF_DP_DEV_SHARE, .gpu_id = gid, .mem_mib = 81559 }

static const struct kerf_dp_device devs[] = {
	DEV("GPU-0", 0), DEV("GPU-1", 1),
	MIG("MIG-a", 2, "3g.40gb", 4), MIG("MIG-b", 2, "3g.40gb", 0),
	MIG("MIG-c", 2, "1g.10gb", 6),
	SHARE("GPU-3::0", 3, "GPU-3"), SHARE("GPU-3::1", 3, "GPU-3"),
	SHARE("GPU-4::0", 4, "GPU-4"),
};
enum { N_DEVS = sizeof(devs) / sizeof(devs[0]) };

/* The MPS daemons the answer may ask about. */
struct daemons {
	int calls;
	int have;            /* 0: none */
	struct kerf_dp_mps d;
	uint32_t gpu, uid;   /* what it was asked */
};

static int lookup(void *arg, uint32_t gpu_index, uint32_t uid, struct kerf_dp_mps *out)
{
	struct daemons *ds = arg;
	ds->calls++;
	ds->gpu = gpu_index;
	ds->uid = uid;
	if (!ds->have)
		return -KERF_ENOTFOUND;
	*out = ds->d;
	return 0;
}

static void pod(struct kerf_dp_pod_assign *p, const char *key, const char *gpus,
		const char *mig, const char *frac, const char *sharing, uint32_t uid)
{
	struct kerf_err err = { 0 };
	int rc = kerf_dp_pod_assign_parse(p, key, gpus, mig, frac, sharing, uid, &err);
	if (rc < 0)
		fail_msg("%s: %s", key, err.msg);
}

static void test_parse_mig(void **state)
{
	char prof[KERF_DP_MIG_PROFILE_MAX];
	uint32_t start = 99;
	struct kerf_err err = { 0 };
	(void)state;

	assert_int_equal(kerf_dp_mig_parse("3g.40gb@4", prof, &start, NULL), 0);
	assert_string_equal(prof, "3g.40gb");
	assert_int_equal(start, 4);
	assert_int_equal(kerf_dp_mig_parse("1g.10gb+me@6", prof, &start, NULL), 0);
	assert_string_equal(prof, "1g.10gb+me");
	assert_int_equal(kerf_dp_mig_parse("7g.141gb@0", prof, &start, NULL), 0);
	assert_int_equal(start, 0);
	assert_int_equal(kerf_dp_mig_parse("1g.9999gb+abcdefgh@7", prof, &start, NULL), 0);
	assert_string_equal(prof, "1g.9999gb+abcdefgh");
	static const char *const bad[][2] = {
		{ "", "empty" },
		{ "3g.40gb", "expected PROFILE@START" },
		{ "3g.40gb@8", "start must be a memory slice 0..7" },
		{ "3g.40gb@", "start must be" },
		{ "3g.40gb@04", "start must be" },
		{ "3g.40gb@4x", "start must be" },
		{ "3g.40gb@-1", "start must be" },
		{ "0g.5gb@0", "profile must be <slices>g.<memory>gb" },
		{ "8g.80gb@0", "profile must be" },
		{ "3g40gb@1", "profile must be" },
		{ "3g.040gb@1", "profile must be" },
		{ "3g.40gb+@1", "1..8 lower-case letters after '+'" },
		{ "3g.40gb+ABC@1", "1..8 lower-case letters" },
		{ "3g.40gb+abcdefghi@1", "1..8 lower-case letters" },
		{ "3g.40gbx@1", "unexpected character at offset 7" },
		{ "3g.40gb@1@2", "start must be" },
		{ "@1", "profile must be" },
		{ "3g.40gb\n@1", "unexpected character" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		kerf_err_clear(&err);
		assert_int_equal(kerf_dp_mig_parse(bad[i][0], prof, &start, &err), -KERF_EPARSE);
		assert_non_null(strstr(err.msg, "kerf.io/assigned-mig"));
		if (!strstr(err.msg, bad[i][1]))
			fail_msg("'%s': %s", bad[i][0], err.msg);
	}
	/* the newline is escaped in the message */
	assert_null(strchr(err.msg, '\n'));
}

static void test_parse_fraction_sharing(void **state)
{
	uint32_t m = 0;
	enum kerf_dp_sharing sh = KERF_DP_SHARE_NONE;
	struct kerf_err err = { 0 };
	(void)state;

	assert_int_equal(kerf_dp_fraction_parse("250m", &m, NULL), 0);
	assert_int_equal(m, 250);
	assert_int_equal(kerf_dp_fraction_parse("0.5", &m, NULL), 0);
	assert_int_equal(m, 500);
	assert_int_equal(kerf_dp_fraction_parse("999m", &m, NULL), 0);
	assert_int_equal(kerf_dp_fraction_parse("1", &m, &err), -KERF_ERANGE);
	assert_non_null(strstr(err.msg, "kerf.io/assigned-fraction '1': must be 1m..999m"));
	assert_int_equal(kerf_dp_fraction_parse("0m", &m, NULL), -KERF_ERANGE);
	assert_int_equal(kerf_dp_fraction_parse("-250m", &m, NULL), -KERF_ERANGE);
	kerf_err_clear(&err);
	assert_int_equal(kerf_dp_fraction_parse("a quarter", &m, &err), -KERF_EPARSE);
	assert_non_null(strstr(err.msg, "expected a fraction of one GPU such as 250m"));
	assert_int_equal(kerf_dp_fraction_parse("", &m, NULL), -KERF_EPARSE);
	assert_int_equal(m, 999);

	assert_int_equal(kerf_dp_sharing_parse("mps", &sh, NULL), 0);
	assert_int_equal(sh, KERF_DP_SHARE_MPS);
	assert_int_equal(kerf_dp_sharing_parse("timeslice", &sh, NULL), 0);
	assert_int_equal(sh, KERF_DP_SHARE_TIMESLICE);
	kerf_err_clear(&err);
	assert_int_equal(kerf_dp_sharing_parse("MPS", &sh, &err), -KERF_EPARSE);
	assert_non_null(strstr(err.msg, "kerf.io/gpu-sharing 'MPS': expected mps or timeslice"));
}

static void test_parse_pod(void **state)
{
	struct kerf_dp_pod_assign p;
	struct kerf_err err = { 0 };
	(void)state;

	assert_int_equal(kerf_dp_pod_assign_parse(&p, "a/f", "3", NULL, "250m", "mps", 1000,
						  NULL), 0);
	assert_int_equal(p.gpu_mask, 0x8);
	assert_int_equal(p.fraction_milli, 250);
	assert_int_equal(p.sharing, KERF_DP_SHARE_MPS);
	assert_int_equal(p.uid, 1000);
	assert_false(kerf_dp_pod_is_whole(&p));
	assert_int_equal(kerf_dp_pod_assign_parse(&p, "a/m", "2", "3g.40gb@4", NULL, NULL, 0,
						  NULL), 0);
	assert_string_equal(p.mig_profile, "3g.40gb");
	assert_int_equal(p.mig_start, 4);
	assert_int_equal(kerf_dp_pod_assign_parse(&p, "a/w", "0,1", NULL, NULL, NULL, 0, NULL),
			 0);
	assert_true(kerf_dp_pod_is_whole(&p));
	static const struct {
		const char *gpus, *mig, *frac, *sharing, *want;
	} bad[] = {
		{ NULL, NULL, NULL, NULL, "kerf.io/assigned-gpus: missing" },
		{ "0,1", "3g.40gb@4", NULL, NULL, "a MIG instance (kerf.io/assigned-mig) is on exactly one GPU, not 2" },
		{ "0,1", NULL, "250m", NULL, "a fraction (kerf.io/assigned-fraction) is on exactly one GPU" },
		{ "0", "3g.40gb@4", "250m", NULL, "a pod gets one or the other" },
		{ "0", NULL, NULL, "mps", "kerf.io/gpu-sharing: applies to a fraction" },
		{ "0", "3g.40gb", NULL, NULL, "kerf.io/assigned-mig '3g.40gb'" },
		{ "0", NULL, "2", NULL, "kerf.io/assigned-fraction '2'" },
		{ "0", NULL, "250m", "both", "kerf.io/gpu-sharing 'both'" },
		{ "x", NULL, NULL, NULL, "kerf.io/assigned-gpus 'x'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&p, 0x5a, sizeof(p));
		kerf_err_clear(&err);
		assert_true(kerf_dp_pod_assign_parse(&p, "a/b", bad[i].gpus, bad[i].mig, bad[i].frac,
						     bad[i].sharing, 0, &err) < 0);
		if (!strstr(err.msg, bad[i].want))
			fail_msg("case %zu: %s", i, err.msg);
		assert_int_equal(p.gpu_mask, 0x5a5a5a5a5a5a5a5aull);   /* untouched */
	}
}

static void test_whole_gpus(void **state)
{
	struct kerf_dp_pod_assign pods[3];
	struct kerf_dp_answer a;
	char *ids[] = { "GPU-1", "GPU-0" };
	(void)state;

	/* a MIG pod and a fraction on GPU 0/1 are no candidates for whole GPUs */
	pod(&pods[0], "a/mig", "1", "3g.40gb@4", NULL, NULL, 0);
	pod(&pods[1], "a/frac", "0", NULL, "500m", NULL, 0);
	pod(&pods[2], "a/whole", "0,1", NULL, NULL, NULL, 0);
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, ids, 2, pods, 3, NULL, NULL, &a, NULL), 0);
	assert_int_equal(a.pod, 2);
	assert_int_equal(a.kind, KERF_DP_DEV_GPU);
	assert_int_equal(a.n_ids, 2);
	assert_string_equal(a.ids[0], "GPU-1");
	assert_string_equal(a.ids[1], "GPU-0");
	assert_int_equal(a.n_envs, 0);
	assert_string_equal(a.mount_path, "");
	/* GPU 1 alone: only the MIG pod has it, and it is not a whole GPU */
	struct kerf_err err = { 0 };
	pods[2].gpu_mask = 0x1;
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, ids, 1, pods, 3, NULL, NULL, &a, &err),
			 -KERF_ENOTFOUND);
	assert_non_null(strstr(err.msg, "not what kerf assigned"));
}

static void test_mig(void **state)
{
	struct kerf_dp_pod_assign pods[3];
	struct kerf_dp_answer a;
	struct kerf_err err = { 0 };
	char *a_id[] = { "MIG-a" }, *b_id[] = { "MIG-b" }, *c_id[] = { "MIG-c" };
	(void)state;

	pod(&pods[0], "a/whole", "2", NULL, NULL, NULL, 0);
	pod(&pods[1], "a/mig4", "2", "3g.40gb@4", NULL, NULL, 0);
	pod(&pods[2], "a/other-gpu", "5", "3g.40gb@0", NULL, NULL, 0);
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, a_id, 1, pods, 3, NULL, NULL, &a, NULL), 0);
	assert_int_equal(a.pod, 1);
	assert_int_equal(a.kind, KERF_DP_DEV_MIG);
	assert_int_equal(a.n_ids, 1);
	assert_string_equal(a.ids[0], "MIG-a");
	assert_int_equal(a.n_envs, 0);
	/* the same profile at another start: not the assigned instance */
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, b_id, 1, pods, 3, NULL, NULL, &a, &err),
			 -KERF_ENOTFOUND);
	assert_non_null(strstr(err.msg, "MIG device 'MIG-b' is 3g.40gb@0 on GPU 2, but 'a/mig4' was assigned 3g.40gb@4"));
	/* no pod has a MIG instance like it */
	kerf_err_clear(&err);
	pods[1].mig_profile[0] = '\0';
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, c_id, 1, pods, 3, NULL, NULL, &a, &err),
			 -KERF_ENOTFOUND);
	assert_non_null(strstr(err.msg, "(1g.10gb@6 on GPU 2) is not the instance kerf assigned to any pending pod"));
	/* the same instance assigned twice */
	pod(&pods[0], "a/one", "2", "1g.10gb@6", NULL, NULL, 0);
	pod(&pods[1], "a/two", "2", "1g.10gb@6", NULL, NULL, 0);
	kerf_err_clear(&err);
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, c_id, 1, pods, 3, NULL, NULL, &a, &err),
			 -KERF_EEXIST);
	assert_non_null(strstr(err.msg, "assigned to both 'a/one' and 'a/two'"));
	/* two instances, or kinds mixed, are not requests kerf's pods make */
	char *two[] = { "MIG-a", "MIG-c" }, *mixed[] = { "GPU-0", "MIG-a" };
	kerf_err_clear(&err);
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, two, 2, pods, 3, NULL, NULL, &a, &err),
			 -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "2 MIG instances in one request"));
	kerf_err_clear(&err);
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, mixed, 2, pods, 3, NULL, NULL, &a, &err),
			 -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "'GPU-0' and 'MIG-a' are different kinds of device"));
	char *unknown[] = { "MIG-z" };
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, unknown, 1, pods, 3, NULL, NULL, &a, NULL),
			 -KERF_ENOTFOUND);
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, unknown, 0, pods, 3, NULL, NULL, &a, NULL),
			 -KERF_EINVAL);
}

static const struct kerf_dp_mps healthy = {
	.healthy = 1, .pipe_dir = "/run/kerf/mps/GPU-3/1000/pipe",
	.limits = { .thread_pct = 25, .pinned_mem_mib = 20389 },
};

static void test_mps(void **state)
{
	struct kerf_dp_pod_assign pods[2];
	struct kerf_dp_answer a;
	struct daemons ds = { .have = 1, .d = healthy };
	char *ids[] = { "GPU-3::1" };
	(void)state;

	pod(&pods[0], "a/gpu4", "4", NULL, "500m", "mps", 1000);
	pod(&pods[1], "a/frac", "3", NULL, "250m", "mps", 1000);
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, ids, 1, pods, 2, lookup, &ds, &a, NULL), 0);
	assert_int_equal(ds.calls, 1);
	assert_int_equal(ds.gpu, 3);
	assert_int_equal(ds.uid, 1000);
	assert_int_equal(a.pod, 1);
	assert_int_equal(a.kind, KERF_DP_DEV_SHARE);
	assert_int_equal(a.n_ids, 1);
	assert_string_equal(a.ids[0], "GPU-3");   /* the GPU, not the share */
	assert_int_equal(a.n_envs, 3);
	assert_string_equal(a.envs[0].key, "CUDA_MPS_PIPE_DIRECTORY");
	assert_string_equal(a.envs[0].value, "/run/kerf/mps/GPU-3/1000/pipe");
	assert_string_equal(a.envs[1].key, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
	assert_string_equal(a.envs[1].value, "25");
	assert_string_equal(a.envs[2].key, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT");
	assert_string_equal(a.envs[2].value, "0=20389M");
	assert_string_equal(a.mount_path, "/run/kerf/mps/GPU-3/1000/pipe");
	/* a smaller fraction narrows the limits further */
	pods[1].fraction_milli = 100;
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, ids, 1, pods, 2, lookup, &ds, &a, NULL), 0);
	assert_string_equal(a.envs[1].value, "10");
	assert_string_equal(a.envs[2].value, "0=8155M");
	/* two pods of the same tenant and fraction: the same answer for either */
	pod(&pods[0], "a/frac2", "3", NULL, "100m", "mps", 1000);
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, ids, 1, pods, 2, lookup, &ds, &a, NULL), 0);
	assert_int_equal(a.pod, 0);
	/* time-slicing: the GPU only */
	pod(&pods[0], "a/ts", "4", NULL, "500m", "timeslice", 0);
	char *ids4[] = { "GPU-4::0" };
	ds.calls = 0;
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, ids4, 1, pods, 2, lookup, &ds, &a, NULL), 0);
	assert_int_equal(a.pod, 0);
	assert_string_equal(a.ids[0], "GPU-4");
	assert_int_equal(a.n_envs, 0);
	assert_string_equal(a.mount_path, "");
	assert_int_equal(ds.calls, 0);
	/* no sharing named: time-slicing as far as the plugin goes */
	pod(&pods[0], "a/plain", "4", NULL, "500m", NULL, 0);
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, ids4, 1, pods, 2, NULL, NULL, &a, NULL), 0);
	assert_int_equal(a.n_envs, 0);
}

static void test_mps_refused(void **state)
{
	struct kerf_dp_pod_assign pods[2];
	struct kerf_dp_answer a;
	struct kerf_err err = { 0 };
	struct daemons ds = { .have = 1, .d = healthy };
	char *ids[] = { "GPU-3::0" };
	(void)state;

	pod(&pods[0], "t/frac", "3", NULL, "250m", "mps", 1000);
	/* the daemon failed: its slices are failed, no new client */
	ds.d.healthy = 0;
	snprintf(ds.d.why, sizeof(ds.d.why), "process 4242 is gone");
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, ids, 1, pods, 1, lookup, &ds, &a, &err),
			 -KERF_EBUSY);
	assert_non_null(strstr(err.msg, "the MPS daemon of GPU 3 (UID 1000) has failed"));
	assert_non_null(strstr(err.msg, "until it is healthy again: process 4242 is gone"));
	/* none runs (or no MPS on this node at all) */
	ds.have = 0;
	kerf_err_clear(&err);
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, ids, 1, pods, 1, lookup, &ds, &a, &err),
			 -KERF_EBUSY);
	assert_non_null(strstr(err.msg, "'t/frac' shares GPU 3 through MPS, but no MPS daemon runs on it for UID 1000"));
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, ids, 1, pods, 1, NULL, NULL, &a, NULL),
			 -KERF_EBUSY);
	/* the fraction needs more than the daemon gives */
	ds.have = 1;
	ds.d = healthy;
	pods[0].fraction_milli = 300;
	kerf_err_clear(&err);
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, ids, 1, pods, 1, lookup, &ds, &a, &err),
			 -KERF_ERANGE);
	assert_non_null(strstr(err.msg, "'t/frac': kerf.io/assigned-fraction 300m of GPU 3 needs 30% of its threads and 24467 MiB, more than its MPS daemon's 25% and 20389 MiB"));
	/* memory alone over */
	pods[0].fraction_milli = 250;
	ds.d.limits.pinned_mem_mib = 20000;
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, ids, 1, pods, 1, lookup, &ds, &a, NULL),
			 -KERF_ERANGE);
	ds.d = healthy;
	/* a relative pipe directory is never mounted */
	snprintf(ds.d.pipe_dir, sizeof(ds.d.pipe_dir), "run/mps");
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, ids, 1, pods, 1, lookup, &ds, &a, NULL),
			 -KERF_EINVAL);
	ds.d = healthy;
	/* two pending pods on GPU 3 that would get different answers */
	pod(&pods[1], "u/frac", "3", NULL, "250m", "mps", 2000);
	kerf_err_clear(&err);
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, ids, 1, pods, 2, lookup, &ds, &a, &err),
			 -KERF_EEXIST);
	assert_non_null(strstr(err.msg, "'t/frac' and 'u/frac' both wait for a share of GPU 3 with different MPS settings"));
	pod(&pods[1], "t/bigger", "3", NULL, "200m", "mps", 1000);
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, ids, 1, pods, 2, lookup, &ds, &a, NULL),
			 -KERF_EEXIST);
	pod(&pods[1], "t/ts", "3", NULL, "250m", "timeslice", 1000);
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, ids, 1, pods, 2, lookup, &ds, &a, NULL),
			 -KERF_EEXIST);
	/* no pod has a fraction of GPU 3; two shares in one request */
	pod(&pods[0], "t/whole", "3", NULL, NULL, NULL, 0);
	kerf_err_clear(&err);
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, ids, 1, pods, 1, lookup, &ds, &a, &err),
			 -KERF_ENOTFOUND);
	assert_non_null(strstr(err.msg, "share 'GPU-3::0' of GPU 3: no pending pod on this node has a fraction of it"));
	char *two[] = { "GPU-3::0", "GPU-3::1" };
	assert_int_equal(kerf_dp_answer(devs, N_DEVS, two, 2, pods, 1, lookup, &ds, &a, NULL),
			 -KERF_EINVAL);
}

static void test_prefer(void **state)
{
	struct kerf_dp_pod_assign pods[2];
	char *avail[] = { "MIG-b", "MIG-c", "MIG-a" };
	char *shares[] = { "GPU-3::0", "GPU-4::0" };
	size_t out[2];
	(void)state;

	pod(&pods[0], "a/w", "0", NULL, NULL, NULL, 0);
	pod(&pods[1], "a/m", "2", "3g.40gb@4", NULL, NULL, 0);
	assert_int_equal(kerf_dp_prefer(devs, N_DEVS, avail, 3, NULL, 0, 1, pods, 2, out, NULL), 1);
	assert_int_equal(out[0], 2);   /* MIG-a, the assigned instance */
	pod(&pods[1], "a/f", "4", NULL, "250m", "mps", 7);
	assert_int_equal(kerf_dp_prefer(devs, N_DEVS, shares, 2, NULL, 0, 1, pods, 2, out, NULL),
			 1);
	assert_int_equal(out[0], 1);   /* a share of GPU 4 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_mig),
		cmocka_unit_test(test_parse_fraction_sharing),
		cmocka_unit_test(test_parse_pod),
		cmocka_unit_test(test_whole_gpus),
		cmocka_unit_test(test_mig),
		cmocka_unit_test(test_mps),
		cmocka_unit_test(test_mps_refused),
		cmocka_unit_test(test_prefer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
