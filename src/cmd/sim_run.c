/*
 * kerf sim run FILE: a time-mode scenario (docs/scenario.md) through the
 * real core, and its report per tenant and class.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "sim/scenario.h"
#include "sim/timesim.h"
#include "sim/timesim_report.h"

int kerf_sim_scenario_report(const struct kerf_scenario *sc, bool json)
{
	struct kerf_timesim ts;
	struct kerf_err err = { 0 };
	int rc = kerf_timesim_init(&ts, sc, &err);

	if (rc == 0)
		rc = kerf_timesim_run(&ts, &err);
	if (rc < 0) {
		fprintf(stderr, "kerf sim: %s\n", err.msg);
		if (ts.sc)
			kerf_timesim_release(&ts);
		return 1;
	}
	if (json) {
		kerf_ts_report_json(stdout, &ts);
	} else {
		size_t gpus = 0;

		for (size_t i = 0; i < ts.st.cluster.nr_slots; i++)
			gpus += ts.st.cluster.nodes[i].nr_gpus;
		printf("scenario %s: %zu nodes, %zu GPUs, %zu tenants, %" PRIu64 " workloads, %.1f h simulated, policy %s\n\n",
		       sc->name[0] ? sc->name : "(unnamed)", ts.st.cluster.nr_nodes, gpus,
		       ts.st.tenants.nr - 1, kerf_timesim_submitted(&ts),
		       (double)ts.horizon_ms / 3.6e6, ts.pol.name);
		kerf_ts_report_text(stdout, &ts);
	}
	kerf_timesim_release(&ts);
	return 0;
}

int kerf_cmd_sim_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct kerf_scenario sc;
	struct kerf_err err = { 0 };
	bool json = false;
	int c, status;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			printf("usage: kerf sim run FILE [--json]\n");
			return 0;
		default:
			kerf_opt_error("kerf sim run", c, argv);
			return 2;
		}
	}
	if (optind < argc - 1) {
		kerf_opt_unexpected("kerf sim run", argv[optind + 1], NULL);
		return 2;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: kerf sim run FILE [--json]\n");
		return 2;
	}
	if (kerf_scenario_load(&sc, argv[optind], &err) < 0) {
		fprintf(stderr, "kerf sim run: %s\n", err.msg);
		return 1;
	}
	status = kerf_sim_scenario_report(&sc, json);
	kerf_scenario_release(&sc);
	return status;
}
