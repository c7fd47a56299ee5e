/*
 * e2e_lib: see e2e_lib.h.
 */
#include "e2e_lib.h"
#include "e2e_crds.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube/kubeconfig.h"
#include "kube/sync.h"

struct e2e_env e2e;

int64_t e2e_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void e2e_check(bool ok, const char *what)
{
	printf("%s %d - %s\n", ok ? "ok" : "not ok",
	       e2e.nr_passed + e2e.nr_failed + 1, what);
	fflush(stdout);
	if (ok)
		e2e.nr_passed++;
	else
		e2e.nr_failed++;
}

int e2e_done(void)
{
	/* under meson (KERF_TAP) the summary is a TAP comment */
	printf("1..%d\n%s%d passed, %d failed\n", e2e.nr_passed + e2e.nr_failed,
	       getenv("KERF_TAP") ? "# " : "", e2e.nr_passed, e2e.nr_failed);
	return e2e.nr_failed ? 1 : 0;
}

void e2e_turn(int wait_ms)
{
	if (e2e.ctl)
		kerf_controller_step(e2e.ctl, e2e_wall_ms());
	if (e2e.other)
		kerf_kube_client_poll(e2e.other, 0);
	kerf_kube_client_poll(e2e.client, wait_ms);
}

static void turn_cb(void *arg)
{
	(void)arg;
	e2e_turn(10);
}

long e2e_api(const char *method, const char *path, const char *ctype,
	     const char *body, json_t **out)
{
	struct kerf_kube_request rq = {
		.method = method, .path = path, .content_type = ctype,
		.body = body, .body_len = body ? strlen(body) : 0,
		.flags = KERF_KUBE_REQ_NO_RETRY,
	};

	return kerf_kube_sync(&e2e.ops, &rq, turn_cb, NULL, 3000, out);
}

long e2e_post(const char *path, const char *fmt, ...)
{
	char body[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	return e2e_api("POST", path, "application/json", body, NULL);
}

void e2e_install_crd(void)
{
	for (size_t k = 0; k < sizeof(e2e_crds) / sizeof(e2e_crds[0]); k++) {
		int rc = (int)e2e_post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
				       "%s", e2e_crds[k].json);

		e2e_check(rc == 201 || rc == 409, k ? "the GPUPool CRD installed"
						   : "the Tenant CRD installed");
		for (int i = 0; i < 50; i++) {
			json_t *l = NULL;
			long st = e2e_api("GET", e2e_crds[k].list_path, NULL, NULL, &l);

			json_decref(l);
			if (st == 200)
				break;
			nanosleep(&(struct timespec){ .tv_nsec = 100000000 }, NULL);
		}
	}
}

void e2e_node(const char *name, int gpus, const char *label)
{
	char path[256], body[512];

	e2e_post("/api/v1/nodes",
		 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":"
		 "{\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\",\"nvidia.com/gpu.memory\":\"81559\",\"kerf.io/e2e\":\"1\"%s%s}},"
		 "\"status\":{\"capacity\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"%d\"},"
		 "\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"%d\"}}}",
		 name, label ? "," : "", label ? label : "", gpus, gpus);
	/* an API server taints new nodes not-ready; no kubelet will clear it */
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", name);
	e2e_api("PATCH", path, "application/merge-patch+json", "{\"spec\":{\"taints\":null}}", NULL);
	/* the status sent on create is kept, but send it again the kubelet's way */
	snprintf(path, sizeof(path), "/api/v1/nodes/%s/status", name);
	snprintf(body, sizeof(body),
		 "{\"status\":{\"capacity\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"%d\"},"
		 "\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"%d\"}}}",
		 gpus, gpus);
	e2e_api("PATCH", path, "application/merge-patch+json", body, NULL);
}

long e2e_pod(const char *ns, const char *name, const char *gang, int size,
	     int gpus, const char *scheduler, const char *selector)
{
	char path[256], meta[256] = "", sel[256] = "";

	if (gang)
		snprintf(meta, sizeof(meta),
			 ",\"labels\":{\"kerf.io/gang\":\"%s\"},\"annotations\":{\"kerf.io/gang-size\":\"%d\"}",
			 gang, size);
	if (selector)
		snprintf(sel, sizeof(sel), "\"nodeSelector\":{%s},", selector);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	return e2e_post(path,
			"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"%s},"
			"\"spec\":{%s\"schedulerName\":\"%s\",\"terminationGracePeriodSeconds\":0,\"containers\":[{\"name\":\"c\",\"image\":\"busybox:1.36\","
			"\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"%d\"}}}]}}",
			name, meta, sel, scheduler, gpus);
}

void e2e_pod_state(const char *ns, const char *name, char *node, size_t n,
		   char *msg, size_t m)
{
	char path[256];
	json_t *p = NULL, *conds, *c;
	size_t i;

	node[0] = msg[0] = '\0';
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
	if (e2e_api("GET", path, NULL, NULL, &p) != 200) {
		json_decref(p);
		return;
	}
	snprintf(node, n, "%s", json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName")) ?: "");
	conds = json_object_get(json_object_get(p, "status"), "conditions");
	json_array_foreach(conds, i, c)
		if (!strcmp(json_string_value(json_object_get(c, "type")) ?: "", "PodScheduled") &&
		    !strcmp(json_string_value(json_object_get(c, "status")) ?: "", "False"))
			snprintf(msg, m, "%s", json_string_value(json_object_get(c, "message")) ?: "");
	json_decref(p);
}

int e2e_count_bound(const char *ns, const char *prefix, int n)
{
	char name[64], node[256], msg[512];
	int bound = 0;

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s-%d", prefix, i);
		e2e_pod_state(ns, name, node, sizeof(node), msg, sizeof(msg));
		bound += node[0] != '\0';
	}
	return bound;
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
		.ops = ops ? ops : &e2e.ops, .scheduler_name = "kerf",
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

char *e2e_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = '\0';
	fclose(f);
	return buf;
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
	struct kerf_err err = { 0 };
	int rc;

	kerf_kube_config_init(&e2e.cfg);
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
	if (kerf_kubeconfig_load(&e2e.cfg, e2e.kubeconfig, NULL, &err) < 0 ||
	    !(e2e.client = kerf_kube_client_new(&e2e.cfg, NULL, &err))) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return -1;
	}
	kerf_kube_client_ops(e2e.client, &e2e.ops);
	return 0;
}

void e2e_teardown(void)
{
	e2e_controller_stop();
	kerf_kube_client_free(e2e.client);
	e2e.client = NULL;
	kerf_kube_config_release(&e2e.cfg);
	kerf_testapi_stop(e2e.ta);
	e2e.ta = NULL;
}
