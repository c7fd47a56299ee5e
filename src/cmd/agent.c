/*
 * kerf agent: the node agent's commands (`kerf agent run` and `verify` are
 * in agent_run.c): `kerf agent inventory`, the
 * node's GPUs as NVML reports them (docs/agent.md), a table or JSON; and
 * `kerf agent metrics` (agent_metrics.c), one telemetry sample.  Exit status 0 when NVML was read (GPUs with errors
 * included), 1 when it could not be (the inventory is then Unknown with
 * no GPUs, and says why), 2 on a usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/buf.h"
#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "cmd/output.h"
#include "cmd/spec.h"
#include "cmd/table.h"
#include "nvml/inventory.h"

static const char usage_line[] =
	"usage: kerf agent inventory [-o table|wide|json|yaml] [--nvml-library PATH]\n"
	"       kerf agent metrics [--nvml-library PATH] [--hostname NAME] [--proc-root DIR]\n"
	"       kerf agent run --node-name NAME [options]      (kerf agent run --help)\n"
	"       kerf agent verify --node-name NAME (--gpu N | --mig GPU:PROFILE@START | --node)\n"

	"       kerf agent mig plan|apply|enable|disable ... (kerf agent mig --help)\n";

static void mig_text(const struct kerf_gpu *g, char *buf, size_t size)
{
	if (g->mig_current == KERF_GPU_MIG_UNSUPPORTED) {
		snprintf(buf, size, "-");
		return;
	}
	size_t used = (size_t)snprintf(buf, size, "%s", g->mig_current ? "on" : "off");
	if (g->mig_pending != g->mig_current && used < size)
		used += (size_t)snprintf(buf + used, size - used, " (pending %s)",
					 g->mig_pending ? "on" : "off");
	for (unsigned k = 0; k < g->nr_gis && used < size; k++)
		used += (size_t)snprintf(buf + used, size - used, "%s%s@%u", k ? "," : " ",
					 g->gis[k].profile[0] ? g->gis[k].profile : "?",
					 g->gis[k].start);
}

/* wide: every error of g, "field: NVML_ERROR_..." joined; "-" for none. */
static void errors_text(const struct kerf_gpu *g, char *buf, size_t size)
{
	size_t used = 0;

	snprintf(buf, size, "-");
	for (unsigned k = 0; k < g->nr_errors && used < size; k++)
		used += (size_t)snprintf(buf + used, size - used, "%s%s: %s", k ? ", " : "",
					 g->errors[k].field,
					 kerf_nvml_return_name(g->errors[k].nvml_rc));
}

static int print_table(const struct kerf_gpu_inventory *inv, bool wide)
{
	static const char *const headers[] = {
		"INDEX", "UUID", "MODEL", "MEMORY", "PCI", "NUMA", "MIG", "NVLINK", "STATE", NULL,
	};
	static const char *const wide_headers[] = {
		"INDEX", "UUID", "MODEL", "NAME", "MEMORY", "PCI", "NUMA", "MIG", "NVLINK",
		"STATE", "ERRORS", NULL,
	};
	struct kerf_table t;

	if (inv->state != KERF_GPU_INVENTORY_READ) {
		printf("NVML: Unknown (%s)\n", inv->reason);
		return 0;
	}
	printf("driver %s", inv->driver_version[0] ? inv->driver_version : "?");
	if (inv->features_off[0])
		printf("; off: %s", inv->features_off);
	printf("\n");
	kerf_table_init(&t, wide ? wide_headers : headers);
	for (unsigned i = 0; i < inv->nr_gpus; i++) {
		const struct kerf_gpu *g = &inv->gpus[i];
		char index[16], mem[32], numa[16], mig[256], link[32], st[64], errs[512];
		snprintf(index, sizeof(index), "%u", g->index);
		snprintf(mem, sizeof(mem), "%lluMiB", (unsigned long long)g->mem_mib);
		snprintf(numa, sizeof(numa), g->numa_node >= 0 ? "%d" : "-", g->numa_node);
		mig_text(g, mig, sizeof(mig));
		if (g->nvlink_domain >= 0)
			snprintf(link, sizeof(link), "domain %d (%u links)", g->nvlink_domain,
				 g->nr_links);
		else
			snprintf(link, sizeof(link), "%s", g->nr_links ? "links, no peer" : "-");
		if (g->lost)
			snprintf(st, sizeof(st), "Lost");
		else if (g->nr_errors)
			snprintf(st, sizeof(st), "errors: %u (%s: %s)", g->nr_errors,
				 g->errors[0].field, kerf_nvml_return_name(g->errors[0].nvml_rc));
		else
			snprintf(st, sizeof(st), "OK");
		const char *cells[] = {
			index, g->uuid, g->model ? g->model : g->name, mem,
			g->bus_id, numa, mig, link, st,
		};
		errors_text(g, errs, sizeof(errs));
		const char *wide_cells[] = {
			index, g->uuid, g->model ? g->model : "-", g->name, mem,
			g->bus_id, numa, mig, link, g->lost ? "Lost" : g->nr_errors ? "errors" : "OK",
			errs,
		};
		kerf_table_row(&t, wide ? wide_cells : cells);
	}
	int ret = kerf_table_print(&t, stdout);
	kerf_table_release(&t);
	return ret;
}

