/*
 * Unit tests for kube/kubeconfig, kube/incluster and kube/config (token
 * file re-read when it changes; base64 is in test_base64): the happy paths
 * (data fields, files relative to the kubeconfig, a named context, JSON) and every
 * refusal, each message naming the field with the value escaped.
 */
#define _DEFAULT_SOURCE                 /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

#include "kube/incluster.h"
#include "kube/kubeconfig.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/kerf-test-kube-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *name, const char *text)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* "-----BEGIN" and "-----END" */
#define B64_BEGIN "LS0tLS1CRUdJTg=="
#define B64_END "LS0tLS1FTkQ="

static const char base_cfg[] =
	"apiVersion: v1\n"
	"kind: Config\n"
	"current-context: dev\n"
	"preferences: {}\n"
	"contexts:\n"
	"- name: other\n"
	"  context: {cluster: c2, user: u2}\n"
	"- name: dev\n"
	"  context:\n"
	"    cluster: c1\n"
	"    user: u1\n"
	"    namespace: team-a\n"
	"clusters:\n"
	"- name: c1\n"
	"  cluster:\n"
	"    server: https://10.0.0.1:6443\n"
	"    certificate-authority-data: " B64_BEGIN "\n"
	"    tls-server-name: kubernetes.default\n"
	"- name: c2\n"
	"  cluster:\n"
	"    server: https://[fd00::1]\n"
	"    certificate-authority: pki/ca.crt\n"
	"users:\n"
	"- name: u1\n"
	"  user:\n"
	"    token: abc.def\n"
	"    client-certificate-data: " B64_BEGIN "\n"
	"    client-key-data: " B64_END "\n"
	"- name: u2\n"
	"  user:\n"
	"    tokenFile: tok\n";

static void test_current_context(void **state)
{
	struct kerf_kube_config cfg;
	struct kerf_err err = { 0 };

	(void)state;
	assert_int_equal(kerf_kubeconfig_parse(&cfg, base_cfg, strlen(base_cfg),
					       "kc", dir, NULL, &err), 0);
	assert_string_equal(cfg.server, "https://10.0.0.1:6443");
	assert_string_equal(cfg.tls_server_name, "kubernetes.default");
	assert_string_equal(cfg.ca_pem, "-----BEGIN");
	assert_int_equal(cfg.ca_pem_len, 10);
	assert_string_equal(cfg.cert_pem, "-----BEGIN");
	assert_string_equal(cfg.key_pem, "-----END");
	assert_string_equal(cfg.token, "abc.def");
	assert_null(cfg.token_path);
	assert_string_equal(cfg.namespace_name, "team-a");
	kerf_kube_config_release(&cfg);
}

static void test_named_context_files_relative(void **state)
{
	struct kerf_kube_config cfg;
	struct kerf_err err = { 0 };
	char path[160], sub[160];
	bool changed;
	struct timespec ts[2] = { { .tv_sec = 1000 }, { .tv_sec = 1000 } };

	(void)state;
	snprintf(sub, sizeof(sub), "%s/pki", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	write_file("pki/ca.crt", "CA PEM\n");
	write_file("tok", "  tok-1\n");
	write_file("config", base_cfg);
	snprintf(path, sizeof(path), "%s/config", dir);
	assert_int_equal(kerf_kubeconfig_load(&cfg, path, "other", &err), 0);
	assert_string_equal(cfg.server, "https://[fd00::1]");
	assert_string_equal(cfg.ca_pem, "CA PEM\n");
	assert_string_equal(cfg.token, "tok-1");
	assert_non_null(cfg.token_path);
	assert_null(cfg.namespace_name);
	/* unchanged file: not read again; a rotated one: read again */
	assert_int_equal(kerf_kube_config_token_refresh(&cfg, &changed, &err), 0);
	assert_false(changed);
	write_file("tok", "tok-2-longer\n");
	snprintf(path, sizeof(path), "%s/tok", dir);
	assert_int_equal(utimensat(0, path, ts, 0), 0);
	assert_int_equal(kerf_kube_config_token_refresh(&cfg, &changed, &err), 0);
	assert_true(changed);
	assert_string_equal(cfg.token, "tok-2-longer");
	/* an emptied file keeps the old token and says why */
	write_file("tok", " \n");
	assert_int_equal(kerf_kube_config_token_refresh(&cfg, &changed, &err), -KERF_EPARSE);
	assert_string_equal(cfg.token, "tok-2-longer");
	kerf_kube_config_release(&cfg);
}

static void test_json_kubeconfig(void **state)
{
	const char *json = "{\"current-context\":\"x\",\"contexts\":[{\"name\":\"x\",\"context\":{\"cluster\":\"c\",\"user\":\"u\"}}],"
			   "\"clusters\":[{\"name\":\"c\",\"cluster\":{\"server\":\"https://h:1/prefix/\"}}],"
			   "\"users\":[{\"name\":\"u\",\"user\":{\"token\":\"t\"}}]}";
	struct kerf_kube_config cfg;

	(void)state;
	assert_int_equal(kerf_kubeconfig_parse(&cfg, json, strlen(json), "j", NULL, NULL, NULL), 0);
	assert_string_equal(cfg.server, "https://h:1/prefix/");
	assert_string_equal(cfg.token, "t");
	assert_null(cfg.ca_pem);
	kerf_kube_config_release(&cfg);
}

/* base_cfg with the text from `from` replaced by `to`; err is the message. */
static int parse_edited(const char *from, const char *to, const char *context,
			struct kerf_err *err)
{
	char text[4096];
	const char *at = strstr(base_cfg, from);
	struct kerf_kube_config cfg;
	int rc;

	assert_non_null(at);
	snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - base_cfg), base_cfg,
		 to, at + strlen(from));
	kerf_err_clear(err);
	rc = kerf_kubeconfig_parse(&cfg, text, strlen(text), "kc", dir, context, err);
	assert_null(cfg.server);     /* empty on error */
	return rc;
}

