/*
 * kerf sim mig: a day of mixed MIG demand served by each static layout and
 * by kerf's dynamic planning (sim/migsim.h).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/parse.h"
#include "cmd/cmd.h"
#include "cmd/output_alias.h"
#include "base/units.h"
#include "cmd/opt.h"
#include "cmd/output.h"
#include "cmd/spec.h"
#include "core/mig/geometry.h"
#include "core/mig/planner.h"
#include "sim/migsim.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: kerf sim mig [--model M] [--nodes N] [--gpus G] [--hours H]\n"
		"                    [--load PCT] [--seed S] [-o table|wide|json|yaml]\n"
		"  mixed MIG demand (inference replicas of several sizes, notebooks,\n"
		"  training) on N nodes of G GPUs of model M, served by static layouts\n"
		"  and by kerf's dynamic planning (defaults: H100-80GB, 4 x 8, 24 h,\n"
		"  90%% of the compute slices offered, seed 1)\n"
		"  -o, --output FMT   table (default), wide (every kind's waits and the\n"
		"                     actions refused), json or yaml (one MigSimulation\n"
		"                     document, docs/schema/MigSimulation.json)\n"
		"  --json             the same as -o json\n"
		"exit status: 0 done, 1 the simulation failed, 2 usage\n");
}

/* Option opt as an integer min..max into *out, or a message and -1. */
static int parse_u32(const char *opt, const char *s, uint32_t min, uint32_t max,
		     uint32_t *out)
{
	struct kerf_err err = { 0 };
	uint64_t v;

	if (kerf_parse_u64_opt(opt, s, min, max, &v, &err) < 0) {
		fprintf(stderr, "kerf sim mig: %s\n", err.msg);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static json_t *result_json(const struct kerf_migsim_result *r)
{
	json_t *o = json_object(), *kinds = json_array();

	json_object_set_new(o, "policy", json_string(r->policy));
	json_object_set_new(o, "requests", json_integer(r->requests));
	json_object_set_new(o, "started", json_integer(r->started));
	json_object_set_new(o, "waitingAtEnd", json_integer(r->waiting_end));
	json_object_set_new(o, "sliceRatio", json_real(r->slice_ratio));
	json_object_set_new(o, "sliceHours", json_real(r->slice_hours));
	json_object_set_new(o, "reconfigActions", json_integer((json_int_t)r->reconfig_actions));
	json_object_set_new(o, "inUseDisturbed", json_integer((json_int_t)r->disturbed));
	json_object_set_new(o, "actionsRefused", json_integer((json_int_t)r->apply_refused));
	for (unsigned k = 0; k < KERF_MIGSIM_NR_KINDS; k++) {
		json_t *kj = json_object();

		json_object_set_new(kj, "workloadKind", json_string(kerf_migsim_kind_name(k)));
		json_object_set_new(kj, "requests", json_integer(r->requests_by_kind[k]));
		json_object_set_new(kj, "started", json_integer(r->started_by_kind[k]));
		json_object_set_new(kj, "waitP50Seconds", json_real(r->wait_p50_s[k]));
		json_object_set_new(kj, "waitP99Seconds", json_real(r->wait_p99_s[k]));
		json_object_set_new(kj, "gpuHoursCharged", json_real(r->gpu_hours_by_kind[k]));
		json_array_append_new(kinds, kj);
	}
	json_object_set_new(o, "workloads", kinds);
	return o;
}

/* seconds as a duration cell ("3h58m") */
static const char *wait_cell(double s, char *buf, size_t size)
{
	kerf_units_duration((int64_t)(s * 1000.0 + 0.5), buf, size);
	return buf;
}

static void print_table(const struct kerf_migsim_opts *o,
			const struct kerf_migsim_result *res, int best_static,
			bool wide)
{
	char pct[32], p50[32], p99[32], gh[32], span[32];

	kerf_units_percent((double)o->load_pct, 0, pct, sizeof(pct));
	kerf_units_duration((int64_t)o->hours * 3600 * 1000, span, sizeof(span));
	printf("MIG day: %u nodes x %u %s, %s, %s of the compute slices offered, seed %" PRIu64 "\n",
	       o->nodes, o->gpus_per_node, o->model, span, pct, o->seed);
	printf("%-16s %8s %8s %8s %8s %9s", "policy", "requests", "started", "waiting",
	       "slices", "slice-h");
	if (wide) {
		for (unsigned k = 0; k < KERF_MIGSIM_NR_KINDS; k++) {
			char h50[48], h99[48];

			snprintf(h50, sizeof(h50), "%s p50", kerf_migsim_kind_name(k));
			snprintf(h99, sizeof(h99), "%s p99", kerf_migsim_kind_name(k));
			printf(" %*s %*s", (int)(strlen(h50) > 9 ? strlen(h50) : 9), h50,
			       (int)(strlen(h99) > 9 ? strlen(h99) : 9), h99);
		}
	} else {
		printf(" %9s %9s", "inf p50", "inf p99");
	}
	printf(" %8s %9s", "reconf", "disturbed");
	if (wide)
		printf(" %8s", "refused");
	printf("\n");
	for (int p = 0; p < KERF_MIGSIM_NR_POLICIES; p++) {
		const struct kerf_migsim_result *r = &res[p];

		kerf_units_percent(100.0 * r->slice_ratio, 1, pct, sizeof(pct));
		printf("%-16s %8u %8u %8u %8s %9.0f", r->policy, r->requests, r->started,
		       r->waiting_end, pct, r->slice_hours);
		if (wide) {
			for (unsigned k = 0; k < KERF_MIGSIM_NR_KINDS; k++) {
				size_t w = strlen(kerf_migsim_kind_name(k)) + 4;

				printf(" %*s", (int)(w > 9 ? w : 9),
				       wait_cell(r->wait_p50_s[k], p50, sizeof(p50)));
				printf(" %*s", (int)(w > 9 ? w : 9),
				       wait_cell(r->wait_p99_s[k], p99, sizeof(p99)));
			}
		} else {
			printf(" %9s", wait_cell(r->wait_p50_s[KERF_MIGSIM_INFERENCE], p50, sizeof(p50)));
			printf(" %9s", wait_cell(r->wait_p99_s[KERF_MIGSIM_INFERENCE], p99, sizeof(p99)));
		}
		printf(" %8" PRIu64 " %9" PRIu64, r->reconfig_actions, r->disturbed);
		if (wide)
			printf(" %8" PRIu64, r->apply_refused);
		printf("\n");
	}
	printf("(waits: p50 and p99 of the time from request to start, a request still\n"
	       " waiting at the end counted with its wait so far; slices: compute slices\n"
	       " in use over all, averaged over the day; slice-h: compute slice-hours served)\n");
	printf("quota charged to each kind under kerf dynamic, in GPU-hours of the flavor\n"
	       "(an instance counts its share of the compute slices):\n ");
	for (unsigned k = 0; k < KERF_MIGSIM_NR_KINDS; k++) {
		kerf_units_gpu_hours(res[KERF_MIGSIM_DYNAMIC].gpu_hours_by_kind[k], gh, sizeof(gh));
		printf("%s %s %s", k ? "," : "", kerf_migsim_kind_name(k), gh);
	}
	printf("\n");
	printf("kerf dynamic started %u of %u requests (%.0f slice-h), the best static layout\n"
	       "(%s) %u (%.0f slice-h); in-use instances disturbed: %" PRIu64 "\n",
	       res[KERF_MIGSIM_DYNAMIC].started, res[KERF_MIGSIM_DYNAMIC].requests,
	       res[KERF_MIGSIM_DYNAMIC].slice_hours, res[best_static].policy,
	       res[best_static].started, res[best_static].slice_hours,
	       res[KERF_MIGSIM_DYNAMIC].disturbed);
}

const struct option kerf_sim_mig_longopts[] = {
	{ "model", required_argument, NULL, 'm' },
	{ "nodes", required_argument, NULL, 'n' },
	{ "gpus", required_argument, NULL, 'g' },
	{ "hours", required_argument, NULL, 'H' },
	{ "load", required_argument, NULL, 'l' },
	{ "seed", required_argument, NULL, 's' },
	{ "output", required_argument, NULL, 'o' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int kerf_cmd_sim_mig(int argc, char **argv)
{
	struct kerf_migsim_opts o;
	struct kerf_migsim_result res[KERF_MIGSIM_NR_POLICIES];
	struct kerf_err perr = { 0 };
	enum kerf_cli_output fmt = KERF_OUT_TABLE;
	const char *oarg = NULL;
	int json = 0, opt, best_static = -1;

	kerf_migsim_defaults(&o);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:h", kerf_sim_mig_longopts, NULL)) != -1) {
		int rc = 0;

		switch (opt) {
		case 'm':
			o.model = optarg;
			if (!kerf_mig_model_find(optarg)) {
				char shown[64];

				fprintf(stderr, "kerf sim mig: --model '%s': no MIG table for this model (see docs/mig.md)\n",
					kerf_escape(shown, sizeof(shown), optarg));
				rc = -1;
			}
			break;
		case 'n': rc = parse_u32("--nodes", optarg, 1, 4096, &o.nodes); break;
		case 'g':
			rc = parse_u32("--gpus", optarg, 1, KERF_MIG_MAX_GPUS,
				       &o.gpus_per_node);
			break;
		case 'H': rc = parse_u32("--hours", optarg, 1, 8760, &o.hours); break;
		case 'l': rc = parse_u32("--load", optarg, 1, 1000, &o.load_pct); break;
		case 's':
			if (kerf_parse_u64_opt("--seed", optarg, 0, UINT64_MAX,
					       &o.seed, &perr) < 0) {
				fprintf(stderr, "kerf sim mig: %s\n", perr.msg);
				rc = -1;
			}
			break;
		case 'j': json = 1; break;
		case 'o':
			if (kerf_cli_output("kerf sim mig", optarg, &fmt))
				return 2;
			oarg = optarg;
			break;
		case 'h': usage(stdout); return 0;
		default:
			kerf_opt_error("kerf sim mig", opt, argv);
			usage(stderr);
			return 2;
		}
		if (rc < 0)
			return 2;
	}
	if (optind < argc) {
		kerf_opt_unexpected("kerf sim mig", argv[optind], NULL);
		usage(stderr);
		return 2;
	}
	if (kerf_cli_json_alias("kerf sim mig", json, oarg, &fmt) != 0)
		return 2;
	for (int p = 0; p < KERF_MIGSIM_NR_POLICIES; p++) {
		struct kerf_err err = { 0 };

		if (kerf_migsim_run(&o, (enum kerf_migsim_policy)p, &res[p], &err) < 0) {
			fprintf(stderr, "kerf sim mig: %s\n", err.msg);
			return 1;
		}
		/* the best static layout: most requests started, then slice-hours */
		if (p != KERF_MIGSIM_DYNAMIC &&
		    (best_static < 0 || res[p].started > res[best_static].started ||
		     (res[p].started == res[best_static].started &&
		      res[p].slice_hours > res[best_static].slice_hours)))
			best_static = p;
	}
	if (kerf_cli_output_is_doc(fmt)) {
		json_t *root = kerf_cli_doc("MigSimulation"), *arr = json_array();

		if (!root || !arr) {
			json_decref(arr);
			return kerf_cli_emit("kerf sim mig", NULL, fmt);
		}
		json_object_set_new(root, "model", json_string(o.model));
		json_object_set_new(root, "nodes", json_integer(o.nodes));
		json_object_set_new(root, "gpusPerNode", json_integer(o.gpus_per_node));
		json_object_set_new(root, "hours", json_integer(o.hours));
		json_object_set_new(root, "loadPercent", json_integer(o.load_pct));
		json_object_set_new(root, "seed", json_integer((json_int_t)o.seed));
		json_object_set_new(root, "bestStatic", json_string(res[best_static].policy));
		for (int p = 0; p < KERF_MIGSIM_NR_POLICIES; p++)
			json_array_append_new(arr, result_json(&res[p]));
		json_object_set_new(root, "items", arr);
		return kerf_cli_emit("kerf sim mig", root, fmt);
	}
	print_table(&o, res, best_static, fmt == KERF_OUT_WIDE);
	return 0;
}
