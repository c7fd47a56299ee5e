/* The nftables text of DSCP marking: golden strings, refusals, escaping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "net/dscp_rules.h"
#include "net/nft.h"

#define UID1 "0a1b2c3d-0000-4000-8000-00000000abcd"
#define UID2 "ffffffff-1111-4111-8111-111111111111"

static void test_class_dscp(void **state)
{
	(void)state;
	struct kerf_err err = { 0 };
	int32_t d = -1;
	assert_int_equal(kerf_dscp_of_class("rdma", &d, &err), 0);
	assert_int_equal(d, 26);
	assert_int_equal(kerf_dscp_of_class("latency-tcp", &d, &err), 0);
	assert_int_equal(d, 46);
	assert_int_equal(kerf_dscp_of_class("rdma-latency", &d, &err), 0);
	assert_int_equal(d, 34);
	assert_int_equal(kerf_dscp_of_class("gold", &d, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "networkClass: unknown class \"gold\""));
	assert_non_null(strstr(err.msg, "latency-tcp"));
}

static void test_add_golden(void **state)
{
	(void)state;
	struct kerf_buf b;
	struct kerf_err err = { 0 };
	struct kerf_dscp_pod pod = { UID1, "veth1a2b3c4d", 26 };
	kerf_buf_init(&b, 0);
	assert_int_equal(kerf_dscp_rules_add(&b, &pod, &err), 0);
	assert_string_equal(kerf_buf_str(&b),
		"add chain inet kerf_dscp pod_0a1b2c3d_0000_4000_8000_00000000abcd\n"
		"flush chain inet kerf_dscp pod_0a1b2c3d_0000_4000_8000_00000000abcd\n"
		"add rule inet kerf_dscp pod_0a1b2c3d_0000_4000_8000_00000000abcd ip dscp set 26\n"
		"add rule inet kerf_dscp pod_0a1b2c3d_0000_4000_8000_00000000abcd ip6 dscp set 26\n"
		"add element inet kerf_dscp pods { \"veth1a2b3c4d\" : jump pod_0a1b2c3d_0000_4000_8000_00000000abcd }\n");
	kerf_buf_release(&b);
}

static void test_remove_golden(void **state)
{
	(void)state;
	struct kerf_buf b;
	struct kerf_err err = { 0 };
	kerf_buf_init(&b, 0);
	assert_int_equal(kerf_dscp_rules_remove(&b, "ab-12", "cali0123", &err), 0);
	assert_string_equal(kerf_buf_str(&b),
		"add chain inet kerf_dscp pod_ab_12\n"
		"add element inet kerf_dscp pods { \"cali0123\" : jump pod_ab_12 }\n"
		"delete element inet kerf_dscp pods { \"cali0123\" }\n"
		"flush chain inet kerf_dscp pod_ab_12\n"
		"delete chain inet kerf_dscp pod_ab_12\n");
	kerf_buf_release(&b);
}

static void test_resync_golden(void **state)
{
	(void)state;
	struct kerf_buf b;
	struct kerf_err err = { 0 };
	struct kerf_dscp_pod pods[] = {
		{ "aa-01", "veth0", 26 },
		{ "bb-02", "lxc_x.1", 46 },
	};
	kerf_buf_init(&b, 0);
	assert_int_equal(kerf_dscp_rules_resync(&b, pods, 2, &err), 0);
	assert_string_equal(kerf_buf_str(&b),
		"add table inet kerf_dscp\n"
		"delete table inet kerf_dscp\n"
		"table inet kerf_dscp {\n"
		"\tmap pods {\n"
		"\t\ttype ifname : verdict\n"
		"\t}\n"
		"\tchain pod_aa_01 {\n"
		"\t\tip dscp set 26\n"
		"\t\tip6 dscp set 26\n"
		"\t}\n"
		"\tchain pod_bb_02 {\n"
		"\t\tip dscp set 46\n"
		"\t\tip6 dscp set 46\n"
		"\t}\n"
		"\tchain egress {\n"
		"\t\ttype filter hook prerouting priority mangle; policy accept;\n"
		"\t\tiifname vmap @pods\n"
		"\t}\n"
		"}\n"
		"add element inet kerf_dscp pods { \"veth0\" : jump pod_aa_01 }\n"
		"add element inet kerf_dscp pods { \"lxc_x.1\" : jump pod_bb_02 }\n");

	/* No pods: the empty table, how it is first made. */
	kerf_buf_reset(&b);
	assert_int_equal(kerf_dscp_rules_resync(&b, NULL, 0, &err), 0);
	assert_null(strstr(kerf_buf_str(&b), "add element"));
	assert_non_null(strstr(kerf_buf_str(&b), "iifname vmap @pods"));
	kerf_buf_release(&b);
}

struct refusal {
	const char *uid;
	const char *ifname;
	int32_t dscp;
	const char *msg;     /* a part of the message */
};

