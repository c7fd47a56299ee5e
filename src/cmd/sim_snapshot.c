/*
 * kerf sim snapshot FILE --at TIME [-o json|yaml] [--out FILE]: run a
 * time-mode scenario to TIME and write what kerf serve's read-only API
 * would show then as one JSON (or YAML) document (view/snapshot.h, docs/api.md "Snapshots"), for `kerf get
 * --snapshot`, `kerf explain --snapshot` and `kerf top --snapshot`.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/units.h"
#include "cmd/cmd.h"
#include "cmd/spec.h"
#include "cmd/opt.h"
#include "cmd/output.h"
#include "sim/scenario.h"
#include "sim/timesim.h"
#include "view/snapshot.h"

#define USAGE "usage: kerf sim snapshot FILE --at TIME|end [-o json|yaml] [--out FILE]\n"

static const char help[] =
	USAGE
	"\n"
	"Run the scenario FILE (docs/scenario.md) to TIME of simulated time and\n"
	"write the cluster as kerf serve's read-only API would show it then:\n"
	"tenants, queue, nodes, GPUs and the explanation of every pending\n"
	"workload, one document of kind Snapshot (docs/api.md, \"Snapshots\").\n"
	"Read the JSON form with\n"
	"  kerf get ... --snapshot FILE, kerf explain TENANT/NAME --snapshot FILE\n"
	"  and kerf top --snapshot FILE.\n"
	"\n"
	"  --at TIME        seconds from the start (\"5400\", \"5400.5\", to the ms), or a\n"
	"                   duration (\"2h30m\", \"90m\", \"45s\", \"1h2m3s\"), or end\n"
	"                   (the scenario's horizon); at most the horizon\n"
	"  -o, --output FMT json (default) or yaml; a snapshot is a document, so\n"
	"                   table and wide are refused ('kerf get' prints the\n"
	"                   tables of a snapshot)\n"
	"  --out FILE       write to FILE (default: standard output)\n"
	"  -h, --help       this text\n"
	"\n"
	"exit status: 0 written, 1 failure, 2 usage\n";

static const char prog[] = "kerf sim snapshot";

/* "5400", "5400.5", "2h30m", "1h2m3s", "90m" into ms: 0, or -1. */
static int parse_at(const char *s, int64_t *ms)
{
	int64_t total = 0;
	bool unit = false;
	const char *p = s;

	if (!*s)
		return -1;
	while (*p) {
		int64_t v = 0, frac = 0, scale = 1000;
		int digits = 0, fd = 0;

		for (; *p >= '0' && *p <= '9'; p++, digits++) {
			if (v > INT64_C(100000000000))
				return -1;
			v = v * 10 + (*p - '0');
		}
		if (*p == '.') {
			/* to the millisecond: a finer digit is refused, not rounded */
			for (p++; *p >= '0' && *p <= '9'; p++, fd++) {
				if (fd >= 3)
					return -1;
				frac = frac * 10 + (*p - '0');
				scale /= 10;
			}
			if (!fd)
				return -1;
		}
		if (!digits)
			return -1;
		if (fd && scale > 1)
			frac *= scale;
		if (*p == 'h' || *p == 'm' || *p == 's') {
			int64_t mul = *p == 'h' ? 3600 : *p == 'm' ? 60 : 1;

			total += v * mul * 1000 + frac * mul;
			unit = true;
			p++;
		} else if (!*p && !unit) {
			total += v * 1000 + frac;
		} else {
			return -1;
		}
	}
	*ms = total;
	return 0;
}

