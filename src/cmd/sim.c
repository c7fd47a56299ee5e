/*
 * kerf sim: the simulator's command line.  `kerf sim` runs the built-in demo;
 * `kerf sim openb` replays the openb trace with the FGD method.
 */
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/parse.h"
#include "cmd/cmd.h"
#include "cmd/output_alias.h"
#include "cmd/opt.h"
#include "cmd/output.h"
#include "cmd/sim_report.h"
#include "cmd/spec.h"
#include "core/policy.h"
#include "sim/openb.h"
#include "sim/openb_batch.h"
#include "sim/openb_report.h"

enum { MAX_SEEDS = 1000, MAX_POLICIES = 16, MAX_MOVES_PER_HOUR = 1000000 };

/*
 * Bounds of the defrag options, so that the products the defrag budget
 * takes (pod index x arrival gap x a pod's GPU milli, GPU-hours in
 * GPU-milli-ms) stay far inside 64 bits.
 */
#define MAX_LOST_MILLI_GPU_HOURS ((uint64_t)1000000 * 1000)  /* a million GPU-hours */
#define MAX_ARRIVAL_MS ((uint64_t)3600 * 1000)                /* an hour */
#define MAX_CHECKPOINT_MS ((uint64_t)365 * 86400 * 1000)      /* a year */

static void openb_options(FILE *out);

static void sim_usage(FILE *out)
{
	fprintf(out,
		"usage: kerf sim [--policy NAME] [--seed N] [-o FMT] [--report FILE] [-q]\n"
		"                                     the built-in demo: a multi-tenant day\n"
		"       kerf sim --print-scenario     write the built-in day out as a scenario file\n"
		"       kerf sim placement [-o FMT]   the placement demo: kerf against FGD\n"
		"       kerf sim run FILE|--builtin [--policy NAME] [--seed N] [-o FMT]\n"
		"                                     run a time-mode scenario (docs/scenario.md)\n"
		"       kerf sim snapshot FILE --at TIME|end [-o json|yaml] [--out FILE]\n"
		"                                     the cluster at TIME as kerf get/explain/top read it\n"
		"       kerf sim check [--runs N] [--seed S] [-o FMT]\n"
		"                                     random scenarios, invariants after every event\n"
		"       kerf sim openb --nodes FILE --pods FILE [options]\n"
		"       kerf sim openb-replay --nodes FILE --pods FILE [--days N] [-o FMT]\n"
		"                                     the trace in time mode, tenants by qos\n"
		"       kerf sim openb-gpuspec --pods FILE --like FILE --share PCT [--seed S] [--out FILE]\n"
		"                                     a gpuspecXX pod list for any share (docs/placement.md)\n"
		"       kerf sim mig [-o FMT] [...]   MIG demand: static layouts against dynamic planning\n"
		"\n"
		"the built-in day's options:\n"
		"  --print-scenario          write the built-in day out as a scenario file\n"
		"  --policy NAME             the placement policy, over the scenario's\n"
		"  --seed N                  the seed of every random draw, 0..2^62\n"
		"  -o, --output FMT          table (default), wide (also the p50 and p95\n"
		"                            waits, evictions, share against entitlement\n"
		"                            over time), json or yaml (one SimulationRun\n"
		"                            document, docs/schema/SimulationRun.json)\n"
		"kerf sim, run, openb-replay and openb also take:\n"
		"  --report FILE             write a report with charts; FILE.html (one\n"
		"                            self-contained page) or FILE.md (docs/reports.md)\n"
		"  -q, --quiet               no progress lines on stderr (shown after 2 s)\n"
		"\n"
		"'kerf sim openb --help' lists the openb options and the policies.\n");
}

