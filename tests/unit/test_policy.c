/*
 * Unit tests for core/policy: the registry holds exactly the eight named
 * policies (in order), lookup and kerf_policy_build by name, each built
 * policy is the fit filter plus its score plug-in, an unknown name is a
 * negative error naming it, and policies that need the workload's typical
 * pods (fgd, kerf with online=0) fail with a message without them, and
 * options are checked against the policies selected before any is built.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/plugins/plugins.h"
#include "core/policy.h"

static const char *const names[] = {
	"random", "dotprod", "gpu-packing", "gpu-clustering",
	"best-fit", "first-fit", "fgd", "kerf",
};

enum { NR_NAMES = sizeof(names) / sizeof(names[0]) };

static void one_node(struct kerf_cluster *c)
{
	kerf_cluster_init(c);
	assert_int_equal(kerf_cluster_model(c, "g", 0, NULL), 0);
	assert_int_equal(kerf_cluster_add_node(c, "n", 8000, 8192, 0, 2, NULL),
			 0);
}

static void one_entry_dist(struct kerf_pod_dist *d, struct kerf_dist_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->pod = (struct kerf_pod){ .cpu_milli = 1000, .nr_gpus = 1,
				    .gpu_milli = 500 };
	e->weight = 1;
	*d = (struct kerf_pod_dist){ .entries = e, .nr = 1, .alloc = 1,
				     .total_weight = 1 };
}

static void test_registry_is_exact(void **state)
{
	(void)state;
	assert_int_equal(kerf_policy_count(), NR_NAMES);
	for (size_t i = 0; i < NR_NAMES; i++) {
		const struct kerf_policy_info *info = kerf_policy_at(i);

		assert_non_null(info);
		assert_string_equal(info->name, names[i]);
		assert_non_null(info->summary);
		assert_true(strlen(info->summary) > 0);
		assert_non_null(info->scorer);
		assert_non_null(info->scorer->score);
		/* The plug-in carries the policy's name. */
		assert_string_equal(info->scorer->name, names[i]);
		assert_ptr_equal(kerf_policy_lookup(names[i]), info);
	}
	assert_null(kerf_policy_at(NR_NAMES));
	assert_null(kerf_policy_at(SIZE_MAX));
	assert_non_null(kerf_policy_lookup(KERF_POLICY_DEFAULT));
	assert_string_equal(KERF_POLICY_DEFAULT, "kerf");
}

static void test_lookup_is_exact_match(void **state)
{
	(void)state;
	assert_null(kerf_policy_lookup("nope"));
	assert_null(kerf_policy_lookup(""));
	assert_null(kerf_policy_lookup("Random"));
	assert_null(kerf_policy_lookup("best"));
	assert_null(kerf_policy_lookup("best-fit "));
	assert_null(kerf_policy_lookup("fit"));
}

static void test_build_every_policy(void **state)
{
	struct kerf_cluster c;
	struct kerf_pod_dist d;
	struct kerf_dist_entry e;

	(void)state;
	one_node(&c);
	one_entry_dist(&d, &e);
	for (size_t i = 0; i < NR_NAMES; i++) {
		struct kerf_policy_args args = { .cluster = &c, .dist = &d,
						 .seed = 1 };
		struct kerf_policy pol;
		struct kerf_err err = { 0 };

		assert_int_equal(kerf_policy_build(&pol, names[i], &args, &err),
				 0);
		assert_int_equal(err.code, 0);
		assert_string_equal(pol.name, names[i]);
		assert_int_equal(pol.nr_filters, 1);
		assert_ptr_equal(pol.filters[0].plugin, &kerf_plugin_fit);
		assert_int_equal(pol.nr_scorers, 1);
		assert_ptr_equal(pol.scorers[0].plugin,
				 kerf_policy_lookup(names[i])->scorer);
		assert_int_equal(pol.scorers[0].weight, 1);
		kerf_policy_release(&pol);
		assert_int_equal(pol.nr_filters, 0);
		assert_int_equal(pol.nr_scorers, 0);
		assert_null(pol.name);
	}
	kerf_cluster_release(&c);
}