/* The GPUInventory document (docs/schema/GPUInventory.json). */
static int print_doc(const struct kerf_gpu_inventory *inv, enum kerf_cli_output fmt)
{
	json_t *j = kerf_gpu_inventory_json(inv), *doc = kerf_cli_doc("GPUInventory");

	if (j && doc && json_object_update(doc, j) == 0) {
		json_decref(j);
		return kerf_cli_emit("kerf agent inventory", doc, fmt) ? -1 : 0;
	}
	json_decref(j);
	json_decref(doc);
	return -1;
}

const struct option kerf_agent_inventory_longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "nvml-library", required_argument, NULL, 'l' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static int agent_inventory(int argc, char **argv)
{
	const char *library = NULL;
	enum kerf_cli_output fmt = KERF_OUT_TABLE;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", kerf_agent_inventory_longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (kerf_cli_output("kerf agent inventory", optarg, &fmt))
				return 2;
			break;
		case 'l':
			library = optarg;
			break;
		case 'h':
			printf("%s", usage_line);
			printf("\nthe node's GPUs as NVML reports them: identity, memory, NUMA node,\n"
			       "MIG mode and instances, NVLink links and domains, per-GPU errors.\n"
			       "NVML is libnvidia-ml.so.1, or --nvml-library, or $%s.\n"
			       "  -o, --output FMT   table (default), wide (NVML's name and every\n"
			       "                     error of each GPU), json or yaml (one GPUInventory\n"
			       "                     document, docs/schema/GPUInventory.json)\n"
			       "exit status: 0 NVML read (GPUs with errors included), 1 NVML could\n"
			       "not be read (the inventory is Unknown, with the reason), 2 usage\n",
			       KERF_NVML_LIBRARY_ENV);
			return 0;
		default:
			kerf_opt_error("kerf agent inventory", c, argv);
			fprintf(stderr, "%s", usage_line);
			return 2;
		}
	}
	if (optind < argc) {
		kerf_opt_unexpected("kerf agent inventory", argv[optind], NULL);
		return 2;
	}

	struct kerf_nvml nv;
	struct kerf_err err = { 0 };
	struct kerf_gpu_inventory inv = { 0 };
	int status = 0;
	if (kerf_nvml_open(&nv, library, &err) < 0) {
		kerf_gpu_inventory_unknown(&inv, err.msg);
		status = 1;
	} else {
		if (kerf_gpu_inventory_read(&inv, &nv, &err) < 0)
			status = 1;
		kerf_nvml_close(&nv);
	}
	if ((kerf_cli_output_is_doc(fmt) ? print_doc(&inv, fmt)
					 : print_table(&inv, fmt == KERF_OUT_WIDE)) < 0) {
		fprintf(stderr, "kerf agent inventory: out of memory\n");
		status = 1;
	}
	if (status)
		fprintf(stderr, "kerf agent inventory: %s\n", err.msg);
	kerf_gpu_inventory_release(&inv);
	return status;
}

int kerf_cmd_agent(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "inventory"))
		return agent_inventory(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "metrics"))
		return kerf_cmd_agent_metrics(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "run"))
		return kerf_cmd_agent_run(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "verify"))
		return kerf_cmd_agent_verify(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "mig"))
		return kerf_cmd_agent_mig(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("%s", usage_line);
		return 0;
	}
	fprintf(stderr, "%s", usage_line);
	return 2;
}
