/*
 * dp_match (deviceplugin/match.h): kerf.io/assigned-gpus parsing; the
 * Allocate to pod matching (exact, one container of several, unknown
 * device, devices no pod was assigned, a double booking); and the
 * preferred allocation (kerf's assignment first, then the NUMA node).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "deviceplugin/match.h"

/* A whole GPU, and a pod given whole GPUs. */
#define DEV(i, g, n, h) { .id = i, .gpu_index = g, .numa_node = n, .healthy = h }
#define POD(k, m) { .key = k, .gpu_mask = m }

/* GPU i is "GPU-i"; GPUs 0-3 on NUMA node 0, 4-7 on node 1. */
static const struct kerf_dp_device devs[] = {
	DEV("GPU-0", 0, 0, 1), DEV("GPU-1", 1, 0, 1), DEV("GPU-2", 2, 0, 1),
	DEV("GPU-3", 3, 0, 1), DEV("GPU-4", 4, 1, 1), DEV("GPU-5", 5, 1, 1),
	DEV("GPU-6", 6, 1, 1), DEV("GPU-7", 7, 1, 1),
};
enum { N_DEVS = 8 };

static void test_parse(void **state)
{
	uint64_t m = 0;
	struct kerf_err err = { 0 };
	(void)state;

	assert_int_equal(kerf_dp_assigned_parse("0,1,3", &m, NULL), 0);
	assert_int_equal(m, 0xb);
	assert_int_equal(kerf_dp_assigned_parse("63", &m, NULL), 0);
	assert_true(m == UINT64_C(1) << 63);
	static const char *const bad[][2] = {
		{ "", "empty" }, { "0,,1", "expected a GPU index at offset 2" },
		{ "0,1,", "expected a GPU index at offset 4" },
		{ "64", "index over 63" }, { "1,1", "index 1 repeated" },
		{ "0;1", "expected ',' at offset 1" }, { "-1", "expected a GPU index" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		kerf_err_clear(&err);
		assert_int_equal(kerf_dp_assigned_parse(bad[i][0], &m, &err), -KERF_EPARSE);
		assert_non_null(strstr(err.msg, "kerf.io/assigned-gpus"));
		assert_non_null(strstr(err.msg, bad[i][1]));
	}
}

static void test_allocate_exact(void **state)
{
	char *ids[] = { "GPU-3", "GPU-1" };
	const struct kerf_dp_pod_assign pods[] = {
		POD("a/one", 0x1), POD("a/two", 0xa), POD("a/big", 0xf),
	};
	(void)state;
	/* {1,3} equals a/two and is inside a/big: the equal one wins. */
	assert_int_equal(kerf_dp_allocate_match(devs, N_DEVS, ids, 2, pods, 3, NULL), 1);
	/* {1}: inside a/two and a/big, equal to none: ambiguous, refused. */
	struct kerf_err err = { 0 };
	assert_int_equal(kerf_dp_allocate_match(devs, N_DEVS, ids + 1, 1, pods, 3, &err),
			 -KERF_EEXIST);
	assert_non_null(strstr(err.msg, "part of the assignment of 2 pods"));
}

static void test_allocate_container_of_pod(void **state)
{
	char *ids[] = { "GPU-5" };
	const struct kerf_dp_pod_assign pods[] = { POD("a/one", 0x1), POD("b/multi", 0x30) };
	(void)state;
	assert_int_equal(kerf_dp_allocate_match(devs, N_DEVS, ids, 1, pods, 2, NULL), 1);
}

static void test_allocate_refused(void **state)
{
	struct kerf_err err = { 0 };
	const struct kerf_dp_pod_assign pods[] = { POD("a/one", 0x3), POD("a/dup", 0x3) };
	(void)state;

	char *unknown[] = { "GPU-9" };
	assert_int_equal(kerf_dp_allocate_match(devs, N_DEVS, unknown, 1, pods, 1, &err),
			 -KERF_ENOTFOUND);
	assert_non_null(strstr(err.msg, "device 'GPU-9' is not one this plugin serves"));

	kerf_err_clear(&err);
	char *other[] = { "GPU-2", "GPU-0" };
	assert_int_equal(kerf_dp_allocate_match(devs, N_DEVS, other, 2, pods, 1, &err),
			 -KERF_ENOTFOUND);
	assert_non_null(strstr(err.msg, "GPUs 0,2"));
	assert_non_null(strstr(err.msg, "not what kerf assigned"));

	kerf_err_clear(&err);
	char *twice[] = { "GPU-0", "GPU-0" };
	assert_int_equal(kerf_dp_allocate_match(devs, N_DEVS, twice, 2, pods, 1, &err),
			 -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "requested twice"));

	kerf_err_clear(&err);
	char *both[] = { "GPU-0", "GPU-1" };
	assert_int_equal(kerf_dp_allocate_match(devs, N_DEVS, both, 2, pods, 2, &err),
			 -KERF_EEXIST);
	assert_non_null(strstr(err.msg, "'a/one' and 'a/dup'"));

	kerf_err_clear(&err);
	assert_int_equal(kerf_dp_allocate_match(devs, N_DEVS, both, 0, pods, 2, &err),
			 -KERF_EINVAL);
	/* No pods at all: refused. */
	assert_int_equal(kerf_dp_allocate_match(devs, N_DEVS, both, 2, NULL, 0, NULL),
			 -KERF_ENOTFOUND);
}