/* kerf sim openb's options and the policies, for both helps. */
static void openb_options(FILE *out)
{
	fprintf(out,
		"openb options:\n"
		"  --policy NAME[,NAME]|all  policies to run (default: %s)\n"
		"  --seeds A-B|A,B,...       seeds, at most 1000, each once (default: 42-51)\n"
		"  --inflate X               workload as a multiple of GPU capacity,\n"
		"                            0.01..10, 2 decimals (default 1.3)\n"
		"  --curve FILE              write the allocation curve as CSV\n"
		"  -o, --output FMT          table (default), wide (each seed's figure and\n"
		"                            the defrag's tries too), json or yaml: one\n"
		"                            OpenbRun document (docs/schema/OpenbRun.json),\n"
		"                            an item per policy\n"
		"  --json                    the same as -o json\n"
		"  --jobs N                  worker threads, 1..64 (default: online CPUs)\n"
		"  --policy-options S        key=value,... for the policies chosen, checked\n"
		"                            before the run (see docs/placement.md)\n"
		"  --defrag                  move best-effort pods to place pods that fit nowhere\n"
		"  --defrag-moves-per-hour N budget, 0..1000000 (default 60)\n"
		"  --defrag-lost-per-hour X  GPU-hours that moves may lose per hour,\n"
		"                            0..1000000, 3 decimals (default 8)\n"
		"  --arrival-s S             seconds between arrivals, for defrag,\n"
		"                            0..3600, 3 decimals (default 60)\n"
		"  --checkpoint-s S          pods checkpoint this often (seconds), for defrag,\n"
		"                            0 (never)..31536000, 3 decimals (default 1800)\n"
		"  --report FILE             write a report with the allocation curves;\n"
		"                            FILE.html or FILE.md (docs/reports.md)\n"
		"  -q, --quiet               no progress lines on stderr (shown after 2 s)\n"
		"\n"
		"exit status: 0 done, 1 a file could not be read or a run failed, 2 usage\n"
		"\n"
		"policies:\n",
		KERF_POLICY_DEFAULT);
	for (size_t i = 0; i < kerf_policy_count(); i++)
		fprintf(out, "  %-15s %s\n", kerf_policy_at(i)->name,
			kerf_policy_at(i)->summary);
}

int kerf_cmd_sim(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "openb"))
		return kerf_cmd_sim_openb(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "openb-gpuspec"))
		return kerf_cmd_sim_gpuspec(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "openb-replay"))
		return kerf_cmd_sim_replay(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "check"))
		return kerf_cmd_sim_check(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "run"))
		return kerf_cmd_sim_run(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "mig"))
		return kerf_cmd_sim_mig(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "snapshot"))
		return kerf_cmd_sim_snapshot(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "placement"))
		return kerf_cmd_sim_demo(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		sim_usage(stdout);
		return 0;
	}
	/* kerf sim help [SUB]: SUB's --help, or this list */
	if (argc >= 2 && !strcmp(argv[1], "help")) {
		static const char *const subs[] = { "openb", "openb-gpuspec", "openb-replay",
						    "check", "run", "mig", "placement",
						    "snapshot" };

		for (size_t i = 0; argc >= 3 && i < sizeof(subs) / sizeof(subs[0]); i++)
			if (!strcmp(argv[2], subs[i])) {
				char *args[] = { argv[0], argv[2], (char *)"--help", NULL };

				return kerf_cmd_sim(3, args);
			}
		if (argc >= 3) {
			char shown[80];

			fprintf(stderr, "kerf sim help: unknown command '%s'\n",
				kerf_escape(shown, sizeof(shown), argv[2]));
			sim_usage(stderr);
			return 2;
		}
		sim_usage(stdout);
		return 0;
	}
	return kerf_cmd_sim_day(argc, argv);
}

/*
 * --policy-options: KEY=N[,KEY=N...], each key of lower-case letters,
 * digits, '_' or '-' and each N decimal digits (kerf_parse_u64).  Which
 * keys and ranges a policy takes is its own business (it says so when it
 * is built); this only keeps signs, spaces, empty items and control
 * characters from reaching it.
 */