static void test_built_policy_places(void **state)
{
	struct kerf_cluster c;
	struct kerf_pod_dist d;
	struct kerf_dist_entry e;
	struct kerf_pod p = { .cpu_milli = 1000, .nr_gpus = 1, .gpu_milli = 500 };
	struct kerf_pod too_big = { .cpu_milli = 9000 };

	(void)state;
	one_node(&c);
	one_entry_dist(&d, &e);
	for (size_t i = 0; i < NR_NAMES; i++) {
		struct kerf_policy_args args = { .cluster = &c, .dist = &d };
		struct kerf_policy pol;
		struct kerf_sched s;
		struct kerf_binding b = { 9, 0, 0 };
		struct kerf_status st;

		assert_int_equal(kerf_policy_build(&pol, names[i], &args, NULL),
				 0);
		kerf_sched_init(&s, &pol);
		assert_int_equal(kerf_sched_select(&s, &c, &p, &b, &st),
				 KERF_FIT);
		assert_int_equal(b.node, 0);
		assert_true(b.gpus == 1 || b.gpus == 2);
		assert_string_equal(st.plugin, names[i]);
		/* The fit filter is there for every policy. */
		assert_int_equal(kerf_sched_select(&s, &c, &too_big, &b, &st),
				 KERF_UNSCHEDULABLE);
		assert_string_equal(st.reason, "0/1 nodes are available: 1 insufficient cpu");
		kerf_sched_release(&s);
		kerf_policy_release(&pol);
	}
	kerf_cluster_release(&c);
}

static void test_unknown_name(void **state)
{
	struct kerf_cluster c;
	struct kerf_policy_args args = { .cluster = NULL };
	struct kerf_policy pol;
	struct kerf_err err = { 0 };

	(void)state;
	one_node(&c);
	args.cluster = &c;
	memset(&pol, 0xab, sizeof(pol));
	assert_int_equal(kerf_policy_build(&pol, "tetris", &args, &err),
			 -KERF_ENOTFOUND);
	assert_int_equal(err.code, -KERF_ENOTFOUND);
	assert_string_equal(err.msg, "policy 'tetris': unknown (try 'kerf sim --help')");
	/* pol is left empty, safe to release. */
	assert_int_equal(pol.nr_filters, 0);
	assert_int_equal(pol.nr_scorers, 0);
	kerf_policy_release(&pol);
	assert_true(kerf_policy_build(&pol, "", &args, NULL) < 0);
	kerf_cluster_release(&c);
}

