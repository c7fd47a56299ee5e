/*
 * test_kobj_node: the node agent's marks of GPUs and MIG instances out of
 * service (kobj/gpu_marks.h) and their decoding on a Node (kobj/node.h).
 *
 * Each accepted form of kerf.io/unhealthy-gpus and kerf.io/unhealthy-mig
 * gives the marks written; each malformed one is refused with a message
 * naming the annotation and what is wrong.  On a Node, a mark that does not
 * read counts every GPU out of service (never one back in) and says why in
 * marks_error, without making the node invalid; a clone keeps the marks.
 * kerf.io/gpu-utilization (kobj/gpu_util.h) gives each GPU's percent; one
 * that does not read gives no value at all and says why in util_error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kobj/gpu_marks.h"
#include "kobj/gpu_util.h"
#include "kobj/node.h"

static void gpus_ok(const char *s, uint16_t want)
{
	struct kerf_err err = { 0 };
	uint16_t mask = 0xdead;

	if (kerf_gpu_marks_parse_gpus(s, &mask, &err) < 0)
		fail_msg("'%s': %s", s, err.msg);
	assert_int_equal(mask, want);
}

static void gpus_bad(const char *s, const char *part)
{
	struct kerf_err err = { 0 };
	uint16_t mask;

	assert_int_equal(kerf_gpu_marks_parse_gpus(s, &mask, &err), -KERF_EPARSE);
	if (!strstr(err.msg, part) || !strstr(err.msg, "kerf.io/unhealthy-gpus"))
		fail_msg("'%s': message '%s' lacks '%s'", s, err.msg, part);
}

static void test_parse_gpus(void **state)
{
	(void)state;
	gpus_ok("", 0);
	gpus_ok("0", 0x1);
	gpus_ok("1,3", 0xa);
	gpus_ok("0,1,2,15", 0x8007);
	gpus_bad("16", "expected a GPU index 0..15");
	gpus_bad("01", "expected a GPU index 0..15");
	gpus_bad("a", "at offset 0");
	gpus_bad("1,1", "GPU 1: indexes must be ascending without repeats");
	gpus_bad("3,1", "GPU 1: indexes must be ascending");
	gpus_bad("1,", "at offset 1: expected ',' and a GPU index");
	gpus_bad(",1", "at offset 0");
	gpus_bad("1, 3", "at offset 2: expected a GPU index");
	gpus_bad("-1", "at offset 0");
	gpus_bad("1;3", "at offset 1");
}

static void mig_bad(const char *s, const char *part)
{
	struct kerf_mig_mark m[4];
	struct kerf_err err = { 0 };
	size_t nr;

	assert_true(kerf_gpu_marks_parse_mig(s, m, 4, &nr, &err) < 0);
	if (!strstr(err.msg, part) || !strstr(err.msg, "kerf.io/unhealthy-mig"))
		fail_msg("'%s': message '%s' lacks '%s'", s, err.msg, part);
}

static void test_parse_mig(void **state)
{
	struct kerf_mig_mark m[4];
	struct kerf_err err = { 0 };
	size_t nr = 9;

	(void)state;
	assert_int_equal(kerf_gpu_marks_parse_mig("", m, 4, &nr, &err), 0);
	assert_int_equal(nr, 0);
	assert_int_equal(kerf_gpu_marks_parse_mig("0:3g.40gb@4,2:1g.10gb+me@6", m, 4, &nr, &err), 0);
	assert_int_equal(nr, 2);
	assert_int_equal(m[0].gpu, 0);
	assert_string_equal(m[0].profile, "3g.40gb");
	assert_int_equal(m[0].start, 4);
	assert_int_equal(m[1].gpu, 2);
	assert_string_equal(m[1].profile, "1g.10gb+me");
	assert_int_equal(m[1].start, 6);
	mig_bad("0:3g.40gb@8", "expected GPU:PROFILE@START");
	mig_bad("0:@4", "at offset 0");
	mig_bad("0:3G.40GB@4", "at offset 0");
	mig_bad("3g.40gb@4", "at offset 0");
	mig_bad("16:3g.40gb@4", "at offset 0");
	mig_bad("0:3g.40gb@4,", "at offset 11: expected ',' and another instance");
	mig_bad("0:3g.40gb@4 ", "at offset 11");
	mig_bad("0:3g.40gb@44", "at offset 11");
	mig_bad("0:a-very-long-profile@1", "at offset 0");
	err = (struct kerf_err){ 0 };
	assert_int_equal(kerf_gpu_marks_parse_mig("0:1g.10gb@0,0:1g.10gb@1,0:1g.10gb@2,"
						  "0:1g.10gb@3,0:1g.10gb@4", m, 4, &nr, &err),
			 -KERF_ELIMIT);
	assert_string_equal(err.msg, "annotation kerf.io/unhealthy-mig: more than 4 instances");
}

/* A Node of 4 GPUs with the annotation members ann (JSON, may be ""). */
static void decode(const char *ann, struct kerf_knode *n)
{
	char text[2048];
	struct kerf_err err = { 0 };
	json_error_t e;
	json_t *j;

	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"g1\",\"uid\":\"u1\",\"labels\":{"
		 "\"nvidia.com/gpu.product\":\"NVIDIA-A100-SXM4-80GB\","
		 "\"kerf.io/mig-gpus\":\"2\"},\"annotations\":{%s}},"
		 "\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"64Gi\","
		 "\"nvidia.com/gpu\":\"4\"}}}", ann);
	j = json_loads(text, 0, &e);
	if (!j)
		fail_msg("bad test JSON: %s: %s", e.text, text);
	if (kerf_knode_decode(j, n, &err) < 0)
		fail_msg("decode: %s", err.msg);
	json_decref(j);
}

