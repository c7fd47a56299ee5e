/*
 * kerf sim check: random multi-tenant scenarios with every invariant checked
 * after every event (see src/sim/check.h).  Prints
 * "N runs, M events, V violations" and how to replay the first bad seed
 * (-o json|yaml: one CheckRun document, docs/schema/CheckRun.json); exits
 * 3 on any violation or decision mismatch, 1 when a run could not be made.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "base/parse.h"
#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "cmd/output.h"
#include "cmd/spec.h"
#include "sim/check.h"

/* Violations listed one by one; past this many only counted. */
enum { MAX_LISTED = 100 };

const struct option kerf_sim_check_longopts[] = {
	{ "runs", required_argument, NULL, 'r' },
	{ "seed", required_argument, NULL, 's' },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static void usage(void)
{
	printf("usage: kerf sim check [--runs N] [--seed S] [-o table|wide|json|yaml]\n"
	       "  N random scenarios from seed S on (default 100 from 1), every\n"
	       "  invariant checked after every event.\n"
	       "\n"
	       "  --runs N           how many random scenarios (default 100)\n"
	       "  --seed S           the first scenario's seed (default 1)\n"
	       "  -o, --output FMT   table (default), wide (a line per run too), json or\n"
	       "                     yaml: one CheckRun document (docs/schema/CheckRun.json)\n"
	       "\n"
	       "exit status: 0 every invariant held, 1 a run could not be made,\n"
	       "2 usage, 3 an invariant was violated or a restarted run decided\n"
	       "differently\n");
}

static void print_table(const struct kerf_check_result *res)
{
	printf("checked: %" PRIu64 " admissions, %" PRIu64 " preemptions, %" PRIu64 " evictions by node failures\n",
	       res->admissions, res->preemptions, res->evictions);
	printf("isolation: after the events, %" PRIu64 " GPUs found shared by fractions, %" PRIu64 " of them within a tenant-level tenant\n",
	       res->shared_gpu_checks, res->tenant_gpu_checks);
	printf("MIG: after the events, %" PRIu64 " instances in use checked, on %" PRIu64 " GPUs holding two or more\n",
	       res->mig_instance_checks, res->mig_shared_gpu_checks);
	printf("faults: %" PRIu64 " node removals, %" PRIu64 " late tenants; %" PRIu64 " controller restarts adopting %" PRIu64 " running workloads\n",
	       res->node_removals, res->late_tenants, res->restarts, res->adoptions);
	printf("restarts: %" PRIu64 " decisions compared, %" PRIu64 " runs decided differently after a restart\n",
	       res->decisions, res->mismatches);
	printf("%u runs, %" PRIu64 " events, %" PRIu64 " violations, %" PRIu64 " decision mismatches\n",
	       res->runs, res->events, res->violations, res->mismatches);
	if (res->mismatches)
		printf("first mismatch: %s\nreplay: kerf sim check --runs 1 --seed %" PRIu64 "\n",
		       res->first_mismatch, res->first_mismatch_seed);
	if (res->violations)
		printf("first: %s\nreplay: kerf sim check --runs 1 --seed %" PRIu64 "\n",
		       res->first_violation, res->first_bad_seed);
}

/* The CheckRun document (docs/schema/CheckRun.json). */
static json_t *check_doc(const struct kerf_check_result *res, uint64_t seed,
			 uint64_t runs, json_t *violations)
{
	json_t *doc = kerf_cli_doc("CheckRun"), *body;

	body = json_pack("{s:I, s:I, s:I, s:I, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}, s:I, s:o, s:I, s:o}",
			 "runs", (json_int_t)runs,
			 "firstSeed", (json_int_t)seed,
			 "lastSeed", (json_int_t)(seed + runs - 1),
			 "events", (json_int_t)res->events,
			 "checked",
			 "admissions", (json_int_t)res->admissions,
			 "preemptions", (json_int_t)res->preemptions,
			 "evictions", (json_int_t)res->evictions,
			 "sharedGPUs", (json_int_t)res->shared_gpu_checks,
			 "tenantSharedGPUs", (json_int_t)res->tenant_gpu_checks,
			 "migInstances", (json_int_t)res->mig_instance_checks,
			 "migSharedGPUs", (json_int_t)res->mig_shared_gpu_checks,
			 "nodeRemovals", (json_int_t)res->node_removals,
			 "lateTenants", (json_int_t)res->late_tenants,
			 "restarts", (json_int_t)res->restarts,
			 "adoptions", (json_int_t)res->adoptions,
			 "decisions", (json_int_t)res->decisions,
			 "violationCount", (json_int_t)res->violations,
			 "violations", violations,
			 "decisionMismatches", (json_int_t)res->mismatches,
			 "firstMismatch",
			 res->mismatches ? json_pack("{s:I, s:s}", "seed",
						     (json_int_t)res->first_mismatch_seed,
						     "message", res->first_mismatch)
					 : json_null());
	if (!doc || !body || json_object_update(doc, body) < 0) {
		json_decref(doc);
		doc = NULL;
	}
	json_decref(body);
	return doc;
}

int kerf_cmd_sim_check(int argc, char **argv)
{
	uint64_t runs = 100, seed = 1;
	struct kerf_check_result res = { 0 };
	struct kerf_err err = { 0 };
	enum kerf_cli_output fmt = KERF_OUT_TABLE;
	bool tty = isatty(STDERR_FILENO);
	json_t *violations;
	int c, status;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", kerf_sim_check_longopts, NULL)) != -1) {
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
		case 'o':
			if (kerf_cli_output("kerf sim check", optarg, &fmt))
				return 2;
			break;
		case 'h':
			usage();
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
	violations = json_array();
	if (!violations) {
		fprintf(stderr, "kerf sim check: out of memory\n");
		return 1;
	}
	for (uint64_t i = 0; i < runs; i++) {
		uint64_t events = res.events, bad = res.violations;

		res.last.valid = false;
		if (kerf_check_run(seed + i, 1, &res, &err) < 0) {
			fprintf(stderr, "kerf sim check: %s\n", err.msg);
			json_decref(violations);
			return 1;
		}
		if (res.last.valid && json_array_size(violations) < MAX_LISTED)
			json_array_append_new(violations,
					      json_pack("{s:I, s:I, s:s, s:I, s:s}",
							"seed", (json_int_t)res.last.seed,
							"event", (json_int_t)res.last.event,
							"eventKind", res.last.kind,
							"timeMs", (json_int_t)res.last.time_ms,
							"message", res.last.what));
		if (fmt == KERF_OUT_WIDE)
			printf("seed %" PRIu64 ": %" PRIu64 " events, %" PRIu64 " violations\n",
			       seed + i, res.events - events, res.violations - bad);
		if (tty && (i % 16 == 15 || i + 1 == runs)) {
			fprintf(stderr, "\r%" PRIu64 "/%" PRIu64 " runs", i + 1, runs);
			if (i + 1 == runs)
				fprintf(stderr, "\r\033[K");
		}
	}
	status = kerf_check_status(&res);
	if (kerf_cli_output_is_doc(fmt)) {
		int rc = kerf_cli_emit("kerf sim check", check_doc(&res, seed, runs, violations), fmt);

		return rc ? rc : status;
	}
	json_decref(violations);
	print_table(&res);
	return status;
}
