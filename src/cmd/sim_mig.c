/*
 * kerf sim mig: a day of mixed MIG demand served by each static layout and
 * by kerf's dynamic planning (sim/migsim.h).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/parse.h"
#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "cmd/spec.h"
#include "core/mig/geometry.h"
#include "core/mig/planner.h"
#include "sim/migsim.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: kerf sim mig [--model M] [--nodes N] [--gpus G] [--hours H]\n"
		"                    [--load PCT] [--seed S] [--json]\n"
		"  mixed MIG demand (inference replicas of several sizes, notebooks,\n"
		"  training) on N nodes of G GPUs of model M, served by static layouts\n"
		"  and by kerf's dynamic planning (defaults: H100-80GB, 4 x 8, 24 h,\n"
		"  90 %% of the compute slices offered, seed 1)\n");
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
	json_t *o = json_object(), *kinds = json_object();

	json_object_set_new(o, "policy", json_string(r->policy));
	json_object_set_new(o, "requests", json_integer(r->requests));
	json_object_set_new(o, "started", json_integer(r->started));
	json_object_set_new(o, "waiting_end", json_integer(r->waiting_end));
	json_object_set_new(o, "slice_ratio", json_real(r->slice_ratio));
	json_object_set_new(o, "slice_hours", json_real(r->slice_hours));
	json_object_set_new(o, "reconfig_actions", json_integer((json_int_t)r->reconfig_actions));
	json_object_set_new(o, "in_use_disturbed", json_integer((json_int_t)r->disturbed));
	json_object_set_new(o, "actions_refused", json_integer((json_int_t)r->apply_refused));
	for (unsigned k = 0; k < KERF_MIGSIM_NR_KINDS; k++) {
		json_t *kj = json_object();

		json_object_set_new(kj, "requests", json_integer(r->requests_by_kind[k]));
		json_object_set_new(kj, "started", json_integer(r->started_by_kind[k]));
		json_object_set_new(kj, "wait_p50_s", json_real(r->wait_p50_s[k]));
		json_object_set_new(kj, "wait_p99_s", json_real(r->wait_p99_s[k]));
		json_object_set_new(kj, "gpu_hours_charged", json_real(r->gpu_hours_by_kind[k]));
		json_object_set_new(kinds, kerf_migsim_kind_name(k), kj);
	}
	json_object_set_new(o, "kinds", kinds);
	return o;
}

const struct option kerf_sim_mig_longopts[] = {
	{ "model", required_argument, NULL, 'm' },
	{ "nodes", required_argument, NULL, 'n' },
	{ "gpus", required_argument, NULL, 'g' },
	{ "hours", required_argument, NULL, 'H' },
	{ "load", required_argument, NULL, 'l' },
	{ "seed", required_argument, NULL, 's' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int kerf_cmd_sim_mig(int argc, char **argv)
{
	struct kerf_migsim_opts o;
	struct kerf_migsim_result res[KERF_MIGSIM_NR_POLICIES];
	struct kerf_err perr = { 0 };
	int json = 0, opt, best_static = -1;

	kerf_migsim_defaults(&o);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", kerf_sim_mig_longopts, NULL)) != -1) {
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
	if (json) {
		json_t *root = json_object(), *arr = json_array();
		char *text;

		json_object_set_new(root, "model", json_string(o.model));
		json_object_set_new(root, "nodes", json_integer(o.nodes));
		json_object_set_new(root, "gpus_per_node", json_integer(o.gpus_per_node));
		json_object_set_new(root, "hours", json_integer(o.hours));
		json_object_set_new(root, "load_pct", json_integer(o.load_pct));
		json_object_set_new(root, "seed", json_integer((json_int_t)o.seed));
		for (int p = 0; p < KERF_MIGSIM_NR_POLICIES; p++)
			json_array_append_new(arr, result_json(&res[p]));
		json_object_set_new(root, "policies", arr);
		json_object_set_new(root, "best_static", json_string(res[best_static].policy));
		text = json_dumps(root, JSON_INDENT(2));
		if (text)
			puts(text);
		free(text);
		json_decref(root);
		return text ? 0 : 1;
	}
	printf("MIG day: %u nodes x %u %s, %u h, %u %% of the compute slices offered, seed %" PRIu64 "\n",
	       o.nodes, o.gpus_per_node, o.model, o.hours, o.load_pct, o.seed);
	printf("%-16s %8s %8s %8s %8s %9s %9s %9s %8s %9s\n", "policy", "requests",
	       "started", "waiting", "slices", "slice-h", "inf p50", "inf p99",
	       "reconf", "disturbed");
	for (int p = 0; p < KERF_MIGSIM_NR_POLICIES; p++) {
		const struct kerf_migsim_result *r = &res[p];

		printf("%-16s %8u %8u %8u %7.1f%% %9.0f %8.0fs %8.0fs %8" PRIu64 " %9" PRIu64 "\n",
		       r->policy, r->requests, r->started, r->waiting_end,
		       100.0 * r->slice_ratio, r->slice_hours,
		       r->wait_p50_s[KERF_MIGSIM_INFERENCE], r->wait_p99_s[KERF_MIGSIM_INFERENCE],
		       r->reconfig_actions, r->disturbed);
	}
	printf("(waits count a request still waiting at the end with its wait so far;\n"
	       " slices: compute slices in use over all, averaged over the day)\n");
	printf("quota charged to each kind under kerf dynamic, in GPU-hours of the flavor\n"
	       "(an instance counts its share of the compute slices):");
	for (unsigned k = 0; k < KERF_MIGSIM_NR_KINDS; k++)
		printf(" %s %.0f", kerf_migsim_kind_name(k),
		       res[KERF_MIGSIM_DYNAMIC].gpu_hours_by_kind[k]);
	printf("\n");
	printf("kerf dynamic started %u of %u requests (%.0f slice-hours), the best static layout\n"
	       "(%s) %u (%.0f slice-hours); in-use instances disturbed: %" PRIu64 "\n",
	       res[KERF_MIGSIM_DYNAMIC].started, res[KERF_MIGSIM_DYNAMIC].requests,
	       res[KERF_MIGSIM_DYNAMIC].slice_hours, res[best_static].policy,
	       res[best_static].started, res[best_static].slice_hours,
	       res[KERF_MIGSIM_DYNAMIC].disturbed);
	return 0;
}
