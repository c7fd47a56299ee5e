/* The NIC QoS check on fake sysfs trees in a temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "net/nic_qos.h"

struct tree {
	char root[64];
};

static void put(struct tree *t, const char *ifname, const char *file,
		const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/sys", t->root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/class", t->root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/class/net", t->root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/class/net/%s", t->root, ifname);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/class/net/%s/qos", t->root, ifname);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/class/net/%s/%s", t->root, ifname,
		 file);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));
	snprintf(t->root, sizeof(t->root), "/tmp/kerf-nicqos-XXXXXX");
	if (!t || !mkdtemp(t->root))
		return -1;
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tree *t = *state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->root);
	int rc = system(cmd);
	free(t);
	return rc == 0 ? 0 : -1;
}

static const struct kerf_nic_finding *
check(struct tree *t, const char *ifname, enum kerf_roce_profile profile,
      struct kerf_nic_report *r, const char *name)
{
	struct kerf_sysfs_ops ops;
	struct kerf_err err = { 0 };
	kerf_sysfs_root_ops(t->root, &ops);
	assert_int_equal(kerf_nic_qos_check(&ops, ifname, profile, r, &err), 0);
	for (size_t i = 0; i < r->nr_findings; i++)
		if (!strcmp(r->findings[i].check, name))
			return &r->findings[i];
	fail_msg("no finding %s", name);
	return NULL;
}

static void test_expected_mask(void **state)
{
	(void)state;
	assert_int_equal(kerf_nic_expected_pfc_mask(KERF_ROCE_PROFILE_A), 1u << 3);
	assert_int_equal(kerf_nic_expected_pfc_mask(KERF_ROCE_PROFILE_B),
			 (1u << 3) | (1u << 4));
}

/* A NIC set up as profile A wants it. */
static void test_all_ok(void **state)
{
	struct tree *t = *state;
	struct kerf_nic_report r;
	put(t, "eth0", "ifindex", "2\n");
	put(t, "eth0", "qos/trust", "dscp\n");
	put(t, "eth0", "qos/pfc", "0,0,0,1,0,0,0,0\n");
	const struct kerf_nic_finding *f = check(t, "eth0", KERF_ROCE_PROFILE_A, &r, "trust");
	assert_int_equal(f->verdict, KERF_NIC_OK);
	assert_string_equal(f->actual, "dscp");
	f = check(t, "eth0", KERF_ROCE_PROFILE_A, &r, "pfc");
	assert_int_equal(f->verdict, KERF_NIC_OK);
	assert_string_equal(f->expected, "3");
	assert_string_equal(f->actual, "3");
	assert_int_equal(r.nr_mismatches, 0);
	assert_int_equal(r.nr_unknown, 0);
	assert_string_equal(r.ifname, "eth0");

	/* The same NIC under profile B lacks priority 4. */
	f = check(t, "eth0", KERF_ROCE_PROFILE_B, &r, "pfc");
	assert_int_equal(f->verdict, KERF_NIC_MISMATCH);
	assert_string_equal(f->expected, "3,4");
	assert_string_equal(f->actual, "3");
	assert_int_equal(r.nr_mismatches, 1);
}

static void test_mismatches(void **state)
{
	struct tree *t = *state;
	struct kerf_nic_report r;
	put(t, "eth1", "ifindex", "3\n");
	put(t, "eth1", "qos/trust", "Priority trust state: pcp\n");
	put(t, "eth1", "qos/pfc", "0 0 0 1 1 0 0 1\n");
	const struct kerf_nic_finding *f = check(t, "eth1", KERF_ROCE_PROFILE_B, &r, "trust");
	assert_int_equal(f->verdict, KERF_NIC_MISMATCH);
	assert_string_equal(f->expected, "dscp");
	assert_string_equal(f->actual, "pcp");
	f = check(t, "eth1", KERF_ROCE_PROFILE_B, &r, "pfc");
	assert_int_equal(f->verdict, KERF_NIC_MISMATCH);   /* 7 is extra */
	assert_string_equal(f->actual, "3,4,7");
	assert_int_equal(r.nr_mismatches, 2);

	/* No PFC at all. */
	put(t, "eth1", "qos/pfc", "0,0,0,0,0,0,0,0");
	f = check(t, "eth1", KERF_ROCE_PROFILE_A, &r, "pfc");
	assert_int_equal(f->verdict, KERF_NIC_MISMATCH);
	assert_string_equal(f->actual, "none");
}

/* A driver that exposes nothing (upstream, or a veth): unknown, not ok. */
static void test_unknown(void **state)
{
	struct tree *t = *state;
	struct kerf_nic_report r;
	put(t, "veth9", "ifindex", "9\n");
	const struct kerf_nic_finding *f = check(t, "veth9", KERF_ROCE_PROFILE_A, &r, "trust");
	assert_int_equal(f->verdict, KERF_NIC_UNKNOWN);
	assert_string_equal(f->actual, "");
	assert_non_null(strstr(f->detail, "/sys/class/net/veth9/qos/trust"));
	f = check(t, "veth9", KERF_ROCE_PROFILE_A, &r, "pfc");
	assert_int_equal(f->verdict, KERF_NIC_UNKNOWN);
	assert_int_equal(r.nr_unknown, 2);
	assert_int_equal(r.nr_mismatches, 0);

	/* Unreadable contents: unknown, with what was there (escaped). */
	put(t, "veth9", "qos/trust", "vendor\x1b[31m\n");
	put(t, "veth9", "qos/pfc", "0,0,0,1,0,0,0\n");   /* 7 flags */
	f = check(t, "veth9", KERF_ROCE_PROFILE_A, &r, "trust");
	assert_int_equal(f->verdict, KERF_NIC_UNKNOWN);
	assert_non_null(strstr(f->detail, "\\x1b"));
	f = check(t, "veth9", KERF_ROCE_PROFILE_A, &r, "pfc");
	assert_int_equal(f->verdict, KERF_NIC_UNKNOWN);
	assert_non_null(strstr(f->detail, "not 8 flags"));
	put(t, "veth9", "qos/pfc", "0,0,0,2,0,0,0,0\n");
	f = check(t, "veth9", KERF_ROCE_PROFILE_A, &r, "pfc");
	assert_int_equal(f->verdict, KERF_NIC_UNKNOWN);
	put(t, "veth9", "qos/pfc", "0,0,0,10,0,0,0\n");
	f = check(t, "veth9", KERF_ROCE_PROFILE_A, &r, "pfc");
	assert_int_equal(f->verdict, KERF_NIC_UNKNOWN);
}

static void test_refusals(void **state)
{
	struct tree *t = *state;
	struct kerf_sysfs_ops ops;
	struct kerf_nic_report r;
	struct kerf_err err = { 0 };
	kerf_sysfs_root_ops(t->root, &ops);
	assert_int_equal(kerf_nic_qos_check(&ops, "nosuch0", KERF_ROCE_PROFILE_A,
					    &r, &err), -KERF_ENOTFOUND);
	assert_non_null(strstr(err.msg, "interface: no interface \"nosuch0\""));
	kerf_err_clear(&err);
	assert_int_equal(kerf_nic_qos_check(&ops, "../../etc", KERF_ROCE_PROFILE_A,
					    &r, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "interface: character 0x2f"));
	assert_int_equal(r.nr_findings, 0);
	assert_string_equal(kerf_nic_verdict_name(KERF_NIC_UNKNOWN), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expected_mask),
		cmocka_unit_test_setup_teardown(test_all_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mismatches, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
