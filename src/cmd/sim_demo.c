/*
 * kerf sim placement: the placement demo.  Generates a mixed cluster and a
 * workload, replays it with the FGD method under four policies, and says in
 * a few lines what kerf did better and why a pod it dropped was dropped.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "cmd/output.h"
#include "cmd/spec.h"
#include "core/policy.h"
#include "base/units.h"
#include "sim/demo.h"
#include "sim/openb_batch.h"
#include "sim/openb_report.h"

enum { DEMO_SEEDS = 5, DEMO_TRACE_SEED = 2026 };

/* The generated cluster, as kerf_demo_trace builds it. */
#define DEMO_CLUSTER "16 x 8 H100-80GB, 24 x 8 A100-80GB, 32 x 4 L4, 24 x 2 T4"

struct demo_mix {
	size_t gpus;            /* in the cluster */
	size_t cpu, frac, one, multi, pinned;   /* pods by kind */
};

static void count_mix(const struct kerf_openb *t, struct demo_mix *m)
{
	*m = (struct demo_mix){ 0 };
	for (size_t i = 0; i < t->nr_nodes; i++)
		m->gpus += (size_t)t->nodes[i].nr_gpus;
	for (size_t i = 0; i < t->nr_pods; i++) {
		const struct kerf_openb_pod *p = &t->pods[i];

		if (p->nr_gpus == 0)
			m->cpu++;
		else if (p->gpu_milli < 1000)
			m->frac++;
		else if (p->nr_gpus == 1)
			m->one++;
		else
			m->multi++;
		m->pinned += p->gpu_spec[0] != '\0';
	}
}

static void describe(const struct kerf_openb *t, const struct demo_mix *m)
{
	printf("cluster:  %zu nodes, %zu GPUs: " DEMO_CLUSTER "\n", t->nr_nodes, m->gpus);
	printf("workload: %zu pods: %zu CPU-only, %zu GPU fractions, %zu one-GPU, %zu multi-GPU; %zu pinned to GPU models\n",
	       t->nr_pods, m->cpu, m->frac, m->one, m->multi, m->pinned);
	printf("method:   shuffled and resampled to 130%% of GPU capacity, one pod at a time, a pod that fits nowhere is dropped; %d seeds\n\n",
	       DEMO_SEEDS);
}

/* The PlacementComparison document without its items and conclusion
 * (docs/schema/PlacementComparison.json). */
static json_t *demo_doc(const struct kerf_openb *t, const struct demo_mix *m)
{
	json_t *doc = kerf_cli_doc("PlacementComparison"), *seeds = json_array(), *body;

	for (int i = 0; seeds && i < DEMO_SEEDS; i++)
		json_array_append_new(seeds, json_integer(i + 1));
	body = json_pack("{s:{s:I, s:I, s:s}, s:{s:I, s:I, s:I, s:I, s:I, s:I}, s:i, s:o}",
			 "cluster", "nodes", (json_int_t)t->nr_nodes,
			 "gpus", (json_int_t)m->gpus, "description", DEMO_CLUSTER,
			 "workload", "pods", (json_int_t)t->nr_pods,
			 "cpuOnly", (json_int_t)m->cpu, "gpuFractions", (json_int_t)m->frac,
			 "oneGPU", (json_int_t)m->one, "multiGPU", (json_int_t)m->multi,
			 "pinnedToModels", (json_int_t)m->pinned,
			 "inflatePercent", 130,
			 "seeds", seeds);
	if (!doc || !body || json_object_update(doc, body) < 0) {
		json_decref(doc);
		doc = NULL;
	}
	json_decref(body);
	return doc;
}

