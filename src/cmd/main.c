/*
 * kerf: one binary, several roles.  This file only dispatches.
 */
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "cmd/cmd.h"

#ifndef KERF_VERSION
#define KERF_VERSION "0.0.0"
#endif

static void usage(FILE *out)
{
	fprintf(out,
		"usage: kerf <command> [options]\n"
		"\n"
		"commands:\n"
		"  sim             run the built-in demo scenario\n"
		"  sim openb ...   replay the Alibaba openb trace (FGD method)\n"
		"  plan-mig FILE   the MIG plan for a node description [--json]\n"
		"  serve           the controller and scheduler on a Kubernetes API server\n"
		"  get tenants|queue|nodes   what kerf serve sees (its read-only API)\n"
		"  explain NS/POD  why a pod waits, layer by layer\n"
		"  admission review FILE... --objects OBJECTS.yaml\n"
		"                  the admission webhook's decisions on AdmissionReview files\n"
		"  agent inventory the node's GPUs as NVML reports them [-o json]\n"
		"  version         print the version\n"
		"\n"
		"'kerf <command> --help' tells more.\n");
}

int main(int argc, char **argv)
{
	char shown[80];

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "sim"))
		return kerf_cmd_sim(argc - 1, argv + 1);
	if (!strcmp(argv[1], "serve"))
		return kerf_cmd_serve(argc - 1, argv + 1);
	if (!strcmp(argv[1], "get"))
		return kerf_cmd_get(argc - 1, argv + 1);
	if (!strcmp(argv[1], "explain"))
		return kerf_cmd_explain(argc - 1, argv + 1);
	if (!strcmp(argv[1], "admission"))
		return kerf_cmd_admission(argc - 1, argv + 1);
	if (!strcmp(argv[1], "agent"))
		return kerf_cmd_agent(argc - 1, argv + 1);
	if (!strcmp(argv[1], "plan-mig"))
		return kerf_cmd_plan_mig(argc - 1, argv + 1);
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("kerf %s\n", KERF_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "kerf: unknown command '%s'\n\n",
		kerf_escape(shown, sizeof(shown), argv[1]));
	usage(stderr);
	return 2;
}
