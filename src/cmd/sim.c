/*
 * kerf sim: the simulator's command line.  `kerf sim` runs the built-in demo;
 * `kerf sim openb` replays the openb trace with the FGD method.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/parse.h"
#include "cmd/cmd.h"
#include "core/policy.h"
#include "sim/openb.h"
#include "sim/openb_batch.h"
#include "sim/openb_report.h"

enum { MAX_SEEDS = 1000, MAX_POLICIES = 16 };

static void sim_usage(FILE *out)
{
	fprintf(out,
		"usage: kerf sim                      the built-in demo: a multi-tenant day\n"
		"       kerf sim placement            the placement demo: kerf against FGD\n"
		"       kerf sim run FILE [--json]     run a time-mode scenario (docs/scenario.md)\n"
		"       kerf sim check [--runs N] [--seed S]\n"
		"                                     random scenarios, invariants after every event\n"
		"       kerf sim openb --nodes FILE --pods FILE [options]\n"
		"       kerf sim openb-replay --nodes FILE --pods FILE [--days N] [--json]\n"
		"                                     the trace in time mode, tenants by qos\n"
		"       kerf sim mig [--help]          MIG demand: static layouts against dynamic planning\n"
		"\n"
		"openb options:\n"
		"  --policy NAME[,NAME]|all  policies to run (default: %s)\n"
		"  --seeds A-B|A,B,...       seeds (default: 42-51)\n"
		"  --inflate X               workload as a multiple of GPU capacity (default 1.3)\n"
		"  --curve FILE              write the allocation curve as CSV\n"
		"  --json                    one JSON object per policy on stdout\n"
		"  --jobs N                  worker threads (default: online CPUs)\n"
		"  --policy-options S        key=value,... for the policy (see docs/placement.md)\n"
		"  --defrag                  move best-effort pods to place pods that fit nowhere\n"
		"  --defrag-moves-per-hour N budget (default 60)\n"
		"  --defrag-lost-per-hour X  GPU-hours that moves may lose per hour (default 8)\n"
		"  --arrival-s S             time between arrivals, for defrag (default 60)\n"
		"  --checkpoint-s S          pods checkpoint this often, for defrag (default 1800)\n"
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
	if (argc >= 2 && !strcmp(argv[1], "openb-replay"))
		return kerf_cmd_sim_replay(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "check"))
		return kerf_cmd_sim_check(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "run"))
		return kerf_cmd_sim_run(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "mig"))
		return kerf_cmd_sim_mig(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "placement"))
		return kerf_cmd_sim_demo(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		sim_usage(stdout);
		return 0;
	}
	return kerf_cmd_sim_day(argc, argv);
}

/* "42-51" or "42,43,50" */
static int parse_seeds(const char *arg, uint64_t *seeds, size_t *nr)
{
	char buf[4096];
	char *dash, *tok, *save = NULL;
	uint64_t a, b;

	*nr = 0;
	if (strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	dash = strchr(buf, '-');
	if (dash && !strchr(buf, ',')) {
		*dash = '\0';
		if (kerf_parse_u64(buf, &a) < 0 ||
		    kerf_parse_u64(dash + 1, &b) < 0 || b < a ||
		    b - a >= MAX_SEEDS)
			return -1;
		for (uint64_t s = a; s <= b; s++)
			seeds[(*nr)++] = s;
		return 0;
	}
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*nr >= MAX_SEEDS || kerf_parse_u64(tok, &a) < 0)
			return -1;
		seeds[(*nr)++] = a;
	}
	return *nr ? 0 : -1;
}

static int parse_policies(const char *arg, const char **names, size_t *nr)
{
	char buf[512];
	char *tok, *save = NULL;

	*nr = 0;
	if (!strcmp(arg, "all")) {
		for (size_t i = 0; i < kerf_policy_count(); i++)
			names[(*nr)++] = kerf_policy_at(i)->name;
		return 0;
	}
	if (strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct kerf_policy_info *info = kerf_policy_lookup(tok);

		if (!info) {
			fprintf(stderr, "kerf sim openb: --policy: unknown policy '%s'\n", tok);
			return -1;
		}
		if (*nr >= MAX_POLICIES)
			return -1;
		names[(*nr)++] = info->name;
	}
	return *nr ? 0 : -1;
}

/* "1.3" -> 130 (percent), two decimals at most. */
static int parse_inflate(const char *s, int *pct)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v >= 0.01 && v <= 10.0))
		return -1;
	*pct = (int)(v * 100.0 + 0.5);
	return 0;
}

struct progress {
	const char *policy;
	bool tty;
};

static void on_progress(void *ctx, size_t done, size_t total)
{
	struct progress *p = ctx;

	if (!p->tty)
		return;
	fprintf(stderr, "\r%-15s %zu/%zu seeds", p->policy, done, total);
	if (done == total)
		fprintf(stderr, "\r\033[K");
	fflush(stderr);
}

