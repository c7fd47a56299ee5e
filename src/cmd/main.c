/*
 * kerf: one binary, several roles.  This file only dispatches, from the
 * command registry (cmd/spec.h); -h and --help anywhere on the line show
 * that command's help.  Installed as kubectl-kerf it is the kubectl
 * plugin `kubectl kerf`, the same commands.
 */
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "cmd/spec.h"

int main(int argc, char **argv)
{
	const struct kerf_spec *s;
	const char *base = argc > 0 ? strrchr(argv[0], '/') : NULL;
	char shown[80];
	int nr;

	base = base ? base + 1 : argc > 0 ? argv[0] : "";
	if (!strcmp(base, "kubectl-kerf"))
		kerf_prog_name = "kubectl kerf";
	if (argc < 2) {
		kerf_spec_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
		return kerf_cmd_version(1, argv);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		kerf_spec_usage(stdout);
		return 0;
	}
	s = kerf_spec_lookup(argc, argv, &nr);
	if (!s) {
		fprintf(stderr, "%s: unknown command '%s'\n\n", kerf_prog_name,
			kerf_escape(shown, sizeof(shown), argv[1]));
		kerf_spec_usage(stderr);
		return 2;
	}
	if (kerf_spec_wants_help(s, nr + 1, argc, argv))
		return kerf_spec_help(s);
	return kerf_spec_run(s, nr, argc, argv);
}
