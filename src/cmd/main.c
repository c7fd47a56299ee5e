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

/* Every command: the dispatch and the help list come from this table. */
static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "sim", kerf_cmd_sim,
	  "the simulator: the built-in day, scenario files, the openb trace, MIG" },
	{ "plan-mig", kerf_cmd_plan_mig, "the MIG plan for a node description" },
	{ "serve", kerf_cmd_serve, "the controller, scheduler and admission webhook" },
	{ "get", kerf_cmd_get, "tenants, queue, nodes as kerf serve sees them" },
	{ "explain", kerf_cmd_explain, "why a pod waits, layer by layer" },
	{ "top", kerf_cmd_top, "per-tenant GPU use, refreshed (kerf serve or a snapshot)" },
	{ "what-if", kerf_cmd_what_if, "the state re-run with a changed quota, weight or policy" },
	{ "admission", kerf_cmd_admission, "the admission webhook's decisions on files" },
	{ "agent", kerf_cmd_agent,
	  "the node agent: run, verify, inventory, metrics, mig" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: kerf <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "  %-10s %s\n  %-10s %s\n", "help", "this list; 'kerf help COMMAND' for one",
		"version", "print the version (also -V, --version)");
	fprintf(out, "\n'kerf help COMMAND' or 'kerf COMMAND --help' tells more.\n");
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct command *c;
	char shown[80];

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if ((c = find(argv[1])))
		return c->run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version") ||
	    !strcmp(argv[1], "-V")) {
		printf("kerf %s\n", KERF_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		/* kerf help COMMAND [SUB...]: that command's --help */
		if (argc > 2 && !strcmp(argv[1], "help")) {
			char *args[8];
			int n = 0;

			if (!(c = find(argv[2]))) {
				fprintf(stderr, "kerf help: unknown command '%s'\n\n",
					kerf_escape(shown, sizeof(shown), argv[2]));
				usage(stderr);
				return 2;
			}
			for (int i = 2; i < argc && n < 6; i++)
				args[n++] = argv[i];
			args[n++] = (char *)"--help";
			args[n] = NULL;
			return c->run(n, args);
		}
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "kerf: unknown command '%s'\n\n",
		kerf_escape(shown, sizeof(shown), argv[1]));
	usage(stderr);
	return 2;
}
