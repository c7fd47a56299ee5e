/*
 * e2e_lib: see e2e_lib.h.
 */
#include "e2e_lib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


struct e2e_env e2e;

/* e2e_api's turn: kerf serve's step and the other client first */
static void step(void)
{
	if (e2e.ctl)
		kerf_controller_step(e2e.ctl, e2e_wall_ms());
	if (e2e.other)
		kerf_kube_client_poll(e2e.other, 0);
}

bool e2e_run_until(bool (*cond)(void *), void *arg, int64_t timeout_ms)
{
	int64_t end = e2e_wall_ms() + timeout_ms;

	while (e2e_wall_ms() < end) {
		for (int i = 0; i < 10; i++)
			e2e_turn(20);
		if (cond(arg))
			return true;
	}
	return false;
}

bool e2e_controller_start(const struct kerf_kube_ops *ops)
{
	struct kerf_controller_opts o = {
		.ops = ops ? ops : &e2e_ops, .scheduler_name = "kerf",
		.policy = "kerf", .identity = "kerf-e2e", .resync_ms = 200, .status_ms = 500,
		.seed = 1,
	};
	struct kerf_err err = { 0 };

	if (kerf_controller_new(&o, &e2e.ctl, &err) < 0 ||
	    kerf_controller_start(e2e.ctl, &err) < 0) {
		fprintf(stderr, "e2e: kerf serve: %s\n", err.msg);
		kerf_controller_free(e2e.ctl);
		e2e.ctl = NULL;
		return false;
	}
	return true;
}

void e2e_controller_stop(void)
{
	kerf_controller_free(e2e.ctl);
	e2e.ctl = NULL;
}

/* kerf's test API server over TLS, and a kubeconfig for it. */
static int start_testapi(const char *cert_script, const char *prog)
{
	struct kerf_testapi_opts o = { .token = "kerf-e2e-token" };
	struct kerf_err err = { 0 };
	char path[512], cmd[1024];
	FILE *f;
	int rc;

	snprintf(e2e.dir, sizeof(e2e.dir), "/tmp/kerf-e2e-XXXXXX");
	if (!cert_script || !mkdtemp(e2e.dir)) {
		fprintf(stderr, "usage: %s CERT_SCRIPT (or set KERF_E2E_KUBECONFIG)\n", prog);
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "sh '%s' '%s'", cert_script, e2e.dir);
	rc = system(cmd);
	if (rc != 0) {
		printf("1..0 # SKIP no openssl to make certificates\n0 passed, 0 failed\n");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/server.crt", e2e.dir);
	o.tls_cert_pem = e2e_slurp(path);
	snprintf(path, sizeof(path), "%s/server.key", e2e.dir);
	o.tls_key_pem = e2e_slurp(path);
	rc = kerf_testapi_start(&o, &e2e.ta, &err);
	free((char *)o.tls_cert_pem);
	free((char *)o.tls_key_pem);
	if (rc < 0) {
		fprintf(stderr, "%s: test API server: %s\n", prog, err.msg);
		return -1;
	}
	snprintf(e2e.kubeconfig, sizeof(e2e.kubeconfig), "%s/kubeconfig", e2e.dir);
	f = fopen(e2e.kubeconfig, "w");
	if (!f)
		return -1;
	fprintf(f, "apiVersion: v1\nkind: Config\nclusters:\n- name: t\n  cluster:\n"
		   "    server: %s\n    certificate-authority: %s/ca.crt\n"
		   "users:\n- name: t\n  user:\n    token: kerf-e2e-token\n"
		   "contexts:\n- name: t\n  context:\n    cluster: t\n    user: t\n"
		   "current-context: t\n", kerf_testapi_url(e2e.ta), e2e.dir);
	return fclose(f) == 0 ? 0 : -1;
}

int e2e_setup(const char *cert_script, const char *prog)
{
	const char *kc = getenv("KERF_E2E_KUBECONFIG");
	int rc;

	if (kc) {
		snprintf(e2e.kubeconfig, sizeof(e2e.kubeconfig), "%s", kc);
		/* certificates for what the suite serves itself (a proxy) */
		snprintf(e2e.dir, sizeof(e2e.dir), "/tmp/kerf-e2e-XXXXXX");
		if (cert_script && mkdtemp(e2e.dir)) {
			char cmd[1024];

			snprintf(cmd, sizeof(cmd), "sh '%s' '%s'", cert_script, e2e.dir);
			if (system(cmd) != 0)
				e2e.dir[0] = '\0';
		} else {
			e2e.dir[0] = '\0';
		}
	} else if ((rc = start_testapi(cert_script, prog)) != 0) {
		return rc;
	}
	if (e2e_connect(e2e.kubeconfig) < 0)
		return -1;
	e2e_step = step;
	return 0;
}

void e2e_teardown(void)
{
	e2e_controller_stop();
	e2e_step = NULL;
	e2e_disconnect();
	kerf_testapi_stop(e2e.ta);
	e2e.ta = NULL;
}

int e2e_finish(const char *ns, const char *node, const char *tenant)
{
	char path[320];

	if (e2e.ctl && kerf_controller_stats(e2e.ctl)->last_error[0])
		printf("# last error: %s\n", kerf_controller_stats(e2e.ctl)->last_error);
	e2e_controller_stop();
	if (ns) {
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s", ns);
		e2e_api("DELETE", path, NULL, NULL, NULL);
	}
	if (node) {
		snprintf(path, sizeof(path), "/api/v1/nodes/%s", node);
		e2e_api("DELETE", path, NULL, NULL, NULL);
	}
	if (tenant) {
		snprintf(path, sizeof(path), "/apis/kerf.io/v1alpha1/tenants/%s", tenant);
		e2e_api("DELETE", path, NULL, NULL, NULL);
	}
	e2e_teardown();
	return e2e_done();
}
