/*
 * dp_harness: kerf's device plugin in a process of its own, for the test
 * with a real gRPC kubelet stand-in (dp_kubelet_test.py).
 *
 *   dp_harness [--shares] DIR POD=INDICES[+KEY=VALUE...]...
 *
 * Serves four devices, GPU-a..GPU-d (GPU indices 0..3, NUMA nodes 0, 0,
 * 1, 1), on DIR/kerf-gpu.sock as nvidia.com/gpu, and registers with
 * DIR/kubelet.sock.  With --shares it serves two shares of each of GPU-a
 * and GPU-c instead (GPU-a::0, GPU-a::1, GPU-c::0, GPU-c::1; 81559 MiB
 * each), and an MPS daemon on each GPU for every UID, with the limits of
 * 250m and the pipe directory /run/kerf/mps/<GPU>/<uid>/pipe.  The
 * pending pods and their kerf.io/assigned-gpus are the arguments
 * ("default/p1=1,2"); "+mig=3g.40gb@4", "+fraction=250m", "+sharing=mps"
 * and "+uid=1000" add the other annotations.  Reads commands on stdin,
 * one a line: "unhealthy ID", "healthy ID", "mps-fail GPU", "mps-ok GPU"
 * (answered "done" on stdout once in effect); exits at end of input.
 * Prints "registered N" each time a Register succeeds.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deviceplugin/plugin.h"

/* A whole GPU; a share of one. */
#define DEV(i, g, n, h) { .id = i, .gpu_index = g, .numa_node = n, .healthy = h }
#define SHARE(i, g, gid) { .id = i, .gpu_index = g, .numa_node = -1, .healthy = 1, \
	.kind = KERF_DP_DEV_SHARE, .gpu_id = gid, .mem_mib = 81559 }

enum { MAX_PODS = 8 };

static struct kerf_dp_pod_assign pods[MAX_PODS];
static size_t n_pods;
static int mps_failed[KERF_DP_MAX_GPUS];

static int mps_daemon(void *arg, uint32_t gpu_index, uint32_t uid, struct kerf_dp_mps *out)
{
	(void)arg;
	memset(out, 0, sizeof(*out));
	out->healthy = !mps_failed[gpu_index];
	snprintf(out->pipe_dir, sizeof(out->pipe_dir), "/run/kerf/mps/GPU-%c/%u/pipe",
		 'a' + (int)gpu_index, uid);
	out->limits = (struct kerf_mps_limits){ .thread_pct = 25, .pinned_mem_mib = 20389 };
	snprintf(out->why, sizeof(out->why), "MPS daemon for GPU %u: process 4242 is gone",
		 gpu_index);
	return 0;
}

/* "default/p1=1,2+fraction=250m+sharing=mps+uid=1000" into pods[n_pods]. */
static int parse_pod(char *arg, struct kerf_err *err)
{
	char *eq = strchr(arg, '=');
	const char *mig = NULL, *frac = NULL, *sharing = NULL;
	unsigned long uid = 0;

	if (!eq)
		return kerf_err_set(err, -KERF_EINVAL, "'%s': expected POD=INDICES", arg);
	*eq = '\0';
	char *gpus = eq + 1;
	for (char *plus = strchr(gpus, '+'); plus; plus = strchr(plus + 1, '+')) {
		*plus = '\0';
		char *kv = plus + 1;
		if (!strncmp(kv, "mig=", 4))
			mig = kv + 4;
		else if (!strncmp(kv, "fraction=", 9))
			frac = kv + 9;
		else if (!strncmp(kv, "sharing=", 8))
			sharing = kv + 8;
		else if (!strncmp(kv, "uid=", 4))
			uid = strtoul(kv + 4, NULL, 10);
		else
			return kerf_err_set(err, -KERF_EINVAL, "'%s': unknown", kv);
	}
	return kerf_dp_pod_assign_parse(&pods[n_pods], arg, gpus, mig, frac, sharing,
					(uint32_t)uid, err);
}

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
	static const struct kerf_dp_device whole[] = {
		DEV("GPU-a", 0, 0, 1), DEV("GPU-b", 1, 0, 1),
		DEV("GPU-c", 2, 1, 1), DEV("GPU-d", 3, 1, 1),
	};
	static const struct kerf_dp_device shares[] = {
		SHARE("GPU-a::0", 0, "GPU-a"), SHARE("GPU-a::1", 0, "GPU-a"),
		SHARE("GPU-c::0", 2, "GPU-c"), SHARE("GPU-c::1", 2, "GPU-c"),
	};
	const struct kerf_dp_device *devs = whole;
	struct kerf_dp_config cfg = {
		.endpoint = "kerf-gpu.sock", .resource_name = "nvidia.com/gpu",
	};
	struct kerf_dp_ops ops = { .pending_pods = pending_pods, .mps_daemon = mps_daemon };
	struct kerf_dp_plugin *p;
	struct kerf_err err = { 0 };
	unsigned seen = 0;
	char line[256];
	size_t have = 0;

	if (argc > 1 && !strcmp(argv[1], "--shares")) {
		devs = shares;
		argv++;
		argc--;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: dp_harness [--shares] DIR POD=INDICES[+KEY=VALUE...]...\n");
		return 2;
	}
	cfg.dir = argv[1];
	for (int i = 2; i < argc && n_pods < MAX_PODS; i++) {
		if (parse_pod(argv[i], &err) < 0) {
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
			else if (strncmp(line, "mps-fail ", 9) == 0 ||
				 strncmp(line, "mps-ok ", 7) == 0) {
				int fail = line[4] == 'f';
				unsigned long g = strtoul(line + (fail ? 9 : 7), NULL, 10);
				if (g < KERF_DP_MAX_GPUS)
					mps_failed[g] = fail;
				printf("done\n");
				fflush(stdout);
			}
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