int kerf_cmd_sim_openb(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "pods", required_argument, NULL, 'p' },
		{ "policy", required_argument, NULL, 'P' },
		{ "seeds", required_argument, NULL, 's' },
		{ "inflate", required_argument, NULL, 'i' },
		{ "curve", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "jobs", required_argument, NULL, 'J' },
		{ "policy-options", required_argument, NULL, 'o' },
		{ "defrag", no_argument, NULL, 'D' },
		{ "defrag-moves-per-hour", required_argument, NULL, 'M' },
		{ "defrag-lost-per-hour", required_argument, NULL, 'L' },
		{ "arrival-s", required_argument, NULL, 'A' },
		{ "checkpoint-s", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *nodes = NULL, *pods = NULL, *curve_path = NULL;
	const char *policies[MAX_POLICIES];
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
	bool json = false;
	long jobs = sysconf(_SC_NPROCESSORS_ONLN);
	int c, status = 0;

	policies[0] = KERF_POLICY_DEFAULT;
	parse_seeds("42-51", seeds, &nr_seeds);
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			nodes = optarg;
			break;
		case 'p':
			pods = optarg;
			break;
		case 'P':
			if (parse_policies(optarg, policies, &nr_policies) < 0)
				return 2;
			break;
		case 's':
			if (parse_seeds(optarg, seeds, &nr_seeds) < 0) {
				fprintf(stderr, "kerf sim openb: --seeds '%s': expected A-B or A,B,... (at most %d)\n",
					optarg, MAX_SEEDS);
				return 2;
			}
			break;
		case 'i':
			if (parse_inflate(optarg, &opts.inflate_pct) < 0) {
				fprintf(stderr, "kerf sim openb: --inflate '%s': expected a number in 0.01..10\n",
					optarg);
				return 2;
			}
			break;
		case 'c':
			curve_path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'J': {
			uint64_t v;

			if (kerf_parse_u64_opt("--jobs", optarg, 1, 64, &v, &err) < 0) {
				fprintf(stderr, "kerf sim openb: %s\n", err.msg);
				return 2;
			}
			jobs = (long)v;
			break;
		}
		case 'o':
			opts.policy_options = optarg;
			break;
		case 'D':
			opts.defrag = true;
			break;
		case 'M':
		case 'L':
		case 'A':
		case 'C': {
			char *end;
			double v = strtod(optarg, &end);

			if (*end || !(v >= 0 && v <= 1e9)) {
				fprintf(stderr, "kerf sim openb: '%s': expected a non-negative number\n", optarg);
				return 2;
			}
			if (c == 'M')
				opts.defrag_budget.max_moves_per_hour = (uint32_t)v;
			else if (c == 'L')
				opts.defrag_budget.max_lost_milli_ms_per_hour =
					(int64_t)(v * 1000 * 3600 * 1000);
			else if (c == 'A')
				opts.arrival_ms = (int64_t)(v * 1000);
			else
				opts.checkpoint_ms = (int64_t)(v * 1000);
			break;
		}
		case 'h':
			sim_usage(stdout);
			return 0;
		default:
			sim_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kerf sim openb: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!nodes || !pods) {
		fprintf(stderr, "kerf sim openb: --nodes and --pods are required\n");
		return 2;
	}
	kerf_openb_init(&trace);
	if (kerf_openb_load(&trace, nodes, pods, &err) < 0) {
		fprintf(stderr, "kerf sim openb: %s\n", err.msg);
		kerf_openb_release(&trace);
		return 1;
	}
	runs = calloc(nr_seeds, sizeof(*runs));
	if (!runs) {
		fprintf(stderr, "kerf sim openb: out of memory\n");
		kerf_openb_release(&trace);
		return 1;
	}
	if (curve_path) {
		curve = fopen(curve_path, "w");
		if (!curve) {
			fprintf(stderr, "kerf sim openb: cannot write '%s': %s\n",
				curve_path, strerror(errno));
			status = 1;
			goto out;
		}
		kerf_report_curve_head(curve);
	}
	if (!json) {
		printf("openb: %zu nodes, %zu pods in the trace; %zu seeds; workload %d%% of GPU capacity\n",
		       trace.nr_nodes, trace.nr_pods, nr_seeds, opts.inflate_pct);
		kerf_report_table_head(stdout);
	}
	for (size_t i = 0; i < nr_policies; i++) {
		struct kerf_batch_summary *sum = malloc(sizeof(*sum));
		struct progress prog = { policies[i], isatty(STDERR_FILENO) };

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
		if (json)
			kerf_report_json(stdout, sum, runs, nr_seeds);
		else
			kerf_report_table_row(stdout, sum);
		fflush(stdout);
		if (curve)
			kerf_report_curve_rows(curve, sum, opts.inflate_pct);
		free(sum);
	}
out:
	if (curve && fclose(curve) != 0) {
		fprintf(stderr, "kerf sim openb: cannot write '%s'\n", curve_path);
		status = 1;
	}
	free(runs);
	kerf_openb_release(&trace);
	return status;
}