static int check_policy_options(const char *s, struct kerf_err *err)
{
	char shown[80], item[64], item_shown[80];
	const char *p = s;
	int n = 0;

	kerf_escape(shown, sizeof(shown), s);
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const char *eq;
		uint64_t v;
		bool ok = len > 0 && len < sizeof(item);

		n++;
		if (ok) {
			memcpy(item, p, len);
			item[len] = '\0';
			eq = strchr(item, '=');
			ok = eq && eq > item && kerf_parse_u64(eq + 1, &v) == 0;
			for (const char *k = item; ok && k < eq; k++)
				ok = (*k >= 'a' && *k <= 'z') ||
				     (*k >= '0' && *k <= '9') || *k == '_' ||
				     *k == '-';
		}
		if (!ok) {
			kerf_escape_n(item_shown, sizeof(item_shown), p, len);
			return kerf_err_set(err, -KERF_EPARSE,
					    "--policy-options '%s': item %d '%s' is not KEY=N (a lower-case key, decimal digits)",
					    shown, n, item_shown);
		}
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

struct openb_progress {
	struct kerf_progress *p;
	const char *policy;
	size_t i;                   /* policies done */
	size_t nr_policies;
};

/* On the main thread after each seed (sim/openb_batch.h). */
static void on_progress(void *ctx, size_t done, size_t total)
{
	struct openb_progress *op = ctx;
	char detail[96];

	snprintf(detail, sizeof(detail), "policy %s, %zu/%zu seeds", op->policy,
		 done, total);
	kerf_progress_update(op->p,
			     (int64_t)((op->i * total + done) * 1000000 /
				       (op->nr_policies * total)),
			     detail);
}

/* The policy's mean allocation curve into the report. */
static int add_curve(struct kerf_report *rep, const struct kerf_batch_summary *sum,
		     int inflate_pct)
{
	int64_t x[KERF_CURVE_MAX_PCT + 1], y[KERF_CURVE_MAX_PCT + 1];
	size_t n = 0;

	for (int k = 0; k <= inflate_pct && k <= KERF_CURVE_MAX_PCT; k++) {
		if (isnan(sum->curve_mean[k]))
			continue;
		x[n] = (int64_t)k * 10000;
		y[n++] = llround(sum->curve_mean[k] * 1e4);
	}
	return kerf_report_add_curve(rep, sum->policy, x, y, n);
}

/*
 * The OpenbRun document without its items (docs/schema/OpenbRun.json):
 * the trace, the seeds and the options that shape the figures.
 */
static json_t *openb_doc(const struct kerf_openb *trace, const uint64_t *seeds,
			 size_t nr_seeds, const struct kerf_run_opts *opts)
{
	json_t *doc = kerf_cli_doc("OpenbRun"), *s = json_array(), *body;

	for (size_t i = 0; s && i < nr_seeds; i++)
		json_array_append_new(s, json_integer((json_int_t)seeds[i]));
	body = json_pack("{s:{s:I, s:I}, s:o, s:i, s:{s:s?, s:b, s:I, s:f, s:f, s:f}}",
			 "trace", "nodes", (json_int_t)trace->nr_nodes,
			 "pods", (json_int_t)trace->nr_pods,
			 "seeds", s,
			 "inflatePercent", opts->inflate_pct,
			 "options",
			 "policyOptions", opts->policy_options,
			 "defrag", opts->defrag,
			 "defragMovesPerHour",
			 (json_int_t)opts->defrag_budget.max_moves_per_hour,
			 /* milli-GPU x ms per hour, as GPU-hours per hour */
			 "defragLostGPUHoursPerHour",
			 (double)opts->defrag_budget.max_lost_milli_ms_per_hour /
				 (1000.0 * 3600 * 1000),
			 "arrivalSeconds", (double)opts->arrival_ms / 1000.0,
			 "checkpointSeconds", (double)opts->checkpoint_ms / 1000.0);
	if (!doc || !body || json_object_update(doc, body) < 0) {
		json_decref(doc);
		doc = NULL;
	}
	json_decref(body);
	return doc;
}

const struct option kerf_sim_openb_longopts[] = {
	{ "nodes", required_argument, NULL, 'n' },
	{ "pods", required_argument, NULL, 'p' },
	{ "policy", required_argument, NULL, 'P' },
	{ "seeds", required_argument, NULL, 's' },
	{ "inflate", required_argument, NULL, 'i' },
	{ "curve", required_argument, NULL, 'c' },
	{ "json", no_argument, NULL, 'j' },
	{ "output", required_argument, NULL, 'o' },
	{ "jobs", required_argument, NULL, 'J' },
	{ "policy-options", required_argument, NULL, 'O' },
	{ "defrag", no_argument, NULL, 'D' },
	{ "defrag-moves-per-hour", required_argument, NULL, 'M' },
	{ "defrag-lost-per-hour", required_argument, NULL, 'L' },
	{ "arrival-s", required_argument, NULL, 'A' },
	{ "checkpoint-s", required_argument, NULL, 'C' },
	KERF_SIM_OUT_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int kerf_cmd_sim_openb(int argc, char **argv)
{
	const char *nodes = NULL, *pods = NULL, *curve_path = NULL;
	const char *policies[MAX_POLICIES];
	struct kerf_sim_out out;
	size_t nr_policies = 1, nr_seeds = 0;
	uint64_t seeds[MAX_SEEDS];
	struct kerf_run_opts opts = {
		.inflate_pct = 130,
		.defrag_budget = {
			.max_moves_per_hour = 60,
			.max_lost_milli_ms_per_hour = 8LL * 1000 * 3600 * 1000,
			.max_nodes = 8,
			.max_moves_per_pod = 4,
		},
		.arrival_ms = 60 * 1000,
		.checkpoint_ms = 30 * 60 * 1000,
	};
	struct kerf_openb trace;
	struct kerf_err err = { 0 };
	struct kerf_run *runs = NULL;
	FILE *curve = NULL;
	enum kerf_cli_output fmt = KERF_OUT_TABLE;
	bool json = false;
	const char *fmt_arg = NULL;
	json_t *doc = NULL, *items = NULL;
	long jobs = sysconf(_SC_NPROCESSORS_ONLN);
	int c, status = 0;

	policies[0] = KERF_POLICY_DEFAULT;
	kerf_parse_seeds_opt("--seeds", "42-51", seeds, MAX_SEEDS, &nr_seeds, NULL);
	kerf_sim_out_init(&out, "kerf sim openb");
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hqo:", kerf_sim_openb_longopts, NULL)) != -1) {
		uint64_t v;

		switch (c) {
		case 'n':
			nodes = optarg;
			break;
		case 'p':
			pods = optarg;
			break;
		case 'P':
			if (kerf_opt_policies("kerf sim openb", "--policy", optarg,
					      policies, MAX_POLICIES, &nr_policies) < 0)
				return 2;
			break;
		case 's':
			if (kerf_parse_seeds_opt("--seeds", optarg, seeds, MAX_SEEDS,
						 &nr_seeds, &err) < 0) {
				fprintf(stderr, "kerf sim openb: %s\n", err.msg);
				return 2;
			}
			break;
		case 'i':
			/* a multiple with two decimals, as a percentage */
			if (kerf_parse_fixed_opt("--inflate", optarg, 2, 1, 1000,
						 &v, &err) < 0) {
				fprintf(stderr, "kerf sim openb: %s\n", err.msg);
				return 2;
			}
			opts.inflate_pct = (int)v;
			break;
		case 'c':
			curve_path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'o':
			if (kerf_cli_output("kerf sim openb", optarg, &fmt))
				return 2;
			fmt_arg = optarg;
			break;
		case 'J':
			if (kerf_parse_u64_opt("--jobs", optarg, 1, 64, &v, &err) < 0) {
				fprintf(stderr, "kerf sim openb: %s\n", err.msg);
				return 2;
			}
			jobs = (long)v;
			break;
		case 'O':
			if (check_policy_options(optarg, &err) < 0) {
				fprintf(stderr, "kerf sim openb: %s\n", err.msg);
				return 2;
			}
			opts.policy_options = optarg;
			break;
		case 'D':
			opts.defrag = true;
			break;
		case 'M':
			if (kerf_parse_u64_opt("--defrag-moves-per-hour", optarg, 0,
					       MAX_MOVES_PER_HOUR, &v, &err) < 0) {
				fprintf(stderr, "kerf sim openb: %s\n", err.msg);
				return 2;
			}
			opts.defrag_budget.max_moves_per_hour = (uint32_t)v;
			break;
		case 'L':
			/* GPU-hours with three decimals: milli-GPU-hours */
			if (kerf_parse_fixed_opt("--defrag-lost-per-hour", optarg, 3, 0,
						 MAX_LOST_MILLI_GPU_HOURS, &v, &err) < 0) {
				fprintf(stderr, "kerf sim openb: %s\n", err.msg);
				return 2;
			}
			opts.defrag_budget.max_lost_milli_ms_per_hour =
				(int64_t)v * 3600 * 1000;
			break;
		case 'A':
			if (kerf_parse_fixed_opt("--arrival-s", optarg, 3, 0,
						 MAX_ARRIVAL_MS, &v, &err) < 0) {
				fprintf(stderr, "kerf sim openb: %s\n", err.msg);
				return 2;
			}
			opts.arrival_ms = (int64_t)v;
			break;
		case 'C':
			if (kerf_parse_fixed_opt("--checkpoint-s", optarg, 3, 0,
						 MAX_CHECKPOINT_MS, &v, &err) < 0) {
				fprintf(stderr, "kerf sim openb: %s\n", err.msg);
				return 2;
			}
			opts.checkpoint_ms = (int64_t)v;
			break;
		case 'h':
			printf("usage: kerf sim openb --nodes FILE --pods FILE [options]\n\n");
			openb_options(stdout);
			return 0;
		default:
			if (kerf_sim_out_option(&out, c, optarg))
				break;
			kerf_opt_error("kerf sim openb", c, argv);
			return 2;
		}
	}
	if (optind < argc) {
		kerf_opt_unexpected("kerf sim openb", argv[optind], NULL);
		return 2;
	}
	if (!nodes || !pods) {
		fprintf(stderr, "kerf sim openb: --nodes and --pods are required\n");
		return 2;
	}
	if (kerf_cli_json_alias("kerf sim openb", json, fmt_arg, &fmt) != 0)
		return 2;
	/* the keys and values for the policies chosen, before any work */
	if (kerf_policy_check_options(policies, nr_policies,
				      opts.policy_options, &err) < 0) {
		char shown[80];

		fprintf(stderr, "kerf sim openb: --policy-options '%s': %s\n",
			kerf_escape(shown, sizeof(shown), opts.policy_options),
			err.msg);
		return 2;
	}
	if (kerf_sim_out_open(&out) != 0)
		return 2;
	kerf_sim_out_start(&out);
	kerf_openb_init(&trace);
	if (kerf_openb_load(&trace, nodes, pods, &err) < 0) {
		fprintf(stderr, "kerf sim openb: %s\n", err.msg);
		status = 1;
		goto out;
	}
	runs = calloc(nr_seeds, sizeof(*runs));
	if (!runs) {
		fprintf(stderr, "kerf sim openb: out of memory\n");
		status = 1;
		goto out;
	}
	if (curve_path) {
		curve = fopen(curve_path, "w");
		if (!curve) {
			char shown[160];

			fprintf(stderr, "kerf sim openb: cannot write '%s': %s\n",
				kerf_escape(shown, sizeof(shown), curve_path),
				strerror(errno));
			status = 1;
			goto out;
		}
		kerf_report_curve_head(curve);
	}
	if (kerf_cli_output_is_doc(fmt)) {
		doc = openb_doc(&trace, seeds, nr_seeds, &opts);
		items = json_array();
		if (!doc || !items || json_object_set(doc, "items", items) < 0) {
			fprintf(stderr, "kerf sim openb: out of memory\n");
			status = 1;
			goto out;
		}
	} else {
		printf("openb: %zu nodes, %zu pods in the trace; %zu seeds; workload %d%% of GPU capacity\n",
		       trace.nr_nodes, trace.nr_pods, nr_seeds, opts.inflate_pct);
		kerf_report_table_head(stdout);
	}
	for (size_t i = 0; i < nr_policies; i++) {
		struct kerf_batch_summary *sum = malloc(sizeof(*sum));
		struct openb_progress prog = { &out.progress, policies[i], i,
					       nr_policies };

		if (!sum) {
			status = 1;
			break;
		}
		opts.policy = policies[i];
		if (kerf_batch_run(&trace, &opts, seeds, nr_seeds, (int)jobs, runs,
				   on_progress, &prog, sum, &err) < 0) {
			fprintf(stderr, "kerf sim openb: %s: %s\n", policies[i], err.msg);
			free(sum);
			status = 1;
			break;
		}
		kerf_progress_clear(&out.progress);   /* the row goes below */
		if (items) {
			if (json_array_append_new(items, kerf_report_item(sum, runs, nr_seeds)) < 0) {
				fprintf(stderr, "kerf sim openb: out of memory\n");
				status = 1;
			}
		} else {
			kerf_report_table_row(stdout, sum, runs, nr_seeds,
					      fmt == KERF_OUT_WIDE);
			fflush(stdout);
		}
		if (curve)
			kerf_report_curve_rows(curve, sum, opts.inflate_pct);
		if (out.path && add_curve(&out.rep, sum, opts.inflate_pct) < 0) {
			fprintf(stderr, "kerf sim openb: out of memory\n");
			status = 1;
		}
		free(sum);
		if (status)
			break;
	}
	kerf_sim_out_stop(&out);
	if (status == 0 && out.path) {
		snprintf(out.rep.title, sizeof(out.rep.title), "kerf sim openb");
		snprintf(out.rep.subtitle, sizeof(out.rep.subtitle),
			 "openb: %zu nodes, %zu pods in the trace; %zu seeds; workload %d%% of GPU capacity.",
			 trace.nr_nodes, trace.nr_pods, nr_seeds, opts.inflate_pct);
		status = kerf_sim_out_commit(&out);
	}
	/* the one document, once every policy ran */
	if (status == 0 && doc) {
		status = kerf_cli_emit("kerf sim openb", doc, fmt);
		doc = NULL;
	}
out:
	json_decref(items);
	json_decref(doc);
	if (curve && fclose(curve) != 0) {
		char shown[160];

		fprintf(stderr, "kerf sim openb: cannot write '%s'\n",
			kerf_escape(shown, sizeof(shown), curve_path));
		status = 1;
	}
	free(runs);
	kerf_openb_release(&trace);
	kerf_sim_out_release(&out);
	return status;
}