static void test_node_marks(void **state)
{
	struct kerf_knode n, c;

	(void)state;
	decode("", &n);
	assert_int_equal(n.gpus_down, 0);
	assert_int_equal(n.nr_mig_down, 0);
	assert_null(n.marks_error);
	kerf_knode_release(&n);
	decode("\"kerf.io/unhealthy-gpus\":\"\",\"kerf.io/unhealthy-mig\":\"\"", &n);
	assert_int_equal(n.gpus_down, 0);
	assert_null(n.marks_error);
	kerf_knode_release(&n);
	decode("\"kerf.io/unhealthy-gpus\":\"1,3\","
	       "\"kerf.io/unhealthy-mig\":\"0:3g.40gb@4,1:1g.10gb@6\","
	       "\"kerf.io/gpu-health\":\"{\\\"1\\\":\\\"Xid 79\\\"}\"", &n);
	assert_int_equal(n.gpus_down, 0xa);
	assert_int_equal(n.nr_mig_down, 2);
	assert_string_equal(n.mig_down[1].profile, "1g.10gb");
	assert_null(n.marks_error);
	assert_null(n.invalid);
	assert_true(kerf_knode_is_usable(&n));
	/* a clone keeps them, in its own storage */
	assert_int_equal(kerf_knode_clone(&c, &n), 0);
	kerf_knode_release(&n);
	assert_int_equal(c.gpus_down, 0xa);
	assert_int_equal(c.nr_mig_down, 2);
	assert_string_equal(c.mig_down[0].profile, "3g.40gb");
	assert_int_equal(c.mig_down[0].start, 4);
	kerf_knode_release(&c);
}

static void test_node_marks_unreadable(void **state)
{
	struct kerf_knode n, c;

	(void)state;
	/* an unreadable mark: every GPU out, the node still usable, told why */
	decode("\"kerf.io/unhealthy-gpus\":\"1,1\"", &n);
	assert_int_equal(n.gpus_down, UINT16_MAX);
	assert_non_null(n.marks_error);
	assert_string_equal(n.marks_error,
			    "annotation kerf.io/unhealthy-gpus '1,1': GPU 1: indexes must be ascending without repeats");
	assert_null(n.invalid);
	assert_true(kerf_knode_is_usable(&n));
	assert_int_equal(kerf_knode_clone(&c, &n), 0);
	kerf_knode_release(&n);
	assert_string_equal(c.marks_error,
			    "annotation kerf.io/unhealthy-gpus '1,1': GPU 1: indexes must be ascending without repeats");
	kerf_knode_release(&c);
	/* a good GPU list does not save a bad MIG list */
	decode("\"kerf.io/unhealthy-gpus\":\"1\",\"kerf.io/unhealthy-mig\":\"0:3g@x\"", &n);
	assert_int_equal(n.gpus_down, UINT16_MAX);
	assert_int_equal(n.nr_mig_down, 0);
	assert_non_null(strstr(n.marks_error, "kerf.io/unhealthy-mig '0:3g@x'"));
	kerf_knode_release(&n);
	/* an MPS daemon down: its GPU out too; a bad list: all out, named */
	decode("\"kerf.io/unhealthy-gpus\":\"1\",\"kerf.io/mps-failed-gpus\":\"0,2\"", &n);
	assert_int_equal(n.gpus_down, 0x7);
	assert_null(n.marks_error);
	kerf_knode_release(&n);
	decode("\"kerf.io/mps-failed-gpus\":\"2,x\"", &n);
	assert_int_equal(n.gpus_down, UINT16_MAX);
	assert_non_null(strstr(n.marks_error, "annotation kerf.io/mps-failed-gpus '2,x'"));
	kerf_knode_release(&n);
	/* not a string */
	decode("\"kerf.io/unhealthy-gpus\":1", &n);
	assert_int_equal(n.gpus_down, UINT16_MAX);
	assert_string_equal(n.marks_error,
			    "annotation kerf.io/unhealthy-gpus: expected a string, got an integer");
	kerf_knode_release(&n);
}

