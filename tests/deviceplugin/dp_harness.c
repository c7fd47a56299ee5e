/*
 * dp_harness: kerf's device plugin in a process of its own, for the test
 * with a real gRPC kubelet stand-in (dp_kubelet_test.py).
 *
 *   dp_harness DIR POD=INDICES...
 *
 * Serves four devices, GPU-a..GPU-d (GPU indices 0..3, NUMA nodes 0, 0,
 * 1, 1), on DIR/kerf-gpu.sock as nvidia.com/gpu, and registers with
 * DIR/kubelet.sock.  The pending pods and their kerf.io/assigned-gpus are
 * the arguments ("default/p1=1,2").  Reads commands on stdin, one a line:
 * "unhealthy ID", "healthy ID"; exits at end of input.  Prints
 * "registered N" each time a Register succeeds.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deviceplugin/plugin.h"

/* A whole GPU. */
#define DEV(i, g, n, h) { .id = i, .gpu_index = g, .numa_node = n, .healthy = h }

enum { MAX_PODS = 8 };

static struct kerf_dp_pod_assign pods[MAX_PODS];
static size_t n_pods;

static int pending_pods(void *arg, const struct kerf_dp_pod_assign **out, size_t *n,
			struct kerf_err *err)
{
	(void)arg;
	(void)err;
	*out = pods;
	*n = n_pods;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct kerf_dp_device devs[] = {
		DEV("GPU-a", 0, 0, 1), DEV("GPU-b", 1, 0, 1),
		DEV("GPU-c", 2, 1, 1), DEV("GPU-d", 3, 1, 1),
	};
	struct kerf_dp_config cfg = {
		.endpoint = "kerf-gpu.sock", .resource_name = "nvidia.com/gpu",
	};
	struct kerf_dp_ops ops = { .pending_pods = pending_pods };
	struct kerf_dp_plugin *p;
	struct kerf_err err = { 0 };
	unsigned seen = 0;
	char line[256];
	size_t have = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: dp_harness DIR POD=INDICES...\n");
		return 2;
	}
	cfg.dir = argv[1];
	for (int i = 2; i < argc && n_pods < MAX_PODS; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq) {
			fprintf(stderr, "dp_harness: '%s': expected POD=INDICES\n", argv[i]);
			return 2;
		}
		*eq = '\0';
		pods[n_pods].key = argv[i];
		if (kerf_dp_assigned_parse(eq + 1, &pods[n_pods].gpu_mask, &err) < 0) {
			fprintf(stderr, "dp_harness: %s\n", err.msg);
			return 2;
		}
		n_pods++;
	}
	if (kerf_dp_plugin_new(&p, &cfg, devs, 4, &ops, &err) < 0) {
		fprintf(stderr, "dp_harness: %s\n", err.msg);
		return 1;
	}
	for (;;) {
		kerf_dp_plugin_poll(p, 20);
		if (kerf_dp_plugin_registrations(p) != seen) {
			seen = kerf_dp_plugin_registrations(p);
			printf("registered %u\n", seen);
			fflush(stdout);
		}
		struct pollfd in = { .fd = 0, .events = POLLIN };
		if (poll(&in, 1, 0) <= 0)
			continue;
		ssize_t n = read(0, line + have, sizeof(line) - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		line[have] = '\0';
		char *nl;
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			int rc = 0;
			if (strncmp(line, "unhealthy ", 10) == 0)
				rc = kerf_dp_plugin_set_health(p, line + 10, 0);
			else if (strncmp(line, "healthy ", 8) == 0)
				rc = kerf_dp_plugin_set_health(p, line + 8, 1);
			if (rc < 0)
				fprintf(stderr, "dp_harness: '%s': %s\n", line, kerf_strerror(rc));
			size_t used = (size_t)(nl - line) + 1;
			memmove(line, nl + 1, have - used + 1);
			have -= used;
		}
		if (have == sizeof(line) - 1)
			have = 0;
	}
	kerf_dp_plugin_free(p);
	return 0;
}
