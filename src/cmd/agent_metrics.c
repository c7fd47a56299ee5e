/*
 * kerf agent metrics: one sample of the node's GPUs as Prometheus text
 * (nvml/telemetry.h: DCGM exporter names where the meaning matches, and
 * kerf_agent_*), what the agent's /metrics will serve, with each pod's
 * GPU memory read through --proc-root (default /proc; pods by UID, as
 * there is no pod table without the API), and the GPM series (nvml/gpm.h:
 * SM occupancy, SM activity, NVLink throughput) from two samples
 * --gpm-interval-ms apart (default 1000, 0 off).  Exit 0 when NVML was read, 1
 * when the GPUs are Unknown (kerf_agent_nvml_up 0 is still printed), 2 on
 * a usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "cmd/cmd.h"
#include "base/parse.h"
#include "cmd/opt.h"
#include "cmd/spec.h"
#include "nvml/gpm.h"
#include "nvml/telemetry.h"

static const char prog[] = "kerf agent metrics";

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The GPM series: a first sample, interval_ms of sleep, the second.
 * Nothing when the library has no GPM (said on stderr) or no GPU has it.
 */
static int gpm_text(const struct kerf_nvml *nv, const struct kerf_gpu_inventory *inv,
		    uint64_t interval_ms, const char *host, struct kerf_buf *b)
{
	struct kerf_gpm_sampler *s;
	struct kerf_gpm_reading *r;
	struct kerf_err err = { 0 };
	int rc;

	if (!interval_ms || !inv->nr_gpus)
		return 0;
	if (kerf_gpm_sampler_new(&s, nv, stderr, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return err.code == -KERF_ENOMEM ? err.code : 0;
	}
	r = calloc(inv->nr_gpus, sizeof(*r));
	if (!r) {
		kerf_gpm_sampler_free(s);
		return -KERF_ENOMEM;
	}
	if (kerf_gpm_sample(s, inv, now_ms(), r) > 0) {
		nanosleep(&(struct timespec){ .tv_sec = (time_t)(interval_ms / 1000),
					      .tv_nsec = (long)(interval_ms % 1000) * 1000000L },
			  NULL);
		kerf_gpm_sample(s, inv, now_ms(), r);
	}
	rc = kerf_gpm_metrics_text(inv, r, host, b);
	free(r);
	kerf_gpm_sampler_free(s);
	return rc;
}

const struct option kerf_agent_metrics_longopts[] = {
	{ "nvml-library", required_argument, NULL, 'l' },
	{ "hostname", required_argument, NULL, 'n' },
	{ "proc-root", required_argument, NULL, 'p' },
	{ "gpm-interval-ms", required_argument, NULL, 'g' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int kerf_cmd_agent_metrics(int argc, char **argv)
{
	const char *library = NULL, *proc_root = NULL;
	char host[256] = "";
	struct kerf_nvml nv;
	struct kerf_err err = { 0 };
	struct kerf_gpu_inventory inv = { 0 };
	struct kerf_gpu_sample *s = NULL;
	struct kerf_gpu_processes procs = { 0 };
	struct kerf_buf b, g;
	uint64_t gpm_ms = 1000;
	int c, status = 0, gpm_rc = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", kerf_agent_metrics_longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			library = optarg;
			break;
		case 'n':
			if (!*optarg || strlen(optarg) >= sizeof(host)) {
				fprintf(stderr, "%s: --hostname: 1 to 255 bytes\n", prog);
				return 2;
			}
			snprintf(host, sizeof(host), "%s", optarg);
			break;
		case 'p':
			proc_root = optarg;
			break;
		case 'g':
			if (kerf_parse_u64_opt("--gpm-interval-ms", optarg, 0, 60000, &gpm_ms,
					       &err) < 0 || (gpm_ms && gpm_ms < 100)) {
				fprintf(stderr, "%s: %s\n", prog, err.msg[0] ? err.msg :
					"--gpm-interval-ms: 0 (off) or 100 to 60000: NVML wants two GPM samples at least 100 ms apart");
				return 2;
			}
			break;
		case 'h':
			printf("usage: kerf agent metrics [--nvml-library PATH] [--hostname NAME] [--proc-root DIR]\n"
			       "                          [--gpm-interval-ms MS]\n"
			       "\none sample of the node's GPUs as Prometheus text (DCGM exporter names),\n"
			       "with each pod's GPU memory (pods by UID: no API here) from DIR/PID/cgroup,\n"
			       "and GPM's SM occupancy, SM activity and NVLink throughput over MS\n"
			       "(default 1000; 0 off; Hopper or newer)\n");
			return 0;
		default:
			kerf_opt_error(prog, c, argv);
			return 2;
		}
	}
	if (optind < argc) {
		kerf_opt_unexpected(prog, argv[optind], NULL);
		return 2;
	}
	if (!host[0] && gethostname(host, sizeof(host) - 1) != 0)
		snprintf(host, sizeof(host), "unknown");
	if (kerf_nvml_open(&nv, library, &err) < 0) {
		kerf_gpu_inventory_unknown(&inv, err.msg);
		status = 1;
	} else {
		if (kerf_gpu_inventory_read(&inv, &nv, &err) < 0)
			status = 1;
		s = calloc(inv.nr_gpus ? inv.nr_gpus : 1, sizeof(*s));
		if (s)
			kerf_gpu_sample_read(&nv, &inv, s);
		if (kerf_gpu_processes_read(&procs, &nv, &inv, proc_root, &err) < 0)
			status = 1;
	}
	kerf_buf_init(&b, 16 << 20);
	kerf_buf_init(&g, 1 << 20);
	if (nv.initialised && inv.state == KERF_GPU_INVENTORY_READ && s)
		gpm_rc = gpm_text(&nv, &inv, gpm_ms, host, &g);
	kerf_nvml_close(&nv);
	if (gpm_rc < 0 || (inv.nr_gpus && !s) || kerf_gpu_metrics_text(&inv, s, host, &b) < 0 ||
	    kerf_buf_add_str(&b, kerf_buf_str(&g)) < 0 ||
	    kerf_gpu_process_metrics_text(&inv, &procs, NULL, NULL, &b) < 0) {
		fprintf(stderr, "%s: out of memory\n", prog);
		status = 1;
	} else {
		fputs(kerf_buf_str(&b), stdout);
	}
	if (status && err.msg[0])
		fprintf(stderr, "%s: %s\n", prog, err.msg);
	kerf_buf_release(&b);
	kerf_buf_release(&g);
	free(s);
	kerf_gpu_processes_release(&procs);
	kerf_gpu_inventory_release(&inv);
	return status;
}
