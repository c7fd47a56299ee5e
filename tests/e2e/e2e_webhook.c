/*
 * e2e_webhook: kerf's admission webhook end to end, through the API
 * server, as the e2e suite runs: kerf's test API server over TLS by
 * default, or any real cluster (KERF_E2E_KUBECONFIG; the API server must
 * reach 127.0.0.1 on this machine, as with a local cluster).
 *
 * kerf serve runs in this process with its webhook on 127.0.0.1 (a free
 * port) serving the run's certificate; the suite registers the webhook
 * configurations of deploy/webhook/ (the same rules, failure policies and
 * selectors, restricted to the suite's namespaces and pointed at that URL
 * with the run's CA as caBundle), then shows:
 *   - a pod with an escape is refused by the API server with kerf's
 *     message naming the field and the rule;
 *   - a GPU pod is stored as the mutation documents (scheduler, tenant
 *     labels, toleration, checkpoint volume, NCCL settings);
 *   - a dry run is judged and mutated, and nothing is stored;
 *   - W-01: with kerf stopped, kube-system and a namespace of no tenant
 *     still create pods, while GPU pods of the tenant namespace are
 *     refused (failurePolicy Fail).
 * The configurations are removed at the end, whatever happened.
 * Ends with "N passed, N failed"; exit 1 on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "admission/policy.h"
#include "base/base64.h"
#include "base/buf.h"
#include "e2e_lib.h"
#include "serve/webhook.h"

static const char *const ns_t = "kerf-e2e-wh", *const ns_plain = "kerf-e2e-wh-plain";
static struct kerf_serve_webhook *wh;
static void (*lib_step)(void);

static void step(void)
{
	if (lib_step)
		lib_step();
	kerf_serve_webhook_step(wh, e2e_wall_ms());
}

/* The run's CA, base64, for the caBundle. */
static char *ca_bundle(void)
{
	char path[512], *pem, *b64 = NULL;
	size_t n;

	snprintf(path, sizeof(path), "%s/ca.crt", e2e.dir);
	pem = e2e_slurp(path);
	if (!pem || kerf_base64_encode(pem, strlen(pem), &b64, &n) < 0)
		b64 = NULL;
	free(pem);
	return b64;
}

/* deploy/webhook/'s selector, restricted to the suite's tenant namespace. */
#define NS_SELECTOR \
	"\"namespaceSelector\":{\"matchExpressions\":[" \
	"{\"key\":\"kerf.io/tenant\",\"operator\":\"In\",\"values\":[\"kerf-e2e-wh\"]}," \
	"{\"key\":\"kubernetes.io/metadata.name\",\"operator\":\"NotIn\",\"values\":[\"kube-system\",\"kube-node-lease\",\"kube-public\",\"kerf-system\"]}]}"

static bool register_webhooks(uint16_t port)
{
	char *ca = ca_bundle();
	long a, b;

	if (!ca)
		return false;
	a = e2e_post("/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
		"{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":\"MutatingWebhookConfiguration\","
		"\"metadata\":{\"name\":\"kerf-e2e\"},\"webhooks\":[{\"name\":\"pods.mutate.kerf-e2e.io\","
		"\"clientConfig\":{\"url\":\"https://127.0.0.1:%u/mutate/pods\",\"caBundle\":\"%s\"},"
		"\"rules\":[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],\"resources\":[\"pods\"],\"scope\":\"Namespaced\"}],"
		"\"failurePolicy\":\"Ignore\",\"matchPolicy\":\"Equivalent\",\"reinvocationPolicy\":\"IfNeeded\","
		"\"sideEffects\":\"None\",\"timeoutSeconds\":3,\"admissionReviewVersions\":[\"v1\"]," NS_SELECTOR "}]}",
		(unsigned)port, ca);
	b = e2e_post("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
		"{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":\"ValidatingWebhookConfiguration\","
		"\"metadata\":{\"name\":\"kerf-e2e\"},\"webhooks\":[{\"name\":\"pods.validate.kerf-e2e.io\","
		"\"clientConfig\":{\"url\":\"https://127.0.0.1:%u/validate/pods\",\"caBundle\":\"%s\"},"
		"\"rules\":[{\"operations\":[\"CREATE\",\"UPDATE\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"
		"\"resources\":[\"pods\",\"pods/ephemeralcontainers\"],\"scope\":\"Namespaced\"}],"
		"\"failurePolicy\":\"Fail\",\"matchPolicy\":\"Equivalent\","
		"\"sideEffects\":\"None\",\"timeoutSeconds\":3,\"admissionReviewVersions\":[\"v1\"]," NS_SELECTOR "}]}",
		(unsigned)port, ca);
	free(ca);
	return a == 201 && b == 201;
}

static void unregister_webhooks(void)
{
	e2e_api("DELETE", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/kerf-e2e",
		NULL, NULL, NULL);
	e2e_api("DELETE", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/kerf-e2e",
		NULL, NULL, NULL);
}

