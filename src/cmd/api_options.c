/* The options kerf get and kerf explain share (cmd/api_client.h). */
#include "cmd/api_client.h"

#include <getopt.h>

#include "cmd/opt.h"
#include "cmd/spec.h"

const struct option kerf_cli_longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "server", required_argument, NULL, 's' },
	{ "snapshot", required_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int kerf_cli_options(const char *prog, const char *usage, int argc, char **argv,
		     enum kerf_cli_output *fmt, const char **server, const char **snapshot)
{
	int opt;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":ho:", kerf_cli_longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			if (kerf_cli_output(prog, optarg, fmt))
				return 2;
			break;
		case 's':
			*server = optarg;
			break;
		case 'f':
			*snapshot = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			kerf_opt_error(prog, opt, argv);
			fputs(usage, stderr);
			return 2;
		}
	}
	return kerf_cli_source_check(prog, *server, *snapshot);
}

int kerf_cli_source_check(const char *prog, const char *server, const char *snapshot)
{
	if (snapshot && server) {
		fprintf(stderr, "%s: --server and --snapshot: give one (a live kerf serve, or a file of kerf sim snapshot)\n", prog);
		return 2;
	}
	if (snapshot && !*snapshot) {
		fprintf(stderr, "%s: --snapshot: an empty file name\n", prog);
		return 2;
	}
	return -1;
}
