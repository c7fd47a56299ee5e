/*
 * kerf agent metrics: one sample of the node's GPUs as Prometheus text
 * (nvml/telemetry.h: DCGM exporter names where the meaning matches, and
 * kerf_agent_*), what the agent's /metrics will serve, with each pod's
 * GPU memory read through --proc-root (default /proc; pods by UID, as
 * there is no pod table without the API).  Exit 0 when NVML was read, 1
 * when the GPUs are Unknown (kerf_agent_nvml_up 0 is still printed), 2 on
 * a usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "nvml/telemetry.h"

static const char prog[] = "kerf agent metrics";

int kerf_cmd_agent_metrics(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "nvml-library", required_argument, NULL, 'l' },
		{ "hostname", required_argument, NULL, 'n' },
		{ "proc-root", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *library = NULL, *proc_root = NULL;
	char host[256] = "";
	struct kerf_nvml nv;
	struct kerf_err err = { 0 };
	struct kerf_gpu_inventory inv = { 0 };
	struct kerf_gpu_sample *s = NULL;
	struct kerf_gpu_processes procs = { 0 };
	struct kerf_buf b;
	int c, status = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
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
		case 'h':
			printf("usage: kerf agent metrics [--nvml-library PATH] [--hostname NAME] [--proc-root DIR]\n"
			       "\none sample of the node's GPUs as Prometheus text (DCGM exporter names),\n"
			       "with each pod's GPU memory (pods by UID: no API here) from DIR/PID/cgroup\n");
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
		kerf_nvml_close(&nv);
	}
	kerf_buf_init(&b, 16 << 20);
	if ((inv.nr_gpus && !s) || kerf_gpu_metrics_text(&inv, s, host, &b) < 0 ||
	    kerf_gpu_process_metrics_text(&inv, &procs, NULL, NULL, &b) < 0) {
		fprintf(stderr, "%s: out of memory\n", prog);
		status = 1;
	} else {
		fputs(kerf_buf_str(&b), stdout);
	}
	if (status && err.msg[0])
		fprintf(stderr, "%s: %s\n", prog, err.msg);
	kerf_buf_release(&b);
	free(s);
	kerf_gpu_processes_release(&procs);
	kerf_gpu_inventory_release(&inv);
	return status;
}
