/*
 * e2e_serve: kerf serve end to end on an API server, through HTTP only, so
 * the same suite runs against kerf's test API server (the default: started
 * here over TLS with certificates made for the run) or any real cluster
 * (KERF_E2E_KUBECONFIG names its kubeconfig; the suite installs the CRD,
 * uses namespaces and nodes of its own named kerf-e2e-*, and removes them).
 * With no kubelet, the suite creates Node objects with GPU capacity and
 * removes the not-ready taint an API server puts on new nodes.  kerf serve
 * runs in this process, as out of a cluster, driven step by step.
 *
 * Scenarios: a 4-pod gang bound together (never part of it), a gang over
 * its tenant's quota pending with the reason in PodScheduled, pods of
 * another scheduler holding GPUs that kerf then leaves alone, a restarted
 * kerf serve that adopts what runs and binds nothing twice, a preemption
 * through the checkpoint handshake and the Eviction API held back by a
 * PodDisruptionBudget (the preemptor told why, the victim's GPUs never
 * given while it terminates), and a Tenant's quota raised live.
 * E2E_DEBUG=1 prints the PodScheduled messages it waits on.
 * Ends with "N passed, N failed"; exit 1 on any failure.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/sync.h"
#include "serve/controller.h"
#include "testapi/testapi.h"

static int nr_passed, nr_failed;
static struct kerf_kube_client *client;
static struct kerf_kube_ops ops;
static struct kerf_controller *ctl;

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void check(bool ok, const char *what)
{
	printf("%s %d - %s\n", ok ? "ok" : "not ok", nr_passed + nr_failed + 1, what);
	if (ok)
		nr_passed++;
	else
		nr_failed++;
}

/* One step of kerf serve (when running) and of the client. */
static void turn(int wait_ms)
{
	if (ctl)
		kerf_controller_step(ctl, wall_ms());
	kerf_kube_client_poll(client, wait_ms);
}

static void turn_cb(void *arg)
{
	(void)arg;
	turn(10);
}

/* A request, answered: the status; *out (caller decrefs) when wanted. */
static long api(const char *method, const char *path, const char *ctype,
		const char *body, json_t **out)
{
	struct kerf_kube_request rq = {
		.method = method, .path = path, .content_type = ctype,
		.body = body, .body_len = body ? strlen(body) : 0,
		.flags = KERF_KUBE_REQ_NO_RETRY,
	};

	return kerf_kube_sync(&ops, &rq, turn_cb, NULL, 3000, out);
}