static void expect(const char *from, const char *to, const char *msg)
{
	struct kerf_err err = { 0 };

	assert_int_equal(parse_edited(from, to, NULL, &err), -KERF_EPARSE);
	assert_string_equal(err.msg, msg);
}

static void test_errors(void **state)
{
	(void)state;
	expect("client-key-data: " B64_END, "client-key-data: ab$c",
	       "kc:28: users[0].user.client-key-data: not base64 'ab$c'");
	expect("client-key-data: " B64_END, "client-key-data: \"\\e[31m==\"",
	       "kc:28: users[0].user.client-key-data: not base64 '\\x1b[31m=='");
	expect("certificate-authority-data: " B64_BEGIN, "certificate-authority-data: LS0tLS1CRUdJTg=",
	       "kc:17: clusters[0].cluster.certificate-authority-data: not base64 'LS0tLS1CRUdJTg='");
	expect("    tls-server-name", "    insecure-skip-tls-verify: true\n    tls-server-name",
	       "kc:18: clusters[0].cluster.insecure-skip-tls-verify: refused: kerf always verifies the API server's certificate; give certificate-authority(-data) instead");
	expect("    token: abc.def", "    exec: {command: aws}",
	       "kc:26: users[0].user: exec: credential plugins are not supported (kerf runs no programs); use a token, tokenFile or a client certificate");
	expect("    token: abc.def", "    auth-provider: {name: gcp}",
	       "kc:26: users[0].user: auth-provider: auth-provider plugins are not supported; use a token, tokenFile or a client certificate");
	expect("    token: abc.def", "    username: admin",
	       "kc:26: users[0].user: username: basic authentication is not supported");
	expect("https://10.0.0.1:6443", "http://10.0.0.1:6443",
	       "kc:16: clusters[0].cluster.server: 'http://10.0.0.1:6443': must be an https:// URL");
	expect("    server: https://10.0.0.1:6443\n", "",
	       "kc:16: clusters[0].cluster: server: missing");
	expect("current-context: dev", "current-context: nope",
	       "kc:6: contexts: no context named 'nope'");
	expect("current-context: dev\n", "",
	       "kc:1: current-context: missing or empty, and no context was named");
	expect("    cluster: c1\n    user", "    cluster: c9\n    user",
	       "kc:14: clusters: no cluster named 'c9'");
	expect("    user: u1\n", "    user: \"u\\n1\"\n",
	       "kc:24: users: no user named 'u\\x0a1'");
	expect("    client-key-data: " B64_END "\n", "",
	       "kc:26: users[0].user: client-certificate without client-key");
	expect("    certificate-authority-data: " B64_BEGIN "\n",
	       "    certificate-authority-data: " B64_BEGIN "\n    certificate-authority: ca.crt\n",
	       "kc:18: clusters[0].cluster: certificate-authority and certificate-authority-data: give one, not both");
	expect("    token: abc.def", "    token: abc.def\n    tokenFile: f",
	       "kc:26: users[0].user: token and tokenFile: give one, not both");
	expect("    token: abc.def", "    token: [a]",
	       "kc:26: users[0].user.token: must be a non-empty string");
	expect("    token: abc.def", "    token: a\n    token: b",
	       "kc:27: users[0].user: key 'token' given twice");
	expect("- name: c1\n  cluster:\n", "- name: c1\n  cluster: 7\n  x:\n",
	       "kc:15: clusters[0].cluster: must be a mapping");
}

