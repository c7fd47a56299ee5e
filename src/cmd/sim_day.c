/*
 * kerf sim (no arguments): the built-in demo, a day on a shared cluster
 * (examples/scenario/builtin-day.yaml, compiled in; src/sim/demo_day.c)
 * through the real core, its report, and a few lines on what the controls
 * did: production's start times, shares against entitlements, preemptions
 * and the work they cost, budgets, idle GPUs.  --print-scenario writes the
 * file out; --policy and --seed override the scenario's own.
 */
#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/spec.h"
#include "cmd/opt.h"
#include "cmd/output.h"
#include "cmd/sim_scenario_opts.h"
#include "cmd/sim_report.h"
#include "base/units.h"
#include "core/budget.h"
#include "sim/demo_day.h"
#include "sim/timesim.h"
#include "sim/timesim_report.h"

/* What the hook after every event saw of GPUs shared by fractions. */
struct day_watch {
	struct kerf_err *err;
	uint32_t shared_peak;       /* GPUs holding two or more fractions */
	uint32_t isolated_peak;     /* of those, held by a tenant-level tenant */
};

static void summary(const struct kerf_timesim *ts, const struct day_watch *dw)
{
	const struct kerf_tenants *tt = &ts->st.tenants;
	struct kerf_ts_totals tot;
	char a[32], b[32];

	kerf_ts_totals(ts, &tot);
	printf("\nwhat the controls did:\n");
	for (int c = 0; c < ts->st.classes.nr; c++) {
		const struct kerf_ts_tenant_stats *s = &ts->cls[c];

		if (ts->st.classes.c[c].preemptible || s->nr_waits == 0)
			continue;
		kerf_units_percent((double)kerf_ts_slo_ppm(s) / 1e4, 1, a, sizeof(a));
		kerf_units_duration(kerf_ts_wait_pct(s, 99), b, sizeof(b));
		printf("  %s: %zu of %u started, %s within 60s, p99 wait %s, never preempted (%u)\n",
		       ts->st.classes.c[c].name, s->nr_waits, s->submitted, a, b,
		       s->preempted);
	}
	for (size_t t = 1; t < tt->nr; t++) {
		if (tt->t[t].budget.limit_milli_ms > 0) {
			int64_t spent = kerf_ts_budget_spent_ms(ts, (int)t);

			if (spent >= 0) {
				kerf_units_gpu_hours((double)tt->t[t].budget.limit_milli_ms / 3.6e9,
						     a, sizeof(a));
				kerf_units_duration(spent, b, sizeof(b));
				printf("  %s spent its %s budget after %s; from then only its preemptible work was admitted\n",
				       tt->t[t].name, a, b);
			} else {
				kerf_units_percent(kerf_budget_used_pct(&tt->t[t]), 0, a, sizeof(a));
				printf("  %s: GPU-hour budget %s spent\n", tt->t[t].name, a);
			}
		}
	}
	kerf_units_gpu_hours(tot.lost_gpu_hours, a, sizeof(a));
	printf("  %u preemptions (lower priority, or borrowed quota reclaimed) through the checkpoint handshake lost %s of work\n",
	       tot.preempted, a);
	printf("  %u idle notebooks gave their GPUs back after 30 minutes below 5%% utilisation\n",
	       tot.idle_reclaimed);
	printf("  GPUs shared by fractions (MPS or time-slicing): up to %u at once, %u of them only within\n"
	       "  product/serving (isolation: tenant); no GPU was ever shared against a tenant's level\n",
	       dw->shared_peak, dw->isolated_peak);
	printf("  every invariant held after each of %llu events (run 'kerf sim check' for random scenarios)\n",
	       (unsigned long long)ts->nr_events);
}

/* The day as a SimulationRun document, with what the controls did. */
static int day_doc(const struct kerf_timesim *ts, const struct day_watch *dw,
		   enum kerf_cli_output fmt)
{
	json_t *doc = kerf_cli_doc("SimulationRun");

	if (doc && (kerf_ts_report_json(doc, ts, "sim") < 0 ||
		    json_object_set_new(doc, "controls", json_pack(
			    "{s:I, s:I, s:b, s:I}",
			    "sharedGPUsPeak", (json_int_t)dw->shared_peak,
			    "tenantIsolatedGPUsPeak", (json_int_t)dw->isolated_peak,
			    "invariantsHeld", 1,
			    "invariantChecks", (json_int_t)ts->nr_events)) < 0)) {
		json_decref(doc);
		doc = NULL;
	}
	return kerf_cli_emit("kerf sim", doc, fmt);
}

static int check_each(void *ctx, struct kerf_timesim *ts,
		      const struct kerf_event *ev)
{
	struct day_watch *dw = ctx;
	const struct kerf_cluster *c = &ts->st.cluster;
	uint32_t shared = 0, isolated = 0;

	(void)ev;
	for (size_t i = 0; i < c->nr_nodes; i++)
		for (int g = 0; g < c->nodes[i].nr_gpus; g++)
			if (c->nodes[i].gpu_nr_fractions[g] >= 2) {
				shared++;
				isolated += c->nodes[i].gpu_isolation[g] == KERF_ISOLATION_TENANT;
			}
	if (shared > dw->shared_peak)
		dw->shared_peak = shared;
	if (isolated > dw->isolated_peak)
		dw->isolated_peak = isolated;
	return kerf_state_check(&ts->st, dw->err) < 0 ? 1 : 0;
}