/* POST a pod: its status code, and the answer in *out (or NULL). */
static long pod(const char *ns, const char *query, const char *name,
		const char *extra_container, int gpus, json_t **out)
{
	char path[256], body[2048], res[128] = "";

	if (gpus)
		snprintf(res, sizeof(res), ",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"%d\"}}", gpus);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods%s", ns, query);
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},"
		 "\"spec\":{\"terminationGracePeriodSeconds\":0,\"containers\":[{\"name\":\"c\","
		 "\"image\":\"busybox:1.36\"%s%s}]}}",
		 name, extra_container, res);
	return e2e_api("POST", path, "application/json", body, out);
}

static const char *str_at(const json_t *j, const char *const *path)
{
	for (; *path; path++)
		j = json_object_get(j, *path);
	return json_string_value(j);
}

/* The webhook's snapshot knows the suite's namespace (ready to judge). */
static bool webhook_knows(void *arg)
{
	json_t *out = NULL;
	long rc;

	(void)arg;
	/* a dry run through the API server: mutated once kerf knows the tenant */
	rc = pod(ns_t, "?dryRun=All", "probe", "", 1, &out);
	if (getenv("E2E_DEBUG"))
		printf("# probe: %ld %s\n", rc, json_string_value(json_object_get(out, "message")));
	if (rc == 201) {
		const char *s = str_at(out, (const char *const[]){ "spec", "schedulerName", NULL });
		bool ok = s && !strcmp(s, "kerf");

		json_decref(out);
		return ok;
	}
	json_decref(out);
	return false;
}

static void delete_pod(const char *ns, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s?gracePeriodSeconds=0", ns, name);
	e2e_api("DELETE", path, NULL, NULL, NULL);
}