static void test_parse_util(void **state)
{
	static const struct {
		const char *s, *part;
	} bad[] = {
		{ "0", "item '0': expected GPU:PCT" },
		{ "0:", "item '0:': the percent is not 0..100" },
		{ ":1", "item ':1': the GPU is not an index 0..63" },
		{ "0:101", "item '0:101': the percent is not 0..100" },
		{ "64:1", "item '64:1': the GPU is not an index 0..63" },
		{ "0:1,", "a comma ends the value" },
		{ ",0:1", "empty (expected GPU:PCT)" },
		{ "0:1,0:2", "item '0:2': the GPU appears twice" },
		{ "0:-1", "the percent is not 0..100" },
		{ "0: 1", "the percent is not 0..100" },
		{ "0:1;1:2", "item '0:1;1:2'" },
		{ "0:100000000000000000000", "an item is longer than GPU:PCT can be" },
	};
	int8_t pct[KERF_GPU_UTIL_MAX_GPUS];
	struct kerf_err err = { 0 };

	(void)state;
	assert_int_equal(kerf_gpu_util_parse("0:40,63:100,7:0", pct, &err), 0);
	assert_int_equal(pct[0], 40);
	assert_int_equal(pct[7], 0);
	assert_int_equal(pct[63], 100);
	assert_int_equal(pct[1], -1);
	assert_int_equal(kerf_gpu_util_parse("", pct, &err), 0);
	assert_int_equal(pct[0], -1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct kerf_err e = { 0 };

		assert_int_equal(kerf_gpu_util_parse(bad[i].s, pct, &e), -KERF_EPARSE);
		assert_int_equal(pct[0], -1);           /* no value survives */
		if (!strstr(e.msg, bad[i].part) ||
		    !strstr(e.msg, "annotation kerf.io/gpu-utilization '"))
			fail_msg("'%s': message '%s' lacks '%s'", bad[i].s, e.msg, bad[i].part);
	}
}

static void test_node_util(void **state)
{
	struct kerf_knode n, c;

	(void)state;
	decode("", &n);
	assert_int_equal(n.util_gpus, 0);
	assert_null(n.util_error);
	kerf_knode_release(&n);
	decode("\"kerf.io/gpu-utilization\":\"0:40,1:10,3:0\"", &n);
	assert_int_equal(n.util_gpus, 0xb);
	assert_int_equal(n.util_pct[0], 40);
	assert_int_equal(n.util_pct[1], 10);
	assert_int_equal(n.util_pct[3], 0);
	assert_null(n.util_error);
	assert_int_equal(kerf_knode_clone(&c, &n), 0);
	kerf_knode_release(&n);
	assert_int_equal(c.util_gpus, 0xb);
	assert_int_equal(c.util_pct[0], 40);
	kerf_knode_release(&c);
	/* unreadable: no value at all, told why; the node is otherwise fine */
	decode("\"kerf.io/gpu-utilization\":\"0:40,1:x\"", &n);
	assert_int_equal(n.util_gpus, 0);
	assert_string_equal(n.util_error,
			    "annotation kerf.io/gpu-utilization '0:40,1:x': item '1:x': the percent is not 0..100");
	assert_null(n.invalid);
	assert_null(n.marks_error);
	assert_int_equal(kerf_knode_clone(&c, &n), 0);
	kerf_knode_release(&n);
	assert_non_null(strstr(c.util_error, "item '1:x'"));
	kerf_knode_release(&c);
	decode("\"kerf.io/gpu-utilization\":[1]", &n);
	assert_int_equal(n.util_gpus, 0);
	assert_string_equal(n.util_error,
			    "annotation kerf.io/gpu-utilization: expected a string, got an array");
	kerf_knode_release(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_gpus),
		cmocka_unit_test(test_parse_mig),
		cmocka_unit_test(test_node_marks),
		cmocka_unit_test(test_node_marks_unreadable),
		cmocka_unit_test(test_parse_util),
		cmocka_unit_test(test_node_util),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
