/*
 * test_kobj_node: the node agent's marks of GPUs and MIG instances out of
 * service (kobj/gpu_marks.h) and their decoding on a Node (kobj/node.h).
 *
 * Each accepted form of kerf.io/unhealthy-gpus and kerf.io/unhealthy-mig
 * gives the marks written; each malformed one is refused with a message
 * naming the annotation and what is wrong.  On a Node, a mark that does not
 * read counts every GPU out of service (never one back in) and says why in
 * marks_error, without making the node invalid; a clone keeps the marks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kobj/gpu_marks.h"
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
	/* not a string */
	decode("\"kerf.io/unhealthy-gpus\":1", &n);
	assert_int_equal(n.gpus_down, UINT16_MAX);
	assert_string_equal(n.marks_error,
			    "annotation kerf.io/unhealthy-gpus: expected a string, got an integer");
	kerf_knode_release(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_gpus),
		cmocka_unit_test(test_parse_mig),
		cmocka_unit_test(test_node_marks),
		cmocka_unit_test(test_node_marks_unreadable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