static long post(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static long post(const char *path, const char *fmt, ...)
{
	char body[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	return api("POST", path, "application/json", body, NULL);
}

static void node(const char *name, int gpus)
{
	char path[256];

	post("/api/v1/nodes",
	     "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":"
	     "{\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\",\"nvidia.com/gpu.memory\":\"81559\",\"kerf.io/e2e\":\"1\"}},"
	     "\"status\":{\"capacity\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"%d\"},"
	     "\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"%d\"}}}",
	     name, gpus, gpus);
	/* an API server taints new nodes not-ready; no kubelet will clear it */
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", name);
	api("PATCH", path, "application/merge-patch+json", "{\"spec\":{\"taints\":null}}", NULL);
	/* the status sent on create is kept, but send it again the kubelet's way */
	snprintf(path, sizeof(path), "/api/v1/nodes/%s/status", name);
	{
		char body[512];

		snprintf(body, sizeof(body),
			 "{\"status\":{\"capacity\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"%d\"},"
			 "\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"%d\"}}}",
			 gpus, gpus);
		api("PATCH", path, "application/merge-patch+json", body, NULL);
	}
}

struct podspec {
	const char *gang;            /* label kerf.io/gang; NULL */
	int size;                    /* annotation kerf.io/gang-size */
	int gpus;
	const char *scheduler;
	const char *pclass;          /* spec.priorityClassName; NULL */
	int grace_s;                 /* terminationGracePeriodSeconds */
	const char *role;            /* label kerf-e2e/role; NULL */
};

static long pod_with(const char *ns, const char *name, const struct podspec *ps)
{
	char path[256], labels[256] = "", ann[128] = "", spec[128] = "";

	if (ps->gang || ps->role)
		snprintf(labels, sizeof(labels), ",\"labels\":{%s%s%s%s%s%s%s}",
			 ps->gang ? "\"kerf.io/gang\":\"" : "", ps->gang ? ps->gang : "",
			 ps->gang ? "\"" : "", ps->gang && ps->role ? "," : "",
			 ps->role ? "\"kerf-e2e/role\":\"" : "", ps->role ? ps->role : "",
			 ps->role ? "\"" : "");
	if (ps->gang)
		snprintf(ann, sizeof(ann), ",\"annotations\":{\"kerf.io/gang-size\":\"%d\"}",
			 ps->size);
	if (ps->pclass)
		snprintf(spec, sizeof(spec), "\"priorityClassName\":\"%s\",", ps->pclass);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	return post(path,
		    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"%s%s},"
		    "\"spec\":{%s\"schedulerName\":\"%s\",\"terminationGracePeriodSeconds\":%d,"
		    "\"containers\":[{\"name\":\"c\",\"image\":\"busybox:1.36\","
		    "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"%d\"}}}]}}",
		    name, labels, ann, spec, ps->scheduler, ps->grace_s, ps->gpus);
}

static long pod(const char *ns, const char *name, const char *gang, int size,
		int gpus, const char *scheduler)
{
	return pod_with(ns, name, &(struct podspec){ .gang = gang, .size = size,
						     .gpus = gpus, .scheduler = scheduler });
}

/* Play the kubelet: the pod runs. */
static void pod_running(const char *ns, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status", ns, name);
	api("PATCH", path, "application/merge-patch+json",
	    "{\"status\":{\"phase\":\"Running\"}}", NULL);
}

/* Play the kubelet: a pod being deleted is gone (grace 0). */
static void pod_gone(const char *ns, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
	api("DELETE", path, "application/json",
	    "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"gracePeriodSeconds\":0}", NULL);
}

/* The pod's annotation key ("" none, NULL when the pod is gone), into out. */
static const char *pod_annotation(const char *ns, const char *name, const char *key,
				  char *out, size_t size, bool *terminating)
{
	char path[256];
	json_t *p = NULL;
	const char *v;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
	if (api("GET", path, NULL, NULL, &p) != 200) {
		json_decref(p);
		return NULL;
	}
	v = json_string_value(json_object_get(json_object_get(json_object_get(p, "metadata"),
								"annotations"), key));
	snprintf(out, size, "%s", v ? v : "");
	if (terminating)
		*terminating = json_object_get(json_object_get(p, "metadata"),
					       "deletionTimestamp") != NULL;
	json_decref(p);
	return out;
}

/* The node a pod is bound to ("" when none) and its PodScheduled message. */
static void pod_state(const char *ns, const char *name, char *node, size_t n,
		      char *msg, size_t m)
{
	char path[256];
	json_t *p = NULL, *conds, *c;
	size_t i;

	node[0] = msg[0] = '\0';
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
	if (api("GET", path, NULL, NULL, &p) != 200) {
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

static int count_bound(const char *ns, const char *prefix, int n)
{
	char name[64], node[256], msg[512];
	int bound = 0;

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s-%d", prefix, i);
		pod_state(ns, name, node, sizeof(node), msg, sizeof(msg));
		bound += node[0] != '\0';
	}
	return bound;
}

/* Run kerf serve until cond holds or timeout_ms passes. */
static bool run_until(bool (*cond)(void *), void *arg, int64_t timeout_ms)
{
	int64_t end = wall_ms() + timeout_ms;

	while (wall_ms() < end) {
		for (int i = 0; i < 10; i++)
			turn(20);
		if (cond(arg))
			return true;
	}
	return false;
}

struct want { const char *ns, *prefix; int n, bound; };

static bool bound_is(void *arg)
{
	struct want *w = arg;

	return count_bound(w->ns, w->prefix, w->n) == w->bound;
}

struct says_arg { const char *ns, *name, *text; };

/* The pod's PodScheduled=False message holds text. */
static bool says(void *arg)
{
	struct says_arg *a = arg;
	char node[256], msg[512];

	pod_state(a->ns, a->name, node, sizeof(node), msg, sizeof(msg));
	if (getenv("E2E_DEBUG"))
		fprintf(stderr, "%lld %s: %s\n", (long long)wall_ms(), a->name, msg);
	return strstr(msg, a->text) != NULL;
}

/* Dimensions in a Tenant's status.history.usageAverage. */
static size_t history_size(const json_t *t)
{
	return json_object_size(json_object_get(json_object_get(json_object_get(t, "status"),
								 "history"), "usageAverage"));
}

static bool synced(void *arg)
{
	(void)arg;
	return kerf_controller_synced(ctl);
}

static bool controller_start(void)
{
	struct kerf_controller_opts o = {
		.ops = &ops, .scheduler_name = "kerf", .policy = "kerf",
		.identity = "kerf-e2e", .resync_ms = 200, .status_ms = 500, .seed = 1,
	};
	struct kerf_err err = { 0 };

	if (kerf_controller_new(&o, &ctl, &err) < 0 || kerf_controller_start(ctl, &err) < 0) {
		fprintf(stderr, "e2e: kerf serve: %s\n", err.msg);
		return false;
	}
	return true;
}

static void controller_stop(void)
{
	kerf_controller_free(ctl);
	ctl = NULL;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = '\0';
	fclose(f);
	return buf;
}

static const char tenant_crd[] =
	"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
	"\"metadata\":{\"name\":\"tenants.kerf.io\"},\"spec\":{\"group\":\"kerf.io\",\"scope\":\"Cluster\","
	"\"names\":{\"plural\":\"tenants\",\"singular\":\"tenant\",\"kind\":\"Tenant\",\"listKind\":\"TenantList\"},"
	"\"versions\":[{\"name\":\"v1alpha1\",\"served\":true,\"storage\":true,\"subresources\":{\"status\":{}},"
	"\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";

int main(int argc, char **argv)
{
	const char *kc = getenv("KERF_E2E_KUBECONFIG");
	const char *certs = argc > 1 ? argv[1] : NULL;
	struct kerf_testapi *ta = NULL;
	struct kerf_kube_config cfg;
	struct kerf_err err = { 0 };
	char kcpath[512], tmp[] = "/tmp/kerf-e2e-XXXXXX", cmd[1024];
	char node_name[256], msg[512];
	const char *ns = "kerf-e2e-a", *ns_b = "kerf-e2e-b";
	int rc;

	kerf_kube_config_init(&cfg);
	if (!kc) {
		struct kerf_testapi_opts o = { .token = "kerf-e2e-token" };
		FILE *f;

		if (!certs || !mkdtemp(tmp)) {
			fprintf(stderr, "usage: e2e_serve CERT_SCRIPT (or set KERF_E2E_KUBECONFIG)\n");
			return 2;
		}
		snprintf(cmd, sizeof(cmd), "sh '%s' '%s'", certs, tmp);
		rc = system(cmd);
		if (rc != 0) {
			printf("1..0 # SKIP no openssl to make certificates\n0 passed, 0 failed\n");
			return 0;
		}
		snprintf(kcpath, sizeof(kcpath), "%s/server.crt", tmp);
		o.tls_cert_pem = slurp(kcpath);
		snprintf(kcpath, sizeof(kcpath), "%s/server.key", tmp);
		o.tls_key_pem = slurp(kcpath);
		if (kerf_testapi_start(&o, &ta, &err) < 0) {
			fprintf(stderr, "e2e: test API server: %s\n", err.msg);
			return 1;
		}
		snprintf(kcpath, sizeof(kcpath), "%s/kubeconfig", tmp);
		f = fopen(kcpath, "w");
		if (!f)
			return 1;
		fprintf(f, "apiVersion: v1\nkind: Config\nclusters:\n- name: t\n  cluster:\n"
			   "    server: %s\n    certificate-authority: %s/ca.crt\n"
			   "users:\n- name: t\n  user:\n    token: kerf-e2e-token\n"
			   "contexts:\n- name: t\n  context:\n    cluster: t\n    user: t\n"
			   "current-context: t\n", kerf_testapi_url(ta), tmp);
		fclose(f);
		free((char *)o.tls_cert_pem);
		free((char *)o.tls_key_pem);
		kc = kcpath;
	}
	if (kerf_kubeconfig_load(&cfg, kc, NULL, &err) < 0 ||
	    !(client = kerf_kube_client_new(&cfg, NULL, &err))) {
		fprintf(stderr, "e2e: %s\n", err.msg);
		return 1;
	}
	kerf_kube_client_ops(client, &ops);

	/* the cluster: the CRD, two tenants' namespaces, two 8-GPU nodes */
	rc = (int)post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "%s", tenant_crd);
	check(rc == 201 || rc == 409, "the Tenant CRD installed");
	for (int i = 0; i < 50; i++) {
		json_t *l = NULL;

		long st = api("GET", "/apis/kerf.io/v1alpha1/tenants", NULL, NULL, &l);

		json_decref(l);
		if (st == 200)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 100000000 }, NULL);
	}
	post("/apis/kerf.io/v1alpha1/tenants",
	     "{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"kerf-e2e-a\"},\"spec\":{\"weight\":1}}");
	post("/apis/kerf.io/v1alpha1/tenants",
	     "{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"kerf-e2e-b\"},"
	     "\"spec\":{\"weight\":1,\"quotas\":[{\"flavor\":\"nvidia-h100-80gb-hbm3\",\"nominal\":\"2\",\"borrowingLimit\":\"0\"}]}}");
	post("/api/v1/namespaces", "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"kerf.io/tenant\":\"kerf-e2e-a\"}}}", ns);
	post("/api/v1/namespaces", "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"kerf.io/tenant\":\"kerf-e2e-b\"}}}", ns_b);
	node("kerf-e2e-node-1", 8);
	node("kerf-e2e-node-2", 8);

	/* 1. a 4-pod gang of 4 GPUs each: all four bound, or none */
	for (int i = 0; i < 3; i++) {
		char name[32];

		snprintf(name, sizeof(name), "gang-%d", i);
		pod(ns, name, "gang", 4, 4, "kerf");
	}
	check(controller_start(), "kerf serve started");
	{
		struct want w = { ns, "gang", 4, 1 };

		/* three of four: nothing may be bound, however long it runs */
		check(!run_until(bound_is, &w, 1500) && count_bound(ns, "gang", 3) == 0,
		      "3 of a 4-pod gang: none bound");
		pod_state(ns, "gang-0", node_name, sizeof(node_name), msg, sizeof(msg));
		check(strstr(msg, "3 of 4") != NULL, "the incomplete gang's pods say why");
		pod(ns, "gang-3", "gang", 4, 4, "kerf");
		w.bound = 4;
		check(run_until(bound_is, &w, 10000), "the 4th pod: all four bound");
		/* the kubelet's part: they run (work that a preemption would lose) */
		for (int i = 0; i < 4; i++) {
			char name[32];

			snprintf(name, sizeof(name), "gang-%d", i);
			pod_running(ns, name);
		}
	}

	/* 2. a gang over its tenant's quota: pending, the reason in the condition */
	pod(ns_b, "big-0", "big", 2, 2, "kerf");
	pod(ns_b, "big-1", "big", 2, 2, "kerf");
	run_until(says, &(struct says_arg){ ns_b, "big-0", "over its limit" }, 10000);
	pod_state(ns_b, "big-0", node_name, sizeof(node_name), msg, sizeof(msg));
	check(!node_name[0] && strstr(msg, "over its limit"), "a gang over quota stays pending, the reason in PodScheduled");
	if (kerf_controller_stats(ctl)->last_error[0])
		printf("# last error: %s\n", kerf_controller_stats(ctl)->last_error);
	if (msg[0])
		printf("# reason: %s\n", msg);

	/* 3. another scheduler's pods hold GPUs: kerf does not give them again */
	controller_stop();
	{
		char path[256];

		/* both nodes are full with the gang: free nothing; use a third node */
		node("kerf-e2e-node-3", 8);
		pod(ns, "other-0", NULL, 0, 6, "default-scheduler");
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/other-0/binding", ns);
		post(path, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"other-0\"},"
			   "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"kerf-e2e-node-3\"}}");
	}
	check(controller_start(), "kerf serve restarted");
	pod(ns, "solo-0", NULL, 0, 4, "kerf");
	run_until(bound_is, &(struct want){ ns, "solo", 1, 1 }, 3000);
	pod_state(ns, "solo-0", node_name, sizeof(node_name), msg, sizeof(msg));
	check(!node_name[0], "6 of 8 GPUs held by another scheduler: a 4-GPU pod waits");
	/* 4. the restarted kerf serve adopted the gang: it bound nothing twice */
	check(kerf_controller_stats(ctl)->binds_sent == 0 &&
	      kerf_controller_stats(ctl)->binds_conflict == 0,
	      "after a restart, nothing bound twice");
	check(count_bound(ns, "gang", 4) == 4, "the gang is still whole");
	/* solo-0 waits for node 3 (a head-of-line reservation); withdraw it */
	{
		char path[256];

		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/solo-0", ns);
		api("DELETE", path, NULL, NULL, NULL);
		/* gone for the API server first (an unbound pod goes at once) */
		for (int i = 0; i < 100 && api("GET", path, NULL, NULL, NULL) != 404; i++)
			turn(50);
	}
	pod(ns, "solo-1", NULL, 0, 2, "kerf");
	run_until(bound_is, &(struct want){ ns, "solo", 2, 1 }, 15000);
	pod_state(ns, "solo-1", node_name, sizeof(node_name), msg, sizeof(msg));
	check(!strcmp(node_name, "kerf-e2e-node-3"), "2 GPUs fit beside the other scheduler's 6");
	if (msg[0])
		printf("# solo-1: %s\n", msg);
	if (kerf_controller_stats(ctl)->last_error[0])
		printf("# last error: %s\n", kerf_controller_stats(ctl)->last_error);

	/*
	 * 5. preemption through the checkpoint handshake and the Eviction
	 * API, held back by a PodDisruptionBudget.  The victim: 2 GPUs of
	 * priority 0 (kerf's preemptible class) with a 30 s grace, so that it
	 * stays Terminating after its eviction until the kubelet (this suite)
	 * says it is gone; its GPUs must not be given before.
	 */
	{
		char path[256], ann[128];
		bool terminating = false;
		time_t seen;

		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/solo-1", ns);
		api("DELETE", path, NULL, NULL, NULL);
		for (int i = 0; i < 100 && api("GET", path, NULL, NULL, NULL) != 404; i++)
			turn(50);
		pod_with(ns, "victim-0", &(struct podspec){ .gpus = 2, .scheduler = "kerf",
							    .grace_s = 30, .role = "victim" });
		run_until(bound_is, &(struct want){ ns, "victim", 1, 1 }, 15000);
		pod_state(ns, "victim-0", node_name, sizeof(node_name), msg, sizeof(msg));
		check(!strcmp(node_name, "kerf-e2e-node-3"), "the victim-to-be runs beside the other scheduler's pod");
		pod_running(ns, "victim-0");
		post("/apis/scheduling.k8s.io/v1/priorityclasses",
		     "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\","
		     "\"metadata\":{\"name\":\"kerf-e2e-normal\"},\"value\":100,"
		     "\"description\":\"kerf e2e: kerf's normal class\"}");
		snprintf(path, sizeof(path), "/apis/policy/v1/namespaces/%s/poddisruptionbudgets", ns);
		post(path, "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\","
			   "\"metadata\":{\"name\":\"victim\"},\"spec\":{\"minAvailable\":1,"
			   "\"selector\":{\"matchLabels\":{\"kerf-e2e/role\":\"victim\"}}}}");
		/* let the informers see both before the preemptor comes */
		for (int i = 0; i < 20; i++)
			turn(20);
		pod_with(ns, "urgent-0", &(struct podspec){ .gpus = 2, .scheduler = "kerf",
							    .pclass = "kerf-e2e-normal" });
		for (int i = 0; i < 100 && pod_annotation(ns, "victim-0", "kerf.io/preempt-at", ann,
							 sizeof(ann), NULL) && !ann[0]; i++)
			turn(100);
		seen = time(NULL);
		check(ann[0] != '\0', "a higher class asks the victim to checkpoint (kerf.io/preempt-at)");
		printf("# preempt-at: %s\n", ann);
		/* the workload checkpointed: it says so */
		{
			char now[32], body[256];
			time_t t;

			/* RFC 3339 has whole seconds: the next one after the request */
			while (time(NULL) <= seen)
				turn(50);
			t = time(NULL);

			strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
			snprintf(body, sizeof(body),
				 "{\"metadata\":{\"annotations\":{\"kerf.io/checkpoint-done\":\"%s\"}}}", now);
			snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/victim-0", ns);
			api("PATCH", path, "application/merge-patch+json", body, NULL);
		}
		run_until(says, &(struct says_arg){ ns, "urgent-0", "refused for now" }, 15000);
		pod_state(ns, "urgent-0", node_name, sizeof(node_name), msg, sizeof(msg));
		pod_annotation(ns, "victim-0", "kerf.io/preempt-at", ann, sizeof(ann), &terminating);
		check(!node_name[0] && !terminating && strstr(msg, "refused for now"),
		      "a PodDisruptionBudget refuses the eviction: the preemptor waits, told why");
		if (msg[0])
			printf("# urgent-0: %s\n", msg);
		printf("# evictions sent %llu, refused %llu; last error: %s\n",
		       (unsigned long long)kerf_controller_stats(ctl)->evictions_sent,
		       (unsigned long long)kerf_controller_stats(ctl)->evictions_blocked,
		       kerf_controller_stats(ctl)->last_error);
		snprintf(path, sizeof(path), "/apis/policy/v1/namespaces/%s/poddisruptionbudgets/victim", ns);
		api("DELETE", path, NULL, NULL, NULL);
		/* asked again after the refusal's Retry-After (10 s without one) */
		for (int i = 0; i < 250 && pod_annotation(ns, "victim-0", "kerf.io/preempt-at", ann,
							 sizeof(ann), &terminating) && !terminating; i++)
			turn(100);
		pod_state(ns, "urgent-0", node_name, sizeof(node_name), msg, sizeof(msg));
		check(terminating && !node_name[0],
		      "the budget gone, the victim is evicted; its GPUs are not given while it terminates");
		for (int i = 0; i < 20; i++)
			turn(50);
		pod_state(ns, "urgent-0", node_name, sizeof(node_name), msg, sizeof(msg));
		check(!node_name[0], "still not given a second later");
		pod_gone(ns, "victim-0");
		run_until(bound_is, &(struct want){ ns, "urgent", 1, 1 }, 10000);
		pod_state(ns, "urgent-0", node_name, sizeof(node_name), msg, sizeof(msg));
		check(!strcmp(node_name, "kerf-e2e-node-3"), "the victim gone, the preemptor is bound in its place");
		check(count_bound(ns, "gang", 4) == 4, "the gang was not touched");
	}

	/* 6. a Tenant edited live: its gang over quota is admitted */
	{
		node("kerf-e2e-node-4", 8);
		for (int i = 0; i < 30; i++)
			turn(50);
		check(count_bound(ns_b, "big", 2) == 0, "room alone does not admit a gang over its quota");
		api("PATCH", "/apis/kerf.io/v1alpha1/tenants/kerf-e2e-b", "application/merge-patch+json",
		    "{\"spec\":{\"quotas\":[{\"flavor\":\"nvidia-h100-80gb-hbm3\",\"nominal\":\"4\",\"borrowingLimit\":\"0\"}]}}",
		    NULL);
		check(run_until(bound_is, &(struct want){ ns_b, "big", 2, 2 }, 10000),
		      "the Tenant's quota raised live: the gang is bound whole");
	}
	/* 7. what kerf holds per tenant is in its status, history included */
	{
		char used[32] = "";
		json_t *t = NULL;

		/* used at once; the history once a cycle has aged it in */
		for (int i = 0; i < 50 && (strcmp(used, "4") || !history_size(t)); i++) {
			json_decref(t);
			t = NULL;
			for (int k = 0; k < 5; k++)
				turn(20);
			if (api("GET", "/apis/kerf.io/v1alpha1/tenants/kerf-e2e-b", NULL, NULL, &t) == 200)
				snprintf(used, sizeof(used), "%s",
					 json_string_value(json_object_get(json_object_get(json_object_get(t, "status"),
								"gpus"), "used")) ?: "");
		}
		check(!strcmp(used, "4") && history_size(t) > 0,
		      "the Tenant's status says the 4 GPUs it uses, with its usage history");
		if (getenv("E2E_DEBUG")) {
			char *d = json_dumps(json_object_get(t, "status"), JSON_COMPACT);

			fprintf(stderr, "status: %s\n", d ? d : "");
			free(d);
		}
		json_decref(t);
	}
	if (kerf_controller_stats(ctl)->last_error[0])
		printf("# last error: %s\n", kerf_controller_stats(ctl)->last_error);
	controller_stop();
	/* a new leader restores every tenant's history before it decides */
	check(controller_start(), "kerf serve restarted once more");
	run_until(synced, NULL, 10000);
	printf("# tenants restored: %llu; %s\n",
	       (unsigned long long)kerf_controller_stats(ctl)->tenants_restored,
	       kerf_controller_stats(ctl)->last_error);
	check(kerf_controller_stats(ctl)->tenants_restored >= 2,
	      "the restarted kerf serve restored the tenants' history from their status");
	controller_stop();

	/* clean up what the suite made (a real cluster keeps it otherwise) */
	api("DELETE", "/api/v1/namespaces/kerf-e2e-a", NULL, NULL, NULL);
	api("DELETE", "/api/v1/namespaces/kerf-e2e-b", NULL, NULL, NULL);
	api("DELETE", "/apis/scheduling.k8s.io/v1/priorityclasses/kerf-e2e-normal", NULL, NULL, NULL);
	for (int i = 1; i <= 4; i++) {
		char path[128];

		snprintf(path, sizeof(path), "/api/v1/nodes/kerf-e2e-node-%d", i);
		api("DELETE", path, NULL, NULL, NULL);
	}
	api("DELETE", "/apis/kerf.io/v1alpha1/tenants/kerf-e2e-a", NULL, NULL, NULL);
	api("DELETE", "/apis/kerf.io/v1alpha1/tenants/kerf-e2e-b", NULL, NULL, NULL);
	kerf_kube_client_free(client);
	kerf_kube_config_release(&cfg);
	kerf_testapi_stop(ta);
	printf("1..%d\n%d passed, %d failed\n", nr_passed + nr_failed, nr_passed, nr_failed);
	return nr_failed ? 1 : 0;
}
