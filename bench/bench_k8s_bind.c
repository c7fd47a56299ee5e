/*
 * bench_k8s_bind: how fast a scheduler binds, on any API server, for any
 * scheduler (kerf serve, kube-scheduler, ...):
 *
 *   bench_k8s_bind --kubeconfig F --nodes N --pods M --scheduler-name S
 *                  [--scheduler-pid P] [--timeout-s T] [--gpus-per-node G]
 *                  [--keep]
 *
 * It creates N nodes with G GPUs (8) (their not-ready taint removed: there is
 * no kubelet) and M one-GPU pods for schedulerName S in a namespace of its
 * own (kerf-bench, joined to a Tenant kerf-bench when the Tenant CRD is
 * there), waits until every pod is bound (counting the unbound ones with a
 * field selector every 200 ms), removes all it made, and prints one JSON
 * line: pods_per_s (from the first pod created to the last one bound) and
 * cpu_s_per_1000_pods of process P (user + system time from /proc).
 * With --keep it leaves everything in place (the scheduler's memory with
 * every pod cached can then be read; bench/serve_memory.sh does).
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/parse.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/sync.h"

static struct kerf_kube_client *client;
static struct kerf_kube_ops ops;
static unsigned in_flight;
static uint64_t nr_errors;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* User + system CPU seconds of pid, or -1. */
static double cpu_s(long pid)
{
	char path[64], buf[4096], *p;
	unsigned long ut, st;
	FILE *f;
	size_t n;

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static void done_async(void *arg, const struct kerf_kube_response *r)
{
	(void)arg;
	in_flight--;
	if (r->http_status < 200 || r->http_status >= 300)
		nr_errors++;
}

/* Send without waiting (at most 64 in flight). */
static void send_async(const char *method, const char *path, const char *ctype,
		       const char *body)
{
	struct kerf_kube_request rq = {
		.method = method, .path = path, .content_type = ctype,
		.body = body, .body_len = body ? strlen(body) : 0,
	};
	uint64_t id;

	while (in_flight >= 64)
		kerf_kube_client_poll(client, 10);
	if (ops.request(ops.ctx, &rq, done_async, NULL, &id) == 0)
		in_flight++;
	else
		nr_errors++;
}

static void drain(void)
{
	while (in_flight)
		kerf_kube_client_poll(client, 10);
}

static void turn(void *arg)
{
	(void)arg;
	kerf_kube_client_poll(client, 10);
}

static long api(const char *method, const char *path, const char *ctype,
		const char *body, json_t **out)
{
	struct kerf_kube_request rq = {
		.method = method, .path = path, .content_type = ctype,
		.body = body, .body_len = body ? strlen(body) : 0,
	};

	return kerf_kube_sync(&ops, &rq, turn, NULL, UINT32_MAX, out);
}

/* Pods of the namespace not bound yet (all pages), or -1. */
static long unbound(void)
{
	char path[512], cont[1024] = "";
	long n = 0;

	do {
		json_t *l = NULL;
		const char *c;

		snprintf(path, sizeof(path),
			 "/api/v1/namespaces/kerf-bench/pods?fieldSelector=spec.nodeName%%3D&limit=500%s%s",
			 cont[0] ? "&continue=" : "", cont);
		if (api("GET", path, NULL, NULL, &l) != 200) {
			json_decref(l);
			return -1;
		}
		n += (long)json_array_size(json_object_get(l, "items"));
		c = json_string_value(json_object_get(json_object_get(l, "metadata"), "continue"));
		snprintf(cont, sizeof(cont), "%s", c ? c : "");
		json_decref(l);
	} while (cont[0]);
	return n;
}

static const struct option longopts[] = {
	{ "kubeconfig", required_argument, NULL, 'k' },
	{ "nodes", required_argument, NULL, 'n' },
	{ "pods", required_argument, NULL, 'p' },
	{ "scheduler-name", required_argument, NULL, 's' },
	{ "scheduler-pid", required_argument, NULL, 'P' },
	{ "timeout-s", required_argument, NULL, 't' },
	{ "gpus-per-node", required_argument, NULL, 'g' },
	{ "keep", no_argument, NULL, 'K' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char usage[] =
	"usage: bench_k8s_bind --kubeconfig F --nodes N --pods M --scheduler-name S\n"
	"                      [--scheduler-pid P] [--timeout-s T] [--gpus-per-node G] [--keep]\n";

int main(int argc, char **argv)
{
	const char *kc = NULL, *sched = NULL;
	uint64_t nodes = 0, pods = 0, pid = 0, timeout_s = 600, gpus = 8;
	struct kerf_kube_client_opts ko = { .qps_milli = UINT64_MAX };
	struct kerf_kube_config cfg;
	struct kerf_err err = { 0 };
	double t0, t1 = 0, c0, c1;
	long left = -1;
	char path[256], body[1024], cpu[32] = "null";
	bool keep = false;
	int opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		int rc = 0;

		switch (opt) {
		case 'k': kc = optarg; break;
		case 's': sched = optarg; break;
		case 'n': rc = kerf_parse_u64_opt("--nodes", optarg, 1, 100000, &nodes, &err); break;
		case 'p': rc = kerf_parse_u64_opt("--pods", optarg, 1, 1000000, &pods, &err); break;
		case 'P': rc = kerf_parse_u64_opt("--scheduler-pid", optarg, 1, 1u << 22, &pid, &err); break;
		case 't': rc = kerf_parse_u64_opt("--timeout-s", optarg, 1, 86400, &timeout_s, &err); break;
		case 'g': rc = kerf_parse_u64_opt("--gpus-per-node", optarg, 1, 16, &gpus, &err); break;
		case 'K': keep = true; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
		if (rc < 0) {
			fprintf(stderr, "bench_k8s_bind: %s\n", err.msg);
			return 2;
		}
	}
	if (!kc || !sched || !nodes || !pods || optind < argc ||
	    strspn(sched, "abcdefghijklmnopqrstuvwxyz0123456789-.") != strlen(sched)) {
		fputs(usage, stderr);
		return 2;
	}
	kerf_kube_config_init(&cfg);
	if (kerf_kubeconfig_load(&cfg, kc, NULL, &err) < 0 ||
	    !(client = kerf_kube_client_new(&cfg, &ko, &err))) {
		fprintf(stderr, "bench_k8s_bind: %s\n", err.msg);
		return 1;
	}
	kerf_kube_client_ops(client, &ops);
	api("POST", "/api/v1/namespaces", "application/json",
	    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"kerf-bench\",\"labels\":{\"kerf.io/tenant\":\"kerf-bench\"}}}", NULL);
	api("POST", "/apis/kerf.io/v1alpha1/tenants", "application/json",
	    "{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"kerf-bench\"},\"spec\":{\"weight\":1}}", NULL);
	for (uint64_t i = 0; i < nodes; i++) {
		snprintf(body, sizeof(body),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"kerf-bench-node-%llu\",\"labels\":"
			 "{\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\",\"nvidia.com/gpu.memory\":\"81559\"}},"
			 "\"status\":{\"capacity\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"%llu\"},"
			 "\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"%llu\"},"
			 "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"message\":\"bench\"}]}}",
			 (unsigned long long)i, (unsigned long long)gpus, (unsigned long long)gpus);
		send_async("POST", "/api/v1/nodes", "application/json", body);
	}
	drain();
	for (uint64_t i = 0; i < nodes; i++) {
		snprintf(path, sizeof(path), "/api/v1/nodes/kerf-bench-node-%llu", (unsigned long long)i);
		send_async("PATCH", path, "application/merge-patch+json", "{\"spec\":{\"taints\":null}}");
	}
	drain();
	nanosleep(&(struct timespec){ .tv_sec = 2 }, NULL); /* the schedulers see the nodes */
	c0 = cpu_s((long)pid);
	t0 = now_s();
	for (uint64_t i = 0; i < pods; i++) {
		snprintf(body, sizeof(body),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p-%llu\"},"
			 "\"spec\":{\"schedulerName\":\"%s\",\"terminationGracePeriodSeconds\":0,\"containers\":[{\"name\":\"c\",\"image\":\"busybox:1.36\","
			 "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}",
			 (unsigned long long)i, sched);
		send_async("POST", "/api/v1/namespaces/kerf-bench/pods", "application/json", body);
	}
	drain();
	while (now_s() - t0 < (double)timeout_s) {
		left = unbound();
		if (left == 0) {
			t1 = now_s();
			break;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 200000000 }, NULL);
	}
	c1 = cpu_s((long)pid);
	/* clean up: pods at once (grace 0), the nodes, the namespace */
	if (!keep) {
		api("DELETE", "/api/v1/namespaces/kerf-bench/pods?gracePeriodSeconds=0", NULL, NULL, NULL);
		for (uint64_t i = 0; i < nodes; i++) {
			snprintf(path, sizeof(path), "/api/v1/nodes/kerf-bench-node-%llu", (unsigned long long)i);
			send_async("DELETE", path, NULL, NULL);
		}
		drain();
		api("DELETE", "/api/v1/namespaces/kerf-bench", NULL, NULL, NULL);
		api("DELETE", "/apis/kerf.io/v1alpha1/tenants/kerf-bench", NULL, NULL, NULL);
	}
	if (c0 >= 0 && c1 >= 0)
		snprintf(cpu, sizeof(cpu), "%.3f", (c1 - c0) / (double)pods * 1000.0);
	printf("{\"scheduler\":\"%s\",\"nodes\":%llu,\"pods\":%llu,\"bound\":%s,\"seconds\":%.3f,"
	       "\"pods_per_s\":%.1f,\"cpu_s_per_1000_pods\":%s,\"request_errors\":%llu}\n",
	       sched, (unsigned long long)nodes, (unsigned long long)pods,
	       left == 0 ? "true" : "false", t1 > 0 ? t1 - t0 : now_s() - t0,
	       t1 > 0 ? (double)pods / (t1 - t0) : 0.0,
	       cpu,
	       (unsigned long long)nr_errors);
	kerf_kube_client_free(client);
	kerf_kube_config_release(&cfg);
	return left == 0 ? 0 : 1;
}