static void test_refusals(void **state)
{
	(void)state;
	static const struct refusal cases[] = {
		{ UID1, "veth\"x", 26, "interface: character 0x22 at 4 not allowed" },
		{ UID1, "veth\nx", 26, "interface: character 0x0a at 4 not allowed" },
		{ UID1, "a b", 26, "interface: character 0x20 at 1" },
		{ UID1, "veth}x", 26, "interface: character 0x7d" },
		{ UID1, "veth;x", 26, "interface: character 0x3b" },
		{ UID1, "a/b", 26, "interface: character 0x2f" },
		{ UID1, "", 26, "interface: empty" },
		{ UID1, NULL, 26, "interface: empty" },
		{ UID1, "0123456789abcdef", 26, "interface: 16 characters" },
		{ UID1, "..", 26, "interface: \"..\" is not an interface name" },
		{ "AB-12", "veth0", 26, "uid: character 0x41 at 0" },
		{ "ab\"; flush ruleset", "veth0", 26, "uid: character 0x22" },
		{ "", "veth0", 26, "uid: empty" },
		{ UID1, "veth0", 64, "dscp: 64 out of range 0..63" },
		{ UID1, "veth0", -1, "dscp: -1 out of range" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kerf_buf b;
		struct kerf_err err = { 0 };
		struct kerf_dscp_pod pod = { cases[i].uid, cases[i].ifname,
					     cases[i].dscp };
		kerf_buf_init(&b, 0);
		assert_int_equal(kerf_dscp_rules_add(&b, &pod, &err), -KERF_EINVAL);
		if (!strstr(err.msg, cases[i].msg))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg,
				 cases[i].msg);
		assert_int_equal(b.len, 0);   /* nothing written */
		kerf_buf_release(&b);
	}

	/* remove validates too */
	struct kerf_buf b;
	struct kerf_err err = { 0 };
	kerf_buf_init(&b, 0);
	assert_int_equal(kerf_dscp_rules_remove(&b, UID1, "x\"y", &err),
			 -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "interface: character 0x22"));
	assert_int_equal(b.len, 0);
	kerf_buf_release(&b);
}

static void test_resync_refusals(void **state)
{
	(void)state;
	struct kerf_buf b;
	struct kerf_err err = { 0 };
	struct kerf_dscp_pod dup_uid[] = {
		{ "aa", "veth0", 26 }, { "aa", "veth1", 26 },
	};
	struct kerf_dscp_pod dup_if[] = {
		{ "aa", "veth0", 26 }, { "bb", "veth0", 46 },
	};
	struct kerf_dscp_pod bad[] = {
		{ "aa", "veth0", 26 }, { "bb", "v\"", 46 },
	};
	kerf_buf_init(&b, 0);
	assert_int_equal(kerf_dscp_rules_resync(&b, dup_uid, 2, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "pods[1].uid: \"aa\" also at pods[0]"));
	kerf_err_clear(&err);
	assert_int_equal(kerf_dscp_rules_resync(&b, dup_if, 2, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "pods[1].interface: \"veth0\" also at pods[0]"));
	kerf_err_clear(&err);
	assert_int_equal(kerf_dscp_rules_resync(&b, bad, 2, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "pods[1].interface: character 0x22"));
	kerf_err_clear(&err);
	assert_int_equal(kerf_dscp_rules_resync(&b, bad, KERF_DSCP_MAX_PODS + 1, &err),
			 -KERF_ELIMIT);
	assert_int_equal(b.len, 0);
	kerf_buf_release(&b);
}

/* A bounded buffer too small: the error says so, nothing half written. */
static void test_buffer_limit(void **state)
{
	(void)state;
	struct kerf_buf b;
	struct kerf_err err = { 0 };
	struct kerf_dscp_pod pod = { UID1, "veth0", 26 };
	kerf_buf_init(&b, 32);
	assert_int_equal(kerf_dscp_rules_add(&b, &pod, &err), -KERF_ELIMIT);
	assert_non_null(strstr(err.msg, "nft ruleset"));
	assert_int_equal(b.len, 0);
	kerf_buf_release(&b);
}

/* The fake ops: records, fails the n-th call. */
static void test_nft_fake(void **state)
{
	(void)state;
	struct kerf_nft_fake fake = { .fail_nth = 2 };
	struct kerf_nft_ops ops;
	struct kerf_err err = { 0 };
	kerf_nft_fake_ops(&fake, &ops);
	assert_int_equal(kerf_nft_apply(&ops, "one", 3, &err), 0);
	assert_int_equal(kerf_nft_apply(&ops, "two", 3, &err), -KERF_EIO);
	assert_non_null(strstr(err.msg, "call 2 fails"));
	assert_int_equal(kerf_nft_apply(&ops, "three", 5, NULL), 0);
	assert_int_equal(fake.nr_calls, 3);
	assert_string_equal(fake.texts[0], "one");
	assert_string_equal(fake.texts[2], "three");
	kerf_nft_fake_release(&fake);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_class_dscp),
		cmocka_unit_test(test_add_golden),
		cmocka_unit_test(test_remove_golden),
		cmocka_unit_test(test_resync_golden),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_resync_refusals),
		cmocka_unit_test(test_buffer_limit),
		cmocka_unit_test(test_nft_fake),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
