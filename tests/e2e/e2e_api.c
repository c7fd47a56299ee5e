/*
 * e2e_api: see e2e_api.h.
 */
#include "e2e_api.h"
#include "e2e_crds.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/kubeconfig.h"
#include "kube/sync.h"

int e2e_nr_passed, e2e_nr_failed;
struct kerf_kube_client *e2e_client;
struct kerf_kube_ops e2e_ops;
void (*e2e_step)(void);
static struct kerf_kube_config cfg;


int64_t e2e_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void e2e_sleep_ms(int ms)
{
	nanosleep(&(struct timespec){ .tv_sec = ms / 1000,
				      .tv_nsec = (long)(ms % 1000) * 1000000 },
		  NULL);
}

void e2e_check(bool ok, const char *what)
{
	printf("%s %d - %s\n", ok ? "ok" : "not ok",
	       e2e_nr_passed + e2e_nr_failed + 1, what);
	fflush(stdout);
	if (ok)
		e2e_nr_passed++;
	else
		e2e_nr_failed++;
}

int e2e_connect(const char *kc)
{
	struct kerf_err err = { 0 };

	kerf_kube_config_init(&cfg);
	if (kerf_kubeconfig_load(&cfg, kc, NULL, &err) < 0 ||
	    !(e2e_client = kerf_kube_client_new(&cfg, NULL, &err))) {
		fprintf(stderr, "e2e: %s\n", err.msg);
		return -1;
	}
	kerf_kube_client_ops(e2e_client, &e2e_ops);
	return 0;
}

const struct kerf_kube_config *e2e_kube_config(void)
{
	return &cfg;
}

int e2e_done(void)
{
	/* under meson (KERF_TAP) the summary is a TAP comment */
	printf("1..%d\n%s%d passed, %d failed\n", e2e_nr_passed + e2e_nr_failed,
	       getenv("KERF_TAP") ? "# " : "", e2e_nr_passed, e2e_nr_failed);
	return e2e_nr_failed ? 1 : 0;
}

void e2e_disconnect(void)
{
	kerf_kube_client_free(e2e_client);
	e2e_client = NULL;
	kerf_kube_config_release(&cfg);
}

void e2e_turn(int wait_ms)
{
	if (e2e_step)
		e2e_step();
	kerf_kube_client_poll(e2e_client, wait_ms);
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

	return kerf_kube_sync(&e2e_ops, &rq, turn_cb, NULL, 3000, out);
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

bool e2e_crd(void)
{
	for (size_t k = 0; k < sizeof(e2e_crds) / sizeof(e2e_crds[0]); k++) {
		long rc = e2e_post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
				   "%s", e2e_crds[k].json);
		bool up = false;

		if (rc != 201 && rc != 409)
			return false;
		for (int i = 0; i < 50 && !up; i++) {
			json_t *l = NULL;

			up = e2e_api("GET", e2e_crds[k].list_path, NULL, NULL, &l) == 200;
			json_decref(l);
			if (!up)
				e2e_sleep_ms(100);
		}
		if (!up)
			return false;
	}
	return true;
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
	     int gpus, const char *scheduler, const char *pclass,
	     const char *selector)
{
	char path[256], meta[256] = "", spec[512] = "";

	if (gang)
		snprintf(meta, sizeof(meta),
			 ",\"labels\":{\"kerf.io/gang\":\"%s\"},\"annotations\":{\"kerf.io/gang-size\":\"%d\"}",
			 gang, size);
	if (pclass)
		snprintf(spec, sizeof(spec), "\"priorityClassName\":\"%s\",", pclass);
	if (selector)
		snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec),
			 "\"nodeSelector\":{%s},", selector);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	return e2e_post(path,
			"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"%s},"
			"\"spec\":{%s\"schedulerName\":\"%s\",\"terminationGracePeriodSeconds\":0,\"containers\":[{\"name\":\"c\",\"image\":\"busybox:1.36\","
			"\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"%d\"}}}]}}",
			name, meta, spec, scheduler, gpus);
}

void e2e_pod_annotation(const char *ns, const char *name, const char *key,
			char *out, size_t size)
{
	char path[256];
	json_t *p = NULL;
	const char *v = NULL;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
	if (e2e_api("GET", path, NULL, NULL, &p) == 200)
		v = json_string_value(json_object_get(json_object_get(json_object_get(p, "metadata"),
								       "annotations"), key));
	snprintf(out, size, "%s", v ? v : "");
	json_decref(p);
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
