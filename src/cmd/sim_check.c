/*
 * kerf sim check: random multi-tenant scenarios with every invariant checked
 * after every event (see src/sim/check.h).  Prints
 * "N runs, M events, V violations" and how to replay the first bad seed;
 * exits 1 on any violation.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "base/parse.h"
#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "cmd/spec.h"
#include "sim/check.h"

const struct option kerf_sim_check_longopts[] = {
	{ "runs", required_argument, NULL, 'r' },
	{ "seed", required_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int kerf_cmd_sim_check(int argc, char **argv)
{
	uint64_t runs = 100, seed = 1;
	struct kerf_check_result res = { 0 };
	struct kerf_err err = { 0 };
	bool tty = isatty(STDERR_FILENO);
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", kerf_sim_check_longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (kerf_parse_u64_opt("--runs", optarg, 1, 100000000, &runs, &err) < 0) {
				fprintf(stderr, "kerf sim check: %s\n", err.msg);
				return 2;
			}
			break;
		case 's':
			if (kerf_parse_u64_opt("--seed", optarg, 0, UINT64_MAX, &seed, &err) < 0) {
				fprintf(stderr, "kerf sim check: %s\n", err.msg);
				return 2;
			}
			break;
		case 'h':
			printf("usage: kerf sim check [--runs N] [--seed S]\n"
			       "  N random scenarios from seed S on (default 100 from 1), every\n"
			       "  invariant checked after every event.\n");
			return 0;
		default:
			kerf_opt_error("kerf sim check", c, argv);
			return 2;
		}
	}
	if (optind < argc) {
		kerf_opt_unexpected("kerf sim check", argv[optind], NULL);
		return 2;
	}
	if (seed > UINT64_MAX - (runs - 1)) {
		fprintf(stderr, "kerf sim check: --seed %" PRIu64 " with --runs %" PRIu64 ": the last seed would pass %" PRIu64 "\n",
			seed, runs, UINT64_MAX);
		return 2;
	}
	for (uint64_t i = 0; i < runs; i++) {
		if (kerf_check_run(seed + i, 1, &res, &err) < 0) {
			fprintf(stderr, "kerf sim check: %s\n", err.msg);
			return 1;
		}
		if (tty && (i % 16 == 15 || i + 1 == runs)) {
			fprintf(stderr, "\r%" PRIu64 "/%" PRIu64 " runs", i + 1, runs);
			if (i + 1 == runs)
				fprintf(stderr, "\r\033[K");
		}
	}
	printf("checked: %" PRIu64 " admissions, %" PRIu64 " preemptions, %" PRIu64 " evictions by node failures\n",
	       res.admissions, res.preemptions, res.evictions);
	printf("isolation: after the events, %" PRIu64 " GPUs found shared by fractions, %" PRIu64 " of them within a tenant-level tenant\n",
	       res.shared_gpu_checks, res.tenant_gpu_checks);
	printf("MIG: after the events, %" PRIu64 " instances in use checked, on %" PRIu64 " GPUs holding two or more\n",
	       res.mig_instance_checks, res.mig_shared_gpu_checks);
	printf("faults: %" PRIu64 " node removals, %" PRIu64 " late tenants; %" PRIu64 " controller restarts adopting %" PRIu64 " running workloads\n",
	       res.node_removals, res.late_tenants, res.restarts, res.adoptions);
	printf("restarts: %" PRIu64 " decisions compared, %" PRIu64 " runs decided differently after a restart\n",
	       res.decisions, res.mismatches);
	printf("%u runs, %" PRIu64 " events, %" PRIu64 " violations, %" PRIu64 " decision mismatches\n",
	       res.runs, res.events, res.violations, res.mismatches);
	if (res.mismatches)
		printf("first mismatch: %s\nreplay: kerf sim check --runs 1 --seed %" PRIu64 "\n",
		       res.first_mismatch, res.first_mismatch_seed);
	if (res.violations || res.mismatches) {
		if (res.violations)
			printf("first: %s\nreplay: kerf sim check --runs 1 --seed %" PRIu64 "\n",
			       res.first_violation, res.first_bad_seed);
		return 1;
	}
	return 0;
}
