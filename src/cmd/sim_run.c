/*
 * kerf sim run FILE: a time-mode scenario (docs/scenario.md) through the
 * real core, its report per tenant and class, and every workload still
 * pending at the end with the core's reason; exit 3 when there is one.
 * --builtin runs (or with --print writes out) the built-in day instead;
 * --policy and --seed override the scenario's own.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/units.h"
#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "cmd/output.h"
#include "cmd/output_alias.h"
#include "cmd/sim_scenario_opts.h"
#include "sim/demo_day.h"
#include "cmd/spec.h"
#include "sim/scenario.h"
#include "sim/timesim.h"
#include "sim/timesim_pending.h"
#include "sim/timesim_report.h"
#include "cmd/sim_report.h"

#define USAGE \
	"usage: kerf sim run FILE|--builtin [--policy NAME] [--seed N] [-o FMT]\n" \
	"                    [--report FILE.html|FILE.md] [-q]\n" \
	"       kerf sim run --builtin --print\n"

static const char help[] =
	USAGE
	"\n"
	"Run the scenario FILE (docs/scenario.md) through kerf's scheduling core\n"
	"and report per tenant and priority class, then every workload still\n"
	"pending at the end of the run, one line each, \"tenant/name: reason\".\n"
	"\n"
	"  --builtin      the built-in day of 'kerf sim' instead of FILE\n"
	"                 (examples/scenario/builtin-day.yaml)\n"
	"  --print        with --builtin: write that scenario out, run nothing\n"
	"  --policy NAME  placement policy, over the file's policy key\n"
	"                 (random, dotprod, gpu-packing, gpu-clustering,\n"
	"                 best-fit, first-fit, fgd, kerf)\n"
	"  --seed N       seed of every random draw, 0 .. 2^62, over the file's\n"
	"                 seed key; the same seed gives the same run\n"
	"  -o, --output FMT\n"
	"                 table (default), wide (also the p50 and p95 waits,\n"
	"                 evictions, share against entitlement over time), json or\n"
	"                 yaml: one SimulationRun document (docs/schema/\n"
	"                 SimulationRun.json); its \"pending\" array lists them\n"
	"  --json         the same as -o json\n"
	"  --report FILE  also write a report with charts, HTML or Markdown\n"
	"                 by FILE's extension (.html, .md; docs/reports.md)\n"
	"  -q, --quiet    no progress lines on stderr (shown after 2 s)\n"
	"  -h, --help     this text\n"
	"\n"
	"exit status: 0 every workload that arrived started, 1 failure,\n"
	"2 usage, 3 some workload is still pending at the end (in every -o format)\n";

/* The report's title and subtitle for scenario sc. */
static void report_finish(struct kerf_sim_out *o, const struct kerf_scenario *sc,
			  const struct kerf_timesim *ts, size_t gpus, int *rc)
{
	char title[160], sub[320], horizon[32];

	snprintf(title, sizeof(title), "kerf sim run: scenario %s",
		 sc->name[0] ? sc->name : "(unnamed)");
	kerf_units_duration(ts->horizon_ms, horizon, sizeof(horizon));
	snprintf(sub, sizeof(sub), "%zu nodes, %zu GPUs, %zu tenant%s, %" PRIu64 " workloads, %s simulated, policy %s.",
		 ts->st.cluster.nr_nodes, gpus, ts->st.tenants.nr - 1,
		 ts->st.tenants.nr == 2 ? "" : "s",
		 kerf_timesim_submitted(ts), horizon, ts->pol.name);
	if (kerf_sim_out_finish(o, ts, title, sub) != 0 ||
	    kerf_sim_out_commit(o) != 0)
		*rc = -KERF_EIO;
}

int kerf_sim_scenario_report(const struct kerf_scenario *sc,
			     enum kerf_cli_output fmt, struct kerf_sim_out *o)
{
	struct kerf_timesim ts;
	struct kerf_err err = { 0 };
	size_t gpus = 0;
	int rc = kerf_timesim_init(&ts, sc, &err);