const struct option kerf_sim_demo_longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int kerf_cmd_sim_demo(int argc, char **argv)
{
	static const char *const policies[] = { "first-fit", "best-fit", "fgd",
						KERF_POLICY_DEFAULT };
	const size_t nr_policies = sizeof(policies) / sizeof(policies[0]);
	uint64_t seeds[DEMO_SEEDS];
	struct kerf_run runs[DEMO_SEEDS];
	double unalloc[4] = { 0 };
	char why[KERF_REASON_MAX] = "";
	size_t why_pod = 0;
	struct kerf_openb trace;
	struct kerf_err err = { 0 };
	struct kerf_batch_summary *sum;
	long jobs = sysconf(_SC_NPROCESSORS_ONLN);
	enum kerf_cli_output fmt = KERF_OUT_TABLE;
	struct demo_mix mix;
	json_t *doc = NULL, *items = NULL;
	int c, status = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", kerf_sim_demo_longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (kerf_cli_output("kerf sim placement", optarg, &fmt))
				return 2;
			break;
		case 'h':
			printf("usage: kerf sim placement [-o table|wide|json|yaml]\n\n"
			       "first-fit, best-fit, fgd and %s placing the same pods on the same\n"
			       "cluster (a built-in openb-like trace, %d seeds): unallocated GPU\n"
			       "per policy, and why the first pod that did not fit waited.\n\n"
			       "  -o, --output FMT   table (default), wide (each seed's unallocated\n"
			       "                     GPU too), json or yaml: one PlacementComparison\n"
			       "                     document (docs/schema/PlacementComparison.json)\n\n"
			       "exit status: 0 done, 1 a run failed, 2 usage\n",
			       KERF_POLICY_DEFAULT, DEMO_SEEDS);
			return 0;
		default:
			kerf_opt_error("kerf sim placement", c, argv);
			return 2;
		}
	}
	if (optind < argc) {
		kerf_opt_unexpected("kerf sim placement", argv[optind],
				    "(try 'kerf sim placement --help')");
		return 2;
	}
	for (int i = 0; i < DEMO_SEEDS; i++)
		seeds[i] = (uint64_t)(i + 1);
	kerf_openb_init(&trace);
	sum = malloc(sizeof(*sum));
	if (!sum || kerf_demo_trace(&trace, DEMO_TRACE_SEED, &err) < 0) {
		fprintf(stderr, "kerf sim: %s\n", sum ? err.msg : "out of memory");
		free(sum);
		kerf_openb_release(&trace);
		return 1;
	}
	count_mix(&trace, &mix);
	if (kerf_cli_output_is_doc(fmt)) {
		doc = demo_doc(&trace, &mix);
		items = json_array();
		if (!doc || !items || json_object_set(doc, "items", items) < 0) {
			fprintf(stderr, "kerf sim placement: out of memory\n");
			status = 1;
		}
	} else {
		printf("kerf sim placement: kerf against FGD on a generated GPU-sharing workload\n");
		describe(&trace, &mix);
		kerf_report_table_head(stdout);
	}
	for (size_t i = 0; status == 0 && i < nr_policies; i++) {
		struct kerf_run_opts opts = { .policy = policies[i],
					      .inflate_pct = 130 };

		if (kerf_batch_run(&trace, &opts, seeds, DEMO_SEEDS, (int)jobs, runs,
				   NULL, NULL, sum, &err) < 0) {
			fprintf(stderr, "kerf sim: %s: %s\n", policies[i], err.msg);
			status = 1;
			break;
		}
		if (items && json_array_append_new(items, kerf_report_item(sum, runs, DEMO_SEEDS)) < 0) {
			fprintf(stderr, "kerf sim placement: out of memory\n");
			status = 1;
		} else if (!items)
			kerf_report_table_row(stdout, sum, runs, DEMO_SEEDS,
					      fmt == KERF_OUT_WIDE);
		unalloc[i] = sum->unalloc_pct_100_mean;
		if (i == nr_policies - 1 && runs[0].first_failure[0]) {
			memcpy(why, runs[0].first_failure, sizeof(why));
			why_pod = runs[0].first_failure_pod;
		}
	}
	if (status == 0 && doc) {
		json_t *concl = json_pack("{s:f, s:f, s:f}",
					  "kerfUnallocPercent", unalloc[3],
					  "fgdUnallocPercent", unalloc[2],
					  "bestFitUnallocPercent", unalloc[1]);

		if (concl && why[0]) {
			const struct kerf_openb_pod *p = &trace.pods[why_pod];

			json_object_set_new(concl, "firstDropped",
					    json_pack("{s:i, s:s, s:i, s:i, s:I, s:I, s:s}",
						      "seed", 1, "pod", p->name,
						      "gpus", p->nr_gpus, "gpuMilli", p->gpu_milli,
						      "cpuMilli", (json_int_t)p->cpu_milli,
						      "memoryMiB", (json_int_t)p->mem_mib,
						      "reason", why));
		}
		if (!concl || json_object_set_new(doc, "conclusion", concl) < 0) {
			fprintf(stderr, "kerf sim placement: out of memory\n");
			status = 1;
		} else {
			status = kerf_cli_emit("kerf sim placement", doc, fmt);
		}
		doc = NULL;
	} else if (status == 0) {
		char k[24], f[24], b[24];

		kerf_units_percent(unalloc[3], 2, k, sizeof(k));
		kerf_units_percent(unalloc[2], 2, f, sizeof(f));
		kerf_units_percent(unalloc[1], 2, b, sizeof(b));
		printf("\nkerf leaves %s of the GPUs unallocated when the arrived work equals the cluster, fgd %s, best-fit %s.\n",
		       k, f, b);
		if (why[0]) {
			const struct kerf_openb_pod *p = &trace.pods[why_pod];

			printf("the first pod kerf dropped (seed 1): %s asking %d GPU x %d milli, %lld mCPU, %lld MiB:\n  %s\n",
			       p->name, p->nr_gpus, p->gpu_milli,
			       (long long)p->cpu_milli, (long long)p->mem_mib, why);
		}
		printf("\nreplay the published trace: kerf sim openb --nodes FILE --pods FILE --policy all\n");
	}
	json_decref(doc);
	json_decref(items);
	free(sum);
	kerf_openb_release(&trace);
	return status;
}