/* Write the built-in scenario, for copying; 0, or 1 on a write error. */
int kerf_sim_print_builtin(const char *prog)
{
	if (fwrite(kerf_demo_day_yaml, 1, kerf_demo_day_yaml_len, stdout) !=
	    kerf_demo_day_yaml_len || fflush(stdout) != 0) {
		fprintf(stderr, "%s: the scenario could not be written to stdout\n", prog);
		return 1;
	}
	return 0;
}

const struct option kerf_sim_day_longopts[] = {
	{ "print-scenario", no_argument, NULL, 'p' },
	{ "output", required_argument, NULL, 'o' },
	KERF_SIM_OVERRIDE_LONGOPTS,
	KERF_SIM_OUT_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int kerf_cmd_sim_day(int argc, char **argv)
{
	struct kerf_sim_overrides ov = { 0 };
	struct kerf_scenario sc;
	struct kerf_timesim ts;
	struct kerf_err err = { 0 };
	struct day_watch dw = { .err = &err };
	struct kerf_sim_out o;
	size_t gpus = 0, submitted = 0;
	enum kerf_cli_output fmt = KERF_OUT_TABLE;
	bool print = false, fmt_given = false;
	int c, rc;

	kerf_sim_out_init(&o, "kerf sim");
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hqo:", kerf_sim_day_longopts, NULL)) != -1) {
		int taken = kerf_sim_overrides_opt("kerf sim", c, optarg, &ov);

		if (taken < 0)
			return 2;
		if (taken > 0)
			continue;
		switch (c) {
		case 'p':
			print = true;
			break;
		case 'o':
			if (kerf_cli_output("kerf sim", optarg, &fmt) != 0)
				return 2;
			fmt_given = true;
			break;
		case 'h': {
			char *args[] = { (char *)"sim", (char *)"--help", NULL };

			return kerf_cmd_sim(2, args);
		}
		case 'R':
		case 'q':
			kerf_sim_out_option(&o, c, optarg);
			break;
		default:
			kerf_opt_error("kerf sim", c, argv);
			return 2;
		}
	}
	if (optind < argc) {
		kerf_opt_unexpected("kerf sim", argv[optind], "(try 'kerf sim --help')");
		return 2;
	}
	if (print) {
		if (ov.policy || ov.has_seed || fmt_given) {
			fprintf(stderr, "kerf sim: --print-scenario prints the file as it is; "
				"--policy, --seed and -o are for a run\n");
			return 2;
		}
		return kerf_sim_print_builtin("kerf sim");
	}
	if (kerf_sim_out_open(&o) != 0)
		return 2;
	if (kerf_demo_day(&sc, &err) < 0) {
		fprintf(stderr, "kerf sim: %s\n", err.msg);
		kerf_sim_out_release(&o);
		return 1;
	}
	kerf_sim_overrides_apply(&ov, &sc);
	if (kerf_timesim_init(&ts, &sc, &err) < 0) {
		fprintf(stderr, "kerf sim: %s\n", err.msg);
		kerf_scenario_release(&sc);
		kerf_sim_out_release(&o);
		return 1;
	}
	ts.hook = check_each;
	ts.hook_ctx = &dw;
	kerf_sim_out_attach(&o, &ts);
	rc = kerf_timesim_run(&ts, &err);
	kerf_sim_out_stop(&o);
	for (size_t i = 0; rc == 0 && i < ts.st.cluster.nr_slots; i++)
		gpus += ts.st.cluster.nodes[i].nr_gpus;
	submitted = (size_t)kerf_timesim_submitted(&ts);
	if (rc == 0 && o.path) {
		char sub[320];

		snprintf(sub, sizeof(sub), "The built-in demo: %zu nodes, %zu GPUs (H100, A100, L4), three tenants, %zu workloads in 24h.",
			 ts.st.cluster.nr_nodes, gpus, submitted);
		if (kerf_sim_out_finish(&o, &ts, "kerf sim: a day on a shared cluster", sub) != 0 ||
		    kerf_sim_out_commit(&o) != 0)
			rc = 1;
	}
	if (rc != 0) {
		if (err.msg[0])
			fprintf(stderr, "kerf sim: %s\n", err.msg);
		kerf_timesim_release(&ts);
		kerf_scenario_release(&sc);
		kerf_sim_out_release(&o);
		return 1;
	}
	if (kerf_cli_output_is_doc(fmt)) {
		rc = day_doc(&ts, &dw, fmt);
		kerf_timesim_release(&ts);
		kerf_scenario_release(&sc);
		kerf_sim_out_release(&o);
		return rc;
	}
	printf("kerf sim: a day on a shared cluster (built-in demo; kerf sim --help for more)\n");
	printf("cluster:  %zu nodes, %zu GPUs: 16 x 8 H100 (NVLink domains of 4 nodes), 16 x 8 A100, 16 x 4 L4\n",
	       ts.st.cluster.nr_nodes, gpus);
	printf("tenants:  product/serving (production inference, shares GPUs only within itself), research/llm (weight 2) and research/vision (weight 1, GPU-hour budget)\n");
	printf("work:     %zu workloads in 24h: inference, 32-GPU pretraining gangs (one NVLink domain each), finetunes, sweeps, notebooks\n",
	       submitted);
	if (ov.policy || ov.has_seed)
		printf("run:      policy %s, seed %llu (given on the command line)\n",
		       ts.pol.name, (unsigned long long)sc.seed);
	printf("\n");
	kerf_ts_report_text(stdout, &ts, fmt == KERF_OUT_WIDE);
	summary(&ts, &dw);
	printf("\nmore: kerf sim placement | kerf sim run FILE | kerf sim check | kerf sim openb --nodes F --pods F\n");
	kerf_timesim_release(&ts);
	kerf_scenario_release(&sc);
	kerf_sim_out_release(&o);
	return 0;
}