static void test_fgd_needs_dist(void **state)
{
	struct kerf_cluster c;
	struct kerf_policy_args args = { .cluster = NULL };
	struct kerf_policy pol;
	struct kerf_pod_dist empty;
	struct kerf_err err = { 0 };

	(void)state;
	one_node(&c);
	args.cluster = &c;
	assert_int_equal(kerf_policy_build(&pol, "fgd", &args, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "fgd: needs the typical pods of the workload");
	assert_int_equal(pol.nr_filters, 0);
	assert_int_equal(pol.nr_scorers, 0);
	kerf_err_clear(&err);
	kerf_pod_dist_init(&empty);
	args.dist = &empty;
	assert_int_equal(kerf_policy_build(&pol, "fgd", &args, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "fgd: needs the typical pods of the workload");
	kerf_cluster_release(&c);
}

static void test_kerf_options(void **state)
{
	struct kerf_cluster c;
	struct kerf_pod_dist d;
	struct kerf_dist_entry e;
	struct kerf_policy_args args = { .cluster = NULL };
	struct kerf_policy pol;
	struct kerf_err err = { 0 };

	(void)state;
	one_node(&c);
	one_entry_dist(&d, &e);
	args.cluster = &c;
	args.options = "online=0";
	assert_int_equal(kerf_policy_build(&pol, "kerf", &args, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "kerf: online=0 needs the typical pods of the workload");
	assert_int_equal(pol.nr_scorers, 0);
	kerf_err_clear(&err);
	args.dist = &d;
	assert_int_equal(kerf_policy_build(&pol, "kerf", &args, &err), 0);
	kerf_policy_release(&pol);
	args.options = "coverage=0";
	assert_int_equal(kerf_policy_build(&pol, "kerf", &args, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "kerf policy option 'coverage' '0': out of range (expected 1..100)");
	kerf_err_clear(&err);
	args.options = "mem=x";
	assert_int_equal(kerf_policy_build(&pol, "kerf", &args, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "kerf policy option 'mem' 'x': not a decimal integer (expected 0..1)");
	kerf_err_clear(&err);
	args.options = "mem";
	assert_int_equal(kerf_policy_build(&pol, "kerf", &args, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "kerf policy option 'mem': needs =VALUE (online, mem, cap, coverage, rebuild, adopt, spec)");
	kerf_err_clear(&err);
	args.options = "tie=2";
	assert_int_equal(kerf_policy_build(&pol, "kerf", &args, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "kerf policy option 'tie': unknown (online, mem, cap, coverage, rebuild, adopt, spec)");
	kerf_err_clear(&err);
	args.options = "spec=2";
	assert_int_equal(kerf_policy_build(&pol, "kerf", &args, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "kerf policy option 'spec' '2': out of range (expected 0..1)");
	kerf_err_clear(&err);
	/* strtol took these: a sign, spaces, overflow; a raw ESC in the key */
	args.options = "cap=-1";
	assert_int_equal(kerf_policy_build(&pol, "kerf", &args, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "kerf policy option 'cap' '-1': not a decimal integer (expected 0..1000)");
	kerf_err_clear(&err);
	args.options = "cap= 5";
	assert_int_equal(kerf_policy_build(&pol, "kerf", &args, &err),
			 -KERF_EINVAL);
	kerf_err_clear(&err);
	args.options = "cap=99999999999999999999999999999999999999";
	assert_int_equal(kerf_policy_build(&pol, "kerf", &args, &err),
			 -KERF_EINVAL);
	kerf_err_clear(&err);
	args.options = "ca\x1b[2Jp=1";
	assert_int_equal(kerf_policy_build(&pol, "kerf", &args, &err),
			 -KERF_EINVAL);
	assert_null(strchr(err.msg, '\x1b'));
	assert_non_null(strstr(err.msg, "'ca\\x1b[2Jp': unknown"));
	kerf_err_clear(&err);
	args.options = "mem=0,cap=25,online=1,adopt=0,spec=0";
	assert_int_equal(kerf_policy_build(&pol, "kerf", &args, &err), 0);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
}

/*
 * --policy-options checked before any policy is built: a key of a policy
 * not selected is refused naming that policy, an unknown key naming the
 * keys there are, a value by the policy's own check; keys of a selected
 * policy pass whatever else is selected beside it.
 */
static void test_check_options(void **state)
{
	const char *const fgd[] = { "fgd" }, *const two[] = { "fgd", "random" };
	const char *const with_kerf[] = { "fgd", "kerf" };
	struct kerf_err err = { 0 };

	(void)state;
	assert_int_equal(kerf_policy_check_options(fgd, 1, NULL, &err), 0);
	assert_int_equal(kerf_policy_check_options(fgd, 1, "", &err), 0);
	assert_int_equal(kerf_policy_check_options(fgd, 1, "cap=5", &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "key 'cap' is an option of policy kerf, which is not selected (policies: fgd)");
	kerf_err_clear(&err);
	assert_int_equal(kerf_policy_check_options(two, 2, "cap=5", &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "key 'cap' is an option of policy kerf, which is not selected (policies: fgd, random)");
	kerf_err_clear(&err);
	assert_int_equal(kerf_policy_check_options(with_kerf, 2, "mem=0,tie=1", &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "unknown key 'tie' (policy options: kerf: online, mem, cap, coverage, rebuild, adopt, spec)");
	kerf_err_clear(&err);
	assert_int_equal(kerf_policy_check_options(with_kerf, 2, "mem=0,cap=2000", &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "kerf policy option 'cap' '2000': out of range (expected 0..1000)");
	kerf_err_clear(&err);
	assert_int_equal(kerf_policy_check_options(with_kerf, 2, "mem=0,cap=25", &err), 0);
	assert_string_equal(err.msg, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry_is_exact),
		cmocka_unit_test(test_lookup_is_exact_match),
		cmocka_unit_test(test_build_every_policy),
		cmocka_unit_test(test_built_policy_places),
		cmocka_unit_test(test_unknown_name),
		cmocka_unit_test(test_fgd_needs_dist),
		cmocka_unit_test(test_kerf_options),
		cmocka_unit_test(test_check_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