static void test_prefer_assignment(void **state)
{
	char *avail[] = { "GPU-0", "GPU-1", "GPU-2", "GPU-5", "GPU-6" };
	const struct kerf_dp_pod_assign pods[] = {
		POD("a/three", 0x7),  /* size 3: not this request */
		POD("a/gone", 0x81),  /* GPU 7 not available */
		POD("a/mine", 0x24),  /* GPUs 2 and 5 */
	};
	size_t out[2];
	(void)state;

	assert_int_equal(kerf_dp_prefer(devs, N_DEVS, avail, 5, NULL, 0, 2, pods, 3, out, NULL), 2);
	assert_string_equal(avail[out[0]], "GPU-2");
	assert_string_equal(avail[out[1]], "GPU-5");
	/* must_include GPU-0 rules a/mine out: topology, node 0. */
	char *must[] = { "GPU-0" };
	assert_int_equal(kerf_dp_prefer(devs, N_DEVS, avail, 5, must, 1, 2, pods, 3, out, NULL), 2);
	assert_string_equal(avail[out[0]], "GPU-0");
	assert_string_equal(avail[out[1]], "GPU-1");
}

static void test_prefer_topology(void **state)
{
	char *avail[] = { "GPU-0", "GPU-4", "GPU-5", "GPU-6" };
	size_t out[4];
	struct kerf_err err = { 0 };
	(void)state;

	/* Node 1 has the most: GPUs 4 and 5. */
	assert_int_equal(kerf_dp_prefer(devs, N_DEVS, avail, 4, NULL, 0, 2, NULL, 0, out, NULL), 2);
	assert_string_equal(avail[out[0]], "GPU-4");
	assert_string_equal(avail[out[1]], "GPU-5");
	/* must_include GPU-5: then node 1's others in order. */
	char *must[] = { "GPU-5" };
	assert_int_equal(kerf_dp_prefer(devs, N_DEVS, avail, 4, must, 1, 3, NULL, 0, out, NULL), 3);
	assert_string_equal(avail[out[0]], "GPU-5");
	assert_string_equal(avail[out[1]], "GPU-4");
	assert_string_equal(avail[out[2]], "GPU-6");
	/* Spill onto the other node when one is not enough. */
	assert_int_equal(kerf_dp_prefer(devs, N_DEVS, avail, 4, must, 1, 4, NULL, 0, out, NULL), 4);
	assert_string_equal(avail[out[3]], "GPU-0");
	/* Too few available: fewer than asked. */
	assert_int_equal(kerf_dp_prefer(devs, N_DEVS, avail, 2, NULL, 0, 3, NULL, 0, out, NULL), 2);
	/* must_include not available, or more than the size. */
	char *gone[] = { "GPU-7" };
	assert_int_equal(kerf_dp_prefer(devs, N_DEVS, avail, 4, gone, 1, 2, NULL, 0, out, &err),
			 -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "'GPU-7' is not in available_deviceIDs"));
	kerf_err_clear(&err);
	assert_int_equal(kerf_dp_prefer(devs, N_DEVS, avail, 4, must, 1, 0, NULL, 0, out, &err),
			 -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "more than allocation_size"));
	/* Over the bound of available devices. */
	char *many[KERF_DP_MAX_AVAILABLE + 1];
	for (size_t i = 0; i <= KERF_DP_MAX_AVAILABLE; i++)
		many[i] = "GPU-0";
	kerf_err_clear(&err);
	assert_int_equal(kerf_dp_prefer(devs, N_DEVS, many, KERF_DP_MAX_AVAILABLE + 1, NULL, 0,
					1, NULL, 0, out, &err), -KERF_ELIMIT);
	assert_non_null(strstr(err.msg, "available_deviceIDs: 257 devices, over 256"));
	assert_int_equal(kerf_dp_prefer(devs, N_DEVS, many, KERF_DP_MAX_AVAILABLE, NULL, 0,
					1, NULL, 0, out, NULL), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_allocate_exact),
		cmocka_unit_test(test_allocate_container_of_pod),
		cmocka_unit_test(test_allocate_refused),
		cmocka_unit_test(test_prefer_assignment),
		cmocka_unit_test(test_prefer_topology),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