static void test_more_errors(void **state)
{
	struct kerf_err err = { 0 };
	struct kerf_kube_config cfg;
	char path[160];

	(void)state;
	assert_int_equal(parse_edited("pki/ca.crt", "pki/none.crt", "other", &err), -KERF_EPARSE);
	assert_non_null(strstr(err.msg, "kc:22: clusters[1].cluster.certificate-authority: cannot read 'pki/none.crt': file: cannot open '"));
	assert_non_null(strstr(err.msg, "/pki/none.crt': No such file or directory"));
	kerf_err_clear(&err);
	write_file("tok", "");
	assert_int_equal(parse_edited("pki/ca.crt", "pki/ca.crt", "other", &err), -KERF_EPARSE);
	assert_non_null(strstr(err.msg, "kc:31: users[1].user.tokenFile: token file '"));
	assert_non_null(strstr(err.msg, "/tok': empty or not text"));
	kerf_err_clear(&err);
	assert_int_equal(kerf_kubeconfig_parse(&cfg, base_cfg, strlen(base_cfg), "kc", NULL, "other", &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "kc:22: clusters[1].cluster.certificate-authority: file references are not allowed here");
	kerf_err_clear(&err);
	assert_int_equal(kerf_kubeconfig_parse(&cfg, "", 0, "kc", NULL, NULL, &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "kc: empty kubeconfig");
	kerf_err_clear(&err);
	assert_int_equal(kerf_kubeconfig_parse(&cfg, "[1]", 3, "kc", NULL, NULL, &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "kc:1: must be a mapping");
	kerf_err_clear(&err);
	assert_int_equal(kerf_kubeconfig_parse(&cfg, "a: [", 4, "kc", NULL, NULL, &err), -KERF_EPARSE);
	kerf_err_clear(&err);
	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_int_equal(kerf_kubeconfig_load(&cfg, path, NULL, &err), -KERF_EIO);
	assert_non_null(strstr(err.msg, "missing"));
}

static void test_proxy_refused(void **state)
{
	struct kerf_err err = { 0 };

	(void)state;
	assert_int_equal(parse_edited("    tls-server-name", "    proxy-url: http://p\n    tls-server-name", NULL, &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "kc:18: clusters[0].cluster: proxy-url: proxies are not supported");
}

static void test_incluster(void **state)
{
	struct kerf_kube_config cfg;
	struct kerf_err err = { 0 };

	(void)state;
	write_file("token", "sa-token\n");
	write_file("ca.crt", "SA CA");
	write_file("namespace", "kerf-system\n");
	assert_int_equal(kerf_kube_incluster_load(&cfg, "10.96.0.1", "443", dir, &err), 0);
	assert_string_equal(cfg.server, "https://10.96.0.1:443");
	assert_string_equal(cfg.token, "sa-token");
	assert_string_equal(cfg.ca_pem, "SA CA");
	assert_string_equal(cfg.namespace_name, "kerf-system");
	kerf_kube_config_release(&cfg);
	assert_int_equal(kerf_kube_incluster_load(&cfg, "fd00::1", "6443", dir, &err), 0);
	assert_string_equal(cfg.server, "https://[fd00::1]:6443");
	kerf_kube_config_release(&cfg);

	assert_int_equal(kerf_kube_incluster_load(&cfg, NULL, "443", dir, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "in-cluster config: KUBERNETES_SERVICE_HOST is not set (not running in a pod?)");
	kerf_err_clear(&err);
	assert_int_equal(kerf_kube_incluster_load(&cfg, "h", "44x", dir, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "in-cluster config: KUBERNETES_SERVICE_PORT '44x': not a port number (1..65535)");
	kerf_err_clear(&err);
	assert_int_equal(kerf_kube_incluster_load(&cfg, "h/\x1b", "1", dir, &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "in-cluster config: KUBERNETES_SERVICE_HOST 'h/\\x1b': not a host name or address");
	kerf_err_clear(&err);
	assert_int_equal(kerf_kube_incluster_load(&cfg, "h", "1", "/nonexistent-kerf", &err), -KERF_EIO);
	assert_non_null(strstr(err.msg, "token file"));
	assert_null(cfg.server);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_current_context),
		cmocka_unit_test(test_named_context_files_relative),
		cmocka_unit_test(test_json_kubeconfig),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_more_errors),
		cmocka_unit_test(test_proxy_refused),
		cmocka_unit_test(test_incluster),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