int main(int argc, char **argv)
{
	struct kerf_admission_config cfg;
	struct kerf_serve_webhook_opts wo = { .addr = "127.0.0.1:0", .cfg = &cfg };
	struct kerf_err err = { 0 };
	char cert[512], key[512];
	json_t *out = NULL;
	const char *msg;
	long rc;

	rc = e2e_setup(argc > 1 ? argv[1] : NULL, "e2e_webhook");
	if (rc != 0)
		return rc < 0 ? 1 : 0;
	if (!e2e.dir[0]) {
		printf("1..0 # SKIP no certificates for the webhook\n0 passed, 0 failed\n");
		e2e_teardown();
		return 0;
	}
	e2e_check(e2e_crd(), "kerf's CRDs installed (Tenant, GPUPool)");
	e2e_post("/apis/kerf.io/v1alpha1/tenants",
	     "{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"kerf-e2e-wh\"},"
	     "\"spec\":{\"weight\":1,\"networkClass\":\"rdma\"}}");
	e2e_post("/api/v1/namespaces", "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"kerf.io/tenant\":\"kerf-e2e-wh\"}}}", ns_t);
	e2e_post("/api/v1/namespaces", "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", ns_plain);

	/* kerf serve with its webhook on 127.0.0.1 */
	kerf_admission_config_default(&cfg);
	snprintf(cert, sizeof(cert), "%s/server.crt", e2e.dir);
	snprintf(key, sizeof(key), "%s/server.key", e2e.dir);
	wo.cert_path = cert;
	wo.key_path = key;
	e2e_check(e2e_controller_start(NULL), "kerf serve started");
	if (kerf_serve_webhook_start(&wo, e2e.ctl, &wh, &err) < 0) {
		fprintf(stderr, "e2e_webhook: %s\n", err.msg);
		e2e_check(false, "the webhook serves on 127.0.0.1");
		e2e_teardown();
		return e2e_done();
	}
	lib_step = e2e_step;
	e2e_step = step;
	e2e_check(register_webhooks(kerf_serve_webhook_port(wh)),
		  "kerf's webhook configurations registered (URL on 127.0.0.1, the run's CA)");
	e2e_check(e2e_run_until(webhook_knows, NULL, 20000),
		  "the webhook knows the tenant's namespace (a dry run is mutated)");

	/* an escape: refused by the API server with kerf's message */
	rc = pod(ns_t, "", "escape", ",\"env\":[{\"name\":\"NVIDIA_VISIBLE_DEVICES\",\"value\":\"all\"}]", 1, &out);
	msg = json_string_value(json_object_get(out, "message"));
	if (msg)
		printf("# %s\n", msg);
	e2e_check(rc == 403 && msg &&
		  strstr(msg, "admission webhook \"pods.validate.kerf-e2e.io\" denied the request: ") &&
		  strstr(msg, "spec.containers[0].env[0]: NVIDIA_VISIBLE_DEVICES") &&
		  strstr(msg, "(rule device-env)"),
		  "a pod with NVIDIA_VISIBLE_DEVICES is refused by the API server with kerf's message (403)");
	json_decref(out);
	rc = pod(ns_t, "", "priv", ",\"securityContext\":{\"privileged\":true}", 1, &out);
	msg = json_string_value(json_object_get(out, "message"));
	e2e_check(rc == 403 && msg && strstr(msg, "spec.containers[0].securityContext.privileged") &&
		  strstr(msg, "(rule privileged)"), "a privileged GPU pod is refused, the field named");
	json_decref(out);

	/* a GPU pod, mutated as documented */
	rc = pod(ns_t, "", "gpu", "", 1, &out);
	e2e_check(rc == 201, "a GPU pod of the tenant namespace is created");
	{
		const char *sched = str_at(out, (const char *const[]){ "spec", "schedulerName", NULL });
		const char *tenant = str_at(out, (const char *const[]){ "metadata", "labels", "kerf.io/tenant", NULL });
		const char *queue = str_at(out, (const char *const[]){ "metadata", "labels", "kerf.io/queue", NULL });
		const char *dscp = str_at(out, (const char *const[]){ "metadata", "annotations", "kerf.io/dscp", NULL });
		const json_t *c0 = json_array_get(json_object_get(json_object_get(out, "spec"), "containers"), 0);
		const json_t *e, *v;
		size_t i;
		bool tc = false, vol = false, tol = false;

		json_array_foreach(json_object_get(c0, "env"), i, e)
			if (!strcmp(json_string_value(json_object_get(e, "name")), "NCCL_IB_TC") &&
			    !strcmp(json_string_value(json_object_get(e, "value")), "106"))
				tc = true;
		json_array_foreach(json_object_get(json_object_get(out, "spec"), "volumes"), i, v)
			if (!strcmp(json_string_value(json_object_get(v, "name")), "kerf-checkpoint"))
				vol = true;
		json_array_foreach(json_object_get(json_object_get(out, "spec"), "tolerations"), i, v)
			if (json_string_value(json_object_get(v, "key")) &&
			    !strcmp(json_string_value(json_object_get(v, "key")), "nvidia.com/gpu"))
				tol = true;
		e2e_check(sched && !strcmp(sched, "kerf"), "mutated: schedulerName kerf");
		e2e_check(tenant && queue && !strcmp(tenant, "kerf-e2e-wh") && !strcmp(queue, "kerf-e2e-wh"),
			  "mutated: kerf.io/tenant and kerf.io/queue from the namespace");
		e2e_check(dscp && !strcmp(dscp, "26") && tc, "mutated: DSCP 26 and NCCL_IB_TC=106 of class rdma");
		e2e_check(tol && vol, "mutated: the GPU toleration and the checkpoint volume");
	}
	json_decref(out);

	/* a dry run: judged, mutated, not stored */
	rc = pod(ns_t, "?dryRun=All", "dry", "", 1, &out);
	json_decref(out);
	out = NULL;
	e2e_check(rc == 201 && e2e_api("GET", "/api/v1/namespaces/kerf-e2e-wh/pods/dry", NULL, NULL, NULL) == 404,
		  "a dry run is answered and nothing is stored");

	/* the webhook's metrics saw it: verdicts by route, denials by rule */
	{
		struct kerf_buf b;

		kerf_buf_init(&b, 1 << 20);
		e2e_check(kerf_serve_webhook_metrics(wh, &b) == 0 &&
			  strstr(kerf_buf_str(&b), "kerf_webhook_requests_total{path=\"/validate/pods\",verdict=\"denied\"}") &&
			  strstr(kerf_buf_str(&b), "kerf_webhook_requests_total{path=\"/mutate/pods\",verdict=\"patched\"}") &&
			  strstr(kerf_buf_str(&b), "kerf_webhook_denials_total{rule=\"device-env\"} 1") &&
			  strstr(kerf_buf_str(&b), "kerf_webhook_policy_snapshots_total"),
			  "the webhook's metrics count verdicts by route and denials by rule");
		kerf_buf_release(&b);
	}

	/* W-01: every kerf replica stopped */
	kerf_serve_webhook_stop(wh);
	wh = NULL;
	rc = pod("kube-system", "", "kerf-e2e-wh-sys", "", 0, NULL);
	e2e_check(rc == 201, "W-01: kerf down, kube-system still creates pods");
	rc = pod(ns_plain, "", "plain", "", 0, NULL);
	e2e_check(rc == 201, "W-01: kerf down, a namespace of no tenant still creates pods");
	rc = pod(ns_t, "", "gpu-down", "", 1, &out);
	msg = json_string_value(json_object_get(out, "message"));
	if (msg)
		printf("# %s\n", msg);
	e2e_check(rc >= 500 && msg && strstr(msg, "failed calling webhook \"pods.validate.kerf-e2e.io\""),
		  "W-01: kerf down, a GPU pod of the tenant namespace is refused (failurePolicy Fail)");
	json_decref(out);

	unregister_webhooks();
	delete_pod("kube-system", "kerf-e2e-wh-sys");
	delete_pod(ns_plain, "plain");
	delete_pod(ns_t, "gpu");
	e2e_api("DELETE", "/api/v1/namespaces/kerf-e2e-wh", NULL, NULL, NULL);
	e2e_api("DELETE", "/api/v1/namespaces/kerf-e2e-wh-plain", NULL, NULL, NULL);
	e2e_api("DELETE", "/apis/kerf.io/v1alpha1/tenants/kerf-e2e-wh", NULL, NULL, NULL);
	e2e_step = lib_step;
	e2e_teardown();
	return e2e_done();
}