static int write_snapshot(const struct kerf_scenario *sc, const char *file, int64_t at_ms,
			  bool at_end, const char *out_path, enum kerf_cli_output fmt)
{
	struct kerf_timesim ts;
	struct kerf_err err = { 0 };
	struct kerf_view_source src = { .scenario = file, .name = sc->name[0] ? sc->name : NULL,
					.seed = sc->seed };
	json_t *snap = NULL;
	FILE *out = stdout;
	int rc = kerf_timesim_init(&ts, sc, &err);

	if (rc == 0) {
		if (at_end)
			at_ms = ts.horizon_ms;
		if (at_ms > ts.horizon_ms) {
			char end[32];

			kerf_units_duration(ts.horizon_ms, end, sizeof(end));
			fprintf(stderr, "%s: --at is after the end of the scenario (its horizon is %s)\n",
				prog, end);
			kerf_timesim_release(&ts);
			return 2;
		}
		ts.horizon_ms = at_ms;
		rc = kerf_timesim_run(&ts, &err);
	}
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		if (ts.sc)
			kerf_timesim_release(&ts);
		return 1;
	}
	src.policy = ts.pol.name;
	rc = kerf_view_snapshot(&ts.st, ts.now_ms, &src, &snap);
	if (rc == 0 && out_path && !(out = fopen(out_path, "w"))) {
		fprintf(stderr, "%s: cannot write '%s': %s\n", prog, out_path, strerror(errno));
		rc = 1;
	} else if (rc == 0) {
		/* as every -o json|yaml document is written (cmd/output.c) */
		int bad = kerf_cli_print(prog, snap, fmt, out) != 0;

		if ((out_path ? fclose(out) : fflush(out)) != 0 || bad) {
			fprintf(stderr, "%s: the snapshot could not be written%s%s\n", prog,
				out_path ? " to " : "", out_path ? out_path : "");
			rc = 1;
		}
	} else {
		fprintf(stderr, "%s: out of memory\n", prog);
		rc = 1;
	}
	json_decref(snap);
	kerf_timesim_release(&ts);
	return rc;
}

const struct option kerf_sim_snapshot_longopts[] = {
	{ "at", required_argument, NULL, 'a' },
	{ "output", required_argument, NULL, 'o' },
	{ "out", required_argument, NULL, 'O' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int kerf_cmd_sim_snapshot(int argc, char **argv)
{
	struct kerf_scenario sc;
	struct kerf_err err = { 0 };
	const char *at = NULL, *out = NULL;
	char shown[80];
	enum kerf_cli_output fmt = KERF_OUT_JSON;
	int64_t at_ms = 0;
	int c, status;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", kerf_sim_snapshot_longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			at = optarg;
			break;
		case 'o':
			if (kerf_cli_output(prog, optarg, &fmt) != 0)
				return 2;
			if (!kerf_cli_output_is_doc(fmt)) {
				fprintf(stderr, "%s: -o %s: a snapshot is a document, json or yaml; "
					"kerf get ... --snapshot FILE prints its tables\n", prog, optarg);
				return 2;
			}
			break;
		case 'O':
			out = optarg;
			break;
		case 'h':
			fputs(help, stdout);
			return 0;
		default:
			kerf_opt_error(prog, c, argv);
			return 2;
		}
	}
	if (optind < argc - 1) {
		kerf_opt_unexpected(prog, argv[optind + 1], NULL);
		return 2;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "%s: which scenario? FILE\n" USAGE, prog);
		return 2;
	}
	if (!at) {
		fprintf(stderr, "%s: --at is required: TIME in seconds, a duration like 2h30m, or end\n" USAGE, prog);
		return 2;
	}
	if (strcmp(at, "end") && parse_at(at, &at_ms) < 0) {
		fprintf(stderr, "%s: --at '%s': expected seconds (5400 or 5400.5), a duration (2h30m, 90m, 45s) or end\n",
			prog, kerf_escape(shown, sizeof(shown), at));
		return 2;
	}
	if (out && !*out) {
		fprintf(stderr, "%s: --out: an empty file name\n", prog);
		return 2;
	}
	if (kerf_scenario_load(&sc, argv[optind], &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return 1;
	}
	status = write_snapshot(&sc, argv[optind], at_ms, !strcmp(at, "end"), out, fmt);
	kerf_scenario_release(&sc);
	return status;
}