	if (rc == 0 && o)
		kerf_sim_out_attach(o, &ts);
	if (rc == 0)
		rc = kerf_timesim_run(&ts, &err);
	if (o)
		kerf_sim_out_stop(o);
	if (rc < 0) {
		fprintf(stderr, "kerf sim: %s\n", err.msg);
		if (ts.sc)
			kerf_timesim_release(&ts);
		return 1;
	}
	for (size_t i = 0; i < ts.st.cluster.nr_slots; i++)
		gpus += ts.st.cluster.nodes[i].nr_gpus;
	if (o && o->path) {
		report_finish(o, sc, &ts, gpus, &rc);
		if (rc < 0) {
			kerf_timesim_release(&ts);
			return 1;
		}
	}
	if (kerf_cli_output_is_doc(fmt)) {
		json_t *doc = kerf_cli_doc("SimulationRun");

		if (doc && kerf_ts_report_json(doc, &ts, "sim run") < 0) {
			json_decref(doc);
			doc = NULL;
		}
		rc = kerf_cli_emit("kerf sim run", doc, fmt) != 0 ? -KERF_EIO : 0;
		if (rc < 0) {
			kerf_timesim_release(&ts);
			return 1;
		}
	} else {
		char horizon[32];

		kerf_units_duration(ts.horizon_ms, horizon, sizeof(horizon));
		printf("scenario %s: %zu nodes, %zu GPUs, %zu tenant%s, %" PRIu64 " workloads, %s simulated, policy %s\n\n",
		       sc->name[0] ? sc->name : "(unnamed)", ts.st.cluster.nr_nodes, gpus,
		       ts.st.tenants.nr - 1, ts.st.tenants.nr == 2 ? "" : "s",
		       kerf_timesim_submitted(&ts), horizon, ts.pol.name);
		kerf_ts_report_text(stdout, &ts, fmt == KERF_OUT_WIDE);
		rc = kerf_ts_pending_text(stdout, &ts);
	}
	if (rc >= 0)
		rc = kerf_ts_nr_pending(&ts) > 0 ? 3 : 0;
	else
		fprintf(stderr, "kerf sim run: the report could not be written (out of memory or a write error)\n");
	kerf_timesim_release(&ts);
	return rc < 0 ? 1 : rc;
}

const struct option kerf_sim_run_longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "json", no_argument, NULL, 'j' },
	{ "builtin", no_argument, NULL, 'b' },
	{ "print", no_argument, NULL, 'p' },
	KERF_SIM_OVERRIDE_LONGOPTS,
	KERF_SIM_OUT_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int kerf_cmd_sim_run(int argc, char **argv)
{
	struct kerf_sim_overrides ov = { 0 };
	struct kerf_scenario sc;
	struct kerf_err err = { 0 };
	struct kerf_sim_out o;
	enum kerf_cli_output fmt = KERF_OUT_TABLE;
	const char *fmt_arg = NULL;
	bool json = false, builtin = false, print = false;
	int c, status, rc;

	kerf_sim_out_init(&o, "kerf sim run");
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hqo:", kerf_sim_run_longopts, NULL)) != -1) {
		int taken = kerf_sim_overrides_opt("kerf sim run", c, optarg, &ov);

		if (taken < 0)
			return 2;
		if (taken > 0)
			continue;
		switch (c) {
		case 'o':
			if (kerf_cli_output("kerf sim run", optarg, &fmt) != 0)
				return 2;
			fmt_arg = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'b':
			builtin = true;
			break;
		case 'p':
			print = true;
			break;
		case 'R':
		case 'q':
			kerf_sim_out_option(&o, c, optarg);
			break;
		case 'h':
			fputs(help, stdout);
			return 0;
		default:
			kerf_opt_error("kerf sim run", c, argv);
			return 2;
		}
	}
	if (kerf_cli_json_alias("kerf sim run", json, fmt_arg, &fmt) != 0)
		return 2;
	if (builtin && optind < argc) {
		kerf_opt_unexpected("kerf sim run", argv[optind],
				    "(--builtin runs the built-in day, not a FILE)");
		return 2;
	}
	if (print && (!builtin || fmt_arg || json || ov.policy || ov.has_seed)) {
		fprintf(stderr, "kerf sim run: --print goes with --builtin alone\n");
		return 2;
	}
	if (optind < argc - 1) {
		kerf_opt_unexpected("kerf sim run", argv[optind + 1], NULL);
		return 2;
	}
	if (!builtin && optind != argc - 1) {
		fputs(USAGE, stderr);
		return 2;
	}
	if (print)
		return kerf_sim_print_builtin("kerf sim run");
	/* after every option is known good: FILE.tmp is created here */
	if (kerf_sim_out_open(&o) != 0)
		return 2;
	rc = builtin ? kerf_demo_day(&sc, &err) : kerf_scenario_load(&sc, argv[optind], &err);
	if (rc < 0) {
		fprintf(stderr, "kerf sim run: %s\n", err.msg);
		kerf_sim_out_release(&o);
		return 1;
	}
	kerf_sim_overrides_apply(&ov, &sc);
	status = kerf_sim_scenario_report(&sc, fmt, &o);
	kerf_scenario_release(&sc);
	kerf_sim_out_release(&o);
	return status;
}
